// SPDX-License-Identifier: MIT
/*
 * test_churn.c - thread churn: slabs of exited threads are
 * folded into the aggregate and reused, so every call of every thread is
 * counted however many threads come and go, live (while they churn, by
 * concurrent readers: counts only grow, never above what was made) and at
 * exit, and a diff window across reuse holds exactly the calls made in it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "prof.h"
#include "fastpath.h"

/* TSan makes each zone and thread far slower: fewer threads there */
#define CHURN_THREADS (TEST_TSAN ? 1500 : 10000)
#define CHURN_BATCH   8
/* PROF_MAX_THREADS: slabs change hands at nearly every thread */
#define CHURN_SLABS   16

static __u64 made; /* outer calls ended or about to, atomic */

static void inner(void)
{
	PROF_USDT(churn_inner);
}

/* thread i makes (i % 7) + 1 outer calls, each with i % 3 inner ones */
static __u64 outer_calls(unsigned long i)
{
	return i % 7 + 1;
}

/* a recursion of depth n: a node a level, so a thread's tree is big and
 * a reader's copy long (a fold has time to run during it) */
static void deep(unsigned long n)
{
	PROF_USDT(churn_deep);
	if (n > 1)
		deep(n - 1);
}

static void *churn_thread(void *arg)
{
	unsigned long i = (unsigned long)arg, k, j;

	deep(i % 64 + 16);

	for (k = 0; k < outer_calls(i); k++) {
		{
			PROF_USDT(churn_outer);
			/* an ext record's figure, which the fold must keep too */
			PROF_ALLOC(64);
			for (j = 0; j < i % 3; j++)
				inner();
			/* before the call ends: a read never counts more */
			__atomic_add_fetch(&made, 1, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

/* the calls of the zone called name in s, every thread and the aggregate */
static __u64 snap_calls(const struct prof_snapshot *s, const char *name, __u64 *folds)
{
	__u64 n = 0;
	__u32 i, j;

	if (folds)
		*folds = 0;
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		if (t->folds && folds)
			*folds = t->folds;
		for (j = 2; j < t->nnodes; j++)
			if (!strcmp(prof_snap_node_name(s, &t->nodes[j]), name))
				n += t->nodes[j].calls;
	}
	return n;
}

/* the allocations counted in the zone called name in s, all threads */
static __u64 snap_allocs(const struct prof_snapshot *s, const char *name)
{
	__u64 n = 0;
	__u32 i, j;

	for (i = 0; i < s->nthreads; i++)
		for (j = 2; j < s->threads[i].nnodes; j++)
			if (!strcmp(prof_snap_node_name(s, &s->threads[i].nodes[j]), name))
				n += s->threads[i].nodes[j].allocs;
	return n;
}

/* this process's segment, mapped read-only as a reader maps it */
static void *map_self(size_t *len)
{
	struct prof_seg_ent *ents;
	size_t n = 0, i;
	__u64 tok = prof_proc_start_token(getpid());
	struct stat st;
	void *mem;
	int fd = -1;

	assert_int_equal(prof_seg_list(geteuid(), &ents, &n), 0);
	for (i = 0; i < n && fd < 0; i++)
		if (ents[i].pid == (__u32)getpid() && ents[i].start_token == tok)
			fd = prof_seg_open(&ents[i]);
	free(ents);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(mem != MAP_FAILED);
	*len = (size_t)st.st_size;
	return mem;
}

/* the calls of zone name in the flat view of this process's mapping */
static __u64 flat_calls(const char *name)
{
	struct prof_snapshot *snap = NULL;
	struct prof_flat_row *rows = NULL;
	struct prof_seg_flat_cache *c = prof_seg_flat_cache__new();
	size_t i, nrows = 0, len;
	__u64 calls = 0;
	void *mem = map_self(&len);
	int round;

	/* twice: the second from the cache */
	for (round = 0; round < 2; round++) {
		prof_snapshot__destroy(snap);
		free(rows);
		assert_int_equal(prof_seg_flat_cached(mem, len, 0, PROF_SORT_CALLS, c, &snap, &rows,
						      &nrows),
				 0);
		for (calls = 0, i = 0; i < nrows; i++)
			if (rows[i].site < snap->nsites && !strcmp(snap->sites[rows[i].site].name, name))
				calls += rows[i].calls;
	}
	prof_snapshot__destroy(snap);
	free(rows);
	prof_seg_flat_cache__destroy(c);
	munmap(mem, len);
	return calls;
}

static void run_threads(unsigned long from, unsigned long to)
{
	pthread_t th[CHURN_BATCH];
	unsigned long i, k;

	for (i = from; i < to; i += k) {
		for (k = 0; k < CHURN_BATCH && i + k < to; k++)
			assert_int_equal(pthread_create(&th[k], NULL, churn_thread, (void *)(i + k)), 0);
		for (k = 0; k < CHURN_BATCH && i + k < to; k++)
			pthread_join(th[k], NULL);
	}
}

static __u64 expected(unsigned long from, unsigned long to)
{
	__u64 n = 0;

	for (; from < to; from++)
		n += outer_calls(from);
	return n;
}

static volatile int readers_stop;
struct reader_res {
	__u64 reads, bad;
	char why[160];
	void *mem; /* the segment, mapped once: reads back to back */
	size_t len;
	int trace; /* the event rings instead (profctl trace) */
};

/* a live reader: its counts only grow, and never exceed the calls made */
static void *reader(void *arg)
{
	struct reader_res *r = arg;
	__u64 last = 0;

	while (!__atomic_load_n(&readers_stop, __ATOMIC_ACQUIRE)) {
		struct prof_snapshot *s = NULL;
		__u64 n, cap;
		int err;

		if (r->trace) {
			struct prof_trace *t = NULL;

			/* a ring whose slab changes hands is left out, never an error */
			err = prof_seg_trace(r->mem, r->len, &t);
			if (err && !r->bad++)
				snprintf(r->why, sizeof(r->why), "trace failed: %s", strerror(-err));
			prof_trace__destroy(t);
			r->reads++;
			continue;
		}
		err = prof_snapshot__read(r->mem, r->len, &s);

		if (err) {
			if (!r->bad++)
				snprintf(r->why, sizeof(r->why), "read failed: %s", strerror(-err));
			continue;
		}
		n = snap_calls(s, "churn_outer", NULL);
		cap = __atomic_load_n(&made, __ATOMIC_ACQUIRE);
		/* a thread is (slab, even gen): an odd one is a slab between two */
		for (__u32 i = 0; i < s->nthreads; i++)
			if ((s->threads[i].gen & 1) && !r->bad++)
				snprintf(r->why, sizeof(r->why), "slab %u read at odd gen %llu",
					 s->threads[i].slab, (unsigned long long)s->threads[i].gen);
		if ((n < last || n > cap) && !r->bad)
			snprintf(r->why, sizeof(r->why), "read %llu after %llu, %llu made",
				 (unsigned long long)n, (unsigned long long)last,
				 (unsigned long long)cap);
		r->bad += n < last || n > cap;
		last = n;
		r->reads++;
		prof_snapshot__destroy(s);
	}
	return NULL;
}

static void test_churn_live(void **state)
{
	struct reader_res res[3] = { 0 };
	pthread_t rd[3];
	struct prof_snapshot *s;
	__u64 folds, want = expected(0, CHURN_THREADS);
	int i;

	(void)state;
	/* the first thread gives the process its segment */
	run_threads(0, 1);
	res[2].trace = 1;
	for (i = 0; i < 3; i++) {
		res[i].mem = map_self(&res[i].len);
		assert_int_equal(pthread_create(&rd[i], NULL, reader, &res[i]), 0);
	}
	run_threads(1, CHURN_THREADS);
	__atomic_store_n(&readers_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 3; i++)
		pthread_join(rd[i], NULL);
	for (i = 0; i < 3; i++) {
		if (res[i].bad)
			fail_msg("reader %d: %llu bad reads of %llu: %s", i,
				 (unsigned long long)res[i].bad, (unsigned long long)res[i].reads,
				 res[i].why);
		assert_true(res[i].reads > 0);
		munmap(res[i].mem, res[i].len);
	}
	s = test_snapshot(0);
	assert_non_null(s);
	/* every call, nested ones too, and every thread folded, with what
	 * its nodes' ext records held */
	assert_int_equal(snap_calls(s, "churn_outer", &folds), want);
	assert_int_equal(snap_allocs(s, "churn_outer"), want);
	{
		__u64 in = 0;
		unsigned long k;

		for (k = 0; k < CHURN_THREADS; k++)
			in += outer_calls(k) * (k % 3);
		assert_int_equal(snap_calls(s, "churn_inner", NULL), in);
	}
	/* every thread is folded, or an exited one that still has its slab */
	assert_int_equal(folds + s->nthreads - 1, CHURN_THREADS);
	/* the flat view straight from the mapping counts them too */
	assert_int_equal(flat_calls("churn_outer"), want);
	assert_int_equal(s->threads_dropped, 0);
	/* memory bounded: the exited threads that kept their slabs, and the
	 * aggregate, however many threads came and went */
	assert_true(s->nthreads <= CHURN_SLABS + 1);
	for (i = 0; i + 1 < (int)s->nthreads; i++)
		assert_int_equal(s->threads[i].state, PROF_SLAB_EXITED);
	{
		char buf[64];

		snprintf(buf, sizeof(buf), "[exited threads] (%llu)", (unsigned long long)folds);
		assert_string_equal(
			prof_snap_thread_label(&s->threads[s->nthreads - 1], buf + 32, 32), buf);
	}
	prof_snapshot__destroy(s);
}

/* a thread alive at the baseline, exiting after it */
static pthread_barrier_t mid_bar;
static void *mid_thread(void *arg)
{
	(void)arg;
	churn_thread((void *)5ul);	/* 6 calls before the baseline */
	pthread_barrier_wait(&mid_bar); /* baseline taken */
	pthread_barrier_wait(&mid_bar);
	churn_thread((void *)1ul);	/* 2 after it */
	return NULL;
}

static void test_churn_diff(void **state)
{
	struct prof_snapshot *base, *s;
	pthread_t th[3];
	__u64 agg_calls = 0;
	int i;

	(void)state;
	run_threads(0, 1);
	pthread_barrier_init(&mid_bar, NULL, 4);
	for (i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, mid_thread, NULL), 0);
	pthread_barrier_wait(&mid_bar);
	base = test_snapshot(0);
	assert_non_null(base);
	pthread_barrier_wait(&mid_bar);
	/* many more threads than slabs: slabs change hands in the window */
	run_threads(100, 400);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&mid_bar);
	s = test_snapshot(0);
	assert_non_null(s);
	/* against the baseline as profd keeps it too: an image, threads
	 * numbered anew */
	{
		struct prof_snapshot *s2 = test_snapshot(0), *bimg;
		void *buf;
		size_t len;

		assert_non_null(s2);
		assert_int_equal(prof_snapshot__write(base, &buf, &len), 0);
		assert_int_equal(prof_snapshot__read(buf, len, &bimg), 0);
		assert_int_equal(prof_snapshot__diff(s2, bimg), 0);
		assert_int_equal(snap_calls(s2, "churn_outer", NULL), expected(100, 400) + 3 * 2);
		prof_snapshot__destroy(bimg);
		prof_snapshot__destroy(s2);
		free(buf);
	}
	assert_int_equal(prof_snapshot__diff(s, base), 0);
	/* the window's calls: the new threads', and the three's after it */
	assert_int_equal(snap_calls(s, "churn_outer", NULL), expected(100, 400) + 3 * 2);
	for (i = 0; i < (int)s->nthreads; i++)
		if (s->threads[i].folds)
			agg_calls = test_node(s, &s->threads[i], "churn_outer")->calls;
	/* most of them through the aggregate: the three were folded too */
	assert_true(agg_calls > 0 && agg_calls <= expected(100, 400) + 3 * 2);
	/* and through an image (what profd answers with) */
	{
		struct prof_snapshot *img;
		void *buf;
		size_t len;

		assert_int_equal(prof_snapshot__write(s, &buf, &len), 0);
		assert_int_equal(prof_snapshot__read(buf, len, &img), 0);
		assert_int_equal(snap_calls(img, "churn_outer", NULL), expected(100, 400) + 6);
		assert_true(img->threads[img->nthreads - 1].folds > 0);
		prof_snapshot__destroy(img);
		free(buf);
	}
	prof_snapshot__destroy(base);
	prof_snapshot__destroy(s);
}

/* a thread that exits inside a zone: its open call is no call */
static __u64 two_calls_ns; /* the wall time around its two closed calls */

static void *open_thread(void *arg)
{
	__u64 t0 = test_mono_ns();

	(void)arg;
	for (int k = 0; k < 2; k++) {
		PROF_USDT(churn_open);
	}
	two_calls_ns = test_mono_ns() - t0;
	PROF_BEGIN(churn_open);
	test_spin(1000000);
	pthread_exit(NULL);
	return NULL;
}

static void test_churn_open_not_folded(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s;
	__u64 calls = 0, ticks = 0, open = 0;
	pthread_t th;
	__u32 i;

	(void)state;
	run_threads(0, 1);
	assert_int_equal(pthread_create(&th, NULL, open_thread, NULL), 0);
	pthread_join(th, NULL);
	/* as many threads as slabs: its slab changes hands, it is folded */
	run_threads(0, CHURN_SLABS);
	s = test_snapshot(0);
	assert_non_null(s);
	t = &s->threads[s->nthreads - 1];
	assert_true(t->folds > 0);
	/* the loop's site and the BEGIN's */
	for (i = 2; i < t->nnodes; i++) {
		if (strcmp(prof_snap_node_name(s, &t->nodes[i]), "churn_open"))
			continue;
		calls += t->nodes[i].calls;
		ticks += t->nodes[i].ticks;
		open += t->nodes[i].open + t->nodes[i].open_ticks;
	}
	assert_int_equal(calls, 2);
	assert_int_equal(open, 0);
	/* its time is the two calls' alone, within the time around them
	 * however loaded the machine (100 us for the clocks' reads): not the
	 * 1 ms the open one ran */
	assert_true(prof_snap_ns(s, ticks) <= two_calls_ns + 100000);
	prof_snapshot__destroy(s);

	/* the next thread takes its slab (nodes 2 and 3 again): no open
	 * call of the last one there either */
	pthread_barrier_init(&mid_bar, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, mid_thread, NULL), 0);
	pthread_barrier_wait(&mid_bar);
	s = test_snapshot(0);
	assert_non_null(s);
	for (open = 0, i = 0; i < s->nthreads; i++)
		for (__u32 j = 1; j < s->threads[i].nnodes; j++)
			open += s->threads[i].nodes[j].open;
	prof_snapshot__destroy(s);
	pthread_barrier_wait(&mid_bar);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&mid_bar);
	assert_int_equal(open, 0);
}

/* a process's exit report names the aggregate and counts every call */
static void test_churn_exit_report(void **state)
{
	char path[] = "/tmp/test_churn_XXXXXX", line[256], want[64], seg[4][96];
	int fd = mkstemp(path), st, found = 0, go[2];
	struct prof_snapshot *s = NULL;
	__u64 token, folds;
	pid_t pid;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char c;

		/* its segment kept, to count what the report counted */
		setenv("PROF_KEEP", "1", 1);
		setenv("PROF_REPORT", path, 1);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		run_threads(1000, 1300);
		exit(0);
	}
	token = prof_proc_start_token(pid);
	assert_int_equal(write(go[1], "x", 1), 1);
	close(go[0]);
	close(go[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && !WEXITSTATUS(st));
	assert_int_equal(test_seg_paths(pid, token, seg, 4), 1);
	fd = open(seg[0], O_RDONLY);
	unlink(seg[0]);
	assert_true(fd >= 0);
	assert_int_equal(prof_snapshot__read_fd(fd, &s), 0);
	close(fd);
	assert_int_equal(snap_calls(s, "churn_outer", NULL), expected(1000, 1300));
	/* the fork child keeps its parent's geometry: CHURN_SLABS slabs, so
	 * most of the 300 are folded, and the report says how many */
	folds = s->threads[s->nthreads - 1].folds;
	assert_true(folds >= 300 - CHURN_SLABS);
	assert_int_equal(folds + s->nthreads - 1, 300);
	f = fopen(path, "r");
	assert_non_null(f);
	snprintf(want, sizeof(want), "[exited threads] (%llu)", (unsigned long long)folds);
	while (fgets(line, sizeof(line), f))
		found += strstr(line, want) != NULL;
	fclose(f);
	unlink(path);
	assert_true(found > 0);
	/* JSON: the aggregate says how many threads it holds, and the schema
	 * (additive) still holds */
	{
		char jpath[] = "/tmp/test_churn_json_XXXXXX", cmd[256];
		int jfd = mkstemp(jpath);
		FILE *jf = jfd >= 0 ? fdopen(jfd, "w") : NULL;

		assert_non_null(jf);
		assert_int_equal(prof_report_json(jf, &s, 1), 0);
		fclose(jf);
		snprintf(cmd, sizeof(cmd), "grep -q '\"exited_threads\":%llu' %s",
			 (unsigned long long)folds, jpath);
		assert_int_equal(system(cmd), 0);
		if (!access("tests/check_schema.py", R_OK)) {
			snprintf(cmd, sizeof(cmd),
				 "python3 tests/check_schema.py tests/report.schema.json %s", jpath);
			assert_int_equal(system(cmd), 0);
		}
		unlink(jpath);
	}
	prof_snapshot__destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_churn_live),
		cmocka_unit_test(test_churn_diff),
		cmocka_unit_test(test_churn_open_not_folded),
		cmocka_unit_test(test_churn_exit_report),
	};

	test_filter_env();
	setenv("PROF_NO_DAEMON", "1", 1);
	{
		char n[16];

		snprintf(n, sizeof(n), "%d", CHURN_SLABS);
		setenv("PROF_MAX_THREADS", n, 1);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
