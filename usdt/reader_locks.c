// SPDX-License-Identifier: MIT
/*
 * reader_locks.c - the annotations' tables (slab.h, "Annotations"): each
 * thread's named locks and plots, copied and checked, as a snapshot's
 * (read with it, windowed as figures.h says, summed by name for the
 * views) and as reader_annot.c's live look at a segment.  In libprof: the
 * report at exit has them too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "annot.h"
#include "reader_int.h"

/*
 * A plot's figure: a number, or unknown (NAN): what a window could not tell,
 * written into an image (figures.h), and whatever else is no finite
 * number (a runtime keeps finite points only: a hostile writer's)
 */
static double finite_or_unknown(double v)
{
	return isfinite(v) ? v : NAN;
}

/* site idx's name, if it is a name of that kind; -EINVAL otherwise */
PROF_HIDDEN int site_name(const char *mem, const struct seg_geom *g, __u32 nsites, __u32 idx,
			  __u32 flag, char *name)
{
	const struct prof_site_ent *e;

	if (idx >= nsites)
		return -EINVAL;
	e = (const void *)(mem + g->sites_off + (__u64)idx * g->site_size);
	if (!(LD(&e->flags) & flag))
		return -EINVAL;
	memcpy(name, e->name, PROF_NAME_MAX);
	name[PROF_NAME_MAX - 1] = 0;
	return 0;
}

/*
 * The tables (plots, locks) of a slab's annotation region ar, copied and
 * checked: each names a site of its kind, numbers finite (else 0).  Into
 * *pp and *lp (malloc'd, their counts in *np and *nl); 0 or -errno
 */
PROF_HIDDEN int tables_copy(const char *mem, const struct seg_geom *g, __u32 nsites, const char *ar,
			    const struct prof_slab_hdr *sh, struct prof_plot **pp, __u32 *np,
			    struct prof_lock **lp, __u32 *nl)
{
	const struct prof_plot *sp = (const void *)(ar + g->part[PROF_PART_PLOTS].off);
	const struct prof_lock *sl = (const void *)(ar + g->part[PROF_PART_LOCKS].off);
	char name[PROF_NAME_MAX];
	__u32 i;

	*pp = NULL;
	*lp = NULL;
	*np = LDA(&sh->nplots);
	*nl = LDA(&sh->nlocks);
	if (*np > g->part[PROF_PART_PLOTS].size / sizeof(*sp) ||
	    *nl > g->part[PROF_PART_LOCKS].size / sizeof(*sl))
		return -EINVAL;
	*pp = malloc((*np ? *np : 1) * sizeof(**pp));
	*lp = malloc((*nl ? *nl : 1) * sizeof(**lp));
	if (!*pp || !*lp)
		return -ENOMEM;
	for (i = 0; i < *np; i++) {
		struct prof_plot *p = &(*pp)[i];

		memcpy(p, &sp[i], sizeof(*p));
		if (site_name(mem, g, nsites, p->site, PROF_SITE_PLOT, name))
			return -EINVAL;
		p->min = finite_or_unknown(p->min);
		p->max = finite_or_unknown(p->max);
		p->last = finite_or_unknown(p->last);
		p->sum = finite_or_unknown(p->sum);
	}
	for (i = 0; i < *nl; i++) {
		memcpy(&(*lp)[i], &sl[i], sizeof(sl[i]));
		if (site_name(mem, g, nsites, (*lp)[i].site, PROF_SITE_LOCK, name))
			return -EINVAL;
	}
	return 0;
}

/* a lock's or plot's figures from x to d, two structs with the same
 * fields (figures.h) */
#define FIG_COPY(f, unit, across, window, key) d->f = x->f;
#define LOCK_FIGS_COPY()                                                  \
	do {                                                              \
		PROF_LOCK_FIGS(FIG_COPY)                                  \
		memcpy(d->wait_hist, x->wait_hist, sizeof(d->wait_hist)); \
	} while (0)
#define PLOT_FIGS_COPY()                 \
	do {                             \
		PROF_PLOT_FIGS(FIG_COPY) \
	} while (0)

PROF_HIDDEN void lock_from_slab(struct prof_annot_lock *d, const struct prof_lock *x)
{
	d->node = x->node;
	LOCK_FIGS_COPY();
}

PROF_HIDDEN void plot_from_slab(struct prof_annot_plot *d, const struct prof_plot *x)
{
	PLOT_FIGS_COPY();
}

PROF_HIDDEN int reader_annot_thread(const char *mem, const struct seg_geom *g, __u32 nsites,
				    const char *slab, const struct prof_snap_thread *t,
				    struct prof_snapshot *s)
{
	const struct prof_slab_hdr *sh = (const void *)slab;
	struct prof_snap_plot *vp;
	struct prof_snap_lock *vl;
	struct prof_plot *pp;
	struct prof_lock *lp;
	__u32 np, nl, i;
	int err;

	/* no annotation yet: its pages may not be there to read */
	if (!g->region[PROF_REGION_ANNOT].size || !LDA(&sh->annot))
		return 0;
	err = tables_copy(mem, g, nsites, slab + g->region[PROF_REGION_ANNOT].off, sh, &pp, &np,
			  &lp, &nl);
	/* tables that are not what they say: none of this thread's (its
	 * zones are read as every other reader reads them: prof_seg_flat
	 * looks at no annotation) */
	if (err == -EINVAL) {
		np = nl = 0;
		err = 0;
	}
	vp = err || !np ? NULL : realloc(s->plots, (s->nplots + np) * sizeof(*vp));
	if (vp)
		s->plots = vp;
	vl = err || !nl || (np && !vp) ? NULL : realloc(s->locks, (s->nlocks + nl) * sizeof(*vl));
	if (vl)
		s->locks = vl;
	if (!err && ((np && !vp) || (nl && !vl)))
		err = -ENOMEM;
	for (i = 0; !err && i < np; i++) {
		struct prof_snap_plot *d = &s->plots[s->nplots++];
		const struct prof_plot *x = &pp[i];

		memset(d, 0, sizeof(*d));
		d->tid = t->tid;
		d->start_tick = t->start_tick;
		d->site = x->site;
		PLOT_FIGS_COPY();
	}
	for (i = 0; !err && i < nl; i++) {
		struct prof_snap_lock *d = &s->locks[s->nlocks++];
		const struct prof_lock *x = &lp[i];

		memset(d, 0, sizeof(*d));
		d->tid = t->tid;
		d->start_tick = t->start_tick;
		d->site = x->site;
		d->node = x->node;
		LOCK_FIGS_COPY();
	}
	free(pp);
	free(lp);
	return err;
}

PROF_HIDDEN void reader_annot_drop(struct prof_snapshot *s, __u32 tid, __u64 start_tick)
{
	__u32 i, n;

	for (i = n = 0; i < s->nlocks; i++)
		if (s->locks[i].tid != tid || s->locks[i].start_tick != start_tick)
			s->locks[n++] = s->locks[i];
	s->nlocks = n;
	for (i = n = 0; i < s->nplots; i++)
		if (s->plots[i].tid != tid || s->plots[i].start_tick != start_tick)
			s->plots[n++] = s->plots[i];
	s->nplots = n;
}

int prof_snap_annot_copy(struct prof_snapshot *d, const struct prof_snapshot *s)
{
	d->locks = NULL;
	d->plots = NULL;
	d->nlocks = d->nplots = 0;
	if (s->nlocks && !(d->locks = malloc(s->nlocks * sizeof(*d->locks))))
		return -ENOMEM;
	if (s->nplots && !(d->plots = malloc(s->nplots * sizeof(*d->plots)))) {
		free(d->locks);
		d->locks = NULL;
		return -ENOMEM;
	}
	if (s->nlocks)
		memcpy(d->locks, s->locks, s->nlocks * sizeof(*d->locks));
	if (s->nplots)
		memcpy(d->plots, s->plots, s->nplots * sizeof(*d->plots));
	d->nlocks = s->nlocks;
	d->nplots = s->nplots;
	return 0;
}

struct prof_snapshot *prof_snap_shell(const struct prof_snapshot *s)
{
	struct prof_snapshot *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	*d = *s;
	d->sites = NULL;
	d->threads = NULL;
	d->hist = NULL;
	d->lazy = NULL;
	d->nthreads = 0;
	if (prof_snap_annot_copy(d, s)) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

/* the entry of *v (n of them, esize bytes each, each starting with its
 * name) named name, appended zeroed if there is none (*fresh says so);
 * NULL without memory */
static void *by_name(void **v, size_t *n, size_t esize, const char *name, bool *fresh)
{
	char *e;
	size_t j;

	for (j = 0; j < *n; j++)
		if (!strcmp((char *)*v + j * esize, name)) {
			if (fresh)
				*fresh = false;
			return (char *)*v + j * esize;
		}
	e = realloc(*v, (*n + 1) * esize);
	if (!e)
		return NULL;
	*v = e;
	e += (*n)++ * esize;
	memset(e, 0, esize);
	memcpy(e, name, PROF_NAME_MAX);
	if (fresh)
		*fresh = true;
	return e;
}

static int cmp_lock_sum(const void *a, const void *b)
{
	const struct prof_annot_lock_sum *x = a, *y = b;

	if (x->wait_ticks != y->wait_ticks)
		return x->wait_ticks > y->wait_ticks ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_plot_sum(const void *a, const void *b)
{
	return strcmp(((const struct prof_annot_plot_sum *)a)->name,
		      ((const struct prof_annot_plot_sum *)b)->name);
}

/*
 * x added into d (fresh: d is x's first) as figures.h says threads and
 * zones combine each figure; an unknown max (PROF_SNAP_UNKNOWN, NAN) or
 * min makes the sum's unknown, the newest point wins by its tick
 */
static double fig_min(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
}

static double fig_max(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

#define FIG_ADD(f, unit, across, window, key)              \
	if (PROF_FIG_IS(SUM, across))                      \
		d->f += x->f;                              \
	if (PROF_FIG_IS(MAX, across))                      \
		d->f = fresh ? x->f : FIG_MAX(d->f, x->f); \
	if (PROF_FIG_IS(MIN, across))                      \
		d->f = fresh ? x->f : fig_min(d->f, x->f); \
	if (PROF_FIG_IS(NEWEST, across) && newest)         \
		d->f = x->f;
#define LOCK_ADD()                      \
	do {                            \
		bool newest = false;    \
		PROF_LOCK_FIGS(FIG_ADD) \
		(void)newest;           \
	} while (0)
#define PLOT_ADD()                                                   \
	do {                                                         \
		bool newest = fresh || x->last_tick >= d->last_tick; \
		PROF_PLOT_FIGS(FIG_ADD)                              \
	} while (0)

/* integers: PROF_SNAP_UNKNOWN is above every known value */
#define FIG_MAX(a, b) _Generic((a), double : fig_max, default : u64_max)(a, b)
static __u64 u64_max(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

static void lock_add_annot(struct prof_annot_lock_sum *d, const struct prof_annot_lock *x,
			   bool fresh)
{
	LOCK_ADD();
}

static void lock_add_snap(struct prof_annot_lock_sum *d, const struct prof_snap_lock *x, bool fresh)
{
	LOCK_ADD();
}

static void plot_add_annot(struct prof_annot_plot_sum *d, const struct prof_annot_plot *x,
			   bool fresh)
{
	PLOT_ADD();
}

static void plot_add_snap(struct prof_annot_plot_sum *d, const struct prof_snap_plot *x, bool fresh)
{
	PLOT_ADD();
}

long prof_annot_lock_sums(const struct prof_annot *a, struct prof_annot_lock_sum **out)
{
	struct prof_annot_lock_sum *v = NULL;
	size_t n = 0;
	bool fresh;
	__u32 i, k;

	for (i = 0; i < a->nthreads; i++) {
		for (k = 0; k < a->threads[i].nlocks; k++) {
			const struct prof_annot_lock *l = &a->threads[i].locks[k];
			struct prof_annot_lock_sum *s;

			s = by_name((void **)&v, &n, sizeof(*v), l->name, &fresh);
			if (!s) {
				free(v);
				return -ENOMEM;
			}
			lock_add_annot(s, l, fresh);
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_lock_sum);
	*out = v;
	return (long)n;
}

long prof_annot_plot_sums(const struct prof_annot *a, struct prof_annot_plot_sum **out)
{
	struct prof_annot_plot_sum *v = NULL;
	size_t n = 0;
	bool fresh;
	__u32 i, k;

	for (i = 0; i < a->nthreads; i++) {
		for (k = 0; k < a->threads[i].nplots; k++) {
			const struct prof_annot_plot *p = &a->threads[i].plots[k];
			struct prof_annot_plot_sum *s;

			if (!p->count)
				continue;
			s = by_name((void **)&v, &n, sizeof(*v), p->name, &fresh);
			if (!s) {
				free(v);
				return -ENOMEM;
			}
			plot_add_annot(s, p, fresh);
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_plot_sum);
	*out = v;
	return (long)n;
}

void prof_snap_annot_free(struct prof_snap_annot *a)
{
	if (!a)
		return;
	free(a->plots);
	free(a->locks);
	free(a);
}

/* a site's name if it is one of that kind, else NULL */
static const char *snap_name(const struct prof_snapshot *s, __u32 site, __u32 flag)
{
	return site < s->nsites && (s->sites[site].flags & flag) ? s->sites[site].name : NULL;
}

struct prof_snap_annot *prof_snap_annot_sum(const struct prof_snapshot *s)
{
	struct prof_snap_annot *a = calloc(1, sizeof(*a));
	bool fresh;
	__u32 i;

	if (!a)
		return NULL;
	for (i = 0; i < s->nplots; i++) {
		const struct prof_snap_plot *p = &s->plots[i];
		const char *name = snap_name(s, p->site, PROF_SITE_PLOT);
		struct prof_annot_plot_sum *d;

		/* none in the window: nothing to say of it */
		if (!p->count || !name)
			continue;
		d = by_name((void **)&a->plots, &a->nplots, sizeof(*d), name, &fresh);
		if (!d)
			goto nomem;
		plot_add_snap(d, p, fresh);
	}
	for (i = 0; i < s->nlocks; i++) {
		const struct prof_snap_lock *l = &s->locks[i];
		const char *name = snap_name(s, l->site, PROF_SITE_LOCK);
		struct prof_annot_lock_sum *d;

		if (!name)
			continue;
		d = by_name((void **)&a->locks, &a->nlocks, sizeof(*d), name, &fresh);
		if (!d)
			goto nomem;
		lock_add_snap(d, l, fresh);
	}
	if (!a->nplots && !a->nlocks) {
		free(a);
		errno = 0;
		return NULL;
	}
	if (a->nlocks)
		qsort(a->locks, a->nlocks, sizeof(*a->locks), cmp_lock_sum);
	if (a->nplots)
		qsort(a->plots, a->nplots, sizeof(*a->plots), cmp_plot_sum);
	return a;
nomem:
	prof_snap_annot_free(a);
	errno = ENOMEM;
	return NULL;
}
