// SPDX-License-Identifier: MIT
/*
 * usdt/prof_fold.c - the exited-thread fold: the profiles of exited threads go into
 * the aggregate slab so that their slabs can be reused.
 */
#define _GNU_SOURCE
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "zone_leave.h"
#include "runtime.h"
#include "snapshot.h"
#include "proffile.h"
#include "funcname.h"
#include "prof_int.h"

/*
 * Exited threads (slab.h, 3.2).  Slow paths, never a zone's: a thread that
 * exits gives its slab up (it stays the thread's, shown as itself); a new
 * thread that finds no free slab folds the exited threads' profiles into
 * the aggregate, a slab of its own past the threads', and takes one of
 * their slabs, so however many threads come and go none is unprofiled,
 * nothing is lost, and the segment keeps its size.
 */


/* the aggregate's header and its root and overflow nodes, at the first
 * fold; caller holds the lock.  0 or -errno */
static int agg_init(void)
{
	struct prof_slab_hdr *a = prof_rt_slab(prof_rt.max_threads);
	__u32 tsize = prof_thread_table_size();
	struct prof_node *nodes;

	if (prof_rt.agg)
		return 0;
	if (!prof_rt.agg_table || prof_rt.agg_mask != tsize - 1) {
		free(prof_rt.agg_table);
		free(prof_rt.fold_map);
		prof_rt.agg_table = calloc(tsize, sizeof(__u32));
		prof_rt.fold_map = calloc(prof_rt.max_nodes, sizeof(__u32));
		if (!prof_rt.agg_table || !prof_rt.fold_map)
			return -ENOMEM;
		prof_rt.agg_mask = tsize - 1;
	}
	memset(prof_rt.agg_table, 0, (size_t)tsize * sizeof(__u32));
	if (prof_slab_reserve(a, 2, &prof_rt.agg_res)) {
		prof_seg_nospace();
		return -ENOSPC;
	}
	nodes = prof_rt_region(a, PROF_REGION_NODES);
	prof_node_init(&nodes[PROF_NODE_ROOT], PROF_SITE_NONE, PROF_NODE_ROOT);
	prof_node_init(&nodes[1], PROF_SITE_NONE, PROF_NODE_ROOT);
	prof_copy_str(a->name, sizeof(a->name), "[exited threads]");
	a->state = PROF_SLAB_EXITED;
	a->ksched_slot = PROF_NO_SLOT;
	a->gen = 2;
	/* once: with slab and tid, what names the aggregate (a diff's match) */
	a->start_tick = prof_rt.seg->tick_base;
	/* CPU time as an image keeps it: exit - start */
	a->oncpu_start_ns = 1;
	a->oncpu_exit_ns = 1;
	a->nnodes = 2;
	__atomic_store_n(&a->magic, PROF_SLAB_MAGIC, __ATOMIC_RELEASE);
	prof_rt.agg = a;
	prof_rt.agg_nnodes = 2;
	return 0;
}

/* the aggregate's node for (parent, site), made on a miss; its overflow
 * node (1) when full or out of room */
static __u32 agg_node(__u32 parent, __u32 site)
{
	struct prof_slab_hdr *a = prof_rt.agg;
	struct prof_node *nodes = prof_rt_region(a, PROF_REGION_NODES);
	__u32 i, v, n, max = prof_rt.max_nodes;

	if (parent == 1)
		return 1;
	for (i = node_hash(parent, site) & prof_rt.agg_mask;; i = (i + 1) & prof_rt.agg_mask) {
		v = prof_rt.agg_table[i];
		if (!v)
			break;
		if (nodes[v - 1].parent == parent && nodes[v - 1].site == site)
			return v - 1;
	}
	if (prof_rt.agg_nnodes >= max)
		return 1;
	if (prof_rt.agg_nnodes >= prof_rt.agg_res &&
	    prof_slab_reserve_nodes(a, prof_rt.agg_nnodes,
			       prof_rt.agg_nnodes + 64 < max ? prof_rt.agg_nnodes + 64 : max,
			       &prof_rt.agg_res)) {
		prof_seg_nospace();
		return 1;
	}
	n = prof_rt.agg_nnodes++;
	prof_node_init(&nodes[n], site, parent);
	prof_rt.agg_table[i] = n + 1;
	__atomic_store_n(&a->nnodes, prof_rt.agg_nnodes, __ATOMIC_RELEASE);
	return n;
}

/* what a slab's region r holds for node i: a pointer to it */
#define SLAB_AT(h, r, type, i) ((type *)prof_rt_region((h), (r)) + (i))

/* node j of the folding thread's slab h into node m of the aggregate a:
 * its completed calls only (an open call never ended: it is not one) */
static void fold_node(struct prof_slab_hdr *h, __u32 j, struct prof_slab_hdr *a, __u32 m)
{
	const struct prof_node *src = SLAB_AT(h, PROF_REGION_NODES, struct prof_node, j);
	struct prof_node *dst = SLAB_AT(a, PROF_REGION_NODES, struct prof_node, m);
	const __u64 *rows = SLAB_AT(h, PROF_REGION_ROWMAP, __u64,
				    (j >> PROF_HIST_SHIFT) * PROF_ROWMAP_WORDS);
	__u64 *arows = SLAB_AT(a, PROF_REGION_ROWMAP, __u64, (m >> PROF_HIST_SHIFT) * PROF_ROWMAP_WORDS);
	const __u32 *hist = prof_rt_region(h, PROF_REGION_HIST);
	__u32 *ahist = prof_rt_region(a, PROF_REGION_HIST);
	unsigned int w, b;

	/* the node's figures, each as figures.h says threads combine it */
#define FOLD_NODE(f, unit, across, window, flat, slab, key)                                       \
	PROF_FIG_IF(NODE, slab, if (PROF_FIG_IS(SUM, across)) __PROF_ADD(&dst->f, src->f);        \
		    else if (src->f > __PROF_LOAD(&dst->f)) __PROF_STORE(&dst->f, src->f);)
	PROF_NODE_COUNTS(FOLD_NODE)
	PROF_NODE_TIMES(FOLD_NODE)
#undef FOLD_NODE
	if (h->ext_used) {
		const struct prof_node_ext *x = SLAB_AT(h, PROF_REGION_EXT, struct prof_node_ext, j);
		struct prof_node_ext *y = SLAB_AT(a, PROF_REGION_EXT, struct prof_node_ext, m);
		/* the calls that had kernel facts (slab.h): the aggregate is
		 * never covered, so its kernel_adj is their count */
		__u64 kc = h->covered ? (src->calls > x->kernel_adj ? src->calls - x->kernel_adj : 0)
				      : (x->kernel_adj < src->calls ? x->kernel_adj : src->calls);

		__PROF_STORE(&a->ext_used, 1);
		/* the ext record's figures, each as figures.h says threads
		 * combine it (every one a sum) */
#define FOLD_EXT(f, unit, across, window, flat, slab, key)                                        \
	PROF_FIG_IF(EXT, slab, _Static_assert(PROF_FIG_IS(SUM, across), #f " folds as a sum");    \
		    __PROF_ADD(&y->f, x->f);)
		PROF_NODE_COUNTS(FOLD_EXT)
#undef FOLD_EXT
		__PROF_ADD(&y->kernel_adj, kc);
	}
	if (!src->calls)
		return;
	/* the buckets the node's block has rows for */
	for (w = 0; w < PROF_ROWMAP_WORDS; w++) {
		for (__u64 bits = rows[w]; bits; bits &= bits - 1) {
			__u32 v, *d;

			b = w * 64 + (unsigned int)__builtin_ctzll(bits);
			v = hist[prof_hist_index(j, b, PROF_HIST_SHIFT)];
			if (!v)
				continue;
			d = &ahist[prof_hist_index(m, b, PROF_HIST_SHIFT)];
			if (!__PROF_LOAD(d))
				__PROF_STORE(&arows[b / 64], __PROF_LOAD(&arows[b / 64]) | 1ull << (b % 64));
			__PROF_ADD(d, v);
		}
	}
}

/* the slab's thread-level counters into the aggregate's */
static void fold_hdr(struct prof_slab_hdr *h, struct prof_slab_hdr *a)
{
	struct prof_node *root = SLAB_AT(a, PROF_REGION_NODES, struct prof_node, PROF_NODE_ROOT);
	__u64 start = h->start_tick, end = h->exit_tick, cpu;
	unsigned int b;

	/* the root's ticks: the threads' wall times */
	__PROF_ADD(&root->ticks, end > start ? end - start : 0);
	cpu = h->oncpu_exit_ns > h->oncpu_start_ns ? h->oncpu_exit_ns - h->oncpu_start_ns : 0;
	/* two clocks may disagree by a little: never more CPU than wall time
	 * (a reader clamps a thread so, and cannot clamp the sum) */
	if (cpu > prof_ticks_to_ns(end > start ? end - start : 0))
		cpu = prof_ticks_to_ns(end > start ? end - start : 0);
	__PROF_ADD(&a->oncpu_exit_ns, cpu);
	if (end > __PROF_LOAD(&a->exit_tick))
		__PROF_STORE(&a->exit_tick, end);
	__PROF_ADD(&a->overflow, h->overflow);
	__PROF_ADD(&a->unbalanced, h->unbalanced);
	__PROF_ADD(&a->frames, h->frames);
	__PROF_ADD(&a->frame_ticks, h->frame_ticks);
	if (h->frame_max > __PROF_LOAD(&a->frame_max))
		__PROF_STORE(&a->frame_max, h->frame_max);
	for (b = 0; b < PROF_HIST_BUCKETS; b++)
		if (h->frame_hist[b])
			__PROF_ADD(&a->frame_hist[b], h->frame_hist[b]);
}

/* a folded slab, zeroed for its next thread (gen odd: no reader reads
 * it); atomic stores, as a reader may be finishing a copy it will drop */
static void slab_clear(struct prof_slab_hdr *h, __u32 nn)
{
	struct prof_node *nodes = prof_rt_region(h, PROF_REGION_NODES);
	struct prof_node_ext *ext = prof_rt_region(h, PROF_REGION_EXT);
	__u64 *open = prof_rt_region(h, PROF_REGION_OPEN), *rows;
	__u32 *hist = prof_rt_region(h, PROF_REGION_HIST);
	__u64 blk, blocks = prof_hist_blocks(nn, PROF_HIST_SHIFT), k;
	__u32 i, x;
	unsigned int b;

	for (i = 0; i < nn; i++) {
		__PROF_STORE(&nodes[i].calls, 0);
		__PROF_STORE(&nodes[i].ticks, 0);
		__PROF_STORE(&nodes[i].max, 0);
		__PROF_STORE(&open[i], 0);
		if (h->ext_used) {
			__u64 *w = (__u64 *)&ext[i];

			for (x = 0; x < sizeof(ext[i]) / sizeof(*w); x++)
				__PROF_STORE(&w[x], 0);
		}
	}
	for (k = 0; k < blocks; k++) {
		rows = SLAB_AT(h, PROF_REGION_ROWMAP, __u64, k * PROF_ROWMAP_WORDS);
		for (b = 0; b < PROF_HIST_BUCKETS; b++) {
			if (!(rows[b / 64] >> (b % 64) & 1))
				continue;
			blk = prof_hist_index((__u32)(k << PROF_HIST_SHIFT), b, PROF_HIST_SHIFT);
			for (x = 0; x < PROF_HIST_BLOCK; x++)
				__PROF_STORE(&hist[blk + x], 0);
		}
		for (x = 0; x < PROF_ROWMAP_WORDS; x++)
			__PROF_STORE(&rows[x], 0);
	}
	/* the event ring starts again: its events were the last thread's */
	if (prof_rt.region[PROF_REGION_RING].size)
		__atomic_store_n(&((struct prof_ring *)prof_rt_region(h, PROF_REGION_RING))->head, 0,
				 __ATOMIC_RELEASE);
	/* the annotations start again at the next thread's first */
	__atomic_store_n(&h->annot, 0, __ATOMIC_RELEASE);
	__PROF_STORE(&h->nplots, 0);
	__PROF_STORE(&h->nlocks, 0);
	__PROF_STORE(&h->annot_dropped, 0);
	__PROF_STORE(&h->annot_cut, 0);
	__PROF_STORE(&h->nnodes, 2);
	__PROF_STORE(&h->overflow, 0);
	__PROF_STORE(&h->unbalanced, 0);
	__PROF_STORE(&h->frames, 0);
	__PROF_STORE(&h->frame_ticks, 0);
	__PROF_STORE(&h->frame_max, 0);
	for (b = 0; b < PROF_HIST_BUCKETS; b++)
		__PROF_STORE(&h->frame_hist[b], 0);
	for (x = 0; x < sizeof(h->name); x++)
		__PROF_STORE(&h->name[x], 0);
	__PROF_STORE(&h->ext_used, 0);
	__PROF_STORE(&h->exit_tick, 0);
	__PROF_STORE(&h->oncpu_exit_ns, 0);
	__PROF_STORE(&h->covered, 0);
}

/* an exited thread's profile into the aggregate, inside the fold's
 * agg_seq window, in the order slab.h gives readers (fold k) */
static void thread_fold(struct prof_tentry *te, __u64 k)
{
	struct prof_seg_hdr *seg = prof_rt.seg;
	struct prof_slab_hdr *h = te->hdr, *a = prof_rt.agg;
	const struct prof_node *nodes = prof_rt_region(h, PROF_REGION_NODES);
	__u32 nn = h->nnodes, j, m, *map = prof_rt.fold_map;
	__u64 gen = h->gen;
	struct prof_fold *f = &seg->fold_ring[(k - 1) % PROF_FOLD_RING];

	for (j = 0; j < nn; j++) {
		/* the root and the overflow node are the aggregate's own */
		m = j < 2 ? j : agg_node(map[nodes[j].parent], nodes[j].site);
		map[j] = m;
		fold_node(h, j, a, m);
	}
	fold_hdr(h, a);
	prof_fold_annot(h, a, map, nn);
	__PROF_BUMP(&a->activity);
	/* the slab holds no thread: readers skip it from here */
	__atomic_store_n(&h->gen, gen + 1, __ATOMIC_RELEASE);
	__PROF_STORE(&f->slab, te->slab);
	__PROF_STORE(&f->gen, gen);
	__atomic_store_n(&seg->folds, k, __ATOMIC_RELEASE);
}

/*
 * Every exited thread that still has its slab (PROF_FOLD_RING at most)
 * into the aggregate, in one agg_seq window, and their slabs cleared and
 * free; caller holds the lock.  One window for many: a reader of the
 * aggregate races a fold seldom, however fast threads come and go.
 * False if none could be (no room for the aggregate).
 */
bool prof_threads_fold(void)
{
	struct prof_seg_hdr *seg = prof_rt.seg;
	__u32 seq = seg->agg_seq, n, i;
	__u64 k = seg->folds;

	if (!prof_rt.nfree || agg_init())
		return false;
	n = prof_rt.nfree < PROF_FOLD_RING ? prof_rt.nfree : PROF_FOLD_RING;
	/* a seqlock's write side: odd, then the data (release fence) */
	__atomic_store_n(&seg->agg_seq, seq + 1, __ATOMIC_RELAXED);
	prof_seq_fence_rel();
	for (i = 0; i < n; i++)
		thread_fold(prof_rt.free_te[(prof_rt.free_head + i) % prof_rt.max_threads], ++k);
	__atomic_store_n(&seg->agg_seq, seq + 2, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++) {
		struct prof_tentry *te = prof_rt.free_te[prof_rt.free_head];

		slab_clear(te->hdr, te->hdr->nnodes);
		prof_rt.clean_te[prof_rt.nclean++] = te;
		prof_rt.free_head = (prof_rt.free_head + 1) % prof_rt.max_threads;
		prof_rt.nfree--;
	}
	return true;
}
