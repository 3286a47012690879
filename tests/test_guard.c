// SPDX-License-Identifier: MIT
/*
 * test_guard.c - root tier: profd shared by users who do not trust each
 * other.  Two unprivileged test users (made here with useradd, removed at
 * the end) flood what profd shares: kernel slots, connections, fds, hard
 * links, malformed packets; one reuses a dead client's pid.  The other user
 * and root must still be served, and each user keep what is theirs.
 * Here the quotas: kernel slots, connections, fds, hard links, a storm of
 * processes; hostile requests, pid reuse, least privilege and profctl's
 * files are test_guard_asks.c.  Fixtures: guard_fixture.h.
 */
#include "guard_fixture.h"
#include "shm_private.h"

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


/*
 * User A opens 40 connections and leaves them idle: 8 are served (its
 * share), the rest refused; B and root are served meanwhile, and A's idle
 * ones are closed after --idle.
 */
static void test_conn_quota(void **state)
{
	const char *opts[] = { "--uid-conns", "8", "--idle", "1", NULL };
	const char *list[] = { "list", NULL };
	int fd, n = 40, r = -1;
	struct child k;
	struct timed t;
	__u64 end;

	(void)state;
	fd = start_profd(0, opts);
	if (child_start(&k) == 0) {
		r = as_uid(uid_a, flood_conns, &n);
		_exit(write(k.wr, &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	/* while A's are open (its share, and one more refused): B, and
	 * root's profctl list, answered */
	for (end = now_ns() + 10000000000ull;
	     log_lines("connections; refusing another") < 1 && now_ns() < end; usleep(20000))
		;
	assert_true(log_lines("connections; refusing another") >= 1);
	assert_int_equal(as_uid(uid_b, status_once, NULL), 0);
	t = profctl_timed(list);
	assert_int_equal(t.rc, 0);
	/* and answered by profd, not read directly after the client's wait */
	{
		struct profd_proc *pp = NULL;
		size_t np = 0;
		int rfd = profd_connect(sock_path);

		assert_true(rfd >= 0);
		assert_int_equal(profd_list(rfd, &pp, &np), 0);
		free(pp);
		close(rfd);
	}
	assert_int_equal(read(k.rd, &r, sizeof(r)), sizeof(r));
	child_end(&k);
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
	printf("profctl list took %.2f s beside a stopped profd\n", t.ns / 1e9);
	/* after the client's quick wait (a second), not its long one (ten): 5 s
	 * parts them with seconds to spare on a loaded machine */
	assert_true(t.ns < 5000000000ull);
	close(fd);
}

/* the CPU time of process pid so far, ns */
static __u64 proc_cpu_ns(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) || clock_gettime(clk, &ts))
		return 0;
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* how many times process pid's main thread went to sleep (blocked) so far */
static __u64 sleeps(pid_t pid)
{
	unsigned long long n = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/*
 * Out of fds (RLIMIT_NOFILE 48): 60 root connections pending.  profd
 * sheds what it cannot take and does not spin; once they close, a status
 * is answered within a second.
 */
static void test_emfile(void **state)
{
	int fd, fds[60], i;
	__u64 c0, c1, n0, n1, t0, t1;

	(void)state;
	fd = start_profd(48, NULL);
	for (i = 0; i < 60; i++)
		fds[i] = profd_connect(sock_path);
	/* profd came to its limit: it refused one */
	for (t0 = now_ns() + 10000000000ull; log_lines("refusing") < 1 && now_ns() < t0;
	     usleep(20000))
		;
	assert_true(log_lines("refusing") >= 1);
	/*
	 * profd does not spin: over a second it goes to sleep between bits
	 * of work of under 10 ms of CPU each on average (a pass is under 1 ms
	 * here), where a busy loop never sleeps.  Neither figure depends on
	 * how busy the CPUs are, unlike its share of them.
	 */
	c0 = proc_cpu_ns(profd_pid);
	n0 = sleeps(profd_pid);
	for (t0 = t1 = now_ns(); t1 - t0 < 1000000000ull; t1 = now_ns())
		usleep(20000);
	c1 = proc_cpu_ns(profd_pid);
	n1 = sleeps(profd_pid);
	printf("profd %.3f s of CPU in %.3f s, asleep %llu times\n", (c1 - c0) / 1e9,
	       (now_ns() - t0) / 1e9, (unsigned long long)(n1 - n0));
	assert_true(c1 - c0 < (n1 - n0 + 1) * 10000000ull);
	for (i = 0; i < 60; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(fd);
	/* answered within the client's own wait for a status (a second) */
	assert_int_equal(status_once(NULL), 0);
}

/* --- segments -------------------------------------------------------- */

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
	__u64 end;

	(void)state;
	fd = start_profd(0, opts);
	for (i = 0; i < 4; i++)
		a[i] = profiled(uid_a, NULL, 0);
	b = profiled(uid_b, NULL, 0);
	assert_true(wait_followed(fd, b));
	/* until three are followed and profd has said it holds the 4th back
	 * (a loaded machine may take a while to get to each) */
	for (end = now_ns() + 10000000000ull; now_ns() < end; usleep(20000)) {
		for (n = 0, i = 0; i < 4; i++) {
			if (followed(fd, a[i])) {
				n++;
				one = i;
			} else {
				waiting = i;
			}
		}
		if (n >= 3 && log_lines("has 3 processes followed; not following") >= 1)
			break;
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

/* profd's log says what it may follow (and what it follows); it looks
 * into no other mount namespace: a program elsewhere on the machine that
 * ends would free a place, and B be followed without the bound (as in
 * test_storm_uids) */
static const char *const storm_opts[] = { "-v", "--no-ns-scan", NULL };

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

/* the processes profd follows alive (each holds a place), or 0 */
static unsigned int followed_alive(int fd)
{
	struct profd_proc *p;
	size_t n, i;
	unsigned int k = 0;

	if (profd_list(fd, &p, &n))
		return 0;
	for (i = 0; i < n; i++)
		k += p[i].alive != 0;
	free(p);
	return k;
}

/* while a storm goes on (once it took every place for processes, if
 * full): B's process is followed (root's fd lists it), B's and root's
 * threads register, root's status is answered */
static void others_served(int fd, bool full)
{
	unsigned int most = max_followed(), k = 0;
	int one = 1;
	__u64 end = now_ns() + 20000000000ull;
	pid_t b;

	assert_true(most > 0);
	/* the processes alive, not the status's count: that one counts the
	 * exited ones kept too, which hold no place */
	while (full && (k = followed_alive(fd)) < most && now_ns() < end)
		usleep(50000);
	if (full && k < most)
		fail_msg("%u processes followed, %u places", k, most);
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
	fd = start_profd(128, storm_opts);
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
	int fd, procs = STORM_PROCS / 12, ready, i, err;
	pid_t k[12];

	(void)state;
	/*
	 * A /dev/shm of its own, and profd not looking into the host's: the
	 * storm's processes are all it follows, so no place frees before B
	 * comes (one did when another program on the machine ended, and B
	 * was followed there without an eviction).  B's process inherits it.
	 */
	if (geteuid() == 0 && (err = test_shm_private())) {
		printf("skip: no private /dev/shm: %s\n", strerror(-err));
		skip();
	}
	fd = start_profd(128, (const char *const[]){ "-v", "--no-ns-scan", NULL });
	for (i = 0; i < 12; i++) {
		k[i] = as_uid_bg(70001 + (uid_t)i, storm, &procs, &ready);
		assert_int_equal(ready, procs);
	}
	others_served(fd, true);
	for (i = 0; i < 12; i++)
		end_proc(k[i]);
	close(fd);
}

/* an answer that comes after the client stopped waiting is never read as
 * the next question's: the connection is given up, and a new one served */
static void test_late_answer(void **state)
{
	struct profd_status st;
	struct profd_proc *pp = NULL;
	size_t np = 0;
	int fd;

	(void)state;
	fd = start_profd(0, NULL);
	kill(profd_pid, SIGSTOP);
	/* the quick wait (a second) ends; profd answers once it runs again */
	assert_int_equal(profd_status(fd, &st), -ETIMEDOUT);
	kill(profd_pid, SIGCONT);
	/* a status answer waiting (or coming) is not taken for the next
	 * question's: neither another status nor a list */
	assert_true(profd_status(fd, &st) < 0);
	assert_true(profd_list(fd, &pp, &np) < 0);
	free(pp);
	close(fd);
	/* within five seconds: profd may be slow to run again on a busy machine */
	assert_true(served(0, status_once, NULL, 0));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_slot_quota, teardown),
		cmocka_unit_test_teardown(test_conn_quota, teardown),
		cmocka_unit_test_teardown(test_list_hung_profd, teardown),
		cmocka_unit_test_teardown(test_late_answer, teardown),
		cmocka_unit_test_teardown(test_emfile, teardown),
		cmocka_unit_test_teardown(test_hard_links, teardown),
		cmocka_unit_test_teardown(test_proc_quota, teardown),
		cmocka_unit_test_teardown(test_storm, teardown),
		cmocka_unit_test_teardown(test_storm_uids, teardown),
		cmocka_unit_test_teardown(test_conn_fair, teardown),
	};

	return test_run_group(tests, setup, teardown_all);
}
