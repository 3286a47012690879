/* SPDX-License-Identifier: MIT */
/*
 * snapshot.h - reading a segment back: validated, in private memory.
 *
 * A snapshot is a copy of one process's segment, taken from memory that
 * the reader distrusts: every size, index, parent link and string is
 * checked, and nothing in the segment is followed as a pointer.  Counters
 * stay in ticks (convert with prof_snap_ns); self time, children and
 * percentiles are derived here so every reader computes them the same way.
 *
 *	prof_snapshot__read(mem, len, &s)  copy and validate a segment image (reader.c)
 *	prof_snapshot__read_fd(fd, &s)     the same from an open segment fd
 *	prof_snap_next(&it)                thread after thread, each read when reached
 *	prof_snap_quantile(s, n, q)        a node's quantile (reader_hist.c)
 *	prof_snapshot__diff(s, base)       s -= base (a reset baseline; reader_image.c)
 *	prof_snapshot__write(s, &buf, &n)  back to a segment image (profd, baselines)
 *	prof_snapshot__destroy(s)
 *
 *	prof_seg_flat(mem, ...)            flat rows straight from a mapping (top;
 *	                                   reader_flat.c)
 *	prof_seg_trace(mem, len, &t)       the event rings (reader_trace.c;
 *	                                   _newest: each thread's newest only)
 *	prof_seg_cursor__sample(c, mem, .) a few words a sample (profd's: defined in
 *	                                   daemon/profd/profd_cursor.c, not libprof)
 *
 *	prof_seg_list(&ents, &n)           segments in /dev/shm the caller may read
 *	prof_seg_open(ent)                 open one read-only, owner checked
 */
#ifndef PROF_SNAPSHOT_H
#define PROF_SNAPSHOT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "slab.h"
#include "figures.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PROF_SNAP_NONE	0xffffffffU
#define PROF_SNAP_F_RECURSIVE	0x1	/* an ancestor has the same site */
#define PROF_SNAP_F_QUANT	0x2	/* quantiles kept, not the histogram (lazy read) */
#define PROF_SNAP_NQUANT	3	/* the quantiles kept: 0.5, 0.9, 0.99 */
/* renderers draw at most this many levels of a tree, then say so */
#define PROF_SNAP_DEPTH_MAX	256

struct prof_snap_site {
	char name[PROF_NAME_MAX];
	char func[PROF_FUNC_MAX];
	char file[PROF_FILE_MAX];
	__u32 line;
	__u32 flags;
};

struct prof_snap_node {
	__u32 site;		/* index into sites, or PROF_SITE_NONE (overflow) */
	__u32 parent;		/* node index; the root (0) is its own parent */
	__u32 first_child;	/* PROF_SNAP_NONE if none */
	__u32 next_sibling;	/* PROF_SNAP_NONE if none */
	__u32 depth;		/* root 0 */
	__u32 hist_lo;		/* first bucket copied */
	__u32 hist_n;		/* buckets copied: [hist_lo, hist_lo + hist_n) */
	__u32 flags;		/* PROF_SNAP_F_* (derived) */
	__u64 hist_off;		/* into prof_snapshot.hist */
	__u64 calls;
	__u64 ticks;		/* inclusive */
	__u64 child_ticks;	/* sum of the children's ticks */
	__u64 max;
	__u64 preempted;
	__u64 migrated;
	__u64 offcpu_ns;
	__u64 anomalies;
	__u64 allocs;
	__u64 alloc_bytes;
	__u64 frees;
	__u64 free_bytes;
	__u64 blocked;		/* calls that slept, waited or did I/O (profd) */
	__u64 kernel_calls;	/* calls that had kernel facts: the scheduler
				 * columns speak for these, and for no others */
	__u64 open_ticks;	/* of ticks, the part of the open call (or, in a
				 * window, the part of it inside the window) */
	__u32 open;		/* 1: a call is in flight (at most one a node) */
	__u32 __pad;
};

/* a value nobody could know (no kernel facts, a thread not covered) */
#define PROF_SNAP_UNKNOWN	(~0ull)

struct prof_snap_thread {
	__u32 tid;
	__u32 state;		/* PROF_SLAB_* */
	__u32 slab;		/* slab index in the segment */
	__u32 ksched_slot;
	char name[PROF_THREAD_NAME_MAX];
	__u64 start_tick;
	__u64 exit_tick;
	__u64 overflow;
	__u64 unbalanced;
	__u64 frames;
	__u64 frame_ticks;
	__u64 frame_max;
	__u32 frame_hist[PROF_HIST_BUCKETS];
	__u32 nnodes;		/* >= 1: node 0 is the root */
	struct prof_snap_node *nodes;
	__u32 lazy_nnodes;	/* PROF_READ_LAZY: the nodes checked by the read */
	__u32 __pad;
	__u64 gen;		/* the slab's generation: (slab, gen) names the thread */
	__u64 oncpu_ns;		/* CPU time over the thread's wall time (the root
				 * node's ticks), or PROF_SNAP_UNKNOWN */
	char comm[PROF_COMM_MAX]; /* its comm (pthread_setname_np) when read live */
	__u64 oncpu_start;	/* the reader's: the slab's oncpu_start_ns */
	__u64 folds;		/* > 0: not a thread but the aggregate of this
				 * many exited threads (slab.h, 3.2), tid 0,
				 * always the last of a snapshot's threads */
};

#define PROF_CGROUP_MAX		128	/* a cgroup's name, NUL included */

struct prof_snapshot {
	__u32 pid;
	__u32 uid;
	__u64 start_token;
	__u64 created_ns;
	char comm[PROF_COMM_MAX];
	__u32 clock;
	__u32 flags;		/* PROF_SEG_* */
	__u64 tick_hz;
	__u64 tick_base;
	__u64 mono_base_ns;
	__u64 exit_tick;
	__u64 sites_dropped;
	__u64 threads_dropped;
	__u32 nsites;
	__u32 nthreads;
	struct prof_snap_site *sites;
	struct prof_snap_thread *threads;
	__u32 *hist;		/* histogram pool */
	__u64 nhist;
	struct prof_snap_lazy *lazy; /* PROF_READ_LAZY: how to read threads later */
	__u64 span_ns;		/* what a reader set: the time a diffed snapshot
				 * covers ("the last N seconds"); 0 if unsaid */
	__u64 span_asked_ns;	/* the reader's: the window it asked for, which
				 * span_ns may fall short of (profd's nearest
				 * frame); 0 if unsaid */
	__u64 now_tick;		/* the tick open calls were measured to: the read's
				 * time, the process's exit, or the image's */
	__u64 nospace;		/* threads, sites, nodes lost to a full /dev/shm */
	__u64 zone_cost;	/* what a zone costs the code around it, ticks */
	__u64 zone_inner;	/* of that, the part inside its own measurement */
	__u32 compensated;	/* the reader's: prof_snapshot__compensate ran */
	__u32 __pad2;
	/* where it runs, set by profctl from profd's answer or the path it
	 * read: in a container (another pid namespace), pid is the reader's
	 * and ns_pid the container's own; 0 and "" otherwise */
	__u32 ns_pid;
	__u32 __pad_ns;
	char cgroup[PROF_CGROUP_MAX];
	/* its annotations summed by name (annot.h), set by profctl from
	 * locks and plots below (prof_snap_annot_sum); NULL otherwise.  Not
	 * the snapshot's: the caller frees it, after every copy of it */
	const struct prof_snap_annot *annot;
	/* profctl's one line on stack sampling for this process (on at what
	 * rate, or off and why), NULL otherwise: the views print it as it is.
	 * The caller's, like annot */
	const char *samples_state;
	/* the threads' named locks and plots, as read (3.3) and windowed
	 * like every other figure (figures.h's PROF_LOCK_FIGS and
	 * PROF_PLOT_FIGS); the snapshot's, freed by destroy */
	__u32 nlocks, nplots;
	struct prof_snap_lock *locks;
	struct prof_snap_plot *plots;
};

/* a named lock's figures on one thread, taken in one zone (slab.h's
 * struct prof_lock, checked); its thread by identity, as a diff matches
 * threads, so that views that merge or pick threads keep it */
struct prof_snap_lock {
	__u32 tid;
	__u32 site;		/* its name: a site flagged PROF_SITE_LOCK */
	__u64 start_tick;	/* its thread's */
	__u32 node;		/* the zone that took it, in its thread */
	__u32 __pad;
	__u64 acquisitions, contended, wait_ticks, wait_max, hold_ticks, hold_max;
	__u64 blocked, kernel_waits, unheld;
	__u32 wait_hist[PROF_LOCK_HIST];
};

/* a plot's figures on one thread (struct prof_plot, checked); in a
 * window, min, max and last may be NAN: unknown (figures.h) */
struct prof_snap_plot {
	__u32 tid;
	__u32 site;		/* its name: a site flagged PROF_SITE_PLOT */
	__u64 start_tick;
	__u64 count;
	double min, max, last, sum;
	__u64 last_tick;
};

/* a segment's clock (PROF_CLOCK_*) now, as its writer reads it; 0 where
 * this machine cannot (no CPU counter a reader may read) */
__u64 prof_clock_now(__u32 clock);
/* dst's locks and plots a copy of src's (dst's own are not freed: a
 * struct copy's); 0 or -ENOMEM, leaving none */
int prof_snap_annot_copy(struct prof_snapshot *dst, const struct prof_snapshot *src);
/* a new snapshot of src's process: its fields, and its locks and plots
 * copied, but none of its sites, threads or histograms (NULL, nthreads 0)
 * nor a lazy reader, for the caller to fill its own way; NULL without
 * memory */
struct prof_snapshot *prof_snap_shell(const struct prof_snapshot *src);
/* s's locks and plots summed by name, as figures.h says threads combine
 * them (NULL and errno: none, or no memory); free with prof_snap_annot_free */
struct prof_snap_annot *prof_snap_annot_sum(const struct prof_snapshot *s);
void prof_snap_annot_free(struct prof_snap_annot *a);
/* the locks and plots section of a text report (nothing if none) */
void prof_report_locks(FILE *f, const struct prof_snapshot *s);

/* the plots and locks of a process, by name (annot.h) */
struct prof_annot_plot_sum;
struct prof_annot_lock_sum;
struct prof_snap_annot {
	size_t nplots, nlocks;
	struct prof_annot_plot_sum *plots;
	struct prof_annot_lock_sum *locks;
};

/* copy and validate a segment image; 0 or -errno (-EINVAL: corrupt,
 * -EPROTO: unknown version, -ENOMEM, -EBUSY: a live segment's aggregate
 * of exited threads kept changing under the read, -EAGAIN: more threads
 * were folded during each of several reads than slab.h's ring holds) */
int prof_snapshot__read(const void *mem, size_t len, struct prof_snapshot **snap);
/* map fd read-only, read it, unmap */
int prof_snapshot__read_fd(int fd, struct prof_snapshot **snap);

/*
 * The same, with PROF_READ_* flags.  PROF_READ_NO_HIST leaves the
 * histograms behind: quantiles read 0, and most of the memory a big
 * segment makes the reader touch is never touched (views without
 * percentiles: flat lists, top).
 */
#define PROF_READ_NO_HIST	0x1
/*
 * PROF_READ_LAZY, for views that stream every node of a big process: the
 * read checks every node but copies none; walking the threads with
 * prof_snap_next() then reads one thread's nodes at a time into one table
 * the snapshot reuses (reaching a thread unloads the one before).  The
 * histograms stay in the segment: the load reduces each to its p50, p90
 * and p99, the only quantiles such a snapshot answers.  The segment must
 * stay mapped: the fd variant keeps its mapping until destroy; with
 * read_opts, mem is the caller's to keep.  Not for diff, write or merge.
 */
#define PROF_READ_LAZY		0x2
/* with PROF_READ_LAZY: a load copies its thread's histograms, as a full
 * read does, rather than reducing them (views that add histograms up) */
#define PROF_READ_LAZY_HIST	0x4
int prof_snapshot__read_opts(const void *mem, size_t len, unsigned int flags,
			     struct prof_snapshot **snap);
int prof_snapshot__read_fd_opts(int fd, unsigned int flags, struct prof_snapshot **snap);
/*
 * The threads of s, each with its nodes, in order (of tid only, if not 0):
 *
 *	struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
 *	struct prof_snap_thread *t;
 *
 *	while ((t = prof_snap_next(&it)))
 *		... t->nodes[0 .. t->nnodes) ...
 *	if (it.err)
 *		... -errno: a lazy thread's nodes could not be read (-EINVAL:
 *		    the segment changed into a corrupt one, -ENOMEM) ...
 *
 * The one way to a thread's nodes that every snapshot answers: a lazy
 * one's threads have none until the walk reaches them (and none again once
 * it has passed), a full one's have them all along.
 */
struct prof_snap_iter {
	const struct prof_snapshot *s;
	__u32 tid;
	__u32 i;
	int err;
};
#define PROF_SNAP_ITER(snap, only_tid) ((struct prof_snap_iter){ .s = (snap), .tid = (only_tid) })
struct prof_snap_thread *prof_snap_next(struct prof_snap_iter *it);
/* any thread with a kernel slot, or any node with scheduler facts (lazy:
 * as the read saw them) */
int prof_snap_any_sched(const struct prof_snapshot *s);
/* subtract a baseline taken earlier of the same process: counters,
 * histograms; max becomes the top of the highest non-empty delta bucket,
 * clamped to the real max.  Threads match by tid and start tick, nodes by
 * index (node tables only grow).  0, or -ESRCH if base is another process */
int prof_snapshot__diff(struct prof_snapshot *snap, const struct prof_snapshot *base);
/* the snapshot as a read dt ticks later would find it if no call ended and
 * none began: its live threads' wall times and open calls grow by dt (an
 * idle process's history shares one snapshot between frames).  0 or -errno */
int prof_snapshot__advance(struct prof_snapshot *snap, __u64 dt);
void prof_snapshot__destroy(struct prof_snapshot *snap);
/* serialize a snapshot as a segment image (PROF_SEG_VERSION) that
 * prof_snapshot__read() reads back equal: the format profd answers in and
 * baselines are stored in; *buf malloc'd */
int prof_snapshot__write(const struct prof_snapshot *snap, void **buf, size_t *len);
/* the same into zeroed memory of exactly prof_snapshot__image_size() bytes
 * (a fresh file's mapping): only what is not zero is written, so most of
 * the histograms stay holes.  0 or -EINVAL (another size) */
size_t prof_snapshot__image_size(const struct prof_snapshot *snap);
int prof_snapshot__write_into(const struct prof_snapshot *snap, void *mem, size_t len);

/* a thread's name for reports: its PROF_THREAD_NAME or "tid N"; the
 * aggregate's "[exited threads] (N)" */
const char *prof_snap_thread_label(const struct prof_snap_thread *t, char *buf, size_t len);
/* a node's zone name ("[root]", "[overflow]" for the special ones) */
const char *prof_snap_node_name(const struct prof_snapshot *s, const struct prof_snap_node *n);

/* a node's histogram, buckets [hist_lo, hist_lo + hist_n), or NULL if
 * none was kept (a lazy one's: while its thread is loaded) */
const __u32 *prof_snap_hist(const struct prof_snapshot *s, const struct prof_snap_node *n);
/* ticks to ns with the segment's calibration */
__u64 prof_snap_ns(const struct prof_snapshot *s, __u64 ticks);
/* q-quantile (0..1) of a node's durations, in ticks; 0 if no calls */
__u64 prof_snap_quantile(const struct prof_snapshot *s, const struct prof_snap_node *n, double q);
/* self ticks: inclusive minus children, never below 0 */
static inline __u64 prof_snap_self(const struct prof_snap_node *n)
{
	return n->ticks > n->child_ticks ? n->ticks - n->child_ticks : 0;
}
/* what the zones of a thread cost it, estimated: its calls (open ones
 * too) times the zone cost the runtime measured at start, ticks */
static inline __u64 prof_snap_probe_ticks(const struct prof_snapshot *s,
					  const struct prof_snap_thread *t)
{
	__u64 calls = 0;
	__u32 i;

	for (i = 1; i < t->nnodes; i++)
		calls += t->nodes[i].calls + t->nodes[i].open + t->nodes[i].anomalies;
	return calls * s->zone_cost;
}

/*
 * The compensated view: each zone's own cost taken out of the times it
 * lands in.  Of a zone's cost (zone_cost, ticks), zone_inner lies between
 * its two clock reads, in its own total; the rest (cost - inner) lies
 * outside them, in its parent's self.  So a node's total loses inner for
 * each of its own calls (closed and open) and the whole cost for each
 * zone entered below it (calls, open and anomalies of every descendant);
 * its self then loses inner for each own call and cost - inner for each
 * call of a child (the whole cost for a child's anomaly, whose time its
 * node never added).  The root (the thread's wall time) loses every zone's
 * cost: "outside zones" loses cost - inner for each top-level call.  Each
 * time is held at 0 at worst; max and percentiles stay as measured.  Every
 * thread of s (not lazy: its nodes must be read); sets s->compensated.
 * 0, -EINVAL on a lazy snapshot, -ENODATA if no zone cost was measured
 * (an image from before it was).
 */
int prof_snapshot__compensate(struct prof_snapshot *s);
/* what a compensated report says it took out, in a line (buf) */
const char *prof_snap_compensated_note(const struct prof_snapshot *s, char *buf, size_t len);
/* probe_ticks (prof_snap_probe_ticks) as a percentage of t's measured
 * wall time (compensated: its wall time with them put back) */
double prof_snap_probe_share(const struct prof_snapshot *s, const struct prof_snap_thread *t,
			     __u64 probe_ticks);

/*
 * A window's share of off-CPU time.  A call's off-CPU time is counted when
 * it ends, for the whole call, while its wall time lands in every window
 * it spans (an open call is data too); so a window keeps, of the off-CPU
 * time of the calls that ended in it (off, ns), the share their time
 * inside it is of their whole time: closed, the whole ticks of those
 * calls, of which before lay before the window (the part of a call the
 * window's start found open).  Exact for one call that spent its time off
 * the CPU evenly; never more than off, and off times the window's part
 * never exceeds that part (a call's off-CPU time is at most its wall time).
 */
static inline __u64 prof_window_offcpu(__u64 off, __u64 closed, __u64 before)
{
	if (!before || !closed)
		return off;
	if (before >= closed)
		return 0;
	/* in double: no 128-bit integers on every target; an estimate anyway */
	double w = (double)off * (double)(closed - before) / (double)closed;

	return w < (double)off ? (__u64)w : off;
}

/* the ticks of a node's closed calls: its total less its open call's part */
static inline __u64 prof_snap_closed(const struct prof_snap_node *n)
{
	return n->ticks > n->open_ticks ? n->ticks - n->open_ticks : 0;
}
/* true if an ancestor of node i has the same site (recursion) */
int prof_snap_is_recursive(const struct prof_snap_thread *t, __u32 i);
/* set PROF_SNAP_F_RECURSIVE on every node, in O(nodes) whatever the depth;
 * needs first_child/next_sibling.  The reader does it; call it again on a
 * tree built by hand.  0 or -ENOMEM */
int prof_snap_mark_recursion(struct prof_snap_thread *t, __u32 nsites);

/* discovery: segments in /dev/shm */
struct prof_seg_ent {
	char path[96];		/* /dev/shm/prof.<pid>.<token>[.<n>], or
				 * /proc/<pid>/root/dev/shm/... (a container's) */
	__u32 pid;		/* in the caller's pid namespace */
	__u32 uid;		/* owner of the file */
	__u64 start_token;	/* from the name */
	int alive;		/* /proc/<pid> exists with the same start token */
	__u32 ns_pid;		/* a container's: the pid in the name (its own
				 * pid namespace's); 0 for the caller's /dev/shm */
	__u64 ino;		/* the file's inode when listed */
};
/* list segments owned by uid (or all if uid == (uid_t)-1); *ents malloc'd */
int prof_seg_list(uid_t uid, struct prof_seg_ent **ents, size_t *n);
/* the one entry of /dev/shm named NAME (a file name), as prof_seg_list
 * would list it: 0, or -EINVAL (not a segment's name or file), -errno */
int prof_seg_ent_here(const char *name, struct prof_seg_ent *e);
/*
 * The same in the /dev/shm of every other mount namespace (containers) the
 * caller may look into, through /proc/<pid>/root: live processes only,
 * each named by its pid here, found as the process of that namespace whose
 * innermost pid (NSpid) and start token are the name's.  A name no process
 * answers to is left out: a pid that cannot be translated is not trusted.
 */
int prof_seg_list_ns(uid_t uid, struct prof_seg_ent **ents, size_t *n);
/* namespaces and cgroups (usdt/discover.c) */
/* the inode of /proc/<pid>/ns/<ns> (pid 0: our own), 0 if unknown */
__u64 prof_ns_ino(pid_t pid, const char *ns);
/* pid's innermost pid (its own pid namespace's, NSpid's last); 0 or -errno */
int prof_proc_nspid(pid_t pid, __u32 *inner);
/* how many pid namespaces pid is seen in from ours (1: ours alone; NSpid's
 * length: readable without ptrace rights, unlike /proc/<pid>/ns), -errno */
int prof_proc_nslevels(pid_t pid);
/* the same for a thread of pid */
int prof_task_nspid(pid_t pid, pid_t tid, __u32 *inner);
/* the host tid (ours) of the thread of pid whose innermost tid is inner;
 * -ESRCH if none is */
int prof_task_from_nspid(pid_t pid, __u32 inner, pid_t *tid);
/* what a uid of ours is inside pid's user namespace; -ERANGE if unmapped */
int prof_proc_ns_uid(pid_t pid, uid_t uid, uid_t *inner);
/* pid's cgroup, named as its manager does: the innermost *.scope (or
 * *.service) of its cgroup v2 path, else the path; "" if unknown */
void prof_proc_cgroup(pid_t pid, char *buf, size_t len);
/* open read-only, refusing symlinks, non-regular files and files not owned
 * by ent->uid; fd or -errno */
int prof_seg_open(const struct prof_seg_ent *ent);
/* the start token of a live pid from /proc/<pid>/stat, 0 if none */
__u64 prof_proc_start_token(pid_t pid);
/* a small /proc file: /proc/PID/NAME, or of its thread tid if not 0
 * (/proc/PID/task/TID/NAME); pid 0 is our own process; NUL terminated,
 * cut to len; 0 or -errno */
int prof_proc_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t len);
/* the same of "comm", its newline dropped */
int prof_proc_comm(pid_t pid, pid_t tid, char *buf, size_t len);
/*
 * What only the kernel knows of a live process's threads, added to a
 * snapshot read from its segment (the read is the bytes' alone): each
 * thread's CPU time and comm, of thread tid only if not 0.  Nothing once
 * the process exited, or when pid is another process now.
 * prof_snapshot__read* and prof_flat_read add it to a live segment's.
 */
void prof_snapshot__add_proc(struct prof_snapshot *s, __u32 tid);

/* renderers (usdt/report.c) */
#define PROF_SORT_SELF		0
#define PROF_SORT_TOTAL		1
#define PROF_SORT_CALLS		2
#define PROF_SORT_MAX		3
#define PROF_SORT_P99		4
#define PROF_SORT_ONCPU		5	/* on-CPU time (profd), unknown last */
#define PROF_SORT_SELF_ONCPU	6	/* on-CPU time less the children's */
#define PROF_SORT_NKEYS		7
#define PROF_SORT_KEYS_TEXT	"self, total, calls, max, p99, oncpu, self-oncpu"
/* the keys as every verb's --sort spells them, by PROF_SORT_* */
extern const char *const prof_sort_names[PROF_SORT_NKEYS];
/* on-CPU times (or any PROF_SNAP_UNKNOWN-able sums) added where known: the
 * sum is unknown only while every part is */
static inline __u64 prof_add_known(__u64 a, __u64 b)
{
	if (a == PROF_SNAP_UNKNOWN)
		return b;
	return b == PROF_SNAP_UNKNOWN ? a : a + b;
}
/* an on-CPU time as a descending sort's key: unknown (no kernel facts)
 * after every known one, 0 included */
static inline __u64 prof_sort_oncpu_key(__u64 ns)
{
	return ns == PROF_SNAP_UNKNOWN ? 0 : ns + 1;
}

/* a node's value under a PROF_SORT_* key: self, total, calls, max or p99 ticks */
__u64 prof_snap_sort_key(const struct prof_snapshot *s, const struct prof_snap_node *n, int sort);

struct prof_report_opts {
	int sort;		/* PROF_SORT_* for siblings and flat rows */
	int color;		/* ANSI colour */
	int flat_rows;		/* rows in the flat list, 0 = all */
	__u32 tid;		/* only this thread, 0 = all */
	int no_tree;		/* flat list only */
	int no_flat;		/* tree only */
};

/*
 * Sites that share their name with another site in another place (C++
 * overloads and methods, every lambda's operator(), one name in two
 * files): a byte per site, 1 where shared, malloc'd; NULL and errno
 * without memory.  Reports print their file:line beside the name.
 */
__u8 *prof_snap_name_clashes(const struct prof_snapshot *s);
/* " (file:line)" of a site, the file's last component, at p; the end */
char *prof_put_where(char *p, const struct prof_snap_site *site);
/* the call tree per thread, then the flat list by self time (report.c):
 * the report at exit, after its "prof:" lines */
int prof_report_text(FILE *f, const struct prof_snapshot *s, const struct prof_report_opts *o);
/*
 * The text views both that report and profctl print (report_text.c): the
 * call tree of each thread (of o->tid, if not 0), each under its title,
 * then notes on its marks; the flat list, a row a zone across threads (or
 * of o->tid), o->flat_rows at most (0: all).  0 or -errno
 */
int prof_report_tree(FILE *f, const struct prof_snapshot *s, const struct prof_report_opts *o);
int prof_report_flat(FILE *f, const struct prof_snapshot *s, const struct prof_report_opts *o);
/* a thread's wall time: its root's ticks */
__u64 prof_snap_thread_total(const struct prof_snap_thread *t);
/* the average closed call, ns (an open call is not a call yet) */
__u64 prof_snap_avg_ns(const struct prof_snapshot *s, const struct prof_snap_node *n);
/*
 * On-CPU time, ns: the closed calls' wall time (closed_ticks) less their
 * off-CPU time, for a node or a flat row; PROF_SNAP_UNKNOWN where no call
 * had kernel facts (kcalls 0).
 */
__u64 prof_oncpu_ns(const struct prof_snapshot *s, __u64 closed_ticks, __u64 kcalls,
		    __u64 offcpu_ns);
/*
 * Each node of t's on-CPU time in ns, into oncpu[0 .. t->nnodes) (the
 * root's: the thread's, t->oncpu_ns), as every view shows it: a node's
 * own (prof_oncpu_ns), plus for its open call what the thread's CPU time
 * proves it ran (the thread's CPU time over the view less the wall time
 * outside the call), raised to its children's sum, and never above its
 * total.  A node ran on the CPU at least as long as its children did; an
 * open call's on-CPU time is known only when it ends, and a window's
 * share of a call that began before it is an estimate
 * (prof_window_offcpu): both are held to that.  PROF_SNAP_UNKNOWN where
 * nothing is known of a node or any node below it.  0 or -ENOMEM
 */
int prof_snap_oncpu(const struct prof_snapshot *s, const struct prof_snap_thread *t,
		    __u64 *oncpu);
/* the same into *oncpu, grown to t->nnodes as needed (*cap its room; free()
 * it when done); 0 or -ENOMEM */
int prof_snap_oncpu_room(const struct prof_snapshot *s, const struct prof_snap_thread *t,
			 __u64 **oncpu, __u32 *cap);
/* the overflow node while nothing landed there: not shown */
bool prof_snap_node_hidden(const struct prof_snap_thread *t, __u32 i);
/* the children of node i sorted by a PROF_SORT_* key (then name, then
 * index: a total order), into idx (room for cap); how many.  oncpu is
 * prof_snap_oncpu's for t, needed by the on-CPU keys only (NULL: unsorted
 * by them) */
__u32 prof_snap_sorted_children_cap(const struct prof_snapshot *s, const struct prof_snap_thread *t,
				    __u32 i, int sort, const __u64 *oncpu, __u32 *idx, __u32 cap);
/* the same with room for t->nnodes */
__u32 prof_snap_sorted_children(const struct prof_snapshot *s, const struct prof_snap_thread *t,
				__u32 i, int sort, const __u64 *oncpu, __u32 *idx);
/*
 * Self on-CPU time of node i, ns: its on-CPU time (oncpu, prof_snap_oncpu's
 * for t) less its children's, PROF_SNAP_UNKNOWN where its own is.  A child
 * without kernel facts takes nothing away: its time is in the node's, and
 * on-CPU time counts a call without facts as on the CPU (an upper bound,
 * which the views mark where kernel_calls < calls).
 */
__u64 prof_snap_self_oncpu(const struct prof_snap_thread *t, const __u64 *oncpu, __u32 i);
/* *kids room for a sorted child list of each of t's nodes (grown as
 * needed, free() it); 0 or -ENOMEM */
int prof_snap_kids_room(const struct prof_snap_thread *t, __u32 **kids, __u32 *nkids);
/*
 * The JSON report's schema version (docs/reports.md, tests/report.schema.json),
 * one for the tree, --flat and --callers.  4 added the nodes' sampled
 * "samples" and "inside", the process's "plots", "locks" and
 * "samples_state"; 3 the on-CPU times; 2 open calls.
 */
#define PROF_REPORT_JSON_VERSION 4
/* JSON: {"version":PROF_REPORT_JSON_VERSION,"processes":[...]} as documented
 * in docs/reports.md */
int prof_report_json(FILE *f, struct prof_snapshot *const *snaps, size_t n);
/* the same, each node's fields followed by what hook->node writes to f
 * (",\"key\":value..."), e.g. profctl's sampled lines; hook may be NULL */
struct prof_json_hook {
	void (*node)(void *arg, FILE *f, const struct prof_snapshot *s,
		     const struct prof_snap_thread *t, __u32 i);
	void *arg;
};
int prof_report_json_hook(FILE *f, struct prof_snapshot *const *snaps, size_t n,
			  const struct prof_json_hook *hook);

/* flat view: zones merged across threads and paths; recursion is not
 * double counted (a node whose ancestor has the same site adds calls and
 * self, not total) */
struct prof_flat_row {
	__u32 site;		/* PROF_SITE_NONE for overflow */
	__u64 calls;
	__u64 ticks;		/* inclusive, outermost instances only */
	__u64 self;
	__u64 max;
	__u64 preempted;
	__u64 migrated;
	__u64 offcpu_ns;
	__u64 allocs;
	__u64 alloc_bytes;
	__u64 open;		/* calls in flight */
	__u64 open_ticks;	/* their part of ticks */
	__u64 blocked;
	__u64 kernel_calls;
	__u64 self_oncpu_ns;	/* the nodes' prof_snap_self_oncpu summed over
				 * those that know it, PROF_SNAP_UNKNOWN if none
				 * does (and from prof_seg_flat: no tree) */
	__u64 oncpu_ns;		/* the outermost nodes' prof_snap_oncpu summed
				 * over those that know it (as the tree shows
				 * them), PROF_SNAP_UNKNOWN if none does; from
				 * prof_seg_flat (no tree) prof_oncpu_ns of the
				 * row's closed calls */
};
/* a flat row's on-CPU time, ns (its oncpu_ns) */
__u64 prof_flat_oncpu_ns(const struct prof_snapshot *s, const struct prof_flat_row *r);
__u64 prof_flat_avg_ns(const struct prof_snapshot *s, const struct prof_flat_row *r);
/* rows for all threads (tid == 0) or one; *rows malloc'd, sorted by o->sort */
int prof_snap_flat(const struct prof_snapshot *s, __u32 tid, int sort,
		   struct prof_flat_row **rows, size_t *n);
/*
 * A flat row over the window between two reads of it (then, now; one
 * zone's, in the same order of reads), into w: counters less their
 * earlier values; the open calls' part inside the window; off-CPU time
 * shared as prof_window_offcpu says; max the exact max of the window if a
 * call ended in it above every earlier one, else a bound on it (the
 * smaller of the max since start and the time of all the calls that
 * ended in it), never more than either; 0 if no call ended.  A row has
 * no histogram: prof_snapshot__diff's max is the tighter one.
 */
void prof_flat_window(struct prof_flat_row *w, const struct prof_flat_row *now,
		      const struct prof_flat_row *then);
/* row x added into d, two sites of one zone: each figure as figures.h
 * says sites combine it (on-CPU times where known) */
void prof_flat_row_add(struct prof_flat_row *d, const struct prof_flat_row *x);
/* sort flat rows by a PROF_SORT_* key (p99 sorts by max); s converts
 * ticks for the on-CPU keys */
void prof_flat_sort(const struct prof_snapshot *s, struct prof_flat_row *rows, size_t n, int sort);
/*
 * The flat rows straight from a segment (a live mapping kept across
 * calls), without copying nodes: one pass over each node's first cache
 * line, validated as prof_snapshot__read validates.  *snap gets the
 * process, its sites and threads, with no nodes (nnodes 0); rows carry no
 * allocation counts.  For views refreshed often, like top.
 */
int prof_seg_flat(const void *mem, size_t len, __u32 tid, int sort, struct prof_snapshot **snap,
		  struct prof_flat_row **rows, size_t *n);
/*
 * The same, for a caller that asks again and again of one mapping: the
 * cache keeps each thread's share of the rows and reuses it while the
 * slab's activity word and node count are unchanged, so a thread that ran
 * no zone since the last call costs no node reads.  Rows and *snap as
 * prof_seg_flat's, equal to what it would give.
 */
struct prof_seg_flat_cache;
struct prof_seg_flat_cache *prof_seg_flat_cache__new(void);
void prof_seg_flat_cache__destroy(struct prof_seg_flat_cache *c);
/* rows from this cache leave preempted, migrated and off-CPU time at 0,
 * and no node's ext record is read (views that show none: top) */
void prof_seg_flat_cache__no_sched(struct prof_seg_flat_cache *c);
int prof_seg_flat_cached(const void *mem, size_t len, __u32 tid, int sort,
			 struct prof_seg_flat_cache *cache, struct prof_snapshot **snap,
			 struct prof_flat_row **rows, size_t *n);

/*
 * A sampler's cursor over one live segment.  A node's parent never changes
 * once it exists, so which nodes are top level is learned once: each call
 * reads the slab headers, the nodes created since the last call, and one
 * word per top-level node.  What profd needs at every sample, without a
 * pass over every node.
 */
struct prof_seg_busy {
	__u64 busy_ticks;	/* time inside zones: the top-level nodes' totals */
	__u64 tick_hz;
	__u32 pid;
	__u32 uid;
	__u64 start_token;
	__u64 created_ns;
	char comm[PROF_COMM_MAX];
	__u32 nthreads;		/* slabs in use */
	__u32 alive;		/* threads alive */
	__u32 kernel;		/* alive, with a kernel slot */
	__u32 __pad;
};
struct prof_seg_cursor;
struct prof_seg_cursor *prof_seg_cursor__new(void);
void prof_seg_cursor__destroy(struct prof_seg_cursor *c);
/* one sample of mem; 0, or -errno as prof_snapshot__read.  A cursor
 * follows one segment only */
int prof_seg_cursor__sample(struct prof_seg_cursor *c, const void *mem, size_t len,
			    struct prof_seg_busy *out);

/*
 * The event rings (slab.h): each thread's last calls, oldest first, in the
 * order they ended.  An event's node indexes its thread's nodes in a
 * snapshot read after this (a node exists before any event names it).
 */
struct prof_trace_thread {
	__u32 tid;
	__u32 slab;		/* the slab's index */
	__u64 gen;		/* its generation */
	__u64 written;		/* events the thread wrote: written - n - skipped
				 * were lost */
	__u64 n;		/* events kept, in ev */
	__u64 skipped;		/* older events its ring held, left unread
				 * (prof_seg_trace_newest) */
	struct prof_event *ev;
};
struct prof_trace {
	__u32 pid;
	__u32 nthreads;		/* threads with a ring */
	__u64 ring_events;	/* each ring's size, 0: the program's ring is off,
				 * or an image (a reader's copy has no rings) */
	__u32 image;		/* 1: a reader's image (snapshot.h), not a live
				 * segment: profd's copy of a process gone */
	__u64 tick_hz, tick_base, mono_base_ns;
	__u32 clock;		/* PROF_CLOCK_* of the program's ticks */
	struct prof_trace_thread *threads;
	struct prof_annot *annot; /* the threads' annotations (annot.h) */
};
/* 0, or -errno as prof_snapshot__read; the annotations too */
struct prof_annot;
int prof_seg_trace(const void *mem, size_t len, struct prof_trace **out);
/* the same, only each thread's newest events (at most newest; 0: all):
 * what is copied is bounded by it, not by the rings' size */
int prof_seg_trace_newest(const void *mem, size_t len, __u64 newest, struct prof_trace **out);
void prof_trace__destroy(struct prof_trace *t);

static inline __u32 prof_event_node(const struct prof_event *e)
{
	return (__u32)(e->dur_node & ((1u << PROF_EV_NODE_BITS) - 1));
}

static inline __u64 prof_event_ticks(const struct prof_event *e)
{
	return e->dur_node >> PROF_EV_DUR_SHIFT;
}

/* PROF_EV_PREEMPTED | PROF_EV_BLOCKED | PROF_EV_MIGRATED (with profd) */
static inline unsigned int prof_event_flags(const struct prof_event *e)
{
	return (unsigned int)(e->dur_node >> PROF_EV_FLAG_SHIFT) & 7;
}

#ifdef __cplusplus
}
#endif

#endif /* PROF_SNAPSHOT_H */
