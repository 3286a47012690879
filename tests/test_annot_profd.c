// SPDX-License-Identifier: MIT
/*
 * test_annot_profd.c - root: a named lock's waits under a private profd
 * (the real BPF program) say whether the thread slept in the kernel.  A
 * mutex held across a sleep makes its waiter sleep in a futex: blocked.  A
 * spin lock held across a busy loop makes its waiter spin: covered by the
 * kernel word, never blocked (a preemption is no sleep).  And profd's
 * history windows a lock as a zone: report --last counts the acquisitions
 * inside the window only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "testutil.h"
#include "annot.h"
#include "client.h"
#include "profctl.h"
#include "prof.h"
#include "profd_private.h"

static char dir[64], sock[128];
static pid_t profd_pid = -1;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int spin_flag, stage;

/* whether this thread's zones have kernel facts yet (profd hands its
 * record over asynchronously) */
static bool warm_covered(void)
{
	struct prof_snapshot *s;
	const struct prof_snap_node *n;
	const struct prof_snap_thread *t;
	bool yes;

	{
		PROF_USDT(ap_warm);
		usleep(100);
	}
	s = test_snapshot(0);
	t = s ? test_thread(s, (__u32)gettid()) : NULL;
	n = t ? test_node(s, t, "ap_warm") : NULL;
	yes = n && n->kernel_calls > 0;
	prof_snapshot__destroy(s);
	return yes;
}

static void warm(void)
{
	for (int w = 0; w < 500 && !warm_covered(); w++)
		usleep(10000);
}

static void wait_stage(int s)
{
	while (__atomic_load_n(&stage, __ATOMIC_ACQUIRE) < s)
		sched_yield();
}

/* the holder: the mutex across a sleep, then the spin lock across a spin */
static void *holder(void *arg)
{
	struct timespec a, b;

	(void)arg;
	warm();
	for (int i = 0; i < 5; i++) {
		assert_int_equal(PROF_MUTEX_LOCK(ap_mutex, &m), 0);
		__atomic_store_n(&stage, 2 * i + 1, __ATOMIC_RELEASE);
		usleep(20000);
		assert_int_equal(PROF_MUTEX_UNLOCK(ap_mutex, &m), 0);
		wait_stage(2 * i + 2);
	}
	__atomic_store_n(&spin_flag, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&stage, 100, __ATOMIC_RELEASE);
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec < 5000000L);
	__atomic_store_n(&spin_flag, 0, __ATOMIC_RELEASE);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	warm();
	for (int i = 0; i < 5; i++) {
		wait_stage(2 * i + 1);
		assert_int_equal(PROF_MUTEX_LOCK(ap_mutex, &m), 0);
		assert_int_equal(PROF_MUTEX_UNLOCK(ap_mutex, &m), 0);
		__atomic_store_n(&stage, 2 * i + 2, __ATOMIC_RELEASE);
	}
	wait_stage(100);
	PROF_LOCK_WAIT(ap_spin);
	while (__atomic_load_n(&spin_flag, __ATOMIC_ACQUIRE))
		;
	PROF_LOCK_ACQUIRED(ap_spin);
	PROF_LOCK_RELEASED(ap_spin);
	return NULL;
}

static void test_blocked_or_spun(void **state)
{
	struct prof_annot_lock_sum *v;
	struct prof_annot *a;
	pthread_t h, w;
	size_t len = 0;
	void *seg;
	long n, i;
	bool mutex = false, spin = false;

	(void)state;
	test_need_profd(profd_pid);
	assert_int_equal(pthread_create(&h, NULL, holder, NULL), 0);
	assert_int_equal(pthread_create(&w, NULL, waiter, NULL), 0);
	assert_int_equal(pthread_join(h, NULL), 0);
	assert_int_equal(pthread_join(w, NULL), 0);
	seg = test_own_segment(&len);
	assert_int_equal(prof_seg_annot(seg, len, &a), 0);
	munmap(seg, len);
	n = prof_annot_lock_sums(a, &v);
	for (i = 0; i < n; i++) {
		printf("%s: %llu acquisitions, %llu contended, %llu covered, %llu blocked\n",
		       v[i].name, (unsigned long long)v[i].acquisitions,
		       (unsigned long long)v[i].contended, (unsigned long long)v[i].kernel_waits,
		       (unsigned long long)v[i].blocked);
		if (!strcmp(v[i].name, "ap_mutex")) {
			mutex = true;
			/* each of the waiter's five waited out a 20 ms sleep */
			assert_true(v[i].contended >= 5);
			assert_true(v[i].kernel_waits >= 5);
			assert_true(v[i].blocked >= 5);
		} else if (!strcmp(v[i].name, "ap_spin")) {
			spin = true;
			assert_int_equal(v[i].contended, 1);
			assert_int_equal(v[i].kernel_waits, 1);
			assert_int_equal(v[i].blocked, 0);
		}
	}
	assert_true(mutex && spin);
	free(v);
	prof_annot__destroy(a);
}

/*
 * report --last 5s of this process through profd: ap_last's acquisitions
 * in the window (0 if it has none), and whether its longest hold is
 * unknown there; ~0 when profd had no frame in the last 5 s to subtract
 * (it answers the whole life then: frames are some 2 s apart, later on a
 * loaded machine)
 */
static __u64 last_acquisitions(bool *hold_unknown)
{
	const char *key = "\"name\":\"ap_last\",\"acquisitions\":";
	char path[128], pid[16], *json, *p;
	const char *args[] = { "report", "--pid", pid, "--last", "5s", "--format", "json", NULL };
	__u64 n = 0;

	snprintf(path, sizeof(path), "%s/last.json", dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_int_equal(test_profctl_run(path, args), 0);
	json = test_slurp(path, NULL);
	assert_non_null(json);
	p = strstr(json, "\"span_ns\":");
	if (!p || strtoull(p + strlen("\"span_ns\":"), NULL, 10) > 5000000000ull) {
		free(json);
		return ~0ull;
	}
	p = strstr(json, key);
	if (p) {
		n = strtoull(p + strlen(key), NULL, 10);
		*hold_unknown = strstr(p, "\"hold_max_ns\":null") &&
				strstr(p, "\"hold_max_ns\":null") < strchr(p, '}');
	}
	free(json);
	return n;
}

static void take_last(int n, __u64 hold_ns)
{
	for (int i = 0; i < n; i++) {
		PROF_LOCK_ACQUIRED(ap_last);
		for (__u64 t0 = now_ns(); now_ns() - t0 < hold_ns;)
			;
		PROF_LOCK_RELEASED(ap_last);
	}
}

static void test_last_window(void **state)
{
	bool unknown = false;
	__u64 n = 0, t;

	(void)state;
	test_need_profd(profd_pid);
	take_last(10, 1000000);
	/* profd's frames move past them: a window of none */
	for (t = now_ns(); now_ns() - t < 30000000000ull; usleep(50000))
		if (!(n = last_acquisitions(&unknown)))
			break;
	assert_int_equal(n, 0);
	take_last(3, 1000);
	/* then the three, never the thirteen since start */
	for (t = now_ns(); now_ns() - t < 30000000000ull; usleep(20000)) {
		n = last_acquisitions(&unknown);
		if (n == ~0ull)
			continue;
		assert_true(n <= 3);
		if (n == 3)
			break;
	}
	assert_int_equal(n, 3);
	/* the longest hold of the window (1 us) cannot be told from the
	 * 1 ms since start: unknown */
	assert_true(unknown);
}

TEST_PROFD_GROUP("test_annot_profd")

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocked_or_spun),
		cmocka_unit_test(test_last_window),
	};

	return test_run_group(tests, setup, teardown);
}
