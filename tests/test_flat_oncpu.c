// SPDX-License-Identifier: MIT
/*
 * test_flat_oncpu.c - the flat pass straight from a segment (top's rows)
 * says each zone's on-CPU and self on-CPU time as report's flat rows do
 * (prof_snap_flat over a snapshot's tree: prof_snap_oncpu), open calls
 * included, and a window of two flat rows takes them as figures.h says.
 *
 * An image of this process's segment written while a parent zone is open
 * (its short children closed inside it), given kernel facts by hand: every
 * call with facts, some off-CPU time, and the thread's CPU time.  The
 * open call's on-CPU time is then what the thread's CPU time proves it
 * ran, held to its children's; a flat pass without a tree cannot say it.
 * Two rows of one zone add up as figures.h says (diff's rows fold so).
 */
#include <stdint.h>

#include "prof.h"
#include "testutil.h"

static volatile unsigned long sink;

static void fo_child(void)
{
	PROF_USDT(fo_child);
	for (int i = 0; i < 20000; i++)
		sink++;
}

/* an image of this process taken inside an open fo_parent */
static void *image_in_parent(size_t *len)
{
	struct prof_snapshot *s;
	void *img;

	PROF_USDT(fo_parent);
	for (int i = 0; i < 50; i++)
		fo_child();
	s = test_snapshot(0);
	assert_non_null(s);
	assert_int_equal(prof_snapshot__write(s, &img, len), 0);
	prof_snapshot__destroy(s);
	return img;
}

/* every thread's calls with kernel facts, a little off-CPU time each, and
 * the thread's CPU time all of its wall time */
static void give_facts(void *img)
{
	struct prof_seg_hdr *h = img;
	__u32 i, j;

	for (i = 0; i < h->nslabs; i++) {
		struct prof_slab_hdr *sh =
			(void *)((char *)img + h->slabs_off + (size_t)i * h->slab_size);
		struct prof_node *nodes = (void *)((char *)sh + h->region[PROF_REGION_NODES].off);
		struct prof_node_ext *ext = (void *)((char *)sh + h->region[PROF_REGION_EXT].off);
		__u64 wall_ns = nodes[0].ticks * 1000000000ull / h->tick_hz;

		if (sh->magic != PROF_SLAB_MAGIC)
			continue;
		sh->ext_used = 1;
		sh->covered = 1;
		sh->oncpu_start_ns = 1;
		sh->oncpu_exit_ns = 1 + wall_ns;
		for (j = 0; j < sh->nnodes; j++) {
			ext[j].kernel_adj = 0;
			ext[j].offcpu_ns = nodes[j].calls * 100;
		}
	}
}

static void same_oncpu(const struct prof_snapshot *s, const struct prof_flat_row *a, size_t na,
		       const struct prof_flat_row *b, size_t nb)
{
	size_t i, j;

	assert_int_equal(na, nb);
	for (i = 0; i < na; i++) {
		for (j = 0; j < nb && b[j].site != a[i].site; j++)
			;
		assert_true(j < nb);
		if (a[i].oncpu_ns != b[j].oncpu_ns || a[i].self_oncpu_ns != b[j].self_oncpu_ns)
			fail_msg("%s: report's on-CPU %llu self %llu, the flat pass's %llu self %llu",
				 a[i].site < s->nsites ? s->sites[a[i].site].name : "[overflow]",
				 (unsigned long long)a[i].oncpu_ns,
				 (unsigned long long)a[i].self_oncpu_ns,
				 (unsigned long long)b[j].oncpu_ns,
				 (unsigned long long)b[j].self_oncpu_ns);
	}
}

static const struct prof_flat_row *row_of(const struct prof_snapshot *s,
					  const struct prof_flat_row *r, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].site < s->nsites && !strcmp(s->sites[r[i].site].name, name))
			return &r[i];
	fail_msg("no row of %s", name);
	return NULL;
}

static void test_flat_oncpu_equals_report(void **state)
{
	struct prof_snapshot *s, *light;
	struct prof_flat_row *a, *b;
	const struct prof_flat_row *p, *c;
	size_t len, na, nb;
	void *img;
	__u32 i;

	(void)state;
	img = image_in_parent(&len);
	give_facts(img);
	assert_int_equal(prof_snapshot__read(img, len, &s), 0);
	assert_int_equal(prof_snap_flat(s, 0, PROF_SORT_TOTAL, &a, &na), 0);
	assert_int_equal(prof_seg_flat(img, len, 0, PROF_SORT_TOTAL, &light, &b, &nb), 0);
	same_oncpu(s, a, na, b, nb);
	/* the open parent: known, and holding its children's */
	p = row_of(s, b, nb, "fo_parent");
	c = row_of(s, b, nb, "fo_child");
	assert_int_equal(p->open, 1);
	assert_true(p->oncpu_ns != PROF_SNAP_UNKNOWN && p->self_oncpu_ns != PROF_SNAP_UNKNOWN);
	assert_true(c->oncpu_ns != PROF_SNAP_UNKNOWN);
	assert_true(p->oncpu_ns >= c->oncpu_ns);
	assert_int_equal(p->oncpu_ns, p->self_oncpu_ns + c->oncpu_ns);
	free(a);
	free(b);
	prof_snapshot__destroy(light);
	/* a thread at a time, as top's thread views read it */
	for (i = 0; i < s->nthreads; i++) {
		if (!s->threads[i].tid)
			continue;
		assert_int_equal(prof_snap_flat(s, s->threads[i].tid, PROF_SORT_TOTAL, &a, &na), 0);
		assert_int_equal(prof_seg_flat(img, len, s->threads[i].tid, PROF_SORT_TOTAL, &light,
					       &b, &nb),
				 0);
		same_oncpu(s, a, na, b, nb);
		free(a);
		free(b);
		prof_snapshot__destroy(light);
	}
	prof_snapshot__destroy(s);
	free(img);
}

/* a window of two rows: each derived figure's difference, unknown only
 * where the newer read knows nothing */
static void test_flat_window_derived(void **state)
{
	struct prof_flat_row then = { .site = 0, .calls = 10, .ticks = 1000, .self = 400,
				      .kernel_calls = 10, .oncpu_ns = 700, .self_oncpu_ns = 300 };
	struct prof_flat_row now = { .site = 0, .calls = 30, .ticks = 5000, .self = 1400,
				     .kernel_calls = 30, .oncpu_ns = 2700, .self_oncpu_ns = 900 };
	struct prof_flat_row w;

	(void)state;
	prof_flat_window(&w, &now, &then);
	assert_int_equal(w.self, 1000);
	assert_int_equal(w.oncpu_ns, 2000);
	assert_int_equal(w.self_oncpu_ns, 600);
	then.oncpu_ns = then.self_oncpu_ns = PROF_SNAP_UNKNOWN;
	prof_flat_window(&w, &now, &then);
	assert_int_equal(w.oncpu_ns, 2700);
	assert_int_equal(w.self_oncpu_ns, 900);
	now.oncpu_ns = now.self_oncpu_ns = PROF_SNAP_UNKNOWN;
	prof_flat_window(&w, &now, &then);
	assert_true(w.oncpu_ns == PROF_SNAP_UNKNOWN);
	assert_true(w.self_oncpu_ns == PROF_SNAP_UNKNOWN);
}

/* two rows of one zone (two sites of a name: diff's rows) added as
 * figures.h says: sums, the larger max, on-CPU where known */
static void test_flat_row_add(void **state)
{
	struct prof_flat_row d = { .calls = 3, .ticks = 300, .self = 100, .max = 90,
				   .kernel_calls = 3, .offcpu_ns = 10, .oncpu_ns = PROF_SNAP_UNKNOWN,
				   .self_oncpu_ns = PROF_SNAP_UNKNOWN };
	const struct prof_flat_row x = { .calls = 2, .ticks = 200, .self = 50, .max = 120,
					 .kernel_calls = 2, .offcpu_ns = 5, .oncpu_ns = 150,
					 .self_oncpu_ns = 40 };

	(void)state;
	prof_flat_row_add(&d, &x);
	assert_int_equal(d.calls, 5);
	assert_int_equal(d.ticks, 500);
	assert_int_equal(d.self, 150);
	assert_int_equal(d.max, 120);
	assert_int_equal(d.kernel_calls, 5);
	assert_int_equal(d.offcpu_ns, 15);
	assert_int_equal(d.oncpu_ns, 150);
	assert_int_equal(d.self_oncpu_ns, 40);
	prof_flat_row_add(&d, &x);
	assert_int_equal(d.oncpu_ns, 300);
	assert_int_equal(d.self_oncpu_ns, 80);
	assert_int_equal(d.max, 120);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_flat_oncpu_equals_report),
	  cmocka_unit_test(test_flat_window_derived), cmocka_unit_test(test_flat_row_add))
