// SPDX-License-Identifier: MIT
/*
 * test_annot_window.c - unit: named locks and plots in a window, as every
 * other figure (figures.h's PROF_LOCK_FIGS, PROF_PLOT_FIGS): a diff (a
 * reset, --last) keeps what happened inside it, a max or min it cannot
 * tell is unknown, never the since-start one; an image (a saved file,
 * profd's answers) keeps them; profd's history frames rebuild them; a
 * reset and --input in profctl report; the report at exit lists them.
 * And a name used in two files is one lock or plot (annot_b.c).
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include "testutil.h"
#include "annot.h"
#include "annot_fixture.h"
#include "profd.h"
#include "prof.h"

static char dir[64];

/* n acquisitions of aw_lock, each waiting wait_ns (a generic lock's wait
 * over 1 us is contended) and holding hold_ns */
static void take(int n, __u64 wait_ns, __u64 hold_ns)
{
	int i;

	for (i = 0; i < n; i++) {
		PROF_USDT(aw_zone);

		PROF_LOCK_WAIT(aw_lock);
		test_spin_ns(wait_ns);
		PROF_LOCK_ACQUIRED(aw_lock);
		test_spin_ns(hold_ns);
		PROF_LOCK_RELEASED(aw_lock);
	}
}

static struct prof_snapshot *base, *now;

/* before: 10 long waits and holds, aw_old and aw_plot plotted; after: 5
 * short ones, aw_plot and aw_new plotted */
static void two_reads(void)
{
	int i;

	take(10, 300000, 300000);
	for (i = 0; i < 10; i++) {
		PROF_PLOT(aw_plot, 100 + i);
		PROF_PLOT(aw_old, i);
	}
	base = test_snapshot(0);
	assert_non_null(base);
	take(5, 3000, 3000);
	for (i = 1; i <= 5; i++) {
		PROF_PLOT(aw_plot, i);
		PROF_PLOT(aw_new, 2 * i);
	}
	now = test_snapshot(0);
	assert_non_null(now);
}

/* s's sums as a window of now less base shows them */
static void check_window(const struct prof_snapshot *s)
{
	struct prof_snap_annot *a = prof_snap_annot_sum(s), *all = prof_snap_annot_sum(now);
	const struct prof_annot_lock_sum *l = lock_named(a, "aw_lock"),
					 *la = lock_named(all, "aw_lock");
	const struct prof_annot_plot_sum *p = plot_named(a, "aw_plot"),
					 *n = plot_named(a, "aw_new");

	assert_non_null(l);
	assert_non_null(la);
	assert_int_equal(la->acquisitions, 15);
	/* the window's five, not the fifteen since start */
	assert_int_equal(l->acquisitions, 5);
	assert_int_equal(l->contended, 5);
	assert_true(l->wait_ticks < la->wait_ticks / 10);
	assert_true(l->hold_ticks < la->hold_ticks / 10);
	/* the window's longest wait, from its histogram: some 3 us, within
	 * a bucket (a factor of two) of it, far below the 300 us before */
	assert_true(l->wait_max > 0 && l->wait_max != PROF_SNAP_UNKNOWN);
	assert_true(l->wait_max < la->wait_max / 10);
	assert_true(l->wait_max >= l->wait_ticks / 5 / 2);
	/* the longest hold of the window cannot be told: unknown, never the
	 * 300 us of before */
	assert_true(l->hold_max == PROF_SNAP_UNKNOWN);
	assert_true(la->hold_max != PROF_SNAP_UNKNOWN);

	assert_non_null(p);
	assert_int_equal(p->count, 5);
	assert_true(p->sum == 15);
	assert_true(p->last == 5);
	/* min and max of a window after earlier points: unknown */
	assert_true(isnan(p->min) && isnan(p->max));
	/* a plot begun inside the window is all there: exact */
	assert_non_null(n);
	assert_int_equal(n->count, 5);
	assert_true(n->min == 2 && n->max == 10 && n->last == 10);
	/* a plot with no point in the window is not in it */
	assert_null(plot_named(a, "aw_old"));
	assert_non_null(plot_named(all, "aw_old"));
	prof_snap_annot_free(a);
	prof_snap_annot_free(all);
}

/* a diff of two reads (a reset's, or --last's baseline) */
static void test_diff(void **state)
{
	struct prof_snapshot *w = test_snapshot(0);

	(void)state;
	/* a third read, windowed by the first: what the second saw and
	 * nothing since (this thread took no lock meanwhile) */
	assert_non_null(w);
	assert_int_equal(prof_snapshot__diff(w, base), 0);
	check_window(w);
	/* and the window as an image (save --since-reset, profd's answer to
	 * --last) keeps what it cannot tell unknown */
	{
		struct prof_snapshot *r;
		void *buf;
		size_t len;

		assert_int_equal(prof_snapshot__write(w, &buf, &len), 0);
		assert_int_equal(prof_snapshot__read(buf, len, &r), 0);
		free(buf);
		check_window(r);
		prof_snapshot__destroy(r);
	}
	prof_snapshot__destroy(w);
}

/* an image (a saved file, profd's answer) keeps every figure */
static void test_image(void **state)
{
	struct prof_snapshot *ib, *in;
	void *buf;
	size_t len;
	__u32 i;

	(void)state;
	assert_int_equal(prof_snapshot__write(base, &buf, &len), 0);
	assert_int_equal(prof_snapshot__read(buf, len, &ib), 0);
	free(buf);
	assert_int_equal(prof_snapshot__write(now, &buf, &len), 0);
	assert_int_equal(prof_snapshot__read(buf, len, &in), 0);
	free(buf);
	assert_int_equal(in->nlocks, now->nlocks);
	assert_int_equal(in->nplots, now->nplots);
	assert_true(now->nlocks >= 1 && now->nplots >= 3);
	for (i = 0; i < now->nlocks; i++)
		assert_memory_equal(&in->locks[i], &now->locks[i], sizeof(in->locks[i]));
	for (i = 0; i < now->nplots; i++)
		assert_memory_equal(&in->plots[i], &now->plots[i], sizeof(in->plots[i]));
	/* and a window of two images is the window of the reads */
	assert_int_equal(prof_snapshot__diff(in, ib), 0);
	check_window(in);
	prof_snapshot__destroy(ib);
	prof_snapshot__destroy(in);
}

/* profd's history: a frame rebuilt from the newest state and its delta
 * has the locks and plots it had */
static void test_history(void **state)
{
	struct hist_delta *d;
	struct prof_snapshot *w;
	__u32 i;

	(void)state;
	d = hist_delta__new(base, now);
	assert_non_null(d);
	w = hist_snap_clone(now);
	assert_non_null(w);
	assert_false(hist_snap_same(w, base));
	assert_int_equal(hist_delta__apply(w, d), 0);
	assert_int_equal(w->nlocks, base->nlocks);
	assert_int_equal(w->nplots, base->nplots);
	for (i = 0; i < base->nlocks; i++)
		assert_memory_equal(&w->locks[i], &base->locks[i], sizeof(w->locks[i]));
	for (i = 0; i < base->nplots; i++)
		assert_memory_equal(&w->plots[i], &base->plots[i], sizeof(w->plots[i]));
	/* then a --last window over the frame: the same as over the read */
	{
		struct prof_snapshot *c = hist_snap_clone(now);

		assert_non_null(c);
		assert_int_equal(prof_snapshot__diff(c, w), 0);
		check_window(c);
		prof_snapshot__destroy(c);
	}
	hist_delta__destroy(d);
	prof_snapshot__destroy(w);
}

/* python3 -c over a report's JSON: this process's aw_lock */
static void json_lock(const char *path, const char *expr)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; p=json.load(open(\"%s\"))[\"processes\"][0]; "
		 "l=[x for x in p[\"locks\"] if x[\"name\"]==\"aw_rlock\"][0]; "
		 "sys.exit(0 if (%s) else print(l) or 1)'",
		 path, expr);
	assert_int_equal(system(cmd), 0);
}

/* profctl report since a reset, and of a saved file (--input) */
static void test_profctl(void **state)
{
	char pid[16], path[128], file[128], cmd[512];
	int i;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (i = 0; i < 4; i++) {
		PROF_LOCK_ACQUIRED(aw_rlock);
		test_spin_ns(200000);
		PROF_LOCK_RELEASED(aw_rlock);
	}
	assert_int_equal(profctl((const char *[]){ "reset", "--pid", pid, "--no-daemon", NULL }),
			 0);
	for (i = 0; i < 3; i++) {
		PROF_LOCK_ACQUIRED(aw_rlock);
		PROF_LOCK_RELEASED(aw_rlock);
	}
	snprintf(path, sizeof(path), "%s/reset.json", dir);
	assert_int_equal(profctl((const char *[]){ "report", "--pid", pid, "--no-daemon",
						   "--format", "json", "-o", path, NULL }),
			 0);
	/* the three since the reset; their longest hold a window cannot tell */
	json_lock(path, "l[\"acquisitions\"]==3 and l[\"hold_max_ns\"] is None and "
			"l[\"hold_ns\"] < 200000");
	snprintf(cmd, sizeof(cmd), "cd tests && python3 check_schema.py report.schema.json %s >&2",
		 path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/reset.txt", dir);
	assert_int_equal(profctl((const char *[]){ "report", "--pid", pid, "--no-daemon", "-o",
						   path, NULL }),
			 0);
	snprintf(cmd, sizeof(cmd), "grep -Eq '^  aw_rlock +3 +0 .* - +- +0$' %s", path);
	assert_int_equal(system(cmd), 0);

	/* a saved profile keeps them: since the reset (save's default), and
	 * since start */
	snprintf(file, sizeof(file), "%s/saved.prof", dir);
	snprintf(path, sizeof(path), "%s/input.json", dir);
	assert_int_equal(
		profctl((const char *[]){ "save", "--pid", pid, "--no-daemon", "-o", file, NULL }),
		0);
	assert_int_equal(profctl((const char *[]){ "report", "--input", file, "--format", "json",
						   "-o", path, NULL }),
			 0);
	json_lock(path, "l[\"acquisitions\"]==3 and l[\"hold_max_ns\"] is None");
	saved_json(pid, file, path);
	json_lock(path, "l[\"acquisitions\"]==7 and l[\"hold_ns\"] >= 800000 and "
			"l[\"hold_max_ns\"] >= 200000");
}

void annot_b_use(int n);

/* a lock and a plot named in this file and in annot_b.c, with no
 * declaration: one site each, one lock, one plot */
static void test_two_files(void **state)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct prof_snapshot *s;
	struct prof_snap_annot *a;
	const struct prof_annot_lock_sum *l;
	const struct prof_annot_plot_sum *p;
	__u32 i, locks = 0, plots = 0;

	(void)state;
	for (i = 0; i < 2; i++) {
		assert_int_equal(PROF_MUTEX_LOCK(aw_shared, &m), 0);
		assert_int_equal(PROF_MUTEX_UNLOCK(aw_shared, &m), 0);
		PROF_PLOT(aw_sharedp, i);
	}
	annot_b_use(3);
	s = test_snapshot(0);
	assert_non_null(s);
	for (i = 0; i < s->nsites; i++) {
		locks += !strcmp(s->sites[i].name, "aw_shared");
		plots += !strcmp(s->sites[i].name, "aw_sharedp");
	}
	assert_int_equal(locks, 1);
	assert_int_equal(plots, 1);
	/* one entry each on this thread: the same lock (in one zone), the
	 * same plot */
	for (i = locks = plots = 0; i < s->nlocks; i++)
		locks += !strcmp(s->sites[s->locks[i].site].name, "aw_shared");
	for (i = 0; i < s->nplots; i++)
		plots += !strcmp(s->sites[s->plots[i].site].name, "aw_sharedp");
	assert_int_equal(locks, 1);
	assert_int_equal(plots, 1);
	a = prof_snap_annot_sum(s);
	l = lock_named(a, "aw_shared");
	p = plot_named(a, "aw_sharedp");
	assert_non_null(l);
	assert_non_null(p);
	assert_int_equal(l->acquisitions, 5);
	assert_int_equal(p->count, 5);
	assert_true(p->min == 0 && p->max == 102);
	prof_snap_annot_free(a);
	prof_snapshot__destroy(s);
}

/* the report at exit: its locks section (text) and "locks" (JSON) */
static void test_exit_report(void **state)
{
	const char *fmt[] = { "text", "json" };
	char path[128], cmd[512];
	int k, st;

	(void)state;
	for (k = 0; k < 2; k++) {
		pid_t p;

		snprintf(path, sizeof(path), "%s/exit.%s", dir, fmt[k]);
		p = fork();
		assert_true(p >= 0);
		if (p == 0) {
			setenv("PROF_REPORT", path, 1);
			setenv("PROF_REPORT_FORMAT", fmt[k], 1);
			execl("/proc/self/exe", "test_annot_window", "--exit-child", (char *)NULL);
			_exit(127);
		}
		assert_int_equal(waitpid(p, &st, 0), p);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		if (k)
			snprintf(cmd, sizeof(cmd),
				 "python3 -c 'import json,sys; p=json.load(open(\"%s\"))"
				 "[\"processes\"][0]; sys.exit(0 if [x for x in p[\"locks\"] if "
				 "x[\"name\"]==\"aw_lock\" and x[\"acquisitions\"]==3] else 1)'",
				 path);
		else
			snprintf(cmd, sizeof(cmd),
				 "grep -q '^locks of pid' %s && grep -Eq '^  aw_lock +3 +3 ' %s",
				 path, path);
		assert_int_equal(system(cmd), 0);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_annot_window.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	two_reads();
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	prof_snapshot__destroy(base);
	prof_snapshot__destroy(now);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff),	    cmocka_unit_test(test_image),
		cmocka_unit_test(test_history),	    cmocka_unit_test(test_profctl),
		cmocka_unit_test(test_exit_report), cmocka_unit_test(test_two_files),
	};

	/* the child of test_exit_report: three contended acquisitions */
	if (argc > 1 && !strcmp(argv[1], "--exit-child")) {
		take(3, 5000, 1000);
		return 0;
	}
	setenv("PROF_NO_DAEMON", "1", 1);
	test_filter_env();
	return cmocka_run_group_tests(tests, setup, teardown);
}
