// SPDX-License-Identifier: MIT
/*
 * test_profctl_web.c - `profctl serve`'s live page and its JSON, against
 * live_worker (four threads of nested zones, stopped and started by a
 * signal): the routes and their errors, top's rows byte for byte those of
 * `profctl report --flat --format json` for the same window, a save that
 * reads back as the process, another user seeing neither the process nor
 * its page (root), and the page itself in headless Chromium through
 * Selenium (tests/test_live.py: no console error, the table's numbers
 * equal report's, the flame graph and the timeline drawn with the right
 * counts, freeze and save work, a screenshot kept as
 * .output/tests/profctl_live.png).  What is not installed is skipped,
 * saying why.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "proffile.h"
#include "web_util.h"

static char dir[64];
static pid_t worker = -1, server = -1;
static unsigned int port;

static int setup(void **state)
{
	(void)state;
	if (test_no_daemon_dir("test_profctl_web", dir))
		return -1;
	worker = worker_start("4");
	if (worker < 0)
		return -1;
	server = serve_as(0, false, &port);
	return server < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return web_end(server, worker, dir);
}

/* profctl ARGS... into a string (its stdout) */
static char *profctl_out(char **args, int n)
{
	char path[128], *argv[16], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/out.json", dir);
	argv[0] = (char *)(uintptr_t) "profctl";
	for (i = 0; i < n; i++)
		argv[i + 1] = args[i];
	argv[n + 1] = (char *)(uintptr_t) "-o";
	argv[n + 2] = path;
	argv[n + 3] = NULL;
	assert_int_equal(profctl_main(n + 3, argv), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(getdelim(&buf, &len, 0, f) > 0, 1);
	fclose(f);
	return buf;
}

/* the worker stopped, outside every zone: its profile holds still */
static void worker_stop(void)
{
	struct prof_snapshot *a = NULL, *b = NULL;
	__u64 end = test_now_ns() + 10000000000ull;
	bool still = false;

	/* still: two reads 50 ms apart with the same calls and no call open.
	 * The stop is sent again each time: a start (SIGUSR2) the worker had
	 * not taken yet is delivered after it (the lower signal first) */
	while (!still && test_now_ns() < end) {
		__u64 ca = 0, cb = 0, open = 0;
		__u32 i, j;

		assert_int_equal(kill(worker, SIGUSR1), 0);
		a = test_snapshot(worker);
		usleep(50000);
		b = test_snapshot(worker);
		for (i = 0; i < a->nthreads; i++)
			for (j = 1; j < a->threads[i].nnodes; j++)
				ca += a->threads[i].nodes[j].calls;
		for (i = 0; i < b->nthreads; i++)
			for (j = 1; j < b->threads[i].nnodes; j++) {
				cb += b->threads[i].nodes[j].calls;
				open += b->threads[i].nodes[j].open;
			}
		still = ca == cb && !open;
		prof_snapshot__destroy(a);
		prof_snapshot__destroy(b);
	}
	assert_true(still);
}

/* the status of GET prefix PID rest, PID the worker's (/p/PID, /api/p/PID/...) */
static int worker_code(unsigned int p, const char *prefix, const char *rest)
{
	char path[128];

	snprintf(path, sizeof(path), "%s%d%s", prefix, (int)worker, rest);
	return get_code(p, path);
}

static void test_routes(void **state)
{
	char path[128], *body, *head;
	size_t len;

	(void)state;
	/* the page, offline: nothing it loads is elsewhere */
	assert_int_equal(get(port, "/", &body, &len, &head), 200);
	assert_non_null(strstr(head, "Content-Type: text/html"));
	assert_non_null(strstr(body, "function profTimeline("));
	assert_null(strstr(body, "src=\"http"));
	assert_null(strstr(body, "href=\"http"));
	free(body);
	free(head);
	assert_int_equal(worker_code(port, "/p/", ""), 200);
	assert_int_equal(get(port, "/api/processes", &body, &len, NULL), 200);
	snprintf(path, sizeof(path), "{\"pid\":%d,", (int)worker);
	assert_non_null(strstr(body, path));
	free(body);
	/* what is not a route, a bad window, a window without history */
	assert_int_equal(get_code(port, "/p/x"), 404);
	assert_int_equal(get_code(port, "/api/nope"), 404);
	assert_int_equal(worker_code(port, "/api/p/", "/nope"), 404);
	assert_int_equal(worker_code(port, "/api/p/", "/top?window=bogus"), 400);
	assert_int_equal(worker_code(port, "/api/p/", "/top?window=1.5s"), 400);
	assert_int_equal(worker_code(port, "/api/p/", "/top?window=60s"), 400);
	assert_int_equal(worker_code(port, "/api/p/", "/trace?max=x"), 400);
	/* a process that is not there: 404 on every route of it */
	assert_int_equal(get_code(port, "/api/p/999999999/top"), 404);
	assert_int_equal(get_code(port, "/p/999999999"), 404);
	/* the timeline's calls, at most max */
	snprintf(path, sizeof(path), "/api/p/%d/trace?last=5s&max=10", (int)worker);
	assert_int_equal(get(port, path, &body, &len, NULL), 200);
	{
		size_t n = 0;

		for (char *p = body; (p = strstr(p, "\"cat\":\"zone\"")); p++)
			n++;
		assert_true(n > 0 && n <= 10);
	}
	free(body);
}

/* top's rows are report --flat --format json's, byte for byte, and the
 * report is report --format json's */
static void test_same_json(void **state)
{
	char path[128], pid[16], *body, *flat, *at;
	char *args[] = { (char *)(uintptr_t) "report", (char *)(uintptr_t) "--pid", pid,
			 (char *)(uintptr_t) "--since-start", (char *)(uintptr_t) "--flat",
			 (char *)(uintptr_t) "--format", (char *)(uintptr_t) "json" };
	size_t len;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)worker);
	worker_stop();
	snprintf(path, sizeof(path), "/api/p/%d/top?window=start", (int)worker);
	assert_int_equal(get(port, path, &body, &len, NULL), 200);
	flat = profctl_out(args, 7);
	at = strstr(body, "\"flat\":");
	assert_non_null(at);
	at += strlen("\"flat\":");
	/* the flat view, then top's closing brace */
	assert_int_equal(strlen(at), strlen(flat) + 2);
	assert_memory_equal(at, flat, strlen(flat));
	assert_non_null(strstr(body, "\"window\":\"start\""));
	free(body);
	free(flat);
	assert_int_equal(kill(worker, SIGUSR2), 0);
}

/* lw_frame's calls in a top answer, 0 if it has no row */
static unsigned long long frame_calls(const char *body)
{
	static const char key[] = "\"zone\":\"lw_frame\",\"calls\":";
	const char *p = strstr(body, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* top's window at path: its span, lw_frame's calls in *calls */
static unsigned long long top_window(const char *path, unsigned long long *calls)
{
	char *body, *p;
	size_t len;
	unsigned long long span;

	assert_int_equal(get(port, path, &body, &len, NULL), 200);
	p = strstr(body, "\"span_ns\":");
	assert_non_null(p);
	span = strtoull(p + 10, NULL, 10);
	*calls = frame_calls(body);
	free(body);
	return span;
}

/*
 * The last seconds without profd: a window of this server's own reads, as
 * long as it says, holding the calls of that time only: none while the
 * worker is stopped, some while it runs.
 */
static void test_window(void **state)
{
	char win[128], start[128];
	unsigned long long span, calls;

	(void)state;
	snprintf(win, sizeof(win), "/api/p/%d/top?window=1s", (int)worker);
	snprintf(start, sizeof(start), "/api/p/%d/top?window=start", (int)worker);
	worker_stop();
	/* the first read of a process has nothing before it */
	top_window(win, &calls);
	assert_int_equal(calls, 0);
	usleep(1100000);
	span = top_window(win, &calls);
	assert_true(span >= 1000000000ull && span < 30000000000ull);
	assert_int_equal(calls, 0);
	top_window(start, &calls);
	assert_true(calls > 0);
	assert_int_equal(kill(worker, SIGUSR2), 0);
	usleep(1100000);
	span = top_window(win, &calls);
	assert_true(span >= 1000000000ull && span < 30000000000ull);
	assert_true(calls > 0);
}

/*
 * A thread's newest events only (the page's timeline): the last of what the
 * whole ring holds, the ones older than them counted as skipped, not lost.
 */
static void test_trace_newest(void **state)
{
	struct prof_trace *all = NULL, *some = NULL;
	struct pc_src src;
	const void *mem;
	size_t len;
	__u32 i;

	(void)state;
	worker_stop();
	pc_src_open(&src, true);
	assert_int_equal(pc_src_map(&src, worker, &mem, &len), 0);
	assert_int_equal(prof_seg_trace(mem, len, &all), 0);
	assert_int_equal(prof_seg_trace_newest(mem, len, 5, &some), 0);
	assert_int_equal(some->nthreads, all->nthreads);
	assert_true(all->nthreads >= 4);
	for (i = 0; i < all->nthreads; i++) {
		const struct prof_trace_thread *a = &all->threads[i], *b = &some->threads[i];

		assert_int_equal(b->tid, a->tid);
		assert_int_equal(b->written, a->written);
		assert_true(a->n > 5);
		assert_int_equal(b->n, 5);
		assert_int_equal(b->skipped, a->n - 5);
		assert_int_equal(a->skipped, 0);
		assert_memory_equal(b->ev, a->ev + (a->n - 5), 5 * sizeof(*b->ev));
	}
	prof_trace__destroy(all);
	prof_trace__destroy(some);
	pc_src_close(&src);
	assert_int_equal(kill(worker, SIGUSR2), 0);
}

/* save: profctl save's file of the process */
static void test_save(void **state)
{
	char path[128], *body, *head, file[128];
	struct prof_snapshot *s = NULL;
	size_t len;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "/api/p/%d/save?window=start", (int)worker);
	assert_int_equal(get(port, path, &body, &len, &head), 200);
	assert_non_null(strstr(head, "Content-Disposition: attachment; filename=\"live_worker-"));
	assert_true(prof_file_is(body, len));
	snprintf(file, sizeof(file), "%s/saved.prof", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(body, 1, len, f), len);
	fclose(f);
	assert_int_equal(pc_read_image(file, 0, &s), 0);
	assert_int_equal(s->pid, (__u32)worker);
	assert_int_equal(s->nthreads >= 4, 1);
	prof_snapshot__destroy(s);
	free(body);
	free(head);
}

/* another user's server shows neither the process nor its page */
static void test_other_user(void **state)
{
	char paths[4][96], path[128], *body;
	unsigned int p2;
	size_t i, n, len;
	pid_t nobody;
	int st;

	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: needs root to become another user\n");
		skip();
	}
	/* readable by all: only serve's own rule keeps nobody out */
	n = test_seg_paths(worker, prof_proc_start_token(worker), paths, 4);
	assert_true(n >= 1);
	for (i = 0; i < n; i++)
		assert_int_equal(chmod(paths[i], 0644), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	nobody = serve_as(65534, false, &p2);
	assert_true(nobody > 0);
	assert_int_equal(get(p2, "/api/processes", &body, &len, NULL), 200);
	snprintf(path, sizeof(path), "\"pid\":%d,", (int)worker);
	assert_null(strstr(body, path));
	free(body);
	assert_int_equal(worker_code(p2, "/p/", ""), 404);
	assert_int_equal(worker_code(p2, "/api/p/", "/top?window=start"), 404);
	assert_int_equal(worker_code(p2, "/api/p/", "/trace"), 404);
	assert_int_equal(worker_code(p2, "/api/p/", "/save"), 404);
	kill(nobody, SIGTERM);
	assert_int_equal(waitpid(nobody, &st, 0), nobody);
	for (i = 0; i < n; i++)
		assert_int_equal(chmod(paths[i], 0600), 0);
}

/* the page in headless Chromium (tests/test_live.py) */
static void test_browser(void **state)
{
	char cmd[512];
	int rc;

	(void)state;
	assert_int_equal(kill(worker, SIGUSR2), 0);
	if (access("/usr/bin/python3", X_OK) || system("/usr/bin/python3 -c 'import selenium' 2>/dev/null") ||
	    system("command -v chromium >/dev/null 2>&1") ||
	    system("command -v chromedriver >/dev/null 2>&1")) {
		fprintf(stderr, "skip: needs chromium, chromium-driver and python3-selenium "
				"(.ci/deps installs them)\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd),
		 "timeout 180 /usr/bin/python3 tests/test_live.py http://127.0.0.1:%u %d "
		 ".output/profctl .output/tests/profctl_live.png %s/downloads",
		 port, (int)worker, dir);
	rc = system(cmd);
	rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),	   cmocka_unit_test(test_same_json),
		cmocka_unit_test(test_window),	   cmocka_unit_test(test_trace_newest),
		cmocka_unit_test(test_save),
		cmocka_unit_test(test_other_user), cmocka_unit_test(test_browser),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, setup, teardown);
}
