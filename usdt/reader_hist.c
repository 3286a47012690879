// SPDX-License-Identifier: MIT
/*
 * reader_hist.c - histograms: a node's buckets gathered from the slab (a
 * pool, reading only the rows its block marks) and reduced to quantiles.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "reader_int.h"

/* the highest row at or below b that a block's row map marks, or -1 */
static int row_below(const __u64 *map, int b)
{
	while (b >= 0) {
		__u64 m = LD(&map[b / 64]) & (~0ull >> (63 - b % 64));

		if (m)
			return b / 64 * 64 + 63 - __builtin_clzll(m);
		b = b / 64 * 64 - 1;
	}
	return -1;
}

/*
 * Node's histogram into the pool: the rows its block's map marks, from
 * hi (its max's bucket) down, never the others (most of a histogram, in
 * pages the writer may never have touched).  The copy runs from the
 * lowest non-empty bucket to hi; bucket lo + k lands at pool[*off + k].
 */
PROF_HIDDEN int pool_add(struct hist_pool *p, const __u32 *hist, const __u64 *map, unsigned int shift,
		    __u32 node, __u32 hi, __u32 *lo, __u32 *nb, __u64 *off)
{
	__u32 row[PROF_HIST_BUCKETS], cnt[PROF_HIST_BUCKETS], low = hi, i, n, k, nv = 0;
	__u32 *v;
	int b;

	/*
	 * Every marked row at or below the max's: an exit adds to calls before
	 * its bucket, so a read racing exits can find more counts than the calls
	 * it loaded, and stopping at calls would drop the lowest ones (a diff
	 * would count them later, as calls they were not).
	 */
	for (b = row_below(map, (int)hi); b >= 0; b = row_below(map, b - 1)) {
		__u32 c = LD(&hist[prof_hist_index(node, (unsigned int)b, shift)]);

		if (!c)
			continue;
		row[nv] = (__u32)b;
		cnt[nv++] = c;
		low = (__u32)b;
	}
	n = hi - low + 1;
	v = prof_grow_to(p->v, p->n + n, &p->cap, sizeof(*v), 4096);
	if (!v)
		return -ENOMEM;
	p->v = v;
	*off = p->n;
	*lo = low;
	*nb = n;
	for (i = 0; i < n; i++)
		p->v[p->n + i] = 0;
	for (k = 0; k < nv; k++)
		p->v[p->n + row[k] - low] = cnt[k];
	p->n += n;
	return 0;
}

/* floor(sqrt(v)), without libm */
static __u64 isqrt(__u64 v)
{
	__u64 r = v, x;

	if (v < 2)
		return v;
	x = v / 2 + 1;
	while (x < r) {
		r = x;
		x = (x + v / x) / 2;
	}
	return r;
}

/* the value a quantile reports for bucket b: exact buckets below 8
 * ticks, else the geometric midpoint */
static __u64 bucket_mid(__u32 b)
{
	__u64 lo = prof_hist_lo(b), hi = prof_hist_lo(b + 1);
	unsigned int sh = 0;

	if (hi - lo <= 1)
		return lo;
	/* keep lo * hi in 64 bits; the lost low bits are far below 1% */
	while (hi > (1ull << 31)) {
		lo >>= 1;
		hi >>= 1;
		sh++;
	}
	return isqrt(lo * hi) << sh;
}

/* bucket_mid of every bucket, filled before main (isqrt divides) */
static __u64 bucket_mids[PROF_HIST_BUCKETS + 1];

__attribute__((constructor)) static void bucket_mids_init(void)
{
	__u32 b;

	for (b = 0; b <= PROF_HIST_BUCKETS; b++)
		bucket_mids[b] = bucket_mid(b);
}

/* never above the max */
static __u64 bucket_value(__u32 b, __u64 max)
{
	__u64 v = b <= PROF_HIST_BUCKETS ? bucket_mids[b] : bucket_mid(b);

	return max && v > max ? max : v;
}

/*
 * The q[k]-quantiles (q ascending) of buckets [lo, lo + nb) held in h,
 * whose sum is total, into out: one pass whatever nq.  0 if the histogram
 * is empty (out untouched), else 1.
 */
static int hist_quantiles_sum(const __u32 *h, __u32 lo, __u32 nb, __u64 total, __u64 max,
			      const double *q, unsigned int nq, __u64 *out)
{
	__u64 rank, acc;
	__u32 i;
	unsigned int k;

	if (!total)
		return 0;
	i = 0;
	acc = h[0];
	for (k = 0; k < nq; k++) {
		rank = (__u64)(q[k] * (double)total);
		if ((double)rank < q[k] * (double)total)
			rank++;
		if (rank < 1)
			rank = 1;
		/* the first bucket where the running count reaches the rank */
		while (acc < rank && i + 1 < nb)
			acc += h[++i];
		out[k] = bucket_value(lo + i, max);
	}
	return 1;
}

static int hist_quantiles(const __u32 *h, __u32 lo, __u32 nb, __u64 max, const double *q,
			  unsigned int nq, __u64 *out)
{
	__u64 total = 0;
	__u32 i;

	for (i = 0; i < nb; i++)
		total += h[i];
	return hist_quantiles_sum(h, lo, nb, total, max, q, nq, out);
}

/*
 * The keep_q quantiles of node i, read in place from the top: the bucket
 * of its max down to the median's, never the empty buckets below (most of
 * a histogram).  Ranks count from the node's calls, which equal its
 * buckets' sum but for exits racing the read: then a quantile moves by
 * those few calls.  The same buckets the bottom-up walk finds otherwise.
 */
PROF_HIDDEN void hist_quantiles_top(const __u32 *hist, const __u64 *map, unsigned int shift, __u32 node,
			       __u32 hi, __u64 calls, __u64 max, __u64 *out)
{
	__u64 need[PROF_SNAP_NQUANT], acc = 0;
	int k = PROF_SNAP_NQUANT - 1, b;
	__u32 low = hi;

	memset(out, 0, PROF_SNAP_NQUANT * sizeof(*out));
	if (!calls)
		return;
	/* the rank from the bottom, as hist_quantiles_sum; from the top: the
	 * bucket where the count from the top reaches calls - rank + 1 */
	for (int j = 0; j < PROF_SNAP_NQUANT; j++) {
		__u64 rank = (__u64)(keep_q[j] * (double)calls);

		if ((double)rank < keep_q[j] * (double)calls)
			rank++;
		if (rank < 1)
			rank = 1;
		need[j] = rank <= calls ? calls - rank + 1 : 1;
	}
	/* the rows the block's map marks: the others are zero for every node */
	for (b = row_below(map, (int)hi); b >= 0 && k >= 0; b = row_below(map, b - 1)) {
		__u32 c = LD(&hist[prof_hist_index(node, (unsigned int)b, shift)]);

		if (c)
			low = (__u32)b;
		acc += c;
		while (k >= 0 && acc >= need[k])
			out[k--] = bucket_value((__u32)b, max);
	}
	/* fewer counts than calls (a racing exit): the lowest bucket seen */
	for (; k >= 0 && acc; k--)
		out[k] = bucket_value(low, max);
}

/* the reference conversion: what every fast path below must equal */
static __u64 ns_ld(__u64 ticks, __u64 hz)
{
	long double ns = (long double)ticks * 1e9L / (long double)hz;

	/* a slow clock and a huge count: saturate rather than wrap */
	return ns < 18446744073709551615.0L ? (__u64)ns : ~0ull;
}

/*
 * ticks * 1e9 / tick_hz, truncated, exactly as ns_ld computes it in long
 * double, but in integers when that is provably the same: the product is
 * exact in 64 bits, and the exact quotient q + r/hz is far enough below
 * q + 1 that rounding it to 64 bits of mantissa cannot reach q + 1 (it
 * never falls below q).  Otherwise, rarely, the long double itself.
 */
__u64 prof_snap_ns(const struct prof_snapshot *s, __u64 ticks)
{
	__u64 hz = s->tick_hz, p, q, d;
	unsigned int e;

	if (hz == 1000000000ull)
		return ticks;
	if (!hz || ticks > ~0ull / 1000000000ull)
		return ns_ld(ticks, hz);
	p = ticks * 1000000000ull;
	q = p / hz;
	d = hz - (p - q * hz); /* (q + 1 - exact) * hz, > 0 */
	if (!q)
		return 0;
	/* long doubles in [q, q + 1) are spaced 2^(e - 63): rounding reaches
	 * q + 1 only if d / hz <= 2^(e - 64); refuse anything within twice
	 * that (for q below 2^26, nothing: hz is below 2^37) */
	e = 63 - (unsigned int)__builtin_clzll(q);
	if (d > (hz >> (63 - e)))
		return q;
	return ns_ld(ticks, hz);
}

/*
 * A bucket's midpoint can sit below every value in it: 100 calls of 16.08
 * ms (max 16.1) fall in [12.9, 16.1) ms, whose midpoint 14.4 ms would be
 * printed as p99 beside the exact avg of 16.08.  The exact calls, total
 * and max bound the q-quantile v (rank r of n calls, total T, max M): the
 * r smallest are at most v and the rest at most M, so T <= r v + (n - r) M;
 * the n - r + 1 from rank r up are at least v, so T >= (n - r + 1) v.  The
 * estimate is held inside those bounds (and under M): a percentile never
 * contradicts the avg and max it sits beside.
 */
static __u64 quantile_bound(const struct prof_snap_node *n, double q, __u64 v)
{
	__u64 calls = n->calls, total = prof_snap_closed(n), max = n->max, r, lo, hi;

	if (!calls)
		return v;
	r = (__u64)(q * (double)calls);
	if ((double)r < q * (double)calls)
		r++;
	if (r < 1)
		r = 1;
	if (r > calls)
		r = calls;
	/* (n - r) M may overflow only for absurd totals: then no lower bound */
	lo = 0;
	if (!max || (calls - r) <= UINT64_MAX / max) {
		__u64 rest = (calls - r) * max;

		lo = total > rest ? (total - rest) / r : 0;
	}
	hi = total / (calls - r + 1);
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return max && v > max ? max : v;
}

__u64 prof_snap_quantile(const struct prof_snapshot *s, const struct prof_snap_node *n, double q)
{
	const __u32 *h;
	__u64 v = 0;
	unsigned int k;

	if (n->flags & PROF_SNAP_F_QUANT) {
		/* a lazy read kept these three, not the histogram */
		const __u64 *quant = s->lazy ? s->lazy->tab.quant : NULL;

		if (!quant)
			return 0;
		for (k = 0; k < PROF_SNAP_NQUANT; k++)
			if (q == keep_q[k])
				return quantile_bound(n, q,
						      quant[n->hist_off * PROF_SNAP_NQUANT + k]);
		return 0;
	}
	h = prof_snap_hist(s, n);
	if (!h)
		return 0;
	if (!hist_quantiles(h, n->hist_lo, n->hist_n, n->max, &q, 1, &v))
		return 0;
	return quantile_bound(n, q, v);
}

const __u32 *prof_snap_hist(const struct prof_snapshot *s, const struct prof_snap_node *n)
{
	/* a lazy snapshot's are its loaded thread's */
	const struct hist_pool *lp = s->lazy ? &s->lazy->tab.pool : NULL;
	const __u32 *pool = lp ? lp->v : s->hist;
	__u64 npool = lp ? lp->n : s->nhist;

	if (!n->hist_n || !pool || (n->flags & PROF_SNAP_F_QUANT) || n->hist_off > npool ||
	    n->hist_n > npool - n->hist_off)
		return NULL;
	return pool + n->hist_off;
}
