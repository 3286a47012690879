// SPDX-License-Identifier: MIT
/*
 * test_exitprobe.c - a zone's exit probe fires when its name's exit
 * semaphore was raised at the zone's enter, for every kind of site: one
 * whose way hits, one whose enter misses (the slow enter), a public
 * zone's site, a BEGIN/END pair; and not when it was down at the enter
 * (the common exit reads no semaphore: the enter tells it, prof.h's
 * __PROF_EXIT_WANTED).  The test raises the semaphores itself, as the
 * kernel does when a tracer attaches, and links with
 * --wrap=__prof_exit_probe to count the probes that fire.
 */
#include "fastpath.h"
#include "prof.h"

#define N 100u

static unsigned long fired;
static const char *fired_name;

void __real___prof_exit_probe(const struct prof_site *site, uint64_t ticks);
void __wrap___prof_exit_probe(const struct prof_site *site, uint64_t ticks);

void __wrap___prof_exit_probe(const struct prof_site *site, uint64_t ticks)
{
	fired++;
	fired_name = site->name;
	__real___prof_exit_probe(site, ticks);
}

/* the names' exit semaphores (the sites below define them) */
extern volatile unsigned short ep_zone_sem __asm__("__prof_sem.ep_zone__exit")
	__attribute__((visibility("hidden")));
extern volatile unsigned short ep_first_sem __asm__("__prof_sem.ep_first__exit")
	__attribute__((visibility("hidden")));
extern volatile unsigned short ep_begin_sem __asm__("__prof_sem.ep_begin__exit")
	__attribute__((visibility("hidden")));

PROF_DEFINE(ep_public);

static volatile unsigned long sink;

static __attribute__((noinline)) void zone(void)
{
	PROF_USDT(ep_zone);
	sink++;
}

/* the semaphore raised inside the zone: after its enter */
static __attribute__((noinline)) void zone_raising(void)
{
	PROF_USDT(ep_zone);
	ep_zone_sem = 1;
}

static __attribute__((noinline)) void first(void)
{
	PROF_USDT(ep_first);
	sink++;
}

static __attribute__((noinline)) void public_site(void)
{
	PROF_SCOPE(ep_public);
	sink++;
}

static __attribute__((noinline)) void begin_end(void)
{
	PROF_BEGIN(ep_begin);
	sink++;
	PROF_END();
}

static void zones(void (*fn)(void), unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		fn();
}

static int setup(void **state)
{
	(void)state;
	/* warm: the site's way holds its node from here on */
	zones(zone, N);
	return 0;
}

/* down: no probe, however many zones */
static void test_down(void **state)
{
	(void)state;
	fired = 0;
	zones(zone, N);
	zones(public_site, N);
	zones(begin_end, N);
	assert_int_equal(fired, 0);
}

/* ep_zone's calls (each in its histogram) and the thread's unbalanced */
static void zone_counts(__u64 *calls, __u64 *unbalanced)
{
	struct prof_snapshot *s = test_snapshot(0);
	const struct prof_snap_thread *t;
	__u32 n;

	assert_non_null(s);
	t = test_thread(s, test_gettid());
	assert_non_null(t);
	n = test_child(s, t, PROF_NODE_ROOT, "ep_zone");
	assert_int_not_equal(n, PROF_SNAP_NONE);
	assert_int_equal(test_hist_sum(s, &t->nodes[n]), t->nodes[n].calls);
	*calls = t->nodes[n].calls;
	*unbalanced = t->unbalanced;
	prof_snapshot__destroy(s);
}

/* raised before the enter: every exit fires it, a warm site's too, and
 * counts as any call (the flag is no node, no unbalanced exit); down
 * again, none */
static void test_raised_hit(void **state)
{
	__u64 calls0, unb0, calls1, unb1;

	(void)state;
	zone_counts(&calls0, &unb0);
	fired = 0;
	ep_zone_sem = 1;
	zones(zone, N);
	ep_zone_sem = 0;
	assert_int_equal(fired, N);
	assert_string_equal(fired_name, "ep_zone");
	zones(zone, N);
	assert_int_equal(fired, N);
	zone_counts(&calls1, &unb1);
	assert_int_equal(calls1 - calls0, 2 * N);
	assert_int_equal(unb1, unb0);
}

/* raised after the enter: that zone's exit does not fire, the next does */
static void test_raised_inside(void **state)
{
	(void)state;
	fired = 0;
	zone_raising();
	assert_int_equal(fired, 0);
	zone();
	ep_zone_sem = 0;
	assert_int_equal(fired, 1);
}

/* a site's first enter takes the slow enter: it fires too */
static void test_raised_miss(void **state)
{
	(void)state;
	fired = 0;
	ep_first_sem = 1;
	first();
	assert_int_equal(fired, 1);
	assert_string_equal(fired_name, "ep_first");
	first();
	ep_first_sem = 0;
	assert_int_equal(fired, 2);
}

/* N zones of FN with the semaphore SEM raised: each fires NAME's probe */
static void fires_each(volatile unsigned short *sem, void (*fn)(void), const char *name)
{
	fired = 0;
	*sem = 1;
	zones(fn, N);
	*sem = 0;
	assert_int_equal(fired, N);
	assert_string_equal(fired_name, name);
}

/* a public zone's exit semaphore is its PROF_DEFINE's */
static void test_raised_public(void **state)
{
	(void)state;
	fires_each(&__prof_zsem_ep_public, public_site, "ep_public");
}

static void test_raised_begin(void **state)
{
	(void)state;
	fires_each(&ep_begin_sem, begin_end, "ep_begin");
}

static void env(void)
{
	setenv("PROF_NO_DAEMON", "1", 1);
}

TEST_MAIN_ENV(setup, NULL, env, cmocka_unit_test(test_down), cmocka_unit_test(test_raised_hit),
	      cmocka_unit_test(test_raised_inside), cmocka_unit_test(test_raised_miss),
	      cmocka_unit_test(test_raised_public), cmocka_unit_test(test_raised_begin))
