/* SPDX-License-Identifier: MIT */
/*
 * fastpath.h - what the fast-path tests (tests/fastpath.mk) share on top of
 * testutil.h: child processes, files next to the test binary, a zone's
 * child in a snapshot.
 */
#ifndef PROF_FASTPATH_H
#define PROF_FASTPATH_H

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <spawn.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "testutil.h"

/* sanitizer builds: TSan makes each zone ~20x slower */
#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#ifndef TEST_TSAN
#define TEST_TSAN 0
#endif
/* the ASan build (gcc) */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#else
#define TEST_ASAN 0
#endif

static inline __u32 test_gettid(void)
{
	return (__u32)syscall(SYS_gettid);
}

/* path of a file next to the running test binary (SAN builds included) */
static inline const char *test_sibling(const char *name, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	snprintf(buf, len, "%s/%s", dirname(exe), name);
	return buf;
}

/* wait for a child, at most secs seconds (then kill it); its wait status */
static inline int test_wait(pid_t pid, int secs)
{
	int st = 0, i;

	for (i = 0; i < secs * 100; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0)
			return -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	print_error("child %d timed out after %d s\n", (int)pid, secs);
	return -1;
}

/*
 * Run this test binary again as "exe mode" with env entries "K=V" added,
 * stderr to a file if given; its wait status.  posix_spawn, not fork: a
 * forked child of a profiled process gets a segment at fork time that an
 * exec would orphan.
 */
static inline int test_reexec(const char *mode, const char *const *env, int secs,
			      const char *stderr_path)
{
	extern char **environ;
	posix_spawn_file_actions_t fa;
	char exe[PATH_MAX], *argv[3], **envp;
	size_t n = 0, k = 0;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t pid;
	int err;

	if (len <= 0)
		return -1;
	exe[len] = 0;
	while (environ[n])
		n++;
	while (env && env[k])
		k++;
	envp = (char **)calloc(n + k + 1, sizeof(*envp));
	if (!envp)
		return -1;
	/* ours first: getenv takes the first match */
	if (k)
		memcpy(envp, env, k * sizeof(*envp));
	memcpy(envp + k, environ, n * sizeof(*envp));
	argv[0] = exe;
	argv[1] = (char *)(uintptr_t)mode;
	argv[2] = NULL;
	posix_spawn_file_actions_init(&fa);
	if (stderr_path)
		posix_spawn_file_actions_addopen(&fa, 2, stderr_path, O_WRONLY | O_CREAT | O_TRUNC,
						 0600);
	err = posix_spawn(&pid, exe, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	if (err)
		return -1;
	return test_wait(pid, secs);
}

static inline int test_exited_ok(int st)
{
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* index of the child of node parent named name in thread t, or PROF_SNAP_NONE */
static inline __u32 test_child(const struct prof_snapshot *s, const struct prof_snap_thread *t,
			       __u32 parent, const char *name)
{
	__u32 c;

	for (c = t->nodes[parent].first_child; c != PROF_SNAP_NONE; c = t->nodes[c].next_sibling)
		if (!strcmp(prof_snap_node_name(s, &t->nodes[c]), name))
			return c;
	return PROF_SNAP_NONE;
}

/* the child of node parent named name, which must be there with calls calls */
static inline __u32 test_child_calls(const struct prof_snapshot *s,
				     const struct prof_snap_thread *t, __u32 parent,
				     const char *name, __u64 calls)
{
	__u32 c = test_child(s, t, parent, name);

	if (c == PROF_SNAP_NONE)
		fail_msg("no zone %s below node %u", name, parent);
	if (t->nodes[c].calls != calls)
		fail_msg("zone %s below node %u: %llu calls, want %llu", name, parent,
			 (unsigned long long)t->nodes[c].calls, (unsigned long long)calls);
	return c;
}

/* number of nodes in t named name */
static inline unsigned test_count_named(const struct prof_snapshot *s,
					const struct prof_snap_thread *t, const char *name)
{
	unsigned k = 0;
	__u32 i;

	for (i = 2; i < t->nnodes; i++)
		k += !strcmp(prof_snap_node_name(s, &t->nodes[i]), name);
	return k;
}

/* a case of the fast-path tests: fn on a thread of its own (its nodes from
 * a fresh root, its counters from zero) */
typedef void (*test_case_fn)(void);

struct test_case_arg {
	test_case_fn fn;
	__u32 tid;
};

static inline void *test_case_main(void *arg)
{
	struct test_case_arg *a = (struct test_case_arg *)arg;

	a->tid = test_gettid();
	a->fn();
	return NULL;
}

/* run fn in a new thread; a snapshot taken after it exited, and its thread */
static inline struct prof_snapshot *test_run_case(test_case_fn fn,
						   const struct prof_snap_thread **t)
{
	struct test_case_arg a = { fn, 0 };
	struct prof_snapshot *s;
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, test_case_main, &a), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	s = test_snapshot(0);
	assert_non_null(s);
	*t = test_thread(s, a.tid);
	assert_non_null(*t);
	assert_int_equal((*t)->state, PROF_SLAB_EXITED);
	return s;
}

/* the child of a sub-process check: a message, then a non-zero exit */
#define CHILD_CHECK(cond)                                                                      \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "%s:%d: child check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                        \
			_exit(1);                                                              \
		}                                                                              \
	} while (0)

#endif /* PROF_FASTPATH_H */
