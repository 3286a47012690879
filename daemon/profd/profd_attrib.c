// SPDX-License-Identifier: MIT
/*
 * profd_attrib.c - which zone was open on a thread at an instant, read from
 * its slab after the fact (profd's samples, profd_stacks.c).
 *
 * The runtime keeps no "current node" word in the slab (the fast path sets
 * it in TLS only), but a thread's slab says, for every instant of the recent
 * past, which zones were open: the open words (each open node's start
 * tick, slab.h) for the calls still open, and the event ring (each closed
 * call's start and duration, in the order they ended) for those that have
 * closed.  The zone open at tick T is the innermost call that covered it:
 * the one with the latest start among those with start <= T < end (an open
 * call's end is now).  A sample is read some milliseconds after it was
 * taken, so this is exact as long as the ring still holds every call that
 * ended since T; a sample older than what the ring holds is said to be
 * unknown, never guessed.
 *
 * The open words are read before the ring: a call that closes between the
 * two reads is then seen in one of them (open, or in the ring), never in
 * neither.  Everything read is the writer's (an untrusted process): node
 * indices are bounded, the ring is read with its head checked around the
 * copy as reader_trace.c does, and nothing is followed as a pointer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader_int.h"
#include "profd_stacks.h"

struct cover {
	__u64 start, end;
	__u64 idx; /* the event's place in the ring; ~0: an open call */
	__u32 node; /* PROF_NODE_ROOT: a frame's event, no zone's */
};

/* the slab of tid, live and whole, else the one it left exiting (until
 * reused, it still says which zones were open: samples drained after
 * their thread ended are attributed); its index, or -ESRCH */
static int find_slab(const void *mem, const struct seg_geom *g, __u32 tid)
{
	const struct prof_seg_hdr *h = mem;
	__u32 nslabs = LDA(&h->nslabs), i;
	int exited = -ESRCH;

	if (nslabs > g->max_threads)
		return -EINVAL;
	for (i = 0; i < nslabs; i++) {
		const struct prof_slab_hdr *sh =
			(const void *)((const char *)mem + g->slabs_off + (__u64)i * g->slab_size);
		__u64 gen = g->folds ? LDA(&sh->gen) : 0;

		if (LDA(&sh->magic) != PROF_SLAB_MAGIC || (gen & 1) || LD(&sh->tid) != tid)
			continue;
		if (LD(&sh->state) == PROF_SLAB_ALIVE)
			return (int)i;
		if (LD(&sh->state) == PROF_SLAB_EXITED && exited < 0)
			exited = (int)i;
	}
	return exited;
}

/* tid's slab (find_slab) in a segment checked (g): its index and *slab, or -errno */
static int slab_of(const void *mem, const struct seg_geom *g, __u32 tid, const char **slab)
{
	int idx = find_slab(mem, g, tid);

	if (idx >= 0)
		*slab = (const char *)mem + g->slabs_off + (__u64)idx * g->slab_size;
	return idx;
}

/* a sample among the thread's, sorted by time, and the innermost call
 * found so far to cover it */
struct stab {
	__u64 tick, best_start;
	__u32 i, best;
	bool found;
};

static int cmp_stab(const void *a, const void *b)
{
	const struct stab *x = a, *y = b;

	if (x->tick != y->tick)
		return x->tick < y->tick ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* the first of the n samples (sorted by time) at or after t */
static __u32 first_at(const struct stab *st, __u32 n, __u64 t)
{
	__u32 lo = 0, hi = n;

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (st[mid].tick < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Each sample's innermost call: the latest start among the calls that
 * covered it, then the deeper node (a child's index is above its parent's).
 * Each call is laid on the samples within its [start, end), found by a
 * binary search among them sorted by time: the cost is the calls and, for
 * each sample, the calls over it (its depth), not calls times samples (a
 * busy thread ends thousands of calls between two drains).
 */
static void innermost(const struct cover *c, __u32 nc, struct stab *st, __u32 n)
{
	__u32 i, k;

	for (i = 0; i < nc; i++) {
		if (c[i].node == PROF_NODE_ROOT)
			continue;
		for (k = first_at(st, n, c[i].start); k < n && st[k].tick < c[i].end; k++) {
			struct stab *b = &st[k];

			if (!b->found || c[i].start > b->best_start ||
			    (c[i].start == b->best_start && c[i].node > b->best)) {
				b->best = c[i].node;
				b->best_start = c[i].start;
				b->found = true;
			}
		}
	}
}

/* buf (of *room elements of size each) with room for its n + 1st: as it
 * was, or doubled up to cap elements; NULL if not (buf still holds) */
static void *room_for(void *buf, size_t size, __u32 n, __u32 *room, __u32 cap)
{
	void *nb;
	__u32 want;

	if (n < *room)
		return buf;
	if (*room >= cap)
		return NULL;
	want = *room > cap / 2 ? cap : *room * 2;
	nb = realloc(buf, (size_t)want * size);
	if (nb)
		*room = want;
	return nb;
}

#define FAST_PER_SAMPLE 32 /* calls ended since a sample, a sample, for the search to pay */
#define FAST_SCAN 64	    /* calls looked at past a sample's place at most */

bool prof_attr_walk_only;
__u64 prof_attr_fast_used;

/* event idx of the ring: its start, ticks and node */
static void ev_get(const struct prof_event *ev, __u64 nev, __u64 idx, __u64 *st, __u64 *ticks,
		   __u32 *node)
{
	struct prof_event e = { LDA(&ev[idx & (nev - 1)].start),
				LDA(&ev[idx & (nev - 1)].dur_node) };

	*st = e.start;
	*ticks = prof_event_ticks(&e);
	*node = prof_event_node(&e);
}

/* node's parent in the slab's node table (node below nnodes) */
static __u32 parent_of(const char *nodes, const struct seg_geom *g, __u32 node)
{
	const struct prof_node *p = (const void *)(nodes + (size_t)node * g->node_size);

	return LD(&p->parent);
}

/*
 * Each sample's innermost closed call without reading every call ended
 * since (a busy thread ends thousands between two drains, a few cache lines
 * a sample each): the ring is in the order calls ended, so a binary search
 * finds the last call that ended at or before a sample's tick t (its place),
 * and the calls nest, so the first call after that place that covered t is
 * the innermost (a call that covered t and ended later encloses it); a
 * top-level call begun after t says no later call covered it.  Into
 * ord[].found/best/best_start (the open calls are the caller's); true if
 * done, false to walk instead: where the search would not pay, where a
 * place's call saturated its duration (its end is later than it says), where
 * a sample is older than what the ring holds, where a sample's call lies
 * more than FAST_SCAN past its place, or where the writer overwrote a place
 * while it was read.
 */
static bool attribute_fast(const struct seg_geom *g, const char *slab, const struct prof_ring *ring,
			   const struct prof_event *ev, __u64 nev, __u32 nn, struct stab *ord,
			   __u32 n)
{
	const char *nodes = slab + g->region[PROF_REGION_NODES].off;
	__u64 h1, h2, lo, a, b, mid, i, st, ticks, first = 0;
	__u32 j, k, node;

	if (prof_attr_walk_only || !nev)
		return false;
	h1 = LDA(&ring->head);
	lo = h1 >= nev ? h1 - nev + 1 : 0;
	if (h1 - lo < (__u64)n * FAST_PER_SAMPLE)
		return false;
	/* in k = idx + 1: a holds an event ended at or before t (lo: none
	 * read, before the ring), b one ended after it */
	a = lo;
	for (j = 0; j < n; j++) {
		__u64 t = ord[j].tick;

		b = h1;
		ev_get(ev, nev, b - 1, &st, &ticks, &node);
		if (st + ticks <= t) {
			a = b;
		} else {
			while (b - a > 1) {
				mid = a + (b - a) / 2;
				ev_get(ev, nev, mid - 1, &st, &ticks, &node);
				if (st + ticks <= t)
					a = mid;
				else
					b = mid;
			}
		}
		/* older than the ring reaches: the walk says what is unknown */
		if (a == lo)
			return false;
		ev_get(ev, nev, a - 1, &st, &ticks, &node);
		if (ticks >= PROF_EV_DUR_MAX)
			return false;
		if (!j) {
			first = a - 1;
			if (h1 - a < (__u64)n * FAST_PER_SAMPLE)
				return false;
		}
		for (i = a, k = 0; i < h1; i++, k++) {
			if (k == FAST_SCAN)
				return false;
			ev_get(ev, nev, i, &st, &ticks, &node);
			if (node == PROF_NODE_ROOT || node >= nn)
				continue;
			if (st <= t && (ticks >= PROF_EV_DUR_MAX || t < st + ticks)) {
				ord[j].found = true;
				ord[j].best = node;
				ord[j].best_start = st;
				break;
			}
			/* a top-level call begun after t: none that ended later
			 * covered t (it would enclose this one) */
			if (st > t && parent_of(nodes, g, node) == PROF_NODE_ROOT)
				break;
		}
	}
	/* the places read were not being overwritten (the oldest is the
	 * first sample's): else the walk, from a new head */
	h2 = LD(&ring->head);
	if (h2 < h1 || (h2 + 1 > nev && h2 + 1 - nev > first))
		return false;
	prof_attr_fast_used++;
	return true;
}

int prof_seg_attribute(const void *mem, size_t len, __u32 tid, struct prof_attr *s, __u32 n)
{
	struct seg_geom g;
	__u32 i;
	int err;

	for (i = 0; i < n; i++)
		s[i].node = PROF_ATTR_UNKNOWN;
	if (!n)
		return 0;
	err = seg_check(mem, len, &g);
	return err ? err : prof_seg_attribute_g(mem, &g, tid, s, n);
}

/* a thread's samples being attributed: its calls that covered one (the
 * open ones first), and the samples by time */
struct attr_ctx {
	const struct prof_slab_hdr *sh;
	const struct prof_ring *ring;
	const struct prof_event *ev;
	__u64 nev, gen, tmin;
	__u32 nn, cap; /* cap: covers at most */
	struct cover *c;
	__u32 nc, room;
	struct stab *ord;
	__u32 n;
};

/*
 * The calls that ended since the oldest sample, newest first, into x->c:
 * thousands for a busy thread, of which only those that covered a sample
 * are kept (ord[0..p) are the samples before an event's end: ends come
 * newest first, so p only moves down), and each one's end (ends[j], event
 * h1 - 1 - j) for what the ring no longer holds: the tick before which a
 * sample is unknown into *from.  0, -ESTALE or -ENOMEM.
 */
static int attribute_walk(struct attr_ctx *x, __u64 *from)
{
	const struct prof_event *ev = x->ev;
	struct cover *c = x->c;
	struct stab *ord = x->ord;
	__u64 nev = x->nev, tmin = x->tmin, h1, h2, k, lo, safe, complete_from = 0;
	__u64 *ends = malloc(4096 * sizeof(*ends));
	__u32 i, p, nc = x->nc, ne = 0, eroom = 4096, n = x->n;
	bool stopped = false;
	void *more;
	int err = 0;

	if (!ends)
		return -ENOMEM;
	h1 = nev ? LDA(&x->ring->head) : 0;
	/* not the slot a writer at h1 may be overwriting */
	lo = h1 >= nev ? h1 - nev + 1 : 0;
	p = n;
	for (k = h1; k > lo; k--) {
		__u64 st = LDA(&ev[(k - 1) & (nev - 1)].start);
		__u64 dn = LDA(&ev[(k - 1) & (nev - 1)].dur_node);
		struct prof_event e = { st, dn };
		__u32 node = prof_event_node(&e);
		__u64 ticks = prof_event_ticks(&e), end = st + ticks;

		/* events are in the order calls ended: the rest ended before
		 * every sample, so covered none of them */
		if (end <= tmin) {
			stopped = true;
			break;
		}
		if (!(more = room_for(ends, sizeof(*ends), ne, &eroom, x->cap))) {
			err = -ENOMEM;
			goto out;
		}
		ends = more;
		if (node >= x->nn) {
			ends[ne++] = ~0ull;
			continue;
		}
		if (ticks >= PROF_EV_DUR_MAX)
			end = ~0ull;
		ends[ne++] = end;
		while (p > 0 && ord[p - 1].tick >= end)
			p--;
		while (p < n && ord[p].tick < end)
			p++;
		if (!p || ord[p - 1].tick < st)
			continue;
		if (!(more = room_for(c, sizeof(*c), nc, &x->room, x->cap))) {
			err = -ENOMEM;
			goto out;
		}
		c = more;
		c[nc++] = (struct cover){ st, end, k - 1, node };
	}
	h2 = nev ? LD(&x->ring->head) : 0;
	if (h2 < h1 || LD(&x->sh->gen) != x->gen) {
		err = -ESTALE;
		goto out;
	}
	/* what the writer may have overwritten while it was read (from
	 * h2 + 1 - nev down) is dropped, the event the walk stopped at too */
	safe = h2 + 1 > nev ? h2 + 1 - nev : 0;
	if (stopped && k - 1 < safe)
		stopped = false;
	for (i = 0, p = 0; i < nc; i++)
		if (c[i].idx == ~0ull || c[i].idx >= safe)
			c[p++] = c[i];
	nc = p;
	/*
	 * What the ring no longer holds: unless the walk stopped at an event
	 * that ended before every sample, the calls that ended before the
	 * oldest event kept are unknown, and a sample taken before that
	 * event's end may have been in one of them.
	 */
	if (!stopped && (lo > 0 || safe > 0)) {
		complete_from = ~0ull;
		for (i = 0; i < ne && h1 - 1 - i >= safe; i++)
			if (ends[i] < complete_from)
				complete_from = ends[i];
	}
	*from = complete_from;
out:
	x->c = c;
	x->nc = nc;
	free(ends);
	return err;
}

int prof_seg_attribute_g(const void *mem, const struct seg_geom *g, __u32 tid,
			 struct prof_attr *s, __u32 n)
{
	const struct prof_region *rr;
	const __u64 *open;
	struct attr_ctx x = { .n = n, .tmin = ~0ull };
	const char *slab = NULL;
	__u64 complete_from = 0;
	__u32 i;
	int idx, err;

	for (i = 0; i < n; i++) {
		s[i].node = PROF_ATTR_UNKNOWN;
		if (s[i].tick < x.tmin)
			x.tmin = s[i].tick;
	}
	if (!n)
		return 0;
	idx = slab_of(mem, g, tid, &slab);
	if (idx < 0)
		return idx;
	x.sh = (const void *)slab;
	x.gen = LDA(&x.sh->gen);
	rr = &g->region[PROF_REGION_RING];
	x.nev = rr->size > PROF_RING_HDR_SIZE ?
			(rr->size - PROF_RING_HDR_SIZE) / sizeof(struct prof_event) :
			0;
	x.nn = LDA(&x.sh->nnodes);
	if (x.nn > g->max_nodes)
		return -EINVAL;
	x.cap = x.nn + (__u32)(x.nev < 1u << 24 ? x.nev : 1u << 24) + 1;
	/* the open calls and the few ended calls that covered a sample */
	x.room = x.nn + 256 < x.cap ? x.nn + 256 : x.cap;
	x.c = malloc((size_t)x.room * sizeof(*x.c));
	x.ord = malloc((size_t)n * sizeof(*x.ord));
	err = -ENOMEM;
	if (!x.c || !x.ord)
		goto out;
	/* the samples by time: a call is kept only if it covered one */
	for (i = 0; i < n; i++)
		x.ord[i] = (struct stab){ .tick = s[i].tick, .i = i };
	qsort(x.ord, n, sizeof(*x.ord), cmp_stab);

	/* the calls open now, first (see the top of this file) */
	open = (const void *)(slab + g->region[PROF_REGION_OPEN].off);
	for (i = 1; i < x.nn; i++) {
		__u64 st = LD(&open[i]);

		if (st)
			x.c[x.nc++] = (struct cover){ st, ~0ull, ~0ull, i };
	}
	x.ring = (const void *)(slab + rr->off);
	x.ev = prof_ring_events(x.ring);
	if (attribute_fast(g, slab, x.ring, x.ev, x.nev, x.nn, x.ord, n)) {
		err = LD(&x.sh->gen) != x.gen ? -ESTALE : 0;
	} else {
		/* what the search found before it gave up is found again */
		for (i = 0; i < n; i++)
			x.ord[i].found = false;
		err = attribute_walk(&x, &complete_from);
	}
	if (err)
		goto out;
	innermost(x.c, x.nc, x.ord, n);
	for (i = 0; i < n; i++) {
		struct prof_attr *a = &s[x.ord[i].i];

		if (a->tick < complete_from)
			a->node = PROF_ATTR_UNKNOWN;
		else
			a->node = x.ord[i].found ? x.ord[i].best : PROF_ATTR_OUTSIDE;
	}
	err = idx;
out:
	free(x.c);
	free(x.ord);
	return err;
}

int prof_seg_ring_oldest(const void *mem, size_t len, __u32 tid, __u64 *oldest)
{
	struct seg_geom g;
	int err;

	*oldest = 0;
	err = seg_check(mem, len, &g);
	return err ? err : prof_seg_ring_oldest_g(mem, &g, tid, oldest);
}

int prof_seg_ring_oldest_g(const void *mem, const struct seg_geom *g, __u32 tid, __u64 *oldest)
{
	const struct prof_region *rr;
	const struct prof_ring *ring;
	const struct prof_event *ev;
	const char *slab = NULL;
	__u64 nev, h;
	int idx;

	*oldest = 0;
	idx = slab_of(mem, g, tid, &slab);
	if (idx < 0)
		return idx;
	rr = &g->region[PROF_REGION_RING];
	nev = rr->size > PROF_RING_HDR_SIZE ?
		      (rr->size - PROF_RING_HDR_SIZE) / sizeof(struct prof_event) :
		      0;
	ring = (const void *)(slab + rr->off);
	ev = prof_ring_events(ring);
	h = nev ? LDA(&ring->head) : 0;
	/* a ring never wrapped holds every call: 0 */
	if (h >= nev && nev) {
		struct prof_event e = { LDA(&ev[(h + 1) & (nev - 1)].start),
					LDA(&ev[(h + 1) & (nev - 1)].dur_node) };

		*oldest = e.start + prof_event_ticks(&e);
	}
	return 0;
}

int prof_seg_node_path(const void *mem, size_t len, __u32 slab_idx, __u32 node, char *buf,
		       size_t size)
{
	struct seg_geom g;
	int err;

	if (!size)
		return -EINVAL;
	buf[0] = 0;
	err = seg_check(mem, len, &g);
	return err ? err : prof_seg_node_path_g(mem, &g, slab_idx, node, buf, size);
}

int prof_seg_node_path_g(const void *mem, const struct seg_geom *gp, __u32 slab_idx, __u32 node,
			 char *buf, size_t size)
{
	const struct prof_seg_hdr *h = mem;
	const struct prof_slab_hdr *sh;
	const struct seg_geom g = *gp;
	__u32 chain[PROF_ATTR_DEPTH], depth = 0, nn, nsites, i;
	const char *slab, *nodes;
	size_t off = 0;

	if (!size)
		return -EINVAL;
	buf[0] = 0;
	if (slab_idx >= g.max_threads)
		return -EINVAL;
	slab = (const char *)mem + g.slabs_off + (__u64)slab_idx * g.slab_size;
	sh = (const void *)slab;
	nn = LDA(&sh->nnodes);
	nsites = LDA(&h->nsites);
	if (nn > g.max_nodes || nsites > g.max_sites || node >= nn)
		return -EINVAL;
	nodes = slab + g.region[PROF_REGION_NODES].off;
	/* parents point below (slab.h): a walk up ends, bounded anyway */
	while (node != PROF_NODE_ROOT && depth < PROF_ATTR_DEPTH) {
		const struct prof_node *p = (const void *)(nodes + (size_t)node * g.node_size);
		__u32 parent = LD(&p->parent);

		chain[depth++] = node;
		if (parent >= node)
			return -EINVAL;
		node = parent;
	}
	if (node != PROF_NODE_ROOT)
		return -E2BIG;
	for (i = depth; i-- > 0;) {
		const struct prof_node *p = (const void *)(nodes + (size_t)chain[i] * g.node_size);
		__u32 site = LD(&p->site);
		char name[PROF_NAME_MAX];
		int w;

		if (site == PROF_SITE_NONE) {
			strcpy(name, "[overflow]");
		} else if (site < nsites) {
			const struct prof_site_ent *e =
				(const void *)((const char *)mem + g.sites_off +
					       (size_t)site * g.site_size);

			copy_bytes(name, e->name, sizeof(name));
			if (!str_ok(name, sizeof(name)))
				return -EINVAL;
		} else {
			return -EINVAL;
		}
		w = snprintf(buf + off, size - off, "%s%s", off ? PROF_ATTR_SEP : "", name);
		if (w < 0 || (size_t)w >= size - off)
			return -ENAMETOOLONG;
		off += (size_t)w;
	}
	return 0;
}
