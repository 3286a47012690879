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
 * The reader's copy of an ext record, the image written back of a
 * snapshot and the fold of an exited thread's slab into the aggregate
 * (usdt/prof_fold.c) go by its slab column.  Adding one: a line here, its
 * writer (usdt/prof_slow.c, into slab.h), and the docs (docs/reports.md:
 * the JSON and the table of what a window does; tests/report.schema.json).
 *
 * PROF_NODE_COUNTS(X) calls X(field, unit, across, window, flat, slab, key) for
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
 *	slab	where a slab (slab.h) keeps it: NODE, struct prof_node; EXT, the
 *		node's ext record (struct prof_node_ext), by that name; ADJ,
 *		derived from the ext record's kernel_adj and the slab's
 *		covered (reader.c's node_kernel); NONE, the reader's alone
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
 *	self on-CPU	on-CPU less the known children's on-CPU
 *			(prof_snap_self_oncpu)
 */
#ifndef PROF_FIGURES_H
#define PROF_FIGURES_H

#define PROF_NODE_COUNTS(X)                                                \
	X(calls, count, SUM, DIFF, Y, NODE, "calls")                       \
	X(kernel_calls, count, SUM, DIFF, Y, ADJ, "kernel_calls")          \
	X(preempted, count, SUM, DIFF, Y, EXT, "preempted")                \
	X(blocked, count, SUM, DIFF, Y, EXT, "blocked")                    \
	X(migrated, count, SUM, DIFF, Y, EXT, "migrated")                  \
	X(offcpu_ns, ns, SUM, SHARE, Y, EXT, "offcpu_ns")                  \
	X(anomalies, count, SUM, DIFF, N, EXT, "anomalies")                \
	X(allocs, count, SUM, DIFF, Y, EXT, "allocs")                      \
	X(alloc_bytes, bytes, SUM, DIFF, Y, EXT, "alloc_bytes")            \
	X(frees, count, SUM, DIFF, N, EXT, "frees")                        \
	X(free_bytes, bytes, SUM, DIFF, N, EXT, "free_bytes")

#define PROF_NODE_TIMES(X)                                                 \
	X(ticks, ticks, SUM, DIFF, Y, NODE, "total_ns")                    \
	X(open_ticks, ticks, SUM, OPEN, Y, NONE, "open_ns")                \
	X(max, ticks, MAX, HIST, Y, NODE, "max_ns")

/*
 * PROF_ROW_DERIVED(X) calls X(field, unit, window, key) for each derived
 * figure a flat row (struct prof_flat_row) carries beside its counters,
 * summed over its nodes as prof_snap_flat sums them (prof_seg_flat the
 * same, from a slab's nodes).  Two rows of one zone (diff's two sites of a
 * name) add up by prof_flat_row_add: the counters by their across, these
 * by their sum (KNOWN: of what is known).  A flat row's window (prof_flat_window, top's
 * interval) is the difference of two reads:
 *	DIFF	of the two values, 0 where it would be negative
 *	KNOWN	the same, of what is known: unknown (PROF_SNAP_UNKNOWN)
 *		where the newer read knows nothing, all of it where only
 *		the older knew nothing; at most the window's total (top)
 */
#define PROF_ROW_DERIVED(X)                                                \
	X(self, ticks, DIFF, "self_ns")                                    \
	X(oncpu_ns, ns, KNOWN, "oncpu_ns")                                 \
	X(self_oncpu_ns, ns, KNOWN, "self_oncpu_ns")

/*
 * PROF_OUT_COLUMNS(X) calls X(id, key, tree, flat, html) for each figure a
 * row of the machine formats carries, in the order they all keep: key is
 * its CSV column (and the html page's name for it, by which the page finds
 * it in a node's array); tree, flat and html say (Y or N) whether the CSV
 * tree, the CSV flat rows (no histogram: no percentiles) and the html
 * page's nodes have it.  Every value comes from one place (profctl's
 * pc_col_node and pc_col_row, by the definitions above); a value nobody
 * knows (PROF_SNAP_UNKNOWN) is an empty CSV field and null in html.
 * pct_thread is the node's total over its thread's, in percent.
 */
#define PROF_OUT_COLUMNS(X)                                                \
	X(CALLS, "calls", Y, Y, Y)                                         \
	X(TOTAL, "total_ns", Y, Y, Y)                                      \
	X(SELF, "self_ns", Y, Y, Y)                                        \
	X(AVG, "avg_ns", Y, Y, N)                                          \
	X(P50, "p50_ns", Y, N, Y)                                          \
	X(P99, "p99_ns", Y, N, Y)                                          \
	X(MAX, "max_ns", Y, Y, Y)                                          \
	X(PCT, "pct_thread", Y, N, N)                                      \
	X(PREEMPTED, "preempted", Y, Y, Y)                                 \
	X(MIGRATED, "migrated", Y, Y, Y)                                   \
	X(OFFCPU, "offcpu_ns", Y, Y, Y)                                    \
	X(ALLOCS, "allocs", Y, Y, Y)                                       \
	X(ALLOC_BYTES, "alloc_bytes", Y, Y, Y)                             \
	X(FREES, "frees", Y, N, N)                                         \
	X(FREE_BYTES, "free_bytes", Y, N, N)                               \
	X(OPEN, "open", Y, Y, Y)                                           \
	X(OPEN_NS, "open_ns", Y, Y, Y)                                     \
	X(KERNEL_CALLS, "kernel_calls", Y, Y, Y)                           \
	X(BLOCKED, "blocked", Y, Y, Y)                                     \
	X(ONCPU, "oncpu_ns", Y, Y, Y)                                      \
	X(SELF_ONCPU, "self_oncpu_ns", Y, Y, Y)

/*
 * The annotations' figures (annot.h), declared as the nodes' are: a named
 * lock's per (thread, lock, zone that took it), a plot's per (thread,
 * plot).  PROF_LOCK_FIGS(X) and PROF_PLOT_FIGS(X) call X(field, unit,
 * across, window, key) for each, in the order of its JSON object:
 *
 *	across	how threads (and a lock's zones) combine it: SUM, MAX, MIN,
 *		NEWEST (the value of the entry whose last_tick is newest)
 *	window	what a window does to it (reader_image.c's annot_sub):
 *		  DIFF	 the counter's difference
 *		  HIST	 the top of the highest non-empty bucket of the
 *			 wait histogram's difference, held under the max
 *			 since start (as a node's max)
 *		  ALONE	 the since-start value where the baseline had none of
 *			 it (the window is all there is); else unknown
 *			 (PROF_SNAP_UNKNOWN, a plot's NAN): a max or min over
 *			 a window cannot be told from the since-start one
 *		  NEWEST the since-start value where the window has a point
 *			 (the newest point is in it), else unknown
 *	key	its name in a JSON lock or plot; ticks are written as ns
 *		(key ends in _ns); "" for what JSON does not carry
 *
 * A plot's sum has no JSON key: "mean" is sum / count, in the window.
 */
#define PROF_LOCK_FIGS(X)                                                  \
	X(acquisitions, count, SUM, DIFF, "acquisitions")                  \
	X(contended, count, SUM, DIFF, "contended")                        \
	X(wait_ticks, ticks, SUM, DIFF, "wait_ns")                         \
	X(wait_max, ticks, MAX, HIST, "wait_max_ns")                       \
	X(hold_ticks, ticks, SUM, DIFF, "hold_ns")                         \
	X(hold_max, ticks, MAX, ALONE, "hold_max_ns")                      \
	X(blocked, count, SUM, DIFF, "blocked")                            \
	X(kernel_waits, count, SUM, DIFF, "")                              \
	X(unheld, count, SUM, DIFF, "unheld")

#define PROF_PLOT_FIGS(X)                                                  \
	X(count, count, SUM, DIFF, "count")                                \
	X(min, value, MIN, ALONE, "min")                                   \
	X(max, value, MAX, ALONE, "max")                                   \
	X(last, value, NEWEST, NEWEST, "last")                             \
	X(sum, value, SUM, DIFF, "")                                       \
	X(last_tick, ticks, NEWEST, NEWEST, "")

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
#define PROF_FIG_IS_KNOWN_DIFF 0
#define PROF_FIG_IS_KNOWN_KNOWN 1
#define PROF_FIG_IS_DIFF_KNOWN 0
#define PROF_FIG_IS_SUM_SUM 1
#define PROF_FIG_IS_SUM_MAX 0
#define PROF_FIG_IS_SUM_MIN 0
#define PROF_FIG_IS_SUM_NEWEST 0
#define PROF_FIG_IS_MAX_SUM 0
#define PROF_FIG_IS_MAX_MAX 1
#define PROF_FIG_IS_MAX_MIN 0
#define PROF_FIG_IS_MAX_NEWEST 0
#define PROF_FIG_IS_MIN_SUM 0
#define PROF_FIG_IS_MIN_MAX 0
#define PROF_FIG_IS_MIN_MIN 1
#define PROF_FIG_IS_MIN_NEWEST 0
#define PROF_FIG_IS_NEWEST_SUM 0
#define PROF_FIG_IS_NEWEST_MAX 0
#define PROF_FIG_IS_NEWEST_MIN 0
#define PROF_FIG_IS_NEWEST_NEWEST 1
#define PROF_FIG_IS_DIFF_ALONE 0
#define PROF_FIG_IS_DIFF_NEWEST 0
#define PROF_FIG_IS_HIST_DIFF 0
#define PROF_FIG_IS_HIST_HIST 1
#define PROF_FIG_IS_HIST_ALONE 0
#define PROF_FIG_IS_HIST_NEWEST 0
#define PROF_FIG_IS_ALONE_DIFF 0
#define PROF_FIG_IS_ALONE_HIST 0
#define PROF_FIG_IS_ALONE_ALONE 1
#define PROF_FIG_IS_ALONE_NEWEST 0
#define PROF_FIG_IS_NEWEST_DIFF 0
#define PROF_FIG_IS_NEWEST_HIST 0
#define PROF_FIG_IS_NEWEST_ALONE 0
#define PROF_FIG_IS_Y_Y 1
#define PROF_FIG_IS_Y_N 0
/* the body b where a column's value v is what (PROF_FIG_IF(Y, flat, b),
 * PROF_FIG_IF(EXT, slab, b), PROF_FIG_IF(NODE, slab, b)), else nothing: for bodies that name a
 * struct's member, which must not even be compiled for the others */
#define PROF_FIG_IF(what, v, b) PROF_FIG_IF_##what##_##v(b)
#define PROF_FIG_IF_Y_Y(b) b
#define PROF_FIG_IF_Y_N(b)
#define PROF_FIG_IF_EXT_EXT(b) b
#define PROF_FIG_IF_EXT_NODE(b)
#define PROF_FIG_IF_EXT_ADJ(b)
#define PROF_FIG_IF_EXT_NONE(b)
#define PROF_FIG_IF_NODE_NODE(b) b
#define PROF_FIG_IF_NODE_EXT(b)
#define PROF_FIG_IF_NODE_ADJ(b)
#define PROF_FIG_IF_NODE_NONE(b)

#endif /* PROF_FIGURES_H */
