// SPDX-License-Identifier: MIT
/*
 * profd_cursor.c - profd's sampling cursor: a few words a sample of how busy
 * a followed process is, each slab's top-level nodes learned once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "reader_int.h"
#include "fmt.h"

struct cursor_slab {
	__u64 gen;   /* the thread the rest is of (slab.h, 3.2) */
	__u32 nseen; /* nodes [0, nseen) were looked at */
	__u32 ntop;
	size_t cap;
	__u32 *top; /* top-level node indices */
};

struct prof_seg_cursor {
	__u32 nslabs;
	struct cursor_slab *slabs;
};

struct prof_seg_cursor *prof_seg_cursor__new(void)
{
	return calloc(1, sizeof(struct prof_seg_cursor));
}

void prof_seg_cursor__destroy(struct prof_seg_cursor *c)
{
	__u32 i;

	if (!c)
		return;
	for (i = 0; i < c->nslabs; i++)
		free(c->slabs[i].top);
	free(c->slabs);
	free(c);
}

/* learn the top-level nodes among those created since the last look */
static int cursor_scan(struct cursor_slab *cs, const struct slab_view *v, __u32 nn)
{
	__u32 i, *top;

	for (i = cs->nseen; i < nn; i++) {
		__u32 parent = LD(&view_node(v, i)->parent);

		if (i == 0 ? parent != 0 : parent >= i)
			return -EINVAL;
		/* 0 is the root, 1 the overflow node: neither is a zone */
		if (i < 2 || parent != 0)
			continue;
		top = prof_grow(cs->top, cs->ntop, &cs->cap, sizeof(*top), 16);
		if (!top)
			return -ENOMEM;
		cs->top = top;
		cs->top[cs->ntop++] = i;
	}
	cs->nseen = nn;
	return 0;
}

int prof_seg_cursor__sample(struct prof_seg_cursor *c, const void *mem, size_t len,
			    struct prof_seg_busy *out)
{
	const struct prof_seg_hdr *h = mem;
	struct seg_geom g;
	struct cursor_slab *slabs;
	__u32 i, k, nslabs, ncur;
	int err;

	memset(out, 0, sizeof(*out));
	err = seg_check(mem, len, &g);
	if (err)
		return err;
	out->tick_hz = g.tick_hz;
	/* open calls count to now: time in zones grows smoothly, not by
	 * whole calls when they end */
	g.now = g.snap_tick ? g.snap_tick : reader_now(LD(&h->clock));
	out->pid = LD(&h->pid);
	out->uid = LD(&h->uid);
	out->start_token = LD(&h->start_token);
	out->created_ns = LD(&h->created_ns);
	copy_name(out->comm, h->comm, sizeof(out->comm));
	nslabs = LDA(&h->nslabs);
	if (nslabs > g.max_threads)
		return -EINVAL;
	/* the exited threads' aggregate, as one more slab */
	ncur = g.agg_slab != PROF_NO_SLOT ? nslabs + 1 : nslabs;
	slabs = prof_grow_zero(c->slabs, &c->nslabs, ncur, sizeof(*slabs));
	if (!slabs)
		return -ENOMEM;
	c->slabs = slabs;
	out->nthreads = nslabs;
	for (i = 0; i < ncur; i++) {
		__u32 idx = i < nslabs ? i : g.agg_slab;
		const char *slab = (const char *)mem + g.slabs_off + (__u64)idx * g.slab_size;
		const struct prof_slab_hdr *sh = (const void *)slab;
		struct cursor_slab *cs = &c->slabs[i];
		struct slab_view v;
		__u32 nn, state;
		__u64 gen;

		/* no fold yet: the aggregate is a hole, and a read of a tmpfs
		 * hole through a shared mapping is a page taken for it */
		if (idx == g.agg_slab && !LDA(&h->folds))
			continue;
		gen = LDA(&sh->gen);
		if (LDA(&sh->magic) != PROF_SLAB_MAGIC) {
			if (idx == g.agg_slab)
				continue;
			return -EINVAL;
		}
		/* between two threads, or another thread than last time */
		if (!g.snap_tick && g.folds && (gen & 1))
			continue;
		if (cs->gen != gen) {
			cs->gen = gen;
			cs->nseen = cs->ntop = 0;
		}
		nn = LDA(&sh->nnodes);
		state = LD(&sh->state);
		if (nn < 2 || nn > g.max_nodes || nn < cs->nseen ||
		    (state != PROF_SLAB_ALIVE && state != PROF_SLAB_EXITED))
			return -EINVAL;
		slab_view(slab, &g, &v);
		err = cursor_scan(cs, &v, nn);
		if (err)
			return err;
		for (k = 0; k < cs->ntop; k++) {
			__u32 top = cs->top[k];
			__u64 start;

			out->busy_ticks += LD(&view_node(&v, top)->ticks);
			start = LDA(&v.open[top]);
			if (start)
				out->busy_ticks += open_ticks(&v, start);
		}
		if (state == PROF_SLAB_ALIVE) {
			out->alive++;
			out->kernel += LD(&sh->ksched_slot) != PROF_NO_SLOT;
		}
	}
	return 0;
}
