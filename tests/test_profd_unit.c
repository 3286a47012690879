// SPDX-License-Identifier: MIT
/*
 * test_profd_unit.c - systemd/profd.service parses (systemd-analyze
 * verify), with ExecStart pointed at the profd just built.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include "testutil.h"

static void test_unit_verifies(void **state)
{
	char exe[4096], cmd[8192], dir[] = "/tmp/profd-unit.XXXXXX";
	ssize_t n;
	int rc;

	(void)state;
	if (system("command -v systemd-analyze >/dev/null 2>&1")) {
		printf("skip: no systemd-analyze\n");
		skip();
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
	assert_true(n > 0);
	exe[n] = 0;
	strcpy(strrchr(exe, '/'), "/../profd");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "sed 's|/usr/local/sbin/profd|%s|' systemd/profd.service > %s/profd.service && "
		 "systemd-analyze verify --man=no %s/profd.service",
		 exe, dir, dir);
	rc = system(cmd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("could not remove %s\n", dir);
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_verifies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
