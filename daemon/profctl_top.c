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
#include "profctl.h"

#define HIST_LEN 24 /* sparkline samples per row */

struct zone_stat {
	__u64 calls, self, total, max;	/* cumulative, ticks */
	__u64 d_calls, d_self, d_total; /* over the last interval */
	__u64 hist[HIST_LEN];		/* d_self per interval, ns */
	bool seen;
};

struct top {
	struct pc_src *src;
	pid_t pid;
	int sort;
	bool paused, tty, need_base;
	bool exited; /* the process is gone: every rate from now on is 0 */
	int thread;  /* -1: all threads, else index */
	__u32 tid;
	char comm[PROF_COMM_MAX];
	__u32 nthreads;
	__u32 tids[256];
	struct zone_stat *z; /* by site */
	char (*names)[PROF_NAME_MAX];
	__u32 nz;
	__u64 tick_hz;
	unsigned int frame;
	double interval;
	int rows, cols;
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

	t->rows = 24;
	t->cols = 100;
	if (t->tty && !ioctl(1, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	}
}

static int grow(struct top *t, __u32 nsites)
{
	struct zone_stat *z;
	char(*nm)[PROF_NAME_MAX];

	if (nsites <= t->nz)
		return 0;
	z = realloc(t->z, nsites * sizeof(*z));
	if (!z)
		return -ENOMEM;
	t->z = z;
	nm = realloc(t->names, nsites * sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	t->names = nm;
	memset(&t->z[t->nz], 0, (nsites - t->nz) * sizeof(*z));
	t->nz = nsites;
	return 0;
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

/* one sample: cumulative flat rows, deltas against the previous sample */
static int sample(struct top *t)
{
	struct prof_snapshot *s = NULL;
	struct prof_flat_row *rows = NULL;
	size_t n = 0, i;
	__u32 k;
	int err;

	err = pc_src_flat(t->src, t->pid, t->thread < 0 ? 0 : t->tids[t->thread], &s, &rows, &n);
	if (err)
		return err;
	t->tick_hz = s->tick_hz;
	snprintf(t->comm, sizeof(t->comm), "%s", s->comm);
	if (!t->exited)
		t->exited = proc_exited(s);
	t->nthreads = s->nthreads < 256 ? s->nthreads : 256;
	for (k = 0; k < t->nthreads; k++)
		t->tids[k] = s->threads[k].tid;
	if (t->thread >= (int)t->nthreads)
		t->thread = -1;
	t->tid = t->thread < 0 ? 0 : t->tids[t->thread];
	err = grow(t, s->nsites);
	if (err)
		goto cleanup;
	for (k = 0; k < t->nz; k++) {
		struct zone_stat *z = &t->z[k];

		memmove(&z->hist[0], &z->hist[1], (HIST_LEN - 1) * sizeof(z->hist[0]));
		z->hist[HIST_LEN - 1] = 0;
		z->d_calls = z->d_self = z->d_total = 0;
		if (k < s->nsites)
			snprintf(t->names[k], PROF_NAME_MAX, "%s", s->sites[k].name);
	}
	for (i = 0; i < n; i++) {
		const struct prof_flat_row *r = &rows[i];
		struct zone_stat *z;

		if (r->site >= t->nz)
			continue;
		z = &t->z[r->site];
		if (z->seen && !t->need_base) {
			z->d_calls = r->calls > z->calls ? r->calls - z->calls : 0;
			z->d_self = r->self > z->self ? r->self - z->self : 0;
			z->d_total = r->ticks > z->total ? r->ticks - z->total : 0;
			z->hist[HIST_LEN - 1] = prof_snap_ns(s, z->d_self);
		}
		z->calls = r->calls;
		z->self = r->self;
		z->total = r->ticks;
		z->max = r->max;
		z->seen = true;
	}
	t->need_base = false;
cleanup:
	free(rows);
	prof_snapshot__destroy(s);
	return err;
}

static __u64 ns(const struct top *t, __u64 ticks)
{
	return t->tick_hz ? (__u64)((double)ticks * 1e9 / (double)t->tick_hz) : ticks;
}

static __u64 key(const struct top *t, __u32 i)
{
	const struct zone_stat *z = &t->z[i];

	switch (t->sort) {
	case PROF_SORT_TOTAL:
		return z->d_total;
	case PROF_SORT_CALLS:
		return z->d_calls;
	case PROF_SORT_MAX:
		return z->max;
	default:
		return z->d_self;
	}
}

static const struct top *sort_top;

static int order_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;
	__u64 kx = key(sort_top, x), ky = key(sort_top, y);

	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (sort_top->z[x].self != sort_top->z[y].self)
		return sort_top->z[x].self < sort_top->z[y].self ? 1 : -1;
	return x < y ? -1 : x > y;
}

static void spark(FILE *f, const __u64 *h)
{
	static const char *const bars[] = { " ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	__u64 mx = 0;
	int i;

	for (i = 0; i < HIST_LEN; i++)
		if (h[i] > mx)
			mx = h[i];
	for (i = 0; i < HIST_LEN; i++)
		fputs(bars[mx ? (h[i] ? 1 + (int)(7 * h[i] / mx) : 0) : 0], f);
}

static void draw(struct top *t, FILE *f)
{
	static const char *const keys[] = { "self", "total", "calls", "max", "p99" };
	__u32 *order, n = 0, i;
	__u64 sum = 0;
	int lines, shown = 0;
	char b[4][24], thr[48];
	const char *el = t->tty ? "\033[K" : "";

	order = malloc((t->nz ? t->nz : 1) * sizeof(*order));
	if (!order)
		return;
	for (i = 0; i < t->nz; i++) {
		if (!t->z[i].seen)
			continue;
		order[n++] = i;
		sum += t->z[i].d_self;
	}
	sort_top = t;
	qsort(order, n, sizeof(*order), order_cmp);
	if (t->thread < 0)
		snprintf(thr, sizeof(thr), "all %u threads", t->nthreads);
	else
		snprintf(thr, sizeof(thr), "tid %u (%d/%u)", t->tid, t->thread + 1, t->nthreads);
	if (t->tty)
		fputs("\033[H", f);
	fprintf(f, "%sprofctl top - pid %d (%s%s) - %s - every %.2gs - sort %s%s%s%s\n",
		t->tty ? "\033[1m" : "", (int)t->pid, t->comm, t->exited ? ", exited" : "", thr,
		t->interval, keys[t->sort], t->paused ? " - PAUSED" : "", t->tty ? "\033[0m" : "",
		el);
	/* max is the counters' own: the longest call since the start */
	fprintf(f, "%s%10s %6s %9s %9s %9s %9s  %-*s  %s%s%s\n", t->tty ? "\033[7m" : "", "calls/s",
		"%self", "self", "total", "avg", "max(all)", HIST_LEN, "self history", "zone",
		t->tty ? "\033[0m" : "", el);
	lines = t->tty ? t->rows - 3 : 40;
	for (i = 0; i < n && shown < lines; i++, shown++) {
		const struct zone_stat *z = &t->z[order[i]];
		double rate = t->interval > 0 ? (double)z->d_calls / t->interval : 0;

		fprintf(f, "%10.0f %6.1f %9s %9s %9s %9s  ", rate,
			sum ? 100.0 * (double)z->d_self / (double)sum : 0.0,
			pc_fmt_ns(b[0], 24, ns(t, z->d_self)),
			pc_fmt_ns(b[1], 24, ns(t, z->d_total)),
			pc_fmt_ns(b[2], 24, z->d_calls ? ns(t, z->d_total) / z->d_calls : 0),
			pc_fmt_ns(b[3], 24, ns(t, z->max)));
		spark(f, z->hist);
		fprintf(f, "  %s%s\n", t->names[order[i]], el);
	}
	if (t->tty) {
		fputs("\033[J", f);
		fprintf(f,
			"\033[%d;1H\033[2mkeys: s t c m sort  space pause  tab/[ ] thread  a all  "
			"q quit\033[0m",
			t->rows);
	} else {
		fputc('\n', f);
	}
	fflush(f);
	free(order);
}

/* a key press; false to quit */
static bool on_key(struct top *t, int c)
{
	switch (c) {
	case 'q':
	case 'Q':
	case 3:
		return false;
	case 's':
		t->sort = PROF_SORT_SELF;
		break;
	case 't':
		t->sort = PROF_SORT_TOTAL;
		break;
	case 'c':
		t->sort = PROF_SORT_CALLS;
		break;
	case 'm':
		t->sort = PROF_SORT_MAX;
		break;
	case ' ':
	case 'p':
		t->paused = !t->paused;
		t->need_base = !t->paused;
		break;
	case '\t':
	case ']':
		t->thread = t->thread + 1 >= (int)t->nthreads ? -1 : t->thread + 1;
		t->need_base = true;
		memset(t->z, 0, t->nz * sizeof(*t->z));
		break;
	case '[':
		t->thread = t->thread < 0 ? (int)t->nthreads - 1 : t->thread - 1;
		t->need_base = true;
		memset(t->z, 0, t->nz * sizeof(*t->z));
		break;
	case 'a':
		t->thread = -1;
		t->need_base = true;
		memset(t->z, 0, t->nz * sizeof(*t->z));
		break;
	}
	return true;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the newest live process when no --pid */
static int pick_pid(struct pc_src *src, pid_t *pid)
{
	struct pc_proc *p = NULL;
	size_t n = 0, i, best = (size_t)-1;
	int err = pc_src_targets(src, 0, &p, &n);

	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (best == (size_t)-1 || p[i].created_ns > p[best].created_ns)
			best = i;
	*pid = p[best].pid;
	if (n > 1)
		pc_warnx("%zu profiled processes; showing pid %d (use --pid)", n, (int)*pid);
	free(p);
	return 0;
}

int pc_top(struct pc_src *src, const struct pc_opts *o, double interval, int iterations)
{
	struct top t = { .src = src,
			 .pid = o->pid,
			 .sort = o->sort,
			 .thread = -1,
			 .interval = interval,
			 .need_base = true };
	struct sigaction sa = { .sa_handler = on_signal };
	double next;
	int err, frames = 0;

	/* interval deltas have no histogram: no percentile to sort by */
	if (t.sort < PROF_SORT_SELF || t.sort > PROF_SORT_MAX)
		return -EINVAL;
	if (!t.pid) {
		err = pick_pid(src, &t.pid);
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
	free(t.z);
	free(t.names);
	return err;
}
