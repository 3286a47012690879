// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * profsample.bpf.c - a registered thread's user stack, sampled.
 *
 * Attached by profd to a cpu-clock perf_event on every CPU (--sample-hz).
 * A tick that lands in a thread profd registered (its 'tidslots' entry,
 * the map profsched.bpf.c reads, shared by fd) sends the thread's user
 * stack and the instant to profd through a ring buffer; any other tick
 * costs one array lookup.  profd attributes each sample to the zone that
 * was open at that instant (from the thread's slab) and symbolizes it.
 *
 * A sampled process's new mapping at an address the kernel chose (the
 * way ld.so places a library: dlopen) bumps its maps generation, which
 * each sample carries: profd names a frame only from maps it read in the
 * sample's generation, so code unmapped (dlclose) and something else
 * mapped where it was is never named as what is there now.  (The kernel
 * here has neither kprobes nor fentry on remove_vma; a tracepoint is what
 * a tp_btf program can hold.)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "profsched.h"
#include "profsample.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* the profsched program's map, reused by fd: tid -> slot + 1 (profsched.h) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* profd reuses profsched's */
	__type(key, __u32);
	__type(value, __u64);
} tidslots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PROF_SAMPLE_RING);
} samples SEC(".maps");

/* tgid -> its maps generation: mappings placed by the kernel since it was
 * first sampled (only sampled processes have an entry) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROF_SAMPLE_MAPGENS);
	__type(key, __u32);
	__type(value, __u32);
} mapgen SEC(".maps");

SEC("tp_btf/vm_unmapped_area")
int BPF_PROG(prof_unmap, unsigned long addr, struct vm_unmapped_area_info *info)
{
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32), *g;

	g = bpf_map_lookup_elem(&mapgen, &tgid);
	if (g)
		__sync_fetch_and_add(g, 1);
	return 0;
}

/* samples the ring had no room for (profd reads it) */
__u64 dropped = 0;

SEC("perf_event")
int prof_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), *word;
	__u32 tid = (__u32)id, w = tid / PROF_SCHED_TIDS_PER_WORD, *gen;
	struct prof_sample *s;
	long n;

	word = bpf_map_lookup_elem(&tidslots, &w);
	if (!word || !(__u16)(*word >> (16 * (tid % PROF_SCHED_TIDS_PER_WORD))))
		return 0;
	s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	s->mono_ns = bpf_ktime_get_ns();
	s->pid = (__u32)(id >> 32);
	s->tid = tid;
	w = (__u32)(id >> 32);
	gen = bpf_map_lookup_elem(&mapgen, &w);
	s->map_gen = gen ? *gen : 0;
	/* counted from its first sample on */
	if (!gen)
		bpf_map_update_elem(&mapgen, &w, &s->map_gen, BPF_NOEXIST);
	n = bpf_get_stack(ctx, s->ip, sizeof(s->ip), BPF_F_USER_STACK);
	s->nframes = n > 0 ? (__u32)n / sizeof(__u64) : 0;
	/* profd drains on its timer; it is woken (an irq_work) only past
	 * half full, never at the first sample after each drain */
	bpf_ringbuf_submit(s, bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) * 2 >
				      bpf_ringbuf_query(&samples, BPF_RB_RING_SIZE) ?
			      BPF_RB_FORCE_WAKEUP :
			      BPF_RB_NO_WAKEUP);
	return 0;
}
