// SPDX-License-Identifier: MIT
/*
 * test_timing.c - durations come out right: nested zones around busy-waits
 * of known length give total and self within 2% of what the test measured
 * itself with CLOCK_MONOTONIC; the reader's p50/p90/p99 of a zone driven
 * with a known distribution are within 12.5% of the exact quantiles; the
 * histogram's bucket boundaries (each one, exactly) and the quantile
 * arithmetic, on their own; a diff against a baseline (a reset) keeps the
 * later calls' total and max; a call past the fast path's limit (and
 * under a day) counts as any other.
 */
#include <math.h>
#include <pthread.h>

#include "fastpath.h"
#include "prof.h"

#define MS 1000000ull
#define US 1000ull

static void assert_within(double got, double want, double tol, const char *what)
{
	double err = fabs(got - want) / want;

	if (err > tol)
		fail_msg("%s: got %.0f ns, want %.0f ns (%.2f%% off, limit %.1f%%)", what, got,
			 want, 100 * err, 100 * tol);
}

static void *in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t th;
	void *ret;

	assert_int_equal(pthread_create(&th, NULL, fn, arg), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	return ret;
}

/* --- nested busy-waits ------------------------------------------------- */

#define NEST_ROUNDS 5

struct nest {
	__u32 tid;
	__u64 outer_ns, inner_ns; /* measured by the test, inside the zones */
	/* the longest inner call can be no shorter than the longest wait
	 * measured inside it, and no longer than its round less the two
	 * waits around it (at least 30 ms): whatever the load */
	__u64 inner_max_ns, round_less_ns;
};

static void *nest_main(void *arg)
{
	struct nest *r = arg;
	int i;

	r->tid = test_gettid();
	for (i = 0; i < NEST_ROUNDS; i++) {
		PROF_USDT(timing_outer);
		__u64 t0 = test_now_ns(), t1;

		test_spin(20 * MS);
		{
			PROF_USDT(timing_inner);
			__u64 i0 = test_now_ns();

			test_spin(30 * MS);
			i0 = test_now_ns() - i0;
			r->inner_ns += i0;
			if (i0 > r->inner_max_ns)
				r->inner_max_ns = i0;
		}
		test_spin(10 * MS);
		t1 = test_now_ns();
		r->outer_ns += t1 - t0;
		if (t1 - t0 - 30 * MS > r->round_less_ns)
			r->round_less_ns = t1 - t0 - 30 * MS;
	}
	return NULL;
}

static void test_nested_total_self(void **state)
{
	struct nest r = { 0 };
	struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	const struct prof_snap_node *o, *in;
	__u32 oi, ii;

	(void)state;
	in_thread(nest_main, &r);
	t = test_own_thread(&s, r.tid);
	oi = test_child_calls(s, t, PROF_NODE_ROOT, "timing_outer", NEST_ROUNDS);
	ii = test_child_calls(s, t, oi, "timing_inner", NEST_ROUNDS);
	o = &t->nodes[oi];
	in = &t->nodes[ii];
	/* the waits really were as long as asked */
	assert_true(r.inner_ns >= NEST_ROUNDS * 30 * MS);
	assert_true(r.outer_ns >= NEST_ROUNDS * 60 * MS);

	assert_within((double)prof_snap_ns(s, o->ticks), (double)r.outer_ns, 0.02, "outer total");
	assert_within((double)prof_snap_ns(s, in->ticks), (double)r.inner_ns, 0.02, "inner total");
	assert_within((double)prof_snap_ns(s, prof_snap_self(o)), (double)(r.outer_ns - r.inner_ns),
		      0.02, "outer self");
	assert_within((double)prof_snap_ns(s, prof_snap_self(in)), (double)r.inner_ns, 0.02,
		      "inner self");
	/* the longest single call: an inner one is one wait of 30 ms, and
	 * within what the test measured of it (the clocks agree to 2%, not
	 * to the nanosecond; a preempted call is longer, not wrong) */
	assert_true(prof_snap_ns(s, in->max) >= 30 * MS * 98 / 100);
	if (prof_snap_ns(s, in->max) < r.inner_max_ns * 98 / 100 ||
	    prof_snap_ns(s, in->max) > r.round_less_ns * 102 / 100)
		fail_msg("inner max: %llu ns, the longest wait inside it %llu ns, its round "
			 "less the waits around it %llu ns",
			 (unsigned long long)prof_snap_ns(s, in->max),
			 (unsigned long long)r.inner_max_ns, (unsigned long long)r.round_less_ns);
	prof_snapshot__destroy(s);
}

/* --- quantiles of a known distribution --------------------------------- */

#define QN 200

struct quant {
	__u32 tid;
	__u64 d[QN]; /* each call as the test measured it */
};

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static void *quant_main(void *arg)
{
	struct quant *q = arg;
	__u64 want[QN];
	unsigned i, seed = 12345;

	q->tid = test_gettid();
	/* 120 x 100 us, 76 x 400 us, 4 x 2 ms, in a fixed shuffled order */
	for (i = 0; i < QN; i++)
		want[i] = i < 120 ? 100 * US : i < 196 ? 400 * US : 2 * MS;
	for (i = QN - 1; i > 0; i--) {
		unsigned j;
		__u64 tmp;

		seed = seed * 1103515245u + 12345u;
		j = (seed >> 8) % (i + 1);
		tmp = want[i];
		want[i] = want[j];
		want[j] = tmp;
	}
	for (i = 0; i < QN; i++) {
		PROF_USDT(timing_dist);
		__u64 a = test_now_ns();

		test_spin(want[i]);
		q->d[i] = test_now_ns() - a;
	}
	return NULL;
}

/* the exact q-quantile with the reader's rank rule: the ceil(q n)-th smallest */
static __u64 exact_quantile(const __u64 *sorted, unsigned n, double q)
{
	unsigned rank = (unsigned)ceil(q * n);

	return sorted[(rank ? rank : 1) - 1];
}

static void test_percentiles(void **state)
{
	static struct quant q;
	static const double qs[] = { 0.5, 0.9, 0.99, 1.0 };
	struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	const struct prof_snap_node *n;
	unsigned i;

	(void)state;
	in_thread(quant_main, &q);
	qsort(q.d, QN, sizeof(q.d[0]), cmp_u64);
	t = test_own_thread(&s, q.tid);
	n = test_node(s, t, "timing_dist");
	assert_non_null(n);
	assert_int_equal(n->calls, QN);
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		char what[32];

		snprintf(what, sizeof(what), "p%g", qs[i] * 100);
		assert_within((double)prof_snap_ns(s, prof_snap_quantile(s, n, qs[i])),
			      (double)exact_quantile(q.d, QN, qs[i]), 0.125, what);
	}
	/* the clusters are far apart: a wrong rank lands 4x off, not 12% */
	assert_true(prof_snap_ns(s, prof_snap_quantile(s, n, 0.5)) < 200 * US);
	assert_true(prof_snap_ns(s, prof_snap_quantile(s, n, 0.99)) > 1 * MS);
	/* the copy starts at the lowest bucket used, far above 0, and holds
	 * every call */
	assert_true(n->hist_lo > 40 && prof_snap_hist(s, n)[0] > 0);
	assert_int_equal(test_hist_sum(s, n), QN);
	/* read lazily, the quantiles come from the segment's buckets, read
	 * from the top: the same as the copy's */
	{
		struct prof_snapshot *z = test_snapshot_opts(0, PROF_READ_LAZY);
		struct prof_snap_iter it;
		const struct prof_snap_thread *zt;
		const struct prof_snap_node *zn;

		assert_non_null(z);
		it = PROF_SNAP_ITER(z, q.tid);
		zt = prof_snap_next(&it);
		assert_non_null(zt);
		zn = test_node(z, zt, "timing_dist");
		assert_non_null(zn);
		assert_int_equal(zn->calls, QN);
		for (i = 0; i < 3; i++)
			assert_int_equal(prof_snap_quantile(z, zn, qs[i]),
					 prof_snap_quantile(s, n, qs[i]));
		prof_snapshot__destroy(z);
	}
	prof_snapshot__destroy(s);
}

/* --- the histogram's arithmetic ---------------------------------------- */

static void test_hist_buckets(void **state)
{
	unsigned b;
	__u64 v;

	(void)state;
	/* below 4 ticks each value its own bucket */
	for (v = 0; v < 4; v++) {
		assert_int_equal(prof_hist_bucket(v), v);
		assert_int_equal(prof_hist_lo((unsigned)v), v);
	}
	for (b = 0; b + 1 < PROF_HIST_BUCKETS; b++) {
		__u64 lo = prof_hist_lo(b), hi = prof_hist_lo(b + 1);

		/* contiguous, increasing, each value of [lo, hi) in b */
		assert_true(hi > lo);
		assert_int_equal(prof_hist_bucket(lo), b);
		assert_int_equal(prof_hist_bucket(hi - 1), b);
		assert_int_equal(prof_hist_bucket(hi), b + 1);
		assert_int_equal(prof_hist_bucket(lo + (hi - lo) / 2), b);
		/* log-linear: no bucket wider than a factor 1.25 */
		if (b >= 4)
			assert_true((double)hi <= 1.25 * (double)lo);
	}
	/* the last bucket takes everything above */
	assert_int_equal(prof_hist_bucket(prof_hist_lo(PROF_HIST_BUCKETS - 1)),
			 PROF_HIST_BUCKETS - 1);
	assert_int_equal(prof_hist_bucket(1ull << 62), PROF_HIST_BUCKETS - 1);
	assert_int_equal(prof_hist_bucket(~0ull), PROF_HIST_BUCKETS - 1);
	/* spot checks: 4..7 are exact, 8 and 9 share a bucket, 10 does not */
	assert_int_equal(prof_hist_bucket(4), 4);
	assert_int_equal(prof_hist_bucket(7), 7);
	assert_int_equal(prof_hist_bucket(8), prof_hist_bucket(9));
	assert_int_not_equal(prof_hist_bucket(9), prof_hist_bucket(10));
	assert_int_equal(prof_hist_lo(prof_hist_bucket(1000000)), 917504);
}

/*
 * Every bucket boundary, from the definition and not from prof_hist_lo:
 * 0..3 each their own, then four buckets per power of two, the k-th of
 * the octave [2^o, 2^(o+1)) starting at 2^o + k * 2^(o-2).  An off-by-one
 * anywhere moves a boundary by a whole bucket, which the percentile test's
 * 12.5% tolerance cannot tell from noise.
 */
static void test_hist_boundaries(void **state)
{
	static const struct {
		__u64 lo;
		unsigned b;
	} first[] = { { 0, 0 },	    { 1, 1 },	  { 2, 2 },	{ 3, 3 },    { 4, 4 },	 { 5, 5 },
		      { 6, 6 },	    { 7, 7 },	  { 8, 8 },	{ 10, 9 },   { 12, 10 }, { 14, 11 },
		      { 16, 12 },   { 20, 13 },	  { 24, 14 },	{ 28, 15 },  { 32, 16 }, { 40, 17 },
		      { 1024, 36 }, { 1280, 37 }, { 1536, 38 }, { 1792, 39 } };
	unsigned o, k, b, n = 0;
	__u64 v;

	(void)state;
	for (b = 0; b < sizeof(first) / sizeof(first[0]); b++) {
		assert_int_equal(prof_hist_bucket(first[b].lo), first[b].b);
		assert_int_equal(prof_hist_lo(first[b].b), first[b].lo);
		if (first[b].lo)
			assert_int_equal(prof_hist_bucket(first[b].lo - 1), first[b].b - 1);
	}
	for (o = 2;; o++) {
		for (k = 0; k < 4; k++) {
			b = 4 * (o - 1) + k;
			if (b >= PROF_HIST_BUCKETS)
				goto done;
			v = (1ull << o) + ((__u64)k << (o - 2));
			assert_int_equal(prof_hist_lo(b), v);
			assert_int_equal(prof_hist_bucket(v), b);
			assert_int_equal(prof_hist_bucket(v - 1), b - 1);
			n++;
		}
	}
done:
	/* every bucket above the exact ones was checked */
	assert_int_equal(n, PROF_HIST_BUCKETS - 4);
	/* the last bucket starts at 7 * 2^46 and takes everything above */
	assert_int_equal(prof_hist_lo(PROF_HIST_BUCKETS - 1), 7ull << 46);
	assert_int_equal(prof_hist_bucket((8ull << 46) - 1), PROF_HIST_BUCKETS - 1);
	assert_int_equal(prof_hist_bucket(8ull << 46), PROF_HIST_BUCKETS - 1);
}

/* a segment image of one thread with one zone, counts in chosen buckets */
static void *synthetic_image(const unsigned *buckets, const __u32 *counts, unsigned nb, __u64 max,
			     size_t *len)
{
	static struct prof_snap_site site = { .name = "synth", .func = "f", .file = "x.c" };
	struct prof_snap_node nodes[3];
	struct prof_snap_thread th;
	struct prof_snapshot s;
	__u32 hist[PROF_HIST_BUCKETS] = { 0 };
	__u64 calls = 0, ticks = 0;
	unsigned i;
	void *buf;

	for (i = 0; i < nb; i++) {
		hist[buckets[i]] += counts[i];
		calls += counts[i];
		ticks += counts[i] * prof_hist_lo(buckets[i]);
	}
	memset(nodes, 0, sizeof(nodes));
	nodes[0].site = nodes[1].site = PROF_SITE_NONE;
	nodes[2].site = 0;
	nodes[2].calls = calls;
	nodes[2].ticks = ticks;
	nodes[2].max = max;
	nodes[2].hist_n = PROF_HIST_BUCKETS;
	nodes[2].allocs = 7;
	memset(&th, 0, sizeof(th));
	th.tid = 4242;
	th.state = PROF_SLAB_EXITED;
	th.ksched_slot = PROF_NO_SLOT;
	strcpy(th.name, "synthetic");
	th.nnodes = 3;
	th.nodes = nodes;
	memset(&s, 0, sizeof(s));
	s.pid = 4242;
	s.clock = PROF_CLOCK_MONO;
	s.tick_hz = 1000000000ull;
	s.nsites = 1;
	s.nthreads = 1;
	s.sites = &site;
	s.threads = &th;
	s.hist = hist;
	s.nhist = PROF_HIST_BUCKETS;
	assert_int_equal(prof_snapshot__write(&s, &buf, len), 0);
	return buf;
}

/* the same, read back */
static struct prof_snapshot *synthetic(const unsigned *buckets, const __u32 *counts, unsigned nb,
				       __u64 max)
{
	struct prof_snapshot *out = NULL;
	__u64 calls = 0, ticks = 0;
	unsigned i;
	size_t len;
	void *buf = synthetic_image(buckets, counts, nb, max, &len);

	for (i = 0; i < nb; i++) {
		calls += counts[i];
		ticks += counts[i] * prof_hist_lo(buckets[i]);
	}
	assert_int_equal(prof_snapshot__read(buf, len, &out), 0);
	free(buf);
	assert_int_equal(out->nthreads, 1);
	assert_int_equal(out->threads[0].nnodes, 3);
	assert_int_equal(out->threads[0].nodes[2].calls, calls);
	assert_int_equal(out->threads[0].nodes[2].ticks, ticks);
	assert_int_equal(out->threads[0].nodes[2].allocs, 7);
	assert_string_equal(out->threads[0].name, "synthetic");
	assert_string_equal(out->sites[0].name, "synth");
	return out;
}

static __u64 midpoint(unsigned b)
{
	return (__u64)sqrt((double)prof_hist_lo(b) * (double)prof_hist_lo(b + 1));
}

static void test_quantile_synthetic(void **state)
{
	static const unsigned bk[] = { 40, 60, 80 };
	static const __u32 cnt[] = { 50, 49, 1 };
	static const unsigned small[] = { 2, 5 };
	static const __u32 small_cnt[] = { 10, 10 };
	struct prof_snapshot *s;
	const struct prof_snap_node *n;
	__u64 v;

	(void)state;
	s = synthetic(bk, cnt, 3, prof_hist_lo(81) - 1);
	n = &s->threads[0].nodes[2];
	/* rank 50 of 100 is the last value in bucket 40; rank 51 the first in 60 */
	v = prof_snap_quantile(s, n, 0.5);
	assert_true(v >= prof_hist_lo(40) && v < prof_hist_lo(41));
	assert_true(llabs((long long)v - (long long)midpoint(40)) <=
		    (long long)(midpoint(40) / 100));
	v = prof_snap_quantile(s, n, 0.51);
	assert_true(v >= prof_hist_lo(60) && v < prof_hist_lo(61));
	v = prof_snap_quantile(s, n, 0.99);
	assert_true(v >= prof_hist_lo(60) && v < prof_hist_lo(61));
	v = prof_snap_quantile(s, n, 1.0);
	assert_true(v >= prof_hist_lo(80) && v < prof_hist_lo(81));
	/* the midpoint is within 12.5% of anything in its bucket */
	assert_true((double)v <= 1.125 * (double)prof_hist_lo(80));
	assert_true((double)v >= (double)(prof_hist_lo(81) - 1) / 1.125);
	/* nothing recorded: 0 */
	assert_int_equal(prof_snap_quantile(s, &s->threads[0].nodes[0], 0.5), 0);
	prof_snapshot__destroy(s);

	/* a max inside the top bucket clamps the answer */
	s = synthetic(bk, cnt, 3, prof_hist_lo(80) + 1);
	n = &s->threads[0].nodes[2];
	assert_int_equal(prof_snap_quantile(s, n, 1.0), prof_hist_lo(80) + 1);
	prof_snapshot__destroy(s);

	/* small values are exact */
	s = synthetic(small, small_cnt, 2, 5);
	n = &s->threads[0].nodes[2];
	assert_int_equal(prof_snap_quantile(s, n, 0.5), 2);
	assert_int_equal(prof_snap_quantile(s, n, 0.9), 5);
	assert_int_equal(prof_snap_quantile(s, n, 0.0), 2);
	prof_snapshot__destroy(s);
}

/*
 * A reset is a diff against a baseline: long calls before it, short ones
 * after.  Since the baseline the node has the short calls' count, total
 * and max, not the long ones' (the max comes from the top bucket that
 * gained calls, so it is within that bucket).
 */
static void test_diff_total_max(void **state)
{
	static const unsigned before_b[] = { 90 };
	static const __u32 before_c[] = { 10 };
	static const unsigned after_b[] = { 90, 50 };
	static const __u32 after_c[] = { 10, 5 };
	struct prof_snapshot *base, *s;
	const struct prof_snap_node *n;
	const __u32 *h;
	__u64 long_max = prof_hist_lo(90) + 7;
	unsigned k;

	(void)state;
	base = synthetic(before_b, before_c, 1, long_max);
	s = synthetic(after_b, after_c, 2, long_max);
	assert_int_equal(prof_snapshot__diff(s, base), 0);
	n = &s->threads[0].nodes[2];
	assert_int_equal(n->calls, 5);
	assert_int_equal(n->ticks, 5 * prof_hist_lo(50));
	assert_true(n->max >= prof_hist_lo(50) && n->max < prof_hist_lo(51));
	h = prof_snap_hist(s, n);
	assert_non_null(h);
	for (k = 0; k < n->hist_n; k++)
		assert_int_equal(h[k], n->hist_lo + k == 50 ? 5 : 0);
	/* the root's total is its children's: the short calls only */
	assert_int_equal(s->threads[0].nodes[0].ticks, 5 * prof_hist_lo(50));
	/* nothing since the baseline: no calls, no time, no max */
	prof_snapshot__destroy(s);
	s = synthetic(before_b, before_c, 1, long_max);
	assert_int_equal(prof_snapshot__diff(s, base), 0);
	n = &s->threads[0].nodes[2];
	assert_int_equal(n->calls, 0);
	assert_int_equal(n->ticks, 0);
	assert_int_equal(n->max, 0);
	prof_snapshot__destroy(s);
	prof_snapshot__destroy(base);
}

/*
 * Readers take a node's buckets from the top, down to the lowest its calls
 * reach: the copy (full reads) and the lazy read's quantiles.  On random
 * histograms (few buckets, rank boundaries, bucket 0, the last bucket)
 * both must find the bucket a plain bottom-up walk finds.
 */
static void test_quantiles_from_top(void **state)
{
	static const double qs[] = { 0.5, 0.9, 0.99 };
	unsigned seed = 0xbeef, iter;

	(void)state;
	for (iter = 0; iter < 2000; iter++) {
		unsigned bk[6], nb, i, k, lo = PROF_HIST_BUCKETS, hi = 0;
		__u32 cnt[6], h[PROF_HIST_BUCKETS] = { 0 };
		struct prof_snapshot *full, *lazy;
		struct prof_snap_iter it;
		const struct prof_snap_node *fn, *ln;
		__u64 calls = 0;
		size_t len;
		void *img;

		seed = seed * 1103515245u + 12345u;
		nb = 1 + (seed >> 16) % 6;
		for (i = 0; i < nb; i++) {
			seed = seed * 1103515245u + 12345u;
			bk[i] = (seed >> 8) % 4 ? (seed >> 12) % PROF_HIST_BUCKETS
						: (iter % 2 ? 0 : PROF_HIST_BUCKETS - 1);
			seed = seed * 1103515245u + 12345u;
			cnt[i] = (seed >> 8) % 3 ? 1 + (seed >> 12) % 7 : 1 + (seed >> 12) % 300;
			h[bk[i]] += cnt[i];
			calls += cnt[i];
			lo = bk[i] < lo ? bk[i] : lo;
			hi = bk[i] > hi ? bk[i] : hi;
		}
		/* a max at the top of its bucket: no answer is clamped out of it */
		img = synthetic_image(bk, cnt, nb, prof_hist_lo(hi + 1) - 1, &len);
		assert_int_equal(prof_snapshot__read(img, len, &full), 0);
		assert_int_equal(prof_snapshot__read_opts(img, len, PROF_READ_LAZY, &lazy), 0);
		it = PROF_SNAP_ITER(lazy, 0);
		assert_ptr_equal(prof_snap_next(&it), &lazy->threads[0]);
		fn = &full->threads[0].nodes[2];
		ln = &lazy->threads[0].nodes[2];
		/* the copy: exactly the buckets from the lowest used to the max's */
		assert_int_equal(fn->hist_lo, lo);
		assert_int_equal(fn->hist_n, hi - lo + 1);
		for (i = 0; i < fn->hist_n; i++)
			assert_int_equal(prof_snap_hist(full, fn)[i], h[lo + i]);
		for (k = 0; k < 3; k++) {
			__u64 rank = (__u64)(qs[k] * (double)calls), acc = 0;
			unsigned b;

			if ((double)rank < qs[k] * (double)calls)
				rank++;
			for (b = 0; acc + h[b] < rank; b++)
				acc += h[b];
			if (prof_hist_bucket(prof_snap_quantile(full, fn, qs[k])) != b ||
			    prof_hist_bucket(prof_snap_quantile(lazy, ln, qs[k])) != b)
				fail_msg("iteration %u: p%g in bucket %u (full) / %u (lazy), "
					 "want %u",
					 iter, qs[k] * 100,
					 prof_hist_bucket(prof_snap_quantile(full, fn, qs[k])),
					 prof_hist_bucket(prof_snap_quantile(lazy, ln, qs[k])), b);
		}
		prof_snapshot__destroy(lazy);
		prof_snapshot__destroy(full);
		free(img);
	}
}

/*
 * A read racing exits can find more counts than the calls it loaded (an
 * exit adds to calls before its bucket).  The copy of a full read keeps
 * every count, the lowest bucket too: a diff must not find it later.
 */
static void test_copy_keeps_racing_counts(void **state)
{
	static const unsigned bk[] = { 17, 44 };
	static const __u32 cnt[] = { 1, 10 };
	struct prof_snapshot *s;
	const struct prof_snap_node *n;
	struct prof_seg_hdr *h;
	struct prof_node *node;
	size_t len;
	void *img = synthetic_image(bk, cnt, 2, prof_hist_lo(45) - 1, &len);

	(void)state;
	h = img;
	node = (struct prof_node *)((char *)img + h->slabs_off + PROF_SLAB_HDR_SIZE) + 2;
	assert_int_equal(node->calls, 11);
	node->calls = 10; /* the eleventh exit counted, its call not yet seen */
	assert_int_equal(prof_snapshot__read(img, len, &s), 0);
	n = &s->threads[0].nodes[2];
	assert_int_equal(n->hist_lo, 17);
	assert_int_equal(n->hist_n, 44 - 17 + 1);
	assert_int_equal(prof_snap_hist(s, n)[0], 1);
	assert_int_equal(prof_snap_hist(s, n)[44 - 17], 10);
	prof_snapshot__destroy(s);
	free(img);
}

/* --- calls the fast path leaves to __prof_anomaly ----------------------- */

#define LONG_CALLS 3

/*
 * A call longer than the fast path's limit (PROF_EV_DUR_MAX ticks, some
 * 3.5 minutes, when a day is more) and under a day counts as the fast path
 * counts: not an anomaly, its time, max and bucket.  The test lowers its
 * own thread's limit to 1000 ticks, far below its 1 ms calls.
 */
static void *long_main(void *arg)
{
	struct timespec ts = { 0, (long)MS };
	__u64 saved;
	int i;

	*(__u32 *)arg = test_gettid();
	{
		PROF_USDT(timing_long_first); /* the thread's slab, and its limit */
	}
	saved = __prof_tls.limit;
	__prof_tls.limit = 1000;
	for (i = 0; i < LONG_CALLS; i++) {
		PROF_USDT(timing_long);
		nanosleep(&ts, NULL);
	}
	__prof_tls.limit = saved;
	return NULL;
}

static void test_over_fast_limit(void **state)
{
	const struct prof_snap_thread *t;
	const struct prof_snap_node *n;
	struct prof_snapshot *s;
	__u32 tid;

	(void)state;
	in_thread(long_main, &tid);
	t = test_own_thread(&s, tid);
	n = test_node(s, t, "timing_long");
	assert_non_null(n);
	assert_int_equal(n->calls, LONG_CALLS);
	assert_int_equal(n->anomalies, 0);
	assert_true(prof_snap_ns(s, n->ticks) >= LONG_CALLS * MS);
	assert_true(prof_snap_ns(s, n->max) >= MS);
	assert_int_equal(test_hist_sum(s, n), LONG_CALLS);
	prof_snapshot__destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_keeps_racing_counts),
		cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_hist_boundaries),
		cmocka_unit_test(test_diff_total_max),
		cmocka_unit_test(test_quantile_synthetic),
		cmocka_unit_test(test_quantiles_from_top),
		cmocka_unit_test(test_nested_total_self),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_over_fast_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
