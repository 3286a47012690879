/* SPDX-License-Identifier: MIT */
/*
 * profsched.h - the kernel word: one record per registered thread.
 *
 * Shared by bpf/profsched.bpf.c (the only writer), profd (assigns
 * slots) and the runtime in usdt/ (maps the array read-only and
 * reads it on the fast path).  Fixed-width fields only; includes nothing.
 */
#ifndef PROF_PROFSCHED_H
#define PROF_PROFSCHED_H

#define PROF_SCHED_MAX_SLOTS	8192	/* records in the mmapable array, by default */
#define PROF_SCHED_MAX_SLOTS_LIMIT 65535 /* a tidslots entry is 16 bits: slot + 1 */
#define PROF_SCHED_SEQ_MIGR_SHIFT 32
#define PROF_SCHED_CPU_NONE	0xffffffffU /* last_cpu: not seen running yet */
#define PROF_SCHED_TIDS_PER_WORD 4	/* 16-bit slot + 1 entries in a tidslots word */
#define PROF_SCHED_PID_MAX_LIMIT 4194304 /* the kernel's, on 64-bit */
#define PROF_SCHED_MAX_UIDS	256	/* uids with records at once (one array each) */

/*
 * One cache line per thread.  The BPF program writes it only while the
 * thread is off the CPU (switching out, or about to switch in), so the
 * owning thread never sees a torn update.  The fast path reads 'seq' and
 * 'offcpu_ns' at zone enter and exit; when seq moved, its slow path tells
 * preempted from blocked by where preempt_seq and block_seq fall: a zone
 * entered at switch count a and left at b was preempted if the last
 * involuntary switch is in (a, b], blocked if the last voluntary one is.
 * It migrated if the high half moved, or if one of its switches out (the
 * last four: out_cpus) left another cpu than the one it runs on at its
 * exit: on this kernel a return to a CPU now and then reaches no
 * sched_switch program at all (bpftrace misses it too), but the switch
 * out always does, so a move is never missed in a zone of up to four
 * switches (the first of them left the cpu the zone began on).
 */
struct prof_sched_rec {
	__u64 seq;		/* low 32 bits: switches out, high 32: migrations */
	__u64 offcpu_ns;	/* accumulated time switched out */
	__u64 out_ns;		/* bpf only: when it last switched out, 0 = running */
	__u32 tid;		/* bpf: owner, set with gen */
	__u32 last_cpu;		/* bpf only: cpu it last ran on (set when it
				 * comes back), or PROF_SCHED_CPU_NONE */
	__u64 gen;		/* bpf: the assignment (profd's gen) it counts for */
	__u64 start;		/* bpf: the owner's task start time, set with gen */
	__u32 preempt_seq;	/* bpf: the low half of seq after the last switch
				 * out while runnable (preempted, involuntary) */
	__u32 block_seq;	/* bpf: the same for the last switch out asleep
				 * (blocked, waiting, I/O: voluntary) */
	__u64 out_cpus;		/* bpf: the cpus of the last 4 switches out, 16 bits
				 * each, switch n's at bits 16 * (n % 4) */
};

/*
 * A slot (profd's, one per registered thread on the machine) and where its
 * record lives: records are kept per uid, one array for each uid with a
 * registered thread ('uidrecs'[uidx]), and a process is handed only its
 * uid's array, so nobody reads another user's threads.  Written by profd
 * ('slots'), read by the program.
 */
struct prof_sched_slot {
	__u64 gen;		/* the assignment: written last, after uidx and idx */
	__u32 uidx;		/* the uid's array in 'uidrecs' */
	__u32 idx;		/* the record in that array */
};

/*
 * profd cannot write the record arrays (they are frozen, so the processes
 * they are handed to cannot either).  It assigns a slot by writing where
 * its record is and its new generation into 'slots', then slot + 1 into
 * the tid's 'tidslots' entry; it frees one by clearing the entry.  The
 * program starts a record afresh (zeroes, sets tid, start and gen) on its
 * new owner's first switch after the assignment, when rec.gen differs from
 * the slot's gen.
 */
#endif /* PROF_PROFSCHED_H */
