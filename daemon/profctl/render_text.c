// SPDX-License-Identifier: MIT
/*
 * render_text.c - the terminal views: the call tree per thread (drawn as a
 * tree, with percentiles and, when profd assisted, scheduler columns), the
 * flat list, and IProf's callers view of one zone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profctl.h"

#define C_RESET "\033[0m"
#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"
#define C_RED "\033[31m"
#define C_YEL "\033[33m"
#define C_CYAN "\033[36m"

struct tctx {
	struct pc_out *out;
	const struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	const struct pc_opts *o;
	bool sched;
	bool migr; /* a row of a thread drawn so far was migrated */
	int err;
	__u64 total;	  /* the thread's, in ticks */
	__u32 *kids;	  /* the sorted children of the path drawn, stacked */
	__u32 nkids;	  /* their capacity */
	const __u8 *nlen; /* strlen of each site's name */
	const __u8 *clash; /* sites whose name another site has (pc_name_clashes) */
	size_t plen;	  /* strlen(prefix) */
	char prefix[512]; /* tree drawing so far */
};

static const char *col(const struct pc_opts *o, const char *c)
{
	return o->color ? c : "";
}

static const char *heat(const struct pc_opts *o, double share)
{
	if (!o->color)
		return "";
	return share >= 0.20 ? C_RED : share >= 0.05 ? C_YEL : "";
}

static void tree_header(struct tctx *c)
{
	pc_out_printf(c->out, "%s%10s %4s %9s %9s %9s %9s %9s %9s %6s", col(c->o, C_DIM), "calls",
		      "open", "total", "self", "avg", "p50", "p99", "max", "%thr");
	if (c->sched)
		pc_out_printf(c->out, " %9s %8s %8s %8s", "on-cpu", "preempt", "blocked", "migr");
	pc_out_printf(c->out, "  zone%s\n", col(c->o, C_RESET));
}

/* a string at p */
static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* a duration right-aligned in width, after a space */
static char *put_ns_col(char *p, __u64 ns, unsigned int width)
{
	*p++ = ' ';
	return pc_put_ns_col(p, ns, width);
}

/* "-" right-aligned in width, after a space: a value nobody knows */
static char *put_unknown_col(char *p, unsigned int width)
{
	*p++ = ' ';
	memset(p, ' ', width - 1);
	p[width - 1] = '-';
	return p + width;
}

/* calls in flight, blank when none */
static char *put_open_col(char *p, __u64 open)
{
	*p++ = ' ';
	if (!open) {
		memset(p, ' ', 4);
		return p + 4;
	}
	return pc_put_u64_col(p, open, 4);
}

/*
 * on-cpu, preempt, blocked, migr: what the kernel said of the calls that
 * had kernel facts; "-" for a row none of whose calls had any.  on-cpu is
 * the closed calls' time less their time switched out.
 */
static char *put_kernel_cols(char *p, const struct prof_snapshot *s, __u64 closed_ticks,
			     __u64 kcalls, __u64 offcpu_ns, __u64 preempted, __u64 blocked,
			     __u64 migrated)
{
	__u64 tot = prof_snap_ns(s, closed_ticks);

	if (!kcalls) {
		p = put_unknown_col(p, 9);
		p = put_unknown_col(p, 8);
		p = put_unknown_col(p, 8);
		return put_unknown_col(p, 8);
	}
	p = put_ns_col(p, tot > offcpu_ns ? tot - offcpu_ns : 0, 9);
	*p++ = ' ';
	p = pc_put_u64_col(p, preempted, 8);
	*p++ = ' ';
	p = pc_put_u64_col(p, blocked, 8);
	*p++ = ' ';
	return pc_put_u64_col(p, migrated, 8);
}

/* a row whose calls were not all covered by the kernel says how many were */
static char *put_coverage(char *p, __u64 calls, __u64 kcalls)
{
	char b[64];

	if (!kcalls || kcalls >= calls)
		return p;
	snprintf(b, sizeof(b), " [kernel %llu/%llu]", (unsigned long long)kcalls,
		 (unsigned long long)calls);
	return put_str(p, b);
}

/*
 * One row, as "%10llu %9s %s%9s%s %9s %9s %9s %9s %6.1f" [" %9s %8llu %8llu"]
 * "  %s%s%s%s%s%s\n" would print it (tests/golden holds that text), built
 * in place: printf was most of the time of a report with many rows.
 */
static void tree_row(struct tctx *c, __u32 i, const char *branch)
{
	const struct prof_snapshot *s = c->s;
	const struct prof_snap_node *n = &c->t->nodes[i];
	__u64 self_ticks = prof_snap_self(n);
	__u64 tot = prof_snap_ns(s, n->ticks), self = prof_snap_ns(s, self_ticks);
	double share = c->total ? (double)self_ticks / (double)c->total : 0;
	double pct = c->total ? 100.0 * (double)n->ticks / (double)c->total : 0;
	char *p = pc_out_row(c->out);

	p = pc_put_u64_col(p, n->calls, 10);
	p = put_open_col(p, n->open);
	p = put_ns_col(p, tot, 9);
	*p++ = ' ';
	p = put_str(p, heat(c->o, share));
	p = pc_put_ns_col(p, self, 9);
	if (share >= 0.05)
		p = put_str(p, col(c->o, C_RESET));
	p = put_ns_col(p, pc_avg_ns(s, n), 9);
	p = put_ns_col(p, prof_snap_ns(s, prof_snap_quantile(s, n, 0.50)), 9);
	p = put_ns_col(p, prof_snap_ns(s, prof_snap_quantile(s, n, 0.99)), 9);
	p = put_ns_col(p, prof_snap_ns(s, n->max), 9);
	*p++ = ' ';
	p = pc_put_fixed_col(p, pct, 1, 6);
	if (c->sched)
		p = put_kernel_cols(p, s, n->ticks - n->open_ticks, n->kernel_calls, n->offcpu_ns,
				    n->preempted, n->blocked, n->migrated);
	*p++ = ' ';
	*p++ = ' ';
	p = put_str(p, col(c->o, C_DIM));
	if (branch) {
		memcpy(p, c->prefix, c->plen);
		p = put_str(p + c->plen, branch);
	}
	p = put_str(p, col(c->o, C_RESET));
	if (n->site < s->nsites) {
		memcpy(p, s->sites[n->site].name, c->nlen[n->site]);
		p += c->nlen[n->site];
		if (c->clash && c->clash[n->site])
			p = pc_put_where(p, &s->sites[n->site]);
	} else {
		p = put_str(p, prof_snap_node_name(s, n));
	}
	if (n->migrated && !(s->flags & PROF_SEG_TSC_SYNCED))
		p = put_str(p, " *migrated");
	if (c->sched)
		p = put_coverage(p, n->calls, n->kernel_calls);
	if (prof_snap_is_recursive(c->t, i))
		p = put_str(p, " (recursive)");
	*p++ = '\n';
	c->out->p = p;
}

/* the thread's time outside every zone: the root's self time */
static void outside_row(struct tctx *c)
{
	const struct prof_snap_node *r = &c->t->nodes[PROF_NODE_ROOT];
	__u64 self = prof_snap_self(r);
	char *p = pc_out_row(c->out);

	memset(p, ' ', 15);
	p += 15;
	p = put_ns_col(p, prof_snap_ns(c->s, self), 9);
	p = put_ns_col(p, prof_snap_ns(c->s, self), 9);
	memset(p, ' ', 40);
	p += 40;
	*p++ = ' ';
	p = pc_put_fixed_col(p, c->total ? 100.0 * (double)self / (double)c->total : 0, 1, 6);
	if (c->sched) {
		memset(p, ' ', 37);
		p += 37;
	}
	p = put_str(p, "  [outside zones]\n");
	c->out->p = p;
}

/* kids: where this level's sorted children go, room for cap */
static void tree_walk(struct tctx *c, __u32 i, __u32 depth, __u32 *kids, __u32 cap)
{
	size_t plen = c->plen;
	__u32 n, k;

	/* a tree deeper than anyone reads (or a hostile one): stop */
	if (depth >= PROF_SNAP_DEPTH_MAX) {
		if (c->t->nodes[i].first_child != PROF_SNAP_NONE)
			pc_out_printf(c->out, "%s└─ ... deeper levels not shown\n", c->prefix);
		return;
	}
	/* this level's list, then the levels below stacked after it */
	n = pc_sorted_children_cap(c->s, c->t, i, c->o->sort, kids, cap);
	for (k = 0; k < n; k++) {
		bool last = k + 1 == n;

		tree_row(c, kids[k], depth == 0 ? NULL : last ? "└─ " : "├─ ");
		if (depth > 0 && plen + 8 < sizeof(c->prefix)) {
			memcpy(c->prefix + plen, last ? "   " : "│  ", last ? 4 : 6);
			c->plen = plen + (last ? 3 : 5);
		}
		tree_walk(c, kids[k], depth + 1, kids + n, cap - n);
		c->prefix[plen] = 0;
		c->plen = plen;
	}
}

static void thread_title(FILE *f, const struct prof_snapshot *s, const struct prof_snap_thread *t,
			 const struct pc_opts *o, __u64 total)
{
	char lb[64], tb[24];

	/* tid 0: the threads merged (--threads), "all 5 threads" */
	fprintf(f, "%s%s%s", col(o, C_BOLD), t->tid ? "thread " : "",
		prof_snap_thread_label(t, lb, sizeof(lb)));
	if (t->tid && strncmp(lb, "tid ", 4))
		fprintf(f, " (tid %u)", t->tid);
	fprintf(f, "%s  %s, wall %s", col(o, C_RESET),
		t->state == PROF_SLAB_EXITED ? "exited" : "alive",
		pc_fmt_ns(tb, sizeof(tb), prof_snap_ns(s, total)));
	if (t->oncpu_ns != PROF_SNAP_UNKNOWN)
		fprintf(f, ", on-cpu %s", pc_fmt_ns(tb, sizeof(tb), t->oncpu_ns));
	if (s->zone_cost && total) {
		__u64 pt = prof_snap_probe_ticks(s, t);

		fprintf(f, ", zones cost ~%s (%.1f%%)%s",
			pc_fmt_ns(tb, sizeof(tb), prof_snap_ns(s, pt)),
			prof_snap_probe_share(s, t, pt), s->compensated ? " taken out" : "");
	}
	if (t->overflow)
		fprintf(f, ", %llu entries lost (node table full)",
			(unsigned long long)t->overflow);
	if (t->unbalanced)
		fprintf(f, ", %llu unbalanced", (unsigned long long)t->unbalanced);
	if (t->frames) {
		char ab[24];

		fprintf(f, ", %llu frame%s avg %s max %s", (unsigned long long)t->frames,
			t->frames == 1 ? "" : "s",
			pc_fmt_ns(ab, sizeof(ab), prof_snap_ns(s, t->frame_ticks / t->frames)),
			pc_fmt_ns(tb, sizeof(tb), prof_snap_ns(s, t->frame_max)));
	}
	fputc('\n', f);
}

/* bytes as "81920 (80.0KiB)" */
static const char *fmt_bytes(char *buf, size_t len, __u64 v)
{
	if (v < 1024)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else if (v < 1024 * 1024)
		snprintf(buf, len, "%.1fKiB", (double)v / 1024);
	else if (v < 1024ull * 1024 * 1024)
		snprintf(buf, len, "%.1fMiB", (double)v / (1024 * 1024));
	else
		snprintf(buf, len, "%.1fGiB", (double)v / (1024.0 * 1024 * 1024));
	return buf;
}

/*
 * The thread's PROF_ALLOC and PROF_FREE, a row per node that has any
 * (the tree has no room for four more columns): counts and bytes, and the
 * node's path, its last three zones.
 */
static void alloc_rows(struct tctx *c)
{
	const struct prof_snap_thread *t = c->t;
	char b[2][24];
	bool any = false;
	__u32 j;

	for (j = 0; j < t->nnodes && !any; j++)
		any = t->nodes[j].allocs || t->nodes[j].frees;
	if (!any)
		return;
	pc_out_printf(c->out, "%s%10s %10s %10s %10s  allocations in (PROF_ALLOC, PROF_FREE)%s\n",
		      col(c->o, C_DIM), "allocs", "bytes", "frees", "bytes", col(c->o, C_RESET));
	for (j = 0; j < t->nnodes; j++) {
		const struct prof_snap_node *n = &t->nodes[j], *up[3];
		int k = 0;

		if (!n->allocs && !n->frees)
			continue;
		pc_out_printf(c->out, "%10llu %10s %10llu %10s  ", (unsigned long long)n->allocs,
			      fmt_bytes(b[0], sizeof(b[0]), n->alloc_bytes),
			      (unsigned long long)n->frees, fmt_bytes(b[1], sizeof(b[1]), n->free_bytes));
		/* parents have lower indices: the walk ends */
		for (up[k++] = n; k < 3 && up[k - 1]->parent != PROF_NODE_ROOT &&
				  up[k - 1]->parent < t->nnodes;
		     k++)
			up[k] = &t->nodes[up[k - 1]->parent];
		if (k == 3 && up[2]->parent != PROF_NODE_ROOT)
			pc_out_printf(c->out, "... > ");
		while (k--) {
			const struct prof_snap_node *u = up[k];

			pc_out_printf(c->out, "%s", prof_snap_node_name(c->s, u));
			if (c->clash && u->site < c->s->nsites && c->clash[u->site]) {
				char w[PROF_FILE_MAX + 32];

				*pc_put_where(w, &c->s->sites[u->site]) = 0;
				pc_out_printf(c->out, "%s", w);
			}
			pc_out_printf(c->out, "%s", k ? " > " : "\n");
		}
	}
}

static void process_title(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o)
{
	fprintf(f, "%sprocess %u (%s)%s  ", col(o, C_BOLD), s->pid, s->comm, col(o, C_RESET));
	/* in a container: the pid it knows itself by, and where it runs */
	if (s->ns_pid)
		fprintf(f, "container pid %u, cgroup %s, ", s->ns_pid,
			s->cgroup[0] ? s->cgroup : "?");
	/* merged (--threads): the thread's title says how many */
	if (s->nthreads != 1 || s->threads[0].tid || s->threads[0].folds)
		fprintf(f, "%u thread%s, ", s->nthreads, s->nthreads == 1 ? "" : "s");
	fprintf(f, "clock %s", s->clock == PROF_CLOCK_TSC ? "tsc" : "mono");
	if (s->flags & PROF_SEG_EXITED)
		fputs(", exited", f);
	if (s->span_ns) {
		char b[24];

		fprintf(f, ", the last %s", pc_fmt_ns(b, sizeof(b), s->span_ns));
	}
	if (s->sites_dropped || s->threads_dropped)
		fprintf(f, ", dropped %llu sites %llu threads",
			(unsigned long long)s->sites_dropped,
			(unsigned long long)s->threads_dropped);
	if (s->nospace)
		fprintf(f, ", %llu not profiled for want of room in /dev/shm",
			(unsigned long long)s->nospace);
	fputc('\n', f);
	if (s->compensated) {
		char note[160];

		fprintf(f, "compensated: %s\n", prof_snap_compensated_note(s, note, sizeof(note)));
	}
}

/* thread t of s, its title and its tree, to f */
static int tree_thread(struct tctx *c, FILE *f, const struct prof_snap_thread *t)
{
	__u32 j;
	int err;

	c->t = t;
	err = pc_kids_room(t, &c->kids, &c->nkids);
	if (err || !t->nnodes)
		return err;
	c->total = pc_thread_total(t);
	c->prefix[0] = 0;
	c->plen = 0;
	fputc('\n', f);
	thread_title(f, c->s, t, c->o, c->total);
	pc_out_init(c->out, f);
	tree_header(c);
	tree_walk(c, PROF_NODE_ROOT, 0, c->kids, c->nkids);
	outside_row(c);
	alloc_rows(c);
	pc_out_flush(c->out);
	for (j = 0; j < t->nnodes; j++)
		c->migr |= t->nodes[j].migrated != 0;
	return ferror(f) ? -EIO : 0;
}

int pc_render_tree(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o)
{
	struct tctx c = { .s = s, .o = o, .sched = pc_has_sched(s) };
	struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
	const struct prof_snap_thread *t;
	__u8 *nlen, *clash = NULL;
	__u32 i;
	int err = -ENOMEM;

	nlen = malloc(s->nsites ? s->nsites : 1);
	c.out = malloc(sizeof(*c.out));
	if (!nlen || !c.out)
		goto cleanup;
	/* names are checked to end within PROF_NAME_MAX */
	for (i = 0; i < s->nsites; i++)
		nlen[i] = (__u8)strnlen(s->sites[i].name, PROF_NAME_MAX - 1);
	c.nlen = nlen;
	/* without memory, overloads only look alike */
	clash = pc_name_clashes(s);
	c.clash = clash;
	process_title(f, s, o);
	err = 0;
	while (!err && (t = prof_snap_next(&it)))
		err = tree_thread(&c, f, t);
	if (!err)
		err = it.err;
	if (!err && c.migr && !(s->flags & PROF_SEG_TSC_SYNCED))
		fputs("\n*migrated: some calls changed CPU, and profd did not find this "
		      "machine's TSC synchronized across CPUs: their deltas are suspect\n",
		      f);
	if (!err && c.sched)
		fputs("\nkernel columns: \"-\" where no call had kernel facts (profd), "
		      "[kernel k/n] where k of n calls had them\n",
		      f);
cleanup:
	free(c.kids);
	free(c.out);
	free(nlen);
	free(clash);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}

int pc_render_flat(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o)
{
	struct prof_flat_row *rows = NULL;
	size_t n = 0, i;
	__u64 sum = 0;
	bool sched = pc_has_sched(s), allocs = false;
	char where[PROF_FILE_MAX + 32];
	__u8 *clash;
	int err;

	err = prof_snap_flat(s, o->tid, o->sort, &rows, &n);
	if (err)
		return err;
	/* without memory, overloads only look alike */
	clash = pc_name_clashes(s);
	for (i = 0; i < n; i++)
		sum += rows[i].self;
	process_title(f, s, o);
	fprintf(f, "\n%s%10s %4s %9s %9s %9s %9s %6s", col(o, C_DIM), "calls", "open", "total",
		"self", "avg", "max", "%self");
	if (sched)
		fprintf(f, " %9s %8s %8s %8s", "on-cpu", "preempt", "blocked", "migr");
	fprintf(f, "  zone%s\n", col(o, C_RESET));
	for (i = 0; i < n && (!o->rows || i < (size_t)o->rows); i++) {
		const struct prof_flat_row *r = &rows[i];
		char b[6][24];
		__u64 tot = prof_snap_ns(s, r->ticks);
		double share = sum ? (double)r->self / (double)sum : 0;
		const char *name = r->site < s->nsites ? s->sites[r->site].name : "[overflow]";

		__u64 closed = prof_snap_ns(s, r->ticks - r->open_ticks);
		char row[512], *p = row;

		fprintf(f, "%10llu", (unsigned long long)r->calls);
		p = put_open_col(p, r->open);
		*p = 0;
		fprintf(f, "%s %9s %s%9s%s %9s %9s %6.1f", row, pc_fmt_ns(b[0], 24, tot),
			heat(o, share), pc_fmt_ns(b[1], 24, prof_snap_ns(s, r->self)),
			share >= 0.05 ? col(o, C_RESET) : "",
			pc_fmt_ns(b[2], 24, r->calls ? closed / r->calls : 0),
			pc_fmt_ns(b[3], 24, prof_snap_ns(s, r->max)), 100.0 * share);
		if (sched) {
			p = put_kernel_cols(row, s, r->ticks - r->open_ticks, r->kernel_calls,
					    r->offcpu_ns, r->preempted, r->blocked, r->migrated);
			*p = 0;
			fputs(row, f);
		}
		p = row;
		if (sched)
			p = put_coverage(p, r->calls, r->kernel_calls);
		*p = 0;
		where[0] = 0;
		if (clash && r->site < s->nsites && clash[r->site])
			*pc_put_where(where, &s->sites[r->site]) = 0;
		allocs |= r->allocs != 0;
		fprintf(f, "  %s%s%s%s\n", name, where,
			r->migrated && !(s->flags & PROF_SEG_TSC_SYNCED) ? " *migrated" : "", row);
	}
	/* PROF_ALLOC per zone: the rows above have no room for them */
	if (allocs)
		fprintf(f, "\n%s%10s %10s  allocations in (PROF_ALLOC)%s\n", col(o, C_DIM), "allocs",
			"bytes", col(o, C_RESET));
	for (i = 0; allocs && i < n && (!o->rows || i < (size_t)o->rows); i++) {
		const struct prof_flat_row *r = &rows[i];
		char b[24];

		if (!r->allocs)
			continue;
		where[0] = 0;
		if (clash && r->site < s->nsites && clash[r->site])
			*pc_put_where(where, &s->sites[r->site]) = 0;
		fprintf(f, "%10llu %10s  %s%s\n", (unsigned long long)r->allocs,
			fmt_bytes(b, sizeof(b), r->alloc_bytes),
			r->site < s->nsites ? s->sites[r->site].name : "[overflow]", where);
	}
	free(clash);
	free(rows);
	return ferror(f) ? -EIO : 0;
}

/* --- callers ---------------------------------------------------------------- */

/* a site's name as the views print it: " (file:line)" after a shared one */
static void site_label(char *buf, const struct prof_snapshot *s, __u32 site, const __u8 *clash)
{
	char *p;

	snprintf(buf, PROF_NAME_MAX, "%s", s->sites[site].name);
	p = buf + strlen(buf);
	if (clash && clash[site])
		p = pc_put_where(p, &s->sites[site]);
	*p = 0;
}

/* a node's name, as site_label, "[root]" for the root */
static void node_label(char *buf, const struct prof_snapshot *s, const struct prof_snap_thread *t,
		       __u32 i, const __u8 *clash)
{
	const struct prof_snap_node *n = &t->nodes[i];

	if (i == PROF_NODE_ROOT)
		snprintf(buf, PC_LABEL_MAX, "[root]");
	else if (n->site < s->nsites)
		site_label(buf, s, n->site, clash);
	else
		snprintf(buf, PC_LABEL_MAX, "%s", prof_snap_node_name(s, n));
}

size_t pc_callers_sites(const struct prof_snapshot *s, const char *spec, __u32 **sites)
{
	__u8 *clash = pc_name_clashes(s), *seen = calloc(s->nsites ? s->nsites : 1, 1);
	char lb[PC_LABEL_MAX];
	struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
	const struct prof_snap_thread *t;
	size_t n = 0, pass;
	__u32 i, j;

	*sites = NULL;
	/* only sites some node has: one a reset left without calls is not a section */
	while (seen && (t = prof_snap_next(&it))) {
		for (j = 1; j < t->nnodes; j++)
			if (t->nodes[j].site < s->nsites)
				seen[t->nodes[j].site] = 1;
	}
	/* the name as printed with its file:line first, then the bare name */
	for (pass = 0; pass < 2 && !n; pass++) {
		for (i = 0; seen && i < s->nsites; i++) {
			if (!seen[i])
				continue;
			if (pass == 0) {
				site_label(lb, s, i, clash);
				if (!clash || !clash[i] || strcmp(lb, spec))
					continue;
			} else if (strcmp(s->sites[i].name, spec)) {
				continue;
			}
			if (!*sites)
				*sites = calloc(s->nsites, sizeof(**sites));
			if (!*sites)
				break;
			(*sites)[n++] = i;
		}
	}
	free(seen);
	free(clash);
	return n;
}

/* an ancestor of i (strictly) is the site */
static bool under_site(const struct prof_snap_thread *t, __u32 i, __u32 site)
{
	__u32 guard = 0;

	while (i != PROF_NODE_ROOT && guard++ < t->nnodes) {
		i = t->nodes[i].parent;
		if (i != PROF_NODE_ROOT && t->nodes[i].site == site)
			return true;
	}
	return false;
}

/* ticks of the outermost instances of the site inside the subtree of i (not i) */
static __u64 site_ticks_below(const struct prof_snap_thread *t, __u32 i, __u32 site, __u32 depth)
{
	__u64 sum = 0;
	__u32 c;

	if (depth > PROF_SNAP_DEPTH_MAX)
		return 0;
	for (c = t->nodes[i].first_child; c != PROF_SNAP_NONE && c < t->nnodes;
	     c = t->nodes[c].next_sibling) {
		if (t->nodes[c].site == site)
			sum += t->nodes[c].ticks;
		else
			sum += site_ticks_below(t, c, site, depth + 1);
	}
	return sum;
}

static int add_row(struct pc_caller_row **rows, size_t *n, const char *name, __u64 calls,
		   __u64 ticks)
{
	struct pc_caller_row *r;
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*rows)[i].name, name))
			break;
	if (i == *n) {
		r = realloc(*rows, (*n + 1) * sizeof(*r));
		if (!r)
			return -ENOMEM;
		*rows = r;
		memset(&r[i], 0, sizeof(*r));
		snprintf(r[i].name, sizeof(r[i].name), "%s", name);
		(*n)++;
	}
	(*rows)[i].calls += calls;
	(*rows)[i].ticks += ticks;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct pc_caller_row *x = a, *y = b;

	if (x->ticks != y->ticks)
		return x->ticks < y->ticks ? 1 : -1;
	return strcmp(x->name, y->name);
}

void pc_callers_free(struct pc_callers *c)
{
	free(c->parents);
	free(c->children);
	memset(c, 0, sizeof(*c));
}

/*
 * IProf's view of one site: parents get the time of the outermost
 * instances they called (they sum to the site's total), children get their
 * time minus any nested instance of the site (they sum to total minus
 * self).  Rows of sites that share a name carry their file:line.
 */
int pc_callers_site(const struct prof_snapshot *s, __u32 site, struct pc_callers *c)
{
	__u8 *clash = pc_name_clashes(s);
	struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
	const struct prof_snap_thread *t;
	bool found = false;
	char lb[PC_LABEL_MAX];
	__u32 j, k;
	int err = 0;

	memset(c, 0, sizeof(*c));
	if (site >= s->nsites) {
		free(clash);
		return -ENOENT;
	}
	site_label(c->zone, s, site, clash);
	while (!err && (t = prof_snap_next(&it))) {
		for (j = 1; j < t->nnodes && !err; j++) {
			const struct prof_snap_node *n = &t->nodes[j];
			bool nested;

			if (n->site != site)
				continue;
			found = true;
			nested = under_site(t, j, site);
			c->calls += n->calls;
			c->self += prof_snap_self(n);
			if (n->max > c->max)
				c->max = n->max;
			if (!nested)
				c->ticks += n->ticks;
			node_label(lb, s, t, n->parent < t->nnodes ? n->parent : PROF_NODE_ROOT,
				   clash);
			err = add_row(&c->parents, &c->nparents, lb, n->calls, nested ? 0 : n->ticks);
			for (k = n->first_child; !err && k != PROF_SNAP_NONE && k < t->nnodes;
			     k = t->nodes[k].next_sibling) {
				const struct prof_snap_node *ch = &t->nodes[k];

				if (ch->site == site)
					continue;
				node_label(lb, s, t, k, clash);
				err = add_row(&c->children, &c->nchildren, lb, ch->calls,
					      ch->ticks - site_ticks_below(t, k, site, 0));
			}
		}
	}
	if (!err)
		err = it.err;
	free(clash);
	if (err) {
		pc_callers_free(c);
		return err;
	}
	if (!found)
		return -ENOENT;
	if (c->nparents)
		qsort(c->parents, c->nparents, sizeof(*c->parents), row_cmp);
	if (c->nchildren)
		qsort(c->children, c->nchildren, sizeof(*c->children), row_cmp);
	return 0;
}

int pc_callers(const struct prof_snapshot *s, const char *spec, struct pc_callers *c)
{
	__u32 *sites;
	size_t n = pc_callers_sites(s, spec, &sites);
	int err = n == 1 ? pc_callers_site(s, sites[0], c) : n ? -ENOTUNIQ : -ENOENT;

	free(sites);
	return err;
}

static void callers_row(FILE *f, const struct prof_snapshot *s, __u64 calls, __u64 ticks, __u64 of,
			const char *lead, const char *name)
{
	char b[24];

	fprintf(f, "%10llu %9s %6.1f  %s%s\n", (unsigned long long)calls,
		pc_fmt_ns(b, sizeof(b), prof_snap_ns(s, ticks)),
		of ? 100.0 * (double)ticks / (double)of : 0.0, lead, name);
}

/* a section per site --callers names: two overloads are two sections */
int pc_render_callers(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o)
{
	struct pc_callers c;
	char b[3][24];
	__u32 *sites;
	size_t i, k, n = pc_callers_sites(s, o->callers, &sites);
	int err = n ? 0 : -ENOENT;

	if (n)
		process_title(f, s, o);
	if (n > 1)
		fprintf(f, "\n%s names %zu sites, each below: --callers 'NAME (FILE:LINE)', as "
			   "the rows print it, shows one\n",
			o->callers, n);
	for (k = 0; k < n && !err; k++) {
		err = pc_callers_site(s, sites[k], &c);
		if (err)
			break;
		fprintf(f, "\n%scallers of %s%s: %llu calls, total %s, self %s, max %s\n",
			col(o, C_BOLD), c.zone, col(o, C_RESET), (unsigned long long)c.calls,
			pc_fmt_ns(b[0], 24, prof_snap_ns(s, c.ticks)),
			pc_fmt_ns(b[1], 24, prof_snap_ns(s, c.self)),
			pc_fmt_ns(b[2], 24, prof_snap_ns(s, c.max)));
		fprintf(f, "%s%10s %9s %6s  %s%s\n", col(o, C_DIM), "calls", "time", "%", "zone",
			col(o, C_RESET));
		for (i = 0; i < c.nparents; i++)
			callers_row(f, s, c.parents[i].calls, c.parents[i].ticks, c.ticks, "  ",
				    c.parents[i].name);
		fprintf(f, "%s", col(o, C_CYAN));
		callers_row(f, s, c.calls, c.ticks, c.ticks, "", c.zone);
		fprintf(f, "%s", col(o, C_RESET));
		callers_row(f, s, 0, c.self, c.ticks, "  ", "[self]");
		for (i = 0; i < c.nchildren; i++)
			callers_row(f, s, c.children[i].calls, c.children[i].ticks, c.ticks, "  ",
				    c.children[i].name);
		pc_callers_free(&c);
	}
	free(sites);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}
