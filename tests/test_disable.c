// SPDX-License-Identifier: MIT
/*
 * test_disable.c - -DPROF_DISABLE compiles every macro to nothing: the
 * object built so (disable_obj.o, every macro used) has no symbol that
 * names prof and no stapsdt note or .probes section, and still runs.  The
 * same source built normally (enable_obj.o) is the control: the same checks
 * find prof symbols and probes there.
 */
#define _GNU_SOURCE
#include "fastpath.h"

int disabled_work(int n);

/* lines of `cmd` containing needle (case-insensitive); -1 if cmd failed */
static int count_lines(const char *cmd, const char *needle, char *first, size_t len)
{
	char line[512];
	FILE *p = popen(cmd, "r");
	int n = 0;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (strcasestr(line, needle)) {
			if (!n && first)
				snprintf(first, len, "%s", line);
			n++;
		}
	return pclose(p) == 0 ? n : -1;
}

static const char *obj(const char *name, char *buf, size_t len)
{
	struct stat st;

	assert_non_null(test_sibling(name, buf, len));
	if (stat(buf, &st))
		fail_msg("missing %s: build it with make tests-build", buf);
	return buf;
}

static void test_disabled_object_is_clean(void **state)
{
	char path[PATH_MAX], cmd[PATH_MAX + 64], first[512] = "";
	int n;

	(void)state;
	obj("disable_obj.o", path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	n = count_lines(cmd, "prof", first, sizeof(first));
	if (n != 0)
		fail_msg("nm: %d prof symbols in %s, first: %s", n, path, first);
	/* and it does define the function, so nm did read it */
	assert_int_equal(count_lines(cmd, "disabled_work", NULL, 0), 1);
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	assert_int_equal(count_lines(cmd, "stapsdt", NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", path);
	assert_int_equal(count_lines(cmd, ".probes", NULL, 0), 0);
	assert_int_equal(count_lines(cmd, "prof", NULL, 0), 0);
	/* it runs: 2 * (0 + ... + 9) + 10 */
	assert_int_equal(disabled_work(10), 100);
}

static void test_enabled_control(void **state)
{
	char path[PATH_MAX], cmd[PATH_MAX + 64];

	(void)state;
	obj("enable_obj.o", path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	assert_true(count_lines(cmd, "__prof_enter_miss", NULL, 0) > 0);
	/* the descriptor and exit stub prof.h defines in asm */
	assert_true(count_lines(cmd, "__prof_s", NULL, 0) > 0);
	assert_true(count_lines(cmd, "__prof_x", NULL, 0) > 0);
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	assert_true(count_lines(cmd, "stapsdt", NULL, 0) > 0);
	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", path);
	assert_true(count_lines(cmd, ".probes", NULL, 0) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disabled_object_is_clean),
		cmocka_unit_test(test_enabled_control),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
