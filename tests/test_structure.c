// SPDX-License-Identifier: MIT
/*
 * test_structure.c - the shape of the call tree: recursion (a node per
 * depth, not double counted in the flat view), public zones shared across
 * files, private zones with one name kept apart, PROF_FUNC names,
 * PROF_BEGIN/END balanced and not, allocations charged to the current zone,
 * frames, thread names, anomalies (counted, not added) and off-CPU time
 * clamped to wall time.  Each case runs in a thread of its own, so its
 * nodes hang from a fresh root and its counters start at zero.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "fastpath.h"
#include "prof.h"

void structure_b_public(void);
void structure_b_private(void);

PROF_DEFINE(struct_public);

static const struct prof_flat_row *flat_row(const struct prof_snapshot *s,
					    const struct prof_flat_row *rows, size_t n,
					    const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rows[i].site < s->nsites && !strcmp(s->sites[rows[i].site].name, name))
			return &rows[i];
	return NULL;
}

/* --- recursion ----------------------------------------------------------- */

#define REC_DEPTH 5
#define REC_CALLS 10

static void rec(int n)
{
	PROF_USDT(struct_rec);

	test_spin(20000);
	if (n > 1)
		rec(n - 1);
}

static void rec_case(void)
{
	int i;

	for (i = 0; i < REC_CALLS; i++)
		rec(REC_DEPTH);
}

static void test_recursion(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(rec_case, &t);
	struct prof_flat_row *rows;
	const struct prof_flat_row *r;
	__u64 self = 0;
	__u32 n = PROF_NODE_ROOT, outer;
	size_t nrows;
	int d;

	(void)state;
	/* each depth its own node, a chain */
	outer = test_child(s, t, PROF_NODE_ROOT, "struct_rec");
	for (d = 0; d < REC_DEPTH; d++) {
		n = test_child_calls(s, t, n, "struct_rec", REC_CALLS);
		assert_int_equal(t->nodes[n].depth, d + 1);
		self += prof_snap_self(&t->nodes[n]);
		if (d)
			assert_true(prof_snap_is_recursive(t, n));
	}
	assert_int_equal(t->nodes[n].first_child, PROF_SNAP_NONE);
	assert_int_equal(test_count_named(s, t, "struct_rec"), REC_DEPTH);
	assert_false(prof_snap_is_recursive(t, outer));

	/* flat: every call counted, the time only once */
	assert_int_equal(prof_snap_flat(s, t->tid, PROF_SORT_SELF, &rows, &nrows), 0);
	r = flat_row(s, rows, nrows, "struct_rec");
	assert_non_null(r);
	assert_int_equal(r->calls, REC_DEPTH * REC_CALLS);
	assert_int_equal(r->ticks, t->nodes[outer].ticks);
	assert_int_equal(r->self, self);
	/* and self adds up to total: the chain has no other zones */
	assert_int_equal(r->self, r->ticks);
	free(rows);
	prof_snapshot__destroy(s);
}

/* --- public and private zones ------------------------------------------- */

#define PUB_ROUNDS 7

static void structure_a_public(void)
{
	PROF_SCOPE(struct_public);
}

static void structure_a_private(void)
{
	PROF_USDT(struct_private);
}

static void public_case(void)
{
	int i;

	for (i = 0; i < PUB_ROUNDS; i++) {
		PROF_USDT(struct_pub_parent);

		structure_a_public();
		structure_b_public();
		structure_b_public();
		structure_a_private();
		structure_b_private();
		structure_b_private();
	}
}

static void test_public_private(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(public_case, &t);
	__u32 p, c, i, npub = 0, npriv = 0, priv[2];
	__u64 a_calls = 0, b_calls = 0;

	(void)state;
	p = test_child(s, t, PROF_NODE_ROOT, "struct_pub_parent");
	assert_int_not_equal(p, PROF_SNAP_NONE);
	/* the public zone: one node for both files' sites */
	for (c = t->nodes[p].first_child; c != PROF_SNAP_NONE; c = t->nodes[c].next_sibling) {
		const char *name = prof_snap_node_name(s, &t->nodes[c]);

		if (!strcmp(name, "struct_public")) {
			npub++;
			assert_int_equal(t->nodes[c].calls, 3 * PUB_ROUNDS);
			assert_true(s->sites[t->nodes[c].site].flags & PROF_SITE_PUBLIC);
		} else if (!strcmp(name, "struct_private")) {
			assert_true(npriv < 2);
			priv[npriv++] = c;
		}
	}
	assert_int_equal(npub, 1);
	/* the private ones: two sites, two nodes, each with its own calls */
	assert_int_equal(npriv, 2);
	assert_int_not_equal(t->nodes[priv[0]].site, t->nodes[priv[1]].site);
	for (i = 0; i < 2; i++) {
		const struct prof_snap_site *site = &s->sites[t->nodes[priv[i]].site];

		assert_false(site->flags & PROF_SITE_PUBLIC);
		if (!strcmp(site->func, "structure_a_private"))
			a_calls = t->nodes[priv[i]].calls;
		else if (!strcmp(site->func, "structure_b_private"))
			b_calls = t->nodes[priv[i]].calls;
		else
			fail_msg("private site in %s", site->func);
	}
	assert_int_equal(a_calls, PUB_ROUNDS);
	assert_int_equal(b_calls, 2 * PUB_ROUNDS);
	/* one site entry for the public zone, from the file that defines it */
	for (i = 0, npub = 0; i < s->nsites; i++)
		if (!strcmp(s->sites[i].name, "struct_public")) {
			npub++;
			assert_non_null(strstr(s->sites[i].file, "test_structure.c"));
		}
	assert_int_equal(npub, 1);
	prof_snapshot__destroy(s);
}

/* --- PROF_FUNC ----------------------------------------------------------- */

static void structure_func_named(void)
{
	PROF_FUNC();
}

static void func_case(void)
{
	structure_func_named();
	structure_func_named();
}

static void test_func_names(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(func_case, &t);
	__u32 n;

	(void)state;
	n = test_child_calls(s, t, PROF_NODE_ROOT, "structure_func_named", 2);
	assert_true(s->sites[t->nodes[n].site].flags & PROF_SITE_FUNC);
	assert_string_equal(s->sites[t->nodes[n].site].func, "structure_func_named");
	prof_snapshot__destroy(s);
}

/* --- PROF_BEGIN / PROF_END ---------------------------------------------- */

static void begin_here(void)
{
	PROF_BEGIN(struct_be);
}

static void balanced_case(void)
{
	int i;

	for (i = 0; i < 5; i++) {
		PROF_USDT(struct_be_parent);

		/* opened in one function, closed in another */
		begin_here();
		{
			PROF_USDT(struct_be_child);
		}
		PROF_END();
	}
}

static void test_begin_end_balanced(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(balanced_case, &t);
	__u32 p, b;

	(void)state;
	p = test_child_calls(s, t, PROF_NODE_ROOT, "struct_be_parent", 5);
	b = test_child_calls(s, t, p, "struct_be", 5);
	test_child_calls(s, t, b, "struct_be_child", 5);
	assert_true(s->sites[t->nodes[b].site].flags & PROF_SITE_BEGIN);
	assert_int_equal(t->unbalanced, 0);
	prof_snapshot__destroy(s);
}

static void unbalanced_case(void)
{
	/* an END as the thread's very first call */
	PROF_END();
	{
		PROF_USDT(struct_ub_parent);

		/* END with no BEGIN: counted, ignored */
		PROF_END();
		{
			PROF_USDT(struct_ub_child);
		}
	}
	/* a BEGIN left open when its scope closes */
	{
		PROF_USDT(struct_ub_scope);

		PROF_BEGIN(struct_ub_leaked);
		{
			PROF_USDT(struct_ub_in_leaked);
		}
	}
	{
		PROF_USDT(struct_ub_after);
	}
	/* the leaked BEGIN was forgotten: this END has nothing to close */
	PROF_END();
	/* an END whose BEGIN is not the current zone */
	PROF_BEGIN(struct_ub_outer);
	{
		PROF_USDT(struct_ub_mid);

		PROF_END();
	}
	PROF_END();
	{
		PROF_USDT(struct_ub_last);
	}
}

static void test_begin_end_unbalanced(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(unbalanced_case, &t);
	/* each zone, below the root (-1) or the row given, and its calls */
	static const struct {
		int parent;
		const char *name;
		__u64 calls;
	} want[] = {
		{ -1, "struct_ub_parent", 1 },
		{ 0, "struct_ub_child", 1 },
		/* the scope is counted; the BEGIN it swallowed is not */
		{ -1, "struct_ub_scope", 1 },
		{ 2, "struct_ub_leaked", 0 },
		{ 3, "struct_ub_in_leaked", 1 },
		/* later zones land at the right parent: the root */
		{ -1, "struct_ub_after", 1 },
		{ -1, "struct_ub_outer", 1 },
		{ 6, "struct_ub_mid", 1 },
		{ -1, "struct_ub_last", 1 },
	};
	__u32 node[sizeof(want) / sizeof(want[0])];
	size_t i;

	(void)state;
	/* the first END, the END without BEGIN, the scope closed over an open
	 * BEGIN, the END after it, the END inside struct_ub_mid */
	assert_int_equal(t->unbalanced, 5);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		node[i] = test_child_calls(
			s, t, want[i].parent < 0 ? PROF_NODE_ROOT : node[want[i].parent],
			want[i].name, want[i].calls);
	/* nothing anywhere else */
	assert_int_equal(test_count_named(s, t, "struct_ub_after"), 1);
	assert_int_equal(test_count_named(s, t, "struct_ub_last"), 1);
	assert_int_equal(t->nodes[1].calls, 0);
	prof_snapshot__destroy(s);
}

/* --- allocations, frames, names ----------------------------------------- */

static void alloc_case(void)
{
	/* before any zone: the thread's root */
	PROF_ALLOC(5);
	{
		PROF_USDT(struct_alloc);

		PROF_ALLOC(100);
		PROF_ALLOC(100);
		PROF_ALLOC(100);
		PROF_FREE(40);
		{
			PROF_USDT(struct_alloc_inner);

			PROF_ALLOC(1);
		}
		PROF_FREE(60);
	}
	PROF_FREE(2);
}

static void test_alloc(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(alloc_case, &t);
	const struct prof_snap_node *n;
	__u32 a, in;

	(void)state;
	a = test_child_calls(s, t, PROF_NODE_ROOT, "struct_alloc", 1);
	in = test_child_calls(s, t, a, "struct_alloc_inner", 1);
	n = &t->nodes[a];
	assert_int_equal(n->allocs, 3);
	assert_int_equal(n->alloc_bytes, 300);
	assert_int_equal(n->frees, 2);
	assert_int_equal(n->free_bytes, 100);
	n = &t->nodes[in];
	assert_int_equal(n->allocs, 1);
	assert_int_equal(n->alloc_bytes, 1);
	assert_int_equal(n->frees, 0);
	n = &t->nodes[PROF_NODE_ROOT];
	assert_int_equal(n->allocs, 1);
	assert_int_equal(n->alloc_bytes, 5);
	assert_int_equal(n->frees, 1);
	assert_int_equal(n->free_bytes, 2);
	prof_snapshot__destroy(s);
}

/* --- the activity word: a reader skips a slab whose word did not move --- */

static __u64 act[4];
static bool act_in_slab;

/* what a reader takes as the slab's activity (slab.h, 4.0): its word plus
 * the ring head the exits bump */
static __u64 act_now(void)
{
	return __atomic_load_n(__prof_tls.activity, __ATOMIC_ACQUIRE) +
	       __atomic_load_n(__prof_tls.ring_head, __ATOMIC_ACQUIRE);
}

static void activity_case(void)
{
	const char *hdr;

	PROF_ALLOC(1); /* the thread's slab exists from here */
	hdr = (const char *)__prof_tls.nodes - PROF_SLAB_HDR_SIZE;
	act_in_slab =
		(const char *)__prof_tls.activity == hdr + offsetof(struct prof_slab_hdr, activity);
	act[0] = act_now();
	{
		PROF_USDT(struct_activity);

		/* inside a zone, before it exits: nothing changed yet */
		act[1] = act_now();
	}
	act[2] = act_now();
	PROF_FREE(1);
	act[3] = act_now();
}

static void test_activity(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(activity_case, &t);

	(void)state;
	assert_true(act_in_slab);
	assert_int_equal(act[0], 1);
	assert_int_equal(act[1], act[0]);
	/* the exit: its ring head (and the word too on its rare path, as a
	 * first count in its bucket is) */
	assert_true(act[2] > act[0]);
	assert_int_equal(act[3], act[2] + 1);
	prof_snapshot__destroy(s);
}

#define FRAMES 10

static __u64 frame_ns;

static void frame_case(void)
{
	__u64 t0 = 0;
	int i;

	PROF_THREAD_NAME("struct-frames");
	/* FRAMES + 1 boundaries: FRAMES frames */
	for (i = 0; i <= FRAMES; i++) {
		PROF_FRAME();
		if (!i)
			t0 = test_now_ns();
		if (i < FRAMES)
			test_spin(1000000);
	}
	frame_ns = test_now_ns() - t0;
}

static void test_frames_and_name(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(frame_case, &t);
	__u64 hist = 0, ns;
	unsigned i;

	(void)state;
	assert_string_equal(t->name, "struct-frames");
	assert_int_equal(t->frames, FRAMES);
	for (i = 0; i < PROF_HIST_BUCKETS; i++)
		hist += t->frame_hist[i];
	assert_int_equal(hist, FRAMES);
	ns = prof_snap_ns(s, t->frame_ticks);
	assert_true(ns >= FRAMES * 1000000ull * 98 / 100);
	assert_true(ns <= frame_ns * 102 / 100);
	assert_true(prof_snap_ns(s, t->frame_max) >= 1000000ull * 98 / 100);
	prof_snapshot__destroy(s);
}

static void long_name_case(void)
{
	PROF_THREAD_NAME("a-thread-name-much-longer-than-the-slab-field");
}

static void test_long_thread_name(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(long_name_case, &t);

	(void)state;
	assert_int_equal(strlen(t->name), PROF_THREAD_NAME_MAX - 1);
	assert_memory_equal(t->name, "a-thread-name-much-longer-than-the-slab-field",
			    PROF_THREAD_NAME_MAX - 1);
	prof_snapshot__destroy(s);
}

/* --- anomalies and the kernel word ----------------------------------------- */

#define ANOM_CALLS 3

/*
 * One call of each kind whose delta exceeds the thread's limit: the limit
 * is lowered to one tick inside the zone, so only that zone's exit sees
 * it (0 is not a limit: it asks the thread to switch kernel words).
 * Before and after it, ordinary calls of the same zone.
 */
static void anom_scoped_once(bool anomalous)
{
	PROF_USDT(struct_anom_scoped);
	test_spin(1000);
	if (anomalous)
		__prof_tls.limit = __prof_tls.day = 1;
}

static void anom_end_once(bool anomalous)
{
	PROF_BEGIN(struct_anom_end);
	test_spin(1000);
	if (anomalous)
		__prof_tls.limit = __prof_tls.day = 1;
	PROF_END();
}

static void anomaly_case(void)
{
	__u64 limit, day;
	int i;

	for (i = 0; i < ANOM_CALLS; i++)
		anom_scoped_once(false);
	/* the thread's limits are set at its first zone */
	limit = __prof_tls.limit;
	day = __prof_tls.day;
	anom_scoped_once(true);
	__prof_tls.limit = limit;
	__prof_tls.day = day;
	for (i = 0; i < ANOM_CALLS; i++)
		anom_scoped_once(false);
	for (i = 0; i < ANOM_CALLS; i++)
		anom_end_once(false);
	anom_end_once(true);
	__prof_tls.limit = limit;
	__prof_tls.day = day;
}

/* the thread's node of zone name */
static const struct prof_snap_node *case_node(const struct prof_snapshot *s,
					      const struct prof_snap_thread *t, const char *name)
{
	const struct prof_snap_node *n = test_node(s, t, name);

	assert_non_null(n);
	return n;
}

/*
 * A delta above the limit (negative ones are huge too, unsigned) is
 * counted as an anomaly and added nowhere: calls, ticks, max and the
 * histogram stay what the ordinary calls made them, for a scoped zone and
 * for PROF_END alike.
 */
static void test_anomalies(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s = test_run_case(anomaly_case, &t);
	const char *const names[] = { "struct_anom_scoped", "struct_anom_end" };
	const __u64 calls[] = { 2 * ANOM_CALLS, ANOM_CALLS };
	unsigned i;

	(void)state;
	for (i = 0; i < 2; i++) {
		const struct prof_snap_node *n = case_node(s, t, names[i]);

		assert_int_equal(n->anomalies, 1);
		assert_int_equal(n->calls, calls[i]);
		/* ordinary calls of a few microseconds: far from the anomalous
		 * one, which lasted past the limit at least (it was not added) */
		assert_true(n->ticks >= n->calls);
		assert_true(prof_snap_ns(s, n->ticks) < n->calls * 1000000000ull);
		assert_true(n->max <= n->ticks);
		assert_int_equal(test_hist_sum(s, n), n->calls);
	}
	assert_int_equal(t->unbalanced, 0);
	/* the text tree says so on each row, or a dropped call goes unseen */
	{
		struct prof_report_opts o = { .tid = t->tid };
		char *text = NULL, line[256];
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		assert_non_null(f);
		assert_int_equal(prof_report_tree(f, s, &o), 0);
		fclose(f);
		for (i = 0; i < 2; i++) {
			snprintf(line, sizeof(line), "%s (1 anomalies)\n", names[i]);
			assert_non_null(strstr(text, line));
		}
		free(text);
	}
	prof_snapshot__destroy(s);
}

/*
 * A kernel record of our own making, of the thread's generation (0: never
 * registered), back on the CPU since its last switch (mark_ns odd); the
 * zone struct_fake runs against it, and inside it fake_switch says what
 * the record says of the call
 */
static struct prof_sched_rec fake_rec;
static void (*fake_switch)(void);

static void fake_case(void)
{
	const volatile struct prof_sched_rec *krec;

	/* the thread's first zone sets its kernel word up */
	{
		PROF_USDT(struct_fake_first);
	}
	krec = __prof_tls.krec;
	__prof_tls.krec = &fake_rec;
	{
		PROF_USDT(struct_fake);
		test_spin(100000);
		fake_switch();
	}
	__prof_tls.krec = krec;
}

static const struct prof_snap_node *fake_run(void (*fn)(void), struct prof_snapshot **s)
{
	const struct prof_snap_thread *t;

	fake_rec = (struct prof_sched_rec){ .seq = 1, .mark_ns = 1 };
	fake_switch = fn;
	*s = test_run_case(fake_case, &t);
	return case_node(*s, t, "struct_fake");
}

/* a switch, and ten seconds off-CPU: more than the call lasted */
static void switch_long(void)
{
	__atomic_store_n(&fake_rec.offcpu_ns, 10000000000ull, __ATOMIC_RELAXED);
	__atomic_store_n(&fake_rec.preempt_seq, 2, __ATOMIC_RELAXED);
	__atomic_store_n(&fake_rec.seq, 2, __ATOMIC_RELAXED);
}

/* a sleep: switched out, its return reached no sched_switch program
 * (profsched.h), so the record still says "out" while the thread runs */
static void switch_lost(void)
{
	__atomic_store_n(&fake_rec.mark_ns, 1000, __ATOMIC_RELAXED);
	__atomic_store_n(&fake_rec.block_seq, 2, __ATOMIC_RELAXED);
	__atomic_store_n(&fake_rec.seq, 2, __ATOMIC_RELAXED);
}

/* its time away is unknown: the call has no kernel facts at all (not
 * blocked with no time off the CPU) */
static void test_offcpu_lost_return(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_node *n = fake_run(switch_lost, &s);

	(void)state;
	assert_int_equal(n->calls, 1);
	assert_int_equal(n->blocked, 0);
	assert_int_equal(n->offcpu_ns, 0);
	prof_snapshot__destroy(s);
}

/* off-CPU time is clamped to the call's wall time */
static void test_offcpu_clamped(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_node *n = fake_run(switch_long, &s);

	(void)state;
	assert_int_equal(n->calls, 1);
	assert_true(n->offcpu_ns > 0);
	/* the runtime converts with its own ns per tick: a nanosecond apart */
	assert_true(n->offcpu_ns <= prof_snap_ns(s, n->ticks) + 1);
	prof_snapshot__destroy(s);
}

/* the kernel word is the test's to set: no profd may point it */
static void env(void)
{
	setenv("PROF_NO_DAEMON", "1", 1);
}

TEST_MAIN_ENV(NULL, NULL, env, cmocka_unit_test(test_recursion),
	      cmocka_unit_test(test_public_private), cmocka_unit_test(test_func_names), cmocka_unit_test(test_begin_end_balanced),
	      cmocka_unit_test(test_begin_end_unbalanced), cmocka_unit_test(test_alloc),
	      cmocka_unit_test(test_activity), cmocka_unit_test(test_frames_and_name),
	      cmocka_unit_test(test_long_thread_name), cmocka_unit_test(test_anomalies),
	      cmocka_unit_test(test_offcpu_clamped), cmocka_unit_test(test_offcpu_lost_return))
