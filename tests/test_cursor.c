// SPDX-License-Identifier: MIT
/*
 * test_cursor.c - profd's sampling cursor (daemon/profd/profd_cursor.c):
 * what it samples of a live segment equals a full read, as threads and
 * zones are added, and a segment that lies is refused.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>

#include "prof.h"
#include "testutil.h"
#include "nest_work.h"

/* sum of the top-level nodes' totals, from a snapshot */
static __u64 top_ticks(const struct prof_snapshot *s)
{
	__u64 sum = 0;
	__u32 i, j;

	for (i = 0; i < s->nthreads; i++)
		for (j = 2; j < s->threads[i].nnodes; j++)
			if (s->threads[i].nodes[j].parent == 0)
				sum += s->threads[i].nodes[j].ticks;
	return sum;
}

static void *more_work(void *arg)
{
	for (int i = 0; i < 100; i++) {
		PROF_USDT(cur_later);
		nest_rec(1);
	}
	return arg;
}

/*
 * The sampler's cursor: busy time equals the top-level totals of a full
 * snapshot, first and again after new threads and new top-level zones
 * appeared; a node table that shrinks (a lie) is refused.
 */
static void test_cursor(void **state)
{
	struct prof_seg_cursor *c = prof_seg_cursor__new();
	struct prof_seg_busy b;
	struct prof_snapshot *s;
	pthread_t th;
	size_t len = 0;
	void *mem, *copy;

	(void)state;
	assert_non_null(c);
	nest_work(NULL);
	mem = test_own_segment(&len);
	assert_int_equal(prof_seg_cursor__sample(c, mem, len, &b), 0);
	s = test_snapshot(0);
	assert_non_null(s);
	assert_int_equal(b.busy_ticks, top_ticks(s));
	assert_true(b.busy_ticks > 0);
	assert_int_equal(b.pid, getpid());
	assert_int_equal(b.nthreads, s->nthreads);
	prof_snapshot__destroy(s);

	/* a new thread, a new top-level zone here: only those are scanned */
	assert_int_equal(pthread_create(&th, NULL, more_work, NULL), 0);
	pthread_join(th, NULL);
	more_work(NULL);
	assert_int_equal(prof_seg_cursor__sample(c, mem, len, &b), 0);
	s = test_snapshot(0);
	assert_int_equal(b.busy_ticks, top_ticks(s));
	assert_int_equal(b.nthreads, s->nthreads);
	assert_true(b.alive >= 1);

	/* a copy whose first slab claims fewer nodes than already seen */
	copy = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	assert_non_null(copy);
	memcpy(copy, mem, len);
	{
		const struct prof_seg_hdr *h = copy;
		struct prof_slab_hdr *sh = (void *)((char *)copy + h->slabs_off);

		sh->nnodes = 2;
	}
	assert_int_equal(prof_seg_cursor__sample(c, copy, len, &b), -EINVAL);
	free(copy);
	prof_snapshot__destroy(s);
	prof_seg_cursor__destroy(c);
	munmap(mem, len);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_cursor))
