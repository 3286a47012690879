// SPDX-License-Identifier: MIT
/*
 * test_sample_search.c - which zone a tick fell in, found by a search of the
 * thread's event ring (profd_attrib.c) rather than its walk: the same zone
 * as the walk for every tick of a busy thread's last calls (unprivileged).
 *
 * This thread runs thousands of calls of nested zones (outer around inner
 * around a little work, now and then work outside zones, a deeper call, a
 * frame), then every tick of some of them is attributed twice: by the
 * search, which must be taken (prof_attr_fast_used), and by the walk alone
 * (prof_attr_walk_only); each tick's zone must be the same.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "prof.h"
#include "testutil.h"
#include "profd_stacks.h"
#include "snapshot.h"

/* the search pays from 32 calls a tick (profd_attrib.c) */
#define FAST_EVENTS_A_TICK 32

static volatile unsigned long sink;

static void spin(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void deep(void)
{
	PROF_USDT(s_deep);
	spin(150);
}

__attribute__((noinline)) static void inner(unsigned long i)
{
	PROF_USDT(s_inner);
	spin(40);
	if (i % 3 == 0)
		deep();
	spin(10);
}

/* n rounds: outer { inner, work, inner }, work outside zones, a frame now and then */
static void rounds(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		{
			PROF_USDT(s_outer);
			inner(i);
			spin(25);
			inner(i + 1);
		}
		spin(i % 5 == 0 ? 60 : 5);
		if (i % 100 == 0)
			PROF_FRAME();
	}
}

/* the samples' nodes by the search (fast) and by the walk (walk) */
static void attribute_both(const void *mem, size_t len, const __u64 *ticks, __u32 n,
			   __u32 *fast, __u32 *walk)
{
	struct prof_attr *a = calloc(n, sizeof(*a));
	__u64 used = prof_attr_fast_used;
	__u32 i;

	assert_non_null(a);
	for (i = 0; i < n; i++)
		a[i].tick = ticks[i];
	assert_true(prof_seg_attribute(mem, len, (__u32)gettid(), a, n) >= 0);
	assert_true(prof_attr_fast_used == used + 1);
	for (i = 0; i < n; i++) {
		fast[i] = a[i].node;
		a[i] = (struct prof_attr){ .tick = ticks[i] };
	}
	prof_attr_walk_only = true;
	assert_true(prof_seg_attribute(mem, len, (__u32)gettid(), a, n) >= 0);
	prof_attr_walk_only = false;
	assert_true(prof_attr_fast_used == used + 1);
	for (i = 0; i < n; i++)
		walk[i] = a[i].node;
	free(a);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static void test_search_is_walk(void **state)
{
	enum { EVENTS = 70, N = 3 * EVENTS };
	const struct prof_trace_thread *tt = NULL;
	struct prof_trace *t;
	__u64 ticks[N];
	__u32 fast[N], walk[N], kinds[8], i, k, nkinds = 0, outside = 0, zones = 0;
	size_t len;
	void *mem;

	(void)state;
	rounds(5000);
	mem = test_own_segment(&len);
	/* ticks at the start, middle and end of EVENTS calls a third of
	 * the way into the ring (in every zone, and just after each) */
	assert_int_equal(prof_seg_trace(mem, len, &t), 0);
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == (__u32)gettid())
			tt = &t->threads[i];
	assert_non_null(tt);
	assert_true(tt->n > 3 * EVENTS * FAST_EVENTS_A_TICK);
	for (i = 0; i < EVENTS; i++) {
		const struct prof_event *e = &tt->ev[tt->n / 3 + i];
		__u64 d = prof_event_ticks(e);

		ticks[3 * i] = e->start;
		ticks[3 * i + 1] = e->start + d / 2;
		ticks[3 * i + 2] = e->start + d;
	}
	prof_trace__destroy(t);
	qsort(ticks, N, sizeof(ticks[0]), cmp_u64);
	attribute_both(mem, len, ticks, N, fast, walk);
	for (i = 0; i < N; i++) {
		assert_int_equal(fast[i], walk[i]);
		assert_int_not_equal(fast[i], PROF_ATTR_UNKNOWN);
		if (fast[i] == PROF_ATTR_OUTSIDE) {
			outside++;
			continue;
		}
		zones++;
		for (k = 0; k < nkinds && kinds[k] != fast[i]; k++)
			;
		if (k == nkinds && nkinds < 8)
			kinds[nkinds++] = fast[i];
	}
	/* the ticks fell in every kind of place: the three zones, outside */
	print_message("search = walk for %u ticks: %u in zones (%u of them), %u outside\n", N,
		      zones, nkinds, outside);
	assert_true(outside > 0);
	assert_true(nkinds >= 3);
	munmap(mem, len);
}

/* one tick: the same either way, a tick inside the deepest zone too */
static void test_search_one(void **state)
{
	__u64 t0, t1, tick;
	__u32 fast, walk, i;
	size_t len;
	void *mem;

	(void)state;
	rounds(1000);
	for (i = 0; i < 50; i++) {
		t0 = __prof_counter();
		rounds(1);
		t1 = __prof_counter();
		rounds(200);
		mem = test_own_segment(&len);
		tick = t0 + (t1 - t0) * i / 50;
		attribute_both(mem, len, &tick, 1, &fast, &walk);
		assert_int_equal(fast, walk);
		munmap(mem, len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_search_is_walk),
		cmocka_unit_test(test_search_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
