/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - what the cmocka tests share: includes, the clock and a
 * busy-wait, finding the calling process's own segment through the public
 * reader, files (read, written, removed), a command's output, the
 * programs built beside the test.
 */
#ifndef PROF_TESTUTIL_H
#define PROF_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <cmocka.h>

#include "snapshot.h"

/* CLOCK_MONOTONIC, in ns */
static inline __u64 test_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* burn ns of wall time on this CPU */
static inline void test_spin(__u64 ns)
{
	__u64 end = test_now_ns() + ns;

	while (test_now_ns() < end)
		;
}

/* a snapshot of process pid's segment (this process if pid == 0), read
 * with PROF_READ_* flags, or NULL; of a live pid, its current process's */
static inline struct prof_snapshot *test_snapshot_opts(pid_t pid, unsigned int flags)
{
	struct prof_seg_ent *ents;
	struct prof_snapshot *s = NULL;
	size_t n, i;

	__u64 token;

	if (!pid)
		pid = getpid();
	/* a live (or unreaped) process: its own segment, not one an earlier
	 * process of the same pid left */
	token = prof_proc_start_token(pid);
	if (prof_seg_list(geteuid(), &ents, &n))
		return NULL;
	for (i = 0; i < n && !s; i++) {
		int fd;

		if (ents[i].pid != (__u32)pid || (token && ents[i].start_token != token))
			continue;
		fd = prof_seg_open(&ents[i]);
		if (fd >= 0) {
			prof_snapshot__read_fd_opts(fd, flags, &s);
			close(fd);
		}
	}
	free(ents);
	return s;
}

/* this process's segment, open read-only (its size in *len) */
static inline int test_own_seg_fd(size_t *len)
{
	struct prof_seg_ent *ents;
	__u64 token = prof_proc_start_token(getpid());
	struct stat st;
	size_t n, i;
	int fd = -1;

	assert_int_equal(prof_seg_list(geteuid(), &ents, &n), 0);
	for (i = 0; i < n && fd < 0; i++)
		if (ents[i].pid == (__u32)getpid() && ents[i].start_token == token)
			fd = prof_seg_open(&ents[i]);
	free(ents);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	return fd;
}

/* this process's own segment, mapped read-only (its size in *len) */
static inline void *test_own_segment(size_t *len)
{
	int fd = test_own_seg_fd(len);
	void *mem = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);

	close(fd);
	assert_true(mem != MAP_FAILED);
	return mem;
}

/* CLOCK_MONOTONIC, ns */
static inline __u64 test_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* a busy wait of ns on the CPU (a hold, a wait the tests time) */
static inline void test_spin_ns(__u64 ns)
{
	static volatile unsigned long spun;
	__u64 t0 = test_mono_ns();

	while (test_mono_ns() - t0 < ns)
		spun++;
}

static inline struct prof_snapshot *test_snapshot(pid_t pid)
{
	return test_snapshot_opts(pid, 0);
}

/* the first node of a thread whose zone is called name, or NULL */
static inline const struct prof_snap_node *test_node(const struct prof_snapshot *s,
						     const struct prof_snap_thread *t,
						     const char *name)
{
	__u32 i;

	for (i = 2; i < t->nnodes; i++)
		if (!strcmp(prof_snap_node_name(s, &t->nodes[i]), name))
			return &t->nodes[i];
	return NULL;
}

/* the calls a node's copied histogram holds (it must have one) */
static inline __u64 test_hist_sum(const struct prof_snapshot *s, const struct prof_snap_node *n)
{
	const __u32 *h = prof_snap_hist(s, n);
	__u64 sum = 0;
	__u32 b;

	assert_non_null(h);
	for (b = 0; b < n->hist_n; b++)
		sum += h[b];
	return sum;
}

/* the thread with tid, or NULL */
static inline const struct prof_snap_thread *test_thread(const struct prof_snapshot *s, __u32 tid)
{
	__u32 i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			return &s->threads[i];
	return NULL;
}

/* a file's text (free it), its length in *len if not NULL; NULL if none */
static inline char *test_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (len)
		*len = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	if (n < 0) {
		fclose(f);
		return NULL;
	}
	fseek(f, 0, SEEK_SET);
	buf = (char *)calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf && len)
		*len = (size_t)n;
	return buf;
}

/* len bytes of buf written to path (made, or emptied first) */
static inline void test_spill(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* what the shell command cmd writes on stdout, its first 64 KiB (free
 * it); its wait status into *st if st is not NULL */
static inline char *test_popen_text(const char *cmd, int *st)
{
	size_t n, cap = 1 << 16;
	char *buf;
	FILE *p;
	int rc;

	p = popen(cmd, "r");
	assert_non_null(p);
	buf = (char *)calloc(1, cap);
	assert_non_null(buf);
	n = fread(buf, 1, cap - 1, p);
	buf[n] = 0;
	rc = pclose(p);
	if (st)
		*st = rc;
	return buf;
}

/* a directory of the test's own, /tmp/NAME.XXXXXX, into dir (64 bytes); 0 or -1 */
static inline int test_tmpdir(const char *name, char *dir)
{
	snprintf(dir, 64, "/tmp/%s.XXXXXX", name);
	return mkdtemp(dir) ? 0 : -1;
}

/* the shell's exit status of the command printf makes of fmt (4 KiB at most) */
static inline int test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int test_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* a private directory /tmp/NAME.XXXXXX into dir (64 bytes), profctl's
 * baselines in it ($XDG_RUNTIME_DIR), no profd for profctl nor for the
 * runtime; 0 or -1 */
static inline int test_no_daemon_dir(const char *name, char *dir)
{
	if (test_tmpdir(name, dir))
		return -1;
	setenv("XDG_RUNTIME_DIR", dir, 1);
	setenv("PROFCTL_NO_DAEMON", "1", 1);
	setenv("PROF_NO_DAEMON", "1", 1);
	return 0;
}

/* the program name built beside this test's directory (.output/tests/../
 * name, SAN builds too) into path (len bytes); name itself if not found */
static inline const char *test_bin(const char *name, char *path, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 32);

	if (n <= 0)
		return name;
	path[n] = '\0';
	snprintf(strrchr(path, '/'), 32, "/../%s", name);
	return path;
}

/* path and all below it removed (a test's private directory); 0 or -1 */
static inline int test_rm_rf(const char *path)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd) ? -1 : 0;
}

/* the private directory of a test program's group: test_dir_setup makes
 * it (/tmp/PROGRAM.XXXXXX), test_dir_teardown removes it and all in it
 * (cmocka's group setup and teardown) */
static __attribute__((unused)) char test_dir[64];

static inline int test_dir_setup(void **state)
{
	char exe[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *name;

	(void)state;
	exe[n > 0 ? n : 0] = '\0';
	name = strrchr(exe, '/');
	snprintf(test_dir, sizeof(test_dir), "/tmp/%.40s.XXXXXX", name ? name + 1 : "prof-test");
	return mkdtemp(test_dir) ? 0 : -1;
}

static inline int test_dir_teardown(void **state)
{
	(void)state;
	return test_rm_rf(test_dir);
}

/* the line holding needle in text, copied into line; the end of that line
 * in text (to look on from), NULL if none */
static inline const char *test_line_with(const char *text, const char *needle, char *line,
					 size_t len)
{
	const char *p = strstr(text, needle), *b, *e;

	if (!p)
		return NULL;
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	if (!e)
		e = p + strlen(p);
	snprintf(line, len, "%.*s", (int)(e - b), b);
	return e;
}

/* this process's snapshot into *s (destroy it) and its thread tid, both there */
static inline const struct prof_snap_thread *test_own_thread(struct prof_snapshot **s, __u32 tid)
{
	const struct prof_snap_thread *t;

	*s = test_snapshot(0);
	assert_non_null(*s);
	t = test_thread(*s, tid);
	assert_non_null(t);
	return t;
}

/* TEST_FILTER=GLOB: only the cmocka tests whose names match (tests/mutate
 * runs one at a time where a program calls this before running them) */
static inline void test_filter_env(void)
{
	const char *f = getenv("TEST_FILTER");

	if (f && *f)
		cmocka_set_test_filter(f);
}

/* each string of a NULL-terminated list is in text (found: true) or none
 * is (false); a failure names the string */
static inline void test_strs_in(const char *text, const char *const *strs, bool found)
{
	for (; *strs; strs++)
		if (!strstr(text, *strs) == found)
			fail_msg("'%s' %s:\n%s", *strs, found ? "missing" : "found", text);
}

#define assert_all_in(text, ...) test_strs_in((text), (const char *const[]){ __VA_ARGS__, NULL }, true)
#define assert_none_in(text, ...)                                                                \
	test_strs_in((text), (const char *const[]){ __VA_ARGS__, NULL }, false)

/* a test of a table: named name, fn runs with *state the table's row
 * (then teardown, if not NULL), as cmocka_unit_test_prestate would but
 * under a name of its own (TEST_FILTER and tests/mutate pick it) */
#define test_row(name_, fn, row, teardown)                                                   \
	{ .name = (name_), .test_func = (fn), .teardown_func = (teardown),                    \
	  .initial_state = (void *)(uintptr_t)(row) }

/* one packet, buf's len bytes, sent on sock with nfds (0 to 2) copies of
 * fd along (SCM_RIGHTS): sendmsg's result */
static inline ssize_t test_send_fds(int sock, const void *buf, size_t len, int fd, int nfds)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	int fds[2] = { fd, fd };
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct msghdr m;
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (nfds) {
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	return sendmsg(sock, &m, MSG_NOSIGNAL);
}

/* the program's tests run, only TEST_FILTER's if it is set */
#define test_run_group(tests, setup, teardown)                                                   \
	(test_filter_env(), cmocka_run_group_tests(tests, setup, teardown))

/*
 * A test program's whole main: the cmocka tests given (cmocka_unit_test(f),
 * ...) run as one group with setup and teardown (NULL: none), only those
 * TEST_FILTER names (test_filter_env).  A program that re-executes itself,
 * or sets its environment first: TEST_MAIN_CHILDREN, TEST_MAIN_ENV.
 */
#define TEST_MAIN(setup, teardown, ...)                                                           \
	int main(void)                                                                             \
	{                                                                                          \
		const struct CMUnitTest tests[] = { __VA_ARGS__ };                                 \
                                                                                                   \
		test_filter_env();                                                                 \
		return cmocka_run_group_tests(tests, setup, teardown);                             \
	}

/* a child mode of a test program: re-executed with argv[1] flag, the
 * program runs run alone and exits with its result */
struct test_child_mode {
	const char *flag;
	int (*run)(void);
};

/* the mode of children (ended by a NULL flag; NULL: none) that argv
 * names (a flag and nothing after it), or NULL: the tests run */
static inline const struct test_child_mode *
test_child_mode_of(int argc, char **argv, const struct test_child_mode *children)
{
	for (; children && children->flag && argc == 2; children++)
		if (!strcmp(argv[1], children->flag))
			return children;
	return NULL;
}

/*
 * TEST_MAIN for a program that re-executes itself: named by one of
 * children's flags it runs that child; otherwise env (NULL: none) sets
 * the environment the tests start with (after the child check: a child
 * keeps what its test gave it) and they run as TEST_MAIN's do.
 */
#define TEST_MAIN_CHILDREN(setup, teardown, children, env, ...)                                  \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		const struct CMUnitTest tests[] = { __VA_ARGS__ };                                 \
		const struct test_child_mode *child = test_child_mode_of(argc, argv, children);    \
		void (*env_)(void) = env;                                                          \
                                                                                                   \
		if (child)                                                                         \
			return child->run();                                                       \
		if (env_)                                                                          \
			env_();                                                                    \
		test_filter_env();                                                                 \
		return cmocka_run_group_tests(tests, setup, teardown);                             \
	}

/* TEST_MAIN with env (see TEST_MAIN_CHILDREN) setting the tests' environment */
#define TEST_MAIN_ENV(setup, teardown, env, ...)                                                  \
	TEST_MAIN_CHILDREN(setup, teardown, NULL, env, __VA_ARGS__)

/* test_seg_paths: every start token (a pid of another pid namespace) */
#define TEST_ANY_TOKEN (~0ull)

/*
 * The /dev/shm paths of the segments of process (pid, token); count.  A
 * pid alone is not a process: a crash leaves its segment, and the pid
 * comes back.  The token of a child is prof_proc_start_token(pid), read
 * before the child is reaped (a zombie still has it).
 */
static inline size_t test_seg_paths(pid_t pid, __u64 token, char paths[][96], size_t max)
{
	struct prof_seg_ent *ents;
	size_t n, i, k = 0;

	if (prof_seg_list((uid_t)-1, &ents, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (ents[i].pid == (__u32)pid &&
		    (token == TEST_ANY_TOKEN || ents[i].start_token == token) && k < max)
			memcpy(paths[k++], ents[i].path, 96);
	free(ents);
	return k;
}

/* nodes a of ta and b of tb are one call path (their sites, to the root) */
static inline bool test_same_path(const struct prof_snap_thread *ta, __u32 a,
				  const struct prof_snap_thread *tb, __u32 b)
{
	while (a && b) {
		if (ta->nodes[a].site != tb->nodes[b].site)
			return false;
		a = ta->nodes[a].parent;
		b = tb->nodes[b].parent;
	}
	return !a && !b;
}

/*
 * m, s's threads merged into one (pc_merge_threads), is the sum of them,
 * figure by figure as usdt/figures.h says each combines: every figure of
 * its table is checked, so a new one is too.  s not lazy.
 */
static inline void test_check_merged(const struct prof_snapshot *s, const struct prof_snapshot *m)
{
	const struct prof_snap_thread *mt = &m->threads[0];
	__u32 i, j, k;

	for (j = 1; j < mt->nnodes; j++) {
		const struct prof_snap_node *mn = &mt->nodes[j];
		struct prof_snap_node want;

		memset(&want, 0, sizeof(want));
		for (i = 0; i < s->nthreads; i++) {
			const struct prof_snap_thread *t = &s->threads[i];

			for (k = 1; k < t->nnodes; k++) {
				const struct prof_snap_node *n = &t->nodes[k];

				if (!test_same_path(mt, j, t, k))
					continue;
#define WANT(f, unit, across, window, flat, slab, key)                                               \
	if (PROF_FIG_IS(SUM, across))                                                        \
		want.f += n->f;                                                               \
	else if (n->f > want.f)                                                               \
		want.f = n->f;
				PROF_NODE_COUNTS(WANT)
				PROF_NODE_TIMES(WANT)
#undef WANT
			}
		}
#define CHECK(f, unit, across, window, flat, slab, key)                                              \
	if (want.f != mn->f)                                                                 \
		fail_msg("merged node %u (%s): %s %llu, the threads' %llu", j,               \
			 prof_snap_node_name(m, mn), #f, (unsigned long long)mn->f,           \
			 (unsigned long long)want.f);
		PROF_NODE_COUNTS(CHECK)
		PROF_NODE_TIMES(CHECK)
#undef CHECK
	}
}

#endif /* PROF_TESTUTIL_H */
