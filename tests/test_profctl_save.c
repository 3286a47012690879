// SPDX-License-Identifier: MIT
/*
 * test_profctl_save.c - profiles as files: `profctl save` then
 * `report --input` gives what the live report gives, in every view and
 * format; PROF_SAVE writes the file at exit; the file is a small part of
 * the segment; a truncated, corrupt or foreign file gets one line and
 * exit status 1, never a crash.  A JSON report read with --input renders
 * as the live report too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "fmt.h"
#include "proffile.h"
#include "prof.h"
#include "profd_private.h"

static char dir[64];
static pid_t child = -1, child_pid = -1;
static __u64 child_token; /* read while it runs: its segments outlive it */
static struct child prog;
static volatile unsigned long sink;

static void sv_leaf(void)
{
	PROF_USDT(sv_leaf);
	for (int i = 0; i < 100; i++)
		sink += (unsigned long)i;
}

static void sv_rec(int n)
{
	PROF_USDT(sv_rec);
	sink += (unsigned long)n;
	if (n > 0)
		sv_rec(n - 1);
}

static void sv_outer(void)
{
	PROF_USDT(sv_outer);
	sv_leaf();
	sv_rec(2);
}

static void *sv_worker(void *arg)
{
	unsigned int n = *(unsigned int *)arg;

	PROF_THREAD_NAME("sv-worker");
	for (unsigned int i = 0; i < n; i++)
		sv_leaf();
	/*
	 * off CPU a while: a thread always on CPU can read a little more CPU
	 * than wall time, which a full read (save) clamps to the wall time
	 * and a lazy one (report) does not yet
	 */
	usleep(2000);
	return NULL;
}

/* the child's round: n outer calls and a thread of n leaf calls */
static void saving_round(unsigned int n)
{
	pthread_t t;

	for (unsigned int i = 0; i < n; i++)
		sv_outer();
	if (!pthread_create(&t, NULL, sv_worker, &n))
		pthread_join(t, NULL);
}

static void drive(unsigned int n)
{
	test_live_drive(&prog, n);
}

/* the child saves itself at exit (test_prof_save reads it) and keeps its
 * segment (for test_round_trip's post-mortem report) */
static void saving_before(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/atexit.%%p.prof", dir);
	setenv("PROF_SAVE", path, 1);
	setenv("PROF_KEEP", "1", 1);
}

static int setup(void **state)
{
	(void)state;
	if (test_live_setup("test_profctl_save", dir, &prog, saving_before, saving_round))
		return -1;
	child = child_pid = prog.pid;
	child_token = prof_proc_start_token(child);
	return 0;
}

static void child_exit(void)
{
	if (child <= 0)
		return;
	test_live_stop(&prog);
	child = -1;
}

static int teardown(void **state)
{
	char paths[4][96];
	size_t i, n;

	(void)state;
	child_exit();
	/* the kept segment */
	n = test_seg_paths(child_pid, child_token, paths, 4);
	for (i = 0; i < n; i++)
		unlink(paths[i]);
	return test_rm_rf(dir);
}

/* profctl with args (NULL-terminated); stdout into out, stderr into err
 * (each if set); exit status */
static int run_io(const char *out, const char **args, char *err, size_t errlen)
{
	return test_profctl_run_io(dir, out, args, err, errlen);
}

/* the views and formats a saved file must render as the live process does */
static const char *const views[][4] = {
	{ NULL },
	{ "--flat", NULL },
	{ "--flat", "--sort", "calls", NULL },
	{ "--callers", "sv_leaf", NULL },
	{ "--merge-threads", NULL },
	{ "--merge-threads", "--format", "json", NULL },
	{ "--format", "json", NULL },
	{ "--format", "csv", NULL },
	{ "--format", "folded", NULL },
	{ "--format", "html", NULL },
	{ "--flat", "--format", "json", NULL },
	{ "--callers", "sv_rec", "--format", "json" },
};

/* argv: profctl report SRC... VIEW... */
static void report_args(const char **argv, const char *const *src, const char *const *view)
{
	int n = 0;

	argv[n++] = "report";
	while (*src)
		argv[n++] = *src++;
	for (int i = 0; i < 4 && view[i]; i++)
		argv[n++] = view[i];
	argv[n] = NULL;
}

/*
 * The html report of a live process (its segment kept) has its timeline,
 * from the event rings; a file keeps no rings, its page says so: the
 * timeline's data, taken out of a, must be there, and is all that differs.
 */
static void html_untraced(char *a)
{
	const char *key = "const TRACE = ";
	char *p = strstr(a, key), *e;

	if (!p)
		return;
	p += strlen(key);
	e = strstr(p, ";\n");
	assert_non_null(e);
	if (strncmp(p, "{\"displayTimeUnit\":", strlen("{\"displayTimeUnit\":")))
		fail_msg("the live page's timeline: %.60s", p);
	memmove(p + 4, e, strlen(e) + 1);
	memcpy(p, "null", 4);
}

/* s with what each sampling state says cut out (a live process's and its
 * saved file's differ: profd was asked, the file has what was saved) */
static void state_cut(char *s)
{
	static const char *const mark[][2] = { { "stack samples: ", "\n" },
					       { "\"samples_state\":\"", "\"" } };
	size_t m;

	for (m = 0; m < sizeof(mark) / sizeof(mark[0]); m++)
		for (char *p = strstr(s, mark[m][0]); p; p = strstr(p, mark[m][0])) {
			char *e;

			p += strlen(mark[m][0]);
			e = strstr(p, mark[m][1]);
			assert_non_null(e);
			memmove(p, e, strlen(e) + 1);
		}
}

/* s with every from replaced by to (s realloc'd) */
static char *replace_all(char *s, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), n = 0;
	char *p, *r, *o;

	for (p = strstr(s, from); p; p = strstr(p + fl, from))
		n++;
	if (!n)
		return s;
	r = malloc(strlen(s) + n * tl + 1);
	assert_non_null(r);
	for (o = r, p = s;;) {
		char *q = strstr(p, from);

		if (!q)
			break;
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, tl);
		o += tl;
		p = q + fl;
	}
	strcpy(o, p);
	free(s);
	return r;
}

/* a name's byte of no UTF-8 sequence as a JSON report brings it back: the
 * writer escapes it as the code point of its value (\u00XX, docs/reports.md), read
 * back as that character; NULL when the names have none */
static const char *const *json_bytes;

/* every view of `report --input file` is what `report --pid pid
 * --since-start` gives; what: the file's kind, for the message */
static void views_equal(const char *pid, const char *file, const char *what)
{
	const char *const lsrc[] = { "--pid", pid, "--since-start", NULL };
	const char *const fsrc[] = { "--input", file, NULL };
	char live[128], saved[128], err[512];
	const char *argv[16];
	size_t v;

	snprintf(live, sizeof(live), "%s/live.out", dir);
	snprintf(saved, sizeof(saved), "%s/saved.out", dir);
	for (v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		char *a, *b;

		report_args(argv, lsrc, views[v]);
		assert_int_equal(run_io(live, argv, NULL, 0), 0);
		report_args(argv, fsrc, views[v]);
		assert_int_equal(run_io(saved, argv, err, sizeof(err)), 0);
		assert_string_equal(err, "");
		a = test_slurp(live, NULL);
		b = test_slurp(saved, NULL);
		assert_non_null(a);
		assert_non_null(b);
		assert_true(strlen(a) > 20);
		if (strstr(b, "const TRACE = "))
			html_untraced(a);
		state_cut(a);
		state_cut(b);
		for (size_t k = 0; json_bytes && json_bytes[k]; k += 2)
			a = replace_all(a, json_bytes[k], json_bytes[k + 1]);
		if (strcmp(a, b)) {
			char cmd[400];

			snprintf(cmd, sizeof(cmd), "diff -u %s %s >&2", live, saved);
			if (system(cmd)) { /* the diff is the message */
			}
			fail_msg("%s, view %zu (%s %s): the %s's report differs", file, v,
				 views[v][0] ? views[v][0] : "tree", views[v][1] ? views[v][1] : "",
				 what);
		}
		free(a);
		free(b);
	}
}

/*
 * Every view of a saved file is the live report of the process it was
 * saved from.  Compared once the process has exited (its segment kept):
 * a live report of a running process counts its threads' wall time to
 * the moment of the read, a file to the moment of the save.  Both files
 * are compared, the one `save` wrote after the exit and the one PROF_SAVE
 * wrote at it.
 */
static void test_round_trip(void **state)
{
	char pid[16], file[128], atexit_file[128], err[512];
	const char *files[2] = { file, atexit_file };
	int f;

	(void)state;
	drive(30);
	snprintf(pid, sizeof(pid), "%d", (int)child_pid);
	child_exit();
	snprintf(file, sizeof(file), "%s/run.prof", dir);
	snprintf(atexit_file, sizeof(atexit_file), "%s/atexit.%s.prof", dir, pid);
	{
		const char *a[] = { "save", "--pid", pid, "--since-start", "-o", file, NULL };


		assert_int_equal(run_io(NULL, a, err, sizeof(err)), 0);
		assert_string_equal(err, "");
	}
	for (f = 0; f < 2; f++)
		views_equal(pid, files[f], "saved file");
}

/*
 * A process of its own on the monotonic clock (its ticks are ns, as a JSON
 * report's times are), named comm, its segment kept: 20 outer calls and a
 * thread running worker; a JSON report at exit to report_json if not NULL.
 * Its pid once it has exited, its start token in *token.
 */
static pid_t mono_child(const char *comm, void *(*worker)(void *), const char *report_json,
			__u64 *token)
{
	struct child c;
	pid_t pid;
	int st;

	if (child_start(&c) == 0) {
		unsigned int k = 20;
		pthread_t t;

		setenv("PROF_CLOCK", "mono", 1);
		setenv("PROF_KEEP", "1", 1);
		if (report_json) {
			setenv("PROF_REPORT", report_json, 1);
			setenv("PROF_REPORT_FORMAT", "json", 1);
		}
		unsetenv("PROF_SAVE");
		prctl(PR_SET_NAME, comm);
		for (unsigned int i = 0; i < k; i++)
			sv_outer();
		if (!pthread_create(&t, NULL, worker, &k))
			pthread_join(t, NULL);
		/* the parent reads its start token while it lives */
		child_hear(&c);
		exit(0);
	}
	pid = c.pid;
	*token = prof_proc_start_token(pid);
	st = child_end(&c);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return pid;
}

/*
 * A JSON report read back with --input (the one PROF_REPORT_FORMAT=json
 * wrote at exit, and the one `report --format json` wrote after it) gives
 * every view the live report gives.  A process of its own on the
 * monotonic clock: its ticks are ns, as the JSON's times are (with the
 * TSC, what is derived again from a node's ns, a percentile, a sum, can
 * round a ns apart).
 */
static void test_json_round_trip(void **state)
{
	char pid[16], atexit_json[128], json[128], live[128], err[512];
	char paths[4][96];
	const char *files[2] = { atexit_json, json };
	__u64 token;
	size_t v, n;
	pid_t c;
	int f;

	(void)state;
	snprintf(atexit_json, sizeof(atexit_json), "%s/mono.atexit.json", dir);
	snprintf(json, sizeof(json), "%s/mono.json", dir);
	snprintf(live, sizeof(live), "%s/live.out", dir);
	/* a command of non-ASCII name: every JSON says it alike */
	c = mono_child("sv-ex\xc3\xa9", sv_worker, atexit_json, &token);
	snprintf(pid, sizeof(pid), "%d", (int)c);
	{
		const char *j[] = { "report", "--pid", pid, "--since-start", "--format", "json", NULL };

		assert_int_equal(run_io(json, j, err, sizeof(err)), 0);
		assert_string_equal(err, "");
	}
	/* its name as it is, valid UTF-8, in list's JSON, the JSON report's
	 * and the flat view's (it was "sv-ex\u00c3\u00a9" in two of them) */
	for (f = 0; f < 3; f++) {
		const char *l[] = { "list", "--format", "json", NULL };
		const char *fl[] = { "report", "--pid", pid, "--flat", "--format", "json", NULL };
		char *text;

		if (f < 2)
			assert_int_equal(run_io(live, f ? fl : l, NULL, 0), 0);
		text = test_slurp(f < 2 ? live : json, NULL);
		assert_non_null(text);
		assert_non_null(strstr(text, "\"comm\":\"sv-ex\xc3\xa9\""));
		free(text);
	}
	for (f = 0; f < 2; f++)
		views_equal(pid, files[f], "JSON report");
	/* one of version 3 (before samples, annotations and the sampling
	 * state) reads the same */
	{
		char v3[128], key[32], *text = test_slurp(json, NULL);

		snprintf(key, sizeof(key), "{\"version\":%d,", PROF_REPORT_JSON_VERSION);
		assert_int_equal(PROF_REPORT_JSON_VERSION, 4);
		assert_non_null(text);
		assert_int_equal(strncmp(text, key, strlen(key)), 0);
		text[strlen(key) - 2] = '3';
		snprintf(v3, sizeof(v3), "%s/mono.v3.json", dir);
		test_spill(v3, text, strlen(text));
		free(text);
		views_equal(pid, v3, "version 3 JSON report");
	}
	n = test_seg_paths(c, token, paths, 4);
	for (v = 0; v < n; v++)
		unlink(paths[v]);
}

/* hostile names: a quote, a backslash, a newline, a tab, control bytes,
 * a byte that is no UTF-8, markup; comm's 15 bytes of it */
#define HOSTILE_COMM "q\"b\\n\nt\t\x01\xff<&"
static const char hostile_thread[] = "w\"k\\r\nx\ty\x1f\x7f\xc3(<b>&amp;'";

static void *hostile_worker(void *arg)
{
	char *big = malloc(4096);

	/* a name of 4 KiB first: it is cut, not a crash; then the hostile one */
	if (big) {
		memset(big, 'n', 4095);
		big[4095] = '\0';
		PROF_THREAD_NAME(big);
		free(big);
	}
	PROF_THREAD_NAME(hostile_thread);
	for (unsigned int i = 0; i < *(unsigned int *)arg; i++)
		sv_leaf();
	usleep(2000);
	return NULL;
}

/* a check of a report's text by python3 (its json and csv modules); 0 if
 * it holds */
static int py_check(const char *path, const char *code)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "python3 -c '%s' %s", code, path);
	return system(cmd);
}

/*
 * Names with quotes, backslashes, newlines, control bytes and bytes that
 * are no UTF-8, in a command's name and a thread's: the saved file and the
 * JSON report read back render every view as the live process does (but a
 * byte of no UTF-8, which JSON brings back as the character of its value:
 * json_bytes), the
 * JSON is JSON (no raw control byte in a string), every CSV row has the
 * header's fields, every folded line ends in its count, and the HTML page
 * holds no markup of theirs.
 */
static void test_hostile_names(void **state)
{
	char pid[16], file[128], json[128], out[128], err[512];
	char paths[4][96];
	int i;
	__u64 token;
	size_t v, n;
	pid_t c;

	(void)state;
	snprintf(file, sizeof(file), "%s/hostile.prof", dir);
	snprintf(json, sizeof(json), "%s/hostile.json", dir);
	snprintf(out, sizeof(out), "%s/hostile.out", dir);
	c = mono_child(HOSTILE_COMM, hostile_worker, NULL, &token);
	snprintf(pid, sizeof(pid), "%d", (int)c);
	{
		const char *a[] = { "save", "--pid", pid, "--since-start", "-o", file, NULL };
		const char *j[] = { "report", "--pid", pid, "--since-start", "--format", "json",
				    NULL };

		assert_int_equal(run_io(NULL, a, err, sizeof(err)), 0);
		assert_string_equal(err, "");
		assert_int_equal(run_io(json, j, err, sizeof(err)), 0);
		assert_string_equal(err, "");
	}
	views_equal(pid, file, "saved file");
	{
		/* the thread name's lone 0xc3, raw in text and escaped in JSON */
		static const char *const back[] = { "\xc3(", "\xc3\x83(", "\\u00c3(",
						    "\xc3\x83(", NULL };

		json_bytes = back;
		views_equal(pid, json, "JSON report");
		json_bytes = NULL;
	}
	/* each format of the live report, escaped as its syntax wants */
	for (i = 0; i < 5; i++) {
		static const char *const fmt[] = { "json", "csv", "folded", "html", "text" };
		static const char *const check[] = {
			/* strict: a raw control byte in a string is refused */
			"import json,sys; d=json.load(open(sys.argv[1],encoding=\"utf-8\",errors=\"surrogateescape\"));"
			"s=json.dumps(d); assert \"w\" + chr(92) + chr(34) + \"k\" in s, s[:300]",
			"import csv,sys; r=list(csv.reader(open(sys.argv[1],newline=\"\",errors=\"replace\")));"
			"assert len(r) > 2 and all(len(x) == len(r[0]) for x in r), r",
			"import re,sys; t=open(sys.argv[1],\"rb\").read().decode(\"utf-8\",\"replace\");"
			"ls=t.splitlines(); assert ls and all(re.search(r\" [0-9]+$\", l) for l in ls), ls",
			"import sys; t=open(sys.argv[1],\"rb\").read();"
			"assert b\"(<b>\" not in t and b\"\\n\\t\\x01\" not in t",
			/* the thread's title on one line: none starts with its name's rest */
			"import sys; t=open(sys.argv[1],\"rb\").read();"
			"assert not any(l.startswith(b\"x\") for l in t.split(b\"\\n\")), t[:400]",
		};
		const char *r[] = { "report", "--pid", pid, "--since-start", "--format", fmt[i],
				    NULL };

		assert_int_equal(run_io(out, r, NULL, 0), 0);
		if (py_check(out, check[i]))
			fail_msg("--format %s: the hostile names break its syntax (%s)", fmt[i], out);
	}
	n = test_seg_paths(c, token, paths, 4);
	for (v = 0; v < n; v++)
		unlink(paths[v]);
}

/* the file is what is used, not the segment's size */
static void test_compact(void **state)
{
	char paths[4][96], pid[16], file[128];
	struct stat seg, st;

	(void)state;
	drive(5);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	snprintf(file, sizeof(file), "%s/small.prof", dir);
	{
		const char *a[] = { "save", "--pid", pid, "-o", file, NULL };

		assert_int_equal(run_io(NULL, a, NULL, 0), 0);
	}
	assert_int_equal(test_seg_paths(child, prof_proc_start_token(child), paths, 4), 1);
	assert_int_equal(stat(paths[0], &seg), 0);
	assert_int_equal(stat(file, &st), 0);
	/* a few nodes in two threads: a few KB, not the segment's MB */
	assert_true(st.st_size < 64 * 1024);
	assert_true(st.st_size * 100 < seg.st_size);
}

/*
 * --last without profd (the tests' PROFCTL_NO_DAEMON) measures the next
 * DURATION, as report does, rather than refusing: an idle process's
 * window holds none of the calls it made before.
 */
static void test_last_measured(void **state)
{
	char pid[16], file[128], json[128], err[512];
	const char *p;
	char *text;
	int zones = 0;

	(void)state;
	/* the child idles between drives: test_compact's calls are before */
	snprintf(pid, sizeof(pid), "%d", (int)child);
	snprintf(file, sizeof(file), "%s/last.prof", dir);
	snprintf(json, sizeof(json), "%s/last.json", dir);
	{
		const char *a[] = { "save", "--pid", pid, "--last", "1s", "-o", file, NULL };
		const char *j[] = { "report", "--input", file, "--format", "json", NULL };

		assert_int_equal(run_io(NULL, a, err, sizeof(err)), 0);
		assert_non_null(strstr(err, "measuring the next 1s"));
		assert_int_equal(run_io(json, j, NULL, 0), 0);
	}
	text = test_slurp(json, NULL);
	assert_non_null(text);
	/* zones, each with no call in the window */
	for (p = strstr(text, "\"calls\":"); p; p = strstr(p + 1, "\"calls\":")) {
		/* "calls":0, not "calls":N nor "calls":0N */
		assert_int_equal(p[8], '0');
		assert_false(p[9] >= '0' && p[9] <= '9');
		zones++;
	}
	assert_true(zones > 0);
	free(text);
}

/*
 * A JSON report is distrusted: a count read back negative or fractional
 * is refused with one line naming the field, not wrapped to a huge count
 * nor truncated to a whole one.
 */
static void test_json_bad_counts(void **state)
{
	static const char *const bad[] = { "-1", "1.5", "-0.5", "1e3" };
	char pid[16], json[128], edited[128], err[512];
	const char *j[] = { "report", "--pid", pid, "--since-start", "--format", "json", NULL };
	const char *in[] = { "report", "--input", edited, NULL };
	char *text, *buf, *p, *q;
	size_t len, i;

	(void)state;
	/* test_compact's calls (a drive here would change test_prof_save's) */
	snprintf(pid, sizeof(pid), "%d", (int)child);
	snprintf(json, sizeof(json), "%s/counts.json", dir);
	snprintf(edited, sizeof(edited), "%s/counts.bad.json", dir);
	assert_int_equal(run_io(json, j, NULL, 0), 0);
	text = test_slurp(json, &len);
	assert_non_null(text);
	/* as written, it reads back */
	test_spill(edited, text, len);
	assert_int_equal(run_io("/dev/null", in, err, sizeof(err)), 0);
	p = strstr(text, "\"calls\":");
	assert_non_null(p);
	p += strlen("\"calls\":");
	for (q = p; *q >= '0' && *q <= '9'; q++)
		;
	buf = malloc(len + 16);
	assert_non_null(buf);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int n = snprintf(buf, len + 16, "%.*s%s%s", (int)(p - text), text, bad[i], q);

		test_spill(edited, buf, (size_t)n);
		assert_int_not_equal(run_io("/dev/null", in, err, sizeof(err)), 0);
		if (!strstr(err, "\"calls\" is not a count"))
			fail_msg("calls %s: %s", bad[i], err);
	}
	/* refused for a zone whose name holds a newline: still one line */
	{
		char *file = strstr(text, "\"file\":\""), *name = file, *open;

		assert_non_null(file);
		while (name > text && strncmp(name, "\"name\":\"", 8))
			name--;
		open = strstr(file, "\"open\":");
		assert_non_null(open);
		open += strlen("\"open\":");
		snprintf(buf, len + 16, "%.*s\\n%.*s7%s", (int)(name + 8 - text), text,
			 (int)(open - name - 8), name + 8, open + 1);
		test_spill(edited, buf, strlen(buf));
		assert_int_not_equal(run_io("/dev/null", in, err, sizeof(err)), 0);
		if (!strstr(err, "out of range") || strchr(err, '\n') != err + strlen(err) - 1)
			fail_msg("not one line: %s", err);
	}
	/* not JSON at all, near a raw newline inside a string: jansson's
	 * message quotes it, the reason is still one line */
	{
		static const char raw[] = "{\"version\":3,\"processes\":[{\"comm\":\"a\\\n b\"}]}";

		test_spill(edited, raw, sizeof(raw) - 1);
		assert_int_not_equal(run_io("/dev/null", in, err, sizeof(err)), 0);
		if (!strstr(err, "not a JSON report") || strchr(err, '\n') != err + strlen(err) - 1)
			fail_msg("not one line: %s", err);
	}
	free(buf);
	free(text);
}

/* profctl x and y run, each to succeed; their outputs in *a and *b */
static void run_two(const char **x, const char **y, char **a, char **b)
{
	char out[2][128];

	snprintf(out[0], sizeof(out[0]), "%s/two.0.out", dir);
	snprintf(out[1], sizeof(out[1]), "%s/two.1.out", dir);
	assert_int_equal(run_io(out[0], x, NULL, 0), 0);
	assert_int_equal(run_io(out[1], y, NULL, 0), 0);
	*a = test_slurp(out[0], NULL);
	*b = test_slurp(out[1], NULL);
	assert_non_null(*a);
	assert_non_null(*b);
}

/*
 * Options that no other test ran (tests/check_options.py lists them from
 * profctl's own option tables), each run for what it says: without profd
 * (--no-daemon, as the tests' PROFCTL_NO_DAEMON), since a reset no one
 * took (the same as since the start: the folded stacks match), a diff
 * against a live process since its reset, and a trace of the last second.
 */
static void test_options_rest(void **state)
{
	char pid[16], f1[128], f2[128], out[128], err[512];
	char *a, *b;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)child);
	snprintf(f1, sizeof(f1), "%s/opt1.prof", dir);
	snprintf(f2, sizeof(f2), "%s/opt2.prof", dir);
	snprintf(out, sizeof(out), "%s/opt.out", dir);
	{
		const char *st[] = { "status", "--no-daemon", NULL };

		assert_int_equal(run_io(out, st, NULL, 0), 0);
		a = test_slurp(out, NULL);
		assert_non_null(a);
		assert_non_null(strstr(a, "profd: not asked"));
		free(a);
	}
	{
		const char *s1[] = { "save", "--pid", pid, "--no-daemon", "-o", f1, NULL };
		const char *s2[] = { "save", "--pid", pid, "--since-reset", "-o", f2, NULL };
		const char *r1[] = { "report", "--input", f1, "--format", "folded", NULL };
		const char *r2[] = { "report", "--input", f2, "--format", "folded", NULL };

		assert_int_equal(run_io(NULL, s1, err, sizeof(err)), 0);
		assert_int_equal(run_io(NULL, s2, err, sizeof(err)), 0);
		run_two(r1, r2, &a, &b);
		assert_non_null(strstr(a, "sv_outer"));
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	{
		const char *d1[] = { "diff", "--no-daemon", f1, f2, NULL };
		const char *d2[] = { "diff", "--since-reset", f1, pid, NULL };

		run_two(d1, d2, &a, &b);
		assert_non_null(strstr(a, "zones ("));
		assert_non_null(strstr(b, "NEW "));
		assert_non_null(strstr(b, pid));
		free(a);
		free(b);
	}
	{
		const char *t[] = { "trace", "--pid", pid, "--last", "1s", "-o", out, NULL };

		assert_int_equal(run_io(NULL, t, err, sizeof(err)), 0);
		a = test_slurp(out, NULL);
		assert_non_null(a);
		assert_int_equal(a[0], '{');
		free(a);
	}
}

/*
 * Every option of every verb is run by some test: the list comes from
 * profctl's option tables (tests/check_options.py), so an option added
 * without a test fails here.
 */
/* the tree's tests/script run with the profctl built beside this test
 * (.output[/SAN]/profctl; a sanitizer's make tests-san builds none: then
 * the plain one, .output/profctl) as its argument: its exit status */
static int run_tree_script(const char *script)
{
	char exe[4200], path[4096], cmd[8400], *slash;
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);

	assert_true(n > 0);
	path[n] = 0;
	snprintf(exe, sizeof(exe), "%s", path);
	/* the tree this test was built in: up from .output[/SAN]/tests/ */
	while ((slash = strrchr(path, '/'))) {
		*slash = 0;
		snprintf(cmd, sizeof(cmd), "%s/tests/%s", path, script);
		if (!access(cmd, R_OK))
			break;
	}
	assert_non_null(slash);
	*strrchr(exe, '/') = 0;
	strcat(exe, "/../profctl");
	if (access(exe, X_OK))
		snprintf(exe, sizeof(exe), "%s/.output/profctl", path);
	snprintf(cmd, sizeof(cmd), "python3 %s/tests/%s %s", path, script, exe);
	return system(cmd);
}

static void test_every_option_run(void **state)
{
	(void)state;
	assert_int_equal(run_tree_script("check_options.py"), 0);
}

/*
 * Every option of every verb that takes a number or a keyword refuses a
 * malformed one (empty, no number, a tail, negative, past 64 bits) with
 * exit status 2 and one line quoting it (tests/check_option_values.py).
 */
static void test_every_option_value_refused(void **state)
{
	(void)state;
	assert_int_equal(run_tree_script("check_option_values.py"), 0);
}

/*
 * A JSON report with any one of its keys removed or of the wrong type is
 * refused in one line naming it, but the figures derived again and two
 * keys older reports lack (tests/check_json_keys.py).
 */
static void test_json_every_key_checked(void **state)
{
	(void)state;
	assert_int_equal(run_tree_script("check_json_keys.py"), 0);
}

/*
 * Every byte of a name as the text views print it (prof_fmt_name,
 * prof_put_name): each control byte, DEL among them, as '?', every other
 * byte (UTF-8's too) as it is.
 */
static void test_name_bytes(void **state)
{
	char name[4] = "a?z", buf[8], put[8];
	unsigned c;

	(void)state;
	for (c = 1; c < 256; c++) {
		bool ctl = c < 0x20 || c == 0x7f;

		name[1] = (char)c;
		prof_fmt_name(buf, sizeof(buf), name);
		*prof_put_name(put, name) = 0;
		assert_string_equal(buf, put);
		if ((buf[1] == '?') != (ctl || c == '?') || (!ctl && buf[1] != (char)c))
			fail_msg("byte 0x%02x printed as 0x%02x", c, (unsigned char)buf[1]);
	}
}

/* a header's strings are read ended, whatever bytes the file has there
 * (a file is distrusted: one with no NUL in its comm or cgroup) */
static void test_header_strings_ended(void **state)
{
	struct prof_snapshot *s;
	struct prof_file_hdr h, *fh;
	size_t flen;
	void *file;

	(void)state;
	s = test_snapshot(child);
	assert_non_null(s);
	assert_int_equal(prof_file_encode(s, &file, &flen), 0);
	fh = file;
	memset(fh->comm, 'c', sizeof(fh->comm));
	memset(fh->cgroup, 'g', sizeof(fh->cgroup));
	assert_int_equal(prof_file_check(file, flen, PROF_FILE_IMAGE_MAX, &h), 0);
	assert_true(strnlen(h.comm, sizeof(h.comm)) < sizeof(h.comm));
	assert_true(strnlen(h.cgroup, sizeof(h.cgroup)) < sizeof(h.cgroup));
	free(file);
	prof_snapshot__destroy(s);
}

/*
 * Threads merged into one (--threads) keep every figure: each node figure
 * set, in every thread, to a value of its own, the merged thread's nodes
 * sum to what all threads' did, figure by figure.
 */
#define MERGE_FIGS                                                                            \
	X(calls) X(ticks) X(preempted) X(migrated) X(offcpu_ns) X(anomalies) X(allocs)        \
		X(alloc_bytes) X(frees) X(free_bytes) X(blocked) X(kernel_calls)

static void test_merge_every_figure(void **state)
{
	struct prof_snapshot *s, *m;
	__u64 k, want[16] = { 0 }, got[16] = { 0 };
	__u32 i, j;

	(void)state;
	s = test_snapshot(child);
	assert_non_null(s);
	assert_true(s->nthreads > 1);
	for (i = 0; i < s->nthreads; i++)
		for (j = 1; j < s->threads[i].nnodes; j++) {
			struct prof_snap_node *n = &s->threads[i].nodes[j];

			k = 0;
#define X(f) (n->f = 100 * (k + 1) + i + j, want[k++] += n->f);
			MERGE_FIGS
#undef X
		}
	m = pc_merge_threads(s);
	assert_non_null(m);
	assert_int_equal(m->nthreads, 1);
	for (j = 1; j < m->threads[0].nnodes; j++) {
		const struct prof_snap_node *n = &m->threads[0].nodes[j];

		k = 0;
#define X(f) got[k++] += n->f;
		MERGE_FIGS
#undef X
	}
	k = 0;
#define X(f)                                                                                  \
	if (got[k] != want[k])                                                                \
		fail_msg("merged: " #f " %llu, the threads' %llu", (unsigned long long)got[k],   \
			 (unsigned long long)want[k]);                                        \
	k++;
	MERGE_FIGS
#undef X
	prof_snapshot__destroy(m);
	prof_snapshot__destroy(s);
}

/* encode, check, decode: the image prof_snapshot__write gives, exactly */
static void test_encode_decode(void **state)
{
	struct prof_snapshot *s;
	struct prof_file_hdr h;
	void *img, *file, *back;
	size_t ilen, flen;

	(void)state;
	drive(3);
	s = test_snapshot(child);
	assert_non_null(s);
	assert_int_equal(prof_snapshot__write(s, &img, &ilen), 0);
	/* a container's pid and cgroup travel in the header */
	s->ns_pid = 7;
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", "docker-abc.scope");
	assert_int_equal(prof_file_encode(s, &file, &flen), 0);
	assert_true(flen < ilen);
	assert_int_equal(prof_file_check(file, flen, PROF_FILE_IMAGE_MAX, &h), 0);
	assert_int_equal(h.image_size, ilen);
	assert_int_equal(h.pid, (unsigned int)child);
	assert_string_equal(h.comm, s->comm);
	assert_int_equal(h.ns_pid, 7);
	assert_string_equal(h.cgroup, "docker-abc.scope");
	back = calloc(1, ilen);
	assert_non_null(back);
	assert_int_equal(prof_file_decode(file, flen, back, ilen, 0), 0);
	assert_memory_equal(back, img, ilen);
	/* a file of the first, shorter header: read, with no container */
	{
		size_t cut = sizeof(h) - PROF_FILE_HDR_MIN, olen = flen - cut;
		char *old = malloc(olen);
		struct prof_file_hdr oh;

		assert_non_null(old);
		memcpy(old, file, PROF_FILE_HDR_MIN);
		memcpy(old + PROF_FILE_HDR_MIN, (char *)file + sizeof(h), flen - sizeof(h));
		((struct prof_file_hdr *)(void *)old)->hdr_size = PROF_FILE_HDR_MIN;
		assert_int_equal(prof_file_check(old, olen, PROF_FILE_IMAGE_MAX, &oh), 0);
		assert_int_equal(oh.ns_pid, 0);
		assert_string_equal(oh.cgroup, "");
		memset(back, 0, ilen);
		assert_int_equal(prof_file_decode(old, olen, back, ilen, 0), 0);
		assert_memory_equal(back, img, ilen);
		free(old);
	}
	/* a newer writer's longer header: what this reader knows of it, the
	 * rest skipped */
	{
		size_t grow = 64, nlen = flen + grow;
		char *nw = calloc(1, nlen);
		struct prof_file_hdr nh;

		assert_non_null(nw);
		memcpy(nw, file, sizeof(h));
		memcpy(nw + sizeof(h) + grow, (char *)file + sizeof(h), flen - sizeof(h));
		((struct prof_file_hdr *)(void *)nw)->hdr_size = (__u32)(sizeof(h) + grow);
		assert_int_equal(prof_file_check(nw, nlen, PROF_FILE_IMAGE_MAX, &nh), 0);
		assert_int_equal(nh.ns_pid, 7);
		memset(back, 0, ilen);
		assert_int_equal(prof_file_decode(nw, nlen, back, ilen, 0), 0);
		assert_memory_equal(back, img, ilen);
		/* a header size that is not a header's */
		((struct prof_file_hdr *)(void *)nw)->hdr_size = PROF_FILE_HDR_MIN - 8;
		assert_int_equal(prof_file_check(nw, nlen, PROF_FILE_IMAGE_MAX, NULL), -EINVAL);
		((struct prof_file_hdr *)(void *)nw)->hdr_size = PROF_FILE_HDR_MAX + 8;
		assert_int_equal(prof_file_check(nw, nlen, PROF_FILE_IMAGE_MAX, NULL), -EINVAL);
		free(nw);
	}
	/* a max below the image refuses it */
	assert_int_equal(prof_file_check(file, flen, ilen - 8, NULL), PROF_FILE_E_BIG);
	/* one flipped byte in the body: the hash says so */
	((char *)file)[flen - 3] ^= 0x40;
	memset(back, 0, ilen);
	assert_int_equal(prof_file_decode(file, flen, back, ilen, 0), PROF_FILE_E_HASH);
	free(back);
	free(file);
	free(img);
	prof_snapshot__destroy(s);
}

/* one line on stderr and status 1 for what is not a whole profile */
static void expect_refused(const char *path, const char *says)
{
	char err[512], out[128];
	const char *a[] = { "report", "--input", path, NULL };
	const char *nl;

	snprintf(out, sizeof(out), "%s/refused.out", dir);
	assert_int_equal(run_io(out, a, err, sizeof(err)), 1);
	nl = strchr(err, '\n');
	if (!nl || nl[1] || !strstr(err, says))
		fail_msg("%s: want one line saying '%s', got '%s'", path, says, err);
}

static void test_refused(void **state)
{
	char pid[16], file[128], bad[128], json[128];
	struct prof_file_hdr h;
	size_t len, cut;
	char *buf;

	(void)state;
	drive(2);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	snprintf(file, sizeof(file), "%s/whole.prof", dir);
	snprintf(bad, sizeof(bad), "%s/bad.prof", dir);
	snprintf(json, sizeof(json), "%s/run.json", dir);
	{
		const char *a[] = { "save", "--pid", pid, "-o", file, NULL };
		const char *j[] = { "report", "--pid", pid, "--format", "json", NULL };

		assert_int_equal(run_io(NULL, a, NULL, 0), 0);
		assert_int_equal(run_io(json, j, NULL, 0), 0);
	}
	buf = test_slurp(file, &len);
	assert_non_null(buf);
	assert_true(len > sizeof(h) + 16);
	if (!buf || len <= sizeof(h) + 16)
		return; /* (not reached: for the compiler, which does not know) */
	/* every cut in the header and a spread of cuts in the body */
	for (cut = 0; cut < len; cut += cut < sizeof(h) + 16 ? 1 : 97) {
		test_spill(bad, buf, cut);
		expect_refused(bad, cut < PROF_FILE_MAGIC_LEN ? "not a profd profile"
							      : "truncated profile");
	}
	/* a flipped byte in the body */
	buf[len - 5] ^= 1;
	test_spill(bad, buf, len);
	expect_refused(bad, "checksum");
	buf[len - 5] ^= 1;
	/* a newer version */
	memcpy(&h, buf, sizeof(h));
	h.version = PROF_FILE_VERSION_SAMPLES + 1;
	memcpy(buf, &h, sizeof(h));
	test_spill(bad, buf, len);
	expect_refused(bad, "a version this profctl does not read");
	/* trailing bytes */
	h.version = PROF_FILE_VERSION;
	memcpy(buf, &h, sizeof(h));
	test_spill(bad, buf, len);
	{
		FILE *f = fopen(bad, "a");

		assert_non_null(f);
		fputs("junk", f);
		fclose(f);
	}
	expect_refused(bad, "corrupt profile");
	free(buf);
	/* a FIFO (another user can leave one in /tmp): refused, not waited on
	 * (a wait ends the program) */
	unlink(bad);
	assert_int_equal(mkfifo(bad, 0600), 0);
	alarm(30);
	expect_refused(bad, "a FIFO of uid");
	/* and `zones` of it: no ELF, said at once */
	{
		const char *z[] = { "zones", bad, NULL };
		char err[512], out[128];

		snprintf(out, sizeof(out), "%s/zones.out", dir);
		assert_int_not_equal(run_io(out, z, err, sizeof(err)), 0);
		assert_non_null(strstr(err, "not an ELF file"));
	}
	alarm(0);
	unlink(bad);
	/* the JSON report is read (test_round_trip: as the live one); cut
	 * short anywhere, refused */
	{
		const char *a[] = { "report", "--input", json, NULL };
		char out[128];

		snprintf(out, sizeof(out), "%s/json.out", dir);
		assert_int_equal(run_io(out, a, NULL, 0), 0);
	}
	buf = test_slurp(json, &len);
	assert_non_null(buf);
	for (cut = 0; cut < len - 2; cut += 53) {
		test_spill(bad, buf, cut);
		expect_refused(bad, cut ? "not a JSON report" : "not a profd profile");
	}
	free(buf);
}

/* PROF_SAVE=PATH (%p: the pid): the file at exit is the profile as it
 * ended (test_round_trip made the child exit) */
static void test_prof_save(void **state)
{
	char path[128], out[128], pid[16];
	const char *a[] = { "report", "--input", path, "--flat", "--format", "csv", NULL };
	struct stat st;
	char *text, key[64];
	const char *p;
	long calls;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)child_pid);
	snprintf(path, sizeof(path), "%s/atexit.%s.prof", dir, pid);
	assert_int_equal(stat(path, &st), 0);
	snprintf(out, sizeof(out), "%s/atexit.csv", dir);
	assert_int_equal(run_io(out, a, NULL, 0), 0);
	text = test_slurp(out, NULL);
	assert_non_null(text);
	/* every drive of this run: 5 + 3 + 2 + 30 outer calls */
	snprintf(key, sizeof(key), ",sv_outer,");
	p = strstr(text, key);
	assert_non_null(p);
	assert_int_equal(sscanf(p + strlen(key), "%ld", &calls), 1);
	assert_int_equal(calls, 5 + 3 + 2 + 30);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_last_measured),
		cmocka_unit_test(test_json_bad_counts),
		cmocka_unit_test(test_options_rest),
		cmocka_unit_test(test_every_option_run),
		cmocka_unit_test(test_every_option_value_refused),
		cmocka_unit_test(test_name_bytes),
		cmocka_unit_test(test_json_every_key_checked),
		cmocka_unit_test(test_encode_decode),
		cmocka_unit_test(test_merge_every_figure),
		cmocka_unit_test(test_header_strings_ended),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_hostile_names),
		/* these two end the child */
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_prof_save),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
