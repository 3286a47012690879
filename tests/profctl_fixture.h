/* SPDX-License-Identifier: MIT */
/*
 * profctl_fixture.h - the fixed snapshot profctl's golden tests render:
 * built by hand, so every number is known, then written as a segment image
 * with prof_snapshot__write and read back through the validating reader.
 *
 * Process 4242 "golden", tick_hz 1e9 (ticks are ns), two threads:
 *
 *	main (4242), wall 60ms			worker (4243, profd slot 3), wall 32ms,
 *	  main_loop 10 calls 50ms, of which	on-cpu 28ms; kernel facts for every call
 *	    5ms an open call			but half of alloc_buf's
 *	    parse 100 calls 20ms		  render 20 calls 30ms, 2 preempted,
 *	      lex 1000 calls 8ms		         3 blocked, 1 migrated, 4ms off-cpu
 *	    render 10 calls 15ms		    lex 200 calls 5ms
 *	      lex 50 calls 1ms			    alloc_buf 20 calls 1ms (10 covered)
 *	  fib 1 call 3ms			  [overflow] 5 calls 0.1ms
 *	    fib 2 calls 2.5ms
 *	      fib 4 calls 1.5ms
 */
#ifndef PROFCTL_FIXTURE_H
#define PROFCTL_FIXTURE_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"

struct fx_node {
	__u32 site, parent;
	__u64 calls, ticks, max, preempted, migrated, offcpu, allocs, alloc_bytes;
	__u64 kcalls, blocked, open_ticks;
};

#define FX_NONE PROF_SITE_NONE

static const char *const fx_sites[] = { "main_loop", "parse", "lex", "render", "alloc_buf",
					"fib" };

static const struct fx_node fx_main[] = {
	{ FX_NONE, 0, 0, 60000000, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ FX_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 0, 0, 10, 50000000, 6000000, 0, 0, 0, 0, 0, 0, 0, 5000000 },
	{ 1, 2, 100, 20000000, 400000, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 2, 3, 1000, 8000000, 20000, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 3, 2, 10, 15000000, 2000000, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 2, 5, 50, 1000000, 30000, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 5, 0, 1, 3000000, 3000000, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 5, 7, 2, 2500000, 1300000, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 5, 8, 4, 1500000, 400000, 0, 0, 0, 0, 0, 0, 0, 0 },
};

static const struct fx_node fx_worker[] = {
	{ FX_NONE, 0, 0, 32000000, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ FX_NONE, 0, 5, 100000, 30000, 0, 0, 0, 0, 0, 5, 0, 0 },
	{ 3, 0, 20, 30000000, 3000000, 2, 1, 4000000, 0, 0, 20, 3, 0 },
	{ 2, 2, 200, 5000000, 60000, 0, 0, 0, 0, 0, 200, 0, 0 },
	{ 4, 2, 20, 1000000, 90000, 0, 0, 0, 20, 81920, 10, 0, 0 },
};

static inline void fx_thread(struct prof_snapshot *s, struct prof_snap_thread *t, __u32 tid,
			     const char *name, const struct fx_node *src, __u32 n, __u32 *hist,
			     __u64 *hoff)
{
	__u32 i;

	t->tid = tid;
	t->state = PROF_SLAB_ALIVE;
	t->ksched_slot = PROF_NO_SLOT;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->start_tick = 1000 + tid;
	t->oncpu_ns = PROF_SNAP_UNKNOWN;
	t->nnodes = n;
	t->nodes = calloc(n, sizeof(*t->nodes));
	for (i = 0; i < n; i++) {
		struct prof_snap_node *d = &t->nodes[i];
		__u32 bmax = prof_hist_bucket(src[i].max);
		__u64 avg = src[i].calls ? src[i].ticks / src[i].calls : 0;

		d->site = src[i].site;
		d->parent = src[i].parent;
		d->calls = src[i].calls;
		d->ticks = src[i].ticks;
		d->max = src[i].max;
		d->preempted = src[i].preempted;
		d->migrated = src[i].migrated;
		d->offcpu_ns = src[i].offcpu;
		d->allocs = src[i].allocs;
		d->alloc_bytes = src[i].alloc_bytes;
		d->kernel_calls = src[i].kcalls;
		d->blocked = src[i].blocked;
		d->open = src[i].open_ticks != 0;
		d->open_ticks = src[i].open_ticks;
		d->hist_lo = 0;
		d->hist_n = d->calls ? bmax + 1 : 0;
		d->hist_off = *hoff;
		/* all calls at the average but one at the max */
		if (d->calls) {
			hist[*hoff + prof_hist_bucket(avg)] += (__u32)(d->calls - 1);
			hist[*hoff + bmax] += 1;
		}
		*hoff += d->hist_n;
	}
	(void)s;
}

/*
 * the fixture as a segment image; *buf malloc'd.  twin: a third thread,
 * worker2 (4244), the worker's tree again (the html test's merged view)
 */
static inline int fx_image_ex(void **buf, size_t *len, bool twin)
{
	struct prof_snapshot s;
	__u32 i;
	int err;

	memset(&s, 0, sizeof(s));
	s.pid = 4242;
	s.uid = 1000;
	s.start_token = 777;
	s.created_ns = 1700000000000000000ULL;
	snprintf(s.comm, sizeof(s.comm), "golden");
	s.clock = PROF_CLOCK_TSC;
	s.tick_hz = 1000000000ULL;
	s.nsites = sizeof(fx_sites) / sizeof(fx_sites[0]);
	s.sites = calloc(s.nsites, sizeof(*s.sites));
	for (i = 0; i < s.nsites; i++) {
		snprintf(s.sites[i].name, sizeof(s.sites[i].name), "%s", fx_sites[i]);
		snprintf(s.sites[i].func, sizeof(s.sites[i].func), "%s", fx_sites[i]);
		snprintf(s.sites[i].file, sizeof(s.sites[i].file), "golden.c");
		s.sites[i].line = 10 * (i + 1);
	}
	s.nthreads = twin ? 3 : 2;
	s.threads = calloc(s.nthreads, sizeof(*s.threads));
	s.nhist = 0;
	s.hist = calloc(24 * PROF_HIST_BUCKETS, sizeof(*s.hist));
	fx_thread(&s, &s.threads[0], 4242, "main", fx_main, sizeof(fx_main) / sizeof(fx_main[0]),
		  s.hist, &s.nhist);
	fx_thread(&s, &s.threads[1], 4243, "worker", fx_worker,
		  sizeof(fx_worker) / sizeof(fx_worker[0]), s.hist, &s.nhist);
	s.threads[1].ksched_slot = 3;
	s.threads[1].overflow = 5;
	s.threads[1].oncpu_ns = 28000000;
	if (twin) {
		fx_thread(&s, &s.threads[2], 4244, "worker2", fx_worker,
			  sizeof(fx_worker) / sizeof(fx_worker[0]), s.hist, &s.nhist);
		s.threads[2].ksched_slot = 4;
		s.threads[2].oncpu_ns = 28000000;
	}
	/* the read's now: the open call began 5ms before it */
	s.now_tick = 100000000;
	err = prof_snapshot__write(&s, buf, len);
	for (i = 0; i < s.nthreads; i++)
		free(s.threads[i].nodes);
	free(s.threads);
	free(s.sites);
	free(s.hist);
	return err;
}

static inline int fx_image(void **buf, size_t *len)
{
	return fx_image_ex(buf, len, false);
}

/* the fixture read back through the validating reader into *s; 0 or -errno */
static inline int fx_snapshot(struct prof_snapshot **s)
{
	void *img;
	size_t len;
	int err = fx_image(&img, &len);

	if (err)
		return err;
	err = prof_snapshot__read(img, len, s);
	free(img);
	return err;
}

#endif /* PROFCTL_FIXTURE_H */
