// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * profsched.bpf.c - the kernel word: per registered thread, count switches
 * out, migrations and time spent switched out.
 *
 * profd puts tid -> {slot, gen} into 'tids' when a thread registers.  The
 * array 'recs' is frozen (no writes from user space, profd included): this
 * program is its only writer, and starts a record afresh on the first
 * switch of a new owner (gen differs), so a reused slot or tid never
 * inherits numbers.  A thread that is not registered costs one bit test.
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
 * Which tasks are registered, and to which slot: task-local storage, set
 * by profd through a pidfd of the thread.  An entry goes away with its
 * task (a hash keyed by tid would outlive it, and a lookup that misses
 * costs more than the rest of the program).
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int); /* a pidfd, from user space */
	__type(value, struct prof_sched_slot);
} tids SEC(".maps");

/*
 * Bit tid % 64 of word tid / 64 is set while tid may be registered: profd
 * sets it after the task's storage and clears it when it frees the slot.
 * A clear bit is all an unregistered task costs: the array lookup is
 * inlined by the verifier, where a task-storage lookup is a helper call
 * that, twice per switch, costs as much as attaching the program at all.
 * A set bit only says "look": the storage decides.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PROF_SCHED_TIDBITS_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} tidbits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PROF_SCHED_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct prof_sched_rec);
} recs SEC(".maps");

/* one 64-bit store (clang 14 has no BPF atomic store; volatile does it) */
#define WRITE_ONCE_U64(p, v) (*(volatile __u64 *)(p) = (v))

static __always_inline struct prof_sched_rec *rec_of(struct task_struct *task)
{
	struct prof_sched_slot *v;
	struct prof_sched_rec *r;
	__u32 tid = task->pid, w = tid / 64;
	__u64 *bits;

	bits = bpf_map_lookup_elem(&tidbits, &w);
	if (bits && !(*bits & (1ULL << (tid % 64))))
		return NULL;
	v = bpf_task_storage_get(&tids, task, NULL, 0);
	if (!v)
		return NULL;
	r = bpf_map_lookup_elem(&recs, &v->slot);
	if (!r)
		return NULL;
	if (r->gen != v->gen) {
		/* a new owner: start from zero; gen last, it publishes the rest */
		WRITE_ONCE_U64(&r->seq, 0);
		WRITE_ONCE_U64(&r->offcpu_ns, 0);
		r->out_ns = 0;
		r->last_cpu = 0;
		r->tid = tid;
		WRITE_ONCE_U64(&r->gen, v->gen);
	}
	return r;
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
 * tp_btf hands us BTF-typed task pointers: their fields are read directly
 * (still CO-RE relocated through vmlinux.h's preserve_access_index), not
 * through BPF_CORE_READ's probe-read helper calls, which cost more than
 * the rest of the program.  Nothing else is done for a switch between
 * unregistered tasks: two bit tests.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(prof_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct prof_sched_rec *out, *in;
	__u32 cpu;
	__u64 now, seq;

	out = rec_of(prev);
	if (out && targ_tgid && prev->tgid != targ_tgid)
		out = NULL;
	in = rec_of(next);
	if (in && targ_tgid && next->tgid != targ_tgid)
		in = NULL;
	if (!out && !in)
		return 0;
	cpu = bpf_get_smp_processor_id();
	now = switch_time(out ? prev : next);

	/* prev goes off the cpu: one switch, remember when and where */
	if (out) {
		seq = out->seq;
		/* switches live in the low half: wrap inside it */
		seq = (seq & ~0xffffffffULL) | (__u32)((__u32)seq + 1);
		out->out_ns = now;
		out->last_cpu = cpu;
		/* one 64-bit store: the fast path reads seq whole */
		WRITE_ONCE_U64(&out->seq, seq);
	}

	/* next comes back: its time away, and whether it moved */
	if (in) {
		/* out_ns == 0: never seen going out since the slot was assigned */
		if (in->out_ns && now > in->out_ns) {
			WRITE_ONCE_U64(&in->offcpu_ns, in->offcpu_ns + (now - in->out_ns));
			if (cpu != in->last_cpu) {
				seq = in->seq + (1ULL << PROF_SCHED_SEQ_MIGR_SHIFT);
				WRITE_ONCE_U64(&in->seq, seq);
			}
		}
		in->out_ns = 0;
	}
	return 0;
}
