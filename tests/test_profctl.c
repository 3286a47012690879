// SPDX-License-Identifier: MIT
/*
 * test_profctl.c - profctl on a fixed snapshot (tests/profctl_fixture.h):
 * every view and format against the golden files in tests/golden/, the
 * callers and merge arithmetic, baselines, and `zones` against `readelf
 * -n`.  The command line itself (options, errors, help, completion, the
 * docs): test_profctl_cli.c.
 *
 * Regenerate the golden files after an intended change:
 *	PROFCTL_GOLDEN_UPDATE=1 .output/tests/test_profctl && git diff tests/golden
 */
#define _GNU_SOURCE /* posix_openpt, ptsname */
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "testutil.h"
#include "snap_fixture.h"
#include "client.h"
#include "profctl.h"
#include "profctl_fixture.h"
#include "prof.h"
#include "profd_private.h"
#include "profctl_run.h"

static void golden(const char *name, const char **extra)
{
	const char *args[32] = { "report", "--input", image, "-o" };
	char out[160], gpath[160], err[512];
	char *got, *want;
	int n = 4, rc;

	snprintf(out, sizeof(out), "%s/%s", dir, name);
	args[n++] = out;
	while (*extra)
		args[n++] = *extra++;
	args[n] = NULL;
	rc = run(args, err, sizeof(err));
	if (rc)
		fprintf(stderr, "profctl exited %d: %s\n", rc, err);
	assert_int_equal(rc, 0);
	got = test_slurp(out, NULL);
	assert_non_null(got);
	snprintf(gpath, sizeof(gpath), "tests/golden/%s", name);
	if (getenv("PROFCTL_GOLDEN_UPDATE")) {
		FILE *f = fopen(gpath, "w");

		assert_non_null(f);
		fputs(got, f);
		fclose(f);
	}
	want = test_slurp(gpath, NULL);
	if (!want)
		fail_msg("no %s: run with PROFCTL_GOLDEN_UPDATE=1 to create it", gpath);
	if (strcmp(got, want)) {
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "diff -u %s %s >&2", gpath, out);
		if (system(cmd)) { /* the diff is the message */
		}
		fail_msg("%s differs from the golden file", name);
	}
	free(got);
	free(want);
}

#define GOLDEN(name, ...)                                    \
	static void test_golden_##name(void **state)         \
	{                                                    \
		const char *extra[] = { __VA_ARGS__, NULL }; \
		(void)state;                                 \
		golden(#name, extra);                        \
	}

GOLDEN(tree_txt, "--sort", "self")
GOLDEN(tree_total_txt, "--sort", "total")
GOLDEN(tree_calls_txt, "--sort", "calls")
GOLDEN(tree_p99_txt, "--sort", "p99")
GOLDEN(tree_tid_txt, "--tid", "4243")
GOLDEN(tree_color_txt, "--color", "always")
GOLDEN(threads_txt, "--merge-threads")
GOLDEN(flat_txt, "--flat")
GOLDEN(flat_total_txt, "--flat", "--sort", "total")
GOLDEN(callers_lex_txt, "--callers", "lex")
GOLDEN(callers_fib_txt, "--callers", "fib")
GOLDEN(tree_json, "--format", "json")
GOLDEN(threads_json, "--format", "json", "--merge-threads")
GOLDEN(flat_json, "--format", "json", "--flat")
GOLDEN(callers_json, "--format", "json", "--callers", "render")
GOLDEN(tree_csv, "--format", "csv")
GOLDEN(flat_csv, "--format", "csv", "--flat")
GOLDEN(callers_csv, "--format", "csv", "--callers", "lex")
GOLDEN(tree_folded, "--format", "folded")
GOLDEN(threads_folded, "--format", "folded", "--merge-threads")
GOLDEN(report_html, "--format", "html")
/* on-CPU time: the worker's calls had kernel facts, main's none ("-") */
GOLDEN(tree_oncpu_txt, "--sort", "oncpu")
GOLDEN(flat_self_oncpu_txt, "--flat", "--sort", "self-oncpu")
GOLDEN(oncpu_folded, "--format", "folded", "--weight", "oncpu")

/*
 * --input of a JSON report: the fixture's JSON tree read back
 * renders every view and format as the fixture itself does (its golden
 * files), the JSON itself too; its ticks are ns, so nothing is rounded.
 */
static const char *const json_views[][6] = {
	{ "tree_txt", "--sort", "self" },
	{ "tree_total_txt", "--sort", "total" },
	{ "tree_calls_txt", "--sort", "calls" },
	{ "tree_p99_txt", "--sort", "p99" },
	{ "tree_tid_txt", "--tid", "4243" },
	{ "tree_color_txt", "--color", "always" },
	{ "threads_txt", "--merge-threads" },
	{ "flat_txt", "--flat" },
	{ "flat_total_txt", "--flat", "--sort", "total" },
	{ "callers_lex_txt", "--callers", "lex" },
	{ "callers_fib_txt", "--callers", "fib" },
	{ "tree_json", "--format", "json" },
	{ "threads_json", "--format", "json", "--merge-threads" },
	{ "flat_json", "--format", "json", "--flat" },
	{ "callers_json", "--format", "json", "--callers", "render" },
	{ "tree_csv", "--format", "csv" },
	{ "flat_csv", "--format", "csv", "--flat" },
	{ "callers_csv", "--format", "csv", "--callers", "lex" },
	{ "tree_folded", "--format", "folded" },
	{ "threads_folded", "--format", "folded", "--merge-threads" },
	{ "report_html", "--format", "html" },
	{ "tree_oncpu_txt", "--sort", "oncpu" },
	{ "flat_self_oncpu_txt", "--flat", "--sort", "self-oncpu" },
};

/* profctl report --input in VIEW... -o out; 0 and stderr empty expected */
static char *render_input(const char *in, const char *const *view, size_t nview)
{
	const char *args[16] = { "report", "--input", in, "-o" };
	char out[160], err[512];
	size_t n = 4, k;

	snprintf(out, sizeof(out), "%s/json_in.out", dir);
	args[n++] = out;
	for (k = 0; k < nview && view[k]; k++)
		args[n++] = view[k];
	args[n] = NULL;
	assert_int_equal(run(args, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	return test_slurp(out, NULL);
}

static void test_json_input(void **state)
{
	const char *const tree[] = { "--format", "json" };
	const char *const pprof[] = { "--format", "pprof" };
	char json[160], *got, *want;
	struct stat st;
	size_t v;
	FILE *f;

	(void)state;
	snprintf(json, sizeof(json), "%s/golden.json", dir);
	got = render_input(image, tree, 2);
	f = fopen(json, "w");
	assert_non_null(f);
	fputs(got, f);
	fclose(f);
	free(got);
	for (v = 0; v < sizeof(json_views) / sizeof(json_views[0]); v++) {
		char gpath[160];

		got = render_input(json, json_views[v] + 1, 5);
		snprintf(gpath, sizeof(gpath), "tests/golden/%s", json_views[v][0]);
		want = test_slurp(gpath, NULL);
		assert_non_null(want);
		if (strcmp(got, want))
			fail_msg("--input of the JSON report: %s differs from %s", json_views[v][0],
				 gpath);
		free(got);
		free(want);
	}
	/* pprof renders too (its time, which the JSON does not keep, aside) */
	free(render_input(json, pprof, 2));
	snprintf(json, sizeof(json), "%s/json_in.out", dir);
	assert_int_equal(stat(json, &st), 0);
	assert_true(st.st_size > 100);
}

/* text with each "path" of json said as the image's (a diff names its sides) */
static char *same_source(char *text, const char *json)
{
	char q[170], *p;

	snprintf(q, sizeof(q), "\"%s\"", json);
	while ((p = strstr(text, q))) {
		/* golden.jsn and golden.seg: the same length */
		memcpy(p + 1, image, strlen(image));
	}
	return text;
}

/* diff with a JSON report on either side: the same as with the image */
static void test_json_input_diff(void **state)
{
	const char *const tree[] = { "--format", "json" };
	const char *a1[] = { "diff", image, NULL, "--format", "json", NULL };
	char json[160], err[512], *got, *want;

	(void)state;
	/* as long a name as the image's */
	snprintf(json, sizeof(json), "%s/golden.jsn", dir);
	got = render_input(image, tree, 2);
	{
		FILE *f = fopen(json, "w");

		assert_non_null(f);
		fputs(got, f);
		fclose(f);
	}
	free(got);
	a1[2] = image;
	assert_int_equal(run_stdout(a1, &want), 0);
	a1[2] = json;
	assert_int_equal(run_stdout(a1, &got), 0);
	assert_string_equal(same_source(got, json), want);
	free(got);
	a1[1] = json;
	assert_int_equal(run_stdout(a1, &got), 0);
	assert_string_equal(same_source(got, json), want);
	free(got);
	free(want);
	(void)err;
}

/* a JSON report cut short, retyped or of another shape: one line saying
 * what, exit status 1, never a crash */
static void test_json_input_corrupt(void **state)
{
	const char *const tree[] = { "--format", "json" };
	const char *const flatj[] = { "--format", "json", "--flat" };
	const char *args[] = { "report", "--input", NULL, NULL };
	char path[160], err[512], *doc, *p;
	size_t len, cut, step;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	args[2] = path;
	doc = render_input(image, tree, 2);
	len = strlen(doc);
	step = len / 60 ? len / 60 : 1;
	for (cut = 1; cut < len - 1; cut += step) {
		f = fopen(path, "w");
		assert_non_null(f);
		fwrite(doc, 1, cut, f);
		fclose(f);
		assert_int_equal(run(args, err, sizeof(err)), 1);
		assert_non_null(strstr(err, "not a JSON report"));
		assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
	}
	/* a count that is a string */
	p = strstr(doc, "\"calls\":");
	assert_non_null(p);
	p[8] = '"';
	f = fopen(path, "w");
	fputs(doc, f);
	fclose(f);
	assert_int_equal(run(args, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "not a JSON report"));
	p[8] = '1';
	/* a histogram past its last bucket: a node with calls starts at 191 */
	p = strstr(doc, "\"hist_lo\":");
	assert_non_null(p);
	f = fopen(path, "w");
	fwrite(doc, 1, (size_t)(p - doc), f);
	fputs("\"hist_lo\":191", f);
	fputs(p + 10 + strspn(p + 10, "0123456789"), f);
	fclose(f);
	assert_int_equal(run(args, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "\"hist\" goes past bucket"));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
	free(doc);
	/* the flat view has no tree */
	doc = render_input(image, flatj, 3);
	f = fopen(path, "w");
	fputs(doc, f);
	fclose(f);
	free(doc);
	assert_int_equal(run(args, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "flat view has no call tree"));
}

/*
 * One JSON writer: a non-ASCII name reads the same, as valid
 * UTF-8, in every JSON profctl writes (the tree, which is also the report
 * at exit, --threads, --flat, --callers, diff, the html pages' data); it
 * was "ex\u00c3\u00a9" in some and "exé" in others.  A byte of no valid
 * UTF-8 sequence is escaped (\u00XX of its value), so the output stays
 * valid UTF-8 whatever a name holds.
 */
static bool valid_utf8(const char *text)
{
	iconv_t cd = iconv_open("UTF-8", "UTF-8");
	char *in = (char *)(uintptr_t)text, out[4096], *o;
	size_t left = strlen(text), room;
	bool ok = true;

	assert_true(cd != (iconv_t)-1);
	while (left && ok) {
		o = out;
		room = sizeof(out);
		if (iconv(cd, &in, &left, &o, &room) == (size_t)-1 && errno != E2BIG)
			ok = false;
	}
	iconv_close(cd);
	return ok;
}

/* the fixture with comm, thread 0's name and the render zone's renamed */
static void fixture_named(const char *path, const char *comm, const char *zone)
{
	struct prof_seg_hdr *h;
	struct prof_slab_hdr *sh;
	struct prof_site_ent *site;
	void *buf = NULL;
	size_t len = 0;

	assert_int_equal(fx_image(&buf, &len), 0);
	h = buf;
	sh = (void *)((char *)buf + h->slabs_off);
	site = (void *)((char *)buf + h->sites_off + 3 * (size_t)h->site_size);
	assert_string_equal(site->name, "render");
	snprintf(h->comm, sizeof(h->comm), "%s", comm);
	snprintf(sh->name, sizeof(sh->name), "%s", comm);
	snprintf(site->name, sizeof(site->name), "%s", zone);
	test_spill(path, buf, len);
	free(buf);
}

/* every JSON output of the image at path holds each of want (quoted
 * strings as written) and is valid UTF-8; utf8: the names are valid
 * UTF-8, which no output escapes byte by byte */
static void json_outputs_hold(const char *path, const char *zone, const char *const *want,
			      size_t nwant, bool utf8)
{
	const char *views[][6] = {
		{ "report", "--input", path, "--format", "json" },
		{ "report", "--input", path, "--format", "json", "--merge-threads" },
		{ "report", "--input", path, "--format", "json", "--flat" },
		{ "report", "--input", path, "--format", "html" },
		{ "diff", path, path, "--format", "json" },
		{ "diff", path, path, "--format", "html" },
	};
	const char *callers[] = { "report", "--input", path, "--format", "json", "--callers",
				  zone,	    NULL };
	size_t v, k;
	char *text;

	for (v = 0; v <= sizeof(views) / sizeof(views[0]); v++) {
		const char *args[8] = { NULL };

		if (v < sizeof(views) / sizeof(views[0]))
			memcpy(args, views[v], sizeof(views[v]));
		else
			memcpy(args, callers, sizeof(callers));
		assert_int_equal(run_stdout(args, &text), 0);
		if (!valid_utf8(text))
			fail_msg("%s %s %s: not valid UTF-8", args[0], args[3], args[5] ? args[5] : "");
		for (k = 0; k < nwant; k++) {
			if (!strstr(text, want[k]))
				fail_msg("%s %s %s %s: no %s", args[0], args[3], args[4],
					 args[5] ? args[5] : "", want[k]);
		}
		if (utf8 && strstr(text, "\\u00c3"))
			fail_msg("%s %s %s: UTF-8 escaped byte by byte", args[0], args[3], args[4]);
		free(text);
	}
}

static void test_json_utf8(void **state)
{
	const char *const good[] = { "\"ex\xc3\xa9\"", "\"rend\xc3\xa9\"" };
	/* 0xff is no UTF-8; 0xc3 then the string's end is a cut sequence */
	const char *const bad[] = { "\"ex\\u00ff\"", "\"rend\\u00c3\"" };
	char path[160];

	(void)state;
	snprintf(path, sizeof(path), "%s/utf8.seg", dir);
	fixture_named(path, "ex\xc3\xa9", "rend\xc3\xa9");
	json_outputs_hold(path, "rend\xc3\xa9", good, 2, true);
	snprintf(path, sizeof(path), "%s/bad8.seg", dir);
	fixture_named(path, "ex\xff", "rend\xc3");
	json_outputs_hold(path, "rend\xc3", bad, 2, false);
}

/* names with csv's special bytes are quoted, quotes doubled, in every
 * row of the tree's csv: comm and the thread's name */
static void test_csv_quoting(void **state)
{
	const char *args[] = { "report", "--input", NULL, "--format", "csv",
			       "--tid",	 "4242",    "-o", NULL,	      NULL };
	static const char want[] = "4242,\"a\"\"b\",4242,\"io,x\",";
	char path[160], out[160], err[512], *got, *line;
	struct prof_seg_hdr *h;
	struct prof_slab_hdr *sh;
	void *buf = NULL;
	size_t len = 0;
	int rows = 0;

	(void)state;
	assert_int_equal(fx_image(&buf, &len), 0);
	h = buf;
	sh = (void *)((char *)buf + h->slabs_off);
	snprintf(h->comm, sizeof(h->comm), "a\"b");
	snprintf(sh->name, sizeof(sh->name), "io,x");
	snprintf(path, sizeof(path), "%s/quoted.seg", dir);
	snprintf(out, sizeof(out), "%s/quoted.csv", dir);
	test_spill(path, buf, len);
	free(buf);
	args[2] = path;
	args[8] = out;
	assert_int_equal(run(args, err, sizeof(err)), 0);
	got = test_slurp(out, NULL);
	assert_non_null(got);
	/* the header, then every row of thread 4242 */
	for (line = strchr(got, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		if (strncmp(line + 1, want, strlen(want)))
			fail_msg("row not quoted: %.80s", line + 1);
		rows++;
	}
	assert_int_equal(rows, 8);
	free(got);
}

/* the fixture with its threads' states set; its path in path */
static void fixture_states(const char *path, __u32 main_state, __u32 worker_state, bool exited)
{
	struct prof_seg_hdr *h;
	void *buf = NULL;
	size_t len = 0;

	assert_int_equal(fx_image(&buf, &len), 0);
	h = buf;
	((struct prof_slab_hdr *)((char *)buf + h->slabs_off))->state = main_state;
	((struct prof_slab_hdr *)((char *)buf + h->slabs_off + h->slab_size))->state = worker_state;
	if (exited)
		h->flags |= PROF_SEG_EXITED;
	test_spill(path, buf, len);
	free(buf);
}

/* profctl args succeeds and writes out; want is in it (case i) */
static void output_has(const char **args, const char *out, size_t i, const char *want)
{
	char *text;

	text = run_text(args, out);
	if (!strstr(text, want))
		fail_msg("case %zu: no '%s' in\n%s", i, want, text);
	free(text);
}

/* --threads: the merged thread has exited once every thread has, as all
 * have once the process has */
static void test_threads_exited(void **state)
{
	static const struct {
		__u32 main, worker;
		bool exited;
		const char *text, *json;
	} cases[] = {
		{ PROF_SLAB_EXITED, PROF_SLAB_EXITED, false, "all 2 threads  exited",
		  "\"state\":\"exited\"" },
		{ PROF_SLAB_EXITED, PROF_SLAB_ALIVE, false, "all 2 threads  alive",
		  "\"state\":\"alive\"" },
		{ PROF_SLAB_ALIVE, PROF_SLAB_EXITED, false, "all 2 threads  alive",
		  "\"state\":\"alive\"" },
		/* exit() with a worker still running: only main is marked */
		{ PROF_SLAB_EXITED, PROF_SLAB_ALIVE, true, "all 2 threads  exited",
		  "\"state\":\"exited\"" },
	};
	char path[160], out[160];
	const char *txt[] = { "report", "--input", path, "--merge-threads", "-o", out, NULL };
	const char *json[] = { "report", "--input", path, "--merge-threads", "--format",
			       "json",	 "-o",	    out,  NULL };
	size_t i;

	(void)state;
	snprintf(path, sizeof(path), "%s/states.seg", dir);
	snprintf(out, sizeof(out), "%s/states.out", dir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fixture_states(path, cases[i].main, cases[i].worker, cases[i].exited);
		output_has(txt, out, i, cases[i].text);
		output_has(json, out, i, cases[i].json);
	}
}

static struct prof_snapshot *fixture(void)
{
	struct prof_snapshot *s = NULL;

	assert_int_equal(pc_read_image(image, 0, &s), 0);
	return s;
}

/* parents sum to the zone's total, children to total minus self */
static void test_callers_sums(void **state)
{
	struct prof_snapshot *s = fixture();
	static const char *const zones[] = { "lex", "fib", "render", "main_loop", "parse" };
	size_t z;

	(void)state;
	for (z = 0; z < 5; z++) {
		struct pc_callers c;

		test_callers_hold(s, zones[z], &c);
		pc_callers_free(&c);
	}
	/* lex: 1250 calls, 14ms, called from parse, render (twice) */
	{
		struct pc_callers c;

		assert_int_equal(pc_callers(s, "lex", &c), 0);
		assert_int_equal(c.calls, 1250);
		assert_int_equal(c.ticks, 14000000);
		assert_int_equal(c.nparents, 2);
		assert_string_equal(c.parents[0].name, "parse");
		assert_int_equal(c.parents[1].ticks, 6000000);
		pc_callers_free(&c);
	}
	{
		struct pc_callers c;

		assert_int_equal(pc_callers(s, "nope", &c), -ENOENT);
	}
	prof_snapshot__destroy(s);
}

/* merging threads keeps every count; the flat view agrees with the tree */
static void test_merge_and_flat(void **state)
{
	struct prof_snapshot *s = fixture(), *m;
	struct prof_flat_row *rows = NULL;
	size_t n = 0, i;
	__u64 calls = 0, mcalls = 0, self = 0;
	__u32 j, k;

	(void)state;
	m = pc_merge_threads(s);
	assert_non_null(m);
	assert_int_equal(m->nthreads, 1);
	for (j = 0; j < s->nthreads; j++)
		for (k = 1; k < s->threads[j].nnodes; k++)
			calls += s->threads[j].nodes[k].calls;
	for (k = 1; k < m->threads[0].nnodes; k++) {
		mcalls += m->threads[0].nodes[k].calls;
		assert_true(m->threads[0].nodes[k].parent < k);
	}
	assert_int_equal(calls, mcalls);
	assert_int_equal(prof_snap_thread_total(&m->threads[0]),
			 prof_snap_thread_total(&s->threads[0]) + prof_snap_thread_total(&s->threads[1]));
	/* render appears under main_loop and at the top of worker: two nodes */
	assert_int_equal(m->threads[0].nnodes, s->threads[0].nnodes + 3);

	assert_int_equal(prof_snap_flat(s, 0, PROF_SORT_SELF, &rows, &n), 0);
	for (i = 0; i < n; i++)
		self += rows[i].self;
	{
		__u64 tself = 0;

		for (j = 0; j < s->nthreads; j++)
			for (k = 1; k < s->threads[j].nnodes; k++)
				tself += prof_snap_self(&s->threads[j].nodes[k]);
		assert_int_equal(self, tself);
	}
	free(rows);
	pc_snap_free(m);
	prof_snapshot__destroy(s);
}

/* baselines: private, 0600, symlinks and FIFOs refused, read back equal */
static void test_baseline(void **state)
{
	struct prof_snapshot *s = fixture(), *b = NULL;
	char xdg[96], path[256], link[300];
	struct stat st;

	(void)state;
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	assert_int_equal(mkdir(xdg, 0700), 0);
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	assert_int_equal(pc_baseline_path(4242, 777, path, sizeof(path)), 0);
	assert_non_null(strstr(path, xdg));
	assert_int_equal(pc_baseline_save(s), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(pc_baseline_load(4242, 777, &b), 0);
	assert_non_null(b);
	assert_int_equal(prof_snapshot__diff(s, b), 0);
	assert_int_equal(s->threads[0].nodes[4].calls, 0);
	prof_snapshot__destroy(b);
	b = NULL;
	/* none for another start token */
	assert_int_equal(pc_baseline_load(4242, 778, &b), 0);
	assert_null(b);
	/* a symlink in its place is not followed: ignored, said */
	snprintf(link, sizeof(link), "%s", path);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(image, link), 0);
	assert_int_equal(pc_baseline_load(4242, 777, &b), 0);
	assert_null(b);
	unlink(link);
	/* nor a FIFO waited on (no writer would ever come) */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(pc_baseline_load(4242, 777, &b), 0);
	assert_null(b);
	unlink(path);
	/* a group-writable XDG_RUNTIME_DIR is not used */
	assert_int_equal(chmod(xdg, 0770), 0);
	assert_int_equal(pc_baseline_path(4242, 777, path, sizeof(path)), 0);
	assert_non_null(strstr(path, "/dev/shm/profctl."));
	unsetenv("XDG_RUNTIME_DIR");
	prof_snapshot__destroy(s);
}

static void zone_a(void)
{
	PROF_USDT(golden_zone_a);
}

__attribute__((noinline)) static void golden_func_site(void)
{
	PROF_FUNC();
}

/* inlined into its caller: still named after itself */
static inline __attribute__((always_inline)) void golden_inlined_leaf(void)
{
	PROF_FUNC();
}

__attribute__((noinline)) static void golden_inline_caller(void)
{
	PROF_FUNC();
	golden_inlined_leaf();
	golden_inlined_leaf();
}

/* C++ PROF_FUNC sites (zones_cxx.cc) */
long zones_cxx_run(void);

static void zone_b(void)
{
	PROF_USDT(golden_zone_b);
	zone_a();
	golden_func_site();
	golden_inline_caller();
	assert_int_equal(zones_cxx_run(), 1 + 3 + 7 + 3);
}

/* `profctl zones` on this binary lists the enter probes readelf -n shows */
static void test_zones_readelf(void **state)
{
	char out[160], cmd[512], line[512];
	char *mine;
	FILE *p;
	int n = 0, enter = 0;

	(void)state;
	zone_b();
	snprintf(out, sizeof(out), "%s/zones", dir);
	{
		FILE *f = fopen(out, "w");

		assert_non_null(f);
		assert_int_equal(pc_zones("/proc/self/exe", f), 0);
		fclose(f);
	}
	mine = test_slurp(out, NULL);
	assert_non_null(mine);
	assert_non_null(strstr(mine, "golden_zone_a"));
	assert_non_null(strstr(mine, "golden_zone_b"));
	/* a PROF_FUNC site is named after its function, not "func" */
	assert_non_null(strstr(mine, "golden_func_site (func)"));
	/* its own even where inlined: the caller's name is the caller's site only */
	assert_non_null(strstr(mine, "golden_inlined_leaf (func)"));
	assert_non_null(strstr(mine, "golden_inline_caller (func)"));
	assert_null(strstr(strstr(mine, "golden_inline_caller (func)") + 1,
			   "golden_inline_caller (func)"));
	/* C++: as the reports name them, each template instance apart */
	assert_non_null(strstr(mine, "geo::Mesh::build (func)"));
	assert_non_null(strstr(mine, "geo::sum<double> (func)"));
	assert_non_null(strstr(mine, "geo::sum<long> (func)"));
	/* every prof enter probe of readelf, with its location and semaphore */
	snprintf(cmd, sizeof(cmd), "readelf -n /proc/%d/exe 2>/dev/null", (int)getpid());
	p = popen(cmd, "r");
	if (!p)
		skip();
	while (fgets(line, sizeof(line), p)) {
		char prov[64], name[128], want[256];
		unsigned long long loc, base, sema;

		if (sscanf(line, " Provider: %63s", prov) != 1 || strcmp(prov, "prof"))
			continue;
		if (!fgets(line, sizeof(line), p) || sscanf(line, " Name: %127s", name) != 1)
			continue;
		if (!fgets(line, sizeof(line), p) ||
		    sscanf(line, " Location: %llx, Base: %llx, Semaphore: %llx", &loc, &base,
			   &sema) != 3)
			continue;
		n++;
		if (strlen(name) > 6 && !strcmp(name + strlen(name) - 6, "__exit"))
			continue;
		enter++;
		if (!strcmp(name, "func")) {
			/* named after its function: the location and semaphore */
			snprintf(want, sizeof(want), " 0x%016llx 0x%016llx", loc, sema);
			if (!strstr(mine, want))
				fail_msg("readelf's func at %s not in profctl zones:\n%s", want, mine);
			continue;
		}
		snprintf(want, sizeof(want), "%-32s 0x%016llx 0x%016llx", name, loc, sema);
		if (!strstr(mine, want))
			fail_msg("readelf's %s not in profctl zones:\n%s", want, mine);
	}
	pclose(p);
	if (!n)
		skip();
	assert_true(enter >= 2);
	snprintf(line, sizeof(line), "%d zone sites, %d probes", enter, n);
	assert_non_null(strstr(mine, line));
	free(mine);
}

/*
 * the text prof_fmt_ns gave when it was snprintf, but for a value that
 * rounds up to a fourth digit (9.996us, 999.7ms): shown as its rounded
 * value would be ("10.0us", "1.00s"), never "10.00us" or "1000ms"
 */
static void fmt_ns_ref(char *buf, size_t len, __u64 ns)
{
	static const char *const unit[] = { "us", "ms", "s" };
	static const double scale[] = { 1e3, 1e6, 1e9 };
	double v = (double)ns;
	int u, d;

	if (ns < 1000) {
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
		return;
	}
	u = ns < 1000000 ? 0 : ns < 1000000000 ? 1 : 2;
	d = v < 10 * scale[u] ? 2 : v < 100 * scale[u] ? 1 : 0;
	snprintf(buf, len, "%.*f", d, v / scale[u]);
	if (strtod(buf, NULL) >= (d == 2 ? 10 : d == 1 ? 100 : 1000)) {
		if (d)
			d--;
		else if (u < 2)
			u++, d = 2;
	}
	snprintf(buf, len, "%.*f%s", d, v / scale[u], unit[u]);
}

static __u64 rnd64(__u64 *x)
{
	/* xorshift64*: deterministic, so a failure repeats */
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ull;
}

/* durations, counts and shares as printf writes them, ties included */
static void test_fmt_like_printf(void **state)
{
	static const __u64 edges[] = { 0,
				       1,
				       999,
				       1000,
				       1005,
				       1015,
				       1025,
				       9994,
				       9995,
				       9996,
				       9999,
				       10000,
				       10050,
				       10150,
				       99949,
				       99950,
				       99999,
				       100000,
				       100500,
				       101500,
				       999499,
				       999500,
				       999999,
				       1000000,
				       1005000,
				       9995000,
				       99950000,
				       999500000,
				       999999999,
				       1000000000,
				       9995000000ull,
				       99950000000ull,
				       18446744073709551615ull };
	static const double shares[] = {
		0,   0.05, 0.15, 0.25, 0.35, 12.25, 12.35, 99.95, 100, 1e-300, 4503599627370495.5,
		1e20
	};
	char want[80], got[80], *e;
	__u64 x = 88172645463325252ull, ns;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]) + 2000000; i++) {
		if (i < sizeof(edges) / sizeof(edges[0]))
			ns = edges[i];
		else /* every magnitude about as often */
			ns = rnd64(&x) >> (rnd64(&x) % 64);
		fmt_ns_ref(want, sizeof(want), ns);
		prof_fmt_ns(got, sizeof(got), ns);
		if (strcmp(want, got))
			fail_msg("ns %llu: printf %s, prof_fmt_ns %s", (unsigned long long)ns, want,
				 got);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)ns);
		e = prof_put_u64(got, ns);
		*e = 0;
		assert_string_equal(want, got);
	}
	/* every digit count's edges: 10^k - 1, 10^k, 10^k + 1, and 2^k */
	for (ns = 1, k = 0; k < 64; k++) {
		__u64 vs[4] = { ns - 1, ns, ns + 1, 1ull << k };
		int j;

		for (j = 0; j < 4; j++) {
			snprintf(want, sizeof(want), "%llu", (unsigned long long)vs[j]);
			e = prof_put_u64(got, vs[j]);
			*e = 0;
			assert_string_equal(want, got);
		}
		if (k < 19)
			ns *= 10;
	}
	for (i = 0; i < sizeof(shares) / sizeof(shares[0]) + 1000000; i++) {
		double v = i < sizeof(shares) / sizeof(shares[0])
				   ? shares[i]
				   : 100.0 * (double)(rnd64(&x) >> 40) /
					     (double)((rnd64(&x) >> 40) | 1);

		for (k = 0; k <= 3; k++) {
			snprintf(want, sizeof(want), "%.*f", k, v);
			e = prof_put_fixed(got, v, (unsigned int)k);
			*e = 0;
			if (strcmp(want, got))
				fail_msg("%.17g to %d decimals: printf %s, prof_put_fixed %s", v, k,
					 want, got);
		}
	}
	/* a short buffer is cut as snprintf cuts */
	assert_string_equal(prof_fmt_ns(got, 4, 123456), "123");
	/* rounding up to a fourth digit: the rounded value's form (top's busy
	 * "self/s" read "1000ms") */
	assert_string_equal(prof_fmt_ns(got, sizeof(got), 999700000), "1.00s");
	assert_string_equal(prof_fmt_ns(got, sizeof(got), 999999), "1.00ms");
	assert_string_equal(prof_fmt_ns(got, sizeof(got), 9996), "10.0us");
	assert_string_equal(prof_fmt_ns(got, sizeof(got), 99960000), "100ms");
	assert_string_equal(prof_fmt_ns(got, sizeof(got), 999499999), "999ms");
}

/* ticks to ns: the integer path equals the long double it replaced */
static void test_ns_like_long_double(void **state)
{
	static const __u64 hzs[] = { 1000,	    999983,	     2596000000ull, 2596123457ull,
				     3000000000ull, 100000000000ull, 1000000001ull, 999999999ull };
	struct prof_snapshot s = { 0 };
	__u64 x = 0x9e3779b97f4a7c15ull, ticks, want;
	size_t h, i;

	(void)state;
	for (h = 0; h < sizeof(hzs) / sizeof(hzs[0]) + 200; h++) {
		s.tick_hz = h < sizeof(hzs) / sizeof(hzs[0]) ? hzs[h]
							     : 1000 + rnd64(&x) % 100000000000ull;
		for (i = 0; i < 20000; i++) {
			long double ns;

			ticks = rnd64(&x) >> (rnd64(&x) % 64);
			/* near whole ns: where rounding could tip */
			if (i % 4 == 1)
				ticks = (ticks % 100000000000ull) * s.tick_hz / 1000000000ull;
			else if (i % 4 == 2)
				ticks = (ticks % 100000000000ull) * s.tick_hz / 1000000000ull + 1;
			ns = (long double)ticks * 1e9L / (long double)s.tick_hz;
			want = ns < 18446744073709551615.0L ? (__u64)ns : ~0ull;
			if (prof_snap_ns(&s, ticks) != want)
				fail_msg("%llu ticks at %llu Hz: %llu, want %llu",
					 (unsigned long long)ticks, (unsigned long long)s.tick_hz,
					 (unsigned long long)prof_snap_ns(&s, ticks),
					 (unsigned long long)want);
		}
	}
}

/* a lazy read loads every thread as the full read copies it, quantiles
 * from the segment's histograms equal to the copied histograms', and
 * merges to the same tree */
static void test_lazy_read(void **state)
{
	struct prof_snapshot *full = NULL, *lazy = NULL;
	struct prof_snap_iter it;
	__u32 i;

	(void)state;
	assert_int_equal(pc_read_image(image, 0, &full), 0);
	assert_int_equal(pc_read_image(image, PROF_READ_LAZY, &lazy), 0);
	assert_non_null(lazy->lazy);
	it = PROF_SNAP_ITER(lazy, 0);
	assert_int_equal(lazy->nthreads, full->nthreads);
	assert_int_equal(prof_snap_any_sched(lazy), prof_snap_any_sched(full));
	for (i = 0; i < lazy->nthreads; i++) {
		const struct prof_snap_thread *a = &full->threads[i], *b = &lazy->threads[i];

		assert_int_equal(b->nnodes, 0);
		assert_ptr_equal(prof_snap_next(&it), b);
		snap_same_thread(lazy, b, full, a, false);
		if (i)
			/* loading one thread unloads the one before */
			assert_int_equal(lazy->threads[i - 1].nnodes, 0);
	}
	prof_snapshot__destroy(lazy);
	/* merged thread by thread, histograms copied as each is loaded */
	assert_int_equal(pc_read_image(image, PROF_READ_LAZY | PROF_READ_LAZY_HIST, &lazy), 0);
	{
		struct prof_snapshot *ma = pc_merge_threads(full), *mb = pc_merge_threads(lazy);
		const struct prof_snap_thread *a, *b;

		assert_non_null(ma);
		assert_non_null(mb);
		a = &ma->threads[0];
		b = &mb->threads[0];
		assert_int_equal(a->overflow, b->overflow);
		snap_same_thread(mb, b, ma, a, false);
		pc_snap_free(ma);
		pc_snap_free(mb);
	}
	prof_snapshot__destroy(lazy);
	prof_snapshot__destroy(full);
}

/* profctl and the runtime read one name, PROF_SOCKET; PROFD_SOCKET too */
static void test_socket_names(void **state)
{
	(void)state;
	unsetenv("PROF_SOCKET");
	unsetenv("PROFD_SOCKET");
	assert_string_equal(profd_socket_path(), "/run/profd/profd.sock");
	setenv("PROFD_SOCKET", "/tmp/old.sock", 1);
	assert_string_equal(profd_socket_path(), "/tmp/old.sock");
	setenv("PROF_SOCKET", "/tmp/new.sock", 1);
	assert_string_equal(profd_socket_path(), "/tmp/new.sock");
	unsetenv("PROFD_SOCKET");
	assert_string_equal(profd_socket_path(), "/tmp/new.sock");
	unsetenv("PROF_SOCKET");
}

/* profctl args succeeds and writes out, printed; each of want (NULL-ended)
 * is in it; its text (free it) */
static char *output_holds(const char **args, const char *out, const char *const *want)
{
	char *text = run_text(args, out);
	size_t i;

	print_message("%s", text);
	for (i = 0; want[i]; i++)
		if (!strstr(text, want[i]))
			fail_msg("no '%s' in\n%s", want[i], text);
	return text;
}

/*
 * --callers of a name two sites share: a section each, told apart by
 * file:line as the tree does, never one merged; "NAME (FILE:LINE)" as the
 * rows print it selects one, in text, csv and json
 */
static void callers_of_two_sites(char *path, char *out)
{
	char *both = (char *)(uintptr_t) "lex", *one = (char *)(uintptr_t) "lex (other.cc:20)";
	char *inner = (char *)(uintptr_t) "lex (golden.c:30)";
	const char *text_both[] = { "report", "--input", path, "--callers", both, "-o", out, NULL };
	const char *text_one[] = { "report", "--input", path, "--callers", one, "-o", out, NULL };
	const char *csv_one[] = { "report", "--input", path, "--callers", inner, "--format", "csv",
				  "-o", out, NULL };
	const char *json_both[] = { "report", "--input", path, "--callers", both, "--format",
				    "json", "-o", out, NULL };
	char *text;

	text = output_holds(text_both, out, (const char *const[]){
		"\nlex names 2 sites, each below: --callers 'NAME (FILE:LINE)'",
		/* the outer one, main_loop's child: its child is the other lex */
		"callers of lex (other.cc:20): 100 calls, total 20.0ms, self 12.0ms, max 400us\n",
		"       100    20.0ms  100.0    main_loop\n",
		"      1000    8.00ms   40.0    lex (golden.c:30)\n",
		/* the inner one: called by the outer lex and by render */
		"callers of lex (golden.c:30): 1250 calls, total 14.0ms, self 14.0ms, max 60.0us\n",
		"      1000    8.00ms   57.1    lex (other.cc:20)\n", NULL });
	free(text);

	text = output_holds(text_one, out,
			    (const char *const[]){ "callers of lex (other.cc:20): 100 calls", NULL });
	assert_null(strstr(text, "callers of lex (golden.c:30)"));
	assert_null(strstr(text, "sites, each below"));
	free(text);

	text = output_holds(csv_one, out, (const char *const[]){
		"4242,golden,zone,lex (golden.c:30),1250,14000000\n",
		"4242,golden,parent,lex (other.cc:20),1000,8000000\n", NULL });
	assert_null(strstr(text, "zone,lex (other.cc:20)"));
	free(text);

	free(output_holds(json_both, out, (const char *const[]){
		"\"zone\":\"lex (other.cc:20)\",\"calls\":100,",
		"\"zone\":\"lex (golden.c:30)\",\"calls\":1250,", NULL }));
}

/*
 * Two sites of one name (C++ overloads, lambdas' operator()) are told
 * apart by file:line in the tree, the flat list and --callers (above), a name nobody shares
 * is not; the thread's frames and the allocations JSON has show in text.
 */
static void test_names_frames_allocs(void **state)
{
	char path[160], out[160];
	const char *tree[] = { "report", "--input", path, "-o", out, NULL };
	const char *flat[] = { "report", "--input", path, "--flat", "-o", out, NULL };
	struct prof_seg_hdr *h;
	struct prof_site_ent *e;
	struct prof_slab_hdr *main_slab;
	void *buf = NULL;
	size_t len = 0;
	char *text;

	(void)state;
	snprintf(path, sizeof(path), "%s/names.seg", dir);
	snprintf(out, sizeof(out), "%s/names.out", dir);
	assert_int_equal(fx_image(&buf, &len), 0);
	h = buf;
	/* "parse" (golden.c:20) becomes a second "lex", in another file */
	e = (struct prof_site_ent *)((char *)buf + h->sites_off + h->site_size);
	snprintf(e->name, sizeof(e->name), "lex");
	snprintf(e->file, sizeof(e->file), "src/other.cc");
	main_slab = (struct prof_slab_hdr *)((char *)buf + h->slabs_off);
	main_slab->frames = 100;
	main_slab->frame_ticks = 1600000000;
	main_slab->frame_max = 20000000;
	test_spill(path, buf, len);
	free(buf);

	text = output_holds(tree, out, (const char *const[]){
		"└─ lex (other.cc:20)\n", "└─ lex (golden.c:30)\n", "  main_loop\n",
		", 100 frames avg 16.0ms max 20.0ms\n",
		"        20    80.0KiB          0          0  render > alloc_buf\n", NULL });
	assert_null(strstr(text, "main_loop ("));
	free(text);

	free(output_holds(flat, out, (const char *const[]){
		"  lex (other.cc:20)\n", "  lex (golden.c:30)", "        20    80.0KiB  alloc_buf\n",
		NULL }));
	callers_of_two_sites(path, out);
}

/* top without --pid: the newest live process, never an exited one while
 * one runs */
static void test_top_pick(void **state)
{
	struct pc_proc p[4];

	(void)state;
	memset(p, 0, sizeof(p));
	assert_int_equal(pc_top_pick(p, 0), -1);
	p[0].alive = true;
	p[0].created_ns = 100;
	p[1].alive = false;
	p[1].created_ns = 300;
	p[2].alive = true;
	p[2].created_ns = 200;
	p[3].alive = false;
	p[3].created_ns = 50;
	assert_int_equal(pc_top_pick(p, 4), 2);
	/* the exited one first in the list makes no difference */
	assert_int_equal(pc_top_pick(p + 1, 3), 1);
	p[2].alive = false;
	assert_int_equal(pc_top_pick(p, 4), 0);
	/* none runs: the newest that exited */
	p[0].alive = false;
	assert_int_equal(pc_top_pick(p, 4), 1);
}

/* top's rows fit any terminal from 40 columns, keep self and, from 42, the
 * whole name (up to 32 characters), and show the kernel columns when there */
static void test_top_layout(void **state)
{
	char heads[256];
	int cols, name, w, len;

	(void)state;
	for (len = 4; len <= 63; len += 59 / 4) {
		for (cols = 40; cols <= 240; cols++) {
			for (int sched = 0; sched < 2; sched++) {
				w = pc_top_layout(cols, sched, len, heads, sizeof(heads), &name);
				if (w > cols)
					fail_msg("%d columns, name %d, sched %d: rows of %d", cols,
						 len, sched, w);
				assert_non_null(strstr(heads, "self/s"));
				/* self/s and the name's 32 need 42 */
				if (cols >= 42)
					assert_true(name >= (len < 32 ? len : 32));
				assert_true(name <= len || name == 4);
			}
		}
	}
	pc_top_layout(200, true, 20, heads, sizeof(heads), &name);
	assert_string_equal(heads, "calls/s,%self,self/s,total/s,avg/call,max,on-cpu/s,"
				   "preempt/s,blocked/s,migr/s,self/s history");
	pc_top_layout(200, false, 20, heads, sizeof(heads), &name);
	assert_null(strstr(heads, "on-cpu/s"));
	/* 80 columns, short names: every column, the history narrowed */
	w = pc_top_layout(80, false, 12, heads, sizeof(heads), &name);
	assert_string_equal(heads, "calls/s,%self,self/s,total/s,avg/call,max,self/s history");
	assert_int_equal(name, 12);
	assert_true(w <= 80);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_tree_txt),
		cmocka_unit_test(test_golden_tree_total_txt),
		cmocka_unit_test(test_golden_tree_calls_txt),
		cmocka_unit_test(test_golden_tree_p99_txt),
		cmocka_unit_test(test_golden_tree_tid_txt),
		cmocka_unit_test(test_golden_tree_color_txt),
		cmocka_unit_test(test_golden_threads_txt),
		cmocka_unit_test(test_golden_flat_txt),
		cmocka_unit_test(test_golden_flat_total_txt),
		cmocka_unit_test(test_golden_callers_lex_txt),
		cmocka_unit_test(test_golden_callers_fib_txt),
		cmocka_unit_test(test_golden_tree_json),
		cmocka_unit_test(test_golden_threads_json),
		cmocka_unit_test(test_golden_flat_json),
		cmocka_unit_test(test_golden_callers_json),
		cmocka_unit_test(test_golden_tree_csv),
		cmocka_unit_test(test_golden_flat_csv),
		cmocka_unit_test(test_golden_callers_csv),
		cmocka_unit_test(test_csv_quoting),
		cmocka_unit_test(test_golden_tree_folded),
		cmocka_unit_test(test_golden_threads_folded),
		cmocka_unit_test(test_golden_report_html),
		cmocka_unit_test(test_golden_tree_oncpu_txt),
		cmocka_unit_test(test_golden_flat_self_oncpu_txt),
		cmocka_unit_test(test_golden_oncpu_folded),
		cmocka_unit_test(test_threads_exited),
		cmocka_unit_test(test_callers_sums),
		cmocka_unit_test(test_merge_and_flat),
		cmocka_unit_test(test_baseline),
		cmocka_unit_test(test_zones_readelf),
		cmocka_unit_test(test_fmt_like_printf),
		cmocka_unit_test(test_ns_like_long_double),
		cmocka_unit_test(test_lazy_read),
		cmocka_unit_test(test_socket_names),
		cmocka_unit_test(test_top_pick),
		cmocka_unit_test(test_names_frames_allocs),
		cmocka_unit_test(test_top_layout),
		cmocka_unit_test(test_json_input),
		cmocka_unit_test(test_json_input_diff),
		cmocka_unit_test(test_json_input_corrupt),
		cmocka_unit_test(test_json_utf8),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

