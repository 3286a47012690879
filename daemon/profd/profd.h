/* SPDX-License-Identifier: MIT */
/*
 * profd.h - internals shared by profd's files (not installed).
 *
 *	profd.c		main loop, readiness
 *	profd_conf.c	options (conf), the clock
 *	profd_log.c	logging
 *	profd_bpf.c	the sched_switch program and the slot table
 *	profd_seg.c	the followed processes (profd_seg.h), their guarded read
 *	profd_discover.c finding segments
 *	profd_sample.c	sampling
 *	profd_history.c	history frames, the memory bound
 *	profd_query.c	what clients ask of them
 *	profd_hist.c	history frames as reverse deltas
 *	profd_ctl.c	the control socket
 *	profd_peer.c	a connection's peer: its pidfd, its pid namespace
 *	profd_share.c	fair shares among uids
 */
#ifndef PROFD_H
#define PROFD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "snapshot.h"

#include "profd_conf.h"
#include "profd_log.h"

/* profd_bpf.c */
int kbpf_open(__u32 nslots);
void kbpf_close(void);
bool kbpf_on(void);
const char *kbpf_why(void);
int kbpf_uid_fd(uid_t uid);	/* uid's frozen record array for its clients, or -1 */
__u32 kbpf_uid_nslots(void);	/* records in a uid's array */
void kbpf_uid_hold(uid_t uid);	/* a connection was handed uid's array: kept for it */
void kbpf_uid_put(uid_t uid);	/* that connection is gone */
__u32 kbpf_nslots(void);
__u32 kbpf_used(void);
/* give tid of pid a fresh slot (zeroed, gen bumped), owned by a connection,
 * its record in uid's array (made if it has none) at *slot; 0 or -errno
 * (-EDQUOT: uid holds its share, -EUSERS: too many uids have an array) */
int kbpf_assign(pid_t pid, pid_t tid, uid_t uid, __u64 owner, __u32 *slot, __u64 *gen);
void kbpf_release_pid(pid_t pid);
void kbpf_release_owner(__u64 owner);
struct profd_slices_thread; /* proto.h */
/* pid's registered threads' scheduler slices, at most max: how many, or -errno */
int kbpf_slices(pid_t pid, struct profd_slices_thread *out, __u32 max);
int kbpf_tidslots_fd(void);	/* the tid table, for profd_stacks.c; -1 if off */
__u32 kbpf_count_pid(pid_t pid);
void kbpf_sweep(void);		/* reclaim slots of exited threads */

/* profd_seg.c */
int seg_init(void);
void seg_fini(void);
void seg_rescan(void);
void seg_sample(void);
__u64 seg_samples(void);
__u32 seg_count(void);
int seg_inotify_fd(void);
void seg_inotify_event(void);
/* a peer handed its segment over (fd, the peer's own: not taken); pid and
 * uid are the peer's, ours (SO_PEERCRED), pidns its connection's (the
 * namespace it proved with an fd, where /proc/PID/ns cannot say); 0 or
 * -errno */
int seg_adopt_fd(int fd, pid_t pid, uid_t uid, __u64 pidns);
/* for a peer of pid namespace pidns: uid may see the process (root sees
 * all), and only those of pidns if that is not ours, named as it names them */
struct profd_wire_proc;
typedef int (*seg_list_cb)(const struct profd_wire_proc *p, pid_t host_pid, void *arg);
int seg_list(uid_t uid, __u64 pidns, seg_list_cb cb, void *arg);
/* for a peer of another pid namespace: the host pid of its pid, -ESRCH */
pid_t seg_host_pid(__u64 pidns, pid_t pid);
/* where pid (a host pid) runs, for a peer of pidns: its pid in its own pid
 * namespace and its cgroup when that is not the peer's, else 0 and ""; and
 * its owner as the peer names it */
void seg_where(pid_t pid, __u64 pidns, __u32 *ns_pid, char *cgroup, size_t len, __u32 *uid);
/* our own pid namespace; pid's (an id to compare), 0 if it is gone */
__u64 seg_pidns(void);
__u64 seg_pidns_of(pid_t pid);
/* seg_pidns_of's answer for a namespace it cannot name (not ours) */
#define SEG_PIDNS_OTHER 1ull
/* what a snapshot request is answered with: a snapshot, or, for a live
 * process with nothing to subtract, its segment itself (read-only) */
struct seg_answer {
	struct prof_snapshot *snap;
	int live_fd;
	__u64 span_ns; /* the time it covers */
	bool based;    /* a history frame was subtracted */
};
int seg_snapshot(uid_t uid, pid_t pid, int mode, __u32 seconds, struct seg_answer *a);
/* 0 if uid may read pid's profile, else -ESRCH or -EPERM */
int seg_access(uid_t uid, pid_t pid);
/* what history and kept data take (--max-memory), and what was dropped */
struct seg_mem_stat {
	__u64 history;		 /* live processes: newest states and frames */
	__u64 kept;		 /* exited processes' data */
	__u64 frames;		 /* history frames kept */
	__u64 frames_dropped;	 /* for memory: frames, oldest first */
	__u64 kept_dropped;	 /* exited processes */
	__u64 histories_dropped; /* live processes' whole histories */
	__u64 windows_refused;	 /* "last N s" that reached a dropped frame */
	__u64 last_drop_ns;	 /* the newest frame dropped (CLOCK_MONOTONIC) */
	pid_t last_drop_pid;	 /* and whose */
};
void seg_mem_stat(struct seg_mem_stat *st);
/* look(mem, len, arg) at pid's live segment, guarded as every look is
 * (seg_guard: undo(arg) if it faulted); its result, or -ESRCH, -EFAULT */
int seg_look_pid(pid_t pid, int (*look)(const void *mem, size_t len, void *arg),
		 void (*undo)(void *arg), void *arg);
bool seg_alive_pid(pid_t pid);	/* profd follows pid's live segment */
/* files in /dev/shm profd skips as bad or suspect, remembered now */
__u32 seg_bad_count(void);
/* full listings of /dev/shm so far (not the names inotify reports) */
__u64 seg_rescans(void);
/* how often the whole of /dev/shm is listed as a backstop (inotify names
 * new segments; without it, this is how they are found) */
__u64 seg_rescan_period(void);

/* profd_hist.c: what an older snapshot held that a newer one of the same
 * process does not, enough to take a copy of the newer back to the older */
struct hist_delta;
/* NULL and errno (ENOMEM; EINVAL for a lazy snapshot) */
struct hist_delta *hist_delta__new(const struct prof_snapshot *older,
				   const struct prof_snapshot *newer);
void hist_delta__destroy(struct hist_delta *d);
__u64 hist_delta__bytes(const struct hist_delta *d);	/* what it takes to keep */
/* w, a private copy of the newer state (or of one rebuilt from it), becomes
 * the older; 0 or -ENOMEM (then w is only fit to be destroyed) */
int hist_delta__apply(struct prof_snapshot *w, const struct hist_delta *d);
/* a private copy a delta can be applied to; NULL and errno */
struct prof_snapshot *hist_snap_clone(const struct prof_snapshot *s);
/* what a snapshot takes to keep, roughly */
__u64 hist_snap_bytes(const struct prof_snapshot *s);
/* every field, node and bucket equal, wherever the buckets lie */
bool hist_snap_same(const struct prof_snapshot *a, const struct prof_snapshot *b);
/* the same named locks and plots, figure for figure */
bool hist_annot_same(const struct prof_snapshot *a, const struct prof_snapshot *b);

/* profd_tsc.c: may TSC deltas be trusted across CPUs here? */
struct profd_tsc {
	bool synced;
	__u64 rounds;		/* cross-CPU reads measured */
	__u64 back_ticks;	/* the largest step back seen */
	char why[128];		/* the verdict, said */
};
void profd_tsc_check(void);	/* once, at start */
const struct profd_tsc *profd_tsc(void);

/* profd_peer.c: a control connection's peer */
/* a pidfd of the process that connected on fd (pid, SO_PEERCRED's), or
 * -errno (-ESRCH: that pid is another process now) */
int profd_peer_pidfd(int fd, pid_t pid);
/* whether the process behind a pidfd has exited (or none was pinned) */
bool profd_pidfd_exited(int pidfd);
/* how many levels below ours the pid namespace at fd is (0: ours), or -1:
 * none of ours, or not a pid namespace's fd; *ino gets its inode */
int profd_pidns_depth(int fd, __u64 *ino);

/* profd_ctl.c */
/* take path's lock: -EADDRINUSE if another profd holds it, -EPERM if the
 * lock file is not a regular file of ours */
int ctl_lock(const char *path);
/* -EADDRINUSE: another process answers on path (takes the lock if not yet) */
int ctl_open(const char *path);
void ctl_close(void);
int ctl_listen_fd(void);
void ctl_accept(int epfd);
void ctl_event(int epfd, void *conn, __u32 events);
void ctl_tick(int epfd);	/* idle connections; a paused listener */
void ctl_reap(void);		/* after each batch of events */
bool ctl_is_listener(void *ptr);
/* profd_share.c: fair shares: uids sorted, so that how many of them are
 * one uid's (what it holds) is a search */
void profd_uid_sort(uid_t *u, __u32 n);
__u32 profd_uid_run(const uid_t *u, __u32 n, uid_t uid);
void *ctl_listener_tag(void);

#endif /* PROFD_H */
