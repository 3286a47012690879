// SPDX-License-Identifier: MIT
/*
 * test_segflat.c - reading a live segment: prof_seg_flat (top's streaming
 * pass over a live mapping) gives the same flat rows as the snapshot's
 * prof_snap_flat (nested, recursive and shared zones over two threads, all
 * and per thread) and its cache reuses exactly what did not change; a lazy
 * read's thread walk (prof_snap_next) equals a full read, through sites
 * registered meanwhile and a segment that turns corrupt; no way of reading
 * a segment (profd's sampling cursor too) makes it take memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "prof.h"
#include "testutil.h"
#include "fastpath.h"
#include "nest_work.h"
#include "snap_fixture.h"

/* map this process's segment */
static void rows_equal(const struct prof_flat_row *a, const struct prof_flat_row *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		assert_int_equal(a[i].site, b[i].site);
		assert_int_equal(a[i].calls, b[i].calls);
		assert_int_equal(a[i].ticks, b[i].ticks);
		assert_int_equal(a[i].self, b[i].self);
		assert_int_equal(a[i].max, b[i].max);
	}
}

static void compare(const struct prof_snapshot *s, const void *mem, size_t len, __u32 tid)
{
	struct prof_flat_row *a, *b;
	struct prof_snapshot *light;
	size_t na, nb;

	assert_int_equal(prof_snap_flat(s, tid, PROF_SORT_TOTAL, &a, &na), 0);
	assert_int_equal(prof_seg_flat(mem, len, tid, PROF_SORT_TOTAL, &light, &b, &nb), 0);
	assert_true(na >= 3);
	assert_int_equal(na, nb);
	assert_int_equal(light->nthreads, s->nthreads);
	assert_int_equal(light->nsites, s->nsites);
	rows_equal(a, b, na);
	free(b);
	prof_snapshot__destroy(light);
	/* cached: cold, then from every thread's share */
	{
		struct prof_seg_flat_cache *c = prof_seg_flat_cache__new();
		int pass;

		assert_non_null(c);
		for (pass = 0; pass < 2; pass++) {
			assert_int_equal(prof_seg_flat_cached(mem, len, tid, PROF_SORT_TOTAL, c,
							      &light, &b, &nb),
					 0);
			assert_int_equal(na, nb);
			rows_equal(a, b, na);
			free(b);
			prof_snapshot__destroy(light);
		}
		prof_seg_flat_cache__destroy(c);
	}
	free(a);
}

static void test_segflat_equals_snapshot(void **state)
{
	struct prof_snapshot *s;
	pthread_t th;
	size_t len = 0;
	void *mem;
	__u32 i;

	(void)state;
	nest_work(NULL);
	assert_int_equal(pthread_create(&th, NULL, nest_work, NULL), 0);
	pthread_join(th, NULL);
	mem = test_own_segment(&len);
	s = test_snapshot(0);
	assert_non_null(s);
	assert_true(s->nthreads >= 2);
	compare(s, mem, len, 0);
	for (i = 0; i < s->nthreads; i++)
		compare(s, mem, len, s->threads[i].tid);
	prof_snapshot__destroy(s);
	munmap(mem, len);
}

/* the calls of site's row, or 0 */
static __u64 row_calls(const struct prof_flat_row *rows, size_t n, __u32 site)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rows[i].site == site)
			return rows[i].calls;
	return 0;
}

/* the calls flat_cached and flat give site in img, for tid */
static void flat_both(void *img, size_t len, __u32 tid, struct prof_seg_flat_cache *c, __u32 site,
		      __u64 *cached, __u64 *fresh)
{
	struct prof_snapshot *s;
	struct prof_flat_row *rows;
	size_t n;

	assert_int_equal(prof_seg_flat_cached(img, len, tid, PROF_SORT_SELF, c, &s, &rows, &n), 0);
	*cached = row_calls(rows, n, site);
	free(rows);
	prof_snapshot__destroy(s);
	assert_int_equal(prof_seg_flat(img, len, tid, PROF_SORT_SELF, &s, &rows, &n), 0);
	*fresh = row_calls(rows, n, site);
	free(rows);
	prof_snapshot__destroy(s);
}

/*
 * The cache reuses a thread's share exactly while its slab's activity
 * word and node count stay: a counter changed behind an unchanged word is
 * not seen (proof that the nodes were not read), a bumped word or a new
 * node is, a new site drops every share, and the other thread's share
 * stays right throughout.  It checks each node's structure once, when it
 * first reads it, and keeps what it checked.
 */
static void test_segflat_cache(void **state)
{
	struct prof_snapshot in = { 0 };
	struct prof_snap_thread th[2] = { { 0 } };
	struct prof_snap_site sites[3] = { { .name = "c_a" },
					   { .name = "c_b" },
					   { .name = "c_c" } };
	struct prof_seg_flat_cache *c = prof_seg_flat_cache__new();
	struct prof_seg_hdr *h;
	struct prof_slab_hdr *sh[2];
	struct prof_node *nodes[2];
	__u64 cached, fresh;
	size_t len;
	void *img;
	__u32 t, i;

	(void)state;
	assert_non_null(c);
	in.pid = 1;
	in.clock = PROF_CLOCK_TSC;
	in.tick_hz = 1000000000ull;
	in.nsites = 3;
	in.sites = sites;
	in.nthreads = 2;
	in.threads = th;
	for (t = 0; t < 2; t++) {
		th[t].tid = 10 + t;
		th[t].state = PROF_SLAB_ALIVE;
		th[t].nnodes = 4 + t;
		th[t].nodes = calloc(5, sizeof(*th[t].nodes));
		assert_non_null(th[t].nodes);
		th[t].nodes[0].site = th[t].nodes[1].site = PROF_SITE_NONE;
		/* a (10 calls) > b (5 calls) */
		th[t].nodes[2] = (struct prof_snap_node){ .site = 0, .calls = 10, .ticks = 100 };
		th[t].nodes[3] =
			(struct prof_snap_node){ .site = 1, .parent = 2, .calls = 5, .ticks = 40 };
	}
	/* thread 1's fifth node: a second b, under the root */
	th[1].nodes[4] = (struct prof_snap_node){ .site = 1, .calls = 7, .ticks = 1 };
	assert_int_equal(prof_snapshot__write(&in, &img, &len), 0);
	for (t = 0; t < 2; t++)
		free(th[t].nodes);
	h = img;
	/* the third site and thread 1's fifth node not published yet */
	h->nsites = 2;
	for (t = 0; t < 2; t++) {
		sh[t] = (void *)((char *)img + h->slabs_off + (__u64)t * h->slab_size);
		nodes[t] = (void *)((char *)sh[t] + PROF_SLAB_HDR_SIZE);
		sh[t]->nnodes = 4;
	}

	flat_both(img, len, 0, c, 0, &cached, &fresh);
	assert_int_equal(cached, 20);
	assert_int_equal(fresh, 20);

	/* thread 0 counts a call but its word stays: the share is reused */
	nodes[0][2].calls = 11;
	flat_both(img, len, 0, c, 0, &cached, &fresh);
	assert_int_equal(fresh, 21);
	assert_int_equal(cached, 20);
	/* only tid 11's row asked for: thread 0's stale share is not in it */
	flat_both(img, len, 11, c, 0, &cached, &fresh);
	assert_int_equal(cached, 10);
	assert_int_equal(fresh, 10);

	/* the word bumped: read again */
	sh[0]->activity++;
	flat_both(img, len, 0, c, 0, &cached, &fresh);
	assert_int_equal(cached, 21);
	assert_int_equal(fresh, 21);

	/* an exit: its ring head moved, not the word (an image has no ring:
	 * the header's head for a ring that is off) */
	nodes[0][2].calls = 12;
	sh[0]->ring_off_head++;
	flat_both(img, len, 0, c, 0, &cached, &fresh);
	assert_int_equal(cached, 22);
	assert_int_equal(fresh, 22);

	/* thread 1 publishes its fifth node, word unchanged */
	sh[1]->nnodes = 5;
	flat_both(img, len, 0, c, 1, &cached, &fresh);
	assert_int_equal(fresh, 5 + 5 + 7);
	assert_int_equal(cached, fresh);

	/* behind both words, then a new site: every share is dropped */
	nodes[0][3].calls = 6;
	nodes[1][3].calls = 6;
	flat_both(img, len, 0, c, 1, &cached, &fresh);
	assert_true(cached < fresh);
	h->nsites = 3;
	flat_both(img, len, 0, c, 1, &cached, &fresh);
	assert_int_equal(cached, fresh);
	assert_int_equal(fresh, 6 + 6 + 7);

	/* a node corrupted after the cache learnt it: the plain pass rejects
	 * the slab; the cached one keeps the structure it checked (site and
	 * parent never change once published) and is not misled by it */
	i = nodes[1][3].parent;
	nodes[1][3].parent = 3;
	sh[1]->activity++;
	{
		struct prof_snapshot *s;
		struct prof_flat_row *rows;
		size_t n;

		assert_int_equal(prof_seg_flat(img, len, 0, PROF_SORT_SELF, &s, &rows, &n),
				 -EINVAL);
		assert_null(s);
		assert_int_equal(
			prof_seg_flat_cached(img, len, 0, PROF_SORT_SELF, c, &s, &rows, &n), 0);
		assert_int_equal(row_calls(rows, n, 1), 6 + 6 + 7);
		free(rows);
		prof_snapshot__destroy(s);
	}
	nodes[1][3].parent = i;
	/* a corrupt new node fails the cached pass as the plain one, and the
	 * cache is left able to answer once it is gone */
	nodes[0][4] = (struct prof_node){ .site = 1, .parent = 4, .calls = 1 };
	sh[0]->nnodes = 5;
	{
		struct prof_snapshot *s;
		struct prof_flat_row *rows;
		size_t n;

		assert_int_equal(
			prof_seg_flat_cached(img, len, 0, PROF_SORT_SELF, c, &s, &rows, &n),
			-EINVAL);
		assert_null(s);
		assert_int_equal(prof_seg_flat(img, len, 0, PROF_SORT_SELF, &s, &rows, &n),
				 -EINVAL);
	}
	sh[0]->nnodes = 4;
	sh[1]->activity++;
	flat_both(img, len, 0, c, 0, &cached, &fresh);
	assert_int_equal(cached, fresh);
	flat_both(img, len, 0, c, 1, &cached, &fresh);
	assert_int_equal(cached, fresh);

	prof_seg_flat_cache__destroy(c);
	free(img);
}

/* 256 sites, each registered at its first entry, a little apart */
static void spin(void)
{
	for (volatile int i = 0; i < 2000; i++)
		;
}
#define RZ                            \
	{                             \
		PROF_USDT(race_zone); \
		spin();               \
	}
#define RZ8 RZ RZ RZ RZ RZ RZ RZ RZ
#define RZ64 RZ8 RZ8 RZ8 RZ8 RZ8 RZ8 RZ8 RZ8

static int race_go, race_done;

static void *new_sites(void *arg)
{
	while (!__atomic_load_n(&race_go, __ATOMIC_ACQUIRE))
		;
	RZ64 RZ64 RZ64 RZ64;
	__atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
	return arg;
}

/*
 * Reads racing a thread that registers new sites and enters them: every
 * read succeeds.  A node of a site registered after the reader loaded
 * nsites is not corruption, so the reader loads every slab's node count
 * before nsites, and a lazy load reads no node the read did not check.
 */
static void test_sites_race(void **state)
{
	struct prof_seg_flat_cache *c = prof_seg_flat_cache__new();
	unsigned int reads = 0;
	pthread_t th;
	size_t len = 0;
	void *mem;

	(void)state;
	assert_non_null(c);
	nest_work(NULL);
	mem = test_own_segment(&len);
	assert_int_equal(pthread_create(&th, NULL, new_sites, NULL), 0);
	do {
		struct prof_snapshot *s, *light;
		struct prof_flat_row *rows;
		struct prof_snap_iter it;
		size_t n;
		__u32 i;

		assert_int_equal(prof_seg_flat(mem, len, 0, PROF_SORT_SELF, &light, &rows, &n), 0);
		free(rows);
		prof_snapshot__destroy(light);
		assert_int_equal(
			prof_seg_flat_cached(mem, len, 0, PROF_SORT_SELF, c, &light, &rows, &n), 0);
		free(rows);
		prof_snapshot__destroy(light);
		assert_int_equal(prof_snapshot__read_opts(mem, len, PROF_READ_LAZY, &s), 0);
		__atomic_store_n(&race_go, 1, __ATOMIC_RELEASE);
		/* time for the writer to register sites after the read */
		spin();
		it = PROF_SNAP_ITER(s, 0);
		for (i = 0; prof_snap_next(&it); i++)
			;
		assert_int_equal(it.err, 0);
		assert_int_equal(i, s->nthreads);
		prof_snapshot__destroy(s);
		reads++;
	} while (!__atomic_load_n(&race_done, __ATOMIC_ACQUIRE));
	pthread_join(th, NULL);
	assert_true(reads > 1);
	prof_seg_flat_cache__destroy(c);
	munmap(mem, len);
}

/*
 * prof_snap_next walks every thread of a snapshot, lazy or not, each with
 * the nodes a full read gives it (quantiles and copied histograms too);
 * reaching a lazy thread unloads the one before; a tid walks that thread
 * alone.
 */
static void test_iter(void **state)
{
	static const unsigned int flags[] = { 0, PROF_READ_LAZY,
					      PROF_READ_LAZY | PROF_READ_LAZY_HIST };
	struct prof_snapshot *full, *z;
	const struct prof_snap_thread *t, *prev;
	pthread_t th[8];
	size_t len = 0, k;
	__u32 n, seen;
	void *mem;

	(void)state;
	for (k = 0; k < 8; k++)
		assert_int_equal(pthread_create(&th[k], NULL, nest_work, NULL), 0);
	for (k = 0; k < 8; k++)
		pthread_join(th[k], NULL);
	mem = test_own_segment(&len);
	assert_int_equal(prof_snapshot__read_opts(mem, len, 0, &full), 0);
	n = full->nthreads;
	assert_true(n >= 8);
	for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		struct prof_snap_iter it;

		assert_int_equal(prof_snapshot__read_opts(mem, len, flags[k], &z), 0);
		assert_int_equal(z->nthreads, n);
		it = PROF_SNAP_ITER(z, 0);
		prev = NULL;
		for (seen = 0; (t = prof_snap_next(&it)); seen++) {
			assert_ptr_equal(t, &z->threads[seen]);
			snap_same_thread(z, t, full, &full->threads[seen], true);
			if (flags[k] && prev) {
				/* one table, the thread before unloaded */
				assert_int_equal(prev->nnodes, 0);
				assert_null(prev->nodes);
			}
			prev = t;
		}
		assert_int_equal(it.err, 0);
		assert_int_equal(seen, n);
		/* the end is the end */
		assert_null(prof_snap_next(&it));
		/* one thread by its tid */
		it = PROF_SNAP_ITER(z, full->threads[n / 2].tid);
		t = prof_snap_next(&it);
		assert_non_null(t);
		assert_int_equal(t->tid, full->threads[n / 2].tid);
		snap_same_thread(z, t, full, &full->threads[n / 2], true);
		assert_null(prof_snap_next(&it));
		assert_int_equal(it.err, 0);
		/* a lazy snapshot is not written out: its nodes are not all in memory */
		if (flags[k]) {
			void *buf;
			size_t blen;

			assert_int_equal(prof_snapshot__write(z, &buf, &blen), -EINVAL);
		}
		prof_snapshot__destroy(z);
	}
	prof_snapshot__destroy(full);
	munmap(mem, len);
}

/*
 * A lazy walk that finds the segment changed into a corrupt one after the
 * read stops there and says so in it.err, and goes no further.
 */
static void test_iter_error(void **state)
{
	struct prof_snapshot *z;
	const struct prof_snap_thread *t;
	struct prof_snap_iter it;
	size_t len = 0;
	pthread_t th;
	void *mem, *copy;

	(void)state;
	nest_work(NULL);
	assert_int_equal(pthread_create(&th, NULL, nest_work, NULL), 0);
	pthread_join(th, NULL);
	mem = test_own_segment(&len);
	copy = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	assert_non_null(copy);
	memcpy(copy, mem, len);
	assert_int_equal(prof_snapshot__read_opts(copy, len, PROF_READ_LAZY, &z), 0);
	assert_true(z->nthreads >= 2);
	it = PROF_SNAP_ITER(z, 0);
	t = prof_snap_next(&it);
	assert_non_null(t);
	assert_true(t->nnodes >= 2);
	{
		const struct prof_seg_hdr *h = copy;
		struct prof_slab_hdr *sh =
			(void *)((char *)copy + h->slabs_off + (__u64)z->threads[1].slab * h->slab_size);

		sh->magic = ~sh->magic;
	}
	assert_null(prof_snap_next(&it));
	assert_int_equal(it.err, -EINVAL);
	assert_null(prof_snap_next(&it));
	prof_snapshot__destroy(z);
	free(copy);
	munmap(mem, len);
}

/* one quick call and one of ~2 ms: buckets far apart */
static void *gap_work(void *arg)
{
	struct timespec t0, t;

	for (int i = 0; i < 2; i++) {
		PROF_USDT(gap_zone);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while (i &&
		       (t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 2000000);
	}
	return arg;
}

/* the blocks of /dev/shm this process's segment has (by its start token:
 * a segment left by an earlier process of this pid is another file) */
static long seg_blocks(void)
{
	char path[1][96];
	struct stat st;

	if (test_seg_paths(getpid(), prof_proc_start_token(getpid()), path, 1) != 1 ||
	    stat(path[0], &st))
		return -1;
	return (long)st.st_blocks;
}

/*
 * Reading a histogram with a gap (two calls a few thousand times apart)
 * reads the rows its block's map marks, not the pages between them, and
 * no reader touches the exited threads' aggregate before a thread exits:
 * no way of reading the segment makes it take memory.  In a fresh process
 * (this program again: a fork of this one would keep its history, and
 * TSan stops a fork's threads), whose exit status says what failed.
 */
static int no_hole_reads(void)
{
	static const unsigned int flags[] = { 0, PROF_READ_LAZY,
					      PROF_READ_LAZY | PROF_READ_LAZY_HIST };
	struct prof_snapshot *s;
	struct prof_flat_row *rows;
	size_t len = 0, n, k;
	long before;
	void *mem;

	gap_work(NULL);
	mem = test_own_segment(&len);
	before = seg_blocks();
	if (before <= 0)
		return 2;
	for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		if (prof_snapshot__read_opts(mem, len, flags[k], &s))
			return 3;
		struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
		const struct prof_snap_thread *t;

		while ((t = prof_snap_next(&it))) {
			const struct prof_snap_node *g = test_node(s, t, "gap_zone");

			if (g && g->calls != 2)
				return 5;
		}
		if (it.err)
			return 4;
		prof_snapshot__destroy(s);
	}
	if (prof_seg_flat(mem, len, 0, PROF_SORT_SELF, &s, &rows, &n))
		return 6;
	free(rows);
	prof_snapshot__destroy(s);
	/* profd's sampling cursor too (it took a page for the aggregate of a
	 * process whose threads never exited: 4 KiB each, every process) */
	{
		struct prof_seg_cursor *c = prof_seg_cursor__new();
		struct prof_seg_busy b;

		if (!c || prof_seg_cursor__sample(c, mem, len, &b))
			return 7;
		prof_seg_cursor__destroy(c);
	}
	munmap(mem, len);
	if (seg_blocks() != before) {
		fprintf(stderr, "reads grew the segment: %ld -> %ld blocks\n", before,
			seg_blocks());
		return 1;
	}
	return 0;
}

static void test_no_hole_reads(void **state)
{
	static const char *const env[] = { "PROF_NO_DAEMON=1", NULL };

	(void)state;
	assert_true(test_exited_ok(test_reexec("--no-hole-reads", env, 60, NULL)));
}

/* a thread that ran a zone and waits, alive, until told */
static void *parked(void *arg)
{
	pthread_barrier_t *b = arg;

	{
		PROF_USDT(parked_zone);
	}
	pthread_barrier_wait(b);
	pthread_barrier_wait(b);
	return NULL;
}

/*
 * A flat pass of one thread reads that thread's files in /proc only (top
 * makes one a thread every refresh: reading every thread's in each made a
 * refresh O(threads^2) opens, 4,160 for 64 threads): the other live
 * thread's CPU time stays unknown, the one asked for is known.
 */
static void test_flat_thread_files(void **state)
{
	pthread_barrier_t b;
	struct prof_snapshot *s;
	struct prof_flat_row *rows;
	pthread_t th;
	size_t len = 0, n;
	__u32 me = (__u32)syscall(SYS_gettid), i, seen = 0;
	void *mem;

	(void)state;
	pthread_barrier_init(&b, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, parked, &b), 0);
	pthread_barrier_wait(&b);
	{
		PROF_USDT(flat_files_zone);
	}
	mem = test_own_segment(&len);
	assert_int_equal(prof_seg_flat(mem, len, me, PROF_SORT_SELF, &s, &rows, &n), 0);
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		if (t->state != PROF_SLAB_ALIVE)
			continue;
		seen++;
		if (t->tid == me)
			assert_true(t->oncpu_ns != PROF_SNAP_UNKNOWN);
		else
			assert_true(t->oncpu_ns == PROF_SNAP_UNKNOWN);
	}
	assert_true(seen >= 2);
	free(rows);
	prof_snapshot__destroy(s);
	munmap(mem, len);
	pthread_barrier_wait(&b);
	assert_int_equal(pthread_join(th, NULL), 0);
	pthread_barrier_destroy(&b);
}

/* a cache told to leave the scheduler facts out gives the same rows
 * without them (and reads no ext record: top shows none) */
static void test_flat_no_sched(void **state)
{
	struct prof_snap_site site = { .name = "ns_a" };
	struct prof_snap_node nodes[3] = { { .site = PROF_SITE_NONE },
					   { .site = PROF_SITE_NONE },
					   { .site = 0,
					     .calls = 9,
					     .ticks = 90,
					     .preempted = 3,
					     .migrated = 1,
					     .offcpu_ns = 5 } };
	struct prof_snap_thread th = { .tid = 7, .state = PROF_SLAB_ALIVE, .nnodes = 3 };
	struct prof_snapshot in = { .pid = 1, .clock = PROF_CLOCK_TSC, .tick_hz = 1000000000ull };
	struct prof_seg_flat_cache *c[2] = { prof_seg_flat_cache__new(),
					     prof_seg_flat_cache__new() };
	struct prof_snapshot *s;
	struct prof_flat_row *rows;
	size_t len, n;
	void *img;
	int k;

	(void)state;
	th.nodes = nodes;
	in.nsites = 1;
	in.sites = &site;
	in.nthreads = 1;
	in.threads = &th;
	assert_int_equal(prof_snapshot__write(&in, &img, &len), 0);
	prof_seg_flat_cache__no_sched(c[1]);
	for (k = 0; k < 2; k++) {
		assert_int_equal(
			prof_seg_flat_cached(img, len, 0, PROF_SORT_SELF, c[k], &s, &rows, &n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(rows[0].calls, 9);
		assert_int_equal(rows[0].ticks, 90);
		assert_int_equal(rows[0].preempted, k ? 0 : 3);
		assert_int_equal(rows[0].migrated, k ? 0 : 1);
		assert_int_equal(rows[0].offcpu_ns, k ? 0 : 5);
		free(rows);
		prof_snapshot__destroy(s);
		prof_seg_flat_cache__destroy(c[k]);
	}
	free(img);
}

static void test_segflat_rejects_garbage(void **state)
{
	static __u64 junk[512];
	struct prof_snapshot *s = NULL;
	struct prof_flat_row *r = NULL;
	size_t n = 0;

	(void)state;
	memset(junk, 0xa5, sizeof(junk));
	assert_int_not_equal(prof_seg_flat(junk, sizeof(junk), 0, 0, &s, &r, &n), 0);
	assert_null(s);
	assert_null(r);
	assert_int_equal(prof_seg_flat(junk, 8, 0, 0, &s, &r, &n), -EINVAL);
}

/* a process of one thread of n nodes (zeroed but the root's and the
 * overflow node's sites), to build by hand */
static void one_thread(struct prof_snapshot *in, struct prof_snap_thread *th,
		       struct prof_snap_site *sites, __u32 nsites, __u32 n)
{
	in->pid = 1;
	in->clock = PROF_CLOCK_TSC;
	in->tick_hz = 1000000000ull;
	in->nsites = nsites;
	in->sites = sites;
	snap_one_thread(in, th, 1, n);
}

/*
 * A chain a million nodes deep, sites A B A B ...: every consumer finishes
 * (the recursion check is O(nodes), renderers stop at PROF_SNAP_DEPTH_MAX,
 * nothing recurses per level without a bound) and recursion is still
 * counted once: A's flat total is its outermost node's, B's likewise.
 */
static void test_deep_chain(void **state)
{
	enum { N = 1000000 };
	struct prof_snapshot in = { 0 }, *s = NULL, *light = NULL;
	struct prof_snap_thread th = { 0 };
	struct prof_snap_site sites[2] = { { .name = "chain_a" }, { .name = "chain_b" } };
	struct prof_flat_row *rows = NULL;
	size_t len, n, i;
	void *img;
	FILE *null;

	(void)state;
	one_thread(&in, &th, sites, 2, N);
	for (i = 2; i < N; i++) {
		th.nodes[i].site = (__u32)(i % 2);
		th.nodes[i].parent = i == 2 ? 0 : (__u32)(i - 1);
		th.nodes[i].calls = 1;
		th.nodes[i].ticks = N - i;
		th.nodes[i].max = N - i;
	}
	assert_int_equal(prof_snapshot__write(&in, &img, &len), 0);
	free(th.nodes);

	assert_int_equal(prof_snapshot__read(img, len, &s), 0);
	assert_int_equal(s->threads[0].nnodes, N);
	assert_false(prof_snap_is_recursive(&s->threads[0], 2));
	assert_false(prof_snap_is_recursive(&s->threads[0], 3));
	assert_true(prof_snap_is_recursive(&s->threads[0], 4));
	assert_true(prof_snap_is_recursive(&s->threads[0], N - 1));
	assert_int_equal(prof_snap_flat(s, 0, PROF_SORT_TOTAL, &rows, &n), 0);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		/* chain_a's outermost is node 2, chain_b's node 3 */
		assert_int_equal(rows[i].ticks, rows[i].site == 0 ? N - 2 : N - 3);
		assert_int_equal(rows[i].calls, rows[i].site == 0 ? (N - 2 + 1) / 2 : (N - 2) / 2);
	}
	free(rows);
	assert_int_equal(prof_seg_flat(img, len, 0, PROF_SORT_TOTAL, &light, &rows, &n), 0);
	assert_int_equal(n, 2);
	free(rows);
	prof_snapshot__destroy(light);

	null = fopen("/dev/null", "w");
	assert_non_null(null);
	{
		struct prof_report_opts o = { .sort = PROF_SORT_SELF };

		assert_int_equal(prof_report_text(null, s, &o), 0);
		assert_int_equal(prof_report_json(null, &s, 1), 0);
	}
	fclose(null);
	prof_snapshot__destroy(s);
	free(img);
}

/*
 * Recursion found however far up, at a bounded cost.  Sites 0 and 64 share
 * the flat pass's filter bit: below a chain of 5,000 nodes B C B C ...
 * (B = 64) between two nodes of A (site 0) the filter cannot tell B from A,
 * so confirming the lower A walks the whole chain; it is recursive, and its
 * time is in the upper A's already.  With leaves of another site that
 * shares the bit (128) learnt before the lower A, every leaf walks the
 * chain and finds nothing: the walks run out of budget before the lower A
 * is reached, and one depth-first pass decides it.
 */
static void check_far_recursion(__u32 leaves)
{
	enum { CHAIN = 5000 };
	/* 2: the upper A; 3 .. end: the chain; then the leaves; last the lower A */
	__u32 n = 2 + 1 + CHAIN + leaves + 1, i, nsites = 129, end = 2 + CHAIN;
	struct prof_snapshot in = { 0 }, *light = NULL, *s = NULL;
	struct prof_snap_thread th = { 0 };
	struct prof_snap_site *sites = calloc(nsites, sizeof(*sites));
	struct prof_flat_row *rows = NULL, *exact = NULL;
	size_t len, nr, ne, k;
	void *img;

	assert_non_null(sites);
	for (i = 0; i < nsites; i++)
		snprintf(sites[i].name, sizeof(sites[i].name), "s%u", i);
	one_thread(&in, &th, sites, nsites, n);
	for (i = 2; i < n; i++) {
		int leaf = i > end && i < n - 1;

		th.nodes[i].site = i == 2 || i == n - 1 ? 0 : leaf ? 128 : i % 2 ? 64 : 1;
		th.nodes[i].parent = i == 2 ? 0 : i <= end ? i - 1 : end;
		th.nodes[i].calls = 1;
		th.nodes[i].ticks = leaf ? 1 : i == n - 1 ? 10 : 1000000 - i;
		th.nodes[i].max = th.nodes[i].ticks;
	}
	assert_int_equal(prof_snapshot__write(&in, &img, &len), 0);
	free(th.nodes);
	free(sites);

	assert_int_equal(prof_seg_flat(img, len, 0, PROF_SORT_TOTAL, &light, &rows, &nr), 0);
	assert_int_equal(prof_snapshot__read(img, len, &s), 0);
	assert_int_equal(prof_snap_flat(s, 0, PROF_SORT_TOTAL, &exact, &ne), 0);
	assert_int_equal(nr, ne);
	for (k = 0; k < nr; k++) {
		if (rows[k].site == 0) {
			/* two calls; the total is the upper A's alone */
			assert_int_equal(rows[k].calls, 2);
			assert_int_equal(rows[k].ticks, 1000000 - 2);
		}
		if (rows[k].site == 128) {
			assert_int_equal(rows[k].calls, leaves);
			assert_int_equal(rows[k].ticks, leaves);
		}
	}
	/* the same rows as the exact (depth-first) copying read */
	rows_equal(rows, exact, nr);
	free(rows);
	free(exact);
	prof_snapshot__destroy(light);
	prof_snapshot__destroy(s);
	free(img);
}

static void test_far_recursion(void **state)
{
	(void)state;
	check_far_recursion(0);	     /* the walks find it */
	check_far_recursion(100000); /* the walks run out: the pass finds it */
}

static const struct test_child_mode children[] = {
	{ "--no-hole-reads", no_hole_reads },
	{ NULL, NULL },
};

TEST_MAIN_CHILDREN(NULL, NULL, children, NULL, cmocka_unit_test(test_segflat_equals_snapshot),
		   cmocka_unit_test(test_segflat_rejects_garbage), cmocka_unit_test(test_segflat_cache),
		   cmocka_unit_test(test_sites_race), cmocka_unit_test(test_deep_chain),
		   cmocka_unit_test(test_far_recursion), cmocka_unit_test(test_iter),
		   cmocka_unit_test(test_iter_error), cmocka_unit_test(test_no_hole_reads),
		   cmocka_unit_test(test_flat_no_sched), cmocka_unit_test(test_flat_thread_files))
