/* SPDX-License-Identifier: MIT */
/*
 * slab.h - the shared-memory layout: the contract between the runtime that
 * writes a process's profile and every reader (the snapshot reader, profd,
 * profctl).
 *
 * One POSIX shared-memory segment per process, /dev/shm/prof.<pid>.<start>
 * (a random ".<n>" suffix when another file holds that name), mode 0600, owned by
 * the process's user.  Layout, every offset from the segment start:
 *
 *	struct prof_seg_hdr				at 0
 *	struct prof_site_ent[max_sites], site_size apart	at sites_off
 *	thread slab[max_threads], each slab_size bytes	at slabs_off
 *	the exited threads' aggregate, a slab too	slab agg_slab (3.2)
 *	    struct prof_slab_hdr			at +0 (slab_hdr_size)
 *	    and the regions the header's region table places inside a slab:
 *	    PROF_REGION_NODES	struct prof_node[max_nodes], node_size apart
 *	    PROF_REGION_EXT	struct prof_node_ext[max_nodes], ext_size apart
 *	    PROF_REGION_OPEN	__u64[max_nodes]: the tick the node's open call
 *				began, 0 when none is open
 *	    PROF_REGION_ROWMAP	__u64[blocks][PROF_ROWMAP_WORDS]
 *	    PROF_REGION_HIST	__u32[blocks][PROF_HIST_BUCKETS][hist_block]
 *	    PROF_REGION_RING	struct prof_ring: the thread's last calls, in
 *				the order they ended (3.1; size 0 when off)
 *	    PROF_REGION_ANNOT	the thread's annotations (3.3; size 0: none):
 *				plots, messages, values on calls, locks, in
 *				the parts the header's part table places
 *				(see "Annotations" below)
 *
 * Versions: 'version' is the major; a reader takes only its own.  'minor'
 * grows when fields are added at the end of a struct (its size field
 * grows with it) or regions at the end of the region table: a reader
 * takes any minor, reads what it knows of each struct at the size the
 * header gives, and ignores the rest.  So old readers read new programs
 * and new readers old ones, within a major.  4.0 is 3.3's layout, but the
 * slab's activity word is no longer bumped by a zone's exit: a reader's
 * activity is that word plus the ring head the exit bumps anyway (see
 * prof_slab_hdr.activity), which a 3.x reader would not add.
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
 * Open calls: a node is a unique stack state, so at most one call of it is
 * open at a time (recursion has a node per depth).  Its open word holds
 * when that call began (written at enter) and 0 once it ended: the open
 * nodes of a thread are the path from its root to the node it is in.  A
 * reader adds (now - start) to an open node's total, and shows it open.
 *
 * Exited threads (3.2): a slab is handed to one thread after another.
 * An exited thread keeps its slab (state EXITED, shown as itself) until a
 * new thread finds every slab taken: then the profiles of the exited
 * threads (PROF_FOLD_RING at most) are folded into the aggregate, all in
 * one window (so readers seldom race a fold), their slabs cleared, and
 * one of them is the new thread's, the others the next threads'.  The aggregate is one more slab, at index agg_slab
 * (max_threads, one past the threads' slabs, outside [0, nslabs)): a call
 * tree of the folded threads merged by path (parent, site), tid 0, named
 * "[exited threads]", no open call ever (an exited thread's open call
 * never ended: it is not folded), its root's ticks the sum of their wall
 * times, its CPU time oncpu_exit_ns - oncpu_start_ns, and 'folds' threads
 * in it; and (annot set, a 3.3 segment's runtime from now on) their
 * locks and plots in its annotation region's tables, a lock by (name,
 * the aggregate's node), its rings unused and unreserved: a reader reads
 * its tables alone.  The app folds under its lock, in the new thread's first zone
 * (a slow path, never a zone's fast path); readers only read.  A fold, in
 * this order:
 *
 *	agg_seq becomes odd (then a release fence)
 *	for each thread folded, k = folds + 1:
 *	    its completed calls are added into the aggregate's nodes (its
 *	        open calls are not: they never ended)
 *	    its slab's gen becomes odd (release): the slab holds no thread
 *	    fold_ring[(k - 1) % PROF_FOLD_RING] = { slab, its thread's gen }
 *	    folds = k (release)
 *	agg_seq becomes even (release)
 *	then, gen odd, the slabs are cleared, and a new thread sets a slab's
 *	gen even again (release) once the slab is its own.
 *
 * So in a live segment of minor >= 2 a thread is (slab, even gen), and a
 * reader that races a reuse notices by gen.  A reader:
 *	1. loads folds (acquire): N0;
 *	2. for each slab loads gen (acquire): odd, skip the slab (its thread
 *	   is in the aggregate, or it has none yet); copies it; loads gen
 *	   again after an acquire fence: changed, drop the copy (the slab
 *	   changed hands meanwhile: never mix two threads' numbers);
 *	3. copies the aggregate inside agg_seq (even and unchanged around the
 *	   copy, else again), with folds (N1) and the ring;
 *	4. drops every copy whose (slab, gen) the ring holds for a fold in
 *	   (N0, N1]: that thread exited during the read and is counted in
 *	   the aggregate.  More than PROF_FOLD_RING folds: read again.
 * Every thread is then counted once, in its slab or in the aggregate, and
 * every count only grows from one read to the next.  An image (snap_tick
 * set) holds the aggregate the same way, with folds and no ring.
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
#define PROF_SEG_VERSION	4	/* the major: readers take only their own */
#define PROF_SEG_MINOR		0	/* what this header describes; see above */
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
#define PROF_CLOCK_TSC		1	/* the CPU's counter: invariant TSC (rdtsc),
					 * aarch64 cntvct_el0 */
#define PROF_CLOCK_MONO		2	/* CLOCK_MONOTONIC ns; tick_hz = 1e9 */

/* prof_seg_hdr.flags */
#define PROF_SEG_EXITED		0x1	/* app ran its exit handler */
#define PROF_SEG_TSC_SYNCED	0x2	/* profd found the TSC synchronized across
					 * CPUs: a migration leaves a delta exact */

/* a slab's regions: indices into prof_seg_hdr.region; a later minor may
 * add regions after these, never move them */
enum prof_region_id {
	PROF_REGION_NODES,
	PROF_REGION_EXT,
	PROF_REGION_OPEN,
	PROF_REGION_ROWMAP,
	PROF_REGION_HIST,
	PROF_REGION_RING,	/* 3.1 */
	PROF_REGION_ANNOT,	/* 3.3 */
	PROF_REGIONS,		/* the regions this minor knows */
};
#define PROF_REGIONS_MAX	12	/* room in the header */
#define PROF_PARTS_MAX		8	/* annotation parts: room in the header */

struct prof_region {
	__u64 off;		/* from the slab's start */
	__u64 size;		/* bytes */
};

/* prof_slab_hdr.state */
#define PROF_SLAB_EMPTY		0
#define PROF_SLAB_ALIVE		1
#define PROF_SLAB_EXITED	2

/* node indices: 0 is the thread's root (no zone), real zones from 1 */
#define PROF_NODE_ROOT		0
#define PROF_SITE_NONE		0xffffffffU	/* the overflow node's site */
#define PROF_NO_SLOT		0xffffffffU

/* a fold (3.2): the thread that went into the aggregate */
#define PROF_FOLD_RING		128
struct prof_fold {
	__u32 slab;		/* its slab */
	__u32 __pad;
	__u64 gen;		/* its slab's gen while it held it (even) */
};

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

	/* 3.0 */
	__u32 minor;		/* app, once: PROF_SEG_MINOR */
	__u32 slab_hdr_size;	/* app, once: sizeof(struct prof_slab_hdr) */
	__u32 nregions;		/* app, once: regions in the table */
	__u32 __pad;
	struct prof_region region[PROF_REGIONS_MAX]; /* app, once */
	__u64 snap_tick;	/* a reader's image: the tick it was read at,
				 * the "now" of its open calls; 0 in a live
				 * segment */
	__u64 nospace;		/* app: threads, sites and nodes not recorded
				 * because /dev/shm had no room for them */
	__u64 zone_cost;	/* app, once: what a zone costs the code around
				 * it, ticks (measured at start) */
	__u64 zone_inner;	/* app, once: of that, the part inside the zone's
				 * own measurement */

	/* 3.2: the exited threads (see above) */
	__u32 agg_slab;		/* app, once: max_threads, the aggregate's slab;
				 * PROF_NO_SLOT: none (an image without one) */
	__u32 agg_seq;		/* app, release: odd while a fold runs */
	__u64 folds;		/* app, pub: threads folded into the aggregate */
	struct prof_fold fold_ring[PROF_FOLD_RING]; /* app: the last folds */

	/* 3.3: the annotation region's parts, from its start */
	__u32 nparts;		/* app, once: parts in the table */
	__u32 __pad3;
	struct prof_region part[PROF_PARTS_MAX]; /* app, once */
};

#define PROF_SITE_PUBLIC	0x1	/* PROF_DEFINE: shared by many sites */
#define PROF_SITE_FUNC		0x2	/* PROF_FUNC: named after its function */
#define PROF_SITE_BEGIN		0x4	/* PROF_BEGIN/END */
#define PROF_SITE_PLOT		0x8	/* 3.3: a plot's name, no zone's */
#define PROF_SITE_LOCK		0x10	/* 3.3: a lock's name, no zone's */

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
				 * nodes that is not a zone's exit.  A reader's
				 * activity is this plus the ring head the thread
				 * bumps after each exit's counters (4.0): the
				 * event ring's, or ring_off_head while the ring
				 * is off; unchanged means no node changed */
	__u32 ext_used;		/* app: set before the first write to any ext
				 * record; 0 means every one is zero */
	__u32 __pad2;

	/* 3.0 */
	__u64 gen;		/* app, release: bumped each time the slab is
				 * handed to a thread; readers key what they
				 * cache on (slab, gen), never on the index
				 * alone.  3.2: odd while the slab holds no
				 * thread (folded, being cleared), a seqlock
				 * for readers of a live segment (see above) */
	__u64 oncpu_start_ns;	/* app, once: the thread's CPU time at its first
				 * zone (CLOCK_THREAD_CPUTIME_ID) */
	__u64 oncpu_exit_ns;	/* app: its CPU time at exit, 0 before */
	__u32 covered;		/* app: 1 while the kernel word is a live profd
				 * record (see kernel_adj) */
	__u32 cover_seq;	/* app, release: odd while 'covered' and every
				 * kernel_adj are being changed together */

	/* 3.3: the annotations (see below) */
	__u32 annot;		/* app, release: 1 once the thread's annotation
				 * region is reserved and its heads zero; 0:
				 * none, its pages may not even be there */
	__u32 nplots;		/* app, pub: plots [0, nplots) are valid */
	__u32 nlocks;		/* app, pub: locks [0, nlocks) are valid */
	__u32 __pad3;
	__u64 annot_dropped;	/* app: annotations not kept: a name table
				 * full, a message or value written from a
				 * signal handler inside another's write, a
				 * value outside any zone */
	__u64 annot_cut;	/* app: texts cut to their entry's length */

	/* 4.0: while the event ring is off (its region's size 0), the head the
	 * exits bump (release, after each exit's counters: see activity) and,
	 * PROF_RING_HDR_SIZE after it, the one event slot they write, which
	 * nobody reads */
	__u64 ring_off_head;
	__u64 __pad4[7];
	__u64 ring_off_ev[2];
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
	/* 3.0 */
	__u64 blocked;		/* calls that slept, waited or did I/O (profd) */
	__u64 kernel_adj;	/* with the slab's 'covered': the calls that had
				 * kernel facts are calls - kernel_adj while
				 * covered, kernel_adj while not */
};

#define PROF_NODE_SIZE		32
#define PROF_NODE_EXT_SIZE	80

/*
 * The event ring (3.1): every zone exit, after the node's counters, writes
 * its call at ev[head % n] and then publishes head + 1 (release); the
 * oldest event is overwritten.  A reader loads head (acquire), copies the
 * events, and loads head again: of the events below the first head, those
 * at or above (second head - n + 1) were not being overwritten while it
 * copied (the writer may be writing event 'second head', unpublished), so
 * a live thread's ring shows its newest n - 1 events, an exited one's all
 * n.  Events of a thread are in the order its calls ended, so a parent
 * follows its children.  An event of node PROF_NODE_ROOT (no zone's) is a
 * frame: from one PROF_FRAME to the next.
 */
#define PROF_EV_NODE_BITS	22	/* PROF_MAX_NODES is at most 2^22 */
#define PROF_EV_FLAG_SHIFT	22	/* what the kernel word said of the call: */
#define PROF_EV_PREEMPTED	0x1	/*   switched out while runnable */
#define PROF_EV_BLOCKED		0x2	/*   slept, waited */
#define PROF_EV_MIGRATED	0x4	/*   ran on another cpu */
#define PROF_EV_DUR_SHIFT	25
#define PROF_EV_DUR_MAX		((1ull << (64 - PROF_EV_DUR_SHIFT)) - 1)

struct prof_event {
	__u64 start;		/* tick the call began */
	__u64 dur_node;		/* ticks << PROF_EV_DUR_SHIFT | flags <<
				 * PROF_EV_FLAG_SHIFT | node; ticks saturate at
				 * PROF_EV_DUR_MAX (3.5 minutes at 2.6 GHz); the
				 * flags (with profd) are or-ed in just after the
				 * event is published */
};

/* the region: this header, then struct prof_event[n] (n a power of two,
 * from the region's size) */
struct prof_ring {
	__u64 head;		/* app, release: events ever written */
	__u64 __pad[7];		/* the events start a cache line on */
};
#define PROF_RING_HDR_SIZE	64

/*
 * Annotations (3.3): per thread, in the region PROF_REGION_ANNOT, written
 * only by its thread from its first annotation on (the slab's 'annot'
 * says when; a reader reads nothing of the region before).  The header's
 * part table places each part inside the region.  Names (plots, locks)
 * are site entries flagged PROF_SITE_PLOT or PROF_SITE_LOCK, one per name
 * in the process (file "", line 0): a name is global, the same plot or
 * lock wherever it is used.
 *
 *	PROF_PART_PLOTS	 struct prof_plot[]: each plot's figures on this
 *			 thread; nplots (slab header, pub) valid
 *	PROF_PART_POINTS prof_ring + struct prof_plot_point[n]
 *	PROF_PART_MSGS	 prof_ring + struct prof_msg[n]
 *	PROF_PART_VALUES prof_ring + struct prof_value[n]: values and texts
 *			 on calls, found by (node, the call's start tick),
 *			 which the call's event in the event ring has too
 *	PROF_PART_LOCKS	 struct prof_lock[]: per (lock, zone that took it);
 *			 nlocks valid
 *	PROF_PART_SPANS	 prof_ring + struct prof_lock_span[n]: waits, holds
 *
 * Each ring is read as the event ring is (n a power of two, head
 * published after the entry).  Texts are NUL-terminated inside their
 * entry; a reader checks that, and every index, as everything else.
 */
enum prof_part_id {
	PROF_PART_PLOTS,
	PROF_PART_POINTS,
	PROF_PART_MSGS,
	PROF_PART_VALUES,
	PROF_PART_LOCKS,
	PROF_PART_SPANS,
	PROF_PARTS,
};

/* the runtime's sizes (a reader takes the part table's) */
#define PROF_PLOTS_MAX		64	/* plots a thread keeps figures of */
#define PROF_PLOT_POINTS	1024	/* a thread's last plot points */
#define PROF_MSGS		256	/* a thread's last messages */
#define PROF_MSG_TEXT		112	/* a message, with its NUL */
#define PROF_VALUES		4096	/* a thread's last values on calls */
#define PROF_VALUE_TEXT		40	/* PROF_ZONE_TEXT, with its NUL */
#define PROF_LOCKS_MAX		64	/* (lock, zone) pairs a thread keeps */
#define PROF_LOCK_SPANS		4096	/* a thread's last waits and holds */
#define PROF_LOCK_HIST		40	/* wait ticks by power of two */

struct prof_plot {		/* app: site once, before nplots pub */
	__u32 site;		/* its name */
	__u32 __pad;
	__u64 count;		/* points */
	double min, max, last, sum; /* of its points (finite values only) */
	__u64 last_tick;	/* when 'last' was plotted */
	__u64 __pad2;
};

struct prof_plot_point {
	__u64 tick;
	double value;
	__u32 plot;		/* index in PROF_PART_PLOTS */
	__u32 __pad;
};

struct prof_msg {
	__u64 tick;
	__u32 node;		/* the zone it was logged in */
	__u32 len;		/* bytes of text, NUL excluded */
	char text[PROF_MSG_TEXT];
};

#define PROF_VALUE_NUM		1	/* prof_value.kind: PROF_ZONE_VALUE */
#define PROF_VALUE_TEXT_KIND	2	/*   PROF_ZONE_TEXT */
struct prof_value {
	__u64 start;		/* the call's start tick, as its event's */
	__u32 node;		/* the call's node */
	__u16 kind;		/* PROF_VALUE_* */
	__u16 len;		/* text bytes, NUL excluded */
	double value;		/* PROF_VALUE_NUM */
	char text[PROF_VALUE_TEXT]; /* PROF_VALUE_TEXT_KIND */
};

struct prof_lock {		/* app: site, node once, before nlocks pub */
	__u32 site;		/* the lock's name */
	__u32 node;		/* the zone the thread was in when it took it */
	__u64 acquisitions;
	__u64 contended;	/* acquisitions that waited */
	__u64 wait_ticks;	/* time waited, all acquisitions */
	__u64 wait_max;
	__u64 hold_ticks;	/* time held, acquisition to release */
	__u64 hold_max;
	__u64 blocked;		/* waits the thread slept in (profd) */
	__u64 kernel_waits;	/* contended waits profd's word covered */
	__u64 unheld;		/* releases of this lock it did not hold */
	__u64 __pad[2];
	__u32 wait_hist[PROF_LOCK_HIST]; /* contended waits: bucket b holds
				 * [2^b, 2^(b+1)) ticks, the last all above */
};

#define PROF_SPAN_HOLD		0x1	/* prof_lock_span.flags: held; else a wait */
#define PROF_SPAN_BLOCKED	0x2	/*   a wait the thread slept in (profd) */
#define PROF_SPAN_KERNEL	0x4	/*   profd's word covered the wait */
struct prof_lock_span {
	__u64 start;
	__u64 dur;		/* ticks */
	__u32 lock;		/* index in PROF_PART_LOCKS */
	__u32 flags;		/* PROF_SPAN_* */
};

/*
 * Casts in this header and prof.h, which C++ programs include too (clean
 * under -Wold-style-cast): a value's, and a pointer's to or from an
 * integer
 */
#ifdef __cplusplus
#define __PROF_CAST(t, v)	(static_cast<t>(v))
#define __PROF_PTR(t, v)	(reinterpret_cast<t>(v))
#else
#define __PROF_CAST(t, v)	((t)(v))
#define __PROF_PTR(t, v)	((t)(v))
#endif

/* from an integer: no cast of its alignment or constness to warn of */
static inline struct prof_event *prof_ring_events(const struct prof_ring *r)
{
	return __PROF_PTR(struct prof_event *,
			  __PROF_PTR(__UINTPTR_TYPE__, r) + PROF_RING_HDR_SIZE);
}

/* the layout the fast path is compiled against (C11 and C++11 can say so) */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define __PROF_STATIC_ASSERT(c, m) static_assert(c, m)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define __PROF_STATIC_ASSERT(c, m) _Static_assert(c, m)
#else
/* C99: an array whose size goes negative (a bare ';' would be pedantic) */
#define __PROF_SA_(c, l)	typedef char __prof_static_assert_##l[(c) ? 1 : -1]
#define __PROF_SA(c, l)		__PROF_SA_(c, l)
#define __PROF_STATIC_ASSERT(c, m) __PROF_SA(c, __LINE__)
#endif
__PROF_STATIC_ASSERT(sizeof(struct prof_node) == PROF_NODE_SIZE, "the fast path's node");
__PROF_STATIC_ASSERT(sizeof(struct prof_node_ext) == PROF_NODE_EXT_SIZE, "a node's ext record");
__PROF_STATIC_ASSERT(sizeof(struct prof_seg_hdr) <= PROF_SEG_HDR_SIZE, "the header region");
__PROF_STATIC_ASSERT(sizeof(struct prof_event) == 16 &&
			     sizeof(struct prof_ring) == PROF_RING_HDR_SIZE,
		     "the event ring a zone exit writes");
__PROF_STATIC_ASSERT(sizeof(struct prof_plot) == 64 && sizeof(struct prof_plot_point) == 24 &&
			     sizeof(struct prof_msg) == 128 && sizeof(struct prof_value) == 64 &&
			     sizeof(struct prof_lock) == 256 && sizeof(struct prof_lock_span) == 24,
		     "the annotations' entries");
__PROF_STATIC_ASSERT(sizeof(struct prof_slab_hdr) <= PROF_SLAB_HDR_SIZE,
		     "the slab header region");
/* an exit writes its event PROF_RING_HDR_SIZE after the head it bumps */
__PROF_STATIC_ASSERT(__builtin_offsetof(struct prof_slab_hdr, ring_off_ev) ==
			     __builtin_offsetof(struct prof_slab_hdr, ring_off_head) + PROF_RING_HDR_SIZE &&
		     2 * sizeof(__u64) == sizeof(struct prof_event),
		     "a ring that is off");
__PROF_STATIC_ASSERT(__builtin_offsetof(struct prof_node, calls) == 8 &&
		       __builtin_offsetof(struct prof_node, ticks) == 16 &&
		       __builtin_offsetof(struct prof_node, max) == 24,
	       "the counters a zone exit writes");

/*
 * Bucket of a duration v below PROF_HIST_TOP, without a branch: with s
 * the octave less 2 (0 below 8), 4 s + (v >> s), the top three bits;
 * exact below 8.  The bucket spans [(v >> s) << s, that + 2^s).  The fast
 * path counts with these: its limit (PROF_EV_DUR_MAX at most) is below
 * PROF_HIST_TOP, so it needs no clamp.
 */
#define PROF_HIST_TOP		(1ull << 49)	/* the last bucket's own top */
__PROF_STATIC_ASSERT(PROF_EV_DUR_MAX < PROF_HIST_TOP, "the fast path's deltas have buckets");
static inline unsigned int prof_hist_shift(__u64 v)
{
	return 61 - __PROF_CAST(unsigned int, __builtin_clzll(v | 4));
}

static inline unsigned int prof_hist_bucket_at(__u64 v, unsigned int s)
{
	return 4 * s + __PROF_CAST(unsigned int, v >> s);
}

/*
 * The fast exit's bucket, 8 above v's (v below 2^62): 4 b + (4 v >> b),
 * b v's top bit (one bsr, where prof_hist_shift's octave less 2 is one
 * more instruction, and v >> s one more move): the caller takes the 8
 * off with its row's constant offset.
 */
static inline unsigned int prof_hist_bucket8(__u64 v)
{
	unsigned int b = 63 - __PROF_CAST(unsigned int, __builtin_clzll(v | 4));

	return 4 * b + __PROF_CAST(unsigned int, (v << 2) >> b);
}

/* the lowest delta and the width of v's bucket (s is prof_hist_shift(v)) */
static inline __u64 prof_hist_lo_at(__u64 v, unsigned int s)
{
	return v >> s << s;
}

static inline __u64 prof_hist_span_at(unsigned int s)
{
	return 1ull << s;
}

/* bucket of any duration: the last also takes everything longer */
static inline unsigned int prof_hist_bucket(__u64 v)
{
	return v < PROF_HIST_TOP ? prof_hist_bucket_at(v, prof_hist_shift(v))
				 : PROF_HIST_BUCKETS - 1;
}

/* lowest value in a bucket; prof_hist_lo(b + 1) is its exclusive top */
static inline __u64 prof_hist_lo(unsigned int b)
{
	unsigned int oct;

	if (b < 4)
		return b;
	oct = b / 4 + 1;
	return __PROF_CAST(__u64, 4 + b % 4) << (oct - 2);
}

/* where a node's bucket b lives in its slab's histogram array: blocks of
 * 2^shift nodes, bucket-major inside a block */
static inline __u64 prof_hist_index(__u32 node, unsigned int b, unsigned int shift)
{
	return ((__PROF_CAST(__u64, node >> shift) * PROF_HIST_BUCKETS + b) << shift) |
	       (node & ((1u << shift) - 1));
}

static inline __u64 prof_hist_blocks(__u32 max_nodes, unsigned int hist_shift)
{
	return (__PROF_CAST(__u64, max_nodes) + (1u << hist_shift) - 1) >> hist_shift;
}

static inline __u64 prof_page_up(__u64 v)
{
	return (v + 4095) & ~__PROF_CAST(__u64, 4095);
}

/*
 * The writer's layout of the annotation region: its parts into p
 * (PROF_PARTS of them), each page aligned (a ring's pages apart from the
 * tables'), the region's size returned.
 */
static inline __u64 prof_annot_layout(struct prof_region *p)
{
	static const __u64 size[PROF_PARTS] = {
		PROF_PLOTS_MAX * sizeof(struct prof_plot),
		PROF_RING_HDR_SIZE + PROF_PLOT_POINTS * sizeof(struct prof_plot_point),
		PROF_RING_HDR_SIZE + PROF_MSGS * sizeof(struct prof_msg),
		PROF_RING_HDR_SIZE + PROF_VALUES * sizeof(struct prof_value),
		PROF_LOCKS_MAX * sizeof(struct prof_lock),
		PROF_RING_HDR_SIZE + PROF_LOCK_SPANS * sizeof(struct prof_lock_span),
	};
	__u64 off = 0;
	unsigned int i;

	for (i = 0; i < PROF_PARTS; i++) {
		p[i].off = prof_page_up(off);
		p[i].size = size[i];
		off = p[i].off + size[i];
	}
	return off;
}

/*
 * The writer's layout of a slab for a node capacity: its regions into r
 * (PROF_REGIONS of them), its page-aligned stride returned; annot_size is
 * the annotation region's (prof_annot_layout), 0 for none.  Readers never
 * call this: they take the header's table.
 */
static inline __u64 prof_slab_layout(__u32 max_nodes, unsigned int hist_shift,
				     __u32 ring_events, __u64 annot_size, struct prof_region *r)
{
	__u64 blocks = prof_hist_blocks(max_nodes, hist_shift);

	r[PROF_REGION_NODES].off = PROF_SLAB_HDR_SIZE;
	r[PROF_REGION_NODES].size = __PROF_CAST(__u64, max_nodes) * PROF_NODE_SIZE;
	r[PROF_REGION_EXT].off = r[PROF_REGION_NODES].off + r[PROF_REGION_NODES].size;
	r[PROF_REGION_EXT].size = __PROF_CAST(__u64, max_nodes) * PROF_NODE_EXT_SIZE;
	r[PROF_REGION_OPEN].off = r[PROF_REGION_EXT].off + r[PROF_REGION_EXT].size;
	r[PROF_REGION_OPEN].size = __PROF_CAST(__u64, max_nodes) * sizeof(__u64);
	r[PROF_REGION_ROWMAP].off = r[PROF_REGION_OPEN].off + r[PROF_REGION_OPEN].size;
	r[PROF_REGION_ROWMAP].size = blocks * PROF_ROWMAP_WORDS * sizeof(__u64);
	/* page aligned: so are the blocks */
	r[PROF_REGION_HIST].off =
		prof_page_up(r[PROF_REGION_ROWMAP].off + r[PROF_REGION_ROWMAP].size);
	r[PROF_REGION_HIST].size = (blocks << hist_shift) * PROF_HIST_BUCKETS * sizeof(__u32);
	r[PROF_REGION_RING].off = prof_page_up(r[PROF_REGION_HIST].off + r[PROF_REGION_HIST].size);
	r[PROF_REGION_RING].size =
		ring_events ? PROF_RING_HDR_SIZE + __PROF_CAST(__u64, ring_events) * sizeof(struct prof_event) : 0;
	r[PROF_REGION_ANNOT].off = prof_page_up(r[PROF_REGION_RING].off + r[PROF_REGION_RING].size);
	r[PROF_REGION_ANNOT].size = annot_size;
	return prof_page_up(r[PROF_REGION_ANNOT].off + r[PROF_REGION_ANNOT].size);
}

/*
 * The fences of the gen and agg_seq seqlocks (see the top): release after
 * a writer makes its sequence odd, acquire before a reader loads it again.
 * ThreadSanitizer has no fences: its builds (x86-64, where loads keep their
 * order and stores theirs) take a compiler barrier, all x86 needs there.
 */
#if defined(__SANITIZE_THREAD__)
#define __PROF_SEQ_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define __PROF_SEQ_TSAN 1
#endif
#endif
#ifdef __PROF_SEQ_TSAN
#define prof_seq_fence_rel()	__asm__ __volatile__("" ::: "memory")
#define prof_seq_fence_acq()	__asm__ __volatile__("" ::: "memory")
#else
#define prof_seq_fence_rel()	__atomic_thread_fence(__ATOMIC_RELEASE)
#define prof_seq_fence_acq()	__atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

#endif /* PROF_SLAB_H */
