// SPDX-License-Identifier: MIT
/*
 * test_annot_mutex.c - unit: the counted mutex's common paths (usdt/annot.c,
 * the sites' caches warm): one name held twice nests, a site taken from two
 * zones counts in each zone's entry, a thread's first lock outside any zone
 * binds it, a release after the thread gave its slab back writes nothing
 * there, and on the monotonic clock the holds are on that clock (the TSC's
 * fast path is never taken).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"
#include "fastpath.h"
#include "annot_util.h"
#include "prof.h"

#define ROUNDS 3

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;

/* the figures of lock name over t's zones: acquisitions, unheld, holds
 * in the span ring */
struct lock_count {
	__u64 acq, unheld, holds, contended;
	__u32 entries;
};

static struct lock_count lock_count(const struct prof_annot_thread *t, const char *name)
{
	struct lock_count c = { 0 };
	__u64 k;
	__u32 i;

	for (i = 0; i < t->nlocks; i++) {
		if (strcmp(t->locks[i].name, name))
			continue;
		c.entries++;
		c.acq += t->locks[i].acquisitions;
		c.unheld += t->locks[i].unheld;
		c.contended += t->locks[i].contended;
	}
	for (k = 0; k < t->nspans; k++)
		if ((t->spans[k].flags & PROF_SPAN_HOLD) && t->spans[k].lock < t->nlocks &&
		    !strcmp(t->locks[t->spans[k].lock].name, name))
			c.holds++;
	return c;
}

/* fn run on a thread of its own to its end; its tid */
static __u32 run_thread(void *(*fn)(void *))
{
	pthread_t th;
	void *ret;

	assert_int_equal(pthread_create(&th, NULL, fn, NULL), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	return (__u32)(uintptr_t)ret;
}

/* lock name's figures on the thread that ran fn */
static struct lock_count thread_count(void *(*fn)(void *), const char *name)
{
	struct prof_annot *a;
	struct lock_count c;
	__u32 tid = run_thread(fn);

	a = own_annot();
	c = lock_count(annot_of(a, tid), name);
	prof_annot__destroy(a);
	return c;
}

static void *nested(void *arg)
{
	int i;

	(void)arg;
	PROF_USDT(am_nested);
	/* every round after the first on the sites' cached ways */
	for (i = 0; i < ROUNDS; i++) {
		assert_int_equal(PROF_MUTEX_LOCK(am_two, &m1), 0);
		assert_int_equal(PROF_MUTEX_LOCK(am_two, &m2), 0);
		assert_int_equal(PROF_MUTEX_UNLOCK(am_two, &m2), 0);
		assert_int_equal(PROF_MUTEX_UNLOCK(am_two, &m1), 0);
	}
	return (void *)(uintptr_t)gettid();
}

/* one name held twice: the inner acquire and release nest in the outer
 * hold, on the cached ways as on the first */
static void test_nested_warm(void **state)
{
	struct lock_count c = thread_count(nested, "am_two");

	(void)state;
	assert_int_equal(c.acq, 2 * ROUNDS);
	assert_int_equal(c.unheld, 0);
	assert_int_equal(c.holds, ROUNDS);
	assert_int_equal(c.contended, 0);
}

static __attribute__((noinline)) void take_once(void)
{
	assert_int_equal(PROF_MUTEX_LOCK(am_zoned, &m1), 0);
	assert_int_equal(PROF_MUTEX_UNLOCK(am_zoned, &m1), 0);
}

static __attribute__((noinline)) void in_first(void)
{
	PROF_USDT(am_first);
	take_once();
}

static __attribute__((noinline)) void in_second(void)
{
	PROF_USDT(am_second);
	take_once();
}

static void *zoned(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ROUNDS; i++)
		in_first();
	for (i = 0; i < ROUNDS - 1; i++)
		in_second();
	return (void *)(uintptr_t)gettid();
}

/* one site from two zones: each acquisition in its own zone's entry */
static void test_site_two_zones(void **state)
{
	const struct prof_annot_thread *t;
	struct prof_annot *a;
	__u32 i, seen = 0, tid;

	(void)state;
	tid = run_thread(zoned);
	a = own_annot();
	t = annot_of(a, tid);
	assert_int_equal(lock_count(t, "am_zoned").entries, 2);
	/* the entries in the order the thread made them: am_first's first */
	for (i = 0; i < t->nlocks; i++)
		if (!strcmp(t->locks[i].name, "am_zoned"))
			assert_int_equal(t->locks[i].acquisitions, seen++ ? ROUNDS - 1 : ROUNDS);
	assert_int_equal(lock_count(t, "am_zoned").holds, 2 * ROUNDS - 1);
	prof_annot__destroy(a);
}

static void *at_root(void *arg)
{
	int i;

	(void)arg;
	{
		PROF_USDT(am_before);
	}
	/* the thread's first annotations, outside any zone (its root node) */
	for (i = 0; i < ROUNDS; i++) {
		assert_int_equal(PROF_MUTEX_LOCK(am_root, &m1), 0);
		assert_int_equal(PROF_MUTEX_UNLOCK(am_root, &m1), 0);
	}
	return (void *)(uintptr_t)gettid();
}

/* a thread with a slab but no annotations yet: its first lock at the
 * root binds it (no unused cache matches the unbound thread) */
static void test_first_at_root(void **state)
{
	struct lock_count c = thread_count(at_root, "am_root");

	(void)state;
	assert_int_equal(c.acq, ROUNDS);
	assert_int_equal(c.holds, ROUNDS);
}

static pthread_key_t late_key;

static __attribute__((noinline)) void late_lock(void)
{
	assert_int_equal(PROF_MUTEX_LOCK(am_late, &m2), 0);
}

static __attribute__((noinline)) void late_unlock(void)
{
	assert_int_equal(PROF_MUTEX_UNLOCK(am_late, &m2), 0);
}

static void late_release(void *arg)
{
	(void)arg;
	late_unlock();
}

static void *exiting(void *arg)
{
	(void)arg;
	/* the sites cached; then held at the thread's exit, released by a
	 * key's destructor after the runtime's gave the slab back */
	late_lock();
	late_unlock();
	late_lock();
	pthread_setspecific(late_key, &late_key);
	return (void *)(uintptr_t)gettid();
}

static void test_release_after_exit(void **state)
{
	struct lock_count c;

	(void)state;
	/* made after the runtime's own key (the runtime is started) */
	late_lock();
	late_unlock();
	assert_int_equal(pthread_key_create(&late_key, late_release), 0);
	c = thread_count(exiting, "am_late");
	/* the mutex was released all the same */
	assert_int_equal(pthread_mutex_trylock(&m2), 0);
	assert_int_equal(pthread_mutex_unlock(&m2), 0);
	assert_int_equal(c.acq, 2);
	assert_int_equal(c.holds, 1);
	pthread_key_delete(late_key);
}

/* the child of test_mono_clock: its holds' starts between two readings of
 * CLOCK_MONOTONIC; its exit status says what was wrong */
static int mono_child(void)
{
	const struct prof_annot_thread *t;
	struct prof_annot *a;
	__u64 before, after, k, holds = 0;
	int i;

	before = test_mono_ns();
	for (i = 0; i < ROUNDS; i++) {
		PROF_USDT(am_mono);

		if (PROF_MUTEX_LOCK(am_mlock, &m1) || PROF_MUTEX_UNLOCK(am_mlock, &m1))
			return 2;
	}
	after = test_mono_ns();
	a = own_annot();
	if (a->tick_hz != 1000000000ull)
		return 3;
	t = annot_of(a, (__u32)gettid());
	for (k = 0; k < t->nspans; k++) {
		if (!(t->spans[k].flags & PROF_SPAN_HOLD))
			continue;
		holds++;
		if (t->spans[k].start < before || t->spans[k].start + t->spans[k].dur > after) {
			fprintf(stderr, "hold [%llu +%llu] outside [%llu, %llu]\n",
				(unsigned long long)t->spans[k].start,
				(unsigned long long)t->spans[k].dur, (unsigned long long)before,
				(unsigned long long)after);
			return 4;
		}
	}
	prof_annot__destroy(a);
	return holds == ROUNDS ? 0 : 5;
}

/* PROF_CLOCK=mono, chosen at a process's start: a child of its own */
static void test_mono_clock(void **state)
{
	static const char *const env[] = { "PROF_CLOCK=mono", "PROF_NO_DAEMON=1", NULL };

	(void)state;
	assert_true(test_exited_ok(test_reexec("--mono-child", env, 60, NULL)));
}

static const struct test_child_mode children[] = { { "--mono-child", mono_child }, { NULL, NULL } };

static void env(void)
{
	setenv("PROF_NO_DAEMON", "1", 1);
}

TEST_MAIN_CHILDREN(NULL, NULL, children, env, cmocka_unit_test(test_nested_warm),
		   cmocka_unit_test(test_site_two_zones), cmocka_unit_test(test_first_at_root),
		   cmocka_unit_test(test_release_after_exit), cmocka_unit_test(test_mono_clock))
