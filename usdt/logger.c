// SPDX-License-Identifier: MIT
/*
 * logger.c - PROF_LOG_INTERVAL=SECONDS: every interval, one line per
 * thread and zone that ran in it (as in Preshing's profiling module):
 * tid, zone, time inside / interval, percent, calls.  A background thread
 * reads the process's own segment, so the zones pay nothing for it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime.h"
#include "snapshot.h"

static double log_interval;
static bool log_running;

static struct prof_snapshot *snap_clone(const struct prof_snapshot *s)
{
	struct prof_snapshot *c = NULL;
	size_t len;
	void *buf;

	if (prof_snapshot__write(s, &buf, &len))
		return NULL;
	prof_snapshot__read(buf, len, &c);
	free(buf);
	return c;
}

/*
 * One interval's lines to f: cur minus prev (cur is diffed in place), secs
 * long.  Nothing when prev is of another process.
 */
void prof_logger__lines(FILE *f, struct prof_snapshot *cur, const struct prof_snapshot *prev,
			double secs)
{
	__u32 i;
	size_t k, n;

	if (prof_snapshot__diff(cur, prev))
		return;
	for (i = 0; i < cur->nthreads; i++) {
		struct prof_flat_row *rows;
		const struct prof_snap_thread *t = &cur->threads[i];

		if (prof_snap_flat(cur, t->tid, PROF_SORT_TOTAL, &rows, &n))
			continue;
		for (k = 0; k < n; k++) {
			double in = (double)prof_snap_ns(cur, rows[k].ticks) / 1e9;

			if (!rows[k].calls)
				continue;
			fprintf(f, "prof: tid %u %s: %.6fs/%.3fs %.1f%% %llu calls\n", t->tid,
				rows[k].site < cur->nsites ? cur->sites[rows[k].site].name
							   : "[overflow]",
				in, secs, 100.0 * in / secs, (unsigned long long)rows[k].calls);
		}
		free(rows);
	}
}

static void *logger_main(void *arg)
{
	struct prof_snapshot *prev = NULL, *cur, *keep;
	struct timespec ts = { (time_t)log_interval,
			       (long)((log_interval - (double)(time_t)log_interval) * 1e9) };

	(void)arg;
	/* the first interval counts from the logger's start */
	if (!prof_snapshot__read(prof_rt.seg, prof_rt.seg_len, &cur)) {
		prev = snap_clone(cur);
		prof_snapshot__destroy(cur);
	}
	for (;;) {
		nanosleep(&ts, NULL);
		if (prof_snapshot__read(prof_rt.seg, prof_rt.seg_len, &cur))
			continue;
		keep = snap_clone(cur);
		if (prev)
			prof_logger__lines(stderr, cur, prev, log_interval);
		prof_snapshot__destroy(cur);
		prof_snapshot__destroy(prev);
		prev = keep;
	}
	return NULL;
}

/* called with prof_rt.lock held, once the segment exists */
void prof_logger__start(double interval)
{
	pthread_attr_t a;
	pthread_t th;

	log_interval = interval;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	log_running = !pthread_create(&th, &a, logger_main, NULL);
	pthread_attr_destroy(&a);
}

void prof_logger__atfork_child(void)
{
	/* threads do not survive fork: start the child's own */
	if (log_running)
		prof_logger__start(log_interval);
}
