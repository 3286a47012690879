/* SPDX-License-Identifier: MIT */
/*
 * snap_fixture.h - snapshots in the tests: one built by hand, and two reads
 * of one thread compared node by node (a lazy read against a full one, a
 * newer minor's image against this one's): the tree, every figure of
 * usdt/figures.h's node tables (so a new figure is compared too),
 * recursion, quantiles and any copied histogram.
 */
#ifndef PROF_SNAP_FIXTURE_H
#define PROF_SNAP_FIXTURE_H

#include "testutil.h"

/* thread t (tid) of n nodes, s's only one, alive: its nodes zeroed but
 * the root's and the overflow node's sites (PROF_SITE_NONE), to fill by
 * hand */
static inline void snap_one_thread(struct prof_snapshot *s, struct prof_snap_thread *t, __u32 tid,
				   __u32 n)
{
	s->nthreads = 1;
	s->threads = t;
	t->tid = tid;
	t->state = PROF_SLAB_ALIVE;
	t->nnodes = n;
	t->nodes = calloc(n, sizeof(*t->nodes));
	assert_non_null(t->nodes);
	t->nodes[0].site = t->nodes[1].site = PROF_SITE_NONE;
}

#define SNAP_SAME(what, x, y)                                                                  \
	do {                                                                                   \
		if ((x) != (y))                                                                \
			fail_msg("thread %u node %u: %s %llu, %llu", a->tid, j, what,           \
				 (unsigned long long)(x), (unsigned long long)(y));            \
	} while (0)

/*
 * Thread a of snapshot z is thread b of snapshot f, or the test fails
 * naming what differs.  live: read from a live segment, where each read
 * measures a live thread's root (its wall time so far); an exited
 * thread's root is compared all the same.
 */
static inline void snap_same_thread(const struct prof_snapshot *z, const struct prof_snap_thread *a,
				    const struct prof_snapshot *f, const struct prof_snap_thread *b,
				    bool live)
{
	static const double qs[] = { 0.5, 0.9, 0.99 };
	__u32 j = 0, k;

	SNAP_SAME("tid", a->tid, b->tid);
	if (strcmp(a->name, b->name))
		fail_msg("thread %u: named %s, %s", a->tid, a->name, b->name);
	SNAP_SAME("nodes", a->nnodes, b->nnodes);
	for (j = 0; j < a->nnodes; j++) {
		const struct prof_snap_node *x = &a->nodes[j];
		struct prof_snap_node y = b->nodes[j];

		if (live && !j && a->state != PROF_SLAB_EXITED)
			y.ticks = x->ticks;
		SNAP_SAME("site", x->site, y.site);
		SNAP_SAME("parent", x->parent, y.parent);
		SNAP_SAME("first_child", x->first_child, y.first_child);
		SNAP_SAME("next_sibling", x->next_sibling, y.next_sibling);
		SNAP_SAME("child_ticks", x->child_ticks, y.child_ticks);
#define SAME(f, unit, across, window, flat, slab, key) SNAP_SAME(#f, x->f, y.f);
		PROF_NODE_COUNTS(SAME)
		PROF_NODE_TIMES(SAME)
#undef SAME
		SNAP_SAME("recursive", prof_snap_is_recursive(a, j), prof_snap_is_recursive(b, j));
		for (k = 0; k < 3; k++)
			SNAP_SAME("a quantile", prof_snap_quantile(z, x, qs[k]),
				  prof_snap_quantile(f, &b->nodes[j], qs[k]));
		if (prof_snap_hist(z, x)) {
			SNAP_SAME("hist_lo", x->hist_lo, y.hist_lo);
			SNAP_SAME("hist_n", x->hist_n, y.hist_n);
			SNAP_SAME("the histogram",
				  memcmp(prof_snap_hist(z, x), prof_snap_hist(f, &b->nodes[j]),
					 x->hist_n * sizeof(__u32)),
				  0);
		}
	}
}
#undef SNAP_SAME

#endif /* PROF_SNAP_FIXTURE_H */
