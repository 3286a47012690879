// SPDX-License-Identifier: MIT
/*
 * render_data.c - the machine formats: csv (tree, flat, callers), folded
 * stacks (flamegraph.pl, speedscope; weighted by self wall ns, or with
 * --weight oncpu self on-CPU ns), and the json
 * of the flat and callers views (the tree's json is prof_report_json).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profctl.h"
#include "profctl_samples.h"

const struct pc_col_info pc_cols[PC_COLS] = {
#define PC_COL_INFO(id, key, tree, flat, html)                                         \
	[PC_COL_##id] = { key, PROF_FIG_IS(Y, tree), PROF_FIG_IS(Y, flat), PROF_FIG_IS(Y, html) },
	PROF_OUT_COLUMNS(PC_COL_INFO)
#undef PC_COL_INFO
};

__u64 pc_col_node(const struct prof_snapshot *s, const struct prof_snap_thread *t,
		  const __u64 *oncpu, __u32 j, enum pc_col c)
{
	const struct prof_snap_node *n = &t->nodes[j];

	switch (c) {
	case PC_COL_CALLS:
		return n->calls;
	case PC_COL_TOTAL:
		return prof_snap_ns(s, n->ticks);
	case PC_COL_SELF:
		return prof_snap_ns(s, prof_snap_self(n));
	case PC_COL_AVG:
		return prof_snap_avg_ns(s, n);
	case PC_COL_P50:
		return prof_snap_ns(s, prof_snap_quantile(s, n, 0.50));
	case PC_COL_P99:
		return prof_snap_ns(s, prof_snap_quantile(s, n, 0.99));
	case PC_COL_MAX:
		return prof_snap_ns(s, n->max);
	case PC_COL_PREEMPTED:
		return n->preempted;
	case PC_COL_MIGRATED:
		return n->migrated;
	case PC_COL_OFFCPU:
		return n->offcpu_ns;
	case PC_COL_ALLOCS:
		return n->allocs;
	case PC_COL_ALLOC_BYTES:
		return n->alloc_bytes;
	case PC_COL_FREES:
		return n->frees;
	case PC_COL_FREE_BYTES:
		return n->free_bytes;
	case PC_COL_OPEN:
		return n->open;
	case PC_COL_OPEN_NS:
		return prof_snap_ns(s, n->open_ticks);
	case PC_COL_KERNEL_CALLS:
		return n->kernel_calls;
	case PC_COL_BLOCKED:
		return n->blocked;
	case PC_COL_ONCPU:
		return oncpu[j];
	case PC_COL_SELF_ONCPU:
		return prof_snap_self_oncpu(t, oncpu, j);
	case PC_COL_PCT:
	case PC_COLS:
		break;
	}
	return PROF_SNAP_UNKNOWN;
}

__u64 pc_col_row(const struct prof_snapshot *s, const struct prof_flat_row *r, enum pc_col c)
{
	switch (c) {
	case PC_COL_CALLS:
		return r->calls;
	case PC_COL_TOTAL:
		return prof_snap_ns(s, r->ticks);
	case PC_COL_SELF:
		return prof_snap_ns(s, r->self);
	case PC_COL_AVG:
		return prof_flat_avg_ns(s, r);
	case PC_COL_MAX:
		return prof_snap_ns(s, r->max);
	case PC_COL_PREEMPTED:
		return r->preempted;
	case PC_COL_MIGRATED:
		return r->migrated;
	case PC_COL_OFFCPU:
		return r->offcpu_ns;
	case PC_COL_ALLOCS:
		return r->allocs;
	case PC_COL_ALLOC_BYTES:
		return r->alloc_bytes;
	case PC_COL_OPEN:
		return r->open;
	case PC_COL_OPEN_NS:
		return prof_snap_ns(s, r->open_ticks);
	case PC_COL_KERNEL_CALLS:
		return r->kernel_calls;
	case PC_COL_BLOCKED:
		return r->blocked;
	case PC_COL_ONCPU:
		return prof_flat_oncpu_ns(s, r);
	case PC_COL_SELF_ONCPU:
		return r->self_oncpu_ns;
	default:
		break;
	}
	return PROF_SNAP_UNKNOWN;
}

/* ",key" for each column the format (tree, flat or html) has */
static void csv_head(FILE *f, const char *pre, bool flat)
{
	fputs(pre, f);
	for (int c = 0; c < PC_COLS; c++)
		if (flat ? pc_cols[c].flat : pc_cols[c].tree)
			fprintf(f, ",%s", pc_cols[c].key);
	fputc('\n', f);
}

/* ",N", or "," alone for a value nobody knows (no kernel facts) */
static char *csv_put_u64(char *p, __u64 v)
{
	*p++ = ',';
	return v == PROF_SNAP_UNKNOWN ? p : prof_put_u64(p, v);
}

/* a node's path from the top, "a;b;c"; bounded by len */
static void node_path(const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i,
		      char *buf, size_t len)
{
	const char *names[256];
	__u32 n = 0, guard = 0;
	size_t off = 0;

	buf[0] = 0;
	while (i != PROF_NODE_ROOT && i < t->nnodes && guard++ < t->nnodes) {
		if (n < 256)
			names[n++] = prof_snap_node_name(s, &t->nodes[i]);
		else
			names[255] = "...";
		i = t->nodes[i].parent;
	}
	while (n-- > 0 && off < len) {
		int w = snprintf(buf + off, len - off, "%s%s", off ? ";" : "", names[n]);

		if (w < 0)
			break;
		off += (size_t)w;
	}
}

struct walk {
	FILE *f;
	const struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	const struct pc_opts *o;
	__u64 total;
	char tlabel[64];
	struct prof_out *out;
	__u32 *kids; /* the sorted children of the path walked, stacked */
	__u32 nkids;
	__u64 *oncpu; /* each node's on-CPU time (prof_snap_oncpu) */
	__u32 noncpu;
	__u64 unknown; /* folded --weight oncpu: nodes left out, no kernel facts */
	struct pc_samples *samples; /* folded: profd's of the process walked, or NULL */
	void (*fn)(struct walk *, __u32); /* what walk_thread does a node */
	bool path_ok;			  /* path is node_path's text for the node visited */
	size_t plen;
	char path[4096];
	/* csv: "pid,comm,tid,thread," for csv_pre_t, quoted */
	const struct prof_snap_thread *csv_pre_t;
	size_t csv_pre_len;
	char csv_pre[320];
};

/* the bytes csv quotes a string for */
static const bool csv_special[256] = { [','] = true, ['"'] = true, ['\n'] = true, ['\r'] = true };

/* strlen(s) into *len; true if csv quotes s */
static bool csv_quoted(const char *s, size_t *len)
{
	const char *e;
	bool quote = false;

	for (e = s; *e; e++)
		quote |= csv_special[(unsigned char)*e];
	*len = (size_t)(e - s);
	return quote;
}

/* s as csv_str writes it, at p (room for 2 * strlen(s) + 2) */
static char *csv_put(char *p, const char *s)
{
	size_t n;

	if (!csv_quoted(s, &n)) {
		memcpy(p, s, n);
		return p + n;
	}
	*p++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*p++ = '"';
		*p++ = *s;
	}
	*p++ = '"';
	return p;
}

/* csv_str into the output buffer */
static void csv_out(struct prof_out *o, const char *s)
{
	size_t n;

	if (!csv_quoted(s, &n)) {
		prof_out_write(o, s, n);
		return;
	}
	prof_out_write(o, "\"", 1);
	for (; *s; s++) {
		if (*s == '"')
			prof_out_write(o, "\"", 1);
		prof_out_write(o, s, 1);
	}
	prof_out_write(o, "\"", 1);
}

/* the node's path: the one the walk keeps, else built as node_path builds it */
static const char *walk_path(struct walk *w, __u32 i, char *buf, size_t len)
{
	if (w->path_ok)
		return w->path;
	node_path(w->s, w->t, i, buf, len);
	return buf;
}

/*
 * "pid,comm,tid,thread,node,parent,depth,zone,path" then the tree's columns
 * of PROF_OUT_COLUMNS, with csv quoting of the strings, built in place as
 * printf would print it
 */
static void csv_node(struct walk *w, __u32 i)
{
	const struct prof_snapshot *s = w->s;
	const struct prof_snap_node *n = &w->t->nodes[i];
	char buf[4096];
	const char *path = walk_path(w, i, buf, sizeof(buf));
	char *p;
	int k;

	/* the same for every row of a thread: built once */
	if (w->csv_pre_t != w->t) {
		p = prof_put_u64(w->csv_pre, s->pid);
		*p++ = ',';
		p = csv_put(p, s->comm);
		*p++ = ',';
		p = prof_put_u64(p, w->t->tid);
		*p++ = ',';
		p = csv_put(p, w->tlabel);
		*p++ = ',';
		w->csv_pre_len = (size_t)(p - w->csv_pre);
		w->csv_pre_t = w->t;
	}
	p = prof_out_row(w->out);
	memcpy(p, w->csv_pre, w->csv_pre_len);
	p += w->csv_pre_len;
	p = prof_put_u64(p, i);
	*p++ = ',';
	p = prof_put_u64(p, n->parent);
	*p++ = ',';
	p = prof_put_u64(p, n->depth);
	*p++ = ',';
	p = csv_put(p, prof_snap_node_name(s, n));
	*p++ = ',';
	w->out->p = p;
	csv_out(w->out, path);
	p = prof_out_row(w->out);
	for (k = 0; k < PC_COLS; k++) {
		if (!pc_cols[k].tree)
			continue;
		if (k == PC_COL_PCT) {
			*p++ = ',';
			p = prof_put_fixed(p, w->total ? 100.0 * (double)n->ticks / (double)w->total : 0.0,
					   3);
		} else {
			p = csv_put_u64(p, pc_col_node(s, w->t, w->oncpu, i, (enum pc_col)k));
		}
	}
	*p++ = '\n';
	w->out->p = p;
}

static void folded_node(struct walk *w, __u32 i)
{
	const struct prof_snap_node *n = &w->t->nodes[i];
	__u64 self = prof_snap_ns(w->s, prof_snap_self(n));
	char buf[4096], *p;
	const char *path;

	if (w->o->weight == PC_WEIGHT_ONCPU) {
		self = prof_snap_self_oncpu(w->t, w->oncpu, i);
		/* a stack of 0 would say it never ran: leave it out, counted */
		if (self == PROF_SNAP_UNKNOWN) {
			w->unknown++;
			return;
		}
	}
	if (!self)
		return;
	path = walk_path(w, i, buf, sizeof(buf));
	if (pc_folded_needs(path)) {
		if (path != buf)
			snprintf(buf, sizeof(buf), "%s", path);
		pc_folded_safe(buf, false);
		path = buf;
	}
	/* the zone's time on the CPU goes to the stacks sampled in it */
	if (w->samples) {
		__u64 cpu = prof_snap_self_oncpu(w->t, w->oncpu, i);

		self = pc_samples_folded(w->out, w->samples, w->s, w->t, i,
					 w->s->nthreads > 1 || w->t->tid ? w->tlabel : NULL, path,
					 self, cpu == PROF_SNAP_UNKNOWN || cpu > self ? self : cpu);
		if (!self)
			return;
	}
	if (w->s->nthreads > 1 || w->t->tid) {
		prof_out_write(w->out, w->tlabel, strlen(w->tlabel));
		prof_out_write(w->out, ";", 1);
	}
	prof_out_write(w->out, path, strlen(path));
	p = prof_out_row(w->out);
	*p++ = ' ';
	p = prof_put_u64(p, self);
	*p++ = '\n';
	w->out->p = p;
}

/*
 * Depth first in sorted order; kids is where this level's children go
 * (room for cap), the levels below stacked after them.  The path grows by
 * a name a level while it is short, as node_path would write it; past
 * that (deep or long), node_path writes it.
 */
static void walk_tree(struct walk *w, __u32 i, void (*fn)(struct walk *, __u32), __u32 depth,
		      __u32 *kids, __u32 cap)
{
	size_t plen = w->plen;
	bool ok = w->path_ok;
	__u32 n, k;

	if (depth > PROF_SNAP_DEPTH_MAX)
		return;
	n = prof_snap_sorted_children_cap(w->s, w->t, i, w->o->sort, w->oncpu, kids, cap);
	for (k = 0; k < n; k++) {
		const char *name = prof_snap_node_name(w->s, &w->t->nodes[kids[k]]);
		size_t nl = strlen(name);

		w->path_ok = ok && depth < 200 && plen + nl + 2 < sizeof(w->path);
		if (w->path_ok) {
			w->plen = plen;
			if (w->plen)
				w->path[w->plen++] = ';';
			memcpy(w->path + w->plen, name, nl + 1);
			w->plen += nl;
		}
		fn(w, kids[k]);
		walk_tree(w, kids[k], fn, depth + 1, kids + n, cap - n);
		w->path_ok = ok;
		w->plen = plen;
		w->path[plen] = 0;
	}
}

/* thread t of s walked with w->fn, to f */
static int walk_thread(struct walk *w, FILE *f, const struct prof_snapshot *s,
		       const struct prof_snap_thread *t)
{
	int err;

	w->s = s;
	w->t = t;
	err = prof_snap_kids_room(t, &w->kids, &w->nkids);
	if (err || !t->nnodes)
		return err;
	err = prof_snap_oncpu_room(s, t, &w->oncpu, &w->noncpu);
	if (err)
		return err;
	w->total = prof_snap_thread_total(t);
	prof_snap_thread_label(t, w->tlabel, sizeof(w->tlabel));
	if (w->fn == folded_node)
		pc_folded_safe(w->tlabel, true);
	w->path_ok = true;
	w->plen = 0;
	w->path[0] = 0;
	prof_out_init(w->out, f);
	walk_tree(w, PROF_NODE_ROOT, w->fn, 0, w->kids, w->nkids);
	prof_out_flush(w->out);
	return ferror(f) ? -EIO : 0;
}

static int walk_all(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o,
		    void (*fn)(struct walk *, __u32))
{
	struct walk *w = calloc(1, sizeof(*w));
	size_t p;
	int err = -ENOMEM;

	if (!w)
		return err;
	w->f = f;
	w->o = o;
	w->fn = fn;
	w->out = malloc(sizeof(*w->out));
	if (!w->out)
		goto cleanup;
	err = 0;
	for (p = 0; p < n && !err; p++) {
		struct prof_snap_iter it = PROF_SNAP_ITER(snaps[p], 0);
		const struct prof_snap_thread *t;

		/* folded through profd: its sampled stacks below their zones */
		if (fn == folded_node && o->samples_src)
			w->samples = pc_samples_get(o->samples_src, (pid_t)snaps[p]->pid);
		while (!err && (t = prof_snap_next(&it)))
			err = walk_thread(w, f, snaps[p], t);
		if (!err)
			err = it.err;
		pc_samples_free(w->samples);
		w->samples = NULL;
	}
	if (!err && w->unknown)
		pc_warnx("folded --weight oncpu: %llu call paths left out: none of their calls "
			 "had kernel facts (profd)",
			 (unsigned long long)w->unknown);
cleanup:
	free(w->kids);
	free(w->oncpu);
	free(w->out);
	free(w);
	return err;
}

static int csv_flat(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o)
{
	size_t p, i;
	int err;

	csv_head(f, "pid,comm,zone", true);
	for (p = 0; p < n; p++) {
		const struct prof_snapshot *s = snaps[p];
		struct prof_flat_row *rows = NULL;
		size_t nr = 0;

		err = prof_snap_flat(s, o->tid, o->sort, &rows, &nr);
		if (err)
			return err;
		for (i = 0; i < nr && (!o->rows || i < (size_t)o->rows); i++) {
			const struct prof_flat_row *r = &rows[i];
			char row[PC_COLS * 22], *q = row;

			fprintf(f, "%u,", s->pid);
			pc_csv_str(f, s->comm);
			fputc(',', f);
			pc_csv_str(f, r->site < s->nsites ? s->sites[r->site].name : "[overflow]");
			for (int c = 0; c < PC_COLS; c++)
				if (pc_cols[c].flat)
					q = csv_put_u64(q, pc_col_row(s, r, (enum pc_col)c));
			fwrite(row, 1, (size_t)(q - row), f);
			fputc('\n', f);
		}
		free(rows);
	}
	return 0;
}

/* a row set per process and site --callers names: two of one name are two */
static int csv_callers(FILE *f, struct prof_snapshot *const *snaps, size_t n,
		       const struct pc_opts *o)
{
	size_t p, i, k, ns;
	bool any = false;
	int err = 0;

	fputs("pid,comm,role,zone,calls,time_ns\n", f);
	for (p = 0; p < n && !err; p++) {
		const struct prof_snapshot *s = snaps[p];
		__u32 *sites;

		ns = pc_callers_sites(s, o->callers, &sites);
		for (k = 0; k < ns && !err; k++) {
			struct pc_callers c;

			err = pc_callers_site(s, sites[k], &c);
			if (err)
				break;
			any = true;
#define ROW(role, name, calls, ticks)                                   \
	do {                                                            \
		fprintf(f, "%u,", s->pid);                              \
		pc_csv_str(f, s->comm);                                    \
		fprintf(f, ",%s,", role);                               \
		pc_csv_str(f, name);                                       \
		fprintf(f, ",%llu,%llu\n", (unsigned long long)(calls), \
			(unsigned long long)prof_snap_ns(s, ticks));    \
	} while (0)
			for (i = 0; i < c.nparents; i++)
				ROW("parent", c.parents[i].name, c.parents[i].calls,
				    c.parents[i].ticks);
			ROW("zone", c.zone, c.calls, c.ticks);
			ROW("self", c.zone, 0, c.self);
			for (i = 0; i < c.nchildren; i++)
				ROW("child", c.children[i].name, c.children[i].calls,
				    c.children[i].ticks);
#undef ROW
			pc_callers_free(&c);
		}
		free(sites);
	}
	if (err)
		return err;
	return any ? 0 : -ENOENT;
}

int pc_render_csv(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o)
{
	int err = 0;

	if (o->callers)
		err = csv_callers(f, snaps, n, o);
	else if (o->flat)
		err = csv_flat(f, snaps, n, o);
	else {
		csv_head(f, "pid,comm,tid,thread,node,parent,depth,zone,path", false);
		err = walk_all(f, snaps, n, o, csv_node);
	}
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}

int pc_render_folded(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o)
{
	int err = walk_all(f, snaps, n, o, folded_node);

	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}

/*
 * json of the flat and callers views, beside prof_report_json's tree:
 * {"version":4,"view":"flat"|"callers","processes":[{"pid","comm",...}]}
 */
/* {"zone":name,"calls":N,"time_ns":N}: a caller or callee of the callers view */
static void json_edges(struct prof_jw *w, const struct prof_snapshot *s, const char *name,
		       const struct pc_caller_row *e, size_t n)
{
	size_t i;

	prof_jw_name(w, name);
	prof_jw_start_array(w);
	for (i = 0; i < n; i++) {
		prof_jw_start_object(w);
		prof_jw_string_field(w, "zone", e[i].name);
		prof_jw_u64_field(w, "calls", e[i].calls);
		prof_jw_u64_field(w, "time_ns", prof_snap_ns(s, e[i].ticks));
		prof_jw_end_object(w);
	}
	prof_jw_end_array(w);
}

/* "name":N, or null for a time nobody knows (no kernel facts) */
static void json_ns_unknown(struct prof_jw *w, const char *name, __u64 ns)
{
	prof_jw_name(w, name);
	if (ns == PROF_SNAP_UNKNOWN)
		prof_jw_null(w);
	else
		prof_jw_u64(w, ns);
}

/* a process's object, opened, with what says which it is and how it is
 * shown: pid, comm, compensated, and in a container its pid and cgroup */
static void json_proc_head(struct prof_jw *w, const struct prof_snapshot *s)
{
	prof_jw_start_object(w);
	prof_jw_u64_field(w, "pid", s->pid);
	prof_jw_string_field(w, "comm", s->comm);
	if (s->compensated)
		prof_jw_bool_field(w, "compensated", true);
	if (s->ns_pid) {
		prof_jw_u64_field(w, "ns_pid", s->ns_pid);
		prof_jw_string_field(w, "cgroup", s->cgroup);
	}
}

/*
 * the callers view's items of a process: one per site --callers names (two
 * of one name are two, each "name (file:line)"), or one of zeros if none
 */
static int json_callers(struct prof_jw *w, const struct prof_snapshot *s, const struct pc_opts *o)
{
	__u32 *sites;
	size_t ns = pc_callers_sites(s, o->callers, &sites), k;
	int err = 0;

	for (k = 0; k < ns || k == 0; k++) {
		struct pc_callers c;

		memset(&c, 0, sizeof(c));
		err = ns ? pc_callers_site(s, sites[k], &c) : -ENOENT;
		if (err == -ENOENT)
			snprintf(c.zone, sizeof(c.zone), "%s", o->callers);
		else if (err)
			break;
		json_proc_head(w, s);
		prof_jw_string_field(w, "zone", c.zone);
		prof_jw_u64_field(w, "calls", c.calls);
		prof_jw_u64_field(w, "total_ns", prof_snap_ns(s, c.ticks));
		prof_jw_u64_field(w, "self_ns", prof_snap_ns(s, c.self));
		prof_jw_u64_field(w, "max_ns", prof_snap_ns(s, c.max));
		json_edges(w, s, "parents", c.parents, c.nparents);
		json_edges(w, s, "children", c.children, c.nchildren);
		prof_jw_end_object(w);
		pc_callers_free(&c);
		err = 0;
	}
	free(sites);
	return err;
}

int pc_render_json_view(FILE *f, struct prof_snapshot *const *snaps, size_t n,
			const struct pc_opts *o)
{
	struct prof_jw w;
	size_t p, i;
	int err;

	prof_jw_init(&w, f);
	prof_jw_start_object(&w);
	prof_jw_u64_field(&w, "version", PROF_REPORT_JSON_VERSION);
	prof_jw_string_field(&w, "view", o->callers ? "callers" : "flat");
	prof_jw_name(&w, "processes");
	prof_jw_start_array(&w);
	for (p = 0; p < n; p++) {
		const struct prof_snapshot *s = snaps[p];

		if (o->callers) {
			err = json_callers(&w, s, o);
			if (err)
				return err;
			continue;
		}
		json_proc_head(&w, s);
		{
			struct prof_flat_row *rows = NULL;
			size_t nr = 0;

			err = prof_snap_flat(s, o->tid, o->sort, &rows, &nr);
			if (err)
				return err;
			prof_jw_name(&w, "zones");
			prof_jw_start_array(&w);
			for (i = 0; i < nr && (!o->rows || i < (size_t)o->rows); i++) {
				const struct prof_flat_row *r = &rows[i];

				prof_jw_start_object(&w);
				prof_jw_string_field(&w, "zone",
						     r->site < s->nsites ? s->sites[r->site].name
									 : "[overflow]");
				prof_jw_u64_field(&w, "calls", r->calls);
				prof_jw_u64_field(&w, "total_ns", prof_snap_ns(s, r->ticks));
				prof_jw_u64_field(&w, "self_ns", prof_snap_ns(s, r->self));
				prof_jw_u64_field(&w, "max_ns", prof_snap_ns(s, r->max));
				prof_jw_u64_field(&w, "preempted", r->preempted);
				prof_jw_u64_field(&w, "migrated", r->migrated);
				prof_jw_u64_field(&w, "offcpu_ns", r->offcpu_ns);
				prof_jw_u64_field(&w, "open", r->open);
				prof_jw_u64_field(&w, "open_ns", prof_snap_ns(s, r->open_ticks));
				prof_jw_u64_field(&w, "kernel_calls", r->kernel_calls);
				prof_jw_u64_field(&w, "blocked", r->blocked);
				json_ns_unknown(&w, "oncpu_ns", prof_flat_oncpu_ns(s, r));
				json_ns_unknown(&w, "self_oncpu_ns", r->self_oncpu_ns);
				prof_jw_end_object(&w);
			}
			prof_jw_end_array(&w);
			prof_jw_end_object(&w);
			free(rows);
		}
	}
	prof_jw_end_array(&w);
	prof_jw_end_object(&w);
	prof_jw_raw(&w, "\n");
	return prof_jw_error(&w);
}
