// SPDX-License-Identifier: MIT
/*
 * test_guard_asks.c - root tier: profd shared by users who do not trust
 * each other (guard_fixture.h), what they ask of it: hostile handovers and
 * requests, kept data per user, the warning rate, a dead client's pid
 * reused, profd's program on sched_switch only while a thread is
 * registered, least privilege and the profd group, and the names another
 * user makes first for profctl's files.
 */
#include "guard_fixture.h"

#include <sys/file.h>

/* --- hostile handovers and requests ---------------------------------- */

/* one packet carrying nfds copies of nsfd: a PIDNS, or a STATUS_REQ */
static int send_fds(int fd, int nsfd, int nfds, bool status)
{
	struct {
		struct profd_hdr h;
		struct profd_pidns p;
	} req = { { PROFD_MSG_PIDNS, sizeof(req) }, { 0, 0 } };
	size_t len = status ? sizeof(req.h) : sizeof(req);

	if (status)
		req.h = (struct profd_hdr){ PROFD_MSG_STATUS_REQ, sizeof(req.h) };
	return test_send_fds(fd, &req, len, nsfd, nfds) == (ssize_t)len ? 0 : -errno;
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
	/*
	 * two fds with a handover, an fd with a status: dropped.  Eight times,
	 * so that a second fd kept open shows as eight more, beyond any fd
	 * profd holds for a moment while the count is taken.
	 */
	for (int i = 0; i < 8; i++) {
		fd = profd_connect(sock_path);
		if (fd < 0 || send_fds(fd, p[0], 2, false) || recv_pkt(fd, 2000, NULL) != -EBADMSG ||
		    recv_pkt(fd, 2000, NULL) != -ECONNRESET)
			return 10;
		close(fd);
	}
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
	/* not equal: before may count an fd profd held only for a moment */
	assert_true(profd_fds() <= before);
	assert_int_equal(status_once(NULL), 0);
	/* B's slices come as B is scheduled: on a loaded machine, a moment later */
	for (end = now_ns() + 10000000000ull;; usleep(20000)) {
		assert_int_equal(profd_slices(fd, b, &sl, &nsl), 0);
		free(sl);
		sl = NULL;
		if (nsl >= 1 || now_ns() > end)
			break;
	}
	assert_true(nsl >= 1);
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
 * own connection, says 'r' (or 'x'), then waits for the test's end.
 */
static struct child victim(uid_t uid)
{
	struct child k;

	if (child_start(&k) == 0) {
		int fd;

		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(2);
		/* a change of credentials cleared it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = profd_connect(sock_path);
		child_say(&k, fd >= 0 && do_register(fd, getpid()) == PROFD_MSG_REGISTERED ? 'r'
											     : 'x');
		child_hear(&k);
		_exit(0);
	}
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
	int fd, attempt, r = 0, cp[2], go[2], res[2];
	pid_t p, v = -1, c = -1;
	struct child vk = { .pid = -1 };

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
		vk = victim(uid_b);
		v = vk.pid;
		if (v == p)
			break;
		child_end(&vk);
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
	assert_int_equal(child_ready(&vk), 'r');
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
	child_end(&vk);
	close(go[1]);
	close(res[0]);
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

/* a victim of uid registers, its thread's kernel record is attached, then it ends */
static void victim_attached(uid_t uid)
{
	struct child v = victim(uid);

	kids_add(v.pid);
	assert_int_equal(child_ready(&v), 'r');
	assert_true(wait_attached(true, 1.0));
	child_end(&v);
}

/*
 * No client: nothing on sched_switch.  A thread registers: attached within
 * a second.  Its process exits: detached after a second, within three.
 */
static void test_attach_on_demand(void **state)
{
	int fd;

	(void)state;
	fd = start_profd(0, NULL);
	assert_true(wait_attached(false, 0));
	victim_attached(uid_a);
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
	int fd;
	pid_t b;

	(void)state;
	profd_uid = uid_a;
	fd = start_profd(0, NULL);
	b = profiled(uid_b, NULL, 0);
	assert_true(wait_followed(fd, b));
	victim_attached(uid_b);
	end_proc(b);
	close(fd);
}

/*
 * Members of the group profd read each other's processes; a user outside
 * it reads only their own.  A member's reset is the member's own: it
 * zeroes the member's reports of the process, not its owner's.
 */
/*
 * A fresh machine has no group profd until profd is installed (make
 * setup): the test makes it, and its teardown takes it away, members and
 * all.  A lock keeps two runs at once (make mutate's copies) from taking
 * it away under each other.
 */
static int group_lock = -1;
static bool group_made;

static int group_teardown(void **state)
{
	if (group_made && system("groupdel profd") != 0)
		printf("could not delete the group profd the test made\n");
	group_made = false;
	if (group_lock >= 0)
		close(group_lock);
	group_lock = -1;
	return teardown(state);
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

static void test_profd_group(void **state)
{
	int fd, n;
	pid_t a;

	(void)state;
	group_lock = open("/run/profd-test-group.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(group_lock >= 0 && flock(group_lock, LOCK_EX) == 0);
	if (system("getent group profd >/dev/null") != 0) {
		if (system("groupadd --system profd") != 0) {
			printf("skip: no group profd, and groupadd failed\n");
			skip();
		}
		group_made = true;
	}
	fd = start_profd(0, NULL);
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
	/* the baselines they left (their $XDG_RUNTIME_DIR is not theirs) */
	baselines_gone(a);
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
		cmocka_unit_test_teardown(test_hostile_asks, teardown),
		cmocka_unit_test_teardown(test_kept_quota, teardown),
		cmocka_unit_test_teardown(test_warn_rate, teardown),
		cmocka_unit_test_teardown(test_pid_reuse, teardown),
		cmocka_unit_test_teardown(test_attach_on_demand, teardown),
		cmocka_unit_test_teardown(test_least_privilege, teardown),
		cmocka_unit_test_teardown(test_profd_group, group_teardown),
		cmocka_unit_test_teardown(test_planted_baseline, teardown),
		cmocka_unit_test_teardown(test_squatted_reset, teardown),
		cmocka_unit_test_teardown(test_planted_output, teardown),
	};

	return test_run_group(tests, setup, teardown_all);
}
