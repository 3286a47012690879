// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd_sample.c - the sampling pass over every followed
 * process: its busy rates, a history frame when one is due, its exit.
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

static void seg_exited(struct seg *s)
{
	struct prof_snapshot *snap;

	/* the last look: the mapping still holds what the process wrote */
	if (!seg_read(s, &snap))
		seg_settle(s, snap);
	seg_unmap(s);
	/* no more samples */
	prof_seg_cursor__destroy(s->cursor);
	s->cursor = NULL;
	s->alive = false;
	s->exit_ns = profd_now_ns();
	sg.freed = true;
	kbpf_release_pid(s->pid);
	log_info("seg: pid %d exited; kept post-mortem", (int)s->pid);
}

/* the time between two frames of a process (see the top of this file) */
static __u64 frame_spacing(const struct seg *s)
{
	__u64 history = (__u64)conf.history_s * 1000000000ull, frames = SEG_RING, spacing;

	if (s->frame_bytes && SEG_RING_BUDGET / s->frame_bytes < frames)
		frames = SEG_RING_BUDGET / s->frame_bytes;
	if (frames < SEG_RING_MIN)
		frames = SEG_RING_MIN;
	spacing = history / frames;
	if (spacing < SEG_READ_SHARE * s->frame_ns)
		spacing = SEG_READ_SHARE * s->frame_ns;
	return spacing;
}

static void seg_take(struct seg *s, __u64 pass)
{
	/* this segment's own time: the pass over all of them began at 'pass',
	 * maybe long ago, and a segment adopted during it is younger still */
	__u64 now = profd_now_ns() > pass ? profd_now_ns() : pass;
	struct prof_seg_busy info;
	struct prof_snapshot *snap;
	struct seg_frame *f;
	__u64 spacing, ticks, t0;
	double dt, a_short, a_long;
	int err;

	if (prof_proc_start_token(s->pid) != s->start_token) {
		seg_exited(s);
		return;
	}
	err = seg_busy(s, &info);
	ticks = info.busy_ticks;
	if (err) {
		if (s->failures++ == 0)
			log_warnx("seg: failed to read pid %d: %s", (int)s->pid, strerror(-err));
		/* a segment that stays broken is dropped, not read forever */
		if (s->failures >= 50)
			seg_exited(s);
		return;
	}
	s->failures = 0;

	/* rates: instantaneous, and two moving averages (~1 s and ~30 s) */
	dt = s->info_ns ? (double)(now - s->info_ns) / 1e9 : 0;
	if (dt > 0 && info.tick_hz && ticks >= s->prev_ticks) {
		__u32 live = info.alive > s->info.alive ? info.alive : s->info.alive;

		s->rate_inst = (double)(ticks - s->prev_ticks) / (double)info.tick_hz / dt;
		/*
		 * A call's time lands when it ends: one that began before the
		 * window adds all of it to the window.  Threads in zones are at
		 * most the threads that lived in it.
		 */
		if (s->rate_inst > (double)live)
			s->rate_inst = (double)live;
		a_short = dt >= 1.0 ? 1.0 : dt;
		a_long = dt >= 30.0 ? 1.0 : dt / 30.0;
		s->rate_short += a_short * (s->rate_inst - s->rate_short);
		s->rate_long += a_long * (s->rate_inst - s->rate_long);
	}
	s->prev_ticks = ticks;
	s->info = info;
	s->info_ns = now;

	/* the ring keeps one frame per spacing: only then a full read */
	spacing = frame_spacing(s);
	if (s->take_ns && now - s->take_ns < spacing)
		return;
	/* a history dropped for memory starts again when a frame fits */
	if (!s->full && s->dropped_ns && seg_mem_all() + s->frame_bytes > conf.max_memory)
		return;
	/* stamped with its own read's time: a pass over many segments takes
	 * a while, and a frame read later than stamped made a window count
	 * less than its length */
	t0 = profd_now_ns();
	if (seg_read(s, &snap))
		return;
	s->frame_bytes = hist_snap_bytes(snap);
	{
		__u64 tick = snap->now_tick;

		ring_push(s, t0, snap, tick);
	}
	/* the read and its delta: what a frame costs */
	s->frame_ns = profd_now_ns() - t0;
	/* nothing older than the history needs (one frame past it answers
	 * its whole length) */
	while (s->ring_n > 1) {
		f = ring_at(s, s->ring_n - 1);
		if (now - f->t_ns <= (__u64)conf.history_s * 1000000000ull + spacing)
			break;
		ring_drop_oldest(s);
	}
}

void seg_sample(void)
{
	struct seg **pp, *s;
	__u64 now = profd_now_ns(), keep = (__u64)conf.keep_s * 1000000000ull;
	__u32 exited = 0, nkept = 0;
	struct kept_acc kept[64]; /* uids with exited processes: one pass, not one each */

	sg.samples++;
	/* inotify saw a segment before it was published: look again */
	seg_pending_run(now);
	if (sg.overflowed && now - sg.rescan_ns >= SEG_RESCAN_OVERFLOW_NS) {
		sg.overflowed = false;
		seg_rescan();
	}
	/* containers: on the timer, never in the way of a new segment's event */
	seg_rescan_ns();
	for (s = sg.list; s; s = s->next)
		if (s->alive)
			seg_take(s, now);
	/* age out the dead: too old, or too many (newest kept) */
	for (pp = &sg.list; (s = *pp);) {
		__u64 age = s->alive || now < s->exit_ns ? 0 : now - s->exit_ns;

		if (!s->alive && (age > keep || ++exited > conf.max_exited ||
				  !kept_fits(kept, &nkept, 64, s->uid, seg_mem(s)))) {
			*pp = s->next;
			log_debug("seg: dropping post-mortem data of pid %d", (int)s->pid);
			seg_free(s);
			sg.n--;
			sg.freed = true;
			continue;
		}
		pp = &s->next;
	}
	seg_bound();
	/* a place freed for what was refused: list /dev/shm for it (at most
	 * once a second: a uid at its share stays refused) */
	if (!sg.refused) {
		sg.freed = false;
	} else if (sg.freed && now - sg.rescan_ns >= SEG_RESCAN_OVERFLOW_NS) {
		sg.refused = sg.freed = false;
		seg_rescan();
	}
	bad_prune(now);
	kbpf_sweep();
}
