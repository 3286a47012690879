// SPDX-License-Identifier: MIT
/*
 * test_dlopen.c - a library with zones, dlopen()ed and dlclose()d while
 * the program profiles: its zones are counted under their names, a reader
 * reads them after the library is gone, a PROF_BEGIN of the library ENDed
 * by another thread after dlclose is counted (the END read the unloaded
 * site and crashed), and a second library loaded where the first was has
 * its own names.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

#include "testutil.h"
#include "prof.h"

struct plug {
	void *h;
	void (*zones)(int n);
	void (*begin)(void);
	void (*trace_open)(int on);
};

static void plug_open(struct plug *p, const char *which)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/dl_plugin_%s.so", PLUGIN_DIR, which);
	p->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->h)
		fail_msg("dlopen %s: %s", path, dlerror());
	*(void **)&p->zones = dlsym(p->h, "plug_zones");
	*(void **)&p->begin = dlsym(p->h, "plug_begin");
	*(void **)&p->trace_open = dlsym(p->h, "plug_trace_open");
	assert_non_null(p->trace_open);
	assert_non_null(p->zones);
	assert_non_null(p->begin);
}

/* unloaded for good: dlopen(RTLD_NOLOAD) finds it no more */
static void plug_close(struct plug *p, const char *which)
{
	char path[512];

	assert_int_equal(dlclose(p->h), 0);
	snprintf(path, sizeof(path), "%s/dl_plugin_%s.so", PLUGIN_DIR, which);
	assert_null(dlopen(path, RTLD_NOW | RTLD_NOLOAD));
}

static __u64 calls_of(const char *zone)
{
	struct prof_snapshot *s = test_snapshot(0);
	const struct prof_snap_thread *t;
	const struct prof_snap_node *n;
	__u64 calls = 0;
	__u32 i;

	assert_non_null(s);
	for (i = 0; i < s->nthreads; i++) {
		t = &s->threads[i];
		if ((n = test_node(s, t, zone)))
			calls += n->calls;
	}
	prof_snapshot__destroy(s);
	return calls;
}

/* a thread opens the library's zone, waits, then closes it */
static int stage;
static struct plug plug;

static void wait_stage(int want)
{
	while (__atomic_load_n(&stage, __ATOMIC_ACQUIRE) < want)
		sched_yield();
}

static void *inside(void *arg)
{
	(void)arg;
	plug.begin();
	__atomic_store_n(&stage, 1, __ATOMIC_RELEASE);
	wait_stage(2);
	PROF_END();
	return NULL;
}

static void test_dlclose_inside(void **state)
{
	void (*first)(int n);
	pthread_t th;

	(void)state;
	PROF_USDT(dl_host);
	plug_open(&plug, "a");
	plug.zones(5);
	assert_int_equal(calls_of("plug_zone_a"), 5);
	/* its exit wanted by a tracer: the END would go to the library's site
	 * and exit stub, both gone with it */
	plug.trace_open(1);
	assert_int_equal(pthread_create(&th, NULL, inside, NULL), 0);
	wait_stage(1);
	first = plug.zones;
	plug_close(&plug, "a");
	/* the reader copies names from the segment: the library is not read */
	assert_int_equal(calls_of("plug_zone_a"), 5);
	__atomic_store_n(&stage, 2, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(calls_of("plug_open_a"), 1);

	/* another library, likely where the first was: its own names */
	plug_open(&plug, "b");
	print_message("the second library %s where the first was\n",
		      plug.zones == first ? "is" : "is not");
	plug.zones(3);
	plug.begin();
	PROF_END();
	assert_int_equal(calls_of("plug_zone_b"), 3);
	assert_int_equal(calls_of("plug_open_b"), 1);
	assert_int_equal(calls_of("plug_zone_a"), 5);
	plug_close(&plug, "b");
	assert_int_equal(calls_of("plug_zone_b"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dlclose_inside),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
