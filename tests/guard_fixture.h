/* SPDX-License-Identifier: MIT */
/*
 * guard_fixture.h - what test_guard.c and test_guard_asks.c share: the
 * two unprivileged test users (made with useradd by setup, removed by
 * teardown_all), profd on a private socket with small quotas, programs run
 * as a user, a profiled process of a user that stays (profiled_as), what
 * profd follows and logs, profctl timed, and the teardown after each test.
 */
#ifndef PROF_TEST_GUARD_FIXTURE_H
#define PROF_TEST_GUARD_FIXTURE_H

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
#include <sys/file.h>
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
#include "root_fixture.h"
#include "child.h"

#define SOCK_DIR "/tmp/profd-guard"
#define USER_A "profdtA"
#define USER_B "profdtB"

static uid_t uid_a, uid_b;
static bool made_users, made_group;
static char sock_path[128], log_path[128];
static pid_t profd_pid = -1;
static uid_t profd_uid; /* run profd as this uid with three capabilities (0: root) */

static inline __u64 now_ns(void)
{
	return test_now_ns();
}

static inline const char *sibling(const char *name)
{
	static char path[2][4096];
	static int k;

	return test_bin(name, path[k++ & 1], sizeof(path[0]));
}

static inline uid_t user_uid(const char *name)
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

/* two users of our own, gone again at the end.  One such program at a time
 * on the machine (mutate runs copies side by side): another's userdel or
 * its changes to the profd group's members would pull them from under us,
 * and a useradd beside another fails on the locked /etc/passwd.  The lock
 * goes with the process, however it ends. */
static inline int setup(void **state)
{
	int lk;

	(void)state;
	if (geteuid() != 0)
		return 0;
	lk = open("/run/profd-test-guard.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lk < 0 || flock(lk, LOCK_EX)) {
		printf("skip: no lock on /run/profd-test-guard.lock: %s\n", strerror(errno));
		return 0;
	}
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

static inline int teardown_all(void **state)
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

static inline void stop_profd(void)
{
	if (profd_pid > 0) {
		kill(profd_pid, SIGTERM);
		waitpid(profd_pid, NULL, 0);
	}
	profd_pid = -1;
}

/* pass or fail: no profd, no profiled process left behind */
static inline int teardown(void **state)
{
	(void)state;
	kids_end(NULL);
	stop_profd();
	unlink(log_path);
	profd_uid = 0;
	return 0;
}

/* profd on a private socket, its log in log_path; nofile: RLIMIT_NOFILE
 * (0: as ours); extra options NULL-terminated.  A connected fd. */
static inline int start_profd(rlim_t nofile, const char *const *extra)
{
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
	fd = profd_await(sock_path);
	need_bpf(fd, stop_profd);
	return fd;
}

/* one request packet, raw */
static inline int send_pkt(int fd, __u32 type, const void *pl, size_t plen)
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
static inline int recv_pkt(int fd, int ms, struct profd_registered *reg)
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

static inline int do_register(int fd, pid_t tid)
{
	struct profd_register r = { (__u32)tid, 0 };
	int err = send_pkt(fd, PROFD_MSG_REGISTER, &r, sizeof(r));

	return err ? err : recv_pkt(fd, 2000, NULL);
}

/* in a child: uid from now on, killed with its parent */
static inline void become(uid_t uid)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		_exit(2);
	/* a change of credentials cleared it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* fork a child that becomes uid and runs fn(arg), its result over a pipe */
static inline int as_uid(uid_t uid, int (*fn)(void *), void *arg)
{
	struct child c;
	int r = -EIO;

	if (child_start(&c) == 0) {
		become(uid);
		r = fn(arg);
		if (write(c.wr, &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	if (read(c.rd, &r, sizeof(r)) != sizeof(r))
		r = -EIO;
	child_end(&c);
	return r;
}

/*
 * A child that becomes uid and runs fn(ready, arg): fn writes an int on
 * ready when it has done what it holds, then waits to be killed (end_proc).
 * *said gets that int (-ETIMEDOUT if none came within a minute).
 */
static inline pid_t as_uid_bg(uid_t uid, int (*fn)(int, void *), void *arg, int *said)
{
	struct pollfd p;
	struct child c;

	*said = -ETIMEDOUT;
	if (child_start(&c) == 0) {
		become(uid);
		_exit(fn(c.wr, arg) ? 1 : 0);
	}
	kids_add(c.pid);
	p = (struct pollfd){ .fd = c.rd, .events = POLLIN };
	if (poll(&p, 1, 60000) != 1 || read(c.rd, said, sizeof(*said)) != sizeof(*said))
		*said = -ETIMEDOUT;
	return child_leave(&c);
}

struct timed {
	int rc;
	__u64 ns;
};

/* profctl with args as the current user; its exit status and time */
static inline struct timed profctl_timed(const char *const *args)
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

static inline int status_fd(int fd)
{
	struct profd_status st;

	return profd_status(fd, &st);
}

static inline int status_once(void *arg)
{
	int fd = profd_connect(sock_path), r;

	(void)arg;
	if (fd < 0)
		return fd;
	r = status_fd(fd);
	close(fd);
	return r;
}

static inline void zone_once(void)
{
	PROF_USDT(guard_zone);
}

/* one zone, with profd or not (*arg), then stay */
static inline int stay_profiled(int ready, void *arg)
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
static inline pid_t profiled_as(uid_t uid, char *seg, size_t len, bool daemon)
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
static inline pid_t profiled(uid_t uid, char *seg, size_t len)
{
	return profiled_as(uid, seg, len, false);
}

static inline void end_proc(pid_t k)
{
	size_t i;

	kill(k, SIGKILL);
	waitpid(k, NULL, 0);
	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++)
		if (kids[i] == k)
			kids[i] = 0;
}

static inline bool followed(int fd, pid_t pid)
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

static inline bool wait_followed(int fd, pid_t pid)
{
	__u64 end = now_ns() + 5000000000ull;

	while (now_ns() < end) {
		if (followed(fd, pid))
			return true;
		usleep(20000);
	}
	return false;
}

static inline long log_lines(const char *what)
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

#endif /* PROF_TEST_GUARD_FIXTURE_H */
