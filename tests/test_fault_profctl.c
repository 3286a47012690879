// SPDX-License-Identifier: MIT
/*
 * test_fault_profctl.c - unit: profctl when an allocation fails, each one
 * in turn (tests/fault_shim.c, preloaded, fails the Nth allocation after
 * main starts).  For every N until one run goes through: profctl either
 * writes what it writes unfaulted (or says in it what it could not have:
 * "out of memory") and exits 0, or exits non-zero saying why; it never
 * dies of a signal, and never leaves a part of its -o file.
 * Run over the fixed snapshot's image (profctl_fixture.h) in the formats
 * whose error paths make coverage showed no test took: pprof, JSON, HTML,
 * and text, CSV and folded; and diff's text, JSON and HTML.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zlib.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "annot.h"
#include "proffile.h"
#include "proto.h"
#include "prof.h"
#include "profctl_fixture.h"
#include "profd_private.h"
#include "profctl_run.h"

/* the last run's stderr, and whether its fault was one */
static char errtext[4096];
static bool fired;

/* profctl report --input image (verb "report"), or diff image image, in
 * format fmt to out with PROF_FAULT=fault (NULL: none): its wait status */
static int report_faulty(const char *verb, const char *fmt, const char *out, const char *fault)
{
	char bin[4096], shim[4200], errpath[128], logpath[128];
	const char *report[] = {
		NULL, "report", "--input", image, "--format", fmt, "-o", out, NULL
	};
	const char *diff[] = { NULL, "diff", "--format", fmt, "-o", out, image, image, NULL };
	const char **argv = strcmp(verb, "diff") ? report : diff;
	ssize_t n;
	pid_t p;
	int st, fd;

	n = readlink("/proc/self/exe", bin, sizeof(bin) - 32);
	assert_true(n > 0);
	bin[n] = 0;
	*strrchr(bin, '/') = 0;
	snprintf(shim, sizeof(shim), "%s/libfault.so", bin);
	strcat(bin, "/../profctl");
	argv[0] = bin;
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	snprintf(logpath, sizeof(logpath), "%s/faults", dir);
	unlink(out);
	unlink(logpath);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		setenv("PROFCTL_NO_DAEMON", "1", 1);
		if (fault) {
			setenv("LD_PRELOAD", shim, 1);
			setenv("PROF_FAULT", fault, 1);
			setenv("PROF_FAULT_LOG", logpath, 1);
		}
		execv(bin, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(p, &st, 0), p);
	fd = open(errpath, O_RDONLY);
	n = fd >= 0 ? read(fd, errtext, sizeof(errtext) - 1) : 0;
	errtext[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
	fired = access(logpath, F_OK) == 0;
	return st;
}

/* a file's bytes, gunzipped if it is gzip (pprof's): malloc'd, its length */
static char *slurp_plain(const char *path, size_t *len)
{
	gzFile g = gzopen(path, "rb");
	size_t cap = 1 << 16;
	char *buf = malloc(cap);
	int n;

	assert_non_null(g);
	assert_non_null(buf);
	*len = 0;
	while ((n = gzread(g, buf + *len, (unsigned)(cap - *len))) > 0) {
		*len += (size_t)n;
		if (*len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	gzclose(g);
	return buf;
}

static void sweep_verb(const char *verb, const char *fmt)
{
	char ref[128], out[128], fault[32];
	size_t rlen, olen;
	char *want, *got;
	int st, n, failed = 0;

	snprintf(ref, sizeof(ref), "%s/ref.%s", dir, fmt);
	snprintf(out, sizeof(out), "%s/out.%s", dir, fmt);
	st = report_faulty(verb, fmt, ref, NULL);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("profctl report --format %s: %s", fmt, errtext);
	want = slurp_plain(ref, &rlen);
	assert_non_null(want);
	for (n = 1; n < 5000; n++) {
		snprintf(fault, sizeof(fault), "malloc#%d", n);
		st = report_faulty(verb, fmt, out, fault);
		if (!WIFEXITED(st))
			fail_msg("%s, allocation %d failing: killed by signal %d: %s", fmt, n,
				 WTERMSIG(st), errtext);
		if (WEXITSTATUS(st)) {
			if (!errtext[0])
				fail_msg("%s, allocation %d failing: exit %d, nothing said", fmt, n,
					 WEXITSTATUS(st));
			if (access(out, F_OK) == 0)
				fail_msg("%s, allocation %d failing: exit %d, but %s left", fmt, n,
					 WEXITSTATUS(st), out);
			failed++;
			continue;
		}
		got = slurp_plain(out, &olen);
		assert_non_null(got);
		/* what could not be had is said where it would be (a samples
		 * state "unknown (out of memory)"), else all is as unfaulted */
		if ((olen != rlen || memcmp(got, want, rlen)) &&
		    !memmem(got, olen, "out of memory", 13))
			fail_msg("%s, allocation %d failing: exit 0, but not what it writes", fmt,
				 n);
		free(got);
		/* past the last allocation: done */
		if (!fired)
			break;
	}
	printf("%s %s: %d allocations failed in turn, each said\n", verb, fmt, failed);
	assert_true(failed > 0);
	free(want);
}

/* report in the format the test's row names */
static void test_report(void **state)
{
	sweep_verb("report", *state);
}

/* diff of the image with itself, each of its formats */
static void test_diff(void **state)
{
	(void)state;
	sweep_verb("diff", "text");
	sweep_verb("diff", "json");
	sweep_verb("diff", "html");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_row("test_pprof", test_report, "pprof", NULL),
		test_row("test_json", test_report, "json", NULL),
		test_row("test_html", test_report, "html", NULL),
		test_row("test_text", test_report, "text", NULL),
		test_row("test_csv", test_report, "csv", NULL),
		test_row("test_folded", test_report, "folded", NULL),
		cmocka_unit_test(test_diff),
	};

	return test_run_group(tests, setup, teardown);
}
