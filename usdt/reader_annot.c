// SPDX-License-Identifier: MIT
/*
 * reader_annot.c - the annotations of a segment's threads (slab.h,
 * "Annotations"), copied while the threads write them and checked: tables
 * within their parts, names that are the sites they say, indices within
 * their tables, texts terminated, numbers finite.  A ring is read as the
 * event ring is (reader_trace.c): what its thread overwrote during the copy
 * is left out, never shown torn.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "annot.h"
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

static double finite_or_0(double v)
{
	return isfinite(v) ? v : 0;
}

/* site idx's name, if it is a name of that kind; -EINVAL otherwise */
static int site_name(const char *mem, const struct seg_geom *g, __u32 nsites, __u32 idx,
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

static int cmp_value(const void *a, const void *b)
{
	const struct prof_annot_value *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* the tables (plots, locks) of a slab's region, checked */
static int read_tables(const char *mem, const struct seg_geom *g, __u32 nsites, const char *ar,
		       const struct prof_slab_hdr *sh, struct prof_annot_thread *t)
{
	const struct prof_plot *pp = (const void *)(ar + g->part[PROF_PART_PLOTS].off);
	const struct prof_lock *lp = (const void *)(ar + g->part[PROF_PART_LOCKS].off);
	__u32 i, b;

	t->nplots = LDA(&sh->nplots);
	t->nlocks = LDA(&sh->nlocks);
	if (t->nplots > g->part[PROF_PART_PLOTS].size / sizeof(*pp) ||
	    t->nlocks > g->part[PROF_PART_LOCKS].size / sizeof(*lp))
		return -EINVAL;
	t->plots = calloc(t->nplots ? t->nplots : 1, sizeof(*t->plots));
	t->locks = calloc(t->nlocks ? t->nlocks : 1, sizeof(*t->locks));
	if (!t->plots || !t->locks)
		return -ENOMEM;
	for (i = 0; i < t->nplots; i++) {
		struct prof_annot_plot *o = &t->plots[i];
		struct prof_plot p;

		memcpy(&p, &pp[i], sizeof(p));
		if (site_name(mem, g, nsites, p.site, PROF_SITE_PLOT, o->name))
			return -EINVAL;
		o->count = p.count;
		o->min = finite_or_0(p.min);
		o->max = finite_or_0(p.max);
		o->last = finite_or_0(p.last);
		o->sum = finite_or_0(p.sum);
		o->last_tick = p.last_tick;
	}
	for (i = 0; i < t->nlocks; i++) {
		struct prof_annot_lock *o = &t->locks[i];
		struct prof_lock l;

		memcpy(&l, &lp[i], sizeof(l));
		if (site_name(mem, g, nsites, l.site, PROF_SITE_LOCK, o->name))
			return -EINVAL;
		o->node = l.node;
		o->acquisitions = l.acquisitions;
		o->contended = l.contended;
		o->wait_ticks = l.wait_ticks;
		o->wait_max = l.wait_max;
		o->hold_ticks = l.hold_ticks;
		o->hold_max = l.hold_max;
		o->blocked = l.blocked;
		o->kernel_waits = l.kernel_waits;
		o->unheld = l.unheld;
		for (b = 0; b < PROF_LOCK_HIST; b++)
			o->wait_hist[b] = l.wait_hist[b];
	}
	return 0;
}

/* the rings of a slab's region; entries that name nothing are left out */
static int read_rings(const char *ar, const struct seg_geom *g, bool alive,
		      struct prof_annot_thread *t)
{
	const struct prof_region *p = g->part;
	__u64 *raw, n, k, m;
	int err;

	err = ring_read(ar + p[PROF_PART_POINTS].off, p[PROF_PART_POINTS].size,
			sizeof(struct prof_plot_point), alive, &raw, &n);
	if (err)
		return err;
	t->points = calloc(n ? n : 1, sizeof(*t->points));
	for (k = m = 0; t->points && k < n; k++) {
		const struct prof_plot_point *e = (const void *)&raw[k * 3];

		if (e->plot < t->nplots && isfinite(e->value))
			t->points[m++] = (struct prof_annot_point){ e->tick, e->value, e->plot };
	}
	t->npoints = m;
	free(raw);
	if (!t->points)
		return -ENOMEM;

	err = ring_read(ar + p[PROF_PART_MSGS].off, p[PROF_PART_MSGS].size, sizeof(struct prof_msg),
			alive, &raw, &n);
	if (err)
		return err;
	t->msgs = calloc(n ? n : 1, sizeof(*t->msgs));
	for (k = 0; t->msgs && k < n; k++) {
		const struct prof_msg *e = (const void *)&raw[k * (sizeof(*e) / 8)];

		t->msgs[k].tick = e->tick;
		t->msgs[k].node = e->node;
		memcpy(t->msgs[k].text, e->text, sizeof(e->text));
		t->msgs[k].text[sizeof(e->text) - 1] = 0;
	}
	t->nmsgs = n;
	free(raw);
	if (!t->msgs)
		return -ENOMEM;

	err = ring_read(ar + p[PROF_PART_VALUES].off, p[PROF_PART_VALUES].size,
			sizeof(struct prof_value), alive, &raw, &n);
	if (err)
		return err;
	t->values = calloc(n ? n : 1, sizeof(*t->values));
	for (k = m = 0; t->values && k < n; k++) {
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
		if (e->kind == PROF_VALUE_TEXT_KIND) {
			memcpy(o->text, e->text, sizeof(e->text));
			o->text[sizeof(e->text) - 1] = 0;
		}
		m++;
	}
	t->nvalues = m;
	free(raw);
	if (!t->values)
		return -ENOMEM;
	qsort(t->values, m, sizeof(*t->values), cmp_value);

	err = ring_read(ar + p[PROF_PART_SPANS].off, p[PROF_PART_SPANS].size,
			sizeof(struct prof_lock_span), alive, &raw, &n);
	if (err)
		return err;
	t->spans = calloc(n ? n : 1, sizeof(*t->spans));
	for (k = m = 0; t->spans && k < n; k++) {
		const struct prof_lock_span *e = (const void *)&raw[k * 3];

		if (e->lock < t->nlocks && !(e->flags & ~7u))
			t->spans[m++] = (struct prof_annot_span){ e->start, e->dur, e->lock, e->flags };
	}
	t->nspans = m;
	free(raw);
	return t->spans ? 0 : -ENOMEM;
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

int prof_seg_annot(const void *mem, size_t len, struct prof_annot **out)
{
	const struct prof_seg_hdr *h = mem;
	struct prof_annot *a;
	struct seg_geom g;
	__u32 nslabs, nsites, i;
	int err;

	*out = NULL;
	err = seg_check(mem, len, &g);
	if (err)
		return err;
	nslabs = LDA(&h->nslabs);
	nsites = LDA(&h->nsites);
	if (nslabs > g.max_threads || nsites > g.max_sites)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a || !(a->threads = calloc(nslabs ? nslabs : 1, sizeof(*a->threads)))) {
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

long prof_annot_lock_sums(const struct prof_annot *a, struct prof_annot_lock_sum **out)
{
	struct prof_annot_lock_sum *v = NULL;
	size_t n = 0;
	__u32 i, k;

	for (i = 0; i < a->nthreads; i++) {
		for (k = 0; k < a->threads[i].nlocks; k++) {
			const struct prof_annot_lock *l = &a->threads[i].locks[k];
			struct prof_annot_lock_sum *s;

			s = by_name((void **)&v, &n, sizeof(*v), l->name, NULL);
			if (!s) {
				free(v);
				return -ENOMEM;
			}
			s->acquisitions += l->acquisitions;
			s->contended += l->contended;
			s->wait_ticks += l->wait_ticks;
			s->hold_ticks += l->hold_ticks;
			s->blocked += l->blocked;
			s->kernel_waits += l->kernel_waits;
			s->unheld += l->unheld;
			if (l->wait_max > s->wait_max)
				s->wait_max = l->wait_max;
			if (l->hold_max > s->hold_max)
				s->hold_max = l->hold_max;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_lock_sum);
	*out = v;
	return (long)n;
}

static int cmp_plot_sum(const void *a, const void *b)
{
	return strcmp(((const struct prof_annot_plot_sum *)a)->name,
		      ((const struct prof_annot_plot_sum *)b)->name);
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
			if (fresh) {
				s->min = p->min;
				s->max = p->max;
			}
			s->count += p->count;
			s->sum += p->sum;
			if (p->min < s->min)
				s->min = p->min;
			if (p->max > s->max)
				s->max = p->max;
			if (p->last_tick >= s->last_tick) {
				s->last_tick = p->last_tick;
				s->last = p->last;
			}
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_plot_sum);
	*out = v;
	return (long)n;
}
