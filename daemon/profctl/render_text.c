// SPDX-License-Identifier: MIT
/*
 * render_text.c - the terminal views: a process's title over the call tree
 * per thread and the flat list (both usdt/report_text.c's, which the report
 * at exit prints too), and IProf's callers view of one zone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profctl.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"
#define C_CYAN "\033[36m"

static const char *col(const struct pc_opts *o, const char *c)
{
	return o->color ? c : "";
}

static void process_title(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o)
{
	char cb[sizeof(s->comm)];

	fprintf(f, "%sprocess %u (%s)%s  ", col(o, C_BOLD), s->pid,
		prof_fmt_name(cb, sizeof(cb), s->comm), col(o, C_RESET));
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

		fprintf(f, ", the last %s", prof_fmt_ns(b, sizeof(b), s->span_ns));
		/* a window is never longer than asked: profd's history answers
		 * from its nearest frame inside it, and says so */
		if (s->span_asked_ns > s->span_ns)
			fprintf(f, " (%s asked: profd's nearest frame)",
				prof_fmt_ns(b, sizeof(b), s->span_asked_ns));
	}
	if (s->sites_dropped || s->threads_dropped)
		fprintf(f, ", dropped %llu sites %llu threads",
			(unsigned long long)s->sites_dropped,
			(unsigned long long)s->threads_dropped);
	if (s->nospace)
		fprintf(f, ", %llu not profiled for want of room in /dev/shm",
			(unsigned long long)s->nospace);
	fputc('\n', f);
	if (s->samples_state)
		fprintf(f, "stack samples: %s\n", s->samples_state);
	if (s->compensated) {
		char note[160];

		fprintf(f, "compensated: %s\n", prof_snap_compensated_note(s, note, sizeof(note)));
	}
}

/* what the shared text views take of profctl's options */
static struct prof_report_opts text_opts(const struct pc_opts *o)
{
	return (struct prof_report_opts){
		.sort = o->sort, .color = o->color, .flat_rows = o->rows, .tid = o->tid
	};
}

int pc_render_tree(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o)
{
	struct prof_report_opts ro = text_opts(o);

	process_title(f, s, o);
	return prof_report_tree(f, s, &ro);
}

int pc_render_flat(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o)
{
	struct prof_report_opts ro = text_opts(o);

	process_title(f, s, o);
	fputc('\n', f);
	return prof_report_flat(f, s, &ro);
}

/* --- callers ---------------------------------------------------------------- */

/* a site's name as the views print it: " (file:line)" after a shared one */
static void site_label(char *buf, const struct prof_snapshot *s, __u32 site, const __u8 *clash)
{
	char *p;

	snprintf(buf, PROF_NAME_MAX, "%s", s->sites[site].name);
	p = buf + strlen(buf);
	if (clash && clash[site])
		p = prof_put_where(p, &s->sites[site]);
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
	__u8 *clash = prof_snap_name_clashes(s), *seen = calloc(s->nsites ? s->nsites : 1, 1);
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
	__u8 *clash = prof_snap_name_clashes(s);
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
		prof_fmt_ns(b, sizeof(b), prof_snap_ns(s, ticks)),
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
			prof_fmt_ns(b[0], 24, prof_snap_ns(s, c.ticks)),
			prof_fmt_ns(b[1], 24, prof_snap_ns(s, c.self)),
			prof_fmt_ns(b[2], 24, prof_snap_ns(s, c.max)));
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
