// SPDX-License-Identifier: MIT
/*
 * profctl_snap.c - snapshots derived for a view: one thread, all threads
 * merged into one tree, and the small helpers every renderer shares.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "profctl.h"

struct prof_snapshot *pc_view_thread(const struct prof_snapshot *s, __u32 tid)
{
	struct prof_snapshot *v;
	__u32 i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			break;
	if (i == s->nthreads) {
		errno = ESRCH;
		return NULL;
	}
	v = malloc(sizeof(*v));
	if (!v)
		return NULL;
	*v = *s;
	v->nthreads = 1;
	v->threads = &s->threads[i];
	return v;
}

void pc_snap_free(struct prof_snapshot *s)
{
	/* a merged snapshot owns its memory as a read one does */
	prof_snapshot__destroy(s);
}

/* open addressing on (merged parent, site) */
struct merge_map {
	__u64 *keys; /* parent << 32 | site, ~0 empty */
	__u32 *vals;
	size_t cap;
};

static size_t merge_hash(__u64 k, size_t cap)
{
	/* the product's top bits: they depend on every bit of the key (the
	 * parent is its high half), whatever the table's size */
	return (size_t)((k * 0x9e3779b97f4a7c15ULL) >> (64 - __builtin_ctzll(cap)));
}

static __u32 merge_find(struct merge_map *m, __u64 k, __u32 next, bool *fresh)
{
	size_t i = merge_hash(k, m->cap);

	while (m->keys[i] != ~0ULL) {
		if (m->keys[i] == k) {
			*fresh = false;
			return m->vals[i];
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->keys[i] = k;
	m->vals[i] = next;
	*fresh = true;
	return next;
}

/* room for node n (and its histogram) in the merged thread, and the map
 * at most half full */
static int merge_grow(struct prof_snapshot *m, struct merge_map *map, __u32 *cap, __u32 n)
{
	struct prof_snap_thread *mt = &m->threads[0];
	size_t c, k;

	if (n >= *cap) {
		struct prof_snap_node *nodes;
		__u32 *hist;

		c = *cap ? (size_t)*cap * 2 : 1024;
		nodes = realloc(mt->nodes, c * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		mt->nodes = nodes;
		memset(nodes + *cap, 0, (c - *cap) * sizeof(*nodes));
		hist = realloc(m->hist, c * PROF_HIST_BUCKETS * sizeof(*hist));
		if (!hist)
			return -ENOMEM;
		m->hist = hist;
		memset(hist + (size_t)*cap * PROF_HIST_BUCKETS, 0,
		       (c - *cap) * PROF_HIST_BUCKETS * sizeof(*hist));
		*cap = (__u32)c;
	}
	if (2 * (size_t)n >= map->cap) {
		struct merge_map bigger;

		bigger.cap = map->cap ? map->cap * 2 : 2048;
		bigger.keys = malloc(bigger.cap * sizeof(*bigger.keys));
		bigger.vals = malloc(bigger.cap * sizeof(*bigger.vals));
		if (!bigger.keys || !bigger.vals) {
			free(bigger.keys);
			free(bigger.vals);
			return -ENOMEM;
		}
		memset(bigger.keys, 0xff, bigger.cap * sizeof(*bigger.keys));
		for (k = 0; k < map->cap; k++) {
			bool fresh;

			if (map->keys[k] != ~0ULL)
				merge_find(&bigger, map->keys[k], map->vals[k], &fresh);
		}
		free(map->keys);
		free(map->vals);
		*map = bigger;
	}
	return 0;
}

/* tid 0 and this name tell the renderers the thread is merged; the exited
 * threads' aggregate counts as the threads it holds */
static void merge_name(struct prof_snap_thread *mt, const struct prof_snapshot *s)
{
	unsigned long long nt = 0;
	__u32 i;

	for (i = 0; i < s->nthreads; i++)
		nt += s->threads[i].folds ? s->threads[i].folds : 1;
	if (nt == 1)
		snprintf(mt->name, sizeof(mt->name), "1 thread");
	else
		snprintf(mt->name, sizeof(mt->name), "all %llu threads", nt);
}

/* thread t's own figures (not its nodes') added to the merged thread's */
static void merge_thread_figures(struct prof_snap_thread *mt, const struct prof_snap_thread *t)
{
	__u32 b;

	mt->overflow += t->overflow;
	mt->unbalanced += t->unbalanced;
	if (t->oncpu_ns == PROF_SNAP_UNKNOWN || mt->oncpu_ns == PROF_SNAP_UNKNOWN)
		mt->oncpu_ns = PROF_SNAP_UNKNOWN;
	else
		mt->oncpu_ns += t->oncpu_ns;
	mt->frames += t->frames;
	mt->frame_ticks += t->frame_ticks;
	if (t->frame_max > mt->frame_max)
		mt->frame_max = t->frame_max;
	for (b = 0; b < PROF_HIST_BUCKETS; b++)
		mt->frame_hist[b] += t->frame_hist[b];
	if (t->ksched_slot != PROF_NO_SLOT)
		mt->ksched_slot = 0;
}

/*
 * the merged thread has exited when every thread has: each marked so, or
 * the process exited (exit() marks only its caller's thread)
 */
static void merge_exit_state(struct prof_snap_thread *mt, const struct prof_snapshot *s)
{
	__u32 i, alive = 0;

	for (i = 0; i < s->nthreads; i++) {
		if (s->threads[i].state != PROF_SLAB_EXITED)
			alive++;
		else if (s->threads[i].exit_tick > mt->exit_tick)
			mt->exit_tick = s->threads[i].exit_tick;
	}
	if (s->nthreads && (!alive || (s->flags & PROF_SEG_EXITED))) {
		mt->state = PROF_SLAB_EXITED;
		if (alive && s->exit_tick > mt->exit_tick)
			mt->exit_tick = s->exit_tick;
	} else {
		mt->exit_tick = 0;
	}
}

/* the merged nodes' full histograms, links, depth and child totals;
 * children in first-seen order.  0 or -ENOMEM */
static int merge_link(struct prof_snap_thread *mt, __u32 n)
{
	__u32 *last_child, j;

	for (j = 0; j < n; j++) {
		mt->nodes[j].hist_lo = 0;
		mt->nodes[j].hist_n = PROF_HIST_BUCKETS;
		mt->nodes[j].hist_off = (__u64)j * PROF_HIST_BUCKETS;
		mt->nodes[j].first_child = PROF_SNAP_NONE;
		mt->nodes[j].next_sibling = PROF_SNAP_NONE;
	}
	last_child = malloc(n * sizeof(*last_child));
	if (!last_child)
		return -ENOMEM;
	memset(last_child, 0xff, n * sizeof(*last_child));
	for (j = 1; j < n; j++) {
		struct prof_snap_node *c = &mt->nodes[j], *p = &mt->nodes[c->parent];

		c->depth = p->depth + 1;
		p->child_ticks += c->ticks;
		if (last_child[c->parent] == PROF_SNAP_NONE)
			p->first_child = j;
		else
			mt->nodes[last_child[c->parent]].next_sibling = j;
		last_child[c->parent] = j;
	}
	free(last_child);
	return 0;
}

/*
 * One pass over each thread, which may be a lazy snapshot's (loaded in
 * turn): its nodes mapped to merged ones by (merged parent, site), since
 * parents come before their children (node tables only grow), counters
 * and histograms added up.  Merged nodes are numbered in first-seen order.
 */
struct prof_snapshot *pc_merge_threads(const struct prof_snapshot *s)
{
	struct prof_snapshot *m = NULL;
	struct prof_snap_thread *mt;
	struct merge_map map = { 0 };
	struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
	const struct prof_snap_thread *t;
	__u32 *remap = NULL, nremap = 0, cap = 0, n, j;
	__u64 wall = 0;
	int err = -ENOMEM;

	/* the locks and plots stay the process's: summed by name, they need
	 * no thread of their own */
	m = prof_snap_shell(s);
	if (!m)
		goto cleanup;
	m->sites = calloc(s->nsites ? s->nsites : 1, sizeof(*m->sites));
	m->threads = calloc(1, sizeof(*m->threads));
	if (!m->sites || !m->threads)
		goto cleanup;
	if (s->nsites)
		memcpy(m->sites, s->sites, s->nsites * sizeof(*m->sites));
	m->nthreads = 1;
	mt = &m->threads[0];
	mt->tid = 0;
	mt->state = PROF_SLAB_ALIVE;
	mt->ksched_slot = PROF_NO_SLOT;
	merge_name(mt, s);
	err = merge_grow(m, &map, &cap, 1);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	mt->nodes[0].parent = 0;
	mt->nodes[0].site = PROF_SITE_NONE;
	n = 1;
	while ((t = prof_snap_next(&it))) {
		if (t->nnodes > nremap) {
			free(remap);
			nremap = t->nnodes;
			remap = malloc(nremap * sizeof(*remap));
			if (!remap)
				goto cleanup;
		}
		if (t->nnodes)
			remap[0] = 0;
		/* the threads' wall and CPU times add up, as their zones do */
		if (t->nnodes)
			wall += t->nodes[0].ticks;
		merge_thread_figures(mt, t);
		for (j = 1; j < t->nnodes; j++) {
			const struct prof_snap_node *src = &t->nodes[j];
			const __u32 *sh = prof_snap_hist(s, src);
			struct prof_snap_node *dst;
			__u32 p = src->parent < j ? remap[src->parent] : 0, k, *dh;
			bool fresh;

			err = merge_grow(m, &map, &cap, n);
			if (err)
				goto cleanup;
			err = -ENOMEM;
			remap[j] = merge_find(&map, (__u64)p << 32 | src->site, n, &fresh);
			dst = &mt->nodes[remap[j]];
			if (fresh) {
				n++;
				dst->site = src->site;
				dst->parent = p;
			}
			/* each figure as figures.h says threads combine it */
#define MERGE(f, unit, across, window, flat, slab, key)                                             \
	if (PROF_FIG_IS(SUM, across))                                                        \
		dst->f += src->f;                                                             \
	else if (src->f > dst->f)                                                            \
		dst->f = src->f;
			PROF_NODE_COUNTS(MERGE)
			PROF_NODE_TIMES(MERGE)
#undef MERGE
			dst->open += src->open;
			/* full histograms, summed */
			dh = &m->hist[(size_t)remap[j] * PROF_HIST_BUCKETS];
			for (k = 0; sh && k < src->hist_n; k++)
				if (src->hist_lo + k < PROF_HIST_BUCKETS)
					dh[src->hist_lo + k] += sh[k];
		}
	}
	err = it.err;
	if (err)
		goto cleanup;
	err = -ENOMEM;
	merge_exit_state(mt, s);
	mt->nnodes = n;
	m->nhist = (__u64)n * PROF_HIST_BUCKETS;
	err = merge_link(mt, n);
	if (err)
		goto cleanup;
	mt->nodes[0].ticks = wall > mt->nodes[0].child_ticks ? wall : mt->nodes[0].child_ticks;
	err = prof_snap_mark_recursion(mt, m->nsites);
cleanup:
	free(remap);
	free(map.keys);
	free(map.vals);
	if (err) {
		pc_snap_free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

__u64 pc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}
