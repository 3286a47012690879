// SPDX-License-Identifier: MIT
/*
 * test_diff_locks.c - unit: `profctl diff`'s named locks.  Two saved
 * profiles of this process, one lock taken 3 times before the first and 5
 * more before the second, another taken only after the first: the text
 * has a locks table with NEW's figures and their change, the JSON a
 * "locks" array whose every figure is what `report --format json` of each
 * file says (the keys figures.h gives), null for the side without it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>
#include "testutil.h"
#include "profctl_child.h"
#include "prof.h"

static char dir[64];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void take(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		PROF_USDT(dl_zone);

		assert_int_equal(PROF_MUTEX_LOCK(dl_lock, &m), 0);
		test_spin_ns(20000);
		assert_int_equal(PROF_MUTEX_UNLOCK(dl_lock, &m), 0);
	}
}

static void take_new(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		assert_int_equal(PROF_MUTEX_LOCK(dl_new, &m), 0);
		assert_int_equal(PROF_MUTEX_UNLOCK(dl_new, &m), 0);
	}
}

static json_t *load(const char *path)
{
	json_error_t e;
	json_t *d = json_load_file(path, 0, &e);

	if (!d)
		fail_msg("%s: not JSON: %s", path, e.text);
	return d;
}

/* the lock called name in array v, or NULL */
static json_t *lock_named(json_t *v, const char *name)
{
	size_t i;
	json_t *l;

	json_array_foreach(v, i, l)
		if (!strcmp(json_string_value(json_object_get(l, "name")), name))
			return l;
	return NULL;
}

/* side (an object, or null) of a diff's lock has every figure the report
 * of file gives lock name, and no other */
static void same_as_report(json_t *side, const char *file, const char *name)
{
	char out[128];
	json_t *r, *l, *v;
	const char *key;

	snprintf(out, sizeof(out), "%s/report.json", dir);
	assert_int_equal(profctl((const char *[]){ "report", "--input", file, "--format", "json",
						   "-o", out, NULL }),
			 0);
	r = load(out);
	l = lock_named(json_object_get(json_array_get(json_object_get(r, "processes"), 0), "locks"),
		       name);
	if (!l) {
		assert_true(json_is_null(side));
		json_decref(r);
		return;
	}
	assert_true(json_is_object(side));
	json_object_foreach(l, key, v) {
		if (!strcmp(key, "name"))
			continue;
		if (!json_equal(v, json_object_get(side, key)))
			fail_msg("%s of %s: the report says %lld, the diff %lld", key, name,
				 (long long)json_integer_value(v),
				 (long long)json_integer_value(json_object_get(side, key)));
	}
	/* the report's keys, and "name" */
	assert_int_equal(json_object_size(side) + 1, json_object_size(l));
	json_decref(r);
}

static void test_diff_locks(void **state)
{
	char pid[16], base[128], cur[128], out[128], line[512];
	bool table = false, old = false, fresh = false;
	json_t *d, *locks;
	FILE *f;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(base, sizeof(base), "%s/base.prof", dir);
	snprintf(cur, sizeof(cur), "%s/new.prof", dir);
	snprintf(out, sizeof(out), "%s/diff.out", dir);
	take(3);
	assert_int_equal(profctl((const char *[]){ "save", "--pid", pid, "--no-daemon",
						   "--since-start", "-o", base, NULL }),
			 0);
	take(5);
	take_new(2);
	assert_int_equal(profctl((const char *[]){ "save", "--pid", pid, "--no-daemon",
						   "--since-start", "-o", cur, NULL }),
			 0);

	assert_int_equal(profctl((const char *[]){ "diff", base, cur, "-o", out, NULL }), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char v[32], dv[32];

		if (!strcmp(line, "locks (2)\n"))
			table = true;
		if (!table || sscanf(line, "%31s %31s", v, dv) != 2)
			continue;
		/* acquisitions first, then their change */
		if (strstr(line, " dl_lock\n"))
			old = !strcmp(v, "8") && !strcmp(dv, "+5");
		if (strstr(line, " dl_new\n"))
			fresh = !strcmp(v, "2") && !strcmp(dv, "+2");
	}
	fclose(f);
	assert_true(table);
	assert_true(old);
	assert_true(fresh);

	assert_int_equal(profctl((const char *[]){ "diff", "--format", "json", base, cur, "-o", out,
						   NULL }),
			 0);
	d = load(out);
	locks = json_object_get(d, "locks");
	assert_int_equal(json_array_size(locks), 2);
	same_as_report(json_object_get(lock_named(locks, "dl_lock"), "base"), base, "dl_lock");
	same_as_report(json_object_get(lock_named(locks, "dl_lock"), "new"), cur, "dl_lock");
	same_as_report(json_object_get(lock_named(locks, "dl_new"), "base"), base, "dl_new");
	same_as_report(json_object_get(lock_named(locks, "dl_new"), "new"), cur, "dl_new");
	json_decref(d);
}

static int setup(void **state)
{
	(void)state;
	return test_no_daemon_dir("test_diff_locks", dir);
}

static int teardown(void **state)
{
	(void)state;
	return test_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_locks),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, setup, teardown);
}
