/* SPDX-License-Identifier: MIT */
/*
 * usdt/prof_int.h - what the runtime's slow-path files (usdt/prof*.c)
 * share with each other: the per-thread state and the calls between them.
 */
#ifndef PROF_INT_H
#define PROF_INT_H

#include <signal.h>
#include "runtime.h"
#include "zone_leave.h"

/*
 * The kernel word of a thread profd does not cover: constant, with a seq no
 * real record reaches, so a call that straddles a change of records (profd
 * came or went) sees seq move and is counted as one without kernel facts.
 */
#define PROF_SEQ_UNCOVERED (~0ull)

#define NODE_NONE 0xffffffffU

/* the marker of a thread whose slab went back (prof.h) */
#define PROF_CUR_GONE __PROF_GONE

/* a sink's two nodes, their ext records and their histogram block */
struct prof_sink {
	struct prof_node nodes[2];
	struct prof_node_ext ext[2];
	__u64 open[2];
	__u64 rowmap[PROF_ROWMAP_WORDS];
	__u32 hist[PROF_HIST_BLOCK * PROF_HIST_BUCKETS];
	/* as a slab's ring: the events right after the head's line (the
	 * fast exit finds them from the head) */
	struct prof_ring ring_hdr;
	struct prof_event ring[1];
};
_Static_assert(__builtin_offsetof(struct prof_sink, ring) ==
		       __builtin_offsetof(struct prof_sink, ring_hdr) + PROF_RING_HDR_SIZE,
	       "a sink's events follow its ring head as a slab's do");

/* per-thread slow-path state */
struct prof_tpriv {
	struct prof_tentry *te; /* NULL: thread not profiled (sink) */
	struct prof_slab_hdr *hdr;
	__u32 *table; /* (parent, site) -> node + 1, 2 * max_nodes */
	void *sink;   /* a sink thread's own nodes, freed at exit */
	void *priv;   /* a fork child's private slab (prof_rt.slab_size), unmapped at exit */
	__u32 table_mask;
	__u32 nnodes; /* our copy of hdr->nnodes */
	__u32 max_nodes;
	__u64 last_frame;
	__u32 res_nodes; /* nodes [0, res_nodes) have their pages reserved */
	volatile sig_atomic_t busy; /* in a slow path that locks or grows the tree:
				     * a zone in a signal handler must not enter one */
	__u64 kgen;   /* the generation of the record the thread uses */
	__u32 fork_cur; /* a fork child's current node, parked */
	__u32 nbegin;
	struct __prof_zone begin[PROF_BEGIN_DEPTH];
	unsigned long long begin_subs[PROF_BEGIN_DEPTH]; /* dl_subs() at each BEGIN */
	/* each BEGIN's site: its cache, which names it too, may be unloaded */
	const struct prof_site *begin_site[PROF_BEGIN_DEPTH];
	struct __prof_cache gone_cache; /* an END's whose site was unloaded */
};


extern bool prof_fork_mover;
extern __u64 prof_sink_activity;
extern __u32 prof_sink_ext_used;
extern struct prof_sink prof_last_resort;
extern __thread struct prof_tpriv prof_tpriv __attribute__((tls_model("initial-exec")));
extern pthread_key_t prof_key;
extern pthread_once_t prof_once;

/* prof.c */
void prof_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void prof_once_init(void);

/* prof_clock.c */
__u64 prof_mono_ns(clockid_t clk);
__u64 prof_clock_calibrate(void);
__u64 prof_day(void);

/* prof_proc.c */
__u64 prof_self_start_token(void);

/* prof_seg.c */
int prof_seg_reserve(__u64 off, __u64 len);
void prof_seg_nospace(void);
int prof_slab_reserve_nodes(struct prof_slab_hdr *h, __u32 from, __u32 to, __u32 *res);
int prof_slab_reserve(struct prof_slab_hdr *h, __u32 nnodes, __u32 *res);
int prof_seg_init(void);

/* prof_site.c */
void prof_copy_str(char *dst, size_t len, const char *src);
__u32 prof_site_index(const struct prof_site *s);

/* prof_thread.c */
void prof_thread_bind_sink(struct __prof_thread *t, struct prof_sink *k);
void prof_thread_bind_slab(struct __prof_thread *t, struct prof_slab_hdr *hdr);
void prof_thread_sink(struct __prof_thread *t);
void prof_node_init(struct prof_node *n, __u32 site, __u32 parent);
void prof_slab_claim(struct prof_slab_hdr *hdr);
__u32 prof_thread_table_size(void);
__u64 prof_fast_limit(const struct __prof_thread *t);
__u32 prof_node_lookup(__u32 parent, __u32 site);
void prof_thread_prepare(void);
void prof_thread_ready(void);
void prof_thread_mark_exited(struct prof_tpriv *p);
void prof_thread_exit(void *arg);

/* prof_fold.c */
bool prof_threads_fold(void);

/* prof_fold_annot.c: slab h's locks and plots into the aggregate a's,
 * a lock's zone by map (h's node -> a's, nn of them) */
void prof_fold_annot(struct prof_slab_hdr *h, struct prof_slab_hdr *a, const __u32 *map,
		     __u32 nn);

/* prof_exit.c */
void prof_atexit(void);

/* prof_fork.c */
void prof_fork_drop_old(void);
void prof_fork_child(void);
void prof_fork_publish_locked(void);
void prof_fork_move_self(void);

static inline __u32 node_hash(__u32 parent, __u32 site)
{
	__u64 k = ((__u64)parent << 32) | site;

	k *= 0x9e3779b97f4a7c15ull;
	return (__u32)(k >> 32);
}

/* the thread's node for (parent, site), or NODE_NONE with *slot the
 * table's free entry for it; reads only (a slab's thread, site known) */
static inline __u32 node_find(const struct prof_tpriv *p, __u32 parent, __u32 site, __u32 *slot)
{
	const struct prof_node *nodes = __prof_tls.nodes;
	__u32 i, v;

	for (i = node_hash(parent, site) & p->table_mask;; i = (i + 1) & p->table_mask) {
		v = p->table[i];
		if (!v)
			break;
		if (nodes[v - 1].parent == parent && nodes[v - 1].site == site)
			return v - 1;
	}
	*slot = i;
	return NODE_NONE;
}

#endif /* PROF_INT_H */
