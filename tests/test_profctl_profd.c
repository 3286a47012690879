// SPDX-License-Identifier: MIT
/*
 * test_profctl_profd.c - profiles leaving the machine through a real
 * profd (root, BPF): `profctl save` of a process profd followed keeps its
 * kernel columns and reads back as profd's own report of it; `profctl
 * serve` as its owner shows the process, as another user and root (but
 * with --all-users) do not; a zone's on-CPU time, with kernel facts, is in
 * every output (report's JSON, CSV and text, --sort oncpu, folded --weight
 * oncpu, pprof read by go tool pprof, diff, serve checked by promtool) and
 * below its wall time.
 * Skips, saying why, unless root with kernel assistance.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "prof.h"
#include "profd_private.h"
#include "web_util.h"

#define UID_A 65534 /* nobody: owns the profiled process */
#define UID_B 65533 /* another unprivileged uid */

static char dir[64], sock[128];
static pid_t profd_pid = -1;
static volatile unsigned long sink;

static void pd_zone(void)
{
	PROF_USDT(pd_zone);
	for (int i = 0; i < 1000; i++)
		sink += (unsigned long)i;
	/* off CPU a little: a kernel fact to keep */
	usleep(200);
}

TEST_PROFD_GROUP("test_profctl_profd")

static void need_profd(void)
{
	test_need_profd(profd_pid);
}

/* a zone; whether this thread's calls have kernel facts yet (profd hands
 * its record over asynchronously: the call that straddles it has none) */
static bool warm_covered(void)
{
	struct prof_snapshot *s;
	const struct prof_snap_node *n;
	bool yes;

	{
		PROF_USDT(tr_warm);
		usleep(100);
	}
	s = test_snapshot(0);
	n = s ? test_node(s, &s->threads[0], "tr_warm") : NULL;
	yes = n && n->kernel_calls > 0;
	prof_snapshot__destroy(s);
	return yes;
}

/* with profd (the test skipped without), a child as UID_A: n zones, then
 * "R", then waits for the test's end; its pid into pid (16 bytes) if set */
static struct child spawn_as_a(int n, char *pid)
{
	struct child k;

	need_profd();
	if (child_start(&k) == 0) {
		if (setgid(UID_A) || setuid(UID_A))
			_exit(2);
		/* kernel facts from the first of the n (a loaded machine can
		 * register the thread after all of them) */
		for (int w = 0; w < 500 && !warm_covered(); w++)
			usleep(10000);
		for (int i = 0; i < n; i++)
			pd_zone();
		child_say(&k, 'R');
		/* until the test is done with us */
		while (child_hear(&k))
			;
		_exit(0);
	}
	assert_int_equal(child_ready(&k), 'R');
	if (pid)
		snprintf(pid, 16, "%d", (int)k.pid);
	return k;
}

/* until profd follows pid (it looks for new segments now and then), and
 * with kernel: until it gave pid's thread a kernel record */
static void wait_listed(pid_t pid, bool kernel)
{
	__u64 end = now_ns() + 5000000000ull;
	struct pc_proc *procs;
	struct pc_src src;
	size_t n, i;
	bool got = false;

	while (!got && now_ns() < end) {
		pc_src_open(&src, false);
		assert_true(src.fd >= 0);
		procs = NULL;
		n = 0;
		if (!pc_src_list(&src, &procs, &n))
			for (i = 0; i < n; i++)
				got |= procs[i].pid == pid && (!kernel || procs[i].kernel >= 1);
		free(procs);
		pc_src_close(&src);
		if (!got)
			usleep(20000);
	}
	if (!got)
		fail_msg("profd did not follow pid %d%s in 5 s", (int)pid,
			 kernel ? " with a kernel record" : "");
}

static void wait_followed(pid_t pid)
{
	wait_listed(pid, false);
}

/* save through profd: kernel columns kept; read back as profd reports it
 * (after the exit, so both are profd's kept copy) */
static void test_save_via_profd(void **state)
{
	char pid[16], file[128], live[128], saved[128];
	struct prof_snapshot *s = NULL;
	const struct prof_snap_node *n;
	struct child k;
	char *a, *b;

	(void)state;
	k = spawn_as_a(50, pid);
	snprintf(file, sizeof(file), "%s/k.prof", dir);
	snprintf(live, sizeof(live), "%s/live.csv", dir);
	snprintf(saved, sizeof(saved), "%s/saved.csv", dir);
	wait_followed(k.pid);
	child_end(&k);
	/* profd keeps an exited process's data for a while */
	{
		const char *sv[] = { "save", "--pid", pid, "--since-start", "-o", file, NULL };

		assert_int_equal(test_profctl_run(live, sv), 0);
	}
	assert_int_equal(pc_read_image(file, 0, &s), 0);
	assert_true(prof_snap_any_sched(s));
	assert_int_equal(s->nthreads, 1);
	n = test_node(s, &s->threads[0], "pd_zone");
	assert_non_null(n);
	assert_int_equal(n->calls, 50);
	assert_true(n->kernel_calls > 0);
	assert_true(n->offcpu_ns > 0);
	prof_snapshot__destroy(s);
	{
		/* the zones' rows: wall time of a process gone is profd's to
		 * advance or not; the calls, times and kernel columns are the
		 * process's */
		const char *l[] = { "report", "--pid",	  pid,	 "--since-start",
				    "--flat", "--format", "csv", NULL };
		const char *f[] = { "report", "--input", file, "--flat", "--format", "csv", NULL };

		assert_int_equal(test_profctl_run(live, l), 0);
		assert_int_equal(test_profctl_run(saved, f), 0);
	}
	a = test_slurp(live, NULL);
	b = test_slurp(saved, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* occurrences of needle in hay */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/*
 * trace through profd: root reads another user's live process's rings
 * (profd hands over the segment); once it exited, profd's copy has no
 * rings, and trace says so rather than showing an empty timeline as if
 * nothing ran.
 */
static void test_trace_via_profd(void **state)
{
	char pid[16], out[128], errf[128];
	const char *tr[] = { "trace", "--pid", pid, "-o", out, NULL };
	struct child k;
	char *text;
	int saved;
	__u64 end;

	(void)state;
	k = spawn_as_a(50, pid);
	snprintf(out, sizeof(out), "%s/trace.json", dir);
	snprintf(errf, sizeof(errf), "%s/trace.err", dir);
	wait_followed(k.pid);
	assert_int_equal(test_profctl_run(errf, tr), 0);
	text = test_slurp(out, NULL);
	assert_non_null(text);
	assert_int_equal(count_of(text, "\"name\":\"pd_zone\""), 50);
	free(text);
	child_end(&k);
	/* gone: until profd notices, it hands over the segment it holds
	 * (rings and all); then its copy, and one line says what it keeps */
	for (end = now_ns() + 5000000000ull;; usleep(50000)) {
		saved = test_fd_to(2, errf);
		assert_int_equal(test_profctl_run(out, tr), 0);
		test_fd_back(2, saved);
		text = test_slurp(errf, NULL);
		assert_non_null(text);
		if (strstr(text, "exited: profd keeps its profile, not its event rings"))
			break;
		if (now_ns() > end)
			fail_msg("trace of a process gone said: %s", text);
		free(text);
	}
	free(text);
	text = test_slurp(out, NULL);
	assert_int_equal(count_of(text, "\"name\":\"pd_zone\""), 0);
	free(text);
}

static void on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* once told to go: a zone that moves itself to the other cpu, one that
 * sleeps, five times; then "R" */
static void facts_kid(const struct child *k)
{
	child_say(k, 'A');
	if (!child_hear(k))
		_exit(3);
	/* until a call has kernel facts: the thread took its record (the
	 * call that straddles the handover has none) */
	for (int w = 0; w < 500 && !warm_covered(); w++)
		usleep(10000);
	for (int i = 0; i < 5; i++) {
		{
			PROF_USDT(tr_hop);
			on_cpu(0);
			for (int j = 0; j < 100000; j++)
				sink += (unsigned long)j;
			on_cpu(1);
			for (int j = 0; j < 100000; j++)
				sink += (unsigned long)j;
		}
		{
			PROF_USDT(tr_nap);
			usleep(2000);
		}
	}
	child_say(k, 'R');
	while (child_hear(k))
		;
}

/* a facts_kid's trace through profd, checked by check_trace.py's how
 * (with its arguments after the trace's path) */
static void facts_trace(const char *how, const char *args)
{
	char pid[16], out[128], errf[128], cmd[512];
	const char *tr[] = { "trace", "--pid", pid, "-o", out, NULL };
	struct child k;

	if (child_start(&k) == 0) {
		{
			PROF_USDT(tr_first); /* registers with profd, then waits for it */
		}
		facts_kid(&k);
		_exit(0);
	}
	child_ready(&k);
	/* the thread has its kernel record before its zones run */
	wait_listed(k.pid, true);
	child_go(&k);
	child_ready(&k);
	snprintf(pid, sizeof(pid), "%d", (int)k.pid);
	snprintf(out, sizeof(out), "%s/facts.json", dir);
	snprintf(errf, sizeof(errf), "%s/facts.err", dir);
	assert_int_equal(test_profctl_run(errf, tr), 0);
	child_end(&k);
	snprintf(cmd, sizeof(cmd), "python3 tests/check_trace.py %s %s %s >&2", how, out,
		 args);
	assert_int_equal(system(cmd), 0);
}

/*
 * With profd, each call's event says what the kernel word said of it: the
 * zone that moved itself is migrated (and an instant event marks it), the
 * one that slept is blocked, in the trace of the live process.
 */
static void test_trace_kernel_facts(void **state)
{
	(void)state;
	need_profd();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "skipped: one cpu, nothing to migrate to\n");
		skip();
	}
	facts_trace("facts", "");
}

/*
 * How far ahead of CLOCK_MONOTONIC the run queue clock the program reads is
 * here, in us: bpftrace's mean at a second of switches from a task (one from
 * idle may find the clock last updated at the wake-up).  Sets *why and
 * returns NAN where bpftrace cannot say.
 */
static double rq_clock_ahead_us(const char **why)
{
	char line[256];
	double v = NAN;
	FILE *f;

	if (system("command -v bpftrace >/dev/null 2>&1")) {
		*why = "bpftrace is not installed";
		return NAN;
	}
	f = popen("bpftrace -q -e 'tracepoint:sched:sched_switch /args->prev_pid != 0 &&"
		  " curtask->se.cfs_rq != 0/ { @ = avg((int64)(curtask->se.cfs_rq->rq->clock"
		  " - nsecs)); } interval:s:1 { exit(); }' 2>/dev/null", "r");
	if (!f) {
		*why = "bpftrace did not start";
		return NAN;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "@: ", 3))
			v = strtod(line + 3, NULL) / 1000.0;
	pclose(f);
	if (isnan(v))
		*why = "bpftrace could not read the run queue clock";
	return v;
}

/*
 * The slices are stamped on CLOCK_MONOTONIC, the zones' clock, not on the
 * run queue clock the program reads: a sleep's blocked slice starts a few us
 * after its zone (the way into the scheduler), however far apart the two
 * clocks are.  Where they agree to within 30 us a slice stamped with either
 * looks the same, and the test says so and skips.
 */
static void test_slices_clock(void **state)
{
	const char *why = NULL;
	double ahead;

	(void)state;
	need_profd();
	ahead = rq_clock_ahead_us(&why);
	if (isnan(ahead)) {
		print_message("skip: %s\n", why);
		skip();
	}
	print_message("the run queue clock is %.1f us ahead of CLOCK_MONOTONIC here\n", ahead);
	if (fabs(ahead) < 30.0) {
		print_message("skip: the run queue clock and CLOCK_MONOTONIC agree to within"
			      " 30 us here (%.1f): a slice stamped with either looks the same\n",
			      ahead);
		skip();
	}
	facts_trace("slices_clock", "-5 20");
}

/* one scrape through profd as uid (with --all-users or not); 1 if pid is
 * in it, 0 if not, <0 error */
static int scrape_has(uid_t uid, pid_t pid, bool all_users)
{
	int st;
	pid_t k = fork();

	assert_true(k >= 0);
	if (k == 0) {
		struct pc_serve_opts so = { .max_zones = 200,
					    .max_threads = 32,
					    .all_users = all_users };
		struct pc_src src;
		char *buf = NULL, key[64];
		size_t len = 0;
		FILE *f;

		if (setgid(uid) || setuid(uid))
			_exit(10);
		f = open_memstream(&buf, &len);
		pc_src_open(&src, false);
		if (src.fd < 0)
			_exit(11);
		if (pc_metrics(f, &src, &so, true))
			_exit(12);
		pc_src_close(&src);
		fclose(f);
		snprintf(key, sizeof(key), "profd_zone_calls_total{pid=\"%d\"", (int)pid);
		_exit(strstr(buf, key) ? 1 : 0);
	}
	assert_int_equal(waitpid(k, &st, 0), k);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st) > 1 ? -WEXITSTATUS(st) : WEXITSTATUS(st);
}

/* the exporter shows its user's own processes: the owner's process to the
 * owner, nothing of it to another user, nor to root unless root publishes
 * every user's (--all-users) */
static void test_serve_other_user(void **state)
{
	struct child k;
	__u64 end;
	int has = 0;

	(void)state;
	k = spawn_as_a(5, NULL);
	/* profd follows a new segment at its next look (bounded) */
	for (end = now_ns() + 5000000000ull; now_ns() < end; usleep(50000))
		if ((has = scrape_has(UID_A, k.pid, false)) != 0)
			break;
	assert_int_equal(has, 1);
	/* followed, and still not another user's to see */
	assert_int_equal(scrape_has(UID_B, k.pid, false), 0);
	assert_int_equal(scrape_has(UID_B, k.pid, true), 0);
	/* root's exporter, reachable by every local user, shows root's own */
	assert_int_equal(scrape_has(0, k.pid, false), 0);
	assert_int_equal(scrape_has(0, k.pid, true), 1);
	child_end(&k);
}

/* the value of the OpenMetrics sample "family{pid="P"...}" of pid, -1 if none */
static double sample_of(const char *text, const char *family, pid_t pid)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "\n%s{pid=\"%d\"", family, (int)pid);
	p = strstr(text, key);
	if (!p || !(p = strchr(p, '}')))
		return -1;
	return strtod(p + 1, NULL);
}

/*
 * On-CPU time is a figure of every output: pd_zone sleeps in each call, so
 * its on-CPU time is known (kernel facts), above 0 and below its wall time,
 * and each output says the same of it.
 */
static void test_oncpu_everywhere(void **state)
{
	char pid[16], out[128], file[128], cmd[1024];
	struct child k;
	char *t;
	long long total, oncpu, self_cpu;
	double wall_s, cpu_s, self_s;

	(void)state;
	k = spawn_as_a(50, pid);
	snprintf(out, sizeof(out), "%s/oncpu.out", dir);
	snprintf(file, sizeof(file), "%s/oncpu.prof", dir);
	wait_listed(k.pid, true);
	{
		const char *a[] = { "report", "--pid", pid, "--since-start", "--format", "json", NULL };

		assert_int_equal(test_profctl_run(out, a), 0);
	}
	t = test_slurp(out, NULL);
	assert_non_null(t);
	total = num_after(t, "\"name\":\"pd_zone\"", "total_ns");
	oncpu = num_after(t, "\"name\":\"pd_zone\"", "oncpu_ns");
	self_cpu = num_after(t, "\"name\":\"pd_zone\"", "self_oncpu_ns");
	free(t);
	if (oncpu <= 0 || oncpu >= total || self_cpu != oncpu)
		fail_msg("pd_zone: total %lld, oncpu %lld, self oncpu %lld", total, oncpu, self_cpu);
	{
		/* the flat row and CSV say the same, and text sorts by it */
		const char *a[] = { "report", "--pid", pid,   "--since-start", "--flat",
				    "--format", "csv", NULL };
		char want[64];

		assert_int_equal(test_profctl_run(out, a), 0);
		t = test_slurp(out, NULL);
		snprintf(want, sizeof(want), ",%lld,%lld\n", oncpu, self_cpu);
		if (!strstr(t, want))
			fail_msg("no '%s' in the flat CSV:\n%s", want, t);
		free(t);
	}
	{
		const char *a[] = { "report", "--pid", pid, "--since-start", "--sort", "self-oncpu", NULL };

		assert_int_equal(test_profctl_run(out, a), 0);
		t = test_slurp(out, NULL);
		assert_non_null(strstr(t, "self-cpu"));
		free(t);
	}
	{
		const char *a[] = { "report",	"--pid",    pid,      "--since-start",
				    "--format", "folded", "--weight", "oncpu", NULL };

		long long sum = 0;
		char *l, *e, *sp, *z;

		assert_int_equal(test_profctl_run(out, a), 0);
		t = test_slurp(out, NULL);
		/* its own line and, when profd sampled it, the functions
		 * sampled inside it below it: together its self on-CPU time */
		for (l = t; *l; l = *e ? e + 1 : e) {
			e = strchrnul(l, '\n');
			for (sp = e; sp > l && sp[-1] != ' ';)
				sp--;
			z = strstr(l, "pd_zone");
			if (z && z < e && (z == l || z[-1] == ';') && (z[7] == ' ' || z[7] == ';') &&
			    sp > l)
				sum += strtoll(sp, NULL, 10);
		}
		if (sum != self_cpu)
			fail_msg("pd_zone's folded on-CPU stacks sum to %lld, not %lld:\n%s", sum,
				 self_cpu, t);
		free(t);
	}
	/* serve: the on-CPU families beside the wall ones, promtool happy */
	{
		struct pc_serve_opts so = { .max_zones = 200, .max_threads = 32, .all_users = true };
		struct pc_src src;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		pc_src_open(&src, false);
		assert_true(src.fd >= 0);
		assert_int_equal(pc_metrics(f, &src, &so, true), 0);
		pc_src_close(&src);
		fclose(f);
		wall_s = sample_of(buf, "profd_zone_seconds_total", k.pid);
		cpu_s = sample_of(buf, "profd_zone_oncpu_seconds_total", k.pid);
		self_s = sample_of(buf, "profd_zone_self_oncpu_seconds_total", k.pid);
		if (!(cpu_s > 0 && cpu_s < wall_s && self_s > 0 && self_s <= cpu_s))
			fail_msg("serve: wall %g s, oncpu %g s, self oncpu %g s:\n%s", wall_s,
				 cpu_s, self_s, buf);
		free(buf);
		/* promtool lints the Prometheus text format */
		buf = NULL;
		f = open_memstream(&buf, &len);
		pc_src_open(&src, false);
		assert_int_equal(pc_metrics(f, &src, &so, false), 0);
		pc_src_close(&src);
		fclose(f);
		f = fopen(out, "w");
		fputs(buf, f);
		fclose(f);
		free(buf);
		if (!system("command -v promtool >/dev/null 2>&1")) {
			snprintf(cmd, sizeof(cmd), "promtool check metrics <%s", out);
			assert_int_equal(system(cmd), 0);
		} else {
			fprintf(stderr, "promtool not installed: the exposition not checked by it\n");
		}
	}
	/* saved, diffed against itself: on-CPU known on both sides, no change */
	{
		const char *sv[] = { "save", "--pid", pid, "--since-start", "-o", file, NULL };
		const char *d[] = { "diff", "--sort", "oncpu", "--format", "json", file, file, NULL };

		assert_int_equal(test_profctl_run(out, sv), 0);
		assert_int_equal(test_profctl_run(out, d), 0);
		t = test_slurp(out, NULL);
		if (num_after(t, "\"new\":{", "oncpu_ns") <= 0 ||
		    num_after(t, "\"change\":{", "oncpu_ns") != 0)
			fail_msg("diff: no on-CPU time of pd_zone:\n%s", t);
		free(t);
	}
	/* pprof: go tool pprof reads the cpu sample type */
	if (!system("command -v go >/dev/null 2>&1")) {
		const char *a[] = { "report", "--input", file, "--format", "pprof", "-o", out, NULL };
		char txt[160];

		snprintf(txt, sizeof(txt), "%s/pprof.txt", dir);
		assert_int_equal(test_profctl_run(txt, a), 0);
		snprintf(cmd, sizeof(cmd),
			 "env -i PATH=/usr/bin:/bin HOME=%s GOCACHE=%s/gocache go tool pprof "
			 "-sample_index=cpu -top -nodefraction=0 %s >%s 2>&1",
			 dir, dir, out, txt);
		assert_int_equal(system(cmd), 0);
		t = test_slurp(txt, NULL);
		if (!strstr(t, "Type: cpu") || !strstr(t, "pd_zone"))
			fail_msg("go tool pprof -sample_index=cpu:\n%s", t);
		free(t);
	} else {
		fprintf(stderr, "go not installed: the pprof file not read by go tool pprof\n");
	}
	child_end(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_save_via_profd),
		cmocka_unit_test(test_serve_other_user),
		cmocka_unit_test(test_oncpu_everywhere),
		cmocka_unit_test(test_trace_via_profd),
		cmocka_unit_test(test_trace_kernel_facts),
		cmocka_unit_test(test_slices_clock),
	};

	return test_run_group(tests, setup, teardown);
}
