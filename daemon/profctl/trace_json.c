// SPDX-License-Identifier: MIT
/*
 * trace_json.c - a process's timeline as Chrome Trace Event Format JSON:
 * its threads' event rings (slab.h) read with a snapshot naming their
 * nodes, and profd's scheduler slices, written as one trace.  What profctl
 * trace writes, and the timeline report's html page and serve's live page
 * embed (pc_trace_json, pc_trace_json_last): a piece every verb may use,
 * no verb's own.
 *
 * Times are one clock: ticks mapped to CLOCK_MONOTONIC by the segment's
 * calibration (tick_base at mono_base_ns, tick_hz), in microseconds as the
 * format wants, with ns precision.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "annot.h"
#include "client.h"
#include "profctl.h"
#include "trace_json.h"

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

static __u64 mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* a tick as CLOCK_MONOTONIC ns */
__u64 pc_trace_tick_ns(const struct prof_trace *t, __u64 tick)
{
	if (tick >= t->tick_base)
		return t->mono_base_ns +
		       (__u64)((double)(tick - t->tick_base) * 1e9 / (double)t->tick_hz);
	return t->mono_base_ns -
	       (__u64)((double)(t->tick_base - tick) * 1e9 / (double)t->tick_hz);
}

__u64 pc_trace_ticks_ns(const struct prof_trace *t, __u64 ticks)
{
	return (__u64)((double)ticks * 1e9 / (double)t->tick_hz);
}

/* the snapshot's thread of tid, or NULL */
const struct prof_snap_thread *pc_trace_snap_thread(const struct prof_snapshot *s, __u32 tid)
{
	__u32 i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			return &s->threads[i];
	return NULL;
}

/* the zone name of node n of thread st */
const char *pc_trace_node_name(const struct prof_snapshot *s, const struct prof_snap_thread *st,
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

/* an event up to its time: {"name":"NAME",WHAT,"pid":P,"tid":T,"ts":US
 * (WHAT its "cat" and "ph"), after a comma */
static void event_start(FILE *f, const char *name, const char *what, __u32 pid, __u32 tid, __u64 ts)
{
	fputs(",{\"name\":\"", f);
	prof_json_fbody(f, name);
	fprintf(f, "\",%s,\"pid\":%u,\"tid\":%u,\"ts\":", what, pid, tid);
	put_us(f, ts);
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

		ts = pc_trace_tick_ns(t, p->tick);
		if (ts < from || ts > to)
			continue;
		event_start(f, at->plots[p->plot].name, "\"cat\":\"plot\",\"ph\":\"C\"", t->pid,
			    tid, ts);
		fputs(",\"args\":{\"value\":", f);
		fprintf(f, "%.17g}}", p->value);
	}
	for (k = 0; k < at->nmsgs; k++) {
		const struct prof_annot_msg *m = &at->msgs[k];

		ts = pc_trace_tick_ns(t, m->tick);
		if (ts < from || ts > to)
			continue;
		event_start(f, m->text, "\"cat\":\"message\",\"ph\":\"i\",\"s\":\"t\"", t->pid, tid,
			    ts);
		zone = m->node == PROF_NODE_ROOT ? NULL : pc_trace_node_name(s, st, m->node);
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
		__u64 dur = pc_trace_ticks_ns(t, sp->dur);

		ts = pc_trace_tick_ns(t, sp->start);
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
		zone = l->node == PROF_NODE_ROOT ? NULL : pc_trace_node_name(s, st, l->node);
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
int pc_trace_write(FILE *f, const struct prof_trace *t, const struct prof_snapshot *s,
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
		const struct prof_snap_thread *st = pc_trace_snap_thread(s, tt->tid);
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
			__u64 start = pc_trace_tick_ns(t, e->start);
			__u64 dur = pc_trace_ticks_ns(t, prof_event_ticks(e));
			bool frame = prof_event_node(e) == PROF_NODE_ROOT;
			const char *name =
				frame ? "[frame]" : pc_trace_node_name(s, st, prof_event_node(e));

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

	if (t->image || t->clock != PROF_CLOCK_TSC || !prof_clock_now(PROF_CLOCK_TSC))
		return;
	for (i = 0; i < 5; i++) {
		__u64 a = prof_clock_now(PROF_CLOCK_TSC), m = mono_now_ns();
		__u64 b = prof_clock_now(PROF_CLOCK_TSC);

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

void pc_trace_sched_free(struct sched_tl *k)
{
	free(k->th);
	k->th = NULL;
	k->n = 0;
}

/* the rings of pid (each thread's newest events only, if not 0) and a
 * snapshot naming their nodes; with profd, the scheduler's slices of its
 * threads too (none where it has no program) */
int pc_trace_read(struct pc_src *src, pid_t pid, struct prof_trace **t, struct prof_snapshot **s,
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
		pc_trace_sched_free(k);
	err = pc_src_map(src, pid, &mem, &len);
	if (err) {
		pc_trace_sched_free(k);
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
		pc_trace_sched_free(k);
	}
	return err;
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
__u64 pc_trace_last_from(const struct prof_trace *t, const struct prof_snapshot *s, __u64 last_ns)
{
	__u64 now = mono_now_ns();

	if (s->exit_tick)
		now = pc_trace_tick_ns(t, s->exit_tick);
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
	err = pc_trace_read(src, pid, &t, &s, &k, newest);
	if (err)
		return err;
	cap = max ? page_cap(t, tid, max, min) : 0;
	from = last_ns ? pc_trace_last_from(t, s, last_ns) : 0;
	m = open_memstream(json, &len);
	if (!m) {
		err = -ENOMEM;
	} else {
		err = pc_trace_write(m, t, s, &k, tid, from, ~0ull, cap);
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
	pc_trace_sched_free(&k);
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
