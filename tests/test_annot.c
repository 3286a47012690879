// SPDX-License-Identifier: MIT
/*
 * test_annot.c - unit: annotations (prof.h): plots, messages, values and
 * texts on calls, named locks.  Two threads contend one mutex 2,000 times
 * each, holding it ~50 us, plotting and logging every 100 ms: the reader
 * counts 4,000 acquisitions, a wait above zero and the hold the spins
 * add up to; profctl trace shows the plot, the messages, each call's
 * value and the lock's spans (tests/check_annot.py).  And what bad input
 * does: NULL and oversized texts, NaN, a value outside any zone, a release
 * without an acquire, one name for two locks, full tables, messages from
 * a signal handler, and one raised inside another's formatting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <printf.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include "testutil.h"
#include "annot_util.h"
#include "profctl_child.h"
#include "prof.h"

#define ITERS 2000
#define HOLD_NS 50000ull

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;

static pthread_barrier_t both;

static void *contender(void *arg)
{
	__u64 next = 0;
	char text[32];
	int i;

	(void)arg;
	pthread_barrier_wait(&both);
	for (i = 0; i < ITERS; i++) {
		PROF_USDT(an_work);

		snprintf(text, sizeof(text), "i=%d", i);
		PROF_ZONE_VALUE(i);
		PROF_ZONE_TEXT(text);
		if (test_mono_ns() >= next) {
			PROF_PLOT(an_queue, i);
			PROF_MESSAGE("tick %d", i);
			next = test_mono_ns() + 100000000ull;
		}
		assert_int_equal(PROF_MUTEX_LOCK(an_qlock, &qlock), 0);
		test_spin_ns(HOLD_NS);
		assert_int_equal(PROF_MUTEX_UNLOCK(an_qlock, &qlock), 0);
	}
	return NULL;
}

static const struct prof_annot_lock_sum *lock_sum(const struct prof_annot_lock_sum *v, long n,
						   const char *name)
{
	long i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* serve: a gauge per plot, a family per lock figure, this process's */
static void serve_check(pid_t pid, const struct prof_annot_lock_sum *q, __u64 points, double last)
{
	char want[256];
	int om;

	struct prof_snapshot *s = test_snapshot(pid);
	struct prof_snap_annot *a;

	/* this process's families, as a scrape writes them (a whole scrape
	 * reads every process of ours: slow where /dev/shm is crowded) */
	assert_non_null(s);
	a = prof_snap_annot_sum(s);
	assert_non_null(a);
	s->annot = a;
	for (om = 0; om < 2; om++) {
		const struct prof_snapshot *one = s;
		char *m = NULL;
		size_t mlen = 0;
		FILE *mf = open_memstream(&m, &mlen);

		assert_non_null(mf);
		pc_annot_metrics(mf, &one, 1, om);
		assert_int_equal(fclose(mf), 0);

		snprintf(want, sizeof(want), "profd_lock_acquisitions_total{pid=\"%d\",comm=\"",
			 (int)pid);
		assert_non_null(strstr(m, want));
		snprintf(want, sizeof(want), "\",lock=\"an_qlock\"} %llu\n",
			 (unsigned long long)q->acquisitions);
		assert_non_null(strstr(m, want));
		snprintf(want, sizeof(want), "\",lock=\"an_qlock\"} %llu\n# TYPE profd_lock_wait",
			 (unsigned long long)q->contended);
		assert_non_null(strstr(m, want));
		snprintf(want, sizeof(want), "\",plot=\"an_queue\"} %llu\n",
			 (unsigned long long)points);
		assert_non_null(strstr(m, want));
		assert_non_null(strstr(m, "# TYPE profd_plot_value gauge\n"));
		{
			/* the gauge: the plot's newest point */
			const char *g = strstr(m, "profd_plot_value{");

			snprintf(want, sizeof(want), "\",plot=\"an_queue\"} ");
			g = g ? strstr(g, want) : NULL;
			assert_non_null(g);
			assert_true(strtod(g + strlen(want), NULL) == last);
		}
		assert_non_null(strstr(m, om ? "# UNIT profd_lock_hold_seconds seconds\n"
					     : "# TYPE profd_lock_hold_seconds_total counter\n"));
		/* no profd here: no blocked sample */
		assert_null(strstr(m, "profd_lock_blocked_total{"));
		/* the text format as Prometheus reads it, where promtool is */
		if (!om && !system("command -v promtool >/dev/null 2>&1")) {
			char path[128], cmd[256];
			FILE *f;

			snprintf(path, sizeof(path), "%s/metrics.txt", test_dir);
			f = fopen(path, "w");
			assert_non_null(f);
			fputs(m, f);
			assert_int_equal(fclose(f), 0);
			snprintf(cmd, sizeof(cmd), "promtool check metrics < %s >&2", path);
			assert_int_equal(system(cmd), 0);
		}
		free(m);
	}
	prof_snap_annot_free(a);
	prof_snapshot__destroy(s);
}

/* the done-when program: two threads, one mutex */
static void test_contended(void **state)
{
	struct prof_annot_lock_sum *locks;
	struct prof_annot_plot_sum *plots;
	const struct prof_annot_lock_sum *q;
	struct prof_annot *a;
	pthread_t th[2];
	__u64 t0, wall_ns, hold_ns, wait_ns, k, nmsg = 0, npts = 0;
	long n, np, i;
	char path[128], pid[16], acq[16], cont[16], cmd[1024];

	(void)state;
	pthread_barrier_init(&both, NULL, 2);
	t0 = test_mono_ns();
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, contender, NULL), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	wall_ns = test_mono_ns() - t0;
	pthread_barrier_destroy(&both);

	a = own_annot();
	n = prof_annot_lock_sums(a, &locks);
	assert_true(n >= 1);
	q = lock_sum(locks, n, "an_qlock");
	assert_non_null(q);
	assert_int_equal(q->acquisitions, 2 * ITERS);
	/* two threads on one mutex for 200 ms: some acquisitions waited */
	assert_true(q->contended > 0 && q->contended <= 2 * ITERS);
	assert_int_equal(q->unheld, 0);
	hold_ns = (__u64)((double)q->hold_ticks * 1e9 / (double)a->tick_hz);
	wait_ns = (__u64)((double)q->wait_ticks * 1e9 / (double)a->tick_hz);
	/* held at least its spins, and by one thread at a time: within the
	 * run's wall time */
	assert_true(hold_ns >= 2 * ITERS * HOLD_NS);
	assert_true(hold_ns <= wall_ns);
	/* a contended wait lasts while the other holds, some us at least */
	assert_true(wait_ns > q->contended * 100);
	assert_true(q->wait_max <= q->wait_ticks && q->hold_max <= q->hold_ticks);
	np = prof_annot_plot_sums(a, &plots);
	assert_true(np >= 1);
	for (i = 0; i < np && strcmp(plots[i].name, "an_queue"); i++)
		;
	assert_true(i < np);
	assert_true(plots[i].count >= 2);
	assert_true(plots[i].min == 0 && plots[i].max <= ITERS - 1 && plots[i].last <= ITERS - 1);
	for (k = 0; k < a->nthreads; k++) {
		nmsg += a->threads[k].nmsgs;
		npts += a->threads[k].npoints;
	}
	assert_true(nmsg >= 2 && npts >= 2);

	/* the same in profctl trace */
	snprintf(path, sizeof(path), "%s/annot.json", test_dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_int_equal(profctl((const char *[]){ "trace", "--pid", pid, "--no-daemon", "-o", path,
						   NULL }),
			 0);
	snprintf(acq, sizeof(acq), "%llu", (unsigned long long)q->acquisitions);
	snprintf(cont, sizeof(cont), "%llu", (unsigned long long)q->contended);
	snprintf(cmd, sizeof(cmd), "cd tests && python3 check_annot.py %s %s %s >&2", path, acq,
		 cont);
	assert_int_equal(system(cmd), 0);

	/* and in the report: JSON (its schema too), and the text's locks */
	snprintf(path, sizeof(path), "%s/report.json", test_dir);
	assert_int_equal(profctl((const char *[]){ "report", "--pid", pid, "--no-daemon", "--format",
						   "json", "-o", path, NULL }),
			 0);
	snprintf(cmd, sizeof(cmd),
		 "cd tests && python3 check_annot.py --report %s %s %s %llu >&2 && "
		 "python3 check_schema.py report.schema.json %s >&2",
		 path, acq, cont,
		 (unsigned long long)(__u64)((double)q->hold_ticks * 1e9 / (double)a->tick_hz), path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/report.txt", test_dir);
	assert_int_equal(profctl((const char *[]){ "report", "--pid", pid, "--no-daemon", "-o", path,
						   NULL }),
			 0);
	snprintf(cmd, sizeof(cmd), "grep -q '^  an_qlock  *%s  *%s ' %s", acq, cont, path);
	assert_int_equal(system(cmd), 0);
	serve_check(getpid(), q, plots[i].count, plots[i].last);

	/* top: the lock's row, at rates of 0 now that the threads are done */
	snprintf(path, sizeof(path), "%s/top.txt", test_dir);
	snprintf(cmd, sizeof(cmd),
		 "PROFCTL_NO_DAEMON=1 .output/profctl top --pid %s -n 2 -d 0.05 > %s && "
		 "grep -q '^an_qlock  *0.0  *0.0 ' %s && grep -q '^lock  *acquired/s' %s",
		 pid, path, path, path);
	assert_int_equal(system(cmd), 0);

	/* the HTML timeline: the plot a line, the messages marks, the values */
	snprintf(path, sizeof(path), "%s/annot.html", test_dir);
	assert_int_equal(profctl((const char *[]){ "trace", "--pid", pid, "--no-daemon", "--format",
						   "html", "-o", path, NULL }),
			 0);
	if (system("command -v chromium >/dev/null 2>&1")) {
		fprintf(stderr, "skipped the HTML check: no chromium\n");
	} else {
		snprintf(cmd, sizeof(cmd), "timeout 120 python3 tests/annot_html.py %s an_queue 2",
			 path);
		assert_int_equal(system(cmd), 0);
	}
	free(plots);
	free(locks);
	prof_annot__destroy(a);
}

static __u32 my_tid(void)
{
	return (__u32)gettid();
}

/* fn run to its end in a thread of its own (it returns my_tid()); this
 * process's annotations then into *a (destroy them), that thread's
 * returned */
static const struct prof_annot_thread *thread_annot(void *(*fn)(void *), struct prof_annot **a)
{
	pthread_t th;
	void *ret;

	assert_int_equal(pthread_create(&th, NULL, fn, NULL), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	*a = own_annot();
	return annot_of(*a, (__u32)(uintptr_t)ret);
}

static void *bad_input(void *arg)
{
	static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
	char big[300];
	const char *volatile nul = NULL;

	(void)arg;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	/* outside any zone: dropped (the second on the fast path) */
	for (int i = 0; i < 2; i++)
		PROF_ZONE_VALUE(1);
	{
		PROF_USDT(an_bad);
		PROF_ZONE_TEXT(nul);
		PROF_ZONE_TEXT(big);
		PROF_ZONE_VALUE(NAN);
		PROF_ZONE_VALUE(7u);
		PROF_PLOT(an_nan, INFINITY);
		PROF_PLOT(an_nan, 2.5f);
		/* a NaN where the name is bound already (the fast path) */
		for (int i = 0; i < 2; i++)
			PROF_PLOT(an_nan, i ? (double)NAN : 2.5);
		PROF_MESSAGE("%s", big);
		/* a release without an acquire: counted, nothing held */
		PROF_LOCK_RELEASED(an_free);
		/* one name for two locks: nested */
		assert_int_equal(PROF_MUTEX_LOCK(an_two, &m1), 0);
		assert_int_equal(PROF_MUTEX_LOCK(an_two, &m2), 0);
		assert_int_equal(PROF_MUTEX_UNLOCK(an_two, &m2), 0);
		assert_int_equal(PROF_MUTEX_UNLOCK(an_two, &m1), 0);
		/* a generic lock */
		PROF_LOCK_WAIT(an_spin);
		PROF_LOCK_ACQUIRED(an_spin);
		PROF_LOCK_RELEASED(an_spin);
	}
	return (void *)(uintptr_t)my_tid();
}

static void test_bad_input(void **state)
{
	const struct prof_annot_thread *t;
	struct prof_annot *a;
	__u32 i;
	__u64 k;
	bool text_null = false, text_cut = false, seven = false;
	__u64 spin_waits = 0;

	(void)state;
	t = thread_annot(bad_input, &a);
	/* the values outside a zone, the NaN value, the infinite and the
	 * NaN point */
	assert_int_equal(t->dropped, 5);
	/* the big message and the big text */
	assert_int_equal(t->cut, 2);
	assert_int_equal(t->nmsgs, 1);
	assert_int_equal(strlen(t->msgs[0].text), PROF_MSG_TEXT - 1);
	for (k = 0; k < t->nvalues; k++) {
		text_null |= t->values[k].kind == PROF_VALUE_TEXT_KIND && !t->values[k].text[0];
		text_cut |= t->values[k].kind == PROF_VALUE_TEXT_KIND &&
			    strlen(t->values[k].text) == PROF_VALUE_TEXT - 1;
		seven |= t->values[k].kind == PROF_VALUE_NUM && t->values[k].value == 7;
	}
	assert_int_equal(t->nvalues, 3);
	assert_true(text_null && text_cut && seven);
	assert_int_equal(t->nplots, 1);
	assert_int_equal(t->plots[0].count, 2);
	assert_true(t->plots[0].last == 2.5);
	for (i = 0; i < t->nlocks; i++) {
		const struct prof_annot_lock *l = &t->locks[i];

		if (!strcmp(l->name, "an_free")) {
			assert_int_equal(l->unheld, 1);
			assert_int_equal(l->acquisitions, 0);
			assert_int_equal(l->hold_ticks, 0);
		} else if (!strcmp(l->name, "an_two")) {
			assert_int_equal(l->acquisitions, 2);
			assert_int_equal(l->unheld, 0);
			assert_true(l->hold_ticks > 0);
		} else if (!strcmp(l->name, "an_spin")) {
			assert_int_equal(l->acquisitions, 1);
			/* contended only if the instant between WAIT and
			 * ACQUIRED took over 1 us (it may, under a sanitizer
			 * or a loaded machine): its time waited says which */
			assert_true(l->contended <= 1);
			assert_true(l->contended ? l->wait_ticks > 0 : !l->wait_ticks);
			spin_waits = l->contended;
		} else {
			fail_msg("lock %s", l->name);
		}
	}
	assert_int_equal(t->nlocks, 3);
	/* one hold of an_two (nested: first acquire to last release), one
	 * of an_spin (and its wait, if contended), none of an_free */
	assert_int_equal(t->nspans, 2 + spin_waits);
	prof_annot__destroy(a);
}

/* more names than a thread's tables hold: the extra ones dropped */
static void *many_names(void *arg)
{
	char names[PROF_PLOTS_MAX + 6][16];
	struct __prof_acache c[PROF_PLOTS_MAX + 6];
	int i;

	(void)arg;
	memset(c, 0, sizeof(c));
	for (i = 0; i < PROF_PLOTS_MAX + 6; i++) {
		struct __prof_aname n = { names[i], PROF_SITE_PLOT };

		snprintf(names[i], sizeof(names[i]), "an_p%d", i);
		__prof_plot(&n, &c[i], i);
	}
	return (void *)(uintptr_t)my_tid();
}

static void test_full_tables(void **state)
{
	struct prof_annot *a;
	const struct prof_annot_thread *t = thread_annot(many_names, &a);

	(void)state;
	assert_int_equal(t->nplots, PROF_PLOTS_MAX);
	assert_int_equal(t->dropped, 6);
	assert_int_equal(t->npoints, PROF_PLOTS_MAX);
	prof_annot__destroy(a);
}

/*
 * Messages from a signal handler, which lands anywhere in the thread's
 * own messages: each kept whole or dropped (counted), never torn.
 */
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
	PROF_MESSAGE("from the handler %d", 42);
}

static volatile int stop_sig;

static void *signaller(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	while (!__atomic_load_n(&stop_sig, __ATOMIC_RELAXED)) {
		pthread_kill(target, SIGUSR1);
		sched_yield();
	}
	return NULL;
}

struct sig_run {
	pthread_t self;
	__u32 tid;
	int sent;
};

static void *sig_target(void *arg)
{
	struct sig_run *r = arg;
	pthread_t s;
	int i;

	r->tid = my_tid();
	PROF_MESSAGE("first");
	assert_int_equal(pthread_create(&s, NULL, signaller, &r->self), 0);
	/* twice round the ring at least, so "first" is gone even where the
	 * handler's messages are mostly dropped (ThreadSanitizer delivers
	 * signals inside the message's own vsnprintf) */
	for (i = 0; i < 200000 && (handled < 2000 || i < 2 * PROF_MSGS); i++)
		PROF_MESSAGE("from the thread %d", 7);
	__atomic_store_n(&stop_sig, 1, __ATOMIC_RELAXED);
	assert_int_equal(pthread_join(s, NULL), 0);
	r->sent = i;
	return NULL;
}

static void test_signal_messages(void **state)
{
	const struct prof_annot_thread *t;
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct prof_annot *a;
	struct sig_run r;
	__u64 k;

	(void)state;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	assert_int_equal(pthread_create(&r.self, NULL, sig_target, &r), 0);
	assert_int_equal(pthread_join(r.self, NULL), 0);
	signal(SIGUSR1, SIG_IGN);
	a = own_annot();
	t = annot_of(a, r.tid);
	assert_true(t->nmsgs > 0);
	for (k = 0; k < t->nmsgs; k++)
		if (strcmp(t->msgs[k].text, "from the handler 42") &&
		    strcmp(t->msgs[k].text, "from the thread 7"))
			fail_msg("a torn message: '%s'", t->msgs[k].text);
	printf("%d messages, %d from the handler, %llu dropped\n", r.sent, (int)handled,
	       (unsigned long long)t->dropped);
	prof_annot__destroy(a);
}

/*
 * A handler's annotation while its thread is writing one is dropped and
 * counted, never written beside the one half made.  The signal comes at a
 * known instant: raised by a conversion of the message's own format (glibc's
 * register_printf_specifier), so inside its vsnprintf, with busy set (the
 * sanitizers' printf interceptors say once that they do not know %W).
 */
static void on_usr2(int sig)
{
	(void)sig;
	PROF_MESSAGE("nested %d", 2);
}

static int nest_print(FILE *f, const struct printf_info *info, const void *const *args)
{
	(void)info, (void)args;
	raise(SIGUSR2);
	return fputs("mid", f) < 0 ? -1 : 3;
}

static int nest_arginfo(const struct printf_info *info, size_t n, int *types, int *size)
{
	(void)info, (void)n, (void)types, (void)size;
	return 0;
}

static void test_nested_dropped(void **state)
{
	/* not a literal: the compiler would check a conversion it does not know */
	static const char *volatile fmt = "outer %W end";
	struct sigaction sa = { .sa_handler = on_usr2 };
	const struct prof_annot_thread *t;
	struct prof_annot *a;
	__u64 dropped, k;

	(void)state;
	PROF_MESSAGE("before");
	a = own_annot();
	dropped = annot_of(a, my_tid())->dropped;
	prof_annot__destroy(a);
	assert_int_equal(register_printf_specifier('W', nest_print, nest_arginfo), 0);
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR2, &sa, NULL), 0);
	/* the handler on its own writes its message */
	raise(SIGUSR2);
	PROF_MESSAGE(fmt);
	signal(SIGUSR2, SIG_DFL);
	a = own_annot();
	t = annot_of(a, my_tid());
	assert_true(t->nmsgs >= 3);
	assert_string_equal(t->msgs[t->nmsgs - 1].text, "outer mid end");
	assert_string_equal(t->msgs[t->nmsgs - 2].text, "nested 2");
	assert_string_equal(t->msgs[t->nmsgs - 3].text, "before");
	assert_int_equal(t->dropped, dropped + 1);
	for (k = 0; k + 2 < t->nmsgs; k++)
		assert_string_not_equal(t->msgs[k].text, "nested 2");
	prof_annot__destroy(a);
}

/* a fork child's annotations go to its own segment, never its parent's */
static void test_fork(void **state)
{
	const struct prof_annot_thread *t;
	struct prof_annot *a;
	__u64 before;
	int st, i;
	pid_t p;

	(void)state;
	PROF_PLOT(an_fork, 1);
	a = own_annot();
	t = annot_of(a, my_tid());
	for (i = 0; i < (int)t->nplots && strcmp(t->plots[i].name, "an_fork"); i++)
		;
	assert_true(i < (int)t->nplots);
	before = t->plots[i].count;
	prof_annot__destroy(a);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		for (i = 0; i < 100; i++)
			PROF_PLOT(an_fork, 2);
		_exit(0);
	}
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	a = own_annot();
	t = annot_of(a, my_tid());
	for (i = 0; i < (int)t->nplots && strcmp(t->plots[i].name, "an_fork"); i++)
		;
	assert_int_equal(t->plots[i].count, before);
	assert_true(t->plots[i].last == 1);
	prof_annot__destroy(a);
}

/* an annotation after the thread gave its slab back (a later key's
 * destructor): dropped, never written into the slab a new thread may get */
static pthread_key_t late_key;

static void late_plot(void *arg)
{
	(void)arg;
	PROF_PLOT(an_exit, 2);
}

static void *exiting(void *arg)
{
	(void)arg;
	PROF_PLOT(an_exit, 1);
	pthread_setspecific(late_key, &late_key);
	return (void *)(uintptr_t)my_tid();
}

static void test_after_exit(void **state)
{
	const struct prof_annot_thread *t;
	struct prof_annot *a;

	(void)state;
	/* after the runtime's own key: its destructor runs after the
	 * runtime's has released the slab */
	PROF_PLOT(an_exit, 0);
	assert_int_equal(pthread_key_create(&late_key, late_plot), 0);
	t = thread_annot(exiting, &a);
	assert_int_equal(t->nplots, 1);
	assert_int_equal(t->plots[0].count, 1);
	assert_true(t->plots[0].last == 1);
	prof_annot__destroy(a);
	pthread_key_delete(late_key);
}

/* a child that logs a message, then takes a slow call with a value, over
 * and over until killed */
static void slow_child(void)
{
	for (int i = 0;; i++) {
		PROF_USDT(an_slowz);

		PROF_MESSAGE("before slow call %d", i);
		PROF_ZONE_VALUE(i);
		test_spin_ns(60000000ull);
		usleep(20000);
	}
}

/* trace --slow: the capture holds the slow call's value and the message
 * logged inside it */
static void test_slow_capture(void **state)
{
	char path[128], pid[16], cmd[512];
	pid_t c;
	int st;

	(void)state;
	/* bound before the fork: the child's binding is its parent's slab,
	 * which its first zone moves it away from (and unmaps) */
	PROF_MESSAGE("before the fork");
	c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		slow_child();
		_exit(0);
	}
	/* its own segment made and readable (its first zone makes it) */
	for (__u64 end = test_mono_ns() + 10000000000ull; test_mono_ns() < end; usleep(10000)) {
		struct prof_snapshot *cs = test_snapshot(c);

		prof_snapshot__destroy(cs);
		if (cs)
			break;
	}
	snprintf(path, sizeof(path), "%s/slow.json", test_dir);
	snprintf(pid, sizeof(pid), "%d", (int)c);
	st = profctl((const char *[]){ "trace", "--pid", pid, "--no-daemon", "--slow",
				       "an_slowz:50ms", "-o", path, NULL });
	kill(c, SIGKILL);
	assert_int_equal(waitpid(c, NULL, 0), c);
	assert_int_equal(st, 0);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[\"traceEvents\"];"
		 "z=[x for x in e if x[\"name\"]==\"an_slowz\"];"
		 "m=[x for x in e if x.get(\"cat\")==\"message\"];"
		 "assert z and \"value\" in z[-1].get(\"args\",{}), z;"
		 "assert any(x[\"name\"]==\"before slow call %%d\" %% z[-1][\"args\"][\"value\"] "
		 "and z[-1][\"ts\"]-0.001<=x[\"ts\"]<=z[-1][\"ts\"]+z[-1][\"dur\"]+0.002 for x in m),"
		 "(z[-1], m)' %s",
		 path);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contended),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_full_tables),
		cmocka_unit_test(test_signal_messages),
		cmocka_unit_test(test_nested_dropped),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_slow_capture),
		cmocka_unit_test(test_after_exit),
	};

	setenv("PROF_NO_DAEMON", "1", 1);
	test_filter_env();
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
