// SPDX-License-Identifier: MIT
/*
 * reader.c - copy a segment into a validated snapshot: the copy of every
 * thread (lazily, one at a time, if asked) and what names it.  The header's
 * bounds are reader_check.c's, histograms reader_hist.c's, the flat view reader_flat.c's, diffs and
 * images reader_image.c's, the event rings reader_trace.c's, and profd's
 * sampling cursor daemon/profd/profd_cursor.c's (reader_int.h).
 *
 * The segment may be live (another process is writing it), truncated, or
 * hostile.  Each value is loaded once into private memory and checked
 * there; every count is bounded by the geometry, which is itself checked
 * against the bytes we were given.  Parent links must point to a lower
 * index, so the tree has no cycles by construction.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reader_int.h"


/* the ticks of an open call at the view's now (0 if the clocks disagree) */
PROF_HIDDEN __u64 open_ticks(const struct slab_view *v, __u64 start)
{
	return v->now > start ? v->now - start : 0;
}

/* how many of node n's calls had kernel facts: see prof_node_ext.kernel_adj */
PROF_HIDDEN void node_kernel(const struct slab_view *v, const struct prof_node_ext *ext,
			struct prof_snap_node *n)
{
	__u64 adj = LD(&ext->kernel_adj);

	if (v->covered)
		n->kernel_calls = n->calls > adj ? n->calls - adj : 0;
	else
		n->kernel_calls = adj < n->calls ? adj : n->calls;
}

/* a slab's activity (slab.h, 4.0): its word plus the ring head its exits
 * bump, the event ring's or, the ring off, the header's ring_off_head;
 * both only grow, so the sum is unchanged exactly while both are */
static __u64 slab_activity(const char *slab, const struct seg_geom *g)
{
	const struct prof_slab_hdr *sh = (const void *)slab;
	const __u64 *head = g->region[PROF_REGION_RING].size
				    ? (const void *)(slab + g->region[PROF_REGION_RING].off)
				    : &sh->ring_off_head;
	__u64 a = LDA(&sh->activity);

	return a + LDA(head);
}

PROF_HIDDEN void slab_view(const char *slab, const struct seg_geom *g, struct slab_view *v)
{
	v->hdr = (const void *)slab;
	v->nodes = slab + g->region[PROF_REGION_NODES].off;
	v->ext = LD(&v->hdr->ext_used) ? slab + g->region[PROF_REGION_EXT].off : NULL;
	v->open = (const void *)(slab + g->region[PROF_REGION_OPEN].off);
	v->rowmap = (const void *)(slab + g->region[PROF_REGION_ROWMAP].off);
	v->hist = (const void *)(slab + g->region[PROF_REGION_HIST].off);
	v->hist_shift = g->hist_shift;
	v->node_size = g->node_size;
	v->ext_size = g->ext_size;
	v->image = g->snap_tick != 0;
	{
		__u64 x = LD(&v->hdr->exit_tick);

		v->now = x && x < g->now ? x : g->now;
	}
	v->covered = LD(&v->hdr->covered);
}

/* did a live slab change hands since its gen was loaded (slab.h, 3.2)? */
PROF_HIDDEN bool slab_moved(const char *slab, __u64 gen)
{
	prof_seq_fence_acq();
	return LD(&((const struct prof_slab_hdr *)slab)->gen) != gen;
}


/* link children, depths and child totals; nodes must have parent < index */
PROF_HIDDEN int thread_derive(struct prof_snap_thread *t, __u32 nsites)
{
	struct prof_snap_node *nodes = t->nodes;
	__u32 i;

	for (i = 0; i < t->nnodes; i++) {
		nodes[i].first_child = PROF_SNAP_NONE;
		nodes[i].next_sibling = PROF_SNAP_NONE;
		nodes[i].child_ticks = 0;
	}
	nodes[0].depth = 0;
	/* walk backwards so each child list comes out in creation order */
	for (i = t->nnodes - 1; i >= 1; i--) {
		struct prof_snap_node *p = &nodes[nodes[i].parent];

		nodes[i].next_sibling = p->first_child;
		p->first_child = i;
		p->child_ticks += nodes[i].ticks;
	}
	for (i = 1; i < t->nnodes; i++)
		nodes[i].depth = nodes[nodes[i].parent].depth + 1;
	/* the root's total is the thread's wall time, which holds its
	 * children's (time outside every zone is its self time) */
	if (nodes[0].ticks < nodes[0].child_ticks)
		nodes[0].ticks = nodes[0].child_ticks;
	return prof_snap_mark_recursion(t, nsites);
}

/* prof_seg_flat: flat rows accumulated straight from the segment */

/* a slab header's fields a thread takes as they are (tid and state are
 * checked, the name ended apart) */
#define SLAB_AS_IS(X)                                                              \
	X(ksched_slot) X(start_tick) X(exit_tick) X(overflow) X(unbalanced) X(frames) \
	X(frame_ticks) X(frame_max)

/* a slab's header into t, checked; nn: its node count as published
 * before the read loaded nsites (see struct slab_pub) */
static int read_slab_hdr(const char *slab, __u32 max_nodes, __u32 index, struct prof_snap_thread *t,
			 __u32 nn)
{
	const struct prof_slab_hdr *h = (const void *)slab;
	__u32 i;

	if (LDA(&h->magic) != PROF_SLAB_MAGIC)
		return -EINVAL;
	if (nn < 2 || nn > max_nodes)
		return -EINVAL;
	t->slab = index;
	t->tid = LD(&h->tid);
	t->state = LD(&h->state);
	if (t->state != PROF_SLAB_ALIVE && t->state != PROF_SLAB_EXITED)
		return -EINVAL;
	copy_name(t->name, h->name, sizeof(t->name));
#define AS_IS(f) t->f = LD(&h->f);
	SLAB_AS_IS(AS_IS)
#undef AS_IS
	for (i = 0; i < PROF_HIST_BUCKETS; i++)
		t->frame_hist[i] = LD(&h->frame_hist[i]);
	t->gen = LD(&h->gen);
	t->comm[0] = 0;
	{
		__u64 a = LD(&h->oncpu_start_ns), b = LD(&h->oncpu_exit_ns);

		/* known once the thread exited (or in an image); a live one's
		 * is what /proc says, added by prof_snapshot__add_proc
		 * (prof_proc.c) from oncpu_start_ns: the reader reads bytes */
		t->oncpu_ns = b ? (b > a ? b - a : 0) : PROF_SNAP_UNKNOWN;
		t->oncpu_start = a;
	}
	return 0;
}

/* the quantiles a lazy read keeps, ascending */

/*
 * Node i's open call, if any, noted in n after its ticks were loaded: the
 * writer clears the mark before it adds the call's ticks, so loading the
 * ticks first can miss a call that ends meanwhile, never count it twice.
 * Until thread_open_at measures it, open_ticks holds the call's start.
 */
static void node_open(const struct slab_view *v, __u32 i, struct prof_snap_node *n)
{
	__u64 start;

	n->open = 0;
	n->open_ticks = 0;
	if (i == PROF_NODE_ROOT)
		return;
	start = LDA(&v->open[i]);
	if (!start)
		return;
	n->open = 1;
	n->open_ticks = start;
}

/*
 * The open calls node_open noted, measured to now (a thread's exit, if
 * before), once every slab of the read is copied: a now taken before the
 * copy would count a child's call that ended during it whole and its open
 * parent only up to that now, the parent short of its child.  The root's
 * "open call" is the thread's life, its ticks the wall time (an image's,
 * the aggregate's included, are as written).
 */
PROF_HIDDEN void thread_open_at(struct prof_snap_thread *t, __u64 now, bool image)
{
	__u64 to = t->exit_tick && t->exit_tick < now ? t->exit_tick : now;
	__u32 i;

	if (!image && t->nnodes)
		t->nodes[0].ticks = to > t->start_tick ? to - t->start_tick : 0;
	for (i = 1; i < t->nnodes; i++) {
		struct prof_snap_node *n = &t->nodes[i];

		if (!n->open)
			continue;
		n->open_ticks = to > n->open_ticks ? to - n->open_ticks : 0;
		n->ticks += n->open_ticks;
	}
}

/* nodes [0, nn) of a slab into out, validated; histograms as flags say:
 * copied into pool, reduced in place to quant[3 * i ..], or left */
static int read_nodes(const struct slab_view *v, __u32 nsites, __u32 nn, struct prof_snap_node *out,
		      struct hist_pool *pool, __u64 *quant, unsigned int flags)
{
	bool any = !(flags & PROF_READ_NO_HIST);
	bool reduce = any && (flags & PROF_READ_LAZY) && !(flags & PROF_READ_LAZY_HIST);
	bool copy = any && !reduce;
	__u32 i;

	for (i = 0; i < nn; i++) {
		const struct prof_node *src = view_node(v, i);
		const struct prof_node_ext *ext = view_ext(v, i);
		struct prof_snap_node *n = &out[i];
		__u32 hi;
		int err;

		n->site = LD(&src->site);
		n->parent = LD(&src->parent);
		if (i == 0 ? n->parent != 0 : n->parent >= i)
			return -EINVAL;
		/* 0 and 1 are the root and the overflow node, the rest are zones */
		if (i < 2 ? n->site != PROF_SITE_NONE : n->site >= nsites)
			return -EINVAL;
		n->calls = LD(&src->calls);
		n->ticks = LD(&src->ticks);
		n->max = LD(&src->max);
		node_open(v, i, n);
		node_kernel(v, ext, n);
		/* the ext record's figures (figures.h) */
#define EXT_LOAD(f, unit, across, window, flat, slab, key) PROF_FIG_IF(EXT, slab, n->f = LD(&ext->f);)
		PROF_NODE_COUNTS(EXT_LOAD)
#undef EXT_LOAD
		n->hist_lo = 0;
		n->hist_n = 0;
		n->hist_off = 0;
		n->flags = 0;
		/* only the buckets up to the max's: the rest are empty */
		hi = prof_hist_bucket(n->max);
		if (reduce) {
			hist_quantiles_top(v->hist, view_rows(v, i), v->hist_shift, i, hi, n->calls,
					   n->max, quant + (size_t)i * PROF_SNAP_NQUANT);
			n->hist_off = i;
			n->flags = PROF_SNAP_F_QUANT;
			continue;
		}
		if (!copy || !n->calls)
			continue;
		err = pool_add(pool, v->hist, view_rows(v, i), v->hist_shift, i, hi, &n->hist_lo,
			       &n->hist_n, &n->hist_off);
		if (err)
			return err;
	}
	return 0;
}

/* PROF_READ_LAZY up front: the checks read_nodes makes, on the first cache
 * line of each node, and whether any carries scheduler facts */
static int scan_nodes(const struct slab_view *v, __u32 nsites, __u32 nn, bool *sched)
{
	__u64 facts = 0;
	__u32 i;

	for (i = 0; i < nn; i++) {
		const struct prof_node *src = view_node(v, i);
		__u32 site = LD(&src->site), parent = LD(&src->parent);

		if (i == 0 ? parent != 0 : parent >= i)
			return -EINVAL;
		if (i < 2 ? site != PROF_SITE_NONE : site >= nsites)
			return -EINVAL;
		if (v->ext) {
			const struct prof_node_ext *ext = view_ext(v, i);

			facts |= LD(&ext->preempted) | LD(&ext->migrated) | LD(&ext->offcpu_ns) |
				 LD(&ext->blocked) | LD(&ext->kernel_adj);
		}
	}
	*sched |= facts != 0 || v->covered;
	return 0;
}

static int read_thread(const char *slab, const struct seg_geom *g, __u32 nsites, __u32 index,
		       const struct slab_pub *pub, struct prof_snap_thread *t,
		       struct hist_pool *pool, unsigned int flags, struct flat_acc *fa, bool *sched)
{
	struct slab_view v;
	__u32 nn = pub->nnodes;
	int err;

	err = read_slab_hdr(slab, g->max_nodes, index, t, nn);
	if (err)
		return err;
	slab_view(slab, g, &v);
	/* the aggregate's root holds its threads' wall times, as an image's */
	if (index == g->agg_slab)
		v.image = true;
	if (fa)
		return flat_slab(&v, nn, nsites, index, pub->activity, t->tid,
				 fa->live ? pub->gen : t->gen, fa);
	/* lazy: checked now, these nodes read when a renderer asks */
	if (flags & PROF_READ_LAZY) {
		t->lazy_nnodes = nn;
		return scan_nodes(&v, nsites, nn, sched);
	}

	t->nodes = calloc(nn, sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	t->nnodes = nn;
	/* measured and derived once every slab is copied (thread_open_at) */
	return read_nodes(&v, nsites, nn, t->nodes, pool, NULL, flags);
}

int prof_snapshot__read(const void *mem, size_t len, struct prof_snapshot **out)
{
	return prof_snapshot__read_opts(mem, len, 0, out);
}

int prof_snapshot__read_opts(const void *mem, size_t len, unsigned int flags,
			     struct prof_snapshot **out)
{
	int err = read_seg(mem, len, flags, NULL, out);

	/* read_seg is the bytes' alone: a live process's threads get what
	 * /proc says of them */
	if (!err && !seg_is_image(mem))
		prof_snapshot__add_proc(*out, 0);
	return err;
}

/* the segment's clock, now, as the writer reads it; 0 if this reader cannot
 * (then open calls count nothing) */
PROF_HIDDEN __u64 reader_now(__u32 clock)
{
	struct timespec ts;

#if defined(__x86_64__) || defined(__i386__)
	if (clock == PROF_CLOCK_TSC)
		return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	/* PROF_CLOCK_TSC on aarch64: the virtual counter, as __prof_now */
	if (clock == PROF_CLOCK_TSC) {
		__u64 t;

		__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(t));
		return t;
	}
#endif
	if (clock != PROF_CLOCK_MONO || clock_gettime(CLOCK_MONOTONIC, &ts))
		return 0;
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

__u64 prof_clock_now(__u32 clock)
{
	return reader_now(clock);
}

/* sites [from, to) into s->sites (room for max_sites), checked */
static int read_sites(struct prof_snapshot *s, const char *base, const struct seg_geom *g,
		      __u32 from, __u32 to)
{
	__u32 i;

	for (i = from; i < to; i++) {
		const struct prof_site_ent *e =
			(const void *)(base + g->sites_off + (__u64)i * g->site_size);
		struct prof_snap_site *d = &s->sites[i];

		copy_bytes(d->name, e->name, sizeof(d->name));
		copy_bytes(d->func, e->func, sizeof(d->func));
		copy_bytes(d->file, e->file, sizeof(d->file));
		d->line = LD(&e->line);
		d->flags = LD(&e->flags);
		if (!str_ok(d->name, sizeof(d->name)) || !str_ok(d->func, sizeof(d->func)) ||
		    !str_ok(d->file, sizeof(d->file)))
			return -EINVAL;
	}
	return 0;
}

/* drop thread i of s: it is counted in the aggregate */
static void drop_thread(struct prof_snapshot *s, __u32 i)
{
	reader_annot_drop(s, s->threads[i].tid, s->threads[i].start_tick);
	free(s->threads[i].nodes);
	memmove(&s->threads[i], &s->threads[i + 1], (s->nthreads - i - 1) * sizeof(*s->threads));
	s->nthreads--;
}

/*
 * The exited threads' aggregate, last of s's threads: copied inside its
 * seqlock with the folds since n0 (slab.h, 3.2), then the copies of the
 * threads those folds put in it are dropped, so every thread counts once.
 * -EAGAIN: more folds than the ring remembers ran during the read.
 */
static int read_agg(struct prof_snapshot *s, const void *mem, struct seg_geom *g, __u64 n0,
		    struct hist_pool *pool, unsigned int flags, struct flat_acc *fa, bool *sched)
{
	const struct prof_seg_hdr *h = mem;
	const char *slab = (const char *)mem + g->slabs_off + (__u64)g->agg_slab * g->slab_size;
	const struct prof_slab_hdr *sh = (const void *)slab;
	struct prof_snap_thread *t = &s->threads[s->nthreads];
	struct prof_fold ring[PROF_FOLD_RING];
	bool live = !g->snap_tick;
	__u64 n1 = 0, k;
	__u32 tries = 0, waits = 0, i, nf = 0;
	/* a fold takes at most a few milliseconds and the runtime folds many
	 * threads at once, seldom: a sequence that stays odd (some 50 ms) or
	 * keeps moving is a stuck or hostile writer, not a reason to spin */
	int err = -EBUSY;

	while (tries < 256 && waits < 1000) {
		__u32 seq = live ? LDA(&h->agg_seq) : 0, nsites;
		__u64 pool_n = pool->n;
		struct slab_pub pub;

		if (seq & 1) {
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
			waits++;
			err = -EBUSY;
			continue;
		}
		tries++;
		n1 = LD(&h->folds);
		if (!n1 || LDA(&sh->magic) != PROF_SLAB_MAGIC)
			return 0;
		pub.gen = LD(&sh->gen);
		pub.activity = slab_activity(slab, g);
		pub.nnodes = LDA(&sh->nnodes);
		/* after nnodes: every node names a site under it (struct slab_pub) */
		nsites = LDA(&h->nsites);
		if (nsites > g->max_sites)
			return -EINVAL;
		/* a flat pass's rows are sized already: sites as they were */
		if (fa)
			nsites = s->nsites;
		if (nsites > s->nsites) {
			struct prof_snap_site *v = realloc(s->sites, nsites * sizeof(*v));

			if (!v)
				return -ENOMEM;
			s->sites = v;
			err = read_sites(s, mem, g, s->nsites, nsites);
			if (err)
				return err;
			s->nsites = nsites;
		}
		err = read_thread(slab, g, s->nsites, g->agg_slab, &pub, t, pool, flags, fa, sched);
		/* its folded locks and plots (tid 0, as it is named) */
		t->tid = 0;
		if (!err && !fa)
			err = reader_annot_thread(mem, g, s->nsites, slab, t, s);
		nf = 0;
		/* a node of a site newer than the pass's: the next pass */
		if (fa && err == -EINVAL)
			return 0;
		/* a flat pass adds as it reads: it takes the aggregate once, and
		 * may count a thread that exits during the pass twice, until the
		 * next pass */
		if (fa)
			break;
		if (live && n1 > n0) {
			if (n1 - n0 > PROF_FOLD_RING)
				err = -EAGAIN;
			for (k = n0 + 1; !err && k <= n1; k++) {
				const struct prof_fold *f = &h->fold_ring[(k - 1) % PROF_FOLD_RING];

				ring[nf].slab = LD(&f->slab);
				ring[nf++].gen = LD(&f->gen);
			}
		}
		prof_seq_fence_acq();
		if (!live || LD(&h->agg_seq) == seq)
			break;
		/* a fold ran meanwhile: again */
		reader_annot_drop(s, 0, t->start_tick);
		free(t->nodes);
		memset(t, 0, sizeof(*t));
		pool->n = pool_n;
		err = -EBUSY;
	}
	if (err) {
		reader_annot_drop(s, 0, t->start_tick);
		free(t->nodes);
		memset(t, 0, sizeof(*t));
		return err;
	}
	t->folds = n1;
	t->tid = 0;
	s->nthreads++;
	/* the threads that exited during the read are in it: not twice */
	for (k = 0; k < nf; k++)
		for (i = 0; i + 1 < s->nthreads; i++)
			if (s->threads[i].slab == ring[k].slab && s->threads[i].gen == ring[k].gen) {
				drop_thread(s, i);
				break;
			}
	return 0;
}

/* two clocks (a CPU clock, the TSC) may disagree by a little: never more
 * CPU time than wall time; image: s is an image's (its lazy threads have
 * no bounds to go by) */
PROF_HIDDEN void snap_clamp_oncpu(struct prof_snapshot *s, bool image)
{
	__u32 i;

	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i];
		__u64 wall;

		if (t->oncpu_ns == PROF_SNAP_UNKNOWN)
			continue;
		/* the root's ticks; a lazy read has no nodes yet: its bounds */
		if (t->nnodes)
			wall = t->nodes[0].ticks;
		else if (image)
			continue;
		else {
			__u64 now = s->now_tick;
			__u64 to = t->exit_tick && t->exit_tick < now ? t->exit_tick : now;

			wall = to > t->start_tick ? to - t->start_tick : 0;
		}
		if (t->oncpu_ns > prof_snap_ns(s, wall))
			t->oncpu_ns = prof_snap_ns(s, wall);
	}
}

/* each thread's open calls measured to g->now, then its nodes linked
 * (thread_derive); on-CPU times no longer than wall times */
static int snap_derive(struct prof_snapshot *s, const struct seg_geom *g)
{
	__u32 i;
	int err;

	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i];

		if (!t->nnodes)
			continue;
		thread_open_at(t, g->now, g->snap_tick || t->slab == g->agg_slab);
		err = thread_derive(t, s->nsites);
		if (err)
			return err;
	}
	snap_clamp_oncpu(s, g->snap_tick != 0);
	return 0;
}

/* a snapshot may be kept (profd's history): no slack past what it holds */
static void hist_pool_trim(struct hist_pool *pool)
{
	if (pool->v && pool->n < pool->cap) {
		__u32 *v = realloc(pool->v, (pool->n ? pool->n : 1) * sizeof(*v));

		if (v)
			pool->v = v;
	}
}

static int read_seg_once(const void *mem, size_t len, unsigned int flags, struct flat_acc *fa,
			 struct prof_snapshot **out);

/* a read that raced more folds than the ring holds is taken again */
PROF_HIDDEN int read_seg(const void *mem, size_t len, unsigned int flags, struct flat_acc *fa,
		    struct prof_snapshot **out)
{
	int err, tries = 0;

	do
		err = read_seg_once(mem, len, flags, fa, out);
	while (err == -EAGAIN && !fa && ++tries < 64);
	return err;
}

/* the segment header's fields a snapshot takes as they are (its comm is
 * ended apart) */
#define HDR_AS_IS(X)                                                                   \
	X(pid) X(uid) X(start_token) X(created_ns) X(clock) X(flags) X(tick_hz)       \
	X(tick_base) X(mono_base_ns) X(exit_tick) X(sites_dropped) X(threads_dropped) \
	X(nospace) X(zone_cost) X(zone_inner)

/* the header's fields into s, as they are (checked by the caller) */
static void read_hdr(struct prof_snapshot *s, const struct prof_seg_hdr *h)
{
	copy_name(s->comm, h->comm, sizeof(s->comm));
#define AS_IS(f) s->f = LD(&h->f);
	HDR_AS_IS(AS_IS)
#undef AS_IS
}

/* each slab's words that say whether it changed during the read (live)
 * or how far it goes; NULL if out of memory */
static struct slab_pub *read_pub(const char *base, const struct seg_geom *g, __u32 nslabs,
				 bool live)
{
	struct slab_pub *pub = malloc((nslabs ? nslabs : 1) * sizeof(*pub));
	__u32 i;

	if (!pub)
		return NULL;
	for (i = 0; i < nslabs; i++) {
		const struct prof_slab_hdr *sh =
			(const void *)(base + g->slabs_off + (__u64)i * g->slab_size);

		pub[i].gen = live ? LDA(&sh->gen) : 0;
		pub[i].activity = slab_activity((const char *)sh, g);
		pub[i].nnodes = LDA(&sh->nnodes);
	}
	return pub;
}

/* what a PROF_READ_LAZY snapshot keeps to read its threads later; 0 or
 * -ENOMEM */
static int lazy_keep(struct prof_snapshot *s, const void *mem, size_t len,
		     const struct seg_geom *g, unsigned int flags, bool sched)
{
	s->lazy = calloc(1, sizeof(*s->lazy));
	if (!s->lazy)
		return -ENOMEM;
	s->lazy->mem = mem;
	s->lazy->len = len;
	s->lazy->g = *g;
	s->lazy->flags = flags;
	s->lazy->sched = sched;
	s->lazy->nsites = s->nsites;
	s->lazy->clock = s->clock;
	s->lazy->exit_tick = s->exit_tick;
	return 0;
}

static int read_seg_once(const void *mem, size_t len, unsigned int flags, struct flat_acc *fa,
			 struct prof_snapshot **out)
{
	const struct prof_seg_hdr *h = mem;
	const char *base = mem;
	struct prof_snapshot *s;
	struct hist_pool pool = { 0 };
	struct slab_pub *pub = NULL;
	struct seg_geom g;
	__u32 i, nslabs;
	__u64 n0;
	bool sched = false, live;
	int err = -EINVAL;

	*out = NULL;
	err = seg_check(mem, len, &g);
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* from here every check that fails says the segment is corrupt */
	err = -EINVAL;
	{
		__u64 slabs_off = g.slabs_off, slab_size = g.slab_size, sites_off = g.sites_off;

		read_hdr(s, h);
		if (s->clock != PROF_CLOCK_TSC && s->clock != PROF_CLOCK_MONO)
			goto fail;
		/* the folds before any slab: each of them left its slab's gen odd */
		live = !g.snap_tick && g.folds;
		if (fa)
			fa->live = live;
		n0 = g.folds ? LDA(&h->folds) : 0;
		nslabs = LDA(&h->nslabs);
		if (nslabs > g.max_threads)
			goto fail;
		pub = read_pub(base, &g, nslabs, live);
		if (!pub) {
			err = -ENOMEM;
			goto fail;
		}
		s->nsites = LDA(&h->nsites);
		if (s->nsites > g.max_sites)
			goto fail;
		s->sites = calloc(s->nsites ? s->nsites : 1, sizeof(*s->sites));
		/* and one for the aggregate */
		s->threads = calloc((size_t)nslabs + 1, sizeof(*s->threads));
		if (!s->sites || !s->threads) {
			err = -ENOMEM;
			goto fail;
		}
		if (fa) {
			err = flat_size(fa, mem, len, &g, s->nsites,
					g.agg_slab != PROF_NO_SLOT ? g.agg_slab + 1 : nslabs);
			if (err)
				goto fail;
			err = -EINVAL;
		}
		(void)sites_off;
		if (read_sites(s, base, &g, 0, s->nsites))
			goto fail;
		for (i = 0; i < nslabs; i++) {
			const char *slab = base + slabs_off + (__u64)i * slab_size;
			struct prof_snap_thread *t = &s->threads[s->nthreads];
			__u64 pool_n = pool.n;

			/* a slab between two threads: its last is in the aggregate */
			if (live && (pub[i].gen & 1))
				continue;
			err = read_thread(slab, &g, s->nsites, i, &pub[i], t, &pool, flags, fa,
					  &sched);
			if (!err && !fa)
				err = reader_annot_thread(base, &g, s->nsites, slab, t, s);
			if (live && slab_moved(slab, pub[i].gen)) {
				/* it changed hands during the copy: never mix two
				 * threads' numbers; the one it held is folded */
				reader_annot_drop(s, t->tid, t->start_tick);
				free(t->nodes);
				memset(t, 0, sizeof(*t));
				pool.n = pool_n;
				continue;
			}
			s->nthreads++;
			if (err)
				goto fail;
		}
		if (g.agg_slab != PROF_NO_SLOT) {
			err = read_agg(s, mem, &g, n0, &pool, flags, fa, &sched);
			if (err)
				goto fail;
		}
	}
	/* one now for every open call of the read, taken after the copy (see
	 * thread_open_at): an image's, the exit's, or the clock's */
	g.now = g.snap_tick ? g.snap_tick : s->exit_tick ? s->exit_tick : reader_now(s->clock);
	s->now_tick = g.now;
	err = snap_derive(s, &g);
	if (err)
		goto fail;
	if ((flags & PROF_READ_LAZY) && !fa && lazy_keep(s, mem, len, &g, flags, sched)) {
		err = -ENOMEM;
		goto fail;
	}
	hist_pool_trim(&pool);
	s->hist = pool.v;
	s->nhist = pool.n;
	*out = s;
	free(pub);
	return 0;
fail:
	s->hist = pool.v;
	prof_snapshot__destroy(s);
	free(pub);
	return err;
}

int prof_snapshot__read_fd(int fd, struct prof_snapshot **snap)
{
	return prof_snapshot__read_fd_opts(fd, 0, snap);
}

int prof_snapshot__read_fd_opts(int fd, unsigned int flags, struct prof_snapshot **snap)
{
	struct stat st;
	void *mem;
	int err;

	*snap = NULL;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct prof_seg_hdr))
		return -EINVAL;
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	err = prof_snapshot__read_opts(mem, (size_t)st.st_size, flags, snap);
	/* a lazy snapshot reads from the mapping until it is destroyed */
	if (!err && (*snap)->lazy) {
		(*snap)->lazy->map = mem;
		return 0;
	}
	munmap(mem, (size_t)st.st_size);
	return err;
}

/* thread t's nodes into tab, checked as the read checks them, and t's
 * nodes and nnodes pointed at them */
static int lazy_fill(const struct prof_snap_lazy *z, struct lazy_table *tab,
		     struct prof_snap_thread *t)
{
	struct slab_view v;
	const char *slab;
	__u64 gen;
	__u32 nn;
	int err;

	t->nodes = NULL;
	t->nnodes = 0;
	if (t->slab >= z->g.max_threads && t->slab != z->g.agg_slab)
		return -EINVAL;
	slab = (const char *)z->mem + z->g.slabs_off + (__u64)t->slab * z->g.slab_size;
	/* the nodes the read checked, and no newer: a newer one may name a site
	 * registered since s->nsites was loaded.  Checked again as copied. */
	if (LDA(&((const struct prof_slab_hdr *)slab)->magic) != PROF_SLAB_MAGIC)
		return -EINVAL;
	nn = t->lazy_nnodes;
	if (nn < 2 || nn > z->g.max_nodes)
		return -EINVAL;
	if (nn > tab->cap) {
		struct prof_snap_node *nodes;
		__u64 *quant;
		/* room to grow: live threads add nodes between loads */
		__u32 cap = nn + nn / 4 < z->g.max_nodes ? nn + nn / 4 : z->g.max_nodes;

		nodes = malloc((size_t)cap * sizeof(*nodes));
		quant = malloc((size_t)cap * PROF_SNAP_NQUANT * sizeof(*quant));
		if (!nodes || !quant) {
			free(nodes);
			free(quant);
			return -ENOMEM;
		}
		free(tab->nodes);
		free(tab->quant);
		tab->nodes = nodes;
		tab->quant = quant;
		tab->cap = cap;
	}
	tab->pool.n = 0;
	slab_view(slab, &z->g, &v);
	if (t->slab == z->g.agg_slab)
		v.image = true;
	gen = LDA(&((const struct prof_slab_hdr *)slab)->gen);
	err = read_nodes(&v, z->nsites, nn, tab->nodes, &tab->pool, tab->quant, z->flags);
	if (!err) {
		/* a live thread's open calls to a now after its copy, as the read's */
		t->nodes = tab->nodes;
		t->nnodes = nn;
		thread_open_at(t, z->g.snap_tick || z->exit_tick ? z->g.now : reader_now(z->clock),
			       z->g.snap_tick || t->slab == z->g.agg_slab);
		t->nodes = NULL;
		t->nnodes = 0;
	}
	prof_seq_fence_acq();
	/* a live thread that exited since the read: its numbers are in the
	 * aggregate now, its slab maybe another's; never mix them (slab.h) */
	if (!z->g.snap_tick && z->g.folds && t->slab != z->g.agg_slab &&
	    (gen != t->gen || LD(&((const struct prof_slab_hdr *)slab)->gen) != gen)) {
		memset(tab->nodes, 0, 2 * sizeof(*tab->nodes));
		tab->nodes[0].site = tab->nodes[1].site = PROF_SITE_NONE;
		memset(tab->quant, 0, 2 * PROF_SNAP_NQUANT * sizeof(*tab->quant));
		tab->pool.n = 0;
		nn = 2;
		err = 0;
	}
	if (err)
		return err;
	t->nodes = tab->nodes;
	t->nnodes = nn;
	err = thread_derive(t, z->nsites);
	if (err) {
		t->nodes = NULL;
		t->nnodes = 0;
	}
	return err;
}

/* thread t of a lazy snapshot into the table, the one before unloaded */
static int thread_load(const struct prof_snapshot *s, struct prof_snap_thread *t)
{
	struct prof_snap_lazy *z = s->lazy;
	int err;

	if (!z || z->cur == t)
		return 0;
	if (z->cur) {
		z->cur->nodes = NULL;
		z->cur->nnodes = 0;
		z->cur = NULL;
	}
	err = lazy_fill(z, &z->tab, t);
	if (err)
		return err;
	z->cur = t;
	return 0;
}

struct prof_snap_thread *prof_snap_next(struct prof_snap_iter *it)
{
	const struct prof_snapshot *s = it->s;

	if (it->err)
		return NULL;
	for (; it->i < s->nthreads; it->i++) {
		struct prof_snap_thread *t = &s->threads[it->i];
		int err;

		if (it->tid && t->tid != it->tid)
			continue;
		err = thread_load(s, t);
		if (err) {
			it->err = err;
			return NULL;
		}
		it->i++;
		return t;
	}
	return NULL;
}

int prof_snap_any_sched(const struct prof_snapshot *s)
{
	__u32 i, j;

	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		if (t->ksched_slot != PROF_NO_SLOT)
			return 1;
		for (j = 0; j < t->nnodes; j++)
			if (t->nodes[j].preempted || t->nodes[j].migrated || t->nodes[j].offcpu_ns ||
			    t->nodes[j].blocked || t->nodes[j].kernel_calls)
				return 1;
	}
	return s->lazy && s->lazy->sched;
}

void prof_snapshot__destroy(struct prof_snapshot *s)
{
	__u32 i;

	if (!s)
		return;
	if (s->lazy) {
		/* the threads' nodes, if any, are the lazy table */
		free(s->lazy->tab.nodes);
		free(s->lazy->tab.quant);
		free(s->lazy->tab.pool.v);
		if (s->lazy->map)
			munmap(s->lazy->map, s->lazy->len);
		free(s->lazy);
	} else {
		for (i = 0; i < s->nthreads; i++)
			free(s->threads[i].nodes);
	}
	free(s->threads);
	free(s->sites);
	free(s->hist);
	free(s->locks);
	free(s->plots);
	free(s);
}

const char *prof_snap_thread_label(const struct prof_snap_thread *t, char *buf, size_t len)
{
	if (t->folds)
		snprintf(buf, len, "[exited threads] (%llu)", (unsigned long long)t->folds);
	else if (t->name[0])
		snprintf(buf, len, "%s", t->name);
	else if (t->comm[0])
		snprintf(buf, len, "%s", t->comm);
	else
		snprintf(buf, len, "tid %u", t->tid);
	return buf;
}

const char *prof_snap_node_name(const struct prof_snapshot *s, const struct prof_snap_node *n)
{
	if (n->site < s->nsites)
		return s->sites[n->site].name;
	/* the two nodes without a site: the root (depth 0) and overflow */
	return n->depth ? "[overflow]" : "[root]";
}

int prof_snap_is_recursive(const struct prof_snap_thread *t, __u32 i)
{
	return !!(t->nodes[i].flags & PROF_SNAP_F_RECURSIVE);
}

/*
 * Depth first, without recursion: a count per site of how often it is on
 * the path from the root; a node is recursive if its site already is.
 */
int prof_snap_mark_recursion(struct prof_snap_thread *t, __u32 nsites)
{
	__u32 *on_path = calloc((size_t)nsites + 1, sizeof(*on_path));
	struct prof_snap_node *nodes = t->nodes;
	__u32 i = nodes[0].first_child;

#define ROW(n) ((n)->site < nsites ? (n)->site : nsites)
	if (!on_path)
		return -ENOMEM;
	while (i != PROF_SNAP_NONE && i != 0) {
		struct prof_snap_node *n = &nodes[i];

		if (on_path[ROW(n)] && i > 1)
			n->flags |= PROF_SNAP_F_RECURSIVE;
		else
			n->flags &= ~PROF_SNAP_F_RECURSIVE;
		on_path[ROW(n)]++;
		if (n->first_child != PROF_SNAP_NONE) {
			i = n->first_child;
			continue;
		}
		/* leave i, then every ancestor whose children are done */
		for (;;) {
			on_path[ROW(&nodes[i])]--;
			if (nodes[i].next_sibling != PROF_SNAP_NONE) {
				i = nodes[i].next_sibling;
				break;
			}
			i = nodes[i].parent;
			if (i == 0)
				break;
		}
	}
#undef ROW
	free(on_path);
	return 0;
}
