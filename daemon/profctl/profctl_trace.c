// SPDX-License-Identifier: MIT
/*
 * profctl_trace.c - profctl trace: a process's timeline from its threads'
 * event rings (slab.h), as Chrome Trace Event Format JSON (Perfetto UI,
 * chrome://tracing and speedscope open it), written by trace_json.c.
 *
 * Every zone exit leaves its call in its thread's ring, always, so the
 * timeline of the last moments is there without a recording session.
 * `--slow ZONE:THRESHOLD` watches the rings for a call of ZONE longer than
 * THRESHOLD and writes the timeline up to its end: what led to it and its
 * children, which ended before it.
 *
 * Times are one clock: ticks mapped to CLOCK_MONOTONIC by the segment's
 * calibration (tick_base at mono_base_ns, tick_hz), in microseconds as the
 * format wants, with ns precision.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "annot.h"
#include "client.h"
#include "profctl.h"
#include "trace_json.h"
#include "trace_html.h"

#define EXIT_USAGE 2 /* as every verb: bad usage */

/* how often --slow looks at the rings */
#define TRACE_POLL_NS 5000000ull

static volatile sig_atomic_t trace_stop;

static void on_stop(int sig)
{
	(void)sig;
	trace_stop = 1;
}

/* "frame:10ms": a zone and a duration (pc_parse_duration) */
static int parse_slow(const char *arg, char *zone, size_t zlen, __u64 *ns)
{
	const char *colon = strrchr(arg, ':');

	if (!colon || colon == arg || (size_t)(colon - arg) >= zlen)
		return -EINVAL;
	memcpy(zone, arg, (size_t)(colon - arg));
	zone[colon - arg] = 0;
	return pc_parse_duration(colon + 1, ns);
}

/* out, or out with ".k" before its extension for capture k of many */
static void capture_path(const char *out, int k, int count, char *buf, size_t len)
{
	const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');

	if (count <= 1)
		snprintf(buf, len, "%s", out);
	else if (dot && (!slash || dot > slash))
		snprintf(buf, len, "%.*s.%d%s", (int)(dot - out), out, k, dot);
	else
		snprintf(buf, len, "%s.%d", out, k);
}

#define PLACEHOLDER "/*@PROFCTL_TRACE@*/null"

/* the timeline page: the template with the trace in place of its
 * placeholder (prof_json_fbody escapes '<', so no "</script>" can close it) */
static int write_html(FILE *f, const struct prof_trace *t, const struct prof_snapshot *s,
		      const struct sched_tl *k, __u32 tid, __u64 from, __u64 to)
{
	const char *tpl = (const char *)trace_html, *at;
	char *json = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&json, &len);
	int err;

	if (!m)
		return -ENOMEM;
	err = pc_trace_write(m, t, s, k, tid, from, to, 0);
	if (fclose(m) || err) {
		free(json);
		return err ? err : -ENOMEM;
	}
	at = memmem(tpl, trace_html_len, PLACEHOLDER, strlen(PLACEHOLDER));
	if (!at) {
		free(json);
		return -EINVAL;
	}
	fwrite(tpl, 1, (size_t)(at - tpl), f);
	fwrite(json, 1, len, f);
	at += strlen(PLACEHOLDER);
	fwrite(at, 1, trace_html_len - (size_t)(at - tpl), f);
	free(json);
	return ferror(f) ? -EIO : 0;
}

static int write_to(const struct pc_opts *o, const char *path, const struct prof_trace *t,
		    const struct prof_snapshot *s, const struct sched_tl *k, __u64 from, __u64 to)
{
	struct pc_opts oo = *o;
	FILE *f;
	int err;

	oo.out = path;
	f = pc_open_out(&oo);
	if (!f)
		return -EIO;
	if (o->format == PC_FMT_HTML)
		err = write_html(f, t, s, k, o->tid, from, to);
	else
		err = pc_trace_write(f, t, s, k, o->tid, from, to, 0);
	return pc_close_out(f, &oo) ? -EIO : err;
}

/*
 * --slow: follow each thread's head; a new event of the zone longer than
 * the threshold is a capture.  Events the rings lost between two looks are
 * said once (the ring is too small for how busy the thread is).
 */
static int watch_slow(struct pc_src *src, const struct pc_opts *o, const char *zone,
		      __u64 thr_ns, int count)
{
	struct {
		__u32 tid;
		__u64 gen, seen;
	} *seen = NULL;
	size_t nseen = 0, j;
	int got = 0, err = 0;
	bool said_lost = false;
	struct sigaction sa = { .sa_handler = on_stop };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "profctl: waiting for a call of %s longer than %.3f ms in pid %d\n", zone,
		(double)thr_ns / 1e6, (int)o->pid);
	while (!trace_stop && got < count) {
		struct prof_trace *t;
		struct prof_snapshot *s;
		struct sched_tl sk;
		struct timespec nap = { 0, (long)TRACE_POLL_NS };
		__u32 i;

		err = pc_trace_read(src, o->pid, &t, &s, &sk, 0);
		if (err)
			break;
		for (i = 0; i < t->nthreads && got < count; i++) {
			const struct prof_trace_thread *tt = &t->threads[i];
			const struct prof_snap_thread *st = pc_trace_snap_thread(s, tt->tid);
			__u64 k, from_idx, first_idx = tt->written - tt->n;

			if (o->tid && tt->tid != o->tid)
				continue;
			for (j = 0; j < nseen; j++)
				if (seen[j].tid == tt->tid && seen[j].gen == tt->gen)
					break;
			if (j == nseen) {
				void *v = realloc(seen, (nseen + 1) * sizeof(*seen));

				if (!v) {
					err = -ENOMEM;
					break;
				}
				seen = v;
				/* a thread first seen: its events so far count too */
				seen[nseen].tid = tt->tid;
				seen[nseen].gen = tt->gen;
				seen[nseen].seen = 0;
				nseen++;
			}
			from_idx = seen[j].seen;
			if (from_idx < first_idx) {
				if (from_idx && !said_lost)
					pc_warnx("tid %u: %llu calls went by between two looks; a "
						 "slow one among them may be missed (raise "
						 "PROF_TRACE_EVENTS)",
						 tt->tid, (unsigned long long)(first_idx - from_idx));
				said_lost |= from_idx != 0;
				from_idx = first_idx;
			}
			for (k = from_idx - first_idx; k < tt->n && got < count; k++) {
				const struct prof_event *e = &tt->ev[k];
				const char *name = pc_trace_node_name(s, st, prof_event_node(e));
				__u64 end;
				char path[512];

				if (!name || strcmp(name, zone) ||
				    pc_trace_ticks_ns(t, prof_event_ticks(e)) <= thr_ns)
					continue;
				got++;
				end = pc_trace_tick_ns(t, e->start) +
				      pc_trace_ticks_ns(t, prof_event_ticks(e));
				capture_path(o->out ? o->out : "-", got, count, path, sizeof(path));
				/* the rings as they are: the call, and before it */
				err = write_to(o, o->out ? path : NULL, t, s, &sk, 0, end);
				if (err)
					break;
				fprintf(stderr, "profctl: caught %s of %.3f ms in tid %u%s%s\n",
					zone,
					(double)pc_trace_ticks_ns(t, prof_event_ticks(e)) / 1e6,
					tt->tid, o->out ? ", written to " : "", o->out ? path : "");
			}
			seen[j].seen = tt->written;
		}
		prof_snapshot__destroy(s);
		prof_trace__destroy(t);
		pc_trace_sched_free(&sk);
		if (err || got >= count)
			break;
		nanosleep(&nap, NULL);
	}
	free(seen);
	if (!err && got < count)
		return 1; /* interrupted */
	return err ? 1 : 0;
}

static const char usage_trace[] =
	"usage: profctl trace [--pid P] [--tid T] [--last 10s] [--format json|html] [-o FILE]\n"
	"                     [--no-daemon]\n"
	"       profctl trace [--pid P] [--tid T] --slow ZONE:THRESHOLD [--count N]\n"
	"                     [--format json|html] [-o FILE]\n"
	"\n"
	"  -p, --pid P          the process (default: the newest live one of yours)\n"
	"  -t, --tid T          one thread (default: all)\n"
	"      --last DURATION  the calls that ended in the last DURATION (10s, 2m;\n"
	"                       default: all the rings hold)\n"
	"      --slow Z:T       wait for a call of zone Z longer than T (a time: a number\n"
	"                       and ns, us, ms, s, m or h, seconds without: frame:16ms),\n"
	"                       then write the timeline up to its end\n"
	"      --count N        with --slow: N captures, FILE.1.json ... (needs -o)\n"
	"  -f, --format FMT     json (default): Chrome Trace Event Format; html: a\n"
	"                       self-contained timeline page (zoom, pan, hover)\n"
	PC_USAGE_OUTPUT
	PC_USAGE_NO_DAEMON
	"\n"
	"Every zone exit leaves its call in its thread's ring of PROF_TRACE_EVENTS\n"
	"(default 16384) calls, always.  The timeline is Chrome Trace Event Format JSON:\n"
	"open it in Perfetto UI (ui.perfetto.dev), chrome://tracing or speedscope.  Its\n"
	"otherData says how many calls the rings no longer held.  With profd, each\n"
	"thread also has a scheduler track: its last 64 runs on a CPU and the time off\n"
	"the CPU between them (preempted or blocked).  Annotations (prof(3)): each\n"
	"plot a counter track, each message an instant event on its thread, each call's\n"
	"PROF_ZONE_VALUE/TEXT in its args, each lock's waits and holds on a lock track.\n";

/* operands are let through, unread, as they always were */
static const struct option trace_options[] = {
	PC_OPT_PID,	  PC_OPT_TID,  PC_OPT_LAST,  PC_OPT_OUTPUT,	  PC_OPT_NO_DAEMON,
	PC_OPT_SLOW,	  PC_OPT_COUNT, PC_OPT_FORMAT, PC_OPT_HELP, PC_OPT_END_OPERANDS,
};

/* zone set: --slow zone:thr, count captures */
static int pc_trace(struct pc_src *src, const struct pc_opts *o, const char *zone, __u64 thr,
		    int count)
{
	struct prof_trace *t;
	struct prof_snapshot *s;
	struct sched_tl k;
	__u64 to, from = 0;
	int err;

	if (zone)
		return watch_slow(src, o, zone, thr, count);
	err = pc_trace_read(src, o->pid, &t, &s, &k, 0);
	if (err)
		return 1;
	if (t->image)
		pc_warnx("pid %d exited: profd keeps its profile, not its event rings (PROF_KEEP=1 "
			 "keeps its segment, rings and all)",
			 (int)o->pid);
	else if (!t->ring_events)
		pc_warnx("pid %d: its event rings are off (PROF_TRACE_EVENTS=0)", (int)o->pid);
	to = ~0ull;
	if (o->mode == PROFD_SNAP_LAST)
		from = pc_trace_last_from(t, s, (__u64)o->last_s * 1000000000ull);
	err = write_to(o, o->out, t, s, &k, from, to);
	prof_snapshot__destroy(s);
	prof_trace__destroy(t);
	pc_trace_sched_free(&k);
	return err ? 1 : 0;
}

int pc_cmd_trace(int argc, char **argv)
{
	char zone[PROF_NAME_MAX];
	struct pc_opts o;
	struct pc_src src;
	__u64 thr = 0;
	int err;

	err = pc_parse_opts(argc, argv, usage_trace, trace_options, &o);
	if (err)
		return err < 0 ? 0 : err;
	if (o.format != PC_FMT_TEXT && o.format != PC_FMT_JSON && o.format != PC_FMT_HTML) {
		pc_warnx("trace: --format json (the default) or html");
		return EXIT_USAGE;
	}
	if (o.count && !o.slow) {
		pc_warnx("trace: --count goes with --slow");
		return EXIT_USAGE;
	}
	if (o.slow && o.mode == PROFD_SNAP_LAST) {
		pc_warnx("trace: --last and --slow cannot be combined");
		return EXIT_USAGE;
	}
	if (o.slow && parse_slow(o.slow, zone, sizeof(zone), &thr)) {
		pc_warnx("trace: bad --slow '%s' (ZONE:THRESHOLD, as frame:16ms; units ns, us, ms, "
			 "s, m, h)",
			 o.slow);
		return EXIT_USAGE;
	}
	if (o.count > 1 && !o.out) {
		pc_warnx("trace: --count %d needs -o FILE (one file a capture)", o.count);
		return EXIT_USAGE;
	}
	pc_src_open_said(&src, &o, NULL);
	if (!o.pid) {
		err = pc_pick_pid(&src, &o.pid);
		if (err) {
			if (err == -ENOENT)
				pc_warnx("trace: no profiled process of yours (use --pid)");
			pc_src_close(&src);
			return 1;
		}
	}
	err = pc_trace(&src, &o, o.slow ? zone : NULL, thr, o.count ? o.count : 1);
	pc_src_close(&src);
	return err;
}
