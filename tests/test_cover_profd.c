// SPDX-License-Identifier: MIT
/*
 * test_cover_profd.c - unit: profd's options as a user mistypes them, and
 * its log (profd_conf.c, profd_log.c), paths no other test took (make
 * coverage showed them): --max-memory's units and range, --sample-hz's
 * range, a number that is not one, an unknown option or an operand (the
 * usage, exit 1), --help (the usage on stdout, exit 0), --syslog; a warning
 * says errno's text, -vv shows debug lines, a fatal error exits 1 saying
 * why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sys/wait.h>

#include "testutil.h"
#include "profd.h"

struct parsed {
	int status;		/* the child's exit status */
	struct profd_conf conf; /* what it parsed, if it returned */
	char out[4096];		/* its stdout and stderr */
};

/* profd_conf_parse(profd ARGS...) in a child (a bad value exits) */
static void parse(struct parsed *p, const char *const *args)
{
	int fds[2], out[2], status;
	ssize_t n;
	size_t got = 0;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pipe(out), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char *argv[16] = { (char *)(uintptr_t) "profd" };
		int argc = 1;

		while (args[argc - 1] && argc < 15) {
			argv[argc] = (char *)(uintptr_t)args[argc - 1];
			argc++;
		}
		dup2(out[1], 1);
		dup2(out[1], 2);
		close(out[0]);
		close(fds[0]);
		optind = 1;
		profd_conf_parse(argc, argv);
		fflush(NULL);
		if (write(fds[1], &conf, sizeof(conf)) != (ssize_t)sizeof(conf))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	close(out[1]);
	if (read(fds[0], &p->conf, sizeof(p->conf)) != (ssize_t)sizeof(p->conf))
		memset(&p->conf, 0, sizeof(p->conf));
	close(fds[0]);
	while (got < sizeof(p->out) - 1 &&
	       (n = read(out[0], p->out + got, sizeof(p->out) - 1 - got)) > 0)
		got += (size_t)n;
	close(out[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	p->status = WEXITSTATUS(status);
}

static void test_max_memory(void **state)
{
	static const struct {
		const char *val;
		__u64 bytes; /* 0: refused */
	} cases[] = {
		{ "64M", 64ull << 20 },	   { "64m", 64ull << 20 }, { "2G", 2ull << 30 },
		{ "1024G", 1ull << 40 },   { "4096k", 4ull << 20 }, { "1048576", 1ull << 20 },
		{ "1025G", 0 },		   { "1023k", 0 },	    { "1048575", 0 },
		{ "12x", 0 },		   { "1T", 0 },		    { "64MB", 0 },
		{ "-64M", 0 },		   { "", 0 },		    { "1073741824x", 0 },
	};
	struct parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[160];

		parse(&p, (const char *[]){ "--max-memory", cases[i].val, NULL });
		if (cases[i].bytes) {
			if (p.status || p.conf.max_memory != cases[i].bytes)
				fail_msg("--max-memory %s: exit %d, %llu bytes; want %llu:\n%s",
					 cases[i].val, p.status,
					 (unsigned long long)p.conf.max_memory,
					 (unsigned long long)cases[i].bytes, p.out);
			continue;
		}
		snprintf(want, sizeof(want),
			 "profd: --max-memory: want bytes (K, M, G suffixes) from 1M to 1T, got "
			 "\"%s\"\n",
			 cases[i].val);
		if (p.status != 1 || strcmp(p.out, want))
			fail_msg("--max-memory \"%s\": exit %d, said:\n%s", cases[i].val, p.status,
				 p.out);
	}
}

static void test_numbers(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, (const char *[]){ "--sample-hz", "0", NULL });
	assert_int_equal(p.status, 0);
	assert_int_equal(p.conf.sample_hz, 0);
	parse(&p, (const char *[]){ "--sample-hz", "10000", NULL });
	assert_int_equal(p.status, 0);
	assert_int_equal(p.conf.sample_hz, 10000);
	parse(&p, (const char *[]){ "--sample-hz", "10001", NULL });
	assert_int_equal(p.status, 1);
	assert_string_equal(p.out, "profd: --sample-hz: want 0..10000, got \"10001\"\n");
	parse(&p, (const char *[]){ "--slots", "12abc", NULL });
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.out, "profd: --slots: want "));
	assert_non_null(strstr(p.out, ", got \"12abc\"\n"));
	parse(&p, (const char *[]){ "--slots", "", NULL });
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.out, ", got \"\"\n"));
	parse(&p, (const char *[]){ "--syslog", NULL });
	assert_int_equal(p.status, 0);
	assert_true(p.conf.syslog);
	parse(&p, (const char *[]){ NULL });
	assert_int_equal(p.status, 0);
	assert_false(p.conf.syslog);
}

static void test_usage(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, (const char *[]){ "--help", NULL });
	assert_int_equal(p.status, 0);
	assert_int_equal(strncmp(p.out, "usage: profd [-dhv] [--socket PATH]", 35), 0);
	/* and it names every option it takes */
	assert_non_null(strstr(p.out, "--max-memory"));
	assert_non_null(strstr(p.out, "--sample-hz"));
	parse(&p, (const char *[]){ "--bogus", NULL });
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.out, "usage: profd [-dhv]"));
	parse(&p, (const char *[]){ "-v", "extra", NULL });
	assert_int_equal(p.status, 1);
	assert_int_equal(strncmp(p.out, "usage: profd [-dhv]", 19), 0);
}

/* what fn says on stderr in a child, and its exit status */
static int logged(void (*fn)(void), char *buf, size_t len)
{
	int out[2], status;
	ssize_t n;
	size_t got = 0;
	pid_t pid;

	assert_int_equal(pipe(out), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(out[1], 2);
		close(out[0]);
		fn();
		fflush(NULL);
		_exit(0);
	}
	close(out[1]);
	while (got < len - 1 && (n = read(out[0], buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	close(out[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void warn_and_debug(void)
{
	log_init(false, 2);
	errno = ENOENT;
	log_warn("seg: failed to read pid %d", 42);
	log_debug("seg: %s", "a debug line");
	log_init(false, 1);
	log_debug("seg: %s", "not shown below -vv");
}

static void dies(void)
{
	log_init(false, 0);
	errno = EMFILE;
	fatal("failed to create the event fds");
}

static void test_log(void **state)
{
	char buf[1024];

	(void)state;
	assert_int_equal(logged(warn_and_debug, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "profd: seg: failed to read pid 42: No such file or directory\n"
				 "profd: seg: a debug line\n");
	assert_int_equal(logged(dies, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "profd: failed to create the event fds: Too many open files\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_memory),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
