// SPDX-License-Identifier: MIT
/*
 * test_window.c - what a window does to each figure, on snapshots built by
 * hand so every number is known (ticks are ns): a window is a baseline
 * taken earlier, subtracted (prof_snapshot__diff), and it must never show
 * what no profile can hold.  On-CPU time: a call's off-CPU time is counted
 * when it ends, for the whole call, so a call that began before the window
 * (a reset in the middle of a call) brought all its off-CPU time into a
 * window that holds only part of its wall time: a parent ran less on the
 * CPU than its children, a sleeping zone more off the CPU than its total.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include "testutil.h"
#include "snapshot.h"
#include "snap_fixture.h"

#define S 1000000000ull /* a second, in ticks (tick_hz 1e9) */

enum { ROOT, OVF, BATCH, CHILD, NAP, NNODES };

struct fig {
	__u64 calls, ticks, open_ticks, kcalls, offcpu, max;
};

/* process 77, one thread (tid 78, covered by profd) whose wall time is
 * wall: batch > child, and nap beside it, each as f[] says */
static struct prof_snapshot *build(__u64 wall, const struct fig *f)
{
	static const char *const names[] = { "batch", "child", "nap" };
	struct prof_snapshot *s = calloc(1, sizeof(*s));
	struct prof_snap_thread *t;
	__u32 i;

	assert_non_null(s);
	s->pid = 77;
	s->start_token = 7;
	s->tick_hz = S;
	s->now_tick = wall;
	s->nsites = 3;
	s->sites = calloc(3, sizeof(*s->sites));
	t = calloc(1, sizeof(*t));
	assert_non_null(s->sites);
	assert_non_null(t);
	for (i = 0; i < 3; i++)
		snprintf(s->sites[i].name, sizeof(s->sites[i].name), "%s", names[i]);
	snap_one_thread(s, t, 78, NNODES);
	t->start_tick = 1;
	t->oncpu_ns = PROF_SNAP_UNKNOWN;
	t->nodes[ROOT].ticks = wall;
	t->nodes[BATCH].site = 0;
	t->nodes[BATCH].parent = ROOT;
	t->nodes[CHILD].site = 1;
	t->nodes[CHILD].parent = BATCH;
	t->nodes[NAP].site = 2;
	t->nodes[NAP].parent = ROOT;
	for (i = BATCH; i < NNODES; i++) {
		struct prof_snap_node *n = &t->nodes[i];

		n->calls = f[i].calls;
		n->ticks = f[i].ticks;
		n->open_ticks = f[i].open_ticks;
		n->open = f[i].open_ticks != 0;
		n->kernel_calls = f[i].kcalls;
		n->offcpu_ns = f[i].offcpu;
		n->max = f[i].max;
	}
	/* children linked, child totals, as a read leaves them */
	for (i = 0; i < NNODES; i++)
		t->nodes[i].first_child = t->nodes[i].next_sibling = PROF_SNAP_NONE;
	for (i = NNODES - 1; i >= 2; i--) {
		struct prof_snap_node *n = &t->nodes[i], *p = &t->nodes[n->parent];

		n->next_sibling = p->first_child;
		p->first_child = i;
		p->child_ticks += n->ticks;
	}
	return s;
}

/*
 * The window [10 s, 12 s] of a thread that reset in the middle of calls:
 *
 *	batch	one call, 2 s .. 11.5 s: asleep until 8 s (6 s off the CPU),
 *		then short busy children; open at 10 s (8 s of it so far)
 *	child	20 calls (2 s) before the window, 15 (1.5 s) inside it, all
 *		on the CPU
 *	nap	sleeps 1 s a call: one open at 10 s for 0.6 s, which ends at
 *		10.4 s; the next one open at 12 s for 0.3 s
 */
static const struct fig at10[NNODES] = {
	[BATCH] = { .calls = 0, .ticks = 8 * S, .open_ticks = 8 * S },
	[CHILD] = { .calls = 20, .ticks = 2 * S, .kcalls = 20, .max = S / 10 },
	[NAP] = { .calls = 3, .ticks = 3 * S + 6 * S / 10, .open_ticks = 6 * S / 10, .kcalls = 3,
		  .offcpu = 3 * S, .max = S },
};
static const struct fig at12[NNODES] = {
	[BATCH] = { .calls = 1, .ticks = 9 * S + S / 2, .kcalls = 1, .offcpu = 6 * S,
		    .max = 9 * S + S / 2 },
	[CHILD] = { .calls = 35, .ticks = 3 * S + S / 2, .kcalls = 35, .max = S / 10 },
	[NAP] = { .calls = 4, .ticks = 4 * S + 3 * S / 10, .open_ticks = 3 * S / 10, .kcalls = 4,
		  .offcpu = 4 * S, .max = S },
};

static struct prof_snapshot *window(void)
{
	struct prof_snapshot *b = build(10 * S, at10), *s = build(12 * S, at12);

	assert_int_equal(prof_snapshot__diff(s, b), 0);
	prof_snapshot__destroy(b);
	return s;
}

/* every node: on-CPU >= 0 and <= its total, its children's sum at most;
 * off-CPU no more than the closed calls' wall time in the window */
static void check_oncpu(const struct prof_snapshot *s, const struct prof_snap_thread *t)
{
	__u64 on[NNODES], kids[NNODES] = { 0 };
	__u32 i;

	assert_int_equal(prof_snap_oncpu(s, t, on), 0);
	for (i = NNODES - 1; i >= 2; i--)
		if (on[i] != PROF_SNAP_UNKNOWN)
			kids[t->nodes[i].parent] += on[i];
	for (i = 2; i < NNODES; i++) {
		const struct prof_snap_node *n = &t->nodes[i];

		if (n->kernel_calls)
			assert_true(n->offcpu_ns <= prof_snap_ns(s, prof_snap_closed(n)));
		if (on[i] == PROF_SNAP_UNKNOWN)
			continue;
		assert_true(on[i] <= prof_snap_ns(s, n->ticks));
		assert_true(on[i] >= kids[i]);
	}
}

static void test_window_oncpu_nests(void **state)
{
	struct prof_snapshot *s = window();
	const struct prof_snap_thread *t = &s->threads[0];
	const struct prof_snap_node *batch = &t->nodes[BATCH], *child = &t->nodes[CHILD];
	__u64 on[NNODES];

	(void)state;
	/* the window's wall times: batch 1.5 s (its end), child 1.5 s */
	assert_int_equal(batch->ticks, S + S / 2);
	assert_int_equal(batch->open_ticks, 0);
	assert_int_equal(child->ticks, S + S / 2);
	/*
	 * batch's 6 s off the CPU, counted when it ended, is shared like its
	 * wall time: 1.5 s of its 9.5 s lay in the window (an even spread is
	 * what the reader can know), not all 6 s in a window of 1.5 s
	 */
	assert_int_equal(batch->offcpu_ns, 6 * S * 3 / 19);
	assert_int_equal(prof_snap_oncpu(s, t, on), 0);
	/* and it ran at least as long as its children did */
	assert_int_equal(on[CHILD], S + S / 2);
	assert_int_equal(on[BATCH], S + S / 2);
	check_oncpu(s, t);
	prof_snapshot__destroy(s);
}

/* a sleeping zone: never more off the CPU than its total */
static void test_window_nap(void **state)
{
	struct prof_snapshot *s = window();
	const struct prof_snap_thread *t = &s->threads[0];
	const struct prof_snap_node *nap = &t->nodes[NAP];
	__u64 on[NNODES];

	(void)state;
	/* 0.4 s of the nap that ended, 0.3 s of the one open */
	assert_int_equal(nap->ticks, 7 * S / 10);
	assert_int_equal(nap->open_ticks, 3 * S / 10);
	assert_int_equal(nap->calls, 1);
	/* the ended nap's 1 s off the CPU: 0.4 s of it in the window */
	assert_int_equal(nap->offcpu_ns, 4 * S / 10);
	assert_int_equal(prof_snap_oncpu(s, t, on), 0);
	assert_int_equal(on[NAP], 0);
	check_oncpu(s, t);
	prof_snapshot__destroy(s);
}

/* since start (no window) the same rules hold: batch open, children in it */
static void test_open_parent_nests(void **state)
{
	struct prof_snapshot *s = build(10 * S, at10);
	__u64 on[NNODES];

	(void)state;
	assert_int_equal(prof_snap_oncpu(s, &s->threads[0], on), 0);
	/* batch has no closed call yet: what its children ran, at least */
	assert_int_equal(on[BATCH], 2 * S);
	check_oncpu(s, &s->threads[0]);
	prof_snapshot__destroy(s);
}

/*
 * A busy open call: the thread ran 9 s of its 10, 6 s of them inside
 * batch's open call (1 s of short children): batch ran at least 5 s on
 * the CPU (at most 4 s of the thread's CPU time lay outside it), not the
 * 1 s its children did, nor "unknown"
 */
static void test_open_busy_call(void **state)
{
	static const struct fig busy[NNODES] = {
		[BATCH] = { .ticks = 6 * S, .open_ticks = 6 * S },
		[CHILD] = { .calls = 10, .ticks = S, .kcalls = 10, .max = S / 10 },
	};
	struct prof_snapshot *s = build(10 * S, busy);
	__u64 on[NNODES];

	(void)state;
	s->threads[0].oncpu_ns = 9 * S;
	assert_int_equal(prof_snap_oncpu(s, &s->threads[0], on), 0);
	assert_int_equal(on[BATCH], 5 * S);
	assert_int_equal(on[CHILD], S);
	assert_int_equal(on[ROOT], 9 * S);
	/* and a nap open as long, in a thread that ran 1 s: what is known */
	s->threads[0].oncpu_ns = S;
	assert_int_equal(prof_snap_oncpu(s, &s->threads[0], on), 0);
	assert_int_equal(on[BATCH], S);
	check_oncpu(s, &s->threads[0]);
	prof_snapshot__destroy(s);
}

/* the text tree shows that on-CPU time, not its own figure */
static void test_window_tree_text(void **state)
{
	struct prof_snapshot *s = window();
	struct prof_report_opts o = { .sort = PROF_SORT_TOTAL };
	char *buf = NULL, *row, *p;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(prof_report_tree(f, s, &o), 0);
	fclose(f);
	row = strstr(buf, "batch\n");
	assert_non_null(row);
	while (row > buf && row[-1] != '\n')
		row--;
	/* %thr (1.5 s of 2.2 s), then on-cpu 1.50s: "0ns" before */
	p = strstr(row, "68.2     1.50s ");
	assert_non_null(p);
	assert_true(p < strstr(row, "batch\n"));
	free(buf);
	prof_snapshot__destroy(s);
}

/*
 * top's interval (a flat row read twice, prof_flat_window): a busy zone
 * whose 6 s call, 3 s of it off the CPU on a crowded machine, ends 1 s
 * into the interval, and a short call after it: its on-CPU time is not
 * 0 (3 s off the CPU in 1.2 s), its avg is below its max, and its max is
 * the interval's, not the 40 s call it made long ago
 */
static void test_flat_window(void **state)
{
	const struct prof_flat_row then = { .calls = 3, .ticks = 45 * S, .self = 45 * S,
					    .max = 40 * S, .open = 1, .open_ticks = 5 * S,
					    .kernel_calls = 3, .offcpu_ns = 20 * S };
	const struct prof_flat_row now = { .calls = 5, .ticks = 46 * S + S / 2,
					   .self = 46 * S + S / 2, .max = 40 * S,
					   .open = 1, .open_ticks = S / 10, .kernel_calls = 5,
					   .offcpu_ns = 23 * S };
	struct prof_flat_row w;

	(void)state;
	prof_flat_window(&w, &now, &then);
	/* 1.5 s in the zone: 1 s of the long call, 0.4 s of one after, 0.1 s
	 * open */
	assert_int_equal(w.calls, 2);
	assert_int_equal(w.ticks, S + S / 2);
	assert_int_equal(w.open_ticks, S / 10);
	/* the 3 s off the CPU of 6.4 s of calls, of which 1.4 s in it */
	assert_int_equal(w.offcpu_ns, 3 * S * 14 / 64);
	assert_true(w.offcpu_ns <= w.ticks - w.open_ticks);
	/* no call longer than 40 s: the max is at most all that ended */
	assert_int_equal(w.max, 6 * S + 4 * S / 10);
	assert_true((w.ticks - w.open_ticks) / w.calls <= w.max);
	/* a new longest call: the max is exact */
	{
		struct prof_flat_row longer = now;

		longer.max = 41 * S;
		prof_flat_window(&w, &longer, &then);
		assert_int_equal(w.max, 41 * S);
	}
	/* no call ended: no max */
	prof_flat_window(&w, &then, &then);
	assert_int_equal(w.max, 0);
	assert_int_equal(w.calls, 0);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_window_oncpu_nests), cmocka_unit_test(test_window_nap),
	  cmocka_unit_test(test_open_parent_nests), cmocka_unit_test(test_open_busy_call),
	  cmocka_unit_test(test_window_tree_text), cmocka_unit_test(test_flat_window))
