/* SPDX-License-Identifier: MIT */
/*
 * root_fixture.h - what the root tests' fixtures (profd_fixture.h,
 * guard_fixture.h) share: the processes a test leaves running (kids_add),
 * killed and reaped after it whether it passed or not (kids_end), the wait
 * for a profd starting (profd_await), and the skip, saying why, unless it
 * has kernel assistance.
 * Include after testutil.h and client.h.
 */
#ifndef PROF_TEST_ROOT_FIXTURE_H
#define PROF_TEST_ROOT_FIXTURE_H

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>

static pid_t kids[16];

static inline void kids_add(pid_t pid)
{
	size_t i;

	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++)
		if (kids[i] <= 0) {
			kids[i] = pid;
			return;
		}
}

/* each kid still running killed, each reaped, then after(pid) if given */
static inline void kids_end(void (*after)(pid_t))
{
	size_t i;

	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++) {
		if (kids[i] > 0 && waitpid(kids[i], NULL, WNOHANG) == 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
		if (kids[i] > 0 && after)
			after(kids[i]);
		kids[i] = 0;
	}
}

/* the runtime (PROF_SOCKET) and profctl (PROFD_SOCKET) pointed at the
 * profd starting on sock; a connection to it within 5 s, or -1 */
static inline int profd_await(const char *sock)
{
	__u64 end;
	int fd;

	setenv("PROF_SOCKET", sock, 1);
	setenv("PROFD_SOCKET", sock, 1);
	for (end = test_now_ns() + 5000000000ull; test_now_ns() < end; usleep(20000)) {
		fd = profd_connect(sock);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

/* skip the test unless fd (-1: none) is connected to a profd with kernel
 * assistance; stop() stops that profd first */
static inline void need_bpf(int fd, void (*stop)(void))
{
	struct profd_status st;

	if (fd < 0) {
		stop();
		printf("skip: profd did not start\n");
		skip();
	}
	if (profd_status(fd, &st) || !st.bpf_on) {
		printf("skip: no kernel assistance: %s\n", st.bpf_why);
		close(fd);
		stop();
		skip();
	}
}

#endif /* PROF_TEST_ROOT_FIXTURE_H */
