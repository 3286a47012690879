/* SPDX-License-Identifier: MIT */
/*
 * profctl_samples.h - profd's sampled stacks as profctl reads them
 * (profctl_samples.c), and the views that draw them.
 */
#ifndef PROFCTL_SAMPLES_H
#define PROFCTL_SAMPLES_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

struct pc_opts;
struct pc_src;
struct prof_out;
struct prof_snapshot;
struct prof_snap_thread;

/* the zone name --inside takes for the samples outside every zone */
#define PC_OUTSIDE "[outside zones]"

struct pc_frame {
	const char *func;	/* "" when unknown */
	const char *file;	/* "" when unknown */
	const char *mod;	/* module+0xoffset, or the bare address */
	unsigned int line;	/* 0 when unknown */
};

struct pc_stack {
	__u32 tid;
	__u64 count;
	const char *path;	/* the zones open, outermost first, US apart; "" none */
	__u32 nframes;
	struct pc_frame *f;	/* innermost first */
};

struct pc_samples {
	__u32 hz;		/* per CPU, 0: off */
	__u64 total;		/* samples in every line (pid 0: profd's count) */
	char why[192];		/* why sampling is off, "" if on */
	bool file;		/* from the profile file report --input read */
	bool all;		/* pid 0: profd's state, no process's */
	__u64 named, cached;	/* pid 0: frames profd named from ELF and
				 * DWARF, and from the cache of every process */
	__u64 lost;		/* pid 0: samples the kernel's ring had no room for */
	__u64 table_bytes, cache_bytes; /* pid 0: what the stacks and the frame
					 * cache take of profd's --max-memory */
	size_t n;
	struct pc_stack *st;
	char *text;		/* what the strings point into */
};

/* pid's samples from profd (src->fd), or none and why (pid 0: none, profd's
 * state alone); from the file after pc_samples_input; NULL: no memory */
struct pc_samples *pc_samples_get(const struct pc_src *src, pid_t pid);
/* report --input: samples come from the file read (none if it has none) */
void pc_samples_input(void);
/*
 * The one line every view says of stack sampling (report's title, JSON's
 * "samples_state", html, --inside, status): "on at N Hz a CPU, M of this
 * process", or "off: " and why, into buf; buf
 */
#define PC_SAMPLES_STATE_MAX 256
const char *pc_samples_state(const struct pc_samples *s, char *buf, size_t len);
/* the same line for pid (0: profd's, as status says it), without its stacks */
const char *pc_samples_state_of(const struct pc_src *src, pid_t pid, char *buf, size_t len);
/* profd's text into s (its strings point into text, modified); 0 or -ENOMEM */
int pc_samples_parse(char *text, struct pc_samples *s);
void pc_samples_free(struct pc_samples *s);
/* report --inside ZONE: the lines sampled while ZONE was open */
int pc_render_inside(FILE *out, const struct pc_samples *s, pid_t pid, const char *zone,
		     const struct pc_opts *o);
/* zone's hottest line, where the samples in ZONE itself (not in zones
 * inside it) most often were: "func (file:line) 62%" into buf; 1, or 0 and
 * "" if it has none */
int pc_samples_hottest(const struct pc_samples *s, const char *zone, char *buf, size_t len);
/* the JSON tree (prof_report_json), each node with "samples" (those in its
 * zone itself) and "inside" (their innermost lines) when profd (src) has
 * samples of the process */
int pc_render_json_tree(FILE *f, struct prof_snapshot *const *snaps, size_t n,
			const struct pc_src *src);
/* node i's zone path as profd names it (site names, US apart) into buf */
void pc_node_path(const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i,
		  char *buf, size_t len);
/* st was sampled in t while the zone of path was the innermost open */
bool pc_stack_of(const struct pc_stack *st, const struct prof_snap_thread *t, const char *path);
/* the samples (with a stack) t took with path's zone the innermost open */
__u64 pc_node_samples(const struct pc_samples *sm, const struct prof_snap_thread *t,
		      const char *path);
/* the C function node i's zone is in, NULL if none */
const char *pc_node_func(const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i);
/* frames [0, n) of st from the innermost to func's (the zone's function),
 * or the innermost alone if func is not on it: n */
__u32 pc_stack_top(const struct pc_stack *st, const char *func);
bool pc_frame_same(const struct pc_frame *a, const struct pc_frame *b);
/* folded stacks: node i's stacks sampled in its zone itself, each
 * "label;path;frames... ns" with its share of cpu_ns (of the node's self
 * self_ns), to out; what is left of self_ns for the zone's own line */
__u64 pc_samples_folded(struct prof_out *out, const struct pc_samples *sm,
			const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i,
			const char *label, const char *path, __u64 self_ns, __u64 cpu_ns);
/* a saved profile (prof_file_encode's, in *buf) with profd's samples
 * (text, tlen bytes, as profd sent them) after its body: version 2 */
int pc_file_add_samples(void **buf, size_t *len, const char *text, size_t tlen, __u32 hz);
/* the samples of a checked profile file (header h), for every
 * pc_samples_get from now on (report --input); 0 or -errno */
struct prof_file_hdr;
int pc_file_take_samples(const void *buf, size_t len, const struct prof_file_hdr *h);
/* the html page's nodes for thread t's samples: a row a distinct frame
 * under its parent (a zone node, or a row: index nnodes + its own), from
 * each zone's function down, with its share of the zone's on-CPU self time
 * (total, and self at the innermost), and what each zone gave them */
struct pc_html_row {
	__u32 parent;
	char *name;
	__u64 total, self;
};
struct pc_html_rows {
	struct pc_html_row *r;
	size_t n, cap;
	__u64 *given; /* per node of t, NULL without samples */
};
int pc_samples_html(const struct pc_samples *sm, const struct prof_snapshot *s,
		    const struct prof_snap_thread *t, const __u64 *oncpu, struct pc_html_rows *x);
void pc_html_rows_free(struct pc_html_rows *x);
/* and no more of them */
void pc_file_samples_forget(void);
#endif /* PROFCTL_SAMPLES_H */
