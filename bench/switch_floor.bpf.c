// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * switch_floor.bpf.c - the floor bench/pingpong measures profd's program
 * against: a sched_switch program that does nothing, attached the same way.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "profsched.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_floor, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}

/* TASK's bit in FILTER, a page of PROF_SCHED_FILTER_BITS bits as profd's
 * program's (bpf/profsched.bpf.c: tid_maybe) */
static __always_inline int bit_of(const __u64 *filter, struct task_struct *task)
{
	__u32 bit = (__u32)task->pid % PROF_SCHED_FILTER_BITS;

	return (filter[bit / 64] >> (bit % 64)) & 1;
}

/*
 * The least a program that tells threads apart does at every switch: read
 * both tasks' tids and test each one's bit in a one-page filter (all clear:
 * no thread registered).  profd's program for unregistered threads is this
 * and nothing more, so this measures whether the remaining cost is the
 * program's or the check's.
 */
__u64 pidfilter[PROF_SCHED_FILTER_BITS / 64];

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_pids, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return bit_of(pidfilter, prev) | bit_of(pidfilter, next);
}

/*
 * The least a program that keeps a record per thread does at every switch
 * of two registered threads: each tid's record found in one array indexed
 * by tid (one inlined lookup, no slot, no uid), its switch counted and the
 * time of the switch stored; nothing of preemption, migration, off-CPU
 * time or slices (it reads the time as profd's program does, from the run
 * queue's clock, and needs a kernel with group scheduling, as this
 * benchmark's machine has).  bench/pingpong measures it with both threads'
 * bits set.
 */
struct pid_rec {
	__u64 switches;
	__u64 mark_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROF_SCHED_FILTER_BITS);
	__type(key, __u32);
	__type(value, struct pid_rec);
} pidrecs SEC(".maps");

/* the registered tids' bits (bench/pingpong sets the pair's) */
__u64 recfilter[PROF_SCHED_FILTER_BITS / 64];

static __always_inline void pid_count(struct task_struct *t, __u64 now)
{
	__u32 k = (__u32)t->pid % PROF_SCHED_FILTER_BITS;
	struct pid_rec *r;

	if (!bit_of(recfilter, t))
		return;
	r = bpf_map_lookup_elem(&pidrecs, &k);
	if (r) {
		r->switches++;
		r->mark_ns = now;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_recs, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	/* the time as profd's program takes it: the run queue's clock */
	__u64 now = prev->se.cfs_rq->rq->clock;

	pid_count(prev, now);
	pid_count(next, now);
	return 0;
}
