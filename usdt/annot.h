/* SPDX-License-Identifier: MIT */
/*
 * annot.h - the annotations of a segment's threads (slab.h, "Annotations"),
 * read into private memory and checked (reader_annot.c): plots, messages,
 * values on calls, locks.  profctl's trace, report, top and serve show
 * them.
 */
#ifndef PROF_ANNOT_H
#define PROF_ANNOT_H

#include "snapshot.h"

struct prof_annot_plot {
	char name[PROF_NAME_MAX];
	__u64 count;
	double min, max, last, sum;
	__u64 last_tick;
};

struct prof_annot_point {
	__u64 tick;
	double value;
	__u32 plot;		/* index in its thread's plots */
};

struct prof_annot_msg {
	__u64 tick;
	__u32 node;		/* the zone it was logged in (the thread's node) */
	char text[PROF_MSG_TEXT];
};

struct prof_annot_value {
	__u64 start;		/* the call's start tick */
	__u32 node;
	__u32 kind;		/* PROF_VALUE_NUM or PROF_VALUE_TEXT_KIND */
	__u64 seq;		/* its place in the ring: a call's in order */
	double value;
	char text[PROF_VALUE_TEXT];
};

struct prof_annot_lock {
	char name[PROF_NAME_MAX];
	__u32 node;		/* the zone it was taken in */
	__u64 acquisitions, contended, wait_ticks, wait_max, hold_ticks, hold_max;
	__u64 blocked, kernel_waits, unheld;
	__u32 wait_hist[PROF_LOCK_HIST];
};

struct prof_annot_span {
	__u64 start, dur;	/* ticks */
	__u32 lock;		/* index in its thread's locks */
	__u32 flags;		/* PROF_SPAN_* */
};

struct prof_annot_thread {
	__u32 tid, slab;
	__u64 gen;
	__u64 dropped, cut;	/* the slab's annot_dropped, annot_cut */
	__u32 nplots, nlocks;
	struct prof_annot_plot *plots;
	struct prof_annot_lock *locks;
	__u64 npoints, nmsgs, nvalues, nspans; /* each ring's, oldest first */
	struct prof_annot_point *points;
	struct prof_annot_msg *msgs;
	struct prof_annot_value *values; /* sorted by (node, start) */
	struct prof_annot_span *spans;
};

struct prof_annot {
	__u32 nthreads;		/* threads with annotations */
	__u64 tick_hz;
	struct prof_annot_thread *threads;
};

/* 0 (an image or an older minor: no threads), or -errno as
 * prof_snapshot__read; the exited threads' aggregate is a thread of tid
 * 0 with its tables alone (its folded threads' locks and plots) */
int prof_seg_annot(const void *mem, size_t len, struct prof_annot **out);
void prof_annot__destroy(struct prof_annot *a);

/* the values on a call (node, start) of thread t: [*first, returned) */
__u64 prof_annot_values(const struct prof_annot_thread *t, __u32 node, __u64 start,
			__u64 *first);

/* one lock's figures summed over threads and zones, by name */
struct prof_annot_lock_sum {
	char name[PROF_NAME_MAX];
	__u64 acquisitions, contended, wait_ticks, wait_max, hold_ticks, hold_max;
	__u64 blocked, kernel_waits, unheld;
};
/* the locks of a, by name, most waited first; their count, or -ENOMEM */
long prof_annot_lock_sums(const struct prof_annot *a, struct prof_annot_lock_sum **out);

/* one plot's figures over threads, by name */
struct prof_annot_plot_sum {
	char name[PROF_NAME_MAX];
	__u64 count;
	double min, max, last, sum;
	__u64 last_tick;
};
long prof_annot_plot_sums(const struct prof_annot *a, struct prof_annot_plot_sum **out);

#endif /* PROF_ANNOT_H */
