// SPDX-License-Identifier: MIT
/*
 * test_segflat.c - prof_seg_flat (top's streaming pass over a live
 * mapping) gives the same flat rows as the snapshot's prof_snap_flat:
 * nested, recursive and shared zones over two threads, all and per thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "prof.h"
#include "testutil.h"

static int rec(int n)
{
	PROF_USDT(seg_rec);
	return n ? rec(n - 1) + 1 : 0;
}

static void *work(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		PROF_USDT(seg_outer);
		{
			PROF_USDT(seg_inner);
			rec(i % 4);
		}
		rec(2);
	}
	return arg;
}

/* map this process's segment */
static void *own_segment(size_t *len)
{
	struct prof_seg_ent *ents;
	struct stat st;
	void *mem = NULL;
	size_t n, i;

	assert_int_equal(prof_seg_list(geteuid(), &ents, &n), 0);
	for (i = 0; i < n && !mem; i++) {
		int fd;

		if (ents[i].pid != (__u32)getpid())
			continue;
		fd = prof_seg_open(&ents[i]);
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &st), 0);
		mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		assert_true(mem != MAP_FAILED);
		*len = (size_t)st.st_size;
		close(fd);
	}
	free(ents);
	assert_non_null(mem);
	return mem;
}

static void compare(const struct prof_snapshot *s, const void *mem, size_t len, __u32 tid)
{
	struct prof_flat_row *a, *b;
	struct prof_snapshot *light;
	size_t na, nb, i;

	assert_int_equal(prof_snap_flat(s, tid, PROF_SORT_TOTAL, &a, &na), 0);
	assert_int_equal(prof_seg_flat(mem, len, tid, PROF_SORT_TOTAL, &light, &b, &nb), 0);
	assert_true(na >= 3);
	assert_int_equal(na, nb);
	assert_int_equal(light->nthreads, s->nthreads);
	assert_int_equal(light->nsites, s->nsites);
	for (i = 0; i < na; i++) {
		assert_int_equal(a[i].site, b[i].site);
		assert_int_equal(a[i].calls, b[i].calls);
		assert_int_equal(a[i].ticks, b[i].ticks);
		assert_int_equal(a[i].self, b[i].self);
		assert_int_equal(a[i].max, b[i].max);
	}
	free(a);
	free(b);
	prof_snapshot__destroy(light);
}

static void test_segflat_equals_snapshot(void **state)
{
	struct prof_snapshot *s;
	pthread_t th;
	size_t len = 0;
	void *mem;
	__u32 i;

	(void)state;
	work(NULL);
	pthread_create(&th, NULL, work, NULL);
	pthread_join(th, NULL);
	mem = own_segment(&len);
	s = test_snapshot(0);
	assert_non_null(s);
	assert_true(s->nthreads >= 2);
	compare(s, mem, len, 0);
	for (i = 0; i < s->nthreads; i++)
		compare(s, mem, len, s->threads[i].tid);
	prof_snapshot__destroy(s);
	munmap(mem, len);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_segflat_equals_snapshot),
		cmocka_unit_test(test_segflat_rejects_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
