// SPDX-License-Identifier: MIT
/*
 * usdt/prof_fold_annot.c - an exited thread's named locks and plots into
 * the aggregate's tables (slab.h, 3.2 and 3.3), as its zones go into the
 * aggregate's nodes (prof_fold.c): each figure combined as figures.h's
 * PROF_LOCK_FIGS and PROF_PLOT_FIGS say threads combine it, a plot by its
 * name, a lock by (name, the aggregate's node of the zone that took it).
 * Part of the fold: under the runtime's lock, inside agg_seq, never a
 * fast path.  The aggregate keeps the tables alone: a thread's rings (its
 * last points, messages, values and spans) are a timeline, not folded.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <string.h>
#include "runtime.h"
#include "figures.h"
#include "prof_int.h"

/* a double's relaxed store: a reader may be copying it (and drops the
 * copy, agg_seq having moved) */
#define FOLD_STORE_D(p, v)                                    \
	do {                                                  \
		double __v = (v);                             \
		__atomic_store((p), &__v, __ATOMIC_RELAXED);  \
	} while (0)
/* a figure's store, an integer's or a double's */
#define FOLD_SET(p, v)                                                             \
	_Generic(*(p), double : ({ FOLD_STORE_D((p), (v)); }), default : ({         \
			 __PROF_STORE((__u64 *)(p), (__u64)(v));                    \
		 }))

/*
 * The aggregate's tables, reserved at the first fold that has any (their
 * pages alone: nobody reads the aggregate's rings); false without room,
 * or a segment without annotations
 */
static bool agg_tables(struct prof_slab_hdr *a)
{
	const struct prof_region *p = prof_rt.part;
	__u64 base;

	if (__PROF_LOAD(&a->annot))
		return true;
	if (!prof_rt.region[PROF_REGION_ANNOT].size)
		return false;
	base = (__u64)((char *)a - (char *)prof_rt.seg) + prof_rt.region[PROF_REGION_ANNOT].off;
	if (prof_seg_reserve(base + p[PROF_PART_PLOTS].off, p[PROF_PART_PLOTS].size) ||
	    prof_seg_reserve(base + p[PROF_PART_LOCKS].off, p[PROF_PART_LOCKS].size)) {
		prof_seg_nospace();
		return false;
	}
	__PROF_STORE(&a->nplots, 0);
	__PROF_STORE(&a->nlocks, 0);
	__atomic_store_n(&a->annot, 1, __ATOMIC_RELEASE);
	return true;
}

/* the aggregate's plot of site, claimed if it has none; NULL when full */
static struct prof_plot *agg_plot(struct prof_slab_hdr *a, struct prof_plot *v, __u32 site)
{
	__u32 n = a->nplots, i;

	for (i = 0; i < n; i++)
		if (v[i].site == site)
			return &v[i];
	if (n >= prof_rt.part[PROF_PART_PLOTS].size / sizeof(*v))
		return NULL;
	memset(&v[n], 0, sizeof(v[n]));
	v[n].site = site;
	__atomic_store_n(&a->nplots, n + 1, __ATOMIC_RELEASE);
	return &v[n];
}

/* the aggregate's lock of (site, node), claimed if it has none; when the
 * table is full, the lock's first entry (its zone is lost, its figures
 * are not); NULL if it has none either */
static struct prof_lock *agg_lock(struct prof_slab_hdr *a, struct prof_lock *v, __u32 site,
				  __u32 node)
{
	__u32 n = a->nlocks, i;

	for (i = 0; i < n; i++)
		if (v[i].site == site && v[i].node == node)
			return &v[i];
	if (n >= prof_rt.part[PROF_PART_LOCKS].size / sizeof(*v)) {
		for (i = 0; i < n; i++)
			if (v[i].site == site)
				return &v[i];
		return NULL;
	}
	memset(&v[n], 0, sizeof(v[n]));
	v[n].site = site;
	v[n].node = node;
	__atomic_store_n(&a->nlocks, n + 1, __ATOMIC_RELEASE);
	return &v[n];
}

/* x into d as figures.h says threads combine each figure: fresh, d is
 * x's first; newest, x holds the newer point */
#define FOLD_FIG(f, unit, across, window, key)                 \
	if (PROF_FIG_IS(SUM, across))                          \
		FOLD_SET(&d->f, d->f + x->f);                  \
	if (PROF_FIG_IS(MAX, across) && (fresh || x->f > d->f)) \
		FOLD_SET(&d->f, x->f);                         \
	if (PROF_FIG_IS(MIN, across) && (fresh || x->f < d->f)) \
		FOLD_SET(&d->f, x->f);                         \
	if (PROF_FIG_IS(NEWEST, across) && newest)             \
		FOLD_SET(&d->f, x->f);

static void fold_plot(struct prof_plot *d, const struct prof_plot *x)
{
	bool fresh = !d->count, newest = fresh || x->last_tick >= d->last_tick;

	PROF_PLOT_FIGS(FOLD_FIG)
}

static void fold_lock(struct prof_lock *d, const struct prof_lock *x)
{
	bool fresh = !d->acquisitions && !d->unheld, newest = false;
	unsigned int b;

	PROF_LOCK_FIGS(FOLD_FIG)
	(void)newest;
	for (b = 0; b < PROF_LOCK_HIST; b++)
		if (x->wait_hist[b])
			__PROF_ADD(&d->wait_hist[b], x->wait_hist[b]);
}

void prof_fold_annot(struct prof_slab_hdr *h, struct prof_slab_hdr *a, const __u32 *map, __u32 nn)
{
	const struct prof_region *p = prof_rt.part;
	char *hr, *ar;
	const struct prof_plot *hp;
	const struct prof_lock *hl;
	__u32 np, nl, i;

	if (!__PROF_LOAD(&h->annot))
		return;
	np = h->nplots;
	nl = h->nlocks;
	if (!agg_tables(a)) {
		__PROF_ADD(&a->annot_dropped, np + nl);
		return;
	}
	hr = prof_rt_region(h, PROF_REGION_ANNOT);
	ar = prof_rt_region(a, PROF_REGION_ANNOT);
	hp = (const struct prof_plot *)(hr + p[PROF_PART_PLOTS].off);
	hl = (const struct prof_lock *)(hr + p[PROF_PART_LOCKS].off);
	for (i = 0; i < np; i++) {
		struct prof_plot *d;

		/* claimed, and no finite point since: nothing to fold */
		if (!hp[i].count)
			continue;
		d = agg_plot(a, (struct prof_plot *)(ar + p[PROF_PART_PLOTS].off), hp[i].site);
		if (d)
			fold_plot(d, &hp[i]);
		else
			__PROF_ADD(&a->annot_dropped, 1);
	}
	for (i = 0; i < nl; i++) {
		/* the zone that took it: the aggregate's node of its path */
		__u32 m = hl[i].node < nn ? map[hl[i].node] : 1;
		struct prof_lock *d =
			agg_lock(a, (struct prof_lock *)(ar + p[PROF_PART_LOCKS].off), hl[i].site, m);

		if (d)
			fold_lock(d, &hl[i]);
		else
			__PROF_ADD(&a->annot_dropped, 1);
	}
	__PROF_ADD(&a->annot_dropped, h->annot_dropped);
	__PROF_ADD(&a->annot_cut, h->annot_cut);
}
