// SPDX-License-Identifier: MIT
/*
 * report_text.c - a process as text: the call tree per thread (drawn as a
 * tree, with percentiles and, when profd assisted, scheduler columns) and
 * the flat list.  The one text renderer: the report at exit (report.c)
 * and profctl's tree and flat views print through it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "snapshot.h"

#define C_RESET "\033[0m"
#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"
#define C_RED "\033[31m"
#define C_YEL "\033[33m"

__u64 prof_snap_thread_total(const struct prof_snap_thread *t)
{
	/* the root's ticks: the thread's wall time, its zones' and the rest */
	return t->nnodes ? t->nodes[0].ticks : 0;
}

__u64 prof_snap_avg_ns(const struct prof_snapshot *s, const struct prof_snap_node *n)
{
	return n->calls ? prof_snap_ns(s, prof_snap_closed(n)) / n->calls : 0;
}

__u64 prof_oncpu_ns(const struct prof_snapshot *s, __u64 closed_ticks, __u64 kcalls,
		    __u64 offcpu_ns)
{
	__u64 wall = prof_snap_ns(s, closed_ticks);

	if (!kcalls)
		return PROF_SNAP_UNKNOWN;
	return wall > offcpu_ns ? wall - offcpu_ns : 0;
}

int prof_snap_oncpu(const struct prof_snapshot *s, const struct prof_snap_thread *t,
		    __u64 *oncpu)
{
	/* the thread's CPU time over the view and its wall time there: an
	 * open call of o ns ran at least cpu - (wall - o) of them, as the
	 * rest of the view holds at most wall - o */
	__u64 cpu = t->oncpu_ns, wall = t->nnodes ? prof_snap_ns(s, t->nodes[0].ticks) : 0;
	__u64 *kids;
	__u32 i;

	if (!t->nnodes)
		return 0;
	kids = malloc(t->nnodes * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	/* PROF_SNAP_UNKNOWN: no child known yet */
	for (i = 0; i < t->nnodes; i++)
		kids[i] = PROF_SNAP_UNKNOWN;
	/* children before parents: a parent's index is below its children's */
	for (i = t->nnodes - 1; i >= 1; i--) {
		const struct prof_snap_node *n = &t->nodes[i];
		__u64 own = prof_oncpu_ns(s, prof_snap_closed(n), n->kernel_calls, n->offcpu_ns);
		__u64 tot = prof_snap_ns(s, n->ticks), o = prof_snap_ns(s, n->open_ticks), least = 0;

		if (n->open && cpu != PROF_SNAP_UNKNOWN && cpu + o > wall)
			least = cpu + o - wall;
		if (least)
			own = own == PROF_SNAP_UNKNOWN ? least : own + least;
		if (own == PROF_SNAP_UNKNOWN && kids[i] == PROF_SNAP_UNKNOWN) {
			oncpu[i] = PROF_SNAP_UNKNOWN;
			continue;
		}
		if (own == PROF_SNAP_UNKNOWN || (kids[i] != PROF_SNAP_UNKNOWN && own < kids[i]))
			own = kids[i];
		oncpu[i] = own < tot ? own : tot;
		kids[n->parent] = (kids[n->parent] == PROF_SNAP_UNKNOWN ? 0 : kids[n->parent]) +
				  oncpu[i];
	}
	oncpu[0] = cpu;
	free(kids);
	return 0;
}

int prof_snap_oncpu_room(const struct prof_snapshot *s, const struct prof_snap_thread *t,
			 __u64 **oncpu, __u32 *cap)
{
	if (*cap < t->nnodes) {
		__u64 *v = realloc(*oncpu, t->nnodes * sizeof(*v));

		if (!v)
			return -ENOMEM;
		*oncpu = v;
		*cap = t->nnodes;
	}
	return prof_snap_oncpu(s, t, *oncpu);
}

bool prof_snap_node_hidden(const struct prof_snap_thread *t, __u32 i)
{
	const struct prof_snap_node *n = &t->nodes[i];

	return i != PROF_NODE_ROOT && n->site == PROF_SITE_NONE && !n->calls && !n->ticks &&
	       !n->anomalies;
}

struct sort_ent {
	__u64 key;
	const char *name;
	__u32 idx;
};

static int sort_ent_cmp(const void *a, const void *b)
{
	const struct sort_ent *x = a, *y = b;
	int c;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int prof_snap_kids_room(const struct prof_snap_thread *t, __u32 **kids, __u32 *nkids)
{
	if (t->nnodes <= *nkids)
		return 0;
	free(*kids);
	*kids = malloc(t->nnodes * sizeof(**kids));
	*nkids = *kids ? t->nnodes : 0;
	return *kids ? 0 : -ENOMEM;
}

__u32 prof_snap_sorted_children_cap(const struct prof_snapshot *s, const struct prof_snap_thread *t,
				    __u32 i, int sort, const __u64 *oncpu, __u32 *idx, __u32 cap)
{
	struct sort_ent small[64], *e = small;
	__u32 n = 0, c, k, j;

	for (c = t->nodes[i].first_child; c != PROF_SNAP_NONE && c < t->nnodes && n < cap;
	     c = t->nodes[c].next_sibling)
		n += !prof_snap_node_hidden(t, c);
	if (n > 64) {
		e = malloc(n * sizeof(*e));
		if (!e)
			return 0;
	}
	k = 0;
	for (c = t->nodes[i].first_child; c != PROF_SNAP_NONE && c < t->nnodes && k < n;
	     c = t->nodes[c].next_sibling) {
		const struct prof_snap_node *nd = &t->nodes[c];

		if (prof_snap_node_hidden(t, c))
			continue;
		/* prof_snap_sort_key's and prof_snap_node_name's, inline */
		switch (sort) {
		case PROF_SORT_TOTAL:
			e[k].key = nd->ticks;
			break;
		case PROF_SORT_CALLS:
			e[k].key = nd->calls;
			break;
		case PROF_SORT_MAX:
			e[k].key = nd->max;
			break;
		case PROF_SORT_P99:
			e[k].key = prof_snap_quantile(s, nd, 0.99);
			break;
		case PROF_SORT_ONCPU:
		case PROF_SORT_SELF_ONCPU:
			e[k].key = !oncpu ? 0 : prof_sort_oncpu_key(sort == PROF_SORT_ONCPU ? oncpu[c]
						: prof_snap_self_oncpu(t, oncpu, c));
			break;
		default:
			e[k].key = prof_snap_self(nd);
		}
		e[k].name =
			nd->site < s->nsites ? s->sites[nd->site].name : prof_snap_node_name(s, nd);
		e[k].idx = c;
		k++;
	}
	/* the order is total (idx breaks ties): any sort gives the same; a
	 * few siblings, the usual case, go faster without qsort */
	if (n <= 16) {
		for (k = 1; k < n; k++) {
			struct sort_ent v = e[k];

			for (j = k; j > 0 && sort_ent_cmp(&e[j - 1], &v) > 0; j--)
				e[j] = e[j - 1];
			e[j] = v;
		}
	} else {
		qsort(e, n, sizeof(*e), sort_ent_cmp);
	}
	for (k = 0; k < n; k++)
		idx[k] = e[k].idx;
	if (e != small)
		free(e);
	return n;
}

__u32 prof_snap_sorted_children(const struct prof_snapshot *s, const struct prof_snap_thread *t,
				__u32 i, int sort, const __u64 *oncpu, __u32 *idx)
{
	return prof_snap_sorted_children_cap(s, t, i, sort, oncpu, idx, t->nnodes);
}

__u64 prof_snap_self_oncpu(const struct prof_snap_thread *t, const __u64 *oncpu, __u32 i)
{
	__u64 kids = 0;
	__u32 c;

	if (oncpu[i] == PROF_SNAP_UNKNOWN)
		return PROF_SNAP_UNKNOWN;
	/* a child nobody knows: its time is in the node's, counted on the CPU */
	for (c = t->nodes[i].first_child; c != PROF_SNAP_NONE && c < t->nnodes;
	     c = t->nodes[c].next_sibling)
		if (oncpu[c] != PROF_SNAP_UNKNOWN)
			kids += oncpu[c];
	return oncpu[i] > kids ? oncpu[i] - kids : 0;
}

char *prof_put_where(char *p, const struct prof_snap_site *site)
{
	const char *file = strrchr(site->file, '/');

	file = file ? file + 1 : site->file;
	return p + sprintf(p, " (%s:%u)", *file ? file : "?", site->line);
}

struct tctx {
	struct prof_out *out;
	const struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	const struct prof_report_opts *o;
	bool sched;
	bool migr; /* a row of a thread drawn so far was migrated */
	__u64 total;	   /* the thread's, in ticks */
	__u32 *kids;	   /* the sorted children of the path drawn, stacked */
	__u32 nkids;	   /* their capacity */
	__u64 *oncpu;	   /* each node's on-CPU time (prof_snap_oncpu) */
	__u32 noncpu;	   /* its capacity */
	const __u8 *nlen;  /* strlen of each site's name (bit 7: see prof_report_tree) */
	const __u8 *clash; /* sites whose name another site has (prof_snap_name_clashes) */
	size_t plen;	   /* strlen(prefix) */
	char prefix[512];  /* tree drawing so far */
};

static const char *col(const struct prof_report_opts *o, const char *c)
{
	return o->color ? c : "";
}

static const char *heat(const struct prof_report_opts *o, double share)
{
	if (!o->color)
		return "";
	return share >= 0.20 ? C_RED : share >= 0.05 ? C_YEL : "";
}

static void tree_header(struct tctx *c)
{
	prof_out_printf(c->out, "%s%10s %4s %9s %9s %9s %9s %9s %9s %6s", col(c->o, C_DIM), "calls",
			"open", "total", "self", "avg", "p50", "p99", "max", "%thr");
	if (c->sched)
		prof_out_printf(c->out, " %9s %9s %8s %8s %8s", "on-cpu", "self-cpu", "preempt",
				"blocked", "migr");
	prof_out_printf(c->out, "  zone%s\n", col(c->o, C_RESET));
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
	return prof_put_ns_col(p, ns, width);
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
	return prof_put_u64_col(p, open, 4);
}

/*
 * on-cpu, self-cpu, preempt, blocked, migr: what the kernel said of the
 * calls that had kernel facts; "-" for a row none of whose calls had any.
 * on-cpu is prof_snap_oncpu's (a tree's row) or prof_oncpu_ns's (a flat
 * row), self-cpu prof_snap_self_oncpu's (summed over a flat row's nodes),
 * "-" where unknown.
 */
static char *put_kernel_cols(char *p, __u64 oncpu, __u64 self_oncpu, __u64 kcalls,
			     __u64 preempted, __u64 blocked, __u64 migrated)
{
	if (oncpu == PROF_SNAP_UNKNOWN)
		p = put_unknown_col(p, 9);
	else
		p = put_ns_col(p, oncpu, 9);
	if (self_oncpu == PROF_SNAP_UNKNOWN)
		p = put_unknown_col(p, 9);
	else
		p = put_ns_col(p, self_oncpu, 9);
	if (!kcalls) {
		p = put_unknown_col(p, 8);
		p = put_unknown_col(p, 8);
		return put_unknown_col(p, 8);
	}
	*p++ = ' ';
	p = prof_put_u64_col(p, preempted, 8);
	*p++ = ' ';
	p = prof_put_u64_col(p, blocked, 8);
	*p++ = ' ';
	return prof_put_u64_col(p, migrated, 8);
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
	char *p = prof_out_row(c->out);

	p = prof_put_u64_col(p, n->calls, 10);
	p = put_open_col(p, n->open);
	p = put_ns_col(p, tot, 9);
	*p++ = ' ';
	p = put_str(p, heat(c->o, share));
	p = prof_put_ns_col(p, self, 9);
	if (share >= 0.05)
		p = put_str(p, col(c->o, C_RESET));
	p = put_ns_col(p, prof_snap_avg_ns(s, n), 9);
	p = put_ns_col(p, prof_snap_ns(s, prof_snap_quantile(s, n, 0.50)), 9);
	p = put_ns_col(p, prof_snap_ns(s, prof_snap_quantile(s, n, 0.99)), 9);
	p = put_ns_col(p, prof_snap_ns(s, n->max), 9);
	*p++ = ' ';
	p = prof_put_fixed_col(p, pct, 1, 6);
	if (c->sched)
		p = put_kernel_cols(p, c->oncpu[i], prof_snap_self_oncpu(c->t, c->oncpu, i),
				    n->kernel_calls, n->preempted, n->blocked, n->migrated);
	*p++ = ' ';
	*p++ = ' ';
	p = put_str(p, col(c->o, C_DIM));
	if (branch) {
		memcpy(p, c->prefix, c->plen);
		p = put_str(p + c->plen, branch);
	}
	p = put_str(p, col(c->o, C_RESET));
	if (n->site < s->nsites) {
		if (c->nlen[n->site] & 0x80) {
			p = prof_put_name(p, s->sites[n->site].name);
		} else {
			memcpy(p, s->sites[n->site].name, c->nlen[n->site]);
			p += c->nlen[n->site];
		}
		if (c->clash && c->clash[n->site])
			p = prof_put_where(p, &s->sites[n->site]);
	} else {
		p = prof_put_name(p, prof_snap_node_name(s, n));
	}
	if (n->migrated && !(s->flags & PROF_SEG_TSC_SYNCED))
		p = put_str(p, " *migrated");
	if (c->sched)
		p = put_coverage(p, n->calls, n->kernel_calls);
	if (prof_snap_is_recursive(c->t, i))
		p = put_str(p, " (recursive)");
	/* calls whose delta was dropped (negative, or over a day) */
	if (n->anomalies) {
		p = put_str(p, " (");
		p = prof_put_u64(p, n->anomalies);
		p = put_str(p, " anomalies)");
	}
	*p++ = '\n';
	c->out->p = p;
}

/* the thread's time outside every zone: the root's self time */
static void outside_row(struct tctx *c)
{
	const struct prof_snap_node *r = &c->t->nodes[PROF_NODE_ROOT];
	__u64 self = prof_snap_self(r);
	char *p = prof_out_row(c->out);

	memset(p, ' ', 15);
	p += 15;
	p = put_ns_col(p, prof_snap_ns(c->s, self), 9);
	p = put_ns_col(p, prof_snap_ns(c->s, self), 9);
	memset(p, ' ', 40);
	p += 40;
	*p++ = ' ';
	p = prof_put_fixed_col(p, c->total ? 100.0 * (double)self / (double)c->total : 0, 1, 6);
	if (c->sched) {
		memset(p, ' ', 47);
		p += 47;
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
			prof_out_printf(c->out, "%s└─ ... deeper levels not shown\n", c->prefix);
		return;
	}
	/* this level's list, then the levels below stacked after it */
	n = prof_snap_sorted_children_cap(c->s, c->t, i, c->o->sort, c->oncpu, kids, cap);
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
			 const struct prof_report_opts *o, __u64 total)
{
	char lb[64], tb[24];

	/* tid 0: the threads merged (--threads), "all 5 threads" */
	fprintf(f, "%s%s%s", col(o, C_BOLD), t->tid ? "thread " : "",
		prof_fmt_name(lb, sizeof(lb), prof_snap_thread_label(t, lb, sizeof(lb))));
	if (t->tid && strncmp(lb, "tid ", 4))
		fprintf(f, " (tid %u)", t->tid);
	fprintf(f, "%s  %s, wall %s", col(o, C_RESET),
		t->state == PROF_SLAB_EXITED ? "exited" : "alive",
		prof_fmt_ns(tb, sizeof(tb), prof_snap_ns(s, total)));
	if (t->oncpu_ns != PROF_SNAP_UNKNOWN)
		fprintf(f, ", on-cpu %s", prof_fmt_ns(tb, sizeof(tb), t->oncpu_ns));
	if (s->zone_cost && total) {
		__u64 pt = prof_snap_probe_ticks(s, t);

		/*
		 * calls times a zone's cost as calibrated at start: its own
		 * instructions, not what it changes around it (inlining, the
		 * instruction cache), which only a -DPROF_DISABLE build shows
		 */
		fprintf(f, ", zones' own instructions ~%s (%.1f%%, calibrated at start%s)",
			prof_fmt_ns(tb, sizeof(tb), prof_snap_ns(s, pt)),
			prof_snap_probe_share(s, t, pt), s->compensated ? ", taken out" : "");
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
			prof_fmt_ns(ab, sizeof(ab), prof_snap_ns(s, t->frame_ticks / t->frames)),
			prof_fmt_ns(tb, sizeof(tb), prof_snap_ns(s, t->frame_max)));
	}
	fputc('\n', f);
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
	prof_out_printf(c->out, "%s%10s %10s %10s %10s  allocations in (PROF_ALLOC, PROF_FREE)%s\n",
			col(c->o, C_DIM), "allocs", "bytes", "frees", "bytes", col(c->o, C_RESET));
	for (j = 0; j < t->nnodes; j++) {
		const struct prof_snap_node *n = &t->nodes[j], *up[3];
		int k = 0;

		if (!n->allocs && !n->frees)
			continue;
		prof_out_printf(c->out, "%10llu %10s %10llu %10s  ", (unsigned long long)n->allocs,
				prof_fmt_bytes(b[0], sizeof(b[0]), n->alloc_bytes),
				(unsigned long long)n->frees,
				prof_fmt_bytes(b[1], sizeof(b[1]), n->free_bytes));
		/* parents have lower indices: the walk ends */
		for (up[k++] = n;
		     k < 3 && up[k - 1]->parent != PROF_NODE_ROOT && up[k - 1]->parent < t->nnodes;
		     k++)
			up[k] = &t->nodes[up[k - 1]->parent];
		if (k == 3 && up[2]->parent != PROF_NODE_ROOT)
			prof_out_printf(c->out, "... > ");
		while (k--) {
			const struct prof_snap_node *u = up[k];

			char nb[PROF_NAME_MAX + 16];

			prof_out_printf(c->out, "%s",
					prof_fmt_name(nb, sizeof(nb), prof_snap_node_name(c->s, u)));
			if (c->clash && u->site < c->s->nsites && c->clash[u->site]) {
				char w[PROF_FILE_MAX + 32];

				*prof_put_where(w, &c->s->sites[u->site]) = 0;
				prof_out_printf(c->out, "%s", w);
			}
			prof_out_printf(c->out, "%s", k ? " > " : "\n");
		}
	}
}

/* thread t of s, its title and its tree, to f */
static int tree_thread(struct tctx *c, FILE *f, const struct prof_snap_thread *t)
{
	__u32 j;
	int err;

	c->t = t;
	err = prof_snap_kids_room(t, &c->kids, &c->nkids);
	if (err || !t->nnodes)
		return err;
	err = prof_snap_oncpu_room(c->s, t, &c->oncpu, &c->noncpu);
	if (err)
		return err;
	c->total = prof_snap_thread_total(t);
	c->prefix[0] = 0;
	c->plen = 0;
	fputc('\n', f);
	thread_title(f, c->s, t, c->o, c->total);
	prof_out_init(c->out, f);
	tree_header(c);
	tree_walk(c, PROF_NODE_ROOT, 0, c->kids, c->nkids);
	outside_row(c);
	alloc_rows(c);
	prof_out_flush(c->out);
	for (j = 0; j < t->nnodes; j++)
		c->migr |= t->nodes[j].migrated != 0;
	return ferror(f) ? -EIO : 0;
}

int prof_report_tree(FILE *f, const struct prof_snapshot *s, const struct prof_report_opts *o)
{
	struct tctx c = { .s = s, .o = o, .sched = prof_snap_any_sched(s) };
	struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
	const struct prof_snap_thread *t;
	__u8 *nlen, *clash = NULL;
	__u32 i;
	int err = -ENOMEM;

	nlen = malloc(s->nsites ? s->nsites : 1);
	c.out = malloc(sizeof(*c.out));
	if (!nlen || !c.out)
		goto cleanup;
	/* names are checked to end within PROF_NAME_MAX; bit 7: the name has
	 * a control byte (a file's or a JSON report's), put through
	 * prof_put_name, not copied */
	for (i = 0; i < s->nsites; i++) {
		char q[PROF_NAME_MAX];

		nlen[i] = (__u8)strnlen(s->sites[i].name, PROF_NAME_MAX - 1);
		if (strcmp(prof_fmt_name(q, sizeof(q), s->sites[i].name), s->sites[i].name))
			nlen[i] |= 0x80;
	}
	c.nlen = nlen;
	/* without memory, overloads only look alike */
	clash = prof_snap_name_clashes(s);
	c.clash = clash;
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
	free(c.oncpu);
	free(c.out);
	free(nlen);
	free(clash);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}

int prof_report_flat(FILE *f, const struct prof_snapshot *s, const struct prof_report_opts *o)
{
	struct prof_flat_row *rows = NULL;
	size_t n = 0, i;
	__u64 sum = 0;
	bool sched = prof_snap_any_sched(s), allocs = false;
	char where[PROF_FILE_MAX + 32];
	__u8 *clash;
	int err;

	err = prof_snap_flat(s, o->tid, o->sort, &rows, &n);
	if (err)
		return err;
	/* without memory, overloads only look alike */
	clash = prof_snap_name_clashes(s);
	for (i = 0; i < n; i++)
		sum += rows[i].self;
	fprintf(f, "%s%10s %4s %9s %9s %9s %9s %6s", col(o, C_DIM), "calls", "open", "total",
		"self", "avg", "max", "%self");
	if (sched)
		fprintf(f, " %9s %9s %8s %8s %8s", "on-cpu", "self-cpu", "preempt", "blocked",
			"migr");
	fprintf(f, "  zone%s\n", col(o, C_RESET));
	for (i = 0; i < n && (!o->flat_rows || i < (size_t)o->flat_rows); i++) {
		const struct prof_flat_row *r = &rows[i];
		char b[6][24];
		__u64 tot = prof_snap_ns(s, r->ticks);
		double share = sum ? (double)r->self / (double)sum : 0;
		const char *name = r->site < s->nsites ? s->sites[r->site].name : "[overflow]";

		char row[512], *p = row;

		fprintf(f, "%10llu", (unsigned long long)r->calls);
		p = put_open_col(p, r->open);
		*p = 0;
		fprintf(f, "%s %9s %s%9s%s %9s %9s %6.1f", row, prof_fmt_ns(b[0], 24, tot),
			heat(o, share), prof_fmt_ns(b[1], 24, prof_snap_ns(s, r->self)),
			share >= 0.05 ? col(o, C_RESET) : "",
			prof_fmt_ns(b[2], 24, prof_flat_avg_ns(s, r)),
			prof_fmt_ns(b[3], 24, prof_snap_ns(s, r->max)), 100.0 * share);
		if (sched) {
			p = put_kernel_cols(row, prof_flat_oncpu_ns(s, r), r->self_oncpu_ns,
					    r->kernel_calls, r->preempted, r->blocked, r->migrated);
			*p = 0;
			fputs(row, f);
		}
		p = row;
		if (sched)
			p = put_coverage(p, r->calls, r->kernel_calls);
		*p = 0;
		where[0] = 0;
		if (clash && r->site < s->nsites && clash[r->site])
			*prof_put_where(where, &s->sites[r->site]) = 0;
		allocs |= r->allocs != 0;
		fprintf(f, "  %s%s%s%s\n", name, where,
			r->migrated && !(s->flags & PROF_SEG_TSC_SYNCED) ? " *migrated" : "", row);
	}
	/* PROF_ALLOC per zone: the rows above have no room for them */
	if (allocs)
		fprintf(f, "\n%s%10s %10s  allocations in (PROF_ALLOC)%s\n", col(o, C_DIM),
			"allocs", "bytes", col(o, C_RESET));
	for (i = 0; allocs && i < n && (!o->flat_rows || i < (size_t)o->flat_rows); i++) {
		const struct prof_flat_row *r = &rows[i];
		char b[24];

		if (!r->allocs)
			continue;
		where[0] = 0;
		if (clash && r->site < s->nsites && clash[r->site])
			*prof_put_where(where, &s->sites[r->site]) = 0;
		fprintf(f, "%10llu %10s  %s%s\n", (unsigned long long)r->allocs,
			prof_fmt_bytes(b, sizeof(b), r->alloc_bytes),
			r->site < s->nsites ? s->sites[r->site].name : "[overflow]", where);
	}
	free(clash);
	free(rows);
	return ferror(f) ? -EIO : 0;
}
