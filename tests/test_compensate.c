// SPDX-License-Identifier: MIT
/*
 * test_compensate.c - the compensated view (prof_snapshot__compensate,
 * profctl report --compensate, PROF_REPORT_COMPENSATE): on a tree built by
 * hand, exactly what it takes out of each total and self time; on nested
 * busy-waits, that it takes out what the zones really cost.
 *
 * The busy-waits: two parents do the same work, CALLS calls each in turn,
 * each call KIDS times a wait of SPIN ticks (of the TSC, read by the test)
 * and a call of an empty function: under one parent that function holds a
 * zone, under the other it does not.  Their true self times are equal; the
 * raw self time of the first holds its children's probes.  Compensated,
 * the two agree to within half of what the probes made them differ by:
 * compensation off, or taken out twice, each leaves them as far apart as
 * raw (or further), so either fails.  Ratios only, the median of TRIALS
 * threads that ran without a context switch (a trial that was switched
 * out is run again), no wall-clock bounds.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <pthread.h>

#include "fastpath.h"
#include "prof.h"

/* --- exact arithmetic on a tree built by hand ---------------------------- */

enum { N_ROOT, N_OVF, N_A, N_B, N_C, N_D, N_E, N_F, N_COUNT };

static void build(struct prof_snapshot *s, struct prof_snap_thread *t, struct prof_snap_node *n)
{
	/* parent, calls, open, anomalies, ticks */
	static const __u64 spec[N_COUNT][5] = {
		[N_ROOT] = { 0, 0, 0, 0, 10000 },
		[N_OVF] = { 0, 0, 0, 0, 0 },
		[N_A] = { 0, 2, 0, 0, 5000 }, /* two calls, children B and C */
		[N_B] = { N_A, 10, 0, 0, 1000 },
		[N_C] = { N_A, 5, 0, 1, 500 }, /* and one anomaly */
		[N_D] = { 0, 0, 1, 0, 400 },   /* a call in flight, child E */
		[N_E] = { N_D, 3, 0, 0, 50 },
		[N_F] = { 0, 4, 0, 0, 30 }, /* less than its probes: held at 0 */
	};
	__u32 i;

	memset(s, 0, sizeof(*s));
	memset(t, 0, sizeof(*t));
	memset(n, 0, N_COUNT * sizeof(*n));
	s->tick_hz = 1000000000;
	s->zone_cost = 30;
	s->zone_inner = 10;
	s->nthreads = 1;
	s->threads = t;
	t->nnodes = N_COUNT;
	t->nodes = n;
	for (i = 0; i < N_COUNT; i++) {
		n[i].parent = (__u32)spec[i][0];
		n[i].calls = spec[i][1];
		n[i].open = (__u32)spec[i][2];
		n[i].anomalies = spec[i][3];
		n[i].ticks = spec[i][4];
		if (i)
			n[n[i].parent].child_ticks += n[i].ticks;
	}
	n[N_D].open_ticks = 400;
}

static void test_exact(void **state)
{
	struct prof_snapshot s;
	struct prof_snap_thread t;
	struct prof_snap_node n[N_COUNT];

	(void)state;
	build(&s, &t, n);
	assert_int_equal(prof_snapshot__compensate(&s), 0);
	assert_true(s.compensated);
	/* a leaf loses the inner part (10) of each of its own calls */
	assert_int_equal(n[N_B].ticks, 1000 - 10 * 10);
	assert_int_equal(n[N_C].ticks, 500 - 5 * 10);
	assert_int_equal(n[N_E].ticks, 50 - 3 * 10);
	/* a parent: its own inner parts and the whole cost (30) of the 16
	 * zones entered below it, the anomaly's included */
	assert_int_equal(n[N_A].ticks, 5000 - 2 * 10 - 16 * 30);
	/* so its self time loses its own inner parts, cost - inner for each
	 * closed call of a child and the whole cost of the anomaly (whose
	 * time was never added to its node) */
	assert_int_equal(prof_snap_self(&n[N_A]), (5000 - 1500) - 2 * 10 - 15 * (30 - 10) - 1 * 30);
	/* an open call counts as a call; its part stays within the total */
	assert_int_equal(n[N_D].ticks, 400 - 1 * 10 - 3 * 30);
	assert_int_equal(n[N_D].open_ticks, n[N_D].ticks);
	/* never below 0 */
	assert_int_equal(n[N_F].ticks, 0);
	/* the wall time loses every zone's cost (26 entered) */
	assert_int_equal(n[N_ROOT].ticks, 10000 - 26 * 30);
	assert_int_equal(n[N_ROOT].child_ticks, n[N_A].ticks + n[N_D].ticks + n[N_F].ticks);
	assert_int_equal(prof_snap_self(&n[N_ROOT]), 10000 - 26 * 30 - 4800);
	/* the children's sums follow their totals */
	assert_int_equal(n[N_A].child_ticks, n[N_B].ticks + n[N_C].ticks);
	assert_int_equal(n[N_D].child_ticks, n[N_E].ticks);

	/* once only */
	assert_int_equal(prof_snapshot__compensate(&s), 0);
	assert_int_equal(n[N_B].ticks, 900);
	assert_int_equal(n[N_A].ticks, 4500);

	/* no cost measured: nothing to take out, and not marked */
	build(&s, &t, n);
	s.zone_cost = 0;
	assert_int_equal(prof_snapshot__compensate(&s), -ENODATA);
	assert_false(s.compensated);
	assert_int_equal(n[N_A].ticks, 5000);
	/* a lazy snapshot's nodes are not all there to rewrite */
	build(&s, &t, n);
	s.lazy = (struct prof_snap_lazy *)&t;
	assert_int_equal(prof_snapshot__compensate(&s), -EINVAL);
	assert_int_equal(n[N_A].ticks, 5000);
}

/* --- nested busy-waits ---------------------------------------------------- */

#define TRIALS 7    /* undisturbed trials wanted */
#define ATTEMPTS 60 /* at most, while other work takes the CPU away */
#define CALLS 20
#define KIDS 200
#define SPIN 20

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline __u64 ticks(void)
{
	return __rdtsc();
}
#else
static inline __u64 ticks(void)
{
	return test_now_ns();
}
#endif

/*
 * Work between the children: dependent arithmetic, as code does.  Not a
 * loop on the clock: a zone's two clock reads after a loop of them cost
 * 2-3 times what they cost after other work (AMD EPYC, a VM), which no
 * calibration of a zone alone prices.
 */
static volatile __u64 spin_sink;
/*
 * ... fenced at both ends, so the children's zones run before and after
 * it, not beside it: the CPU runs a clock read ahead of the arithmetic
 * before it (rdtsc waits for nothing) and the rest of a zone's exit
 * beside the arithmetic after it.  Unfenced, a latency-bound chain hides
 * the zones' cost, by as much as all of it on some machines (raw ratios
 * of 0.7 on one AMD EPYC guest, 1.7 on another): what the compensation
 * takes out is the cost a zone has when its work does not overlap (the
 * README says so), which is what this test holds it to.
 */
static inline void spin_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("isb" ::: "memory");
#endif
}

static inline void spin_ticks(__u64 n)
{
	__u64 x;

	spin_fence();
	x = spin_sink;
	for (__u64 j = 0; j < n; j++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	spin_sink = x;
	spin_fence();
}

__attribute__((noinline)) static void leaf_zoned(void)
{
	PROF_USDT(comp_leaf);
	__asm__ __volatile__("" ::: "memory");
}

__attribute__((noinline)) static void leaf_plain(void)
{
	__asm__ __volatile__("" ::: "memory");
}

/* a parent's body, the same in both but for the leaf it calls (inlined:
 * each parent calls its leaf directly) */
static inline __attribute__((always_inline)) void spin_and_call(void (*leaf)(void))
{
	int k;

	for (k = 0; k < KIDS; k++) {
		spin_ticks(SPIN);
		leaf();
	}
}

__attribute__((noinline)) static void parent_zoned_kids(void)
{
	PROF_USDT(comp_zoned_kids);
	spin_and_call(leaf_zoned);
}

__attribute__((noinline)) static void parent_plain_kids(void)
{
	PROF_USDT(comp_plain_kids);
	spin_and_call(leaf_plain);
}

struct trial {
	pthread_barrier_t done, read;
	__u32 tid;
	long switches; /* the thread's context switches while it worked */
};

static long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void *trial_main(void *arg)
{
	struct trial *tr = arg;
	int i;

	tr->tid = test_gettid();
	tr->switches = thread_switches();
	/* in turn: the machine's speed drifts alike for both */
	for (i = 0; i < CALLS; i++) {
		parent_zoned_kids();
		parent_plain_kids();
	}
	tr->switches = thread_switches() - tr->switches;
	/* alive until read: an exited thread's slab is folded away */
	pthread_barrier_wait(&tr->done);
	pthread_barrier_wait(&tr->read);
	return NULL;
}

/* the self times of the two parents in thread tid of s: zoned / plain */
static double self_ratio(const struct prof_snapshot *s, __u32 tid)
{
	const struct prof_snap_thread *t = test_thread(s, tid);
	const struct prof_snap_node *a, *b;

	assert_non_null(t);
	a = test_node(s, t, "comp_zoned_kids");
	b = test_node(s, t, "comp_plain_kids");
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->calls, CALLS);
	assert_int_equal(b->calls, CALLS);
	assert_true(prof_snap_self(b) > 0);
	return (double)prof_snap_self(a) / (double)prof_snap_self(b);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static void test_busy_waits(void **state)
{
	double raw[TRIALS], comp[TRIALS], r, c;
	int i = 0, attempt;

	(void)state;
	for (attempt = 0; attempt < ATTEMPTS && i < TRIALS; attempt++) {
		struct trial tr;
		struct prof_snapshot *s, *sc;
		pthread_t th;

		pthread_barrier_init(&tr.done, NULL, 2);
		pthread_barrier_init(&tr.read, NULL, 2);
		assert_int_equal(pthread_create(&th, NULL, trial_main, &tr), 0);
		pthread_barrier_wait(&tr.done);
		s = test_snapshot(0);
		sc = test_snapshot(0);
		pthread_barrier_wait(&tr.read);
		assert_int_equal(pthread_join(th, NULL), 0);
		pthread_barrier_destroy(&tr.done);
		pthread_barrier_destroy(&tr.read);
		assert_non_null(s);
		assert_non_null(sc);
		assert_true(sc->zone_cost > 0);
		assert_int_equal(prof_snapshot__compensate(sc), 0);
		raw[i] = self_ratio(s, tr.tid);
		comp[i] = self_ratio(sc, tr.tid);
		print_message("trial %d: zoned/plain self, raw %.3f, compensated %.3f "
			      "(a zone %llu ticks, %llu inside)%s\n",
			      attempt, raw[i], comp[i], (unsigned long long)sc->zone_cost,
			      (unsigned long long)sc->zone_inner,
			      tr.switches ? ": switched out, not counted" : "");
		/* a trial the CPU was taken from holds another's time */
		if (!tr.switches)
			i++;
		prof_snapshot__destroy(s);
		prof_snapshot__destroy(sc);
	}
	if (i < TRIALS) {
		print_message("only %d of %d trials ran without a context switch: the machine is "
			      "too busy to time this\n",
			      i, attempt);
		skip();
	}
	qsort(raw, TRIALS, sizeof(raw[0]), cmp_double);
	qsort(comp, TRIALS, sizeof(comp[0]), cmp_double);
	r = raw[TRIALS / 2];
	c = comp[TRIALS / 2];
	print_message("median: raw %.3f, compensated %.3f (truth 1)\n", r, c);
	/* the probes must matter for the comparison to say anything */
	if (r < 1.15)
		fail_msg("raw ratio %.3f: the children's probes hardly show in the parent", r);
	if ((c > 1 ? c - 1 : 1 - c) > (r - 1) / 2)
		fail_msg("compensated ratio %.3f is not within half of raw's %.3f distance from 1",
			 c, r - 1);
}

/*
 * A page's first touch is a fault, and the time of a fault at a zone's exit
 * lands in its parent: a new thread's ring alone is 64 pages.  Its zones
 * take none: the runtime maps what it reserves before the fast path writes.
 */
#define FAULT_ZONES 20000 /* past a whole ring of the default 16384 events */

static void *faults_main(void *arg)
{
	long *faults = arg;
	struct rusage a, b;
	int i;

	leaf_zoned(); /* the slab */
	leaf_zoned();
	getrusage(RUSAGE_THREAD, &a);
	for (i = 0; i < FAULT_ZONES; i++)
		leaf_zoned();
	getrusage(RUSAGE_THREAD, &b);
	*faults = (b.ru_minflt - a.ru_minflt) + (b.ru_majflt - a.ru_majflt);
	return NULL;
}

static void test_no_page_faults(void **state)
{
	pthread_t th;
	long faults = -1;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, faults_main, &faults), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	print_message("%d zones of a new thread: %ld page faults\n", FAULT_ZONES, faults);
	assert_true(faults >= 0);
	assert_true(faults < 4);
}

/* --- what says so ---------------------------------------------------------- */

/* a file's text, which must be there */
static char *slurp(const char *path)
{
	char *buf = test_slurp(path, NULL);

	assert_non_null(buf);
	return buf;
}

/* path (a mkstemp template) made a file; then a child with the
 * environment env (NAME, VALUE, ..., NULL) runs parent_zoned_kids once
 * and exits, for what it writes there */
static void zoned_child(char *path, const char *const *env)
{
	int fd = mkstemp(path);
	pid_t pid;

	assert_true(fd >= 0);
	close(fd);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (; env[0]; env += 2)
			setenv(env[0], env[1], 1);
		parent_zoned_kids();
		exit(0);
	}
	assert_true(test_exited_ok(test_wait(pid, 30)));
}

/* a child's report at exit, with PROF_REPORT_COMPENSATE=comp */
static char *exit_report(const char *fmt, const char *comp)
{
	char path[] = "/tmp/prof-comp.XXXXXX";
	char *out;

	zoned_child(path, (const char *const[]){ "PROF_REPORT", path, "PROF_REPORT_FORMAT", fmt,
						 "PROF_REPORT_COMPENSATE", comp, NULL });
	out = slurp(path);
	unlink(path);
	return out;
}

static void test_exit_report_says_so(void **state)
{
	/* in each report at exit, what must be there and what must not */
	static const struct {
		const char *fmt, *comp, *has[4], *lacks[3];
	} want[] = {
		/* the title says what its figure is: the zones' own instructions */
		{ "text",
		  "1",
		  { "\nprof: compensated: a zone's cost (", "taken out",
		    ", zones' own instructions ~", "%, calibrated at start, taken out)" },
		  { NULL } },
		{ "json", "1", { "\"compensated\":true" }, { NULL } },
		/* off: nothing said */
		{ "text",
		  "0",
		  { ", zones' own instructions ~", "%, calibrated at start)" },
		  { "compensated", "taken out", "zones cost" } },
		{ "json", "0", { NULL }, { "compensated" } },
	};
	size_t i, k;
	char *out;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		out = exit_report(want[i].fmt, want[i].comp);
		if (!i)
			print_message("%s", out);
		for (k = 0; k < 4 && want[i].has[k]; k++)
			if (!strstr(out, want[i].has[k]))
				fail_msg("%s, compensate %s: no '%s' in\n%s", want[i].fmt,
					 want[i].comp, want[i].has[k], out);
		for (k = 0; k < 3 && want[i].lacks[k]; k++)
			if (strstr(out, want[i].lacks[k]))
				fail_msg("%s, compensate %s: '%s' in\n%s", want[i].fmt,
					 want[i].comp, want[i].lacks[k], out);
		free(out);
	}
}

/* profctl's output (stdout and stderr) for args; its exit status in *rc */
static char *profctl(const char *args, int *rc)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 512], *buf;
	int st;

	assert_non_null(test_sibling("../profctl", exe, sizeof(exe)));
	snprintf(cmd, sizeof(cmd), "PROFCTL_NO_DAEMON=1 %s %s 2>&1", exe, args);
	buf = test_popen_text(cmd, &st);
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return buf;
}

/* the first "self_ns" of a JSON report */
static unsigned long long first_self(const char *json)
{
	const char *p = strstr(json, "\"self_ns\":");

	assert_non_null(p);
	return strtoull(p + strlen("\"self_ns\":"), NULL, 10);
}

static void test_profctl_says_so(void **state)
{
	char path[] = "/tmp/prof-comp-img.XXXXXX", args[256];
	char *raw, *comp;
	int rc;

	(void)state;
	zoned_child(path, (const char *const[]){ "PROF_SAVE", path, NULL });

	snprintf(args, sizeof(args), "report --input %s", path);
	raw = profctl(args, &rc);
	if (rc)
		print_message("%s", raw);
	assert_int_equal(rc, 0);
	assert_null(strstr(raw, "compensated"));
	free(raw);
	snprintf(args, sizeof(args), "report --input %s --compensate", path);
	comp = profctl(args, &rc);
	print_message("%s", comp);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(comp, "\ncompensated: a zone's cost ("));
	assert_non_null(strstr(comp, "taken out"));
	free(comp);

	/* json, the tree and the flat list: marked, and the times lower */
	snprintf(args, sizeof(args), "report --input %s --format json", path);
	raw = profctl(args, &rc);
	assert_int_equal(rc, 0);
	snprintf(args, sizeof(args), "report --input %s --format json --compensate", path);
	comp = profctl(args, &rc);
	assert_int_equal(rc, 0);
	assert_null(strstr(raw, "compensated"));
	assert_non_null(strstr(comp, "\"compensated\":true"));
	assert_true(first_self(comp) < first_self(raw));
	free(raw);
	free(comp);
	snprintf(args, sizeof(args), "report --input %s --format json --flat --compensate", path);
	comp = profctl(args, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(comp, "\"compensated\":true"));
	free(comp);

	/* both documents as the schema has them */
	if (!system("python3 -c 'import json' 2>/dev/null")) {
		char tree[64], flat[64], cmd[512];

		snprintf(tree, sizeof(tree), "%s.tree.json", path);
		snprintf(flat, sizeof(flat), "%s.flat.json", path);
		snprintf(args, sizeof(args), "report --input %s --format json --compensate -o %s",
			 path, tree);
		free(profctl(args, &rc));
		assert_int_equal(rc, 0);
		snprintf(args, sizeof(args),
			 "report --input %s --format json --flat --compensate -o %s", path, flat);
		free(profctl(args, &rc));
		assert_int_equal(rc, 0);
		snprintf(cmd, sizeof(cmd),
			 "python3 tests/check_schema.py tests/report.schema.json %s %s", tree,
			 flat);
		assert_int_equal(system(cmd), 0);
		unlink(tree);
		unlink(flat);
	}

	/* a format with no place to say so refuses */
	snprintf(args, sizeof(args), "report --input %s --format csv --compensate", path);
	comp = profctl(args, &rc);
	assert_int_equal(rc, 2);
	assert_string_equal(comp, "profctl: report: --compensate is for --format text and json\n");
	free(comp);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_exit_report_says_so),
		cmocka_unit_test(test_profctl_says_so),
		cmocka_unit_test(test_no_page_faults),
		cmocka_unit_test(test_busy_waits),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
