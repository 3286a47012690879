// SPDX-License-Identifier: MIT
/*
 * profd_seg.c - the processes profd follows: discovery, sampling,
 * history and post-mortem data.  Resets are not profd's: a reset is a
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
 *
 * Containers: a process in another mount namespace has a /dev/shm of its
 * own.  Its runtime hands its segment's fd to profd when it registers
 * (seg_adopt_fd: no path needed), and the periodic rescan looks into the
 * /dev/shm of every other mount namespace through /proc/<pid>/root
 * (prof_seg_list_ns), for containers that cannot reach profd's socket.
 * Either way the process is named by its host pid; its header names it as
 * its own namespaces do (its pid there, from NSpid; its uid there, from its
 * uid map), and is checked against those.  A peer in another pid namespace
 * sees only the processes of its namespace, by the pids it knows them by.
 *
 * Fair shares: a uid's processes are followed conf.uid_segs at a time, all
 * uids' conf.max_segs (each holds an fd: the rest are the connections',
 * profd_ctl.c), and its exited processes' data take conf.uid_kept_bytes at
 * most (those followed first go first).  A segment with more than one link, or whose file is
 * one already followed, is refused: one file under many names would be
 * followed, and kept, many times.
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

#define SEG_RING 64		      /* frames at most */
#define SEG_RING_MIN 8		      /* and at least, however big the process */
#define SEG_RING_BUDGET (64ull << 20) /* bytes of frames a process may take */
#define SEG_READ_SHARE 300	      /* a frame's read: at most 1/300 of its spacing */
#define SEG_MAX 4096		      /* processes followed at once */
#define SEG_TRIM_BYTES (16ull << 20)  /* a state this big freed: trim the heap */

struct seg_frame {
	__u64 t_ns; /* CLOCK_MONOTONIC when read */
	struct hist_delta *back; /* what it held that the state after it (the
				  * next frame's, or full for the newest) does
				  * not; NULL: the same counts */
	__u64 now_tick; /* the tick it stands for: past its snapshot's own
			 * when nothing changed since the frame before but
			 * time (see prof_snapshot__advance) */
};

struct seg {
	struct seg *next;
	char path[96];
	pid_t pid; /* host pid: ours */
	uid_t uid; /* host uid: the file's owner */
	__u64 start_token;
	__u32 hdr_pid; /* what its header says: the pid and uid in its own */
	uid_t hdr_uid; /* namespaces (the same as pid and uid on the host) */
	__u64 pidns;   /* its pid namespace (inode), 0 if unknown */
	char cgroup[PROF_CGROUP_MAX];
	dev_t dev; /* the file followed */
	ino_t ino;
	int fd;	   /* -1 once exited */
	void *mem; /* read-only mapping while alive */
	size_t len;
	bool alive;
	bool seen; /* in the last rescan */
	__u64 found_ns;
	__u64 born_ns;	/* its segment's creation (CLOCK_MONOTONIC), at most found_ns */
	__u64 exit_ns;
	struct prof_snapshot *full;	/* the newest state, NULL if none is kept */
	struct prof_seg_cursor *cursor; /* what the samples learned of its tree */
	struct prof_seg_busy info;	/* newest sample */
	__u64 info_ns;			/* when, 0 before the first */
	struct seg_frame ring[SEG_RING];
	__u32 ring_head, ring_n;
	__u64 frame_ns;	   /* what the last frame's read took */
	__u64 frame_bytes; /* and what it takes to keep in full */
	__u64 full_bytes, hist_bytes; /* full, the deltas */
	__u64 take_ns;	   /* the newest frame's read, even if dropped */
	__u64 dropped_ns;  /* the newest frame dropped for memory, 0 if none */
	/* moving averages of busy ticks per second at the top level */
	__u64 prev_ticks;
	double rate_inst, rate_short, rate_long;
	__u32 failures; /* consecutive failed reads */
};

/*
 * Paths that failed the checks, so they are logged once.  A published
 * segment whose first read fails is suspect first: read again at the
 * samples for SEG_SUSPECT_NS (a pending name, below), and bad (logged,
 * not read again while it is remembered) only if it never reads, so a
 * moment's disagreement with a live process costs nothing but a retry.
 */
struct seg_bad {
	struct seg_bad *newer, *older; /* the list, newest first */
	struct seg_bad *hnext;	       /* its bucket's (by inode) */
	char path[96];
	ino_t ino;
	__u64 since; /* suspect since then (profd_now_ns | 1); 0: bad */
};

#define SEG_SUSPECT_NS 2000000000ull
/*
 * The list is bounded, and found by a hash: a user can make bad files by
 * the thousand, and every rescan looks each file up.  An entry goes when
 * its file does (looked for at most every second, less often the longer
 * the list: 100 us an entry), and past SEG_BAD_MAX the oldest goes (found
 * bad again if it is still there).
 */
#define SEG_BAD_MAX 16384
#define SEG_BAD_HASH 4096
#define SEG_BAD_PRUNE_NS 1000000000ull

/*
 * Names in /dev/shm that were not ready when looked at (not sized or not
 * published yet, or suspect), looked at again at each sample for
 * SEG_PENDING_NS (a suspect: until its deadline), then every
 * SEG_PENDING_SLOW_NS until SEG_PENDING_DROP_NS from the first look; a new
 * name comes from inotify.  Neither lists the rest of /dev/shm again:
 * every new segment would otherwise cost a listing of all of it at each
 * sample for two seconds, and a user could keep profd listing thousands
 * of files by making one file after another.  Past a uid's share its
 * names wait for their process to hand its segment over, or the backstop;
 * past the array's size, a listing follows (at most one a second).  Only
 * names in our /dev/shm: a container's are looked at again by
 * seg_rescan_ns every second, and a handed-over fd is published already.
 */
#define SEG_PENDING_MAX 256
#define SEG_PENDING_UID 32 /* a uid's share: its files cannot crowd others' out */
#define SEG_PENDING_NS 2000000000ull
#define SEG_PENDING_SLOW_NS 2000000000ull
#define SEG_PENDING_DROP_NS 60000000000ull
struct seg_pending {
	char name[96]; /* in /dev/shm */
	uid_t uid;     /* its owner's */
	__u64 until;   /* looked at every sample until then */
	__u64 drop;    /* and every SEG_PENDING_SLOW_NS until then */
	__u64 next;    /* the next slow look */
};

/* a full listing of /dev/shm: the backstop's period */
#define SEG_RESCAN_NS 30000000000ull	  /* with inotify */
#define SEG_RESCAN_BLIND_NS 2000000000ull /* without */
#define SEG_RESCAN_OVERFLOW_NS 1000000000ull /* after lost events, at most */

static struct {
	struct seg *list;
	struct seg_bad *bad, *bad_oldest;
	struct seg_bad *bad_hash[SEG_BAD_HASH];
	__u32 nbad;
	__u64 bad_pruned; /* when the bad list was last pruned */
	__u32 n;
	int ifd; /* inotify on /dev/shm */
	__u64 samples;
	struct seg_pending pending[SEG_PENDING_MAX];
	__u32 npending;
	__u64 rescans; /* full rescans of /dev/shm */
	__u64 rescan_ns; /* the last full rescan's time */
	bool overflowed; /* inotify lost events, or pending names: a full rescan is due */
	bool refused;  /* a segment refused for a full table or a uid's share */
	bool freed;    /* and a place freed since */
	struct seg_mem_stat mem; /* what --max-memory dropped */
	__u64 ns_scan_ns;  /* when other mount namespaces were last looked into */
	__u64 pidns;	   /* our own */
	dev_t shm_dev;	   /* our /dev/shm's */
} sg = { .ifd = -1 };

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

int seg_inotify_fd(void)
{
	return sg.ifd;
}

static int seg_consider(const struct prof_seg_ent *e);

/* new names in /dev/shm: each looked at alone; a lost event (the queue
 * overflowed) lists all of it */
void seg_inotify_event(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	struct prof_seg_ent e;
	bool all = false, lost = false;
	ssize_t n;
	char *p;

	while ((n = read(sg.ifd, buf, sizeof(buf))) > 0)
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & (IN_IGNORED | IN_UNMOUNT))
				lost = true;
			else if (ev->mask & IN_Q_OVERFLOW)
				all = true;
			else if (!all && ev->len && !prof_seg_ent_here(ev->name, &e))
				seg_consider(&e);
		}
	/* at the next sample, at most one a second: a user who floods the
	 * queue does not keep profd listing */
	if (all)
		sg.overflowed = true;
	/* the watch went (/dev/shm unmounted): the backstop finds segments */
	if (lost) {
		log_warnx("seg: inotify on /dev/shm ended; listing it every %llu s",
			  SEG_RESCAN_BLIND_NS / 1000000000ull);
		close(sg.ifd);
		sg.ifd = -1;
		sg.overflowed = true;
	}
}

/* the newest frame, or NULL */
static struct seg_frame *ring_newest(struct seg *s)
{
	return s->ring_n ? &s->ring[(s->ring_head + SEG_RING - 1) % SEG_RING] : NULL;
}

/* the frame i before the newest (0: the newest) */
static struct seg_frame *ring_at(struct seg *s, __u32 i)
{
	return &s->ring[(s->ring_head + 2 * SEG_RING - 1 - i) % SEG_RING];
}

/* the newest full snapshot kept: the last look at exit, else the newest
 * frame's */
static struct prof_snapshot *seg_kept(const struct seg *s)
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
	    (a->nhist && memcmp(a->hist, b->hist, a->nhist * sizeof(*a->hist))))
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
static void ring_drop_oldest(struct seg *s)
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
static void seg_settle(struct seg *s, struct prof_snapshot *snap)
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
static void ring_push(struct seg *s, __u64 t, struct prof_snapshot *snap, __u64 now_tick)
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
static int ring_rebuild(struct seg *s, __u32 i, struct prof_snapshot **out)
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

static void seg_unmap(struct seg *s)
{
	if (s->mem)
		munmap(s->mem, s->len);
	s->mem = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static void seg_free(struct seg *s)
{
	seg_unmap(s);
	prof_seg_cursor__destroy(s->cursor);
	while (s->ring_n)
		ring_drop_oldest(s);
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
 * A fault since hits (the segment truncated under us: the read saw zeros
 * from there): the mapping is the file's again, and what was read goes.
 */
static bool seg_faulted(const struct seg *s, unsigned long hits)
{
	if (prof_bus_hits() == hits)
		return false;
	prof_bus_remap(s->fd, s->mem, s->len);
	return true;
}

/* a guarded read of a live segment's mapping */
static int seg_read(struct seg *s, struct prof_snapshot **out)
{
	struct stat st;
	int err;

	*out = NULL;
	if (!s->mem)
		return -ESRCH;
	/* shrunk under us: every page past the end would SIGBUS */
	if (fstat(s->fd, &st) || st.st_size < (off_t)s->len)
		return -EINVAL;
	err = prof_bus_read(s->fd, s->mem, s->len, out);
	if (!err && !seg_is(s, (*out)->pid, (*out)->start_token, (*out)->uid)) {
		prof_snapshot__destroy(*out);
		*out = NULL;
		err = -EPERM;
	}
	return err;
}

/*
 * The live segment for a client to read itself: still its full size, and
 * its header still names the process (a guarded read of it alone); an fd
 * of the read-only file description, or -errno.
 */
static int seg_live_fd(struct seg *s)
{
	const struct prof_seg_hdr *h = s->mem;
	struct stat st;
	unsigned long hits;
	bool ok;
	int fd;

	if (!s->mem || s->fd < 0)
		return -ESRCH;
	if (fstat(s->fd, &st) || st.st_size < (off_t)s->len || s->len < sizeof(*h))
		return -EINVAL;
	hits = prof_bus_hits();
	ok = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == PROF_SEG_MAGIC &&
	     seg_is(s, __atomic_load_n(&h->pid, __ATOMIC_RELAXED),
		    __atomic_load_n(&h->start_token, __ATOMIC_RELAXED),
		    __atomic_load_n(&h->uid, __ATOMIC_RELAXED));
	if (seg_faulted(s, hits))
		return -EFAULT;
	if (!ok)
		return -EPERM;
	fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

/*
 * A sample, straight from the mapping: slab headers, the nodes created
 * since the last sample, and one word per top-level node (the cursor
 * remembers which those are).  Guarded like seg_read.
 */
static int seg_busy(struct seg *s, struct prof_seg_busy *out)
{
	struct stat st;
	unsigned long hits;
	int err;

	if (!s->mem)
		return -ESRCH;
	if (!s->cursor && !(s->cursor = prof_seg_cursor__new()))
		return -ENOMEM;
	if (fstat(s->fd, &st) || st.st_size < (off_t)s->len)
		return -EINVAL;
	hits = prof_bus_hits();
	err = prof_seg_cursor__sample(s->cursor, s->mem, s->len, out);
	if (seg_faulted(s, hits))
		return -EFAULT;
	if (err)
		return err;
	return seg_is(s, out->pid, out->start_token, out->uid) ? 0 : -EPERM;
}

static struct seg_bad **bad_bucket(ino_t ino)
{
	return &sg.bad_hash[((__u64)ino * 0x9e3779b97f4a7c15ull) >> 52];
}

static struct seg_bad *bad_find(const char *path, ino_t ino)
{
	struct seg_bad *b;

	for (b = *bad_bucket(ino); b; b = b->hnext)
		if (b->ino == ino && !strcmp(b->path, path))
			return b;
	return NULL;
}

static bool bad_known(const char *path, ino_t ino)
{
	struct seg_bad *b = bad_find(path, ino);

	return b && !b->since;
}

/*
 * path (uid's) is not ready: look at it again at the samples until 'until'
 * (0: SEG_PENDING_NS from its first look, and a pending name keeps its
 * first time, so one never published is dropped, to come back at the
 * backstop; a suspect's deadline is its own).
 */
static void seg_retry(const char *path, uid_t uid, __u64 until)
{
	static const char dir[] = "/dev/shm/";
	__u64 now = profd_now_ns();
	struct seg_pending *p;
	bool first = !until;
	__u32 i, mine = 0;

	if (first)
		until = now + SEG_PENDING_NS;
	if (strncmp(path, dir, sizeof(dir) - 1))
		return;
	path += sizeof(dir) - 1;
	for (i = 0; i < sg.npending; i++) {
		if (!strcmp(sg.pending[i].name, path))
			break;
		mine += sg.pending[i].uid == uid;
	}
	if (i == sg.npending) {
		if (mine >= SEG_PENDING_UID)
			return;
		if (sg.npending == SEG_PENDING_MAX) {
			sg.overflowed = true;
			return;
		}
		sg.npending++;
		p = &sg.pending[i];
		snprintf(p->name, sizeof(p->name), "%s", path);
		p->uid = uid;
		p->until = until;
		/* a suspect is settled at its deadline */
		p->drop = first ? now + SEG_PENDING_DROP_NS : until;
		p->next = 0;
		return;
	}
	p = &sg.pending[i];
	if (!first && until > p->until)
		p->until = p->drop = until;
}

/* a few lines a minute: a user can make bad segments by the thousand */
static bool seg_warn_ok(void)
{
	static __u64 window;
	static __u32 n, dropped;
	__u64 now = profd_now_ns();

	if (now - window >= 60000000000ull) {
		if (dropped)
			log_warnx("seg: %u more segments skipped, not logged", dropped);
		window = now;
		n = dropped = 0;
	}
	if (n < 10) {
		n++;
		return true;
	}
	dropped++;
	return false;
}

static void bad_unlink(struct seg_bad *b)
{
	struct seg_bad **pp = bad_bucket(b->ino);

	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	*(b->newer ? &b->newer->older : &sg.bad) = b->older;
	*(b->older ? &b->older->newer : &sg.bad_oldest) = b->newer;
	free(b);
	sg.nbad--;
}

static struct seg_bad *bad_new(const char *path, ino_t ino, __u64 since)
{
	struct seg_bad *b, **bucket = bad_bucket(ino);

	if (sg.nbad >= SEG_BAD_MAX)
		bad_unlink(sg.bad_oldest);
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	snprintf(b->path, sizeof(b->path), "%s", path);
	b->ino = ino;
	b->since = since;
	b->hnext = *bucket;
	*bucket = b;
	b->older = sg.bad;
	*(sg.bad ? &sg.bad->newer : &sg.bad_oldest) = b;
	sg.bad = b;
	sg.nbad++;
	return b;
}

/* its file is gone (or another file has its name); a handed-over
 * segment's (no path: "pid N's segment") stays until it is evicted */
static bool bad_gone(const struct seg_bad *b)
{
	struct stat st;

	if (b->path[0] != '/')
		return false;
	return lstat(b->path, &st) ? errno == ENOENT || errno == ENOTDIR : st.st_ino != b->ino;
}

static void bad_prune(__u64 now)
{
	__u64 every = (__u64)sg.nbad * 100000ull;
	struct seg_bad *b, *older;

	if (every < SEG_BAD_PRUNE_NS)
		every = SEG_BAD_PRUNE_NS;
	if (!sg.nbad || now - sg.bad_pruned < every)
		return;
	sg.bad_pruned = now;
	for (b = sg.bad; b; b = older) {
		older = b->older;
		if (bad_gone(b))
			bad_unlink(b);
	}
}

static void bad_add(const char *path, ino_t ino, const char *why)
{
	struct seg_bad *b = bad_find(path, ino);

	if (b && !b->since)
		return;
	if (seg_warn_ok())
		log_warnx("seg: skipping %s: %s", path, why);
	if (b)
		b->since = 0;
	else
		bad_new(path, ino, 0);
}

/* a suspect that read after all */
static void bad_forget(const char *path, ino_t ino)
{
	struct seg_bad *b = bad_find(path, ino);

	if (b && b->since)
		bad_unlink(b);
}

/* a published segment that did not read: bad once it has not for
 * SEG_SUSPECT_NS, else looked at again at the rescans until then */
static void bad_suspect(const char *path, ino_t ino, uid_t uid, const char *why)
{
	struct seg_bad *b = bad_find(path, ino);
	__u64 now = profd_now_ns() | 1; /* never 0, never before since */

	if (!b && !(b = bad_new(path, ino, now)))
		return;
	if (!b->since)
		return;
	if (now - b->since >= SEG_SUSPECT_NS) {
		bad_add(path, ino, why);
		return;
	}
	seg_retry(path, uid, b->since + SEG_SUSPECT_NS + 200000000ull);
}

static struct seg *seg_find_path(const char *path)
{
	struct seg *s;

	for (s = sg.list; s; s = s->next)
		if (!strcmp(s->path, path))
			return s;
	return NULL;
}

/* processes followed that hold an fd (conf.max_segs) */
static bool seg_fds_full(void)
{
	struct seg *s;
	__u32 n = 0;

	for (s = sg.list; s; s = s->next)
		n += s->fd >= 0;
	return n >= conf.max_segs;
}

/*
 * Every place taken (conf.max_segs, or the table), and a process of uid
 * comes: it gets one if another uid (not root) has more processes
 * followed than uid has, by no longer following the newest of that uid's
 * (the one with the least history; it is looked for again when a place
 * frees).  So many uids (a subordinate range, /etc/subuid) cannot keep
 * another user's processes out.  True if a place was freed.
 */
static bool seg_evict_for(uid_t uid)
{
	struct seg *s, *pick = NULL, **pp;
	__u32 n = 0, most = 0, mine, k;
	uid_t *u = malloc(sg.n * sizeof(*u) + 1);

	if (!u)
		return false;
	for (s = sg.list; s; s = s->next)
		if (s->alive && s->uid != 0)
			u[n++] = s->uid;
	profd_uid_sort(u, n);
	mine = profd_uid_run(u, n, uid);
	for (s = sg.list; s; s = s->next) {
		if (!s->alive || s->uid == 0 || (k = profd_uid_run(u, n, s->uid)) <= mine ||
		    k < most)
			continue;
		if (k > most || !pick || s->found_ns > pick->found_ns)
			pick = s;
		most = k;
	}
	free(u);
	if (!pick)
		return false;
	if (seg_warn_ok())
		log_warnx("seg: every place taken: no longer following pid %d of uid %u (it has "
			  "%u) for uid %u",
			  (int)pick->pid, (unsigned)pick->uid, most, (unsigned)uid);
	for (pp = &sg.list; *pp != pick; pp = &(*pp)->next)
		;
	*pp = pick->next;
	seg_free(pick);
	sg.n--;
	sg.refused = true;
	return true;
}

static __u32 seg_alive_of(uid_t uid)
{
	struct seg *s;
	__u32 n = 0;

	for (s = sg.list; s; s = s->next)
		n += s->alive && s->uid == uid;
	return n;
}

/*
 * pid's pid namespace: its inode, which needs ptrace rights over pid (root
 * has them; profd's systemd unit does not).  Without them, NSpid still
 * says whether it is ours: another is SEG_PIDNS_OTHER then, which matches
 * no peer's (a container's peer sees none of its namespace's processes
 * then, rather than every container's, unless the peer proves its own
 * with an fd of it: seg_adopt_fd's pidns).  0 if pid is gone.
 */

__u64 seg_pidns_of(pid_t pid)
{
	__u64 ino = prof_ns_ino(pid, "pid");
	int levels;

	if (ino)
		return ino;
	levels = prof_proc_nslevels(pid);
	if (levels <= 0)
		return 0;
	return levels == 1 ? sg.pidns : SEG_PIDNS_OTHER;
}

/* a process's namespaces as its header names it: 0 or -errno */
static int seg_ns_names(pid_t pid, uid_t uid, __u32 *hdr_pid, uid_t *hdr_uid, __u64 *pidns)
{
	int err;

	*pidns = seg_pidns_of(pid);
	if (!*pidns)
		return -ESRCH;
	*hdr_pid = (__u32)pid;
	*hdr_uid = uid;
	if (*pidns != sg.pidns && (err = prof_proc_nspid(pid, hdr_pid)))
		return err;
	return prof_proc_ns_uid(pid, uid, hdr_uid);
}

/* the segment's magic, a guarded read; 0 if it faults */
static __u64 seg_magic(const struct seg *s)
{
	unsigned long hits = prof_bus_hits();
	__u64 magic = *(const volatile __u64 *)s->mem;

	return seg_faulted(s, hits) ? 0 : magic;
}

/*
 * Verify and map one new segment, open read-only at fd (taken): e names
 * it (pid and uid ours; e->ns_pid, if any, what its header says); pidns,
 * if not 0, the pid namespace its process proved with an fd of it, which
 * names a namespace /proc/PID/ns would not let us name.  0, or -errno
 * (-EALREADY: followed already).
 */
static int seg_follow(const struct prof_seg_ent *e, int fd, __u64 proved)
{
	struct prof_snapshot *snap = NULL;
	struct stat st, pst;
	char proc[32];
	struct seg *s, *o;
	__u32 hdr_pid;
	uid_t hdr_uid;
	__u64 pidns;
	int err = -EPERM;

	if (fstat(fd, &st) || bad_known(e->path, st.st_ino))
		goto cleanup;
	/* one file, one process: no second name for it, nor a second look */
	if (st.st_nlink > 1) {
		bad_add(e->path, st.st_ino, "more than one link to it");
		goto cleanup;
	}
	for (o = sg.list; o; o = o->next)
		if (o->alive && o->ino == st.st_ino && o->dev == st.st_dev)
			break;
	if (o) {
		/* a container's, handed over and found in its /dev/shm too */
		if (o->pid != (pid_t)e->pid || o->start_token != e->start_token)
			bad_add(e->path, st.st_ino, "the file of a segment already followed");
		err = -EALREADY;
		goto cleanup;
	}
	err = seg_ns_names((pid_t)e->pid, st.st_uid, &hdr_pid, &hdr_uid, &pidns);
	if (!err && e->ns_pid && e->ns_pid != hdr_pid)
		err = -ESRCH;
	/* only where NSpid says another and /proc/PID/ns could not say which */
	if (!err && pidns == SEG_PIDNS_OTHER && proved && proved != SEG_PIDNS_OTHER &&
	    proved != sg.pidns)
		pidns = proved;
	/* gone meanwhile is no fault of the segment's */
	if (err && prof_proc_start_token((pid_t)e->pid) == e->start_token)
		bad_add(e->path, st.st_ino, "its pid or uid cannot be translated");
	if (err)
		goto cleanup;
	err = -EDQUOT;
	/* the owner's share of processes followed; a listing when a place
	 * frees looks for it again */
	if (seg_alive_of(st.st_uid) >= conf.uid_segs) {
		sg.refused = true;
		if (seg_warn_ok())
			log_warnx("seg: uid %u has %u processes followed; not following pid %u yet",
				  (unsigned)st.st_uid, conf.uid_segs, e->pid);
		goto cleanup;
	}
	err = -EPERM;
	snprintf(proc, sizeof(proc), "/proc/%u", e->pid);
	/* the process itself must belong to the file's owner */
	if (stat(proc, &pst) || pst.st_uid != st.st_uid) {
		bad_add(e->path, st.st_ino, "owner differs from the process's");
		goto cleanup;
	}
	/* being created: not sized or not published yet: pending */
	err = -EAGAIN;
	if (st.st_size < PROF_SEG_HDR_SIZE) {
		seg_retry(e->path, st.st_uid, 0);
		goto cleanup;
	}
	err = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto cleanup;
	snprintf(s->path, sizeof(s->path), "%s", e->path);
	s->pid = (pid_t)e->pid;
	s->uid = e->uid;
	s->start_token = e->start_token;
	s->hdr_pid = hdr_pid;
	s->hdr_uid = hdr_uid;
	s->pidns = pidns;
	if (pidns != sg.pidns)
		prof_proc_cgroup(s->pid, s->cgroup, sizeof(s->cgroup));
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->fd = fd;
	s->len = (size_t)st.st_size;
	s->mem = mmap(NULL, s->len, PROT_READ, MAP_SHARED, fd, 0);
	if (s->mem == MAP_FAILED) {
		err = -errno;
		s->mem = NULL;
		seg_free(s);
		if (err == -ENOMEM)
			seg_retry(e->path, st.st_uid, 0);
		return err;
	}
	err = seg_read(s, &snap);
	if (err) {
		/* unpublished (magic not yet stored) looks the same as corrupt:
		 * only a segment with a magic is suspect, and bad only if it
		 * stays so */
		if (err != -EINVAL || s->len >= PROF_SEG_HDR_SIZE) {
			if (err == -EPERM || err == -EFAULT)
				bad_add(e->path, st.st_ino, strerror(-err));
			else if (seg_magic(s) == PROF_SEG_MAGIC)
				bad_suspect(e->path, st.st_ino, st.st_uid, strerror(-err));
			else
				seg_retry(e->path, st.st_uid, 0);
		}
		seg_free(s);
		return err;
	}
	/* every place taken: one of a uid with more, once this one proved
	 * itself a process's (else a bad file would cost another its place) */
	if ((sg.n >= SEG_MAX || seg_fds_full()) && !seg_evict_for(st.st_uid)) {
		sg.refused = true;
		prof_snapshot__destroy(snap);
		seg_free(s);
		return -ENOSPC;
	}
	bad_forget(e->path, st.st_ino);
	s->alive = true;
	s->found_ns = profd_now_ns();
	s->born_ns = snap->mono_base_ns && snap->mono_base_ns < s->found_ns ? snap->mono_base_ns
									    : s->found_ns;
	/* the checking read is the first frame: no second full read for it */
	ring_push(s, s->found_ns, snap, snap->now_tick);
	s->next = sg.list;
	sg.list = s;
	sg.n++;
	if (s->pidns != sg.pidns)
		log_info("seg: following pid %d (%s), uid %u: pid %u in its namespace, %s",
			 (int)s->pid, snap->comm, (unsigned)s->uid, s->hdr_pid,
			 s->cgroup[0] ? s->cgroup : "no cgroup");
	else
		log_info("seg: following pid %d (%s), uid %u", (int)s->pid, snap->comm,
			 (unsigned)s->uid);
	return 0;
cleanup:
	close(fd);
	return err;
}

/* open, verify and map one new segment found by its name: seg_follow's
 * answer, -ENOSPC for a full table */
static int seg_adopt(const struct prof_seg_ent *e)
{
	int fd;

	if (!e->alive)
		return -ESRCH;
	fd = prof_seg_open(e);
	if (fd >= 0)
		return seg_follow(e, fd, 0);
	/* out of fds or memory for now: again at the samples */
	if (fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM)
		seg_retry(e->path, e->uid, 0);
	return fd;
}

/* a segment of our /dev/shm handed over: its name, looked at now */
static void seg_consider_fd(int fd)
{
	char self[40], path[128];
	struct prof_seg_ent e;
	const char *name;
	ssize_t n;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = 0;
	name = strrchr(path, '/');
	if (name && !prof_seg_ent_here(name + 1, &e))
		seg_consider(&e);
}

int seg_adopt_fd(int fd, pid_t pid, uid_t uid, __u64 pidns)
{
	struct prof_seg_ent e = { .pid = (__u32)pid, .uid = (__u32)uid };
	struct statfs sf;
	struct stat st;
	char self[40];
	__u32 hdr_pid;
	int rfd, err;

	/* a shm object of the peer's, private: nothing else is mapped */
	if (fstat(fd, &st) || fstatfs(fd, &sf))
		return -errno;
	/* in our /dev/shm under a name that names it here: found as usual,
	 * but now, so the peer's next request finds it followed (its name
	 * may wait in inotify's queue, or for a sample, as not ready then) */
	if (st.st_dev == sg.shm_dev && seg_pidns_of(pid) == sg.pidns) {
		if (sg.ifd >= 0)
			seg_inotify_event();
		seg_consider_fd(fd);
		return 0;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != uid || (st.st_mode & 0077) ||
	    sf.f_type != TMPFS_MAGIC)
		return -EPERM;
	e.start_token = prof_proc_start_token(pid);
	if (!e.start_token || prof_proc_nspid(pid, &hdr_pid))
		return -ESRCH;
	e.ns_pid = hdr_pid;
	e.alive = true;
	snprintf(e.path, sizeof(e.path), "pid %d's segment (handed over)", (int)pid);
	/* a read-only open file of our own: the peer's may write, and ours
	 * goes to clients as it is */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (rfd < 0)
		return -errno;
	err = seg_follow(&e, rfd, pidns);
	return err == -EALREADY ? 0 : err;
}

static struct seg *seg_find_alive(pid_t pid, __u64 start_token)
{
	struct seg *s;

	for (s = sg.list; s; s = s->next)
		if (s->alive && s->pid == pid && s->start_token == start_token)
			return s;
	return NULL;
}

/* the /dev/shm of other mount namespaces: at most once a second (a walk of
 * /proc), for containers that did not hand their segment over; from the
 * sampling timer, so a burst of new segments (inotify) does not walk it */
static void seg_rescan_ns(void)
{
	struct prof_seg_ent *ents = NULL;
	__u64 now = profd_now_ns();
	size_t n = 0, i;
	int err;

	if (conf.no_ns_scan || (sg.ns_scan_ns && now - sg.ns_scan_ns < 1000000000ull))
		return;
	sg.ns_scan_ns = now;
	err = prof_seg_list_ns((uid_t)-1, &ents, &n);
	if (err) {
		log_warnx("seg: failed to look into other mount namespaces: %s", strerror(-err));
		return;
	}
	for (i = 0; i < n; i++)
		if (!seg_find_alive((pid_t)ents[i].pid, ents[i].start_token))
			seg_adopt(&ents[i]);
	free(ents);
}

/* a segment's name listed or reported: followed, unless it is already or
 * was found bad */
static int seg_consider(const struct prof_seg_ent *e)
{
	struct seg *s = seg_find_path(e->path);

	if (s && s->start_token == e->start_token)
		return 0;
	/* skipped before: not opened again (seg_follow checks the inode it
	 * opens too) */
	if (bad_known(e->path, (ino_t)e->ino))
		return -EPERM;
	return seg_adopt(e);
}

void seg_rescan(void)
{
	struct prof_seg_ent *ents = NULL;
	size_t n = 0, i;
	int err;

	sg.rescans++;
	sg.rescan_ns = profd_now_ns();
	err = prof_seg_list((uid_t)-1, &ents, &n);
	if (err) {
		log_warnx("seg: failed to list /dev/shm: %s", strerror(-err));
		return;
	}
	for (i = 0; i < n; i++)
		seg_consider(&ents[i]);
	free(ents);
}

/* the pending names, again: each until followed, found bad, gone or late */
static void seg_pending_run(__u64 now)
{
	struct seg_pending *p;
	struct prof_seg_ent e;
	__u32 i = 0;
	bool last;
	int err;

	while (i < sg.npending) {
		p = &sg.pending[i];
		/* the last look at its time (a suspect's settles it) */
		last = now >= p->drop;
		if (!last && now >= p->until) {
			if (now < p->next) {
				i++;
				continue;
			}
			p->next = now + SEG_PENDING_SLOW_NS;
		}
		err = prof_seg_ent_here(p->name, &e);
		if (err == -ENOENT || err == -EINVAL)
			goto drop; /* gone, or no longer a segment's */
		if (err) {
			i++; /* no fd, no memory: again */
			continue;
		}
		/* followed (0), found bad, or refused for a full table or its
		 * user's share (looked for again when a place frees): done */
		err = seg_consider(&e);
		if (!last && err && err != -EDQUOT && err != -ENOSPC &&
		    !bad_known(e.path, (ino_t)e.ino)) {
			i++;
			continue;
		}
drop:
		sg.pending[i] = sg.pending[--sg.npending];
	}
}

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

/* what a process's data take: its newest state, its frames */
static __u64 seg_mem(const struct seg *s)
{
	return s->full_bytes + s->hist_bytes;
}

/* what every process's take */
static __u64 seg_mem_all(void)
{
	const struct seg *s;
	__u64 b = 0;

	for (s = sg.list; s; s = s->next)
		b += seg_mem(s);
	/* the sampled stacks too: bounded apart, counted here */
	return b + sample_bytes();
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

/*
 * Whether an exited process of uid taking b bytes fits in uid's share,
 * counting those kept so far in this pass (kept[], n of them, one per uid);
 * if it does, it is counted.
 */
struct kept_acc {
	uid_t uid;
	__u64 bytes;
};

static bool kept_fits(struct kept_acc *kept, __u32 *n, __u32 cap, uid_t uid, __u64 b)
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
static void seg_bound(void)
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

/* the newest entry for pid the peer may see; alive ones first */
static int seg_lookup(uid_t uid, pid_t pid, struct seg **out)
{
	struct seg *s, *found = NULL;

	for (s = sg.list; s; s = s->next) {
		if (s->pid != pid)
			continue;
		if (!found || (s->alive && !found->alive) ||
		    (s->alive == found->alive && s->found_ns > found->found_ns))
			found = s;
	}
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
	for (s = sg.list; s; s = s->next) {
		if (s->pidns != pidns || s->hdr_pid != (__u32)pid)
			continue;
		if (!found || (s->alive && !found->alive) ||
		    (s->alive == found->alive && s->found_ns > found->found_ns))
			found = s;
	}
	return found ? found->pid : -ESRCH;
}

void seg_where(pid_t pid, __u64 pidns, __u32 *ns_pid, char *cgroup, size_t len, __u32 *uid)
{
	struct seg *s, *found = NULL;

	*ns_pid = 0;
	*uid = 0;
	cgroup[0] = 0;
	for (s = sg.list; s; s = s->next) {
		if (s->pid != pid)
			continue;
		if (!found || (s->alive && !found->alive) ||
		    (s->alive == found->alive && s->found_ns > found->found_ns))
			found = s;
	}
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

int seg_live_mem(pid_t pid, const void **mem, size_t *len)
{
	struct seg *s;

	for (s = sg.list; s; s = s->next)
		if (s->alive && s->pid == pid && s->mem) {
			if (mem)
				*mem = s->mem;
			if (len)
				*len = s->len;
			return 0;
		}
	return -ESRCH;
}

int seg_access(uid_t uid, pid_t pid)
{
	struct seg *s;

	return seg_lookup(uid, pid, &s);
}
