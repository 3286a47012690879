// SPDX-License-Identifier: MIT
/*
 * test_trace.c - unit: the event ring (slab.h).  Every zone exit leaves
 * its call in its thread's ring; a reader gets exactly the newest calls,
 * oldest first, each whole, and how many it lost.  The whole program runs
 * with rings of RING events (PROF_TRACE_EVENTS, set before the first zone).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include "prof.h"
#include "testutil.h"

#define RING 64

static volatile __u64 sink;

static void spin(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		sink += i;
}

/* the trace of this process's thread tid, copied now */
static const struct prof_trace_thread *thread_of(struct prof_trace *t, __u32 tid)
{
	__u32 i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	return NULL;
}

/* the node of thread tid named name in s, or ~0 */
static __u32 node_named(const struct prof_snapshot *s, __u32 tid, const char *name)
{
	__u32 i, j;

	for (i = 0; i < s->nthreads; i++) {
		if (s->threads[i].tid != tid)
			continue;
		for (j = 0; j < s->threads[i].nnodes; j++) {
			__u32 site = s->threads[i].nodes[j].site;

			if (site < s->nsites && !strcmp(s->sites[site].name, name))
				return j;
		}
	}
	return ~0u;
}

static __u32 gettid_(void)
{
	return (__u32)syscall(SYS_gettid);
}

/* this process's trace once fn has run to its end on a thread of its
 * own (its tid into *tid; fn NULL: no thread) */
static struct prof_trace *trace_after(void *(*fn)(void *), __u32 *tid)
{
	struct prof_trace *t;
	pthread_t th;
	size_t len;
	void *mem;

	if (fn) {
		assert_int_equal(pthread_create(&th, NULL, fn, tid), 0);
		assert_int_equal(pthread_join(th, NULL), 0);
	}
	mem = test_own_segment(&len);
	assert_int_equal(prof_seg_trace(mem, len, &t), 0);
	munmap(mem, len);
	return t;
}

/* ten outer calls of three inner ones each, on a thread of its own */
static void *nested(void *arg)
{
	*(__u32 *)arg = gettid_();
	for (int i = 0; i < 10; i++) {
		PROF_USDT(tr_outer);
		for (int j = 0; j < 3; j++) {
			PROF_USDT(tr_inner);
			spin(2000);
		}
	}
	return NULL;
}

/* exactly the calls made, in the order they ended, children inside
 * their parent, each as long as its counters say in total */
static void test_exact(void **state)
{
	struct prof_snapshot *s;
	struct prof_trace *t;
	const struct prof_trace_thread *tt;
	__u32 tid, outer, inner, k;
	__u64 sum_inner = 0, sum_outer = 0;

	(void)state;
	t = trace_after(nested, &tid);
	s = test_snapshot(0);
	assert_non_null(s);
	assert_int_equal(t->ring_events, RING);
	tt = thread_of(t, tid);
	assert_non_null(tt);
	assert_int_equal(tt->written, 40);
	assert_int_equal(tt->n, 40);
	outer = node_named(s, tid, "tr_outer");
	inner = node_named(s, tid, "tr_inner");
	assert_true(outer != ~0u && inner != ~0u);
	for (k = 0; k < 40; k++) {
		const struct prof_event *e = &tt->ev[k];

		if (k % 4 == 3) {
			/* the parent ends after its three children, around them */
			assert_int_equal(prof_event_node(e), outer);
			for (__u32 c = k - 3; c < k; c++) {
				assert_true(tt->ev[c].start >= e->start);
				assert_true(tt->ev[c].start + prof_event_ticks(&tt->ev[c]) <=
					    e->start + prof_event_ticks(e));
			}
			sum_outer += prof_event_ticks(e);
		} else {
			assert_int_equal(prof_event_node(e), inner);
			sum_inner += prof_event_ticks(e);
		}
		if (k)
			assert_true(e->start + prof_event_ticks(e) >=
				    tt->ev[k - 1].start + prof_event_ticks(&tt->ev[k - 1]));
	}
	/* the same calls the node counters hold */
	for (k = 0; k < s->nthreads; k++)
		if (s->threads[k].tid == tid) {
			assert_int_equal(s->threads[k].nodes[inner].ticks, sum_inner);
			assert_int_equal(s->threads[k].nodes[outer].ticks, sum_outer);
		}
	prof_snapshot__destroy(s);
	prof_trace__destroy(t);
}

/* 1000 calls of three zones in turn: the ring keeps the newest RING */
static void *turns(void *arg)
{
	*(__u32 *)arg = gettid_();
	for (int i = 0; i < 1000; i++) {
		switch (i % 3) {
		case 0: {
			PROF_USDT(tr_a);
			spin(10);
			break;
		}
		case 1: {
			PROF_USDT(tr_b);
			spin(10);
			break;
		}
		default: {
			PROF_USDT(tr_c);
			spin(10);
		}
		}
	}
	return NULL;
}

static void test_overwrite(void **state)
{
	struct prof_snapshot *s;
	struct prof_trace *t;
	const struct prof_trace_thread *tt;
	__u32 tid, node[3], k;

	(void)state;
	t = trace_after(turns, &tid);
	s = test_snapshot(0);
	node[0] = node_named(s, tid, "tr_a");
	node[1] = node_named(s, tid, "tr_b");
	node[2] = node_named(s, tid, "tr_c");
	tt = thread_of(t, tid);
	assert_non_null(tt);
	assert_int_equal(tt->written, 1000);
	assert_int_equal(tt->n, RING);
	/* calls 936..999, oldest first */
	for (k = 0; k < RING; k++) {
		assert_int_equal(prof_event_node(&tt->ev[k]), node[(1000 - RING + k) % 3]);
		if (k)
			assert_true(tt->ev[k].start >= tt->ev[k - 1].start); /* a coarse counter (qemu) */
	}
	prof_snapshot__destroy(s);
	prof_trace__destroy(t);
}

static volatile int race_stop;

/* on one CPU of two, the reader on the other: a copy races a write */
static void pin(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *racer(void *arg)
{
	pin(1);
	__atomic_store_n((__u32 *)arg, gettid_(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&race_stop, __ATOMIC_ACQUIRE)) {
		PROF_USDT(tr_race_outer);
		for (int j = 0; j < 3; j++) {
			PROF_USDT(tr_race_inner);
			spin(50);
		}
	}
	return NULL;
}

/*
 * A reader racing the writer: every event it keeps is whole.  A torn one
 * (one call's start with another's duration) would end out of order or
 * leave a child outside its parent.
 */
static void test_race(void **state)
{
	__u32 tid = 0, outer = ~0u, inner = ~0u;
	unsigned int reads = 0, lost_some = 0;
	pthread_t th;
	size_t len;
	void *mem;

	(void)state;
	race_stop = 0;
	assert_int_equal(pthread_create(&th, NULL, racer, &tid), 0);
	mem = test_own_segment(&len);
	pin(0);
	while (reads < 50000) {
		struct prof_trace *t;
		const struct prof_trace_thread *tt;
		__u64 k;

		assert_int_equal(prof_seg_trace(mem, len, &t), 0);
		tt = thread_of(t, __atomic_load_n(&tid, __ATOMIC_ACQUIRE));
		if (!tt || tt->n < 8) {
			prof_trace__destroy(t);
			continue;
		}
		if (outer == ~0u) {
			struct prof_snapshot *s = test_snapshot(0);

			outer = node_named(s, tt->tid, "tr_race_outer");
			inner = node_named(s, tt->tid, "tr_race_inner");
			prof_snapshot__destroy(s);
		}
		lost_some += tt->written > tt->n;
		for (k = 0; k < tt->n; k++) {
			const struct prof_event *e = &tt->ev[k];
			__u32 nd = prof_event_node(e);

			assert_true(nd == outer || nd == inner);
			if (k)
				assert_true(e->start + prof_event_ticks(e) >=
					    tt->ev[k - 1].start + prof_event_ticks(&tt->ev[k - 1]));
			if (nd == outer && k >= 3)
				for (__u64 c = k - 3; c < k; c++) {
					assert_int_equal(prof_event_node(&tt->ev[c]), inner);
					assert_true(tt->ev[c].start >= e->start);
				}
		}
		prof_trace__destroy(t);
		reads++;
	}
	__atomic_store_n(&race_stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	{
		cpu_set_t all;

		CPU_ZERO(&all);
		for (int c = 0; c < CPU_SETSIZE; c++)
			CPU_SET(c, &all);
		sched_setaffinity(0, sizeof(all), &all);
	}
	assert_true(lost_some > 0);
	munmap(mem, len);
}

static void *framed(void *arg)
{
	*(__u32 *)arg = gettid_();
	for (int i = 0; i < 5; i++) {
		PROF_FRAME();
		{
			PROF_USDT(tr_in_frame);
			spin(3000);
		}
	}
	return NULL;
}

/* a frame is an event of the root's node, from one PROF_FRAME to the next,
 * around what ran in it */
static void test_frames(void **state)
{
	struct prof_snapshot *s;
	struct prof_trace *t;
	const struct prof_trace_thread *tt;
	__u64 sum = 0, k, nf = 0;
	__u32 tid, i;

	(void)state;
	t = trace_after(framed, &tid);
	s = test_snapshot(0);
	tt = thread_of(t, tid);
	assert_non_null(tt);
	assert_int_equal(tt->n, 9);
	for (k = 0; k < tt->n; k++) {
		if (prof_event_node(&tt->ev[k]) != PROF_NODE_ROOT)
			continue;
		nf++;
		sum += prof_event_ticks(&tt->ev[k]);
		/* the zone before it ran inside it */
		assert_true(k > 0);
		assert_true(tt->ev[k - 1].start >= tt->ev[k].start);
	}
	assert_int_equal(nf, 4);
	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid) {
			assert_int_equal(s->threads[i].frames, 4);
			assert_int_equal(s->threads[i].frame_ticks, sum);
		}
	prof_snapshot__destroy(s);
	prof_trace__destroy(t);
}

/* the ring's size is the one the program asked for (PROF_TRACE_EVENTS) */
static void test_ring_size(void **state)
{
	struct prof_trace *t;

	(void)state;
	{
		PROF_USDT(tr_first);
	}
	t = trace_after(NULL, NULL);
	assert_int_equal(t->ring_events, RING);
	prof_trace__destroy(t);
}

/* before the first zone: the segment is made with it */
static void env(void)
{
	setenv("PROF_TRACE_EVENTS", "64", 1);
}

TEST_MAIN_ENV(NULL, NULL, env, cmocka_unit_test(test_ring_size), cmocka_unit_test(test_exact),
	      cmocka_unit_test(test_overwrite), cmocka_unit_test(test_frames), cmocka_unit_test(test_race))
