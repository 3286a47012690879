/* SPDX-License-Identifier: MIT */
/*
 * reader_int.h - what the reader's parts share: reader.c (validation and
 * copy), reader_hist.c (histograms), reader_flat.c (the flat view),
 * reader_image.c (diffs and images), reader_trace.c (the event rings) and
 * profd's sampling cursor (daemon/profd/profd_cursor.c).  Not installed;
 * its functions are hidden from libprof.so's exports.
 */
#ifndef PROF_READER_INT_H
#define PROF_READER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "snapshot.h"

#define PROF_HIDDEN __attribute__((visibility("hidden")))

/* one load of a word the writer may be changing */
#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define LDA(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

static inline void copy_bytes(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = LD(&src[i]);
}

/* a name the writer may not have ended: copied, and ended at n - 1 */
static inline void copy_name(char *dst, const char *src, size_t n)
{
	copy_bytes(dst, src, n);
	dst[n - 1] = 0;
}

/* a fixed-size string must hold its NUL */
static inline bool str_ok(const char *s, size_t n)
{
	return memchr(s, 0, n) != NULL;
}

/* a segment's header, checked: ours and of our version, every size as we
 * define it, every region inside len, a plausible clock */
struct seg_geom {
	__u32 max_sites, max_threads, max_nodes;
	unsigned int hist_shift; /* log2 of the header's hist_block */
	__u64 sites_off, slabs_off, slab_size, tick_hz;
	/* strides: a later minor may grow each struct at its end */
	__u32 site_size, node_size, ext_size;
	struct prof_region region[PROF_REGIONS]; /* the regions this reader knows */
	struct prof_region part[PROF_PARTS];	 /* 3.3: the annotation region's */
	__u64 snap_tick;			 /* an image's "now", else 0 */
	__u64 now;				 /* what open calls are measured to */
	__u32 agg_slab;	/* the exited threads' aggregate, PROF_NO_SLOT if none */
	bool folds;	/* 3.2: folds, agg_seq and the fold ring are there */
};

struct hist_pool {
	__u32 *v;
	__u64 n;
	size_t cap;
};

/* a slab's regions; ext records are read only if the writer used them */
struct slab_view {
	const struct prof_slab_hdr *hdr;
	const char *nodes;		 /* node_size apart */
	const char *ext;		 /* ext_size apart; NULL: every record is zero */
	const __u64 *open;		 /* per node: its open call's start tick, or 0 */
	const __u64 *rowmap;		 /* PROF_ROWMAP_WORDS a block */
	const __u32 *hist;
	unsigned int hist_shift;
	__u32 node_size, ext_size;
	__u64 now;	/* the thread's now: the read's, or its exit */
	__u32 covered;	/* the slab's 'covered', read consistently */
	bool image;	/* a reader's image: the root's ticks are the wall time */
};

/* node i of a slab, at the stride the header gives */
static inline const struct prof_node *view_node(const struct slab_view *v, __u32 i)
{
	return (const void *)(v->nodes + (size_t)i * v->node_size);
}

/* node i's block's row map */
static inline const __u64 *view_rows(const struct slab_view *v, __u32 i)
{
	return v->rowmap + (i >> v->hist_shift) * PROF_ROWMAP_WORDS;
}

/* what a slab without ext records reads for each node */
static const struct prof_node_ext zero_ext;

/* the quantiles a snapshot keeps of each node */
static const double keep_q[PROF_SNAP_NQUANT] = { 0.50, 0.90, 0.99 };

/* node i's ext record, or a zero one */
static inline const struct prof_node_ext *view_ext(const struct slab_view *v, __u32 i)
{
	return v->ext ? (const void *)(v->ext + (size_t)i * v->ext_size) : &zero_ext;
}

/*
 * What a flat pass needs of a slab's tree, learnt once a node: site and
 * parent never change once a node is published, so a cached tree reads
 * only the new nodes' and, every pass, just the counters.
 */
#define FLAT_REC 0x80000000u	/* in a row: an ancestor has the same site */
#define FLAT_NO_ROW 0x7fffffffu /* a top-level node's parent row */

struct flat_tree {
	__u32 nknown, cap; /* nodes [0, nknown) learnt */
	__u64 *rp;	   /* row (| FLAT_REC) | the parent's row << 32 */
	__u32 *parent;
	__u64 *path;	    /* a 64-bit filter of the rows above the node */
	__u32 *rows, nrows; /* the distinct rows of nodes [1, nknown) */
};

/* an open call a flat pass found, measured once every slab is copied */
struct flat_open_call {
	__u64 m;     /* its node's rp (struct flat_tree) */
	__u64 start; /* its start tick */
	__u64 exit;  /* its thread's exit tick, 0 while it runs */
	__u32 node;  /* its node in its slab's share (flat_slab_cache.nodes) */
};

struct flat_acc {
	__u32 tid; /* 0: all threads */
	struct flat_open_call *opens; /* the pass's open calls, nopens of them */
	size_t nopens, capopens;
	__u32 nsites;
	struct prof_flat_row *rows; /* nsites + 1: the last is overflow */
	__u64 *plus, *minus;	    /* per row: ticks, and the children's ticks */
	/* one thread's rows, plus and minus, kept zeroed */
	struct prof_seg_flat_cache *cache;
	__u32 agg_slab; /* the exited threads' aggregate (seg_geom's) */
	struct prof_flat_row *srows;
	__u64 *splus, *sminus;
	bool *seen; /* nsites + 1, kept false */
	bool live;  /* slabs change hands: (slab, gen) is a thread (slab.h) */
};

/* one thread's share of one flat row */
struct flat_part {
	__u32 row;
	__u64 calls, ticks, max, preempted, migrated, offcpu_ns, plus, minus;
	__u64 blocked, kernel_calls;
};

/* a slab's share, valid while its activity word and node count stay */
struct flat_slab_cache {
	bool valid;
	bool taken;		    /* its rows are in this pass's */
	size_t open_lo, open_hi;    /* its open calls in the pass's opens */
	/* its nodes' counters as a snapshot's thread holds them, closed calls
	 * only, children linked: what prof_snap_oncpu reads (flat_oncpu) */
	struct prof_snap_node *nodes;
	__u64 *oncpu;
	__u64 root_ticks; /* node 0's, as written (the aggregate's wall time) */
	__u32 ncap;
	__u32 tid, nn, nparts;
	__u64 activity;
	__u64 gen; /* with the index, the thread the share is of */
	struct flat_part *parts;
	struct flat_tree tree;
};

struct prof_seg_flat_cache {
	const void *mem; /* what the shares were read from */
	size_t len;
	bool no_sched; /* leave the scheduler facts out: no ext record read */
	__u32 nsites, max_nodes, nslabs;
	struct flat_slab_cache *slabs;
	/* the scratch of flat_acc, kept zeroed */
	struct prof_flat_row *srows;
	__u64 *splus, *sminus;
	bool *seen;
};

/*
 * What a read loads of every slab before it loads nsites.  The writer
 * publishes a site (nsites, release) before the first node naming it
 * (nnodes, release), so every node under a count loaded first names a
 * site under the nsites loaded after.  The other order would find a node
 * of a site registered meanwhile and call a healthy segment corrupt.
 */
struct slab_pub {
	__u64 gen;	/* loaded first: a live slab's thread (slab.h, 3.2) */
	__u64 activity; /* loaded before nnodes: unchanged later, no node changed */
	__u32 nnodes;
};


/* a lazy snapshot's state (snapshot.h: PROF_READ_LAZY) */
/* one thread's nodes as a load leaves them, and their quantiles or
 * histograms; reused from thread to thread */
struct lazy_table {
	struct prof_snap_node *nodes;
	__u64 *quant;	       /* p50, p90, p99: PROF_SNAP_NQUANT a node */
	struct hist_pool pool; /* PROF_READ_LAZY_HIST: the histograms */
	__u32 cap;
};

/* what a PROF_READ_LAZY snapshot keeps to read its threads later */
struct prof_snap_lazy {
	const void *mem; /* the segment, mapped while the snapshot lives */
	size_t len;
	void *map; /* our own mapping of it (the fd variants), or NULL */
	struct seg_geom g;
	unsigned int flags;
	__u32 nsites;
	__u32 clock;			/* the segment's PROF_CLOCK_* */
	__u64 exit_tick;		/* the process's exit, 0 while it runs */
	bool sched;			/* a node carried scheduler facts at read time */
	struct lazy_table tab;		/* cur's nodes */
	struct prof_snap_thread *cur;	/* whose nodes those are */
};

/* reader.c */
PROF_HIDDEN void node_kernel(const struct slab_view *v, const struct prof_node_ext *ext,
			struct prof_snap_node *n);
PROF_HIDDEN __u64 open_ticks(const struct slab_view *v, __u64 start);
PROF_HIDDEN bool slab_moved(const char *slab, __u64 gen);
PROF_HIDDEN void slab_view(const char *slab, const struct seg_geom *g, struct slab_view *v);
PROF_HIDDEN int thread_derive(struct prof_snap_thread *t, __u32 nsites);
PROF_HIDDEN void thread_open_at(struct prof_snap_thread *t, __u64 now, bool image);
PROF_HIDDEN int seg_check(const void *mem, size_t len, struct seg_geom *g);
/* reader_locks.c: slab's named locks and plots (its thread t's) appended
 * to s's, checked; 0 or -errno.  Those of a thread, dropped */
PROF_HIDDEN int reader_annot_thread(const char *mem, const struct seg_geom *g, __u32 nsites,
				    const char *slab, const struct prof_snap_thread *t,
				    struct prof_snapshot *s);
PROF_HIDDEN void reader_annot_drop(struct prof_snapshot *s, __u32 tid, __u64 start_tick);
/* site idx's name (into name, PROF_NAME_MAX), if it is one of that kind
 * (PROF_SITE_PLOT, PROF_SITE_LOCK); -EINVAL otherwise */
PROF_HIDDEN int site_name(const char *mem, const struct seg_geom *g, __u32 nsites, __u32 idx,
			  __u32 flag, char *name);
/* a slab's annotation tables (region ar), copied and checked into *pp and
 * *lp (malloc'd even when -errno), their counts in *np and *nl */
PROF_HIDDEN int tables_copy(const char *mem, const struct seg_geom *g, __u32 nsites, const char *ar,
			    const struct prof_slab_hdr *sh, struct prof_plot **pp, __u32 *np,
			    struct prof_lock **lp, __u32 *nl);
struct prof_annot_lock;
struct prof_annot_plot;
PROF_HIDDEN void lock_from_slab(struct prof_annot_lock *d, const struct prof_lock *x);
PROF_HIDDEN void plot_from_slab(struct prof_annot_plot *d, const struct prof_plot *x);
PROF_HIDDEN __u64 reader_now(__u32 clock);
/* a segment's bytes are an image's (a reader's copy), not a live writer's */
static inline bool seg_is_image(const void *mem)
{
	return LD(&((const struct prof_seg_hdr *)mem)->snap_tick) != 0;
}
/* never more CPU time than wall time (reader.c); image: an image's */
PROF_HIDDEN void snap_clamp_oncpu(struct prof_snapshot *s, bool image);
/* a pure function of the segment's bytes: what /proc says is the caller's
 * to add (prof_snapshot__add_proc) */
PROF_HIDDEN int read_seg(const void *mem, size_t len, unsigned int flags, struct flat_acc *fa,
			 struct prof_snapshot **out);

/* reader_hist.c */
PROF_HIDDEN int pool_add(struct hist_pool *p, const __u32 *hist, const __u64 *map, unsigned int shift,
		    __u32 node, __u32 hi, __u32 *lo, __u32 *nb, __u64 *off);
PROF_HIDDEN void hist_quantiles_top(const __u32 *hist, const __u64 *map, unsigned int shift, __u32 node,
			       __u32 hi, __u64 calls, __u64 max, __u64 *out);

/* reader_flat.c */
PROF_HIDDEN int flat_size(struct flat_acc *fa, const void *mem, size_t len, const struct seg_geom *g,
		     __u32 nsites, __u32 nslabs);
PROF_HIDDEN int flat_slab(const struct slab_view *v, __u32 nn, __u32 nsites, __u32 index, __u64 activity,
		     __u32 tid, __u64 gen, struct flat_acc *fa);

#endif /* PROF_READER_INT_H */
