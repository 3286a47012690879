// SPDX-License-Identifier: MIT
/*
 * test_profctl_web_profd.c - serve's live page through a real profd (root,
 * BPF): the window "the last 1 s" is profd's history, as long as profd
 * says; top's rows carry the kernel columns (on-CPU of a zone that
 * sleeps, known and below its wall time; its calls blocked); the timeline
 * has each thread's scheduler lane.  Skips, saying why, unless root with
 * kernel assistance.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "web_util.h"
#include "client.h"
#include "profd_private.h"

static char dir[64], sock[128];
static pid_t profd_pid = -1, worker = -1, server = -1;
static unsigned int port;

static int setup(void **state)
{
	(void)state;
	if (test_profd_group_setup("test_profctl_web_profd", dir, sock, &profd_pid))
		return -1;
	/* with profd, a worker (it and serve find profd by $PROF_SOCKET) */
	if (profd_pid > 0 && (worker = worker_start("2")) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	web_end(server, worker, dir);
	test_profd_stop(profd_pid);
	return 0;
}

static void test_through_profd(void **state)
{
	char path[128], *body = NULL;
	long long span = 0, wall, oncpu, kcalls, calls;
	struct timespec t0, t;
	size_t len;

	int fd;

	(void)state;
	test_need_profd(profd_pid);
	/* profd's history reaches three seconds back once it has followed
	 * the worker that long */
	fd = profd_connect(sock);
	assert_true(fd >= 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct prof_snapshot *s = NULL;
		struct profd_answer a = { 0 };

		if (!profd_snapshot_opts(fd, worker, PROFD_SNAP_LAST, 3, 0, &s, &a)) {
			prof_snapshot__destroy(s);
			if (a.span_ns >= 2700000000ull)
				break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 30)
			fail_msg("profd has not followed the worker for three seconds");
		usleep(100000);
	}
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	server = serve_as(0, true, &port);
	assert_true(server > 0);
	/* its first answer reaches back further than this server has lived:
	 * profd's history, not its own reads (which have nothing before its
	 * first).  A window starts at profd's first frame inside it, late on
	 * a busy machine: half the three seconds at least */
	snprintf(path, sizeof(path), "/api/p/%d/top?window=3s", (int)worker);
	assert_int_equal(get(port, path, &body, &len, NULL), 200);
	span = num_after(body, "{", "span_ns");
	clock_gettime(CLOCK_MONOTONIC, &t);
	assert_true(span >= 1500000000);
	assert_true(span > (t.tv_sec - t0.tv_sec) * 1000000000ll + (t.tv_nsec - t0.tv_nsec));
	snprintf(path, sizeof(path), "/api/p/%d/top?window=1s", (int)worker);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		free(body);
		assert_int_equal(get(port, path, &body, &len, NULL), 200);
		span = num_after(body, "{", "span_ns");
		kcalls = num_after(body, "\"zone\":\"lw_wait\"", "kernel_calls");
		if (span >= 900000000 && kcalls > 0 && strstr(body, "\"sched\":true"))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20)
			fail_msg("no second of profd's history with kernel facts: %s", body);
		usleep(100000);
	}
	/* the window is profd's: as long as its frames, about the second asked */
	assert_true(span < 3000000000ll);
	assert_int_equal(num_after(body, "{", "span_asked_ns"), 1000000000ll);
	/* lw_wait sleeps: on the CPU a little of its wall time, its calls blocked */
	wall = num_after(body, "\"zone\":\"lw_wait\"", "total_ns");
	oncpu = num_after(body, "\"zone\":\"lw_wait\"", "oncpu_ns");
	calls = num_after(body, "\"zone\":\"lw_wait\"", "calls");
	assert_true(calls > 0 && wall > 0);
	assert_true(oncpu >= 0 && oncpu < wall);
	assert_true(num_after(body, "\"zone\":\"lw_wait\"", "blocked") > 0);
	free(body);
	/* the timeline: a scheduler lane a thread beside its calls */
	snprintf(path, sizeof(path), "/api/p/%d/trace?last=1s&max=200", (int)worker);
	assert_int_equal(get(port, path, &body, &len, NULL), 200);
	assert_all_in(body, "\"name\":\"scheduler: tid ", "\"cat\":\"sched\"", "\"cat\":\"zone\"");
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_through_profd),
	};

	return test_run_group(tests, setup, teardown);
}
