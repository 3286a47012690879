// SPDX-License-Identifier: MIT
/*
 * test_profctl_trace.c - unit: profctl trace on live processes, without
 * profd.  The timeline of a known program is exactly its calls, nested
 * and summing to the report (tests/check_trace.py reads the JSON); --slow
 * catches the one 50 ms call among 100,000 of 1 us, with its children; a
 * live program's tick rate is taken again, so a zone is where the clock
 * said it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include "testutil.h"
#include "profctl_child.h"
#include "child.h"
#include "prof.h"

static volatile unsigned long sink;

static void spin_ns(__u64 ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		sink++;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((__u64)(b.tv_sec - a.tv_sec) * 1000000000ull + (__u64)b.tv_nsec -
			 (__u64)a.tv_nsec <
		 ns);
}

static int check(const char *mode, const char *a, const char *b)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "python3 tests/check_trace.py %s %s %s >&2", mode, a, b ? b : "");
	return system(cmd);
}

/* python3 tests/SCRIPT ARGS in Chromium: 0 pass; skips the test (77)
 * where Chromium or what the script needs is missing */
static int chromium_check(const char *script, const char *args)
{
	char cmd[512];
	int rc;

	if (system("command -v chromium >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1")) {
		fprintf(stderr, "skip: needs chromium and python3 (apt-get install chromium)\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd), "timeout 120 python3 tests/%s %s", script, args);
	rc = system(cmd);
	rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
	if (rc == 77)
		skip();
	return rc;
}

/* the known program: a "worker" thread, then the process waits */
static void *worker(void *arg)
{
	(void)arg;
	PROF_THREAD_NAME("worker");
	for (int i = 0; i < 5; i++) {
		PROF_USDT(tr_outer);
		for (int j = 0; j < 3; j++) {
			PROF_USDT(tr_inner);
			spin_ns(100000);
		}
	}
	for (int i = 0; i < 2; i++) {
		PROF_USDT(tr_sleep);
		usleep(2000);
	}
	return NULL;
}

/* the tid of p's thread named "worker" */
static __u32 worker_tid(pid_t p)
{
	struct prof_snapshot *s = test_snapshot(p);
	__u32 i, tid = 0;

	assert_non_null(s);
	for (i = 0; i < s->nthreads; i++)
		if (!strcmp(s->threads[i].name, "worker"))
			tid = s->threads[i].tid;
	prof_snapshot__destroy(s);
	assert_true(tid != 0);
	return tid;
}

/* a child running fn, once it says it is ready */
static void start(struct child *c, void (*fn)(const struct child *c))
{
	if (child_start(c) == 0) {
		fn(c);
		_exit(0);
	}
	child_ready(c);
}

static void known(const struct child *c)
{
	pthread_t th;

	if (pthread_create(&th, NULL, worker, NULL) || pthread_join(th, NULL))
		_exit(3);
	child_say(c, 'r');
	child_hear(c);
}

static void stop(struct child *c)
{
	assert_int_not_equal(child_end(c), -1);
}

/*
 * the known child started (stop it), traced into test_dir/tname (as tfmt, NULL:
 * trace's own default) and reported as rfmt into test_dir/rname; the two paths
 * into trace and report (96 bytes each)
 */
static void known_both(const char *tfmt, const char *tname, const char *rfmt, const char *rname,
		       char *trace, char *report, struct child *c)
{
	char pid[16];
	const char *tr[] = { "trace", "--pid", pid, "--no-daemon", "-o", trace, "--format", tfmt,
			     NULL };
	const char *rep[] = { "report", "--pid", pid, "--no-daemon", "--format", rfmt, "-o",
			      report, NULL };

	start(c, known);
	if (!tfmt)
		tr[6] = NULL;
	snprintf(pid, sizeof(pid), "%d", (int)c->pid);
	snprintf(trace, 96, "%s/%s", test_dir, tname);
	snprintf(report, 96, "%s/%s", test_dir, rname);
	assert_int_equal(profctl(tr), 0);
	assert_int_equal(profctl(rep), 0);
}

static void test_exact(void **state)
{
	char trace[96], report[96];
	struct child c;

	(void)state;
	known_both(NULL, "exact.json", "json", "report.json", trace, report, &c);
	assert_int_equal(check("exact", trace, report), 0);
	stop(&c);
}

/* the same timeline opens in a real viewer: speedscope, in Chromium */
static void test_speedscope(void **state)
{
	char pid[16], tid[16], trace[96], args[256];
	const char *tr[] = { "trace", "--pid", pid, "--no-daemon", "--tid", tid, "-o", trace, NULL };
	struct child c;

	(void)state;
	start(&c, known);
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	snprintf(tid, sizeof(tid), "%d", (int)worker_tid(c.pid));
	snprintf(trace, sizeof(trace), "%s/speedscope.json", test_dir);
	assert_int_equal(profctl(tr), 0);
	stop(&c);
	snprintf(args, sizeof(args),
		 "%s .output/tests/trace_speedscope.png tr_outer tr_inner tr_sleep", trace);
	assert_int_equal(chromium_check("trace_speedscope.py", args), 0);
}

/* the timeline page, and the html report's timeline: the worker's 22
 * calls, zoom, hover, in Chromium */
static void test_html(void **state)
{
	char page[96], report[96], args[256];
	struct child c;

	(void)state;
	known_both("html", "trace.html", "html", "report.html", page, report, &c);
	stop(&c);
	snprintf(args, sizeof(args),
		 "%s .output/tests/trace_html.png worker 22 tr_outer tr_inner tr_sleep", page);
	assert_int_equal(chromium_check("trace_html.py", args), 0);
	snprintf(args, sizeof(args),
		 "%s .output/tests/report_timeline.png worker 22 tr_outer tr_inner tr_sleep",
		 report);
	assert_int_equal(chromium_check("trace_html.py", args), 0);
}

/* 50,000 ticks of 1 us, one of 300 ms with five children when told, then
 * 50,000 more (a 1 us tick preempted on a loaded machine can last tens of
 * ms, up to a hundred with dozens of jobs on two CPUs: the slow one is far
 * longer) */
static void ticking(const struct child *c)
{
	{
		PROF_USDT(tick_start); /* its segment, for trace to find */
	}
	child_say(c, 'r');
	if (!child_hear(c))
		_exit(3);
	for (int i = 0; i < 100000; i++) {
		PROF_USDT(tick);
		if (i == 50000) {
			for (int k = 0; k < 5; k++) {
				PROF_USDT(tick_child);
				spin_ns(60000000);
			}
		} else {
			spin_ns(1000);
		}
	}
	child_hear(c);
}

static void test_slow(void **state)
{
	char pid[16], out[96], err[256] = "";
	const char *tr[] = { "trace", "--pid", pid, "--no-daemon", "--slow", "tick:250ms",
			     "-o", out, NULL };
	struct child c;
	int e[2], st;
	pid_t w;
	ssize_t k;
	size_t got = 0;

	(void)state;
	start(&c, ticking);
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	snprintf(out, sizeof(out), "%s/slow.json", test_dir);
	assert_int_equal(pipe(e), 0);
	w = fork();
	assert_true(w >= 0);
	if (w == 0) {
		dup2(e[1], 2);
		close(e[0]);
		_exit(profctl(tr));
	}
	close(e[1]);
	/* it watches: then the child ticks */
	while (!strstr(err, "waiting") && (k = read(e[0], err + got, sizeof(err) - 1 - got)) > 0)
		got += (size_t)k;
	assert_non_null(strstr(err, "waiting for a call of tick"));
	child_go(&c);
	assert_int_equal(waitpid(w, &st, 0), w);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(e[0]);
	assert_int_equal(check("slow", out, NULL), 0);
	stop(&c);
}

/*
 * A zone well after the start, with the CLOCK_MONOTONIC of its start said
 * on the ready pipe.  In between, the parent spoils the segment's tick
 * rate by 1% (a start-up calibration gone wrong, 10,000 ppm): 3 ms off by
 * then, which trace must not show.
 */
static void late_mark(const struct child *c)
{
	struct timespec ts;
	char line[64];
	int n;

	{
		PROF_USDT(rt_first); /* the segment: tick_base is now */
	}
	child_say(c, 'r');
	if (!child_hear(c))
		_exit(3);
	usleep(300000);
	{
		PROF_USDT(rt_mark);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		spin_ns(1000000);
	}
	n = snprintf(line, sizeof(line), "%.3f\n",
		     (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3);
	if (write(c->wr, line, (size_t)n) != n)
		_exit(3);
	child_hear(c);
}

static void test_rate(void **state)
{
	char pid[16], out[96], path[1][96], at[64] = "", cmd[512];
	const char *tr[] = { "trace", "--pid", pid, "--no-daemon", "-o", out, NULL };
	struct child c;
	int fd;
	__u64 hz;
	ssize_t k;
	size_t got = 0;

	(void)state;
	start(&c, late_mark);
	assert_int_equal(test_seg_paths(c.pid, prof_proc_start_token(c.pid), path, 1), 1);
	fd = open(path[0], O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &hz, sizeof(hz), offsetof(struct prof_seg_hdr, tick_hz)),
			 sizeof(hz));
	hz += hz / 100;
	assert_int_equal(pwrite(fd, &hz, sizeof(hz), offsetof(struct prof_seg_hdr, tick_hz)),
			 sizeof(hz));
	close(fd);
	child_go(&c);
	while (!strchr(at, '\n') && (k = read(c.rd, at + got, sizeof(at) - 1 - got)) > 0)
		got += (size_t)k;
	assert_non_null(strchr(at, '\n'));
	*strchr(at, '\n') = 0;
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	snprintf(out, sizeof(out), "%s/rate.json", test_dir);
	assert_int_equal(profctl(tr), 0);
	stop(&c);
	/* within 100 us of the clock's own word, not 3 ms */
	snprintf(cmd, sizeof(cmd), "python3 tests/check_trace.py at %s rt_mark %s 100 >&2", out,
		 at);
	assert_int_equal(system(cmd), 0);
}

/* four threads of 17,000 calls each: rings (16,384) full */
static void *page_worker(void *arg)
{
	for (int i = 0; i < 17000; i++) {
		PROF_USDT(pg_call);
	}
	return arg;
}

static void four_full(const struct child *c)
{
	pthread_t th[4];

	for (int i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, page_worker, NULL))
			_exit(3);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* a zone of its own: the segment stays this process's */
	{
		PROF_USDT(pg_main);
	}
	child_say(c, 'r');
	child_hear(c);
}

/* the report page's timeline is a page, not a recording: the newest
 * 50,000 calls shared by the threads as water fills (main's one call, then
 * 49,999 / 4 = 12,499 each of four full rings) */
static void test_page_cap(void **state)
{
	char pid[16], out[96], *page, *at;
	const char *rep[] = { "report", "--pid", pid, "--no-daemon", "--format", "html", "-o", out,
			      NULL };
	size_t zones = 0;
	struct child c;
	FILE *f;
	long len;

	(void)state;
	start(&c, four_full);
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	snprintf(out, sizeof(out), "%s/page.html", test_dir);
	assert_int_equal(profctl(rep), 0);
	stop(&c);
	f = fopen(out, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	page = malloc((size_t)len + 1);
	assert_non_null(page);
	assert_int_equal(fread(page, 1, (size_t)len, f), (size_t)len);
	page[len] = 0;
	fclose(f);
	for (at = page; (at = strstr(at, "\"name\":\"pg_call\",\"cat\":\"zone\"")); at++)
		zones++;
	/* the exited workers' rings: 4 x 16,384 held, 4 x 12,499 shown */
	assert_int_equal(zones, 4 * 12499);
	assert_non_null(strstr(page, "\"omitted\":15540"));
	assert_non_null(strstr(page, "\"name\":\"pg_main\""));
	free(page);
}

/* what a user gets wrong: one line each, exit 2 */
static void test_usage(void **state)
{
	const char *a[] = { "trace", "--slow", "tick", NULL };
	const char *b[] = { "trace", "--count", "2", NULL };
	/* a time as every option takes one: a number and a unit, or seconds */
	const char *c[] = { "trace", "--slow", "tick:5x", "--pid", "1", NULL };
	const char *d[] = { "trace", "--slow", "tick:5ms", "--count", "2", "--pid", "1", NULL };

	(void)state;
	assert_int_equal(profctl(a), 2);
	assert_int_equal(profctl(b), 2);
	assert_int_equal(profctl(c), 2);
	assert_int_equal(profctl(d), 2);
}

TEST_MAIN(test_dir_setup, test_dir_teardown, cmocka_unit_test(test_usage),
	  cmocka_unit_test(test_exact), cmocka_unit_test(test_speedscope),
	  cmocka_unit_test(test_html), cmocka_unit_test(test_slow), cmocka_unit_test(test_rate),
	  cmocka_unit_test(test_page_cap))
