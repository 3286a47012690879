// SPDX-License-Identifier: MIT
/*
 * report.c - a snapshot as text (a call tree per thread and a flat list)
 * or as JSON (the schema in docs/reports.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "annot.h"
#include "json_writer.h"
#include "snapshot.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"

static __u64 sub0(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

const char *prof_snap_compensated_note(const struct prof_snapshot *s, char *buf, size_t len)
{
	double ns = s->tick_hz ? 1e9 / (double)s->tick_hz : 0;

	snprintf(buf, len,
		 "a zone's cost (%.1f ns, %.1f ns of it inside its own time) taken out of its "
		 "parent's self and its own total",
		 (double)s->zone_cost * ns, (double)s->zone_inner * ns);
	return buf;
}

double prof_snap_probe_share(const struct prof_snapshot *s, const struct prof_snap_thread *t,
			     __u64 probe_ticks)
{
	/* compensated, the wall time no longer holds the zones' cost */
	__u64 wall = t->nodes[0].ticks + (s->compensated ? probe_ticks : 0);

	return wall ? 100.0 * (double)probe_ticks / (double)wall : 0;
}

/* the compensated view: what of a zone's cost lands where (snapshot.h) */
int prof_snapshot__compensate(struct prof_snapshot *s)
{
	__u64 cost = s->zone_cost, inner = s->zone_inner < cost ? s->zone_inner : cost;
	__u32 i, j;

	if (s->lazy)
		return -EINVAL;
	if (!cost)
		return -ENODATA;
	/* once: a second pass would take the cost out twice */
	if (s->compensated)
		return 0;
	for (j = 0; j < s->nthreads; j++) {
		struct prof_snap_thread *t = &s->threads[j];
		struct prof_snap_node *nd = t->nodes;

		if (!t->nnodes)
			continue;
		/* child_ticks, for now: the zones entered below each node
		 * (a child comes after its parent) */
		for (i = 0; i < t->nnodes; i++)
			nd[i].child_ticks = 0;
		for (i = t->nnodes - 1; i >= 1; i--)
			nd[nd[i].parent].child_ticks +=
				nd[i].child_ticks + nd[i].calls + nd[i].open + nd[i].anomalies;
		for (i = 0; i < t->nnodes; i++) {
			/* the root is no zone: the thread's wall time */
			__u64 own = i ? nd[i].calls + nd[i].open : 0;

			nd[i].ticks =
				sub0(sub0(nd[i].ticks, own * inner), nd[i].child_ticks * cost);
			if (nd[i].open_ticks > nd[i].ticks)
				nd[i].open_ticks = nd[i].ticks;
		}
		for (i = 0; i < t->nnodes; i++)
			nd[i].child_ticks = 0;
		for (i = t->nnodes - 1; i >= 1; i--)
			nd[nd[i].parent].child_ticks += nd[i].ticks;
		if (nd[0].ticks < nd[0].child_ticks)
			nd[0].ticks = nd[0].child_ticks;
	}
	s->compensated = 1;
	return 0;
}

__u64 prof_snap_sort_key(const struct prof_snapshot *s, const struct prof_snap_node *n, int sort)
{
	switch (sort) {
	case PROF_SORT_TOTAL:
		return n->ticks;
	case PROF_SORT_CALLS:
		return n->calls;
	case PROF_SORT_MAX:
		return n->max;
	case PROF_SORT_P99:
		return prof_snap_quantile(s, n, 0.99);
	default:
		return prof_snap_self(n);
	}
}

const char *const prof_sort_names[PROF_SORT_NKEYS] = {
	[PROF_SORT_SELF] = "self",   [PROF_SORT_TOTAL] = "total", [PROF_SORT_CALLS] = "calls",
	[PROF_SORT_MAX] = "max",     [PROF_SORT_P99] = "p99",     [PROF_SORT_ONCPU] = "oncpu",
	[PROF_SORT_SELF_ONCPU] = "self-oncpu",
};

/* the key prof_flat_sort sorts by: qsort takes no context */
static __thread int flat_sort_key;
static __thread const struct prof_snapshot *flat_sort_s;

__u64 prof_flat_oncpu_ns(const struct prof_snapshot *s, const struct prof_flat_row *r)
{
	(void)s;
	return r->oncpu_ns;
}

/* a row's avg, as prof_snap_avg_ns a node's: its closed calls' time / calls */
__u64 prof_flat_avg_ns(const struct prof_snapshot *s, const struct prof_flat_row *r)
{
	return r->calls ? prof_snap_ns(s, r->ticks - r->open_ticks) / r->calls : 0;
}

static const struct prof_snapshot *clash_s;

static int clash_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return strcmp(clash_s->sites[x].name, clash_s->sites[y].name);
}

/* (a site is checked to end within its arrays by the read) */
static bool same_place(const struct prof_snap_site *a, const struct prof_snap_site *b)
{
	return a->line == b->line && !strcmp(a->file, b->file);
}

__u8 *prof_snap_name_clashes(const struct prof_snapshot *s)
{
	__u8 *clash = calloc(s->nsites ? s->nsites : 1, 1);
	__u32 *idx = malloc((s->nsites ? s->nsites : 1) * sizeof(*idx));
	__u32 i, j, k;

	if (!clash || !idx) {
		free(clash);
		free(idx);
		return NULL;
	}
	for (i = 0; i < s->nsites; i++)
		idx[i] = i;
	/* renderers run one at a time: the comparison's snapshot is a static */
	clash_s = s;
	qsort(idx, s->nsites, sizeof(*idx), clash_cmp);
	for (i = 0; i < s->nsites; i = j) {
		for (j = i + 1; j < s->nsites && !clash_cmp(&idx[i], &idx[j]); j++)
			;
		/* a run of one name: a clash if two of them are in two places */
		for (k = i + 1; k < j; k++)
			if (!same_place(&s->sites[idx[i]], &s->sites[idx[k]]))
				break;
		if (k < j)
			for (k = i; k < j; k++)
				clash[idx[k]] = 1;
	}
	free(idx);
	return clash;
}

int prof_report_text(FILE *f, const struct prof_snapshot *s, const struct prof_report_opts *o)
{
	bool sched = prof_snap_any_sched(s);
	double up = 0;
	char note[160];
	int err = 0;

	if (s->exit_tick > s->tick_base)
		up = (double)prof_snap_ns(s, s->exit_tick - s->tick_base) / 1e9;
	fprintf(f, "prof: pid %u \"%s\", %u thread%s, clock %s %.3f GHz", s->pid, s->comm,
		s->nthreads, s->nthreads == 1 ? "" : "s",
		s->clock == PROF_CLOCK_TSC ? "tsc" : "monotonic", (double)s->tick_hz / 1e9);
	if (up > 0)
		fprintf(f, ", ran %.3f s", up);
	if (s->ns_pid)
		fprintf(f, ", container pid %u (%s)", s->ns_pid, s->cgroup[0] ? s->cgroup : "?");
	fprintf(f, "%s\n", sched ? ", kernel assisted" : "");
	if (s->compensated)
		fprintf(f, "prof: compensated: %s\n",
			prof_snap_compensated_note(s, note, sizeof(note)));
	if (s->sites_dropped || s->threads_dropped)
		fprintf(f, "prof: %llu sites and %llu threads not profiled (tables full)\n",
			(unsigned long long)s->sites_dropped,
			(unsigned long long)s->threads_dropped);
	if (s->nospace)
		fprintf(f, "prof: %llu threads, zones or nodes not profiled: /dev/shm was full\n",
			(unsigned long long)s->nospace);
	if (!o->no_tree)
		err = prof_report_tree(f, s, o);
	if (!err && !o->no_flat) {
		fprintf(f, "\n%sflat, by self time%s%s\n", o->color ? C_BOLD : "",
			o->tid ? "" : " across threads", o->color ? C_RESET : "");
		err = prof_report_flat(f, s, o);
	}
	if (err)
		return err;
	prof_report_locks(f, s);
	return ferror(f) ? -EIO : 0;
}

static int cmp_flat(const void *a, const void *b)
{
	const struct prof_flat_row *ra = a, *rb = b;
	__u64 ka, kb;

	switch (flat_sort_key) {
	case PROF_SORT_TOTAL:
		ka = ra->ticks, kb = rb->ticks;
		break;
	case PROF_SORT_CALLS:
		ka = ra->calls, kb = rb->calls;
		break;
	case PROF_SORT_MAX:
	case PROF_SORT_P99:
		ka = ra->max, kb = rb->max;
		break;
	case PROF_SORT_ONCPU:
		ka = prof_sort_oncpu_key(prof_flat_oncpu_ns(flat_sort_s, ra));
		kb = prof_sort_oncpu_key(prof_flat_oncpu_ns(flat_sort_s, rb));
		break;
	case PROF_SORT_SELF_ONCPU:
		ka = prof_sort_oncpu_key(ra->self_oncpu_ns);
		kb = prof_sort_oncpu_key(rb->self_oncpu_ns);
		break;
	default:
		ka = ra->self, kb = rb->self;
	}
	if (ka != kb)
		return ka < kb ? 1 : -1;
	return ra->site < rb->site ? -1 : ra->site > rb->site;
}

void prof_flat_sort(const struct prof_snapshot *s, struct prof_flat_row *rows, size_t n, int sort)
{
	flat_sort_key = sort;
	flat_sort_s = s;
	qsort(rows, n, sizeof(*rows), cmp_flat);
}

int prof_snap_flat(const struct prof_snapshot *s, __u32 tid, int sort, struct prof_flat_row **out,
		   size_t *nout)
{
	/* one row per site, and the last for overflow */
	struct prof_flat_row *rows = calloc((size_t)s->nsites + 1, sizeof(*rows));
	struct prof_snap_iter it = PROF_SNAP_ITER(s, tid);
	const struct prof_snap_thread *t;
	__u64 *oncpu = NULL;
	size_t n = 0;
	__u32 i, j, cap = 0;
	int err = 0;

	*out = NULL;
	*nout = 0;
	if (!rows)
		return -ENOMEM;
	for (i = 0; i <= s->nsites; i++) {
		rows[i].site = i < s->nsites ? i : PROF_SITE_NONE;
		rows[i].self_oncpu_ns = rows[i].oncpu_ns = PROF_SNAP_UNKNOWN;
	}
	while (!err && (t = prof_snap_next(&it))) {
		err = prof_snap_oncpu_room(s, t, &oncpu, &cap);
		for (j = 1; !err && j < t->nnodes; j++) {
			const struct prof_snap_node *nd = &t->nodes[j];
			struct prof_flat_row *r =
				&rows[nd->site < s->nsites ? nd->site : s->nsites];

			r->calls += nd->calls;
			r->self += prof_snap_self(nd);
			r->preempted += nd->preempted;
			r->migrated += nd->migrated;
			r->allocs += nd->allocs;
			r->alloc_bytes += nd->alloc_bytes;
			r->open += nd->open;
			r->blocked += nd->blocked;
			r->kernel_calls += nd->kernel_calls;
			r->self_oncpu_ns = prof_add_known(r->self_oncpu_ns,
							  prof_snap_self_oncpu(t, oncpu, j));
			if (nd->max > r->max)
				r->max = nd->max;
			/* a recursive instance's time is inside its outer one's */
			if (j == 1 || !prof_snap_is_recursive(t, j)) {
				r->ticks += nd->ticks;
				r->open_ticks += nd->open_ticks;
				r->offcpu_ns += nd->offcpu_ns;
				r->oncpu_ns = prof_add_known(r->oncpu_ns, oncpu[j]);
			}
		}
	}
	free(oncpu);
	if (!err)
		err = it.err;
	if (err) {
		free(rows);
		return err;
	}
	/* drop sites never called, keep order stable */
	for (i = 0; i <= s->nsites; i++)
		if (rows[i].calls || rows[i].ticks)
			rows[n++] = rows[i];
	prof_flat_sort(s, rows, n, sort);
	*out = rows;
	*nout = n;
	return 0;
}

/*
 * The nodes of the json, the bulk of it, built in a buffer rather than by
 * fprintf: the same characters.  A node's text is at most JROW bytes
 * before its children: its indent, two escaped strings, 18 numbers.
 */
#define JROW                                                                            \
	(2 * PROF_SNAP_DEPTH_MAX + 8 + 6 * (PROF_NAME_MAX + PROF_FILE_MAX + PROF_FUNC_MAX) + \
	 11 * PROF_HIST_BUCKETS + 800)
struct jbuf {
	FILE *f;
	char *p, *end;
	/* per site, the text every node of it starts with:
	 * {"name":...,"file":...,"line":N */
	char **site_txt;
	size_t *site_len;
	__u32 nsites;
	__u64 *oncpu; /* the thread's on-CPU time per node (prof_snap_oncpu) */
	__u32 noncpu;
	const struct prof_json_hook *hook;
	char buf[1 << 16];
};


static void jflush(struct jbuf *j)
{
	if (j->p > j->buf)
		fwrite(j->buf, 1, (size_t)(j->p - j->buf), j->f);
	j->p = j->buf;
}

static char *jroom(struct jbuf *j)
{
	if ((size_t)(j->end - j->p) < JROW)
		jflush(j);
	return j->p;
}

static char *jlit(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* a string literal: its length known where it is written */
#define JLIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

/* ",\"name\":N", or null for a time nobody knows (no kernel facts) */
static char *jns_unknown(char *p, const char *lit, __u64 ns)
{
	p = jlit(p, lit);
	if (ns == PROF_SNAP_UNKNOWN)
		return jlit(p, "null");
	return prof_put_u64(p, ns);
}

/* a node's name, file, line and function: {"name":...,"file":...,"line":N,"func":... */
static char *jsite(char *p, const struct prof_snapshot *s, const struct prof_snap_node *n)
{
	const struct prof_snap_site *site = n->site < s->nsites ? &s->sites[n->site] : NULL;

	p = JLIT(p, "{\"name\":");
	p = prof_json_esc(p, prof_snap_node_name(s, n));
	p = JLIT(p, ",\"file\":");
	p = prof_json_esc(p, site ? site->file : "");
	p = JLIT(p, ",\"line\":");
	p = prof_put_u64(p, site ? site->line : 0);
	p = JLIT(p, ",\"func\":");
	return prof_json_esc(p, site ? site->func : "");
}

/* every site's jsite text, once a snapshot: its nodes copy it */
static void jsites_free(struct jbuf *j)
{
	__u32 i;

	for (i = 0; i < j->nsites && j->site_txt; i++)
		free(j->site_txt[i]);
	free(j->site_txt);
	free(j->site_len);
	j->site_txt = NULL;
	j->site_len = NULL;
	j->nsites = 0;
	free(j->oncpu);
	j->oncpu = NULL;
	j->noncpu = 0;
}

static int jsites_build(struct jbuf *j, const struct prof_snapshot *s)
{
	struct prof_snap_node n = { .depth = 1 };
	char tmp[JROW];
	__u32 i;

	jsites_free(j);
	j->site_txt = calloc(s->nsites ? s->nsites : 1, sizeof(*j->site_txt));
	j->site_len = calloc(s->nsites ? s->nsites : 1, sizeof(*j->site_len));
	if (!j->site_txt || !j->site_len)
		return -ENOMEM;
	j->nsites = s->nsites;
	for (i = 0; i < s->nsites; i++) {
		n.site = i;
		j->site_len[i] = (size_t)(jsite(tmp, s, &n) - tmp);
		j->site_txt[i] = malloc(j->site_len[i]);
		if (!j->site_txt[i])
			return -ENOMEM;
		memcpy(j->site_txt[i], tmp, j->site_len[i]);
	}
	return 0;
}

static void json_node(struct jbuf *j, const struct prof_snapshot *s,
		      const struct prof_snap_thread *t, __u32 i, int depth)
{
	const struct prof_snap_node *n = &t->nodes[i];
	const __u32 *h;
	__u32 c, b;
	bool first = true;
	char *p = jroom(j);

	memset(p, ' ', (size_t)depth * 2);
	p += depth * 2;
	if (n->site < j->nsites) {
		memcpy(p, j->site_txt[n->site], j->site_len[n->site]);
		p += j->site_len[n->site];
	} else {
		p = jsite(p, s, n);
	}
	p = prof_put_u64(JLIT(p, ",\"calls\":"), n->calls);
	p = prof_put_u64(JLIT(p, ",\"open\":"), n->open);
	p = prof_put_u64(JLIT(p, ",\"open_ns\":"), prof_snap_ns(s, n->open_ticks));
	p = prof_put_u64(JLIT(p, ",\"total_ns\":"), prof_snap_ns(s, n->ticks));
	p = prof_put_u64(JLIT(p, ",\"self_ns\":"), prof_snap_ns(s, prof_snap_self(n)));
	p = prof_put_u64(JLIT(p, ",\"max_ns\":"), prof_snap_ns(s, n->max));
	p = prof_put_u64(JLIT(p, ",\"p50_ns\":"), prof_snap_ns(s, prof_snap_quantile(s, n, 0.5)));
	p = prof_put_u64(JLIT(p, ",\"p90_ns\":"), prof_snap_ns(s, prof_snap_quantile(s, n, 0.9)));
	p = prof_put_u64(JLIT(p, ",\"p99_ns\":"), prof_snap_ns(s, prof_snap_quantile(s, n, 0.99)));
	/* the counts figures.h lists, calls (first, above) aside; the derived
	 * on-CPU times after the off-CPU time they come from */
#define COUNT_PUT(f, unit, across, window, flat, slab, key)                                         \
	if (&n->f != &n->calls)                                                              \
		p = prof_put_u64(JLIT(p, ",\"" key "\":"), n->f);                                \
	if (&n->f == &n->offcpu_ns) {                                                        \
		p = jns_unknown(p, ",\"oncpu_ns\":", j->oncpu[i]);                              \
		p = jns_unknown(p, ",\"self_oncpu_ns\":", prof_snap_self_oncpu(t, j->oncpu, i)); \
	}
	PROF_NODE_COUNTS(COUNT_PUT)
#undef COUNT_PUT
	/* the duration histogram, from its first kept bucket: what --input
	 * needs to answer any percentile as the live report does */
	h = prof_snap_hist(s, n);
	if (h || !n->calls) {
		p = prof_put_u64(JLIT(p, ",\"hist_lo\":"), h ? n->hist_lo : 0);
		p = JLIT(p, ",\"hist\":[");
		for (b = 0; h && b < n->hist_n; b++) {
			if (b)
				*p++ = ',';
			p = prof_put_u64(p, h[b]);
		}
		*p++ = ']';
	}
	if (j->hook && j->hook->node) {
		j->p = p;
		jflush(j);
		j->hook->node(j->hook->arg, j->f, s, t, i);
		p = jroom(j);
	}
	p = JLIT(p, ",\"children\":[");
	j->p = p;
	/* a hostile depth must not exhaust the stack: cut, and say so */
	for (c = n->first_child; c != PROF_SNAP_NONE && depth < PROF_SNAP_DEPTH_MAX;
	     c = t->nodes[c].next_sibling) {
		p = jroom(j);
		j->p = jlit(p, first ? "\n" : ",\n");
		json_node(j, s, t, c, depth + 1);
		first = false;
	}
	p = jroom(j);
	j->p = jlit(p, depth >= PROF_SNAP_DEPTH_MAX && n->first_child != PROF_SNAP_NONE
			       ? "],\"truncated\":true}"
			       : "]}");
}

/* a figure a window cannot tell (figures.h's ALONE, NEWEST) is null */
static void json_value(struct prof_jw *w, const char *key, double v)
{
	prof_jw_name(w, key);
	if (isnan(v))
		prof_jw_null(w);
	else
		prof_jw_double(w, "%.17g", v);
}

static void json_ns(struct prof_jw *w, const struct prof_snapshot *s, const char *key, __u64 ticks)
{
	prof_jw_name(w, key);
	if (ticks == PROF_SNAP_UNKNOWN)
		prof_jw_null(w);
	else
		prof_jw_u64(w, prof_snap_ns(s, ticks));
}

/* a lock's or plot's figure under its JSON key (figures.h), as its unit
 * is written; none where it has no key, null where it is not known */
static void json_fig_count(struct prof_jw *w, const struct prof_snapshot *s, const char *key,
			   __u64 v, bool known)
{
	(void)s;
	if (!*key)
		return;
	prof_jw_name(w, key);
	if (known)
		prof_jw_u64(w, v);
	else
		prof_jw_null(w);
}

static void json_fig_ticks(struct prof_jw *w, const struct prof_snapshot *s, const char *key,
			   __u64 v, bool known)
{
	if (*key)
		json_ns(w, s, key, known ? v : PROF_SNAP_UNKNOWN);
}

static void json_fig_value(struct prof_jw *w, const struct prof_snapshot *s, const char *key,
			   double v, bool known)
{
	(void)s;
	if (*key)
		json_value(w, key, known ? v : NAN);
}

/* a plot's or lock's object, on a line of its own, opened with its name */
static void json_named_object(struct prof_jw *w, const char *name)
{
	prof_jw_ws(w, "\n  ");
	prof_jw_start_object(w);
	prof_jw_string_field(w, "name", name);
}

/*
 * A process's plots and locks (prof_snap_annot_sum) in the snapshot's
 * window, as its zones, their figures in figures.h's order: each plot's
 * points, min, max, last, then its mean; each lock's acquisitions,
 * contended ones, time waited and held (ns), the waits the thread slept
 * in (null without profd's word: no kernel_waits) and the releases of a
 * lock not held
 */
static void json_annot(struct prof_jw *w, const struct prof_snapshot *s)
{
	const struct prof_snap_annot *a = s->annot;
	size_t i;

	prof_jw_name(w, "plots");
	prof_jw_start_array(w);
	for (i = 0; i < a->nplots; i++) {
		const struct prof_annot_plot_sum *p = &a->plots[i];

		json_named_object(w, p->name);
#define PLOT_FIG(f, unit, across, window, key) json_fig_##unit(w, s, key, p->f, true);
		PROF_PLOT_FIGS(PLOT_FIG)
#undef PLOT_FIG
		json_value(w, "mean", p->count ? p->sum / (double)p->count : 0);
		prof_jw_end_object(w);
	}
	prof_jw_end_array(w);
	prof_jw_name(w, "locks");
	prof_jw_start_array(w);
	for (i = 0; i < a->nlocks; i++) {
		const struct prof_annot_lock_sum *l = &a->locks[i];

		json_named_object(w, l->name);
#define LOCK_FIG(f, unit, across, window, key) \
	json_fig_##unit(w, s, key, l->f, l->kernel_waits || strcmp(key, "blocked"));
		PROF_LOCK_FIGS(LOCK_FIG)
#undef LOCK_FIG
		prof_jw_end_object(w);
	}
	prof_jw_end_array(w);
}

/* one thread of a process: its fields, then its nodes (built in jbuf) */
static int json_thread(struct prof_jw *w, struct jbuf *j, const struct prof_snapshot *s,
		       const struct prof_snap_thread *t)
{
	FILE *f = j->f;
	bool first = true;
	__u32 c;

	prof_jw_ws(w, "\n  ");
	prof_jw_start_object(w);
	prof_jw_u64_field(w, "tid", t->tid);
	prof_jw_string_field(w, "name", t->name[0] ? t->name : t->comm);
	/* the aggregate of the exited threads whose slabs were reused */
	if (t->folds)
		prof_jw_u64_field(w, "exited_threads", t->folds);
	/* unknown (an image from before it was measured): null */
	prof_jw_name(w, "probe_cost_ns");
	if (s->zone_cost)
		prof_jw_u64(w, prof_snap_ns(s, prof_snap_probe_ticks(s, t)));
	else
		prof_jw_null(w);
	prof_jw_u64_field(w, "wall_ns", prof_snap_ns(s, t->nodes[0].ticks));
	prof_jw_u64_field(w, "outside_ns", prof_snap_ns(s, prof_snap_self(&t->nodes[0])));
	prof_jw_name(w, "oncpu_ns");
	if (t->oncpu_ns == PROF_SNAP_UNKNOWN)
		prof_jw_null(w);
	else
		prof_jw_u64(w, t->oncpu_ns);
	prof_jw_string_field(w, "state",
			     t->state == PROF_SLAB_EXITED ? "exited" : "alive");
	prof_jw_u64_field(w, "overflow", t->overflow);
	prof_jw_u64_field(w, "unbalanced", t->unbalanced);
	prof_jw_u64_field(w, "frames", t->frames);
	prof_jw_u64_field(w, "frame_total_ns", prof_snap_ns(s, t->frame_ticks));
	prof_jw_u64_field(w, "frame_max_ns", prof_snap_ns(s, t->frame_max));
	prof_jw_name(w, "kernel_slot");
	prof_jw_int(w, t->ksched_slot == PROF_NO_SLOT ? -1 : (int)t->ksched_slot);
	if (prof_snap_oncpu_room(s, t, &j->oncpu, &j->noncpu))
		return -ENOMEM;
	prof_jw_name(w, "nodes");
	prof_jw_start_array(w);
	/* the nodes, the bulk: built in jbuf, the same characters */
	for (c = t->nodes[0].first_child; c != PROF_SNAP_NONE;
	     c = t->nodes[c].next_sibling) {
		/* the overflow node only when something landed there */
		if (c == 1 && !t->nodes[1].calls && !t->nodes[1].anomalies)
			continue;
		fputs(first ? "\n" : ",\n", f);
		json_node(j, s, t, c, 3);
		jflush(j);
		first = false;
	}
	prof_jw_end_array(w);
	prof_jw_end_object(w);
	return 0;
}

int prof_report_json(FILE *f, struct prof_snapshot *const *snaps, size_t nsnaps)
{
	return prof_report_json_hook(f, snaps, nsnaps, NULL);
}

int prof_report_json_hook(FILE *f, struct prof_snapshot *const *snaps, size_t nsnaps,
			  const struct prof_json_hook *hook)
{
	struct jbuf *j = calloc(1, sizeof(*j)); /* no sites, no on-CPU times yet */
	struct prof_jw w;
	size_t k;

	if (!j)
		return -ENOMEM;
	j->f = f;
	j->p = j->buf;
	j->end = j->buf + sizeof(j->buf);
	j->hook = hook;

	prof_jw_init(&w, f);
	prof_jw_start_object(&w);
	prof_jw_u64_field(&w, "version", PROF_REPORT_JSON_VERSION);
	prof_jw_name(&w, "processes");
	prof_jw_start_array(&w);
	for (k = 0; k < nsnaps; k++) {
		const struct prof_snapshot *s = snaps[k];

		if (jsites_build(j, s)) {
			jsites_free(j);
			free(j);
			return -ENOMEM;
		}
		prof_jw_ws(&w, "\n ");
		prof_jw_start_object(&w);
		prof_jw_u64_field(&w, "pid", s->pid);
		prof_jw_u64_field(&w, "uid", s->uid);
		prof_jw_string_field(&w, "comm", s->comm);
		prof_jw_string_field(&w, "clock", s->clock == PROF_CLOCK_TSC ? "tsc" : "monotonic");
		prof_jw_u64_field(&w, "tick_hz", s->tick_hz);
		prof_jw_bool_field(&w, "exited", s->flags & PROF_SEG_EXITED);
		prof_jw_bool_field(&w, "tsc_synced", s->flags & PROF_SEG_TSC_SYNCED);
		if (s->span_ns)
			prof_jw_u64_field(&w, "span_ns", s->span_ns);
		if (s->compensated)
			prof_jw_bool_field(&w, "compensated", true);
		/* in a container: its own pid, and its cgroup */
		if (s->ns_pid) {
			prof_jw_u64_field(&w, "ns_pid", s->ns_pid);
			prof_jw_string_field(&w, "cgroup", s->cgroup);
		}
		if (s->samples_state)
			prof_jw_string_field(&w, "samples_state", s->samples_state);
		prof_jw_name(&w, "threads");
		prof_jw_start_array(&w);
		struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
		const struct prof_snap_thread *t;

		while ((t = prof_snap_next(&it))) {
			int err = json_thread(&w, j, s, t);

			if (err) {
				it.err = err;
				break;
			}
		}
		if (it.err) {
			jsites_free(j);
			free(j);
			return it.err;
		}
		prof_jw_end_array(&w);
		if (s->annot)
			json_annot(&w, s);
		prof_jw_end_object(&w);
	}
	prof_jw_raw(&w, "\n");
	prof_jw_end_array(&w);
	prof_jw_end_object(&w);
	prof_jw_raw(&w, "\n");
	jsites_free(j);
	free(j);
	return prof_jw_error(&w);
}
