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

/* tid's slab (find_slab) in a segment that checks: its index and *slab, or -errno */
static int slab_of(const void *mem, size_t len, __u32 tid, struct seg_geom *g, const char **slab)
{
	int idx, err = seg_check(mem, len, g);

	if (err)
		return err;
	idx = find_slab(mem, g, tid);
	if (idx >= 0)
		*slab = (const char *)mem + g->slabs_off + (__u64)idx * g->slab_size;
	return idx;
}

/* the innermost of the calls that covered t: latest start, then the deeper
 * node (a child's index is above its parent's) */
static __u32 innermost(const struct cover *c, __u32 n, __u64 t, bool *found)
{
	__u64 best_start = 0;
	__u32 i, best = PROF_NODE_ROOT;

	*found = false;
	for (i = 0; i < n; i++) {
		if (c[i].start > t || t >= c[i].end || c[i].node == PROF_NODE_ROOT)
			continue;
		if (!*found || c[i].start > best_start ||
		    (c[i].start == best_start && c[i].node > best)) {
			best = c[i].node;
			best_start = c[i].start;
			*found = true;
		}
	}
	return best;
}

int prof_seg_attribute(const void *mem, size_t len, __u32 tid, struct prof_attr *s, __u32 n)
{
	const struct prof_region *ro, *rr;
	const struct prof_slab_hdr *sh;
	const struct prof_ring *ring;
	const struct prof_event *ev;
	const __u64 *open;
	struct cover *c = NULL;
	struct seg_geom g;
	const char *slab = NULL;
	__u64 gen, nev, h1, h2, k, lo, safe, tmin = ~0ull, complete_from = 0;
	bool stopped = false;
	__u32 nn, i, m, nc = 0, cap;
	int idx;

	for (i = 0; i < n; i++) {
		s[i].node = PROF_ATTR_UNKNOWN;
		if (s[i].tick < tmin)
			tmin = s[i].tick;
	}
	if (!n)
		return 0;
	idx = slab_of(mem, len, tid, &g, &slab);
	if (idx < 0)
		return idx;
	sh = (const void *)slab;
	gen = LDA(&sh->gen);
	ro = &g.region[PROF_REGION_OPEN];
	rr = &g.region[PROF_REGION_RING];
	nev = rr->size > PROF_RING_HDR_SIZE ?
		      (rr->size - PROF_RING_HDR_SIZE) / sizeof(struct prof_event) :
		      0;
	nn = LDA(&sh->nnodes);
	if (nn > g.max_nodes)
		return -EINVAL;
	cap = nn + (__u32)(nev < 1u << 24 ? nev : 1u << 24) + 1;
	c = malloc((size_t)cap * sizeof(*c));
	if (!c)
		return -ENOMEM;

	/* the calls open now, first (see the top of this file) */
	open = (const void *)(slab + ro->off);
	for (i = 1; i < nn; i++) {
		__u64 st = LD(&open[i]);

		if (st)
			c[nc++] = (struct cover){ st, ~0ull, ~0ull, i };
	}

	/* then the calls that ended since the oldest sample, newest first */
	ring = (const void *)(slab + rr->off);
	ev = prof_ring_events(ring);
	h1 = nev ? LDA(&ring->head) : 0;
	/* not the slot a writer at h1 may be overwriting */
	lo = h1 >= nev ? h1 - nev + 1 : 0;
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
		if (node < nn && nc < cap)
			c[nc++] = (struct cover){ st, ticks >= PROF_EV_DUR_MAX ? ~0ull : end, k - 1,
						  node };
	}
	h2 = nev ? LD(&ring->head) : 0;
	if (h2 < h1 || LD(&sh->gen) != gen) {
		free(c);
		return -ESTALE;
	}
	/* what the writer may have overwritten while it was read (from
	 * h2 + 1 - nev down) is dropped, the event the walk stopped at too */
	safe = h2 + 1 > nev ? h2 + 1 - nev : 0;
	if (stopped && k - 1 < safe)
		stopped = false;
	for (i = 0, m = 0; i < nc; i++)
		if (c[i].idx == ~0ull || c[i].idx >= safe)
			c[m++] = c[i];
	nc = m;
	/*
	 * What the ring no longer holds: unless the walk stopped at an event
	 * that ended before every sample, the calls that ended before the
	 * oldest event kept are unknown, and a sample taken before that
	 * event's end may have been in one of them.
	 */
	if (!stopped && (lo > 0 || safe > 0)) {
		complete_from = ~0ull;
		for (i = 0; i < nc; i++)
			if (c[i].idx != ~0ull && c[i].end < complete_from)
				complete_from = c[i].end;
	}
	for (i = 0; i < n; i++) {
		bool found;
		__u32 node = innermost(c, nc, s[i].tick, &found);

		if (s[i].tick < complete_from)
			s[i].node = PROF_ATTR_UNKNOWN;
		else
			s[i].node = found ? node : PROF_ATTR_OUTSIDE;
	}
	free(c);
	return idx;
}

int prof_seg_ring_oldest(const void *mem, size_t len, __u32 tid, __u64 *oldest)
{
	const struct prof_region *rr;
	const struct prof_ring *ring;
	const struct prof_event *ev;
	struct seg_geom g;
	const char *slab = NULL;
	__u64 nev, h;
	int idx;

	*oldest = 0;
	idx = slab_of(mem, len, tid, &g, &slab);
	if (idx < 0)
		return idx;
	rr = &g.region[PROF_REGION_RING];
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
	const struct prof_seg_hdr *h = mem;
	const struct prof_slab_hdr *sh;
	__u32 chain[PROF_ATTR_DEPTH], depth = 0, nn, nsites, i;
	struct seg_geom g;
	const char *slab, *nodes;
	size_t off = 0;
	int err;

	if (!size)
		return -EINVAL;
	buf[0] = 0;
	err = seg_check(mem, len, &g);
	if (err)
		return err;
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
