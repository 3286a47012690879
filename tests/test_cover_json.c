// SPDX-License-Identifier: MIT
/*
 * test_cover_json.c - unit: the JSON report read back (report_load.c,
 * what --input and diff read), made wrong one field at a time from the
 * golden tree report: each is refused saying which field, never loaded
 * half right.  Paths make coverage showed no test took.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "testutil.h"
#include "report_load.h"

/* 64 bytes: four make a name longer than any the snapshot keeps */
#define LONG64 "golden-golden-golden-golden-golden-golden-golden-golden-golden-g"

static char *golden;
static size_t golden_len;

static int setup(void **state)
{
	FILE *f = fopen("tests/golden/tree_json", "r");

	(void)state;
	if (!f)
		return -1;
	golden = calloc(1, 1 << 16);
	golden_len = fread(golden, 1, (1 << 16) - 1, f);
	fclose(f);
	return golden_len ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(golden);
	return 0;
}

/* the golden report with its one `from` replaced by `to`, loaded: 0 or
 * -errno, why said */
static int load_with(const char *from, const char *to, char *why, size_t whylen,
		     struct prof_snapshot **out)
{
	const char *at = strstr(golden, from);
	struct prof_snapshot *s = NULL;
	size_t n;
	char *doc;
	int err;

	if (!at || strstr(at + 1, from))
		fail_msg("'%s' is not once in the golden report", from);
	n = golden_len - strlen(from) + strlen(to);
	doc = malloc(n + 1);
	assert_non_null(doc);
	snprintf(doc, n + 1, "%.*s%s%s", (int)(at - golden), golden, to, at + strlen(from));
	why[0] = 0;
	err = prof_json_load(doc, n, &s, why, whylen);
	free(doc);
	if (err)
		assert_null(s);
	if (out)
		*out = s;
	else
		prof_snapshot__destroy(s);
	return err;
}

static void test_golden_loads(void **state)
{
	struct prof_snapshot *s;
	char why[256];

	(void)state;
	assert_int_equal(
		load_with("\"pid\":4242,", "\"pid\":4242,\"span_ns\":5,", why, sizeof(why), &s), 0);
	assert_int_equal(s->pid, 4242);
	assert_int_equal(s->span_ns, 5);
	assert_int_equal(s->nthreads, 2);
	prof_snapshot__destroy(s);
}

/* a first node with no closed call (an open one only) has an empty
 * histogram: the report loads (no room needed is no failure to get it) */
static void test_empty_first_hist(void **state)
{
	struct prof_snapshot *s;
	char why[256];

	(void)state;
	if (load_with("\"hist_lo\":84,\"hist\":[9,1]", "\"hist_lo\":0,\"hist\":[]", why,
		      sizeof(why), &s))
		fail_msg("a first node with an empty histogram: %s", why);
	assert_int_equal(s->threads[0].nodes[1].hist_n, 0);
	prof_snapshot__destroy(s);
}

static void test_fields_refused(void **state)
{
	static const struct {
		const char *from, *to, *why;
	} cases[] = {
		{ "\"hist\":[9,1]", "\"hist\":[9,-1]", "a \"hist\" bucket is not a count" },
		{ "\"hist\":[9,1]", "\"hist\":[9,\"1\"]", "a \"hist\" bucket is not a count" },
		{ "\"tick_hz\":1000000000", "\"tick_hz\":999", "\"tick_hz\" out of range" },
		{ "\"outside_ns\":7000000", "\"outside_ns\":70000000", "outside_ns above wall_ns" },
		{ "\"line\":10,", "\"line\":4294967296,", "\"line\" is too big" },
		{ "\"comm\":\"golden\"", "\"comm\":\"" LONG64 LONG64 LONG64 LONG64 "\"",
		  "\"comm\" is longer than" },
		{ "\"threads\":[", "\"threads\":[7,", "a thread is not an object" },
		{ "\"processes\":[", "\"processes\":[7],\"x\":[", "a process is not an object" },
		{ "\"children\":[\n        {\"name\":\"parse\"",
		  "\"children\":[7,{\"name\":\"parse\"", "a node is not an object" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[256];
		int err = load_with(cases[i].from, cases[i].to, why, sizeof(why), NULL);

		if (err != -EINVAL || !strstr(why, cases[i].why))
			fail_msg("'%s': %d '%s', not -EINVAL '%s'", cases[i].to, err, why,
				 cases[i].why);
	}
}

TEST_MAIN(setup, teardown, cmocka_unit_test(test_golden_loads),
	  cmocka_unit_test(test_empty_first_hist), cmocka_unit_test(test_fields_refused))
