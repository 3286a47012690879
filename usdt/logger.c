// SPDX-License-Identifier: MIT
/*
 * logger.c - PROF_LOG_INTERVAL=SECONDS: every interval, one line per
 * thread and zone that ran in it (as in Preshing's profiling module):
 * thread name and tid, zone, time inside / interval, percent, calls.  The
 * interval is the one measured between the two reads, and time inside is
 * at most that (a call that began before the interval and ended in it is
 * not charged in full to it).  A background thread
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
 * One line; the arithmetic of the log, apart so that a test can give it
 * numbers: time inside is clamped to the interval, so the share is at most
 * 100%.  Returns what snprintf returns.
 */
int prof_log_format(char *buf, size_t len, const char *thread, __u32 tid, const char *zone,
		    __u64 in_ns, __u64 interval_ns, __u64 calls)
{
	double in, iv;

	if (in_ns > interval_ns)
		in_ns = interval_ns;
	in = (double)in_ns / 1e9;
	iv = (double)interval_ns / 1e9;
	return snprintf(buf, len, "prof: %s tid %u %s: %.6fs/%.3fs %.1f%% %llu calls\n", thread,
			tid, zone, in, iv, interval_ns ? 100.0 * in / iv : 0.0,
			(unsigned long long)calls);
}

/* its PROF_THREAD_NAME, else its comm, else "?" */
static const char *thread_name(const struct prof_snap_thread *t, char *buf, size_t len)
{
	if (t->name[0])
		return t->name;
	if (!prof_proc_comm(0, (pid_t)t->tid, buf, len) && buf[0])
		return buf;
	return "?";
}

/*
 * One interval's lines to f: cur minus prev (cur is diffed in place),
 * interval_ns long.  Nothing when prev is of another process.
 */
void prof_logger__lines(FILE *f, struct prof_snapshot *cur, const struct prof_snapshot *prev,
			__u64 interval_ns)
{
	char line[512], name[32];
	__u32 i;
	size_t k, n;

	if (prof_snapshot__diff(cur, prev))
		return;
	for (i = 0; i < cur->nthreads; i++) {
		struct prof_flat_row *rows;
		const struct prof_snap_thread *t = &cur->threads[i];
		const char *tname;

		if (prof_snap_flat(cur, t->tid, PROF_SORT_TOTAL, &rows, &n))
			continue;
		tname = thread_name(t, name, sizeof(name));
		for (k = 0; k < n; k++) {
			if (!rows[k].calls)
				continue;
			prof_log_format(line, sizeof(line), tname, t->tid,
					rows[k].site < cur->nsites ? cur->sites[rows[k].site].name
								   : "[overflow]",
					prof_snap_ns(cur, rows[k].ticks), interval_ns,
					rows[k].calls);
			fputs(line, f);
		}
		free(rows);
	}
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static void *logger_main(void *arg)
{
	struct prof_snapshot *prev = NULL, *cur, *keep;
	__u64 t_prev = 0, t_cur;
	struct timespec ts = { (time_t)log_interval,
			       (long)((log_interval - (double)(time_t)log_interval) * 1e9) };

	(void)arg;
	/* the first interval counts from the logger's start */
	if (!prof_snapshot__read(prof_rt.seg, prof_rt.seg_len, &cur)) {
		t_prev = now_ns();
		prev = snap_clone(cur);
		prof_snapshot__destroy(cur);
	}
	for (;;) {
		nanosleep(&ts, NULL);
		if (prof_snapshot__read(prof_rt.seg, prof_rt.seg_len, &cur))
			continue;
		t_cur = now_ns();
		keep = snap_clone(cur);
		if (prev)
			prof_logger__lines(stderr, cur, prev, t_cur - t_prev);
		prof_snapshot__destroy(cur);
		prof_snapshot__destroy(prev);
		prev = keep;
		t_prev = t_cur;
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
