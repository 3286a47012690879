// SPDX-License-Identifier: MIT
/*
 * test_profd_hist.c - profd's history frames as reverse deltas
 * (daemon/profd/profd_hist.c): every frame rebuilt from the newest state
 * and the deltas after it is the snapshot that was read, field for field
 * and bucket for bucket, and a "last N seconds" window against it is the
 * window against the full snapshot, byte for byte.  The frames are real
 * reads of this process, a big one that changes: 16 threads of 1,110
 * nodes each, a tenth of each tree run again between two frames, an open
 * call held across frames, threads that come and go.  A delta keeps only
 * what changed.
 */
#include <pthread.h>

#include "testutil.h"
#include "prof.h"
#include "profd.h"

#define WORKERS 16
#define FRAMES 9

static void rec(int d, int only);
static __thread volatile unsigned long sink; /* each thread its own: no race */

/* clang-format off */
#define Z(n)                              \
	static void hz##n(int d, int only) \
	{                                  \
		PROF_USDT(hz##n);          \
		sink += (unsigned long)d;  \
		rec(d, only);              \
	}
Z(0) Z(1) Z(2) Z(3) Z(4) Z(5) Z(6) Z(7) Z(8) Z(9)

static void (*const zs[10])(int, int) = { hz0, hz1, hz2, hz3, hz4, hz5, hz6, hz7, hz8, hz9 };
/* clang-format on */

/* a tree of 10 zones nested d deep; only >= 0: that top-level zone alone */
static void rec(int d, int only)
{
	int i;

	if (d == 0)
		return;
	for (i = 0; i < 10; i++)
		if (only < 0 || only == i)
			zs[i](d - 1, -1);
}

static pthread_barrier_t go, done;
static volatile int step, quit;

/* each step runs one tenth of its tree again: a different tenth per thread */
static void *worker(void *arg)
{
	int id = (int)(long)arg;

	rec(3, -1);
	for (;;) {
		pthread_barrier_wait(&go);
		if (quit)
			break;
		rec(3, (step + id) % 10);
		pthread_barrier_wait(&done);
	}
	return NULL;
}

/* a thread that lives through one step only */
static void *passer(void *arg)
{
	(void)arg;
	PROF_THREAD_NAME("passer");
	rec(2, -1);
	return NULL;
}

static struct prof_snapshot *frames[FRAMES];

static void one_step(int i)
{
	pthread_t t;

	step = i;
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
	/* threads that come and go: their slabs are folded and reused */
	if (i == 3 || i == 6) {
		assert_int_equal(pthread_create(&t, NULL, passer, NULL), 0);
		pthread_join(t, NULL);
	}
	frames[i] = test_snapshot(0);
	assert_non_null(frames[i]);
}

/* a snapshot as an image: what profd answers with */
static void *image(const struct prof_snapshot *s, size_t *len)
{
	void *buf = NULL;

	assert_int_equal(prof_snapshot__write(s, &buf, len), 0);
	return buf;
}

static void assert_same_image(const struct prof_snapshot *a, const struct prof_snapshot *b)
{
	size_t la, lb;
	void *ia = image(a, &la), *ib = image(b, &lb);

	assert_int_equal(la, lb);
	assert_memory_equal(ia, ib, la);
	free(ia);
	free(ib);
}

/* frame k rebuilt: a copy of the newest taken back through the deltas */
static struct prof_snapshot *rebuild(struct hist_delta *const *d, int k)
{
	struct prof_snapshot *w = hist_snap_clone(frames[FRAMES - 1]);
	int i;

	assert_non_null(w);
	for (i = FRAMES - 2; i >= k; i--)
		assert_int_equal(hist_delta__apply(w, d[i]), 0);
	return w;
}

static void test_frames_rebuilt(void **state)
{
	pthread_t th[WORKERS];
	struct hist_delta *d[FRAMES - 1];
	__u64 full = 0, deltas = 0;
	long i;
	int k;

	(void)state;
	PROF_THREAD_NAME("main");
	pthread_barrier_init(&go, NULL, WORKERS + 1);
	pthread_barrier_init(&done, NULL, WORKERS + 1);
	for (i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)i), 0);
	one_step(0);
	one_step(1);
	{
		/* a call open across frames 2 to 5 */
		PROF_USDT(held);
		for (k = 2; k < 6; k++)
			one_step(k);
	}
	for (k = 6; k < FRAMES; k++)
		one_step(k);
	quit = 1;
	pthread_barrier_wait(&go);
	for (i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);

	for (k = 0; k < FRAMES - 1; k++) {
		d[k] = hist_delta__new(frames[k], frames[k + 1]);
		assert_non_null(d[k]);
		deltas += hist_delta__bytes(d[k]);
		full += hist_snap_bytes(frames[k]);
	}
	printf("%u threads, %u nodes in the newest: %d frames of %llu bytes in full, %llu as "
	       "deltas\n",
	       frames[FRAMES - 1]->nthreads, frames[FRAMES - 1]->threads[1].nnodes, FRAMES - 1,
	       (unsigned long long)full, (unsigned long long)deltas);
	/* a tenth of the nodes changes: a delta is far smaller than a frame */
	assert_true(deltas * 3 < full);

	for (k = 0; k < FRAMES - 1; k++) {
		struct prof_snapshot *w = rebuild(d, k), *a, *b;

		/* the frame as it was read */
		assert_true(hist_snap_same(w, frames[k]));
		assert_same_image(w, frames[k]);
		/* and the window against it, as against the full snapshot */
		a = hist_snap_clone(frames[FRAMES - 1]);
		b = hist_snap_clone(frames[FRAMES - 1]);
		assert_int_equal(prof_snapshot__diff(a, w), 0);
		assert_int_equal(prof_snapshot__diff(b, frames[k]), 0);
		assert_same_image(a, b);
		/* a frame that shares its counts, moved to its own time */
		assert_int_equal(prof_snapshot__advance(w, 1000), 0);
		assert_false(hist_snap_same(w, frames[k]));
		prof_snapshot__destroy(a);
		prof_snapshot__destroy(b);
		prof_snapshot__destroy(w);
	}
	for (k = 0; k < FRAMES - 1; k++)
		hist_delta__destroy(d[k]);
	for (k = 0; k < FRAMES; k++)
		prof_snapshot__destroy(frames[k]);
}

/*
 * An older snapshot with more than the newer: a thread the newer lost, a
 * table the newer holds fewer nodes of (a slab reused), other sites, a
 * bucket changed.  The delta is a difference of arrays: rebuilt all the
 * same.
 */
static void test_older_holds_more(void **state)
{
	struct prof_snapshot *old, *neu, *w;
	struct prof_snap_thread *t;
	struct hist_delta *d;
	__u32 i;

	(void)state;
	rec(2, -1);
	old = test_snapshot(0);
	assert_non_null(old);
	assert_true(old->nthreads >= 1);
	neu = hist_snap_clone(old);
	assert_non_null(neu);
	t = &neu->threads[0];
	assert_true(t->nnodes > 4);
	t->nnodes /= 2;
	t->nodes[1].calls += 7;
	/* a bucket of another node than the one whose calls changed */
	for (i = 2; i < t->nnodes; i++)
		if (t->nodes[i].hist_n) {
			neu->hist[t->nodes[i].hist_off]++;
			break;
		}
	assert_true(i < t->nnodes);
	/* the threads the newer lost */
	neu->nthreads = old->nthreads > 1 ? old->nthreads - 1 : old->nthreads;
	if (neu->nsites)
		neu->sites[0].line++;
	assert_false(hist_snap_same(old, neu));

	d = hist_delta__new(old, neu);
	assert_non_null(d);
	w = hist_snap_clone(neu);
	assert_non_null(w);
	assert_int_equal(hist_delta__apply(w, d), 0);
	assert_true(hist_snap_same(w, old));
	assert_same_image(w, old);
	/* the check itself sees a bucket */
	for (i = 1; i < w->threads[0].nnodes && !w->threads[0].nodes[i].hist_n; i++)
		;
	assert_true(i < w->threads[0].nnodes);
	w->hist[w->threads[0].nodes[i].hist_off]++;
	assert_false(hist_snap_same(w, old));

	hist_delta__destroy(d);
	/* the threads neu lost still hold their tables: free them as old's */
	neu->nthreads = old->nthreads;
	prof_snapshot__destroy(w);
	prof_snapshot__destroy(neu);
	prof_snapshot__destroy(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_rebuilt),
		cmocka_unit_test(test_older_holds_more),
	};

	setenv("PROF_QUIET", "1", 1);
	setenv("PROF_NO_DAEMON", "1", 1);
	setenv("PROF_MAX_NODES", "2048", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
