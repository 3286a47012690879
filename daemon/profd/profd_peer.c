// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd_peer.c - who is at the other end of a control
 * connection: its process pinned by a pidfd, and the pid namespace an fd it
 * handed over names (profd_ctl.c's top says why each check is there).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/nsfs.h>
#include <linux/sched.h>

#include "profd.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

static __u64 boot_ticks_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (__u64)ts.tv_sec * (__u64)sysconf(_SC_CLK_TCK) +
	       (__u64)ts.tv_nsec / (1000000000ull / (__u64)sysconf(_SC_CLK_TCK));
}

/*
 * A pidfd of the peer: SO_PEERPIDFD names the very process that connected.
 * Without it (before 6.5), pidfd_open of its pid, kept only if that
 * process started before we accepted (a process started since cannot be
 * the peer; the pid was reused) and had not exited by the time we looked.
 */
int profd_peer_pidfd(int fd, pid_t pid)
{
	socklen_t len = sizeof(int);
	__u64 t0 = boot_ticks_now(), st;
	int pfd = -1;

	if (!getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &len) && len == sizeof(int) &&
	    pfd >= 0) {
		fcntl(pfd, F_SETFD, FD_CLOEXEC);
		return pfd;
	}
	if (pid <= 0)
		return -ESRCH;
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0)
		return -errno;
	st = prof_proc_start_token(pid);
	if (!st || st > t0) {
		close(pfd);
		return -ESRCH;
	}
	return pfd;
}

/* whether the process behind a pidfd has exited */
bool profd_pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd < 0 || poll(&p, 1, 0) != 0;
}

/*
 * How many levels below ours the pid namespace at fd is (0: ours), or -1:
 * none of ours, or not a pid namespace's fd at all.  *ino gets its inode.
 */
int profd_pidns_depth(int fd, __u64 *ino)
{
	static dev_t nsfs_dev;
	struct stat st, own;
	int cur, up, depth;

	if (!nsfs_dev) {
		if (stat("/proc/self/ns/pid", &own))
			return -1;
		nsfs_dev = own.st_dev;
	}
	if (fstat(fd, &st) || st.st_dev != nsfs_dev || ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWPID)
		return -1;
	*ino = (__u64)st.st_ino;
	cur = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	/* pid namespaces nest 32 deep at most */
	for (depth = 0; cur >= 0 && depth <= 32; depth++) {
		if (fstat(cur, &st))
			break;
		if ((__u64)st.st_ino == seg_pidns()) {
			close(cur);
			return depth;
		}
		up = ioctl(cur, NS_GET_PARENT);
		close(cur);
		cur = up;
	}
	if (cur >= 0)
		close(cur);
	return -1;
}
