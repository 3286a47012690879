// SPDX-License-Identifier: MIT
/*
 * test_report.c - the reports a process writes about itself:
 * PROF_REPORT=PATH prints at exit a call tree per thread with the right
 * zones, nesting and calls, and a flat list; PROF_REPORT_FORMAT=json writes
 * JSON that python's json module loads, with processes -> threads -> nodes
 * carrying name, calls, total_ns, self_ns, max_ns, p50_ns, p99_ns and
 * children; PROF_LOG_INTERVAL=0.2 logs per-thread lines with zone,
 * time/interval, percent and calls, whose arithmetic is checked exactly on
 * snapshots made by hand.
 */
#include <math.h>
#include <pthread.h>

#include "fastpath.h"
#include "prof.h"
#include "runtime.h"

#define OUTER_CALLS 10

static void rep_inner(void)
{
	PROF_USDT(rep_inner);
	test_spin(20000);
}

static void rep_work(void)
{
	int i;

	for (i = 0; i < OUTER_CALLS; i++) {
		PROF_USDT(rep_outer);
		rep_inner();
		rep_inner();
	}
}

static void *rep_thread(void *arg)
{
	(void)arg;
	PROF_THREAD_NAME("rep-thread");
	{
		PROF_USDT(rep_threaded);
		test_spin(100000);
	}
	return NULL;
}

/* a child that reports to path (in format fmt, NULL for text) at exit; its pid */
static pid_t report_child(const char *path, const char *fmt)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t th;

		setenv("PROF_REPORT", path, 1);
		if (fmt)
			setenv("PROF_REPORT_FORMAT", fmt, 1);
		rep_work();
		if (pthread_create(&th, NULL, rep_thread, NULL) || pthread_join(th, NULL))
			_exit(3);
		exit(0);
	}
	assert_true(test_exited_ok(test_wait(pid, 30)));
	return pid;
}

/* a file's text, which must be there */
static char *slurp(const char *path)
{
	char *buf = test_slurp(path, NULL);

	assert_non_null(buf);
	return buf;
}

static void test_text_report(void **state)
{
	char path[] = "/tmp/prof-report.XXXXXX", line[512], want[64];
	const char *flat, *p;
	unsigned long long calls;
	char *out;
	pid_t pid;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	pid = report_child(path, NULL);
	out = slurp(path);
	unlink(path);
	print_message("%s", out);

	snprintf(want, sizeof(want), "prof: pid %d ", (int)pid);
	assert_true(!strncmp(out, want, strlen(want)));
	/* the tree: rep_outer at the top, rep_inner drawn under it */
	flat = strstr(out, "flat, by self time");
	assert_non_null(flat);
	p = test_line_with(out, "  rep_outer", line, sizeof(line));
	assert_non_null(p);
	assert_true(p < flat);
	assert_int_equal(sscanf(line, "%llu", &calls), 1);
	assert_int_equal(calls, OUTER_CALLS);
	p = test_line_with(p, "rep_inner", line, sizeof(line));
	assert_non_null(p);
	assert_true(p < flat);
	assert_non_null(strstr(line, "└─ rep_inner"));
	assert_int_equal(sscanf(line, "%llu", &calls), 1);
	assert_int_equal(calls, 2 * OUTER_CALLS);
	/* the named thread, exited, with its zone */
	p = test_line_with(out, "thread rep-thread (tid ", line, sizeof(line));
	assert_non_null(p);
	assert_non_null(strstr(line, ")  exited, wall "));
	assert_non_null(test_line_with(p, "rep_threaded", line, sizeof(line)));
	/* the flat list holds every zone once */
	assert_non_null(test_line_with(flat, "  rep_inner", line, sizeof(line)));
	assert_int_equal(sscanf(line, "%llu", &calls), 1);
	assert_int_equal(calls, 2 * OUTER_CALLS);
	assert_non_null(test_line_with(flat, "  rep_outer", line, sizeof(line)));
	assert_non_null(test_line_with(flat, "  rep_threaded", line, sizeof(line)));
	free(out);
}

static const char json_check[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"pid = int(sys.argv[2])\n"
	"keys = ('name', 'calls', 'total_ns', 'self_ns', 'max_ns', 'p50_ns', 'p99_ns', "
	"'children')\n"
	"found = {}\n"
	"def walk(n, parent):\n"
	"    for k in keys:\n"
	"        assert k in n, 'node without ' + k\n"
	"    assert n['self_ns'] <= n['total_ns'], n['name']\n"
	"    if n['calls']:\n"
	"        assert n['p50_ns'] <= n['p99_ns'] <= n['max_ns'] <= n['total_ns'], n['name']\n"
	"    assert sum(c['total_ns'] for c in n['children']) <= n['total_ns'], n['name']\n"
	"    found[(parent, n['name'])] = n\n"
	"    for c in n['children']:\n"
	"        walk(c, n['name'])\n"
	"procs = [p for p in d['processes'] if p['pid'] == pid]\n"
	"assert len(procs) == 1, 'process missing'\n"
	"names = []\n"
	"for t in procs[0]['threads']:\n"
	"    names.append(t['name'])\n"
	"    for n in t['nodes']:\n"
	"        walk(n, None)\n"
	"assert 'rep-thread' in names, names\n"
	"assert found[(None, 'rep_outer')]['calls'] == int(sys.argv[3])\n"
	"assert found[('rep_outer', 'rep_inner')]['calls'] == 2 * int(sys.argv[3])\n"
	"assert found[('rep_outer', 'rep_inner')]['total_ns'] >= 2 * int(sys.argv[3]) * 20000\n"
	"assert found[(None, 'rep_threaded')]['calls'] == 1\n"
	"print('json ok')\n";

static void test_json_report(void **state)
{
	char path[] = "/tmp/prof-report.XXXXXX", script[] = "/tmp/prof-check.XXXXXX";
	char cmd[256];
	FILE *f;
	pid_t pid;
	int fd, rc;

	(void)state;
	if (system("command -v python3 >/dev/null 2>&1")) {
		print_message("skip: no python3 to validate the JSON\n");
		skip();
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	fd = mkstemp(script);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(json_check, f);
	fclose(f);
	pid = report_child(path, "json");
	snprintf(cmd, sizeof(cmd), "python3 %s %s %d %d", script, path, (int)pid, OUTER_CALLS);
	rc = system(cmd);
	if (rc) {
		char *out = slurp(path);

		print_message("%s\n", out);
		free(out);
	}
	unlink(path);
	unlink(script);
	assert_int_equal(rc, 0);
}

/* PROF_LOG_INTERVAL is read when the segment is made: a fresh process */
static int log_child(void)
{
	__u64 end;

	fprintf(stderr, "log-child tid %u\n", test_gettid());
	end = test_now_ns() + 1200000000ull;
	while (test_now_ns() < end) {
		PROF_USDT(log_zone);
		test_spin(10000000);
	}
	return 0;
}

static void test_log_interval(void **state)
{
	static const char *const env[] = { "PROF_LOG_INTERVAL=0.2", "PROF_NO_DAEMON=1", NULL };
	char path[] = "/tmp/prof-log.XXXXXX", want[64];
	const char *p;
	unsigned long long sum = 0;
	unsigned tid = 0, lines = 0;
	char *out;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_true(test_exited_ok(test_reexec("--log", env, 30, path)));
	out = slurp(path);
	unlink(path);
	print_message("%s", out);
	assert_int_equal(sscanf(out, "log-child tid %u", &tid), 1);
	/* the main thread has no PROF_THREAD_NAME: its comm names it */
	snprintf(want, sizeof(want), "prof: test_report tid %u log_zone: ", tid);
	/*
	 * End to end: the lines come, each self-consistent.  The numbers are
	 * test_log_arithmetic's to check, known in advance; here the interval
	 * is measured, so however late the logger woke it is at least the
	 * one asked for, and a thread that spins in the zone fills most of it.
	 */
	for (p = strstr(out, want); p; p = strstr(p + 1, want)) {
		double in, iv, pct;
		unsigned long long calls;
		/* the interval the loop ends in is inside the zone only until then */
		int last = !strstr(p + 1, want);

		assert_int_equal(sscanf(p + strlen(want), "%lfs/%lfs %lf%% %llu calls", &in, &iv,
					&pct, &calls),
				 4);
		assert_true(iv >= 0.1995);
		/* clamped to the interval; the percent of the times printed, to
		 * their rounding (the interval's to a millisecond) */
		assert_true(in <= iv + 0.0005);
		assert_true(fabs(pct - 100.0 * in / iv) <= 0.3);
		assert_true((last || pct > 50) && pct <= 100.0);
		assert_true(calls > 0);
		sum += calls;
		lines++;
	}
	/* 1.2 s at 0.2 s: several intervals with a previous one to diff */
	assert_true(lines >= 2);
	/* no call counted twice: at most 1.2 s / 10 ms of them */
	assert_true(sum <= 120);
	free(out);
}

/*
 * The logger's arithmetic, on snapshots made by hand: an interval is the
 * later snapshot minus the earlier, per thread and zone (nested zones
 * too), converted at the process's tick rate; zones that did not run in
 * it print nothing.
 */
struct lg_node {
	__u32 site, parent;
	__u64 calls, ticks;
};

static struct prof_snapshot *lg_snapshot(const struct lg_node *src, __u32 n)
{
	static struct prof_snap_site sites[3] = { { .name = "log_a", .func = "a", .file = "l.c" },
						  { .name = "log_b", .func = "b", .file = "l.c" },
						  { .name = "log_c", .func = "c", .file = "l.c" } };
	struct prof_snap_node nodes[8];
	struct prof_snap_thread th;
	struct prof_snapshot s, *out = NULL;
	size_t len;
	void *buf;
	__u32 i;

	assert_true(n <= 8);
	memset(nodes, 0, sizeof(nodes));
	for (i = 0; i < n; i++) {
		nodes[i].site = src[i].site;
		nodes[i].parent = src[i].parent;
		nodes[i].calls = src[i].calls;
		nodes[i].ticks = src[i].ticks;
		nodes[i].max = src[i].calls ? src[i].ticks / src[i].calls : 0;
	}
	memset(&th, 0, sizeof(th));
	th.tid = 77;
	strcpy(th.name, "lg");
	th.state = PROF_SLAB_ALIVE;
	th.ksched_slot = PROF_NO_SLOT;
	th.nnodes = n;
	th.nodes = nodes;
	memset(&s, 0, sizeof(s));
	s.pid = 4242;
	s.start_token = 99;
	s.clock = PROF_CLOCK_TSC;
	s.tick_hz = 2000000000ull; /* two ticks a nanosecond */
	s.nsites = 3;
	s.nthreads = 1;
	s.sites = sites;
	s.threads = &th;
	assert_int_equal(prof_snapshot__write(&s, &buf, &len), 0);
	assert_int_equal(prof_snapshot__read(buf, len, &out), 0);
	free(buf);
	return out;
}

static void test_log_arithmetic(void **state)
{
	/* root, overflow, log_a, log_b, log_c under log_a */
	static const struct lg_node before[] = {
		{ PROF_SITE_NONE, 0, 0, 0 },
		{ PROF_SITE_NONE, 0, 0, 0 },
		{ 0, 0, 10, 600000000 },
		{ 1, 0, 3, 2000000 },
	};
	static const struct lg_node after[] = {
		{ PROF_SITE_NONE, 0, 0, 0 }, { PROF_SITE_NONE, 0, 0, 0 }, { 0, 0, 25, 900000000 },
		{ 1, 0, 3, 2000000 },	     { 2, 2, 2, 2000000 },
	};
	struct prof_snapshot *prev = lg_snapshot(before, 4), *cur = lg_snapshot(after, 5);
	struct prof_snapshot *other;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	prof_logger__lines(f, cur, prev, 200000000);
	fclose(f);
	/* log_a: 15 calls, 300 Mticks = 150 ms of 200; log_c: 2 calls, 1 ms;
	 * log_b did not run */
	assert_string_equal(text, "prof: lg tid 77 log_a: 0.150000s/0.200s 75.0% 15 calls\n"
				  "prof: lg tid 77 log_c: 0.001000s/0.200s 0.5% 2 calls\n");
	free(text);
	prof_snapshot__destroy(cur);

	/* against a snapshot of another process: nothing */
	cur = lg_snapshot(after, 5);
	other = lg_snapshot(before, 4);
	other->start_token = 100;
	text = NULL;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	prof_logger__lines(f, cur, other, 200000000);
	fclose(f);
	assert_string_equal(text, "");
	free(text);
	prof_snapshot__destroy(other);
	prof_snapshot__destroy(cur);
	prof_snapshot__destroy(prev);
}

static const struct test_child_mode children[] = { { "--log", log_child }, { NULL, NULL } };

/* the tests set the report's variables they want */
static void env(void)
{
	unsetenv("PROF_REPORT");
	unsetenv("PROF_REPORT_FORMAT");
	unsetenv("PROF_LOG_INTERVAL");
}

TEST_MAIN_CHILDREN(NULL, NULL, children, env, cmocka_unit_test(test_text_report),
		   cmocka_unit_test(test_json_report), cmocka_unit_test(test_log_interval),
		   cmocka_unit_test(test_log_arithmetic))
