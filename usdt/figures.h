/* SPDX-License-Identifier: MIT */
/*
 * figures.h - each per-node figure, declared once.
 *
 * A figure is read (reader.c), merged across threads (profctl_snap.c),
 * windowed (a baseline subtracted: reader_image.c's prof_snapshot__diff for
 * a reset, --last and history frames; reader_flat.c's prof_flat_window for
 * top's interval), written and read back as JSON (report.c, report_load.c)
 * and shown; each of those takes what it does to a figure from here, so a
 * figure cannot mean one thing in one view and another in the next.
 * Adding one: a line here, its writer (prof.c, into slab.h), the reader's
 * copy, and the docs (README's JSON, tests/report.schema.json).
 *
 * PROF_NODE_COUNTS(X) calls X(field, unit, across, window, flat, key) for
 * each counter of struct prof_snap_node, in the order of a JSON node:
 *
 *	field	its member in struct prof_snap_node
 *	unit	count, ns or bytes (times in ticks are PROF_NODE_TIMES')
 *	across	how calls, threads and sites of one zone combine it
 *	window	what a window does to it:
 *		  DIFF	 the counter's difference
 *		  SHARE	 the difference, of which calls that began before the
 *			 window keep the share their part inside it is of their
 *			 whole time (prof_window_offcpu): a call counts its
 *			 off-CPU time when it ends, its wall time as it goes
 *	flat	Y: a flat row (struct prof_flat_row) has it too, by that name
 *	key	its name in a JSON node and a CSV column
 *
 * PROF_NODE_TIMES(X), the same for the times in ticks (JSON: ns):
 *		  DIFF	 as above
 *		  OPEN	 the open calls' part inside the window (never more
 *			 than the window's total)
 *		  HIST	 from the histogram's difference: the top of its
 *			 highest non-empty bucket, held under the max since
 *			 start (an upper bound within one bucket; a flat row,
 *			 which has no histogram, bounds it by the time of all the
 *			 calls that ended in the window)
 *
 * Derived, never stored, each computed in one place:
 *	self		total less the children's totals (prof_snap_self)
 *	avg		the closed calls' time / calls (prof_snap_avg_ns): in a
 *			window, the part of them inside it
 *	p50 p90 p99	from the histogram, held to avg and max
 *			(prof_snap_quantile): a window's from its difference
 *	on-CPU		the closed calls' time less their off-CPU time, held to
 *			the children's sum and the total (prof_snap_oncpu)
 */
#ifndef PROF_FIGURES_H
#define PROF_FIGURES_H

#define PROF_NODE_COUNTS(X)                                                \
	X(calls, count, SUM, DIFF, Y, "calls")                             \
	X(kernel_calls, count, SUM, DIFF, Y, "kernel_calls")               \
	X(preempted, count, SUM, DIFF, Y, "preempted")                     \
	X(blocked, count, SUM, DIFF, Y, "blocked")                         \
	X(migrated, count, SUM, DIFF, Y, "migrated")                       \
	X(offcpu_ns, ns, SUM, SHARE, Y, "offcpu_ns")                       \
	X(anomalies, count, SUM, DIFF, N, "anomalies")                     \
	X(allocs, count, SUM, DIFF, Y, "allocs")                           \
	X(alloc_bytes, bytes, SUM, DIFF, Y, "alloc_bytes")                 \
	X(frees, count, SUM, DIFF, N, "frees")                             \
	X(free_bytes, bytes, SUM, DIFF, N, "free_bytes")

#define PROF_NODE_TIMES(X)                                                 \
	X(ticks, ticks, SUM, DIFF, Y, "total_ns")                          \
	X(open_ticks, ticks, SUM, OPEN, Y, "open_ns")                      \
	X(max, ticks, MAX, HIST, Y, "max_ns")

/* PROF_FIG_IS(DIFF, window) expands to 1 where window is DIFF, else 0;
 * PROF_FIG_IS(Y, flat) likewise (preprocessor-time, for the X bodies) */
#define PROF_FIG_IS(what, v) PROF_FIG_IS_##what##_##v
#define PROF_FIG_IS_DIFF_DIFF 1
#define PROF_FIG_IS_DIFF_SHARE 0
#define PROF_FIG_IS_DIFF_OPEN 0
#define PROF_FIG_IS_DIFF_HIST 0
#define PROF_FIG_IS_SHARE_DIFF 0
#define PROF_FIG_IS_SHARE_SHARE 1
#define PROF_FIG_IS_SHARE_OPEN 0
#define PROF_FIG_IS_SHARE_HIST 0
#define PROF_FIG_IS_SUM_SUM 1
#define PROF_FIG_IS_SUM_MAX 0
#define PROF_FIG_IS_Y_Y 1
#define PROF_FIG_IS_Y_N 0
/* the body b for a figure of the flat rows only */
#define PROF_FIG_IF_FLAT(flat, b) PROF_FIG_IF_FLAT_##flat(b)
#define PROF_FIG_IF_FLAT_Y(b) b
#define PROF_FIG_IF_FLAT_N(b)

#endif /* PROF_FIGURES_H */
