// SPDX-License-Identifier: MIT
/*
 * test_counts.c - call counts are exact: 8 threads each enter a nested
 * pair of zones 1,000,000 times (fewer under TSan); every thread's nodes
 * hold exactly its own calls, and the flat view's totals are the sums over
 * the threads.
 */
#include <pthread.h>

#include "fastpath.h"
#include "prof.h"

#define NTHREADS 8
#define ITERS (TEST_TSAN ? 100000ul : 1000000ul)

struct worker {
	pthread_t th;
	__u32 tid;
	volatile unsigned long sink;
};

static void count_inner(struct worker *w, unsigned long i)
{
	PROF_USDT(count_inner);
	w->sink += i;
}

static void *count_main(void *arg)
{
	struct worker *w = arg;
	unsigned long i;

	w->tid = test_gettid();
	for (i = 0; i < ITERS; i++) {
		PROF_USDT(count_outer);
		count_inner(w, i);
	}
	return NULL;
}

static void test_exact_counts(void **state)
{
	struct worker w[NTHREADS];
	struct prof_snapshot *s;
	struct prof_flat_row *rows;
	__u64 outer_ticks = 0, inner_ticks = 0, inner_self = 0;
	size_t nrows, r;
	int i, seen_outer = 0, seen_inner = 0;

	(void)state;
	memset(w, 0, sizeof(w));
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&w[i].th, NULL, count_main, &w[i]), 0);
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_join(w[i].th, NULL), 0);

	s = test_snapshot(0);
	assert_non_null(s);
	for (i = 0; i < NTHREADS; i++) {
		const struct prof_snap_thread *t = test_thread(s, w[i].tid);
		__u32 o, in;

		assert_non_null(t);
		/* the outer zone at the top, the inner one under it, nothing else */
		o = test_child(s, t, PROF_NODE_ROOT, "count_outer");
		assert_int_not_equal(o, PROF_SNAP_NONE);
		in = test_child(s, t, o, "count_inner");
		assert_int_not_equal(in, PROF_SNAP_NONE);
		assert_int_equal(t->nnodes, 4);
		assert_int_equal(test_count_named(s, t, "count_outer"), 1);
		assert_int_equal(test_count_named(s, t, "count_inner"), 1);
		assert_int_equal(t->nodes[o].calls, ITERS);
		assert_int_equal(t->nodes[in].calls, ITERS);
		assert_int_equal(t->nodes[o].anomalies, 0);
		assert_int_equal(t->nodes[in].anomalies, 0);
		assert_int_equal(t->nodes[1].calls, 0);
		assert_int_equal(t->overflow, 0);
		assert_int_equal(t->unbalanced, 0);
		/* an outer call contains its inner one */
		assert_true(t->nodes[o].ticks >= t->nodes[in].ticks);
		assert_int_equal(t->nodes[o].child_ticks, t->nodes[in].ticks);
		outer_ticks += t->nodes[o].ticks;
		inner_ticks += t->nodes[in].ticks;
		inner_self += prof_snap_self(&t->nodes[in]);
	}

	assert_int_equal(prof_snap_flat(s, 0, PROF_SORT_CALLS, &rows, &nrows), 0);
	for (r = 0; r < nrows; r++) {
		const char *name = rows[r].site < s->nsites ? s->sites[rows[r].site].name : "";

		if (!strcmp(name, "count_outer")) {
			assert_int_equal(rows[r].calls, NTHREADS * ITERS);
			assert_int_equal(rows[r].ticks, outer_ticks);
			seen_outer++;
		} else if (!strcmp(name, "count_inner")) {
			assert_int_equal(rows[r].calls, NTHREADS * ITERS);
			assert_int_equal(rows[r].ticks, inner_ticks);
			assert_int_equal(rows[r].self, inner_self);
			seen_inner++;
		}
	}
	assert_int_equal(seen_outer, 1);
	assert_int_equal(seen_inner, 1);
	free(rows);
	prof_snapshot__destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
