/* SPDX-License-Identifier: MIT */
/*
 * client.h - what profctl (and tests) call to talk to profd.  The wire
 * protocol behind it is usdt/proto.h; this is the contract for callers.
 *
 * Reports travel as segment images: profd builds a snapshot (since start,
 * since reset, or the last N seconds), serializes it with
 * prof_snapshot__write() into a memfd and passes the fd (SCM_RIGHTS); the
 * client reads it back with prof_snapshot__read_fd(), so profd's answers
 * go through the same validation as a live segment.
 *
 * All calls return 0 or -errno; -ENOENT/-ECONNREFUSED: profd not running,
 * -EPERM: not the caller's process, -ESRCH: no such process.
 */
#ifndef PROF_CLIENT_H
#define PROF_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "proto.h"
#include "snapshot.h"

struct profd_status {
	uint32_t version;	/* PROF_VERSION of profd */
	uint32_t bpf_on;	/* kernel assistance loaded */
	char bpf_why[128];	/* why not, if off */
	uint32_t processes;	/* segments profd follows (alive and exited) */
	uint32_t threads;	/* threads with a kernel slot */
	uint32_t slots_free;
	uint32_t interval_ms;	/* sampling interval */
	uint64_t samples;	/* samples taken since start */
	uint64_t uptime_ns;
	uint32_t tsc_synced;	/* a migrated call's TSC delta is exact here */
	uint32_t late;		/* threads registered after their first zone gave up */
	char tsc_why[128];	/* what profd found */
	/* --max-memory (profd_wire_status says each) */
	uint64_t max_memory, mem_history, mem_kept, frames;
	uint64_t frames_dropped, kept_dropped, histories_dropped, windows_refused;
	uint64_t last_drop_age_ns;
	uint32_t last_drop_pid;
	uint32_t bad_segments;	/* files in /dev/shm skipped as bad, known now */
	uint64_t rescans;	/* full listings of /dev/shm */
};

struct profd_proc {
	uint32_t pid;
	uint32_t uid;
	uint64_t start_token;
	char comm[PROF_COMM_MAX];
	uint32_t threads;
	uint32_t alive;		/* 0: exited, kept post-mortem */
	uint32_t kernel;	/* threads with kernel assistance */
	uint64_t created_ns;	/* CLOCK_REALTIME */
	/* time inside zones per second of wall time, summed over threads, in
	 * thousandths (1000: one thread always in a zone): the last sample,
	 * and moving averages over ~1 s and ~30 s */
	uint32_t inzone_now, inzone_short, inzone_long;
	/* in a container (another pid namespace than the caller's): its pid
	 * there, and its cgroup; 0 and "" otherwise */
	uint32_t ns_pid;
	char cgroup[PROF_CGROUP_MAX];
};

/* socket path: $PROF_SOCKET, else $PROFD_SOCKET, else PROFD_SOCKET_DEFAULT */
const char *profd_socket_path(void);
/* connect with a short timeout, and hand over our pid namespace (an fd
 * of /proc/self/ns/pid: PROFD_MSG_PIDNS); fd or -errno */
int profd_connect(const char *path);
/* hand profd nsfd as the caller's pid namespace: 0, or -EPERM if profd
 * finds it is not the caller's, or -errno */
int profd_pidns(int fd, int nsfd);
int profd_status(int fd, struct profd_status *st);
/* processes the caller may see; *procs malloc'd */
int profd_list(int fd, struct profd_proc **procs, size_t *n);
/* a snapshot of pid in mode PROFD_SNAP_* (proto.h); seconds for PROFD_SNAP_LAST */
int profd_snapshot(int fd, pid_t pid, int mode, uint32_t seconds, struct prof_snapshot **snap);
/* what profd said of the snapshot it answered with */
struct profd_answer {
	uint64_t span_ns;	/* the time it covers */
	bool based;		/* profd subtracted a history frame (--last) */
	uint32_t ns_pid;	/* as in profd_proc: the fd's header names this pid */
	char cgroup[PROF_CGROUP_MAX];
	uint32_t uid;		/* its owner, as the caller names it */
};
/* a snapshot read from profd's fd: named as the caller asked (pid), and
 * where it runs (ans); 0, or -EINVAL if it is not that process */
int profd_name_snapshot(struct prof_snapshot *s, pid_t pid, const struct profd_answer *ans);
/* the same, read with PROF_READ_* flags (profd hands over the live
 * segment itself when there is nothing to subtract); ans may be NULL */
int profd_snapshot_opts(int fd, pid_t pid, int mode, uint32_t seconds, unsigned int flags,
			struct prof_snapshot **snap, struct profd_answer *ans);
/* the fd profd answers with, unread (read-only: the live segment, or a
 * sealed image); the caller validates what it reads and closes it */
int profd_segment_fd(int fd, pid_t pid, int mode, uint32_t seconds, int *sfd,
		     struct profd_answer *ans);
/* the scheduler's last runs of pid's registered threads (proto.h): *n of
 * them in *out (free it); -EOPNOTSUPP without the BPF program */
int profd_slices(int fd, pid_t pid, struct profd_slices_thread **out, uint32_t *n);
/* pid's sampled stacks (proto.h: profd_samples_rep) as text, *len bytes in
 * *text (NUL-terminated; free it); text NULL: rep alone; pid 0: profd's
 * sampling state alone; -EOPNOTSUPP from a profd without them */
int profd_samples(int fd, pid_t pid, char **text, size_t *len, struct profd_samples_rep *rep);

#endif /* PROF_CLIENT_H */
