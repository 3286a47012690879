// SPDX-License-Identifier: MIT
/*
 * test_profctl_opts.c - the verbs that read their options by hand once
 * (serve, zones) read them through their tables as every verb does: serve's
 * options land in its settings (a bound, a time as --last reads it, the
 * address), its defaults stay where none is given, and a bad value, another
 * verb's option or a missing operand is a usage error (exit 2, one line).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "profctl_fixture.h"
#include "prof.h"
#include "profd_private.h"
#include "profctl_run.h"

/* pc_serve_parse of args (NULL-terminated, "serve" first); its result */
static int serve_parse(const char **args, struct pc_serve_opts *so, const char **addr)
{
	char *argv[16];
	int argc = 0;

	while (args[argc]) {
		assert_true(argc < 15);
		argv[argc] = (char *)(uintptr_t)args[argc];
		argc++;
	}
	argv[argc] = NULL;
	return pc_serve_parse(argc, argv, so, addr);
}

static void test_serve_options(void **state)
{
	const char *all[] = {
		"serve",       "--threads", "--max-zones=3", "--max-threads", "4",
		"--timeout",   "2m",	    "--all-users",   "--listen",      "[::1]:0",
		"--no-daemon", NULL
	};
	const char *none[] = { "serve", NULL };
	const char *bare[] = { "serve", "--timeout", "30", NULL };
	struct pc_serve_opts so;
	const char *addr;

	(void)state;
	assert_int_equal(serve_parse(all, &so, &addr), 0);
	assert_true(so.threads);
	assert_int_equal(so.max_zones, 3);
	assert_int_equal(so.max_threads, 4);
	assert_int_equal(so.timeout_s, 120);
	assert_true(so.all_users);
	assert_true(so.no_daemon);
	assert_string_equal(addr, "[::1]:0");
	/* what serve --help documents when nothing is given */
	unsetenv("PROFCTL_NO_DAEMON");
	assert_int_equal(serve_parse(none, &so, &addr), 0);
	setenv("PROFCTL_NO_DAEMON", "1", 1);
	assert_false(so.threads);
	assert_false(so.all_users);
	assert_false(so.no_daemon);
	assert_int_equal(so.max_zones, 200);
	assert_int_equal(so.max_threads, 32);
	assert_int_equal(so.timeout_s, 10);
	assert_string_equal(addr, "127.0.0.1:9464");
	/* bare seconds, as --timeout S took them before */
	assert_int_equal(serve_parse(bare, &so, &addr), 0);
	assert_int_equal(so.timeout_s, 30);
}

static void test_refused(void **state)
{
	const char *a1[] = { "serve", "--timeout", "1500ms", NULL };
	const char *a2[] = { "serve", "--max-zones", "0", NULL };
	const char *a3[] = { "serve", "--max-threads", "100001", NULL };
	const char *a4[] = { "serve", "--listen", NULL };
	const char *a5[] = { "report", "--timeout", "3", NULL };
	const char *a6[] = { "serve", "--merge-threads", NULL };
	const char *a7[] = { "zones", NULL };
	const char *a8[] = { "zones", "a", "b", NULL };
	const char *a9[] = { "zones", "--pid", "1", "a", NULL };
	const char *a10[] = { "serve", "--listen", "9464", NULL };

	(void)state;
	usage_error(a1, "profctl: bad --timeout '1500ms' (whole seconds, 1s to 100000s: 10, "
			"30s, 2m)\n");
	usage_error(a2, "profctl: bad --max-zones '0' (1 to 100000)\n");
	usage_error(a3, "profctl: bad --max-threads '100001' (1 to 100000)\n");
	usage_error(a4, "profctl: serve: --listen needs a value\n");
	usage_error(a5, "profctl: report: option --timeout not accepted\n");
	usage_error(a6, "profctl: serve: option --merge-threads not accepted\n");
	usage_error(a7, "profctl: zones: one BINARY to read; see --help\n");
	usage_error(a8, "profctl: zones: one BINARY to read; see --help\n");
	usage_error(a9, "profctl: zones: option --pid not accepted\n");
	usage_error(a10, "profctl: bad --listen '9464' (HOST:PORT, :PORT, [::1]:PORT)\n");
}

TEST_MAIN(setup, teardown, cmocka_unit_test(test_serve_options), cmocka_unit_test(test_refused))
