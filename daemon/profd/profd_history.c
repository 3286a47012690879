// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd_history.c - a followed process's history: the ring of
 * frames, its newest state, and the memory bound over all of them.
 *
 * History: each sample is an instantaneous rate (calls and busy time per
 * second, summed over the process's top-level zones) folded into two
 * exponential moving averages (iProf's "instantaneous, short and long"),
 * and a ring of frames answers "the last N seconds" as a diff against the
 * frame whose age is nearest N.  Frames are spaced as finely as the
 * history allows (history_s / SEG_RING) unless the process is big: as many
 * full snapshots as SEG_RING_BUDGET holds (but SEG_RING_MIN frames at
 * least), and reading one at most 1/SEG_READ_SHARE of the time between
 * two.  The read that adopts a process is the ring's first frame.
 *
 * Only the newest state is a full snapshot ("full": the newest frame's, or
 * the last look at exit); each frame keeps what it held that the state
 * after it does not (profd_hist.c), and is rebuilt exactly when a window
 * needs it.  A process that did not change since the newest frame (an
 * idle one, a stopped one) gets a frame with no delta at all.
 *
 * Memory: history and kept data take conf.max_memory bytes at most.  Past
 * it, the oldest frame of the process that takes the most goes first, then
 * exited processes (the longest gone first), then a live process's whole
 * history (the biggest first; it starts again when it fits).  A window
 * that reaches back to a dropped frame is refused (-ENODATA), never
 * answered shorter.
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
#include "profd_stacks.h"
#include "proto.h"
#include "profd_seg.h"

/* the newest frame, or NULL */
static struct seg_frame *ring_newest(struct seg *s)
{
	return s->ring_n ? &s->ring[(s->ring_head + SEG_RING - 1) % SEG_RING] : NULL;
}

/* the frame i before the newest (0: the newest) */
struct seg_frame *ring_at(struct seg *s, __u32 i)
{
	return &s->ring[(s->ring_head + 2 * SEG_RING - 1 - i) % SEG_RING];
}

/* the newest full snapshot kept: the last look at exit, else the newest
 * frame's */
struct prof_snapshot *seg_kept(const struct seg *s)
{
	return s->full;
}

/*
 * The same counts, byte for byte: two reads of a process that did nothing
 * in between.  Both come from the same reader, which zeroes what it
 * allocates, so padding compares equal too.
 */
static bool snap_same(const struct prof_snapshot *a, const struct prof_snapshot *b)
{
	__u32 i;

	if (a->nsites != b->nsites || a->nthreads != b->nthreads || a->nhist != b->nhist ||
	    a->flags != b->flags || a->exit_tick != b->exit_tick ||
	    a->sites_dropped != b->sites_dropped || a->threads_dropped != b->threads_dropped ||
	    memcmp(a->comm, b->comm, sizeof(a->comm)) ||
	    memcmp(a->sites, b->sites, a->nsites * sizeof(*a->sites)) ||
	    (a->nhist && memcmp(a->hist, b->hist, a->nhist * sizeof(*a->hist))) ||
	    !hist_annot_same(a, b))
		return false;
	for (i = 0; i < a->nthreads; i++) {
		const struct prof_snap_thread *x = &a->threads[i], *y = &b->threads[i];
		__u32 j;

		/* up to the nodes, and after them but for the CPU time */
		if (memcmp(x, y, offsetof(struct prof_snap_thread, nodes)) ||
		    x->nnodes != y->nnodes || x->gen != y->gen || x->folds != y->folds ||
		    x->oncpu_ns != y->oncpu_ns ||
		    memcmp(x->comm, y->comm, sizeof(x->comm)))
			return false;
		/* time passing moves only the open calls and the root */
		for (j = 1; j < x->nnodes; j++) {
			struct prof_snap_node m = x->nodes[j], n = y->nodes[j];

			if (m.open != n.open || prof_snap_closed(&m) != prof_snap_closed(&n))
				return false;
			m.ticks = n.ticks = m.open_ticks = n.open_ticks = 0;
			m.child_ticks = n.child_ticks = 0;
			if (memcmp(&m, &n, sizeof(m)))
				return false;
		}
	}
	return true;
}

/* the oldest frame goes, and what it kept */
void ring_drop_oldest(struct seg *s)
{
	struct seg_frame *f = ring_at(s, s->ring_n - 1);

	s->hist_bytes -= hist_delta__bytes(f->back);
	hist_delta__destroy(f->back);
	f->back = NULL;
	s->ring_n--;
}

/*
 * snap (owned) is the newest state: the newest frame keeps only what it
 * held that snap does not.  A snap with the same counts as the state it
 * follows is dropped for it.  A delta that cannot be made takes the
 * frames with it (they could no longer be rebuilt).
 */
void seg_settle(struct seg *s, struct prof_snapshot *snap)
{
	struct seg_frame *f = ring_newest(s);
	struct hist_delta *d;

	if (s->full && snap_same(snap, s->full)) {
		prof_snapshot__destroy(snap);
		return;
	}
	if (s->full && f) {
		d = f->back ? NULL : hist_delta__new(s->full, snap);
		if (!d) {
			log_warnx("seg: pid %d: no delta for its history (%s); frames dropped",
				  (int)s->pid, f->back ? "twice settled" : strerror(errno));
			while (s->ring_n)
				ring_drop_oldest(s);
		} else {
			f->back = d;
			s->hist_bytes += hist_delta__bytes(d);
		}
	}
	prof_snapshot__destroy(s->full);
	/* a big state freed: give its pages back now rather than keep them
	 * as free heap until the next read (RSS is what a host sees) */
	if (s->full_bytes >= SEG_TRIM_BYTES)
		malloc_trim(0);
	s->full = snap;
	s->full_bytes = hist_snap_bytes(snap);
}

/* the next frame, read at t and standing for now_tick (snap owned): it
 * replaces the oldest when the ring is full */
void ring_push(struct seg *s, __u64 t, struct prof_snapshot *snap, __u64 now_tick)
{
	struct seg_frame *f;

	seg_settle(s, snap);
	if (s->ring_n == SEG_RING)
		ring_drop_oldest(s);
	f = &s->ring[s->ring_head];
	f->t_ns = t;
	f->back = NULL;
	f->now_tick = now_tick;
	s->take_ns = t;
	s->ring_head = (s->ring_head + 1) % SEG_RING;
	s->ring_n++;
}

/* the frame i before the newest as it was read: a copy of the newest
 * state taken back through the deltas of the frames after it */
int ring_rebuild(struct seg *s, __u32 i, struct prof_snapshot **out)
{
	struct prof_snapshot *w;
	__u32 k;
	int err;

	*out = NULL;
	if (!s->full || i >= s->ring_n)
		return -ENODATA;
	w = hist_snap_clone(s->full);
	if (!w)
		return -errno;
	for (k = 0; k <= i; k++) {
		const struct seg_frame *f = ring_at(s, k);

		err = f->back ? hist_delta__apply(w, f->back) : 0;
		if (err) {
			prof_snapshot__destroy(w);
			return err;
		}
	}
	*out = w;
	return 0;
}
/* what a process's data take: its newest state, its frames */
__u64 seg_mem(const struct seg *s)
{
	return s->full_bytes + s->hist_bytes;
}

/* what every process's take */
__u64 seg_mem_all(void)
{
	const struct seg *s;
	__u64 b = 0;

	for (s = sg.list; s; s = s->next)
		b += seg_mem(s);
	/* the sampled stacks too: bounded apart, counted here */
	return b + sample_bytes();
}
/*
 * Memory: what --max-memory bounds, and what it dropped (see the top of
 * this file for the order).
 */

/* the newest frame dropped for memory */
static void seg_dropped(struct seg *s, const struct seg_frame *f)
{
	if (f->t_ns > s->dropped_ns)
		s->dropped_ns = f->t_ns;
	sg.mem.last_drop_pid = s->pid;
	sg.mem.last_drop_ns = s->dropped_ns;
}

/* history frames past the newest, oldest first */
static void seg_drop_oldest_frame(struct seg *s)
{
	seg_dropped(s, ring_at(s, s->ring_n - 1));
	ring_drop_oldest(s);
	sg.mem.frames_dropped++;
}

/* a live process's whole history: it starts again when it fits */
static void seg_drop_history(struct seg *s)
{
	if (s->ring_n)
		seg_dropped(s, ring_at(s, 0));
	while (s->ring_n)
		ring_drop_oldest(s);
	prof_snapshot__destroy(s->full);
	s->full = NULL;
	s->full_bytes = 0;
	sg.mem.histories_dropped++;
}

bool kept_fits(struct kept_acc *kept, __u32 *n, __u32 cap, uid_t uid, __u64 b)
{
	__u32 i;

	for (i = 0; i < *n && kept[i].uid != uid; i++)
		;
	if (i == *n) {
		if (*n == cap)
			return b <= conf.uid_kept_bytes;
		kept[(*n)++] = (struct kept_acc){ uid, 0 };
	}
	if (kept[i].bytes + b > conf.uid_kept_bytes)
		return false;
	kept[i].bytes += b;
	return true;
}

/* within conf.max_memory: drop in the order the top of this file says */
void seg_bound(void)
{
	struct seg **pp, *s, *pick;
	__u64 total;

	while ((total = seg_mem_all()) > conf.max_memory) {
		/* the oldest frame of the process that takes the most */
		pick = NULL;
		for (s = sg.list; s; s = s->next)
			if (s->ring_n >= 2 && (!pick || seg_mem(s) > seg_mem(pick)))
				pick = s;
		if (pick) {
			seg_drop_oldest_frame(pick);
			continue;
		}
		/* an exited process, the longest gone first */
		for (s = sg.list; s; s = s->next)
			if (!s->alive && (!pick || s->exit_ns < pick->exit_ns))
				pick = s;
		if (pick) {
			for (pp = &sg.list; *pp != pick; pp = &(*pp)->next)
				;
			*pp = pick->next;
			log_info("seg: dropping post-mortem data of pid %d: over --max-memory "
				 "(%llu bytes)",
				 (int)pick->pid, (unsigned long long)total);
			seg_free(pick);
			sg.n--;
			sg.freed = true;
			sg.mem.kept_dropped++;
			continue;
		}
		/* a live process's whole history, the biggest first */
		for (s = sg.list; s; s = s->next)
			if (s->full && (!pick || seg_mem(s) > seg_mem(pick)))
				pick = s;
		if (!pick)
			break; /* no history left to drop */
		log_info("seg: dropping the history of pid %d: over --max-memory (%llu bytes)",
			 (int)pick->pid, (unsigned long long)total);
		seg_drop_history(pick);
	}
}

void seg_mem_stat(struct seg_mem_stat *st)
{
	const struct seg *s;

	*st = sg.mem;
	st->history = st->kept = st->frames = 0;
	for (s = sg.list; s; s = s->next) {
		if (s->alive)
			st->history += s->full_bytes + s->hist_bytes;
		else
			st->kept += s->full_bytes + s->hist_bytes;
		st->frames += s->ring_n;
	}
}
