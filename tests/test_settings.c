// SPDX-License-Identifier: MIT
/*
 * test_settings.c - the PROF_* variables (usdt/env.c) and the arithmetic
 * of PROF_LOG_INTERVAL's lines (usdt/logger.c).
 *
 * Each parser takes what the README says and refuses the rest; a process
 * given a bad value of every variable prints exactly one line per
 * variable, naming it and what it accepts, and its fork child (a second
 * read) adds none; PROF_QUIET=1 silences them; PROFD_SOCKET is read when
 * PROF_SOCKET is not set.  A log line's time inside never exceeds its
 * interval, so its share never reads over 100%.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>

#include "fastpath.h"
#include "prof.h"
#include "runtime.h"

static void test_parse_flag(void **state)
{
	static const char *const on[] = { "1", "yes", "TRUE", "on" };
	static const char *const off[] = { "0", "no", "false", "Off" };
	static const char *const bad[] = { "2", "maybe", "y", " 1", "1 " };
	bool v;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		v = false;
		assert_int_equal(prof_env_parse_flag(on[i], &v), 0);
		assert_true(v);
		assert_int_equal(prof_env_parse_flag(off[i], &v), 0);
		assert_false(v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(prof_env_parse_flag(bad[i], &v), -EINVAL);
}

static void test_parse_numbers(void **state)
{
	__u32 u = 7;
	double d = 7;

	(void)state;
	assert_int_equal(prof_env_parse_u32("16", 16, 100, &u), 0);
	assert_int_equal(u, 16);
	assert_int_equal(prof_env_parse_u32("100", 16, 100, &u), 0);
	assert_int_equal(u, 100);
	assert_int_equal(prof_env_parse_u32("15", 16, 100, &u), -EINVAL);
	assert_int_equal(prof_env_parse_u32("101", 16, 100, &u), -EINVAL);
	assert_int_equal(prof_env_parse_u32("-20", 16, 100, &u), -EINVAL);
	assert_int_equal(prof_env_parse_u32("20k", 16, 100, &u), -EINVAL);
	assert_int_equal(prof_env_parse_u32("99999999999999999999", 16, 100, &u), -EINVAL);
	assert_int_equal(u, 100);

	assert_int_equal(prof_env_parse_seconds("0.5", &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(prof_env_parse_seconds("2", &d), 0);
	assert_true(d == 2);
	assert_int_equal(prof_env_parse_seconds("0", &d), 0);
	assert_true(d == 0);
	assert_int_equal(prof_env_parse_seconds("abc", &d), -EINVAL);
	assert_int_equal(prof_env_parse_seconds("1s", &d), -EINVAL);
	assert_int_equal(prof_env_parse_seconds("-1", &d), -EINVAL);
	assert_int_equal(prof_env_parse_seconds("nan", &d), -EINVAL);
	assert_int_equal(prof_env_parse_seconds("inf", &d), -EINVAL);
	assert_int_equal(prof_env_parse_seconds("0.001", &d), -EINVAL);
	assert_int_equal(prof_env_parse_seconds("1e9", &d), -EINVAL);
	assert_true(d == 0);
}

/* prof_env__read with stderr in a file; the file's text */
static char *read_env_capture(void)
{
	char path[] = "/tmp/prof-env.XXXXXX", *buf;
	int fd = mkstemp(path), saved;
	ssize_t n;

	assert_true(fd >= 0);
	unlink(path);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	prof_env.warned = false;
	prof_env.warn_count = 0;
	prof_env__read();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	buf = calloc(1, 4096);
	assert_non_null(buf);
	n = pread(fd, buf, 4095, 0);
	assert_true(n >= 0);
	close(fd);
	return buf;
}

static void test_values_read(void **state)
{
	char *out;

	(void)state;
	setenv("PROF_CLOCK", "mono", 1);
	setenv("PROF_KEEP", "yes", 1);
	setenv("PROF_LOG_INTERVAL", "0.25", 1);
	setenv("PROF_REPORT", "1", 1);
	setenv("PROF_REPORT_FORMAT", "json", 1);
	setenv("PROF_REPORT_COMPENSATE", "on", 1);
	setenv("PROF_MAX_NODES", "64", 1);
	unsetenv("PROF_SOCKET");
	setenv("PROFD_SOCKET", "/tmp/other.sock", 1);
	out = read_env_capture();
	assert_string_equal(out, "");
	assert_true(prof_env.clock_mono);
	assert_true(prof_env.keep);
	assert_true(prof_env.log_interval == 0.25);
	assert_string_equal(prof_env.report, "stderr");
	assert_true(prof_env.report_json);
	assert_true(prof_env.report_compensate);
	assert_int_equal(prof_env.max_nodes, 64);
	assert_int_equal(prof_env.max_threads, 128);
	/* profctl's name for the socket serves the runtime too */
	assert_string_equal(prof_env.socket, "/tmp/other.sock");
	free(out);

	/* PROF_SOCKET wins when both are set */
	setenv("PROF_SOCKET", "/tmp/mine.sock", 1);
	setenv("PROF_REPORT", "0", 1);
	out = read_env_capture();
	assert_string_equal(out, "");
	assert_string_equal(prof_env.socket, "/tmp/mine.sock");
	assert_null(prof_env.report);
	free(out);

	unsetenv("PROF_CLOCK");
	unsetenv("PROF_KEEP");
	unsetenv("PROF_LOG_INTERVAL");
	unsetenv("PROF_REPORT");
	unsetenv("PROF_REPORT_FORMAT");
	unsetenv("PROF_REPORT_COMPENSATE");
	unsetenv("PROF_MAX_NODES");
	unsetenv("PROF_SOCKET");
	unsetenv("PROFD_SOCKET");
}

/* every variable the README lists, each with a value it refuses */
static const char *const bad_env[] = {
	"PROF_REPORT_FORMAT=csv",
	"PROF_LOG_INTERVAL=abc",
	"PROF_CLOCK=hpet",
	"PROF_MAX_THREADS=0",
	"PROF_MAX_NODES=1",
	"PROF_MAX_SITES=lots",
	"PROF_TRACE_EVENTS=1000",
	"PROF_KEEP=maybe",
	"PROF_NO_DAEMON=sure",
	"PROF_REPORT_COMPENSATE=twice",
	"PROF_SOCKET=/tmp/"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"PROF_QUIET=hush",
	"PROF_REPORT=/nonexistent-dir/report.txt",
};
#define NBAD (sizeof(bad_env) / sizeof(bad_env[0]))

/* a zone, then a fork child's zone: two reads of the settings */
static int zone_child(void)
{
	pid_t p;

	{
		PROF_USDT(settings_zone);
	}
	p = fork();
	if (p == 0) {
		PROF_USDT(settings_child_zone);
		_exit(0);
	}
	if (p < 0 || !test_exited_ok(test_wait(p, 30)))
		return 1;
	return 0;
}

static char *run_with(const char *const *extra, size_t nextra)
{
	const char *env[NBAD + 4];
	char path[] = "/tmp/prof-settings.XXXXXX", *out;
	size_t i, n = 0;
	FILE *f;
	long len;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	for (i = 0; i < nextra; i++)
		env[n++] = extra[i];
	for (i = 0; i < NBAD; i++)
		env[n++] = bad_env[i];
	env[n] = NULL;
	assert_true(test_exited_ok(test_reexec("--zone", env, 30, path)));
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	out = calloc(1, (size_t)len + 1);
	assert_non_null(out);
	assert_int_equal(fread(out, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	unlink(path);
	return out;
}

static void test_bad_values_warn_once(void **state)
{
	char *out, *line, *save = NULL;
	size_t i, lines = 0;
	unsigned int seen[NBAD] = { 0 };

	(void)state;
	out = run_with(NULL, 0);
	print_message("%s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "prof: ", 6))
			continue;
		lines++;
		/* "NAME=VALUE", then what it accepts */
		for (i = 0; i < NBAD; i++)
			if (strstr(line, bad_env[i]) && strstr(line, "want "))
				seen[i]++;
	}
	/* one line each, in the process and its fork child together (the
	 * child leaves by _exit: no report, so PROF_REPORT's is the parent's) */
	for (i = 0; i < NBAD; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(lines, NBAD);
	free(out);
}

static void test_quiet(void **state)
{
	static const char *const quiet[] = { "PROF_QUIET=1" };
	char *out;

	(void)state;
	out = run_with(quiet, 1);
	assert_null(strstr(out, "prof: "));
	free(out);
}

static void test_log_arithmetic(void **state)
{
	char buf[256];

	(void)state;
	prof_log_format(buf, sizeof(buf), "io", 42, "parse", 50000000, 200000000, 7);
	assert_string_equal(buf, "prof: io tid 42 parse: 0.050000s/0.200s 25.0% 7 calls\n");
	/* a call that began before the interval ended in it */
	prof_log_format(buf, sizeof(buf), "main", 7, "loop", 202400000, 200000000, 1);
	assert_string_equal(buf, "prof: main tid 7 loop: 0.200000s/0.200s 100.0% 1 calls\n");
	prof_log_format(buf, sizeof(buf), "main", 7, "loop", 199999999, 200000000, 1);
	assert_string_equal(buf, "prof: main tid 7 loop: 0.200000s/0.200s 100.0% 1 calls\n");
	prof_log_format(buf, sizeof(buf), "main", 7, "idle", 0, 0, 0);
	assert_string_equal(buf, "prof: main tid 7 idle: 0.000000s/0.000s 0.0% 0 calls\n");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_flag),  cmocka_unit_test(test_parse_numbers),
		cmocka_unit_test(test_values_read), cmocka_unit_test(test_bad_values_warn_once),
		cmocka_unit_test(test_quiet),	    cmocka_unit_test(test_log_arithmetic),
	};

	if (argc == 2 && !strcmp(argv[1], "--zone"))
		return zone_child();
	unsetenv("PROF_QUIET");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
