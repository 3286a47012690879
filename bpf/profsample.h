/* SPDX-License-Identifier: MIT */
/*
 * profsample.h - a sampled user stack of a registered thread, from
 * bpf/profsample.bpf.c (the writer, on a per-CPU cpu-clock perf_event) to
 * profd (the reader, daemon/profd/profd_stacks.c) through a ring buffer.
 * Fixed-width fields only; includes nothing.
 */
#ifndef PROF_PROFSAMPLE_H
#define PROF_PROFSAMPLE_H

#define PROF_SAMPLE_FRAMES	64	/* user frames kept a sample, innermost first */
#define PROF_SAMPLE_RING	(1u << 20) /* ring buffer bytes: some 1800 samples */
#define PROF_SAMPLE_MAPGENS	16384	/* processes whose maps generation is kept */

struct prof_sample {
	__u64 mono_ns;		/* when: CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 nframes;		/* frames in ip[] */
	__u32 map_gen;		/* the process's maps generation then (see
				 * 'mapgen'): profd names a frame only from
				 * maps it read in that generation */
	__u64 ip[PROF_SAMPLE_FRAMES]; /* ip[0] the interrupted instruction, then
				 * return addresses (frame pointers) */
};

#endif /* PROF_PROFSAMPLE_H */
