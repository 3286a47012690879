// SPDX-License-Identifier: MIT
/*
 * reader_check.c - a segment's header checked before the reader trusts a
 * byte of it: the major, the clock, every struct's size, the geometry, each
 * region of a slab and each part of the annotation region inside its
 * bounds, the aggregate slab past the threads'.  What it fills (seg_geom)
 * is all the reader's copies use as bounds (reader.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader_int.h"

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

/*
 * 3.3: the annotation region's parts (slab.h), each inside the region,
 * apart from one another, a ring a header and a power of two of entries,
 * a table room for one entry at least.  No region (size 0): no parts.
 */
static int annot_parts_check(const struct prof_seg_hdr *h, struct seg_geom *g)
{
	static const __u64 esize[PROF_PARTS] = {
		sizeof(struct prof_plot),      sizeof(struct prof_plot_point),
		sizeof(struct prof_msg),       sizeof(struct prof_value),
		sizeof(struct prof_lock),      sizeof(struct prof_lock_span),
	};
	__u64 rsize = g->region[PROF_REGION_ANNOT].size;
	__u32 hdr_size = LD(&h->hdr_size), i, j;

	memset(g->part, 0, sizeof(g->part));
	if (!rsize)
		return 0;
	if (hdr_size < offsetof(struct prof_seg_hdr, part) + sizeof(h->part) ||
	    LD(&h->nparts) < PROF_PARTS || LD(&h->nparts) > PROF_PARTS_MAX)
		return -EINVAL;
	for (i = 0; i < PROF_PARTS; i++) {
		struct prof_region *p = &g->part[i];
		bool ring = i != PROF_PART_PLOTS && i != PROF_PART_LOCKS;

		p->off = LD(&h->part[i].off);
		p->size = LD(&h->part[i].size);
		if ((p->off & 7) || p->off > rsize || p->size > rsize - p->off)
			return -EINVAL;
		if (ring ? p->size < PROF_RING_HDR_SIZE + esize[i] ||
				   (p->size - PROF_RING_HDR_SIZE) % esize[i] ||
				   !ring_events_ok((p->size - PROF_RING_HDR_SIZE) / esize[i])
			 : p->size < esize[i])
			return -EINVAL;
	}
	for (i = 0; i < PROF_PARTS; i++)
		for (j = i + 1; j < PROF_PARTS; j++)
			if (g->part[i].off < g->part[j].off + g->part[j].size &&
			    g->part[j].off < g->part[i].off + g->part[i].size)
				return -EINVAL;
	return 0;
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
	/* 3.3: none (size 0), or its parts inside it (annot_parts_check) */
	need[PROF_REGION_ANNOT] = nreg > PROF_REGION_ANNOT ? LD(&h->region[PROF_REGION_ANNOT].size) : 0;
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
	return annot_parts_check(h, g);
}

PROF_HIDDEN int seg_check(const void *mem, size_t len, struct seg_geom *g)
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
	/* taken after the copy (thread_open_at) */
	g->now = 0;
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
