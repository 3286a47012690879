// SPDX-License-Identifier: MIT
/*
 * test_guard.c - root tier: profd shared by users who do not trust each
 * other.  Two unprivileged test users (made here with useradd, removed at
 * the end) flood what profd shares: kernel slots, connections, fds, hard
 * links, malformed packets; one reuses a dead client's pid.  The other user
 * and root must still be served, and each user keep what is theirs.
 * Also: profd's program is on sched_switch only while a thread is registered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "testutil.h"
#include "prof.h"
#include "client.h"
#include "proto.h"

#define SOCK_DIR "/tmp/profd-guard"
#define USER_A "profdtA"
#define USER_B "profdtB"

static uid_t uid_a, uid_b;
static bool made_users, made_group;
static char sock_path[128], log_path[128];
static pid_t profd_pid = -1;
static uid_t profd_uid; /* run profd as this uid with three capabilities (0: root) */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static const char *sibling(const char *name)
{
	static char path[2][4096];
	static int k;
	char *p = path[k++ & 1], *slash;
	ssize_t n = readlink("/proc/self/exe", p, 4000);

	if (n <= 0)
		return name;
	p[n] = 0;
	slash = strrchr(p, '/');
	snprintf(slash, 64, "/../%s", name);
	return p;
}

static uid_t user_uid(const char *name)
{
	char cmd[128];
	unsigned int u = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "id -u %s 2>/dev/null", name);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%u", &u) != 1)
		u = 0;
	pclose(f);
	return (uid_t)u;
}

/* two users of our own, gone again at the end */
static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0;
	if (system("useradd -M -r -s /usr/sbin/nologin " USER_A " 2>/dev/null;"
		   "useradd -M -r -s /usr/sbin/nologin " USER_B " 2>/dev/null") < 0)
		return 0;
	uid_a = user_uid(USER_A);
	uid_b = user_uid(USER_B);
	made_users = uid_a && uid_b;
	/* the group whose members read each other's processes (kept if it was there) */
	if (made_users && system("getent group profd >/dev/null") != 0)
		made_group = system("groupadd -r profd") == 0;
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	if (made_users && system("userdel " USER_A "; userdel " USER_B) < 0)
		return -1;
	if (made_group && system("groupdel profd") < 0)
		return -1;
	rmdir(SOCK_DIR "/run");
	rmdir(SOCK_DIR);
	return 0;
}

static void stop_profd(void)
{
	if (profd_pid > 0) {
		kill(profd_pid, SIGTERM);
		waitpid(profd_pid, NULL, 0);
	}
	profd_pid = -1;
}

static pid_t kids[16];

static void kids_add(pid_t k)
{
	size_t i;

	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++)
		if (kids[i] <= 0) {
			kids[i] = k;
			return;
		}
}

/* pass or fail: no profd, no profiled process left behind */
static int teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++) {
		if (kids[i] > 0 && !kill(kids[i], SIGKILL))
			waitpid(kids[i], NULL, 0);
		kids[i] = 0;
	}
	stop_profd();
	unlink(log_path);
	profd_uid = 0;
	return 0;
}

/* profd on a private socket, its log in log_path; nofile: RLIMIT_NOFILE
 * (0: as ours); extra options NULL-terminated.  A connected fd. */
static int start_profd(rlim_t nofile, const char *const *extra)
{
	__u64 end;
	int fd;

	if (geteuid() != 0) {
		printf("skip: not root\n");
		skip();
	}
	if (!made_users) {
		printf("skip: could not make the test users (useradd)\n");
		skip();
	}
	mkdir(SOCK_DIR, 0755);
	/* a directory profd may make its socket in, whoever it runs as */
	mkdir(SOCK_DIR "/run", 0755);
	if (chown(SOCK_DIR "/run", profd_uid, 0))
		skip();
	snprintf(sock_path, sizeof(sock_path), SOCK_DIR "/run/profd.%d.sock", (int)getpid());
	snprintf(log_path, sizeof(log_path), SOCK_DIR "/profd.%d.log", (int)getpid());
	profd_pid = fork();
	if (profd_pid == 0) {
		const char *argv[24] = { "profd", "--socket", sock_path, "--interval", "50" };
		int n = 5, lfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(lfd, 2);
		/* as a user of its own with only what it needs, as the unit runs it */
		if (profd_uid) {
			char u[16];
			const char *sp[32] = { "setpriv", "--reuid", u, "--regid", u, "--clear-groups",
					       "--inh-caps=-all,+bpf,+perfmon,+dac_read_search",
					       "--ambient-caps=-all,+bpf,+perfmon,+dac_read_search",
					       sibling("profd"), "--socket", sock_path,
					       "--interval", "50" };
			int m = 13;

			snprintf(u, sizeof(u), "%u", (unsigned)profd_uid);
			while (extra && *extra && m < 31)
				sp[m++] = *extra++;
			sp[m] = NULL;
			execvp("setpriv", (char *const *)(uintptr_t)sp);
			_exit(127);
		}
		if (nofile) {
			struct rlimit rl = { nofile, nofile };

			setrlimit(RLIMIT_NOFILE, &rl);
		}
		while (extra && *extra && n < 23)
			argv[n++] = *extra++;
		argv[n] = NULL;
		execv(sibling("profd"), (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	setenv("PROFD_SOCKET", sock_path, 1);
	setenv("PROF_SOCKET", sock_path, 1);
	for (end = now_ns() + 5000000000ull; now_ns() < end; usleep(20000)) {
		struct profd_status st;

		fd = profd_connect(sock_path);
		if (fd < 0)
			continue;
		if (profd_status(fd, &st) || !st.bpf_on) {
			printf("skip: no kernel assistance: %s\n", st.bpf_why);
			close(fd);
			stop_profd();
			skip();
		}
		return fd;
	}
	stop_profd();
	printf("skip: profd did not start\n");
	skip();
	return -1;
}

/* one request packet, raw */
static int send_pkt(int fd, __u32 type, const void *pl, size_t plen)
{
	char buf[PROFD_MSG_MAX];
	struct profd_hdr h = { type, (__u32)(sizeof(h) + plen) };

	memcpy(buf, &h, sizeof(h));
	if (plen)
		memcpy(buf + sizeof(h), pl, plen);
	return send(fd, buf, sizeof(h) + plen, MSG_NOSIGNAL) == (ssize_t)(sizeof(h) + plen)
		       ? 0
		       : -errno;
}

/* the answer's type, its error for an ERROR, -errno if none came in ms */
static int recv_pkt(int fd, int ms, struct profd_registered *reg)
{
	char buf[PROFD_MSG_MAX + 1];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct profd_hdr h;
	struct profd_error e;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_type == SCM_RIGHTS) {
			int mfd;

			memcpy(&mfd, CMSG_DATA(c), sizeof(int));
			close(mfd);
		}
	if ((size_t)n < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.type == PROFD_MSG_ERROR && (size_t)n >= sizeof(h) + sizeof(e)) {
		memcpy(&e, buf + sizeof(h), sizeof(e));
		return e.err < 0 ? e.err : -EPROTO;
	}
	if (h.type == PROFD_MSG_REGISTERED && reg && (size_t)n >= sizeof(h) + sizeof(*reg))
		memcpy(reg, buf + sizeof(h), sizeof(*reg));
	return (int)h.type;
}

static int do_register(int fd, pid_t tid)
{
	struct profd_register r = { (__u32)tid, 0 };
	int err = send_pkt(fd, PROFD_MSG_REGISTER, &r, sizeof(r));

	return err ? err : recv_pkt(fd, 2000, NULL);
}

/* in a child: uid from now on, killed with its parent */
static void become(uid_t uid)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		_exit(2);
	/* a change of credentials cleared it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* fork a child that becomes uid and runs fn(arg), its result over a pipe */
static int as_uid(uid_t uid, int (*fn)(void *), void *arg)
{
	int p[2], r = -EIO, st;
	pid_t k;

	if (pipe(p))
		return -errno;
	k = fork();
	if (k == 0) {
		close(p[0]);
		become(uid);
		r = fn(arg);
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r = -EIO;
	close(p[0]);
	waitpid(k, &st, 0);
	return r;
}

/*
 * A child that becomes uid and runs fn(ready, arg): fn writes an int on
 * ready when it has done what it holds, then waits to be killed (end_proc).
 * *said gets that int (-ETIMEDOUT if none came within a minute).
 */
static pid_t as_uid_bg(uid_t uid, int (*fn)(int, void *), void *arg, int *said)
{
	struct pollfd p;
	int pr[2];
	pid_t k;

	*said = -ETIMEDOUT;
	if (pipe(pr))
		return -1;
	k = fork();
	if (k == 0) {
		close(pr[0]);
		become(uid);
		_exit(fn(pr[1], arg) ? 1 : 0);
	}
	close(pr[1]);
	kids_add(k);
	p = (struct pollfd){ .fd = pr[0], .events = POLLIN };
	if (poll(&p, 1, 60000) != 1 || read(pr[0], said, sizeof(*said)) != sizeof(*said))
		*said = -ETIMEDOUT;
	close(pr[0]);
	return k;
}

/* --- kernel slots ---------------------------------------------------- */

static int park_pipe[2];

/* a thread that says its tid, then waits */
static void *park(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	(void)arg;
	if (write(park_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	pause();
	return NULL;
}

/* register this process's threads (n of them): how many got a slot */
static int register_threads(void *arg)
{
	int n = *(int *)arg, fd, ok = 0, i, r;
	pthread_t t;
	pid_t tid;

	fd = profd_connect(sock_path);
	if (fd < 0 || pipe(park_pipe))
		return -EIO;
	tid = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < n; i++) {
		if (i && (pthread_create(&t, NULL, park, NULL) ||
			  read(park_pipe[0], &tid, sizeof(tid)) != sizeof(tid)))
			return -EAGAIN;
		r = do_register(fd, tid);
		if (r == PROFD_MSG_REGISTERED)
			ok++;
		else if (r != -EDQUOT)
			return r < 0 ? r : -EPROTO;
	}
	return ok;
}

/*
 * User A asks for 20 slots and gets its share (8 of 64); user B's thread
 * still gets one.  Before the quota, A took every slot there was.
 */
static void test_slot_quota(void **state)
{
	int fd, n = 20, one = 1;
	const char *opts[] = { "--slots", "16", "--uid-slots", "8", NULL };

	(void)state;
	fd = start_profd(0, opts);
	assert_int_equal(as_uid(uid_a, register_threads, &n), 8);
	/* a bigger flood, all the slots there are: still 8 */
	n = 17;
	assert_int_equal(as_uid(uid_a, register_threads, &n), 8);
	assert_int_equal(as_uid(uid_b, register_threads, &one), 1);
	close(fd);
}

/* --- connections ----------------------------------------------------- */

/* open n connections and ask each for the status: how many answered */
static int flood_conns(void *arg)
{
	int n = *(int *)arg, ok = 0, i, *fds = calloc((size_t)n, sizeof(int));

	for (i = 0; i < n; i++) {
		fds[i] = profd_connect(sock_path);
		if (fds[i] >= 0 && !send_pkt(fds[i], PROFD_MSG_STATUS_REQ, NULL, 0) &&
		    recv_pkt(fds[i], 2000, NULL) == PROFD_MSG_STATUS)
			ok++;
	}
	/* the answered ones stay open and idle: closed by profd in time */
	for (i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		int r = recv_pkt(fds[i], 5000, NULL);

		/* a refusal not read yet (our request found the socket closed) */
		if (r == -EDQUOT)
			r = recv_pkt(fds[i], 5000, NULL);
		if (r != -ECONNRESET)
			return -ETIMEDOUT;
	}
	return ok;
}

struct timed {
	int rc;
	__u64 ns;
};

/* profctl with args as the current user; its exit status and time */
static struct timed profctl_timed(const char *const *args)
{
	struct timed t = { -1, 0 };
	__u64 t0 = now_ns();
	int st;
	pid_t k = fork();

	if (k == 0) {
		const char *argv[16] = { "profctl" };
		int n = 1, null = open("/dev/null", O_WRONLY);

		/* a profctl that hangs fails the test rather than stopping it */
		alarm(60);
		dup2(null, 1);
		dup2(null, 2);
		while (*args && n < 15)
			argv[n++] = *args++;
		execv(sibling("profctl"), (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	waitpid(k, &st, 0);
	t.ns = now_ns() - t0;
	t.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return t;
}

/* a status answered on fd: 0 or -errno */
static int status_fd(int fd)
{
	struct profd_status st;

	return profd_status(fd, &st);
}

static int status_once(void *arg)
{
	int fd = profd_connect(sock_path), r;

	(void)arg;
	if (fd < 0)
		return fd;
	r = status_fd(fd);
	close(fd);
	return r;
}

/*
 * User A opens 40 connections and leaves them idle: 8 are served (its
 * share), the rest refused; B and root are served meanwhile, and A's idle
 * ones are closed after --idle.
 */
static void test_conn_quota(void **state)
{
	const char *opts[] = { "--uid-conns", "8", "--idle", "1", NULL };
	const char *list[] = { "list", NULL };
	int fd, n = 40, st, pr[2], r = -1;
	struct timed t;
	pid_t k;

	(void)state;
	fd = start_profd(0, opts);
	assert_int_equal(pipe(pr), 0);
	k = fork();
	if (k == 0) {
		r = as_uid(uid_a, flood_conns, &n);
		_exit(write(pr[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(pr[1]);
	/* while A's are open: B, and root's profctl list, within a second */
	usleep(300000);
	assert_int_equal(as_uid(uid_b, status_once, NULL), 0);
	t = profctl_timed(list);
	assert_int_equal(t.rc, 0);
	assert_true(t.ns < 1000000000ull);
	assert_int_equal(read(pr[0], &r, sizeof(r)), sizeof(r));
	close(pr[0]);
	waitpid(k, &st, 0);
	assert_int_equal(r, 8);
	close(fd);
}

/* a profd that never answers: root's profctl list reads directly, quickly */
static void test_list_hung_profd(void **state)
{
	const char *list[] = { "list", NULL };
	struct timed t;
	int fd;

	(void)state;
	fd = start_profd(0, NULL);
	kill(profd_pid, SIGSTOP);
	t = profctl_timed(list);
	kill(profd_pid, SIGCONT);
	assert_int_equal(t.rc, 0);
	assert_true(t.ns < 3000000000ull);
	close(fd);
}

static __u64 cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, stt = 0;
	int i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	p = strrchr(buf, ')');
	for (i = 2; p && i < 14; i++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu %llu", &ut, &stt);
	return ut + stt;
}

/*
 * Out of fds (RLIMIT_NOFILE 48): 60 root connections pending.  profd
 * sheds what it cannot take and does not spin; once they close, a status
 * is answered within a second.
 */
static void test_emfile(void **state)
{
	int fd, fds[60], i;
	__u64 c0, c1, t0;
	long hz = sysconf(_SC_CLK_TCK);

	(void)state;
	fd = start_profd(48, NULL);
	for (i = 0; i < 60; i++)
		fds[i] = profd_connect(sock_path);
	usleep(200000);
	c0 = cpu_ticks(profd_pid);
	t0 = now_ns();
	usleep(1000000);
	c1 = cpu_ticks(profd_pid);
	/* busy less than a fifth of the second */
	assert_true((double)(c1 - c0) / (double)hz < 0.2 * (double)(now_ns() - t0) / 1e9);
	for (i = 0; i < 60; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(fd);
	t0 = now_ns();
	assert_int_equal(status_once(NULL), 0);
	assert_true(now_ns() - t0 < 1000000000ull);
}

/* --- segments -------------------------------------------------------- */

static void zone_once(void)
{
	PROF_USDT(guard_zone);
}

/* one zone, with profd or not (*arg), then stay */
static int stay_profiled(int ready, void *arg)
{
	int one = 1;

	if (!*(bool *)arg)
		setenv("PROF_NO_DAEMON", "1", 1);
	zone_once();
	if (write(ready, &one, sizeof(one)) != sizeof(one))
		return -EIO;
	pause();
	return 0;
}

/* a profiled process of uid that stays, registered with profd if daemon;
 * *seg gets its segment's path */
static pid_t profiled_as(uid_t uid, char *seg, size_t len, bool daemon)
{
	int said;
	pid_t k = as_uid_bg(uid, stay_profiled, &daemon, &said);

	if (k < 0 || said != 1)
		return -1;
	/* its own segment: an earlier process of the same pid may have left
	 * one (a pid alone is not a process) */
	if (seg) {
		char paths[1][96];

		seg[0] = 0;
		if (test_seg_paths(k, prof_proc_start_token(k), paths, 1))
			snprintf(seg, len, "%s", paths[0]);
	}
	return k;
}

/* the same, without profd: found by its segment alone */
static pid_t profiled(uid_t uid, char *seg, size_t len)
{
	return profiled_as(uid, seg, len, false);
}

static void end_proc(pid_t k)
{
	size_t i;

	kill(k, SIGKILL);
	waitpid(k, NULL, 0);
	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++)
		if (kids[i] == k)
			kids[i] = 0;
}

static bool followed(int fd, pid_t pid)
{
	struct profd_proc *p;
	size_t n, i;
	bool yes = false;

	if (profd_list(fd, &p, &n))
		return false;
	for (i = 0; i < n; i++)
		yes |= p[i].pid == (__u32)pid && p[i].alive;
	free(p);
	return yes;
}

static bool wait_followed(int fd, pid_t pid)
{
	__u64 end = now_ns() + 5000000000ull;

	while (now_ns() < end) {
		if (followed(fd, pid))
			return true;
		usleep(20000);
	}
	return false;
}

static long log_lines(const char *what)
{
	char buf[512];
	long n = 0;
	FILE *f = fopen(log_path, "r");

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		n += strstr(buf, what) != NULL;
	fclose(f);
	return n;
}

/*
 * A's segment under 16 more names (hard links) is not followed, under any
 * of them; A's plain process is, and B's.  Before: followed 17 times.
 */
static void test_hard_links(void **state)
{
	char seg[128], name[160];
	pid_t linked, plain, other;
	int fd, i;

	(void)state;
	if (geteuid() != 0 || !made_users)
		skip();
	linked = profiled(uid_a, seg, sizeof(seg));
	assert_true(linked > 0 && seg[0]);
	for (i = 1; i <= 16; i++) {
		snprintf(name, sizeof(name), "%s.%d", seg, 900 + i);
		assert_int_equal(link(seg, name), 0);
	}
	plain = profiled(uid_a, NULL, 0);
	other = profiled(uid_b, NULL, 0);
	fd = start_profd(0, NULL);
	assert_true(wait_followed(fd, plain));
	assert_true(wait_followed(fd, other));
	assert_false(followed(fd, linked));
	for (i = 1; i <= 16; i++) {
		snprintf(name, sizeof(name), "%s.%d", seg, 900 + i);
		unlink(name);
	}
	end_proc(linked);
	end_proc(plain);
	end_proc(other);
	unlink(seg);
	close(fd);
}

/*
 * A follows 3 at most: its 4th waits; B's is followed.  When one of the 3
 * exits, the 4th is followed (at once: not at the next backstop listing
 * of /dev/shm, which is 30 s away).
 */
static void test_proc_quota(void **state)
{
	const char *opts[] = { "--uid-procs", "3", NULL };
	pid_t a[4], b;
	int fd, i, n = 0, waiting = -1, one = -1;

	(void)state;
	fd = start_profd(0, opts);
	for (i = 0; i < 4; i++)
		a[i] = profiled(uid_a, NULL, 0);
	b = profiled(uid_b, NULL, 0);
	assert_true(wait_followed(fd, b));
	usleep(300000);
	for (i = 0; i < 4; i++) {
		if (followed(fd, a[i])) {
			n++;
			one = i;
		} else {
			waiting = i;
		}
	}
	assert_int_equal(n, 3);
	end_proc(a[one]);
	assert_true(wait_followed(fd, a[waiting]));
	for (i = 0; i < 4; i++)
		if (i != one)
			end_proc(a[i]);
	end_proc(b);
	close(fd);
}

/* --- a storm of processes -------------------------------------------- */

#define STORM_PROCS 120

/*
 * *arg profiled processes at once, each one zone (registered with profd,
 * its segment followed), then waiting on a pipe this one holds: when it
 * goes, they exit (and unlink their segments).  Says how many did their
 * zone.
 */
static int storm(int ready, void *arg)
{
	int procs = *(int *)arg, hold[2], said[2], i, n = 0;
	char c;

	if (pipe(hold) || pipe(said))
		return -errno;
	for (i = 0; i < procs; i++) {
		pid_t k = fork();

		if (k < 0)
			return -errno;
		if (k == 0) {
			close(hold[1]);
			zone_once();
			if (write(said[1], "r", 1) != 1 || read(hold[0], &c, 1) < 0)
				exit(3);
			exit(0);
		}
	}
	close(said[1]);
	while (n < procs && read(said[0], &c, 1) == 1)
		n++;
	if (write(ready, &n, sizeof(n)) != sizeof(n))
		return -EIO;
	pause();
	return 0;
}

/* a bare connection (no pid namespace handed over), or -errno */
static int connect_bare(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* until profd closed fd (refused it): 0, or -ETIMEDOUT */
static int wait_closed(int fd)
{
	struct pollfd q = { .fd = fd, .events = POLLRDHUP };

	return poll(&q, 1, 5000) == 1 ? 0 : -ETIMEDOUT;
}

/* a connection refused before it handed its pid namespace over: what the
 * handover (profd_pidns) says, then */
static int late_handover(void *arg)
{
	int fd = connect_bare(), ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC), r;

	(void)arg;
	if (fd < 0 || ns < 0)
		return -EIO;
	r = wait_closed(fd);
	if (!r)
		r = profd_pidns(fd, ns);
	close(ns);
	close(fd);
	return r;
}

/* *arg connections held, each answered once: says how many were */
static int hold_conns(int ready, void *arg)
{
	int n = *(int *)arg, ok = 0, i, fd;

	for (i = 0; i < n; i++) {
		fd = profd_connect(sock_path);
		ok += fd >= 0 && status_fd(fd) == 0;
	}
	if (write(ready, &ok, sizeof(ok)) != sizeof(ok))
		return -EIO;
	pause();
	return 0;
}

/* fn as uid answers 0 (or want) within five seconds */
static bool served(uid_t uid, int (*fn)(void *), void *arg, int want)
{
	__u64 end = now_ns() + 5000000000ull;

	while (now_ns() < end) {
		if ((uid ? as_uid(uid, fn, arg) : fn(arg)) == want)
			return true;
		usleep(50000);
	}
	return false;
}

/* profd's log says what it may follow (and what it follows) */
static const char *const verbose[] = { "-v", NULL };

/* how many processes profd follows at most, as its log said at start */
static unsigned int max_followed(void)
{
	unsigned int conns, uid_conns, segs = 0;
	char buf[512], *p;
	FILE *f = fopen(log_path, "r");

	while (f && fgets(buf, sizeof(buf), f))
		if ((p = strstr(buf, "ctl: at most ")) &&
		    sscanf(p, "ctl: at most %u connections (%u a uid), %u processes followed",
			   &conns, &uid_conns, &segs) != 3)
			segs = 0;
	if (f)
		fclose(f);
	return segs;
}

/* while a storm goes on (once it took every place for processes, if
 * full): B's process is followed (root's fd lists it), B's and root's
 * threads register, root's status is answered */
static void others_served(int fd, bool full)
{
	unsigned int most = max_followed();
	struct profd_status st;
	int one = 1;
	__u64 end = now_ns() + 10000000000ull;
	pid_t b;

	assert_true(most > 0);
	while (full && !profd_status(fd, &st) && st.processes < most && now_ns() < end)
		usleep(50000);
	assert_true(!full || st.processes >= most);
	b = profiled(uid_b, NULL, 0);
	assert_true(b > 0);
	assert_true(wait_followed(fd, b));
	assert_true(served(uid_b, register_threads, &one, 1));
	assert_true(served(0, register_threads, &one, 1));
	assert_true(served(0, status_once, NULL, 0));
	end_proc(b);
}

/*
 * A storm: user A starts 120 profiled processes at once where profd may
 * have 128 fds.  Each takes a connection and a followed segment, if it
 * can: A gets its shares, and still B's process is followed and B's and
 * root's threads register, root's status is answered.  Before, A's
 * segments took every fd and profd shed every connection, root's too.
 */
static void test_storm(void **state)
{
	int fd, procs = STORM_PROCS, ready;
	pid_t k;

	(void)state;
	fd = start_profd(128, verbose);
	k = as_uid_bg(uid_a, storm, &procs, &ready);
	assert_int_equal(ready, STORM_PROCS);
	/* not necessarily full: past its share of pending names, a user's
	 * new names wait for a listing */
	others_served(fd, false);
	end_proc(k);
	close(fd);
}

/*
 * The storm from 12 uids (10 processes each, as one user with a range of
 * subordinate uids could): none past its share, together past every
 * place.  B's process is still followed (a process of a uid with more
 * gives it its place), B's and root's threads register, root is answered.
 * Before, their processes took every fd, as in test_storm.
 */
static void test_storm_uids(void **state)
{
	int fd, procs = STORM_PROCS / 12, ready, i;
	pid_t k[12];

	(void)state;
	fd = start_profd(128, verbose);
	for (i = 0; i < 12; i++) {
		k[i] = as_uid_bg(70001 + (uid_t)i, storm, &procs, &ready);
		assert_int_equal(ready, procs);
	}
	others_served(fd, true);
	for (i = 0; i < 12; i++)
		end_proc(k[i]);
	close(fd);
}

/*
 * Every place taken by two uids at their shares (--max-conns 8, 4 each):
 * a third user still connects and is answered (a connection of a uid
 * that holds more gives it its place), and so is root.  Before, the third
 * was refused (EUSERS) for as long as they held them: a user with a range
 * of subordinate uids needs no second user for that.
 */
static void test_conn_fair(void **state)
{
	const char *opts[] = { "--max-conns", "8", "--uid-conns", "4", "--idle", "60", NULL };
	int four = 4, held;
	pid_t a, n;

	(void)state;
	/* root's connection would take a place of the 8 */
	close(start_profd(0, opts));
	a = as_uid_bg(uid_a, hold_conns, &four, &held);
	assert_int_equal(held, 4);
	/* past its share, A is told why, even if its handover comes after
	 * profd closed the connection (it read "Broken pipe" before) */
	assert_int_equal(as_uid(uid_a, late_handover, NULL), -EDQUOT);
	n = as_uid_bg(65534, hold_conns, &four, &held);
	assert_int_equal(held, 4);
	assert_true(served(uid_b, status_once, NULL, 0));
	assert_true(log_lines("places taken") >= 1);
	assert_true(served(0, status_once, NULL, 0));
	end_proc(a);
	end_proc(n);
}

/* --- hostile handovers and requests ---------------------------------- */

/* one packet carrying nfds copies of nsfd: a PIDNS, or a STATUS_REQ */
static int send_fds(int fd, int nsfd, int nfds, bool status)
{
	struct {
		struct profd_hdr h;
		struct profd_pidns p;
	} req = { { PROFD_MSG_PIDNS, sizeof(req) }, { 0, 0 } };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} cb;
	int fds[2] = { nsfd, nsfd };
	struct iovec iov = { &req, status ? sizeof(req.h) : sizeof(req) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb.buf };
	struct cmsghdr *c;

	if (status)
		req.h = (struct profd_hdr){ PROFD_MSG_STATUS_REQ, sizeof(req.h) };
	memset(&cb, 0, sizeof(cb));
	msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	return sendmsg(fd, &msg, MSG_NOSIGNAL) == (ssize_t)iov.iov_len ? 0 : -errno;
}

/* nsfd handed over as our pid namespace: refused (EPERM), and the
 * connection still answers, with none of another's processes */
static bool ns_refused(int fd, int nsfd, pid_t other)
{
	struct profd_proc *p;
	size_t n, i;
	bool ok;

	if (nsfd < 0 || profd_pidns(fd, nsfd) != -EPERM || profd_list(fd, &p, &n))
		return false;
	for (ok = true, i = 0; i < n; i++)
		ok &= p[i].pid != (__u32)other;
	free(p);
	return ok;
}

/* a pid namespace of our own (with a user namespace), handed over while
 * a process of it lives, then once none does: both refused */
static int foreign_ns(pid_t other)
{
	int fd, ns, st;
	pid_t g;

	if (unshare(CLONE_NEWUSER | CLONE_NEWPID))
		return 0; /* no user namespaces for users here: nothing to try */
	g = fork();
	if (g == 0) {
		pause();
		_exit(0);
	}
	ns = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
	fd = profd_connect(sock_path);
	if (g < 0 || fd < 0 || !ns_refused(fd, ns, other))
		return 20;
	kill(g, SIGKILL);
	if (waitpid(g, &st, 0) != g || !ns_refused(fd, ns, other))
		return 21;
	return 0;
}

/* in a child: foreign_ns's answer */
static int foreign_ns_child(pid_t other)
{
	int st;
	pid_t k = fork();

	if (k == 0)
		_exit(foreign_ns(other));
	return k > 0 && waitpid(k, &st, 0) == k && WIFEXITED(st) ? WEXITSTATUS(st) : 22;
}

/* a raw SLICES_REQ: its answer (recv_pkt) */
static int slices_raw(int fd, __u32 pid, __u32 pad, size_t len)
{
	struct profd_pid_req r = { pid, pad };
	int err = send_pkt(fd, PROFD_MSG_SLICES_REQ, &r, len);

	return err ? err : recv_pkt(fd, 2000, NULL);
}

/*
 * As a user: fds that are no pid namespace of ours handed over (a pipe,
 * another kind of namespace, a device, a pid namespace below ours with a
 * process and without), each refused on a connection that goes on; two
 * fds at once, or an fd with another request, drop the connection; other's
 * scheduler slices asked for directly: refused, as are malformed asks.
 * 0, or the step that failed.
 */
static int hostile_asks(void *arg)
{
	pid_t other = *(pid_t *)arg;
	struct profd_slices_thread *sl = NULL;
	__u32 nsl = 0;
	int fd = profd_connect(sock_path), p[2], ns, r;

	if (fd < 0 || pipe(p))
		return 1;
	if (!ns_refused(fd, p[0], other))
		return 2;
	if (!ns_refused(fd, ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), other))
		return 3;
	close(ns);
	if (!ns_refused(fd, ns = open("/dev/null", O_RDONLY | O_CLOEXEC), other))
		return 4;
	close(ns);
	r = foreign_ns_child(other);
	if (r)
		return r;
	/* another user's slices, through the client and crafted */
	if (profd_slices(fd, other, &sl, &nsl) != -EPERM || sl)
		return 5;
	if (slices_raw(fd, (__u32)other, 0, sizeof(struct profd_pid_req)) != -EPERM)
		return 6;
	if (slices_raw(fd, (__u32)other, 1, sizeof(struct profd_pid_req)) != -EINVAL ||
	    slices_raw(fd, 0, 0, sizeof(struct profd_pid_req)) != -EINVAL ||
	    slices_raw(fd, 0x80000000u, 0, sizeof(struct profd_pid_req)) != -EINVAL)
		return 7;
	if (slices_raw(fd, 0x7fffffffu, 0, sizeof(struct profd_pid_req)) != -ESRCH)
		return 8;
	/* short by a byte: malformed, and the connection goes */
	if (slices_raw(fd, (__u32)other, 0, sizeof(__u32)) != -EBADMSG ||
	    recv_pkt(fd, 2000, NULL) != -ECONNRESET)
		return 9;
	close(fd);
	/* two fds with a handover, an fd with a status: dropped */
	fd = profd_connect(sock_path);
	if (fd < 0 || send_fds(fd, p[0], 2, false) || recv_pkt(fd, 2000, NULL) != -EBADMSG ||
	    recv_pkt(fd, 2000, NULL) != -ECONNRESET)
		return 10;
	close(fd);
	fd = profd_connect(sock_path);
	if (fd < 0 || send_fds(fd, p[0], 1, true) || recv_pkt(fd, 2000, NULL) != -EBADMSG ||
	    recv_pkt(fd, 2000, NULL) != -ECONNRESET)
		return 11;
	close(fd);
	return 0;
}

/* the fds profd holds, but the segments it follows: those of every
 * profiled process on the machine (other tests', other runs'), which come
 * and go meanwhile */
static int profd_fds(void)
{
	char path[64], to[64];
	glob_t g;
	size_t i;
	int n = 0;
	ssize_t l;

	snprintf(path, sizeof(path), "/proc/%d/fd/*", (int)profd_pid);
	if (glob(path, 0, NULL, &g))
		return -1;
	for (i = 0; i < g.gl_pathc; i++) {
		l = readlink(g.gl_pathv[i], to, sizeof(to) - 1);
		to[l > 0 ? l : 0] = 0;
		n += strncmp(to, "/dev/shm/prof.", 14) != 0;
	}
	globfree(&g);
	return n;
}

/*
 * User A hands profd fds that prove nothing and asks for B's slices
 * (hostile_asks): each refused with its error, profd holds no fd more
 * than before, answers root, and B still gets its own process's slices.
 */
static void test_hostile_asks(void **state)
{
	struct profd_slices_thread *sl = NULL;
	__u32 nsl = 0;
	int fd, before;
	__u64 end;
	pid_t b;

	(void)state;
	fd = start_profd(0, NULL);
	b = profiled_as(uid_b, NULL, 0, true);
	assert_true(b > 0);
	assert_true(wait_followed(fd, b));
	before = profd_fds();
	assert_int_equal(as_uid(uid_a, hostile_asks, &b), 0);
	/* the refused connections' fds close as profd sees them go */
	for (end = now_ns() + 2000000000ull; profd_fds() > before && now_ns() < end;)
		usleep(20000);
	assert_int_equal(profd_fds(), before);
	assert_int_equal(status_once(NULL), 0);
	assert_int_equal(profd_slices(fd, b, &sl, &nsl), 0);
	assert_true(nsl >= 1);
	free(sl);
	end_proc(b);
	close(fd);
}

/* pid in profd's list: 1 alive, 2 exited (kept), 0 not there */
static int listed(int fd, pid_t pid)
{
	struct profd_proc *p;
	size_t n, i;
	int r = 0;

	if (profd_list(fd, &p, &n))
		return -1;
	for (i = 0; i < n; i++)
		if (p[i].pid == (__u32)pid)
			r = p[i].alive ? 1 : 2;
	free(p);
	return r;
}

/*
 * Kept data per uid: with --uid-kept 0, a user's exited process keeps
 * nothing (by default it is kept --keep seconds, as test_profd checks).
 */
static void test_kept_quota(void **state)
{
	const char *opts[] = { "--uid-kept", "0", "--keep", "600", NULL };
	__u64 end;
	int fd, r = -1;
	pid_t a;

	(void)state;
	fd = start_profd(0, opts);
	a = profiled(uid_a, NULL, 0);
	assert_true(wait_followed(fd, a));
	end_proc(a);
	for (end = now_ns() + 3000000000ull; now_ns() < end; usleep(20000))
		if ((r = listed(fd, a)) == 0)
			break;
	assert_int_equal(r, 0);
	close(fd);
}

static int malformed(void *arg)
{
	int n = *(int *)arg, i, fd;
	char junk[7] = "garbage";

	for (i = 0; i < n; i++) {
		fd = profd_connect(sock_path);
		if (fd < 0)
			return fd;
		if (send(fd, junk, sizeof(junk), MSG_NOSIGNAL) != sizeof(junk))
			return -errno;
		recv_pkt(fd, 2000, NULL);
		close(fd);
	}
	return 0;
}

/* 200 malformed packets from A: a handful of log lines, not 200 */
static void test_warn_rate(void **state)
{
	int fd, n = 200;

	(void)state;
	fd = start_profd(0, NULL);
	assert_int_equal(as_uid(uid_a, malformed, &n), 0);
	assert_int_equal(status_once(NULL), 0);
	assert_true(log_lines("malformed packet") <= 5);
	assert_true(log_lines("malformed packet") >= 1);
	close(fd);
}

/* --- pid reuse ------------------------------------------------------- */

static int status_threads(void)
{
	struct profd_status st;
	int fd = profd_connect(sock_path), r;

	if (fd < 0)
		return fd;
	r = profd_status(fd, &st);
	close(fd);
	return r ? r : (int)st.threads;
}

/*
 * The victim: a process of uid B that registers its own thread over its
 * own connection, says 'r' on out (or 'x'), then waits for its pipe to close.
 */
static pid_t victim(uid_t uid, int *out, int *hold)
{
	int rp[2], hp[2];
	char c;
	pid_t k;

	if (pipe(rp) || pipe(hp))
		return -1;
	k = fork();
	if (k == 0) {
		int fd;

		close(rp[0]);
		close(hp[1]);
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(2);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = profd_connect(sock_path);
		c = fd >= 0 && do_register(fd, getpid()) == PROFD_MSG_REGISTERED ? 'r' : 'x';
		if (write(rp[1], &c, 1) != 1)
			_exit(3);
		if (read(hp[0], &c, 1) < 0)
			_exit(4);
		_exit(0);
	}
	close(rp[1]);
	close(hp[0]);
	*out = rp[0];
	*hold = hp[1];
	return k;
}

/*
 * A client of uid A connects, forks and exits; its child keeps the
 * connection.  A process of uid B gets the dead client's pid (ns_last_pid)
 * and registers its thread.  Over the old connection the child then
 * registers B's thread and closes: B's registration must neither be taken
 * nor released.  Before: the old connection's SO_PEERCRED pid named B's
 * process, so both worked.
 */
static void test_pid_reuse(void **state)
{
	int fd, attempt, r = 0, vout = -1, vhold = -1, cp[2], go[2], res[2];
	pid_t p, v = -1, c = -1;
	char ch;

	(void)state;
	fd = start_profd(0, NULL);
	/* a hang here is a failure, not a stuck run */
	alarm(60);
	for (attempt = 0; attempt < 30; attempt++) {
		FILE *f;

		assert_int_equal(pipe(cp), 0);
		assert_int_equal(pipe(go), 0);
		assert_int_equal(pipe(res), 0);
		p = fork();
		if (p == 0) {
			int cfd;
			pid_t k;

			if (setgroups(0, NULL) || setgid(uid_a) || setuid(uid_a))
				_exit(2);
			close(cp[0]);
			close(go[1]);
			close(res[0]);
			cfd = profd_connect(sock_path);
			k = fork();
			if (k == 0) {
				/* the child: waits for a tid, registers it, says how it went */
				pid_t tid;

				close(cp[1]);
				if (read(go[0], &tid, sizeof(tid)) != sizeof(tid))
					_exit(0);
				r = do_register(cfd, tid);
				close(cfd);
				_exit(write(res[1], &r, sizeof(r)) == sizeof(r) ? 0 : 5);
			}
			_exit(write(cp[1], &k, sizeof(k)) == sizeof(k) ? 0 : 3);
		}
		close(cp[1]);
		close(go[0]);
		close(res[1]);
		assert_int_equal(read(cp[0], &c, sizeof(c)), sizeof(c));
		close(cp[0]);
		kids_add(c);
		waitpid(p, NULL, 0);
		/* the dead client's pid, for a process of B */
		f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		if (!f)
			break;
		fprintf(f, "%d", (int)p - 1);
		fclose(f);
		v = victim(uid_b, &vout, &vhold);
		if (v == p)
			break;
		close(vhold);
		close(vout);
		waitpid(v, NULL, 0);
		close(go[1]);
		close(res[0]);
		waitpid(c, NULL, 0);
		v = -1;
	}
	if (v != p) {
		printf("skip: no process got the dead client's pid in 30 tries\n");
		skip();
	}
	kids_add(v);
	assert_int_equal(read(vout, &ch, 1), 1);
	assert_int_equal(ch, 'r');
	assert_int_equal(status_threads(), 1);
	/* the old connection asks for B's thread, then closes */
	assert_int_equal(write(go[1], &v, sizeof(v)), sizeof(v));
	assert_int_equal(read(res[0], &r, sizeof(r)), sizeof(r));
	assert_true(r != PROFD_MSG_REGISTERED);
	waitpid(c, NULL, 0);
	/* B keeps its slot: the old connection's close released nothing */
	for (attempt = 0; attempt < 10; attempt++) {
		assert_int_equal(status_threads(), 1);
		usleep(30000);
	}
	close(vhold);
	close(vout);
	close(go[1]);
	close(res[0]);
	waitpid(v, NULL, 0);
	alarm(0);
	close(fd);
}

/* --- attached only while used ---------------------------------------- */

/* profd holds a bpf_link on sched_switch (tp_btf shows as a raw tracepoint) */
static bool attached(void)
{
	char path[96], line[128];
	bool yes = false;
	glob_t g;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/*", (int)profd_pid);
	if (glob(path, 0, NULL, &g))
		return false;
	for (i = 0; i < g.gl_pathc && !yes; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "tp_name:", 8) && strstr(line, "sched_switch"))
				yes = true;
		fclose(f);
	}
	globfree(&g);
	return yes;
}

static bool wait_attached(bool want, double seconds)
{
	__u64 end = now_ns() + (__u64)(seconds * 1e9);

	do {
		if (attached() == want)
			return true;
		usleep(10000);
	} while (now_ns() < end);
	return false;
}

/*
 * No client: nothing on sched_switch.  A thread registers: attached within
 * a second.  Its process exits: detached after a second, within three.
 */
static void test_attach_on_demand(void **state)
{
	int fd, vout, vhold;
	pid_t v;
	char ch;

	(void)state;
	fd = start_profd(0, NULL);
	assert_true(wait_attached(false, 0));
	v = victim(uid_a, &vout, &vhold);
	kids_add(v);
	assert_int_equal(read(vout, &ch, 1), 1);
	assert_int_equal(ch, 'r');
	assert_true(wait_attached(true, 1.0));
	close(vhold);
	close(vout);
	waitpid(v, NULL, 0);
	assert_true(wait_attached(false, 3.0));
	close(fd);
}

/* --- least privilege, and the profd group ---------------------------- */

static pid_t snap_pid;

/* 0 if the caller may read snap_pid through profd, else -errno */
static int read_it(void *arg)
{
	struct prof_snapshot *snap = NULL;
	int fd = profd_connect(sock_path), r;

	(void)arg;
	if (fd < 0)
		return fd;
	r = profd_snapshot(fd, snap_pid, PROFD_SNAP_START, 0, &snap);
	prof_snapshot__destroy(snap);
	close(fd);
	return r;
}

/* the caller's profctl reset of snap_pid, through profd: its exit status */
static int reset_it(void *arg)
{
	char p[16];
	const char *args[] = { "reset", "--pid", p, NULL };

	(void)arg;
	snprintf(p, sizeof(p), "%d", (int)snap_pid);
	return profctl_timed(args).rc;
}

/* guard_zone's calls in the caller's report of snap_pid through profd
 * (since the caller's reset): -1 if it has no such row, -2 if it failed */
static int calls_it(void *arg)
{
	char p[16], out[8192], *row;
	const char *argv[] = { "profctl", "report", "--pid", p, "--flat", "--format", "csv", NULL };
	int fds[2], st, calls = -1;
	size_t len = 0;
	ssize_t n;
	pid_t k;

	(void)arg;
	snprintf(p, sizeof(p), "%d", (int)snap_pid);
	if (pipe(fds))
		return -2;
	k = fork();
	if (k == 0) {
		alarm(60);
		dup2(fds[1], 1);
		close(fds[0]);
		execv(sibling("profctl"), (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 && (n = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = 0;
	close(fds[0]);
	if (waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st))
		return -2;
	row = strstr(out, ",guard_zone,");
	if (row)
		calls = atoi(row + strlen(",guard_zone,"));
	return calls;
}

/*
 * profd as user A with only CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH
 * (ambient), as the unit runs it: it follows B's 0600 segment, registers
 * B's thread, attaches.
 */
static void test_least_privilege(void **state)
{
	int fd, vout, vhold;
	pid_t v, b;
	char ch;

	(void)state;
	profd_uid = uid_a;
	fd = start_profd(0, NULL);
	b = profiled(uid_b, NULL, 0);
	assert_true(wait_followed(fd, b));
	v = victim(uid_b, &vout, &vhold);
	kids_add(v);
	assert_int_equal(read(vout, &ch, 1), 1);
	assert_int_equal(ch, 'r');
	assert_true(wait_attached(true, 1.0));
	close(vhold);
	close(vout);
	waitpid(v, NULL, 0);
	end_proc(b);
	close(fd);
}

/*
 * Members of the group profd read each other's processes; a user outside
 * it reads only their own.  A member's reset is the member's own: it
 * zeroes the member's reports of the process, not its owner's.
 */
static void test_profd_group(void **state)
{
	int fd, n;
	pid_t a;

	(void)state;
	fd = start_profd(0, NULL);
	if (system("getent group profd >/dev/null") != 0) {
		printf("skip: no group profd\n");
		skip();
	}
	a = profiled(uid_a, NULL, 0);
	assert_true(wait_followed(fd, a));
	snap_pid = a;
	/* B outside the group */
	assert_int_equal(as_uid(uid_b, read_it, NULL), -EPERM);
	assert_int_equal(system("usermod -a -G profd " USER_A " && usermod -a -G profd " USER_B),
			 0);
	/* profd looks membership up again after a minute: a fresh profd sees it now */
	close(fd);
	stop_profd();
	fd = start_profd(0, NULL);
	assert_true(wait_followed(fd, a));
	assert_int_equal(as_uid(uid_b, read_it, NULL), 0);
	assert_int_equal(as_uid(uid_a, calls_it, NULL), 1);
	assert_int_equal(as_uid(uid_b, reset_it, NULL), 0);
	n = as_uid(uid_b, calls_it, NULL);
	assert_true(n == 0 || n == -1); /* no calls since B's reset */
	assert_int_equal(as_uid(uid_a, calls_it, NULL), 1);
	/* the owner's reset zeroes the owner's */
	assert_int_equal(as_uid(uid_a, reset_it, NULL), 0);
	n = as_uid(uid_a, calls_it, NULL);
	assert_true(n == 0 || n == -1);
	{
		char pat[64];
		glob_t g;
		size_t i;

		/* the baselines they left (their $XDG_RUNTIME_DIR is not theirs) */
		snprintf(pat, sizeof(pat), "/dev/shm/profctl.*.%d.*", (int)a);
		if (!glob(pat, 0, NULL, &g)) {
			for (i = 0; i < g.gl_pathc; i++)
				unlink(g.gl_pathv[i]);
			globfree(&g);
		}
	}
	assert_int_equal(system("gpasswd -d " USER_A " profd >/dev/null && "
				"gpasswd -d " USER_B " profd >/dev/null"),
			 0);
	end_proc(a);
	close(fd);
}

/* --- names another user makes first: profctl's files ----------------- */

/* what plant() makes, as the user it runs as */
struct plant {
	char path[160];
	char kind; /* 'p' a FIFO, 'd' a directory, 'f' a file, 'l' a symlink to target */
	const char *target;
};

static int plant(void *arg)
{
	const struct plant *p = arg;
	int fd;

	switch (p->kind) {
	case 'p':
		return mkfifo(p->path, 0666) ? -errno : 0;
	case 'd':
		return mkdir(p->path, 0777) ? -errno : 0;
	case 'l':
		return symlink(p->target, p->path) ? -errno : 0;
	}
	fd = open(p->path, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int unplant(void *arg)
{
	const struct plant *p = arg;

	return p->kind == 'd' ? rmdir(p->path) : unlink(p->path);
}

/* uid's reset baseline of pid, where profctl keeps it without a runtime
 * directory of its own */
static void baseline_name(struct plant *p, uid_t uid, pid_t pid, char kind)
{
	snprintf(p->path, sizeof(p->path), "/dev/shm/profctl.%u.%d.%llu", (unsigned int)uid,
		 (int)pid, (unsigned long long)prof_proc_start_token(pid));
	p->kind = kind;
}

/* the baselines of pid the test's users and root left */
static void baselines_gone(pid_t pid)
{
	char pat[64];
	glob_t g;
	size_t i;

	snprintf(pat, sizeof(pat), "/dev/shm/profctl.*.%d.*", (int)pid);
	if (!glob(pat, 0, NULL, &g)) {
		for (i = 0; i < g.gl_pathc; i++)
			if (unlink(g.gl_pathv[i]))
				rmdir(g.gl_pathv[i]);
		globfree(&g);
	}
}

/* A's process, followed by profd (its fd in *fd), and first B's things
 * of kind kr at root's reset baseline name of it, of kind ka at A's */
static pid_t planted_for(struct plant *pr, char kr, struct plant *pa, char ka, int *fd)
{
	pid_t a;

	*fd = start_profd(0, NULL);
	/* no runtime directory of their own: /dev/shm */
	unsetenv("XDG_RUNTIME_DIR");
	a = profiled(uid_a, NULL, 0);
	assert_true(wait_followed(*fd, a));
	snap_pid = a;
	baseline_name(pr, 0, a, kr);
	baseline_name(pa, uid_a, a, ka);
	assert_int_equal(as_uid(uid_b, plant, pr), 0);
	assert_int_equal(as_uid(uid_b, plant, pa), 0);
	return a;
}

/*
 * B makes a FIFO where root's and A's reset baselines of A's process would
 * be: root's report, save and diff of it, and A's report, do not wait on
 * it and still print (counting from the start).
 */
static void test_planted_baseline(void **state)
{
	struct plant pr, pa;
	char p[16], pid_arg[24], out[64];
	const char *report[] = { "report", "--pid", p, NULL };
	const char *save[] = { "save", "--pid", p, "-o", out, NULL };
	const char *diff[] = { "diff", pid_arg, pid_arg, NULL };
	int fd;
	pid_t a;

	(void)state;
	a = planted_for(&pr, 'p', &pa, 'p', &fd);
	snprintf(p, sizeof(p), "%d", (int)a);
	snprintf(pid_arg, sizeof(pid_arg), "pid:%d", (int)a);
	snprintf(out, sizeof(out), SOCK_DIR "/saved.%d", (int)getpid());
	assert_int_equal(profctl_timed(report).rc, 0);
	assert_int_equal(profctl_timed(save).rc, 0);
	assert_int_equal(profctl_timed(diff).rc, 0);
	assert_int_equal(as_uid(uid_a, calls_it, NULL), 1);
	unlink(out);
	baselines_gone(a);
	end_proc(a);
	close(fd);
}

/*
 * B takes the names of root's and A's resets of A's process first (a
 * directory, a file): both resets hold, under another name their reports
 * find, even once B's are gone; clean removes them with the process's
 * segment.
 */
static void test_squatted_reset(void **state)
{
	struct plant pr, pa;
	int fd, n;
	pid_t a;

	(void)state;
	a = planted_for(&pr, 'd', &pa, 'f', &fd);
	assert_int_equal(calls_it(NULL), 1);
	assert_int_equal(reset_it(NULL), 0);
	n = calls_it(NULL);
	assert_true(n == 0 || n == -1);
	assert_int_equal(as_uid(uid_a, calls_it, NULL), 1);
	assert_int_equal(as_uid(uid_a, reset_it, NULL), 0);
	n = as_uid(uid_a, calls_it, NULL);
	assert_true(n == 0 || n == -1);
	/* B's names gone: the resets are still found */
	assert_int_equal(as_uid(uid_b, unplant, &pr), 0);
	assert_int_equal(as_uid(uid_b, unplant, &pa), 0);
	n = calls_it(NULL);
	assert_true(n == 0 || n == -1);
	n = as_uid(uid_a, calls_it, NULL);
	assert_true(n == 0 || n == -1);
	/* the process gone, clean removes the resets' other names too */
	end_proc(a);
	{
		char p[16], pat[64];
		const char *clean[] = { "clean", "--pid", p, NULL };
		glob_t g;

		snprintf(p, sizeof(p), "%d", (int)a);
		assert_int_equal(profctl_timed(clean).rc, 0);
		snprintf(pat, sizeof(pat), "/dev/shm/profctl.*.%d.*.alt.*", (int)a);
		assert_int_equal(glob(pat, 0, NULL, &g), GLOB_NOMATCH);
	}
	baselines_gone(a);
	close(fd);
}

/* what path holds, up to 63 bytes */
static void slurp(const char *path, char *buf)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, 63);

	buf[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
}

/*
 * In a sticky directory, B leaves symlinks to root's 0600 file at the
 * names root's report -o, trace -o and save -o are to write: none is
 * followed (the file stays as it was; fs.protected_symlinks is 0 here or
 * not), and a FIFO of B's is not written to; nor is a symlink of B's in
 * B's own directory followed.
 */
static void test_planted_output(void **state)
{
	static const char *const verbs[] = { "report", "trace", "save" };
	const char *dir = SOCK_DIR "/sticky", *victim = SOCK_DIR "/victim";
	struct plant l = { .kind = 'l', .target = SOCK_DIR "/victim" };
	char p[16], buf[64];
	const char *args[] = { NULL, "--pid", p, "-o", l.path, NULL };
	size_t i;
	int fd;
	pid_t a;

	(void)state;
	fd = start_profd(0, NULL);
	a = profiled(uid_a, NULL, 0);
	assert_true(wait_followed(fd, a));
	snprintf(p, sizeof(p), "%d", (int)a);
	mkdir(dir, 0700);
	assert_int_equal(chmod(dir, 01777), 0);
	close(fd);
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(write(fd, "secret\n", 7), 7);
	close(fd);
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		snprintf(l.path, sizeof(l.path), "%s/%s.out", dir, verbs[i]);
		/* a run that failed here left it */
		unlink(l.path);
		l.kind = 'l';
		assert_int_equal(as_uid(uid_b, plant, &l), 0);
		args[0] = verbs[i];
		profctl_timed(args);
		slurp(victim, buf);
		assert_string_equal(buf, "secret\n");
		unlink(l.path);
		/* a FIFO of B's: refused (exit 1), not waited on (until killed) */
		l.kind = 'p';
		assert_int_equal(as_uid(uid_b, plant, &l), 0);
		assert_int_equal(profctl_timed(args).rc, 1);
		unlink(l.path);
	}
	/* nor in a directory of B's own (not sticky: the kernel follows it) */
	snprintf(l.path, sizeof(l.path), SOCK_DIR "/of-b");
	mkdir(l.path, 0755);
	assert_int_equal(chown(l.path, uid_b, uid_b), 0);
	strcat(l.path, "/report.out");
	unlink(l.path);
	l.kind = 'l';
	assert_int_equal(as_uid(uid_b, plant, &l), 0);
	args[0] = "report";
	profctl_timed(args);
	slurp(victim, buf);
	assert_string_equal(buf, "secret\n");
	unlink(l.path);
	rmdir(SOCK_DIR "/of-b");
	unlink(victim);
	rmdir(dir);
	end_proc(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_slot_quota, teardown),
		cmocka_unit_test_teardown(test_conn_quota, teardown),
		cmocka_unit_test_teardown(test_list_hung_profd, teardown),
		cmocka_unit_test_teardown(test_emfile, teardown),
		cmocka_unit_test_teardown(test_hard_links, teardown),
		cmocka_unit_test_teardown(test_proc_quota, teardown),
		cmocka_unit_test_teardown(test_storm, teardown),
		cmocka_unit_test_teardown(test_storm_uids, teardown),
		cmocka_unit_test_teardown(test_conn_fair, teardown),
		cmocka_unit_test_teardown(test_hostile_asks, teardown),
		cmocka_unit_test_teardown(test_kept_quota, teardown),
		cmocka_unit_test_teardown(test_warn_rate, teardown),
		cmocka_unit_test_teardown(test_pid_reuse, teardown),
		cmocka_unit_test_teardown(test_attach_on_demand, teardown),
		cmocka_unit_test_teardown(test_least_privilege, teardown),
		cmocka_unit_test_teardown(test_profd_group, teardown),
		cmocka_unit_test_teardown(test_planted_baseline, teardown),
		cmocka_unit_test_teardown(test_squatted_reset, teardown),
		cmocka_unit_test_teardown(test_planted_output, teardown),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, setup, teardown_all);
}
