// SPDX-License-Identifier: MIT
/*
 * test_top_locks.c - unit: `profctl top`'s named locks over one interval,
 * from two frames of their figures: the rates of what grew, and none (not
 * a wrapped difference) where a figure went back between the frames (a
 * reset, or another process under the pid).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"
#include "annot.h"
#include "profctl.h"

/* top's lock rows of frames now and then, 2 s apart at 1 GHz */
static char *rows(struct prof_annot_lock_sum *now, struct prof_annot_lock_sum *then)
{
	struct prof_snap_annot a = { .nlocks = 1, .locks = now };
	struct prof_snap_annot b = { .nlocks = 1, .locks = then };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(pc_top_locks(f, &a, &b, 2.0, 1000000000ull, 10, ""), 2);
	assert_int_equal(fclose(f), 0);
	return out;
}

static void test_rates(void **state)
{
	struct prof_annot_lock_sum now = { .name = "qlock",
					   .acquisitions = 300,
					   .contended = 20,
					   .wait_ticks = 500000000,
					   .hold_ticks = 1000000000 };
	struct prof_annot_lock_sum then = { .name = "qlock", .acquisitions = 100, .contended = 10 };
	char *out;

	(void)state;
	out = rows(&now, &then);
	assert_non_null(strstr(out, "qlock"));
	/* 200 acquisitions, 10 contended, 0.5 s waited and 1 s held in 2 s */
	assert_non_null(strstr(out, "100.0          5.0    25.0%    50.0%"));
	free(out);
}

static void test_went_back(void **state)
{
	struct prof_annot_lock_sum now = { .name = "qlock", .acquisitions = 40, .contended = 1,
					   .wait_ticks = 10, .hold_ticks = 20 };
	struct prof_annot_lock_sum then = { .name = "qlock",
					    .acquisitions = 4000,
					    .contended = 300,
					    .wait_ticks = 900000000,
					    .hold_ticks = 1500000000 };
	char *out;

	(void)state;
	out = rows(&now, &then);
	assert_non_null(strstr(out, "qlock"));
	assert_non_null(strstr(out, "0.0          0.0     0.0%     0.0%"));
	assert_null(strstr(out, "e+"));
	free(out);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_rates), cmocka_unit_test(test_went_back))
