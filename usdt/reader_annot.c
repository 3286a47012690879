// SPDX-License-Identifier: MIT
/*
 * reader_annot.c - the annotations of a segment's threads (slab.h,
 * "Annotations"), copied while the threads write them and checked: tables
 * within their parts, names that are the sites they say, indices within
 * their tables, texts terminated, numbers finite.  A ring is read as the
 * event ring is (reader_trace.c): what its thread overwrote during the copy
 * is left out, never shown torn.  The exited threads' aggregate has its
 * tables alone (the folded threads' locks and plots), copied inside its
 * seqlock as a reader of the aggregate's nodes copies them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "annot.h"
#include "fmt.h"
#include "reader_int.h"

/* a ring part of a slab: its newest entries whole, oldest first, as raw
 * words; their count in *n */
static int ring_read(const char *part, __u64 size, size_t esize, bool alive, __u64 **out,
		     __u64 *n)
{
	const struct prof_ring *r = (const void *)part;
	const __u64 *ev = (const __u64 *)prof_ring_events(r);
	__u64 nev = (size - PROF_RING_HDR_SIZE) / esize, words = esize / 8, h1, h2, lo, k, w;
	__u64 *raw, *v;

	*out = NULL;
	*n = 0;
	raw = malloc(nev * esize);
	if (!raw)
		return -ENOMEM;
	h1 = LDA(&r->head);
	for (k = 0; k < nev * words; k++)
		raw[k] = LDA(&ev[k]);
	h2 = LD(&r->head);
	if (h2 < h1) {
		free(raw);
		return -EINVAL;
	}
	lo = h1 > nev ? h1 - nev : 0;
	if (alive && h2 + 1 > nev && h2 + 1 - nev > lo)
		lo = h2 + 1 - nev;
	*n = h1 > lo ? h1 - lo : 0;
	v = malloc((*n ? *n : 1) * esize);
	if (!v) {
		free(raw);
		return -ENOMEM;
	}
	for (k = 0; k < *n; k++)
		for (w = 0; w < words; w++)
			v[k * words + w] = raw[((lo + k) & (nev - 1)) * words + w];
	free(raw);
	*out = v;
	return 0;
}

static int cmp_value(const void *a, const void *b)
{
	const struct prof_annot_value *x = a, *y = b;

	return PROF_CMP(x->node, y->node) ?: PROF_CMP(x->start, y->start) ?:
	       PROF_CMP(x->seq, y->seq);
}

/* the tables (plots, locks) of a slab's region, checked, by name */
static int read_tables(const char *mem, const struct seg_geom *g, __u32 nsites, const char *ar,
		       const struct prof_slab_hdr *sh, struct prof_annot_thread *t)
{
	struct prof_plot *pp;
	struct prof_lock *lp;
	__u32 i;
	int err;

	err = tables_copy(mem, g, nsites, ar, sh, &pp, &t->nplots, &lp, &t->nlocks);
	t->plots = err ? NULL : calloc(t->nplots ? t->nplots : 1, sizeof(*t->plots));
	t->locks = err ? NULL : calloc(t->nlocks ? t->nlocks : 1, sizeof(*t->locks));
	if (!err && (!t->plots || !t->locks))
		err = -ENOMEM;
	for (i = 0; !err && i < t->nplots; i++) {
		site_name(mem, g, nsites, pp[i].site, PROF_SITE_PLOT, t->plots[i].name);
		plot_from_slab(&t->plots[i], &pp[i]);
	}
	for (i = 0; !err && i < t->nlocks; i++) {
		site_name(mem, g, nsites, lp[i].site, PROF_SITE_LOCK, t->locks[i].name);
		lock_from_slab(&t->locks[i], &lp[i]);
	}
	free(pp);
	free(lp);
	return err;
}

/*
 * A part's ring of entries of esize bytes: *raw a copy of them (*n), for
 * the caller to free, and the array returned room for as many of osize;
 * NULL (nothing to free) and *err if the ring cannot be read or no memory
 */
static void *ring_take(const char *ar, const struct prof_region *part, size_t esize, bool alive,
		       __u64 **raw, __u64 *n, size_t osize, int *err)
{
	void *out;

	*err = ring_read(ar + part->off, part->size, esize, alive, raw, n);
	if (*err)
		return NULL;
	out = calloc(*n ? *n : 1, osize);
	if (!out) {
		free(*raw);
		*err = -ENOMEM;
	}
	return out;
}

/* the rings of a slab's region; entries that name nothing are left out */
static int read_rings(const char *ar, const struct seg_geom *g, bool alive,
		      struct prof_annot_thread *t)
{
	const struct prof_region *p = g->part;
	__u64 *raw, n, k, m;
	int err;

	t->points = ring_take(ar, &p[PROF_PART_POINTS], sizeof(struct prof_plot_point), alive, &raw,
			      &n, sizeof(*t->points), &err);
	if (!t->points)
		return err;
	for (k = m = 0; k < n; k++) {
		const struct prof_plot_point *e = (const void *)&raw[k * 3];

		if (e->plot < t->nplots && isfinite(e->value))
			t->points[m++] = (struct prof_annot_point){ e->tick, e->value, e->plot };
	}
	t->npoints = m;
	free(raw);

	t->msgs = ring_take(ar, &p[PROF_PART_MSGS], sizeof(struct prof_msg), alive, &raw, &n,
			    sizeof(*t->msgs), &err);
	if (!t->msgs)
		return err;
	for (k = 0; k < n; k++) {
		const struct prof_msg *e = (const void *)&raw[k * (sizeof(*e) / 8)];

		t->msgs[k].tick = e->tick;
		t->msgs[k].node = e->node;
		copy_name(t->msgs[k].text, e->text, sizeof(e->text));
	}
	t->nmsgs = n;
	free(raw);

	t->values = ring_take(ar, &p[PROF_PART_VALUES], sizeof(struct prof_value), alive, &raw, &n,
			      sizeof(*t->values), &err);
	if (!t->values)
		return err;
	for (k = m = 0; k < n; k++) {
		const struct prof_value *e = (const void *)&raw[k * (sizeof(*e) / 8)];
		struct prof_annot_value *o = &t->values[m];

		if ((e->kind != PROF_VALUE_NUM && e->kind != PROF_VALUE_TEXT_KIND) ||
		    !isfinite(e->value))
			continue;
		o->start = e->start;
		o->node = e->node;
		o->kind = e->kind;
		o->seq = k;
		o->value = e->kind == PROF_VALUE_NUM ? e->value : 0;
		if (e->kind == PROF_VALUE_TEXT_KIND)
			copy_name(o->text, e->text, sizeof(e->text));
		m++;
	}
	t->nvalues = m;
	free(raw);
	qsort(t->values, m, sizeof(*t->values), cmp_value);

	t->spans = ring_take(ar, &p[PROF_PART_SPANS], sizeof(struct prof_lock_span), alive, &raw, &n,
			     sizeof(*t->spans), &err);
	if (!t->spans)
		return err;
	for (k = m = 0; k < n; k++) {
		const struct prof_lock_span *e = (const void *)&raw[k * 3];

		if (e->lock < t->nlocks && !(e->flags & ~7u))
			t->spans[m++] = (struct prof_annot_span){ e->start, e->dur, e->lock, e->flags };
	}
	t->nspans = m;
	free(raw);
	return 0;
}

static void thread_free(struct prof_annot_thread *t)
{
	free(t->plots);
	free(t->locks);
	free(t->points);
	free(t->msgs);
	free(t->values);
	free(t->spans);
	memset(t, 0, sizeof(*t));
}

/* t out of a's threads */
static void thread_drop(struct prof_annot *a, struct prof_annot_thread *t)
{
	thread_free(t);
	memmove(t, t + 1, (size_t)(&a->threads[a->nthreads] - (t + 1)) * sizeof(*t));
	a->nthreads--;
}

/*
 * The aggregate's tables (the folded threads' locks and plots, slab.h
 * 3.2), copied inside agg_seq, as a thread of tid 0 without rings (it has
 * none); then the threads read before it that a fold since n0 put in it
 * are dropped, so that each counts once.  A fold that keeps running, or
 * more of them than the ring holds: left out.  0 or -errno
 */
static int read_agg_tables(const char *mem, const struct seg_geom *g, __u32 nsites, __u64 n0,
			   struct prof_annot *a)
{
	const struct prof_seg_hdr *h = (const void *)mem;
	const char *slab = mem + g->slabs_off + (__u64)g->agg_slab * g->slab_size;
	const struct prof_slab_hdr *sh = (const void *)slab;
	struct prof_annot_thread *t = &a->threads[a->nthreads];
	bool live = !g->snap_tick;
	__u64 n1 = 0, k;
	__u32 i;
	int tries, err;

	for (tries = 0; tries < 64; tries++) {
		__u32 seq = live ? LDA(&h->agg_seq) : 0;

		if (seq & 1) {
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
			continue;
		}
		if (LDA(&sh->magic) != PROF_SLAB_MAGIC || !LDA(&sh->annot))
			return 0;
		n1 = LD(&h->folds);
		err = read_tables(mem, g, nsites, slab + g->region[PROF_REGION_ANNOT].off, sh, t);
		prof_seq_fence_acq();
		if (!err && live && LD(&h->agg_seq) != seq) {
			thread_free(t);
			continue;
		}
		if (err) {
			thread_free(t);
			return err;
		}
		break;
	}
	if (tries == 64 || (live && n1 > n0 + PROF_FOLD_RING)) {
		thread_free(t);
		return 0;
	}
	t->slab = g->agg_slab;
	t->gen = LD(&sh->gen);
	a->nthreads++;
	for (k = n0 + 1; live && k <= n1; k++) {
		const struct prof_fold *f = &h->fold_ring[(k - 1) % PROF_FOLD_RING];
		__u32 fs = LD(&f->slab);
		__u64 fg = LD(&f->gen);

		for (i = 0; i + 1 < a->nthreads; i++)
			if (a->threads[i].slab == fs && a->threads[i].gen == fg) {
				thread_drop(a, &a->threads[i]);
				break;
			}
	}
	return 0;
}

int prof_seg_annot(const void *mem, size_t len, struct prof_annot **out)
{
	const struct prof_seg_hdr *h = mem;
	struct prof_annot *a;
	struct seg_geom g;
	__u32 nslabs, nsites, i;
	__u64 n0;
	int err;

	*out = NULL;
	err = seg_check(mem, len, &g);
	if (err)
		return err;
	nslabs = LDA(&h->nslabs);
	nsites = LDA(&h->nsites);
	if (nslabs > g.max_threads || nsites > g.max_sites)
		return -EINVAL;
	/* the folds before any slab (slab.h, 3.2) */
	n0 = g.folds ? LDA(&h->folds) : 0;
	a = calloc(1, sizeof(*a));
	/* and one for the aggregate */
	if (!a || !(a->threads = calloc((size_t)nslabs + 1, sizeof(*a->threads)))) {
		free(a);
		return -ENOMEM;
	}
	a->tick_hz = g.tick_hz;
	for (i = 0; i < nslabs && g.region[PROF_REGION_ANNOT].size; i++) {
		const char *slab = (const char *)mem + g.slabs_off + (__u64)i * g.slab_size;
		const struct prof_slab_hdr *sh = (const void *)slab;
		const char *ar = slab + g.region[PROF_REGION_ANNOT].off;
		struct prof_annot_thread *t = &a->threads[a->nthreads];
		bool live = !g.snap_tick && g.folds;
		__u64 gen = live ? LDA(&sh->gen) : 0;
		__u32 state;

		if (LDA(&sh->magic) != PROF_SLAB_MAGIC || (live && (gen & 1)))
			continue;
		state = LD(&sh->state);
		/* no annotation yet: its pages may not be there to read */
		if ((state != PROF_SLAB_ALIVE && state != PROF_SLAB_EXITED) || !LDA(&sh->annot))
			continue;
		t->tid = LD(&sh->tid);
		t->slab = i;
		t->gen = LD(&sh->gen);
		t->dropped = LD(&sh->annot_dropped);
		t->cut = LD(&sh->annot_cut);
		err = read_tables(mem, &g, nsites, ar, sh, t);
		if (!err)
			err = read_rings(ar, &g, state == PROF_SLAB_ALIVE, t);
		/* it changed hands during the copy: never two threads' */
		if (!err && live && LD(&sh->gen) != gen) {
			thread_free(t);
			continue;
		}
		if (err) {
			a->nthreads++;
			prof_annot__destroy(a);
			return err;
		}
		a->nthreads++;
	}
	err = g.folds && g.agg_slab != PROF_NO_SLOT && g.region[PROF_REGION_ANNOT].size
		      ? read_agg_tables(mem, &g, nsites, n0, a)
		      : 0;
	if (err) {
		prof_annot__destroy(a);
		return err;
	}
	*out = a;
	return 0;
}

void prof_annot__destroy(struct prof_annot *a)
{
	__u32 i;

	if (!a)
		return;
	for (i = 0; i < a->nthreads; i++)
		thread_free(&a->threads[i]);
	free(a->threads);
	free(a);
}

__u64 prof_annot_values(const struct prof_annot_thread *t, __u32 node, __u64 start,
			__u64 *first)
{
	__u64 lo = 0, hi = t->nvalues, end;

	while (lo < hi) {
		__u64 mid = lo + (hi - lo) / 2;
		const struct prof_annot_value *v = &t->values[mid];

		if (v->node < node || (v->node == node && v->start < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	for (end = lo; end < t->nvalues && t->values[end].node == node &&
		       t->values[end].start == start;
	     end++)
		;
	return end;
}
