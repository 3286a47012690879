// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * profsched.bpf.c - the kernel word: per registered thread, count switches
 * out, migrations and time spent switched out.
 *
 * profd puts tid -> {slot, gen} into 'tids' when a thread registers.  The
 * array 'recs' is frozen (no writes from user space, profd included): this
 * program is its only writer, and starts a record afresh on the first
 * switch of a new owner (gen differs), so a reused slot or tid never
 * inherits numbers.  A thread that is not registered costs one hash lookup
 * that misses.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "profsched.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* only count threads of this tgid (tests); 0 = every registered thread */
const volatile __u32 targ_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROF_SCHED_MAX_SLOTS);
	__type(key, __u32);	/* tid */
	__type(value, struct prof_sched_slot);
} tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PROF_SCHED_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct prof_sched_rec);
} recs SEC(".maps");

/* one 64-bit store (clang 14 has no BPF atomic store; volatile does it) */
#define WRITE_ONCE_U64(p, v) (*(volatile __u64 *)(p) = (v))

static __always_inline struct prof_sched_rec *rec_of(__u32 tid)
{
	struct prof_sched_slot *v;
	struct prof_sched_rec *r;

	if (!tid)
		return NULL;	/* the idle task */
	v = bpf_map_lookup_elem(&tids, &tid);
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

SEC("tp_btf/sched_switch")
int BPF_PROG(prof_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 now = bpf_ktime_get_ns();
	struct prof_sched_rec *r;
	__u64 seq;

	/* prev goes off the cpu: one switch, remember when and where */
	r = rec_of(BPF_CORE_READ(prev, pid));
	if (r && (!targ_tgid || BPF_CORE_READ(prev, tgid) == targ_tgid)) {
		seq = r->seq;
		/* switches live in the low half: wrap inside it */
		seq = (seq & ~0xffffffffULL) | (__u32)((__u32)seq + 1);
		r->out_ns = now;
		r->last_cpu = cpu;
		/* one 64-bit store: the fast path reads seq whole */
		WRITE_ONCE_U64(&r->seq, seq);
	}

	/* next comes back: its time away, and whether it moved */
	r = rec_of(BPF_CORE_READ(next, pid));
	if (r && (!targ_tgid || BPF_CORE_READ(next, tgid) == targ_tgid)) {
		/* out_ns == 0: never seen going out since the slot was assigned */
		if (r->out_ns && now > r->out_ns) {
			WRITE_ONCE_U64(&r->offcpu_ns, r->offcpu_ns + (now - r->out_ns));
			if (cpu != r->last_cpu) {
				seq = r->seq + (1ULL << PROF_SCHED_SEQ_MIGR_SHIFT);
				WRITE_ONCE_U64(&r->seq, seq);
			}
		}
		r->out_ns = 0;
	}
	return 0;
}
