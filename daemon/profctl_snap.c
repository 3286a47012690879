// SPDX-License-Identifier: MIT
/*
 * profctl_snap.c - snapshots derived for a view: one thread, all threads
 * merged into one tree, and the small helpers every renderer shares.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profctl.h"

struct prof_snapshot *pc_view_thread(const struct prof_snapshot *s, __u32 tid)
{
	struct prof_snapshot *v;
	__u32 i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			break;
	if (i == s->nthreads) {
		errno = ESRCH;
		return NULL;
	}
	v = malloc(sizeof(*v));
	if (!v)
		return NULL;
	*v = *s;
	v->nthreads = 1;
	v->threads = &s->threads[i];
	return v;
}

void pc_snap_free(struct prof_snapshot *s)
{
	/* a merged snapshot owns its memory as a read one does */
	prof_snapshot__destroy(s);
}

/* open addressing on (merged parent, site) */
struct merge_map {
	__u64 *keys; /* parent << 32 | site, ~0 empty */
	__u32 *vals;
	size_t cap;
};

static size_t merge_hash(__u64 k, size_t cap)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
}

static __u32 merge_find(struct merge_map *m, __u64 k, __u32 next, bool *fresh)
{
	size_t i = merge_hash(k, m->cap);

	while (m->keys[i] != ~0ULL) {
		if (m->keys[i] == k) {
			*fresh = false;
			return m->vals[i];
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->keys[i] = k;
	m->vals[i] = next;
	*fresh = true;
	return next;
}

struct prof_snapshot *pc_merge_threads(const struct prof_snapshot *s)
{
	struct prof_snapshot *m = NULL;
	struct prof_snap_thread *mt;
	struct merge_map map = { 0 };
	__u32 *remap = NULL, total = 1, n, i, j, b;
	__u32 *last_child = NULL;
	int err = -ENOMEM;

	for (i = 0; i < s->nthreads; i++)
		total += s->threads[i].nnodes;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto cleanup;
	*m = *s;
	m->sites = NULL;
	m->threads = NULL;
	m->hist = NULL;
	m->nthreads = 0;
	m->sites = calloc(s->nsites ? s->nsites : 1, sizeof(*m->sites));
	m->threads = calloc(1, sizeof(*m->threads));
	if (!m->sites || !m->threads)
		goto cleanup;
	if (s->nsites)
		memcpy(m->sites, s->sites, s->nsites * sizeof(*m->sites));
	m->nthreads = 1;
	mt = &m->threads[0];
	mt->tid = 0;
	mt->state = PROF_SLAB_ALIVE;
	mt->ksched_slot = PROF_NO_SLOT;
	snprintf(mt->name, sizeof(mt->name), "all threads");
	mt->nodes = calloc(total, sizeof(*mt->nodes));
	for (map.cap = 16; map.cap < 2 * (size_t)total; map.cap <<= 1)
		;
	map.keys = malloc(map.cap * sizeof(*map.keys));
	map.vals = malloc(map.cap * sizeof(*map.vals));
	if (!mt->nodes || !map.keys || !map.vals)
		goto cleanup;
	memset(map.keys, 0xff, map.cap * sizeof(*map.keys));

	mt->nodes[0].parent = 0;
	mt->nodes[0].site = PROF_SITE_NONE;
	n = 1;
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		free(remap);
		remap = malloc((t->nnodes ? t->nnodes : 1) * sizeof(*remap));
		if (!remap)
			goto cleanup;
		remap[0] = 0;
		mt->overflow += t->overflow;
		mt->unbalanced += t->unbalanced;
		mt->frames += t->frames;
		mt->frame_ticks += t->frame_ticks;
		if (t->frame_max > mt->frame_max)
			mt->frame_max = t->frame_max;
		for (b = 0; b < PROF_HIST_BUCKETS; b++)
			mt->frame_hist[b] += t->frame_hist[b];
		if (t->ksched_slot != PROF_NO_SLOT)
			mt->ksched_slot = 0;
		/* parents come before their children: node tables only grow */
		for (j = 1; j < t->nnodes; j++) {
			const struct prof_snap_node *src = &t->nodes[j];
			struct prof_snap_node *dst;
			__u32 p = src->parent < j ? remap[src->parent] : 0;
			bool fresh;

			remap[j] = merge_find(&map, (__u64)p << 32 | src->site, n, &fresh);
			dst = &mt->nodes[remap[j]];
			if (fresh) {
				n++;
				dst->site = src->site;
				dst->parent = p;
			}
			dst->calls += src->calls;
			dst->ticks += src->ticks;
			if (src->max > dst->max)
				dst->max = src->max;
			dst->preempted += src->preempted;
			dst->migrated += src->migrated;
			dst->offcpu_ns += src->offcpu_ns;
			dst->anomalies += src->anomalies;
			dst->allocs += src->allocs;
			dst->alloc_bytes += src->alloc_bytes;
			dst->frees += src->frees;
			dst->free_bytes += src->free_bytes;
		}
	}
	mt->nnodes = n;

	/* full histograms, summed */
	m->nhist = (__u64)n * PROF_HIST_BUCKETS;
	m->hist = calloc(m->nhist, sizeof(*m->hist));
	if (!m->hist)
		goto cleanup;
	for (j = 0; j < n; j++) {
		mt->nodes[j].hist_lo = 0;
		mt->nodes[j].hist_n = PROF_HIST_BUCKETS;
		mt->nodes[j].hist_off = (__u64)j * PROF_HIST_BUCKETS;
		mt->nodes[j].first_child = PROF_SNAP_NONE;
		mt->nodes[j].next_sibling = PROF_SNAP_NONE;
	}
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		free(remap);
		remap = malloc((t->nnodes ? t->nnodes : 1) * sizeof(*remap));
		if (!remap)
			goto cleanup;
		remap[0] = 0;
		for (j = 1; j < t->nnodes; j++) {
			const struct prof_snap_node *src = &t->nodes[j];
			__u32 p = src->parent < j ? remap[src->parent] : 0, k, *dh;
			bool fresh;

			remap[j] = merge_find(&map, (__u64)p << 32 | src->site, n, &fresh);
			dh = &m->hist[mt->nodes[remap[j]].hist_off];
			for (k = 0; k < src->hist_n; k++)
				if (src->hist_off + k < s->nhist &&
				    src->hist_lo + k < PROF_HIST_BUCKETS)
					dh[src->hist_lo + k] += s->hist[src->hist_off + k];
		}
	}

	/* links, depth and child totals; children in first-seen order */
	last_child = malloc(n * sizeof(*last_child));
	if (!last_child)
		goto cleanup;
	memset(last_child, 0xff, n * sizeof(*last_child));
	for (j = 1; j < n; j++) {
		struct prof_snap_node *c = &mt->nodes[j], *p = &mt->nodes[c->parent];

		c->depth = p->depth + 1;
		p->child_ticks += c->ticks;
		if (last_child[c->parent] == PROF_SNAP_NONE)
			p->first_child = j;
		else
			mt->nodes[last_child[c->parent]].next_sibling = j;
		last_child[c->parent] = j;
	}
	mt->nodes[0].ticks = mt->nodes[0].child_ticks;
	err = prof_snap_mark_recursion(mt, m->nsites);
cleanup:
	free(last_child);
	free(remap);
	free(map.keys);
	free(map.vals);
	if (err) {
		pc_snap_free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

__u64 pc_thread_total(const struct prof_snap_thread *t)
{
	__u64 sum = 0;
	__u32 c;

	if (!t->nnodes)
		return 0;
	for (c = t->nodes[0].first_child; c != PROF_SNAP_NONE && c < t->nnodes;
	     c = t->nodes[c].next_sibling)
		sum += t->nodes[c].ticks;
	return sum;
}

bool pc_node_hidden(const struct prof_snap_thread *t, __u32 i)
{
	const struct prof_snap_node *n = &t->nodes[i];

	return i != PROF_NODE_ROOT && n->site == PROF_SITE_NONE && !n->calls && !n->ticks &&
	       !n->anomalies;
}

bool pc_has_sched(const struct prof_snapshot *s)
{
	__u32 i, j;

	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		if (t->ksched_slot != PROF_NO_SLOT)
			return true;
		for (j = 0; j < t->nnodes; j++)
			if (t->nodes[j].preempted || t->nodes[j].migrated || t->nodes[j].offcpu_ns)
				return true;
	}
	return false;
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

__u32 pc_sorted_children(const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i,
			 int sort, __u32 *idx)
{
	struct sort_ent small[64], *e = small;
	__u32 n = 0, c, k;

	for (c = t->nodes[i].first_child; c != PROF_SNAP_NONE && c < t->nnodes && n < t->nnodes;
	     c = t->nodes[c].next_sibling)
		n += !pc_node_hidden(t, c);
	if (n > 64) {
		e = malloc(n * sizeof(*e));
		if (!e)
			return 0;
	}
	k = 0;
	for (c = t->nodes[i].first_child; c != PROF_SNAP_NONE && c < t->nnodes && k < n;
	     c = t->nodes[c].next_sibling) {
		if (pc_node_hidden(t, c))
			continue;
		e[k].key = prof_snap_sort_key(s, &t->nodes[c], sort);
		e[k].name = prof_snap_node_name(s, &t->nodes[c]);
		e[k].idx = c;
		k++;
	}
	qsort(e, n, sizeof(*e), sort_ent_cmp);
	for (k = 0; k < n; k++)
		idx[k] = e[k].idx;
	if (e != small)
		free(e);
	return n;
}

const char *pc_fmt_ns(char *buf, size_t len, __u64 ns)
{
	double v = (double)ns;

	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, v < 1e4 ? "%.2fus" : v < 1e5 ? "%.1fus" : "%.0fus", v / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, v < 1e7 ? "%.2fms" : v < 1e8 ? "%.1fms" : "%.0fms", v / 1e6);
	else
		snprintf(buf, len, v < 1e10 ? "%.2fs" : v < 1e11 ? "%.1fs" : "%.0fs", v / 1e9);
	return buf;
}

void pc_json_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '<' || c == '>' || c == '&' || c < 0x20 || c >= 0x7f)
			/* also keeps "</script>" out of the html report */
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}
