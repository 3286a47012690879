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

#include "fmt.h"
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

/*
 * Nodes [1, nn) of a learnt tree into the rows: only the counters are
 * read; a recursive node's time is in its outermost ancestor's already.
 * Each node's, as a snapshot's thread holds them, into nodes[1, nn): what
 * its on-CPU time is made of (flat_oncpu).
 */
static void flat_add(const struct flat_tree *t, const struct slab_view *v, __u32 nn,
		     struct prof_flat_row *rows, __u64 *plus, __u64 *minus,
		     struct prof_snap_node *nodes)
{
	__u32 i;

	for (i = 1; i < nn; i++) {
		const struct prof_node *src = view_node(v, i);
		__u64 m = t->rp[i], ticks = LD(&src->ticks), max = LD(&src->max);
		__u32 row = (__u32)m & ~FLAT_REC, prow = (__u32)(m >> 32);
		struct prof_flat_row *r = &rows[row];
		struct prof_snap_node *k = &nodes[i];

		memset(k, 0, sizeof(*k));
		k->parent = t->parent[i];
		k->calls = LD(&src->calls);
		k->ticks = ticks;
		r->calls += k->calls;
		if (max > r->max)
			r->max = max;
		plus[row] += ticks;
		if (prow != FLAT_NO_ROW)
			minus[prow] += ticks;
		if (!(m & FLAT_REC))
			r->ticks += ticks;
		if (v->ext) {
			const struct prof_node_ext *ext = view_ext(v, i);

			r->preempted += LD(&ext->preempted);
			r->blocked += LD(&ext->blocked);
			r->migrated += LD(&ext->migrated);
			node_kernel(v, ext, k);
			k->offcpu_ns = LD(&ext->offcpu_ns);
			r->kernel_calls += k->kernel_calls;
			if (!(m & FLAT_REC))
				r->offcpu_ns += k->offcpu_ns;
		}
	}
}

/*
 * The open calls of a learnt tree, read every pass (a call opens without
 * touching the activity word): counted in the rows, and noted in fa to be
 * measured once every slab is copied (flat_open_at).  -ENOMEM
 */
static int flat_open(const struct flat_tree *t, const struct slab_view *v, __u32 nn,
		     struct prof_flat_row *rows, struct flat_acc *fa)
{
	__u64 exit = LD(&v->hdr->exit_tick);
	__u32 i;

	for (i = 2; i < nn; i++) {
		__u64 start = LDA(&v->open[i]);

		if (!start)
			continue;
		if (fa->nopens == fa->capopens) {
			size_t cap = fa->capopens ? 2 * fa->capopens : 64;
			struct flat_open_call *o = realloc(fa->opens, cap * sizeof(*o));

			if (!o)
				return -ENOMEM;
			fa->opens = o;
			fa->capopens = cap;
		}
		fa->opens[fa->nopens++] = (struct flat_open_call){
			.m = t->rp[i], .start = start, .exit = exit, .node = i
		};
		rows[(__u32)t->rp[i] & ~FLAT_REC].open++;
	}
	return 0;
}

/*
 * The pass's open calls measured to now (its thread's exit, if before),
 * taken after the copy as the snapshot's read takes it (thread_open_at):
 * each adds its elapsed time to its row and to its parent's children, as
 * a closed call's ticks do.
 */
static void flat_open_at(struct flat_acc *fa, __u64 now)
{
	size_t k;

	for (k = 0; k < fa->nopens; k++) {
		const struct flat_open_call *o = &fa->opens[k];
		__u64 to = o->exit && o->exit < now ? o->exit : now;
		__u64 e = to > o->start ? to - o->start : 0;
		__u32 row = (__u32)o->m & ~FLAT_REC, prow = (__u32)(o->m >> 32);

		fa->plus[row] += e;
		if (prow != FLAT_NO_ROW)
			fa->minus[prow] += e;
		if (!(o->m & FLAT_REC)) {
			fa->rows[row].ticks += e;
			fa->rows[row].open_ticks += e;
		}
		fa->opens[k].start = e; /* measured: its ticks, for flat_oncpu */
	}
}

/*
 * Each taken slab's nodes' on-CPU and self on-CPU times into the rows, as
 * prof_snap_flat sums them: by prof_snap_oncpu and prof_snap_self_oncpu
 * over the slab's share (closed calls), with the pass's open calls
 * measured (flat_open_at) and the thread's wall and CPU time of s.
 */
static int flat_oncpu(struct flat_acc *fa, const struct prof_snapshot *s)
{
	struct prof_seg_flat_cache *cache = fa->cache;
	__u32 i, j;
	size_t k;
	int err;

	for (i = 0; i <= fa->nsites; i++)
		fa->rows[i].oncpu_ns = fa->rows[i].self_oncpu_ns = PROF_SNAP_UNKNOWN;
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread t = s->threads[i];
		struct flat_slab_cache *c;
		__u64 to, kids = 0;

		if (t.slab >= cache->nslabs || !cache->slabs[t.slab].taken)
			continue;
		c = &cache->slabs[t.slab];
		t.nodes = c->nodes;
		t.nnodes = c->nn;
		for (k = c->open_lo; k < c->open_hi; k++) {
			struct prof_snap_node *n = &c->nodes[fa->opens[k].node];

			n->open = 1;
			n->open_ticks = fa->opens[k].start;
			n->ticks += n->open_ticks;
		}
		/* the root: the thread's wall time, holding its children's, as
		 * thread_open_at and thread_derive make it (the aggregate's as
		 * written) */
		for (j = c->nodes[0].first_child; j != PROF_SNAP_NONE; j = c->nodes[j].next_sibling)
			kids += c->nodes[j].ticks;
		if (t.slab == fa->agg_slab) {
			c->nodes[0].ticks = c->root_ticks;
		} else {
			to = t.exit_tick && t.exit_tick < s->now_tick ? t.exit_tick : s->now_tick;
			c->nodes[0].ticks = to > t.start_tick ? to - t.start_tick : 0;
		}
		if (c->nodes[0].ticks < kids)
			c->nodes[0].ticks = kids;
		err = prof_snap_oncpu(s, &t, c->oncpu);
		for (j = 1; !err && j < c->nn; j++) {
			struct prof_flat_row *r = &fa->rows[(__u32)c->tree.rp[j] & ~FLAT_REC];

			r->self_oncpu_ns =
				prof_add_known(r->self_oncpu_ns, prof_snap_self_oncpu(&t, c->oncpu, j));
			if (!(c->tree.rp[j] & FLAT_REC))
				r->oncpu_ns = prof_add_known(r->oncpu_ns, c->oncpu[j]);
		}
		/* the share back to its closed calls */
		for (k = c->open_lo; k < c->open_hi; k++) {
			struct prof_snap_node *n = &c->nodes[fa->opens[k].node];

			n->ticks -= n->open_ticks;
			n->open = 0;
			n->open_ticks = 0;
		}
		if (err)
			return err;
	}
	return 0;
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
	if (nn > c->ncap) {
		struct prof_snap_node *nodes = realloc(c->nodes, nn * sizeof(*nodes));
		__u64 *oncpu;

		if (!nodes)
			return -ENOMEM;
		c->nodes = nodes;
		oncpu = realloc(c->oncpu, nn * sizeof(*oncpu));
		if (!oncpu)
			return -ENOMEM;
		c->oncpu = oncpu;
		c->ncap = nn;
	}
	if (t->nrows > c->nparts || !c->parts) {
		struct flat_part *p = realloc(c->parts, (t->nrows ? t->nrows : 1) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->parts = p;
	}
	if (fa->cache->no_sched) {
		struct slab_view nv = *v;

		nv.ext = NULL;
		flat_add(t, &nv, nn, fa->srows, fa->splus, fa->sminus, c->nodes);
	} else {
		flat_add(t, v, nn, fa->srows, fa->splus, fa->sminus, c->nodes);
	}
	/* the root, and the children linked as thread_derive links them */
	memset(&c->nodes[0], 0, sizeof(c->nodes[0]));
	c->root_ticks = LD(&view_node(v, 0)->ticks);
	for (i = 0; i < nn; i++)
		c->nodes[i].first_child = c->nodes[i].next_sibling = PROF_SNAP_NONE;
	for (i = nn - 1; i >= 1; i--) {
		c->nodes[i].next_sibling = c->nodes[c->nodes[i].parent].first_child;
		c->nodes[c->nodes[i].parent].first_child = i;
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
	size_t nopens;
	__u32 i;
	int err;

	c = &fa->cache->slabs[index];
	c->taken = false;
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
	nopens = fa->nopens;
	err = flat_open(&c->tree, v, nn, fa->srows, fa);
	moved = err || (fa->live && slab_moved((const char *)v->hdr, gen));
	for (i = 0; i < c->tree.nrows; i++) {
		__u32 row = c->tree.rows[i];
		struct prof_flat_row *o = &fa->srows[row];

		if (!moved)
			fa->rows[row].open += o->open;
		o->open = 0;
	}
	if (moved) {
		fa->nopens = nopens;
		c->valid = false;
		return err;
	}
	c->taken = true;
	c->open_lo = nopens;
	c->open_hi = fa->nopens;
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
		free(c->slabs[i].nodes);
		free(c->slabs[i].oncpu);
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
	struct flat_slab_cache *v;
	__u32 i;

	fa->nsites = nsites;
	fa->agg_slab = g->agg_slab;
	fa->rows = calloc(nrows, sizeof(*fa->rows));
	fa->plus = calloc(nrows, sizeof(*fa->plus));
	fa->minus = calloc(nrows, sizeof(*fa->minus));
	if (!fa->rows || !fa->plus || !fa->minus)
		return -ENOMEM;
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
	v = prof_grow_zero(c->slabs, &c->nslabs, nslabs, sizeof(*v));
	if (!v)
		return -ENOMEM;
	c->slabs = v;
	/* none taken in this pass yet (flat_slab) */
	for (i = 0; i < c->nslabs; i++)
		c->slabs[i].taken = false;
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

	/* a slab's share is what checks one that changes hands during the
	 * pass (flat_slab): a cache for the one call */
	if (!cache)
		return prof_seg_flat(mem, len, tid, sort, snap, out, nout);
	*snap = NULL;
	*out = NULL;
	*nout = 0;
	err = read_seg(mem, len, PROF_READ_NO_HIST, &fa, snap);
	if (err)
		goto cleanup;
	/* the threads' CPU time (/proc) before the on-CPU times it bounds */
	if (!seg_is_image(mem))
		prof_snapshot__add_proc(*snap, tid);
	flat_open_at(&fa, (*snap)->now_tick);
	err = flat_oncpu(&fa, *snap);
	if (err)
		goto cleanup;
	for (i = 0; i <= fa.nsites; i++) {
		fa.rows[i].site = i < fa.nsites ? i : PROF_SITE_NONE;
		/* a child read after it grew can exceed its parent: clamp */
		fa.rows[i].self = fa.plus[i] > fa.minus[i] ? fa.plus[i] - fa.minus[i] : 0;
		if (fa.rows[i].calls || fa.rows[i].ticks)
			fa.rows[n++] = fa.rows[i];
	}
	prof_flat_sort(*snap, fa.rows, n, sort);
	*out = fa.rows;
	*nout = n;
	fa.rows = NULL;
cleanup:
	if (err) {
		prof_snapshot__destroy(*snap);
		*snap = NULL;
	}
	free(fa.opens);
	free(fa.rows);
	free(fa.plus);
	free(fa.minus);
	return err;
}

int prof_seg_flat(const void *mem, size_t len, __u32 tid, int sort, struct prof_snapshot **snap,
		  struct prof_flat_row **out, size_t *nout)
{
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

void prof_flat_row_add(struct prof_flat_row *d, const struct prof_flat_row *x)
{
	/* each figure a row has as figures.h says sites of a zone combine it */
#define ROW_ADD(f, unit, across, window, flat, slab, key)                                           \
	PROF_FIG_IF(Y, flat, if (PROF_FIG_IS(SUM, across)) d->f += x->f;                    \
			 else if (x->f > d->f) d->f = x->f;)
	PROF_NODE_COUNTS(ROW_ADD)
	PROF_NODE_TIMES(ROW_ADD)
#undef ROW_ADD
#define ROW_ADD_DERIVED(f, unit, window, key)                                                      \
	if (PROF_FIG_IS(KNOWN, window))                                                      \
		d->f = prof_add_known(d->f, x->f);                                            \
	else                                                                                 \
		d->f += x->f;
	PROF_ROW_DERIVED(ROW_ADD_DERIVED)
#undef ROW_ADD_DERIVED
	d->open += x->open;
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
	/* and each derived figure a row carries */
#define FLAT_DERIVED(f, unit, window, key)                                            \
	if (PROF_FIG_IS(KNOWN, window))                                               \
		w->f = now->f == PROF_SNAP_UNKNOWN ? PROF_SNAP_UNKNOWN                \
		       : then->f == PROF_SNAP_UNKNOWN ? now->f                        \
						       : dsub(now->f, then->f);       \
	else                                                                          \
		w->f = dsub(now->f, then->f);
	PROF_ROW_DERIVED(FLAT_DERIVED)
#undef FLAT_DERIVED
	w->open_ticks = now->open_ticks < w->ticks ? now->open_ticks : w->ticks;
	if (!w->calls)
		w->max = 0;
	else if (now->max > then->max)
		w->max = now->max;
	else
		w->max = now->max < closed ? now->max : closed;
}
