// SPDX-License-Identifier: MIT
/*
 * test_lifecycle.c - a segment over a process's life: a thread that exits
 * leaves its slab marked exited with its data; a forked child profiles into
 * a segment of its own, from zero, and leaves the parent's alone; a child
 * that crashes leaves its data readable; a clean exit unlinks the segment
 * unless PROF_KEEP=1; a squatted segment name moves the runtime to the next
 * one and does not break the program.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "fastpath.h"
#include "prof.h"

static void lc_zone(void)
{
	PROF_USDT(lc_zone);
}

static void lc_zones(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		lc_zone();
}

/* child pid reaped, after a clean exit that removed its segment */
static void reaped_clean(pid_t pid)
{
	/* read before it is reaped: the zombie keeps it */
	__u64 token = prof_proc_start_token(pid);
	char paths[2][96];

	assert_true(token != 0);
	assert_true(test_exited_ok(test_wait(pid, 30)));
	assert_int_equal(test_seg_paths(pid, token, paths, 2), 0);
}

static __u64 lc_calls(const struct prof_snapshot *s, const struct prof_snap_thread *t)
{
	const struct prof_snap_node *n = test_node(s, t, "lc_zone");

	return n ? n->calls : 0;
}

static void unlink_segs(pid_t pid, __u64 token)
{
	char paths[8][96];
	size_t n = test_seg_paths(pid, token, paths, 8), i;

	for (i = 0; i < n; i++)
		unlink(paths[i]);
}

/* --- thread exit --------------------------------------------------------- */

static void *exiting_thread(void *arg)
{
	*(__u32 *)arg = test_gettid();
	PROF_THREAD_NAME("lc-exiting");
	lc_zones(1234);
	return NULL;
}

static void test_thread_exit(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	pthread_t th;
	__u32 tid = 0;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, exiting_thread, &tid), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	t = test_own_thread(&s, tid);
	assert_int_equal(t->state, PROF_SLAB_EXITED);
	assert_true(t->exit_tick >= t->start_tick && t->exit_tick > 0);
	assert_string_equal(t->name, "lc-exiting");
	assert_int_equal(lc_calls(s, t), 1234);
	/* the process is still running: its segment is not marked exited */
	assert_false(s->flags & PROF_SEG_EXITED);
	prof_snapshot__destroy(s);
}

/* --- zones after a thread's slab went back ---------------------------- */

static pthread_key_t late_key;
static __u32 late_cur = ~0u; /* __prof_tls.cur inside the late nested zone */

static void late_used(void)
{
	PROF_USDT(late_used);
	late_cur = __prof_tls.cur;
}

/* a destructor's second round, after the runtime's gave the slab back: a
 * zone at a site the thread never used, and inside it one it used at the
 * top (its cache names a node of the slab that is gone) */
static void late_destructor(void *arg)
{
	if (arg == (void *)1) {
		/* the first round: once more, after every other destructor */
		pthread_setspecific(late_key, (void *)2);
		return;
	}
	{
		PROF_USDT(late_new);
		late_used();
	}
}

static void *late_thread(void *arg)
{
	late_used();
	pthread_setspecific(late_key, (void *)1);
	return arg;
}

/*
 * A zone in a thread-exit destructor runs after the thread's slab went
 * back: every one lands in the sink's overflow node.  The marker of such
 * a thread used to be ~0, an unused site cache's parent too: the fast path
 * took node 0 for the new site, then the old cache's node under it, past
 * the two-node sink (as far as the slab's node table went).
 */
static void test_zone_after_exit(void **state)
{
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_key_create(&late_key, late_destructor), 0);
	assert_int_equal(pthread_create(&th, NULL, late_thread, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	print_message("the nested zone after exit ran at node %u\n", late_cur);
	assert_true(late_cur < 2);
	pthread_key_delete(late_key);
}

/* --- fork ---------------------------------------------------------------- */

static void test_fork(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	__u32 ptid = test_gettid();
	__u64 ptoken = prof_proc_start_token(getpid());
	char ppath[1][96];
	__u64 before;
	pid_t pid;

	(void)state;
	lc_zones(100);
	t = test_own_thread(&s, ptid);
	before = lc_calls(s, t);
	assert_true(before >= 100);
	prof_snapshot__destroy(s);
	assert_int_equal(test_seg_paths(getpid(), ptoken, ppath, 1), 1);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char cpath[2][96];
		__u64 own = prof_proc_start_token(getpid());

		/* no segment until the child profiles something */
		CHILD_CHECK(test_seg_paths(getpid(), own, cpath, 2) == 0);
		lc_zones(777);
		/* then one of its own, under its own pid, counting from zero */
		s = test_snapshot(0);
		CHILD_CHECK(s);
		CHILD_CHECK(s->pid == (__u32)getpid());
		CHILD_CHECK(s->pid != (__u32)getppid());
		CHILD_CHECK(s->nthreads == 1);
		CHILD_CHECK(s->threads[0].tid == test_gettid());
		CHILD_CHECK(lc_calls(s, &s->threads[0]) == 777);
		prof_snapshot__destroy(s);
		CHILD_CHECK(test_seg_paths(getpid(), own, cpath, 2) == 1);
		CHILD_CHECK(strcmp(cpath[0], ppath[0]));
		/* and the parent's segment did not move */
		s = test_snapshot(getppid());
		CHILD_CHECK(s);
		CHILD_CHECK(lc_calls(s, test_thread(s, ptid)) == before);
		prof_snapshot__destroy(s);
		exit(0);
	}
	/* the child's clean exit removed its segment, not ours */
	reaped_clean(pid);
	assert_int_equal(test_seg_paths(getpid(), ptoken, ppath, 1), 1);
	t = test_own_thread(&s, ptid);
	assert_int_equal(lc_calls(s, t), before);
	lc_zones(1);
	prof_snapshot__destroy(s);
	s = test_snapshot(0);
	assert_int_equal(lc_calls(s, test_thread(s, ptid)), before + 1);
	prof_snapshot__destroy(s);
}

/* a forked child of a threaded parent: only the forking thread lives on */
static int sibling_flag;

static void *fork_sibling(void *arg)
{
	(void)arg;
	lc_zones(10);
	__atomic_store_n(&sibling_flag, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&sibling_flag, __ATOMIC_ACQUIRE) != 2)
		usleep(1000);
	return NULL;
}

/* a child that execs (or _exits, without exec): vfork() if asked */
static __attribute__((noinline)) pid_t spawn(volatile int use_vfork, volatile int exec)
{
	pid_t pid = use_vfork ? vfork() : fork();

	if (pid == 0) {
		if (exec)
			execl("/bin/true", "true", (char *)NULL);
		_exit(exec ? 127 : 0);
	}
	return pid;
}

/*
 * fork() then exec(), inside an open zone, as system() and popen() do,
 * and vfork() then exec or _exit (a vfork child shares the parent's
 * memory and runs no fork handler: prof(3) says it must run no zone):
 * the child leaves no segment behind (it never profiled anything), the
 * parent's is untouched, and the zone open across the fork closes in the
 * parent as one call each time, nothing unbalanced.
 */
static void test_fork_exec(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	__u32 ptid = test_gettid();
	char paths[2][96];
	__u64 before, token;
	pid_t pid;
	int st, k;

	(void)state;
	lc_zones(10);
	s = test_snapshot(0);
	assert_non_null(s);
	before = lc_calls(s, test_thread(s, ptid));
	prof_snapshot__destroy(s);
	for (k = 0; k < 3; k++) {
		PROF_USDT(lc_spawn);
		pid = spawn(k > 0, k < 2);
		assert_true(pid >= 0);
		token = prof_proc_start_token(pid);
		st = test_wait(pid, 30);
		assert_true(test_exited_ok(st));
		/* a vfork child may be gone before its token is read */
		if (token || k == 0)
			assert_int_equal(test_seg_paths(pid, token, paths, 2), 0);
		assert_true(token != 0 || k > 0);
	}
	/* a child that exits without a zone leaves none either */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	reaped_clean(pid);
	t = test_own_thread(&s, ptid);
	assert_int_equal(lc_calls(s, t), before);
	assert_non_null(test_node(s, t, "lc_spawn"));
	assert_int_equal(test_node(s, t, "lc_spawn")->calls, 3);
	assert_int_equal(t->unbalanced, 0);
	prof_snapshot__destroy(s);
}

/*
 * fork() without exec() inside an open zone: the child closes the zone
 * (in its own segment, as one call of its own, nothing unbalanced) and
 * profiles on; the parent closes its copy as one call too.
 */
static void test_fork_in_zone(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	const struct prof_snap_node *n;
	__u32 ptid = test_gettid();
	__u64 outer = 0;
	pid_t pid;
	int st;

	(void)state;
	/* run alone, the segment is made here */
	lc_zones(1);
	s = test_snapshot(0);
	assert_non_null(s);
	if ((t = test_thread(s, ptid)) && (n = test_node(s, t, "lc_forking")))
		outer = n->calls;
	prof_snapshot__destroy(s);
	{
		PROF_USDT(lc_forking);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			/* the child leaves the zone before anything else */
			goto child;
		}
	}
	st = test_wait(pid, 30);
	assert_true(test_exited_ok(st));
	t = test_own_thread(&s, ptid);
	assert_non_null(n = test_node(s, t, "lc_forking"));
	assert_int_equal(n->calls, outer + 1);
	prof_snapshot__destroy(s);
	return;
child:
	lc_zones(7);
	s = test_snapshot(0);
	CHILD_CHECK(s);
	CHILD_CHECK(s->pid == (__u32)getpid());
	CHILD_CHECK(s->nthreads == 1);
	CHILD_CHECK(lc_calls(s, &s->threads[0]) == 7);
	CHILD_CHECK(test_node(s, &s->threads[0], "lc_forking"));
	CHILD_CHECK(test_node(s, &s->threads[0], "lc_forking")->calls == 1);
	CHILD_CHECK(s->threads[0].unbalanced == 0);
	prof_snapshot__destroy(s);
	exit(0);
}

static void test_fork_threaded(void **state)
{
	pthread_t th;
	pid_t pid;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, fork_sibling, NULL), 0);
	while (!__atomic_load_n(&sibling_flag, __ATOMIC_ACQUIRE))
		usleep(1000);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct prof_snapshot *s;

		lc_zones(5);
		s = test_snapshot(0);
		CHILD_CHECK(s);
		CHILD_CHECK(s->nthreads == 1);
		CHILD_CHECK(lc_calls(s, &s->threads[0]) == 5);
		prof_snapshot__destroy(s);
		exit(0);
	}
	__atomic_store_n(&sibling_flag, 2, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(test_exited_ok(test_wait(pid, 30)));
}

/* --- crash, clean exit, PROF_KEEP ---------------------------------------- */

static void test_crash_keeps_data(void **state)
{
	struct prof_snapshot *s;
	__u64 token;
	pid_t pid;
	int st;

	(void)state;
	assert_null(getenv("PROF_KEEP"));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGABRT, SIG_DFL);
		lc_zones(4321);
		abort();
	}
	token = prof_proc_start_token(pid);
	assert_true(token != 0);
	st = test_wait(pid, 30);
	assert_true(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	s = test_snapshot(pid);
	assert_non_null(s);
	assert_int_equal(s->pid, pid);
	assert_int_equal(s->start_token, token);
	assert_int_equal(s->nthreads, 1);
	assert_int_equal(lc_calls(s, &s->threads[0]), 4321);
	/* it never ran its exit handler */
	assert_false(s->flags & PROF_SEG_EXITED);
	assert_int_equal(s->threads[0].state, PROF_SLAB_ALIVE);
	prof_snapshot__destroy(s);
	unlink_segs(pid, token);
}

/* a child that makes calls zones and exits; its pid and start token */
static pid_t run_exiting_child(unsigned calls, __u64 *token)
{
	pid_t pid = fork();

	if (pid == 0) {
		lc_zones(calls);
		exit(0);
	}
	*token = pid > 0 ? prof_proc_start_token(pid) : 0;
	return pid;
}

static void test_exit_unlinks(void **state)
{
	char paths[1][96];
	__u64 token;
	pid_t pid;

	(void)state;
	pid = run_exiting_child(3, &token);
	assert_true(pid > 0 && token != 0);
	assert_true(test_exited_ok(test_wait(pid, 30)));
	assert_int_equal(test_seg_paths(pid, token, paths, 1), 0);
}

static void test_keep(void **state)
{
	struct prof_snapshot *s;
	__u64 token;
	pid_t pid;

	(void)state;
	/* the child reads PROF_KEEP when it creates its segment: at fork */
	setenv("PROF_KEEP", "1", 1);
	pid = run_exiting_child(33, &token);
	unsetenv("PROF_KEEP");
	assert_true(pid > 0 && token != 0);
	assert_true(test_exited_ok(test_wait(pid, 30)));
	s = test_snapshot(pid);
	assert_non_null(s);
	assert_true(s->flags & PROF_SEG_EXITED);
	assert_true(s->exit_tick > 0);
	assert_int_equal(s->threads[0].state, PROF_SLAB_EXITED);
	assert_int_equal(s->start_token, token);
	assert_int_equal(lc_calls(s, &s->threads[0]), 33);
	prof_snapshot__destroy(s);
	unlink_segs(pid, token);
}

/* --- squatted names ------------------------------------------------------ */

/*
 * A fresh process (re-executed, so nothing is created yet) squats its own
 * first name with a symlink to a file it owns and the next sixteen names
 * (".1" to ".16", what the runtime once tried in turn) with files, then
 * profiles: the runtime must take a name nobody could guess and leave the
 * squatters alone.
 */
static int squat_child(void)
{
	char name0[96], name1[100], target[96], paths[32][96];
	char more[16][112];
	__u64 token = prof_proc_start_token(getpid());
	struct prof_snapshot *s = NULL;
	struct stat st;
	size_t n, i;
	int fd;

	CHILD_CHECK(token);
	snprintf(name0, sizeof(name0), "/dev/shm/prof.%d.%llu", (int)getpid(),
		 (unsigned long long)token);
	snprintf(name1, sizeof(name1), "%s.1", name0);
	snprintf(target, sizeof(target), "/dev/shm/lc-squat-target.%d", (int)getpid());
	fd = open(target, O_CREAT | O_EXCL | O_WRONLY, 0600);
	CHILD_CHECK(fd >= 0);
	close(fd);
	CHILD_CHECK(!symlink(target, name0));
	fd = open(name1, O_CREAT | O_EXCL | O_WRONLY, 0644);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(write(fd, "squat", 5) == 5);
	close(fd);
	for (i = 2; i <= 16; i++) {
		snprintf(more[i - 1], sizeof(more[0]), "%s.%zu", name0, i);
		fd = open(more[i - 1], O_CREAT | O_EXCL | O_WRONLY, 0644);
		CHILD_CHECK(fd >= 0);
		close(fd);
	}

	lc_zones(50);

	/* the squatters, and one segment of ours under a name none of theirs */
	n = test_seg_paths(getpid(), token, paths, 32);
	CHILD_CHECK(n >= 2);
	for (i = 0; i < n; i++) {
		fd = open(paths[i], O_RDONLY);
		CHILD_CHECK(fd >= 0);
		if (!s && !fstat(fd, &st) && st.st_size > 4096)
			CHILD_CHECK(!prof_snapshot__read_fd(fd, &s));
		close(fd);
	}
	CHILD_CHECK(s);
	CHILD_CHECK(lc_calls(s, &s->threads[0]) == 50);
	prof_snapshot__destroy(s);
	/* the squatters are untouched */
	CHILD_CHECK(!lstat(name0, &st) && S_ISLNK(st.st_mode));
	CHILD_CHECK(!stat(target, &st) && st.st_size == 0);
	CHILD_CHECK(!stat(name1, &st) && st.st_size == 5 && (st.st_mode & 0777) == 0644);
	unlink(name0);
	unlink(name1);
	for (i = 2; i <= 16; i++)
		unlink(more[i - 1]);
	unlink(target);
	return 0;
}

static void test_squatted_name(void **state)
{
	static const char *const env[] = { "PROF_QUIET=1", NULL };

	(void)state;
	assert_true(test_exited_ok(test_reexec("--squat", env, 30, NULL)));
}

/* --- zones in signal handlers ------------------------------------------- */

static int sig_zones;

static void sig_zone_handler(int sig)
{
	(void)sig;
	{
		PROF_USDT(in_handler);
		PROF_ALLOC(8);
		__atomic_add_fetch(&sig_zones, 1, __ATOMIC_RELAXED);
	}
}

static void *sig_worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 50; i++) {
		PROF_USDT(sig_work);
	}
	return NULL;
}

/*
 * A zone in a signal handler that lands inside the thread's own first
 * zone (segment and slab creation hold the runtime's lock) must not hang
 * the thread: a 100 us timer with a zone in its handler, while the
 * program's threads start and enter their first zones.
 */
static void test_signal_handler_zone(void **state)
{
	pid_t k;
	int st = -1, i;
	__u64 deadline;

	(void)state;
#if defined(__SANITIZE_THREAD__)
	/* TSan reports, rightly, the async-signal-unsafe calls (malloc,
	 * pthread_create) a thread's first zone makes when a handler's zone is
	 * that first zone, which this test cannot rule out; prof(3) says a
	 * thread's first zone must not be a handler's */
	printf("skip: under ThreadSanitizer\n");
	skip();
#endif
	k = fork();
	if (k == 0) {
		struct sigaction sa = { .sa_handler = sig_zone_handler, .sa_flags = SA_RESTART };
		struct itimerval it = { { 0, 100 }, { 0, 100 } };
		pthread_t th[16];

		setenv("PROF_NO_DAEMON", "1", 1);
		/* this thread's first zone before the timer: a handler's zone
		 * must not be a thread's first (prof(3)), and this one's would
		 * start the runtime's agent thread, pthread_create inside a
		 * handler that may have interrupted pthread_create (ASan's
		 * registry lock held: a hang that is the test's, not the
		 * runtime's) */
		{
			PROF_USDT(sig_main_first);
		}
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		for (i = 0; i < 16; i++)
			if (pthread_create(&th[i], NULL, sig_worker, NULL))
				_exit(2);
		for (i = 0; i < 16; i++)
			pthread_join(th[i], NULL);
		sig_worker(NULL);
		it.it_value.tv_usec = it.it_interval.tv_usec = 0;
		setitimer(ITIMER_REAL, &it, NULL);
		_exit(__atomic_load_n(&sig_zones, __ATOMIC_RELAXED) > 0 ? 0 : 3);
	}
	assert_true(k > 0);
	/* a hang is the failure: give it ten seconds */
	for (deadline = 0; deadline < 1000; deadline++) {
		if (waitpid(k, &st, WNOHANG) == k)
			break;
		usleep(10000);
	}
	if (deadline == 1000) {
		kill(k, SIGKILL);
		waitpid(k, &st, 0);
		fail_msg("a zone in a signal handler hung its thread");
	}
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* --- a fork child without a segment of its own ------------------------- */

#define SINK_DEPTH 7000 /* nodes: far past what a sink holds */

static void sink_deep(unsigned int n)
{
	PROF_USDT(sink_deep);
	if (n)
		sink_deep(n - 1);
}

static void sink_far(void)
{
	PROF_USDT(sink_far);
}

/*
 * In a fresh process of 8192 nodes (this program again, so the geometry is
 * its own): a tree of 7,000 nodes, then a top-level zone whose site cache
 * names node 7,003.  A fork child whose segment cannot be made
 * (RLIMIT_FSIZE) runs it after a zone at another site: its thread has no
 * slab, but that cache still names the parent's node, so its node table
 * must reach that far (a two-node sink was written 200 KiB out of bounds).
 * Exit status: 0 or what failed.
 */
static int fork_sink_child(void)
{
	struct rlimit rl = { 4096, 4096 };
	struct prof_snapshot *s;
	const struct prof_snap_thread *t;
	const struct prof_snap_node *far;
	size_t idx;
	pid_t pid;
	int st;

	sink_deep(SINK_DEPTH);
	sink_far();
	s = test_snapshot(0);
	if (!s || !(t = test_thread(s, test_gettid())) || !(far = test_node(s, t, "sink_far")))
		return 2;
	idx = (size_t)(far - t->nodes);
	prof_snapshot__destroy(s);
	if (idx < SINK_DEPTH)
		return 3;
	pid = fork();
	if (pid < 0)
		return 4;
	if (pid == 0) {
		/* before its first zone, which makes the child's segment */
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(10);
		{
			PROF_USDT(sink_first);
		}
		for (int i = 0; i < 100; i++)
			sink_far();
		/* the cached node is in the thread's table, and counted there */
		if ((const char *)&__prof_tls.nodes[idx + 1] > (const char *)__prof_tls.ext)
			_exit(11);
		if (__prof_tls.nodes[idx].calls != 100)
			_exit(12);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return 5;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 6;
}

static void test_fork_no_segment(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("PROF_MAX_NODES", "8192", 1);
		setenv("PROF_NO_DAEMON", "1", 1);
		setenv("PROF_QUIET", "1", 1);
		execl("/proc/self/exe", "test_lifecycle", "--fork-sink", (char *)NULL);
		_exit(127);
	}
	st = test_wait(pid, 60);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("the fork child without a segment: status %#x", st);
}

/* --- low resource limits ------------------------------------------------ */

/* this program again, its limit set before its first zone: runs zones,
 * says "ran"; exit status 0 or what failed */
static int rlimit_child(const char *kind, const char *value)
{
	struct rlimit rl;
	int r = !strcmp(kind, "nofile") ? RLIMIT_NOFILE : !strcmp(kind, "as") ? RLIMIT_AS
										: RLIMIT_FSIZE;

	rl.rlim_cur = rl.rlim_max = strtoull(value, NULL, 0);
	if (setrlimit(r, &rl))
		return 20;
	/* qemu-user takes RLIMIT_AS and applies it not (it would bind qemu) */
	if (getrlimit(r, &rl) || rl.rlim_cur != strtoull(value, NULL, 0))
		return 30;
	lc_zones(1000);
	printf("ran\n");
	/* what runs after the program, a coverage build's counts written at
	 * exit, fails on the limit rather than being killed by it */
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

/*
 * RLIMIT_NOFILE with no fd free, RLIMIT_AS too small for the segment's
 * mapping, RLIMIT_FSIZE below its size (ftruncate raised SIGXFSZ, which
 * killed the program): the program runs on, and profiling is off with
 * one line saying why.
 */
static void test_low_rlimits(void **state)
{
	static const char *const limits[][3] = {
		{ "nofile", "3", "Too many open files" },
		{ "as", "100000000", "Cannot allocate memory" },
		{ "fsize", "4096", "RLIMIT_FSIZE" },
	};
	char out[4096], self[1024];
	ssize_t len;
	size_t i;

	(void)state;
	/* this program (under qemu-user, /proc/PID/exe is qemu) */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0);
	self[len] = 0;
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		char cmd[2048];
		const char *nl;
		FILE *f;
		size_t n;
		int st;

		/* a sanitizer's shadow memory does not fit a small address space */
		if (!strcmp(limits[i][0], "as") && (TEST_ASAN || TEST_TSAN))
			continue;
		/* LeakSanitizer needs an fd at exit: none is left under nofile */
		snprintf(cmd, sizeof(cmd),
			 "ASAN_OPTIONS=detect_leaks=0 PROF_NO_DAEMON=1 PROF_REPORT=stderr %s "
			 "--rlimit %s %s 2>&1",
			 self, limits[i][0], limits[i][1]);
		fflush(NULL);
		f = popen(cmd, "r");
		assert_non_null(f);
		n = 0;
		/* what a coverage build's gcov says at exit, that it cannot
		 * write its counts under the limit, is not the program's */
		while (n < sizeof(out) - 1 && fgets(out + n, (int)(sizeof(out) - n), f))
			if (strncmp(out + n, "profiling:", 10) &&
			    strncmp(out + n, "libgcov profiling error:", 24))
				n += strlen(out + n);
		out[n] = 0;
		st = pclose(f);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 30) {
			print_message("%s: the limit is not applied here\n", limits[i][0]);
			continue;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fail_msg("%s %s: status %#x, said:\n%s", limits[i][0], limits[i][1], st, out);
		/* one line from the runtime, then the program's own */
		nl = strchr(out, '\n');
		if (strncmp(out, "prof: ", 6) || !nl || !strstr(out, limits[i][2]) ||
		    !strstr(out, "profiling off") || strcmp(nl + 1, "ran\n"))
			fail_msg("%s %s: said:\n%s", limits[i][0], limits[i][1], out);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_exit),
		cmocka_unit_test(test_zone_after_exit),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_fork_exec),
		cmocka_unit_test(test_fork_threaded),
		cmocka_unit_test(test_fork_in_zone),
		cmocka_unit_test(test_crash_keeps_data),
		cmocka_unit_test(test_exit_unlinks),
		cmocka_unit_test(test_keep),
		cmocka_unit_test(test_squatted_name),
		cmocka_unit_test(test_signal_handler_zone),
		cmocka_unit_test(test_fork_no_segment),
		cmocka_unit_test(test_low_rlimits),
	};

	if (argc == 2 && !strcmp(argv[1], "--squat"))
		return squat_child();
	if (argc == 2 && !strcmp(argv[1], "--fork-sink"))
		return fork_sink_child();
	if (argc == 4 && !strcmp(argv[1], "--rlimit"))
		return rlimit_child(argv[2], argv[3]);
	unsetenv("PROF_KEEP");
	test_filter_env();
	/*
	 * TSan refuses a fork child of a multi-threaded process that starts
	 * threads: the profd client's thread (restarted in the child) would
	 * be one.  The fork paths under test are the same without it.
	 */
	if (TEST_TSAN)
		setenv("PROF_NO_DAEMON", "1", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
