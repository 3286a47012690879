// SPDX-License-Identifier: MIT
/*
 * profctl_top.c - `profctl top`: the hottest zones over the last interval,
 * refreshed in place, with a sparkline of each zone's self time history.
 * Plain ANSI and termios: the alternate screen, no echo, the cursor
 * hidden; all restored on quit, on Ctrl-C and on SIGTERM.  Without a
 * terminal it prints one plain frame per interval.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "annot.h"
#include "profctl.h"
#include "profctl_samples.h"

#define HIST_LEN 24	/* sparkline samples kept per row */
#define TOP_THREADS 256 /* threads in the thread list */
/* up to this many threads each is sampled every interval (a read of the
 * segment each); above it only the one shown, from when it is shown */
#define TOP_EACH_MAX 64
#define NAME_MIN 32 /* the zone name keeps at least this, or its length */

struct zone_stat {
	/* the row as last read: since start */
	struct prof_flat_row cum;
	/* over the last interval (prof_flat_window); the kernel columns
	 * speak for d.kernel_calls of d.calls (the calls with kernel facts) */
	struct prof_flat_row d;
	float hist[HIST_LEN]; /* self ns per second, an interval each */
	bool seen;
};

/*
 * One thread's zones (or all threads', tid 0), sampled every interval
 * whether shown or not: switching thread shows its rates and history at
 * once.  A reused tid is another thread: start_tick tells them apart.
 */
struct view {
	__u32 tid;
	__u64 start_tick;
	char name[PROF_THREAD_NAME_MAX];
	struct zone_stat *z; /* by site */
	__u32 nz;
	unsigned int gen; /* the sample that last updated it */
};

struct top {
	struct pc_src *src;
	pid_t pid;
	int sort;
	bool paused, tty, need_base;
	bool exited; /* the process is gone: every rate from now on is 0 */
	bool sched;  /* the rows carry profd's scheduler facts */
	__u32 sel;   /* the thread shown: its view's tid, 0 for all */
	__u64 sel_start;
	char comm[PROF_COMM_MAX];
	__u32 nthreads;
	struct view *views; /* [0]: all threads */
	__u32 nviews;
	__u32 order[TOP_THREADS];    /* the snapshot's threads, as views */
	char (*names)[PC_LABEL_MAX]; /* by site, " (file:line)" after a shared name */
	char (*hot)[PC_LABEL_MAX];   /* by site: its hottest sampled line, or "" */
	/* stack sampling on, or off and why */
	char samples[PC_SAMPLES_STATE_MAX];
	__u32 nnames;
	__u64 tick_hz;
	double interval;
	unsigned int gen; /* samples taken */
	double dt;	  /* seconds between the last two samples: rates divide by it */
	double t_last;	  /* when the last sample was taken */
	int rows, cols;
	/* its named locks, now and at the sample before (rates are the
	 * difference), or NULL */
	struct prof_snap_annot *annot, *annot_prev;
};

static volatile sig_atomic_t top_quit, top_winch;
static struct termios top_saved;
static bool top_raw;

static void term_restore(void)
{
	if (!top_raw)
		return;
	tcsetattr(0, TCSAFLUSH, &top_saved);
	/* cursor back, main screen */
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	top_raw = false;
}

static void on_signal(int sig)
{
	if (sig == SIGWINCH)
		top_winch = 1;
	else
		top_quit = 1;
}

static int term_setup(void)
{
	struct termios t;

	if (tcgetattr(0, &top_saved))
		return -errno;
	t = top_saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(0, TCSAFLUSH, &t))
		return -errno;
	top_raw = true;
	atexit(term_restore);
	fputs("\033[?1049h\033[?25l", stdout);
	return 0;
}

static void term_size(struct top *t)
{
	struct winsize ws;

	/* no terminal: nothing wraps, every column */
	t->rows = 24;
	t->cols = 160;
	if (t->tty && !ioctl(1, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	}
}

static int grow_view(struct view *v, __u32 nsites)
{
	struct zone_stat *z;

	if (nsites <= v->nz)
		return 0;
	z = realloc(v->z, nsites * sizeof(*z));
	if (!z)
		return -ENOMEM;
	memset(&z[v->nz], 0, (nsites - v->nz) * sizeof(*z));
	v->z = z;
	v->nz = nsites;
	return 0;
}

/* the view of thread (tid, start), made if new; NULL without memory */
static struct view *view_of(struct top *t, __u32 tid, __u64 start)
{
	struct view *v;
	__u32 i;

	for (i = 0; i < t->nviews; i++)
		if (t->views[i].tid == tid && t->views[i].start_tick == start)
			return &t->views[i];
	v = realloc(t->views, (t->nviews + 1) * sizeof(*v));
	if (!v)
		return NULL;
	t->views = v;
	v = &t->views[t->nviews++];
	memset(v, 0, sizeof(*v));
	v->tid = tid;
	v->start_tick = start;
	return v;
}

/* a thread's name: PROF_THREAD_NAME, else its comm while it runs */
static void thread_name(const struct top *t, const struct prof_snap_thread *th, char *buf,
			size_t len)
{
	buf[0] = 0;
	if (th->name[0]) {
		snprintf(buf, len, "%s", th->name);
		return;
	}
	if (prof_proc_comm((pid_t)t->pid, (pid_t)th->tid, buf, len))
		buf[0] = 0;
}

/* a clean exit flags the segment; a killed process is only missing */
static bool proc_exited(const struct prof_snapshot *s)
{
	__u64 token;

	if (s->flags & PROF_SEG_EXITED)
		return true;
	token = prof_proc_start_token((pid_t)s->pid);
	/* no token without /proc/<pid>/stat, which hidepid may hide */
	if (token)
		return token != s->start_token;
	return kill((pid_t)s->pid, 0) && errno == ESRCH;
}

/* one view's rows: deltas against its previous sample, a history step */
static int view_update(struct top *t, struct view *v, const struct prof_snapshot *s,
		       const struct prof_flat_row *rows, size_t n, __u32 threads)
{
	/* a call's time lands when it ends: one that began before the
	 * interval would add all of it; a thread is in a zone at most all
	 * the time */
	__u64 cap = (__u64)(t->dt * (double)s->tick_hz) * (threads ? threads : 1);
	/* a view not sampled last time has no base for a delta */
	bool fresh = t->need_base || v->gen + 1 != t->gen;
	__u32 k;
	size_t i;
	int err = grow_view(v, s->nsites);

	if (err)
		return err;
	v->gen = t->gen;
	for (k = 0; k < v->nz; k++) {
		struct zone_stat *z = &v->z[k];

		memmove(&z->hist[0], &z->hist[1], (HIST_LEN - 1) * sizeof(z->hist[0]));
		z->hist[HIST_LEN - 1] = 0;
		memset(&z->d, 0, sizeof(z->d));
	}
	for (i = 0; i < n; i++) {
		const struct prof_flat_row *r = &rows[i];
		struct zone_stat *z;

		if (r->site >= v->nz)
			continue;
		z = &v->z[r->site];
		if (z->seen && !fresh) {
			prof_flat_window(&z->d, r, &z->cum);
			if (z->d.self > cap)
				z->d.self = cap;
			if (z->d.ticks > cap)
				z->d.ticks = cap;
			if (z->d.open_ticks > z->d.ticks)
				z->d.open_ticks = z->d.ticks;
			z->hist[HIST_LEN - 1] =
				t->dt > 0 ? (float)((double)prof_snap_ns(s, z->d.self) / t->dt) : 0;
		}
		z->cum = *r;
		z->seen = true;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* one sample: all threads, then each thread, against their last samples */
static int sample(struct top *t)
{
	struct prof_snapshot *s = NULL, *ts = NULL;
	struct prof_flat_row *rows = NULL;
	struct view *v;
	size_t n = 0;
	__u32 k, i;
	__u8 *clash;
	int err;

	double now = now_s();

	err = pc_src_flat(t->src, t->pid, 0, &s, &rows, &n);
	if (err)
		return err;
	t->gen++;
	t->dt = t->t_last > 0 && now > t->t_last ? now - t->t_last : t->interval;
	t->t_last = now;
	t->tick_hz = s->tick_hz;
	snprintf(t->comm, sizeof(t->comm), "%s", s->comm);
	if (!t->exited)
		t->exited = proc_exited(s);
	err = -ENOMEM;
	if (s->nsites > t->nnames) {
		char(*nm)[PC_LABEL_MAX] = realloc(t->names, s->nsites * sizeof(*nm));
		char(*hot)[PC_LABEL_MAX] = nm ? realloc(t->hot, s->nsites * sizeof(*hot)) : NULL;

		if (nm)
			t->names = nm;
		if (!hot)
			goto cleanup;
		t->hot = hot;
		t->nnames = s->nsites;
	}
	/* two overloads (or lambdas) are two rows: say which is which */
	clash = prof_snap_name_clashes(s);
	for (k = 0; k < s->nsites; k++) {
		snprintf(t->names[k], PROF_NAME_MAX, "%s", s->sites[k].name);
		if (clash && clash[k])
			*prof_put_where(t->names[k] + strlen(t->names[k]), &s->sites[k]) = 0;
	}
	free(clash);
	/* each zone's hottest line, from profd's samples (since the start),
	 * and whether there are any, or why not */
	{
		struct pc_samples *sm = pc_samples_get(t->src, t->pid);

		for (k = 0; k < s->nsites; k++)
			pc_samples_hottest(sm, s->sites[k].name, t->hot[k], PC_LABEL_MAX);
		pc_samples_state(sm, t->samples, sizeof(t->samples));
		pc_samples_free(sm);
	}
	v = view_of(t, 0, 0);
	if (!v)
		goto cleanup;
	err = view_update(t, v, s, rows, n, s->nthreads);
	if (err)
		goto cleanup;
	t->nthreads = s->nthreads < TOP_THREADS ? s->nthreads : TOP_THREADS;
	for (k = 0; k < s->nthreads; k++)
		t->sched |= t->src->fd >= 0 && s->threads[k].ksched_slot != PROF_NO_SLOT;
	for (k = 0; k < t->nthreads; k++) {
		const struct prof_snap_thread *th = &s->threads[k];

		free(rows);
		rows = NULL;
		v = view_of(t, th->tid, th->start_tick);
		if (!v) {
			err = -ENOMEM;
			goto cleanup;
		}
		t->order[k] = (__u32)(v - t->views);
		if (!v->name[0])
			thread_name(t, th, v->name, sizeof(v->name));
		if (t->nthreads > TOP_EACH_MAX &&
		    !(th->tid == t->sel && th->start_tick == t->sel_start))
			continue;
		err = pc_src_flat(t->src, t->pid, th->tid, &ts, &rows, &n);
		if (err)
			goto cleanup;
		err = view_update(t, v, ts, rows, n, 1);
		prof_snapshot__destroy(ts);
		ts = NULL;
		if (err)
			goto cleanup;
	}
	/* a thread whose slab was reused is gone: show all threads */
	for (i = 0; t->sel && i < t->nthreads; i++)
		if (t->views[t->order[i]].tid == t->sel &&
		    t->views[t->order[i]].start_tick == t->sel_start)
			break;
	if (t->sel && i == t->nthreads)
		t->sel = 0;
	t->need_base = false;
	prof_snap_annot_free(t->annot_prev);
	t->annot_prev = t->annot;
	t->annot = pc_annot_read(t->src, s);
cleanup:
	free(rows);
	prof_snapshot__destroy(s);
	return err;
}

static __u64 ns(const struct top *t, __u64 ticks)
{
	return t->tick_hz ? (__u64)((double)ticks * 1e9 / (double)t->tick_hz) : ticks;
}

/* the view on screen, and its place among the threads (-1: all) */
static struct view *shown(const struct top *t, int *idx)
{
	__u32 i;

	*idx = -1;
	for (i = 0; t->sel && i < t->nthreads; i++) {
		struct view *v = &t->views[t->order[i]];

		if (v->tid == t->sel && v->start_tick == t->sel_start) {
			*idx = (int)i;
			return v;
		}
	}
	return t->nviews ? &t->views[0] : NULL;
}

/* a row's on-CPU time (self: its self on-CPU time) over the interval:
 * the difference of report's figure (prof_snap_oncpu, open calls too)
 * between two reads, at most the interval's total; PROF_SNAP_UNKNOWN
 * where nothing is known of its calls */
static __u64 zone_oncpu(const struct top *t, const struct zone_stat *z, bool self)
{
	__u64 total_ns = ns(t, self ? z->d.self : z->d.ticks);
	__u64 on = self ? z->d.self_oncpu_ns : z->d.oncpu_ns;

	/* the interval's calls, none with kernel facts: its difference of the
	 * known figure since start is no figure of them */
	if (on == PROF_SNAP_UNKNOWN || (z->d.calls && !z->d.kernel_calls))
		return PROF_SNAP_UNKNOWN;
	return on < total_ns ? on : total_ns;
}

static __u64 key(const struct top *t, const struct zone_stat *z)
{
	switch (t->sort) {
	case PROF_SORT_ONCPU:
		return prof_sort_oncpu_key(zone_oncpu(t, z, false));
	case PROF_SORT_SELF_ONCPU:
		return prof_sort_oncpu_key(zone_oncpu(t, z, true));
	case PROF_SORT_TOTAL:
		return z->d.ticks;
	case PROF_SORT_CALLS:
		return z->d.calls;
	case PROF_SORT_MAX:
		return z->d.max;
	default:
		return z->d.self;
	}
}

static const struct top *sort_top;
static const struct view *sort_view;

static int order_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;
	const struct zone_stat *zx = &sort_view->z[x], *zy = &sort_view->z[y];
	__u64 kx = key(sort_top, zx), ky = key(sort_top, zy);

	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (zx->cum.self != zy->cum.self)
		return zx->cum.self < zy->cum.self ? 1 : -1;
	return x < y ? -1 : x > y;
}

static void spark(FILE *f, const float *h, int width)
{
	static const char *const bars[] = { " ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	float mx = 0;
	int i;

	/* the newest width samples */
	h += HIST_LEN - width;
	for (i = 0; i < width; i++)
		if (h[i] > mx)
			mx = h[i];
	for (i = 0; i < width; i++)
		fputs(bars[mx > 0 && h[i] > 0 ? 1 + (int)(7 * h[i] / mx) : 0], f);
}

/*
 * The columns, each with one unit said in its header: rates are per
 * second whatever the interval, avg per call over the interval, max the
 * longest call since the start.  A narrow terminal narrows the history,
 * then drops columns in drop_order; self and the zone name always stay,
 * and a name is cut rather than wrapped.
 */
enum {
	COL_CALLS,
	COL_PSELF,
	COL_SELF,
	COL_TOTAL,
	COL_AVG,
	COL_MAX,
	COL_ONCPU,
	COL_PREEMPT,
	COL_BLOCKED,
	COL_MIGR,
	COL_HIST,
	NCOLS
};
static const struct {
	const char *head;
	int width;
	bool sched;
} columns[NCOLS] = {
	[COL_CALLS] = { "calls/s", 8, false },
	[COL_PSELF] = { "%self", 5, false },
	[COL_SELF] = { "self/s", 7, false },
	[COL_TOTAL] = { "total/s", 7, false },
	[COL_AVG] = { "avg/call", 8, false },
	[COL_MAX] = { "max", 8, false },
	[COL_ONCPU] = { "on-cpu/s", 8, true },
	[COL_PREEMPT] = { "preempt/s", 9, true },
	[COL_BLOCKED] = { "blocked/s", 9, true },
	[COL_MIGR] = { "migr/s", 6, true },
	[COL_HIST] = { "self/s history", HIST_LEN, false },
};
static const int drop_order[] = { COL_MAX,  COL_MIGR,  COL_BLOCKED, COL_AVG,   COL_PREEMPT,
				  COL_HIST, COL_TOTAL, COL_ONCPU,   COL_PSELF, COL_CALLS };

struct layout {
	bool on[NCOLS];
	int hist; /* sparkline width */
	int name; /* zone name width */
};

static int layout_width(const struct layout *l)
{
	int w = 0, c;

	for (c = 0; c < NCOLS; c++)
		if (l->on[c])
			w += c == COL_HIST ? 2 + l->hist : 1 + columns[c].width;
	return w + 2; /* before the name */
}

static void layout(int cols, bool sched, int name_len, bool on[], int *hist, int *name)
{
	struct layout l;
	int c, d = 0, want = name_len < NAME_MIN ? name_len : NAME_MIN;

	if (want < 4)
		want = 4; /* "zone" */
	for (c = 0; c < NCOLS; c++)
		l.on[c] = !columns[c].sched || sched;
	l.hist = HIST_LEN;
	while (layout_width(&l) + want > cols) {
		if (l.on[COL_HIST] && l.hist > 8) {
			l.hist -= 8;
			continue;
		}
		if (d == (int)(sizeof(drop_order) / sizeof(drop_order[0])))
			break;
		l.on[drop_order[d++]] = false;
	}
	l.name = cols - layout_width(&l);
	if (l.name > name_len)
		l.name = name_len > 4 ? name_len : 4;
	if (l.name < 1)
		l.name = 1;
	memcpy(on, l.on, sizeof(l.on));
	*hist = l.hist;
	*name = l.name;
}

int pc_top_layout(int cols, bool sched, int name_len, char *heads, size_t len, int *name)
{
	struct layout l;
	size_t off = 0;
	int c;

	layout(cols, sched, name_len, l.on, &l.hist, &l.name);
	heads[0] = 0;
	for (c = 0; c < NCOLS; c++)
		if (l.on[c] && off < len)
			off += (size_t)snprintf(heads + off, len - off, "%s%s", off ? "," : "",
						columns[c].head);
	*name = l.name;
	return layout_width(&l) + l.name;
}

/* a rate per second of a count over the interval */
static double per_s(const struct top *t, __u64 v)
{
	return t->dt > 0 ? (double)v / t->dt : 0;
}

/* a row's cells, zone z's over the interval; sum: the self time of all */
static void draw_row(struct top *t, FILE *f, const struct zone_stat *z, __u64 sum,
		     const struct layout *l)
{
	__u64 total_ns = ns(t, z->d.ticks);
	char b[24];
	int c;

	for (c = 0; c < NCOLS; c++) {
		if (!l->on[c])
			continue;
		if (c)
			fputc(' ', f);
		/* calls in the interval, none with kernel facts: unknown,
		 * not 0 (and not all of it on the CPU) */
		if (((c == COL_PREEMPT || c == COL_BLOCKED || c == COL_MIGR) && z->d.calls &&
		     !z->d.kernel_calls) ||
		    (c == COL_ONCPU && zone_oncpu(t, z, false) == PROF_SNAP_UNKNOWN)) {
			fprintf(f, "%*s", columns[c].width, "-");
			continue;
		}
		switch (c) {
		case COL_CALLS:
			fprintf(f, "%*.0f ", columns[c].width, per_s(t, z->d.calls));
			break;
		case COL_PSELF:
			fprintf(f, "%*.1f", columns[c].width,
				sum ? 100.0 * (double)z->d.self / (double)sum : 0.0);
			break;
		case COL_SELF:
		case COL_TOTAL:
		case COL_ONCPU: {
			/* on-CPU as report shows it, open calls too */
			__u64 d = c == COL_SELF	   ? ns(t, z->d.self)
				  : c == COL_TOTAL ? total_ns
						   : zone_oncpu(t, z, false);

			fprintf(f, "%*s", columns[c].width,
				prof_fmt_ns(b, sizeof(b), (__u64)per_s(t, d)));
			break;
		}
		case COL_AVG:
			fprintf(f, "%*s", columns[c].width,
				prof_fmt_ns(b, sizeof(b),
					    z->d.calls ? ns(t, z->d.ticks - z->d.open_ticks) /
								 z->d.calls
						       : 0));
			break;
		case COL_MAX:
			fprintf(f, "%*s", columns[c].width,
				prof_fmt_ns(b, sizeof(b), ns(t, z->d.max)));
			break;
		case COL_PREEMPT:
			fprintf(f, "%*.1f", columns[c].width, per_s(t, z->d.preempted));
			break;
		case COL_BLOCKED:
			fprintf(f, "%*.1f", columns[c].width, per_s(t, z->d.blocked));
			break;
		case COL_MIGR:
			fprintf(f, "%*.1f", columns[c].width, per_s(t, z->d.migrated));
			break;
		case COL_HIST:
			fputc(' ', f);
			spark(f, z->hist, l->hist);
			break;
		}
	}
}

/*
 * The process's named locks over the last interval, most waited first, as
 * many as there are lines left: acquisitions and contended ones a second,
 * and the share of the interval spent waiting and holding (summed over
 * threads: above 100% when several wait at once); lines used
 */
static int draw_locks(struct top *t, FILE *f, int left, const char *el)
{
	return pc_top_locks(f, t->annot, t->annot_prev, t->dt, t->tick_hz, left, el);
}

static void draw(struct top *t, FILE *f)
{
	const char *const *keys = prof_sort_names;
	struct view *v;
	struct layout l;
	__u32 *order, n = 0, i;
	__u64 sum = 0;
	int lines, shown_n = 0, idx, c, name_len = 4;
	char thr[96], title[256];
	const char *el = t->tty ? "\033[K" : "";

	v = shown(t, &idx);
	if (!v)
		return;
	order = malloc((v->nz ? v->nz : 1) * sizeof(*order));
	if (!order)
		return;
	for (i = 0; i < v->nz; i++) {
		if (!v->z[i].seen)
			continue;
		order[n++] = i;
		sum += v->z[i].d.self;
		if (i < t->nnames && (int)strlen(t->names[i]) > name_len)
			name_len = (int)strlen(t->names[i]);
	}
	sort_top = t;
	sort_view = v;
	qsort(order, n, sizeof(*order), order_cmp);
	layout(t->cols, t->sched, name_len, l.on, &l.hist, &l.name);
	if (idx < 0)
		snprintf(thr, sizeof(thr), "all %u thread%s", t->nthreads,
			 t->nthreads == 1 ? "" : "s");
	else
		snprintf(thr, sizeof(thr), "%s%stid %u (%d/%u)", v->name, v->name[0] ? " " : "",
			 v->tid, idx + 1, t->nthreads);
	snprintf(title, sizeof(title), "profctl top - pid %d (%s%s) - %s - every %.2gs - sort %s%s",
		 (int)t->pid, t->comm, t->exited ? ", exited" : "", thr, t->interval, keys[t->sort],
		 t->paused ? " - PAUSED" : "");
	if (t->tty)
		fputs("\033[H", f);
	fprintf(f, "%s%.*s%s%s\n", t->tty ? "\033[1m" : "", t->cols, title, t->tty ? "\033[0m" : "",
		el);
	if (t->tty)
		fputs("\033[7m", f);
	for (c = 0; c < NCOLS; c++) {
		if (!l.on[c])
			continue;
		if (c == COL_HIST)
			fprintf(f, "  %-*.*s", l.hist, l.hist,
				l.hist >= (int)strlen(columns[c].head) ? columns[c].head
								       : "history");
		else
			fprintf(f, "%*s%s", c ? columns[c].width + 1 : columns[c].width,
				columns[c].head, c ? "" : " ");
	}
	/* the header bar spans the name on a terminal; plain text has no padding */
	fprintf(f, "  %-*s%s%s\n", t->tty ? l.name : 0, "zone", t->tty ? "\033[0m" : "", el);
	lines = t->tty ? t->rows - 3 : 40;
	for (i = 0; i < n && shown_n < lines; i++, shown_n++) {
		draw_row(t, f, &v->z[order[i]], sum, &l);
		fprintf(f, "  %.*s", l.name, order[i] < t->nnames ? t->names[order[i]] : "?");
		if (order[i] < t->nnames && t->hot[order[i]][0])
			fprintf(f, "  [hot: %s]", t->hot[order[i]]);
		fprintf(f, "%s\n", el);
	}
	shown_n += draw_locks(t, f, lines - shown_n, el);
	if (t->tty) {
		static const char help[] =
			"keys: s t c m sort  space pause  tab/[ ] thread  a all  "
			"q quit";

		char bottom[sizeof(help) + PC_SAMPLES_STATE_MAX + 32];

		snprintf(bottom, sizeof(bottom), "%s  |  stack samples: %s", help, t->samples);
		fputs("\033[J", f);
		fprintf(f, "\033[%d;1H\033[2m%.*s\033[0m", t->rows, t->cols, bottom);
	} else {
		fprintf(f, "stack samples: %s\n\n", t->samples);
	}
	fflush(f);
	free(order);
}

/* show thread i of the snapshot's (-1: all) */
static void select_thread(struct top *t, int i)
{
	if (i < 0 || i >= (int)t->nthreads) {
		t->sel = 0;
		t->sel_start = 0;
		return;
	}
	t->sel = t->views[t->order[i]].tid;
	t->sel_start = t->views[t->order[i]].start_tick;
}

/* the keys that sort the table by a column */
static const struct {
	char key;
	int sort;
} sort_keys[] = {
	{ 's', PROF_SORT_SELF }, { 't', PROF_SORT_TOTAL }, { 'c', PROF_SORT_CALLS },
	{ 'm', PROF_SORT_MAX },	 { 'o', PROF_SORT_ONCPU },
};

/* a key press; false to quit */
static bool on_key(struct top *t, int c)
{
	size_t k;
	int idx;

	for (k = 0; k < sizeof(sort_keys) / sizeof(sort_keys[0]); k++)
		if (c == sort_keys[k].key) {
			t->sort = sort_keys[k].sort;
			return true;
		}
	shown(t, &idx);
	switch (c) {
	case 'q':
	case 'Q':
	case 3:
		return false;
	case ' ':
	case 'p':
		t->paused = !t->paused;
		t->need_base = !t->paused;
		break;
	case '\t':
	case ']':
		select_thread(t, idx + 1);
		break;
	case '[':
		select_thread(t, idx < 0 ? (int)t->nthreads - 1 : idx - 1);
		break;
	case 'a':
		select_thread(t, -1);
		break;
	}
	return true;
}

int pc_top(struct pc_src *src, const struct pc_opts *o, double interval, int iterations)
{
	struct top t = {
		.src = src, .pid = o->pid, .sort = o->sort, .interval = interval, .need_base = true
	};
	struct sigaction sa = { .sa_handler = on_signal };
	double next;
	int err, frames = 0;

	/* interval deltas have no histogram: no percentile to sort by */
	if (t.sort < PROF_SORT_SELF ||
	    (t.sort > PROF_SORT_MAX && t.sort != PROF_SORT_ONCPU && t.sort != PROF_SORT_SELF_ONCPU))
		return -EINVAL;
	if (!t.pid) {
		err = pc_pick_pid(src, &t.pid);
		if (err)
			return err;
	}
	err = sample(&t);
	if (err)
		return err;
	t.tty = isatty(0) && isatty(1);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	if (t.tty && term_setup())
		t.tty = false;
	term_size(&t);
	next = now_s() + interval;
	while (!top_quit) {
		double left = next - now_s();
		struct pollfd pfd = { .fd = 0, .events = POLLIN };

		if (left > 0) {
			int r = poll(&pfd, t.tty ? 1 : 0, (int)(left * 1000) + 1);

			if (r > 0 && (pfd.revents & POLLIN)) {
				char c;

				if (read(0, &c, 1) == 1 && !on_key(&t, c))
					break;
				if (t.tty)
					draw(&t, stdout);
			}
			if (top_winch) {
				top_winch = 0;
				term_size(&t);
				if (t.tty)
					fputs("\033[2J", stdout);
				draw(&t, stdout);
			}
			continue;
		}
		next += interval;
		if (next < now_s())
			next = now_s() + interval;
		if (!t.paused) {
			err = sample(&t);
			/* its segment shrank under the mapping: profctl_main says so */
			if (!err && pc_bus_hit())
				err = -EIO;
			if (err)
				break;
		}
		draw(&t, stdout);
		if (iterations && ++frames >= iterations)
			break;
	}
	term_restore();
	for (__u32 i = 0; i < t.nviews; i++)
		free(t.views[i].z);
	free(t.views);
	free(t.names);
	free(t.hot);
	prof_snap_annot_free(t.annot);
	prof_snap_annot_free(t.annot_prev);
	return err;
}

/* --- the verb ---------------------------------------------------------------- */

#define EXIT_USAGE 2

static const char usage_top[] =
	"usage: profctl top [--pid P] [--delay SECONDS] [--iterations N]\n"
	"                   [--sort self|total|calls|max|oncpu|self-oncpu] [--no-daemon]\n"
	"\n"
	"  -p, --pid P          the process (default: the newest live one of yours)\n"
	"  -d, --delay TIME     refresh every TIME, 10ms to 1h (0.5, 500ms, 2s; default 1s)\n"
	"  -n, --iterations N   quit after N frames (default: on q or Ctrl-C)\n"
	"  -s, --sort KEY       rows by self (default), total, calls, max (wall time),\n"
	"                       oncpu or self-oncpu (CPU time, profd)\n"
	PC_USAGE_NO_DAEMON
	"\n"
	"The hottest zones over the last interval, with a sparkline of each row's self\n"
	"time.  Each column says its unit: per second over the last interval, avg per\n"
	"call and max of the calls that ended in it (max: exact when above every\n"
	"earlier call, else a bound on it); with profd also on-CPU time, preempted and\n"
	"migrated calls per second.  Below them, the process's named locks (prof(3)):\n"
	"acquisitions and contended ones a second, the share of the interval waited\n"
	"and held.  Without --pid, the newest live process.  Keys:\n"
	"s self, t total, c calls, m max, o on-CPU, space or p\n"
	"pause, tab or ] next thread, [ previous thread, a all threads, q or Ctrl-C quit.\n"
	"Without a terminal, prints one frame per interval.\n";

static const struct option top_options[] = {
	PC_OPT_PID,	   PC_OPT_SORT, PC_OPT_NO_DAEMON, PC_OPT_DELAY,
	PC_OPT_ITERATIONS, PC_OPT_HELP, PC_OPT_END,
};

int pc_cmd_top(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src;
	int err;

	err = pc_parse_opts(argc, argv, usage_top, top_options, &o);
	if (err)
		return err < 0 ? 0 : err;
	/* an interval's rows have no histogram */
	if (o.sort == PROF_SORT_P99) {
		pc_warnx("top: --sort %s not available: top sorts by self, total, calls, max, "
			 "oncpu or self-oncpu",
			 prof_sort_names[o.sort]);
		return EXIT_USAGE;
	}
	pc_src_open_said(&src, &o, NULL);
	err = pc_top(&src, &o, o.delay, o.iters);
	pc_src_close(&src);
	return err ? 1 : 0;
}
