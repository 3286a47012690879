/* SPDX-License-Identifier: MIT */
/*
 * profd_private.h - what the root tests that run profctl against a
 * private profd share: that profd (beside the test binary, on a socket
 * in the test's directory, sampling every 50 ms), skipping unless root
 * with kernel assistance, and profctl run in-process with its output in
 * a file.  Include after testutil.h, client.h and profctl.h.
 */
#ifndef PROF_TEST_PROFD_PRIVATE_H
#define PROF_TEST_PROFD_PRIVATE_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include "child.h"

static inline __u64 now_ns(void)
{
	return test_now_ns();
}

/* a program beside this test (.output/tests/../NAME) */
static inline const char *test_beside(const char *name)
{
	static char path[4096];

	return test_bin(name, path, sizeof(path));
}

/*
 * profd on sock with extra options (NULL-terminated; NULL: none), its pid
 * in *pid, and the environment pointed at it (the runtime's PROF_SOCKET,
 * profctl's PROFD_SOCKET); *pid -1 if not root or profd came up without
 * kernel assistance (it is stopped then)
 */
static inline void test_profd_start_opts(const char *sock, const char *const *extra, pid_t *pid)
{
	struct profd_status st;
	__u64 end;
	int fd = -1;

	*pid = -1;
	if (geteuid() != 0)
		return;
	*pid = fork();
	if (*pid == 0) {
		/* this suite's processes only (profd_fixture.h: profd_ns_scan) */
		const char *argv[16] = { "profd", "--socket", sock, "--interval", "50",
					 "--no-ns-scan" };
		int n = 6;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (extra && *extra && n < 15)
			argv[n++] = *extra++;
		argv[n] = NULL;
		execv(test_beside("profd"), (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	setenv("PROF_SOCKET", sock, 1);
	setenv("PROFD_SOCKET", sock, 1);
	unsetenv("PROFCTL_NO_DAEMON");
	unsetenv("PROF_NO_DAEMON");
	for (end = now_ns() + 5000000000ull; now_ns() < end && fd < 0; usleep(20000))
		fd = profd_connect(sock);
	if (fd < 0 || profd_status(fd, &st) || !st.bpf_on) {
		if (fd >= 0)
			close(fd);
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
		*pid = -1;
		return;
	}
	close(fd);
}

static inline void test_profd_start(const char *sock, pid_t *pid)
{
	test_profd_start_opts(sock, NULL, pid);
}

static inline void test_profd_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* a private directory /tmp/NAME.XXXXXX (mode 0755: other users' clients
 * reach a socket in it) into dir (64 bytes); 0 or -1.  And its end */
static inline int test_dir_make(const char *name, char *dir)
{
	snprintf(dir, 64, "/tmp/%s.XXXXXX", name);
	return mkdtemp(dir) && !chmod(dir, 0755) ? 0 : -1;
}

static inline int test_dir_remove(const char *dir)
{
	return test_rm_rf(dir);
}

/*
 * A test group's private directory (test_dir_make), profd on its socket
 * (sock, 128 bytes), its pid in *pid; 0 or -1.  And its end.  The
 * directory is $XDG_RUNTIME_DIR too: the baselines of the group's resets
 * are its own.
 */
static inline int test_profd_group_setup(const char *name, char *dir, char *sock, pid_t *pid)
{
	if (test_dir_make(name, dir))
		return -1;
	setenv("XDG_RUNTIME_DIR", dir, 1);
	snprintf(sock, 128, "%s/profd.sock", dir);
	test_profd_start(sock, pid);
	return 0;
}

static inline int test_profd_group_teardown(const char *dir, pid_t pid)
{
	test_profd_stop(pid);
	return test_dir_remove(dir);
}

/*
 * setup() and teardown() of a test group that runs under
 * test_profd_group_setup, named after the test, with the file's own dir,
 * sock and profd_pid
 */
#define TEST_PROFD_GROUP(name)                                                                    \
	static int setup(void **state)                                                            \
	{                                                                                         \
		(void)state;                                                                      \
		return test_profd_group_setup(name, dir, sock, &profd_pid);                       \
	}                                                                                         \
	static int teardown(void **state)                                                         \
	{                                                                                         \
		(void)state;                                                                      \
		return test_profd_group_teardown(dir, profd_pid);                                 \
	}

/* zone's callers in s (free them): its parents sum to its total and
 * calls, its children to its total minus its self time */
static inline void test_callers_hold(struct prof_snapshot *s, const char *zone,
				     struct pc_callers *c)
{
	__u64 p = 0, calls = 0, ch = 0;
	size_t i;

	assert_int_equal(pc_callers(s, zone, c), 0);
	for (i = 0; i < c->nparents; i++) {
		p += c->parents[i].ticks;
		calls += c->parents[i].calls;
	}
	for (i = 0; i < c->nchildren; i++)
		ch += c->children[i].ticks;
	assert_int_equal(p, c->ticks);
	assert_int_equal(calls, c->calls);
	assert_int_equal(ch, c->ticks - c->self);
}

/* skip the test, saying why, without that profd */
static inline void test_need_profd(pid_t pid)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: not root\n");
		skip();
	}
	if (pid < 0) {
		fprintf(stderr, "skipped: profd did not start with kernel assistance\n");
		skip();
	}
}

/*
 * profctl args... (NULL-terminated) run in-process: stdout into the file
 * out and stderr into err (its text; the file dir/stderr on the way),
 * each if set; the exit status
 */
/* this process's fd (1 or 2) into the file path, till test_fd_back; the
 * fd it was */
static inline int test_fd_to(int fd, const char *path)
{
	int saved, f;

	fflush(fd == 1 ? stdout : stderr);
	saved = dup(fd);
	f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(f, fd);
	close(f);
	return saved;
}

static inline void test_fd_back(int fd, int saved)
{
	fflush(fd == 1 ? stdout : stderr);
	dup2(saved, fd);
	close(saved);
}

static inline int test_profctl_run_io(const char *dir, const char *out, const char **args,
				      char *err, size_t errlen)
{
	char *argv[32], errpath[128];
	int argc = 0, rc, saved = -1, saved2 = -1;

	argv[argc++] = (char *)(uintptr_t) "profctl";
	while (*args && argc < 31)
		argv[argc++] = (char *)(uintptr_t)*args++;
	argv[argc] = NULL;
	if (out)
		saved = test_fd_to(1, out);
	if (err) {
		snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
		saved2 = test_fd_to(2, errpath);
	}
	rc = profctl_main(argc, argv);
	if (out)
		test_fd_back(1, saved);
	if (err) {
		char *e;

		test_fd_back(2, saved2);
		e = test_slurp(errpath, NULL);
		snprintf(err, errlen, "%s", e ? e : "");
		free(e);
	}
	return rc;
}

/* profctl args... with stdout to path; the status */
static inline int test_profctl_run(const char *path, const char **args)
{
	return test_profctl_run_io(NULL, path, args, NULL, 0);
}

/* profctl args... with stdout to path, which must succeed: what it wrote
 * (free it), its length into *len if len is not NULL */
static inline char *test_profctl_text(const char *path, const char **args, size_t *len)
{
	char *text;

	assert_int_equal(test_profctl_run(path, args), 0);
	text = test_slurp(path, len);
	assert_non_null(text);
	return text;
}

/*
 * A live program driven over child.h's pipes: a forked child runs
 * before() if set, then for each count n the test sends it runs round(n)
 * and says n back; 0, or the test's end, makes it exit (exit(): its
 * atexit work done)
 */
static inline void test_live_start(struct child *c, void (*before)(void),
				   void (*round)(unsigned int n))
{
	unsigned int n;

	if (child_start(c) == 0) {
		if (before)
			before();
		while (read(c->rd, &n, sizeof(n)) == sizeof(n) && n) {
			round(n);
			if (write(c->wr, &n, sizeof(n)) != sizeof(n))
				break;
		}
		exit(0);
	}
}

/* a test group's no-daemon directory (test_no_daemon_dir) and its live
 * program (test_live_start); 0, or -1 if there is no directory */
static inline int test_live_setup(const char *name, char *dir, struct child *c,
				  void (*before)(void), void (*round)(unsigned int n))
{
	if (test_no_daemon_dir(name, dir))
		return -1;
	test_live_start(c, before, round);
	return 0;
}

/* n rounds of the live program, done when it says so */
static inline void test_live_drive(const struct child *c, unsigned int n)
{
	unsigned int a;

	assert_int_equal(write(c->wr, &n, sizeof(n)), sizeof(n));
	assert_int_equal(read(c->rd, &a, sizeof(a)), sizeof(a));
	assert_int_equal(a, n);
}

/* the live program told to exit (killed if it cannot hear), and reaped */
static inline void test_live_stop(struct child *c)
{
	unsigned int zero = 0;

	if (c->pid > 0 && write(c->wr, &zero, sizeof(zero)) != sizeof(zero))
		child_kill(c);
	child_end(c);
}

#endif /* PROF_TEST_PROFD_PRIVATE_H */
