// SPDX-License-Identifier: MIT
/*
 * reader_image.c - snapshots against snapshots: a window's difference, an
 * image moved in time, and a snapshot written back as a segment image.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_int.h"

static __u64 sub0(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

static const struct prof_snap_thread *base_thread(const struct prof_snapshot *b,
						  const struct prof_snap_thread *t)
{
	__u32 i;

	/* by identity, not slab: a slab is handed from thread to thread, and
	 * an image numbers its threads anew */
	for (i = 0; i < b->nthreads; i++)
		if (b->threads[i].tid == t->tid && b->threads[i].start_tick == t->start_tick &&
		    !b->threads[i].folds == !t->folds)
			return &b->threads[i];
	return NULL;
}

/* node n of s less node bn of b: counters and histogram; max becomes the
 * top of the highest non-empty delta bucket, clamped to the real max */
static void node_sub(struct prof_snapshot *s, struct prof_snap_node *n,
		     const struct prof_snapshot *b, const struct prof_snap_node *bn)
{
	__u32 *h = s->hist ? s->hist + n->hist_off : NULL;
	const __u32 *bh = b->hist ? b->hist + bn->hist_off : NULL;
	/* the whole ticks of the calls that ended in the window, and of them
	 * the part before it: the call the baseline found open, if it ended
	 * (a node has one call open at most: a closed call since means it) */
	__u64 closed = sub0(prof_snap_closed(n), prof_snap_closed(bn));
	__u64 before = bn->open && closed ? bn->open_ticks : 0, top = 0;
	__u32 k;

	/* each figure as figures.h says a window takes it */
#define NODE_SUB(f, unit, across, window, flat, slab, key)                                          \
	if (PROF_FIG_IS(DIFF, window))                                                       \
		n->f = sub0(n->f, bn->f);                                                     \
	if (PROF_FIG_IS(SHARE, window))                                                      \
		n->f = prof_window_offcpu(sub0(n->f, bn->f), closed, before);
	PROF_NODE_COUNTS(NODE_SUB)
	PROF_NODE_TIMES(NODE_SUB)
#undef NODE_SUB
	/* an open call: only its part inside the window */
	if (n->open_ticks > n->ticks)
		n->open_ticks = n->ticks;
	for (k = 0; k < n->hist_n; k++) {
		__u32 bk = n->hist_lo + k, bv = 0;

		if (bh && bk >= bn->hist_lo && bk - bn->hist_lo < bn->hist_n)
			bv = bh[bk - bn->hist_lo];
		h[k] = h[k] >= bv ? h[k] - bv : 0;
		if (h[k])
			top = prof_hist_lo(bk + 1) - 1;
	}
	/* max since the baseline: the top of the highest delta bucket */
	n->max = top < n->max ? top : n->max;
	if (!n->calls)
		n->max = 0;
}

/* a thread's counters less its baseline's */
static void thread_sub(struct prof_snap_thread *t, const struct prof_snap_thread *bt)
{
	__u32 k;

	t->overflow = sub0(t->overflow, bt->overflow);
	t->unbalanced = sub0(t->unbalanced, bt->unbalanced);
	t->frames = sub0(t->frames, bt->frames);
	t->frame_ticks = sub0(t->frame_ticks, bt->frame_ticks);
	t->oncpu_ns = t->oncpu_ns == PROF_SNAP_UNKNOWN || bt->oncpu_ns == PROF_SNAP_UNKNOWN
			      ? PROF_SNAP_UNKNOWN
			      : sub0(t->oncpu_ns, bt->oncpu_ns);
	for (k = 0; k < PROF_HIST_BUCKETS; k++)
		t->frame_hist[k] =
			t->frame_hist[k] >= bt->frame_hist[k] ? t->frame_hist[k] - bt->frame_hist[k] : 0;
}

/* node p's child of site in t (children linked), or PROF_SNAP_NONE */
static __u32 child_of(const struct prof_snap_thread *t, __u32 p, __u32 site)
{
	__u32 c;

	for (c = t->nodes[p].first_child; c != PROF_SNAP_NONE; c = t->nodes[c].next_sibling)
		if (t->nodes[c].site == site)
			return c;
	return PROF_SNAP_NONE;
}

static void agg_sub_annot(struct prof_snapshot *s, const struct prof_snap_thread *agg,
			  const struct prof_snapshot *b, const struct prof_snap_thread *bt,
			  const __u32 *map);

/*
 * A baseline's thread that s no longer has exited since: s counts it in
 * its aggregate, so the aggregate loses the baseline's part of it, node by
 * node along the paths the fold took (slab.h): the window keeps what the
 * thread did inside it, and only that.
 */
static int agg_sub_thread(struct prof_snapshot *s, struct prof_snap_thread *agg,
			  const struct prof_snapshot *b, const struct prof_snap_thread *bt)
{
	__u32 *map, j;

	if (!bt->nnodes || !agg->nnodes)
		return 0;
	map = malloc(bt->nnodes * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (j = 0; j < bt->nnodes; j++) {
		__u32 m = j < 2 ? j : map[bt->nodes[j].parent];

		if (j >= 2 && m != 1 && m < agg->nnodes) {
			m = child_of(agg, m, bt->nodes[j].site);
			if (m == PROF_SNAP_NONE)
				m = 1;
		}
		if (m >= agg->nnodes)
			m = 1;
		map[j] = m;
		node_sub(s, &agg->nodes[m], b, &bt->nodes[j]);
	}
	thread_sub(agg, bt);
	agg_sub_annot(s, agg, b, bt, map);
	free(map);
	return 0;
}

/*
 * A window of the named locks and plots: each entry less the baseline's
 * of the same thread, name (and zone), as figures.h says a window takes
 * each figure.  An entry the baseline did not have is all inside the
 * window; a baseline's entry s lost (its thread folded) is not in it.
 */
#define ANNOT_SUB(f, unit, across, window, key)                      \
	if (PROF_FIG_IS(DIFF, window))                               \
		d->f = FIG_SUB(d->f, x->f);                          \
	if (PROF_FIG_IS(ALONE, window))                              \
		d->f = !inside ? 0 : had ? FIG_UNKNOWN(d->f) : d->f; \
	if (PROF_FIG_IS(NEWEST, window) && !inside)                  \
		d->f = FIG_UNKNOWN(d->f);
#define FIG_STORE(f, unit, across, window, key) d->f = x->f;
#define FIG_SUB(a, b) _Generic((a), double : (a) - (b), default : sub0((__u64)(a), (__u64)(b)))
#define FIG_UNKNOWN(a) _Generic((a), double : (double)NAN, default : PROF_SNAP_UNKNOWN)

/* the top of a lock's highest non-empty wait bucket (d's, a window's),
 * held under the max since start */
static __u64 lock_window_max(const struct prof_snap_lock *d, __u64 max)
{
	int b;

	for (b = PROF_LOCK_HIST - 1; b >= 0; b--)
		if (d->wait_hist[b])
			break;
	if (b < 0)
		return 0;
	/* bucket b holds [2^b, 2^(b+1)) ticks, the last all above */
	if (b == PROF_LOCK_HIST - 1)
		return max;
	return (2ull << b) - 1 < max ? (2ull << b) - 1 : max;
}

static void lock_sub(struct prof_snap_lock *d, const struct prof_snap_lock *x)
{
	/* what the window and the baseline had of it */
	__u64 inside = sub0(d->acquisitions, x->acquisitions), had = x->acquisitions;
	__u32 k;

	for (k = 0; k < PROF_LOCK_HIST; k++)
		d->wait_hist[k] =
			d->wait_hist[k] >= x->wait_hist[k] ? d->wait_hist[k] - x->wait_hist[k] : 0;
	PROF_LOCK_FIGS(ANNOT_SUB)
	d->wait_max = lock_window_max(d, d->wait_max);
}

static void plot_sub(struct prof_snap_plot *d, const struct prof_snap_plot *x)
{
	__u64 inside = sub0(d->count, x->count), had = x->count;

	PROF_PLOT_FIGS(ANNOT_SUB)
}

static void annot_sub(struct prof_snapshot *s, const struct prof_snapshot *b)
{
	__u32 i, k;

	for (i = 0; i < s->nlocks; i++) {
		struct prof_snap_lock *d = &s->locks[i];

		for (k = 0; k < b->nlocks; k++) {
			const struct prof_snap_lock *x = &b->locks[k];

			if (x->tid == d->tid && x->start_tick == d->start_tick &&
			    x->site == d->site && x->node == d->node) {
				lock_sub(d, x);
				break;
			}
		}
	}
	for (i = 0; i < s->nplots; i++) {
		struct prof_snap_plot *d = &s->plots[i];

		for (k = 0; k < b->nplots; k++) {
			const struct prof_snap_plot *x = &b->plots[k];

			if (x->tid == d->tid && x->start_tick == d->start_tick &&
			    x->site == d->site) {
				plot_sub(d, x);
				break;
			}
		}
	}
}

/* the aggregate's entry of (site, node) among s's, else its first of
 * site (the fold's, when the aggregate's table was full); NULL if none */
static struct prof_snap_lock *agg_lock_of(struct prof_snapshot *s,
					  const struct prof_snap_thread *agg, __u32 site,
					  __u32 node)
{
	struct prof_snap_lock *any = NULL;
	__u32 i;

	for (i = 0; i < s->nlocks; i++) {
		struct prof_snap_lock *d = &s->locks[i];

		if (d->tid != agg->tid || d->start_tick != agg->start_tick || d->site != site)
			continue;
		if (d->node == node)
			return d;
		any = any ? any : d;
	}
	return any;
}

/*
 * A baseline's thread folded since (agg_sub_thread): its locks and plots
 * out of the aggregate's, as the fold put them in (prof_fold_annot.c: a
 * lock by the aggregate's node of its zone, map), so that the window
 * keeps what the thread did inside it
 */
static void agg_sub_annot(struct prof_snapshot *s, const struct prof_snap_thread *agg,
			  const struct prof_snapshot *b, const struct prof_snap_thread *bt,
			  const __u32 *map)
{
	__u32 k, i;

	for (k = 0; k < b->nlocks; k++) {
		const struct prof_snap_lock *x = &b->locks[k];
		struct prof_snap_lock *d;

		if (x->tid != bt->tid || x->start_tick != bt->start_tick)
			continue;
		d = agg_lock_of(s, agg, x->site, x->node < bt->nnodes ? map[x->node] : 1);
		if (d)
			lock_sub(d, x);
	}
	for (k = 0; k < b->nplots; k++) {
		const struct prof_snap_plot *x = &b->plots[k];

		if (x->tid != bt->tid || x->start_tick != bt->start_tick)
			continue;
		for (i = 0; i < s->nplots; i++) {
			struct prof_snap_plot *d = &s->plots[i];

			if (d->tid == agg->tid && d->start_tick == agg->start_tick &&
			    d->site == x->site) {
				plot_sub(d, x);
				break;
			}
		}
	}
}

int prof_snapshot__advance(struct prof_snapshot *s, __u64 dt)
{
	__u32 i, j;

	if (s->lazy)
		return -EINVAL;
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i];

		if (t->state != PROF_SLAB_ALIVE || !t->nnodes)
			continue;
		t->nodes[0].ticks += dt;
		for (j = 1; j < t->nnodes; j++) {
			if (!t->nodes[j].open)
				continue;
			t->nodes[j].ticks += dt;
			t->nodes[j].open_ticks += dt;
		}
		if (thread_derive(t, s->nsites))
			return -ENOMEM;
	}
	s->now_tick += dt;
	return 0;
}

int prof_snapshot__diff(struct prof_snapshot *s, const struct prof_snapshot *b)
{
	struct prof_snap_thread *agg;
	__u32 i, j, k;
	int err;

	if (s->pid != b->pid || s->start_token != b->start_token)
		return -ESRCH;
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i];
		const struct prof_snap_thread *bt = base_thread(b, t);

		if (!bt)
			continue;
		thread_sub(t, bt);
		for (j = 0; j < t->nnodes && j < bt->nnodes; j++) {
			if (t->nodes[j].site != bt->nodes[j].site ||
			    t->nodes[j].parent != bt->nodes[j].parent)
				continue;
			node_sub(s, &t->nodes[j], b, &bt->nodes[j]);
		}
		if (thread_derive(t, s->nsites))
			return -ENOMEM;
	}
	/* the baseline's threads that exited since: out of the aggregate */
	agg = s->nthreads && s->threads[s->nthreads - 1].folds ? &s->threads[s->nthreads - 1] : NULL;
	for (k = 0; agg && k < b->nthreads; k++) {
		const struct prof_snap_thread *bt = &b->threads[k];

		if (bt->folds || base_thread(s, bt))
			continue;
		err = agg_sub_thread(s, agg, b, bt);
		if (err)
			return err;
	}
	if (agg && thread_derive(agg, s->nsites))
		return -ENOMEM;
	annot_sub(s, b);
	return 0;
}

/* any of the figures an ext record keeps (figures.h) is not 0 */
static bool node_has_ext(const struct prof_snap_node *n)
{
	__u64 any = 0;

#define EXT_ANY(f, unit, across, window, flat, slab, key) PROF_FIG_IF(EXT, slab, any |= n->f;)
	PROF_NODE_COUNTS(EXT_ANY)
#undef EXT_ANY
	return any != 0;
}

/* snapshot -> segment image; the inverse of prof_snapshot__read */
/* the geometry of a snapshot's image */
struct image_geom {
	__u32 max_nodes;
	unsigned int shift;
	__u64 sites_off, slabs_off, slab_size, size;
	struct prof_region region[PROF_REGIONS];
	__u32 nreal; /* threads, the aggregate aside */
	bool agg;
	/* the annotation region's parts: its tables as big as the thread
	 * with the most needs, each ring one entry, never written */
	struct prof_region part[PROF_PARTS];
};

/* entries of thread t among a snapshot's locks or plots (the
 * aggregate's too: tid 0, its folded threads') */
#define ANNOT_OF(v, t) ((v).tid == (t)->tid && (v).start_tick == (t)->start_tick)

/* the annotation region an image needs (0: none) and its parts */
static __u64 image_annot(const struct prof_snapshot *s, struct prof_region *part)
{
	static const __u64 esize[PROF_PARTS] = {
		sizeof(struct prof_plot), sizeof(struct prof_plot_point),
		sizeof(struct prof_msg),  sizeof(struct prof_value),
		sizeof(struct prof_lock), sizeof(struct prof_lock_span),
	};
	__u32 i, k, np, nl, maxp = 1, maxl = 1;
	__u64 off = 0;

	memset(part, 0, PROF_PARTS * sizeof(*part));
	if (!s->nlocks && !s->nplots)
		return 0;
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		for (k = np = 0; k < s->nplots; k++)
			np += ANNOT_OF(s->plots[k], t);
		for (k = nl = 0; k < s->nlocks; k++)
			nl += ANNOT_OF(s->locks[k], t);
		maxp = np > maxp ? np : maxp;
		maxl = nl > maxl ? nl : maxl;
	}
	for (i = 0; i < PROF_PARTS; i++) {
		part[i].off = off;
		part[i].size = i == PROF_PART_PLOTS   ? maxp * esize[i]
			       : i == PROF_PART_LOCKS ? maxl * esize[i]
						      : PROF_RING_HDR_SIZE + esize[i];
		off += part[i].size;
	}
	return off;
}

/* thread t's locks and plots into its slab of an image (sites by index,
 * as the image's site table has them) */
static void image_write_annot(const struct prof_snapshot *s, const struct prof_snap_thread *t,
			      const struct image_geom *g, char *slab)
{
	struct prof_slab_hdr *sh = (void *)slab;
	char *ar = slab + g->region[PROF_REGION_ANNOT].off;
	struct prof_plot *pp = (void *)(ar + g->part[PROF_PART_PLOTS].off);
	struct prof_lock *lp = (void *)(ar + g->part[PROF_PART_LOCKS].off);
	__u32 k;

	if (!g->region[PROF_REGION_ANNOT].size)
		return;
	for (k = 0; k < s->nplots; k++) {
		const struct prof_snap_plot *x = &s->plots[k];
		struct prof_plot *d = &pp[sh->nplots];

		if (!ANNOT_OF(*x, t))
			continue;
		d->site = x->site;
		PROF_PLOT_FIGS(FIG_STORE)
		sh->nplots++;
	}
	for (k = 0; k < s->nlocks; k++) {
		const struct prof_snap_lock *x = &s->locks[k];
		struct prof_lock *d = &lp[sh->nlocks];

		if (!ANNOT_OF(*x, t))
			continue;
		d->site = x->site;
		d->node = x->node;
		PROF_LOCK_FIGS(FIG_STORE)
		memcpy(d->wait_hist, x->wait_hist, sizeof(d->wait_hist));
		sh->nlocks++;
	}
	sh->annot = sh->nplots || sh->nlocks;
}

static void image_geom(const struct prof_snapshot *s, struct image_geom *g)
{
	__u32 i;

	g->max_nodes = 2;
	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].nnodes > g->max_nodes)
			g->max_nodes = s->threads[i].nnodes;
	g->sites_off = PROF_SEG_HDR_SIZE;
	g->slabs_off =
		g->sites_off + (__u64)(s->nsites ? s->nsites : 1) * sizeof(struct prof_site_ent);
	g->slabs_off = (g->slabs_off + 4095) & ~4095ull;
	/* the smallest histogram block that holds every thread's nodes:
	 * a serialized snapshot is as small as its histograms allow */
	g->shift = 0;
	while (g->shift < PROF_HIST_SHIFT && (1u << g->shift) < g->max_nodes)
		g->shift++;
	g->slab_size =
		prof_slab_layout(g->max_nodes, g->shift, 0, image_annot(s, g->part), g->region);
	/* the aggregate (always the last thread) one slab past the threads' */
	g->agg = s->nthreads && s->threads[s->nthreads - 1].folds;
	g->nreal = s->nthreads - g->agg;
	g->size = g->slabs_off + g->slab_size * ((g->nreal ? g->nreal : 1) + g->agg);
}

size_t prof_snapshot__image_size(const struct prof_snapshot *s)
{
	struct image_geom g;

	image_geom(s, &g);
	return g.size;
}

int prof_snapshot__write(const struct prof_snapshot *s, void **buf, size_t *len)
{
	size_t size = prof_snapshot__image_size(s);
	void *mem = calloc(1, size);
	int err;

	if (!mem)
		return -ENOMEM;
	err = prof_snapshot__write_into(s, mem, size);
	if (err) {
		free(mem);
		return err;
	}
	*buf = mem;
	*len = size;
	return 0;
}

/* an image's header: the snapshot's, its geometry g's, and its now */
static void image_write_hdr(struct prof_seg_hdr *h, const struct prof_snapshot *s,
			    const struct image_geom *g)
{
	h->magic = PROF_SEG_MAGIC;
	h->version = PROF_SEG_VERSION;
	h->hdr_size = sizeof(*h);
	h->seg_size = g->size;
	h->pid = s->pid;
	h->uid = s->uid;
	h->start_token = s->start_token;
	h->created_ns = s->created_ns;
	memcpy(h->comm, s->comm, sizeof(h->comm));
	h->clock = s->clock;
	h->flags = s->flags;
	h->tick_hz = s->tick_hz;
	h->tick_base = s->tick_base;
	h->mono_base_ns = s->mono_base_ns;
	h->max_sites = s->nsites ? s->nsites : 1;
	h->site_size = sizeof(struct prof_site_ent);
	h->max_threads = g->nreal ? g->nreal : 1;
	h->max_nodes = g->max_nodes;
	h->node_size = PROF_NODE_SIZE;
	h->hist_buckets = PROF_HIST_BUCKETS;
	h->ext_size = PROF_NODE_EXT_SIZE;
	h->hist_block = 1u << g->shift;
	h->sites_off = g->sites_off;
	h->slabs_off = g->slabs_off;
	h->slab_size = g->slab_size;
	h->minor = PROF_SEG_MINOR;
	h->slab_hdr_size = sizeof(struct prof_slab_hdr);
	h->nregions = PROF_REGIONS;
	memcpy(h->region, g->region, sizeof(g->region));
	h->nparts = PROF_PARTS;
	memcpy(h->part, g->part, sizeof(g->part));
	h->nsites = s->nsites;
	h->nslabs = g->nreal;
	h->agg_slab = g->agg ? h->max_threads : PROF_NO_SLOT;
	h->folds = g->agg ? s->threads[s->nthreads - 1].folds : 0;
	h->sites_dropped = s->sites_dropped;
	h->threads_dropped = s->threads_dropped;
	h->exit_tick = s->exit_tick;
	h->nospace = s->nospace;
	h->zone_cost = s->zone_cost;
	h->zone_inner = s->zone_inner;
	/* the open calls as they were at the read: measured to its now */
	h->snap_tick = s->now_tick ? s->now_tick : 1;
}

int prof_snapshot__write_into(const struct prof_snapshot *s, void *out, size_t len)
{
	struct image_geom g;
	struct prof_seg_hdr *h;
	char *mem = out;
	__u32 i, j;

	/* a lazy snapshot's nodes and histograms are not all in memory */
	if (s->lazy)
		return -EINVAL;
	image_geom(s, &g);
	if (len != g.size)
		return -EINVAL;
	h = (struct prof_seg_hdr *)mem;
	image_write_hdr(h, s, &g);
	for (i = 0; i < s->nsites; i++) {
		struct prof_site_ent *e = (void *)(mem + g.sites_off + (__u64)i * sizeof(*e));

		memcpy(e->name, s->sites[i].name, sizeof(e->name));
		memcpy(e->func, s->sites[i].func, sizeof(e->func));
		memcpy(e->file, s->sites[i].file, sizeof(e->file));
		e->line = s->sites[i].line;
		e->flags = s->sites[i].flags;
	}
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];
		__u64 idx = t->folds ? h->max_threads : i;
		char *slab = mem + g.slabs_off + idx * g.slab_size;
		struct prof_slab_hdr *sh = (void *)slab;
		struct prof_node *nodes = (void *)(slab + g.region[PROF_REGION_NODES].off);
		struct prof_node_ext *ext = (void *)(slab + g.region[PROF_REGION_EXT].off);
		__u64 *open = (void *)(slab + g.region[PROF_REGION_OPEN].off);
		__u64 *rowmap = (void *)(slab + g.region[PROF_REGION_ROWMAP].off);
		__u32 *hist = (void *)(slab + g.region[PROF_REGION_HIST].off);

		sh->magic = PROF_SLAB_MAGIC;
		sh->state = t->state;
		sh->tid = t->tid;
		sh->nnodes = t->nnodes;
		sh->gen = t->gen;
		/* an image names a thread by what a report called it */
		memcpy(sh->name, t->name[0] ? t->name : t->comm, sizeof(sh->name));
		sh->name[sizeof(sh->name) - 1] = 0;
		if (t->oncpu_ns != PROF_SNAP_UNKNOWN) {
			sh->oncpu_start_ns = 1;
			sh->oncpu_exit_ns = t->oncpu_ns + 1;
		}
		sh->start_tick = t->start_tick;
		sh->exit_tick = t->exit_tick;
		sh->overflow = t->overflow;
		sh->unbalanced = t->unbalanced;
		sh->frames = t->frames;
		sh->frame_ticks = t->frame_ticks;
		sh->frame_max = t->frame_max;
		sh->ksched_slot = t->ksched_slot;
		memcpy(sh->frame_hist, t->frame_hist, sizeof(sh->frame_hist));
		image_write_annot(s, t, &g, slab);
		for (j = 0; j < t->nnodes; j++) {
			const struct prof_snap_node *n = &t->nodes[j];
			struct prof_node *d = &nodes[j];
			struct prof_node_ext *e = &ext[j];
			__u32 k;

			d->site = n->site;
			d->parent = n->parent;
			d->calls = n->calls;
			/* an open call: its start, so the read at snap_tick finds
			 * the same ticks (the root's are its wall time) */
			d->ticks = n->ticks - (n->open ? n->open_ticks : 0);
			if (n->open && j)
				open[j] = h->snap_tick - n->open_ticks;
			d->max = n->max;
			/* only what is not zero: the image may be a sparse file */
			if (n->kernel_calls || node_has_ext(n)) {
				sh->ext_used = 1;
#define EXT_STORE(f, unit, across, window, flat, slab, key) PROF_FIG_IF(EXT, slab, e->f = n->f;)
				PROF_NODE_COUNTS(EXT_STORE)
#undef EXT_STORE
				/* not covered: kernel_adj is the count itself */
				e->kernel_adj = n->kernel_calls;
			}
			if (n->hist_n && (!s->hist || n->hist_off > s->nhist ||
					  n->hist_n > s->nhist - n->hist_off))
				return -EINVAL;
			for (k = 0; k < n->hist_n && n->hist_lo + k < PROF_HIST_BUCKETS; k++) {
				__u32 b = n->hist_lo + k;

				if (!s->hist[n->hist_off + k])
					continue;
				hist[prof_hist_index(j, b, g.shift)] = s->hist[n->hist_off + k];
				rowmap[(j >> g.shift) * PROF_ROWMAP_WORDS + b / 64] |= 1ull
										       << (b % 64);
			}
		}
	}
	return 0;
}
