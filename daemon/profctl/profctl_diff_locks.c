// SPDX-License-Identifier: MIT
/*
 * profctl_diff_locks.c - `profctl diff`'s named locks: each lock by name,
 * summed over its threads and zones (prof_snap_annot_sum), NEW's figures
 * and their change from BASE, a column per figure of PROF_LOCK_FIGS that
 * a JSON lock carries.  NEW's locks first (most waited first), then those
 * only BASE has; a side without a lock counts it 0 (JSON: null).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "annot.h"
#include "figures.h"
#include "fmt.h"
#include "json_writer.h"
#include "profctl.h"

struct lock_fig {
	const char *key; /* its JSON key ("" for none: not shown) */
	const char *unit; /* count, or ticks: shown in ns */
	size_t off;
};

#define LOCK_FIG(field, unit, across, window, key)                                  \
	{ key, #unit, offsetof(struct prof_annot_lock_sum, field) },
static const struct lock_fig lock_figs[] = { PROF_LOCK_FIGS(LOCK_FIG) };
#undef LOCK_FIG
#define NFIGS (sizeof(lock_figs) / sizeof(lock_figs[0]))

/* one lock name of either side */
struct dlock {
	const struct prof_annot_lock_sum *a, *b;
};

/* figure k of l (a lock of snapshot s; NULL: none there, 0) in ns for
 * ticks, into *v; false if unknown: a max the window cannot tell, or, as
 * the report says it, the waits that blocked without profd's word */
static bool fig_of(const struct prof_snapshot *s, const struct prof_annot_lock_sum *l, size_t k,
		   double *v)
{
	__u64 x;

	*v = 0;
	if (!l)
		return true;
	memcpy(&x, (const char *)l + lock_figs[k].off, sizeof(x));
	if (x == PROF_SNAP_UNKNOWN || (!strcmp(lock_figs[k].key, "blocked") && !l->kernel_waits))
		return false;
	*v = strcmp(lock_figs[k].unit, "ticks") ? (double)x : (double)prof_snap_ns(s, x);
	return true;
}

/* the lock names of a and b (either NULL), NEW's first; NULL without
 * memory or locks */
static struct dlock *join_locks(const struct prof_snap_annot *a, const struct prof_snap_annot *b,
				size_t *n)
{
	size_t na = a ? a->nlocks : 0, nb = b ? b->nlocks : 0, i, j;
	struct dlock *v = calloc(na + nb + 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (i = 0; i < nb; i++) {
		v[*n].b = &b->locks[i];
		for (j = 0; j < na; j++)
			if (!strcmp(a->locks[j].name, b->locks[i].name))
				v[*n].a = &a->locks[j];
		(*n)++;
	}
	for (j = 0; j < na; j++) {
		for (i = 0; i < nb && strcmp(a->locks[j].name, b->locks[i].name); i++)
			;
		if (i == nb)
			v[(*n)++].a = &a->locks[j];
	}
	return v;
}

/* both sides' locks, joined; false if none */
struct dlocks {
	struct prof_snap_annot *a, *b;
	struct dlock *v;
	size_t n;
};

static bool dlocks_of(struct dlocks *d, const struct prof_snapshot *sa,
		      const struct prof_snapshot *sb)
{
	d->a = prof_snap_annot_sum(sa);
	d->b = prof_snap_annot_sum(sb);
	d->v = join_locks(d->a, d->b, &d->n);
	return d->v && d->n;
}

static void dlocks_free(struct dlocks *d)
{
	free(d->v);
	prof_snap_annot_free(d->a);
	prof_snap_annot_free(d->b);
}

static const char *fmt_fig(char *buf, size_t len, size_t k, double v, bool known, bool change)
{
	if (!known)
		return "-";
	if (strcmp(lock_figs[k].unit, "ticks")) {
		snprintf(buf, len, change ? "%+.0f" : "%.0f", v);
		return buf;
	}
	if (!change)
		return prof_fmt_ns(buf, len, (__u64)v);
	buf[0] = v < 0 ? '-' : '+';
	prof_fmt_ns(buf + 1, len - 1, (__u64)(v < 0 ? -v : v));
	return buf;
}

void pc_diff_locks_text(FILE *f, const struct prof_snapshot *sa, const struct prof_snapshot *sb,
			int rows)
{
	struct dlocks d;
	char b1[32], b2[32], head[40];
	size_t i, k, shown;

	if (!dlocks_of(&d, sa, sb)) {
		dlocks_free(&d);
		return;
	}
	shown = rows > 0 && (size_t)rows < d.n ? (size_t)rows : d.n;
	fprintf(f, "\nlocks (%zu", d.n);
	if (shown < d.n)
		fprintf(f, ", the first %zu", shown);
	fprintf(f, ")\n");
	/* each Δ is two bytes wide in UTF-8 and one column on the screen */
	for (k = 0; k < NFIGS; k++) {
		if (!lock_figs[k].key[0])
			continue;
		/* a duration's key without its unit: the text says it */
		snprintf(head, sizeof(head), "%.*s", (int)(strlen(lock_figs[k].key) -
			 (strstr(lock_figs[k].key, "_ns") ? 3 : 0)), lock_figs[k].key);
		fprintf(f, "%12s %13s ", head, "Δ");
	}
	fprintf(f, " lock\n");
	for (i = 0; i < shown; i++) {
		for (k = 0; k < NFIGS; k++) {
			double va, vb;
			bool ka = fig_of(sa, d.v[i].a, k, &va), kb = fig_of(sb, d.v[i].b, k, &vb);

			if (!lock_figs[k].key[0])
				continue;
			fprintf(f, "%12s ", fmt_fig(b1, sizeof(b1), k, vb, kb, false));
			fprintf(f, "%12s ", fmt_fig(b2, sizeof(b2), k, vb - va, ka && kb, true));
		}
		fprintf(f, " %s\n", d.v[i].b ? d.v[i].b->name : d.v[i].a->name);
	}
	dlocks_free(&d);
}

/* side l's figures as an object, or null */
static void json_side(struct prof_jw *w, const char *name, const struct prof_snapshot *s,
		      const struct prof_annot_lock_sum *l)
{
	size_t k;

	prof_jw_name(w, name);
	if (!l) {
		prof_jw_null(w);
		return;
	}
	prof_jw_start_object(w);
	for (k = 0; k < NFIGS; k++) {
		double v;

		if (!lock_figs[k].key[0])
			continue;
		prof_jw_name(w, lock_figs[k].key);
		if (fig_of(s, l, k, &v))
			prof_jw_u64(w, (__u64)v);
		else
			prof_jw_null(w);
	}
	prof_jw_end_object(w);
}

void pc_diff_locks_json(struct prof_jw *w, const struct prof_snapshot *sa,
			const struct prof_snapshot *sb)
{
	struct dlocks d;
	size_t i;

	if (dlocks_of(&d, sa, sb)) {
		prof_jw_name(w, "locks");
		prof_jw_start_array(w);
		for (i = 0; i < d.n; i++) {
			prof_jw_start_object(w);
			prof_jw_string_field(w, "name", d.v[i].b ? d.v[i].b->name : d.v[i].a->name);
			json_side(w, "base", sa, d.v[i].a);
			json_side(w, "new", sb, d.v[i].b);
			prof_jw_end_object(w);
		}
		prof_jw_end_array(w);
	}
	dlocks_free(&d);
}
