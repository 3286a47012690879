// SPDX-License-Identifier: MIT
/*
 * test_overflow.c - full tables degrade, never break.  In a fresh process
 * with PROF_MAX_NODES=16, a deep recursion and extra sites fill the node
 * table: zones past it land in the overflow node and are counted there and
 * in the thread's overflow counter, nnodes stops at max_nodes, the zones
 * that have nodes stay exact, and nothing past the table is written (the
 * slab's padding and the next slab stay zero; ASan watches the rest).
 * With PROF_MAX_THREADS=2 and 4 threads: two are profiled exactly, the
 * others are counted in threads_dropped and run on.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "fastpath.h"
#include "prof.h"

#define ROUNDS 100
#define DEPTH 20

static void ov_rec(int n)
{
	PROF_USDT(ov_rec);
	if (n > 1)
		ov_rec(n - 1);
}

static void ov_extra_a(void)
{
	PROF_USDT(ov_extra_a);
}
static void ov_extra_b(void)
{
	PROF_USDT(ov_extra_b);
}
static void ov_extra_c(void)
{
	PROF_USDT(ov_extra_c);
}
static void ov_extra_d(void)
{
	PROF_USDT(ov_extra_d);
}

/* every byte of [p, p + n) is zero */
static int all_zero(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int nodes_child(void)
{
	struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	const struct prof_seg_hdr *h;
	char paths[2][96];
	__u32 n, d;
	size_t used;
	struct stat st;
	unsigned char *mem;
	int i, fd;

	for (i = 0; i < ROUNDS; i++) {
		PROF_USDT(ov_top);
		ov_rec(DEPTH);
	}
	for (i = 0; i < 10; i++) {
		ov_extra_a();
		ov_extra_b();
		ov_extra_c();
		ov_extra_d();
	}
	s = test_snapshot(0);
	CHILD_CHECK(s && s->nthreads == 1);
	t = &s->threads[0];
	/* root, overflow, ov_top, then ov_rec at depths 1..13: full */
	CHILD_CHECK(t->nnodes == 16);
	CHILD_CHECK(t->overflow == ROUNDS * (DEPTH - 13) + 40);
	CHILD_CHECK(t->nodes[1].calls == t->overflow);
	CHILD_CHECK(t->unbalanced == 0);
	n = test_child(s, t, PROF_NODE_ROOT, "ov_top");
	CHILD_CHECK(n != PROF_SNAP_NONE && t->nodes[n].calls == ROUNDS);
	for (d = 1; d <= 13; d++) {
		n = test_child(s, t, n, "ov_rec");
		CHILD_CHECK(n != PROF_SNAP_NONE && t->nodes[n].calls == ROUNDS);
	}
	/* past the table nothing is created: the overflow node has no children */
	CHILD_CHECK(t->nodes[1].first_child == PROF_SNAP_NONE);
	CHILD_CHECK(!test_node(s, t, "ov_extra_a"));
	for (n = 0; n < t->nnodes; n++)
		CHILD_CHECK(t->nodes[n].anomalies == 0);
	prof_snapshot__destroy(s);

	/* nothing written past the node table and histograms */
	CHILD_CHECK(test_seg_paths(getpid(), prof_proc_start_token(getpid()), paths, 2) == 1);
	fd = open(paths[0], O_RDONLY);
	CHILD_CHECK(fd >= 0 && !fstat(fd, &st));
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	CHILD_CHECK(mem != MAP_FAILED);
	h = (const struct prof_seg_hdr *)mem;
	CHILD_CHECK(h->max_nodes == 16 && h->nslabs == 1 && h->max_threads >= 2);
	/* no rare path ran: the ext records are zero; one block's row map,
	 * then nothing up to the histograms of 16 nodes, one block, then the
	 * event ring, then the annotations that end the slab (none written) */
	{
		const struct prof_region *r = h->region;
		__u64 rowmap = r[PROF_REGION_ROWMAP].off, hist = r[PROF_REGION_HIST].off;

		CHILD_CHECK(h->nregions == PROF_REGIONS);
		CHILD_CHECK(r[PROF_REGION_RING].off == hist + PROF_HIST_BLOCK * PROF_HIST_BUCKETS * 4);
		CHILD_CHECK(r[PROF_REGION_ANNOT].off ==
			    prof_page_up(r[PROF_REGION_RING].off + r[PROF_REGION_RING].size));
		CHILD_CHECK(h->slab_size ==
			    prof_page_up(r[PROF_REGION_ANNOT].off + r[PROF_REGION_ANNOT].size));
		CHILD_CHECK(all_zero(mem + h->slabs_off + r[PROF_REGION_ANNOT].off,
				     r[PROF_REGION_ANNOT].size));
		/* ext records and open marks: all zero (every zone closed) */
		used = r[PROF_REGION_EXT].off;
		CHILD_CHECK(all_zero(mem + h->slabs_off + used, rowmap - used));
		used = rowmap + PROF_ROWMAP_WORDS * 8;
		CHILD_CHECK(!all_zero(mem + h->slabs_off + rowmap, PROF_ROWMAP_WORDS * 8));
		CHILD_CHECK(all_zero(mem + h->slabs_off + used, hist - used));
	}
	CHILD_CHECK(all_zero(mem + h->slabs_off + h->slab_size, h->slab_size));
	munmap(mem, (size_t)st.st_size);
	close(fd);
	/* the exit report walks the full table too */
	exit(0);
}

/* this program again as its child mode (--nodes, --threads) under the
 * runtime's limit (PROF_MAX_...=N), quiet, with no profd: it exits 0 */
static void child_passes(const char *mode, const char *limit)
{
	const char *const env[] = { limit, "PROF_QUIET=1", "PROF_NO_DAEMON=1",
				    "PROF_REPORT=/dev/null", NULL };

	assert_true(test_exited_ok(test_reexec(mode, env, 60, NULL)));
}

static void test_node_overflow(void **state)
{
	(void)state;
	child_passes("--nodes", "PROF_MAX_NODES=16");
}

#define THREADS 4
#define THREAD_CALLS 1000

static pthread_barrier_t start;

static void *thr_main(void *arg)
{
	int i;

	*(__u32 *)arg = test_gettid();
	pthread_barrier_wait(&start);
	for (i = 0; i < THREAD_CALLS; i++) {
		PROF_USDT(ov_thr);
	}
	/* all four are inside: the slabs are spoken for */
	pthread_barrier_wait(&start);
	return NULL;
}

static int threads_child(void)
{
	struct prof_snapshot *s;
	pthread_t th[THREADS];
	__u32 tids[THREADS];
	unsigned i, profiled = 0;

	pthread_barrier_init(&start, NULL, THREADS);
	for (i = 0; i < THREADS; i++)
		CHILD_CHECK(!pthread_create(&th[i], NULL, thr_main, &tids[i]));
	for (i = 0; i < THREADS; i++)
		CHILD_CHECK(!pthread_join(th[i], NULL));
	{
		/* the main thread too: the two profiled ones have exited, so
		 * their profiles go into the exited threads' aggregate and it
		 * takes one of their slabs */
		PROF_USDT(ov_main);
	}
	s = test_snapshot(0);
	CHILD_CHECK(s);
	CHILD_CHECK(s->nthreads == 2);
	CHILD_CHECK(s->threads_dropped == THREADS - 2);
	CHILD_CHECK(s->threads[1].folds == 2);
	CHILD_CHECK(test_node(s, &s->threads[1], "ov_thr")->calls == 2 * THREAD_CALLS);
	CHILD_CHECK(test_thread(s, test_gettid()) != NULL);
	for (i = 0; i < THREADS; i++) {
		const struct prof_snap_thread *t = test_thread(s, tids[i]);
		const struct prof_snap_node *n;

		if (!t)
			continue;
		profiled++;
		n = test_node(s, t, "ov_thr");
		CHILD_CHECK(n && n->calls == THREAD_CALLS);
		CHILD_CHECK(t->state == PROF_SLAB_EXITED);
	}
	CHILD_CHECK(profiled == 0);
	prof_snapshot__destroy(s);
	exit(0);
}

static void test_thread_overflow(void **state)
{
	(void)state;
	child_passes("--threads", "PROF_MAX_THREADS=2");
}

/* the thread-overflow warning under PROF_QUIET=quiet (NULL: unset): said? */
static bool warned(const char *quiet)
{
	char env_quiet[32], path[] = "/tmp/test_overflow.XXXXXX", buf[512] = "";
	const char *env[] = { "PROF_MAX_THREADS=2", "PROF_NO_DAEMON=1", "PROF_REPORT=/dev/null",
			      env_quiet, NULL };
	FILE *f;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	snprintf(env_quiet, sizeof(env_quiet), "PROF_QUIET=%s", quiet ? quiet : "");
	if (!quiet)
		env[3] = NULL;
	assert_true(test_exited_ok(test_reexec("--threads", env, 60, path)));
	f = fopen(path, "r");
	assert_non_null(f);
	if (!fread(buf, 1, sizeof(buf) - 1, f))
		buf[0] = 0;
	fclose(f);
	unlink(path);
	return strstr(buf, "prof: ") != NULL;
}

/* PROF_QUIET is a switch: set and not empty or "0", like PROF_KEEP */
static void test_quiet_switch(void **state)
{
	(void)state;
	assert_true(warned(NULL));
	assert_true(warned("0"));
	assert_true(warned(""));
	assert_false(warned("1"));
}

static const struct test_child_mode children[] = {
	{ "--nodes", nodes_child },
	{ "--threads", threads_child },
	{ NULL, NULL },
};

TEST_MAIN_CHILDREN(NULL, NULL, children, NULL, cmocka_unit_test(test_node_overflow),
		   cmocka_unit_test(test_thread_overflow), cmocka_unit_test(test_quiet_switch))
