/* SPDX-License-Identifier: MIT */
/*
 * child.h - a child process a test drives over two pipes, one byte at a
 * time: forked (and killed if the test dies, so a failed assertion leaves
 * nothing running), it says "ready" when it has done what the test then
 * reads of it, and the test says "go" to let it on; its end is waited for
 * with a deadline, so a child that hangs fails the test instead of hanging
 * it.  Include after cmocka.h.
 *
 *	struct child c;
 *
 *	if (child_start(&c) == 0) {
 *		work();
 *		child_say(&c, 'r');
 *		child_hear(&c);	(the go, or the test's end)
 *		_exit(0);
 *	}
 *	child_ready(&c);
 *	... read what it did ...
 *	child_go(&c);
 *	child_end(&c);
 */
#ifndef PROF_TEST_CHILD_H
#define PROF_TEST_CHILD_H

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

/* how long a child may take to say it is ready, or to end once told */
#define CHILD_DEADLINE_MS 60000

/* each side's two ends: rd what the other side writes, wr to the other side */
struct child {
	pid_t pid;
	int rd;
	int wr;
	int pidfd; /* the test's hold on this very process (-1: none) */
};

/*
 * fork with two pipes (close-on-exec): 0 in the child (killed with this
 * process, c's ends its own), the child's pid in the parent
 */
static inline pid_t child_start(struct child *c)
{
	int up[2], down[2];

	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	assert_int_equal(pipe2(down, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(up[0]);
		close(down[1]);
		c->rd = down[0];
		c->wr = up[1];
		c->pidfd = -1;
		return 0;
	}
	close(up[1]);
	close(down[0]);
	c->rd = up[0];
	c->wr = down[1];
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	return c->pid;
}

/* in the child: b to the test (exits 3 if the test is gone) */
static inline void child_say(const struct child *c, char b)
{
	if (write(c->wr, &b, 1) != 1)
		_exit(3);
}

/* in the child: the test's next byte, 0 once it closed its end */
static inline char child_hear(const struct child *c)
{
	char b = 0;

	return read(c->rd, &b, 1) == 1 ? b : 0;
}

/* in the test: the child's next byte, within the deadline */
static inline char child_ready(const struct child *c)
{
	struct pollfd p = { .fd = c->rd, .events = POLLIN };
	char b;

	if (poll(&p, 1, CHILD_DEADLINE_MS) != 1)
		fail_msg("child %d said nothing in %d s", (int)c->pid, CHILD_DEADLINE_MS / 1000);
	assert_int_equal(read(c->rd, &b, 1), 1);
	return b;
}

/* in the test: the child let on */
static inline void child_go(const struct child *c)
{
	assert_int_equal(write(c->wr, "g", 1), 1);
}

/*
 * the test's ends closed (the child hears 0), and the child reaped: its
 * wait status, or -1 if it had to be killed after the deadline (or was
 * gone already); c->pid is -1 after (take the pid before)
 */
static inline int child_end(struct child *c)
{
	struct pollfd p = { .fd = c->pidfd, .events = POLLIN };
	int st = -1;
	bool hung;

	if (c->pid <= 0)
		return -1;
	close(c->wr);
	close(c->rd);
	hung = c->pidfd >= 0 && poll(&p, 1, CHILD_DEADLINE_MS) == 0;
	if (hung)
		syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
	if (waitpid(c->pid, &st, 0) != c->pid || hung)
		st = -1;
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pid = -1;
	return st;
}

/* the child killed, reaped and its ends closed, whatever it was doing */
static inline void child_kill(struct child *c)
{
	if (c->pid > 0 && c->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
	else if (c->pid > 0)
		kill(c->pid, SIGKILL);
	child_end(c);
}

/* the child left running, the test's ends closed (whoever kills it
 * reaps it): its pid */
static inline pid_t child_leave(struct child *c)
{
	close(c->wr);
	close(c->rd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	return c->pid;
}

#endif /* PROF_TEST_CHILD_H */
