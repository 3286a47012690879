// SPDX-License-Identifier: MIT
/*
 * reader.c - copy a segment into a validated snapshot, and back.
 *
 * The segment may be live (another process is writing it), truncated, or
 * hostile.  Each value is loaded once into private memory and checked
 * there; every count is bounded by the geometry, which is itself checked
 * against the bytes we were given.  Parent links must point to a lower
 * index, so the tree has no cycles by construction.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "snapshot.h"

/* one load of a word the writer may be changing */
#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define LDA(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

static void copy_bytes(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = LD(&src[i]);
}

/* a fixed-size string must hold its NUL */
static bool str_ok(const char *s, size_t n)
{
	return memchr(s, 0, n) != NULL;
}

/* a segment's header, checked: ours and of our version, every size as we
 * define it, every region inside len, a plausible clock */
struct seg_geom {
	__u32 max_sites, max_threads, max_nodes;
	unsigned int hist_shift; /* log2 of the header's hist_block */
	__u64 sites_off, slabs_off, slab_size, tick_hz;
	/* strides: a later minor may grow each struct at its end */
	__u32 site_size, node_size, ext_size;
	struct prof_region region[PROF_REGIONS]; /* the regions this reader knows */
	__u64 snap_tick;			 /* an image's "now", else 0 */
	__u64 now;				 /* what open calls are measured to */
	__u32 agg_slab;	/* the exited threads' aggregate, PROF_NO_SLOT if none */
	bool folds;	/* 3.2: folds, agg_seq and the fold ring are there */
};

struct hist_pool {
	__u32 *v;
	__u64 n, cap;
};

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
static int pool_add(struct hist_pool *p, const __u32 *hist, const __u64 *map, unsigned int shift,
		    __u32 node, __u32 hi, __u32 *lo, __u32 *nb, __u64 *off)
{
	__u32 row[PROF_HIST_BUCKETS], cnt[PROF_HIST_BUCKETS], low = hi, i, n, k, nv = 0;
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
	if (p->n + n > p->cap) {
		__u64 cap = p->cap ? p->cap * 2 : 4096;
		__u32 *v;

		while (cap < p->n + n)
			cap *= 2;
		v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
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

/* a slab's regions; ext records are read only if the writer used them */
struct slab_view {
	const struct prof_slab_hdr *hdr;
	const char *nodes;		 /* node_size apart */
	const char *ext;		 /* ext_size apart; NULL: every record is zero */
	const __u64 *open;		 /* per node: its open call's start tick, or 0 */
	const __u64 *rowmap;		 /* PROF_ROWMAP_WORDS a block */
	const __u32 *hist;
	unsigned int hist_shift;
	__u32 node_size, ext_size;
	__u64 now;	/* the thread's now: the read's, or its exit */
	__u32 covered;	/* the slab's 'covered', read consistently */
	bool image;	/* a reader's image: the root's ticks are the wall time */
};

/* node i of a slab, at the stride the header gives */
static inline const struct prof_node *view_node(const struct slab_view *v, __u32 i)
{
	return (const void *)(v->nodes + (size_t)i * v->node_size);
}

/* node i's block's row map */
static inline const __u64 *view_rows(const struct slab_view *v, __u32 i)
{
	return v->rowmap + (i >> v->hist_shift) * PROF_ROWMAP_WORDS;
}

/* the ticks of an open call at the view's now (0 if the clocks disagree) */
static __u64 open_ticks(const struct slab_view *v, __u64 start)
{
	return v->now > start ? v->now - start : 0;
}

/* how many of node n's calls had kernel facts: see prof_node_ext.kernel_adj */
static void node_kernel(const struct slab_view *v, const struct prof_node_ext *ext,
			struct prof_snap_node *n)
{
	__u64 adj = LD(&ext->kernel_adj);

	if (v->covered)
		n->kernel_calls = n->calls > adj ? n->calls - adj : 0;
	else
		n->kernel_calls = adj < n->calls ? adj : n->calls;
}

static void slab_view(const char *slab, const struct seg_geom *g, struct slab_view *v)
{
	v->hdr = (const void *)slab;
	v->nodes = slab + g->region[PROF_REGION_NODES].off;
	v->ext = LD(&v->hdr->ext_used) ? slab + g->region[PROF_REGION_EXT].off : NULL;
	v->open = (const void *)(slab + g->region[PROF_REGION_OPEN].off);
	v->rowmap = (const void *)(slab + g->region[PROF_REGION_ROWMAP].off);
	v->hist = (const void *)(slab + g->region[PROF_REGION_HIST].off);
	v->hist_shift = g->hist_shift;
	v->node_size = g->node_size;
	v->ext_size = g->ext_size;
	v->image = g->snap_tick != 0;
	{
		__u64 x = LD(&v->hdr->exit_tick);

		v->now = x && x < g->now ? x : g->now;
	}
	v->covered = LD(&v->hdr->covered);
}

/* did a live slab change hands since its gen was loaded (slab.h, 3.2)? */
static bool slab_moved(const char *slab, __u64 gen)
{
	prof_seq_fence_acq();
	return LD(&((const struct prof_slab_hdr *)slab)->gen) != gen;
}

static const struct prof_node_ext zero_ext;

/* node i's ext record, or a zero one */
static inline const struct prof_node_ext *view_ext(const struct slab_view *v, __u32 i)
{
	return v->ext ? (const void *)(v->ext + (size_t)i * v->ext_size) : &zero_ext;
}

/* link children, depths and child totals; nodes must have parent < index */
static int thread_derive(struct prof_snap_thread *t, __u32 nsites)
{
	struct prof_snap_node *nodes = t->nodes;
	__u32 i;

	for (i = 0; i < t->nnodes; i++) {
		nodes[i].first_child = PROF_SNAP_NONE;
		nodes[i].next_sibling = PROF_SNAP_NONE;
		nodes[i].child_ticks = 0;
	}
	nodes[0].depth = 0;
	/* walk backwards so each child list comes out in creation order */
	for (i = t->nnodes - 1; i >= 1; i--) {
		struct prof_snap_node *p = &nodes[nodes[i].parent];

		nodes[i].next_sibling = p->first_child;
		p->first_child = i;
		p->child_ticks += nodes[i].ticks;
	}
	for (i = 1; i < t->nnodes; i++)
		nodes[i].depth = nodes[nodes[i].parent].depth + 1;
	/* the root's total is the thread's wall time, which holds its
	 * children's (time outside every zone is its self time) */
	if (nodes[0].ticks < nodes[0].child_ticks)
		nodes[0].ticks = nodes[0].child_ticks;
	return prof_snap_mark_recursion(t, nsites);
}

/* prof_seg_flat: flat rows accumulated straight from the segment */

/*
 * What a flat pass needs of a slab's tree, learnt once a node: site and
 * parent never change once a node is published, so a cached tree reads
 * only the new nodes' and, every pass, just the counters.
 */
#define FLAT_REC 0x80000000u	/* in a row: an ancestor has the same site */
#define FLAT_NO_ROW 0x7fffffffu /* a top-level node's parent row */

struct flat_tree {
	__u32 nknown, cap; /* nodes [0, nknown) learnt */
	__u64 *rp;	   /* row (| FLAT_REC) | the parent's row << 32 */
	__u32 *parent;
	__u64 *path;	    /* a 64-bit filter of the rows above the node */
	__u32 *rows, nrows; /* the distinct rows of nodes [1, nknown) */
};

struct flat_acc {
	__u32 tid; /* 0: all threads */
	__u32 nsites;
	struct prof_flat_row *rows; /* nsites + 1: the last is overflow */
	__u64 *plus, *minus;	    /* per row: ticks, and the children's ticks */
	struct flat_tree *scratch;  /* without a cache: each slab's tree, in turn */
	/* with a cache: one thread's rows, plus and minus, kept zeroed */
	struct prof_seg_flat_cache *cache;
	struct prof_flat_row *srows;
	__u64 *splus, *sminus;
	bool *seen; /* nsites + 1, kept false */
	bool live;  /* slabs change hands: (slab, gen) is a thread (slab.h) */
};

/* one thread's share of one flat row */
struct flat_part {
	__u32 row;
	__u64 calls, ticks, max, preempted, migrated, offcpu_ns, plus, minus;
	__u64 blocked, kernel_calls;
};

/* a slab's share, valid while its activity word and node count stay */
struct flat_slab_cache {
	bool valid;
	__u32 tid, nn, nparts;
	__u64 activity;
	__u64 gen; /* with the index, the thread the share is of */
	struct flat_part *parts;
	struct flat_tree tree;
};

struct prof_seg_flat_cache {
	const void *mem; /* what the shares were read from */
	size_t len;
	bool no_sched; /* leave the scheduler facts out: no ext record read */
	__u32 nsites, max_nodes, nslabs;
	struct flat_slab_cache *slabs;
	/* the scratch of flat_acc, kept zeroed */
	struct prof_flat_row *srows;
	__u64 *splus, *sminus;
	bool *seen;
};

static void flat_tree_free(struct flat_tree *t)
{
	free(t->rp);
	free(t->parent);
	free(t->path);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

static int flat_tree_grow(struct flat_tree *t, __u32 nn, __u32 nrows)
{
	__u32 cap = t->cap ? t->cap : 64;
	void *rp, *parent, *path, *rows;

	if (nn <= t->cap)
		return 0;
	while (cap < nn)
		cap = cap > 0x7fffffffu ? nn : 2 * cap;
	rp = realloc(t->rp, (size_t)cap * sizeof(*t->rp));
	if (rp)
		t->rp = rp;
	parent = realloc(t->parent, (size_t)cap * sizeof(*t->parent));
	if (parent)
		t->parent = parent;
	path = realloc(t->path, (size_t)cap * sizeof(*t->path));
	if (path)
		t->path = path;
	/* a row per node at most, and never more than there are rows */
	rows = realloc(t->rows, (size_t)(cap < nrows ? cap : nrows) * sizeof(*t->rows));
	if (rows)
		t->rows = rows;
	if (!rp || !parent || !path || !rows)
		return -ENOMEM;
	t->cap = cap;
	return 0;
}

/*
 * The recursion marks of nodes [1, nn) in one depth-first pass, as
 * prof_snap_mark_recursion makes them: a count per row of how often it is
 * on the path from the root.  O(nodes), where the walks up cost O(nodes x
 * depth) for a tree whose filter keeps sending them up long chains (a
 * hostile one can: sites 64 apart share a filter bit).
 */
static int flat_mark_dfs(struct flat_tree *t, __u32 nn, __u32 nsites)
{
	__u32 *first = malloc((size_t)nn * sizeof(*first));
	__u32 *next = malloc((size_t)nn * sizeof(*next));
	__u32 *on_path = calloc((size_t)nsites + 1, sizeof(*on_path));
	__u32 i;
	int err = -ENOMEM;

#define ROW_OF(i) ((__u32)t->rp[i] & ~FLAT_REC)
	if (!first || !next || !on_path)
		goto out;
	err = 0;
	if (nn < 2)
		goto out;
	memset(first, 0xff, (size_t)nn * sizeof(*first));
	/* children in index order: built from the last */
	for (i = nn - 1; i >= 1; i--) {
		next[i] = first[t->parent[i]];
		first[t->parent[i]] = i;
	}
	i = first[0];
	while (i != PROF_SNAP_NONE) {
		bool rec = i > 1 && on_path[ROW_OF(i)];

		t->rp[i] = (t->rp[i] & ~(__u64)FLAT_REC) | (rec ? FLAT_REC : 0);
		on_path[ROW_OF(i)]++;
		if (first[i] != PROF_SNAP_NONE) {
			i = first[i];
			continue;
		}
		/* leave i, then every ancestor whose children are done */
		for (;;) {
			on_path[ROW_OF(i)]--;
			if (next[i] != PROF_SNAP_NONE) {
				i = next[i];
				break;
			}
			i = t->parent[i];
			if (i == 0) {
				i = PROF_SNAP_NONE;
				break;
			}
		}
	}
#undef ROW_OF
out:
	free(first);
	free(next);
	free(on_path);
	return err;
}

/*
 * Learn nodes [t->nknown, nn), checked as the copying read checks them
 * (parent < index, a site for every zone).  seen: nsites + 1 flags, false
 * on entry and on return.  The walks up that confirm the filter get a
 * budget in proportion to the new nodes; past it, one depth-first pass
 * marks them all.
 */
static int flat_learn(struct flat_tree *t, const struct slab_view *v, __u32 nn, __u32 nsites,
		      bool *seen)
{
	__u64 budget = 64ull * (nn - (nn < t->nknown ? 0 : t->nknown)) + 65536;
	__u32 i, k;
	int err = 0;

	if (nn < t->nknown)
		t->nknown = t->nrows = 0; /* a table never shrinks: start over */
	if (nn == t->nknown)
		return 0;
	if (flat_tree_grow(t, nn, nsites + 1))
		return -ENOMEM;
	for (k = 0; k < t->nrows; k++)
		seen[t->rows[k]] = true;
	for (i = t->nknown; i < nn; i++) {
		const struct prof_node *src = view_node(v, i);
		__u32 site = LD(&src->site), parent = LD(&src->parent), p, row, prow;
		bool rec = false;

		if (i == 0 ? parent != 0 : parent >= i) {
			err = -EINVAL;
			break;
		}
		if (i < 2 ? site != PROF_SITE_NONE : site >= nsites) {
			err = -EINVAL;
			break;
		}
		row = site < nsites ? site : nsites;
		prow = parent ? (__u32)t->rp[parent] & ~FLAT_REC : FLAT_NO_ROW;
		t->parent[i] = parent;
		t->path[i] = parent ? t->path[parent] | 1ull << (prow & 63) : 0;
		/* the filter rules most nodes out at once; a walk confirms, while
		 * the budget lasts (then the pass below decides) */
		if (i > 1 && (t->path[i] & 1ull << (row & 63)))
			for (p = parent; p && !rec && budget; p = t->parent[p], budget--)
				rec = ((__u32)t->rp[p] & ~FLAT_REC) == row;
		t->rp[i] = row | (rec ? FLAT_REC : 0) | (__u64)prow << 32;
		if (i && !seen[row]) {
			seen[row] = true;
			t->rows[t->nrows++] = row;
		}
	}
	for (k = 0; k < t->nrows; k++)
		seen[t->rows[k]] = false;
	if (!err && !budget)
		err = flat_mark_dfs(t, nn, nsites);
	if (err)
		t->nknown = t->nrows = 0;
	else
		t->nknown = nn;
	return err;
}

/* nodes [1, nn) of a learnt tree into the rows: only the counters are
 * read; a recursive node's time is in its outermost ancestor's already */
static void flat_add(const struct flat_tree *t, const struct slab_view *v, __u32 nn,
		     struct prof_flat_row *rows, __u64 *plus, __u64 *minus)
{
	__u32 i;

	for (i = 1; i < nn; i++) {
		const struct prof_node *src = view_node(v, i);
		__u64 m = t->rp[i], ticks = LD(&src->ticks), max = LD(&src->max);
		__u32 row = (__u32)m & ~FLAT_REC, prow = (__u32)(m >> 32);
		struct prof_flat_row *r = &rows[row];

		r->calls += LD(&src->calls);
		if (max > r->max)
			r->max = max;
		plus[row] += ticks;
		if (prow != FLAT_NO_ROW)
			minus[prow] += ticks;
		if (!(m & FLAT_REC))
			r->ticks += ticks;
		if (v->ext) {
			const struct prof_node_ext *ext = view_ext(v, i);

			struct prof_snap_node k = { .calls = LD(&src->calls) };

			r->preempted += LD(&ext->preempted);
			r->blocked += LD(&ext->blocked);
			r->migrated += LD(&ext->migrated);
			node_kernel(v, ext, &k);
			r->kernel_calls += k.kernel_calls;
			if (!(m & FLAT_REC))
				r->offcpu_ns += LD(&ext->offcpu_ns);
		}
	}
}

/*
 * The open calls of a learnt tree into the rows, read every pass (a call
 * opens without touching the activity word): each adds its elapsed time
 * to its row and to its parent's children, as a closed call's ticks do.
 */
static void flat_open(const struct flat_tree *t, const struct slab_view *v, __u32 nn,
		      struct prof_flat_row *rows, __u64 *plus, __u64 *minus)
{
	__u32 i;

	for (i = 2; i < nn; i++) {
		__u64 start = LDA(&v->open[i]), m, e;
		__u32 row, prow;

		if (!start)
			continue;
		m = t->rp[i];
		row = (__u32)m & ~FLAT_REC;
		prow = (__u32)(m >> 32);
		e = open_ticks(v, start);
		rows[row].open++;
		plus[row] += e;
		if (prow != FLAT_NO_ROW)
			minus[prow] += e;
		if (!(m & FLAT_REC)) {
			rows[row].ticks += e;
			rows[row].open_ticks += e;
		}
	}
}

/*
 * What a read loads of every slab before it loads nsites.  The writer
 * publishes a site (nsites, release) before the first node naming it
 * (nnodes, release), so every node under a count loaded first names a
 * site under the nsites loaded after.  The other order would find a node
 * of a site registered meanwhile and call a healthy segment corrupt.
 */
struct slab_pub {
	__u64 gen;	/* loaded first: a live slab's thread (slab.h, 3.2) */
	__u64 activity; /* loaded before nnodes: unchanged later, no node changed */
	__u32 nnodes;
};

/* a slab's header into t, checked; nn: its node count as published
 * before the read loaded nsites (see struct slab_pub) */
static int read_slab_hdr(const char *slab, __u32 max_nodes, __u32 index, struct prof_snap_thread *t,
			 __u32 nn)
{
	const struct prof_slab_hdr *h = (const void *)slab;
	__u32 i;

	if (LDA(&h->magic) != PROF_SLAB_MAGIC)
		return -EINVAL;
	if (nn < 2 || nn > max_nodes)
		return -EINVAL;
	t->slab = index;
	t->tid = LD(&h->tid);
	t->state = LD(&h->state);
	if (t->state != PROF_SLAB_ALIVE && t->state != PROF_SLAB_EXITED)
		return -EINVAL;
	t->ksched_slot = LD(&h->ksched_slot);
	copy_bytes(t->name, h->name, sizeof(t->name));
	t->name[sizeof(t->name) - 1] = 0;
	t->start_tick = LD(&h->start_tick);
	t->exit_tick = LD(&h->exit_tick);
	t->overflow = LD(&h->overflow);
	t->unbalanced = LD(&h->unbalanced);
	t->frames = LD(&h->frames);
	t->frame_ticks = LD(&h->frame_ticks);
	t->frame_max = LD(&h->frame_max);
	for (i = 0; i < PROF_HIST_BUCKETS; i++)
		t->frame_hist[i] = LD(&h->frame_hist[i]);
	t->gen = LD(&h->gen);
	t->comm[0] = 0;
	{
		__u64 a = LD(&h->oncpu_start_ns), b = LD(&h->oncpu_exit_ns);

		/* known once the thread exited (or in an image); a live one's
		 * is read from /proc by read_seg, from oncpu_start_ns */
		t->oncpu_ns = b ? (b > a ? b - a : 0) : PROF_SNAP_UNKNOWN;
		t->oncpu_start = a;
	}
	return 0;
}

/* the quantiles a lazy read keeps, ascending */
static const double keep_q[PROF_SNAP_NQUANT] = { 0.50, 0.90, 0.99 };

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
static void hist_quantiles_top(const __u32 *hist, const __u64 *map, unsigned int shift, __u32 node,
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

/*
 * Node i's open call, if any, into n, after its ticks were loaded: the
 * writer clears the mark before it adds the call's ticks, so loading the
 * ticks first can miss a call that ends meanwhile, never count it twice.
 * The root's "open call" is the thread's life: its ticks, the wall time.
 */
static void node_open(const struct slab_view *v, __u32 i, struct prof_snap_node *n)
{
	__u64 start;

	n->open = 0;
	n->open_ticks = 0;
	if (i == PROF_NODE_ROOT) {
		if (!v->image) {
			start = LD(&v->hdr->start_tick);
			n->ticks = open_ticks(v, start);
		}
		return;
	}
	start = LDA(&v->open[i]);
	if (!start)
		return;
	n->open = 1;
	n->open_ticks = open_ticks(v, start);
	n->ticks += n->open_ticks;
}

/* nodes [0, nn) of a slab into out, validated; histograms as flags say:
 * copied into pool, reduced in place to quant[3 * i ..], or left */
static int read_nodes(const struct slab_view *v, __u32 nsites, __u32 nn, struct prof_snap_node *out,
		      struct hist_pool *pool, __u64 *quant, unsigned int flags)
{
	bool any = !(flags & PROF_READ_NO_HIST);
	bool reduce = any && (flags & PROF_READ_LAZY) && !(flags & PROF_READ_LAZY_HIST);
	bool copy = any && !reduce;
	__u32 i;

	for (i = 0; i < nn; i++) {
		const struct prof_node *src = view_node(v, i);
		const struct prof_node_ext *ext = view_ext(v, i);
		struct prof_snap_node *n = &out[i];
		__u32 hi;
		int err;

		n->site = LD(&src->site);
		n->parent = LD(&src->parent);
		if (i == 0 ? n->parent != 0 : n->parent >= i)
			return -EINVAL;
		/* 0 and 1 are the root and the overflow node, the rest are zones */
		if (i < 2 ? n->site != PROF_SITE_NONE : n->site >= nsites)
			return -EINVAL;
		n->calls = LD(&src->calls);
		n->ticks = LD(&src->ticks);
		n->max = LD(&src->max);
		node_open(v, i, n);
		node_kernel(v, ext, n);
		n->preempted = LD(&ext->preempted);
		n->migrated = LD(&ext->migrated);
		n->offcpu_ns = LD(&ext->offcpu_ns);
		n->anomalies = LD(&ext->anomalies);
		n->allocs = LD(&ext->allocs);
		n->alloc_bytes = LD(&ext->alloc_bytes);
		n->frees = LD(&ext->frees);
		n->free_bytes = LD(&ext->free_bytes);
		n->blocked = LD(&ext->blocked);
		n->hist_lo = 0;
		n->hist_n = 0;
		n->hist_off = 0;
		n->flags = 0;
		/* only the buckets up to the max's: the rest are empty */
		hi = prof_hist_bucket(n->max);
		if (reduce) {
			hist_quantiles_top(v->hist, view_rows(v, i), v->hist_shift, i, hi, n->calls,
					   n->max, quant + (size_t)i * PROF_SNAP_NQUANT);
			n->hist_off = i;
			n->flags = PROF_SNAP_F_QUANT;
			continue;
		}
		if (!copy || !n->calls)
			continue;
		err = pool_add(pool, v->hist, view_rows(v, i), v->hist_shift, i, hi, &n->hist_lo,
			       &n->hist_n, &n->hist_off);
		if (err)
			return err;
	}
	return 0;
}

/* PROF_READ_LAZY up front: the checks read_nodes makes, on the first cache
 * line of each node, and whether any carries scheduler facts */
static int scan_nodes(const struct slab_view *v, __u32 nsites, __u32 nn, bool *sched)
{
	__u64 facts = 0;
	__u32 i;

	for (i = 0; i < nn; i++) {
		const struct prof_node *src = view_node(v, i);
		__u32 site = LD(&src->site), parent = LD(&src->parent);

		if (i == 0 ? parent != 0 : parent >= i)
			return -EINVAL;
		if (i < 2 ? site != PROF_SITE_NONE : site >= nsites)
			return -EINVAL;
		if (v->ext) {
			const struct prof_node_ext *ext = view_ext(v, i);

			facts |= LD(&ext->preempted) | LD(&ext->migrated) | LD(&ext->offcpu_ns) |
				 LD(&ext->blocked) | LD(&ext->kernel_adj);
		}
	}
	*sched |= facts != 0 || v->covered;
	return 0;
}

/* a thread's share of the flat rows into its cache entry: accumulated in
 * the zeroed scratch rows, moved out, the scratch left zeroed again */
static int flat_share(const struct slab_view *v, __u32 nn, __u32 nsites, struct flat_acc *fa,
		      struct flat_slab_cache *c)
{
	struct flat_tree *t = &c->tree;
	__u32 i;
	int err;

	err = flat_learn(t, v, nn, nsites, fa->seen);
	if (err)
		return err;
	if (t->nrows > c->nparts || !c->parts) {
		struct flat_part *p = realloc(c->parts, (t->nrows ? t->nrows : 1) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->parts = p;
	}
	if (fa->cache->no_sched) {
		struct slab_view nv = *v;

		nv.ext = NULL;
		flat_add(t, &nv, nn, fa->srows, fa->splus, fa->sminus);
	} else {
		flat_add(t, v, nn, fa->srows, fa->splus, fa->sminus);
	}
	/* every row written is some node's: node 1's is the overflow row */
	for (i = 0; i < t->nrows; i++) {
		__u32 row = t->rows[i];
		struct prof_flat_row *r = &fa->srows[row];

		c->parts[i] = (struct flat_part){ .row = row,
						  .calls = r->calls,
						  .ticks = r->ticks,
						  .max = r->max,
						  .preempted = r->preempted,
						  .migrated = r->migrated,
						  .offcpu_ns = r->offcpu_ns,
						  .blocked = r->blocked,
						  .kernel_calls = r->kernel_calls,
						  .plus = fa->splus[row],
						  .minus = fa->sminus[row] };
		memset(r, 0, sizeof(*r));
		fa->splus[row] = fa->sminus[row] = 0;
	}
	c->nparts = t->nrows;
	return 0;
}

/* one slab into the flat rows: from its cached share while its activity
 * word and node count are what they were, else read and cached anew */
static int flat_slab(const struct slab_view *v, __u32 nn, __u32 nsites, __u32 index, __u64 activity,
		     __u32 tid, __u64 gen, struct flat_acc *fa)
{
	bool take = !fa->tid || fa->tid == tid, moved;
	struct flat_slab_cache *c;
	__u32 i;
	int err;

	if (!fa->cache) {
		/* each slab's tree afresh, in the one scratch tree */
		fa->scratch->nknown = fa->scratch->nrows = 0;
		err = flat_learn(fa->scratch, v, nn, nsites, fa->seen);
		if (!err && take) {
			flat_add(fa->scratch, v, nn, fa->rows, fa->plus, fa->minus);
			flat_open(fa->scratch, v, nn, fa->rows, fa->plus, fa->minus);
		}
		return err;
	}
	c = &fa->cache->slabs[index];
	if (!c->valid || c->activity != activity || c->nn != nn || c->tid != tid || c->gen != gen) {
		c->valid = false;
		/* another thread in the slab: learn its tree anew */
		if (c->tid != tid || c->gen != gen)
			c->tree.nknown = c->tree.nrows = 0;
		err = flat_share(v, nn, nsites, fa, c);
		if (err)
			return err;
		c->valid = true;
		c->activity = activity;
		c->nn = nn;
		c->tid = tid;
		c->gen = gen;
	}
	if (!take)
		return 0;
	/*
	 * The open calls into the zeroed scratch rows, then the slab's gen
	 * again: a slab that changed hands since its gen was loaded adds
	 * nothing (its thread is in the aggregate), never two threads'
	 * numbers in one share.
	 */
	flat_open(&c->tree, v, nn, fa->srows, fa->splus, fa->sminus);
	moved = fa->live && slab_moved((const char *)v->hdr, gen);
	for (i = 0; i < c->tree.nrows; i++) {
		__u32 row = c->tree.rows[i];
		struct prof_flat_row *o = &fa->srows[row], *r = &fa->rows[row];

		if (!moved) {
			r->open += o->open;
			r->ticks += o->ticks;
			r->open_ticks += o->open_ticks;
			fa->plus[row] += fa->splus[row];
			fa->minus[row] += fa->sminus[row];
		}
		memset(o, 0, sizeof(*o));
		fa->splus[row] = fa->sminus[row] = 0;
	}
	if (moved) {
		c->valid = false;
		return 0;
	}
	for (i = 0; i < c->nparts; i++) {
		const struct flat_part *p = &c->parts[i];
		struct prof_flat_row *r = &fa->rows[p->row];

		r->calls += p->calls;
		r->ticks += p->ticks;
		r->preempted += p->preempted;
		r->migrated += p->migrated;
		r->offcpu_ns += p->offcpu_ns;
		r->blocked += p->blocked;
		r->kernel_calls += p->kernel_calls;
		if (p->max > r->max)
			r->max = p->max;
		fa->plus[p->row] += p->plus;
		fa->minus[p->row] += p->minus;
	}
	return 0;
}

static int read_thread(const char *slab, const struct seg_geom *g, __u32 nsites, __u32 index,
		       const struct slab_pub *pub, struct prof_snap_thread *t,
		       struct hist_pool *pool, unsigned int flags, struct flat_acc *fa, bool *sched)
{
	struct slab_view v;
	__u32 nn = pub->nnodes;
	int err;

	err = read_slab_hdr(slab, g->max_nodes, index, t, nn);
	if (err)
		return err;
	slab_view(slab, g, &v);
	/* the aggregate's root holds its threads' wall times, as an image's */
	if (index == g->agg_slab)
		v.image = true;
	if (fa)
		return flat_slab(&v, nn, nsites, index, pub->activity, t->tid,
				 fa->live ? pub->gen : t->gen, fa);
	/* lazy: checked now, these nodes read when a renderer asks */
	if (flags & PROF_READ_LAZY) {
		t->lazy_nnodes = nn;
		return scan_nodes(&v, nsites, nn, sched);
	}

	t->nodes = calloc(nn, sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	t->nnodes = nn;
	err = read_nodes(&v, nsites, nn, t->nodes, pool, NULL, flags);
	if (err)
		return err;
	return thread_derive(t, nsites);
}

int prof_snapshot__read(const void *mem, size_t len, struct prof_snapshot **out)
{
	return prof_snapshot__read_opts(mem, len, 0, out);
}

/* one thread's nodes as a lazy load leaves them, and their quantiles or
 * histograms; reused from thread to thread */
struct lazy_table {
	struct prof_snap_node *nodes;
	__u64 *quant;	       /* p50, p90, p99: PROF_SNAP_NQUANT a node */
	struct hist_pool pool; /* PROF_READ_LAZY_HIST: the histograms */
	__u32 cap;
};

/* what a PROF_READ_LAZY snapshot keeps to read its threads later */
struct prof_snap_lazy {
	const void *mem; /* the segment, mapped while the snapshot lives */
	size_t len;
	void *map; /* our own mapping of it (the fd variants), or NULL */
	struct seg_geom g;
	unsigned int flags;
	__u32 nsites;
	bool sched;				/* a node carried scheduler facts at read time */
	struct lazy_table tab[2];		/* cur's, and the one loaded ahead */
	unsigned int cur_tab;			/* which is cur's */
	struct prof_snap_thread *cur;		/* whose nodes those are */
	const struct prof_snap_thread *threads; /* the snapshot's, for "the next" */
	__u32 nthreads;
	const struct prof_snap_thread *last; /* loaded last (cur, or unloaded since) */
	__u32 stride; /* between the last two loads: the next is that far on */
	bool view;    /* prof_snapshot__lazy_view's: sites and mapping are another's */
	/*
	 * PROF_READ_AHEAD: a helper thread loads the thread after cur into
	 * the other table, into a copy of its struct, while the caller
	 * renders cur; a load of that thread takes it over.  Under lock:
	 * want, busy, got, got_t, got_err, quit; cur_tab changes only while
	 * the helper is idle.
	 */
	bool ahead;
	pthread_t helper;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct prof_snap_thread *want; /* asked for, not yet taken up */
	bool busy;		       /* asked for, not yet done */
	struct prof_snap_thread *got;  /* done: got_t holds it, got_err says how */
	struct prof_snap_thread got_t;
	int got_err;
	bool quit;
};

/* a struct's size as a header gives it: at least what this reader knows
 * (a later minor grows it at the end), 8-aligned, sane */
static bool size_ok(__u32 have, size_t known)
{
	return have >= known && have <= 65536 && !(have & 7);
}

static bool ring_events_ok(__u64 n)
{
	return n && n <= (1ull << 24) && !(n & (n - 1));
}

/* the slab regions this reader knows, each inside the slab, past its
 * header, big enough for the geometry, and apart from one another */
static int regions_check(const struct prof_seg_hdr *h, struct seg_geom *g, __u32 slab_hdr_size)
{
	__u64 blocks = prof_hist_blocks(g->max_nodes, g->hist_shift), need[PROF_REGIONS];
	__u32 nreg = LD(&h->nregions), i, j;

	/* 3.0 had no event ring */
	if (nreg < PROF_REGION_RING || nreg > PROF_REGIONS_MAX)
		return -EINVAL;
	need[PROF_REGION_NODES] = (__u64)g->max_nodes * g->node_size;
	need[PROF_REGION_EXT] = (__u64)g->max_nodes * g->ext_size;
	need[PROF_REGION_OPEN] = (__u64)g->max_nodes * sizeof(__u64);
	need[PROF_REGION_ROWMAP] = blocks * PROF_ROWMAP_WORDS * sizeof(__u64);
	need[PROF_REGION_HIST] = (blocks << g->hist_shift) * PROF_HIST_BUCKETS * sizeof(__u32);
	/* off (size 0), or a header and a power of two of events */
	need[PROF_REGION_RING] = nreg > PROF_REGION_RING ? LD(&h->region[PROF_REGION_RING].size) : 0;
	if (need[PROF_REGION_RING] &&
	    (need[PROF_REGION_RING] < PROF_RING_HDR_SIZE + sizeof(struct prof_event) ||
	     (need[PROF_REGION_RING] - PROF_RING_HDR_SIZE) % sizeof(struct prof_event) ||
	     !ring_events_ok((need[PROF_REGION_RING] - PROF_RING_HDR_SIZE) /
			     sizeof(struct prof_event))))
		return -EINVAL;
	for (i = 0; i < PROF_REGIONS; i++) {
		struct prof_region *r = &g->region[i];

		if (i >= nreg) {
			/* an older minor's: absent */
			r->off = slab_hdr_size;
			r->size = 0;
			continue;
		}
		r->off = LD(&h->region[i].off);
		r->size = LD(&h->region[i].size);
		if (r->off < slab_hdr_size || (r->off & 7) || r->size < need[i] ||
		    r->off > g->slab_size || r->size > g->slab_size - r->off)
			return -EINVAL;
	}
	for (i = 0; i < PROF_REGIONS; i++)
		for (j = i + 1; j < PROF_REGIONS; j++)
			if (g->region[i].off < g->region[j].off + need[j] &&
			    g->region[j].off < g->region[i].off + need[i])
				return -EINVAL;
	return 0;
}

static int seg_check(const void *mem, size_t len, struct seg_geom *g)
{
	const struct prof_seg_hdr *h = mem;
	__u64 sites_end, slabs_end, seg_size;
	__u32 hdr_size, slab_hdr_size;

	/* the loads below assume natural alignment: segments are page aligned */
	if (!mem || len < sizeof(*h) || ((uintptr_t)mem & 7))
		return -EINVAL;
	if (LDA(&h->magic) != PROF_SEG_MAGIC)
		return -EINVAL;
	/* another major is another layout; any minor of ours reads */
	if (LD(&h->version) != PROF_SEG_VERSION)
		return -EPROTO;
	seg_size = LD(&h->seg_size);
	/* 1 kHz .. 100 GHz */
	g->tick_hz = LD(&h->tick_hz);
	if (g->tick_hz < 1000 || g->tick_hz > 100000000000ull)
		return -EINVAL;

	hdr_size = LD(&h->hdr_size);
	slab_hdr_size = LD(&h->slab_hdr_size);
	g->site_size = LD(&h->site_size);
	g->node_size = LD(&h->node_size);
	g->ext_size = LD(&h->ext_size);
	if (!size_ok(hdr_size, sizeof(*h)) || !size_ok(slab_hdr_size, sizeof(struct prof_slab_hdr)) ||
	    !size_ok(g->site_size, sizeof(struct prof_site_ent)) ||
	    !size_ok(g->node_size, PROF_NODE_SIZE) || !size_ok(g->ext_size, PROF_NODE_EXT_SIZE) ||
	    LD(&h->hist_buckets) != PROF_HIST_BUCKETS)
		return -EINVAL;
	g->snap_tick = LD(&h->snap_tick);
	/* a power of two, at most the runtime's */
	{
		__u32 blk = LD(&h->hist_block);

		if (!blk || blk > PROF_HIST_BLOCK || (blk & (blk - 1)))
			return -EINVAL;
		g->hist_shift = (unsigned int)__builtin_ctz(blk);
	}
	g->max_sites = LD(&h->max_sites);
	g->max_threads = LD(&h->max_threads);
	g->max_nodes = LD(&h->max_nodes);
	g->sites_off = LD(&h->sites_off);
	g->slabs_off = LD(&h->slabs_off);
	g->slab_size = LD(&h->slab_size);
	if (g->max_sites == 0 || g->max_sites > (1u << 20) || g->max_threads == 0 ||
	    g->max_threads > 65536 || g->max_nodes < 2 || g->max_nodes > (1u << 22))
		return -EINVAL;
	if (g->slab_size < slab_hdr_size || g->slab_size > (1ull << 40) || (g->slab_size & 7) ||
	    g->sites_off < hdr_size || ((g->sites_off | g->slabs_off) & 7))
		return -EINVAL;
	if (regions_check(h, g, slab_hdr_size))
		return -EINVAL;
	sites_end = g->sites_off + (__u64)g->max_sites * g->site_size;
	slabs_end = g->slabs_off + (__u64)g->max_threads * g->slab_size;
	/* slabs_off bounded first: near 2^64, slabs_end would wrap */
	if (g->sites_off > len || g->slabs_off > len || sites_end > g->slabs_off ||
	    slabs_end > seg_size || seg_size > len)
		return -EINVAL;
	/* 3.2: the exited threads' aggregate, one slab past the threads' */
	g->agg_slab = PROF_NO_SLOT;
	g->folds = hdr_size >= offsetof(struct prof_seg_hdr, fold_ring) + sizeof(h->fold_ring);
	if (g->folds && LD(&h->agg_slab) != PROF_NO_SLOT) {
		if (LD(&h->agg_slab) != g->max_threads || slabs_end + g->slab_size > seg_size)
			return -EINVAL;
		g->agg_slab = g->max_threads;
	}
	return 0;
}

static int read_seg(const void *mem, size_t len, unsigned int flags, struct flat_acc *fa,
		    struct prof_snapshot **out);

int prof_snapshot__read_opts(const void *mem, size_t len, unsigned int flags,
			     struct prof_snapshot **out)
{
	return read_seg(mem, len, flags, NULL, out);
}

void prof_seg_flat_cache__no_sched(struct prof_seg_flat_cache *c)
{
	c->no_sched = true;
}

struct prof_seg_flat_cache *prof_seg_flat_cache__new(void)
{
	return calloc(1, sizeof(struct prof_seg_flat_cache));
}

/* every slab's share forgotten, the scratch kept */
static void flat_cache_drop(struct prof_seg_flat_cache *c)
{
	__u32 i;

	for (i = 0; i < c->nslabs; i++) {
		free(c->slabs[i].parts);
		flat_tree_free(&c->slabs[i].tree);
	}
	free(c->slabs);
	c->slabs = NULL;
	c->nslabs = 0;
}

static void flat_cache_scratch_free(struct prof_seg_flat_cache *c)
{
	free(c->srows);
	free(c->splus);
	free(c->sminus);
	free(c->seen);
	c->srows = NULL;
	c->splus = c->sminus = NULL;
	c->seen = NULL;
}

void prof_seg_flat_cache__destroy(struct prof_seg_flat_cache *c)
{
	if (!c)
		return;
	flat_cache_drop(c);
	flat_cache_scratch_free(c);
	free(c);
}

/* the per-row arrays of a flat pass, once nsites is known; with a cache,
 * its shares still valid for this mapping and these sites */
static int flat_size(struct flat_acc *fa, const void *mem, size_t len, const struct seg_geom *g,
		     __u32 nsites, __u32 nslabs)
{
	struct prof_seg_flat_cache *c = fa->cache;
	size_t nrows = (size_t)nsites + 1;

	fa->nsites = nsites;
	fa->rows = calloc(nrows, sizeof(*fa->rows));
	fa->plus = calloc(nrows, sizeof(*fa->plus));
	fa->minus = calloc(nrows, sizeof(*fa->minus));
	if (!fa->rows || !fa->plus || !fa->minus)
		return -ENOMEM;
	if (!c) {
		fa->seen = calloc(nrows, sizeof(*fa->seen));
		fa->scratch = calloc(1, sizeof(*fa->scratch));
		return fa->seen && fa->scratch ? 0 : -ENOMEM;
	}
	/* a share names rows by site: another mapping or a new site, and none holds */
	if (c->mem != mem || c->len != len || c->nsites != nsites || c->max_nodes != g->max_nodes) {
		flat_cache_drop(c);
		flat_cache_scratch_free(c);
		c->mem = NULL; /* until all of it is there */
		c->srows = calloc(nrows, sizeof(*c->srows));
		c->splus = calloc(nrows, sizeof(*c->splus));
		c->sminus = calloc(nrows, sizeof(*c->sminus));
		c->seen = calloc(nrows, sizeof(*c->seen));
		if (!c->srows || !c->splus || !c->sminus || !c->seen)
			return -ENOMEM;
		c->mem = mem;
		c->len = len;
		c->nsites = nsites;
		c->max_nodes = g->max_nodes;
	}
	if (nslabs > c->nslabs) {
		struct flat_slab_cache *v = realloc(c->slabs, nslabs * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + c->nslabs, 0, (nslabs - c->nslabs) * sizeof(*v));
		c->slabs = v;
		c->nslabs = nslabs;
	}
	fa->srows = c->srows;
	fa->splus = c->splus;
	fa->sminus = c->sminus;
	fa->seen = c->seen;
	return 0;
}

int prof_seg_flat_cached(const void *mem, size_t len, __u32 tid, int sort,
			 struct prof_seg_flat_cache *cache, struct prof_snapshot **snap,
			 struct prof_flat_row **out, size_t *nout)
{
	struct flat_acc fa = { .tid = tid, .cache = cache };
	size_t n = 0;
	__u32 i;
	int err;

	*snap = NULL;
	*out = NULL;
	*nout = 0;
	err = read_seg(mem, len, PROF_READ_NO_HIST, &fa, snap);
	if (err)
		goto cleanup;
	for (i = 0; i <= fa.nsites; i++) {
		fa.rows[i].site = i < fa.nsites ? i : PROF_SITE_NONE;
		/* a child read after it grew can exceed its parent: clamp */
		fa.rows[i].self = fa.plus[i] > fa.minus[i] ? fa.plus[i] - fa.minus[i] : 0;
		if (fa.rows[i].calls || fa.rows[i].ticks)
			fa.rows[n++] = fa.rows[i];
	}
	prof_flat_sort(fa.rows, n, sort);
	*out = fa.rows;
	*nout = n;
	fa.rows = NULL;
cleanup:
	free(fa.rows);
	free(fa.plus);
	free(fa.minus);
	if (!cache) {
		free(fa.seen);
		if (fa.scratch)
			flat_tree_free(fa.scratch);
		free(fa.scratch);
	}
	return err;
}

int prof_seg_flat(const void *mem, size_t len, __u32 tid, int sort, struct prof_snapshot **snap,
		  struct prof_flat_row **out, size_t *nout)
{
	/* a cache for the one call: its shares are what checks a slab that
	 * changes hands during the pass (flat_slab) */
	struct prof_seg_flat_cache *c = prof_seg_flat_cache__new();
	int err;

	if (!c)
		return -ENOMEM;
	err = prof_seg_flat_cached(mem, len, tid, sort, c, snap, out, nout);
	prof_seg_flat_cache__destroy(c);
	return err;
}

/* the segment's clock, now, as the writer reads it; 0 if this reader cannot
 * (then open calls count nothing) */
static __u64 reader_now(__u32 clock)
{
	struct timespec ts;

#if defined(__x86_64__) || defined(__i386__)
	if (clock == PROF_CLOCK_TSC)
		return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	/* PROF_CLOCK_TSC on aarch64: the virtual counter, as __prof_now */
	if (clock == PROF_CLOCK_TSC) {
		__u64 t;

		__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(t));
		return t;
	}
#endif
	if (clock != PROF_CLOCK_MONO || clock_gettime(CLOCK_MONOTONIC, &ts))
		return 0;
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* a small /proc file of a thread of pid, NUL terminated; 0 or -errno */
static int task_file(__u32 pid, __u32 tid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/%s", pid, tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	return 0;
}

/*
 * What only the kernel knows of a live process's threads: each one's CPU
 * time (its schedstat, from the CPU clock the runtime noted at its first
 * zone) and its comm (pthread_setname_np); of thread tid only, if not 0.
 * Only while pid is still the process that wrote the segment.
 */
static void read_live_threads(struct prof_snapshot *s, __u32 tid)
{
	char buf[128];
	__u32 i;

	if (!s->pid || prof_proc_start_token((pid_t)s->pid) != s->start_token)
		return;
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i];
		unsigned long long run;

		/* a flat pass of one thread (top, a thread at a time) reads its
		 * thread's files only: all of them made each pass O(threads^2) */
		if (t->state != PROF_SLAB_ALIVE || (tid && t->tid != tid))
			continue;
		if (!task_file(s->pid, t->tid, "comm", buf, sizeof(buf))) {
			buf[strcspn(buf, "\n")] = 0;
			buf[sizeof(t->comm) - 1] = 0;
			memcpy(t->comm, buf, strlen(buf) + 1);
		}
		if (t->oncpu_ns == PROF_SNAP_UNKNOWN && t->oncpu_start &&
		    !task_file(s->pid, t->tid, "schedstat", buf, sizeof(buf)) &&
		    sscanf(buf, "%llu", &run) == 1)
			t->oncpu_ns = run > t->oncpu_start ? run - t->oncpu_start : 0;
	}
}

/* sites [from, to) into s->sites (room for max_sites), checked */
static int read_sites(struct prof_snapshot *s, const char *base, const struct seg_geom *g,
		      __u32 from, __u32 to)
{
	__u32 i;

	for (i = from; i < to; i++) {
		const struct prof_site_ent *e =
			(const void *)(base + g->sites_off + (__u64)i * g->site_size);
		struct prof_snap_site *d = &s->sites[i];

		copy_bytes(d->name, e->name, sizeof(d->name));
		copy_bytes(d->func, e->func, sizeof(d->func));
		copy_bytes(d->file, e->file, sizeof(d->file));
		d->line = LD(&e->line);
		d->flags = LD(&e->flags);
		if (!str_ok(d->name, sizeof(d->name)) || !str_ok(d->func, sizeof(d->func)) ||
		    !str_ok(d->file, sizeof(d->file)))
			return -EINVAL;
	}
	return 0;
}

/* drop thread i of s: it is counted in the aggregate */
static void drop_thread(struct prof_snapshot *s, __u32 i)
{
	free(s->threads[i].nodes);
	memmove(&s->threads[i], &s->threads[i + 1], (s->nthreads - i - 1) * sizeof(*s->threads));
	s->nthreads--;
}

/*
 * The exited threads' aggregate, last of s's threads: copied inside its
 * seqlock with the folds since n0 (slab.h, 3.2), then the copies of the
 * threads those folds put in it are dropped, so every thread counts once.
 * -EAGAIN: more folds than the ring remembers ran during the read.
 */
static int read_agg(struct prof_snapshot *s, const void *mem, struct seg_geom *g, __u64 n0,
		    struct hist_pool *pool, unsigned int flags, struct flat_acc *fa, bool *sched)
{
	const struct prof_seg_hdr *h = mem;
	const char *slab = (const char *)mem + g->slabs_off + (__u64)g->agg_slab * g->slab_size;
	const struct prof_slab_hdr *sh = (const void *)slab;
	struct prof_snap_thread *t = &s->threads[s->nthreads];
	struct prof_fold ring[PROF_FOLD_RING];
	bool live = !g->snap_tick;
	__u64 n1 = 0, k;
	__u32 tries = 0, waits = 0, i, nf = 0;
	/* a fold takes at most a few milliseconds and the runtime folds many
	 * threads at once, seldom: a sequence that stays odd (some 50 ms) or
	 * keeps moving is a stuck or hostile writer, not a reason to spin */
	int err = -EBUSY;

	while (tries < 256 && waits < 1000) {
		__u32 seq = live ? LDA(&h->agg_seq) : 0, nsites;
		__u64 pool_n = pool->n;
		struct slab_pub pub;

		if (seq & 1) {
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
			waits++;
			err = -EBUSY;
			continue;
		}
		tries++;
		n1 = LD(&h->folds);
		if (!n1 || LDA(&sh->magic) != PROF_SLAB_MAGIC)
			return 0;
		pub.gen = LD(&sh->gen);
		pub.activity = LDA(&sh->activity);
		pub.nnodes = LDA(&sh->nnodes);
		/* after nnodes: every node names a site under it (struct slab_pub) */
		nsites = LDA(&h->nsites);
		if (nsites > g->max_sites)
			return -EINVAL;
		/* a flat pass's rows are sized already: sites as they were */
		if (fa)
			nsites = s->nsites;
		if (nsites > s->nsites) {
			struct prof_snap_site *v = realloc(s->sites, nsites * sizeof(*v));

			if (!v)
				return -ENOMEM;
			s->sites = v;
			err = read_sites(s, mem, g, s->nsites, nsites);
			if (err)
				return err;
			s->nsites = nsites;
		}
		err = read_thread(slab, g, s->nsites, g->agg_slab, &pub, t, pool, flags, fa, sched);
		nf = 0;
		/* a node of a site newer than the pass's: the next pass */
		if (fa && err == -EINVAL)
			return 0;
		/* a flat pass adds as it reads: it takes the aggregate once, and
		 * may count a thread that exits during the pass twice, until the
		 * next pass */
		if (fa)
			break;
		if (live && n1 > n0) {
			if (n1 - n0 > PROF_FOLD_RING)
				err = -EAGAIN;
			for (k = n0 + 1; !err && k <= n1; k++) {
				const struct prof_fold *f = &h->fold_ring[(k - 1) % PROF_FOLD_RING];

				ring[nf].slab = LD(&f->slab);
				ring[nf++].gen = LD(&f->gen);
			}
		}
		prof_seq_fence_acq();
		if (!live || LD(&h->agg_seq) == seq)
			break;
		/* a fold ran meanwhile: again */
		free(t->nodes);
		memset(t, 0, sizeof(*t));
		pool->n = pool_n;
		err = -EBUSY;
	}
	if (err) {
		free(t->nodes);
		memset(t, 0, sizeof(*t));
		return err;
	}
	t->folds = n1;
	t->tid = 0;
	s->nthreads++;
	/* the threads that exited during the read are in it: not twice */
	for (k = 0; k < nf; k++)
		for (i = 0; i + 1 < s->nthreads; i++)
			if (s->threads[i].slab == ring[k].slab && s->threads[i].gen == ring[k].gen) {
				drop_thread(s, i);
				break;
			}
	return 0;
}

static int read_seg_once(const void *mem, size_t len, unsigned int flags, struct flat_acc *fa,
			 struct prof_snapshot **out);

/* a read that raced more folds than the ring holds is taken again */
static int read_seg(const void *mem, size_t len, unsigned int flags, struct flat_acc *fa,
		    struct prof_snapshot **out)
{
	int err, tries = 0;

	do
		err = read_seg_once(mem, len, flags, fa, out);
	while (err == -EAGAIN && !fa && ++tries < 64);
	return err;
}

static int read_seg_once(const void *mem, size_t len, unsigned int flags, struct flat_acc *fa,
			 struct prof_snapshot **out)
{
	const struct prof_seg_hdr *h = mem;
	const char *base = mem;
	struct prof_snapshot *s;
	struct hist_pool pool = { 0 };
	struct slab_pub *pub = NULL;
	struct seg_geom g;
	__u32 i, nslabs;
	__u64 n0;
	bool sched = false, live;
	int err = -EINVAL;

	*out = NULL;
	err = seg_check(mem, len, &g);
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* from here every check that fails says the segment is corrupt */
	err = -EINVAL;
	{
		__u64 slabs_off = g.slabs_off, slab_size = g.slab_size, sites_off = g.sites_off;

		s->pid = LD(&h->pid);
		s->uid = LD(&h->uid);
		s->start_token = LD(&h->start_token);
		s->created_ns = LD(&h->created_ns);
		copy_bytes(s->comm, h->comm, sizeof(s->comm));
		s->comm[sizeof(s->comm) - 1] = 0;
		s->clock = LD(&h->clock);
		s->flags = LD(&h->flags);
		s->tick_hz = LD(&h->tick_hz);
		s->tick_base = LD(&h->tick_base);
		s->mono_base_ns = LD(&h->mono_base_ns);
		s->exit_tick = LD(&h->exit_tick);
		s->sites_dropped = LD(&h->sites_dropped);
		s->threads_dropped = LD(&h->threads_dropped);
		s->nospace = LD(&h->nospace);
		s->zone_cost = LD(&h->zone_cost);
		s->zone_inner = LD(&h->zone_inner);
		if (s->clock != PROF_CLOCK_TSC && s->clock != PROF_CLOCK_MONO)
			goto fail;
		/* one now for every open call of the read: an image's, the
		 * exit's, or the clock's */
		g.now = g.snap_tick	? g.snap_tick
			: s->exit_tick	? s->exit_tick
					: reader_now(s->clock);
		s->now_tick = g.now;

		/* the folds before any slab: each of them left its slab's gen odd */
		live = !g.snap_tick && g.folds;
		if (fa)
			fa->live = live;
		n0 = g.folds ? LDA(&h->folds) : 0;
		nslabs = LDA(&h->nslabs);
		if (nslabs > g.max_threads)
			goto fail;
		pub = malloc((nslabs ? nslabs : 1) * sizeof(*pub));
		if (!pub) {
			err = -ENOMEM;
			goto fail;
		}
		for (i = 0; i < nslabs; i++) {
			const struct prof_slab_hdr *sh =
				(const void *)(base + slabs_off + (__u64)i * slab_size);

			pub[i].gen = live ? LDA(&sh->gen) : 0;
			pub[i].activity = LDA(&sh->activity);
			pub[i].nnodes = LDA(&sh->nnodes);
		}
		s->nsites = LDA(&h->nsites);
		if (s->nsites > g.max_sites)
			goto fail;
		s->sites = calloc(s->nsites ? s->nsites : 1, sizeof(*s->sites));
		/* and one for the aggregate */
		s->threads = calloc((size_t)nslabs + 1, sizeof(*s->threads));
		if (!s->sites || !s->threads) {
			err = -ENOMEM;
			goto fail;
		}
		if (fa) {
			err = flat_size(fa, mem, len, &g, s->nsites,
					g.agg_slab != PROF_NO_SLOT ? g.agg_slab + 1 : nslabs);
			if (err)
				goto fail;
			err = -EINVAL;
		}
		(void)sites_off;
		if (read_sites(s, base, &g, 0, s->nsites))
			goto fail;
		for (i = 0; i < nslabs; i++) {
			const char *slab = base + slabs_off + (__u64)i * slab_size;
			struct prof_snap_thread *t = &s->threads[s->nthreads];
			__u64 pool_n = pool.n;

			/* a slab between two threads: its last is in the aggregate */
			if (live && (pub[i].gen & 1))
				continue;
			err = read_thread(slab, &g, s->nsites, i, &pub[i], t, &pool, flags, fa,
					  &sched);
			if (live && slab_moved(slab, pub[i].gen)) {
				/* it changed hands during the copy: never mix two
				 * threads' numbers; the one it held is folded */
				free(t->nodes);
				memset(t, 0, sizeof(*t));
				pool.n = pool_n;
				continue;
			}
			s->nthreads++;
			if (err)
				goto fail;
		}
		if (g.agg_slab != PROF_NO_SLOT) {
			err = read_agg(s, mem, &g, n0, &pool, flags, fa, &sched);
			if (err)
				goto fail;
		}
	}
	if (!g.snap_tick && !s->exit_tick)
		read_live_threads(s, fa ? fa->tid : 0);
	/* two clocks (a CPU clock, the TSC) may disagree by a little: never
	 * more CPU time than wall time */
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i];
		__u64 wall;

		if (t->oncpu_ns == PROF_SNAP_UNKNOWN)
			continue;
		/* the root's ticks; a lazy read has no nodes yet: its bounds */
		if (t->nnodes)
			wall = t->nodes[0].ticks;
		else if (g.snap_tick)
			continue;
		else {
			__u64 to = t->exit_tick && t->exit_tick < g.now ? t->exit_tick : g.now;

			wall = to > t->start_tick ? to - t->start_tick : 0;
		}
		if (t->oncpu_ns > prof_snap_ns(s, wall))
			t->oncpu_ns = prof_snap_ns(s, wall);
	}
	if ((flags & PROF_READ_LAZY) && !fa) {
		s->lazy = calloc(1, sizeof(*s->lazy));
		if (!s->lazy) {
			err = -ENOMEM;
			goto fail;
		}
		s->lazy->mem = mem;
		s->lazy->len = len;
		s->lazy->g = g;
		s->lazy->flags = flags;
		s->lazy->sched = sched;
		s->lazy->nsites = s->nsites;
		s->lazy->threads = s->threads;
		s->lazy->nthreads = s->nthreads;
	}
	/* a snapshot may be kept (profd's history): no slack past what it holds */
	if (pool.v && pool.n < pool.cap) {
		__u32 *v = realloc(pool.v, (pool.n ? pool.n : 1) * sizeof(*v));

		if (v)
			pool.v = v;
	}
	s->hist = pool.v;
	s->nhist = pool.n;
	*out = s;
	free(pub);
	return 0;
fail:
	s->hist = pool.v;
	prof_snapshot__destroy(s);
	free(pub);
	return err;
}

struct cursor_slab {
	__u64 gen;   /* the thread the rest is of (slab.h, 3.2) */
	__u32 nseen; /* nodes [0, nseen) were looked at */
	__u32 ntop, cap;
	__u32 *top; /* top-level node indices */
};

struct prof_seg_cursor {
	__u32 nslabs;
	struct cursor_slab *slabs;
};

struct prof_seg_cursor *prof_seg_cursor__new(void)
{
	return calloc(1, sizeof(struct prof_seg_cursor));
}

void prof_seg_cursor__destroy(struct prof_seg_cursor *c)
{
	__u32 i;

	if (!c)
		return;
	for (i = 0; i < c->nslabs; i++)
		free(c->slabs[i].top);
	free(c->slabs);
	free(c);
}

/* learn the top-level nodes among those created since the last look */
static int cursor_scan(struct cursor_slab *cs, const struct slab_view *v, __u32 nn)
{
	__u32 i;

	for (i = cs->nseen; i < nn; i++) {
		__u32 parent = LD(&view_node(v, i)->parent);

		if (i == 0 ? parent != 0 : parent >= i)
			return -EINVAL;
		/* 0 is the root, 1 the overflow node: neither is a zone */
		if (i < 2 || parent != 0)
			continue;
		if (cs->ntop == cs->cap) {
			__u32 cap = cs->cap ? cs->cap * 2 : 16, *top;

			top = realloc(cs->top, cap * sizeof(*top));
			if (!top)
				return -ENOMEM;
			cs->top = top;
			cs->cap = cap;
		}
		cs->top[cs->ntop++] = i;
	}
	cs->nseen = nn;
	return 0;
}

int prof_seg_cursor__sample(struct prof_seg_cursor *c, const void *mem, size_t len,
			    struct prof_seg_busy *out)
{
	const struct prof_seg_hdr *h = mem;
	struct seg_geom g;
	__u32 i, k, nslabs, ncur;
	int err;

	memset(out, 0, sizeof(*out));
	err = seg_check(mem, len, &g);
	if (err)
		return err;
	out->tick_hz = g.tick_hz;
	/* open calls count to now: time in zones grows smoothly, not by
	 * whole calls when they end */
	g.now = g.snap_tick ? g.snap_tick : reader_now(LD(&h->clock));
	out->pid = LD(&h->pid);
	out->uid = LD(&h->uid);
	out->start_token = LD(&h->start_token);
	out->created_ns = LD(&h->created_ns);
	copy_bytes(out->comm, h->comm, sizeof(out->comm));
	out->comm[sizeof(out->comm) - 1] = 0;
	nslabs = LDA(&h->nslabs);
	if (nslabs > g.max_threads)
		return -EINVAL;
	/* the exited threads' aggregate, as one more slab */
	ncur = g.agg_slab != PROF_NO_SLOT ? nslabs + 1 : nslabs;
	if (ncur > c->nslabs) {
		struct cursor_slab *v = realloc(c->slabs, ncur * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + c->nslabs, 0, (ncur - c->nslabs) * sizeof(*v));
		c->slabs = v;
		c->nslabs = ncur;
	}
	out->nthreads = nslabs;
	for (i = 0; i < ncur; i++) {
		__u32 idx = i < nslabs ? i : g.agg_slab;
		const char *slab = (const char *)mem + g.slabs_off + (__u64)idx * g.slab_size;
		const struct prof_slab_hdr *sh = (const void *)slab;
		struct cursor_slab *cs = &c->slabs[i];
		struct slab_view v;
		__u32 nn, state;
		__u64 gen;

		/* no fold yet: the aggregate is a hole, and a read of a tmpfs
		 * hole through a shared mapping is a page taken for it */
		if (idx == g.agg_slab && !LDA(&h->folds))
			continue;
		gen = LDA(&sh->gen);
		if (LDA(&sh->magic) != PROF_SLAB_MAGIC) {
			if (idx == g.agg_slab)
				continue;
			return -EINVAL;
		}
		/* between two threads, or another thread than last time */
		if (!g.snap_tick && g.folds && (gen & 1))
			continue;
		if (cs->gen != gen) {
			cs->gen = gen;
			cs->nseen = cs->ntop = 0;
		}
		nn = LDA(&sh->nnodes);
		state = LD(&sh->state);
		if (nn < 2 || nn > g.max_nodes || nn < cs->nseen ||
		    (state != PROF_SLAB_ALIVE && state != PROF_SLAB_EXITED))
			return -EINVAL;
		slab_view(slab, &g, &v);
		err = cursor_scan(cs, &v, nn);
		if (err)
			return err;
		for (k = 0; k < cs->ntop; k++) {
			__u32 top = cs->top[k];
			__u64 start;

			out->busy_ticks += LD(&view_node(&v, top)->ticks);
			start = LDA(&v.open[top]);
			if (start)
				out->busy_ticks += open_ticks(&v, start);
		}
		if (state == PROF_SLAB_ALIVE) {
			out->alive++;
			out->kernel += LD(&sh->ksched_slot) != PROF_NO_SLOT;
		}
	}
	return 0;
}

int prof_snapshot__read_fd(int fd, struct prof_snapshot **snap)
{
	return prof_snapshot__read_fd_opts(fd, 0, snap);
}

int prof_snapshot__read_fd_opts(int fd, unsigned int flags, struct prof_snapshot **snap)
{
	struct stat st;
	void *mem;
	int err;

	*snap = NULL;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct prof_seg_hdr))
		return -EINVAL;
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	err = prof_snapshot__read_opts(mem, (size_t)st.st_size, flags, snap);
	/* a lazy snapshot reads from the mapping until it is destroyed */
	if (!err && (*snap)->lazy) {
		(*snap)->lazy->map = mem;
		return 0;
	}
	munmap(mem, (size_t)st.st_size);
	return err;
}

/* thread t's nodes into tab, checked as the read checks them, and t's
 * nodes and nnodes pointed at them (t may be a copy: the helper's) */
static int lazy_fill(const struct prof_snap_lazy *z, struct lazy_table *tab,
		     struct prof_snap_thread *t)
{
	struct slab_view v;
	const char *slab;
	__u64 gen;
	__u32 nn;
	int err;

	t->nodes = NULL;
	t->nnodes = 0;
	if (t->slab >= z->g.max_threads && t->slab != z->g.agg_slab)
		return -EINVAL;
	slab = (const char *)z->mem + z->g.slabs_off + (__u64)t->slab * z->g.slab_size;
	/* the nodes the read checked, and no newer: a newer one may name a site
	 * registered since s->nsites was loaded.  Checked again as copied. */
	if (LDA(&((const struct prof_slab_hdr *)slab)->magic) != PROF_SLAB_MAGIC)
		return -EINVAL;
	nn = t->lazy_nnodes;
	if (nn < 2 || nn > z->g.max_nodes)
		return -EINVAL;
	if (nn > tab->cap) {
		struct prof_snap_node *nodes;
		__u64 *quant;
		/* room to grow: live threads add nodes between loads */
		__u32 cap = nn + nn / 4 < z->g.max_nodes ? nn + nn / 4 : z->g.max_nodes;

		nodes = malloc((size_t)cap * sizeof(*nodes));
		quant = malloc((size_t)cap * PROF_SNAP_NQUANT * sizeof(*quant));
		if (!nodes || !quant) {
			free(nodes);
			free(quant);
			return -ENOMEM;
		}
		free(tab->nodes);
		free(tab->quant);
		tab->nodes = nodes;
		tab->quant = quant;
		tab->cap = cap;
	}
	tab->pool.n = 0;
	slab_view(slab, &z->g, &v);
	if (t->slab == z->g.agg_slab)
		v.image = true;
	gen = LDA(&((const struct prof_slab_hdr *)slab)->gen);
	err = read_nodes(&v, z->nsites, nn, tab->nodes, &tab->pool, tab->quant, z->flags);
	prof_seq_fence_acq();
	/* a live thread that exited since the read: its numbers are in the
	 * aggregate now, its slab maybe another's; never mix them (slab.h) */
	if (!z->g.snap_tick && z->g.folds && t->slab != z->g.agg_slab &&
	    (gen != t->gen || LD(&((const struct prof_slab_hdr *)slab)->gen) != gen)) {
		memset(tab->nodes, 0, 2 * sizeof(*tab->nodes));
		tab->nodes[0].site = tab->nodes[1].site = PROF_SITE_NONE;
		memset(tab->quant, 0, 2 * PROF_SNAP_NQUANT * sizeof(*tab->quant));
		tab->pool.n = 0;
		nn = 2;
		err = 0;
	}
	if (err)
		return err;
	t->nodes = tab->nodes;
	t->nnodes = nn;
	err = thread_derive(t, z->nsites);
	if (err) {
		t->nodes = NULL;
		t->nnodes = 0;
	}
	return err;
}

static void *lazy_helper(void *arg)
{
	struct prof_snap_lazy *z = arg;

	pthread_mutex_lock(&z->lock);
	for (;;) {
		struct prof_snap_thread *t, copy;
		struct lazy_table *tab;
		int err;

		while (!z->want && !z->quit)
			pthread_cond_wait(&z->cv, &z->lock);
		if (z->quit)
			break;
		t = z->want;
		z->want = NULL;
		copy = *t;
		tab = &z->tab[!z->cur_tab];
		pthread_mutex_unlock(&z->lock);
		err = lazy_fill(z, tab, &copy);
		pthread_mutex_lock(&z->lock);
		z->got = t;
		z->got_t = copy;
		z->got_err = err;
		z->busy = false;
		pthread_cond_broadcast(&z->cv);
	}
	pthread_mutex_unlock(&z->lock);
	return NULL;
}

/* the helper, on the first load that has a next thread to load ahead */
static void lazy_ahead_start(struct prof_snap_lazy *z)
{
	if (z->ahead || !(z->flags & PROF_READ_AHEAD) || z->nthreads < 2)
		return;
	if (pthread_mutex_init(&z->lock, NULL))
		return;
	if (pthread_cond_init(&z->cv, NULL)) {
		pthread_mutex_destroy(&z->lock);
		return;
	}
	if (pthread_create(&z->helper, NULL, lazy_helper, z)) {
		/* no thread: every load is the caller's, as without the flag */
		pthread_cond_destroy(&z->cv);
		pthread_mutex_destroy(&z->lock);
		z->flags &= ~(unsigned int)PROF_READ_AHEAD;
		return;
	}
	z->ahead = true;
}

static void lazy_ahead_stop(struct prof_snap_lazy *z)
{
	if (!z->ahead)
		return;
	pthread_mutex_lock(&z->lock);
	z->quit = true;
	pthread_cond_broadcast(&z->cv);
	pthread_mutex_unlock(&z->lock);
	pthread_join(z->helper, NULL);
	pthread_cond_destroy(&z->cv);
	pthread_mutex_destroy(&z->lock);
	z->ahead = false;
}

int prof_snap_thread_load(const struct prof_snapshot *s, struct prof_snap_thread *t)
{
	struct prof_snap_lazy *z = s->lazy;
	bool taken = false;
	int err = 0;

	if (!z || z->cur == t)
		return 0;
	if (z->cur) {
		z->cur->nodes = NULL;
		z->cur->nnodes = 0;
		z->cur = NULL;
	}
	if (z->ahead) {
		pthread_mutex_lock(&z->lock);
		/* the helper idle, its table free or holding what we want: a
		 * request it has not taken up is withdrawn, one under way awaited */
		if (z->want) {
			z->want = NULL;
			z->busy = false;
		}
		while (z->busy)
			pthread_cond_wait(&z->cv, &z->lock);
		if (z->got == t) {
			t->nodes = z->got_t.nodes;
			t->nnodes = z->got_t.nnodes;
			err = z->got_err;
			taken = true;
		}
		z->got = NULL;
		/* its table is cur's now, or the one we load into */
		z->cur_tab = !z->cur_tab;
		pthread_mutex_unlock(&z->lock);
	}
	/* without the helper, one table serves every load */
	if (!taken)
		err = lazy_fill(z, &z->tab[z->cur_tab], t);
	if (err)
		return err;
	/* views go thread by thread (or every other, two at once): load the
	 * next one while this one is used */
	if (z->last && t > z->last && t < z->threads + z->nthreads)
		z->stride = (__u32)(t - z->last);
	else
		z->stride = 1;
	z->last = t;
	z->cur = t;
	lazy_ahead_start(z);
	if (z->ahead && t >= z->threads && t < z->threads + z->nthreads &&
	    z->stride <= (__u32)(z->threads + z->nthreads - 1 - t)) {
		pthread_mutex_lock(&z->lock);
		z->want = t + z->stride;
		z->busy = true;
		pthread_cond_broadcast(&z->cv);
		pthread_mutex_unlock(&z->lock);
	}
	return 0;
}

struct prof_snapshot *prof_snapshot__lazy_view(const struct prof_snapshot *s)
{
	struct prof_snapshot *v;
	struct prof_snap_lazy *z;
	__u32 i;

	if (!s || !s->lazy) {
		errno = EINVAL;
		return NULL;
	}
	v = malloc(sizeof(*v));
	z = calloc(1, sizeof(*z));
	if (!v || !z) {
		free(v);
		free(z);
		errno = ENOMEM;
		return NULL;
	}
	*v = *s;
	v->threads = malloc((s->nthreads ? s->nthreads : 1) * sizeof(*v->threads));
	if (!v->threads) {
		free(v);
		free(z);
		errno = ENOMEM;
		return NULL;
	}
	/* the threads as the read checked them, none loaded */
	memcpy(v->threads, s->threads, s->nthreads * sizeof(*v->threads));
	for (i = 0; i < v->nthreads; i++) {
		v->threads[i].nodes = NULL;
		v->threads[i].nnodes = 0;
	}
	z->mem = s->lazy->mem;
	z->len = s->lazy->len;
	z->g = s->lazy->g;
	z->flags = s->lazy->flags;
	z->nsites = s->lazy->nsites;
	z->sched = s->lazy->sched;
	z->threads = v->threads;
	z->nthreads = v->nthreads;
	z->view = true;
	v->lazy = z;
	v->hist = NULL;
	v->nhist = 0;
	return v;
}

int prof_snap_any_sched(const struct prof_snapshot *s)
{
	__u32 i, j;

	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		if (t->ksched_slot != PROF_NO_SLOT)
			return 1;
		for (j = 0; j < t->nnodes; j++)
			if (t->nodes[j].preempted || t->nodes[j].migrated || t->nodes[j].offcpu_ns ||
			    t->nodes[j].blocked || t->nodes[j].kernel_calls)
				return 1;
	}
	return s->lazy && s->lazy->sched;
}

void prof_snapshot__destroy(struct prof_snapshot *s)
{
	__u32 i;

	if (!s)
		return;
	if (s->lazy) {
		/* the threads' nodes, if any, are the lazy table */
		lazy_ahead_stop(s->lazy);
		for (i = 0; i < 2; i++) {
			free(s->lazy->tab[i].nodes);
			free(s->lazy->tab[i].quant);
			free(s->lazy->tab[i].pool.v);
		}
		if (s->lazy->map)
			munmap(s->lazy->map, s->lazy->len);
		/* a view's sites are its parent's */
		if (s->lazy->view)
			s->sites = NULL;
		free(s->lazy);
	} else {
		for (i = 0; i < s->nthreads; i++)
			free(s->threads[i].nodes);
	}
	free(s->threads);
	free(s->sites);
	free(s->hist);
	free(s);
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
		const __u64 *quant = s->lazy ? s->lazy->tab[s->lazy->cur_tab].quant : NULL;

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
	const struct hist_pool *lp = s->lazy ? &s->lazy->tab[s->lazy->cur_tab].pool : NULL;
	const __u32 *pool = lp ? lp->v : s->hist;
	__u64 npool = lp ? lp->n : s->nhist;

	if (!n->hist_n || !pool || (n->flags & PROF_SNAP_F_QUANT) || n->hist_off > npool ||
	    n->hist_n > npool - n->hist_off)
		return NULL;
	return pool + n->hist_off;
}

const char *prof_snap_thread_label(const struct prof_snap_thread *t, char *buf, size_t len)
{
	if (t->folds)
		snprintf(buf, len, "[exited threads] (%llu)", (unsigned long long)t->folds);
	else if (t->name[0])
		snprintf(buf, len, "%s", t->name);
	else if (t->comm[0])
		snprintf(buf, len, "%s", t->comm);
	else
		snprintf(buf, len, "tid %u", t->tid);
	return buf;
}

const char *prof_snap_node_name(const struct prof_snapshot *s, const struct prof_snap_node *n)
{
	if (n->site < s->nsites)
		return s->sites[n->site].name;
	/* the two nodes without a site: the root (depth 0) and overflow */
	return n->depth ? "[overflow]" : "[root]";
}

int prof_snap_is_recursive(const struct prof_snap_thread *t, __u32 i)
{
	return !!(t->nodes[i].flags & PROF_SNAP_F_RECURSIVE);
}

/*
 * Depth first, without recursion: a count per site of how often it is on
 * the path from the root; a node is recursive if its site already is.
 */
int prof_snap_mark_recursion(struct prof_snap_thread *t, __u32 nsites)
{
	__u32 *on_path = calloc((size_t)nsites + 1, sizeof(*on_path));
	struct prof_snap_node *nodes = t->nodes;
	__u32 i = nodes[0].first_child;

#define ROW(n) ((n)->site < nsites ? (n)->site : nsites)
	if (!on_path)
		return -ENOMEM;
	while (i != PROF_SNAP_NONE && i != 0) {
		struct prof_snap_node *n = &nodes[i];

		if (on_path[ROW(n)] && i > 1)
			n->flags |= PROF_SNAP_F_RECURSIVE;
		else
			n->flags &= ~PROF_SNAP_F_RECURSIVE;
		on_path[ROW(n)]++;
		if (n->first_child != PROF_SNAP_NONE) {
			i = n->first_child;
			continue;
		}
		/* leave i, then every ancestor whose children are done */
		for (;;) {
			on_path[ROW(&nodes[i])]--;
			if (nodes[i].next_sibling != PROF_SNAP_NONE) {
				i = nodes[i].next_sibling;
				break;
			}
			i = nodes[i].parent;
			if (i == 0)
				break;
		}
	}
#undef ROW
	free(on_path);
	return 0;
}

static __u64 sub0(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

static const struct prof_snap_thread *base_thread(const struct prof_snapshot *b,
						  const struct prof_snap_thread *t)
{
	__u32 i;

	/* by identity, not slab: a slab is handed from thread to thread, and
	 * an image numbers its threads anew */
	for (i = 0; i < b->nthreads; i++)
		if (b->threads[i].tid == t->tid && b->threads[i].start_tick == t->start_tick &&
		    !b->threads[i].folds == !t->folds)
			return &b->threads[i];
	return NULL;
}

/* node n of s less node bn of b: counters and histogram; max becomes the
 * top of the highest non-empty delta bucket, clamped to the real max */
static void node_sub(struct prof_snapshot *s, struct prof_snap_node *n,
		     const struct prof_snapshot *b, const struct prof_snap_node *bn)
{
	__u32 *h = s->hist ? s->hist + n->hist_off : NULL;
	const __u32 *bh = b->hist ? b->hist + bn->hist_off : NULL;
	__u64 top = 0;
	__u32 k;

	n->calls = sub0(n->calls, bn->calls);
	n->ticks = sub0(n->ticks, bn->ticks);
	n->preempted = sub0(n->preempted, bn->preempted);
	n->migrated = sub0(n->migrated, bn->migrated);
	n->offcpu_ns = sub0(n->offcpu_ns, bn->offcpu_ns);
	n->anomalies = sub0(n->anomalies, bn->anomalies);
	n->allocs = sub0(n->allocs, bn->allocs);
	n->alloc_bytes = sub0(n->alloc_bytes, bn->alloc_bytes);
	n->frees = sub0(n->frees, bn->frees);
	n->free_bytes = sub0(n->free_bytes, bn->free_bytes);
	n->blocked = sub0(n->blocked, bn->blocked);
	n->kernel_calls = sub0(n->kernel_calls, bn->kernel_calls);
	/* an open call: only its part inside the window */
	if (n->open_ticks > n->ticks)
		n->open_ticks = n->ticks;
	for (k = 0; k < n->hist_n; k++) {
		__u32 bk = n->hist_lo + k, bv = 0;

		if (bh && bk >= bn->hist_lo && bk - bn->hist_lo < bn->hist_n)
			bv = bh[bk - bn->hist_lo];
		h[k] = h[k] >= bv ? h[k] - bv : 0;
		if (h[k])
			top = prof_hist_lo(bk + 1) - 1;
	}
	/* max since the baseline: the top of the highest delta bucket */
	n->max = top < n->max ? top : n->max;
	if (!n->calls)
		n->max = 0;
}

/* a thread's counters less its baseline's */
static void thread_sub(struct prof_snap_thread *t, const struct prof_snap_thread *bt)
{
	__u32 k;

	t->overflow = sub0(t->overflow, bt->overflow);
	t->unbalanced = sub0(t->unbalanced, bt->unbalanced);
	t->frames = sub0(t->frames, bt->frames);
	t->frame_ticks = sub0(t->frame_ticks, bt->frame_ticks);
	t->oncpu_ns = t->oncpu_ns == PROF_SNAP_UNKNOWN || bt->oncpu_ns == PROF_SNAP_UNKNOWN
			      ? PROF_SNAP_UNKNOWN
			      : sub0(t->oncpu_ns, bt->oncpu_ns);
	for (k = 0; k < PROF_HIST_BUCKETS; k++)
		t->frame_hist[k] =
			t->frame_hist[k] >= bt->frame_hist[k] ? t->frame_hist[k] - bt->frame_hist[k] : 0;
}

/* node p's child of site in t (children linked), or PROF_SNAP_NONE */
static __u32 child_of(const struct prof_snap_thread *t, __u32 p, __u32 site)
{
	__u32 c;

	for (c = t->nodes[p].first_child; c != PROF_SNAP_NONE; c = t->nodes[c].next_sibling)
		if (t->nodes[c].site == site)
			return c;
	return PROF_SNAP_NONE;
}

/*
 * A baseline's thread that s no longer has exited since: s counts it in
 * its aggregate, so the aggregate loses the baseline's part of it, node by
 * node along the paths the fold took (slab.h): the window keeps what the
 * thread did inside it, and only that.
 */
static int agg_sub_thread(struct prof_snapshot *s, struct prof_snap_thread *agg,
			  const struct prof_snapshot *b, const struct prof_snap_thread *bt)
{
	__u32 *map, j;

	if (!bt->nnodes || !agg->nnodes)
		return 0;
	map = malloc(bt->nnodes * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (j = 0; j < bt->nnodes; j++) {
		__u32 m = j < 2 ? j : map[bt->nodes[j].parent];

		if (j >= 2 && m != 1 && m < agg->nnodes) {
			m = child_of(agg, m, bt->nodes[j].site);
			if (m == PROF_SNAP_NONE)
				m = 1;
		}
		if (m >= agg->nnodes)
			m = 1;
		map[j] = m;
		node_sub(s, &agg->nodes[m], b, &bt->nodes[j]);
	}
	thread_sub(agg, bt);
	free(map);
	return 0;
}

int prof_snapshot__advance(struct prof_snapshot *s, __u64 dt)
{
	__u32 i, j;

	if (s->lazy)
		return -EINVAL;
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i];

		if (t->state != PROF_SLAB_ALIVE || !t->nnodes)
			continue;
		t->nodes[0].ticks += dt;
		for (j = 1; j < t->nnodes; j++) {
			if (!t->nodes[j].open)
				continue;
			t->nodes[j].ticks += dt;
			t->nodes[j].open_ticks += dt;
		}
		if (thread_derive(t, s->nsites))
			return -ENOMEM;
	}
	s->now_tick += dt;
	return 0;
}

int prof_snapshot__diff(struct prof_snapshot *s, const struct prof_snapshot *b)
{
	struct prof_snap_thread *agg;
	__u32 i, j, k;
	int err;

	if (s->pid != b->pid || s->start_token != b->start_token)
		return -ESRCH;
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i];
		const struct prof_snap_thread *bt = base_thread(b, t);

		if (!bt)
			continue;
		thread_sub(t, bt);
		for (j = 0; j < t->nnodes && j < bt->nnodes; j++) {
			if (t->nodes[j].site != bt->nodes[j].site ||
			    t->nodes[j].parent != bt->nodes[j].parent)
				continue;
			node_sub(s, &t->nodes[j], b, &bt->nodes[j]);
		}
		if (thread_derive(t, s->nsites))
			return -ENOMEM;
	}
	/* the baseline's threads that exited since: out of the aggregate */
	agg = s->nthreads && s->threads[s->nthreads - 1].folds ? &s->threads[s->nthreads - 1] : NULL;
	for (k = 0; agg && k < b->nthreads; k++) {
		const struct prof_snap_thread *bt = &b->threads[k];

		if (bt->folds || base_thread(s, bt))
			continue;
		err = agg_sub_thread(s, agg, b, bt);
		if (err)
			return err;
	}
	if (agg && thread_derive(agg, s->nsites))
		return -ENOMEM;
	return 0;
}

/* snapshot -> segment image; the inverse of prof_snapshot__read */
/* the geometry of a snapshot's image */
struct image_geom {
	__u32 max_nodes;
	unsigned int shift;
	__u64 sites_off, slabs_off, slab_size, size;
	struct prof_region region[PROF_REGIONS];
	__u32 nreal; /* threads, the aggregate aside */
	bool agg;
};

static void image_geom(const struct prof_snapshot *s, struct image_geom *g)
{
	__u32 i;

	g->max_nodes = 2;
	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].nnodes > g->max_nodes)
			g->max_nodes = s->threads[i].nnodes;
	g->sites_off = PROF_SEG_HDR_SIZE;
	g->slabs_off =
		g->sites_off + (__u64)(s->nsites ? s->nsites : 1) * sizeof(struct prof_site_ent);
	g->slabs_off = (g->slabs_off + 4095) & ~4095ull;
	/* the smallest histogram block that holds every thread's nodes:
	 * a serialized snapshot is as small as its histograms allow */
	g->shift = 0;
	while (g->shift < PROF_HIST_SHIFT && (1u << g->shift) < g->max_nodes)
		g->shift++;
	g->slab_size = prof_slab_layout(g->max_nodes, g->shift, 0, g->region);
	/* the aggregate (always the last thread) one slab past the threads' */
	g->agg = s->nthreads && s->threads[s->nthreads - 1].folds;
	g->nreal = s->nthreads - g->agg;
	g->size = g->slabs_off + g->slab_size * ((g->nreal ? g->nreal : 1) + g->agg);
}

size_t prof_snapshot__image_size(const struct prof_snapshot *s)
{
	struct image_geom g;

	image_geom(s, &g);
	return g.size;
}

int prof_snapshot__write(const struct prof_snapshot *s, void **buf, size_t *len)
{
	size_t size = prof_snapshot__image_size(s);
	void *mem = calloc(1, size);
	int err;

	if (!mem)
		return -ENOMEM;
	err = prof_snapshot__write_into(s, mem, size);
	if (err) {
		free(mem);
		return err;
	}
	*buf = mem;
	*len = size;
	return 0;
}

int prof_snapshot__write_into(const struct prof_snapshot *s, void *out, size_t len)
{
	struct image_geom g;
	struct prof_seg_hdr *h;
	char *mem = out;
	__u32 i, j;

	/* a lazy snapshot's nodes and histograms are not all in memory */
	if (s->lazy)
		return -EINVAL;
	image_geom(s, &g);
	if (len != g.size)
		return -EINVAL;
	h = (struct prof_seg_hdr *)mem;
	h->magic = PROF_SEG_MAGIC;
	h->version = PROF_SEG_VERSION;
	h->hdr_size = sizeof(*h);
	h->seg_size = g.size;
	h->pid = s->pid;
	h->uid = s->uid;
	h->start_token = s->start_token;
	h->created_ns = s->created_ns;
	memcpy(h->comm, s->comm, sizeof(h->comm));
	h->clock = s->clock;
	h->flags = s->flags;
	h->tick_hz = s->tick_hz;
	h->tick_base = s->tick_base;
	h->mono_base_ns = s->mono_base_ns;
	h->max_sites = s->nsites ? s->nsites : 1;
	h->site_size = sizeof(struct prof_site_ent);
	h->max_threads = g.nreal ? g.nreal : 1;
	h->max_nodes = g.max_nodes;
	h->node_size = PROF_NODE_SIZE;
	h->hist_buckets = PROF_HIST_BUCKETS;
	h->ext_size = PROF_NODE_EXT_SIZE;
	h->hist_block = 1u << g.shift;
	h->sites_off = g.sites_off;
	h->slabs_off = g.slabs_off;
	h->slab_size = g.slab_size;
	h->minor = PROF_SEG_MINOR;
	h->slab_hdr_size = sizeof(struct prof_slab_hdr);
	h->nregions = PROF_REGIONS;
	memcpy(h->region, g.region, sizeof(g.region));
	h->nsites = s->nsites;
	h->nslabs = g.nreal;
	h->agg_slab = g.agg ? h->max_threads : PROF_NO_SLOT;
	h->folds = g.agg ? s->threads[s->nthreads - 1].folds : 0;
	h->sites_dropped = s->sites_dropped;
	h->threads_dropped = s->threads_dropped;
	h->exit_tick = s->exit_tick;
	h->nospace = s->nospace;
	h->zone_cost = s->zone_cost;
	h->zone_inner = s->zone_inner;
	/* the open calls as they were at the read: measured to its now */
	h->snap_tick = s->now_tick ? s->now_tick : 1;
	for (i = 0; i < s->nsites; i++) {
		struct prof_site_ent *e = (void *)(mem + g.sites_off + (__u64)i * sizeof(*e));

		memcpy(e->name, s->sites[i].name, sizeof(e->name));
		memcpy(e->func, s->sites[i].func, sizeof(e->func));
		memcpy(e->file, s->sites[i].file, sizeof(e->file));
		e->line = s->sites[i].line;
		e->flags = s->sites[i].flags;
	}
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];
		__u64 idx = t->folds ? h->max_threads : i;
		char *slab = mem + g.slabs_off + idx * g.slab_size;
		struct prof_slab_hdr *sh = (void *)slab;
		struct prof_node *nodes = (void *)(slab + g.region[PROF_REGION_NODES].off);
		struct prof_node_ext *ext = (void *)(slab + g.region[PROF_REGION_EXT].off);
		__u64 *open = (void *)(slab + g.region[PROF_REGION_OPEN].off);
		__u64 *rowmap = (void *)(slab + g.region[PROF_REGION_ROWMAP].off);
		__u32 *hist = (void *)(slab + g.region[PROF_REGION_HIST].off);

		sh->magic = PROF_SLAB_MAGIC;
		sh->state = t->state;
		sh->tid = t->tid;
		sh->nnodes = t->nnodes;
		sh->gen = t->gen;
		/* an image names a thread by what a report called it */
		memcpy(sh->name, t->name[0] ? t->name : t->comm, sizeof(sh->name));
		sh->name[sizeof(sh->name) - 1] = 0;
		if (t->oncpu_ns != PROF_SNAP_UNKNOWN) {
			sh->oncpu_start_ns = 1;
			sh->oncpu_exit_ns = t->oncpu_ns + 1;
		}
		sh->start_tick = t->start_tick;
		sh->exit_tick = t->exit_tick;
		sh->overflow = t->overflow;
		sh->unbalanced = t->unbalanced;
		sh->frames = t->frames;
		sh->frame_ticks = t->frame_ticks;
		sh->frame_max = t->frame_max;
		sh->ksched_slot = t->ksched_slot;
		memcpy(sh->frame_hist, t->frame_hist, sizeof(sh->frame_hist));
		for (j = 0; j < t->nnodes; j++) {
			const struct prof_snap_node *n = &t->nodes[j];
			struct prof_node *d = &nodes[j];
			struct prof_node_ext *e = &ext[j];
			__u32 k;

			d->site = n->site;
			d->parent = n->parent;
			d->calls = n->calls;
			/* an open call: its start, so the read at snap_tick finds
			 * the same ticks (the root's are its wall time) */
			d->ticks = n->ticks - (n->open ? n->open_ticks : 0);
			if (n->open && j)
				open[j] = h->snap_tick - n->open_ticks;
			d->max = n->max;
			/* only what is not zero: the image may be a sparse file */
			if (n->preempted | n->migrated | n->offcpu_ns | n->anomalies | n->allocs |
			    n->alloc_bytes | n->frees | n->free_bytes | n->blocked | n->kernel_calls) {
				sh->ext_used = 1;
				e->preempted = n->preempted;
				e->migrated = n->migrated;
				e->offcpu_ns = n->offcpu_ns;
				e->anomalies = n->anomalies;
				e->allocs = n->allocs;
				e->alloc_bytes = n->alloc_bytes;
				e->frees = n->frees;
				e->free_bytes = n->free_bytes;
				e->blocked = n->blocked;
				/* not covered: kernel_adj is the count itself */
				e->kernel_adj = n->kernel_calls;
			}
			if (n->hist_n && (!s->hist || n->hist_off > s->nhist ||
					  n->hist_n > s->nhist - n->hist_off))
				return -EINVAL;
			for (k = 0; k < n->hist_n && n->hist_lo + k < PROF_HIST_BUCKETS; k++) {
				__u32 b = n->hist_lo + k;

				if (!s->hist[n->hist_off + k])
					continue;
				hist[prof_hist_index(j, b, g.shift)] = s->hist[n->hist_off + k];
				rowmap[(j >> g.shift) * PROF_ROWMAP_WORDS + b / 64] |= 1ull
										       << (b % 64);
			}
		}
	}
	return 0;
}

/*
 * The event rings of mem's threads (slab.h).  Each ring is copied while its
 * thread may write it: what the thread overwrote during the copy is left
 * out, never shown torn.
 */
int prof_seg_trace(const void *mem, size_t len, struct prof_trace **out)
{
	const struct prof_seg_hdr *h = mem;
	const struct prof_region *rr;
	struct prof_trace *t;
	struct seg_geom g;
	__u32 nslabs, i;
	__u64 nev, k;
	int err;

	*out = NULL;
	err = seg_check(mem, len, &g);
	if (err)
		return err;
	nslabs = LDA(&h->nslabs);
	if (nslabs > g.max_threads)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->threads = calloc(nslabs ? nslabs : 1, sizeof(*t->threads)))) {
		free(t);
		return -ENOMEM;
	}
	t->tick_hz = g.tick_hz;
	t->tick_base = LD(&h->tick_base);
	t->mono_base_ns = LD(&h->mono_base_ns);
	t->clock = LD(&h->clock);
	t->pid = LD(&h->pid);
	t->image = g.snap_tick != 0;
	rr = &g.region[PROF_REGION_RING];
	nev = rr->size ? (rr->size - PROF_RING_HDR_SIZE) / sizeof(struct prof_event) : 0;
	t->ring_events = nev;
	for (i = 0; i < nslabs && nev; i++) {
		const char *slab = (const char *)mem + g.slabs_off + (__u64)i * g.slab_size;
		const struct prof_slab_hdr *sh = (const void *)slab;
		const struct prof_ring *r = (const void *)(slab + rr->off);
		const struct prof_event *ev = prof_ring_events(r);
		struct prof_trace_thread *tt = &t->threads[t->nthreads];
		bool live = !g.snap_tick && g.folds;
		__u64 h1, h2, lo, n, gen = live ? LDA(&sh->gen) : 0;
		__u32 state;

		if (LDA(&sh->magic) != PROF_SLAB_MAGIC)
			continue;
		/* a slab between two threads (slab.h): its last one's events
		 * went with it */
		if (live && (gen & 1))
			continue;
		state = LD(&sh->state);
		if (state != PROF_SLAB_ALIVE && state != PROF_SLAB_EXITED)
			continue;
		tt->tid = LD(&sh->tid);
		tt->slab = i;
		tt->gen = LD(&sh->gen);
		tt->ev = malloc(nev * sizeof(*tt->ev));
		if (!tt->ev) {
			prof_trace__destroy(t);
			return -ENOMEM;
		}
		h1 = LDA(&r->head);
		/* acquire: each load of the copy before the second head's (a
		 * fence would say it once, but TSan does not see fences) */
		for (k = 0; k < nev; k++) {
			tt->ev[k].start = LDA(&ev[k].start);
			tt->ev[k].dur_node = LDA(&ev[k].dur_node);
		}
		h2 = LD(&r->head);
		/* it changed hands during the copy: never two threads' events */
		if (live && LD(&sh->gen) != gen) {
			free(tt->ev);
			tt->ev = NULL;
			continue;
		}
		if (h2 < h1) {
			/* heads only grow: not a ring a thread writes */
			prof_trace__destroy(t);
			return -EINVAL;
		}
		/* a live writer may be at event h2, which overwrites h2 - nev
		 * (an exited thread's ring is whole) */
		lo = h1 > nev ? h1 - nev : 0;
		if (state == PROF_SLAB_ALIVE && h2 + 1 > nev && h2 + 1 - nev > lo)
			lo = h2 + 1 - nev;
		n = h1 > lo ? h1 - lo : 0;
		/* oldest first */
		if (n) {
			struct prof_event *v = malloc(n * sizeof(*v));

			if (!v) {
				prof_trace__destroy(t);
				return -ENOMEM;
			}
			for (k = 0; k < n; k++)
				v[k] = tt->ev[(lo + k) & (nev - 1)];
			free(tt->ev);
			tt->ev = v;
		}
		tt->n = n;
		tt->written = h1;
		t->nthreads++;
	}
	*out = t;
	return 0;
}

void prof_trace__destroy(struct prof_trace *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nthreads; i++)
		free(t->threads[i].ev);
	free(t->threads);
	free(t);
}
