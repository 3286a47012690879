/* SPDX-License-Identifier: MIT */
/*
 * slab.h - the shared-memory layout: the contract between the runtime that
 * writes a process's profile and every reader (the snapshot reader, profd,
 * profctl).
 *
 * One POSIX shared-memory segment per process, /dev/shm/prof.<pid>.<start>
 * (a ".<n>" suffix is added when that name is taken), mode 0600, owned by
 * the process's user.  Layout, every offset from the segment start:
 *
 *	struct prof_seg_hdr				at 0
 *	struct prof_site_ent[max_sites]			at sites_off
 *	thread slab[max_threads], each slab_size bytes	at slabs_off
 *	    struct prof_slab_hdr			at +0
 *	    struct prof_node[max_nodes]			at +PROF_SLAB_HDR_SIZE
 *	    struct prof_node_ext[max_nodes]		at +prof_slab_ext_off()
 *	    __u64 rowmap[blocks][PROF_ROWMAP_WORDS]	at +prof_slab_rowmap_off()
 *	    __u32 hist[blocks][PROF_HIST_BUCKETS][2^hist_shift]
 *							at +prof_slab_hist_off()
 *
 * The hot part of a node (what every zone exit writes, and all a live view
 * reads) is 32 bytes; what only rare paths write is apart, in the node's
 * ext record.  Histograms interleave PROF_HIST_BLOCK nodes a cache line
 * per bucket (prof_hist_index), so the buckets zones really use share a
 * few pages, and the pages of buckets nobody reaches are never touched:
 * a block's row map has a bit per bucket any of its nodes has counted in,
 * and readers read those rows only (reading the others would allocate
 * them, in memory the application pays for).
 *
 * Writers: "app" is the profiled process (the runtime in usdt/), and only
 * the thread that owns a slab writes that slab.  Readers never write.
 * Counters only grow; readers take deltas.  A count published with a
 * release store ("pub") is read with an acquire load and bounds what may be
 * read.  Readers validate everything here and never follow a pointer.
 */
#ifndef PROF_SLAB_H
#define PROF_SLAB_H

#include <linux/types.h>

#define PROF_SEG_MAGIC		0x31474553464f5250ULL	/* "PROFSEG1" */
#define PROF_SEG_VERSION	2
#define PROF_SLAB_MAGIC		0x42414c53U		/* "SLAB" */
#define PROF_SHM_PREFIX		"prof."			/* in /dev/shm */

#define PROF_SEG_HDR_SIZE	4096	/* header region, padded */
#define PROF_SLAB_HDR_SIZE	2048	/* slab header region, padded */

#define PROF_NAME_MAX		64	/* zone name, with its NUL */
#define PROF_FUNC_MAX		64
#define PROF_FILE_MAX		112
#define PROF_THREAD_NAME_MAX	32
#define PROF_COMM_MAX		32

/*
 * Duration histogram, log-linear: values below 4 ticks exact, then each
 * power of two split into 4 linear sub-buckets.  A bucket spans at most a
 * factor 1.25, so its geometric midpoint is within 11.8% of any value in
 * it.  The last bucket, from 7 * 2^46 ticks (some 50 hours at 2.6 GHz),
 * also takes everything longer.
 */
#define PROF_HIST_SUB_BITS	2
#define PROF_HIST_BUCKETS	192
/*
 * Histograms interleave blocks of 2^hist_shift nodes (the header's
 * hist_block): the runtime's are PROF_HIST_BLOCK, rows of 1 KiB; a reader
 * takes any power of two up to that (serialized snapshots use small ones).
 */
#define PROF_HIST_SHIFT		8
#define PROF_HIST_BLOCK		(1u << PROF_HIST_SHIFT)
#define PROF_ROWMAP_WORDS	4	/* a block's row map: a bit a bucket, 192 used */

/* clocks (prof_seg_hdr.clock) */
#define PROF_CLOCK_TSC		1	/* rdtsc, invariant TSC */
#define PROF_CLOCK_MONO		2	/* CLOCK_MONOTONIC ns; tick_hz = 1e9 */

/* prof_seg_hdr.flags */
#define PROF_SEG_EXITED		0x1	/* app ran its exit handler */

/* prof_slab_hdr.state */
#define PROF_SLAB_EMPTY		0
#define PROF_SLAB_ALIVE		1
#define PROF_SLAB_EXITED	2

/* node indices: 0 is the thread's root (no zone), real zones from 1 */
#define PROF_NODE_ROOT		0
#define PROF_SITE_NONE		0xffffffffU	/* the overflow node's site */
#define PROF_NO_SLOT		0xffffffffU

struct prof_seg_hdr {
	__u64 magic;		/* app, once: PROF_SEG_MAGIC, stored last */
	__u32 version;		/* app, once */
	__u32 hdr_size;		/* app, once: sizeof(struct prof_seg_hdr) */
	__u64 seg_size;		/* app, once: total bytes */
	__u32 pid;		/* app, once */
	__u32 uid;		/* app, once */
	__u64 start_token;	/* app, once: starttime from /proc/pid/stat */
	__u64 created_ns;	/* app, once: CLOCK_REALTIME at creation */
	char comm[PROF_COMM_MAX]; /* app, once */

	__u32 clock;		/* app, once: PROF_CLOCK_* */
	__u32 flags;		/* app: PROF_SEG_* (relaxed store) */
	__u64 tick_hz;		/* app, once: ticks per second (calibrated) */
	__u64 tick_base;	/* app, once: tick at creation */
	__u64 mono_base_ns;	/* app, once: CLOCK_MONOTONIC at tick_base */

	__u32 max_sites;	/* app, once: geometry */
	__u32 site_size;
	__u32 max_threads;
	__u32 max_nodes;
	__u32 node_size;	/* sizeof(struct prof_node) */
	__u32 hist_buckets;
	__u32 ext_size;		/* sizeof(struct prof_node_ext) */
	__u32 hist_block;	/* nodes a histogram row holds: a power of two,
				 * PROF_HIST_BLOCK at most */
	__u64 sites_off;
	__u64 slabs_off;
	__u64 slab_size;

	__u32 nsites;		/* app, pub: site entries filled */
	__u32 nslabs;		/* app, pub: slabs handed out */
	__u64 sites_dropped;	/* app: sites refused, table full */
	__u64 threads_dropped;	/* app: threads refused, no free slab */
	__u64 exit_tick;	/* app: tick at clean exit, 0 before */
};

#define PROF_SITE_PUBLIC	0x1	/* PROF_DEFINE: shared by many sites */
#define PROF_SITE_FUNC		0x2	/* PROF_FUNC: named after its function */
#define PROF_SITE_BEGIN		0x4	/* PROF_BEGIN/END */

struct prof_site_ent {		/* app, once per site, before nsites pub */
	char name[PROF_NAME_MAX];
	char func[PROF_FUNC_MAX];
	char file[PROF_FILE_MAX];
	__u32 line;
	__u32 flags;		/* PROF_SITE_* */
};

struct prof_slab_hdr {
	__u32 magic;		/* app, once: PROF_SLAB_MAGIC */
	__u32 state;		/* app: PROF_SLAB_* (relaxed) */
	__u32 tid;		/* app, once */
	__u32 nnodes;		/* app, pub: nodes [0, nnodes) are valid */
	char name[PROF_THREAD_NAME_MAX]; /* app: PROF_THREAD_NAME */
	__u64 start_tick;	/* app, once */
	__u64 exit_tick;	/* app: when the thread exited, 0 before */
	__u64 overflow;		/* app: zone entries that found the node table full */
	__u64 unbalanced;	/* app: PROF_END without its BEGIN, zones left open */
	__u64 frames;		/* app: PROF_FRAME calls */
	__u64 frame_ticks;	/* app: sum of frame times */
	__u64 frame_max;	/* app: longest frame */
	__u32 ksched_slot;	/* app: profd slot, PROF_NO_SLOT if none */
	__u32 __pad;
	__u32 frame_hist[PROF_HIST_BUCKETS]; /* app: frame-time histogram */
	__u64 activity;		/* app, release: bumped after every change to the
				 * nodes; unchanged means no node changed */
	__u32 ext_used;		/* app: set before the first write to any ext
				 * record; 0 means every one is zero */
	__u32 __pad2;
};

/*
 * One unique stack state: (parent node, site).  site and parent are written
 * once before nnodes is published; the counters are written only by the
 * slab's thread with plain (relaxed) stores.  Self time is derived:
 * ticks minus the children's ticks.  Two nodes to a cache line: this is
 * all a zone exit writes, besides one histogram bucket.
 */
struct prof_node {
	__u32 site;		/* index into the site table, or PROF_SITE_NONE */
	__u32 parent;		/* node index, PROF_NODE_ROOT at top level */
	__u64 calls;		/* completed calls */
	__u64 ticks;		/* total inclusive ticks */
	__u64 max;		/* longest call, ticks */
};

/* the rest of a node, written on rare paths only (a zone switched out,
 * an absurd delta, PROF_ALLOC/PROF_FREE), after ext_used is set */
struct prof_node_ext {
	__u64 preempted;	/* calls switched out at least once (profd) */
	__u64 migrated;		/* calls that changed cpu: ticks suspect (profd) */
	__u64 offcpu_ns;	/* time switched out inside the zone (profd) */
	__u64 anomalies;	/* deltas negative or absurd: not added */
	__u64 allocs;		/* PROF_ALLOC calls */
	__u64 alloc_bytes;
	__u64 frees;		/* PROF_FREE calls */
	__u64 free_bytes;
};

#define PROF_NODE_SIZE		32
#define PROF_NODE_EXT_SIZE	64

/* bucket of a duration; the fast path calls this once per zone exit */
static inline unsigned int prof_hist_bucket(__u64 v)
{
	unsigned int oct, idx;

	if (v < 4)
		return (unsigned int)v;
	oct = 63 - (unsigned int)__builtin_clzll(v);
	idx = (oct - 1) * 4 + (unsigned int)((v >> (oct - 2)) & 3);
	return idx < PROF_HIST_BUCKETS ? idx : PROF_HIST_BUCKETS - 1;
}

/* lowest value in a bucket; prof_hist_lo(b + 1) is its exclusive top */
static inline __u64 prof_hist_lo(unsigned int b)
{
	unsigned int oct;

	if (b < 4)
		return b;
	oct = b / 4 + 1;
	return (__u64)(4 + b % 4) << (oct - 2);
}

/* where a node's bucket b lives in its slab's histogram array: blocks of
 * 2^shift nodes, bucket-major inside a block */
static inline __u64 prof_hist_index(__u32 node, unsigned int b, unsigned int shift)
{
	return (((__u64)(node >> shift) * PROF_HIST_BUCKETS + b) << shift) |
	       (node & ((1u << shift) - 1));
}

/* offsets inside a slab, and its page-aligned stride, for a node capacity */
static inline __u64 prof_slab_ext_off(__u32 max_nodes)
{
	return PROF_SLAB_HDR_SIZE + (__u64)max_nodes * PROF_NODE_SIZE;
}

static inline __u64 prof_hist_blocks(__u32 max_nodes, unsigned int hist_shift)
{
	return ((__u64)max_nodes + (1u << hist_shift) - 1) >> hist_shift;
}

static inline __u64 prof_slab_rowmap_off(__u32 max_nodes)
{
	return prof_slab_ext_off(max_nodes) + (__u64)max_nodes * PROF_NODE_EXT_SIZE;
}

static inline __u64 prof_slab_hist_off(__u32 max_nodes, unsigned int hist_shift)
{
	__u64 end = prof_slab_rowmap_off(max_nodes) +
		    prof_hist_blocks(max_nodes, hist_shift) * PROF_ROWMAP_WORDS * sizeof(__u64);

	/* page aligned: so are the blocks */
	return (end + 4095) & ~(__u64)4095;
}

static inline __u64 prof_slab_size(__u32 max_nodes, unsigned int hist_shift)
{
	__u64 sz = prof_slab_hist_off(max_nodes, hist_shift) +
		   (prof_hist_blocks(max_nodes, hist_shift) << hist_shift) * PROF_HIST_BUCKETS *
			   sizeof(__u32);

	return (sz + 4095) & ~(__u64)4095;
}

#endif /* PROF_SLAB_H */
