// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd_query.c - what the control socket asks of the
 * followed processes: who may see which, the list, a snapshot or a window.
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

__u64 seg_rescan_period(void)
{
	return sg.ifd >= 0 ? SEG_RESCAN_NS : SEG_RESCAN_BLIND_NS;
}

__u64 seg_samples(void)
{
	return sg.samples;
}

__u32 seg_count(void)
{
	return sg.n;
}

__u32 seg_bad_count(void)
{
	return sg.nbad;
}

__u64 seg_rescans(void)
{
	return sg.rescans;
}

/*
 * Whether uid is in the group PROFD_GROUP, as NSS says: looked up again
 * after a minute, so a change of membership takes effect without a restart.
 */
#define PROFD_GROUP "profd"
#define GROUP_CACHE 64

static bool in_profd_group(uid_t uid)
{
	static struct {
		uid_t uid;
		bool in;
		__u64 t;
	} cache[GROUP_CACHE];
	__typeof__(cache[0]) *c = &cache[uid % GROUP_CACHE];
	__u64 now = profd_now_ns();
	struct group *gr;
	struct passwd *pw;
	gid_t groups[256];
	int n = 256, i;

	if (c->t && c->uid == uid && now - c->t < 60000000000ull)
		return c->in;
	c->uid = uid;
	c->t = now;
	c->in = false;
	gr = getgrnam(PROFD_GROUP);
	if (!gr)
		return false;
	pw = getpwuid(uid);
	if (!pw || getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
		return false;
	for (i = 0; i < n; i++)
		c->in |= groups[i] == gr->gr_gid;
	return c->in;
}

/* root sees all; a user their own, and members of PROFD_GROUP each other's */
static bool may_see(uid_t uid, uid_t owner)
{
	return uid == 0 || uid == owner || (in_profd_group(uid) && in_profd_group(owner));
}

/* s is the one to take for its pid rather than found (NULL: none yet):
 * alive ones first, then the newest found */
static bool seg_better(const struct seg *s, const struct seg *found)
{
	return !found || (s->alive && !found->alive) ||
	       (s->alive == found->alive && s->found_ns > found->found_ns);
}

/* the entry to take for pid, NULL if none */
static struct seg *seg_best(pid_t pid)
{
	struct seg *s, *found = NULL;

	for (s = sg.list; s; s = s->next)
		if (s->pid == pid && seg_better(s, found))
			found = s;
	return found;
}

/* the entry for pid the peer may see */
static int seg_lookup(uid_t uid, pid_t pid, struct seg **out)
{
	struct seg *found = seg_best(pid);

	if (!found)
		return -ESRCH;
	if (!may_see(uid, found->uid))
		return -EPERM;
	*out = found;
	return 0;
}

/* a rate in threads to thousandths, bounded for the wire */
static __u32 permille(double rate)
{
	if (!(rate > 0))
		return 0;
	return rate * 1000.0 < 4e9 ? (__u32)(rate * 1000.0 + 0.5) : 4000000000u;
}

__u64 seg_pidns(void)
{
	return sg.pidns;
}

/* a peer of pidns (0: ours) sees s */
static bool seg_in(const struct seg *s, __u64 pidns)
{
	return !pidns || pidns == sg.pidns || (s->pidns == pidns && pidns != SEG_PIDNS_OTHER);
}

/* s's pid as a peer of pidns names it */
static __u32 seg_pid_for(const struct seg *s, __u64 pidns)
{
	return !pidns || pidns == sg.pidns ? (__u32)s->pid : s->hdr_pid;
}

pid_t seg_host_pid(__u64 pidns, pid_t pid)
{
	struct seg *s, *found = NULL;

	if (pidns == SEG_PIDNS_OTHER)
		return -ESRCH;
	for (s = sg.list; s; s = s->next)
		if (s->pidns == pidns && s->hdr_pid == (__u32)pid && seg_better(s, found))
			found = s;
	return found ? found->pid : -ESRCH;
}

void seg_where(pid_t pid, __u64 pidns, __u32 *ns_pid, char *cgroup, size_t len, __u32 *uid)
{
	const struct seg *found = seg_best(pid);

	*ns_pid = 0;
	*uid = 0;
	cgroup[0] = 0;
	if (!found)
		return;
	*uid = (__u32)(pidns && pidns != sg.pidns ? found->hdr_uid : found->uid);
	if (found->pidns == sg.pidns || (pidns && pidns != sg.pidns))
		return;
	*ns_pid = found->hdr_pid;
	snprintf(cgroup, len, "%s", found->cgroup);
}

int seg_list(uid_t uid, __u64 pidns, seg_list_cb cb, void *arg)
{
	const struct prof_snapshot *info;
	struct profd_wire_proc p;
	struct seg *s;
	__u32 i;
	int err;

	for (s = sg.list; s; s = s->next) {
		if (!may_see(uid, s->uid) || !seg_in(s, pidns))
			continue;
		memset(&p, 0, sizeof(p));
		p.pid = seg_pid_for(s, pidns);
		/* on the host: where a container's process runs */
		if ((!pidns || pidns == sg.pidns) && s->pidns != sg.pidns) {
			p.ns_pid = s->hdr_pid;
			snprintf(p.cgroup, sizeof(p.cgroup), "%s", s->cgroup);
		}
		p.uid = (__u32)s->uid;
		p.start_token = s->start_token;
		p.alive = s->alive;
		p.inzone_now = permille(s->alive ? s->rate_inst : 0);
		p.inzone_short = permille(s->rate_short);
		p.inzone_long = permille(s->rate_long);
		/* the newest sample while alive, the last full look after */
		info = seg_kept(s);
		if (s->alive && s->info_ns) {
			snprintf(p.comm, sizeof(p.comm), "%s", s->info.comm);
			p.created_ns = s->info.created_ns;
			p.threads = s->info.alive;
			p.kernel = s->info.kernel;
		} else if (info) {
			snprintf(p.comm, sizeof(p.comm), "%s", info->comm);
			p.created_ns = info->created_ns;
			for (i = 0; i < info->nthreads; i++) {
				p.threads += info->threads[i].state == PROF_SLAB_ALIVE;
				p.kernel += info->threads[i].ksched_slot != PROF_NO_SLOT &&
					    info->threads[i].state == PROF_SLAB_ALIVE;
			}
		}
		err = cb(&p, s->pid, arg);
		if (err)
			return err;
	}
	return 0;
}

/* a private copy of a snapshot, through the image format */
static int snap_copy(const struct prof_snapshot *src, struct prof_snapshot **out)
{
	void *buf = NULL;
	size_t len = 0;
	int err;

	err = prof_snapshot__write(src, &buf, &len);
	if (!err)
		err = prof_snapshot__read(buf, len, out);
	free(buf);
	return err;
}

/* the freshest snapshot: read now if alive, else the last one kept */
static int seg_current(struct seg *s, struct prof_snapshot **out)
{
	const struct prof_snapshot *kept = seg_kept(s);

	if (s->alive && !seg_read(s, out))
		return 0;
	if (!kept)
		return -ESRCH;
	return snap_copy(kept, out);
}

int seg_snapshot(uid_t uid, pid_t pid, int mode, __u32 seconds, struct seg_answer *a)
{
	struct prof_snapshot *snap = NULL, *moved = NULL;
	__u64 now = profd_now_ns(), base_ns = 0, base_tick = 0, end;
	__u32 i, frame = SEG_RING; /* the frame subtracted, i before the newest */
	struct seg *s;
	int err;

	a->snap = NULL;
	a->live_fd = -1;
	a->span_ns = 0;
	a->based = false;
	err = seg_lookup(uid, pid, &s);
	if (err)
		return err;
	end = s->alive ? now : s->exit_ns;
	if (mode == PROFD_SNAP_LAST) {
		/* the oldest frame no older than what was asked: a window
		 * never covers more than N seconds (nor more than the process
		 * has lived: then it is the whole life) */
		__u64 want = (__u64)seconds * 1000000000ull;

		for (i = 0; i < s->ring_n; i++) {
			const struct seg_frame *f = ring_at(s, i);

			if (f->t_ns <= end && end - f->t_ns <= want) {
				frame = i;
				base_ns = f->t_ns;
				base_tick = f->now_tick;
			}
		}
		/* younger than N: since its start, not since a frame */
		if (end - s->born_ns <= want) {
			frame = SEG_RING;
		} else if (frame == SEG_RING) {
			/* no frame inside it (N under the interval between
			 * frames, or passes late): the whole life would pass for
			 * the last N seconds; the client says why instead */
			return -EAGAIN;
		} else if (s->dropped_ns && s->dropped_ns <= end && end - s->dropped_ns <= want) {
			/* the frame that answered it was dropped for memory:
			 * say so rather than answer a shorter window */
			sg.mem.windows_refused++;
			return -ENODATA;
		}
	} else if (mode != PROFD_SNAP_START) {
		return -EINVAL;
	}
	/*
	 * Nothing to subtract from a live process: the client reads the
	 * segment itself, as it reads its own, lazily and without a copy
	 * (a copy of a big process takes longer than reading it).
	 */
	if (frame == SEG_RING && s->alive) {
		a->live_fd = seg_live_fd(s);
		if (a->live_fd >= 0) {
			a->span_ns = end - s->born_ns;
			return 0;
		}
		log_debug("seg: pid %d: no live segment to hand over: %s", (int)pid,
			  strerror(-a->live_fd));
		a->live_fd = -1;
	}
	err = seg_current(s, &snap);
	if (err) {
		log_debug("seg: no current snapshot of pid %d: %s", (int)pid, strerror(-err));
		return err;
	}
	/* the frame as it was read; one with the counts of the frame before
	 * it: that frame's snapshot as its own time would have read it */
	if (frame != SEG_RING) {
		err = ring_rebuild(s, frame, &moved);
		if (!err && base_tick > moved->now_tick)
			err = prof_snapshot__advance(moved, base_tick - moved->now_tick);
		if (err) {
			log_debug("seg: pid %d: frame %u not rebuilt: %s", (int)pid, frame,
				  strerror(-err));
			prof_snapshot__destroy(moved);
			prof_snapshot__destroy(snap);
			return err;
		}
		err = prof_snapshot__diff(snap, moved);
		prof_snapshot__destroy(moved);
		if (err) {
			log_debug("seg: diff of pid %d against its frame: %s", (int)pid,
				  strerror(-err));
			prof_snapshot__destroy(snap);
			return err;
		}
		a->based = true;
	}
	/* never longer than the process has lived */
	a->span_ns = end - (a->based && base_ns > s->born_ns ? base_ns : s->born_ns);
	a->snap = snap;
	return 0;
}

int seg_access(uid_t uid, pid_t pid)
{
	struct seg *s;

	return seg_lookup(uid, pid, &s);
}
