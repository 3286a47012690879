// SPDX-License-Identifier: MIT
/*
 * reader_flat.c - the flat view: each site's calls and times summed over the
 * tree (recursion counted once), straight from a segment, with a cache of
 * each slab's tree for top's every-interval passes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_int.h"

static void flat_tree_free(struct flat_tree *t)
{
	free(t->rp);
	free(t->parent);
	free(t->path);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

static int flat_tree_grow(struct flat_tree *t, __u32 nn, __u32 nrows)
{
	__u32 cap = t->cap ? t->cap : 64;
	void *rp, *parent, *path, *rows;

	if (nn <= t->cap)
		return 0;
	while (cap < nn)
		cap = cap > 0x7fffffffu ? nn : 2 * cap;
	rp = realloc(t->rp, (size_t)cap * sizeof(*t->rp));
	if (rp)
		t->rp = rp;
	parent = realloc(t->parent, (size_t)cap * sizeof(*t->parent));
	if (parent)
		t->parent = parent;
	path = realloc(t->path, (size_t)cap * sizeof(*t->path));
	if (path)
		t->path = path;
	/* a row per node at most, and never more than there are rows */
	rows = realloc(t->rows, (size_t)(cap < nrows ? cap : nrows) * sizeof(*t->rows));
	if (rows)
		t->rows = rows;
	if (!rp || !parent || !path || !rows)
		return -ENOMEM;
	t->cap = cap;
	return 0;
}

/*
 * The recursion marks of nodes [1, nn) in one depth-first pass, as
 * prof_snap_mark_recursion makes them: a count per row of how often it is
 * on the path from the root.  O(nodes), where the walks up cost O(nodes x
 * depth) for a tree whose filter keeps sending them up long chains (a
 * hostile one can: sites 64 apart share a filter bit).
 */
static int flat_mark_dfs(struct flat_tree *t, __u32 nn, __u32 nsites)
{
	__u32 *first = malloc((size_t)nn * sizeof(*first));
	__u32 *next = malloc((size_t)nn * sizeof(*next));
	__u32 *on_path = calloc((size_t)nsites + 1, sizeof(*on_path));
	__u32 i;
	int err = -ENOMEM;

#define ROW_OF(i) ((__u32)t->rp[i] & ~FLAT_REC)
	if (!first || !next || !on_path)
		goto out;
	err = 0;
	if (nn < 2)
		goto out;
	memset(first, 0xff, (size_t)nn * sizeof(*first));
	/* children in index order: built from the last */
	for (i = nn - 1; i >= 1; i--) {
		next[i] = first[t->parent[i]];
		first[t->parent[i]] = i;
	}
	i = first[0];
	while (i != PROF_SNAP_NONE) {
		bool rec = i > 1 && on_path[ROW_OF(i)];

		t->rp[i] = (t->rp[i] & ~(__u64)FLAT_REC) | (rec ? FLAT_REC : 0);
		on_path[ROW_OF(i)]++;
		if (first[i] != PROF_SNAP_NONE) {
			i = first[i];
			continue;
		}
		/* leave i, then every ancestor whose children are done */
		for (;;) {
			on_path[ROW_OF(i)]--;
			if (next[i] != PROF_SNAP_NONE) {
				i = next[i];
				break;
			}
			i = t->parent[i];
			if (i == 0) {
				i = PROF_SNAP_NONE;
				break;
			}
		}
	}
#undef ROW_OF
out:
	free(first);
	free(next);
	free(on_path);
	return err;
}

/*
 * Learn nodes [t->nknown, nn), checked as the copying read checks them
 * (parent < index, a site for every zone).  seen: nsites + 1 flags, false
 * on entry and on return.  The walks up that confirm the filter get a
 * budget in proportion to the new nodes; past it, one depth-first pass
 * marks them all.
 */
static int flat_learn(struct flat_tree *t, const struct slab_view *v, __u32 nn, __u32 nsites,
		      bool *seen)
{
	__u64 budget = 64ull * (nn - (nn < t->nknown ? 0 : t->nknown)) + 65536;
	__u32 i, k;
	int err = 0;

	if (nn < t->nknown)
		t->nknown = t->nrows = 0; /* a table never shrinks: start over */
	if (nn == t->nknown)
		return 0;
	if (flat_tree_grow(t, nn, nsites + 1))
		return -ENOMEM;
	for (k = 0; k < t->nrows; k++)
		seen[t->rows[k]] = true;
	for (i = t->nknown; i < nn; i++) {
		const struct prof_node *src = view_node(v, i);
		__u32 site = LD(&src->site), parent = LD(&src->parent), p, row, prow;
		bool rec = false;

		if (i == 0 ? parent != 0 : parent >= i) {
			err = -EINVAL;
			break;
		}
		if (i < 2 ? site != PROF_SITE_NONE : site >= nsites) {
			err = -EINVAL;
			break;
		}
		row = site < nsites ? site : nsites;
		prow = parent ? (__u32)t->rp[parent] & ~FLAT_REC : FLAT_NO_ROW;
		t->parent[i] = parent;
		t->path[i] = parent ? t->path[parent] | 1ull << (prow & 63) : 0;
		/* the filter rules most nodes out at once; a walk confirms, while
		 * the budget lasts (then the pass below decides) */
		if (i > 1 && (t->path[i] & 1ull << (row & 63)))
			for (p = parent; p && !rec && budget; p = t->parent[p], budget--)
				rec = ((__u32)t->rp[p] & ~FLAT_REC) == row;
		t->rp[i] = row | (rec ? FLAT_REC : 0) | (__u64)prow << 32;
		if (i && !seen[row]) {
			seen[row] = true;
			t->rows[t->nrows++] = row;
		}
	}
	for (k = 0; k < t->nrows; k++)
		seen[t->rows[k]] = false;
	if (!err && !budget)
		err = flat_mark_dfs(t, nn, nsites);
	if (err)
		t->nknown = t->nrows = 0;
	else
		t->nknown = nn;
	return err;
}

/* nodes [1, nn) of a learnt tree into the rows: only the counters are
 * read; a recursive node's time is in its outermost ancestor's already */
static void flat_add(const struct flat_tree *t, const struct slab_view *v, __u32 nn,
		     struct prof_flat_row *rows, __u64 *plus, __u64 *minus)
{
	__u32 i;

	for (i = 1; i < nn; i++) {
		const struct prof_node *src = view_node(v, i);
		__u64 m = t->rp[i], ticks = LD(&src->ticks), max = LD(&src->max);
		__u32 row = (__u32)m & ~FLAT_REC, prow = (__u32)(m >> 32);
		struct prof_flat_row *r = &rows[row];

		r->calls += LD(&src->calls);
		if (max > r->max)
			r->max = max;
		plus[row] += ticks;
		if (prow != FLAT_NO_ROW)
			minus[prow] += ticks;
		if (!(m & FLAT_REC))
			r->ticks += ticks;
		if (v->ext) {
			const struct prof_node_ext *ext = view_ext(v, i);

			struct prof_snap_node k = { .calls = LD(&src->calls) };

			r->preempted += LD(&ext->preempted);
			r->blocked += LD(&ext->blocked);
			r->migrated += LD(&ext->migrated);
			node_kernel(v, ext, &k);
			r->kernel_calls += k.kernel_calls;
			if (!(m & FLAT_REC))
				r->offcpu_ns += LD(&ext->offcpu_ns);
		}
	}
}

/*
 * The open calls of a learnt tree into the rows, read every pass (a call
 * opens without touching the activity word): each adds its elapsed time
 * to its row and to its parent's children, as a closed call's ticks do.
 */
static void flat_open(const struct flat_tree *t, const struct slab_view *v, __u32 nn,
		      struct prof_flat_row *rows, __u64 *plus, __u64 *minus)
{
	__u32 i;

	for (i = 2; i < nn; i++) {
		__u64 start = LDA(&v->open[i]), m, e;
		__u32 row, prow;

		if (!start)
			continue;
		m = t->rp[i];
		row = (__u32)m & ~FLAT_REC;
		prow = (__u32)(m >> 32);
		e = open_ticks(v, start);
		rows[row].open++;
		plus[row] += e;
		if (prow != FLAT_NO_ROW)
			minus[prow] += e;
		if (!(m & FLAT_REC)) {
			rows[row].ticks += e;
			rows[row].open_ticks += e;
		}
	}
}

/* a thread's share of the flat rows into its cache entry: accumulated in
 * the zeroed scratch rows, moved out, the scratch left zeroed again */
static int flat_share(const struct slab_view *v, __u32 nn, __u32 nsites, struct flat_acc *fa,
		      struct flat_slab_cache *c)
{
	struct flat_tree *t = &c->tree;
	__u32 i;
	int err;

	err = flat_learn(t, v, nn, nsites, fa->seen);
	if (err)
		return err;
	if (t->nrows > c->nparts || !c->parts) {
		struct flat_part *p = realloc(c->parts, (t->nrows ? t->nrows : 1) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->parts = p;
	}
	if (fa->cache->no_sched) {
		struct slab_view nv = *v;

		nv.ext = NULL;
		flat_add(t, &nv, nn, fa->srows, fa->splus, fa->sminus);
	} else {
		flat_add(t, v, nn, fa->srows, fa->splus, fa->sminus);
	}
	/* every row written is some node's: node 1's is the overflow row */
	for (i = 0; i < t->nrows; i++) {
		__u32 row = t->rows[i];
		struct prof_flat_row *r = &fa->srows[row];

		c->parts[i] = (struct flat_part){ .row = row,
						  .calls = r->calls,
						  .ticks = r->ticks,
						  .max = r->max,
						  .preempted = r->preempted,
						  .migrated = r->migrated,
						  .offcpu_ns = r->offcpu_ns,
						  .blocked = r->blocked,
						  .kernel_calls = r->kernel_calls,
						  .plus = fa->splus[row],
						  .minus = fa->sminus[row] };
		memset(r, 0, sizeof(*r));
		fa->splus[row] = fa->sminus[row] = 0;
	}
	c->nparts = t->nrows;
	return 0;
}

/* one slab into the flat rows: from its cached share while its activity
 * word and node count are what they were, else read and cached anew */
PROF_HIDDEN int flat_slab(const struct slab_view *v, __u32 nn, __u32 nsites, __u32 index, __u64 activity,
		     __u32 tid, __u64 gen, struct flat_acc *fa)
{
	bool take = !fa->tid || fa->tid == tid, moved;
	struct flat_slab_cache *c;
	__u32 i;
	int err;

	if (!fa->cache) {
		/* each slab's tree afresh, in the one scratch tree */
		fa->scratch->nknown = fa->scratch->nrows = 0;
		err = flat_learn(fa->scratch, v, nn, nsites, fa->seen);
		if (!err && take) {
			flat_add(fa->scratch, v, nn, fa->rows, fa->plus, fa->minus);
			flat_open(fa->scratch, v, nn, fa->rows, fa->plus, fa->minus);
		}
		return err;
	}
	c = &fa->cache->slabs[index];
	if (!c->valid || c->activity != activity || c->nn != nn || c->tid != tid || c->gen != gen) {
		c->valid = false;
		/* another thread in the slab: learn its tree anew */
		if (c->tid != tid || c->gen != gen)
			c->tree.nknown = c->tree.nrows = 0;
		err = flat_share(v, nn, nsites, fa, c);
		if (err)
			return err;
		c->valid = true;
		c->activity = activity;
		c->nn = nn;
		c->tid = tid;
		c->gen = gen;
	}
	if (!take)
		return 0;
	/*
	 * The open calls into the zeroed scratch rows, then the slab's gen
	 * again: a slab that changed hands since its gen was loaded adds
	 * nothing (its thread is in the aggregate), never two threads'
	 * numbers in one share.
	 */
	flat_open(&c->tree, v, nn, fa->srows, fa->splus, fa->sminus);
	moved = fa->live && slab_moved((const char *)v->hdr, gen);
	for (i = 0; i < c->tree.nrows; i++) {
		__u32 row = c->tree.rows[i];
		struct prof_flat_row *o = &fa->srows[row], *r = &fa->rows[row];

		if (!moved) {
			r->open += o->open;
			r->ticks += o->ticks;
			r->open_ticks += o->open_ticks;
			fa->plus[row] += fa->splus[row];
			fa->minus[row] += fa->sminus[row];
		}
		memset(o, 0, sizeof(*o));
		fa->splus[row] = fa->sminus[row] = 0;
	}
	if (moved) {
		c->valid = false;
		return 0;
	}
	for (i = 0; i < c->nparts; i++) {
		const struct flat_part *p = &c->parts[i];
		struct prof_flat_row *r = &fa->rows[p->row];

		r->calls += p->calls;
		r->ticks += p->ticks;
		r->preempted += p->preempted;
		r->migrated += p->migrated;
		r->offcpu_ns += p->offcpu_ns;
		r->blocked += p->blocked;
		r->kernel_calls += p->kernel_calls;
		if (p->max > r->max)
			r->max = p->max;
		fa->plus[p->row] += p->plus;
		fa->minus[p->row] += p->minus;
	}
	return 0;
}

void prof_seg_flat_cache__no_sched(struct prof_seg_flat_cache *c)
{
	c->no_sched = true;
}

struct prof_seg_flat_cache *prof_seg_flat_cache__new(void)
{
	return calloc(1, sizeof(struct prof_seg_flat_cache));
}

/* every slab's share forgotten, the scratch kept */
static void flat_cache_drop(struct prof_seg_flat_cache *c)
{
	__u32 i;

	for (i = 0; i < c->nslabs; i++) {
		free(c->slabs[i].parts);
		flat_tree_free(&c->slabs[i].tree);
	}
	free(c->slabs);
	c->slabs = NULL;
	c->nslabs = 0;
}

static void flat_cache_scratch_free(struct prof_seg_flat_cache *c)
{
	free(c->srows);
	free(c->splus);
	free(c->sminus);
	free(c->seen);
	c->srows = NULL;
	c->splus = c->sminus = NULL;
	c->seen = NULL;
}

void prof_seg_flat_cache__destroy(struct prof_seg_flat_cache *c)
{
	if (!c)
		return;
	flat_cache_drop(c);
	flat_cache_scratch_free(c);
	free(c);
}

/* the per-row arrays of a flat pass, once nsites is known; with a cache,
 * its shares still valid for this mapping and these sites */
PROF_HIDDEN int flat_size(struct flat_acc *fa, const void *mem, size_t len, const struct seg_geom *g,
		     __u32 nsites, __u32 nslabs)
{
	struct prof_seg_flat_cache *c = fa->cache;
	size_t nrows = (size_t)nsites + 1;

	fa->nsites = nsites;
	fa->rows = calloc(nrows, sizeof(*fa->rows));
	fa->plus = calloc(nrows, sizeof(*fa->plus));
	fa->minus = calloc(nrows, sizeof(*fa->minus));
	if (!fa->rows || !fa->plus || !fa->minus)
		return -ENOMEM;
	if (!c) {
		fa->seen = calloc(nrows, sizeof(*fa->seen));
		fa->scratch = calloc(1, sizeof(*fa->scratch));
		return fa->seen && fa->scratch ? 0 : -ENOMEM;
	}
	/* a share names rows by site: another mapping or a new site, and none holds */
	if (c->mem != mem || c->len != len || c->nsites != nsites || c->max_nodes != g->max_nodes) {
		flat_cache_drop(c);
		flat_cache_scratch_free(c);
		c->mem = NULL; /* until all of it is there */
		c->srows = calloc(nrows, sizeof(*c->srows));
		c->splus = calloc(nrows, sizeof(*c->splus));
		c->sminus = calloc(nrows, sizeof(*c->sminus));
		c->seen = calloc(nrows, sizeof(*c->seen));
		if (!c->srows || !c->splus || !c->sminus || !c->seen)
			return -ENOMEM;
		c->mem = mem;
		c->len = len;
		c->nsites = nsites;
		c->max_nodes = g->max_nodes;
	}
	if (nslabs > c->nslabs) {
		struct flat_slab_cache *v = realloc(c->slabs, nslabs * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + c->nslabs, 0, (nslabs - c->nslabs) * sizeof(*v));
		c->slabs = v;
		c->nslabs = nslabs;
	}
	fa->srows = c->srows;
	fa->splus = c->splus;
	fa->sminus = c->sminus;
	fa->seen = c->seen;
	return 0;
}

int prof_seg_flat_cached(const void *mem, size_t len, __u32 tid, int sort,
			 struct prof_seg_flat_cache *cache, struct prof_snapshot **snap,
			 struct prof_flat_row **out, size_t *nout)
{
	struct flat_acc fa = { .tid = tid, .cache = cache };
	size_t n = 0;
	__u32 i;
	int err;

	*snap = NULL;
	*out = NULL;
	*nout = 0;
	err = read_seg(mem, len, PROF_READ_NO_HIST, &fa, snap);
	if (err)
		goto cleanup;
	if (!seg_is_image(mem))
		prof_snapshot__add_proc(*snap, tid);
	for (i = 0; i <= fa.nsites; i++) {
		fa.rows[i].site = i < fa.nsites ? i : PROF_SITE_NONE;
		/* a child read after it grew can exceed its parent: clamp */
		fa.rows[i].self = fa.plus[i] > fa.minus[i] ? fa.plus[i] - fa.minus[i] : 0;
		/* no tree here to take children's on-CPU time from, nor to
		 * nest it by: the row's closed calls less their time away */
		fa.rows[i].self_oncpu_ns = PROF_SNAP_UNKNOWN;
		fa.rows[i].oncpu_ns =
			prof_oncpu_ns(*snap, fa.rows[i].ticks - fa.rows[i].open_ticks,
				      fa.rows[i].kernel_calls, fa.rows[i].offcpu_ns);
		if (fa.rows[i].calls || fa.rows[i].ticks)
			fa.rows[n++] = fa.rows[i];
	}
	prof_flat_sort(*snap, fa.rows, n, sort);
	*out = fa.rows;
	*nout = n;
	fa.rows = NULL;
cleanup:
	free(fa.rows);
	free(fa.plus);
	free(fa.minus);
	if (!cache) {
		free(fa.seen);
		if (fa.scratch)
			flat_tree_free(fa.scratch);
		free(fa.scratch);
	}
	return err;
}

int prof_seg_flat(const void *mem, size_t len, __u32 tid, int sort, struct prof_snapshot **snap,
		  struct prof_flat_row **out, size_t *nout)
{
	/* a cache for the one call: its shares are what checks a slab that
	 * changes hands during the pass (flat_slab) */
	struct prof_seg_flat_cache *c = prof_seg_flat_cache__new();
	int err;

	if (!c)
		return -ENOMEM;
	err = prof_seg_flat_cached(mem, len, tid, sort, c, snap, out, nout);
	prof_seg_flat_cache__destroy(c);
	return err;
}

static __u64 dsub(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

void prof_flat_window(struct prof_flat_row *w, const struct prof_flat_row *now,
		      const struct prof_flat_row *then)
{
	/* the whole time of the calls that ended in the window, and of it
	 * the part before it (of the calls its start found open) */
	__u64 closed = dsub(now->ticks - now->open_ticks, then->ticks - then->open_ticks);
	__u64 before = then->open_ticks < closed ? then->open_ticks : closed;

	*w = (struct prof_flat_row){ .site = now->site, .open = now->open };
	/* each figure a row has as figures.h says a window takes it */
#define FLAT_SUB(f, unit, across, window, flat, slab, key)                                          \
	PROF_FIG_IF(Y, flat, if (PROF_FIG_IS(DIFF, window)) w->f = dsub(now->f, then->f);  \
			 if (PROF_FIG_IS(SHARE, window))                                      \
				 w->f = prof_window_offcpu(dsub(now->f, then->f), closed, before);)
	PROF_NODE_COUNTS(FLAT_SUB)
	PROF_NODE_TIMES(FLAT_SUB)
#undef FLAT_SUB
	w->self = dsub(now->self, then->self);
	w->open_ticks = now->open_ticks < w->ticks ? now->open_ticks : w->ticks;
	if (!w->calls)
		w->max = 0;
	else if (now->max > then->max)
		w->max = now->max;
	else
		w->max = now->max < closed ? now->max : closed;
}
