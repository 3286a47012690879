// SPDX-License-Identifier: MIT
/*
 * usdt/prof_proc.c - the one reader of /proc/PID files for the runtime, the
 * reader's callers, profd and profctl: a small file (a thread's comm, its
 * schedstat), and the start token (starttime of /proc/PID/stat) which names
 * a segment together with the pid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "runtime.h"
#include "snapshot.h"
#include "reader_int.h"
#include "prof_int.h"

/* a small file at path under dirfd, NUL terminated; its length or -errno */
static ssize_t proc_file_at(int dirfd, const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	return n;
}

int prof_proc_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t len)
{
	char who[16] = "self", path[96];
	ssize_t n;

	if (pid)
		snprintf(who, sizeof(who), "%d", (int)pid);
	if (tid)
		snprintf(path, sizeof(path), "/proc/%s/task/%d/%s", who, (int)tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%s/%s", who, name);
	n = proc_file_at(AT_FDCWD, path, buf, len);
	return n < 0 ? (int)n : 0;
}

int prof_proc_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	int err = prof_proc_file(pid, tid, "comm", buf, len);

	if (!err)
		buf[strcspn(buf, "\n")] = 0;
	return err;
}

/* starttime (field 22) of the stat file at path, 0 if unreadable */
static __u64 stat_start_token_at(int dirfd, const char *path)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	int i;

	if (proc_file_at(dirfd, path, buf, sizeof(buf)) < 0)
		return 0;
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

/*
 * What only the kernel knows of a live process's threads: each one's CPU
 * time (its schedstat, from the CPU clock the runtime noted at its first
 * zone) and its comm (pthread_setname_np); of thread tid only, if not 0.
 * Only while pid is still the process that wrote the segment.
 */
static void read_live_threads(struct prof_snapshot *s, __u32 tid)
{
	char buf[128];
	__u32 i;

	if (!s->pid || prof_proc_start_token((pid_t)s->pid) != s->start_token)
		return;
	for (i = 0; i < s->nthreads; i++) {
		struct prof_snap_thread *t = &s->threads[i];
		unsigned long long run;

		/* a flat pass of one thread (top, a thread at a time) reads its
		 * thread's files only: all of them made each pass O(threads^2) */
		if (t->state != PROF_SLAB_ALIVE || (tid && t->tid != tid))
			continue;
		if (!prof_proc_comm((pid_t)s->pid, (pid_t)t->tid, buf, sizeof(buf))) {
			buf[sizeof(t->comm) - 1] = 0;
			memcpy(t->comm, buf, strlen(buf) + 1);
		}
		if (t->oncpu_ns == PROF_SNAP_UNKNOWN && t->oncpu_start &&
		    !prof_proc_file((pid_t)s->pid, (pid_t)t->tid, "schedstat", buf, sizeof(buf)) &&
		    sscanf(buf, "%llu", &run) == 1)
			t->oncpu_ns = run > t->oncpu_start ? run - t->oncpu_start : 0;
	}
}

void prof_snapshot__add_proc(struct prof_snapshot *s, __u32 tid)
{
	if (s->exit_tick)
		return;
	read_live_threads(s, tid);
	snap_clamp_oncpu(s, false);
}
