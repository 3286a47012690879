/* SPDX-License-Identifier: MIT */
/*
 * runtime.h - internals shared by the runtime's files (not installed).
 */
#ifndef PROF_RUNTIME_H
#define PROF_RUNTIME_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include "prof.h"

#define PROF_BEGIN_DEPTH	128	/* open PROF_BEGINs per thread */

/* one per profiled thread, process-wide list; never freed */
struct prof_tentry {
	struct prof_tentry *next;
	pid_t tid;
	__u32 slab;			/* slab index */
	struct prof_slab_hdr *hdr;	/* in the segment */
	struct __prof_thread *fast;	/* the thread's TLS; valid while alive */
	__u32 *table;			/* its node lookup table; NULL once exited */
	bool alive;			/* under prof_rt.lock */
	bool registered;		/* agent: profd gave it a slot */
	__u32 kslot;			/* agent: that slot */
};

struct prof_rt {
	pthread_mutex_t lock;		/* slow paths only */
	struct prof_seg_hdr *seg;	/* NULL until created, or if disabled */
	size_t seg_len;
	char seg_name[96];		/* for shm_unlink */
	bool disabled;			/* could not create: reported once */
	/* a fork child's segment is made at its first zone activity, so a
	 * child that only execs leaves none; until then these hold the
	 * parent's, which the child never writes */
	bool fork_pending;		/* the child's segment is not made yet */
	struct prof_seg_hdr *fork_old;	/* the parent's mapping, until moved out */
	size_t fork_old_len;
	bool keep;			/* PROF_KEEP */
	double ns_per_tick;
	__u32 max_sites, max_threads, max_nodes;
	__u64 slab_size;
	struct prof_region region[PROF_REGIONS]; /* inside each slab */
	struct prof_site_ent *sites;
	char *slabs;
	/* descriptor -> site index, open addressing, 2 * max_sites */
	const struct prof_site **site_keys;
	__u32 *site_vals;
	struct prof_tentry *threads;	/* newest first */
};

extern struct prof_rt prof_rt;

static inline struct prof_slab_hdr *prof_rt_slab(__u32 i)
{
	return (struct prof_slab_hdr *)(prof_rt.slabs + (size_t)i * prof_rt.slab_size);
}

/* region r of a slab */
static inline void *prof_rt_region(struct prof_slab_hdr *h, enum prof_region_id r)
{
	return (char *)h + prof_rt.region[r].off;
}

pid_t prof_gettid(void);
__u64 prof_ticks_to_ns(__u64 ticks);

/* agent.c: the profd client, a background thread (never the app's) */
void prof_agent__start(void);
void prof_agent__kick(void);		/* a thread was added */
void prof_agent__atfork_child(void);

/* logger.c: PROF_LOG_INTERVAL */
void prof_logger__start(double interval);
void prof_logger__atfork_child(void);

#endif /* PROF_RUNTIME_H */
