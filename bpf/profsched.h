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
/* the program's filter: bit (tid % PROF_SCHED_FILTER_BITS) set while some
 * registered tid has that remainder; one page, so an unregistered switch
 * reads one hot line instead of two lines of the 8 MiB tidslots */
#define PROF_SCHED_FILTER_BITS	32768

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
 * switches (the first of them left the cpu the zone began on).  The time
 * away before such a return is never added to offcpu_ns: a zone that
 * ends while mark_ns still says "out" has no kernel facts (the runtime
 * checks), rather than an off-CPU time short by that much.  A lost return
 * followed by another switch in the same zone is not caught: that zone's
 * off-CPU time is short.
 */
struct prof_sched_rec {
	__u64 seq;		/* low 32 bits: switches out, high 32: migrations */
	__u64 offcpu_ns;	/* accumulated time switched out */
	__u64 mark_ns;		/* bpf: its last switch, out (bit 0 clear) or in
				 * (bit 0 set); 0 = none seen yet.  The runtime
				 * reads bit 0: clear while it runs, its return
				 * was never seen */
	__u32 tid;		/* bpf: owner, set with gen */
	__u32 last_cpu;		/* bpf only: cpu it last ran on (set when it
				 * comes back and when it leaves), or
				 * PROF_SCHED_CPU_NONE */
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
 * The scheduler's timeline of a registered thread: its last
 * PROF_SCHED_SLICES runs on a CPU, one slice written at each switch out,
 * in CLOCK_MONOTONIC ns (the run queue clock the program reads, mapped to
 * it by an offset the thread's own switches refresh every PROF_SCHED_CLK_NS:
 * and one helper call a millisecond at most).  Kept in the thread's slot
 * (below), beside what the program reads there anyway (a separate map's
 * page cost 8 ns a switch more); only profd reads them (it answers a client
 * allowed to see the process), no process maps them.  The program writes a slice, then
 * publishes it with 'head'; a reader copies, reads head again and keeps
 * what the writer cannot have reached (index > head - PROF_SCHED_SLICES).
 * Stores publish in order on x86 (TSO); elsewhere the newest slice may
 * rarely be torn.
 */
#define PROF_SCHED_SLICES	64	/* a power of two */
#define PROF_SCHED_CLK_NS	1000000	/* the clock offset's refresh */
#define PROF_SLICE_PREEMPTED	0x1	/* switched out runnable */
#define PROF_SLICE_BLOCKED	0x2	/* switched out asleep */
#define PROF_SLICE_NO_START	0x4	/* its switch in was not seen: on_ns 0 */

struct prof_sched_slice {
	__u64 end_ns;		/* when it switched out */
	__u32 on_ns;		/* how long it ran (at most 2^32 - 1) */
	__u16 cpu;
	__u16 flags;		/* PROF_SLICE_* */
};

struct prof_sched_slices {
	__u64 gen;		/* bpf: the assignment they belong to, set (last)
				 * when the program starts the record afresh */
	__u64 head;		/* bpf: slices written: n is at s[n % PROF_SCHED_SLICES] */
	__u64 clk_rq;		/* bpf only: the run queue clock when clk_off was */
	__u64 clk_off;		/* bpf only: CLOCK_MONOTONIC less that clock */
	struct prof_sched_slice s[PROF_SCHED_SLICES];
};

/*
 * A slot (profd's, one per registered thread on the machine) and where its
 * record lives: records are kept per uid, one array for each uid with a
 * registered thread ('uidrecs'[uidx]), and a process is handed only its
 * uid's array, so nobody reads another user's threads.  gen, uidx and idx
 * are written by profd ('slots') and read by the program; tl the other way.
 */
struct prof_sched_slot {
	__u64 gen;		/* the assignment: written last, after uidx and idx */
	__u32 uidx;		/* the uid's array in 'uidrecs' */
	__u32 idx;		/* the record in that array */
	struct prof_sched_slices tl; /* bpf: the thread's timeline; profd reads */
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
