// SPDX-License-Identifier: MIT
/*
 * test_profctl_diff.c - `profctl diff` of two known runs: the fixed
 * snapshot of profctl_fixture.h as BASE, and NEW the same with lex under
 * parse 4 ms slower and 250 more calls of it; the changes per zone and per
 * path, their order, the sign convention, colour only when asked, json,
 * --per-call; and a live process against the file saved of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "profctl_fixture.h"
#include "proffile.h"
#include "prof.h"
#include "profd_private.h"

static char dir[64], base[128], newer[128], out[128];

/* profctl args... with stdout into out; its text (free it), *rc the status */
static char *run(int *rc, const char **args)
{
	*rc = test_profctl_run(out, args);
	return test_slurp(out, NULL);
}

/* the node of thread t under parent with site */
static struct prof_snap_node *fx_find(struct prof_snap_thread *t, __u32 parent, __u32 site)
{
	for (__u32 i = 1; i < t->nnodes; i++)
		if (t->nodes[i].parent == parent && t->nodes[i].site == site)
			return &t->nodes[i];
	return NULL;
}

static int setup(void **state)
{
	struct prof_snapshot *s;
	struct prof_snap_node *lex, *parse, *loop;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_profctl_diff.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("PROFCTL_NO_DAEMON", "1", 1);
	setenv("PROF_NO_DAEMON", "1", 1);
	snprintf(base, sizeof(base), "%s/base.prof", dir);
	snprintf(newer, sizeof(newer), "%s/new.prof", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	if (fx_snapshot(&s))
		return -1;
	if (prof_file_save(base, s))
		return -1;
	/* main: main_loop (node 2) > parse (3) > lex (4): lex 4 ms slower
	 * and 250 calls more, its ancestors' totals with it */
	loop = &s->threads[0].nodes[2];
	parse = fx_find(&s->threads[0], 2, 1);
	lex = fx_find(&s->threads[0], 3, 2);
	if (!parse || !lex)
		return -1;
	lex->ticks += 4000000;
	lex->calls += 250;
	parse->ticks += 4000000;
	loop->ticks += 4000000;
	if (prof_file_save(newer, s))
		return -1;
	prof_snapshot__destroy(s);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return test_rm_rf(dir);
}

/* the first line of text that ends with "  name" */
static const char *row_of(const char *text, const char *name)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "  %s\n", name);
	p = strstr(text, key);
	if (!p)
		return NULL;
	while (p > text && p[-1] != '\n')
		p--;
	return p;
}

static void test_text(void **state)
{
	const char *a[] = { "diff", "--color", "never", base, newer, NULL };
	const char *zones, *paths, *lex, *parse;
	char *text;
	int rc;

	(void)state;
	text = run(&rc, a);
	assert_int_equal(rc, 0);
	assert_non_null(text);
	/* the convention is stated */
	assert_non_null(strstr(text, "every change is NEW - BASE: + more or slower, - less"));
	assert_null(strchr(text, '\033'));
	zones = strstr(text, "zones (");
	paths = strstr(text, "call paths (");
	assert_non_null(zones);
	assert_non_null(paths);
	/* lex, all threads: 1250 -> 1500 calls, self 14 -> 18 ms; first by self */
	lex = row_of(zones, "lex");
	assert_non_null(lex);
	assert_true(lex < paths);
	assert_non_null(strstr(zones, "\n"));
	assert_ptr_equal(lex, strchr(strchr(zones, '\n') + 1, '\n') + 1);
	assert_int_equal(strncmp(lex, "      1500      +250    18.0ms   +4.00ms   +29%", 46), 0);
	/* parse: self unchanged, total +4 ms of 20 */
	parse = row_of(zones, "parse");
	assert_non_null(parse);
	assert_non_null(strstr(parse, "+4.00ms   +20%"));
	/* the worker had kernel facts: on-CPU columns, CPU time; parse had
	 * none on either side: "-", never 0 */
	if (!strstr(zones, "    on-cpu    Δon-cpu  self-cpu  Δself-cpu  zone\n"))
		fail_msg("no on-CPU columns:\n%s", zones);
	{
		char line[256];

		snprintf(line, sizeof(line), "%.*s", (int)(strchr(parse, '\n') - parse), parse);
		assert_non_null(strstr(line, "         -          -         -          -  parse"));
		lex = row_of(zones, "render");
		assert_non_null(lex);
		snprintf(line, sizeof(line), "%.*s", (int)(strchr(lex, '\n') - lex), lex);
		assert_null(strstr(line, "         -          -"));
	}
	/* paths: the one that changed first, the worker's lex unchanged */
	lex = row_of(paths, "main_loop;parse;lex");
	assert_non_null(lex);
	assert_ptr_equal(lex, strchr(strchr(paths, '\n') + 1, '\n') + 1);
	assert_int_equal(strncmp(lex, "      1250      +250    12.0ms   +4.00ms   +50%", 46), 0);
	lex = row_of(paths, "render;lex");
	assert_non_null(lex);
	assert_int_equal(strncmp(lex, "       200         0    5.00ms         0     0%", 46), 0);
	free(text);
}

static void test_sort_and_rows(void **state)
{
	const char *a[] = { "diff", "--sort", "total", "--rows", "3", base, newer, NULL };
	char *text, *p;
	int rc;

	(void)state;
	text = run(&rc, a);
	assert_int_equal(rc, 0);
	/* three zones 4 ms longer, ties by name */
	p = strstr(text, "zones (7, the 3 largest changes)");
	assert_non_null(p);
	assert_true(row_of(p, "lex") < row_of(p, "main_loop"));
	assert_true(row_of(p, "main_loop") < row_of(p, "parse"));
	assert_true(row_of(p, "parse") < strstr(p, "call paths"));
	free(text);
}

static void test_color(void **state)
{
	const char *a[] = { "diff", "--color", "always", base, newer, NULL };
	char *text;
	int rc;

	(void)state;
	text = run(&rc, a);
	assert_int_equal(rc, 0);
	/* slower in red, and said so */
	assert_non_null(strstr(text, "\033[31m  +4.00ms\033[0m"));
	assert_non_null(strstr(text, "+ more or slower (red)"));
	free(text);
	/* reversed: faster in blue */
	{
		const char *b[] = { "diff", "--color", "always", newer, base, NULL };

		text = run(&rc, b);
		assert_int_equal(rc, 0);
		assert_non_null(strstr(text, "\033[34m  -4.00ms\033[0m"));
		free(text);
	}
}

static void test_json_per_call(void **state)
{
	const char *a[] = { "diff", "--format", "json", "--per-call", base, newer, NULL };
	char *text;
	const char *p;
	int rc;

	(void)state;
	text = run(&rc, a);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "{\"version\":1,\"view\":\"diff\",\"change\":\"new - base\","
				     "\"normalise\":\"per_call\",\"sort\":\"self\""));
	/* lex per call: 14 ms / 1250 = 11200 ns, then 18 ms / 1500 = 12000 ns */
	p = strstr(text, "{\"name\":\"lex\",\"base\":{\"calls\":1250,\"self_ns\":11200,");
	assert_non_null(p);
	assert_non_null(strstr(p, "\"new\":{\"calls\":1500,\"self_ns\":12000,"));
	assert_non_null(strstr(p, "\"change\":{\"calls\":250,\"self_ns\":800,"));
	assert_non_null(strstr(text, "{\"path\":[\"main_loop\",\"parse\",\"lex\"],"));
	/* on-CPU time: parse had no kernel facts on either side, null (never
	 * 0); render's worker calls had, a number */
	p = strstr(text, "{\"name\":\"parse\",\"base\":");
	assert_non_null(p);
	assert_non_null(strstr(p, "\"oncpu_ns\":null,\"self_oncpu_ns\":null}"));
	p = strstr(text, "{\"name\":\"render\",\"base\":");
	assert_non_null(p);
	p = strstr(p, "\"oncpu_ns\":");
	assert_non_null(p);
	assert_true(p[11] >= '0' && p[11] <= '9');
	free(text);
}

/*
 * A diff's percentiles are the zone's, as any report of the same file
 * gives them: parse lives in one node, so its p50 and p99 are that node's
 * (they were 0, every row, so --sort p99 sorted nothing).
 */
static void test_percentiles(void **state)
{
	const char *a[] = { "diff", "--format", "json", base, newer, NULL };
	const char *t[] = { "diff", "--sort", "p99", base, newer, NULL };
	struct prof_snapshot *s;
	struct prof_snap_node *parse;
	char want[160], *text;
	int rc;

	(void)state;
	assert_int_equal(fx_snapshot(&s), 0);
	parse = fx_find(&s->threads[0], 2, 1);
	assert_non_null(parse);
	snprintf(want, sizeof(want),
		 "{\"name\":\"parse\",\"base\":{\"calls\":100,\"self_ns\":12000000,"
		 "\"total_ns\":20000000,\"p50_ns\":%llu,\"p99_ns\":%llu,",
		 (unsigned long long)prof_snap_ns(s, prof_snap_quantile(s, parse, 0.50)),
		 (unsigned long long)prof_snap_ns(s, prof_snap_quantile(s, parse, 0.99)));
	assert_null(strstr(want, "\"p50_ns\":0,"));
	prof_snapshot__destroy(s);
	text = run(&rc, a);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, want));
	free(text);
	/* sorted by the change in p99: parse's (its average grew 4 ms, its
	 * histogram did not), before every zone whose p99 did not move */
	text = run(&rc, t);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "zones ("));
	assert_ptr_equal(row_of(strstr(text, "zones ("), "parse"),
			 strchr(strchr(strstr(text, "zones ("), '\n') + 1, '\n') + 1);
	free(text);
}

/*
 * The threads merged (report --threads, diff's sides) are the sum of the
 * threads, figure by figure as figures.h says each combines: every
 * figure of its table is checked, so a new one is too.  The fixture's
 * main thread twice over (a third thread, its calls one more and its
 * maxima one tick longer), beside the worker.
 */
static void test_merge_is_sum_of_threads(void **state)
{
	struct prof_snapshot *s, *m;
	struct prof_snap_thread *t3;
	__u32 j;

	(void)state;
	assert_int_equal(fx_snapshot(&s), 0);
	t3 = realloc(s->threads, (s->nthreads + 1) * sizeof(*t3));
	assert_non_null(t3);
	s->threads = t3;
	t3 = &s->threads[s->nthreads];
	*t3 = s->threads[0];
	t3->tid = 4244;
	t3->start_tick++;
	t3->nodes = malloc(t3->nnodes * sizeof(*t3->nodes));
	assert_non_null(t3->nodes);
	memcpy(t3->nodes, s->threads[0].nodes, t3->nnodes * sizeof(*t3->nodes));
	for (j = 1; j < t3->nnodes; j++) {
		t3->nodes[j].calls++;
		t3->nodes[j].max++;
	}
	s->nthreads++;
	m = pc_merge_threads(s);
	assert_non_null(m);
	test_check_merged(s, m);
	pc_snap_free(m);
	prof_snapshot__destroy(s);
}

static void test_usage(void **state)
{
	const char *one[] = { "diff", base, NULL };
	const char *both[] = { "diff", "--per-call", "--per-frame", base, newer, NULL };
	const char *missing[] = { "diff", base, "/nonexistent/x.prof", NULL };
	char *text;
	int rc;

	(void)state;
	text = run(&rc, one);
	assert_int_equal(rc, 2);
	free(text);
	text = run(&rc, both);
	assert_int_equal(rc, 2);
	free(text);
	text = run(&rc, missing);
	assert_int_equal(rc, 1);
	free(text);
}

/* the differential flame graph: the data in the page, and drawn by a real
 * browser (headless Chromium's DOM after the script ran) where there is one */
static void test_html(void **state)
{
	char page[128], cmd[512];
	const char *a[] = { "diff", "--format", "html", "-o", page, base, newer, NULL };
	char *text;
	int rc;

	(void)state;
	snprintf(page, sizeof(page), "%s/diff.html", dir);
	text = run(&rc, a);
	assert_int_equal(rc, 0);
	free(text);
	text = test_slurp(page, NULL);
	assert_non_null(text);
	assert_null(strstr(text, "DIFF_DATA"));
	assert_non_null(strstr(text, "{\"path\":[\"main_loop\",\"parse\",\"lex\"],"));
	free(text);
	if (system("command -v chromium >/dev/null 2>&1")) {
		fprintf(stderr, "skipped: no chromium to draw the page\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd),
		 "timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom file://%s "
		 ">%s 2>/dev/null",
		 page, out);
	assert_int_equal(system(cmd), 0);
	text = test_slurp(out, NULL);
	assert_non_null(text);
	/* the frame that got slower is drawn, red (the largest change: full
	 * saturation), one level below parse; an unchanged one is grey */
	assert_non_null(strstr(text, "data-path=\"main_loop;parse;lex\" data-change=\"4000000\" "
				     "style=\"left: 0%; width: "));
	assert_non_null(strstr(text, "top: 36px; background: rgb(238, 43, 43);\">lex<"));
	assert_non_null(strstr(text, "data-path=\"main_loop;parse\" data-change=\"0\""));
	assert_non_null(strstr(text, "background: rgb(232, 232, 232);\">parse<"));
	free(text);
}

static volatile unsigned long sink;

static void df_zone(void)
{
	PROF_USDT(df_zone);
	sink++;
}

/* a live process (this one) against the file saved of it a moment ago */
static void test_live_against_file(void **state)
{
	char pid[32], saved[128];
	const char *s[] = { "save", "--pid", pid, "--since-start", "-o", saved, NULL };
	const char *d[] = { "diff", "--format", "json", "--since-start", saved, pid, NULL };
	char *text;
	const char *p;
	int rc, i;

	(void)state;
	for (i = 0; i < 10; i++)
		df_zone();
	snprintf(pid, sizeof(pid), "pid:%d", (int)getpid());
	snprintf(saved, sizeof(saved), "%s/self.prof", dir);
	s[2] = pid + 4;
	text = run(&rc, s);
	assert_int_equal(rc, 0);
	free(text);
	for (i = 0; i < 7; i++)
		df_zone();
	text = run(&rc, d);
	assert_int_equal(rc, 0);
	p = strstr(text, "{\"name\":\"df_zone\",\"base\":{\"calls\":10,");
	assert_non_null(p);
	assert_non_null(strstr(p, "\"new\":{\"calls\":17,"));
	assert_non_null(strstr(p, "\"change\":{\"calls\":7,"));
	free(text);
}

TEST_MAIN(setup, teardown, cmocka_unit_test(test_text), cmocka_unit_test(test_sort_and_rows),
	  cmocka_unit_test(test_color), cmocka_unit_test(test_json_per_call),
	  cmocka_unit_test(test_percentiles), cmocka_unit_test(test_merge_is_sum_of_threads),
	  cmocka_unit_test(test_usage), cmocka_unit_test(test_html),
	  cmocka_unit_test(test_live_against_file))
