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
