// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * switch_floor.bpf.c - the floor bench/pingpong measures profd's program
 * against: a sched_switch program that does nothing, attached the same way.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_floor, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}

/*
 * The least a program that tells threads apart does at every switch: read
 * both tasks' tids and test each one's bit in a one-page filter (all clear:
 * no thread registered).  profd's program for unregistered threads is this
 * and nothing more, so this measures whether the remaining cost is the
 * program's or the check's.
 */
__u64 pidfilter[32768 / 64];

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_pids, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 a = (__u32)prev->pid % 32768, b = (__u32)next->pid % 32768;

	if ((pidfilter[a / 64] >> (a % 64)) & 1)
		return 1;
	if ((pidfilter[b / 64] >> (b % 64)) & 1)
		return 1;
	return 0;
}
