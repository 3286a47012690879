// SPDX-License-Identifier: MIT
/*
 * test_sitecache.c - a zone site remembers a (parent -> node) for each of
 * a few parents (a way each, by the parent's low bits): a function called
 * from two places, or recursing once, finds its node without the slow
 * path, and counts in the right node; more parents than ways take turns
 * and still count right.  The test links
 * with --wrap=__prof_enter_slow, so every slow enter of its own zones
 * goes through a counter and on to the runtime's real one.
 */
#include "fastpath.h"
#include "prof.h"

#define ITERS 10000u

static unsigned long slow_enters;

void __real___prof_enter_slow(struct __prof_zone *z, const struct prof_site *site);
void __wrap___prof_enter_slow(struct __prof_zone *z, const struct prof_site *site);

void __wrap___prof_enter_slow(struct __prof_zone *z, const struct prof_site *site)
{
	slow_enters++;
	__real___prof_enter_slow(z, site);
}

static volatile unsigned long sink;

static __attribute__((noinline)) void leaf(unsigned long i)
{
	PROF_USDT(sc_leaf);
	sink += i;
}

static __attribute__((noinline)) void from_a(unsigned long i)
{
	PROF_USDT(sc_a);
	leaf(i);
}

static __attribute__((noinline)) void from_b(unsigned long i)
{
	PROF_USDT(sc_b);
	leaf(i);
}

/* more parents than a site has ways (__PROF_WAYS): two of them share one */
#define FROM(x)								\
	static __attribute__((noinline)) void from_##x(unsigned long i)	\
	{								\
		PROF_USDT(sc_##x);					\
		leaf(i);						\
	}
FROM(c)
FROM(d)
FROM(e)
FROM(f)
FROM(g)
FROM(h)
FROM(i)
FROM(j)
static void (*const from[])(unsigned long) = {
	from_a, from_b, from_c, from_d, from_e, from_f, from_g, from_h, from_i, from_j,
};
#define NFROM (sizeof(from) / sizeof(from[0]))
_Static_assert(NFROM > __PROF_WAYS, "more parents than ways");

/* depth 1 calls itself once: its site's node under the root and under itself */
static __attribute__((noinline)) void recurse(unsigned int depth)
{
	PROF_USDT(sc_rec);
	sink += depth;
	if (depth)
		recurse(depth - 1);
}

/* the calls of a node, which its histogram holds every one of */
static __u64 calls_under(const struct prof_snapshot *s, const struct prof_snap_thread *t,
			 __u32 parent, const char *name)
{
	__u32 n = test_child(s, t, parent, name);

	assert_int_not_equal(n, PROF_SNAP_NONE);
	assert_int_equal(test_hist_sum(s, &t->nodes[n]), t->nodes[n].calls);
	return t->nodes[n].calls;
}

/* a snapshot of this thread, and its zone NAME under the root */
static __u32 snap_top(struct prof_snapshot **s, const struct prof_snap_thread **t,
		      const char *name)
{
	__u32 n;

	*s = test_snapshot(0);
	assert_non_null(*s);
	*t = test_thread(*s, test_gettid());
	assert_non_null(*t);
	n = test_child(*s, *t, PROF_NODE_ROOT, name);
	assert_int_not_equal(n, PROF_SNAP_NONE);
	return n;
}

static void test_two_parents(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s;
	unsigned long i, before;
	__u32 a, b, r;

	(void)state;
	/* the first round fills every cache: each site's first enter under
	 * each parent is slow (sc_a, sc_b, sc_leaf twice, sc_rec twice) */
	from_a(0);
	from_b(0);
	recurse(1);
	before = slow_enters;
	for (i = 1; i < ITERS; i++) {
		from_a(i);
		from_b(i);
		recurse(1);
	}
	print_message("slow enters: %lu in the first round, %lu after\n", before,
		      slow_enters - before);
	assert_true(before >= 6);
	assert_int_equal(slow_enters - before, 0);

	t = test_own_thread(&s, test_gettid());
	a = test_child(s, t, PROF_NODE_ROOT, "sc_a");
	b = test_child(s, t, PROF_NODE_ROOT, "sc_b");
	r = test_child(s, t, PROF_NODE_ROOT, "sc_rec");
	assert_int_not_equal(a, PROF_SNAP_NONE);
	assert_int_not_equal(b, PROF_SNAP_NONE);
	assert_int_not_equal(r, PROF_SNAP_NONE);
	assert_int_equal(t->nodes[a].calls, ITERS);
	assert_int_equal(t->nodes[b].calls, ITERS);
	assert_int_equal(calls_under(s, t, a, "sc_leaf"), ITERS);
	assert_int_equal(calls_under(s, t, b, "sc_leaf"), ITERS);
	assert_int_equal(t->nodes[r].calls, ITERS);
	assert_int_equal(calls_under(s, t, r, "sc_rec"), ITERS);
	prof_snapshot__destroy(s);
}

/* more parents than ways take turns: the ways cannot hold them all, and
 * every call still counts in its own node */
static void test_three_parents(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s;
	unsigned long i, before, firsts = 0;
	__u64 base = 0;
	__u32 c, k;

	(void)state;
	/* test_two_parents's calls, if it ran first (alone, no segment yet) */
	s = test_snapshot(0);
	t = s ? test_thread(s, test_gettid()) : NULL;
	c = t ? test_child(s, t, PROF_NODE_ROOT, "sc_a") : PROF_SNAP_NONE;
	if (c != PROF_SNAP_NONE)
		base = calls_under(s, t, c, "sc_leaf");
	if (s)
		prof_snapshot__destroy(s);
	for (i = 0; i < ITERS; i++)
		for (k = 0; k < NFROM; k++)
			from[k](i);
	c = snap_top(&s, &t, "sc_j");
	assert_int_equal(calls_under(s, t, c, "sc_leaf"), ITERS);
	assert_int_equal(calls_under(s, t, test_child(s, t, PROF_NODE_ROOT, "sc_a"), "sc_leaf"),
			 base + ITERS);
	prof_snapshot__destroy(s);
	/* some parent's way holds another's: the leaf under it is found in
	 * the thread's table once, and cached for its next call */
	for (k = 0; k < NFROM; k++) {
		before = slow_enters;
		from[k](0);
		firsts += slow_enters - before;
		before = slow_enters;
		from[k](0);
		assert_int_equal(slow_enters - before, 0);
	}
	print_message("slow enters of a parent's first call after the turns: %lu\n", firsts);
	assert_true(firsts >= 1);
}

/* some work: i steps of a loop the compiler keeps */
static void busy(unsigned long i)
{
	while (i--)
		sink += i;
}

static __attribute__((noinline)) void hb_child(unsigned long n)
{
	PROF_USDT(sc_hb_child);
	busy(n);
}

/* alone as long as its child: its buckets are its child's */
static __attribute__((noinline)) void hb_parent(unsigned long n, int call)
{
	PROF_USDT(sc_hb_parent);
	if (call)
		hb_child(n);
	else
		busy(n);
}

/*
 * A child whose deltas leave its site's bucket, under a parent that has
 * counted in the same buckets: each call counts in its own node's
 * histogram, never in the parent's (whose row is not empty there)
 */
static void test_miss_own_node(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s;
	unsigned long i;
	__u32 p;

	(void)state;
	for (i = 0; i < ITERS; i++) {
		/* deltas over a few octaves, each bucket seldom twice in a row */
		unsigned long n = (i * 37) % 400;

		hb_parent(n, 0);
		hb_parent(n, 1);
	}
	p = snap_top(&s, &t, "sc_hb_parent");
	assert_int_equal(t->nodes[p].calls, 2 * ITERS);
	assert_int_equal(test_hist_sum(s, &t->nodes[p]), 2 * ITERS);
	assert_int_equal(calls_under(s, t, p, "sc_hb_child"), ITERS);
	prof_snapshot__destroy(s);
}

/* a node per depth: more than a histogram block's nodes (PROF_HIST_BLOCK) */
#define DEEP (PROF_HIST_BLOCK + 44)
static __attribute__((noinline)) void deep(unsigned int depth)
{
	PROF_USDT(sc_deep);
	sink += depth;
	if (depth)
		deep(depth - 1);
}

/* nodes past the first block count in their own rows: every node of a
 * chain deeper than a block holds its calls in its histogram */
static void test_deep_rows(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s;
	__u32 n, depth = 0;

	(void)state;
	for (unsigned int i = 0; i < 3; i++)
		deep(DEEP);
	n = snap_top(&s, &t, "sc_deep");
	while (n != PROF_SNAP_NONE) {
		assert_int_equal(t->nodes[n].calls, 3);
		assert_int_equal(test_hist_sum(s, &t->nodes[n]), 3);
		depth++;
		n = test_child(s, t, n, "sc_deep");
	}
	assert_int_equal(depth, DEEP + 1);
	prof_snapshot__destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_parents),
		cmocka_unit_test(test_three_parents),
		cmocka_unit_test(test_miss_own_node),
		cmocka_unit_test(test_deep_rows),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
