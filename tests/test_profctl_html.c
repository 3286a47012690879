// SPDX-License-Identifier: MIT
/*
 * test_profctl_html.c - the html report in headless Chromium
 * (tests/profctl_html.py drives it over the DevTools pipe): it loads
 * without console errors or network fetches, shows the fixture's zones,
 * a click expands a node, hover highlights every instance of a zone, the
 * graph's widths follow the weight chosen (wall, on-CPU, self) as the
 * data says, every mark has a legend entry, the page uses the window's
 * width at two sizes, the merged view sums the threads, and a screenshot
 * is taken (kept as .output/tests/profctl_report.png).
 */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "testutil.h"
#include "profctl.h"
#include "profctl_fixture.h"

static void test_html_chromium(void **state)
{
	char dir[] = "/tmp/test_profctl_html.XXXXXX", img[96], html[96], cmd[512];
	const char *shot = ".output/tests/profctl_report.png";
	void *buf = NULL;
	size_t len = 0;
	int rc;
	char *argv[8];

	(void)state;
	if (system("command -v chromium >/dev/null 2>&1") ||
	    system("command -v python3 >/dev/null 2>&1")) {
		fprintf(stderr, "skip: needs chromium and python3 (apt-get install chromium)\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(img, sizeof(img), "%s/fixture.seg", dir);
	snprintf(html, sizeof(html), "%s/report.html", dir);
	/* three threads, two alike: the merged view has paths to sum */
	assert_int_equal(fx_image_ex(&buf, &len, true), 0);
	test_spill(img, buf, len);
	free(buf);

	argv[0] = (char *)(uintptr_t) "profctl";
	argv[1] = (char *)(uintptr_t) "report";
	argv[2] = (char *)(uintptr_t) "--input";
	argv[3] = img;
	argv[4] = (char *)(uintptr_t) "--format=html";
	argv[5] = (char *)(uintptr_t) "-o";
	argv[6] = html;
	argv[7] = NULL;
	assert_int_equal(profctl_main(7, argv), 0);

	snprintf(cmd, sizeof(cmd), "timeout 120 python3 tests/profctl_html.py %s %s main_loop fib",
		 html, shot);
	rc = system(cmd);
	rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) { /* best effort */
	}
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_chromium),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
