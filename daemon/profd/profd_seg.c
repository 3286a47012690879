// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd_seg.c - the processes profd follows: their state
 * (profd_seg.h), the inotify watch on /dev/shm set up, and the guarded read
 * of a followed segment.  Discovery (the watch's events too) is
 * profd_discover.c, sampling
 * profd_sample.c, history and its memory bound profd_history.c, the
 * clients' queries profd_query.c.  Resets are not profd's: a reset is a
 * baseline file of the user who made it, subtracted by profctl.
 *
 * A segment is trusted only after its file owner, its /proc owner, the
 * pid and start token in its name, in /proc and in its header all agree.
 * profd keeps the segment mapped read-only while the process lives (the
 * data survives the unlink at exit), takes a last snapshot when it exits,
 * then drops the mapping and keeps the snapshot (and the ring below) until
 * it ages out.  Every read of application memory is guarded: a segment
 * truncated under us raises SIGBUS, which fails that one read (busguard.c:
 * the read runs on over zeros, then its result is dropped).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "busguard.h"
#include "profd.h"
#include "proto.h"
#include "profd_seg.h"

struct seg_state sg = { .ifd = -1 };

int seg_init(void)
{
	struct stat st;
	int err;

	/* SIGBUS while reading a segment: that read fails, profd goes on */
	if ((err = prof_bus_guard()))
		return err;
	sg.pidns = prof_ns_ino(0, "pid");
	sg.shm_dev = stat("/dev/shm", &st) ? 0 : st.st_dev;
	sg.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (sg.ifd < 0 || inotify_add_watch(sg.ifd, "/dev/shm", IN_CREATE | IN_MOVED_TO) < 0) {
		log_warn("seg: inotify on /dev/shm; relying on the periodic rescan");
		if (sg.ifd >= 0)
			close(sg.ifd);
		sg.ifd = -1;
	}
	return 0;
}

void seg_unmap(struct seg *s)
{
	if (s->mem)
		munmap(s->mem, s->len);
	s->mem = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

void seg_free(struct seg *s)
{
	__u32 i;

	seg_unmap(s);
	prof_seg_cursor__destroy(s->cursor);
	/* its history's deltas: a frame that left the ring took its own */
	for (i = 0; i < SEG_RING; i++)
		hist_delta__destroy(s->ring[i].back);
	prof_snapshot__destroy(s->full);
	free(s);
}

void seg_fini(void)
{
	struct seg *s, *next;
	struct seg_bad *b, *bn;

	for (s = sg.list; s; s = next) {
		next = s->next;
		seg_free(s);
	}
	sg.list = NULL;
	for (b = sg.bad; b; b = bn) {
		bn = b->older;
		free(b);
	}
	memset(sg.bad_hash, 0, sizeof(sg.bad_hash));
	sg.bad = sg.bad_oldest = NULL;
	sg.nbad = 0;
	if (sg.ifd >= 0)
		close(sg.ifd);
	sg.ifd = -1;
}

/* the header still names the process we verified against /proc */
static bool seg_is(const struct seg *s, __u32 pid, __u64 start_token, __u32 uid)
{
	return pid == s->hdr_pid && start_token == s->start_token && uid == (__u32)s->hdr_uid;
}

/*
 * The one guarded look at a live segment's mapping: look(s, arg) runs only
 * while the file is still its full size (every page past a new end would
 * SIGBUS).  One that faulted (the file shrank meanwhile: it saw zeros from
 * there, busguard.c) fails whole with -EFAULT: the mapping is the file's
 * again, and undo(s, arg), if any, drops what it made of the zeros.
 */
int seg_guard(struct seg *s, int (*look)(struct seg *s, void *arg),
	      void (*undo)(struct seg *s, void *arg), void *arg)
{
	unsigned long hits;
	struct stat st;
	int err;

	if (!s->mem || s->fd < 0)
		return -ESRCH;
	if (fstat(s->fd, &st) || st.st_size < (off_t)s->len || s->len < PROF_SEG_HDR_SIZE)
		return -EINVAL;
	hits = prof_bus_hits();
	err = look(s, arg);
	if (prof_bus_hits() == hits)
		return err;
	prof_bus_remap(s->fd, s->mem, s->len);
	if (undo)
		undo(s, arg);
	return -EFAULT;
}

static int look_read(struct seg *s, void *arg)
{
	return prof_snapshot__read(s->mem, s->len, arg);
}

static void undo_read(struct seg *s, void *arg)
{
	struct prof_snapshot **out = arg;

	(void)s;
	prof_snapshot__destroy(*out);
	*out = NULL;
}

/* a guarded read of a live segment's mapping */
int seg_read(struct seg *s, struct prof_snapshot **out)
{
	int err;

	*out = NULL;
	err = seg_guard(s, look_read, undo_read, out);
	if (!err && !seg_is(s, (*out)->pid, (*out)->start_token, (*out)->uid)) {
		prof_snapshot__destroy(*out);
		*out = NULL;
		err = -EPERM;
	}
	return err;
}

/* the header still names the process: 0 or -EPERM */
static int look_hdr(struct seg *s, void *arg)
{
	const struct prof_seg_hdr *h = s->mem;
	bool ok;

	(void)arg;
	ok = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == PROF_SEG_MAGIC &&
	     seg_is(s, __atomic_load_n(&h->pid, __ATOMIC_RELAXED),
		    __atomic_load_n(&h->start_token, __ATOMIC_RELAXED),
		    __atomic_load_n(&h->uid, __ATOMIC_RELAXED));
	return ok ? 0 : -EPERM;
}

/*
 * The live segment for a client to read itself: still its full size, and
 * its header still names the process (a guarded read of it alone); an fd
 * of the read-only file description, or -errno.
 */
int seg_live_fd(struct seg *s)
{
	int fd, err = seg_guard(s, look_hdr, NULL, NULL);

	if (err)
		return err;
	fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

static int look_busy(struct seg *s, void *arg)
{
	return prof_seg_cursor__sample(s->cursor, s->mem, s->len, arg);
}

/*
 * A sample, straight from the mapping: slab headers, the nodes created
 * since the last sample, and one word per top-level node (the cursor
 * remembers which those are).  Guarded like seg_read.
 */
int seg_busy(struct seg *s, struct prof_seg_busy *out)
{
	int err;

	if (!s->mem)
		return -ESRCH;
	if (!s->cursor && !(s->cursor = prof_seg_cursor__new()))
		return -ENOMEM;
	err = seg_guard(s, look_busy, NULL, out);
	if (err)
		return err;
	return seg_is(s, out->pid, out->start_token, out->uid) ? 0 : -EPERM;
}

/* pid's live segment looked at under the guard: profd_stacks.c's samples
 * and the queries alike */
struct look_pid {
	int (*look)(const void *mem, size_t len, void *arg);
	void (*undo)(void *arg);
	void *arg;
};

static int look_pid(struct seg *s, void *arg)
{
	struct look_pid *l = arg;

	return l->look(s->mem, s->len, l->arg);
}

static void undo_pid(struct seg *s, void *arg)
{
	struct look_pid *l = arg;

	(void)s;
	if (l->undo)
		l->undo(l->arg);
}

static struct seg *seg_of_pid(pid_t pid)
{
	struct seg *s;

	for (s = sg.list; s; s = s->next)
		if (s->alive && s->pid == pid && s->mem)
			return s;
	return NULL;
}

int seg_look_pid(pid_t pid, int (*look)(const void *mem, size_t len, void *arg),
		 void (*undo)(void *arg), void *arg)
{
	struct look_pid l = { look, undo, arg };
	struct seg *s = seg_of_pid(pid);

	return s ? seg_guard(s, look_pid, undo_pid, &l) : -ESRCH;
}

bool seg_alive_pid(pid_t pid)
{
	return seg_of_pid(pid) != NULL;
}
