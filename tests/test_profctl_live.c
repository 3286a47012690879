// SPDX-License-Identifier: MIT
/*
 * test_profctl_live.c - profctl against a live annotated process (a forked
 * child that runs zones on command), reading its segment directly:
 * flat totals equal the sum over the tree, callers sum to the zone, reset
 * then N calls reports exactly N, the json validates against
 * tests/report.schema.json, list and top see the process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "prof.h"
#include "profd_private.h"

static char dir[64];
static struct child prog;

static volatile unsigned long sink;

static void live_rec(int n)
{
	PROF_USDT(live_rec);
	sink += (unsigned long)n;
	if (n > 0)
		live_rec(n - 1);
}

static void live_inner(void)
{
	PROF_USDT(live_inner);
	for (int i = 0; i < 200; i++)
		sink += (unsigned long)i;
}

static void live_outer(void)
{
	PROF_USDT(live_outer);
	live_inner();
	live_rec(3);
}

static void live_other(void)
{
	PROF_USDT(live_other);
	live_inner();
}

/* the child's round: n outer calls (and n/2 other calls) */
static void live_round(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		live_outer();
		if (i % 2)
			live_other();
	}
}

static void drive(unsigned int n)
{
	test_live_drive(&prog, n);
}

static int setup(void **state)
{
	(void)state;
	return test_live_setup("test_profctl_live", dir, &prog, NULL, live_round);
}

static int teardown(void **state)
{
	(void)state;
	test_live_stop(&prog);
	return test_rm_rf(dir);
}

/* profctl with args; stdout into out, stderr into err (each if set); exit
 * status */
static int run_io(const char *out, const char **args, char *err, size_t errlen)
{
	return test_profctl_run_io(dir, out, args, err, errlen);
}

static int run(const char *out, const char **args)
{
	return run_io(out, args, NULL, 0);
}

static struct prof_snapshot *snap(int mode)
{
	struct pc_src src;
	struct prof_snapshot *s = NULL;

	pc_src_open(&src, true);
	assert_int_equal(pc_src_snapshot(&src, prog.pid, mode, 0, &s), 0);
	pc_src_close(&src);
	return s;
}

static const struct prof_snap_site *site_named(const struct prof_snapshot *s, __u32 i)
{
	return i < s->nsites ? &s->sites[i] : NULL;
}

/* the flat view is the tree summed: calls and self everywhere, total over
 * outermost instances only */
static void test_flat_equals_tree(void **state)
{
	struct prof_snapshot *s;
	struct prof_flat_row *rows = NULL;
	size_t n = 0, r;

	(void)state;
	drive(40);
	s = snap(PROFD_SNAP_START);
	assert_int_equal(prof_snap_flat(s, 0, PROF_SORT_SELF, &rows, &n), 0);
	assert_true(n >= 4);
	for (r = 0; r < n; r++) {
		__u64 calls = 0, self = 0, total = 0;
		__u32 i, j;

		for (i = 0; i < s->nthreads; i++) {
			const struct prof_snap_thread *t = &s->threads[i];

			for (j = 1; j < t->nnodes; j++) {
				if (t->nodes[j].site != rows[r].site)
					continue;
				calls += t->nodes[j].calls;
				self += prof_snap_self(&t->nodes[j]);
				if (!prof_snap_is_recursive(t, j))
					total += t->nodes[j].ticks;
			}
		}
		assert_int_equal(rows[r].calls, calls);
		assert_int_equal(rows[r].self, self);
		assert_int_equal(rows[r].ticks, total);
		if (site_named(s, rows[r].site) &&
		    !strcmp(site_named(s, rows[r].site)->name, "live_rec"))
			assert_int_equal(calls, 4 * 40);
	}
	free(rows);
	prof_snapshot__destroy(s);
}

static void test_callers_sum(void **state)
{
	static const char *const zones[] = { "live_inner", "live_rec", "live_outer" };
	struct prof_snapshot *s;
	size_t z;

	(void)state;
	drive(10);
	s = snap(PROFD_SNAP_START);
	for (z = 0; z < 3; z++) {
		struct pc_callers c;

		test_callers_hold(s, zones[z], &c);
		if (!strcmp(zones[z], "live_inner"))
			assert_int_equal(c.nparents, 2);
		pc_callers_free(&c);
	}
	prof_snapshot__destroy(s);
}

/* calls of zone in a flat csv report */
static long csv_calls(const char *text, const char *zone)
{
	char key[96];
	const char *p;
	long calls;

	snprintf(key, sizeof(key), ",%s,", zone);
	p = strstr(text, key);
	if (!p || sscanf(p + strlen(key), "%ld", &calls) != 1)
		return -1;
	return calls;
}

static void test_reset_then_n(void **state)
{
	char pid[16], out[128];
	const char *reset[] = { "reset", "--pid", pid, "--no-daemon", NULL };
	const char *report[] = { "report", "--pid", pid, "--flat", "--format", "csv", NULL };
	const char *start[] = { "report", "--pid",	   pid, "--flat", "--format",
				"csv",	  "--since-start", NULL };
	char *text;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(out, sizeof(out), "%s/reset.csv", dir);
	drive(25);
	assert_int_equal(run(NULL, reset), 0);
	/* nothing since the reset */
	text = test_profctl_text(out, report, NULL);
	assert_true(csv_calls(text, "live_outer") <= 0);
	free(text);

	drive(37);
	assert_int_equal(run(out, report), 0);
	text = test_slurp(out, NULL);
	assert_int_equal(csv_calls(text, "live_outer"), 37);
	assert_int_equal(csv_calls(text, "live_other"), 18);
	assert_int_equal(csv_calls(text, "live_inner"), 37 + 18);
	assert_int_equal(csv_calls(text, "live_rec"), 4 * 37);
	free(text);

	/* twice more: the baseline moves */
	assert_int_equal(run(NULL, reset), 0);
	drive(5);
	assert_int_equal(run(out, report), 0);
	text = test_slurp(out, NULL);
	assert_int_equal(csv_calls(text, "live_outer"), 5);
	free(text);

	/* --since-start ignores it */
	assert_int_equal(run(out, start), 0);
	text = test_slurp(out, NULL);
	assert_true(csv_calls(text, "live_outer") >= 25 + 37 + 5);
	free(text);
}

static void test_json_schema(void **state)
{
	char pid[16], t[128], f[128], c[128];
	const char *a1[] = { "report", "--pid", pid, "--format", "json", "--since-start", NULL };
	const char *a2[] = { "report", "--pid", pid, "--format", "json", "--flat", NULL };
	const char *a3[] = { "report", "--pid",	    pid,	  "--format",
			     "json",   "--callers", "live_inner", NULL };

	(void)state;
	if (system("python3 -c 'import json' 2>/dev/null")) {
		fprintf(stderr, "python3 not available: cannot validate the schema\n");
		skip();
	}
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(t, sizeof(t), "%s/tree.json", dir);
	snprintf(f, sizeof(f), "%s/flat.json", dir);
	snprintf(c, sizeof(c), "%s/callers.json", dir);
	drive(3);
	assert_int_equal(run(t, a1), 0);
	assert_int_equal(run(f, a2), 0);
	assert_int_equal(run(c, a3), 0);
	assert_int_equal(
		test_sh("python3 tests/check_schema.py tests/report.schema.json %s %s %s", t, f, c),
		0);
	/* a document that breaks the schema is caught */
	assert_int_not_equal(
		test_sh("echo '{\"version\":1,\"view\":\"flat\",\"processes\":[{\"pid\":-1}]}' > "
			"%s/bad.json && python3 tests/check_schema.py tests/report.schema.json "
			"%s/bad.json >/dev/null",
			dir, dir),
		0);
}

static void test_list_and_top(void **state)
{
	char pid[16], out[128], want[64];
	const char *list[] = { "list", "--format", "json", "--no-daemon", NULL };
	const char *top[] = { "top", "--pid", pid, "-d", "0.05", "-n", "3", "--no-daemon", NULL };
	char *text;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(out, sizeof(out), "%s/list.json", dir);
	assert_int_equal(run(out, list), 0);
	text = test_slurp(out, NULL);
	snprintf(want, sizeof(want), "{\"pid\":%d,", (int)prog.pid);
	assert_non_null(strstr(text, want));
	free(text);

	drive(5);
	snprintf(out, sizeof(out), "%s/top.txt", dir);
	assert_int_equal(run(out, top), 0);
	text = test_slurp(out, NULL);
	/* max is the interval's, not since the start; a live process is not
	 * exited; plain frames without a terminal: no escapes */
	assert_all_in(text, "profctl top - pid", "live_outer", " max ");
	assert_none_in(text, "max(all)", "exited", "\033");
	free(text);
}

static void test_not_profiled(void **state)
{
	char pid[16];
	const char *a[] = { "report", "--pid", pid, "--no-daemon", NULL };

	(void)state;
	/* pid 1 runs but is not profiled (or not ours) */
	snprintf(pid, sizeof(pid), "1");
	assert_int_equal(run(NULL, a), 1);
}

/* a process that ran one zone and exited cleanly, its segment kept */
/*
 * The start tokens of the children forked here, read while each still had
 * its /proc entry (alive, or a zombie not yet reaped): a pid alone may
 * name a segment an earlier process of that pid left.
 */
static struct {
	pid_t pid;
	__u64 token;
} forked[64];

static void forked_add(pid_t p)
{
	static unsigned next;

	forked[next % 64].pid = p;
	forked[next % 64].token = prof_proc_start_token(p);
	next++;
}

static __u64 token_of(pid_t p)
{
	unsigned i;

	for (i = 0; i < 64; i++)
		if (forked[i].pid == p && forked[i].token)
			return forked[i].token;
	return prof_proc_start_token(p);
}

static pid_t exited_child(void)
{
	pid_t p = fork();
	int st;

	assert_true(p >= 0);
	if (p == 0) {
		setenv("PROF_KEEP", "1", 1);
		live_outer();
		exit(0);
	}
	forked_add(p);
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return p;
}

static void drop_segments(pid_t p)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -f /dev/shm/prof.%d.*", (int)p);
	assert_int_equal(system(cmd), 0);
}

/* profd asked and not there: one line says so and what profctl does
 * instead, for every verb that can use profd; nothing when told not to ask */
static void test_profd_missing_said_once(void **state)
{
	char pid[16], out[128], sock[128], want[256], err[1024];
	const char *report[] = { "report", "--pid", pid, "-o", out, NULL };
	const char *last[] = { "report", "--pid", pid, "--last", "1s", "-o", out, NULL };
	const char *reset[] = { "reset", "--pid", pid, NULL };
	const char *list[] = { "list", NULL };
	const char *top[] = { "top", "--pid", pid, "-d", "0.05", "-n", "1", NULL };
	const char *quiet[] = { "report", "--pid", pid, "--no-daemon", "-o", out, NULL };
	const char **verbs[] = { report, reset, list, top };
	size_t i;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(out, sizeof(out), "%s/missing.out", dir);
	snprintf(sock, sizeof(sock), "%s/nope.sock", dir);
	drive(2);
	setenv("PROFD_SOCKET", sock, 1);
	unsetenv("PROFCTL_NO_DAEMON");
	snprintf(want, sizeof(want),
		 "profctl: profd not running (%s): reading your own processes directly\n", sock);
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		int rc = run_io(i == 3 || i == 2 ? out : NULL, verbs[i], err, sizeof(err));

		if (rc != 0 || strcmp(err, want))
			fail_msg("profctl %s: exit %d, stderr '%s'", verbs[i][0], rc, err);
	}
	/* --last without profd measures instead, and says so in the same line */
	snprintf(want, sizeof(want),
		 "profctl: profd not running (%s): no history: measuring the next 1s of your own "
		 "processes directly\n",
		 sock);
	assert_int_equal(run_io(NULL, last, err, sizeof(err)), 0);
	assert_string_equal(err, want);
	/* told not to ask: nothing to say */
	assert_int_equal(run_io(NULL, quiet, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	setenv("PROFCTL_NO_DAEMON", "1", 1);
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		assert_int_equal(run_io(out, verbs[i], err, sizeof(err)), 0);
		assert_string_equal(err, "");
	}
	unsetenv("PROFD_SOCKET");
}

/* without profd, --last of a process that exited has nothing to wait for */
static void test_last_exited(void **state)
{
	char pid[16], want[160], err[512];
	const char *a[] = { "report", "--pid", pid, "--last", "3s", "--no-daemon", NULL };
	struct timespec t0, t1;
	pid_t p;
	int rc;

	(void)state;
	p = exited_child();
	snprintf(pid, sizeof(pid), "%d", (int)p);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = run_io(NULL, a, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	drop_segments(p);
	snprintf(want, sizeof(want),
		 "profctl: pid %d has exited: nothing to measure, and --last needs profd's "
		 "history\n",
		 (int)p);
	assert_int_equal(rc, 1);
	assert_string_equal(err, want);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
}

/* a process killed after a zone: no exit handler marked anything */
/* a process that ran one zone and waits, alive, for its SIGKILL */
static pid_t paused_child(void)
{
	struct child c;

	if (child_start(&c) == 0) {
		live_outer();
		child_say(&c, 'r');
		pause();
		_exit(0);
	}
	child_ready(&c);
	forked_add(child_leave(&c));
	return c.pid;
}

static pid_t killed_child(void)
{
	pid_t p = paused_child();
	int st;

	kill(p, SIGKILL);
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFSIGNALED(st));
	return p;
}

/* profctl args (their pid, 16 bytes, made p's) of the gone child p into
 * dir/name, which must succeed, its segments removed then: what profctl
 * wrote */
static char *text_of_gone(pid_t p, char *pid, const char *name, const char **args)
{
	char out[128], *text;
	int rc;

	snprintf(pid, 16, "%d", (int)p);
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	rc = run(out, args);

	drop_segments(p);
	assert_int_equal(rc, 0);
	text = test_slurp(out, NULL);
	assert_non_null(text);
	return text;
}

/* its segment says its threads are alive; /proc says the process is gone,
 * and the report says exited */
static void test_killed_is_exited(void **state)
{
	char pid[16], *text;
	const char *a[] = { "report", "--pid", pid, "--format", "json", "--no-daemon", NULL };

	(void)state;
	text = text_of_gone(killed_child(), pid, "killed.json", a);
	assert_all_in(text, "\"exited\":true", "\"state\":\"exited\"", "live_outer");
	assert_none_in(text, "\"state\":\"alive\"");
	free(text);
}

/* without profd, --last measures: the title says over how long */
static void test_last_span(void **state)
{
	char pid[16], out[128], unit[4] = "", *text, *at;
	const char *a[] = { "report", "--pid", pid, "--last", "1s", "--no-daemon", NULL };
	double v = 0;
	__u64 took;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(out, sizeof(out), "%s/last.txt", dir);
	took = now_ns();
	text = test_profctl_text(out, a, NULL);
	took = now_ns() - took;
	at = strstr(text, ", the last ");
	if (!at || sscanf(at + 11, "%lf%3[a-z]", &v, unit) != 2)
		fail_msg("no span in the title:\n%.300s", text);
	v *= !strcmp(unit, "s") ? 1e9 : !strcmp(unit, "ms") ? 1e6 : 0;
	/* a second's sleep between two reads, inside profctl's run (the
	 * title's three digits: 1% more) */
	assert_true(v >= 1e9 && v <= (double)took * 1.01);
	free(text);
}

/* without profd, --last N is the next N seconds, measured: the calls
 * before them are not in it */
static void test_last_window(void **state)
{
	char pid[16], out[128], *text;
	const char *report[] = { "report", "--pid", pid, "--last", "1s", "--no-daemon",
				 "--flat", "--format", "csv", NULL };

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(out, sizeof(out), "%s/window.csv", dir);
	drive(10);
	text = test_profctl_text(out, report, NULL);
	assert_true(csv_calls(text, "live_outer") <= 0);
	free(text);
}

/* top of a process that has gone says so in its header */
static void test_top_exited(void **state)
{
	char pid[16], want[64], *text;
	const char *top[] = { "top", "--pid", pid, "-d", "0.05", "-n", "2", "--no-daemon", NULL };
	pid_t p;

	(void)state;
	p = exited_child();
	text = text_of_gone(p, pid, "top_exited.txt", top);
	snprintf(want, sizeof(want), "profctl top - pid %d (", (int)p);
	assert_non_null(strstr(text, want));
	if (!strstr(text, ", exited) - all 1 thread - "))
		fail_msg("no exited in the header:\n%s", text);
	assert_non_null(strstr(text, "live_outer"));
	free(text);
}

/* a read-only mapping of a file of pages pages with a 7 at the start of
 * each, the file then cut to its first page; the fd in *fd */
static volatile unsigned char *shrunk_map(size_t pages, int prot, int *fd)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), i;
	char path[128];
	void *m;

	snprintf(path, sizeof(path), "%s/shrinks", dir);
	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(*fd >= 0);
	assert_int_equal(ftruncate(*fd, (off_t)(pages * pg)), 0);
	for (i = 0; i < pages; i += pages / 4 + 1)
		assert_int_equal(pwrite(*fd, "\7", 1, (off_t)(i * pg)), 1);
	m = mmap(NULL, pages * pg, prot, MAP_SHARED, *fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(ftruncate(*fd, (off_t)pg), 0);
	return m;
}

/*
 * Past a file's new end a read-only mapping reads zeros once profctl's
 * guard is on, and the guard says so; the rest of the mapping is patched
 * at the first fault, so reading it all costs one fault, not a mapping per
 * page (there are more pages here than vm.max_map_count allows mappings).
 */
static void test_bus_guard(void **state)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), pages = 70000, i;
	volatile unsigned char *m;
	unsigned int sum = 0;
	int fd;

	(void)state;
	m = shrunk_map(pages, PROT_READ, &fd);
	pc_bus_guard();
	assert_false(pc_bus_hit());
	assert_int_equal(m[0], 7);
	assert_false(pc_bus_hit());
	assert_int_equal(m[pg + 1], 0); /* SIGBUS without the guard */
	assert_true(pc_bus_hit());
	/* every other page: thousands of mappings if patched one by one */
	for (i = 2; i < pages; i += 2)
		sum += m[i * pg];
	assert_int_equal(sum, 0);
	munmap((void *)(uintptr_t)m, pages * pg);
	close(fd);
	signal(SIGBUS, SIG_DFL);
}

/* a writable mapping is not profctl's to patch: its SIGBUS stays fatal */
static void test_bus_guard_not_writable(void **state)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	pid_t p;
	int st;

	(void)state;
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		int fd;
		volatile unsigned char *m = shrunk_map(2, PROT_READ | PROT_WRITE, &fd);

		pc_bus_guard();
		_exit(m[pg] + 3);
	}
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);
}

/*
 * Remove the segments an earlier process with p's pid left: pids recur and
 * /dev/shm is shared with other runs, so clean --pid p would rightly take
 * them too.  While p is ours (alive or a zombie), no other process has its
 * pid, so a segment of that pid with another start token is a dead one's.
 */
static void drop_stale(pid_t p)
{
	struct prof_seg_ent *ents = NULL;
	size_t ne = 0, i;
	char cmd[512];

	assert_int_equal(prof_seg_list(getuid(), &ents, &ne), 0);
	for (i = 0; i < ne; i++)
		if (ents[i].pid == (__u32)p && ents[i].start_token != token_of(p))
			unlink(ents[i].path);
	free(ents);
	/* and reset baselines, profctl.<uid>.<pid>.<token>, where profctl
	 * keeps them and in /dev/shm, where clean also looks (an earlier
	 * test's process of the same pid may have left one there) */
	snprintf(cmd, sizeof(cmd),
		 "for d in %s /dev/shm; do cd $d && for f in profctl.%u.%d.*; do"
		 " [ \"$f\" = profctl.%u.%d.%llu ] || rm -f \"$f\"; done; done",
		 pc_baseline_dir(), (unsigned)getuid(), (int)p, (unsigned)getuid(), (int)p,
		 (unsigned long long)token_of(p));
	assert_int_equal(system(cmd), 0);
}

static bool seg_exists(pid_t p)
{
	char paths[1][96];

	return test_seg_paths(p, token_of(p), paths, 1) > 0;
}

/* p's one segment, opened read-only */
static int seg_open(pid_t p)
{
	char paths[2][96];

	assert_int_equal(test_seg_paths(p, token_of(p), paths, 2), 1);
	return open(paths[0], O_RDONLY);
}

/* a live process whose owner truncates its segment while top follows it:
 * top stops with one line, not a bus error */
static void test_top_truncated(void **state)
{
	char pid[16], seg[2][96], err[512] = "", buf[4096];
	const char *top[] = { "top", "--pid", pid, "-d", "0.05", "-n", "400", "--no-daemon", NULL };
	struct child r;
	size_t got = 0;
	ssize_t k;
	pid_t p;
	int st;

	(void)state;
	p = paused_child();
	snprintf(pid, sizeof(pid), "%d", (int)p);
	assert_int_equal(test_seg_paths(p, token_of(p), seg, 2), 1);

	if (child_start(&r) == 0) {
		dup2(r.wr, 1);
		/* a frame, then the next read of the segment faults */
		st = run_io(NULL, top, err, sizeof(err));
		/* one line: its newline is the last character */
		if (st == 1 && strstr(err, "truncated") &&
		    strchr(err, '\n') == err + strlen(err) - 1)
			_exit(42);
		fprintf(stderr, "exit %d, stderr:\n%s", st, err);
		_exit(1);
	}
	/* the first frame names the zone: then cut the segment to its header page */
	while (!memmem(buf, got, "live_outer", 10) && got < sizeof(buf) &&
	       (k = read(r.rd, buf + got, sizeof(buf) - got)) > 0)
		got += (size_t)k;
	assert_non_null(memmem(buf, got, "live_outer", 10));
	assert_int_equal(truncate(seg[0], 4096), 0);
	while (read(r.rd, buf, sizeof(buf)) > 0)
		;
	st = child_end(&r);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	drop_segments(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 42)
		fail_msg("top of a truncated segment: %s %d; want one line and exit 1",
			 WIFSIGNALED(st) ? "signal" : "exit",
			 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* clean removes what exited processes left, and nothing in use; --dry-run
 * removes nothing */
static void test_clean(void **state)
{
	char pid[16], out[128], *text, path[400], base[256];
	const char *dry[] = { "clean", "--pid", pid, "--dry-run", NULL };
	const char *one[] = { "clean", "--pid", pid, NULL };
	const char *reset[] = { "reset", "--pid", pid, "--no-daemon", NULL };
	struct prof_seg_ent *ents = NULL;
	size_t ne = 0, i;
	pid_t p, k;
	int fd;

	(void)state;
	snprintf(out, sizeof(out), "%s/clean.txt", dir);

	/* a live process: its segment stays, and the runtime holds it (the
	 * lock clean goes by across pid namespaces) */
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	drop_stale(prog.pid);
	assert_int_equal(run(out, one), 1);
	fd = seg_open(prog.pid);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	close(fd);

	/* an exited one: --dry-run names it and its reset baseline and keeps
	 * them, then they go */
	p = exited_child();
	drop_stale(p);
	snprintf(pid, sizeof(pid), "%d", (int)p);
	assert_int_equal(run(NULL, reset), 0);
	assert_int_equal(prof_seg_list(getuid(), &ents, &ne), 0);
	for (i = 0; i < ne && ents[i].pid != (__u32)p; i++)
		;
	assert_true(i < ne);
	assert_int_equal(pc_baseline_path(p, ents[i].start_token, base, sizeof(base)), 0);
	free(ents);
	assert_int_equal(access(base, F_OK), 0);
	assert_int_equal(run(out, dry), 0);
	text = test_slurp(out, NULL);
	snprintf(path, sizeof(path), "would remove /dev/shm/prof.%d.", (int)p);
	assert_non_null(strstr(text, path));
	snprintf(path, sizeof(path), "would remove %s (reset baseline of pid %d,", base, (int)p);
	assert_non_null(strstr(text, path));
	assert_non_null(strstr(text, "would remove 2 files, "));
	free(text);
	assert_true(seg_exists(p));
	assert_int_equal(access(base, F_OK), 0);
	assert_int_equal(run(out, one), 0);
	text = test_slurp(out, NULL);
	snprintf(path, sizeof(path), "removed /dev/shm/prof.%d.", (int)p);
	assert_non_null(strstr(text, path));
	free(text);
	assert_false(seg_exists(p));
	assert_int_equal(access(base, F_OK), -1);
	/* nothing left of it */
	assert_int_equal(run(out, one), 1);

	/* a baseline whose segment its process removed at exit goes too */
	p = exited_child();
	drop_stale(p);
	snprintf(pid, sizeof(pid), "%d", (int)p);
	assert_int_equal(run(NULL, reset), 0);
	drop_segments(p);
	assert_int_equal(run(out, one), 0);
	text = test_slurp(out, NULL);
	assert_non_null(strstr(text, "removed 1 file, "));
	free(text);

	/* a killed one that something holds as its process does (a shared
	 * flock, as from another pid namespace): it stays until released */
	k = killed_child();
	drop_stale(k);
	snprintf(pid, sizeof(pid), "%d", (int)k);
	fd = seg_open(k);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_SH), 0);
	assert_int_equal(run(out, one), 1);
	assert_true(seg_exists(k));
	close(fd);
	assert_int_equal(run(out, one), 0);
	assert_false(seg_exists(k));
}

/*
 * A process in another pid namespace (a container sharing /dev/shm): the
 * pid in its segment's name means another process here, and /proc cannot
 * tell it runs; its flock does.  Once it is gone its segment goes, also
 * when it shared this /proc (where "its" pid 1 is init, which runs on: its
 * start token must be its own, not init's).  Root only.
 */
/* what a failed clean_namespace leaves, for its teardown */
static pid_t ns_mid = -1;
static char ns_seg[128], ns_base[160];

static int teardown_ns(void **state)
{
	(void)state;
	if (ns_mid > 0) {
		kill(ns_mid, SIGKILL);
		waitpid(ns_mid, NULL, 0);
	}
	ns_mid = -1;
	if (ns_seg[0])
		unlink(ns_seg);
	ns_seg[0] = 0;
	/* a baseline left behind would make the next run's O_EXCL fail */
	if (ns_base[0])
		unlink(ns_base);
	ns_base[0] = 0;
	return 0;
}

/* the one path of after's na that is not among before's nb */
static bool new_path(char before[][96], size_t nb, char after[][96], size_t na, char *out,
		     size_t len)
{
	size_t i, j, n = 0;

	for (i = 0; i < na; i++) {
		for (j = 0; j < nb; j++)
			if (!strcmp(after[i], before[j]))
				break;
		if (j == nb && n++ == 0)
			snprintf(out, len, "%.95s", after[i]);
	}
	return n == 1;
}

static void clean_namespace(bool own_proc)
{
	char pid[16] = "1", out[128], *base = ns_base;
	const char *one[] = { "clean", "--pid", pid, NULL };
	unsigned long long token;
	int ready[2], st, fd;
	char before[8][96], after[9][96];
	size_t nb;
	char c;

	if (getuid() != 0) {
		printf("skip: a pid namespace needs root\n");
		skip();
	}
	snprintf(out, sizeof(out), "%s/clean_ns.txt", dir);
	/* pid 1 of another namespace: its token is not ours to read */
	nb = test_seg_paths(1, TEST_ANY_TOKEN, before, 8);
	assert_int_equal(pipe(ready), 0);
	ns_mid = fork();
	assert_true(ns_mid >= 0);
	if (ns_mid == 0) {
		pid_t in;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (unshare(CLONE_NEWPID | CLONE_NEWNS))
			_exit(77);
		in = fork();
		if (in == 0) {
			/* pid 1 here, with this namespace's /proc; gone with mid */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (own_proc && (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
					 mount("proc", "/proc", "proc", 0, NULL)))
				_exit(78);
			live_outer();
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		waitpid(in, NULL, 0);
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		waitpid(ns_mid, &st, 0);
		ns_mid = -1;
		if (WIFEXITED(st) && WEXITSTATUS(st) >= 77) {
			printf("skip: no pid namespace here (%d)\n", WEXITSTATUS(st));
			skip();
		}
		fail_msg("the namespaced child did not start");
	}
	close(ready[0]);
	assert_true(new_path(before, nb, after, test_seg_paths(1, TEST_ANY_TOKEN, after, 9), ns_seg,
			     sizeof(ns_seg)));
	/* a reset baseline of it (as profctl keeps one) */
	assert_int_equal(sscanf(ns_seg, "/dev/shm/prof.1.%llu", &token), 1);
	snprintf(base, sizeof(ns_base), "/dev/shm/profctl.%u.1.%llu", (unsigned int)getuid(), token);
	fd = open(base, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	/* running: kept with its baseline, however /proc here reads */
	assert_int_equal(run(out, one), 1);
	assert_int_equal(access(ns_seg, F_OK), 0);
	assert_int_equal(access(base, F_OK), 0);
	/* its namespace ends with its pid 1: then it goes */
	kill(ns_mid, SIGKILL);
	waitpid(ns_mid, NULL, 0);
	ns_mid = -1;
	/* the namespace's end is the kernel's to finish: wait for it, however loaded */
	for (__u64 end = now_ns() + 30000000000ull; now_ns() < end && access(ns_seg, F_OK) == 0;) {
		run(out, one);
		if (access(ns_seg, F_OK))
			break;
		usleep(10000);
	}
	assert_int_equal(access(ns_seg, F_OK), -1);
	assert_int_equal(access(base, F_OK), -1);
	ns_seg[0] = 0;
	ns_base[0] = 0;
}

/* with its own /proc, and sharing this one (where its pid 1 is init) */
static void test_clean_namespace(void **state)
{
	(void)state;
	clean_namespace(true);
	clean_namespace(false);
}

/* a file at path, of uid */
static void make_owned(const char *path, uid_t uid)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, uid, uid), 0);
	close(fd);
}

/*
 * clean (as root: every user's) takes for a reset baseline only a file
 * its name's uid owns, named exactly profctl.UID.PID.TOKEN or that and
 * .alt.RANDOM: another owner's under that name, or the name with another
 * tail, stays.
 */
static void test_clean_baseline_names(void **state)
{
	char pid[16], base[128], alt[160], tail[160], other[128];
	const char *one[] = { "clean", "--pid", pid, NULL };
	pid_t p;

	(void)state;
	if (getuid() != 0) {
		printf("skip: files of other users need root\n");
		skip();
	}
	p = exited_child();
	drop_segments(p);
	snprintf(pid, sizeof(pid), "%d", (int)p);
	snprintf(base, sizeof(base), "/dev/shm/profctl.65534.%d.12345", (int)p);
	snprintf(alt, sizeof(alt), "%s.alt.Xy12Zw", base);
	snprintf(tail, sizeof(tail), "%s.old", base);
	snprintf(other, sizeof(other), "/dev/shm/profctl.65533.%d.12345", (int)p);
	/* what a failed run of this test left, should the pid recur */
	unlink(tail);
	unlink(other);
	make_owned(base, 65534);
	make_owned(alt, 65534);
	make_owned(tail, 65534);
	/* named for 65533, planted by 65534 */
	make_owned(other, 65534);
	assert_int_equal(run(NULL, one), 0);
	assert_int_equal(access(base, F_OK), -1);
	assert_int_equal(access(alt, F_OK), -1);
	assert_int_equal(access(tail, F_OK), 0);
	assert_int_equal(access(other, F_OK), 0);
	unlink(tail);
	unlink(other);
}

/* a user cleans after themselves only: root's exited segment stays */
static void test_clean_other_user(void **state)
{
	pid_t p, u;
	int st;

	(void)state;
	if (getuid() != 0)
		skip();
	p = exited_child();
	u = fork();
	assert_true(u >= 0);
	if (u == 0) {
		const char *a[] = { "clean", NULL };
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		if (setgid(65534) || setuid(65534))
			_exit(3);
		_exit(run(NULL, a));
	}
	assert_int_equal(waitpid(u, &st, 0), u);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(seg_exists(p));
	drop_segments(p);
}

/*
 * another user asks directly for root's process: one line says whose it is.
 * The owner's uid used to be read after the listing was freed (ASan: a
 * heap-use-after-free before the line is printed).
 */
static void test_not_yours(void **state)
{
	char pid[16], line[512] = "";
	const char *a[] = { "report", "--pid", pid, "--no-daemon", NULL };
	ssize_t n, got = 0;
	struct child u;
	int st;

	(void)state;
	if (getuid() != 0)
		skip();
	drive(1);
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	if (child_start(&u) == 0) {
		dup2(u.wr, 2);
		if (setgid(65534) || setuid(65534))
			_exit(3);
		_exit(run(NULL, a));
	}
	while ((n = read(u.rd, line + got, sizeof(line) - 1 - (size_t)got)) > 0)
		got += n;
	st = child_end(&u);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_non_null(strstr(line, "not yours (segment owned by uid 0)"));
}

TEST_MAIN(setup, teardown, cmocka_unit_test(test_flat_equals_tree),
	  cmocka_unit_test(test_callers_sum), cmocka_unit_test(test_reset_then_n), cmocka_unit_test(test_json_schema),
	  cmocka_unit_test(test_list_and_top), cmocka_unit_test(test_not_profiled),
	  cmocka_unit_test(test_not_yours), cmocka_unit_test(test_profd_missing_said_once),
	  cmocka_unit_test(test_last_exited), cmocka_unit_test(test_top_exited),
	  cmocka_unit_test(test_killed_is_exited), cmocka_unit_test(test_last_span),
	  cmocka_unit_test(test_last_window), cmocka_unit_test(test_bus_guard),
	  cmocka_unit_test(test_bus_guard_not_writable), cmocka_unit_test(test_top_truncated),
	  cmocka_unit_test(test_clean), cmocka_unit_test(test_clean_other_user),
	  cmocka_unit_test(test_clean_baseline_names),
	  cmocka_unit_test_teardown(test_clean_namespace, teardown_ns))
