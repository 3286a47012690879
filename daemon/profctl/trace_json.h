/* SPDX-License-Identifier: MIT */
/*
 * trace_json.h - trace_json.c's pieces that profctl trace (profctl_trace.c)
 * builds its captures from: the rings and slices read together, the trace
 * written from them, and the clock and names they are written in.  The
 * timeline other verbs embed is profctl.h's pc_trace_json.
 */
#ifndef PROFCTL_TRACE_JSON_H
#define PROFCTL_TRACE_JSON_H

#include <stdio.h>
#include <linux/types.h>

struct pc_src;
struct prof_trace;
struct prof_snapshot;
struct prof_snap_thread;
struct profd_slices_thread;

/* what profd's BPF program saw of the threads: their last runs on a CPU */
struct sched_tl {
	struct profd_slices_thread *th;
	__u32 n;
};

/* a tick as CLOCK_MONOTONIC ns; a count of ticks as ns */
__u64 pc_trace_tick_ns(const struct prof_trace *t, __u64 tick);
__u64 pc_trace_ticks_ns(const struct prof_trace *t, __u64 ticks);
/* the snapshot's thread of tid, or NULL */
const struct prof_snap_thread *pc_trace_snap_thread(const struct prof_snapshot *s, __u32 tid);
/* the zone name of node n of thread st */
const char *pc_trace_node_name(const struct prof_snapshot *s, const struct prof_snap_thread *st,
			       __u32 n);
/* the rings of pid (each thread's newest events only, if not 0), a
 * snapshot naming their nodes and, with profd, its threads' slices in k;
 * 0 or -errno (said) */
int pc_trace_read(struct pc_src *src, pid_t pid, struct prof_trace **t, struct prof_snapshot **s,
		  struct sched_tl *k, __u64 newest);
void pc_trace_sched_free(struct sched_tl *k);
/* the trace of tid (0: every thread) between from and to (CLOCK_MONOTONIC
 * ns), at most cap calls of a thread (0: all); 0 or -errno */
int pc_trace_write(FILE *f, const struct prof_trace *t, const struct prof_snapshot *s,
		   const struct sched_tl *sched, __u32 tid, __u64 from, __u64 to, __u64 cap);
/* the start of the last last_ns to now, or to the exit of a process gone */
__u64 pc_trace_last_from(const struct prof_trace *t, const struct prof_snapshot *s, __u64 last_ns);

#endif /* PROFCTL_TRACE_JSON_H */
