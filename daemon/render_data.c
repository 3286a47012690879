// SPDX-License-Identifier: MIT
/*
 * render_data.c - the machine formats: csv (tree, flat, callers), folded
 * stacks (flamegraph.pl, speedscope; weighted by self ns), and the json
 * of the flat and callers views (the tree's json is prof_report_json).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profctl.h"

static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
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
};

static void csv_node(struct walk *w, __u32 i)
{
	const struct prof_snapshot *s = w->s;
	const struct prof_snap_node *n = &w->t->nodes[i];
	char path[4096];
	__u64 tot = prof_snap_ns(s, n->ticks);

	node_path(s, w->t, i, path, sizeof(path));
	fprintf(w->f, "%u,", s->pid);
	csv_str(w->f, s->comm);
	fprintf(w->f, ",%u,", w->t->tid);
	csv_str(w->f, w->tlabel);
	fprintf(w->f, ",%u,%u,%u,", i, n->parent, n->depth);
	csv_str(w->f, prof_snap_node_name(s, n));
	fputc(',', w->f);
	csv_str(w->f, path);
	fprintf(w->f,
		",%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n",
		(unsigned long long)n->calls, (unsigned long long)tot,
		(unsigned long long)prof_snap_ns(s, prof_snap_self(n)),
		(unsigned long long)(n->calls ? tot / n->calls : 0),
		(unsigned long long)prof_snap_ns(s, prof_snap_quantile(s, n, 0.50)),
		(unsigned long long)prof_snap_ns(s, prof_snap_quantile(s, n, 0.99)),
		(unsigned long long)prof_snap_ns(s, n->max),
		w->total ? 100.0 * (double)n->ticks / (double)w->total : 0.0,
		(unsigned long long)n->preempted, (unsigned long long)n->migrated,
		(unsigned long long)n->offcpu_ns, (unsigned long long)n->allocs,
		(unsigned long long)n->alloc_bytes, (unsigned long long)n->frees,
		(unsigned long long)n->free_bytes);
}

static void folded_node(struct walk *w, __u32 i)
{
	const struct prof_snap_node *n = &w->t->nodes[i];
	__u64 self = prof_snap_ns(w->s, prof_snap_self(n));
	char path[4096];

	if (!self)
		return;
	node_path(w->s, w->t, i, path, sizeof(path));
	if (w->s->nthreads > 1 || w->t->tid)
		fprintf(w->f, "%s;", w->tlabel);
	fprintf(w->f, "%s %llu\n", path, (unsigned long long)self);
}

static void walk_tree(struct walk *w, __u32 i, void (*fn)(struct walk *, __u32), __u32 depth)
{
	__u32 *kids, n, k;

	if (depth > PROF_SNAP_DEPTH_MAX)
		return;
	kids = malloc((w->t->nnodes ? w->t->nnodes : 1) * sizeof(*kids));
	if (!kids)
		return;
	n = pc_sorted_children(w->s, w->t, i, w->o->sort, kids);
	for (k = 0; k < n; k++) {
		fn(w, kids[k]);
		walk_tree(w, kids[k], fn, depth + 1);
	}
	free(kids);
}

static void walk_all(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o,
		     void (*fn)(struct walk *, __u32))
{
	struct walk w = { .f = f, .o = o };
	size_t p;
	__u32 i;

	for (p = 0; p < n; p++) {
		w.s = snaps[p];
		for (i = 0; i < w.s->nthreads; i++) {
			w.t = &w.s->threads[i];
			if (!w.t->nnodes)
				continue;
			w.total = pc_thread_total(w.t);
			prof_snap_thread_label(w.t, w.tlabel, sizeof(w.tlabel));
			walk_tree(&w, PROF_NODE_ROOT, fn, 0);
		}
	}
}

static int csv_flat(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o)
{
	size_t p, i;
	int err;

	fputs("pid,comm,zone,calls,total_ns,self_ns,avg_ns,max_ns,preempted,migrated,offcpu_ns,"
	      "allocs,alloc_bytes\n",
	      f);
	for (p = 0; p < n; p++) {
		const struct prof_snapshot *s = snaps[p];
		struct prof_flat_row *rows = NULL;
		size_t nr = 0;

		err = prof_snap_flat(s, o->tid, o->sort, &rows, &nr);
		if (err)
			return err;
		for (i = 0; i < nr && (!o->rows || i < (size_t)o->rows); i++) {
			const struct prof_flat_row *r = &rows[i];
			__u64 tot = prof_snap_ns(s, r->ticks);

			fprintf(f, "%u,", s->pid);
			csv_str(f, s->comm);
			fputc(',', f);
			csv_str(f, r->site < s->nsites ? s->sites[r->site].name : "[overflow]");
			fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n",
				(unsigned long long)r->calls, (unsigned long long)tot,
				(unsigned long long)prof_snap_ns(s, r->self),
				(unsigned long long)(r->calls ? tot / r->calls : 0),
				(unsigned long long)prof_snap_ns(s, r->max),
				(unsigned long long)r->preempted, (unsigned long long)r->migrated,
				(unsigned long long)r->offcpu_ns, (unsigned long long)r->allocs,
				(unsigned long long)r->alloc_bytes);
		}
		free(rows);
	}
	return 0;
}

static int csv_callers(FILE *f, struct prof_snapshot *const *snaps, size_t n,
		       const struct pc_opts *o)
{
	size_t p, i;
	bool any = false;

	fputs("pid,comm,role,zone,calls,time_ns\n", f);
	for (p = 0; p < n; p++) {
		const struct prof_snapshot *s = snaps[p];
		struct pc_callers c;
		int err = pc_callers(s, o->callers, &c);

		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		any = true;
#define ROW(role, name, calls, ticks)                                   \
	do {                                                            \
		fprintf(f, "%u,", s->pid);                              \
		csv_str(f, s->comm);                                    \
		fprintf(f, ",%s,", role);                               \
		csv_str(f, name);                                       \
		fprintf(f, ",%llu,%llu\n", (unsigned long long)(calls), \
			(unsigned long long)prof_snap_ns(s, ticks));    \
	} while (0)
		for (i = 0; i < c.nparents; i++)
			ROW("parent", c.parents[i].name, c.parents[i].calls, c.parents[i].ticks);
		ROW("zone", o->callers, c.calls, c.ticks);
		ROW("self", o->callers, 0, c.self);
		for (i = 0; i < c.nchildren; i++)
			ROW("child", c.children[i].name, c.children[i].calls, c.children[i].ticks);
#undef ROW
		pc_callers_free(&c);
	}
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
		fputs("pid,comm,tid,thread,node,parent,depth,zone,path,calls,total_ns,self_ns,avg_"
		      "ns,"
		      "p50_ns,p99_ns,max_ns,pct_thread,preempted,migrated,offcpu_ns,allocs,"
		      "alloc_bytes,frees,free_bytes\n",
		      f);
		walk_all(f, snaps, n, o, csv_node);
	}
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}

int pc_render_folded(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o)
{
	walk_all(f, snaps, n, o, folded_node);
	return ferror(f) ? -EIO : 0;
}

/*
 * json of the flat and callers views, beside prof_report_json's tree:
 * {"version":1,"view":"flat"|"callers","processes":[{"pid","comm",...}]}
 */
int pc_render_json_view(FILE *f, struct prof_snapshot *const *snaps, size_t n,
			const struct pc_opts *o)
{
	size_t p, i;
	int err;

	fprintf(f, "{\"version\":1,\"view\":\"%s\",\"processes\":[",
		o->callers ? "callers" : "flat");
	for (p = 0; p < n; p++) {
		const struct prof_snapshot *s = snaps[p];

		fprintf(f, "%s{\"pid\":%u,\"comm\":\"", p ? "," : "", s->pid);
		pc_json_str(f, s->comm);
		fputs("\",", f);
		if (o->callers) {
			struct pc_callers c;

			err = pc_callers(s, o->callers, &c);
			if (err && err != -ENOENT)
				return err;
			fputs("\"zone\":\"", f);
			pc_json_str(f, o->callers);
			fprintf(f,
				"\",\"calls\":%llu,\"total_ns\":%llu,\"self_ns\":%llu,"
				"\"max_ns\":%llu,\"parents\":[",
				(unsigned long long)c.calls,
				(unsigned long long)prof_snap_ns(s, c.ticks),
				(unsigned long long)prof_snap_ns(s, c.self),
				(unsigned long long)prof_snap_ns(s, c.max));
			for (i = 0; i < c.nparents; i++) {
				fprintf(f, "%s{\"zone\":\"", i ? "," : "");
				pc_json_str(f, c.parents[i].name);
				fprintf(f, "\",\"calls\":%llu,\"time_ns\":%llu}",
					(unsigned long long)c.parents[i].calls,
					(unsigned long long)prof_snap_ns(s, c.parents[i].ticks));
			}
			fputs("],\"children\":[", f);
			for (i = 0; i < c.nchildren; i++) {
				fprintf(f, "%s{\"zone\":\"", i ? "," : "");
				pc_json_str(f, c.children[i].name);
				fprintf(f, "\",\"calls\":%llu,\"time_ns\":%llu}",
					(unsigned long long)c.children[i].calls,
					(unsigned long long)prof_snap_ns(s, c.children[i].ticks));
			}
			fputs("]}", f);
			if (!err)
				pc_callers_free(&c);
			continue;
		}
		{
			struct prof_flat_row *rows = NULL;
			size_t nr = 0;

			err = prof_snap_flat(s, o->tid, o->sort, &rows, &nr);
			if (err)
				return err;
			fputs("\"zones\":[", f);
			for (i = 0; i < nr && (!o->rows || i < (size_t)o->rows); i++) {
				const struct prof_flat_row *r = &rows[i];

				fprintf(f, "%s{\"zone\":\"", i ? "," : "");
				pc_json_str(f, r->site < s->nsites ? s->sites[r->site].name
								   : "[overflow]");
				fprintf(f,
					"\",\"calls\":%llu,\"total_ns\":%llu,\"self_ns\":%llu,"
					"\"max_ns\":%llu,\"preempted\":%llu,\"migrated\":%llu,"
					"\"offcpu_ns\":%llu}",
					(unsigned long long)r->calls,
					(unsigned long long)prof_snap_ns(s, r->ticks),
					(unsigned long long)prof_snap_ns(s, r->self),
					(unsigned long long)prof_snap_ns(s, r->max),
					(unsigned long long)r->preempted,
					(unsigned long long)r->migrated,
					(unsigned long long)r->offcpu_ns);
			}
			fputs("]}", f);
			free(rows);
		}
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}
