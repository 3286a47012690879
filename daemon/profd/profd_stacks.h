/* SPDX-License-Identifier: MIT */
/*
 * profd_stacks.h - profd's sampled stacks (--sample-hz): the perf_event
 * sampler (profd_stacks.c), which zone each sample fell in
 * (profd_attrib.c) and its symbols (profd_sym.c).  Not installed.
 */
#ifndef PROFD_STACKS_H
#define PROFD_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

/* profd_attrib.c */
#define PROF_ATTR_OUTSIDE 0xfffffffeU /* no zone was open */
#define PROF_ATTR_UNKNOWN 0xffffffffU /* the slab no longer says */
#define PROF_ATTR_DEPTH 64	      /* zones deep a path is named to */
#define PROF_ATTR_SEP "\x1f"	      /* between a path's zone names */

struct prof_attr {
	__u64 tick; /* in: when, in the segment's ticks */
	__u32 node; /* out: the innermost zone open then, or PROF_ATTR_* */
};
/* tid's samples, each given the node of the zone open at its tick (see
 * profd_attrib.c); the slab's index, or -errno (-ESRCH: no live slab of
 * tid, -ESTALE: it changed hands during the read) */
int prof_seg_attribute(const void *mem, size_t len, __u32 tid, struct prof_attr *s, __u32 n);
/* the end tick of the oldest call tid's event ring still holds into
 * *oldest (0: the ring never wrapped, it holds every call); 0 or -errno */
int prof_seg_ring_oldest(const void *mem, size_t len, __u32 tid, __u64 *oldest);
/* node's zone path, outermost first, names joined by PROF_ATTR_SEP; 0 or -errno */
int prof_seg_node_path(const void *mem, size_t len, __u32 slab, __u32 node, char *buf,
		       size_t size);
/* the same in a segment its caller checked once (seg_check into g, one
 * look at it): a drain checks it once a process, not once a call */
struct seg_geom;
int prof_seg_attribute_g(const void *mem, const struct seg_geom *g, __u32 tid,
			 struct prof_attr *s, __u32 n);
int prof_seg_ring_oldest_g(const void *mem, const struct seg_geom *g, __u32 tid, __u64 *oldest);
int prof_seg_node_path_g(const void *mem, const struct seg_geom *g, __u32 slab, __u32 node,
			 char *buf, size_t size);
/* tests: every attribution by the walk of the ring (the search not tried),
 * and how many were done by the search */
extern bool prof_attr_walk_only;
extern __u64 prof_attr_fast_used;

/* profd_sym.c: a process's addresses as function, file:line or module+offset */
struct sym_proc;
/* gen_now(pid): the process's maps generation now (sample_map_gen) */
struct sym_proc *sym_proc__new(pid_t pid, __u32 (*gen_now)(pid_t pid));
void sym_proc__destroy(struct sym_proc *p);
/* addr's frame, "func" US "file" US "line" US "module+0xoff" (US = \x1f,
 * empty fields unknown): the cache's (valid until the next call), else
 * named into buf (every call with one size); a return address (not the
 * first frame) is looked up one byte back, in its call; gen the sample's
 * maps generation (a frame of another than the maps read is its address) */
const char *sym_frame(struct sym_proc *p, __u64 addr, bool ret, __u32 gen, char *buf,
		      size_t size);
/* frames named by ELF and DWARF, and from the cache every process shares */
void sym_counts(__u64 *lookups, __u64 *hits);
void sym_cache_free(void);
/* the frame cache's strings take at most bytes (in --max-memory); what they take */
void sym_cache_bound(__u64 bytes);
__u64 sym_cache_bytes(void);

/* profd_stacks.c */
int sample_open(__u32 hz);	/* after kbpf_open; 0 or -errno (then off, why said) */
void sample_close(void);
int sample_timer_fd(void);	/* drain when it fires; -1 when off */
int sample_ring_fd(void);	/* drain when it wakes (past half full); -1 when off */
void sample_drain(void);
void sample_poll(void);		/* attach while a thread is registered (each tick) */
__u64 sample_dropped(void);	/* samples the kernel's ring had no room for */
const char *sample_why(void);	/* why sampling is off, "" when on */
__u64 sample_bytes(void);	/* what the tables and the frame cache take (in --max-memory) */
__u32 sample_map_gen(pid_t pid); /* its maps generation now (profsample.h) */
/* pid's sampled stacks as text (profd_samples_rep's fd), *nsamples how
 * many (pid 0: every process's count, and one line "frames TAB looked up
 * TAB from the cache"): 0 or -errno */
int sample_dump(pid_t pid, FILE *out, __u64 *nsamples);
#endif /* PROFD_STACKS_H */
