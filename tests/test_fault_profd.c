// SPDX-License-Identifier: MIT
/*
 * test_fault_profd.c - root: profd when what it asks of the kernel fails
 * (tests/fault_shim.c, preloaded into it, fails the calls named in
 * PROF_FAULT): a BPF object that does not open, size, load or make its
 * record array runs without kernel assistance and says why; a sampler that
 * does not load or gets no perf events leaves the scheduler's program on;
 * a uid's record array not made or the program not attached at the first
 * registration fails it alone; a memfd refused fails that answer alone;
 * out of fds (accept), a peer without credentials: that connection is
 * closed, the next served.  And
 * what a client sends wrong (a mode, a pid, a padding, an answer as a
 * request), systemd's notification; a socket path too long, in a directory
 * that cannot be made, already a file, relative (with a soft fd limit
 * below the hard one: raised).  make coverage showed none of these paths
 * run.
 */
#include "profd_fixture.h"

static char log_path[64];

static int teardown(void **state)
{
	(void)state;
	fixture_teardown();
	if (log_path[0])
		unlink(log_path);
	log_path[0] = 0;
	return 0;
}

static const char *shim_path(void)
{
	static char path[4096];

	return sibling_bin("tests/libfault.so", path, sizeof(path));
}

/* what profd's log holds so far (the first len - 1 bytes) */
static void log_text(char *buf, size_t len)
{
	int fd = open(log_path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
}

/* profd with the calls of spec failing (NULL: none), its log to a file */
static int start_faulty(const char *spec, const char *const *extra)
{
	int fd, saved, logfd;

	if (geteuid() != 0) {
		printf("skip: not root\n");
		skip();
	}
	snprintf(log_path, sizeof(log_path), "/tmp/profd-fault.%d.log", (int)getpid());
	logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(logfd >= 0);
	saved = dup(2);
	dup2(logfd, 2);
	close(logfd);
	if (spec) {
		setenv("LD_PRELOAD", shim_path(), 1);
		setenv("PROF_FAULT", spec, 1);
	}
	fd = start_profd_opts(extra);
	unsetenv("LD_PRELOAD");
	unsetenv("PROF_FAULT");
	dup2(saved, 2);
	close(saved);
	if (fd < 0) {
		char text[4096];

		log_text(text, sizeof(text));
		fail_msg("profd with PROF_FAULT=%s did not start: %s", spec ? spec : "", text);
	}
	return fd;
}

/* whether profd's log says what within a few seconds */
static bool log_says(const char *what)
{
	__u64 end = now_ns() + 10000000000ull;
	char buf[16384];

	do {
		log_text(buf, sizeof(buf));
		if (strstr(buf, what))
			return true;
		usleep(10000);
	} while (now_ns() < end);
	printf("profd's log:\n%s\n", buf);
	return false;
}

/* a connection whose status profd answers */
static int status_fd(struct profd_status *st)
{
	int fd = profd_connect(sock_path);

	assert_true(fd >= 0);
	assert_int_equal(profd_status(fd, st), 0);
	return fd;
}

/* profd runs without kernel assistance, saying why (status, log, sampler) */
static void check_no_bpf(int fd, const char *why)
{
	struct profd_samples_rep rep;
	struct profd_status st;
	size_t len;
	char *text;

	assert_int_equal(profd_status(fd, &st), 0);
	assert_false(st.bpf_on);
	if (!strstr(st.bpf_why, why))
		fail_msg("bpf_why '%s', not '%s'", st.bpf_why, why);
	assert_true(log_says("running without kernel assistance"));
	assert_int_equal(profd_samples(fd, 0, &text, &len, &rep), 0);
	free(text);
	assert_non_null(strstr(rep.why, "without kernel assistance"));
	assert_non_null(strstr(rep.why, why));
}

/* a fault (spec of start_faulty) and what profd says of it */
struct fault {
	const char *spec, *says;
};

static const struct fault bpf_open = {
	"bpf_object__open_skeleton#1", "failed to open the BPF object: Cannot allocate memory"
};
static const struct fault bpf_record_array = {
	"bpf_map_create#1", "failed to make a record array: Cannot allocate memory"
};
static const struct fault bpf_size = {
	"bpf_map__set_max_entries#2", "failed to size the maps: Device or resource busy"
};
static const struct fault bpf_load = {
	"bpf_object__load_skeleton#1", "failed to load the BPF program: Operation not permitted"
};

/* kernel assistance fails to start as the row says: profd runs without */
static void test_bpf_fails(void **state)
{
	const struct fault *f = *state;
	int fd = start_faulty(f->spec, NULL);

	check_no_bpf(fd, f->says);
	close(fd);
}

/* profd started with the sampler's fault spec: its sampler's state, as
 * profctl status asks it; the test skipped without kernel assistance */
static struct profd_samples_rep sampler_faulty(const char *spec)
{
	int fd = start_faulty(spec, NULL);
	struct profd_samples_rep rep;
	struct profd_status st;
	size_t len;
	char *text;

	assert_int_equal(profd_status(fd, &st), 0);
	assert_int_equal(profd_samples(fd, 0, &text, &len, &rep), 0);
	free(text);
	close(fd);
	if (!st.bpf_on)
		skip();
	return rep;
}

/* the sampler's object does not open: the scheduler's program stays */
static void test_sampler_open_fails(void **state)
{
	struct profd_samples_rep rep = sampler_faulty("bpf_object__open_skeleton#2");

	(void)state;
	assert_int_equal(rep.hz, 0);
	assert_non_null(strstr(rep.why, "profd failed to load its sampler"));
	assert_true(log_says("sample: profd failed to load its sampler"));
}

/* the sampler with its unmap tracer does not load: without it, it does */
static void test_sampler_retry(void **state)
{
	struct profd_samples_rep rep = sampler_faulty("bpf_object__load_skeleton#2");

	(void)state;
	assert_string_equal(rep.why, "");
	assert_true(rep.hz > 0);
	assert_true(log_says("sample: no maps generations"));
}

/* no perf event on any CPU: sampling is off, saying why */
static void test_perf_refused(void **state)
{
	struct profd_samples_rep rep = sampler_faulty("sys_perf_event_open");

	(void)state;
	assert_non_null(strstr(rep.why, "failed to open cpu-clock perf events: Permission denied"));
}

/*
 * What a registration needs fails once (spec): profd says why, and the
 * registration of a process after it is served (nothing of the failed
 * one is left half made)
 */
static void registration_fails_once(const char *spec, const char *why)
{
	int fd = start_faulty(spec, NULL);
	struct profd_status st;
	struct child a, b;

	assert_int_equal(profd_status(fd, &st), 0);
	if (!st.bpf_on)
		skip();
	a = spawn(stay_zone, 0, 1);
	assert_true(child_wait(&a) != 0);
	assert_true(log_says(why));
	b = spawn(stay_zone, 0, 10);
	assert_int_equal(child_wait(&b), 'R');
	child_end(&b);
	child_end(&a);
	close(fd);
}

/* the first uid's record array is not made (profd's template was the 1st) */
static void test_uid_array_fails(void **state)
{
	(void)state;
	registration_fails_once("bpf_map_create.prof_uid_recs#2",
				"bpf: failed to make uid 0's record array: Cannot allocate memory");
}

/* the scheduler's program does not attach at the first registration (the
 * sampler's unmap tracer was the 1st attach) */
static void test_attach_fails(void **state)
{
	(void)state;
	registration_fails_once("bpf_program__attach#2",
				"bpf: failed to attach to sched_switch: Operation not permitted");
}

/* a sized request and profd's error for it (0: not an error) */
static int raw_req(int fd, __u32 type, const void *p, __u32 len)
{
	struct {
		struct profd_hdr h;
		char p[256];
	} q;
	struct {
		struct profd_hdr h;
		struct profd_error e;
	} a;
	ssize_t n;

	q.h.type = type;
	q.h.len = (__u32)sizeof(q.h) + len;
	memcpy(q.p, p, len);
	assert_int_equal(send(fd, &q, q.h.len, MSG_NOSIGNAL), (ssize_t)q.h.len);
	memset(&a, 0, sizeof(a));
	n = recv(fd, &a, sizeof(a), 0);
	assert_true(n >= (ssize_t)sizeof(a.h));
	return a.h.type == PROFD_MSG_ERROR ? a.e.err : 0;
}

/* memfds refused: each answer in one fails with the errno, profd goes on */
static void test_memfd_refused(void **state)
{
	int fd = start_faulty("memfd_create", NULL);
	struct profd_slices_thread *t = NULL;
	struct prof_snapshot *s = NULL;
	struct profd_samples_rep rep;
	struct profd_status st;
	struct child c;
	__u64 end;
	size_t len;
	char *text;
	__u32 n;
	int err;

	(void)state;
	assert_int_equal(profd_status(fd, &st), 0);
	if (!st.bpf_on)
		skip();
	c = spawn_followed(fd, stay_zone);
	assert_int_equal(profd_samples(fd, 0, &text, &len, &rep), -EMFILE);
	/* the image of a window is written into a memfd (a live one is not) */
	end = now_ns() + 10000000000ull;
	do {
		err = profd_snapshot(fd, c.pid, PROFD_SNAP_LAST, 1, &s);
		prof_snapshot__destroy(s);
		s = NULL;
	} while (err != -EMFILE && now_ns() < end && !usleep(20000));
	assert_int_equal(err, -EMFILE);
	assert_true(log_says("ctl: failed to answer a snapshot of pid"));
	assert_int_equal(profd_slices(fd, c.pid, &t, &n), -EMFILE);
	free(t);
	assert_int_equal(profd_status(fd, &st), 0);
	close(fd);
	child_end(&c);
}

/*
 * A connection profd fails to take as the row says: shed, the next
 * served.  Out of fds at accept (start_faulty's first connection is the
 * one shed: it connects again); a peer whose credentials profd cannot get.
 */
static const struct fault accept_no_fds = {
	"accept4#1", "ctl: out of fds (Too many open files) with 0 connections"
};
static const struct fault no_peer_creds = {
	"getsockopt#1", "ctl: failed to get the peer's credentials"
};

static void test_conn_fails(void **state)
{
	static const char *const no_bpf[] = { "--no-bpf", NULL };
	const struct fault *f = *state;
	int fd = start_faulty(f->spec, no_bpf), fd2;
	struct profd_status st;

	assert_int_equal(profd_status(fd, &st), 0);
	assert_true(log_says(f->says));
	fd2 = status_fd(&st);
	close(fd2);
	close(fd);
}

/* requests wrong in their fields are refused, each with its errno */
static void test_bad_requests(void **state)
{
	static const char *const no_bpf[] = { "--no-bpf", NULL };
	int fd = start_faulty(NULL, no_bpf);
	struct profd_snapshot_req snap = { .pid = (__u32)getpid(), .mode = PROFD_SNAP_LAST + 1 };
	struct profd_pid_req pr = { .pid = (__u32)getpid(), .__pad = 1 };
	struct profd_status st;

	(void)state;
	assert_int_equal(raw_req(fd, PROFD_MSG_SNAPSHOT_REQ, &snap, sizeof(snap)), -EINVAL);
	snap.mode = PROFD_SNAP_START;
	snap.pid = 0;
	assert_int_equal(raw_req(fd, PROFD_MSG_SNAPSHOT_REQ, &snap, sizeof(snap)), -EINVAL);
	snap.pid = 0x80000000u;
	assert_int_equal(raw_req(fd, PROFD_MSG_SNAPSHOT_REQ, &snap, sizeof(snap)), -EINVAL);
	snap.pid = (__u32)getpid();
	snap.mode = PROFD_SNAP_RESET;
	assert_int_equal(raw_req(fd, PROFD_MSG_SNAPSHOT_REQ, &snap, sizeof(snap)), -EOPNOTSUPP);
	assert_int_equal(raw_req(fd, PROFD_MSG_SAMPLES_REQ, &pr, sizeof(pr)), -EINVAL);
	assert_int_equal(raw_req(fd, PROFD_MSG_SLICES_REQ, &pr, sizeof(pr)), -EINVAL);
	/* a pid no process has: not one the peer may read */
	pr.__pad = 0;
	pr.pid = 0x7fffffff;
	assert_int_equal(raw_req(fd, PROFD_MSG_SLICES_REQ, &pr, sizeof(pr)), -ESRCH);
	/* well formed, but an answer: not a request */
	assert_int_equal(raw_req(fd, PROFD_MSG_OK, NULL, 0), -EBADMSG);
	close(fd);
	fd = status_fd(&st);
	close(fd);
}

/* systemd's notification, to a path and to an abstract socket */
static void test_notify(void **state)
{
	static const char *const no_bpf[] = { "--no-bpf", NULL };
	static const char *const names[] = { "/tmp/profd-fault-notify.%d",
					     "@profd-fault-notify.%d" };
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct pollfd p = { .events = POLLIN };
		char name[64], msg[64] = { 0 };
		socklen_t len;
		int fd;

		snprintf(name, sizeof(name), names[i], (int)getpid());
		strcpy(sa.sun_path, name);
		if (name[0] == '@')
			sa.sun_path[0] = 0;
		else
			unlink(name);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
		p.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		assert_true(p.fd >= 0);
		assert_int_equal(bind(p.fd, (struct sockaddr *)&sa, len), 0);
		setenv("NOTIFY_SOCKET", name, 1);
		fd = start_faulty(NULL, no_bpf);
		unsetenv("NOTIFY_SOCKET");
		assert_int_equal(poll(&p, 1, 10000), 1);
		assert_true(recv(p.fd, msg, sizeof(msg) - 1, 0) > 0);
		assert_non_null(strstr(msg, "READY=1"));
		close(p.fd);
		if (name[0] != '@')
			unlink(name);
		close(fd);
		stop_profd();
	}
}

/*
 * profd (no BPF) on the socket path, its log to log_path: its exit status,
 * or fails if it still runs after a few seconds (it took the path)
 */
static int profd_refuses(const char *path)
{
	const char *argv[] = { profd_bin(), "--no-bpf", "--socket", path, NULL };
	__u64 end = now_ns() + 10000000000ull;
	int st = 0, logfd;
	pid_t p, got;

	if (geteuid() != 0)
		skip();
	snprintf(log_path, sizeof(log_path), "/tmp/profd-fault.%d.log", (int)getpid());
	logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(logfd >= 0);
	p = fork();
	if (p == 0) {
		dup2(logfd, 2);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(logfd);
	while ((got = waitpid(p, &st, WNOHANG)) == 0 && now_ns() < end)
		usleep(10000);
	if (got == 0) {
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
		unlink(path);
		fail_msg("profd runs on the socket path %s", path);
	}
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/*
 * A socket path of as many bytes as a unix address holds, no room left for
 * its NUL: profd says so and exits 1 (it neither runs nor writes past it)
 */
static void test_socket_too_long(void **state)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];

	(void)state;
	memset(path, 'x', sizeof(path) - 1);
	memcpy(path, "/tmp/", 5);
	path[sizeof(path) - 1] = 0;
	assert_int_equal(profd_refuses(path), 1);
	assert_true(log_says("failed to open the control socket /tmp/xxx"));
	assert_true(log_says("File name too long"));
}

/* a socket path whose directory cannot be made, or where a file is: refused */
static void test_socket_path_taken(void **state)
{
	char path[64];
	int fd;

	(void)state;
	assert_int_equal(profd_refuses("/proc/no-such-dir/profd.sock"), 1);
	assert_true(log_says("failed to open the control socket /proc/no-such-dir/profd.sock: "
			     "No such file or directory"));
	snprintf(path, sizeof(path), "/tmp/profd-fault.%d.file", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(profd_refuses(path), 1);
	assert_true(log_says("File exists"));
	/* the file is still there, not replaced by a socket */
	{
		struct stat st;

		assert_int_equal(stat(path, &st), 0);
		assert_true(S_ISREG(st.st_mode));
	}
	unlink(path);
	strcat(path, ".lock");
	unlink(path);
}

/*
 * A relative socket path (from profd's directory), with a soft fd limit
 * below the hard one: profd serves there, raises its soft limit, and
 * removes the socket at exit
 */
static void test_relative_socket(void **state)
{
	char dir[64], cwd[4096], lim[256], sock[128];
	struct rlimit old, low;
	struct profd_status st;
	FILE *f;
	int fd;

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(dir, sizeof(dir), SOCK_DIR "/rel.%d", (int)getpid());
	mkdir(SOCK_DIR, 0755);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 512;
	if (old.rlim_max <= 512)
		skip();
	/* profd inherits both (start_profd_opts runs it from here) */
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	profd_pid = fork();
	if (profd_pid == 0) {
		const char *argv[] = { profd_bin(), "--no-bpf", "--socket", "sub/profd.sock",
				       NULL };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(chdir(cwd), 0);
	snprintf(sock, sizeof(sock), "%s/sub/profd.sock", dir);
	{
		__u64 end = now_ns() + 10000000000ull;

		while ((fd = profd_connect(sock)) < 0 && now_ns() < end)
			usleep(20000);
	}
	assert_true(fd >= 0);
	assert_int_equal(profd_status(fd, &st), 0);
	snprintf(lim, sizeof(lim), "/proc/%d/limits", (int)profd_pid);
	f = fopen(lim, "r");
	assert_non_null(f);
	while (fgets(lim, sizeof(lim), f) && strncmp(lim, "Max open files", 14))
		;
	fclose(f);
	{
		unsigned long soft = 0, hard = 0;

		assert_int_equal(sscanf(lim + 14, "%lu %lu", &soft, &hard), 2);
		assert_int_equal(soft, hard);
		assert_true(soft > 512);
	}
	close(fd);
	stop_profd();
	assert_int_equal(access(sock, F_OK), -1);
	strcat(sock, ".lock");
	unlink(sock);
	snprintf(sock, sizeof(sock), "%s/sub", dir);
	rmdir(sock);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_row("test_bpf_open_fails", test_bpf_fails, &bpf_open, teardown),
		test_row("test_bpf_record_array_fails", test_bpf_fails, &bpf_record_array, teardown),
		test_row("test_bpf_size_fails", test_bpf_fails, &bpf_size, teardown),
		test_row("test_bpf_load_fails", test_bpf_fails, &bpf_load, teardown),
		test_row("test_accept_out_of_fds", test_conn_fails, &accept_no_fds, teardown),
		test_row("test_no_peer_creds", test_conn_fails, &no_peer_creds, teardown),
		cmocka_unit_test_teardown(test_sampler_open_fails, teardown),
		cmocka_unit_test_teardown(test_sampler_retry, teardown),
		cmocka_unit_test_teardown(test_perf_refused, teardown),
		cmocka_unit_test_teardown(test_memfd_refused, teardown),
		cmocka_unit_test_teardown(test_uid_array_fails, teardown),
		cmocka_unit_test_teardown(test_attach_fails, teardown),
		cmocka_unit_test_teardown(test_bad_requests, teardown),
		cmocka_unit_test_teardown(test_notify, teardown),
		cmocka_unit_test_teardown(test_socket_too_long, teardown),
		cmocka_unit_test_teardown(test_socket_path_taken, teardown),
		cmocka_unit_test_teardown(test_relative_socket, teardown),
	};

	return test_run_group(tests, NULL, NULL);
}
