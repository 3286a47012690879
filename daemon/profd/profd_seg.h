/* SPDX-License-Identifier: MIT */
/*
 * daemon/profd/profd_seg.h - what profd's segment files (profd_seg.c,
 * profd_discover.c, profd_sample.c, profd_history.c, profd_query.c) share:
 * a followed process's state, the table of them, the calls between them.
 */
#ifndef PROFD_SEG_H
#define PROFD_SEG_H

#include "profd.h"

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

struct seg_state {
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
};
extern struct seg_state sg;

/*
 * Whether an exited process of uid taking b bytes fits in uid's share,
 * counting those kept so far in this pass (kept[], n of them, one per uid);
 * if it does, it is counted.
 */
struct kept_acc {
	uid_t uid;
	__u64 bytes;
};

/* profd_seg.c */
void seg_unmap(struct seg *s);
void seg_free(struct seg *s);
/* the one guarded look at a live segment's mapping (profd_seg.c) */
int seg_guard(struct seg *s, int (*look)(struct seg *s, void *arg),
	      void (*undo)(struct seg *s, void *arg), void *arg);
int seg_read(struct seg *s, struct prof_snapshot **out);
int seg_live_fd(struct seg *s);
int seg_busy(struct seg *s, struct prof_seg_busy *out);

/* profd_history.c */
struct seg_frame *ring_at(struct seg *s, __u32 i);
struct prof_snapshot *seg_kept(const struct seg *s);
void ring_drop_oldest(struct seg *s);
void seg_settle(struct seg *s, struct prof_snapshot *snap);
void ring_push(struct seg *s, __u64 t, struct prof_snapshot *snap, __u64 now_tick);
int ring_rebuild(struct seg *s, __u32 i, struct prof_snapshot **out);
__u64 seg_mem(const struct seg *s);
__u64 seg_mem_all(void);
bool kept_fits(struct kept_acc *kept, __u32 *n, __u32 cap, uid_t uid, __u64 b);
void seg_bound(void);

/* profd_discover.c */
void bad_prune(__u64 now);
void seg_rescan_ns(void);
int seg_consider(const struct prof_seg_ent *e);
void seg_pending_run(__u64 now);

#endif /* PROFD_SEG_H */
