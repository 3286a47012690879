// SPDX-License-Identifier: MIT
/*
 * test_reader.c - the reader distrusts the segment.  Starting from a real
 * image (this process's own segment, written back with
 * prof_snapshot__write), hostile variants: every truncation up to past the
 * header, flipped bytes in the geometry, parent cycles and forward links,
 * site indices out of range, unterminated strings, a wrong version
 * (-EPROTO), counts out of bounds, huge counters, each slab region shifted,
 * shrunk or past the end (in an image with an aggregate slab, this process
 * running with few slabs, and in a copy of its live segment, rings too),
 * and random mutations.
 * Each read returns an error or a snapshot that every consumer (quantiles,
 * flat view, text and JSON reports, diff) walks without fault; ASan and
 * UBSan watch the walk.
 */
#include <pthread.h>
#include <stddef.h>

#include "fastpath.h"
#include "snap_fixture.h"
#include "prof.h"

static void rd_inner(int i)
{
	PROF_USDT(rd_inner);
	PROF_ALLOC(i);
	/* annotations too: the regions' tests move their parts */
	PROF_ZONE_VALUE(i);
	PROF_PLOT(rd_plot, i);
	PROF_MESSAGE("rd %d", i);
	PROF_LOCK_ACQUIRED(rd_lock);
	PROF_LOCK_RELEASED(rd_lock);
}

static void rd_rec(int n)
{
	PROF_USDT(rd_rec);
	if (n > 1)
		rd_rec(n - 1);
}

/* a valid image with a few threads' worth of nodes */
static void *base_image(size_t *len)
{
	struct prof_snapshot *s;
	void *buf;
	int i;

	PROF_THREAD_NAME("reader");
	for (i = 0; i < 50; i++) {
		PROF_USDT(rd_outer);
		rd_inner(i);
		rd_rec(4);
	}
	s = test_snapshot(0);
	assert_non_null(s);
	assert_int_equal(prof_snapshot__write(s, &buf, len), 0);
	prof_snapshot__destroy(s);
	return buf;
}

static FILE *devnull(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	assert_non_null(f);
	return f;
}

/* use everything a consumer would: must not fault on a snapshot that read OK */
static void walk(struct prof_snapshot *s)
{
	struct prof_report_opts o = { .sort = PROF_SORT_P99 };
	struct prof_flat_row *rows;
	struct prof_snapshot *copy = NULL;
	size_t n, len;
	void *buf;
	__u32 i, j;
	char lbl[64];

	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		prof_snap_thread_label(t, lbl, sizeof(lbl));
		for (j = 0; j < t->nnodes; j++) {
			const struct prof_snap_node *nd = &t->nodes[j];

			assert_true(j == 0 || nd->parent < j);
			(void)prof_snap_node_name(s, nd);
			(void)prof_snap_quantile(s, nd, 0.5);
			(void)prof_snap_quantile(s, nd, 0.99);
			(void)prof_snap_quantile(s, nd, 1.0);
			(void)prof_snap_ns(s, nd->ticks);
			(void)prof_snap_self(nd);
			(void)prof_snap_is_recursive(t, j);
		}
	}
	if (!prof_snap_flat(s, 0, PROF_SORT_TOTAL, &rows, &n))
		free(rows);
	prof_report_text(devnull(), s, &o);
	prof_report_json(devnull(), &s, 1);
	/* written and read back: still valid, and diffable against itself */
	if (!prof_snapshot__write(s, &buf, &len)) {
		if (!prof_snapshot__read(buf, len, &copy)) {
			assert_int_equal(prof_snapshot__diff(copy, s), 0);
			for (i = 0; i < copy->nthreads; i++)
				for (j = 0; j < copy->threads[i].nnodes; j++)
					(void)prof_snap_quantile(copy, &copy->threads[i].nodes[j],
								 0.9);
			prof_snapshot__destroy(copy);
		}
		free(buf);
	}
}

/* read a variant: an error, or a snapshot that survives the walk */
static int try_read(const void *img, size_t len)
{
	struct prof_snapshot *s = NULL;
	int err = prof_snapshot__read(img, len, &s);

	if (err) {
		assert_null(s);
		assert_true(err < 0);
		return err;
	}
	assert_non_null(s);
	walk(s);
	prof_snapshot__destroy(s);
	return 0;
}

/* a private heap copy of exactly len bytes: ASan sees any read past it */
static void *dup_img(const void *img, size_t len)
{
	void *p = malloc(len ? len : 1);

	assert_non_null(p);
	memcpy(p, img, len);
	return p;
}

static struct prof_seg_hdr *hdr(void *img)
{
	return (struct prof_seg_hdr *)img;
}

static struct prof_slab_hdr *slab(void *img, __u32 i)
{
	return (struct prof_slab_hdr *)((char *)img + hdr(img)->slabs_off +
					(size_t)i * hdr(img)->slab_size);
}

static struct prof_node *node(void *img, __u32 t, __u32 i)
{
	return (struct prof_node *)((char *)slab(img, t) +
				    hdr(img)->region[PROF_REGION_NODES].off) +
	       i;
}

static struct prof_node_ext *node_ext(void *img, __u32 t, __u32 i)
{
	return (struct prof_node_ext *)((char *)slab(img, t) +
					hdr(img)->region[PROF_REGION_EXT].off) +
	       i;
}

static void test_valid_image(void **state)
{
	size_t len;
	void *img = base_image(&len);
	__u32 t, most = 2;

	(void)state;
	assert_int_equal(try_read(img, len), 0);
	/* written with the smallest histogram block that holds its nodes,
	 * where the runtime writes PROF_HIST_BLOCK */
	for (t = 0; t < hdr(img)->nslabs; t++)
		most = slab(img, t)->nnodes > most ? slab(img, t)->nnodes : most;
	assert_true(hdr(img)->hist_block >= most && hdr(img)->hist_block < 2 * most);
	assert_true(hdr(img)->hist_block < PROF_HIST_BLOCK);
	free(img);
}

static void test_truncated(void **state)
{
	struct prof_snapshot *s;
	size_t len, l;
	void *img = base_image(&len);

	(void)state;
	/* every length up to past the header, then strides to the end */
	for (l = 0; l < len; l += l < PROF_SEG_HDR_SIZE + 256 ? 1 : 97) {
		void *p = dup_img(img, l);

		assert_int_not_equal(try_read(p, l), 0);
		free(p);
	}
	assert_int_equal(try_read(img, len), 0);
	assert_int_equal(prof_snapshot__read(NULL, len, &s), -EINVAL);
	free(img);
}

static void test_version(void **state)
{
	struct prof_snapshot *s;
	size_t len;
	void *img = base_image(&len);

	(void)state;
	hdr(img)->version = PROF_SEG_VERSION + 1;
	assert_int_equal(prof_snapshot__read(img, len, &s), -EPROTO);
	assert_null(s);
	hdr(img)->version = PROF_SEG_VERSION;
	hdr(img)->magic ^= 1;
	assert_int_equal(prof_snapshot__read(img, len, &s), -EINVAL);
	free(img);
}

static void test_geometry_bytes(void **state)
{
	static const unsigned char flips[] = { 0x01, 0x80, 0xff, 0x10 };
	size_t len, off;
	void *img = base_image(&len);
	unsigned f;

	(void)state;
	/* every byte of the header, several ways */
	for (off = 0; off < sizeof(struct prof_seg_hdr); off++)
		for (f = 0; f < sizeof(flips); f++) {
			unsigned char *p = dup_img(img, len);

			p[off] ^= flips[f];
			try_read(p, len);
			free(p);
		}
	/* and chosen hostile values */
	{
		struct {
			size_t off, size;
			__u64 v;
		} bad[] = {
			{ offsetof(struct prof_seg_hdr, max_nodes), 4, 0 },
			{ offsetof(struct prof_seg_hdr, max_nodes), 4, 0xffffffff },
			{ offsetof(struct prof_seg_hdr, max_threads), 4, 0 },
			{ offsetof(struct prof_seg_hdr, max_threads), 4, 0xffffffff },
			{ offsetof(struct prof_seg_hdr, max_sites), 4, 0xffffffff },
			{ offsetof(struct prof_seg_hdr, nslabs), 4, 0xffffffff },
			{ offsetof(struct prof_seg_hdr, nsites), 4, 0xffffffff },
			{ offsetof(struct prof_seg_hdr, sites_off), 8, ~0ull },
			{ offsetof(struct prof_seg_hdr, sites_off), 8, 0 },
			{ offsetof(struct prof_seg_hdr, slabs_off), 8, ~0ull - 4095 },
			{ offsetof(struct prof_seg_hdr, slabs_off), 8, 1 },
			{ offsetof(struct prof_seg_hdr, slab_size), 8, 0 },
			{ offsetof(struct prof_seg_hdr, slab_size), 8, 1ull << 63 },
			{ offsetof(struct prof_seg_hdr, seg_size), 8, ~0ull },
			{ offsetof(struct prof_seg_hdr, tick_hz), 8, 0 },
			{ offsetof(struct prof_seg_hdr, clock), 4, 77 },
			{ offsetof(struct prof_seg_hdr, hdr_size), 4, 1 },
			{ offsetof(struct prof_seg_hdr, node_size), 4, 64 },
			{ offsetof(struct prof_seg_hdr, hist_buckets), 4, 1000 },
			{ offsetof(struct prof_seg_hdr, ext_size), 4, 32 },
			{ offsetof(struct prof_seg_hdr, hist_block), 4, 0 },
			{ offsetof(struct prof_seg_hdr, hist_block), 4, 12 },
			{ offsetof(struct prof_seg_hdr, hist_block), 4, 512 },
		};
		unsigned i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			unsigned char *p = dup_img(img, len);

			memcpy(p + bad[i].off, &bad[i].v, bad[i].size);
			if (try_read(p, len) == 0)
				fail_msg("hostile header field at %zu accepted", bad[i].off);
			free(p);
		}
	}
	free(img);
}

static void test_links_and_strings(void **state)
{
	size_t len;
	void *img = base_image(&len), *p;
	__u32 nn = slab(img, 0)->nnodes, last = nn - 1;

	(void)state;
	assert_true(nn > 4);
	assert_int_equal(try_read(img, len), 0);
	/* a node that is its own parent */
	p = dup_img(img, len);
	node(p, 0, last)->parent = last;
	assert_int_equal(try_read(p, len), -EINVAL);
	free(p);
	/* a forward link, and a cycle through it */
	p = dup_img(img, len);
	node(p, 0, 2)->parent = 3;
	node(p, 0, 3)->parent = 2;
	assert_int_equal(try_read(p, len), -EINVAL);
	free(p);
	/* a parent past the table */
	p = dup_img(img, len);
	node(p, 0, last)->parent = 0xfffffff0;
	assert_int_equal(try_read(p, len), -EINVAL);
	free(p);
	/* a root with a parent */
	p = dup_img(img, len);
	node(p, 0, 0)->parent = 1;
	assert_int_equal(try_read(p, len), -EINVAL);
	free(p);
	/* a site index past the site table, and a zone without a site */
	p = dup_img(img, len);
	node(p, 0, last)->site = hdr(p)->nsites;
	assert_int_equal(try_read(p, len), -EINVAL);
	free(p);
	p = dup_img(img, len);
	node(p, 0, last)->site = PROF_SITE_NONE;
	assert_int_equal(try_read(p, len), -EINVAL);
	free(p);
	/* nnodes past the table; below the two reserved nodes */
	p = dup_img(img, len);
	slab(p, 0)->nnodes = hdr(p)->max_nodes + 1;
	assert_int_equal(try_read(p, len), -EINVAL);
	slab(p, 0)->nnodes = 1;
	assert_int_equal(try_read(p, len), -EINVAL);
	free(p);
	/* a slab without its magic, a slab in an unknown state */
	p = dup_img(img, len);
	slab(p, 0)->magic = 0;
	assert_int_equal(try_read(p, len), -EINVAL);
	free(p);
	p = dup_img(img, len);
	slab(p, 0)->state = 9;
	assert_int_equal(try_read(p, len), -EINVAL);
	free(p);
	/* unterminated strings: site name, func, file */
	{
		size_t offs[] = { offsetof(struct prof_site_ent, name),
				  offsetof(struct prof_site_ent, func),
				  offsetof(struct prof_site_ent, file) };
		size_t lens[] = { PROF_NAME_MAX, PROF_FUNC_MAX, PROF_FILE_MAX };
		unsigned i;

		for (i = 0; i < 3; i++) {
			p = dup_img(img, len);
			memset((char *)p + hdr(p)->sites_off + offs[i], 'A', lens[i]);
			assert_int_equal(try_read(p, len), -EINVAL);
			free(p);
		}
	}
	/* an unterminated thread name and comm are cut, not trusted */
	p = dup_img(img, len);
	memset(slab(p, 0)->name, 'B', PROF_THREAD_NAME_MAX);
	memset(hdr(p)->comm, 'C', PROF_COMM_MAX);
	{
		struct prof_snapshot *s;

		assert_int_equal(prof_snapshot__read(p, len, &s), 0);
		assert_int_equal(strlen(s->threads[0].name), PROF_THREAD_NAME_MAX - 1);
		assert_int_equal(strlen(s->comm), PROF_COMM_MAX - 1);
		walk(s);
		prof_snapshot__destroy(s);
	}
	free(p);
	free(img);
}

static void test_huge_counts(void **state)
{
	size_t len;
	void *img = base_image(&len), *p;
	__u32 t, i, k;

	(void)state;
	p = dup_img(img, len);
	for (t = 0; t < hdr(p)->nslabs; t++) {
		struct prof_slab_hdr *sh = slab(p, t);
		unsigned int shift = (unsigned int)__builtin_ctz(hdr(p)->hist_block);
		__u32 *hist = (__u32 *)((char *)sh + hdr(p)->region[PROF_REGION_HIST].off);
		__u64 *rows = (__u64 *)((char *)sh + hdr(p)->region[PROF_REGION_ROWMAP].off);

		sh->frames = sh->frame_ticks = sh->frame_max = ~0ull;
		sh->overflow = sh->unbalanced = ~0ull;
		for (k = 0; k < PROF_HIST_BUCKETS; k++)
			sh->frame_hist[k] = 0xffffffff;
		sh->ext_used = 1;
		for (i = 0; i < sh->nnodes; i++) {
			struct prof_node *n = node(p, t, i);
			struct prof_node_ext *e = node_ext(p, t, i);

			n->calls = n->ticks = n->max = ~0ull;
			e->preempted = e->migrated = e->offcpu_ns = e->anomalies = ~0ull;
			e->allocs = e->alloc_bytes = e->frees = e->free_bytes = ~0ull;
			for (k = 0; k < PROF_HIST_BUCKETS; k++)
				hist[prof_hist_index(i, k, shift)] = 0xffffffff;
			/* every row marked, and the bits past the last bucket */
			for (k = 0; k < PROF_ROWMAP_WORDS; k++)
				rows[(i >> shift) * PROF_ROWMAP_WORDS + k] = ~0ull;
		}
	}
	hdr(p)->tick_hz = 1000;
	hdr(p)->exit_tick = ~0ull;
	assert_int_equal(try_read(p, len), 0);
	/* calls without a histogram, a max below every bucket */
	for (i = 0; i < slab(p, 0)->nnodes; i++) {
		node(p, 0, i)->max = 0;
		node(p, 0, i)->calls = 5;
	}
	assert_int_equal(try_read(p, len), 0);
	free(p);
	free(img);
}

static void test_random_mutations(void **state)
{
	size_t len, i;
	void *img = base_image(&len);
	unsigned seed = 0x5eed, iter, m;

	(void)state;
	for (iter = 0; iter < (TEST_TSAN ? 300u : 3000u); iter++) {
		unsigned char *p = dup_img(img, len);

		for (m = 0; m < 1 + iter % 8; m++) {
			seed = seed * 1103515245u + 12345u;
			/* mostly the header and the first slab's nodes */
			i = (seed >> 4) % (iter % 2 ? PROF_SEG_HDR_SIZE : len);
			seed = seed * 1103515245u + 12345u;
			p[i] = (unsigned char)(seed >> 16);
		}
		try_read(p, len);
		free(p);
	}
	free(img);
}

/*
 * A program linked with a newer libprof of the same major: every struct
 * grown at its end (garbage in the new bytes), a region more in the table,
 * the regions moved.  This reader must read it as the 3.0 image it holds.
 */
static void *next_minor(void *img, size_t *len)
{
	const struct prof_seg_hdr *h = hdr(img);
	const __u32 grow = 16, ngrow = 16, xgrow = 16, sgrow = 64;
	__u32 site_size = h->site_size + grow, node_size = h->node_size + ngrow;
	__u32 ext_size = h->ext_size + xgrow, shdr = h->slab_hdr_size + sgrow, t, i;
	const struct prof_region *r = h->region;
	struct prof_region nr[PROF_REGIONS + 1];
	__u64 sites_off = PROF_SEG_HDR_SIZE, slabs_off, slab_size, off;
	struct prof_seg_hdr *nh;
	char *out;

	/* regions in another order than the writer's, the new one first */
	off = (shdr + 4095) & ~4095ull;
	nr[PROF_REGION_RING] = (struct prof_region){ off, 0 }; /* the image's: off */
	nr[PROF_REGION_ANNOT] = (struct prof_region){ off, 0 }; /* none, as the image's */
	nr[PROF_REGIONS] = (struct prof_region){ off, 4096 };
	off += 4096;
	nr[PROF_REGION_HIST] = (struct prof_region){ off, r[PROF_REGION_HIST].size };
	off += r[PROF_REGION_HIST].size;
	nr[PROF_REGION_ROWMAP] = (struct prof_region){ off, r[PROF_REGION_ROWMAP].size };
	off += r[PROF_REGION_ROWMAP].size;
	nr[PROF_REGION_NODES] = (struct prof_region){ off, (__u64)h->max_nodes * node_size };
	off += nr[PROF_REGION_NODES].size;
	nr[PROF_REGION_EXT] = (struct prof_region){ off, (__u64)h->max_nodes * ext_size };
	off += nr[PROF_REGION_EXT].size;
	nr[PROF_REGION_OPEN] = (struct prof_region){ off, (__u64)h->max_nodes * 8 };
	off += nr[PROF_REGION_OPEN].size;
	slab_size = (off + 4095) & ~4095ull;
	slabs_off = (sites_off + (__u64)h->max_sites * site_size + 4095) & ~4095ull;
	*len = slabs_off + slab_size * h->max_threads;
	out = malloc(*len);
	assert_non_null(out);
	memset(out, 0xab, *len);

	nh = (struct prof_seg_hdr *)out;
	memcpy(nh, h, sizeof(*h));
	nh->minor = PROF_SEG_MINOR + 1;
	nh->hdr_size = sizeof(*h) + grow;
	nh->seg_size = *len;
	nh->site_size = site_size;
	nh->node_size = node_size;
	nh->ext_size = ext_size;
	nh->slab_hdr_size = shdr;
	nh->sites_off = sites_off;
	nh->slabs_off = slabs_off;
	nh->slab_size = slab_size;
	nh->nregions = PROF_REGIONS + 1;
	memcpy(nh->region, nr, sizeof(nr));
	for (i = 0; i < h->nsites; i++)
		memcpy(out + sites_off + (__u64)i * site_size,
		       (char *)img + h->sites_off + (__u64)i * h->site_size, h->site_size);
	for (t = 0; t < h->nslabs; t++) {
		const char *os = (const char *)slab(img, t);
		char *ns = out + slabs_off + (__u64)t * slab_size;

		memcpy(ns, os, sizeof(struct prof_slab_hdr));
		memcpy(ns + nr[PROF_REGION_HIST].off, os + r[PROF_REGION_HIST].off,
		       r[PROF_REGION_HIST].size);
		memcpy(ns + nr[PROF_REGION_ROWMAP].off, os + r[PROF_REGION_ROWMAP].off,
		       r[PROF_REGION_ROWMAP].size);
		memcpy(ns + nr[PROF_REGION_OPEN].off, os + r[PROF_REGION_OPEN].off,
		       r[PROF_REGION_OPEN].size);
		for (i = 0; i < h->max_nodes; i++) {
			memcpy(ns + nr[PROF_REGION_NODES].off + (__u64)i * node_size,
			       os + r[PROF_REGION_NODES].off + (__u64)i * h->node_size, h->node_size);
			memcpy(ns + nr[PROF_REGION_EXT].off + (__u64)i * ext_size,
			       os + r[PROF_REGION_EXT].off + (__u64)i * h->ext_size, h->ext_size);
		}
	}
	return out;
}

static void test_next_minor(void **state)
{
	struct prof_snapshot *a, *b;
	size_t len, nlen;
	void *img = base_image(&len), *nimg = next_minor(img, &nlen);
	__u32 t, i, checked = 0;

	(void)state;
	assert_int_equal(prof_snapshot__read(img, len, &a), 0);
	assert_int_equal(prof_snapshot__read(nimg, nlen, &b), 0);
	assert_int_equal(a->nthreads, b->nthreads);
	assert_int_equal(a->nsites, b->nsites);
	for (i = 0; i < a->nsites; i++)
		assert_string_equal(a->sites[i].name, b->sites[i].name);
	for (t = 0; t < a->nthreads; t++) {
		snap_same_thread(a, &a->threads[t], b, &b->threads[t], false);
		for (i = 0; i < a->threads[t].nnodes; i++)
			checked += a->threads[t].nodes[i].calls > 0;
	}
	assert_true(checked >= 6);
	walk(b);
	/* a struct smaller than this reader knows is not a newer minor */
	hdr(nimg)->node_size = PROF_NODE_SIZE - 8;
	assert_int_equal(try_read(nimg, nlen), -EINVAL);
	hdr(nimg)->node_size = PROF_NODE_SIZE + 16;
	/* a table without the event ring (as 3.0 had): read, the ring absent */
	hdr(nimg)->nregions = PROF_REGION_RING;
	assert_int_equal(try_read(nimg, nlen), 0);
	hdr(nimg)->nregions = PROF_REGION_RING - 1;
	assert_int_equal(try_read(nimg, nlen), -EINVAL);
	/* a ring of a size no writer makes */
	hdr(nimg)->nregions = PROF_REGIONS + 1;
	hdr(nimg)->region[PROF_REGION_RING].size = PROF_RING_HDR_SIZE + 3 * sizeof(struct prof_event);
	assert_int_equal(try_read(nimg, nlen), -EINVAL);
	prof_snapshot__destroy(a);
	prof_snapshot__destroy(b);
	free(nimg);
	free(img);
}

/*
 * A window (a reset's baseline, --last) subtracts every figure a node and
 * a thread count, whatever it is: here each figure of each node and
 * thread set, in the later snapshot and the baseline, to values of its
 * own (no run gives them, so none is left as it was by chance), and the
 * window must be the difference of each, exactly.  An open call's time
 * in the window is at most the window's.
 */
#define WIN_NODE_FIGS                                                                         \
	X(calls) X(ticks) X(preempted) X(migrated) X(offcpu_ns) X(anomalies) X(allocs)        \
		X(alloc_bytes) X(frees) X(free_bytes) X(blocked) X(kernel_calls)
#define WIN_THREAD_FIGS X(overflow) X(unbalanced) X(frames) X(frame_ticks) X(oncpu_ns)

static void test_diff_every_figure(void **state)
{
	struct prof_snapshot *b, *s;
	__u32 i, j, checked = 0;
	__u64 k;

	(void)state;
	for (i = 0; i < 5; i++) {
		PROF_USDT(rd_outer);
		rd_inner((int)i);
	}
	/* nothing runs between the two reads: the same threads and nodes */
	b = test_snapshot(0);
	s = test_snapshot(0);
	assert_non_null(b);
	assert_non_null(s);
	assert_int_equal(s->nthreads, b->nthreads);
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i], *bt = &b->threads[i];

		assert_int_equal(t->tid, bt->tid);
		assert_int_equal(t->nnodes, bt->nnodes);
		k = 0;
#define X(f) (k++, t->f = 5000 + 13 * k + i, bt->f = 100 + k + i);
		WIN_THREAD_FIGS
#undef X
		for (j = 1; j < t->nnodes; j++) {
			k = 0;
#define X(f) (k++, t->nodes[j].f = 1000 + 7 * k + j, bt->nodes[j].f = 10 + k + j);
			WIN_NODE_FIGS
#undef X
			/* a call open since before the baseline */
			t->nodes[j].open = bt->nodes[j].open = 1;
			t->nodes[j].open_ticks = t->nodes[j].ticks;
			bt->nodes[j].open_ticks = bt->nodes[j].ticks;
		}
	}
	assert_int_equal(prof_snapshot__diff(s, b), 0);
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		k = 0;
#define X(f)                                                                                  \
	k++;                                                                                  \
	if (t->f != 5000 + 13 * k - 100 - k)                                                  \
		fail_msg("thread %u: " #f " %llu in the window, not %llu", t->tid,            \
			 (unsigned long long)t->f, (unsigned long long)(4900 + 12 * k));
		WIN_THREAD_FIGS
#undef X
		for (j = 1; j < t->nnodes; j++) {
			const struct prof_snap_node *n = &t->nodes[j];

			k = 0;
#define X(f)                                                                                  \
	k++;                                                                                  \
	if (n->f != 990 + 6 * k)                                                              \
		fail_msg("thread %u node %u: " #f " %llu in the window, not %llu", t->tid, j, \
			 (unsigned long long)n->f, (unsigned long long)(990 + 6 * k));
			WIN_NODE_FIGS
#undef X
			if (n->open_ticks > n->ticks)
				fail_msg("node %u: an open call's %llu ticks in a window of %llu", j,
					 (unsigned long long)n->open_ticks,
					 (unsigned long long)n->ticks);
			checked++;
		}
	}
	assert_true(checked > 0);
	prof_snapshot__destroy(s);
	prof_snapshot__destroy(b);
}

/* a row of one anomaly says so, as a row of many does */
static void test_one_anomaly_said(void **state)
{
	struct prof_report_opts o = { 0 };
	struct prof_snapshot *s;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	__u32 j;

	(void)state;
	PROF_USDT(rd_outer);
	s = test_snapshot(0);
	assert_non_null(s);
	assert_true(s->nthreads > 0 && s->threads[0].nnodes > 1);
	for (j = 1; j < s->threads[0].nnodes; j++)
		s->threads[0].nodes[j].anomalies = j == 1;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	o.no_flat = 1;
	assert_int_equal(prof_report_tree(f, s, &o), 0);
	fclose(f);
	if (!strstr(text, "(1 anomalies)"))
		fail_msg("one anomaly not said:\n%s", text);
	free(text);
	prof_snapshot__destroy(s);
}

/* a /dev/shm name is a segment's only if all of it is: a pid, a start
 * token, and maybe a slab number, nothing after it */
static void test_segment_names(void **state)
{
	static const char *const bad[] = { "prof.1.2.3x", "prof.1.2x", "prof.0.2", "prof.1.2.",
					   "prof.1", "other.1.2" };
	struct prof_seg_ent e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (prof_seg_ent_here(bad[i], &e) != -EINVAL)
			fail_msg("%s taken for a segment's name", bad[i]);
}

/* --- the region table, region by region -------------------------------- */

#define AGG_SLABS 4 /* PROF_MAX_THREADS here: threads beyond it fold */

static void *agg_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		rd_inner(i);
	return NULL;
}

/* an image whose threads' slabs and the exited threads' aggregate (last)
 * both hold nodes: twice as many threads as slabs ran and exited */
static void *agg_image(size_t *len)
{
	struct prof_snapshot *s;
	pthread_t th;
	void *buf;
	int i;

	free(base_image(len));
	for (i = 0; i < 2 * AGG_SLABS; i++) {
		assert_int_equal(pthread_create(&th, NULL, agg_thread, NULL), 0);
		assert_int_equal(pthread_join(th, NULL), 0);
	}
	s = test_snapshot(0);
	assert_non_null(s);
	assert_true(s->nthreads >= 2);
	assert_true(s->threads[s->nthreads - 1].folds > 0);
	assert_int_equal(prof_snapshot__write(s, &buf, len), 0);
	prof_snapshot__destroy(s);
	return buf;
}

/* read a variant every way a reader reads: whole, lazily (each thread
 * loaded), flat; all refuse it, or all read it, the whole read into a view
 * the consumers walk; and its event rings (their error in *trace_err) */
static int try_read_all(const void *img, size_t len, int *trace_err)
{
	struct prof_snapshot *s = NULL, *fs = NULL;
	struct prof_flat_row *rows;
	struct prof_trace *tr;
	int err = try_read(img, len), e2;
	struct prof_snap_iter it;
	size_t n;

	e2 = prof_snapshot__read_opts(img, len, PROF_READ_LAZY, &s);
	assert_int_equal(!e2, !err);
	if (!e2) {
		it = PROF_SNAP_ITER(s, 0);
		while (prof_snap_next(&it))
			;
		assert_int_equal(it.err, 0);
		prof_snapshot__destroy(s);
	}
	e2 = prof_seg_flat(img, len, 0, PROF_SORT_TOTAL, &fs, &rows, &n);
	assert_int_equal(!e2, !err);
	if (!e2) {
		free(rows);
		prof_snapshot__destroy(fs);
	}
	/* the rings alone: it need not see what is wrong with the nodes */
	*trace_err = prof_seg_trace(img, len, &tr);
	if (!*trace_err)
		prof_trace__destroy(tr);
	return err;
}

/*
 * Each region of the table (shared by every slab: the threads' and the
 * aggregate's) shifted, shrunk, or pointing past its slab's or the
 * segment's end, one change at a time, in an exact-length heap copy of
 * SEG (ASan sees a read past it: the aggregate is the last slab).  A
 * region that leaves the slab, lies in the slab's header, or is smaller
 * than the geometry needs is refused (a smaller event ring is another
 * ring, or none); any other change is read into a view every consumer
 * walks without fault.
 */
static void regions_each(const void *seg, size_t len, const char *what)
{
	const struct prof_seg_hdr *h0 = seg;
	__u64 slab_size = h0->slab_size, shdr = h0->slab_hdr_size;
	unsigned refused = 0, read = 0;
	__u32 i, v;
	int terr;

	assert_int_equal(try_read_all(seg, len, &terr), 0);
	assert_int_equal(terr, 0);
	assert_true(h0->nregions == PROF_REGIONS);
	assert_true(h0->agg_slab == h0->max_threads);
	for (i = 0; i < PROF_REGIONS; i++) {
		const struct prof_region r0 = h0->region[i];
		const struct prof_region vars[] = {
			{ r0.off + 8, r0.size },	 /* shifted */
			{ r0.off - 8, r0.size },
			{ r0.off + 4096, r0.size },
			{ r0.off + slab_size, r0.size }, /* into the next slab */
			{ r0.off, r0.size - 8 },	 /* shrunk */
			{ r0.off, r0.size / 2 },
			{ r0.off, 0 },
			{ slab_size, r0.size },		  /* at the slab's end */
			{ slab_size - r0.size + 8, r0.size }, /* 8 bytes past it */
			{ r0.off, slab_size - r0.off + 8 },
			{ len, r0.size }, /* past the segment */
			{ (__u64)len * 2, r0.size },
			{ ~7ull, r0.size }, /* off + size wraps */
			{ r0.off, ~0ull },
			{ r0.off, ~0ull - r0.off + 1 },
			{ 0, r0.size }, /* in the slab's header */
			{ shdr - 8, r0.size },
		};

		for (v = 0; v < sizeof(vars) / sizeof(vars[0]); v++) {
			const struct prof_region *r = &vars[v];
			void *p = dup_img(seg, len);
			bool out = r->off < shdr || r->off > slab_size || r->size > slab_size - r->off ||
				   (i != PROF_REGION_RING && i != PROF_REGION_ANNOT &&
				    r->size < r0.size) ||
				   /* no annotations (0), or room for its parts */
				   (i == PROF_REGION_ANNOT && r->size && r->size < r0.size);
			int err;

			hdr(p)->region[i] = *r;
			err = try_read_all(p, len, &terr);
			if (out && (!err || !terr))
				fail_msg("%s: region %u at %#llx, %#llx bytes (slab %#llx bytes, "
					 "header %#llx) read (%d; its rings: %d)",
					 what, i, (unsigned long long)r->off,
					 (unsigned long long)r->size, (unsigned long long)slab_size,
					 (unsigned long long)shdr, err, terr);
			refused += err != 0;
			read += err == 0;
			free(p);
		}
	}
	printf("%s: %u variants refused, %u read\n", what, refused, read);
}

/*
 * Each part of the annotation region (slab.h, 3.3) shifted, shrunk, grown
 * past the region, or onto its neighbour, one change at a time, in a copy
 * of a live segment whose threads annotated: every reader refuses what
 * leaves the region, overlaps another part, or is no ring; the rest is
 * read without fault.
 */
/* what the readers must refuse: part i at *r leaves the region, is no ring
 * (a table: no room for an entry), or overlaps another part */
static bool part_out(const struct prof_seg_hdr *h, __u32 i, const struct prof_region *r)
{
	static const __u64 esize[PROF_PARTS] = {
		sizeof(struct prof_plot), sizeof(struct prof_plot_point), sizeof(struct prof_msg),
		sizeof(struct prof_value), sizeof(struct prof_lock), sizeof(struct prof_lock_span),
	};
	__u64 rsize = h->region[PROF_REGION_ANNOT].size, n;
	__u32 j;

	if ((r->off & 7) || r->off > rsize || r->size > rsize - r->off)
		return true;
	if (i == PROF_PART_PLOTS || i == PROF_PART_LOCKS) {
		if (r->size < esize[i])
			return true;
	} else {
		n = r->size >= PROF_RING_HDR_SIZE ? (r->size - PROF_RING_HDR_SIZE) / esize[i] : 0;
		if (!n || (r->size - PROF_RING_HDR_SIZE) % esize[i] || (n & (n - 1)))
			return true;
	}
	for (j = 0; j < PROF_PARTS; j++)
		if (j != i && r->off < h->part[j].off + h->part[j].size &&
		    h->part[j].off < r->off + r->size)
			return true;
	return false;
}

static void parts_each(const void *seg, size_t len)
{
	const struct prof_seg_hdr *h0 = seg;
	__u64 rsize = h0->region[PROF_REGION_ANNOT].size;
	unsigned refused = 0;
	__u32 i, v;
	int terr;

	assert_true(rsize > 0 && h0->nparts == PROF_PARTS);
	assert_int_equal(try_read_all(seg, len, &terr), 0);
	for (i = 0; i < PROF_PARTS; i++) {
		const struct prof_region p0 = h0->part[i];
		const struct prof_region vars[] = {
			{ p0.off + 8, p0.size },	/* shifted */
			{ p0.off - 8, p0.size },
			{ p0.off, p0.size - 8 },	/* shrunk: a ring no more (v 2) */
			{ p0.off, 0 },
			/* three quarters of its entries: no power of two */
			{ p0.off, (p0.size - PROF_RING_HDR_SIZE) / 4 * 3 + PROF_RING_HDR_SIZE },
			{ rsize - p0.size + 8, p0.size }, /* past the region */
			{ rsize, p0.size },
			{ p0.off, ~0ull },
			{ ~7ull, p0.size },
			{ p0.off + 1, p0.size },	/* unaligned */
			{ h0->part[(i + 1) % PROF_PARTS].off, p0.size }, /* on a neighbour */
		};

		for (v = 0; v < sizeof(vars) / sizeof(vars[0]); v++) {
			void *p = dup_img(seg, len);
			int err;

			hdr(p)->part[i] = vars[v];
			err = try_read_all(p, len, &terr);
			if (part_out(h0, i, &vars[v]) != (err && terr))
				fail_msg("part %u at %#llx, %#llx bytes (region %#llx): %d; %d",
					 i, (unsigned long long)vars[v].off,
					 (unsigned long long)vars[v].size, (unsigned long long)rsize,
					 err, terr);
			refused += err != 0;
			free(p);
		}
	}
	/* fewer parts than this reader knows, or more than the header holds */
	for (v = 0; v < 2; v++) {
		void *p = dup_img(seg, len);
		int err;

		hdr(p)->nparts = v ? PROF_PARTS_MAX + 1 : PROF_PARTS - 1;
		err = try_read_all(p, len, &terr);
		assert_true(err && terr);
		free(p);
	}
	printf("parts: %u variants refused\n", refused);
}

/* over a reader's image (no rings), and over a copy of this process's live
 * segment (rings, and a slab for each thread) */
static void test_regions_one_by_one(void **state)
{
	size_t len, seg_len = 0;
	void *img = agg_image(&len);
	void *seg = test_own_segment(&seg_len), *copy = dup_img(seg, seg_len);

	(void)state;
	assert_true(hdr(seg)->region[PROF_REGION_RING].size > 0);
	regions_each(img, len, "image");
	regions_each(copy, seg_len, "live");
	parts_each(copy, seg_len);
	free(copy);
	munmap(seg, seg_len);
	free(img);
}

/* before the runtime starts: test_regions_one_by_one's threads fold */
static void env(void)
{
	char slabs[16];

	snprintf(slabs, sizeof(slabs), "%d", AGG_SLABS);
	setenv("PROF_MAX_THREADS", slabs, 1);
}

TEST_MAIN_ENV(NULL, NULL, env, cmocka_unit_test(test_valid_image), cmocka_unit_test(test_truncated),
	      cmocka_unit_test(test_version), cmocka_unit_test(test_geometry_bytes),
	      cmocka_unit_test(test_links_and_strings), cmocka_unit_test(test_huge_counts),
	      cmocka_unit_test(test_random_mutations), cmocka_unit_test(test_next_minor),
	      cmocka_unit_test(test_diff_every_figure), cmocka_unit_test(test_one_anomaly_said),
	      cmocka_unit_test(test_segment_names), cmocka_unit_test(test_regions_one_by_one))
