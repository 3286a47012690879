// SPDX-License-Identifier: MIT
/*
 * serve_live.c - the live page `profctl serve` serves beside /metrics: a
 * process list at /, one process at /p/PID (daemon/profctl/live.html and
 * live.js, with timeline.js, built into the binary: no network), and the
 * JSON it reads every second:
 *
 *	/api/processes				the processes the caller may see
 *	/api/p/PID/report?window=W		`profctl report --format json`
 *	/api/p/PID/top?window=W			`report --flat --format json`,
 *						with the window's length
 *	/api/p/PID/trace?last=D[&max=N]		`profctl trace --last D`
 *	/api/p/PID/save?window=W		`profctl save`'s file
 *
 * W is start, reset, or a duration (1s, 10s).  Every answer comes from the
 * writers those verbs use, so a figure means here what it means there.
 * A caller sees exactly the processes /metrics shows it: alive, and its
 * own unless --all-users; any other pid is 404.
 *
 * "The last N seconds" is profd's history when profd follows the process;
 * without it, the reads this server made of the process before (at most
 * one a second kept, LIVE_KEEP of them): a window then starts at the kept
 * read nearest N seconds ago, and says in span_ns how long it really is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "client.h"
#include "live_html.h"
#include "proffile.h"
#include "serve_live.h"

/* the metrics and the live page alike (profctl_serve.c calls it too) */
bool pc_serve_may_show(const struct pc_proc *p, const struct pc_serve_opts *o)
{
	/* root's exporter would show every user's to whoever connects */
	return p->alive && (o->all_users || p->uid == getuid());
}

/* the reads kept a process for windows without profd, a second apart */
#define LIVE_KEEP 16
#define LIVE_PIDS 8
#define LIVE_GAP_NS 900000000ull
/* trace?max=: the page's calls in all, at most */
#define LIVE_TRACE_MAX 200000

struct kept {
	struct prof_snapshot *s;
	__u64 t; /* pc_now_ns when read */
};

static struct live_hist {
	pid_t pid;
	__u64 start_token;
	__u64 used; /* pc_now_ns of its last use: the oldest is reused */
	struct kept k[LIVE_KEEP];
	unsigned int n; /* oldest first */
} hists[LIVE_PIDS];

static void hist_clear(struct live_hist *h)
{
	unsigned int i;

	for (i = 0; i < h->n; i++)
		prof_snapshot__destroy(h->k[i].s);
	memset(h, 0, sizeof(*h));
}

static struct live_hist *hist_of(pid_t pid, __u64 token)
{
	struct live_hist *old = &hists[0];
	size_t i;

	for (i = 0; i < LIVE_PIDS; i++) {
		if (hists[i].pid == pid && hists[i].start_token == token)
			return &hists[i];
		if (hists[i].used < old->used)
			old = &hists[i];
	}
	hist_clear(old);
	old->pid = pid;
	old->start_token = token;
	return old;
}

/* a private copy of s (the kept one is diffed against, never changed) */
static int snap_copy(const struct prof_snapshot *s, struct prof_snapshot **out)
{
	void *buf = NULL;
	size_t len = 0;
	int err = prof_snapshot__write(s, &buf, &len);

	if (!err)
		err = prof_snapshot__read(buf, len, out);
	free(buf);
	if (!err) {
		(*out)->ns_pid = s->ns_pid;
		snprintf((*out)->cgroup, sizeof((*out)->cgroup), "%s", s->cgroup);
	}
	return err;
}

/*
 * The page's source, kept between requests: its mapping of the process
 * last asked for stays (pc_src_map), so a request reads the segment and
 * lists nothing.  Opened again every LIVE_SRC_NS, and after a failure, so
 * a profd started or restarted meanwhile is found.
 */
#define LIVE_SRC_NS 5000000000ull
static struct pc_src live_src;
static bool live_src_on;
static __u64 live_src_t;

static struct pc_src *src_get(const struct pc_serve_opts *o)
{
	__u64 now = pc_now_ns();

	if (live_src_on && now - live_src_t < LIVE_SRC_NS)
		return &live_src;
	if (live_src_on)
		pc_src_close(&live_src);
	pc_src_open(&live_src, o->no_daemon);
	live_src.read_flags = 0;
	live_src_on = true;
	live_src_t = now;
	return &live_src;
}

/* pid since its start, from the mapping src keeps; a process gone (or
 * another by now) is marked exited, as every read of profctl's is */
static int live_read(struct pc_src *src, pid_t pid, struct prof_snapshot **out)
{
	const void *mem;
	size_t len;
	int err = pc_src_map(src, pid, &mem, &len);

	if (!err)
		err = prof_snapshot__read(mem, len, out);
	if (err)
		return err;
	(*out)->ns_pid = src->live_ns_pid;
	snprintf((*out)->cgroup, sizeof((*out)->cgroup), "%s", src->live_cgroup);
	if (prof_proc_start_token(pid) != (*out)->start_token)
		(*out)->flags |= PROF_SEG_EXITED;
	return 0;
}

/* the last secs seconds from this server's own reads of pid */
static int window_kept(struct pc_src *src, pid_t pid, unsigned int secs,
		       struct prof_snapshot **out)
{
	struct prof_snapshot *now = NULL, *w = NULL;
	struct live_hist *h;
	__u64 t = pc_now_ns(), want = (__u64)secs * 1000000000ull;
	const struct kept *base = NULL;
	unsigned int i;
	int err;

	err = live_read(src, pid, &now);
	if (err)
		return err;
	h = hist_of(pid, now->start_token);
	h->used = t;
	/* the newest kept read at least secs old, else the oldest */
	for (i = 0; i < h->n; i++)
		if (t - h->k[i].t >= want || !base)
			base = &h->k[i];
	err = snap_copy(now, &w);
	if (!err && base) {
		err = prof_snapshot__diff(w, base->s);
		w->span_ns = t - base->t;
	} else if (!err) {
		/* the first read of it: nothing before, an empty window */
		err = prof_snapshot__diff(w, now);
		w->span_ns = 1;
	}
	if (!err)
		w->span_asked_ns = want;
	if (!h->n || t - h->k[h->n - 1].t >= LIVE_GAP_NS) {
		if (h->n == LIVE_KEEP) {
			prof_snapshot__destroy(h->k[0].s);
			memmove(&h->k[0], &h->k[1], (LIVE_KEEP - 1) * sizeof(h->k[0]));
			h->n--;
		}
		h->k[h->n++] = (struct kept){ .s = now, .t = t };
		now = NULL;
	}
	prof_snapshot__destroy(now);
	if (err) {
		prof_snapshot__destroy(w);
		return err;
	}
	*out = w;
	return 0;
}

/* "start", "reset" or a duration in whole seconds: a snapshot mode */
static int parse_window(const char *w, int *mode, unsigned int *secs)
{
	__u64 ns;

	*secs = 0;
	if (!w || !strcmp(w, "start")) {
		*mode = PROFD_SNAP_START;
		return 0;
	}
	if (!strcmp(w, "reset")) {
		*mode = PC_SNAP_RESET;
		return 0;
	}
	if (pc_parse_duration(w, &ns) || ns % 1000000000ull || ns / 1000000000ull > 3600)
		return -EINVAL;
	*mode = PROFD_SNAP_LAST;
	*secs = (unsigned int)(ns / 1000000000ull);
	return 0;
}

static int window_snap(struct pc_src *src, pid_t pid, int mode, unsigned int secs,
		       struct prof_snapshot **out)
{
	struct prof_snapshot *base = NULL;
	int err;

	if (mode != PROFD_SNAP_LAST) {
		err = live_read(src, pid, out);
		/* since reset: less this user's baseline, as report does */
		if (!err && mode == PC_SNAP_RESET &&
		    !pc_baseline_load(pid, (*out)->start_token, &base) && base)
			prof_snapshot__diff(*out, base);
		prof_snapshot__destroy(base);
		return err;
	}
#ifndef PROFCTL_NO_CLIENT
	if (src->fd >= 0) {
		struct profd_answer a;

		err = profd_snapshot_opts(src->fd, pid, mode, secs, 0, out, &a);

		if (!err) {
			(*out)->span_ns = a.span_ns;
			(*out)->span_asked_ns = (__u64)secs * 1000000000ull;
			(*out)->ns_pid = a.ns_pid;
			snprintf((*out)->cgroup, sizeof((*out)->cgroup), "%s", a.cgroup);
			return 0;
		}
		/* one profd does not follow: this server's own reads */
		if (err != -ESRCH) {
			pc_src_lost(src, err);
			return err;
		}
	}
#endif
	if (secs > LIVE_KEEP - 1)
		return -ERANGE;
	return window_kept(src, pid, secs, out);
}

/* the time a window covers: what its reader said, else its longest thread */
static __u64 window_span(const struct prof_snapshot *s)
{
	__u64 m = 0;
	__u32 i;

	if (s->span_ns)
		return s->span_ns;
	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].nnodes && s->threads[i].nodes[0].ticks > m)
			m = s->threads[i].nodes[0].ticks;
	return prof_snap_ns(s, m);
}

/* pid, if /metrics would show it to this caller (alive, and its own
 * unless --all-users): judged from a read of it, not a listing of every
 * process; its command in comm */
static bool visible(struct pc_src *src, const struct pc_serve_opts *o, pid_t pid, char *comm,
		    size_t len)
{
	struct prof_snapshot *s = NULL;
	struct pc_proc p = { .pid = pid };

	if (live_read(src, pid, &s))
		return false;
	p.uid = s->uid;
	p.alive = !(s->flags & PROF_SEG_EXITED);
	snprintf(comm, len, "%s", s->comm);
	prof_snapshot__destroy(s);
	return pc_serve_may_show(&p, o);
}

/* the window last answered, for the page's next question of the same
 * update (top and report ask for one window within a few ms) */
#define LIVE_CACHE_NS 300000000ull
static struct {
	pid_t pid;
	char window[16];
	__u64 t;
	struct prof_snapshot *s;
} wcache;

static int window_cached(struct pc_src *src, pid_t pid, const char *window, int mode,
			 unsigned int secs, struct prof_snapshot **out)
{
	__u64 now = pc_now_ns();
	int err;

	if (wcache.s && wcache.pid == pid && !strcmp(wcache.window, window) &&
	    now - wcache.t < LIVE_CACHE_NS) {
		*out = wcache.s;
		return 0;
	}
	err = window_snap(src, pid, mode, secs, out);
	if (err)
		return err;
	prof_snapshot__destroy(wcache.s);
	wcache.s = *out;
	wcache.pid = pid;
	wcache.t = now;
	snprintf(wcache.window, sizeof(wcache.window), "%s", window);
	return 0;
}

static void json_processes(FILE *f, struct pc_src *src, const struct pc_serve_opts *o)
{
	struct pc_proc *procs = NULL;
	size_t n = 0, i;
	struct prof_jw w;

	prof_jw_init(&w, f);
	prof_jw_start_object(&w);
	prof_jw_u64_field(&w, "version", 1);
	prof_jw_bool_field(&w, "profd", src->fd >= 0);
	prof_jw_bool_field(&w, "all_users", o->all_users);
	prof_jw_name(&w, "processes");
	prof_jw_start_array(&w);
	if (!pc_src_list(src, &procs, &n))
		for (i = 0; i < n; i++) {
			if (!pc_serve_may_show(&procs[i], o))
				continue;
			prof_jw_start_object(&w);
			pc_proc_json(&w, &procs[i]);
			prof_jw_end_object(&w);
		}
	prof_jw_end_array(&w);
	prof_jw_end_object(&w);
	prof_jw_raw(&w, "\n");
	free(procs);
}

/* top: the flat rows of report --flat --format json, and the window */
static int json_top(FILE *f, struct prof_snapshot *s, const char *window)
{
	struct pc_opts po = { .flat = true, .sort = PROF_SORT_SELF, .format = PC_FMT_JSON };
	struct prof_jw w;
	int err;

	prof_jw_init(&w, f);
	prof_jw_start_object(&w);
	prof_jw_u64_field(&w, "version", 1);
	prof_jw_string_field(&w, "window", window);
	prof_jw_u64_field(&w, "span_ns", window_span(s));
	prof_jw_u64_field(&w, "span_asked_ns", s->span_asked_ns);
	prof_jw_bool_field(&w, "sched", prof_snap_any_sched(s));
	prof_jw_bool_field(&w, "exited", s->flags & PROF_SEG_EXITED);
	prof_jw_name(&w, "flat");
	if (prof_jw_error(&w))
		return -EIO;
	err = pc_render_json_view(f, &s, 1, &po);
	if (err)
		return err;
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* /api/p/PID/WHAT: the answer in r */
static void api_process(struct pc_live_reply *r, struct pc_src *src,
			const struct pc_serve_opts *o, pid_t pid, const char *what,
			const char *window, const char *last, const char *max, FILE *f)
{
	struct prof_snapshot *s = NULL;
	char comm[PROF_COMM_MAX];
	unsigned int secs;
	int mode, err;

	if (!visible(src, o, pid, comm, sizeof(comm))) {
		r->code = 404;
		r->error = "no such process of yours";
		return;
	}
	if (!strcmp(what, "trace")) {
		__u64 last_ns = 0;
		char *end = NULL, *json = NULL;
		unsigned long n = max ? strtoul(max, &end, 10) : 0;

		if ((last && pc_parse_duration(last, &last_ns)) ||
		    (max && (*end || end == max || n > LIVE_TRACE_MAX))) {
			r->code = 400;
			r->error = "trace?last=DURATION&max=N (N at most 200000)";
			return;
		}
		err = pc_trace_json_last(src, pid, 0, last_ns, n, &json);
		if (err) {
			r->code = 500;
			r->error = "failed to read the event rings";
			return;
		}
		fputs(json, f);
		fputc('\n', f);
		free(json);
		return;
	}
	if (strcmp(what, "report") && strcmp(what, "top") && strcmp(what, "save")) {
		r->code = 404;
		r->error = "not found: /api/p/PID/{report,top,trace,save}";
		return;
	}
	if (parse_window(window, &mode, &secs)) {
		r->code = 400;
		r->error = "window=start, reset or whole seconds (1s, 10s)";
		return;
	}
	err = window_cached(src, pid, window ? window : "start", mode, secs, &s);
	if (err) {
		r->code = err == -ERANGE || err == -ENODATA ? 400 : err == -ESRCH ? 404 : 500;
		r->error = err == -ERANGE    ? "without profd, windows of at most 15s"
			   : err == -ENODATA ? "profd dropped the history that window needs "
					       "(--max-memory): a shorter one may still be served"
			   : err == -ESRCH   ? "no such process of yours"
					     : "failed to read the profile";
		return;
	}
	if (!strcmp(what, "report")) {
		err = prof_report_json(f, &s, 1);
	} else if (!strcmp(what, "top")) {
		err = json_top(f, s, window ? window : "start");
	} else {
		void *buf = NULL;
		size_t len = 0;

		err = prof_file_encode(s, &buf, &len);
		if (!err && fwrite(buf, 1, len, f) != len)
			err = -EIO;
		free(buf);
		snprintf(r->filename, sizeof(r->filename), "%s-%d.prof", comm, (int)pid);
		/* a command's name in a header's quoted string: plain characters */
		for (char *c = r->filename; *c; c++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
				    *c))
				*c = '_';
		r->type = "application/octet-stream";
	}
	if (err) {
		r->code = 500;
		r->error = "failed to write the answer";
	}
}

void pc_live_close(void)
{
	size_t i;

	if (live_src_on)
		pc_src_close(&live_src);
	live_src_on = false;
	prof_snapshot__destroy(wcache.s);
	wcache.s = NULL;
	for (i = 0; i < LIVE_PIDS; i++)
		hist_clear(&hists[i]);
}

int pc_live_route(const char *url, const char *window, const char *last, const char *max,
		  const struct pc_serve_opts *o, struct pc_live_reply *r)
{
	struct pc_src *src, lsrc;
	char what[16], comm[PROF_COMM_MAX];
	FILE *f;
	long pid;
	int used = 0;
	bool page = !strcmp(url, "/");

	memset(r, 0, sizeof(*r));
	r->code = 200;
	r->type = "application/json";
	if (sscanf(url, "/p/%ld%n", &pid, &used) == 1 && pid > 0 && !url[used])
		page = true;
	else if (!page && strcmp(url, "/api/processes") &&
		 !(sscanf(url, "/api/p/%ld/%15[a-z]%n", &pid, what, &used) == 2 && pid > 0 &&
		   !url[used]))
		return 0;
	f = open_memstream(&r->body, &r->len);
	if (!f)
		return -ENOMEM;
	src = src_get(o);
	pc_warn_quiet = true;
	if (page && strcmp(url, "/") && !visible(src, o, (pid_t)pid, comm, sizeof(comm))) {
		r->code = 404;
		r->error = "no such process of yours";
	} else if (page) {
		/* one page for the list and every process: its script routes */
		fwrite(live_html, 1, live_html_len, f);
		r->type = "text/html; charset=utf-8";
	} else if (!strcmp(url, "/api/processes")) {
		/* a listing, per request as a scrape's */
		pc_src_open(&lsrc, o->no_daemon);
		json_processes(f, &lsrc, o);
		pc_src_close(&lsrc);
	} else {
		api_process(r, src, o, (pid_t)pid, what, window, last, max, f);
	}
	pc_warn_quiet = false;
	/* a failure may be a profd gone: look again at the next request */
	if (r->code >= 500 && live_src_on) {
		pc_src_close(&live_src);
		live_src_on = false;
	}
	if (fclose(f) && !r->error) {
		r->code = 500;
		r->error = "failed to write the answer";
	}
	if (r->error) {
		free(r->body);
		r->body = NULL;
		if (asprintf(&r->body, "{\"error\":\"%s\"}\n", r->error) < 0)
			return -ENOMEM;
		r->len = strlen(r->body);
		r->type = "application/json";
	}
	return 1;
}
