/* SPDX-License-Identifier: MIT */
/*
 * oracle_fixture.h - what test_oracle.c's views are views of: the program
 * (threads in long calls of short busy ones and naps, a napper, threads
 * that come and go), a private profd following it (setup, teardown), its
 * views read through profd (view, try_view), waits on its calls with
 * deadlines, and the invariants any profile obeys (check_view,
 * check_window).  Included once, by test_oracle.c, after its headers.
 */
#ifndef PROF_TEST_ORACLE_FIXTURE_H
#define PROF_TEST_ORACLE_FIXTURE_H

static char dir[64], sock[128];
static pid_t profd_pid = -1, child = -1, still = -1;
static struct child prog, still_prog; /* child's and still's */
static volatile unsigned long sink;

/* --- the program ---------------------------------------------------- */

static void spin_ns(__u64 ns)
{
	__u64 end = now_ns() + ns;

	while (now_ns() < end)
		sink++;
}

static void o_work(void)
{
	PROF_USDT(o_work);
	spin_ns(2000000);
}

static void o_nap(void)
{
	PROF_USDT(o_nap);
	usleep(3000);
}

/* about ms of short busy calls and naps, in one call */
static void o_batch(unsigned int ms)
{
	PROF_USDT(o_batch);
	__u64 end = now_ns() + (__u64)ms * 1000000ull;
	unsigned int k = 0;

	while (now_ns() < end) {
		o_work();
		if (++k % 4 == 0)
			o_nap();
	}
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;)
		o_batch(1200);
	return NULL;
}

static void *napper(void *arg)
{
	(void)arg;
	for (;;) {
		PROF_USDT(o_longnap);
		usleep(400000);
	}
	return NULL;
}

/* a call that never ends: its path has no closed call, only an open one */
static void *forever(void *arg)
{
	(void)arg;
	{
		PROF_USDT(o_forever);
		for (;;)
			o_nap();
	}
	return NULL;
}

static void *shortlived(void *arg)
{
	(void)arg;
	o_batch(100);
	o_batch(100);
	return NULL;
}

static void program(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th;
	int i;

	for (i = 0; i < 2 * (cpus > 0 ? cpus : 1) + 2; i++)
		if (pthread_create(&th, NULL, worker, NULL))
			_exit(2);
	if (pthread_create(&th, NULL, napper, NULL) || pthread_create(&th, NULL, forever, NULL))
		_exit(2);
	/* threads that come and go, joined: their slabs fold and are reused */
	for (;;) {
		if (pthread_create(&th, NULL, shortlived, NULL))
			_exit(2);
		pthread_join(th, NULL);
		usleep(100000);
	}
}

/* --- setup ---------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	if (test_profd_group_setup("test_oracle", dir, sock, &profd_pid))
		return -1;
	if (profd_pid < 0)
		return 0;
	if (child_start(&prog) == 0) {
		program();
		_exit(0);
	}
	child = prog.pid;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (child > 0)
		child_kill(&prog);
	if (still > 0)
		child_kill(&still_prog);
	return test_profd_group_teardown(dir, profd_pid);
}

static void need_profd(void)
{
	test_need_profd(profd_pid);
}

/* a view of the child, NULL if it could not be had */
static struct prof_snapshot *try_view(int mode, unsigned int secs)
{
	struct prof_snapshot *s = NULL;
	struct pc_src src;

	pc_src_open(&src, false);
	if (pc_src_snapshot(&src, child, mode, secs, &s))
		s = NULL;
	pc_src_close(&src);
	return s;
}

/* ... which must come: a window profd has no frame in yet (it has just
 * started, or a loaded machine delayed its frames) is asked again, for
 * 10 s at most */
static struct prof_snapshot *view(int mode, unsigned int secs)
{
	__u64 end = now_ns() + 10000000000ull;
	struct prof_snapshot *s;

	while (!(s = try_view(mode, secs)) && now_ns() < end)
		usleep(50000);
	assert_non_null(s);
	return s;
}

/* calls of zone name, all threads (0 if none) */
static __u64 zone_calls(const struct prof_snapshot *s, const char *name, bool kernel)
{
	__u64 n = 0;
	__u32 i, j;

	for (i = 0; i < s->nthreads; i++)
		for (j = 2; j < s->threads[i].nnodes; j++)
			if (!strcmp(prof_snap_node_name(s, &s->threads[i].nodes[j]), name))
				n += kernel ? s->threads[i].nodes[j].kernel_calls
					    : s->threads[i].nodes[j].calls;
	return n;
}

/* profd follows pid */
static bool followed(pid_t pid)
{
	struct pc_proc *procs = NULL;
	struct pc_src src;
	size_t n = 0, i;
	bool yes = false;

	pc_src_open(&src, false);
	if (src.fd >= 0 && !pc_src_list(&src, &procs, &n))
		for (i = 0; i < n; i++)
			yes |= procs[i].pid == pid;
	free(procs);
	pc_src_close(&src);
	return yes;
}

/* until profd follows the child and its since-start view has k more long
 * naps with kernel facts than `from` (k naps of 0.4 s: windows of more
 * than k * 0.4 s); profd finds a new process at its next look */
static void wait_naps(__u64 from, __u64 k)
{
	__u64 end = now_ns() + 20000000000ull, got = 0;

	while (now_ns() < end) {
		struct prof_snapshot *s = NULL;

		if (followed(child))
			s = try_view(PROFD_SNAP_START, 0);
		got = s ? zone_calls(s, "o_longnap", true) : 0;
		prof_snapshot__destroy(s);
		if (got >= from + k)
			return;
		usleep(50000);
	}
	fail_msg("the child made %llu long naps with kernel facts, not %llu",
		 (unsigned long long)got, (unsigned long long)(from + k));
}

static __u64 naps_now(void)
{
	struct prof_snapshot *s = view(PROFD_SNAP_START, 0);
	__u64 n = zone_calls(s, "o_longnap", true);

	prof_snapshot__destroy(s);
	return n;
}

/* --- the invariants ------------------------------------------------- */

#define FAIL(what, t, s, n, fmt, ...)                                                             \
	fail_msg("%s: tid %u %s: " fmt, what, (t)->tid, prof_snap_node_name(s, n), __VA_ARGS__)

/* what any profile obeys, every node of every thread of s */
static void check_view(const char *what, const struct prof_snapshot *s)
{
	__u32 i, j;

	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];
		__u64 *on = calloc(t->nnodes ? t->nnodes : 1, sizeof(*on));
		__u64 *kids = calloc(t->nnodes ? t->nnodes : 1, sizeof(*kids));

		assert_non_null(on);
		assert_non_null(kids);
		assert_int_equal(prof_snap_oncpu(s, t, on), 0);
		for (j = t->nnodes; j-- > 1;)
			if (on[j] != PROF_SNAP_UNKNOWN)
				kids[t->nodes[j].parent] += on[j];
		for (j = 1; j < t->nnodes; j++) {
			const struct prof_snap_node *n = &t->nodes[j];
			__u64 closed = prof_snap_ns(s, prof_snap_closed(n));
			__u64 max = prof_snap_ns(s, n->max);
			__u64 p50 = prof_snap_ns(s, prof_snap_quantile(s, n, 0.50));
			__u64 p90 = prof_snap_ns(s, prof_snap_quantile(s, n, 0.90));
			__u64 p99 = prof_snap_ns(s, prof_snap_quantile(s, n, 0.99));

			/* a live read measures open calls to a now after its
			 * copy: an open parent holds a child that ended during
			 * it, as a closed one does */
			if (n->ticks < n->child_ticks)
				FAIL(what, t, s, n, "total %llu below its children's %llu",
				     (unsigned long long)n->ticks, (unsigned long long)n->child_ticks);
			if (n->open_ticks > n->ticks)
				FAIL(what, t, s, n, "open part %llu above its total %llu",
				     (unsigned long long)n->open_ticks, (unsigned long long)n->ticks);
			if (n->calls && prof_snap_avg_ns(s, n) > max)
				FAIL(what, t, s, n, "avg %llu above max %llu",
				     (unsigned long long)prof_snap_avg_ns(s, n), (unsigned long long)max);
			if (p50 > p90 || p90 > p99 || p99 > max)
				FAIL(what, t, s, n, "p50 %llu p90 %llu p99 %llu max %llu",
				     (unsigned long long)p50, (unsigned long long)p90,
				     (unsigned long long)p99, (unsigned long long)max);
			/* a call's off-CPU time is at most its wall time (to the
			 * ns a call, two clocks' rounding) */
			if (n->kernel_calls && n->offcpu_ns > closed + n->calls + 1000)
				FAIL(what, t, s, n, "off-CPU %llu ns above its closed calls' %llu ns",
				     (unsigned long long)n->offcpu_ns, (unsigned long long)closed);
			if (on[j] == PROF_SNAP_UNKNOWN)
				continue;
			if (on[j] > prof_snap_ns(s, n->ticks))
				FAIL(what, t, s, n, "on-CPU %llu above total %llu",
				     (unsigned long long)on[j],
				     (unsigned long long)prof_snap_ns(s, n->ticks));
			if (on[j] < kids[j])
				FAIL(what, t, s, n, "on-CPU %llu below its children's %llu",
				     (unsigned long long)on[j], (unsigned long long)kids[j]);
		}
		free(on);
		free(kids);
	}
	/* the process is the sum of its threads */
	{
		struct prof_snapshot *m = pc_merge_threads(s);

		assert_non_null(m);
		test_check_merged(s, m);
		pc_snap_free(m);
	}
}

/* a window: checked, and kernel facts in it (else it proves little) */
static void check_window(const char *what, const struct prof_snapshot *s)
{
	check_view(what, s);
	if (!zone_calls(s, "o_work", true))
		fail_msg("%s: no call with kernel facts", what);
}

#endif /* PROF_TEST_ORACLE_FIXTURE_H */
