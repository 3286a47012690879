/* SPDX-License-Identifier: MIT */
/*
 * proto.h - profd's control protocol, on a SOCK_SEQPACKET unix socket.
 *
 * Every message is one packet: a struct profd_hdr followed by the fixed
 * payload of its type, and hdr.len is the whole packet's size.  Either
 * side rejects a packet whose size is not exactly sizeof(hdr) plus its
 * type's payload (profd_msg_len()), or whose type it does not expect.
 * Requests are authenticated by SO_PEERCRED: a user sees only processes
 * of their own uid; root sees all.  profd keeps no resets: a reset is a
 * baseline file of the user who made it, which profctl subtracts from a
 * snapshot since the start (the RESET request and the PROFD_SNAP_RESET
 * mode, which earlier profds served, are answered ERROR -EOPNOTSUPP).
 * Pids and tids are in the peer's pid namespace: a peer in a container
 * names (and is answered with) the pids it sees there, and sees only the
 * processes of its namespace; on the host, a process in a container is
 * named by its host pid, and ns_pid and cgroup say where it runs.  Which
 * namespace a peer is in, profd learns from an fd of it the peer hands
 * over (PIDNS: its /proc/self/ns/pid, checked against what the kernel says
 * of the peer), never from a number it claims; a peer that sends none is
 * judged as before (profd looks, where it may, at /proc/PID/ns/pid).
 *
 *	client			profd
 *	PIDNS{} + fd	->	OK				(first: the peer's pid
 *							 namespace; ERROR -EPERM
 *							 if it is not the peer's)
 *	SEGMENT{} + fd	->	OK				(the agent's own segment:
 *							 profd follows it without a
 *							 path, say from a container)
 *	REGISTER{tid}	->	REGISTERED{slot, gen, nslots}	(+ map fd, once: its
 *							 uid's records only)
 *	STATUS		->	STATUS{...}
 *	LIST		->	PROC{...} x n, then END{n}
 *	SNAPSHOT{pid}	->	SNAPSHOT{size}			(+ an fd: the live segment,
 *							 read-only, when there is
 *							 nothing to subtract; else
 *							 a sealed memfd image)
 *	RESET{pid}	->	ERROR{-EOPNOTSUPP}		(reserved: profd keeps
 *							 no resets)
 *	SLICES{pid}	->	SLICES{threads, size}		(+ a sealed memfd: the
 *							 scheduler's last runs of
 *							 each registered thread)
 *	any		->	ERROR{-errno} instead
 */
#ifndef PROFD_PROTO_H
#define PROFD_PROTO_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#define PROFD_PROTO_VERSION	5

/* where profd listens unless $PROF_SOCKET (or $PROFD_SOCKET) says: the
 * runtime's agent, profd and profctl all start from it */
#define PROFD_SOCKET_DEFAULT	"/run/profd/profd.sock"
#define PROFD_MSG_MAX		512	/* largest packet, header included */

enum profd_msg_type {
	PROFD_MSG_ERROR = 1,		/* profd: struct profd_error */
	PROFD_MSG_OK,			/* profd: no payload */
	PROFD_MSG_REGISTER,		/* agent: struct profd_register */
	PROFD_MSG_REGISTERED,		/* profd: struct profd_registered */
	PROFD_MSG_STATUS_REQ,		/* client: no payload */
	PROFD_MSG_STATUS,		/* profd: struct profd_wire_status */
	PROFD_MSG_LIST_REQ,		/* client: no payload */
	PROFD_MSG_PROC,			/* profd: struct profd_wire_proc */
	PROFD_MSG_END,			/* profd: struct profd_end */
	PROFD_MSG_SNAPSHOT_REQ,		/* client: struct profd_snapshot_req */
	PROFD_MSG_SNAPSHOT,		/* profd: struct profd_snapshot_rep, + fd */
	PROFD_MSG_RESET_REQ,		/* reserved (was: keep a reset baseline);
					 * answered -EOPNOTSUPP */
	PROFD_MSG_SEGMENT,		/* agent: struct profd_segment, + fd */
	PROFD_MSG_PIDNS,		/* any: struct profd_pidns, + fd */
	PROFD_MSG_SLICES_REQ,		/* client: struct profd_pid_req */
	PROFD_MSG_SLICES,		/* profd: struct profd_slices_rep, + fd */
	PROFD_MSG_SAMPLES_REQ,		/* client: struct profd_pid_req */
	PROFD_MSG_SAMPLES,		/* profd: struct profd_samples_rep, + fd */
	PROFD_MSG_TYPE_MAX,
};

struct profd_hdr {
	__u32 type;			/* enum profd_msg_type */
	__u32 len;			/* header + payload, exactly */
};

struct profd_error {
	__s32 err;			/* -errno */
	__u32 __pad;
};

#define PROFD_REG_WANT_FD	0x1	/* send the map fd with the reply */
#define PROFD_REG_LATE		0x2	/* the thread's first zone gave up waiting for
					 * this answer: its first calls had no facts */

/* the agent's segment fd rides along; profd checks it names the peer */
struct profd_segment {
	__u32 flags;			/* none yet: 0 */
	__u32 __pad;
};

/* an fd of the peer's own pid namespace (/proc/self/ns/pid) rides along */
struct profd_pidns {
	__u32 flags;			/* none yet: 0 */
	__u32 __pad;
};

#define PROFD_CGROUP_MAX	128	/* a cgroup's name on the wire, NUL included */

struct profd_register {
	__u32 tid;			/* a thread of the peer's process, as the
					 * peer sees it (its pid namespace's) */
	__u32 flags;			/* PROFD_REG_* */
};

struct profd_registered {
	__u32 tid;
	__u32 slot;			/* index into the record array (the uid's own) */
	__u64 gen;			/* the record's generation */
	__u32 nslots;			/* records in the array */
	__u32 rec_size;			/* sizeof(struct prof_sched_rec) */
	__u32 has_fd;			/* the map fd rides with this packet */
	__u32 flags;			/* PROFD_REGD_* */
};

#define PROFD_REGD_TSC_SYNCED	0x1	/* TSC deltas hold across CPUs here */

struct profd_wire_status {
	__u32 version;
	__u32 bpf_on;
	char bpf_why[128];
	__u32 processes;
	__u32 threads;
	__u32 slots_free;
	__u32 interval_ms;
	__u64 samples;
	__u64 uptime_ns;
	__u32 tsc_synced;		/* see profd_tsc.c */
	__u32 late;			/* registrations that came too late for a
					 * thread's first zone (PROFD_REG_LATE) */
	char tsc_why[128];
	/* --max-memory: what history and kept data take, and what went */
	__u64 max_memory;
	__u64 mem_history;		/* live processes: newest states, frames */
	__u64 mem_kept;			/* exited processes' data */
	__u64 rescans;			/* full listings of /dev/shm (0 from an
					 * older profd: this was reserved) */
	__u64 frames;			/* history frames kept */
	__u64 frames_dropped;		/* for memory: frames, oldest first */
	__u64 kept_dropped;		/* exited processes */
	__u64 histories_dropped;	/* live processes' whole histories */
	__u64 windows_refused;		/* "last N s" that reached a dropped frame */
	__u64 last_drop_age_ns;		/* the newest frame dropped: its age now */
	__u32 last_drop_pid;		/* and whose, 0 if none */
	__u32 bad_segments;		/* files skipped as bad (or suspect), known
					 * now (0 from an older profd) */
};

struct profd_wire_proc {
	__u32 pid;
	__u32 uid;
	__u64 start_token;
	char comm[32];
	__u32 threads;
	__u32 alive;
	__u32 kernel;
	__u32 inzone_now;		/* thousandths of a thread in zones: last sample */
	__u64 created_ns;
	__u32 inzone_short;		/* ~1 s moving average */
	__u32 inzone_long;		/* ~30 s moving average */
	__u32 ns_pid;			/* its pid in its own pid namespace, when
					 * that is not the asker's; else 0 */
	__u32 __pad;
	char cgroup[PROFD_CGROUP_MAX];	/* with ns_pid: its cgroup (the scope) */
};

struct profd_end {
	__u32 count;			/* PROC messages sent */
	__u32 __pad;
};

#define PROFD_SNAP_START	0
#define PROFD_SNAP_RESET	1	/* reserved (was: since profd's reset
					 * baseline); answered -EOPNOTSUPP */
#define PROFD_SNAP_LAST		2

struct profd_snapshot_req {
	__u32 pid;
	__u32 mode;			/* PROFD_SNAP_* */
	__u32 seconds;			/* for PROFD_SNAP_LAST */
	__u32 __pad;
};

#define PROFD_SNAP_F_BASED	0x1	/* a history frame was subtracted */

struct profd_snapshot_rep {
	__u64 size;			/* bytes of the image in the fd */
	__u64 span_ns;			/* time the snapshot covers */
	__u32 flags;			/* PROFD_SNAP_F_* */
	__u32 ns_pid;			/* as in profd_wire_proc: the image's own
					 * pid then, not the one asked for */
	char cgroup[PROFD_CGROUP_MAX];	/* with ns_pid */
	__u32 uid;			/* the owner, in the asker's user namespace
					 * (the image's header has its own) */
	__u32 __pad;
};

struct profd_pid_req {
	__u32 pid;
	__u32 __pad;
};

/*
 * The scheduler's timeline of a process (with profd's BPF program): in the
 * fd, 'threads' struct profd_slices_thread, one per registered thread, each
 * its last runs on a CPU, oldest first, in CLOCK_MONOTONIC ns.  The layout
 * of bpf/profsched.h's prof_sched_slice.
 */
#define PROFD_SLICES_MAX	64	/* PROF_SCHED_SLICES */
#define PROFD_SLICE_PREEMPTED	0x1	/* it ended switched out runnable */
#define PROFD_SLICE_BLOCKED	0x2	/* it ended switched out asleep */
#define PROFD_SLICE_NO_START	0x4	/* its start was not seen: on_ns 0 */

struct profd_slice {
	__u64 end_ns;			/* switched out */
	__u32 on_ns;			/* on the CPU before that */
	__u16 cpu;
	__u16 flags;			/* PROFD_SLICE_* */
};

struct profd_slices_thread {
	__u32 tid;			/* as the process names it (its namespace's) */
	__u32 n;			/* slices in s */
	__u64 written;			/* slices since it registered (n of them kept) */
	struct profd_slice s[PROFD_SLICES_MAX];
};

struct profd_slices_rep {
	__u32 threads;			/* struct profd_slices_thread in the fd */
	__u32 __pad;
	__u64 size;			/* bytes in the fd */
};

/*
 * A process's sampled stacks (profd --sample-hz), in the fd as text, one
 * distinct stack a line:
 *	tid TAB count TAB zone path TAB frames NL
 * the zone path the zones open, outermost first, US (0x1f) apart (empty:
 * outside every zone; "[zone unknown]": the slab no longer said), the
 * frames innermost first, RS (0x1e) apart, each "func US file US line US
 * module+0xoffset" (func, file empty and line 0 when unknown).  'why'
 * says in one line why there are none when sampling is off.  A request
 * for pid 0 asks the state alone: hz, why, and in samples every
 * process's count; the fd one line, "frames TAB N TAB M TAB L TAB S TAB
 * C": frames named from ELF and DWARF, and from the cache every process
 * shares; samples lost (the kernel's ring had no room); the bytes the
 * stacks and the frame cache take (counted in --max-memory).
 */
struct profd_samples_rep {
	__u64 size;			/* bytes in the fd */
	__u64 samples;			/* counted, all lines */
	__u32 hz;			/* per CPU; 0: off */
	__u32 __pad;
	char why[160];
};

/* the exact packet size of a type, 0 for an unknown type */
static inline __u32 profd_msg_len(__u32 type)
{
	static const __u32 payload[PROFD_MSG_TYPE_MAX] = {
		[PROFD_MSG_ERROR] = sizeof(struct profd_error),
		[PROFD_MSG_OK] = 0,
		[PROFD_MSG_REGISTER] = sizeof(struct profd_register),
		[PROFD_MSG_REGISTERED] = sizeof(struct profd_registered),
		[PROFD_MSG_STATUS_REQ] = 0,
		[PROFD_MSG_STATUS] = sizeof(struct profd_wire_status),
		[PROFD_MSG_LIST_REQ] = 0,
		[PROFD_MSG_PROC] = sizeof(struct profd_wire_proc),
		[PROFD_MSG_END] = sizeof(struct profd_end),
		[PROFD_MSG_SNAPSHOT_REQ] = sizeof(struct profd_snapshot_req),
		[PROFD_MSG_SNAPSHOT] = sizeof(struct profd_snapshot_rep),
		[PROFD_MSG_RESET_REQ] = sizeof(struct profd_pid_req),
		[PROFD_MSG_SEGMENT] = sizeof(struct profd_segment),
		[PROFD_MSG_PIDNS] = sizeof(struct profd_pidns),
		[PROFD_MSG_SLICES_REQ] = sizeof(struct profd_pid_req),
		[PROFD_MSG_SLICES] = sizeof(struct profd_slices_rep),
		[PROFD_MSG_SAMPLES_REQ] = sizeof(struct profd_pid_req),
		[PROFD_MSG_SAMPLES] = sizeof(struct profd_samples_rep),
	};

	if (type == 0 || type >= PROFD_MSG_TYPE_MAX)
		return 0;
	return (__u32)sizeof(struct profd_hdr) + payload[type];
}

/* what came with a packet (usdt/fdpass.c) */
struct profd_recv {
	int fd;		/* the first fd passed along, -1 if none (the caller's) */
	int nfds;	/* how many came (the rest closed) */
	bool cut;	/* the packet or its fds were truncated */
};
/* one packet of sock into buf (len), recvmsg flags (MSG_CMSG_CLOEXEC
 * always): its length, 0 at the end, or -errno */
ssize_t profd_recv(int sock, void *buf, size_t len, int flags, struct profd_recv *r);
/* buf (len) as one packet on sock, with fd passed along unless it is -1
 * (the caller keeps it), sendmsg flags: the bytes sent, or -errno */
ssize_t profd_send(int sock, const void *buf, size_t len, int flags, int fd);
/* a packet of type with payload (plen bytes) the same way: 0, -EIO if it
 * went short, or -errno */
int profd_send_msg(int sock, __u32 type, const void *payload, size_t plen, int flags, int fd);

/* 0 if buf[0, n) is a well-formed packet, else -EBADMSG */
static inline int profd_msg_check(const void *buf, size_t n)
{
	const struct profd_hdr *h = (const struct profd_hdr *)buf;
	__u32 want;

	if (n < sizeof(*h))
		return -EBADMSG;
	want = profd_msg_len(h->type);
	if (!want || h->len != want || n != want)
		return -EBADMSG;
	return 0;
}

#endif /* PROFD_PROTO_H */
