// SPDX-License-Identifier: MIT
/*
 * usdt/prof_proc.c - the process's start token (starttime of /proc/PID/stat), which
 * names a segment together with the pid.
 */
#define _GNU_SOURCE
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "zone_leave.h"
#include "runtime.h"
#include "snapshot.h"
#include "proffile.h"
#include "funcname.h"
#include "prof_int.h"

/* starttime (field 22) of the stat file at path, 0 if unreadable */
static __u64 stat_start_token_at(int dirfd, const char *path)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, i;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* comm may hold spaces and parens: fields count from the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* field 22 (starttime) is the 20th after the ')' */
	for (i = 0; i < 20 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &v) != 1)
		return 0;
	return v;
}

/*
 * Our own, through a /proc/self directory fd: the same file every reader
 * reads as <pid>/stat under /proc (qemu-user fakes the paths
 * "/proc/self/stat" and "/proc/<pid>/stat", a start time that drifts by a
 * tick), and our own process whatever pid namespace /proc is of.
 */
__u64 prof_self_start_token(void)
{
	int d = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	__u64 v;

	if (d < 0)
		return 0;
	v = stat_start_token_at(d, "stat");
	close(d);
	return v;
}

/* through a /proc directory fd for the same reason */
__u64 prof_proc_start_token(pid_t pid)
{
	int d = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[32];
	__u64 v;

	if (d < 0)
		return 0;
	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	v = stat_start_token_at(d, path);
	close(d);
	return v;
}
