// SPDX-License-Identifier: MIT
/*
 * test_mono.c - zones on the monotonic clock (PROF_CLOCK=mono): no site
 * cache is filled, every enter takes its slow branch and every exit
 * __prof_anomaly (see prof.h's __prof_now), and what they count is what
 * the counter's fast path counts: exact calls, the tree, times in ns,
 * each call in its node's histogram, an open call's elapsed time, the
 * events' starts on the same clock, no anomaly, a zone cost measured.
 * The clock is chosen at a process's first zone: the test sets
 * PROF_CLOCK before any.
 */
#include "fastpath.h"
#include "prof.h"

#define OUTER 10u
#define INNER 100u
#define SLEEP_NS 2000000ull

static volatile unsigned long sink;
static struct prof_snapshot *open_snap; /* read while mono_outer is open */

static __attribute__((noinline)) void mono_inner(unsigned long i)
{
	PROF_USDT(mono_inner);
	sink += i;
}

static __attribute__((noinline)) void mono_outer(unsigned int k)
{
	PROF_USDT(mono_outer);
	struct timespec ts = { 0, (long)SLEEP_NS };
	unsigned long i;

	nanosleep(&ts, NULL);
	for (i = 0; i < INNER; i++)
		mono_inner(i);
	if (k == OUTER - 1 && !open_snap)
		open_snap = test_snapshot(0);
}

static void test_mono_counts(void **state)
{
	const struct prof_snap_thread *t;
	const struct prof_snap_node *o, *in;
	struct prof_snapshot *s;
	__u64 before, after;
	unsigned int k;
	__u32 on, inn;

	(void)state;
	before = test_now_ns();
	for (k = 0; k < OUTER; k++)
		mono_outer(k);
	/* the same site from a second parent: uncached, still its own node */
	for (k = 0; k < INNER; k++)
		mono_inner(k);
	after = test_now_ns();

	s = test_snapshot(0);
	assert_non_null(s);
	assert_int_equal(s->clock, PROF_CLOCK_MONO);
	assert_int_equal(s->tick_hz, 1000000000ull);
	assert_true(s->zone_cost > 0);
	t = test_thread(s, test_gettid());
	assert_non_null(t);
	on = test_child_calls(s, t, PROF_NODE_ROOT, "mono_outer", OUTER);
	inn = test_child_calls(s, t, on, "mono_inner", OUTER * INNER);
	o = &t->nodes[on];
	in = &t->nodes[inn];
	assert_int_equal(t->nodes[test_child(s, t, PROF_NODE_ROOT, "mono_inner")].calls, INNER);
	assert_int_equal(o->anomalies, 0);
	assert_int_equal(in->anomalies, 0);
	assert_int_equal(t->overflow, 0);
	/* ns: each outer call slept, and none took longer than the loop */
	print_message("mono_outer: %llu ns a call; mono_inner: %llu ns\n",
		      (unsigned long long)(o->ticks / OUTER),
		      (unsigned long long)(in->ticks / in->calls));
	assert_true(o->ticks >= OUTER * SLEEP_NS);
	assert_true(o->ticks <= after - before);
	assert_true(o->max >= SLEEP_NS && o->max <= o->ticks);
	assert_true(o->child_ticks == in->ticks);
	/* every call of a node is in its histogram */
	assert_int_equal(test_hist_sum(s, o), o->calls);
	assert_int_equal(test_hist_sum(s, in), in->calls);
	prof_snapshot__destroy(s);

	/* read inside the last outer call: open, its sleep already in it */
	assert_non_null(open_snap);
	t = test_thread(open_snap, test_gettid());
	assert_non_null(t);
	o = test_node(open_snap, t, "mono_outer");
	assert_non_null(o);
	assert_int_equal(o->open, 1);
	assert_true(o->open_ticks >= SLEEP_NS);
	assert_true(o->open_ticks <= after - before);
	prof_snapshot__destroy(open_snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mono_counts),
	};

	setenv("PROF_CLOCK", "mono", 1);
	setenv("PROF_NO_DAEMON", "1", 1);
	test_filter_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
