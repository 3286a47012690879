// SPDX-License-Identifier: MIT
/*
 * test_quantile.c - percentiles never contradict the exact avg and max
 * beside them (prof_snap_quantile).
 *
 * A node's histogram is built from known durations; its p50, p90 and p99
 * must be monotone, at most the max, within the histogram's error of the
 * exact order statistic, and inside what the exact calls, total and max
 * allow: 100 calls of 16.08 ms give p50 = p99 = 16.08 ms (a bucket's
 * midpoint would say 14.4 ms, below the average); a tight spread puts p99
 * below its average by no more than the calls above it make up; a skewed
 * distribution keeps its p99 well below its average, as it should.
 */
#include <stdio.h>

#include "testutil.h"
#include "runtime.h"

struct fixture {
	struct prof_snapshot s;
	struct prof_snap_node n;
	__u32 hist[PROF_HIST_BUCKETS];
};

/* a node of those durations (ticks = ns: 1 GHz) */
static void build(struct fixture *f, const __u64 *v, size_t nv)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->s.tick_hz = 1000000000ull;
	f->s.hist = f->hist;
	f->s.nhist = PROF_HIST_BUCKETS;
	f->n.hist_lo = 0;
	f->n.hist_n = PROF_HIST_BUCKETS;
	for (i = 0; i < nv; i++) {
		f->hist[prof_hist_bucket(v[i])]++;
		f->n.calls++;
		f->n.ticks += v[i];
		if (v[i] > f->n.max)
			f->n.max = v[i];
	}
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* the exact q-quantile: the value of rank ceil(q n) */
static __u64 exact(const __u64 *sorted, size_t n, double q)
{
	size_t r = (size_t)(q * (double)n);

	if ((double)r < q * (double)n)
		r++;
	if (r < 1)
		r = 1;
	return sorted[r - 1];
}

/* the fast path's bucket (prof_hist_bucket_at, no clamp; the exit's
 * prof_hist_bucket8 less 8) is the readers'
 * below PROF_HIST_TOP: every bucket's first and last delta are in it, its
 * neighbours' are not, and it spans what the fast path caches
 * ([(v >> s) << s, + 2^s)); the top bucket ends at PROF_HIST_TOP */
static unsigned int bucket_fast(__u64 v, __u64 *lo, __u64 *span)
{
	unsigned int s = prof_hist_shift(v);

	*lo = prof_hist_lo_at(v, s);
	*span = prof_hist_span_at(s);
	/* the exit's own form, 8 above */
	assert_int_equal(prof_hist_bucket8(v), prof_hist_bucket_at(v, s) + 8);
	return prof_hist_bucket_at(v, s);
}

static void test_bucket_bounds(void **state)
{
	unsigned int b;

	(void)state;
	for (b = 0; b < PROF_HIST_BUCKETS; b++) {
		__u64 lo = prof_hist_lo(b);
		__u64 top = b + 1 < PROF_HIST_BUCKETS ? prof_hist_lo(b + 1) : PROF_HIST_TOP;

		__u64 clo, cspan;

		assert_true(top > lo);
		assert_int_equal(bucket_fast(lo, &clo, &cspan), b);
		assert_int_equal(clo, lo);
		assert_int_equal(cspan, top - lo);
		assert_int_equal(prof_hist_bucket(lo), b);
		assert_int_equal(bucket_fast(top - 1, &clo, &cspan), b);
		assert_int_equal(clo, lo);
		assert_int_equal(prof_hist_bucket(top - 1), b);
		if (b + 1 < PROF_HIST_BUCKETS)
			assert_int_equal(bucket_fast(top, &clo, &cspan), b + 1);
		if (b)
			assert_int_equal(bucket_fast(lo - 1, &clo, &cspan), b - 1);
	}
	/* past the top, the last bucket */
	assert_int_equal(prof_hist_bucket(PROF_HIST_TOP), PROF_HIST_BUCKETS - 1);
	assert_int_equal(prof_hist_bucket(~0ull), PROF_HIST_BUCKETS - 1);
}

static void test_tight(void **state)
{
	__u64 v[100];
	struct fixture f;
	size_t i;

	(void)state;
	for (i = 0; i < 100; i++)
		v[i] = 16080000;
	build(&f, v, 100);
	/* every value is the average: so is every percentile */
	assert_int_equal(prof_snap_quantile(&f.s, &f.n, 0.5), 16080000);
	assert_int_equal(prof_snap_quantile(&f.s, &f.n, 0.99), 16080000);

	/* the case: a tight spread, avg 16.08 ms */
	for (i = 0; i < 100; i++)
		v[i] = 16000000 + i * 1600;
	build(&f, v, 100);
	{
		__u64 avg = f.n.ticks / f.n.calls, p99 = prof_snap_quantile(&f.s, &f.n, 0.99);

		print_message("avg %llu p99 %llu max %llu\n", (unsigned long long)avg,
			      (unsigned long long)p99, (unsigned long long)f.n.max);
		/* the midpoint said 14.5 ms; p99 may sit below the average only
		 * by what the one call above it can make up: (max - avg) / 99 */
		assert_true(p99 + (f.n.max - avg) / 99 + 1 >= avg);
		assert_true(p99 > 16000000);
		assert_true(p99 <= f.n.max);
	}
}

static void test_skewed(void **state)
{
	__u64 v[100];
	struct fixture f;
	size_t i;
	__u64 p99;

	(void)state;
	/* 99 calls of 1 ms and one of 1 s: avg 10.99 ms, p99 1 ms */
	for (i = 0; i < 99; i++)
		v[i] = 1000000;
	v[99] = 1000000000;
	build(&f, v, 100);
	p99 = prof_snap_quantile(&f.s, &f.n, 0.99);
	assert_true(p99 >= 1000000 && p99 < 1250000);
	assert_true(p99 < f.n.ticks / f.n.calls);
	assert_int_equal(prof_snap_quantile(&f.s, &f.n, 1.0), 1000000000);
}

/* random distributions: every estimate inside the exact bounds and near
 * the exact order statistic */
static void test_random(void **state)
{
	static __u64 v[2000], sorted[2000];
	static const double qs[] = { 0.5, 0.9, 0.99 };
	unsigned int seed = 12345, round;
	struct fixture f;

	(void)state;
	for (round = 0; round < 500; round++) {
		size_t n = 1 + rand_r(&seed) % 2000, i, k;
		__u64 base = 100 + (__u64)(rand_r(&seed) % 100000000), prev = 0;
		unsigned int spread = 1 + (unsigned int)(rand_r(&seed) % 1000);

		for (i = 0; i < n; i++) {
			/* clustered, with a rare far tail */
			v[i] = base + (__u64)(rand_r(&seed) % spread) * (base / 1000 + 1);
			if (rand_r(&seed) % 200 == 0)
				v[i] *= 50;
		}
		build(&f, v, n);
		memcpy(sorted, v, n * sizeof(*v));
		qsort(sorted, n, sizeof(*sorted), cmp_u64);
		for (k = 0; k < 3; k++) {
			__u64 est = prof_snap_quantile(&f.s, &f.n, qs[k]);
			__u64 ex = exact(sorted, n, qs[k]);
			size_t r = (size_t)(qs[k] * (double)n);

			if ((double)r < qs[k] * (double)n)
				r++;
			if (r < 1)
				r = 1;
			if (est > f.n.max || est < prev)
				fail_msg("round %u q %.2f: %llu outside [%llu, max %llu]", round,
					 qs[k], (unsigned long long)est, (unsigned long long)prev,
					 (unsigned long long)f.n.max);
			/* within a bucket (a factor 1.25) of the truth */
			if ((double)est > 1.25 * (double)ex || 1.25 * (double)est < (double)ex)
				fail_msg("round %u q %.2f: %llu, exact %llu", round, qs[k],
					 (unsigned long long)est, (unsigned long long)ex);
			/* what the total and max allow */
			if (r * est + (n - r) * f.n.max + r < f.n.ticks)
				fail_msg("round %u q %.2f: %llu below the total's bound", round,
					 qs[k], (unsigned long long)est);
			if ((n - r + 1) * est > f.n.ticks)
				fail_msg("round %u q %.2f: %llu above the total's bound", round,
					 qs[k], (unsigned long long)est);
			prev = est;
		}
	}
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_bucket_bounds), cmocka_unit_test(test_tight),
	  cmocka_unit_test(test_skewed), cmocka_unit_test(test_random))
