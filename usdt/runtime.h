/* SPDX-License-Identifier: MIT */
/*
 * runtime.h - internals shared by the runtime's files (not installed).
 */
#ifndef PROF_RUNTIME_H
#define PROF_RUNTIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "prof.h"
#include "fmt.h"

#define PROF_BEGIN_DEPTH	128	/* open PROF_BEGINs per thread */
#define PROF_REG_WAIT_MS	50	/* a thread's first zone waits this long, at
					 * most, for profd to cover it */

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
	/*
	 * The kernel word the thread is to use next (its record, or the
	 * zero record when profd went away), with the record's generation:
	 * the agent sets them and the fast path's limit to 0; the thread's
	 * next zone exit takes them (prof_cover_switch).
	 */
	const struct prof_sched_rec *pend_krec;
	__u64 pend_gen;
	__u32 pend_seq;			/* odd while the agent writes the two */
	/* a thread at its first zone waits (bounded) for its registration */
	bool sync_wait;
	bool sync_done;			/* the agent answered, either way */
	const struct prof_sched_rec *sync_rec; /* its answer: the record, or NULL */
	__u64 sync_gen;
	bool want_pend;			/* the record was not ready: the agent is to
					 * hand it over when it is */
	bool late;			/* its first zone stopped waiting for profd */
};

struct prof_rt {
	pthread_mutex_t lock;		/* slow paths only */
	struct prof_seg_hdr *seg;	/* NULL until created, or if disabled */
	size_t seg_len;
	int seg_fd;			/* kept open: pages are reserved before use */
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
	__u32 ring_events;		/* events in each slab's ring, 0: off */
	__u64 slab_size;
	struct prof_region region[PROF_REGIONS]; /* inside each slab */
	struct prof_region part[PROF_PARTS];	/* inside its annotation region */
	struct prof_site_ent *sites;
	char *slabs;
	/* descriptor -> site index, open addressing, 2 * max_sites */
	const struct prof_site **site_keys;
	__u32 *site_vals;
	struct prof_tentry *threads;	/* newest first */
	/*
	 * Exited threads (slab.h, 3.2): the entries of those that gave their
	 * slabs up, oldest first (a ring), folded into the aggregate all at
	 * once when a new thread finds no free slab; and the aggregate's tree:
	 * (parent, site) -> node + 1, as a thread's table.
	 */
	struct prof_tentry **free_te;	/* max_threads of them at most */
	__u32 free_head, nfree;
	struct prof_tentry **clean_te;	/* folded, their slabs cleared: free */
	__u32 nclean;
	struct prof_slab_hdr *agg;	/* NULL until the first fold */
	__u32 *agg_table;
	__u32 agg_mask, agg_nnodes, agg_res;
	__u32 *fold_map;		/* a folding thread's node -> aggregate node */
};

extern struct prof_rt prof_rt;
extern pthread_cond_t prof_reg_cv;	/* sync_done, under prof_rt.lock */
extern const struct prof_sched_rec prof_zero_rec;

/* a thread's kernel word changes to te->pend_krec at its next zone exit */
void prof_cover_request(struct prof_tentry *te, const struct prof_sched_rec *rec, __u64 gen);

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
/* a thread's first zone: registered now if profd is there (a bounded wait);
 * its record and generation, or NULL */
const struct prof_sched_rec *prof_agent__register_sync(struct prof_tentry *te, __u64 *gen);
/* the record it got was not ready: the agent hands it over when it is */
void prof_agent__want(struct prof_tentry *te);

/* env.c: the PROF_* settings, parsed once per segment (prof_env__read) */
#define PROF_ENV_INTERVAL_MIN	0.01
/* a thread's event ring: 16 bytes an event, reserved when the thread starts */
#define PROF_TRACE_EVENTS_DEFAULT	16384
#define PROF_TRACE_EVENTS_MAX		(1u << 24)
#define PROF_ENV_INTERVAL_MAX	86400.0
struct prof_env {
	__u32 max_threads, max_nodes, max_sites;	/* PROF_MAX_* */
	__u32 trace_events;		/* PROF_TRACE_EVENTS: a power of two, 0: off */
	bool quiet;			/* PROF_QUIET */
	bool keep;			/* PROF_KEEP */
	bool no_daemon;			/* PROF_NO_DAEMON */
	bool clock_mono;		/* PROF_CLOCK=mono */
	bool report_json;		/* PROF_REPORT_FORMAT=json */
	bool report_compensate;		/* PROF_REPORT_COMPENSATE */
	double log_interval;		/* PROF_LOG_INTERVAL, 0: off */
	char *report;			/* PROF_REPORT: stderr, stdout or a path; NULL: none */
	char *save;			/* PROF_SAVE: a path, %p the pid; NULL: none */
	char socket[108];		/* PROF_SOCKET (or PROFD_SOCKET); empty: the default */
	unsigned int warn_count;	/* warnings printed */
	bool warned;			/* by this process or before its fork */
};
extern struct prof_env prof_env;
void prof_env__read(void);
/* 0 or -EINVAL; *out untouched on error (prof_env_parse_flag: fmt.h) */
int prof_env_parse_u32(const char *s, __u32 lo, __u32 hi, __u32 *out);
int prof_env_parse_seconds(const char *s, double *out);

/* logger.c: PROF_LOG_INTERVAL */
void prof_logger__start(double interval);
/* one log line into buf: "prof: NAME tid N ZONE: IN/INTERVAL PCT% CALLS calls\n",
 * time inside clamped to the interval */
int prof_log_format(char *buf, size_t len, const char *thread, __u32 tid, const char *zone,
		    __u64 in_ns, __u64 interval_ns, __u64 calls);
void prof_logger__atfork_child(void);
struct prof_snapshot;
void prof_logger__lines(FILE *f, struct prof_snapshot *cur, const struct prof_snapshot *prev,
			__u64 interval_ns);

#endif /* PROF_RUNTIME_H */
