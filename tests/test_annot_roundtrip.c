// SPDX-License-Identifier: MIT
/*
 * test_annot_roundtrip.c - unit: named locks and plots survive every way a
 * profile travels.  A JSON report read back (report --input) writes its
 * "locks" and "plots" again as they were, every figure figures.h gives a
 * key (PROF_LOCK_FIGS, PROF_PLOT_FIGS), null ones (what a window cannot
 * tell) too, with hostile names (quotes, backslashes, newlines, control
 * bytes, bytes of no UTF-8, long); a saved file the same.  And the locks
 * and plots of threads that exited and were folded into the aggregate
 * (PROF_MAX_THREADS small: slabs change hands) are in every report, summed
 * as the zones are, and in top's live look; a window takes out what they
 * did before it.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <jansson.h>
#include "testutil.h"
#include "annot.h"
#include "annot_fixture.h"
#include "report_load.h"
#include "prof.h"

/* few slabs: threads that exit are folded soon */
#define RT_SLABS "3"

/* names as a hostile or careless program gives them (the internal ABI
 * takes any string, where the macros take identifiers) */
static const char *const hostile[] = {
	"q\"uote", "back\\slash", "new\nline", "ctl\x01\x1f\x7f", "bad\xff\xc3(utf8",
	"<b>&amp;'", "caf\xc3\xa9",
};

static void hostile_lock(const char *name, int n, __u64 wait_ns)
{
	struct __prof_aname an = { name, PROF_SITE_LOCK };
	/* the cache is the thread's and the name's: one per call site in a
	 * program, one per name here */
	struct __prof_acache c = { 0 };
	int i;

	for (i = 0; i < n; i++) {
		__prof_lock_wait(&an, &c);
		test_spin_ns(wait_ns);
		__prof_lock_acquired(&an, &c);
		__prof_lock_released(&an, &c);
	}
}

static void hostile_plot(const char *name, double v)
{
	struct __prof_aname an = { name, PROF_SITE_PLOT };
	struct __prof_acache c = { 0 };

	__prof_plot(&an, &c, v);
}

/* s as `report --format json` writes it (its sums set as profctl sets
 * them); malloc'd */
static char *json_of(struct prof_snapshot *s)
{
	struct prof_snap_annot *a = prof_snap_annot_sum(s);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	s->annot = a;
	assert_int_equal(prof_report_json(f, &s, 1), 0);
	s->annot = NULL;
	prof_snap_annot_free(a);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* text read back (report --input) and written again */
static char *again(const char *text)
{
	struct prof_snapshot *s;
	char why[256], *out;
	int err = prof_json_load(text, strlen(text), &s, why, sizeof(why));

	if (err)
		fail_msg("the JSON report is refused: %s", why);
	out = json_of(s);
	prof_snapshot__destroy(s);
	return out;
}

/* a report's process's key ("locks", "plots"), a new reference */
static json_t *section(const char *text, const char *key)
{
	json_error_t e;
	json_t *d = json_loads(text, 0, &e), *v;

	if (!d)
		fail_msg("not JSON: %s", e.text);
	v = json_object_get(json_array_get(json_object_get(d, "processes"), 0), key);
	assert_non_null(v);
	json_incref(v);
	json_decref(d);
	return v;
}

/* the locks and plots of a and b are the same JSON */
static void same_annot(const char *a, const char *b)
{
	static const char *const keys[] = { "locks", "plots" };
	size_t k;

	for (k = 0; k < 2; k++) {
		json_t *x = section(a, keys[k]), *y = section(b, keys[k]);

		if (!json_equal(x, y)) {
			char *sx = json_dumps(x, JSON_ENSURE_ASCII), *sy = json_dumps(y, JSON_ENSURE_ASCII);

			fail_msg("%s differ:\n%s\n%s", keys[k], sx, sy);
		}
		json_decref(x);
		json_decref(y);
	}
}

/* text -> --input -> text2 -> --input -> text3: text2 has text's locks and
 * plots, text3 is text2 to the byte */
static void round_trips(const char *text)
{
	char *t2 = again(text), *t3 = again(t2);

	same_annot(text, t2);
	assert_string_equal(t2, t3);
	free(t2);
	free(t3);
}

/* the keys figures.h gives a lock's and a plot's figures */
#define FIG_KEY(f, unit, across, window, key) key,
static const char *const lock_keys[] = { PROF_LOCK_FIGS(FIG_KEY) };
static const char *const plot_keys[] = { PROF_PLOT_FIGS(FIG_KEY) };
#undef FIG_KEY
#define FIG_NS(f, unit, across, window, key) !strcmp(#unit, "ticks"),
static const bool lock_ns[] = { PROF_LOCK_FIGS(FIG_NS) };
#undef FIG_NS

/*
 * Every figure that has a key, each a value of its own (and each that may
 * be null, null), in a report's "locks" and "plots": read back and written
 * again, each as it was
 */
static void test_every_figure(void **state)
{
	struct prof_snapshot *s;
	json_t *doc, *p, *locks, *plots;
	json_error_t e;
	char *text, *out;
	size_t k, n = 0;
	int null;

	(void)state;
	hostile_lock("rt_fig", 2, 3000);
	s = test_snapshot(0);
	assert_non_null(s);
	text = json_of(s);
	prof_snapshot__destroy(s);
	doc = json_loads(text, 0, &e);
	assert_non_null(doc);
	free(text);
	p = json_array_get(json_object_get(doc, "processes"), 0);
	locks = json_array();
	plots = json_array();
	for (null = 0; null < 2; null++) {
		json_t *l = json_object(), *q = json_object();
		char name[32];

		snprintf(name, sizeof(name), "rt_lock%d", null);
		json_object_set_new(l, "name", json_string(name));
		for (k = 0; k < sizeof(lock_keys) / sizeof(*lock_keys); k++) {
			if (!lock_keys[k][0])
				continue;
			/* what may be null: times (json_ns), and blocked
			 * without profd's word */
			if (null && (lock_ns[k] || !strcmp(lock_keys[k], "blocked")))
				json_object_set_new(l, lock_keys[k], json_null());
			else
				json_object_set_new(l, lock_keys[k],
						    json_integer((json_int_t)(1000 * (k + 1) + 7 * null)));
			n++;
		}
		/* in the writer's order: the most waited first, an
		 * unknown wait above every known one */
		json_array_insert_new(locks, 0, l);
		snprintf(name, sizeof(name), "rt_plot%d", null);
		json_object_set_new(q, "name", json_string(name));
		for (k = 0; k < sizeof(plot_keys) / sizeof(*plot_keys); k++) {
			if (!plot_keys[k][0])
				continue;
			if (!strcmp(plot_keys[k], "count"))
				json_object_set_new(q, "count", json_integer(7));
			else if (null)
				json_object_set_new(q, plot_keys[k], json_null());
			else
				json_object_set_new(q, plot_keys[k], json_real(-1.0 / (double)(k + 3)));
			n++;
		}
		/* a mean that times 7 rounds */
		json_object_set_new(q, "mean", json_real(0.1));
		json_array_append_new(plots, q);
	}
	assert_true(n >= 20);
	json_object_set_new(p, "locks", locks);
	json_object_set_new(p, "plots", plots);
	text = json_dumps(doc, JSON_COMPACT);
	assert_non_null(text);
	json_decref(doc);
	out = again(text);
	same_annot(text, out);
	free(out);
	round_trips(text);
	free(text);
}

/* an empty report's JSON with these "locks" and "plots" */
static char *with_annot(const char *locks, const char *plots)
{
	char *text;

	assert_true(asprintf(&text,
			     "{\"version\":4,\"processes\":[{\"pid\":7,\"uid\":0,\"comm\":\"c\","
			     "\"clock\":\"tsc\",\"tick_hz\":2900000000,\"exited\":true,"
			     "\"tsc_synced\":false,\"threads\":[],\"locks\":%s,\"plots\":%s}]}",
			     locks, plots) > 0);
	return text;
}

/* what is no figure is refused, one line saying what; a name longer than
 * a name (bytes of no UTF-8 that came back as characters) is cut at a
 * character, never refused */
static void test_refused_and_cut(void **state)
{
	static const char *const bad[][2] = {
		{ "[{\"name\":\"l\",\"acquisitions\":-1}]", "[]" },
		{ "[{\"name\":\"l\",\"acquisitions\":1.5}]", "[]" },
		{ "[{\"acquisitions\":1}]", "[]" },
		{ "{}", "[]" },
		{ "[]", "[{\"name\":\"p\",\"count\":1,\"min\":\"x\",\"max\":1,\"last\":1,\"mean\":1}]" },
		{ "[]", "[{\"name\":\"p\",\"count\":null,\"min\":1,\"max\":1,\"last\":1,\"mean\":1}]" },
		{ "[]", "[{\"name\":\"p\\u0000\",\"count\":1,\"min\":1,\"max\":1,\"last\":1,\"mean\":1}]" },
	};
	struct prof_snapshot *s;
	char why[256], *text, *out, name[256], *p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		text = with_annot(bad[i][0], bad[i][1]);
		assert_int_not_equal(prof_json_load(text, strlen(text), &s, why, sizeof(why)), 0);
		assert_null(strchr(why, '\n'));
		free(text);
	}
	/* 40 characters of two bytes: cut to 31 of them */
	for (p = name, i = 0; i < 40; i++)
		p += sprintf(p, "\\u00e9");
	{
		char locks[512];

		snprintf(locks, sizeof(locks),
			 "[{\"name\":\"%s\",\"acquisitions\":1,\"contended\":0,\"wait_ns\":0,"
			 "\"wait_max_ns\":0,\"hold_ns\":5,\"hold_max_ns\":5,\"blocked\":null,"
			 "\"unheld\":0}]",
			 name);
		text = with_annot(locks, "[]");
	}
	assert_int_equal(prof_json_load(text, strlen(text), &s, why, sizeof(why)), 0);
	assert_int_equal(s->nlocks, 1);
	assert_int_equal(strlen(s->sites[s->locks[0].site].name), 62);
	assert_int_equal(strspn(s->sites[s->locks[0].site].name, "\xc3\xa9"), 62);
	out = json_of(s);
	prof_snapshot__destroy(s);
	round_trips(out);
	free(out);
	free(text);
}

/* the locks and plots of this process: hostile names, long ones, and a
 * window's unknown figures */

static void hostile_annot(void)
{
	char big[4096];
	size_t i;

	for (i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		hostile_lock(hostile[i], (int)i + 1, 2000);
		hostile_plot(hostile[i], (double)i - 2.5);
		hostile_plot(hostile[i], 1e300 * (double)i);
	}
	/* 4 KiB names: cut to a name's 63 bytes */
	memset(big, 'n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	hostile_lock(big, 3, 2000);
	hostile_plot(big, 0.1);
}

/* since start, and a window after more of them (its longest hold, and
 * the plots' min and max, unknown): each read back as written */
static void test_live_round_trip(void **state)
{
	struct prof_snapshot *s, *base;
	char *text;
	size_t i;

	(void)state;
	hostile_annot();
	base = test_snapshot(0);
	assert_non_null(base);
	hostile_annot();
	s = test_snapshot(0);
	assert_non_null(s);
	text = json_of(s);
	/* the names as JSON has them, the 4 KiB one cut */
	assert_non_null(strstr(text, "\"q\\\"uote\""));
	assert_non_null(strstr(text, "\"bad\\u00ff\\u00c3(utf8\""));
	assert_non_null(strstr(text, "\"ctl\\u0001\\u001f\\u007f\""));
	round_trips(text);
	free(text);
	assert_int_equal(prof_snapshot__diff(s, base), 0);
	text = json_of(s);
	assert_non_null(strstr(text, "\"hold_max_ns\":null"));
	assert_non_null(strstr(text, "\"min\":null"));
	round_trips(text);
	free(text);
	for (i = 0; i < s->nplots; i++)
		assert_true(s->plots[i].count <= 2);
	prof_snapshot__destroy(s);
	prof_snapshot__destroy(base);
}

/* through profctl: report --format json, then --input it; save, then
 * --input the file: the same locks and plots as the live report */
static void test_profctl(void **state)
{
	char pid[16], live[128], back[128], file[128];
	char *a, *b;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(live, sizeof(live), "%s/live.json", test_dir);
	snprintf(back, sizeof(back), "%s/back.json", test_dir);
	snprintf(file, sizeof(file), "%s/saved.prof", test_dir);
	assert_int_equal(profctl((const char *[]){ "report", "--pid", pid, "--no-daemon",
						   "--since-start", "--format", "json", "-o", live,
						   NULL }),
			 0);
	assert_int_equal(profctl((const char *[]){ "report", "--input", live, "--format", "json",
						   "-o", back, NULL }),
			 0);
	a = test_slurp(live, NULL);
	b = test_slurp(back, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(strstr(a, "\"q\\\"uote\""));
	same_annot(a, b);
	free(b);
	saved_json(pid, file, back);
	b = test_slurp(back, NULL);
	assert_non_null(b);
	same_annot(a, b);
	free(b);
	/* the text view of the JSON read back has its locks section */
	assert_int_equal(profctl((const char *[]){ "report", "--input", live, "-o", back, NULL }),
			 0);
	b = test_slurp(back, NULL);
	assert_non_null(b);
	assert_non_null(strstr(b, "\nlocks of pid "));
	assert_non_null(strstr(b, "rt_fig"));
	free(b);
	free(a);
}

/* --- exited threads ------------------------------------------------------ */

#define RT_WORKERS 9
#define RT_TAKES 5

/* worker k: RT_TAKES contended acquisitions of rt_exit in a zone, each
 * waiting some 20 us + k us and holding some 10 us; plots k, 100 + k */
static void *exit_worker(void *arg)
{
	int k = (int)(long)arg, i;

	for (i = 0; i < RT_TAKES; i++) {
		PROF_USDT(rt_exit_zone);

		PROF_LOCK_WAIT(rt_exit);
		test_spin_ns(20000 + 1000 * (__u64)k);
		PROF_LOCK_ACQUIRED(rt_exit);
		test_spin_ns(10000);
		PROF_LOCK_RELEASED(rt_exit);
	}
	PROF_PLOT(rt_exitp, k);
	PROF_PLOT(rt_exitp, 100 + k);
	return NULL;
}

static void run_workers(int from, int n)
{
	int k;

	for (k = from; k < from + n; k++) {
		pthread_t t;

		assert_int_equal(pthread_create(&t, NULL, exit_worker, (void *)(long)k), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
	}
}

/* the aggregate's rt_exitp (tid 0): the folded workers', those that no
 * slab holds; its last the newest of them, its min and max theirs */
static void check_agg_plot(const struct prof_snapshot *s)
{
	const struct prof_snap_plot *agg = NULL;
	bool in_slab[RT_WORKERS] = { false };
	int k, lo = -1, hi = -1;
	__u32 i;

	for (i = 0; i < s->nplots; i++) {
		const struct prof_snap_plot *x = &s->plots[i];

		if (x->site >= s->nsites || strcmp(s->sites[x->site].name, "rt_exitp"))
			continue;
		if (!x->tid)
			agg = x;
		else if (x->last >= 100 && x->last < 100 + RT_WORKERS)
			in_slab[(int)x->last - 100] = true;
	}
	for (k = 0; k < RT_WORKERS; k++) {
		if (in_slab[k])
			continue;
		lo = lo < 0 ? k : lo;
		hi = k;
	}
	assert_true(hi >= 0);
	assert_non_null(agg);
	assert_true(agg->last == 100 + hi);
	assert_true(agg->min == lo && agg->max == 100 + hi);
}

/* s's rt_exit and rt_exitp: workers [from, from + n) in full */
static void check_exited(const struct prof_snapshot *s, int from, int n, bool window)
{
	struct prof_snap_annot *a = prof_snap_annot_sum(s);
	const struct prof_annot_lock_sum *l = lock_named(a, "rt_exit");
	const struct prof_annot_plot_sum *p = plot_named(a, "rt_exitp");
	__u64 hist = 0, lo = (__u64)(20000 + 1000 * (from + n - 1)) * s->tick_hz / 1000000000ull;
	__u32 i, b;

	assert_non_null(l);
	assert_non_null(p);
	assert_int_equal(l->acquisitions, (__u64)n * RT_TAKES);
	assert_int_equal(l->contended, (__u64)n * RT_TAKES);
	assert_int_equal(l->unheld, 0);
	/* each wait at least its spin, each hold too */
	assert_true(prof_snap_ns(s, l->wait_ticks) >= (__u64)n * RT_TAKES * 20000);
	assert_true(prof_snap_ns(s, l->hold_ticks) >= (__u64)n * RT_TAKES * 10000);
	/* the longest wait: the last worker's at least (a window's is
	 * within its bucket, a factor of two) */
	assert_true(l->wait_max != PROF_SNAP_UNKNOWN && l->wait_max >= (window ? lo / 2 : lo));
	if (!window)
		assert_true(l->hold_max != PROF_SNAP_UNKNOWN &&
			    prof_snap_ns(s, l->hold_max) >= 10000);
	/* every contended wait in a histogram's bucket */
	for (i = 0; i < s->nlocks; i++)
		if (s->locks[i].site < s->nsites &&
		    !strcmp(s->sites[s->locks[i].site].name, "rt_exit"))
			for (b = 0; b < PROF_LOCK_HIST; b++)
				hist += s->locks[i].wait_hist[b];
	assert_int_equal(hist, (__u64)n * RT_TAKES);
	assert_int_equal(p->count, (__u64)n * 2);
	assert_true(p->last == 100 + from + n - 1);
	if (!window) {
		assert_true(p->min == from);
		assert_true(p->max == 100 + from + n - 1);
		check_agg_plot(s);
	}
	prof_snap_annot_free(a);
}

/*
 * Threads that lock, plot and exit, more of them than slabs: folded into
 * the aggregate, their locks and plots with them; in a read, an image
 * (save, profd), a JSON report read back, and a window that began after
 * some of them (only the later ones in it)
 */
static void test_exited_threads(void **state)
{
	struct prof_snapshot *s, *b, *img;
	void *buf;
	size_t len;
	char *text, why[256];
	__u32 i;
	bool agg = false;

	(void)state;
	run_workers(0, 3);
	b = test_snapshot(0);
	assert_non_null(b);
	run_workers(3, RT_WORKERS - 3);
	s = test_snapshot(0);
	assert_non_null(s);
	/* some were folded: the aggregate holds their locks */
	for (i = 0; i < s->nthreads; i++)
		agg |= s->threads[i].folds >= 3;
	assert_true(agg);
	check_exited(s, 0, RT_WORKERS, false);
	/* an image keeps the aggregate's */
	assert_int_equal(prof_snapshot__write(s, &buf, &len), 0);
	assert_int_equal(prof_snapshot__read(buf, len, &img), 0);
	free(buf);
	check_exited(img, 0, RT_WORKERS, false);
	prof_snapshot__destroy(img);
	/* a JSON report read back */
	text = json_of(s);
	assert_int_equal(prof_json_load(text, strlen(text), &img, why, sizeof(why)), 0);
	free(text);
	{
		struct prof_snap_annot *a = prof_snap_annot_sum(img);

		assert_int_equal(lock_named(a, "rt_exit")->acquisitions, RT_WORKERS * RT_TAKES);
		assert_int_equal(plot_named(a, "rt_exitp")->count, RT_WORKERS * 2);
		prof_snap_annot_free(a);
	}
	prof_snapshot__destroy(img);
	/* the live look at the segment (top's) has them too */
	{
		struct prof_annot *an;
		struct prof_annot_lock_sum *ls;
		struct prof_annot_plot_sum *ps;
		size_t seglen = 0;
		void *seg = test_own_segment(&seglen);
		long nl, np, k, acq = -1, pts = -1;

		assert_int_equal(prof_seg_annot(seg, seglen, &an), 0);
		nl = prof_annot_lock_sums(an, &ls);
		np = prof_annot_plot_sums(an, &ps);
		for (k = 0; k < nl; k++)
			if (!strcmp(ls[k].name, "rt_exit"))
				acq = (long)ls[k].acquisitions;
		for (k = 0; k < np; k++)
			if (!strcmp(ps[k].name, "rt_exitp"))
				pts = (long)ps[k].count;
		assert_int_equal(acq, RT_WORKERS * RT_TAKES);
		assert_int_equal(pts, RT_WORKERS * 2);
		free(ls);
		free(ps);
		prof_annot__destroy(an);
		munmap(seg, seglen);
	}
	/* a window from b: the six after it, not the three before */
	assert_int_equal(prof_snapshot__diff(s, b), 0);
	check_exited(s, 3, RT_WORKERS - 3, true);
	prof_snapshot__destroy(s);
	prof_snapshot__destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_figure),	cmocka_unit_test(test_refused_and_cut),
		cmocka_unit_test(test_live_round_trip), cmocka_unit_test(test_profctl),
		cmocka_unit_test(test_exited_threads),
	};

	setenv("PROF_NO_DAEMON", "1", 1);
	setenv("PROF_MAX_THREADS", RT_SLABS, 1);
	test_filter_env();
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
