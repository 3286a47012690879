// SPDX-License-Identifier: MIT
/*
 * profctl_trace.c - profctl trace: a process's timeline from its threads'
 * event rings (slab.h), as Chrome Trace Event Format JSON (Perfetto UI,
 * chrome://tracing and speedscope open it).
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
#include "trace_html.h"

#define EXIT_USAGE 2 /* as every verb: bad usage */

/* a thread's frames: a track beside it, a tid no thread has (tids are
 * below 2^22) */
#define FRAME_TRACK(tid) ((unsigned long long)(tid) + (1ull << 32))
/* and the scheduler's slices of a thread, another */
#define SCHED_TRACK(tid) ((unsigned long long)(tid) + (2ull << 32))
/* and its locks' waits and holds, which need not nest in its zones */
#define LOCK_TRACK(tid) ((unsigned long long)(tid) + (3ull << 32))

/* the report page's timeline: its calls in all, and a thread's at least */
#define PC_PAGE_EVENTS 50000
#define PC_PAGE_THREAD_MIN 256

/* what profd's BPF program saw of the threads: their last runs on a CPU */
struct sched_tl {
	struct profd_slices_thread *th;
	__u32 n;
};

/* how often --slow looks at the rings */
#define TRACE_POLL_NS 5000000ull

static volatile sig_atomic_t trace_stop;

static void on_stop(int sig)
{
	(void)sig;
	trace_stop = 1;
}

static __u64 mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* a tick as CLOCK_MONOTONIC ns */
static __u64 tick_ns(const struct prof_trace *t, __u64 tick)
{
	if (tick >= t->tick_base)
		return t->mono_base_ns +
		       (__u64)((double)(tick - t->tick_base) * 1e9 / (double)t->tick_hz);
	return t->mono_base_ns -
	       (__u64)((double)(t->tick_base - tick) * 1e9 / (double)t->tick_hz);
}

static __u64 ticks_ns(const struct prof_trace *t, __u64 ticks)
{
	return (__u64)((double)ticks * 1e9 / (double)t->tick_hz);
}

/* the snapshot's thread of tid, or NULL */
static const struct prof_snap_thread *snap_thread(const struct prof_snapshot *s, __u32 tid)
{
	__u32 i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			return &s->threads[i];
	return NULL;
}

/* the zone name of node n of thread st */
static const char *node_name(const struct prof_snapshot *s, const struct prof_snap_thread *st,
			     __u32 n)
{
	__u32 site;

	if (!st || n >= st->nnodes)
		return NULL;
	site = st->nodes[n].site;
	if (site == PROF_SITE_NONE)
		return "[overflow]";
	return site < s->nsites ? s->sites[site].name : NULL;
}

static void put_us(FILE *f, __u64 ns)
{
	fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

/*
 * The values on a call (PROF_ZONE_VALUE, PROF_ZONE_TEXT) in its args: the
 * last of each kind as "value" and "text", and every one, in order, as
 * "values" when there were more
 */
static void put_values(FILE *f, const struct prof_annot_thread *at, __u64 v0, __u64 v1,
		       bool open)
{
	const struct prof_annot_value *num = NULL, *text = NULL;
	__u64 k;

	fputs(open ? ",\"args\":{" : ",", f);
	for (k = v0; k < v1; k++) {
		if (at->values[k].kind == PROF_VALUE_NUM)
			num = &at->values[k];
		else
			text = &at->values[k];
	}
	if (num)
		fprintf(f, "\"value\":%.17g", num->value);
	if (text) {
		fputs(num ? ",\"text\":\"" : "\"text\":\"", f);
		prof_json_fbody(f, text->text);
		fputc('"', f);
	}
	if (v1 - v0 < 2)
		return;
	fputs(",\"values\":[", f);
	for (k = v0; k < v1; k++) {
		fputs(k > v0 ? "," : "", f);
		if (at->values[k].kind == PROF_VALUE_NUM) {
			fprintf(f, "%.17g", at->values[k].value);
		} else {
			fputc('"', f);
			prof_json_fbody(f, at->values[k].text);
			fputc('"', f);
		}
	}
	fputc(']', f);
}

/*
 * What profd's kernel word said of a call (its args), and a migration as
 * an instant event at the call's end: the call moved before that (where
 * in it, the ring cannot say).  Closes the call's event.
 */
static void put_facts(FILE *f, const struct prof_trace *t, __u32 tid, const struct prof_event *e,
		      __u64 end, const struct prof_annot_thread *at)
{
	unsigned int fl = prof_event_flags(e);
	__u64 v0 = 0, v1 = at ? prof_annot_values(at, prof_event_node(e), e->start, &v0) : 0;

	if (fl)
		fprintf(f, ",\"args\":{\"preempted\":%s,\"blocked\":%s,\"migrated\":%s",
			fl & PROF_EV_PREEMPTED ? "true" : "false",
			fl & PROF_EV_BLOCKED ? "true" : "false",
			fl & PROF_EV_MIGRATED ? "true" : "false");
	if (v1 > v0)
		put_values(f, at, v0, v1, !fl);
	if (fl || v1 > v0)
		fputc('}', f);
	fputc('}', f);
	if (fl & PROF_EV_MIGRATED) {
		fprintf(f, ",{\"name\":\"migrated\",\"cat\":\"sched\",\"ph\":\"i\",\"s\":\"t\","
			   "\"pid\":%u,\"tid\":%u,\"ts\":",
			t->pid, tid);
		put_us(f, end);
		fputc('}', f);
	}
}

static const struct profd_slices_thread *sched_thread(const struct sched_tl *k, __u32 tid)
{
	__u32 i;

	for (i = 0; k && i < k->n; i++)
		if (k->th[i].tid == tid)
			return &k->th[i];
	return NULL;
}

static void put_slice(FILE *f, __u32 pid, __u32 tid, const char *name, const char *end_how,
		      int cpu, __u64 start, __u64 end)
{
	fprintf(f, ",{\"name\":\"%s\",\"cat\":\"sched\",\"ph\":\"X\",\"pid\":%u,\"tid\":%llu,"
		   "\"ts\":",
		name, pid, SCHED_TRACK(tid));
	put_us(f, start);
	fputs(",\"dur\":", f);
	put_us(f, end - start);
	if (cpu >= 0)
		fprintf(f, ",\"args\":{\"cpu\":%d,\"then\":\"%s\"}}", cpu, end_how);
	else
		fprintf(f, ",\"args\":{\"why\":\"%s\"}}", end_how);
}

/*
 * The scheduler's track of a thread: each run on a CPU ("cpu N") and each
 * time off it between two runs ("off cpu", preempted or blocked), those
 * that overlap [from, to].  A run whose start the program did not see is
 * left out, and so is the time off before it.
 */
static void write_sched(FILE *f, __u32 pid, const struct profd_slices_thread *k, __u64 from,
			__u64 to)
{
	__u32 i;

	fprintf(f, ",{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%llu,"
		   "\"args\":{\"name\":\"scheduler: tid %u\"}}",
		pid, SCHED_TRACK(k->tid), k->tid);
	for (i = 0; i < k->n; i++) {
		const struct profd_slice *sl = &k->s[i];
		const char *how = sl->flags & PROFD_SLICE_PREEMPTED ? "preempted" : "blocked";
		char name[32];
		__u64 start;

		if (sl->flags & PROFD_SLICE_NO_START)
			continue;
		start = sl->end_ns - sl->on_ns;
		/* off the CPU since the run before ended */
		if (i && k->s[i - 1].end_ns <= start && start >= from && k->s[i - 1].end_ns <= to)
			put_slice(f, pid, k->tid, "off cpu",
				  k->s[i - 1].flags & PROFD_SLICE_PREEMPTED ? "preempted" : "blocked",
				  -1, k->s[i - 1].end_ns, start);
		if (sl->end_ns < from || start > to)
			continue;
		snprintf(name, sizeof(name), "cpu %u", sl->cpu);
		put_slice(f, pid, k->tid, name, how, sl->cpu, start, sl->end_ns);
	}
}

/* the annotations of a ring's thread, or NULL */
static const struct prof_annot_thread *annot_thread(const struct prof_trace *t,
						    const struct prof_trace_thread *tt)
{
	__u32 i;

	for (i = 0; t->annot && i < t->annot->nthreads; i++)
		if (t->annot->threads[i].slab == tt->slab && t->annot->threads[i].gen == tt->gen)
			return &t->annot->threads[i];
	return NULL;
}

/*
 * A thread's annotations in [from, to] ns: each plot a counter track
 * ("ph":"C", one per plot name in the process), each message an instant
 * event on the thread's track, each lock's waits and holds spans on a
 * track of the thread's own (a hold need not nest in the zones).
 */
static void write_annot(FILE *f, const struct prof_trace *t, const struct prof_snapshot *s,
			const struct prof_snap_thread *st, __u32 tid,
			const struct prof_annot_thread *at, __u64 from, __u64 to)
{
	const char *zone;
	__u64 k, ts;

	for (k = 0; k < at->npoints; k++) {
		const struct prof_annot_point *p = &at->points[k];

		ts = tick_ns(t, p->tick);
		if (ts < from || ts > to)
			continue;
		fputs(",{\"name\":\"", f);
		prof_json_fbody(f, at->plots[p->plot].name);
		fprintf(f, "\",\"cat\":\"plot\",\"ph\":\"C\",\"pid\":%u,\"tid\":%u,\"ts\":",
			t->pid, tid);
		put_us(f, ts);
		fputs(",\"args\":{\"value\":", f);
		fprintf(f, "%.17g}}", p->value);
	}
	for (k = 0; k < at->nmsgs; k++) {
		const struct prof_annot_msg *m = &at->msgs[k];

		ts = tick_ns(t, m->tick);
		if (ts < from || ts > to)
			continue;
		fputs(",{\"name\":\"", f);
		prof_json_fbody(f, m->text);
		fprintf(f, "\",\"cat\":\"message\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%u,"
			   "\"tid\":%u,\"ts\":",
			t->pid, tid);
		put_us(f, ts);
		zone = m->node == PROF_NODE_ROOT ? NULL : node_name(s, st, m->node);
		if (zone) {
			fputs(",\"args\":{\"zone\":\"", f);
			prof_json_fbody(f, zone);
			fputs("\"}", f);
		}
		fputc('}', f);
	}
	if (at->nspans)
		fprintf(f, ",{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%llu,"
			   "\"args\":{\"name\":\"locks of tid %u\"}}",
			t->pid, LOCK_TRACK(tid), tid);
	for (k = 0; k < at->nspans; k++) {
		const struct prof_annot_span *sp = &at->spans[k];
		const struct prof_annot_lock *l = &at->locks[sp->lock];
		__u64 dur = ticks_ns(t, sp->dur);

		ts = tick_ns(t, sp->start);
		if (ts + dur < from || ts + dur > to)
			continue;
		fprintf(f, ",{\"name\":\"%s ", sp->flags & PROF_SPAN_HOLD ? "hold" : "wait");
		prof_json_fbody(f, l->name);
		fprintf(f, "\",\"cat\":\"lock\",\"ph\":\"X\",\"pid\":%u,\"tid\":%llu,\"ts\":",
			t->pid, LOCK_TRACK(tid));
		put_us(f, ts);
		fputs(",\"dur\":", f);
		put_us(f, dur);
		fputs(",\"args\":{\"lock\":\"", f);
		prof_json_fbody(f, l->name);
		fputc('"', f);
		zone = l->node == PROF_NODE_ROOT ? NULL : node_name(s, st, l->node);
		if (zone) {
			fputs(",\"zone\":\"", f);
			prof_json_fbody(f, zone);
			fputc('"', f);
		}
		/* with profd: whether the wait slept in the kernel or spun */
		if (!(sp->flags & PROF_SPAN_HOLD) && (sp->flags & PROF_SPAN_KERNEL))
			fprintf(f, ",\"waited\":\"%s\"",
				sp->flags & PROF_SPAN_BLOCKED ? "blocked" : "spinning");
		fputs("}}", f);
	}
}

/*
 * The events of t (threads tid only, if not 0) that end in [from, to] ns,
 * as a Chrome trace.  s names them: read after t, so every node an event
 * names exists in it.
 */
static int write_trace(FILE *f, const struct prof_trace *t, const struct prof_snapshot *s,
		       const struct sched_tl *sched, __u32 tid, __u64 from, __u64 to, __u64 cap)
{
	__u32 i;
	__u64 k, lost_total = 0, omitted = 0;

	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":\"",
		t->pid);
	prof_json_fbody(f, s->comm);
	fputs("\"}}", f);
	for (i = 0; i < t->nthreads; i++) {
		const struct prof_trace_thread *tt = &t->threads[i];
		const struct prof_snap_thread *st = snap_thread(s, tt->tid);
		const struct prof_annot_thread *at;
		unsigned int frames = 0;

		if (tid && tt->tid != tid)
			continue;
		lost_total += tt->written - tt->n - tt->skipped;
		omitted += tt->skipped;
		fprintf(f, ",{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
			   "\"args\":{\"name\":\"",
			t->pid, tt->tid);
		if (st && st->name[0])
			prof_json_fbody(f, st->name);
		else
			fprintf(f, "tid %u", tt->tid);
		fputs("\"}}", f);
		if (sched_thread(sched, tt->tid))
			write_sched(f, t->pid, sched_thread(sched, tt->tid), from, to);
		/* cap: a thread's newest calls only (the report page) */
		k = cap && tt->n > cap ? tt->n - cap : 0;
		omitted += k;
		at = annot_thread(t, tt);
		for (; k < tt->n; k++) {
			const struct prof_event *e = &tt->ev[k];
			__u64 start = tick_ns(t, e->start), dur = ticks_ns(t, prof_event_ticks(e));
			bool frame = prof_event_node(e) == PROF_NODE_ROOT;
			const char *name = frame ? "[frame]" : node_name(s, st, prof_event_node(e));

			if (!name || start + dur < from || start + dur > to)
				continue;
			if (frame && !frames++)
				/* frames overlap the zones: a track of their own */
				fprintf(f, ",{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,"
					   "\"tid\":%llu,\"args\":{\"name\":\"frames of tid %u\"}}",
					t->pid, FRAME_TRACK(tt->tid), tt->tid);
			fputs(",{\"name\":\"", f);
			prof_json_fbody(f, name);
			if (frame)
				fprintf(f, "\",\"cat\":\"frame\",\"ph\":\"X\",\"pid\":%u,\"tid\":%llu,"
					   "\"ts\":",
					t->pid, FRAME_TRACK(tt->tid));
			else
				fprintf(f, "\",\"cat\":\"zone\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,"
					   "\"ts\":",
					t->pid, tt->tid);
			put_us(f, start);
			fputs(",\"dur\":", f);
			put_us(f, dur);
			put_facts(f, t, tt->tid, e, start + dur, at);
		}
		if (at)
			write_annot(f, t, s, st, tt->tid, at, from, to);
	}
	fprintf(f, "],\"otherData\":{\"pid\":%u,\"ring_events\":%llu,\"lost\":%llu", t->pid,
		(unsigned long long)t->ring_events, (unsigned long long)lost_total);
	if (cap)
		fprintf(f, ",\"omitted\":%llu", (unsigned long long)omitted);
	fputs("}}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* the CPU's counter, as the program reads it (prof.h), or 0 */
static __u64 cpu_ticks(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	__u64 v;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return 0;
#endif
}

/*
 * The program's tick rate, measured once at its start over a few ms, is
 * off by some ppm: 20 ppm is 40 us two seconds later, enough to put a
 * sleep's time off the CPU outside the zone that slept.  A live process's
 * counter runs here too, so the rate is taken again from its start to now
 * (the tightest of a few clock reads): zones and scheduler slices then
 * share CLOCK_MONOTONIC to within a microsecond.
 */
static void refine_rate(struct prof_trace *t)
{
	__u64 best = ~0ull, tick = 0, mono = 0;
	int i;

	if (t->image || t->clock != PROF_CLOCK_TSC || !cpu_ticks())
		return;
	for (i = 0; i < 5; i++) {
		__u64 a = cpu_ticks(), m = mono_now_ns(), b = cpu_ticks();

		if (b - a < best) {
			best = b - a;
			tick = a + (b - a) / 2;
			mono = m;
		}
	}
	/* a span long enough to better the first measure */
	if (tick <= t->tick_base || mono <= t->mono_base_ns + 100000000ull)
		return;
	t->tick_hz = (__u64)((double)(tick - t->tick_base) * 1e9 /
			     (double)(mono - t->mono_base_ns) + 0.5);
}

static void sched_free(struct sched_tl *k)
{
	free(k->th);
	k->th = NULL;
	k->n = 0;
}

/* the rings of pid (each thread's newest events only, if not 0) and a
 * snapshot naming their nodes; with profd, the scheduler's slices of its
 * threads too (none where it has no program) */
static int read_both(struct pc_src *src, pid_t pid, struct prof_trace **t, struct prof_snapshot **s,
		     struct sched_tl *k, __u64 newest)
{
	const void *mem;
	size_t len;
	int err;

	*t = NULL;
	*s = NULL;
	k->th = NULL;
	k->n = 0;
	/* before the rings: every slice then ends before the calls read */
	if (src->fd >= 0 && profd_slices(src->fd, pid, &k->th, &k->n))
		sched_free(k);
	err = pc_src_map(src, pid, &mem, &len);
	if (err) {
		sched_free(k);
		return err;
	}
	err = prof_seg_trace_newest(mem, len, newest, t);
	if (!err)
		refine_rate(*t);
	if (!err)
		err = prof_snapshot__read(mem, len, s);
	if (err) {
		pc_warnx("pid %d: %s", (int)pid,
			 err == -EPROTO ? "unknown segment version" : "corrupt segment, refused");
		prof_trace__destroy(*t);
		*t = NULL;
		sched_free(k);
	}
	return err;
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

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * A page, not a recording: the newest total calls in all, shared
 * by the threads (tid's only, if not 0) as water fills: a thread with few
 * calls shows them all, the rest an equal share of what is left (at least
 * min).  The share, or 0 when everything fits.
 */
static __u64 page_cap(const struct prof_trace *t, __u32 tid, __u64 total, __u64 min)
{
	__u64 *n = calloc(t->nthreads ? t->nthreads : 1, sizeof(*n)), left = total, cap = 0;
	__u32 i, k = 0;

	if (!n)
		return min;
	for (i = 0; i < t->nthreads; i++)
		if (!tid || t->threads[i].tid == tid)
			n[k++] = t->threads[i].n;
	qsort(n, k, sizeof(*n), cmp_u64);
	for (i = 0; i < k; i++) {
		if (n[i] * (k - i) > left) {
			cap = left / (k - i);
			break;
		}
		left -= n[i];
	}
	free(n);
	return cap && cap < min ? min : cap;
}


/* the start of the last last_ns to now, or to the exit of a process gone */
static __u64 last_from(const struct prof_trace *t, const struct prof_snapshot *s, __u64 last_ns)
{
	__u64 now = mono_now_ns();

	if (s->exit_tick)
		now = tick_ns(t, s->exit_tick);
	return now > last_ns ? now - last_ns : 0;
}

static int trace_json(struct pc_src *src, pid_t pid, __u32 tid, __u64 last_ns, __u64 max,
		      __u64 min, __u64 newest, char **json)
{
	struct prof_trace *t;
	struct prof_snapshot *s;
	struct sched_tl k;
	size_t len = 0;
	__u64 cap, from;
	FILE *m;
	int err;

	*json = NULL;
	err = read_both(src, pid, &t, &s, &k, newest);
	if (err)
		return err;
	cap = max ? page_cap(t, tid, max, min) : 0;
	from = last_ns ? last_from(t, s, last_ns) : 0;
	m = open_memstream(json, &len);
	if (!m) {
		err = -ENOMEM;
	} else {
		err = write_trace(m, t, s, &k, tid, from, ~0ull, cap);
		if (fclose(m) && !err)
			err = -ENOMEM;
	}
	if (err) {
		free(*json);
		*json = NULL;
	} else if (len && (*json)[len - 1] == '\n') {
		/* a value in a line of the page */
		(*json)[len - 1] = 0;
	}
	prof_snapshot__destroy(s);
	prof_trace__destroy(t);
	sched_free(&k);
	return err;
}

int pc_trace_json(struct pc_src *src, pid_t pid, __u32 tid, char **json)
{
	return trace_json(src, pid, tid, 0, PC_PAGE_EVENTS, PC_PAGE_THREAD_MIN, 0, json);
}

/* at most max calls in all: a thread's share is at least one */
int pc_trace_json_last(struct pc_src *src, pid_t pid, __u32 tid, __u64 last_ns, __u64 max,
		       char **json)
{
	/* a thread's share is at most max: no more of its ring is read */
	return trace_json(src, pid, tid, last_ns, max, 1, max, json);
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
	err = write_trace(m, t, s, k, tid, from, to, 0);
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
		err = write_trace(f, t, s, k, o->tid, from, to, 0);
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

		err = read_both(src, o->pid, &t, &s, &sk, 0);
		if (err)
			break;
		for (i = 0; i < t->nthreads && got < count; i++) {
			const struct prof_trace_thread *tt = &t->threads[i];
			const struct prof_snap_thread *st = snap_thread(s, tt->tid);
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
				const char *name = node_name(s, st, prof_event_node(e));
				__u64 end;
				char path[512];

				if (!name || strcmp(name, zone) ||
				    ticks_ns(t, prof_event_ticks(e)) <= thr_ns)
					continue;
				got++;
				end = tick_ns(t, e->start) + ticks_ns(t, prof_event_ticks(e));
				capture_path(o->out ? o->out : "-", got, count, path, sizeof(path));
				/* the rings as they are: the call, and before it */
				err = write_to(o, o->out ? path : NULL, t, s, &sk, 0, end);
				if (err)
					break;
				fprintf(stderr,
					"profctl: caught %s of %.3f ms in tid %u%s%s\n", zone,
					(double)ticks_ns(t, prof_event_ticks(e)) / 1e6, tt->tid,
					o->out ? ", written to " : "", o->out ? path : "");
			}
			seen[j].seen = tt->written;
		}
		prof_snapshot__destroy(s);
		prof_trace__destroy(t);
		sched_free(&sk);
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
	"  -o, --output FILE    write there instead of stdout\n"
	"      --no-daemon      do not ask profd (also PROFCTL_NO_DAEMON=1)\n"
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
	err = read_both(src, o->pid, &t, &s, &k, 0);
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
		from = last_from(t, s, (__u64)o->last_s * 1000000000ull);
	err = write_to(o, o->out, t, s, &k, from, to);
	prof_snapshot__destroy(s);
	prof_trace__destroy(t);
	sched_free(&k);
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
