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

#define FX_NONE PROF_SITE_NONE

static const char *const fx_sites[] = { "main_loop", "parse", "lex", "render", "alloc_buf",
					"fib" };

/* each thread's nodes: 0 the root (the thread's wall time), 1 the
 * overflow node, then the zones, parent by index; a figure not named is 0 */
static const struct prof_snap_node fx_main[] = {
	{ .site = FX_NONE, .ticks = 60000000 },
	{ .site = FX_NONE },
	{ .site = 0, .parent = 0, .calls = 10, .ticks = 50000000, .max = 6000000,
	  .open_ticks = 5000000 },
	{ .site = 1, .parent = 2, .calls = 100, .ticks = 20000000, .max = 400000 },
	{ .site = 2, .parent = 3, .calls = 1000, .ticks = 8000000, .max = 20000 },
	{ .site = 3, .parent = 2, .calls = 10, .ticks = 15000000, .max = 2000000 },
	{ .site = 2, .parent = 5, .calls = 50, .ticks = 1000000, .max = 30000 },
	{ .site = 5, .parent = 0, .calls = 1, .ticks = 3000000, .max = 3000000 },
	{ .site = 5, .parent = 7, .calls = 2, .ticks = 2500000, .max = 1300000 },
	{ .site = 5, .parent = 8, .calls = 4, .ticks = 1500000, .max = 400000 },
};

static const struct prof_snap_node fx_worker[] = {
	{ .site = FX_NONE, .ticks = 32000000 },
	{ .site = FX_NONE, .calls = 5, .ticks = 100000, .max = 30000, .kernel_calls = 5 },
	{ .site = 3, .parent = 0, .calls = 20, .ticks = 30000000, .max = 3000000, .preempted = 2,
	  .migrated = 1, .offcpu_ns = 4000000, .kernel_calls = 20, .blocked = 3 },
	{ .site = 2, .parent = 2, .calls = 200, .ticks = 5000000, .max = 60000,
	  .kernel_calls = 200 },
	{ .site = 4, .parent = 2, .calls = 20, .ticks = 1000000, .max = 90000, .allocs = 20,
	  .alloc_bytes = 81920, .kernel_calls = 10 },
};

static inline void fx_thread(struct prof_snapshot *s, struct prof_snap_thread *t, __u32 tid,
			     const char *name, const struct prof_snap_node *src, __u32 n, __u32 *hist,
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

		*d = src[i];
		d->open = src[i].open_ticks != 0;
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
