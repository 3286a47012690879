// SPDX-License-Identifier: MIT
/*
 * profctl_diff.c - `profctl diff BASE NEW`: two profiles (saved files or
 * live processes) compared per zone and per call path.  Threads are merged
 * first (pc_merge_threads), so two runs compare whatever their tids.
 *
 * Every change is NEW - BASE: positive is more (slower, more calls), red
 * on a terminal; negative is less, blue.  Rows are sorted by the largest
 * change of the sort key (self by default), whichever its sign.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "profctl.h"
#include "diff_html.h"

#define C_RESET "\033[0m"
#define C_RED "\033[31m"
#define C_BLUE "\033[34m"
#define C_BOLD "\033[1m"

static const char usage_diff[] =
	"usage: profctl diff [--sort self|total|calls|p99|oncpu|self-oncpu]\n"
	"                    [--per-call | --per-frame]\n"
	"                    [--rows N] [--format text|json|html] [-o FILE]\n"
	"                    [--color auto|always|never] [--since-reset | --since-start]\n"
	"                    [--no-daemon] BASE NEW\n"
	"\n"
	"  BASE, NEW            a profile saved by `profctl save` or PROF_SAVE, or a live\n"
	"                       process: pid:P (or P, if no file is called P)\n"
	"  -s, --sort KEY       rows by the largest change of self (default), total,\n"
	"                       calls, p99, oncpu or self-oncpu\n"
	"      --per-call       self and total per call (runs of different lengths)\n"
	"      --per-frame      calls, self and total per PROF_FRAME of each run\n"
	"      --rows N         at most N rows in each table\n"
	"  -f, --format FMT     text (default), json, or html: a differential flame\n"
	"                       graph (width NEW's total, red slower, blue faster)\n"
	PC_USAGE_OUTPUT
	PC_USAGE_COLOR
	"      --since-reset    a live process counts from your last reset (the default)\n"
	"      --since-start    a live process counts from its start\n"
	PC_USAGE_NO_DAEMON
	"\n"
	"Per zone (merged across threads and call paths) and per call path (threads\n"
	"merged): calls, self, total, p50 and p99 of NEW with their change from BASE,\n"
	"all wall time; with kernel facts (profd) on either side, on-CPU and self\n"
	"on-CPU time too (CPU time; \"-\" where a side had no kernel facts).\n"
	"Every change is NEW - BASE: + is more or slower (red), - less or faster (blue).\n"
	"Then the named locks either side has: NEW's figures and their change.\n";

static const struct option diff_options[] = {
	PC_OPT_SORT,	  PC_OPT_PER_CALL, PC_OPT_PER_FRAME,	PC_OPT_ROWS,
	PC_OPT_FORMAT,	  PC_OPT_OUTPUT,   PC_OPT_COLOR,	PC_OPT_SINCE,
	PC_OPT_NO_DAEMON, PC_OPT_HELP,	   PC_OPT_END_OPERANDS,
};

#define NB PROF_HIST_BUCKETS

/* one key of one side, in that side's ticks */
struct drow {
	char *key;
	/* calls, self, ticks (a recursive node's not), max, oncpu_ns and
	 * self_oncpu_ns (PROF_SNAP_UNKNOWN: no kernel facts) as a flat row
	 * has them, so rows of one key fold as figures.h says */
	struct prof_flat_row r;
	/* every call's closed ticks (a recursive one's too): the average the
	 * percentiles are held to, as a node's are (prof_snap_quantile) */
	__u64 closed;
	__u32 hist[NB];
};

struct drows {
	struct drow *v;
	size_t n, cap;
};

/* one side's values as shown: ns (or per call, per frame) */
struct dval {
	double calls, self, total, p50, p99;
	double oncpu, self_oncpu; /* PROF_SNAP_UNKNOWN as a double: unknown */
	bool present;
};

/* an on-CPU value of a side nobody knows (no kernel facts) */
#define DV_UNKNOWN ((double)PROF_SNAP_UNKNOWN)

/* either side's rows have kernel facts: the on-CPU columns are shown */
static bool diff_sched;

struct dent {
	const char *key;
	struct dval a, b;
	double sort; /* |change| of the sort key */
};

struct dside {
	const char *spec; /* as the user wrote it */
	struct prof_snapshot *raw, *merged;
	struct drows zones, paths;
	__u64 frames;
};

/* no libm for these */
static double dabs(double x)
{
	return x < 0 ? -x : x;
}

static __u64 round_ns(double x)
{
	return x <= 0 ? 0 : (__u64)(x + 0.5);
}

static int rows_add(struct drows *r, char *key, const struct prof_snapshot *s,
		    const struct prof_snap_node *n, __u64 oncpu, __u64 self_oncpu,
		    bool count_total)
{
	const __u32 *h = prof_snap_hist(s, n);
	struct drow *d, *v;
	__u32 k;

	v = prof_grow(r->v, r->n, &r->cap, sizeof(*v), 64);
	if (!v) {
		free(key);
		return -ENOMEM;
	}
	r->v = v;
	d = &r->v[r->n++];
	memset(d, 0, sizeof(*d));
	d->key = key;
	d->r.calls = n->calls;
	d->r.self = prof_snap_self(n);
	d->r.ticks = count_total ? n->ticks : 0;
	d->r.oncpu_ns = count_total ? oncpu : PROF_SNAP_UNKNOWN;
	d->r.self_oncpu_ns = self_oncpu;
	d->r.max = n->max;
	d->closed = prof_snap_closed(n);
	for (k = 0; h && k < n->hist_n && n->hist_lo + k < NB; k++)
		d->hist[n->hist_lo + k] = h[k];
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct drow *)a)->key, ((const struct drow *)b)->key);
}

/* sort by key and fold rows of one key into one (two sites of one name) */
static void rows_fold(struct drows *r)
{
	size_t i, o = 0;
	__u32 k;

	if (!r->n)
		return;
	qsort(r->v, r->n, sizeof(*r->v), cmp_key);
	for (i = 1; i < r->n; i++) {
		struct drow *d = &r->v[o], *x = &r->v[i];

		if (strcmp(d->key, x->key)) {
			r->v[++o] = *x;
			continue;
		}
		prof_flat_row_add(&d->r, &x->r);
		d->closed += x->closed;
		for (k = 0; k < NB; k++)
			d->hist[k] = d->hist[k] + x->hist[k] < d->hist[k] ? ~0u
									  : d->hist[k] + x->hist[k];
		free(x->key);
	}
	r->n = o + 1;
}

static void rows_free(struct drows *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->v[i].key);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* "a;b;c": the zones from the top down to node i (the merged tree is
 * ours: its parent links end at the root) */
static char *path_key(const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i)
{
	size_t len = 0, off;
	__u32 j;
	char *key;

	for (j = i; j; j = t->nodes[j].parent)
		len += strlen(prof_snap_node_name(s, &t->nodes[j])) + (j != i);
	key = malloc(len + 1);
	if (!key)
		return NULL;
	off = len;
	key[len] = '\0';
	for (j = i; j; j = t->nodes[j].parent) {
		const char *name = prof_snap_node_name(s, &t->nodes[j]);
		size_t nl = strlen(name);

		if (j != i)
			key[--off] = ';';
		off -= nl;
		memcpy(key + off, name, nl);
	}
	return key;
}

static int side_rows(struct dside *d)
{
	const struct prof_snapshot *s = d->merged;
	const struct prof_snap_thread *t = &s->threads[0];
	__u64 *oncpu;
	__u32 i;
	int err = 0;

	for (i = 0; i < d->raw->nthreads; i++)
		d->frames += d->raw->threads[i].frames;
	diff_sched |= prof_snap_any_sched(d->raw);
	oncpu = malloc((t->nnodes ? t->nnodes : 1) * sizeof(*oncpu));
	if (!oncpu || prof_snap_oncpu(s, t, oncpu)) {
		free(oncpu);
		return -ENOMEM;
	}
	for (i = 1; i < t->nnodes && !err; i++) {
		const struct prof_snap_node *n = &t->nodes[i];
		char *zone, *path;
		__u64 self_cpu;

		if (prof_snap_node_hidden(t, i))
			continue;
		zone = strdup(prof_snap_node_name(s, n));
		path = path_key(s, t, i);
		if (!zone || !path) {
			free(zone);
			free(path);
			err = -ENOMEM;
			break;
		}
		self_cpu = prof_snap_self_oncpu(t, oncpu, i);
		/* a zone's total counts its outermost calls, as --flat does */
		err = rows_add(&d->zones, zone, s, n, oncpu[i], self_cpu,
			       !(n->flags & PROF_SNAP_F_RECURSIVE));
		if (!err)
			err = rows_add(&d->paths, path, s, n, oncpu[i], self_cpu, true);
		else
			free(path);
	}
	free(oncpu);
	if (err)
		return err;
	rows_fold(&d->zones);
	rows_fold(&d->paths);
	return 0;
}

/* the values shown for one row of one side */
static struct dval side_val(const struct dside *d, const struct drow *r, const struct pc_opts *o,
			    bool per_frame)
{
	const struct prof_snapshot *s = d->merged;
	struct prof_snapshot hs = { .hist = (__u32 *)(uintptr_t)r->hist, .nhist = NB };
	struct prof_snap_node hn = {
		.hist_lo = 0, .hist_n = NB, .max = r->r.max, .calls = r->r.calls, .ticks = r->closed
	};
	struct dval v = { .present = true };

	v.calls = (double)r->r.calls;
	v.self = (double)prof_snap_ns(s, r->r.self);
	v.total = (double)prof_snap_ns(s, r->r.ticks);
	hs.tick_hz = s->tick_hz;
	v.p50 = (double)prof_snap_ns(s, prof_snap_quantile(&hs, &hn, 0.50));
	v.p99 = (double)prof_snap_ns(s, prof_snap_quantile(&hs, &hn, 0.99));
	v.oncpu = r->r.oncpu_ns == PROF_SNAP_UNKNOWN ? DV_UNKNOWN : (double)r->r.oncpu_ns;
	v.self_oncpu =
		r->r.self_oncpu_ns == PROF_SNAP_UNKNOWN ? DV_UNKNOWN : (double)r->r.self_oncpu_ns;
	if (o->per_call) {
		v.self = r->r.calls ? v.self / (double)r->r.calls : 0;
		v.total = r->r.calls ? v.total / (double)r->r.calls : 0;
		if (v.oncpu != DV_UNKNOWN)
			v.oncpu = r->r.calls ? v.oncpu / (double)r->r.calls : 0;
		if (v.self_oncpu != DV_UNKNOWN)
			v.self_oncpu = r->r.calls ? v.self_oncpu / (double)r->r.calls : 0;
	} else if (per_frame) {
		v.calls /= (double)d->frames;
		v.self /= (double)d->frames;
		v.total /= (double)d->frames;
		if (v.oncpu != DV_UNKNOWN)
			v.oncpu /= (double)d->frames;
		if (v.self_oncpu != DV_UNKNOWN)
			v.self_oncpu /= (double)d->frames;
	}
	return v;
}

static double key_of(const struct dval *v, int sort)
{
	switch (sort) {
	case PROF_SORT_TOTAL:
		return v->total;
	case PROF_SORT_CALLS:
		return v->calls;
	case PROF_SORT_P99:
		return v->p99;
	case PROF_SORT_ONCPU:
		return v->oncpu == DV_UNKNOWN ? 0 : v->oncpu;
	case PROF_SORT_SELF_ONCPU:
		return v->self_oncpu == DV_UNKNOWN ? 0 : v->self_oncpu;
	}
	return v->self;
}

static int sort_key;

static int cmp_change(const void *pa, const void *pb)
{
	const struct dent *a = pa, *b = pb;

	if (a->sort != b->sort)
		return a->sort < b->sort ? 1 : -1;
	return strcmp(a->key, b->key);
}

/* the two sides' rows joined by key, sorted by the largest change */
static struct dent *join(const struct dside *A, const struct drows *ra, const struct dside *B,
			 const struct drows *rb, const struct pc_opts *o, bool per_frame, size_t *n)
{
	struct dent *e = calloc(ra->n + rb->n + 1, sizeof(*e));
	size_t i = 0, j = 0, k = 0;

	if (!e)
		return NULL;
	while (i < ra->n || j < rb->n) {
		int c = i == ra->n ? 1 : j == rb->n ? -1 : strcmp(ra->v[i].key, rb->v[j].key);

		if (c <= 0) {
			e[k].key = ra->v[i].key;
			e[k].a = side_val(A, &ra->v[i++], o, per_frame);
		}
		if (c >= 0) {
			e[k].key = rb->v[j].key;
			e[k].b = side_val(B, &rb->v[j++], o, per_frame);
		}
		e[k].sort = dabs(key_of(&e[k].b, sort_key) - key_of(&e[k].a, sort_key));
		k++;
	}
	qsort(e, k, sizeof(*e), cmp_change);
	*n = k;
	return e;
}

/* a signed duration: "+1.50ms", "-812ns", "0" */
static const char *fmt_dns(char *buf, size_t len, double d)
{
	char t[32];

	if (dabs(d) < 0.5) {
		snprintf(buf, len, "0");
		return buf;
	}
	prof_fmt_ns(t, sizeof(t), round_ns(dabs(d)));
	snprintf(buf, len, "%c%s", d > 0 ? '+' : '-', t);
	return buf;
}

static const char *fmt_ns_d(char *buf, size_t len, double v)
{
	return prof_fmt_ns(buf, len, round_ns(v));
}

static const char *fmt_count(char *buf, size_t len, double v, bool frac)
{
	snprintf(buf, len, frac ? "%.3g" : "%.0f", v);
	return buf;
}

static const char *fmt_dcount(char *buf, size_t len, double d, bool frac)
{
	if (d == 0)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, frac ? "%+.3g" : "%+.0f", d);
	return buf;
}

/* "+12%", "new", "gone", "" */
static const char *fmt_pct(char *buf, size_t len, const struct dent *e, double a, double b)
{
	if (!e->a.present)
		snprintf(buf, len, "new");
	else if (!e->b.present)
		snprintf(buf, len, "gone");
	else if (a == b)
		snprintf(buf, len, "0%%");
	else if (a == 0)
		snprintf(buf, len, "+inf");
	else
		snprintf(buf, len, "%+.0f%%", (b - a) / a * 100);
	return buf;
}

static void put_change(FILE *f, bool color, int width, const char *text, double d)
{
	if (color && d != 0)
		fprintf(f, "%s%*s%s", d > 0 ? C_RED : C_BLUE, width, text, C_RESET);
	else
		fprintf(f, "%*s", width, text);
}

/*
 * The change of an on-CPU value; a side without the row counts as 0, a
 * side with it but no kernel facts makes the change unknown
 */
static double cpu_change(const struct dent *e, double a, double b)
{
	if ((e->a.present && a == DV_UNKNOWN) || (e->b.present && b == DV_UNKNOWN))
		return DV_UNKNOWN;
	return (e->b.present ? b : 0) - (e->a.present ? a : 0);
}

/* NEW's on-CPU value and its change, "-" where unknown */
static void text_cpu(FILE *f, bool color, const struct dent *e, double a, double b)
{
	double d = cpu_change(e, a, b);
	char b1[48], b2[48];

	fprintf(f, " %9s ",
		e->b.present && b == DV_UNKNOWN ? "-" : fmt_ns_d(b1, sizeof(b1), e->b.present ? b : 0));
	if (d == DV_UNKNOWN)
		fprintf(f, "%10s", "-");
	else
		put_change(f, color, 10, fmt_dns(b2, sizeof(b2), d), d);
}

static void text_table(FILE *f, const char *title, const char *what, const struct dent *e, size_t n,
		       const struct pc_opts *o, bool per_frame)
{
	bool frac = per_frame, color = o->color;
	char b1[48], b2[48];
	size_t i, shown = o->rows && (size_t)o->rows < n ? (size_t)o->rows : n;

	fprintf(f, "%s%s%s (%zu", color ? C_BOLD : "", title, color ? C_RESET : "", n);
	if (shown < n)
		fprintf(f, ", the %zu largest changes", shown);
	fprintf(f, ")\n");
	/* each Δ is two bytes wide in UTF-8 and one column on the screen */
	fprintf(f, "%10s %10s %9s %10s %7s %9s %10s %7s %8s %10s %8s %10s", "calls", "Δcalls",
		"self", "Δself", "Δ%", "total", "Δtotal", "Δ%", "p50", "Δp50", "p99", "Δp99");
	if (diff_sched)
		fprintf(f, " %9s %11s %9s %11s", "on-cpu", "Δon-cpu", "self-cpu", "Δself-cpu");
	fprintf(f, "  %s\n", what);
	for (i = 0; i < shown; i++) {
		const struct dent *r = &e[i];
		double dc = r->b.calls - r->a.calls, ds = r->b.self - r->a.self,
		       dt = r->b.total - r->a.total, d5 = r->b.p50 - r->a.p50,
		       d9 = r->b.p99 - r->a.p99;

		fprintf(f, "%10s ", fmt_count(b1, sizeof(b1), r->b.calls, frac));
		put_change(f, color, 9, fmt_dcount(b2, sizeof(b2), dc, frac), dc);
		fprintf(f, " %9s ", fmt_ns_d(b1, sizeof(b1), r->b.self));
		put_change(f, color, 9, fmt_dns(b2, sizeof(b2), ds), ds);
		fprintf(f, " ");
		put_change(f, color, 6, fmt_pct(b2, sizeof(b2), r, r->a.self, r->b.self), ds);
		fprintf(f, " %9s ", fmt_ns_d(b1, sizeof(b1), r->b.total));
		put_change(f, color, 9, fmt_dns(b2, sizeof(b2), dt), dt);
		fprintf(f, " ");
		put_change(f, color, 6, fmt_pct(b2, sizeof(b2), r, r->a.total, r->b.total), dt);
		fprintf(f, " %8s ", fmt_ns_d(b1, sizeof(b1), r->b.p50));
		put_change(f, color, 9, fmt_dns(b2, sizeof(b2), d5), d5);
		fprintf(f, " %8s ", fmt_ns_d(b1, sizeof(b1), r->b.p99));
		put_change(f, color, 9, fmt_dns(b2, sizeof(b2), d9), d9);
		if (diff_sched) {
			text_cpu(f, color, r, r->a.oncpu, r->b.oncpu);
			text_cpu(f, color, r, r->a.self_oncpu, r->b.self_oncpu);
		}
		fprintf(f, "  %s\n", r->key);
	}
}

static const char *norm_name(const struct pc_opts *o, bool per_frame)
{
	return o->per_call ? "per_call" : per_frame ? "per_frame" : "none";
}

static const char *sort_name(int sort)
{
	return sort >= 0 && sort < PROF_SORT_NKEYS ? prof_sort_names[sort] : "self";
}

/* "name":ns, null where unknown */
static void json_cpu(struct prof_jw *w, const char *name, double v)
{
	prof_jw_name(w, name);
	if (v == DV_UNKNOWN)
		prof_jw_null(w);
	else
		prof_jw_double(w, "%.17g", v);
}

/* {"calls","self_ns","total_ns","p50_ns","p99_ns","oncpu_ns","self_oncpu_ns"}
 * of a side, or of the change (on-CPU: null where unknown) */
static void json_five(struct prof_jw *w, const char *name, double calls, double self, double total,
		      double p50, double p99, double oncpu, double self_oncpu)
{
	prof_jw_name(w, name);
	prof_jw_start_object(w);
	prof_jw_name(w, "calls");
	prof_jw_double(w, "%.17g", calls);
	prof_jw_name(w, "self_ns");
	prof_jw_double(w, "%.17g", self);
	prof_jw_name(w, "total_ns");
	prof_jw_double(w, "%.17g", total);
	prof_jw_name(w, "p50_ns");
	prof_jw_double(w, "%.17g", p50);
	prof_jw_name(w, "p99_ns");
	prof_jw_double(w, "%.17g", p99);
	json_cpu(w, "oncpu_ns", oncpu);
	json_cpu(w, "self_oncpu_ns", self_oncpu);
	prof_jw_end_object(w);
}

static void json_val(struct prof_jw *w, const char *name, const struct dval *v)
{
	if (!v->present) {
		prof_jw_name(w, name);
		prof_jw_null(w);
		return;
	}
	json_five(w, name, v->calls, v->self, v->total, v->p50, v->p99, v->oncpu, v->self_oncpu);
}

static void json_table(struct prof_jw *w, const char *name, const struct dent *e, size_t n,
		       const struct pc_opts *o, bool path)
{
	size_t i, shown = o->rows && (size_t)o->rows < n ? (size_t)o->rows : n;

	prof_jw_name(w, name);
	prof_jw_start_array(w);
	for (i = 0; i < shown; i++) {
		const struct dent *r = &e[i];

		prof_jw_start_object(w);
		prof_jw_name(w, path ? "path" : "name");
		if (path) {
			const char *p = r->key, *q;

			prof_jw_start_array(w);
			for (;;) {
				char part[PROF_NAME_MAX + 8];
				size_t l;

				q = strchr(p, ';');
				l = q ? (size_t)(q - p) : strlen(p);
				snprintf(part, sizeof(part), "%.*s", (int)l, p);
				prof_jw_string(w, part);
				if (!q)
					break;
				p = q + 1;
			}
			prof_jw_end_array(w);
		} else {
			prof_jw_string(w, r->key);
		}
		json_val(w, "base", &r->a);
		json_val(w, "new", &r->b);
		/* a side without the row counts as zeros */
		json_five(w, "change", r->b.calls - r->a.calls, r->b.self - r->a.self,
			  r->b.total - r->a.total, r->b.p50 - r->a.p50, r->b.p99 - r->a.p99,
			  cpu_change(r, r->a.oncpu, r->b.oncpu),
			  cpu_change(r, r->a.self_oncpu, r->b.self_oncpu));
		prof_jw_end_object(w);
	}
	prof_jw_end_array(w);
}

static void json_side(struct prof_jw *w, const char *name, const struct dside *d)
{
	prof_jw_name(w, name);
	prof_jw_start_object(w);
	prof_jw_string_field(w, "source", d->spec);
	prof_jw_u64_field(w, "pid", d->raw->pid);
	prof_jw_string_field(w, "comm", d->raw->comm);
	prof_jw_u64_field(w, "frames", d->frames);
	prof_jw_end_object(w);
}

static void json_doc(FILE *f, const struct dside *A, const struct dside *B, const struct dent *ez,
		     size_t nz, const struct dent *ep, size_t np, const struct pc_opts *o,
		     bool per_frame)
{
	struct prof_jw w;

	prof_jw_init(&w, f);
	prof_jw_start_object(&w);
	prof_jw_u64_field(&w, "version", 1);
	prof_jw_string_field(&w, "view", "diff");
	prof_jw_string_field(&w, "change", "new - base");
	prof_jw_string_field(&w, "normalise", norm_name(o, per_frame));
	prof_jw_string_field(&w, "sort", sort_name(o->sort));
	json_side(&w, "base", A);
	json_side(&w, "new", B);
	json_table(&w, "zones", ez, nz, o, false);
	json_table(&w, "paths", ep, np, o, true);
	pc_diff_locks_json(&w, A->raw, B->raw);
	prof_jw_end_object(&w);
	prof_jw_raw(&w, "\n");
}

/*
 * The page (daemon/profctl/diff.html) with the json document where DIFF_DATA is:
 * every row, whatever --rows says (the graph needs every path), and no
 * '<' in it that could end the script element.
 */
static int html_doc(FILE *f, const struct dside *A, const struct dside *B, const struct dent *ez,
		    size_t nz, const struct dent *ep, size_t np, const struct pc_opts *o,
		    bool per_frame)
{
	static const char mark[] = "DIFF_DATA";
	struct pc_opts all = *o;
	const char *tpl = (const char *)diff_html, *at, *p;
	char *json = NULL;
	size_t len = 0;
	FILE *m;

	all.rows = 0;
	m = open_memstream(&json, &len);
	if (!m)
		return -ENOMEM;
	json_doc(m, A, B, ez, nz, ep, np, &all, per_frame);
	/* glibc's fclose shrinks the buffer: if that fails, it frees it and
	 * returns 0 with json NULL (len as before) */
	if (fclose(m) || !json) {
		free(json);
		return -ENOMEM;
	}
	at = memmem(tpl, diff_html_len, mark, sizeof(mark) - 1);
	if (!at) {
		free(json);
		return -EINVAL;
	}
	fwrite(tpl, 1, (size_t)(at - tpl), f);
	for (p = json; p < json + len; p++) {
		if (*p == '<')
			fputs("\\u003c", f);
		else
			fputc(*p, f);
	}
	at += sizeof(mark) - 1;
	fwrite(at, 1, diff_html_len - (size_t)(at - tpl), f);
	free(json);
	return ferror(f) ? -EIO : 0;
}

/* pid:P, or P when no file is called P: a live process; else a file */
static int operand_pid(const char *spec, pid_t *pid)
{
	struct stat st;
	const char *p = spec;
	char *end;
	long v;

	if (!strncmp(p, "pid:", 4))
		p += 4;
	else if (!stat(spec, &st))
		return 0;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || end == p || *end || v <= 0 || v > 0x7fffffff)
		return p == spec ? 0 : -EINVAL;
	*pid = (pid_t)v;
	return 1;
}

static int side_load(struct dside *d, struct pc_src *src, bool *src_open, const struct pc_opts *o)
{
	pid_t pid = 0;
	int live = operand_pid(d->spec, &pid), err;

	if (live < 0) {
		pc_warnx("diff: bad pid in '%s'", d->spec);
		return -EINVAL;
	}
	if (live) {
		if (!*src_open) {
			pc_src_open_said(src, o, NULL);
			src->read_flags = 0;
			*src_open = true;
		}
		err = pc_src_snapshot(src, pid, o->mode, 0, &d->raw);
	} else {
		/* every node and histogram: the threads are merged */
		err = pc_read_image(d->spec, 0, &d->raw);
	}
	if (err)
		return err;
	d->merged = pc_merge_threads(d->raw);
	if (!d->merged) {
		pc_warnx("%s: failed to merge threads: %s", d->spec, strerror(errno));
		return -ENOMEM;
	}
	err = side_rows(d);
	if (err)
		pc_warnx("%s: %s", d->spec, strerror(-err));
	return err;
}

static void side_free(struct dside *d)
{
	rows_free(&d->zones);
	rows_free(&d->paths);
	pc_snap_free(d->merged);
	prof_snapshot__destroy(d->raw);
}

int pc_cmd_diff(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src = { .fd = -1 };
	struct dside A = { 0 }, B = { 0 };
	struct dent *ez = NULL, *ep = NULL;
	size_t nz = 0, np = 0;
	bool src_open = false, per_frame;
	FILE *f = NULL;
	int err, ret = 1;

	err = pc_parse_opts(argc, argv, usage_diff, diff_options, &o);
	if (err)
		return err < 0 ? 0 : err;
	per_frame = o.per_frame;
	if (argc - o.args != 2) {
		pc_warnx("diff: two profiles, BASE and NEW; see --help");
		return 2;
	}
	if (o.per_call && per_frame) {
		pc_warnx("diff: --per-call or --per-frame, not both");
		return 2;
	}
	if (o.format != PC_FMT_TEXT && o.format != PC_FMT_JSON && o.format != PC_FMT_HTML) {
		pc_warnx("diff: --format text, json or html");
		return 2;
	}
	if (o.sort == PROF_SORT_MAX) {
		pc_warnx("diff: --sort self, total, calls, p99, oncpu or self-oncpu");
		return 2;
	}
	sort_key = o.sort;
	A.spec = argv[o.args];
	B.spec = argv[o.args + 1];
	if (side_load(&A, &src, &src_open, &o) || side_load(&B, &src, &src_open, &o))
		goto cleanup;
	if (per_frame && (!A.frames || !B.frames)) {
		pc_warnx("diff: --per-frame: %s has no PROF_FRAME frames",
			 A.frames ? B.spec : A.spec);
		goto cleanup;
	}
	ez = join(&A, &A.zones, &B, &B.zones, &o, per_frame, &nz);
	ep = join(&A, &A.paths, &B, &B.paths, &o, per_frame, &np);
	if (!ez || !ep) {
		pc_warnx("out of memory");
		goto cleanup;
	}
	f = pc_open_out(&o);
	if (!f)
		goto cleanup;
	err = 0;
	if (o.format == PC_FMT_JSON) {
		json_doc(f, &A, &B, ez, nz, ep, np, &o, per_frame);
	} else if (o.format == PC_FMT_HTML) {
		err = html_doc(f, &A, &B, ez, nz, ep, np, &o, per_frame);
		if (err)
			pc_warnx("diff: failed to write the page: %s", strerror(-err));
	} else {
		fprintf(f, "diff: BASE %s (pid %u, %s)  NEW %s (pid %u, %s)\n", A.spec, A.raw->pid,
			A.raw->comm, B.spec, B.raw->pid, B.raw->comm);
		fprintf(f,
			"values are NEW's%s; every change is NEW - BASE: + more or slower%s, "
			"- less or faster%s; sorted by the largest change in %s\n\n",
			o.per_call  ? ", self and total per call"
			: per_frame ? ", calls, self and total per frame"
				    : "",
			o.color ? " (red)" : "", o.color ? " (blue)" : "", sort_name(o.sort));
		text_table(f, "zones", "zone", ez, nz, &o, per_frame);
		fputc('\n', f);
		text_table(f, "call paths", "path", ep, np, &o, per_frame);
		pc_diff_locks_text(f, A.raw, B.raw, o.rows);
	}
	if (pc_end_out(f, &o, err) == 0)
		ret = 0;
cleanup:
	free(ez);
	free(ep);
	side_free(&A);
	side_free(&B);
	if (src_open)
		pc_src_close(&src);
	return ret;
}
