// SPDX-License-Identifier: MIT
/*
 * test_sample_state.c - every report says, in one line, whether stacks are
 * sampled (at what rate) or why not: report's text title, the JSON tree's
 * "samples_state", the html page, --inside and `profctl status`, all from
 * one function (pc_samples_state).
 *
 * Unprivileged: each case of that line; then a program with no profd
 * (every view says profd is not running, and a profile saved then read
 * back says it holds none).  Root: a real profd sampling (on at 997 Hz,
 * the process's count; saved and read back) and one started with
 * --sample-hz 0 (off, and why); and profd's frame cache, one for every
 * process by build-id (status counts what it named and what it found).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "prof.h"
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "profd_private.h"
#include "profctl_samples.h"

/* each case of the one line */
static void test_state_lines(void **state)
{
	struct pc_samples s;
	char b[PC_SAMPLES_STATE_MAX];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.hz = 997;
	assert_string_equal(pc_samples_state(&s, b, sizeof(b)),
			    "on at 997 Hz a CPU, none of this process yet (its threads are "
			    "sampled while they run, once registered with profd)");
	s.total = 12;
	assert_string_equal(pc_samples_state(&s, b, sizeof(b)),
			    "on at 997 Hz a CPU, 12 of this process");
	s.all = true;
	assert_string_equal(pc_samples_state(&s, b, sizeof(b)),
			    "on at 997 Hz a CPU while a thread is registered, 12 kept");
	/* the samples the kernel's ring had no room for, profd's state alone */
	s.lost = 3;
	assert_string_equal(pc_samples_state(&s, b, sizeof(b)),
			    "on at 997 Hz a CPU while a thread is registered, 12 kept, 3 lost (the "
			    "kernel's ring was full)");
	s.lost = 0;
	s.all = false;
	s.file = true;
	assert_string_equal(pc_samples_state(&s, b, sizeof(b)),
			    "12, saved with the profile (profd sampled at 997 Hz a CPU)");
	/* a reason wins over everything: sampling is off */
	snprintf(s.why, sizeof(s.why), "profd --sample-hz 0");
	assert_string_equal(pc_samples_state(&s, b, sizeof(b)), "off: profd --sample-hz 0");
	assert_string_equal(pc_samples_state(NULL, b, sizeof(b)), "unknown (out of memory)");
}

static char dir[64];

/* a program of tests/sample_prog.c running (its segment made), its pid */
static pid_t run_prog(bool no_daemon)
{
	char path[128];
	__u64 end = now_ns() + 10000000000ull;
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (no_daemon)
			setenv("PROF_NO_DAEMON", "1", 1);
		execl(test_beside("tests/sprog_gcc"), "sprog_gcc", "120", (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	/* its segment appears at its first zone */
	snprintf(path, sizeof(path), "%s/probe.out", dir);
	for (;;) {
		char p[16];
		const char *args[] = { "report", "--pid", p, "--flat", NULL };

		snprintf(p, sizeof(p), "%d", (int)pid);
		if (test_profctl_run_io(dir, path, args, NULL, 0) == 0)
			break;
		if (now_ns() > end)
			fail_msg("sprog_gcc %d made no segment in 10 s", (int)pid);
		usleep(50000);
	}
	return pid;
}

static void stop_prog(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* profctl args... (NULL-terminated), to succeed; its output (free it) */
static char *profctl(const char *a0, ...)
{
	const char *args[16];
	char out[128];
	va_list ap;
	int n = 0;

	va_start(ap, a0);
	for (args[n++] = a0; n < 15 && (args[n] = va_arg(ap, const char *)); n++)
		;
	va_end(ap);
	args[n] = NULL;
	snprintf(out, sizeof(out), "%s/profctl.out", dir);
	assert_int_equal(test_profctl_run_io(dir, out, args, NULL, 0), 0);
	return test_slurp(out, NULL);
}

/* text has the line "stack samples: STATE..." (want: its start) exactly once */
static void says(const char *text, const char *what, const char *pre, const char *want)
{
	char line[320];
	const char *p;

	snprintf(line, sizeof(line), "%s%s", pre, want);
	p = strstr(text, line);
	if (!p || strstr(p + 1, line))
		fail_msg("%s: not once \"%s\" in:\n%.2000s", what, line, text);
}

/* the last profctl output is a JSON report its schema allows */
static void schema_ok(void)
{
	char cmd[9000], schema[4200], check[4200];

	snprintf(schema, sizeof(schema), "%s", test_beside("../tests/report.schema.json"));
	snprintf(check, sizeof(check), "%s", test_beside("../tests/check_schema.py"));
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s/profctl.out >/dev/null", check, schema, dir);
	assert_int_equal(system(cmd), 0);
}

/* pid's pprof profile has the comment "stack samples: " want...: as go
 * tool pprof -comments lists them, or without go in its string table */
static void pprof_says(const char *pid, const char *want)
{
	char cmd[512], raw[128], line[320];
	size_t len;
	char *t;

	free(profctl("report", "--pid", pid, "--format", "pprof", NULL));
	snprintf(raw, sizeof(raw), "%s/pprof.raw", dir);
	if (system("command -v go >/dev/null 2>&1"))
		snprintf(cmd, sizeof(cmd), "gzip -dc %s/profctl.out > %s", dir, raw);
	else
		snprintf(cmd, sizeof(cmd),
			 "env -i PATH=/usr/bin:/bin HOME=%s GOCACHE=%s/gocache go tool pprof "
			 "-comments %s/profctl.out > %s 2>/dev/null",
			 dir, dir, dir, raw);
	assert_int_equal(system(cmd), 0);
	t = test_slurp(raw, &len);
	assert_non_null(t);
	snprintf(line, sizeof(line), "stack samples: %s", want);
	if (!memmem(t, len, line, strlen(line)))
		fail_msg("report --format pprof: no comment \"%s\"", line);
	free(t);
}

/* what a profile saved with samples says of them, after their count */
#define SAVED ", saved with the profile (profd sampled at 997 Hz a CPU)"

/*
 * The text tree, the JSON tree, the html page, --inside, pprof's comments
 * and top of pid each say the state that starts with want; the saved
 * profile read back says file_want (NULL: SAVED)
 */
static void every_view(pid_t pid, const char *want, const char *file_want)
{
	char p[16], saved[128], *t;

	snprintf(p, sizeof(p), "%d", (int)pid);
	t = profctl("report", "--pid", p, NULL);
	says(t, "report", "\nstack samples: ", want);
	free(t);
	t = profctl("report", "--pid", p, "--format", "json", NULL);
	says(t, "report --format json", "\"samples_state\":\"", want);
	free(t);
	schema_ok();
	t = profctl("report", "--pid", p, "--format", "html", NULL);
	says(t, "report --format html", "\"samples_state\":\"", want);
	free(t);
	t = profctl("report", "--pid", p, "--inside", "work", NULL);
	says(t, "report --inside", "\n  samples: ", want);
	free(t);
	pprof_says(p, want);
	t = profctl("top", "--pid", p, "-d", "0.05", "-n", "1", NULL);
	says(t, "top", "\nstack samples: ", want);
	free(t);
	snprintf(saved, sizeof(saved), "%s/saved.prof", dir);
	free(profctl("save", "--pid", p, "-o", saved, NULL));
	t = profctl("report", "--input", saved, NULL);
	says(t, "report --input", file_want ? "\nstack samples: " : "",
	     file_want ? file_want : SAVED);
	free(t);
	t = profctl("report", "--input", saved, "--format", "json", NULL);
	says(t, "report --input --format json", file_want ? "\"samples_state\":\"" : "",
	     file_want ? file_want : SAVED);
	free(t);
	unlink(saved);
}

/* without profd every view says so, and status too */
static void test_no_profd(void **state)
{
	pid_t pid;
	char *t;

	(void)state;
	setenv("PROFD_SOCKET", "/nonexistent/profd.sock", 1);
	setenv("PROF_SOCKET", "/nonexistent/profd.sock", 1);
	pid = run_prog(true);
	every_view(pid, "off: profd is not running",
		   "off: the profile read has none (saved without profd");
	stop_prog(pid);
	t = profctl("status", NULL);
	says(t, "status", "\nstack samples: ", "off: profd is not running");
	free(t);
	t = profctl("status", "--no-daemon", NULL);
	says(t, "status --no-daemon", "\nstack samples: ", "off: profd was not asked");
	free(t);
}

/* --- root: a real profd -------------------------------------------------------- */

/* profd with extra arguments (NULL-terminated) on dir/NAME.sock, the
 * environment pointed at it; its pid, or skipped */
static pid_t profd_with(const char *name, const char *a0, const char *a1)
{
	const char *const extra[] = { a0, a1, NULL };
	char sock[128];
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "skipped: not root\n");
		skip();
	}
	snprintf(sock, sizeof(sock), "%s/%s.sock", dir, name);
	test_profd_start_opts(sock, extra, &pid);
	if (pid < 0)
		fail_msg("profd %s did not answer on %s with kernel assistance", name, sock);
	return pid;
}

/* sampling on: the rate, and the process's count once it has samples */
static void test_on(void **state)
{
	pid_t d = profd_with("on", NULL, NULL), pid;
	__u64 end = now_ns() + 60000000000ull;
	char p[16], *t = NULL;

	(void)state;
	pid = run_prog(false);
	snprintf(p, sizeof(p), "%d", (int)pid);
	/* none of it yet, or some: either way on */
	for (;; usleep(100000)) {
		free(t);
		t = profctl("report", "--pid", p, NULL);
		if (!strstr(t, "none of this process") || now_ns() > end)
			break;
	}
	says(t, "report", "\nstack samples: ", "on at 997 Hz a CPU, ");
	free(t);
	every_view(pid, "on at 997 Hz a CPU, ", NULL);
	t = profctl("report", "--pid", p, "--format", "json", NULL);
	assert_null(strstr(t, "none of this process"));
	free(t);
	t = profctl("status", NULL);
	says(t, "status", "\nstack samples: ", "on at 997 Hz a CPU while a thread is registered, ");
	free(t);
	stop_prog(pid);
	test_profd_stop(d);
}

/* profd --sample-hz 0: off, and why */
static void test_hz_zero(void **state)
{
	pid_t d = profd_with("off", "--sample-hz", "0"), pid;
	char *t;

	(void)state;
	pid = run_prog(false);
	every_view(pid, "off: profd --sample-hz 0", "off: the profile read has none");
	t = profctl("status", NULL);
	says(t, "status", "\nstack samples: ", "off: profd --sample-hz 0\n");
	free(t);
	stop_prog(pid);
	test_profd_stop(d);
}

/* status's "stack frames named: N from ELF and DWARF, M from the cache" */
static void frames_named(unsigned long long *named, unsigned long long *cached)
{
	char *t = profctl("status", NULL);
	const char *l = strstr(t, "\nstack frames named: ");

	if (!l ||
	    sscanf(l, "\nstack frames named: %llu from ELF and DWARF, %llu", named, cached) != 2)
		fail_msg("status says nothing of how frames were named:\n%s", t);
	free(t);
}

/* status counts the frame cache's bytes, some once frames were named */
static void cache_counted(void)
{
	unsigned long long tables, cache;
	char *t = profctl("status", NULL);
	const char *l = strstr(t, "\nstack samples' memory: ");

	if (!l || sscanf(l, "\nstack samples' memory: %llu KiB of stacks, %llu", &tables,
			 &cache) != 2)
		fail_msg("status says nothing of the samples' memory:\n%s", t);
	fprintf(stderr, "samples' memory: %llu KiB of stacks, %llu KiB of frames\n", tables,
		cache);
	assert_true(tables > 0);
	assert_true(cache > 0);
	free(t);
}

/* pid's samples once it has at least want (60 s at most) */
static unsigned long long samples_of(pid_t pid, unsigned long long want)
{
	__u64 end = now_ns() + 60000000000ull;
	unsigned long long n = 0;
	char p[16];

	snprintf(p, sizeof(p), "%d", (int)pid);
	while (now_ns() < end) {
		char *t = profctl("report", "--pid", p, NULL);
		const char *l = strstr(t, "\nstack samples: on at 997 Hz a CPU, ");

		n = l ? strtoull(l + strlen("\nstack samples: on at 997 Hz a CPU, "), NULL, 10) : 0;
		free(t);
		if (n >= want)
			return n;
		usleep(200000);
	}
	fail_msg("pid %d: %llu samples after 60 s", (int)pid, n);
	return n;
}

/*
 * Two processes of one binary name each frame once: the second finds the
 * first's frames in the cache (by build-id), where a cache per process
 * would look every one up again
 */
static void test_frames_shared(void **state)
{
	pid_t d = profd_with("sym", NULL, NULL), pid;
	unsigned long long n0, c0, n1, c1, n2, c2;

	(void)state;
	frames_named(&n0, &c0);
	/* the first runs longest: the instructions its samples land on are
	 * then most of those the second's can (each is named once) */
	pid = run_prog(false);
	samples_of(pid, 3000);
	stop_prog(pid);
	frames_named(&n1, &c1);
	pid = run_prog(false);
	samples_of(pid, 800);
	stop_prog(pid);
	frames_named(&n2, &c2);
	fprintf(stderr, "frames named: first process %llu (%llu cached), second %llu (%llu)\n",
		n1 - n0, c1 - c0, n2 - n1, c2 - c1);
	assert_true(n1 - n0 >= 8);
	assert_true((n2 - n1) * 2 < n1 - n0);
	assert_true(c2 - c1 >= 800);
	cache_counted();
	test_profd_stop(d);
}

/*
 * Samples the kernel's ring had no room for are said: a profd whose ring
 * holds 7 samples (PROFD_TEST_SAMPLE_RING), a busy thread giving some 10
 * between two drains
 */
static void test_lost(void **state)
{
	__u64 end = now_ns() + 60000000000ull;
	pid_t d, pid;
	char *t = NULL;

	(void)state;
	setenv("PROFD_TEST_SAMPLE_RING", "4096", 1);
	d = profd_with("lost", NULL, NULL);
	unsetenv("PROFD_TEST_SAMPLE_RING");
	pid = run_prog(false);
	for (;; usleep(100000)) {
		free(t);
		t = profctl("status", NULL);
		if (strstr(t, " lost (the kernel's ring was full)\n") || now_ns() > end)
			break;
	}
	says(t, "status", "\nstack samples: ", "on at 997 Hz a CPU while a thread is registered, ");
	if (!strstr(t, " lost (the kernel's ring was full)\n"))
		fail_msg("status says no sample lost from a ring of 7 in 60 s:\n%s", t);
	free(t);
	stop_prog(pid);
	test_profd_stop(d);
}

static int setup(void **state)
{
	(void)state;
	return test_dir_make("test_sample_state", dir);
}

static int teardown(void **state)
{
	(void)state;
	return test_dir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_lines),
		cmocka_unit_test(test_no_profd),
		/* root */
		cmocka_unit_test(test_on),
		cmocka_unit_test(test_hz_zero),
		cmocka_unit_test(test_frames_shared),
		cmocka_unit_test(test_lost),
	};

	return test_run_group(tests, setup, teardown);
}
