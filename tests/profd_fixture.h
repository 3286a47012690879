/* SPDX-License-Identifier: MIT */
/*
 * profd_fixture.h - what the root tests of profd (test_profd*.c) share:
 * profd started on a private socket and stopped (start_profd_opts,
 * need_profd, stop_profd), the child-process driver (spawn: a workload in
 * a forked child that reports over a pipe and stays alive until the test
 * closes its end, so its data is read live), the workloads several
 * programs run (stay_zone, work_sleep), running profctl and other
 * programs as a user, and the teardown after each test; what
 * guard_fixture.h needs too is in root_fixture.h.  This process
 * never enters a zone itself, so each child starts the runtime afresh,
 * agent included.
 */
#ifndef PROF_TEST_PROFD_FIXTURE_H
#define PROF_TEST_PROFD_FIXTURE_H

#define _GNU_SOURCE
#include <linux/close_range.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <glob.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <math.h>
#include <pthread.h>
#include <time.h>

#include "testutil.h"
#include "prof.h"
#include "client.h"
#include "proto.h"
#include "root_fixture.h"
#include "shm_private.h"
#include "child.h"
#include "migrate_zones.h"

#define SOCK_DIR "/tmp/profd-test"
#define SLEEP_CALLS 10

static char sock_path[128];
static pid_t profd_pid = -1;
static const char *profd_history = "60"; /* --history for the next profd */
/* run the next profd as this uid with the systemd unit's three capabilities
 * (0: as root), its socket in a directory of its own */
static uid_t profd_as;
/* the next profd looks into other mount namespaces (containers): only the
 * tests that make one want it; any other profd that did would follow, and
 * count, the processes of every other suite running on the machine */
static bool profd_ns_scan;

static inline __u64 now_ns(void)
{
	return test_now_ns();
}

static inline void spin_ns(__u64 ns)
{
	test_spin(ns);
}

/* a program built beside this test's directory: profd, profctl */
static inline const char *sibling_bin(const char *name, char *path, size_t len)
{
	return test_bin(name, path, len);
}

static inline const char *profd_bin(void)
{
	static char path[4096];

	return sibling_bin("profd", path, sizeof(path));
}

/* profd on a private socket, with extra options (NULL-terminated) */
static inline int start_profd_opts(const char *const *extra)
{
	mkdir(SOCK_DIR, 0755);
	snprintf(sock_path, sizeof(sock_path), SOCK_DIR "/profd.%d.sock", (int)getpid());
	if (profd_as) {
		snprintf(sock_path, sizeof(sock_path), SOCK_DIR "/as.%d", (int)getpid());
		mkdir(sock_path, 0755);
		if (chown(sock_path, profd_as, 0))
			return -1;
		strcat(sock_path, "/profd.sock");
	}
	profd_pid = fork();
	if (profd_pid == 0) {
		const char *argv[32] = { "setpriv", "--reuid", NULL, "--regid", NULL,
					 "--clear-groups",
					 "--inh-caps=-all,+bpf,+perfmon,+dac_read_search",
					 "--ambient-caps=-all,+bpf,+perfmon,+dac_read_search", "--" };
		int n = profd_as ? 9 : 0;
		char u[16];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(u, sizeof(u), "%u", (unsigned)profd_as);
		argv[2] = argv[4] = u;
		argv[n++] = profd_bin();
		argv[n++] = "--socket";
		argv[n++] = sock_path;
		argv[n++] = "--interval";
		argv[n++] = "50";
		argv[n++] = "--history";
		argv[n++] = profd_history;
		/* a test holds its connection while it waits on children, which
		 * a loaded machine can make longer than the 10 s profd keeps
		 * an idle one (extra's --idle comes after: it wins) */
		argv[n++] = "--idle";
		argv[n++] = "600";
		if (!profd_ns_scan)
			argv[n++] = "--no-ns-scan";
		while (extra && *extra && n < 31)
			argv[n++] = *extra++;
		argv[n] = NULL;
		execvp(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	return profd_await(sock_path);
}

static inline void stop_profd(void)
{
	if (profd_pid > 0) {
		kill(profd_pid, SIGCONT);
		kill(profd_pid, SIGTERM);
		waitpid(profd_pid, NULL, 0);
	}
	profd_pid = -1;
}

static inline bool profd_alive(void)
{
	return profd_pid > 0 && waitpid(profd_pid, NULL, WNOHANG) == 0;
}

/* skip unless this machine has two cpus: a test that moves a thread */
static inline void need_two_cpus(void)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("skip: needs two cpus\n");
		skip();
	}
}

/* skip unless root and the program loads; returns a connected fd */
static inline int need_profd_opts(const char *const *extra)
{
	int fd;

	if (geteuid() != 0) {
		printf("skip: not root\n");
		skip();
	}
	fd = start_profd_opts(extra);
	need_bpf(fd, stop_profd);
	return fd;
}

static inline int need_profd(void)
{
	return need_profd_opts(NULL);
}

static inline void reg_wait_zone(void)
{
	PROF_USDT(reg_wait_zone);
}

/* wait (bounded) until this thread's kernel record is live; a record
 * handed over in the background is taken at a zone's exit */
static inline bool wait_registered(double seconds)
{
	__u64 end = now_ns() + (__u64)(seconds * 1e9);

	for (;;) {
		if (__prof_tls.krec && __prof_tls.krec->gen)
			return true;
		if (now_ns() >= end)
			return false;
		reg_wait_zone();
		usleep(10000);
	}
}

typedef void (*workload_fn)(void);

static inline void zone_init(void)
{
	PROF_USDT(init_zone);
}

/* in a child: thread cpu time spent inside sleep_zone [0] and spin_zone [1] */
static __u64 zone_cpu[3]; /* [2]: work_sleep's involuntary switches in sleep_zone */

static inline __u64 cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* profctl's baseline files in a private directory, $XDG_RUNTIME_DIR while
 * a test runs (teardown removes it, whether the test passed or not) */
static char xdg_dir[64];

static inline void xdg_private(void)
{
	snprintf(xdg_dir, sizeof(xdg_dir), "/tmp/profd-test-xdg.XXXXXX");
	assert_non_null(mkdtemp(xdg_dir));
	setenv("XDG_RUNTIME_DIR", xdg_dir, 1);
}

static inline void xdg_done(void)
{
	if (!xdg_dir[0])
		return;
	unsetenv("XDG_RUNTIME_DIR");
	if (test_rm_rf(xdg_dir))
		printf("failed to remove %s\n", xdg_dir);
	xdg_dir[0] = 0;
}

/* skip unless root; this process alone in a mount namespace with a /dev/shm
 * of its own, so no one else's processes count (nor does a profd it starts
 * see them) */
static inline void private_shm(void)
{
	int err;

	if (geteuid() != 0) {
		printf("skip: not root\n");
		skip();
	}
	if ((err = test_shm_private())) {
		printf("skip: no private /dev/shm: %s\n", strerror(-err));
		skip();
	}
}

/* the end of a test that started profd: fd closed, profd stopped, the
 * private $XDG_RUNTIME_DIR removed (teardown does the last two anyway) */
static inline void profd_done(int fd)
{
	close(fd);
	stop_profd();
	xdg_done();
}

/* remove uid's reset baselines of pid in /dev/shm */
static inline void rm_shm_baselines(uid_t uid, pid_t pid)
{
	char pat[96];
	glob_t g;
	size_t i;

	snprintf(pat, sizeof(pat), "/dev/shm/profctl.%u.%d.*", (unsigned)uid, (int)pid);
	if (glob(pat, 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++)
		unlink(g.gl_pathv[i]);
	globfree(&g);
}

/* the program's tests run: the children quiet at exit and reaching
 * profd, only TEST_FILTER's tests if it is set */
#define profd_run_tests(tests)                                                              \
	(setenv("PROF_QUIET", "1", 1), unsetenv("PROF_NO_DAEMON"), test_run_group(tests, NULL, NULL))

#define UID_A 65534 /* nobody: owns the profiled process (another user below) */
#define UID_B 65533 /* a second unprivileged uid */

/* the child's report: rd; closing wr lets the child exit */
static inline struct child spawn(workload_fn fn, uid_t uid, double reg_wait)
{
	struct child c;
	char ok;

	if (child_start(&c) == 0) {
		/* only our own pipe ends: another child's wr must reach EOF */
		if (dup2(c.wr, 100) < 0 || dup2(c.rd, 101) < 0)
			_exit(5);
		c.wr = 100;
		c.rd = 101;
		close_range(3, 99, 0);
		close_range(102, ~0u, 0);
		if (uid && (setgid(uid) || setuid(uid)))
			_exit(2);
		zone_init();
		ok = wait_registered(reg_wait) ? 'R' : 'U';
		if (fn)
			fn();
		if (write(c.wr, &ok, 1) != 1 || write(c.wr, zone_cpu, sizeof(zone_cpu)) < 0)
			_exit(3);
		/* stay alive until told; 'W': the workload once more */
		while ((ok = child_hear(&c))) {
			if (ok != 'W')
				continue;
			if (fn)
				fn();
			child_say(&c, ok);
		}
		_exit(0);
	}
	kids_add(c.pid);
	return c;
}

static __u64 child_cpu[3]; /* the child's zone_cpu */

static inline char child_wait(struct child *c)
{
	char r = 0;

	if (read(c->rd, &r, 1) != 1 || read(c->rd, child_cpu, sizeof(child_cpu)) < 0)
		return 0;
	return r;
}

/* the child runs its workload once more; true when it has */
static inline bool child_again(struct child *c)
{
	char r = 'W';

	return write(c->wr, &r, 1) == 1 && read(c->rd, &r, 1) == 1 && r == 'W';
}

/*
 * What holds of every node profd answers with: off-CPU time is part of
 * wall time (the runtime clamps each call's; a nanosecond of rounding a
 * call, and one more for a call still open).
 */
static inline void check_nodes(const struct prof_snapshot *s)
{
	const struct prof_snap_node *n;
	__u32 i, j;

	for (i = 0; i < s->nthreads; i++)
		for (j = 0; j < s->threads[i].nnodes; j++) {
			n = &s->threads[i].nodes[j];
			if (n->offcpu_ns > prof_snap_ns(s, n->ticks) + n->calls + 1)
				fail_msg("tid %u node %u (%s): off-cpu %llu ns > total %llu ns",
					 s->threads[i].tid, j, prof_snap_node_name(s, n),
					 (unsigned long long)n->offcpu_ns,
					 (unsigned long long)prof_snap_ns(s, n->ticks));
		}
}

/*
 * Calls of CALLS that may lack kernel facts: those whose return to a CPU
 * reached no sched_switch program (bpf/profsched.h: the time away is
 * unknown, so the runtime keeps no facts of the call).  Measured here with
 * both CPUs kept busy: 3 of 230 sleeps (1.3%), two of them in one
 * process's 20.  A fifth (at least one) is far above that, and far below a
 * thread covered late or not at all, where no call has facts.
 */
static inline __u64 facts_may_lack(__u64 calls)
{
	return calls / 5 ? calls / 5 : 1;
}

/* N had kernel facts: all CALLS of it but a few lost returns */
static inline void assert_facts(const struct prof_snap_node *n, const char *name, __u64 calls)
{
	if (n->kernel_calls > calls || n->kernel_calls + facts_may_lack(calls) < calls)
		fail_msg("%s: %llu of %llu calls with kernel facts", name,
			 (unsigned long long)n->kernel_calls, (unsigned long long)calls);
}

/* the live process's snapshot through profd; waits until profd follows it */
static inline struct prof_snapshot *snap_of(int fd, pid_t pid, int mode)
{
	struct prof_snapshot *s = NULL;
	__u64 end = now_ns() + 20000000000ull;

	while (now_ns() < end) {
		if (!profd_snapshot(fd, pid, mode, 0, &s)) {
			check_nodes(s);
			return s;
		}
		usleep(20000);
	}
	return NULL;
}

/* a child running fn (NULL: nothing) as uid (0: root), its thread registered */
/* the last secs seconds through profd: it says -EAGAIN while no frame lies
 * inside the window, and on a busy machine its frames come late, so a test
 * asks again (within a deadline) as a user would */
static inline int window_of(int fd, pid_t pid, __u32 secs, struct prof_snapshot **s,
			    struct profd_answer *a)
{
	__u64 end = now_ns() + 10000000000ull;
	int err;

	while ((err = profd_snapshot_opts(fd, pid, PROFD_SNAP_LAST, secs, 0, s, a)) == -EAGAIN &&
	       now_ns() < end)
		usleep(50000);
	return err;
}

static inline struct child spawn_registered_as(workload_fn fn, uid_t uid)
{
	/* profd registers a new thread within a tick or two; the deadline
	 * is for a busy machine, where its ticks come late */
	struct child c = spawn(fn, uid, 20);

	assert_int_equal(child_wait(&c), 'R');
	return c;
}

static inline struct child spawn_registered(workload_fn fn)
{
	return spawn_registered_as(fn, 0);
}

/* a child running fn as uid, registered, into *c; its snapshot through
 * profd since it started, once profd follows it */
static inline struct prof_snapshot *spawn_snap(int fd, workload_fn fn, uid_t uid, struct child *c)
{
	struct prof_snapshot *s;

	*c = spawn_registered_as(fn, uid);
	s = snap_of(fd, c->pid, PROFD_SNAP_START);
	assert_non_null(s);
	return s;
}

/* a child running fn, registered, once profd follows it */
static inline struct child spawn_followed(int fd, workload_fn fn)
{
	struct child c;

	prof_snapshot__destroy(spawn_snap(fd, fn, 0, &c));
	return c;
}

static inline const struct prof_snap_node *node_named(const struct prof_snapshot *s, const char *name)
{
	const struct prof_snap_node *n;
	__u32 i;

	for (i = 0; i < s->nthreads; i++) {
		n = test_node(s, &s->threads[i], name);
		if (n)
			return n;
	}
	return NULL;
}

/*
 * s of a process that ran MIGR_CALLS calls of migrate_zone, each moving
 * itself to another cpu, and twice as many of stay_zone, pinned: every
 * call had kernel facts (but a few lost returns), every migrate_zone call
 * with them migrated, no stay_zone call did
 */
static inline void check_migrated(const struct prof_snapshot *s,
				  const struct prof_snap_node **m_out)
{
	const struct prof_snap_node *m = node_named(s, "migrate_zone");
	const struct prof_snap_node *st = node_named(s, "stay_zone");

	assert_non_null(m);
	assert_non_null(st);
	assert_int_equal(m->calls, MIGR_CALLS);
	assert_facts(m, "migrate_zone", MIGR_CALLS);
	assert_int_equal(m->migrated, m->kernel_calls);
	assert_int_equal(st->calls, 2 * MIGR_CALLS);
	assert_facts(st, "stay_zone", 2 * MIGR_CALLS);
	assert_int_equal(st->migrated, 0);
	if (m_out)
		*m_out = m;
}

/* after each test, pass or fail: no profd, no child left behind (each
 * program adds what its own tests leave) */
static inline void kid_baselines_done(pid_t pid)
{
	rm_shm_baselines(UID_A, pid);
}

static inline void fixture_teardown(void)
{
	/* and what a reset as the owner of a child left */
	kids_end(kid_baselines_done);
	stop_profd();
	profd_history = "60";
	xdg_done();
	if (profd_as) {
		char dir[128];

		snprintf(dir, sizeof(dir), SOCK_DIR "/as.%d", (int)getpid());
		rmdir(dir);
	}
	profd_as = 0;
}

static inline void sleep_zone(void)
{
	struct timespec ts = { 0, 20000000 };

	PROF_USDT(sleep_zone);
	__u64 c0 = cpu_ns();

	nanosleep(&ts, NULL);
	zone_cpu[0] += cpu_ns() - c0;
}

static inline void spin_zone(void)
{
	PROF_USDT(spin_zone);
	__u64 c0 = cpu_ns();

	spin_ns(20000000);
	zone_cpu[1] += cpu_ns() - c0;
}

/* the calling thread's involuntary context switches so far */
static inline long nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

static inline void work_sleep(void)
{
	int i;

	for (i = 0; i < SLEEP_CALLS; i++) {
		long n0 = nivcsw();

		sleep_zone();
		/* a sleeping zone is preempted only if another task took the
		 * CPU from it (before it slept, or after it woke) */
		zone_cpu[2] += (__u64)(nivcsw() - n0);
		spin_zone();
	}
}

/* what a user may do with a pid */
struct as_user_res {
	int snapshot; /* 0 or -errno */
	int reset;    /* profd's answer to a RESET request: 0 or -errno */
	int listed;   /* profd lists it to them */
	int slices;   /* threads whose scheduler slices they got, or -errno */
};

/* profd's answer to a RESET request for pid on fd (a request it no
 * longer serves: a reset is its user's baseline file); 0 or -errno */
static inline int reset_req(int fd, pid_t pid)
{
	struct {
		struct profd_hdr h;
		struct profd_pid_req r;
	} q = { { PROFD_MSG_RESET_REQ, sizeof(q) }, { (__u32)pid, 0 } };
	struct {
		struct profd_hdr h;
		struct profd_error e;
	} a;

	memset(&a, 0, sizeof(a));
	if (send(fd, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q) ||
	    recv(fd, &a, sizeof(a), 0) < (ssize_t)sizeof(a.h))
		return -EIO;
	if (a.h.type == PROFD_MSG_OK)
		return 0;
	return a.h.type == PROFD_MSG_ERROR ? a.e.err : -EPROTO;
}

/* in a child as uid: snapshot, ask profd to reset, and list pid */
static inline struct as_user_res as_user(uid_t uid, pid_t pid)
{
	struct as_user_res r;
	struct profd_proc *procs;
	struct prof_snapshot *s;
	struct profd_slices_thread *sl;
	int st[4] = { 0, 0, 0, 0 }, p[2], fd;
	size_t n, i;
	__u32 nsl;
	pid_t k;

	r.snapshot = r.reset = r.slices = -EIO;
	r.listed = 0;
	if (pipe(p))
		return r;
	k = fork();
	if (k == 0) {
		if (setgid(uid) || setuid(uid))
			_exit(2);
		fd = profd_connect(sock_path);
		st[0] = profd_snapshot(fd, pid, PROFD_SNAP_START, 0, &s);
		if (!st[0])
			prof_snapshot__destroy(s);
		st[1] = reset_req(fd, pid);
		st[3] = profd_slices(fd, pid, &sl, &nsl);
		if (!st[3]) {
			st[3] = (int)nsl;
			free(sl);
		}
		if (!profd_list(fd, &procs, &n)) {
			for (i = 0; i < n; i++)
				st[2] |= procs[i].pid == (__u32)pid;
			free(procs);
		}
		if (write(p[1], st, sizeof(st)) != sizeof(st))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], st, sizeof(st)) != sizeof(st))
		st[0] = st[1] = -EIO;
	close(p[0]);
	waitpid(k, NULL, 0);
	r.snapshot = st[0];
	r.reset = st[1];
	r.listed = st[2];
	r.slices = st[3];
	return r;
}

/* profd lists pid as alive (-1: not listed) */
static inline int listed_alive(int fd, pid_t pid)
{
	struct profd_proc *v;
	size_t n, i;
	int alive = -1;

	assert_int_equal(profd_list(fd, &v, &n), 0);
	for (i = 0; i < n; i++)
		if (v[i].pid == (__u32)pid)
			alive = v[i].alive != 0;
	free(v);
	return alive;
}

/* profd's status within deadline end: a busy profd on a loaded machine may
 * answer after the client's one-second wait (-ETIMEDOUT), and its late
 * answer would then be read as the next question's, so the question is
 * asked again on a connection of its own (*own, closed by the caller) */
static inline int status_by(int fd, int *own, struct profd_status *st, __u64 end)
{
	int err;

	while ((err = profd_status(*own >= 0 ? *own : fd, st)) == -ETIMEDOUT && now_ns() < end) {
		if (*own >= 0)
			close(*own);
		*own = profd_connect(sock_path);
		if (*own < 0)
			return *own;
	}
	return err;
}

/* profd, answering, has taken n more samples (10 s at most) */
static inline void wait_samples(int fd, __u64 n)
{
	struct profd_status st;
	__u64 end = now_ns() + 10000000000ull, s0;
	int own = -1;

	assert_int_equal(status_by(fd, &own, &st, end), 0);
	for (s0 = st.samples; st.samples < s0 + n && now_ns() < end; usleep(20000))
		assert_int_equal(status_by(fd, &own, &st, end), 0);
	if (own >= 0)
		close(own);
	assert_true(st.samples >= s0 + n);
}

/*
 * Run profctl (built beside us) with args, through our profd unless
 * no_daemon; its stdout into *text (malloc'd).  Its exit status.
 */
/*
 * Run path with argv (NULL-terminated, argv[0] included) as uid (0: as we
 * are), its stdout into *text (malloc'd); its exit status, -1 if it died.
 */
static inline int cmd_run(uid_t uid, const char *path, const char *const *argv, bool no_daemon,
		   char **text)
{
	char out[64];
	FILE *f;
	long len;
	pid_t p;
	int st;

	*text = NULL;
	snprintf(out, sizeof(out), SOCK_DIR "/profctl.%d.out", (int)getpid());
	p = fork();
	if (p == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || dup2(o, 1) < 0)
			_exit(126);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(125);
		/* PROFD_SOCKET is ours: profctl asks this profd */
		if (no_daemon)
			setenv("PROFCTL_NO_DAEMON", "1", 1);
		execvp(path, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return -1;
	f = fopen(out, "r");
	if (f && !fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0) {
		rewind(f);
		*text = calloc(1, (size_t)len + 1);
		if (*text && fread(*text, 1, (size_t)len, f) != (size_t)len)
			**text = 0;
	}
	if (f)
		fclose(f);
	unlink(out);
	return WEXITSTATUS(st);
}

/* profctl with args as uid (0: as we are) */
static inline int profctl_as(uid_t uid, const char *const *args, bool no_daemon, char **text)
{
	static char bin[4096];
	const char *argv[24] = { "profctl" };
	int n = 1;

	while (*args && n < 23)
		argv[n++] = *args++;
	argv[n] = NULL;
	return cmd_run(uid, sibling_bin("profctl", bin, sizeof(bin)), argv, no_daemon, text);
}

static inline int profctl_run(const char *const *args, bool no_daemon, char **text)
{
	return profctl_as(0, args, no_daemon, text);
}

/*
 * zone's row in uid's profctl report --flat --format csv of pid (more: one
 * more option, or NULL): calls, total_ns, self_ns, avg_ns, max_ns in v;
 * false if absent or failed
 */
static inline bool profctl_row(uid_t uid, pid_t pid, const char *zone, bool no_daemon, const char *more,
			unsigned long long v[5])
{
	char p[16], want[80], *text = NULL, *row;
	const char *args[] = { "report", "--pid", p, "--flat", "--format", "csv", more, NULL };
	bool ok = false;

	snprintf(p, sizeof(p), "%d", (int)pid);
	snprintf(want, sizeof(want), ",%s,", zone);
	if (profctl_as(uid, args, no_daemon, &text) == 0 && text && (row = strstr(text, want)))
		ok = sscanf(row + strlen(want), "%llu,%llu,%llu,%llu,%llu", &v[0], &v[1], &v[2],
			    &v[3], &v[4]) == 5;
	free(text);
	return ok;
}

/* calls of zone in uid's report of pid since uid's reset (-1 if absent or failed) */
static inline long user_calls(uid_t uid, pid_t pid, const char *zone, bool no_daemon)
{
	unsigned long long v[5];

	return profctl_row(uid, pid, zone, no_daemon, NULL, v) ? (long)v[0] : -1;
}

/* calls of zone in profctl's flat csv of pid (-1 if absent or failed) */
static inline long profctl_calls(pid_t pid, const char *zone, bool no_daemon)
{
	return user_calls(0, pid, zone, no_daemon);
}

#endif /* PROF_TEST_PROFD_FIXTURE_H */
