// SPDX-License-Identifier: MIT
/*
 * profd_hist.c - history frames as reverse deltas.
 *
 * profd keeps one full snapshot per process, its newest state, and for
 * each older frame only what that frame held that the frame after it did
 * not: its header and threads (small), the sites if they differ, and the
 * nodes whose counters (or histogram) differ, each with its histogram.
 * A frame is rebuilt exactly by taking a copy of the newest state back
 * through the deltas of the frames after it, newest first (see
 * ARCHITECTURE.md for why reverse deltas rather than forward ones).
 *
 * Nodes are matched by thread index and node index, whatever they stand
 * for: a delta is a difference of two arrays, not of two call trees, so a
 * slab reused by another thread, a thread gone or a table that shrank are
 * all rebuilt as they were.  Histograms move: a rebuilt snapshot's pool
 * holds each node's buckets wherever they fit, and every reader finds
 * them through the node (hist_off), never by position.
 *
 * Nothing here logs or reads profd's configuration: the unit test links
 * it alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profd.h"

/* a node whose buckets were not kept: an offset past any pool */
#define HIST_NONE (~0ull)

struct hist_dthread {
	struct prof_snap_thread t; /* the older thread; nodes NULL */
	__u32 nchanged;
	__u32 *idx;		      /* the nodes it held that differ, ascending */
	struct prof_snap_node *nodes; /* their values; hist_off into the delta's pool */
};

struct hist_delta {
	struct prof_snapshot s;	      /* the older header; its pointers NULL */
	struct prof_snap_site *sites; /* the older sites, or NULL: the newer's */
	struct hist_dthread *threads; /* s.nthreads of them */
	__u32 *hist;		      /* the changed nodes' buckets */
	__u64 bytes;
	bool annot; /* s's locks and plots are the older's own;
				       * else the same as the newer's */
};

__u64 hist_snap_bytes(const struct prof_snapshot *snap)
{
	__u64 b = sizeof(*snap) + (__u64)snap->nsites * sizeof(*snap->sites) +
		  (__u64)snap->nthreads * sizeof(*snap->threads) + snap->nhist * sizeof(__u32) +
		  (__u64)snap->nlocks * sizeof(*snap->locks) +
		  (__u64)snap->nplots * sizeof(*snap->plots);
	__u32 i;

	for (i = 0; i < snap->nthreads; i++)
		b += (__u64)snap->threads[i].nnodes * sizeof(struct prof_snap_node);
	return b;
}

__u64 hist_delta__bytes(const struct hist_delta *d)
{
	return d ? d->bytes : 0;
}

void hist_delta__destroy(struct hist_delta *d)
{
	__u32 i;

	if (!d)
		return;
	for (i = 0; d->threads && i < d->s.nthreads; i++) {
		free(d->threads[i].idx);
		free(d->threads[i].nodes);
	}
	free(d->threads);
	free(d->sites);
	free(d->hist);
	free(d->s.locks);
	free(d->s.plots);
	free(d);
}

bool hist_annot_same(const struct prof_snapshot *a, const struct prof_snapshot *b)
{
	return a->nlocks == b->nlocks && a->nplots == b->nplots &&
	       (!a->nlocks || !memcmp(a->locks, b->locks, a->nlocks * sizeof(*a->locks))) &&
	       (!a->nplots || !memcmp(a->plots, b->plots, a->nplots * sizeof(*a->plots)));
}

/* a node's buckets, or NULL (none kept, or out of its pool) */
static const __u32 *node_hist(const __u32 *pool, __u64 npool, const struct prof_snap_node *n)
{
	if (!n->hist_n || !pool || n->hist_off > npool || n->hist_n > npool - n->hist_off)
		return NULL;
	return pool + n->hist_off;
}

/* the same node: every field but where its buckets lie, and the buckets */
static bool node_same(const struct prof_snapshot *a, const struct prof_snap_node *x,
		      const struct prof_snapshot *b, const struct prof_snap_node *y)
{
	struct prof_snap_node m = *x, n = *y;
	const __u32 *hx, *hy;

	m.hist_off = n.hist_off = 0;
	if (memcmp(&m, &n, sizeof(m)))
		return false;
	if (!x->hist_n)
		return true;
	hx = node_hist(a->hist, a->nhist, x);
	hy = node_hist(b->hist, b->nhist, y);
	if (!hx || !hy)
		return hx == hy;
	return !memcmp(hx, hy, x->hist_n * sizeof(*hx));
}

/* the older thread's entry: the nodes that differ from the newer's (nt,
 * NULL if the newer has no thread at that index); scratch holds ot's
 * nnodes indices */
static int delta_thread(struct hist_delta *d, struct hist_dthread *dt,
			const struct prof_snapshot *o, const struct prof_snap_thread *ot,
			const struct prof_snapshot *n, const struct prof_snap_thread *nt,
			__u32 *scratch, __u64 *nhist)
{
	__u32 j, k, cnt = 0;

	dt->t = *ot;
	dt->t.nodes = NULL;
	for (j = 0; j < ot->nnodes; j++)
		if (!nt || j >= nt->nnodes || !node_same(o, &ot->nodes[j], n, &nt->nodes[j]))
			scratch[cnt++] = j;
	dt->nchanged = cnt;
	if (!cnt)
		return 0;
	dt->idx = malloc(cnt * sizeof(*dt->idx));
	dt->nodes = malloc(cnt * sizeof(*dt->nodes));
	if (!dt->idx || !dt->nodes)
		return -ENOMEM;
	memcpy(dt->idx, scratch, cnt * sizeof(*dt->idx));
	for (k = 0; k < cnt; k++) {
		dt->nodes[k] = ot->nodes[scratch[k]];
		/* for now: where the buckets lie in o's pool; moved below */
		*nhist += node_hist(o->hist, o->nhist, &dt->nodes[k]) ? dt->nodes[k].hist_n : 0;
	}
	d->bytes += sizeof(*dt) + cnt * (sizeof(*dt->idx) + sizeof(*dt->nodes));
	return 0;
}

struct hist_delta *hist_delta__new(const struct prof_snapshot *older,
				   const struct prof_snapshot *newer)
{
	struct hist_delta *d;
	__u32 *scratch = NULL, maxn = 1, i, k;
	__u64 nhist = 0, at = 0;
	int err = -ENOMEM;

	if (older->lazy || newer->lazy) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	d->s = *older;
	d->s.sites = NULL;
	d->s.threads = NULL;
	d->s.hist = NULL;
	d->s.lazy = NULL;
	d->s.locks = NULL;
	d->s.plots = NULL;
	d->bytes = sizeof(*d);
	/* a process's locks and plots are few: a frame keeps them whole,
	 * unless they are the newer frame's */
	if (!hist_annot_same(older, newer)) {
		if (prof_snap_annot_copy(&d->s, older))
			goto fail;
		d->annot = true;
		d->bytes += older->nlocks * sizeof(*older->locks) +
			    older->nplots * sizeof(*older->plots);
	}
	if (older->nsites != newer->nsites ||
	    memcmp(older->sites, newer->sites, older->nsites * sizeof(*older->sites))) {
		d->sites = malloc((older->nsites ? older->nsites : 1) * sizeof(*d->sites));
		if (!d->sites)
			goto fail;
		memcpy(d->sites, older->sites, older->nsites * sizeof(*d->sites));
		d->bytes += older->nsites * sizeof(*d->sites);
	}
	for (i = 0; i < older->nthreads; i++)
		if (older->threads[i].nnodes > maxn)
			maxn = older->threads[i].nnodes;
	scratch = malloc(maxn * sizeof(*scratch));
	d->threads = calloc(older->nthreads ? older->nthreads : 1, sizeof(*d->threads));
	if (!scratch || !d->threads)
		goto fail;
	for (i = 0; i < older->nthreads; i++) {
		err = delta_thread(d, &d->threads[i], older, &older->threads[i], newer,
				   i < newer->nthreads ? &newer->threads[i] : NULL, scratch,
				   &nhist);
		if (err)
			goto fail;
	}
	/* the changed nodes' buckets, packed in a pool of the delta's own */
	err = -ENOMEM;
	if (nhist) {
		d->hist = malloc(nhist * sizeof(*d->hist));
		if (!d->hist)
			goto fail;
	}
	d->s.nhist = nhist;
	for (i = 0; i < older->nthreads; i++) {
		struct hist_dthread *dt = &d->threads[i];

		for (k = 0; k < dt->nchanged; k++) {
			struct prof_snap_node *nd = &dt->nodes[k];
			const __u32 *h = node_hist(older->hist, older->nhist, nd);

			if (!h) {
				nd->hist_off = HIST_NONE;
				continue;
			}
			memcpy(d->hist + at, h, nd->hist_n * sizeof(*h));
			nd->hist_off = at;
			at += nd->hist_n;
		}
	}
	d->bytes += nhist * sizeof(*d->hist);
	free(scratch);
	return d;
fail:
	free(scratch);
	hist_delta__destroy(d);
	errno = -err;
	return NULL;
}

/* free the node tables of threads [from, to) */
static void free_threads(struct prof_snapshot *s, __u32 from, __u32 to)
{
	for (; from < to; from++) {
		free(s->threads[from].nodes);
		s->threads[from].nodes = NULL;
	}
}

struct prof_snapshot *hist_snap_clone(const struct prof_snapshot *s)
{
	struct prof_snapshot *c;
	__u32 i;

	if (s->lazy) {
		errno = EINVAL;
		return NULL;
	}
	c = prof_snap_shell(s);
	if (!c)
		return NULL;
	c->sites = malloc((s->nsites ? s->nsites : 1) * sizeof(*c->sites));
	c->threads = calloc(s->nthreads ? s->nthreads : 1, sizeof(*c->threads));
	c->hist = malloc((s->nhist ? s->nhist : 1) * sizeof(*c->hist));
	if (!c->sites || !c->threads || !c->hist)
		goto fail;
	memcpy(c->sites, s->sites, s->nsites * sizeof(*c->sites));
	if (s->nhist)
		memcpy(c->hist, s->hist, s->nhist * sizeof(*c->hist));
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &c->threads[i];

		*t = s->threads[i];
		t->nodes = NULL;
		c->nthreads = i + 1;
		if (!s->threads[i].nnodes)
			continue;
		t->nodes = malloc(t->nnodes * sizeof(*t->nodes));
		if (!t->nodes)
			goto fail;
		memcpy(t->nodes, s->threads[i].nodes, t->nnodes * sizeof(*t->nodes));
	}
	return c;
fail:
	prof_snapshot__destroy(c);
	errno = ENOMEM;
	return NULL;
}

int hist_delta__apply(struct prof_snapshot *w, const struct hist_delta *d)
{
	struct prof_snap_site *sites = w->sites;
	struct prof_snap_thread *threads = w->threads;
	__u32 *hist = w->hist, i, k, nt = d->s.nthreads;
	__u64 nhist = w->nhist;
	struct prof_snapshot an = { 0 };

	if (w->lazy)
		return -EINVAL;
	/* the older locks and plots, if they differ; else w's stay */
	if (d->annot ? prof_snap_annot_copy(&an, &d->s) : prof_snap_annot_copy(&an, w))
		return -ENOMEM;
	/* room first; on a failure w is only fit to be destroyed */
	if (d->sites) {
		sites = malloc((d->s.nsites ? d->s.nsites : 1) * sizeof(*sites));
		if (!sites) {
			sites = w->sites;
			goto nomem;
		}
		memcpy(sites, d->sites, d->s.nsites * sizeof(*sites));
	}
	if (d->s.nhist) {
		hist = realloc(w->hist, (w->nhist + d->s.nhist) * sizeof(*hist));
		if (!hist)
			goto nomem;
		w->hist = hist;
	}
	if (nt > w->nthreads) {
		threads = realloc(w->threads, nt * sizeof(*threads));
		if (!threads)
			goto nomem;
		memset(threads + w->nthreads, 0, (nt - w->nthreads) * sizeof(*threads));
		w->threads = threads;
		w->nthreads = nt;
	}
	for (i = 0; i < nt; i++) {
		const struct hist_dthread *dt = &d->threads[i];
		struct prof_snap_thread *t = &w->threads[i];

		if (dt->t.nnodes != t->nnodes) {
			struct prof_snap_node *v =
				realloc(t->nodes, (dt->t.nnodes ? dt->t.nnodes : 1) * sizeof(*v));

			if (!v)
				goto nomem;
			t->nodes = v;
		}
	}
	/* now nothing fails */
	if (d->sites) {
		free(w->sites);
		w->sites = sites;
	}
	free_threads(w, nt, w->nthreads);
	for (i = 0; i < nt; i++) {
		const struct hist_dthread *dt = &d->threads[i];
		struct prof_snap_thread *t = &w->threads[i];
		struct prof_snap_node *nodes = t->nodes;

		*t = dt->t;
		t->nodes = nodes;
		for (k = 0; k < dt->nchanged; k++) {
			struct prof_snap_node *n = &t->nodes[dt->idx[k]];

			*n = dt->nodes[k];
			if (n->hist_n && n->hist_off < d->s.nhist) {
				memcpy(w->hist + nhist, d->hist + n->hist_off,
				       n->hist_n * sizeof(*w->hist));
				n->hist_off = nhist;
				nhist += n->hist_n;
			} else {
				n->hist_off = HIST_NONE;
			}
		}
	}
	/* the older header, with w's own arrays */
	sites = w->sites;
	threads = w->threads;
	hist = w->hist;
	free(w->locks);
	free(w->plots);
	*w = d->s;
	w->sites = sites;
	w->threads = threads;
	w->hist = hist;
	w->nhist = nhist;
	w->locks = an.locks;
	w->plots = an.plots;
	w->nlocks = an.nlocks;
	w->nplots = an.nplots;
	return 0;
nomem:
	free(an.locks);
	free(an.plots);
	if (sites != w->sites)
		free(sites);
	return -ENOMEM;
}

bool hist_snap_same(const struct prof_snapshot *a, const struct prof_snapshot *b)
{
	struct prof_snapshot x = *a, y = *b;
	__u32 i, j;

	x.sites = y.sites = NULL;
	x.threads = y.threads = NULL;
	x.hist = y.hist = NULL;
	x.nhist = y.nhist = 0;
	x.locks = y.locks = NULL;
	x.plots = y.plots = NULL;
	if (memcmp(&x, &y, sizeof(x)) ||
	    memcmp(a->sites, b->sites, a->nsites * sizeof(*a->sites)) || !hist_annot_same(a, b))
		return false;
	for (i = 0; i < a->nthreads; i++) {
		struct prof_snap_thread s = a->threads[i], t = b->threads[i];

		s.nodes = t.nodes = NULL;
		if (memcmp(&s, &t, sizeof(s)))
			return false;
		for (j = 0; j < s.nnodes; j++)
			if (!node_same(a, &a->threads[i].nodes[j], b, &b->threads[i].nodes[j]))
				return false;
	}
	return true;
}
