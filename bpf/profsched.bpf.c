// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * profsched.bpf.c - the kernel word: per registered thread, count switches
 * out, migrations and time spent switched out; and its last runs on a CPU
 * (slices), for the timeline of profctl trace.
 *
 * profd names each registered thread's slot in 'tidslots' (by tid), and
 * in 'slots' the slot's current assignment and where its record lives:
 * records are kept in one array per uid ('uidrecs', a map of maps), so a
 * process handed its uid's array reads no other user's threads.  The
 * arrays are frozen (no writes from user space, profd included): this
 * program is their only writer.  It binds a record to the task it finds
 * on the first switch of a new assignment (gen differs) and starts it from
 * zero, so a reused slot never inherits numbers, and a task that merely
 * reuses a registered tid (before profd notices the exit) is told apart by
 * its start time.
 * A switch between two threads that are not registered costs two tids read
 * and two bits of one page tested (see prof_sched_switch).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "profsched.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* only count threads of this tgid (tests); 0 = every registered thread */
const volatile __u32 targ_tgid = 0;

/*
 * tid -> slot + 1 (0: not registered), PROF_SCHED_TIDS_PER_WORD 16-bit
 * entries to a word, sized by profd from pid_max (8 MiB at the largest):
 * a tid beyond it is not registered.  Array lookups are inlined by the
 * verifier; a task-storage or hash lookup is a helper call that, twice a
 * switch, cost more than the rest of the program.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* profd sets it */
	__type(key, __u32);
	__type(value, __u64);
} tidslots SEC(".maps");

/* slot -> its assignment (gen) and its record's place, written by profd */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PROF_SCHED_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct prof_sched_slot);
} slots SEC(".maps");

/*
 * A uid's records, made by profd at its first registration.  All of one
 * size (profd sets it: --uid-slots), with no BPF_F_INNER_MAP, so the
 * verifier inlines the lookup as it does a plain array's.
 */
struct uid_recs {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* profd sets it */
	/* sizes, not types: clang emits an inner map's value type as a
	 * forward declaration only, which libbpf cannot size */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct prof_sched_rec));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, PROF_SCHED_MAX_UIDS);
	__type(key, __u32);
	__array(values, struct uid_recs);
} uidrecs SEC(".maps");

/* profsched.h: set by profd before a tid's tidslots entry, cleared after */
__u64 tidfilter[PROF_SCHED_FILTER_BITS / 64];

/* one 64-bit store (clang 14 has no BPF atomic store; volatile does it) */
#define WRITE_ONCE_U64(p, v) (*(volatile __u64 *)(p) = (v))

static __always_inline __u32 tid_slot(__u64 word, __u32 tid)
{
	return (__u16)(word >> (16 * (tid % PROF_SCHED_TIDS_PER_WORD)));
}

static __always_inline struct prof_sched_rec *rec_of(struct task_struct *task,
						     struct prof_sched_slot **slotp)
{
	struct prof_sched_slot *sl;
	struct prof_sched_rec *r;
	__u32 tid = task->pid, w = tid / PROF_SCHED_TIDS_PER_WORD, slot, uidx, idx;
	__u64 *word, g, start;
	void *recs;

	word = bpf_map_lookup_elem(&tidslots, &w);
	if (!word)
		return NULL;
	slot = tid_slot(*word, tid);
	if (!slot--)
		return NULL;
	sl = bpf_map_lookup_elem(&slots, &slot);
	if (!sl)
		return NULL;
	/* written before the tid's entry, which was read first (an entry
	 * cleared meanwhile: see the check below) */
	g = *(volatile __u64 *)&sl->gen;
	uidx = *(volatile __u32 *)&sl->uidx;
	idx = *(volatile __u32 *)&sl->idx;
	recs = bpf_map_lookup_elem(&uidrecs, &uidx);
	if (!recs)
		return NULL;
	r = bpf_map_lookup_elem(recs, &idx);
	if (!r)
		return NULL;
	start = task->start_time;
	if (r->gen != g) {
		/*
		 * A new assignment.  profd clears a tid's entry before it
		 * hands its slot on: seen again after the new gen, an entry
		 * still naming this slot is this task's own.
		 */
		if (tid_slot(*(volatile __u64 *)word, tid) != slot + 1)
			return NULL;
		/* start from zero; gen last, it publishes the rest */
		WRITE_ONCE_U64(&r->seq, 0);
		WRITE_ONCE_U64(&r->offcpu_ns, 0);
		r->preempt_seq = 0;
		r->block_seq = 0;
		r->out_cpus = ~0ULL;
		r->mark_ns = 0;
		r->last_cpu = PROF_SCHED_CPU_NONE;
		r->tid = tid;
		r->start = start;
		WRITE_ONCE_U64(&sl->tl.head, 0);
		sl->tl.clk_rq = 0;
		sl->tl.clk_off = 0;
		WRITE_ONCE_U64(&sl->tl.gen, g);
		WRITE_ONCE_U64(&r->gen, g);
	} else if (r->start != start) {
		return NULL; /* another task with the registered tid */
	}
	*slotp = sl;
	return r;
}

/* now (the run queue clock) as CLOCK_MONOTONIC: the helper at most once a
 * PROF_SCHED_CLK_NS of the thread's switches, not at every one */
static __always_inline __u64 mono_of(struct prof_sched_slices *v, __u64 now)
{
	if (now - v->clk_rq > PROF_SCHED_CLK_NS) {
		v->clk_off = bpf_ktime_get_ns() - now;
		v->clk_rq = now;
	}
	return now + v->clk_off;
}

/*
 * The time of this switch.  The scheduler has just updated its run queue's
 * clock (sched_clock, ns, comparable across CPUs where sched_clock is
 * stable), and a task on this CPU reaches it through its fair-class
 * run queue: three loads from lines the scheduler has just used, where
 * bpf_ktime_get_ns() costs more than the rest of the program (55 ns a
 * switch on a KVM guest).  A kernel without group scheduling has no such
 * pointer: then, and for a task that never had one, ask the helper.
 */
static __always_inline __u64 switch_time(struct task_struct *task)
{
	struct cfs_rq *cfs;
	__u64 t;

	if (bpf_core_field_exists(struct sched_entity, cfs_rq) &&
	    bpf_core_field_exists(struct cfs_rq, rq)) {
		cfs = task->se.cfs_rq;
		if (cfs && cfs->rq) {
			t = cfs->rq->clock;
			if (t)
				return t;
		}
	}
	return bpf_ktime_get_ns();
}

/*
 * A task switched out in state TASK_RUNNING (0) was preempted or yielded:
 * it wanted the CPU.  Any other state is a sleep it chose.  The field is
 * __state since 5.14 (commit 2f064a59a11f), state before.
 */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline bool task_runnable(struct task_struct *t)
{
	if (bpf_core_field_exists(struct task_struct, __state))
		return t->__state == 0;
	return ((struct task_struct___pre514 *)t)->state == 0;
}

/* may TASK be registered: its bit in the one-page filter */
static __always_inline int tid_maybe(struct task_struct *task)
{
	__u32 bit = (__u32)task->pid % PROF_SCHED_FILTER_BITS;

	return (tidfilter[bit / 64] >> (bit % 64)) & 1;
}

/* prev goes off the cpu: one switch, remember when and where */
static __always_inline void switched_out(struct task_struct *prev, bool preempt, __u32 cpu,
					 __u64 now)
{
	struct prof_sched_slot *out_slot = NULL;
	struct prof_sched_rec *out = rec_of(prev, &out_slot);
	struct prof_sched_slices *v;
	struct prof_sched_slice *sl;
	__u64 seq, mark, h, on;
	bool runnable;
	__u32 sh;
	__u16 fl;

	if (!out || (targ_tgid && prev->tgid != targ_tgid))
		return;
	seq = out->seq;
	/* switches live in the low half: wrap inside it */
	seq = (seq & ~0xffffffffULL) | (__u32)((__u32)seq + 1);
	mark = out->mark_ns;
	out->mark_ns = now & ~1ULL;
	sh = 16 * ((__u32)seq % 4);
	out->out_cpus = (out->out_cpus & ~(0xffffULL << sh)) | ((__u64)(cpu & 0xffff) << sh);
	/* it ran here: a record started at this switch, or a return no
	 * program saw (profsched.h), would judge its next return against
	 * another cpu than the one it left, and count a move it did not make */
	out->last_cpu = cpu;
	/* runnable when switched out: preempted, else it slept */
	runnable = preempt || task_runnable(prev);
	if (runnable)
		out->preempt_seq = (__u32)seq;
	else
		out->block_seq = (__u32)seq;
	/* one 64-bit store: the fast path reads seq whole */
	WRITE_ONCE_U64(&out->seq, seq);

	/* the run that ends here, then head: it publishes the slice */
	v = &out_slot->tl;
	h = v->head;
	on = now - (mark & ~1ULL);
	sl = &v->s[h & (PROF_SCHED_SLICES - 1)];
	fl = runnable ? PROF_SLICE_PREEMPTED : PROF_SLICE_BLOCKED;
	/* the run began at the switch in marked (bit 0) */
	if (!(mark & 1) || now < mark) {
		on = 0;
		fl |= PROF_SLICE_NO_START;
	}
	sl->end_ns = mono_of(v, now);
	sl->on_ns = on > 0xffffffffULL ? 0xffffffffU : (__u32)on;
	sl->cpu = (__u16)cpu;
	sl->flags = fl;
	WRITE_ONCE_U64(&v->head, h + 1);
}

/*
 * next comes back: its time away, and whether it moved.  A move is judged
 * against where it last ran (set here, at every return, and at every switch
 * out), not where it last left (the runtime also compares the cpu it runs
 * on with out_cpus: see profsched.h).
 */
static __always_inline void switched_in(struct task_struct *next, __u32 cpu, __u64 now)
{
	struct prof_sched_slot *in_slot = NULL;
	struct prof_sched_rec *in = rec_of(next, &in_slot);
	__u64 mark;

	if (!in || (targ_tgid && next->tgid != targ_tgid))
		return;
	/* a switch out marked (bit 0 clear, not 0): the time since is off
	 * the CPU.  Two CPUs' run queue clocks may disagree by a little:
	 * a time that went backwards adds nothing */
	mark = in->mark_ns;
	if (mark && !(mark & 1) && now > mark)
		WRITE_ONCE_U64(&in->offcpu_ns, in->offcpu_ns + (now - mark));
	if (in->last_cpu != PROF_SCHED_CPU_NONE && cpu != in->last_cpu)
		WRITE_ONCE_U64(&in->seq, in->seq + (1ULL << PROF_SCHED_SEQ_MIGR_SHIFT));
	in->last_cpu = cpu;
	in->mark_ns = now | 1;
}

/*
 * tp_btf hands us BTF-typed task pointers: their fields are read directly
 * (still CO-RE relocated through vmlinux.h's preserve_access_index), not
 * through BPF_CORE_READ's probe-read helper calls, which cost more than
 * the rest of the program.
 *
 * Two programs.  prof_sched_switch, the one attached, reads the two tids
 * and tests their bits in one page, and a switch between unregistered
 * tasks ends there, in a program that saves no register and keeps no stack
 * frame: about what the bare test costs (bench/pingpong's switch_pids).
 * When a bit is set it jumps (a tail call) to prof_sched_registered,
 * loaded, never attached, which does the rest.  With the rest in the same
 * program every switch paid its prologue and spills (~3 ns); as a function
 * called from it, a registered switch paid a call and a return (~9 ns on a
 * kernel that sends every return through the SRSO "Safe RET" thunk); a
 * tail call is a jump (BENCHMARKS.md).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(prof_sched_registered, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	/*
	 * A tail call hands over ctx alone: the bits again (lines the
	 * attached program has just read), so an unregistered partner costs
	 * no look in the tid table.  The CPU and the time first, then each
	 * task whole, one after the other: few values live across the
	 * lookups (calls, to the compiler), so few go to the stack.  The time
	 * is the run queue's, which prev and next share.
	 */
	int out = tid_maybe(prev), in = tid_maybe(next);
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 now = switch_time(out ? prev : next);

	if (out)
		switched_out(prev, preempt, cpu, now);
	if (in)
		switched_in(next, cpu, now);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, int(void *));
} registered SEC(".maps") = {
	.values = { [0] = (void *)&prof_sched_registered },
};

/*
 * Not BPF_PROG: its wrapper, and bpf_tail_call_static, keep ctx in a
 * callee-saved register, which the prologue then saves and the epilogue
 * restores at every switch; written so, ctx stays in r1.  The array is
 * filled at load, so the tail call does not fall through.
 */
SEC("tp_btf/sched_switch")
int prof_sched_switch(__u64 *ctx)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];

	if (!(tid_maybe(prev) | tid_maybe(next)))
		return 0;
	bpf_tail_call(ctx, &registered, 0);
	return 0;
}
