// SPDX-License-Identifier: MIT
/*
 * test_zone_exact.c - what the fast path writes, figure by figure, where a
 * call's own numbers say what it must be: one call's histogram count is
 * in the bucket of its own duration (the node's max), many calls' counts
 * are the buckets of their events' durations, and the off-CPU time
 * of a call is what the kernel record gained during it, not its total
 * since the thread began (the enter copies the record's seq and off-CPU
 * time together), and a reader's cache sees a live thread's exits.  Each
 * case runs in a thread of its own: its nodes hang from a fresh root.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "fastpath.h"
#include "prof.h"

/* --- one call, one count, in its own bucket ------------------------------ */

#define EXACT_DEPTH 12

/* a node per depth, each one call; deeper calls spin longer (and the
 * outer ones hold them): durations over several octaves */
static void exact_rec(int n)
{
	PROF_USDT(exact_rec);

	test_spin(50u << (EXACT_DEPTH - n));
	if (n > 1)
		exact_rec(n - 1);
}

static void exact_case(void)
{
	exact_rec(EXACT_DEPTH);
}

static void test_one_call_bucket(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(exact_case, &t);
	__u32 i, seen = 0;

	(void)state;
	for (i = 2; i < t->nnodes; i++) {
		const struct prof_snap_node *n = &t->nodes[i];
		const __u32 *h;
		__u32 b, k, sum = 0;

		if (strcmp(prof_snap_node_name(s, n), "exact_rec"))
			continue;
		seen++;
		assert_int_equal(n->calls, 1);
		/* one call: its max is its duration */
		assert_int_equal(n->max, n->ticks);
		h = prof_snap_hist(s, n);
		assert_non_null(h);
		b = prof_hist_bucket(n->max);
		assert_true(b >= n->hist_lo && b < n->hist_lo + n->hist_n);
		for (k = 0; k < n->hist_n; k++)
			sum += h[k];
		assert_int_equal(sum, 1);
		assert_int_equal(h[b - n->hist_lo], 1);
	}
	assert_int_equal(seen, EXACT_DEPTH);
	prof_snapshot__destroy(s);
}

/* --- many calls of one node: its histogram is its events' ------------- */

#define EXACT_CALLS 400

/* durations over a few octaves, in an order that puts calls in a bucket
 * after its neighbours have counts (a count put a bucket off is then not
 * a first count, which the rare path would redo right) */
static void many_case(void)
{
	unsigned int i;

	for (i = 0; i < EXACT_CALLS; i++) {
		PROF_USDT(exact_many);
		test_spin(200 + (i * 7919u) % 4000);
	}
}

static void test_hist_is_events(void **state)
{
	__u32 want[PROF_HIST_BUCKETS] = { 0 }, node = ~0u, i, k, tid = 0;
	const struct prof_trace_thread *tt = NULL;
	const struct prof_snap_thread *t;
	const struct prof_snap_node *n;
	struct prof_snapshot *s;
	struct prof_trace *tr;
	const __u32 *h;
	size_t len = 0;
	void *mem;

	(void)state;
	s = test_run_case(many_case, &t);
	n = test_node(s, t, "exact_many");
	assert_non_null(n);
	assert_int_equal(n->calls, EXACT_CALLS);
	for (i = 0; i < t->nnodes; i++)
		if (&t->nodes[i] == n)
			node = i;
	tid = t->tid;
	mem = test_own_segment(&len);
	assert_int_equal(prof_seg_trace(mem, len, &tr), 0);
	munmap(mem, len);
	for (i = 0; i < tr->nthreads; i++)
		if (tr->threads[i].tid == tid)
			tt = &tr->threads[i];
	assert_non_null(tt);
	for (k = 0, i = 0; i < tt->n; i++) {
		__u64 dn = tt->ev[i].dur_node;

		if ((dn & ((1u << PROF_EV_NODE_BITS) - 1)) != node)
			continue;
		want[prof_hist_bucket(dn >> PROF_EV_DUR_SHIFT)]++;
		k++;
	}
	assert_int_equal(k, EXACT_CALLS);
	h = prof_snap_hist(s, n);
	assert_non_null(h);
	for (i = 0; i < PROF_HIST_BUCKETS; i++) {
		__u32 got = i >= n->hist_lo && i < n->hist_lo + n->hist_n ? h[i - n->hist_lo] : 0;

		assert_int_equal(got, want[i]);
	}
	prof_trace__destroy(tr);
	prof_snapshot__destroy(s);
}

/* --- a live thread's exits seen through a reader's cache ------------------ */

/* an empty zone: its deltas few and alike, so after a warm-up every
 * bucket its calls reach has counts, and its exits take the common path
 * (a bucket's first count would take the rare one, which bumps the slab's
 * word too) */
static void live_zone(void)
{
	PROF_USDT(exact_live);
}

/* the calls of exact_live on this thread in a cached flat pass, or ~0 */
static __u64 live_calls(const void *mem, size_t len, struct prof_seg_flat_cache *c)
{
	struct prof_snapshot *s;
	struct prof_flat_row *rows;
	__u64 calls = 0;
	size_t n, i;

	if (prof_seg_flat_cached(mem, len, test_gettid(), PROF_SORT_SELF, c, &s, &rows, &n))
		return ~0ull;
	for (i = 0; i < n; i++)
		if (rows[i].site < s->nsites && !strcmp(s->sites[rows[i].site].name, "exact_live"))
			calls += rows[i].calls;
	free(rows);
	prof_snapshot__destroy(s);
	return calls;
}

/* a reader that caches a slab's share while its activity stays sees the
 * exits of a live thread: they bump no word of their own, only the ring
 * head the reader adds to it (slab.h); RING_OFF: the program's ring is
 * off (that head is the slab header's).  0, or the check that failed */
static int exits_seen(bool ring_off)
{
	struct prof_seg_flat_cache *c = prof_seg_flat_cache__new();
	struct prof_trace *tr = NULL;
	size_t len = 0;
	int i, tries, bad = 0;
	void *mem;
	__u64 k0;

	if (!c)
		return 1;
	for (i = 0; i < 20000; i++)
		live_zone();
	mem = test_own_segment(&len);
	if (!mem)
		return 2;
	if (prof_seg_trace(mem, len, &tr) || (tr->ring_events == 0) != ring_off)
		bad = 3;
	prof_trace__destroy(tr);
	k0 = live_calls(mem, len, c);
	if (!bad && (k0 == ~0ull || k0 < 1 || live_calls(mem, len, c) != k0))
		bad = 4;
	/* five exits that all took the common path (the word did not move:
	 * else again; a rare exit, a new bucket or a new kernel word, bumps
	 * it) are seen all the same */
	for (tries = 0; !bad; tries++) {
		__u64 w0 = __atomic_load_n(__prof_tls.activity, __ATOMIC_ACQUIRE);

		if (tries == 100) {
			bad = 6;
			break;
		}
		k0 = live_calls(mem, len, c);
		for (i = 0; i < 5; i++)
			live_zone();
		if (__atomic_load_n(__prof_tls.activity, __ATOMIC_ACQUIRE) != w0)
			continue;
		if (live_calls(mem, len, c) != k0 + 5)
			bad = 5;
		break;
	}
	munmap(mem, len);
	prof_seg_flat_cache__destroy(c);
	return bad;
}

static void test_exits_seen_by_cache(void **state)
{
	static const char *const env[] = { "PROF_TRACE_EVENTS=0", NULL };

	(void)state;
	assert_int_equal(exits_seen(false), 0);
	/* the ring off, in a process of its own */
	assert_true(test_exited_ok(test_reexec("--ring-off", env, 60, NULL)));
}

/* --- off-CPU time: what the record gained inside the call ---------------- */

/* a kernel record of our own, back on the CPU (mark_ns odd), that has
 * counted seconds off the CPU before the call */
static struct prof_sched_rec exact_rec_k;

#define EXACT_PRIOR_NS	7000000000ull	/* before the call */
#define EXACT_OFF_NS	1000ull		/* inside it */

static void offcpu_case(void)
{
	const volatile struct prof_sched_rec *krec;

	/* the thread's first zone sets its kernel word up */
	{
		PROF_USDT(exact_first);
	}
	krec = __prof_tls.krec;
	__prof_tls.krec = &exact_rec_k;
	{
		PROF_USDT(exact_offcpu);
		test_spin(100000);
		/* a switch out and back: a microsecond away */
		__atomic_store_n(&exact_rec_k.offcpu_ns, EXACT_PRIOR_NS + EXACT_OFF_NS,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&exact_rec_k.preempt_seq, 2, __ATOMIC_RELAXED);
		__atomic_store_n(&exact_rec_k.seq, 2, __ATOMIC_RELAXED);
	}
	__prof_tls.krec = krec;
}

static void test_offcpu_from_prior_total(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s;
	const struct prof_snap_node *n;

	(void)state;
	exact_rec_k = (struct prof_sched_rec){ .seq = 1, .mark_ns = 1, .offcpu_ns = EXACT_PRIOR_NS };
	s = test_run_case(offcpu_case, &t);
	n = test_node(s, t, "exact_offcpu");
	assert_non_null(n);
	assert_int_equal(n->calls, 1);
	assert_int_equal(n->preempted, 1);
	assert_int_equal(n->offcpu_ns, EXACT_OFF_NS);
	prof_snapshot__destroy(s);
}

/* test_exits_seen_by_cache's process with the ring off */
static int ring_off_child(void)
{
	return exits_seen(true);
}

static const struct test_child_mode children[] = {
	{ "--ring-off", ring_off_child },
	{ NULL, NULL },
};

static void env(void)
{
	setenv("PROF_NO_DAEMON", "1", 1);
}

TEST_MAIN_CHILDREN(NULL, NULL, children, env, cmocka_unit_test(test_one_call_bucket),
		   cmocka_unit_test(test_hist_is_events), cmocka_unit_test(test_exits_seen_by_cache),
		   cmocka_unit_test(test_offcpu_from_prior_total))
