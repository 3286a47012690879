// SPDX-License-Identifier: MIT
/*
 * profctl_serve.c - `profctl serve --listen ADDR`: an OpenMetrics exporter
 * for Prometheus, and a live page (serve_live.c) on the same server.  HTTP is libmicrohttpd's (one internal thread: scrapes
 * are served one at a time); each scrape reads every live process the
 * caller may see (profd's answer for the caller, else the caller's own
 * segments) since its start, so every counter only grows.
 *
 * Families (per process and zone; zones merged across call paths, and
 * across threads unless --threads):
 *	profd_zone_calls_total			counter
 *	profd_zone_self_seconds_total		counter, wall time
 *	profd_zone_seconds_total		counter, wall, outermost calls (as --flat)
 *	profd_zone_oncpu_seconds_total		counter, CPU time, outermost calls
 *	profd_zone_self_oncpu_seconds_total	counter, CPU time less the children's
 *	profd_zone_duration_seconds		histogram of call durations (wall)
 * The on-CPU families have no sample for a zone none of whose calls had
 * kernel facts (profd): unknown, not 0.
 *	profd_process_info			info: pid, comm, uid, clock, kernel
 *	profd_process_threads			gauge
 * Cardinality is bounded: at most --max-zones zones a process (the rest
 * are zone="[other]") and, with --threads, --max-threads threads (the rest
 * tid="other").
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>
#include "profctl.h"
#include "serve_live.h"

static const char usage_serve[] =
	"usage: profctl serve [--listen ADDR] [--threads] [--max-zones N]\n"
	"                     [--max-threads N] [--timeout TIME] [--all-users] [--no-daemon]\n"
	"\n"
	"      --listen ADDR    HOST:PORT to serve on (default 127.0.0.1:9464; [::1]:PORT,\n"
	"                       :PORT for every address, PORT 0 for any free one); under\n"
	"                       systemd socket activation, the socket it passes\n"
	"      --threads        a tid and thread label on every zone series\n"
	"      --max-zones N    zones per process, the rest as zone=\"[other]\" (200)\n"
	"      --max-threads N  with --threads, threads per process, the rest as\n"
	"                       tid=\"other\" (32)\n"
	"      --timeout TIME   a connection's whole request and answer, in whole seconds\n"
	"                       (\"30s\", \"2m\" or \"30\"); a slower one is closed, and the\n"
	"                       oldest when 64 are open (10s)\n"
	"      --all-users      every user's processes you may see (root: everyone's);\n"
	"                       whoever can connect learns their commands, pids, uids,\n"
	"                       zones and timings\n"
	PC_USAGE_NO_DAEMON
	"\n"
	"GET /metrics: OpenMetrics (or the Prometheus text format, as the scraper\n"
	"asks) of your own live processes (--all-users: every one you may see): per\n"
	"zone calls, self and total seconds (wall time) and, with profd, on-CPU and\n"
	"self on-CPU seconds (CPU time; no sample where no call had kernel facts) as\n"
	"counters and a duration histogram, per process an info metric.\n"
	"\n"
	"GET /: a live page of the same processes (/p/PID: one, every second its top\n"
	"table, flame graph and timeline), and the JSON it reads: /api/processes,\n"
	"/api/p/PID/report?window=W (report --format json), /api/p/PID/top?window=W\n"
	"(report --flat's rows and the window's length), /api/p/PID/trace?last=D&max=N\n"
	"(trace's JSON), /api/p/PID/save?window=W (save's file); W is start, reset or\n"
	"whole seconds (1s, 10s).  See profctl(1).\n";

/* serve's options, as every verb's: pc_parse_opts reads them all */
static const struct option serve_options[] = {
	PC_OPT_LISTEN,	  PC_OPT_THREADS,   PC_OPT_MAX_ZONES, PC_OPT_MAX_THREADS, PC_OPT_TIMEOUT,
	PC_OPT_ALL_USERS, PC_OPT_NO_DAEMON, PC_OPT_HELP,      PC_OPT_END,
};

#define NB PROF_HIST_BUCKETS

/* the histogram's upper bounds, seconds, then +Inf */
static const double les[] = { 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3,
			      1e-2, 3e-2, 0.1,	0.3,  1,    3,	  10 };
#define NLE (sizeof(les) / sizeof(les[0]))

/* one zone (of one thread, with --threads) */
struct mz {
	char name[PROF_NAME_MAX];
	__u32 tidx; /* thread slot: index into the thread list, or the "other" */
	__u64 calls, self_ns, total_ns, sum_ns;
	__u64 oncpu_ns, self_oncpu_ns; /* PROF_SNAP_UNKNOWN: no kernel facts */
	__u64 le[NLE]; /* calls at or below les[k], not cumulative yet */
};

struct mzs {
	struct mz *v;
	size_t n, cap;
};

static struct mz *mz_get(struct mzs *z, const char *name, __u32 tidx)
{
	struct mz *v;
	size_t i;

	/* zones a process has are few: a linear search per node is cheap
	 * next to the read (and bounded by max_zones before output) */
	for (i = z->n; i-- > 0;)
		if (z->v[i].tidx == tidx && !strcmp(z->v[i].name, name))
			return &z->v[i];
	v = prof_grow(z->v, z->n, &z->cap, sizeof(*v), 64);
	if (!v)
		return NULL;
	z->v = v;
	memset(&z->v[z->n], 0, sizeof(z->v[0]));
	z->v[z->n].oncpu_ns = z->v[z->n].self_oncpu_ns = PROF_SNAP_UNKNOWN;
	snprintf(z->v[z->n].name, sizeof(z->v[0].name), "%s", name);
	z->v[z->n].tidx = tidx;
	return &z->v[z->n++];
}

/* oncpu: t's prof_snap_oncpu */
static void mz_add(const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i,
		   const __u64 *oncpu, struct mz *m)
{
	const struct prof_snap_node *n = &t->nodes[i];
	const __u32 *h = prof_snap_hist(s, n);
	__u32 k;

	m->calls += n->calls;
	m->self_ns += prof_snap_ns(s, prof_snap_self(n));
	/* the histogram's sum is every call's duration, recursive ones too */
	m->sum_ns += prof_snap_ns(s, n->ticks);
	m->self_oncpu_ns = prof_add_known(m->self_oncpu_ns, prof_snap_self_oncpu(t, oncpu, i));
	if (!(n->flags & PROF_SNAP_F_RECURSIVE)) {
		m->total_ns += prof_snap_ns(s, n->ticks);
		m->oncpu_ns = prof_add_known(m->oncpu_ns, oncpu[i]);
	}
	for (k = 0; h && k < n->hist_n; k++) {
		__u32 b = n->hist_lo + k;
		double top;
		size_t l;

		if (!h[k] || b + 1 >= NB)
			continue;
		/* a bucket counts under the first bound at or above its top */
		top = (double)prof_snap_ns(s, prof_hist_lo(b + 1)) / 1e9;
		for (l = 0; l < NLE && les[l] < top; l++)
			;
		if (l < NLE)
			m->le[l] += h[k];
	}
}

static int cmp_self(const void *a, const void *b)
{
	const struct mz *x = a, *y = b;

	if (x->self_ns != y->self_ns)
		return x->self_ns < y->self_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void put_labels(FILE *f, const struct prof_snapshot *s, const struct mz *m,
		       const struct pc_serve_opts *o, const char *tid, const char *tname)
{
	fprintf(f, "{pid=\"%u\",comm=\"", s->pid);
	pc_om_label(f, s->comm);
	fputs("\",zone=\"", f);
	pc_om_label(f, m->name);
	fputc('"', f);
	if (o->threads) {
		fprintf(f, ",tid=\"%s\",thread=\"", tid);
		pc_om_label(f, tname);
		fputc('"', f);
	}
}

struct fam {
	const char *name, *type, *help, *unit;
};

static const struct fam fams[] = {
	{ "profd_zone_calls", "counter", "Calls of a zone, since the process started.", NULL },
	{ "profd_zone_self_seconds", "counter",
	  "Wall time in a zone outside the zones it calls, since the process started.",
	  "seconds" },
	{ "profd_zone_seconds", "counter",
	  "Wall time in a zone, its outermost calls (a recursive zone counts once).", "seconds" },
	{ "profd_zone_duration_seconds", "histogram",
	  "Durations (wall) of a zone's calls (from log-linear slab buckets, within 19%).",
	  "seconds" },
	{ "profd_zone_oncpu_seconds", "counter",
	  "CPU time of a zone's outermost calls (profd; no sample without kernel facts).",
	  "seconds" },
	{ "profd_zone_self_oncpu_seconds", "counter",
	  "CPU time in a zone outside the zones it calls (profd; no sample without kernel "
	  "facts).",
	  "seconds" },
};
#define NFAMS (sizeof(fams) / sizeof(fams[0]))

/* one process's zone series, every family in turn */
static void put_process(FILE *f, const struct prof_snapshot *s, struct mzs *z,
			const struct pc_serve_opts *o, bool om, int fam, char (*tids)[16],
			char (*tnames)[PROF_THREAD_NAME_MAX])
{
	size_t i, l;

	for (i = 0; i < z->n; i++) {
		const struct mz *m = &z->v[i];
		const char *tid = o->threads ? tids[m->tidx] : "";
		const char *tn = o->threads ? tnames[m->tidx] : "";
		__u64 cum = 0;

		switch (fam) {
		case 0:
			fputs("profd_zone_calls_total", f);
			put_labels(f, s, m, o, tid, tn);
			fprintf(f, "} %llu\n", (unsigned long long)m->calls);
			break;
		case 1:
			fputs("profd_zone_self_seconds_total", f);
			put_labels(f, s, m, o, tid, tn);
			fprintf(f, "} %.9f\n", (double)m->self_ns / 1e9);
			break;
		case 2:
			fputs("profd_zone_seconds_total", f);
			put_labels(f, s, m, o, tid, tn);
			fprintf(f, "} %.9f\n", (double)m->total_ns / 1e9);
			break;
		case 3:
			for (l = 0; l < NLE; l++) {
				cum += m->le[l];
				/* a histogram's buckets never exceed its count */
				if (cum > m->calls)
					cum = m->calls;
				fputs("profd_zone_duration_seconds_bucket", f);
				put_labels(f, s, m, o, tid, tn);
				fprintf(f, ",le=\"%g\"} %llu\n", les[l], (unsigned long long)cum);
			}
			fputs("profd_zone_duration_seconds_bucket", f);
			put_labels(f, s, m, o, tid, tn);
			fprintf(f, ",le=\"+Inf\"} %llu\n", (unsigned long long)m->calls);
			fputs("profd_zone_duration_seconds_count", f);
			put_labels(f, s, m, o, tid, tn);
			fprintf(f, "} %llu\n", (unsigned long long)m->calls);
			fputs("profd_zone_duration_seconds_sum", f);
			put_labels(f, s, m, o, tid, tn);
			fprintf(f, "} %.9f\n", (double)m->sum_ns / 1e9);
			break;
		case 4:
		case 5: {
			__u64 v = fam == 4 ? m->oncpu_ns : m->self_oncpu_ns;

			/* unknown: no sample, never 0 */
			if (v == PROF_SNAP_UNKNOWN)
				break;
			fputs(fams[fam].name, f);
			fputs("_total", f);
			put_labels(f, s, m, o, tid, tn);
			fprintf(f, "} %.9f\n", (double)v / 1e9);
			break;
		}
		}
	}
	(void)om;
}

struct proc_zones {
	struct prof_snapshot *s;
	struct prof_snap_annot *annot; /* its plots and locks, or NULL */
	struct mzs z;
	char (*tids)[16];
	char (*tnames)[PROF_THREAD_NAME_MAX];
};

/* s's zones, bounded by the options */
static int collect(struct proc_zones *p, const struct pc_serve_opts *o)
{
	const struct prof_snapshot *s = p->s;
	__u32 nt = o->threads ? (s->nthreads < o->max_threads ? s->nthreads : o->max_threads) : 0;
	__u32 i, j, slots = nt + 1, *kept, cap = 0;
	__u64 *oncpu = NULL;
	struct mz *other;
	size_t k, keep = 0;

	p->tids = calloc(slots, sizeof(*p->tids));
	p->tnames = calloc(slots, sizeof(*p->tnames));
	if (!p->tids || !p->tnames)
		return -ENOMEM;
	for (i = 0; i < nt; i++) {
		snprintf(p->tids[i], sizeof(p->tids[i]), "%u", s->threads[i].tid);
		prof_snap_thread_label(&s->threads[i], p->tnames[i], sizeof(p->tnames[i]));
	}
	snprintf(p->tids[nt], sizeof(p->tids[nt]), "other");
	snprintf(p->tnames[nt], sizeof(p->tnames[nt]), "[other]");
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];
		__u32 tidx = !o->threads ? 0 : i < nt ? i : nt;

		if (prof_snap_oncpu_room(s, t, &oncpu, &cap)) {
			free(oncpu);
			return -ENOMEM;
		}
		for (j = 1; j < t->nnodes; j++) {
			struct mz *m;

			if (prof_snap_node_hidden(t, j) || !t->nodes[j].calls)
				continue;
			m = mz_get(&p->z, prof_snap_node_name(s, &t->nodes[j]), tidx);
			if (!m) {
				free(oncpu);
				return -ENOMEM;
			}
			mz_add(s, t, j, oncpu, m);
		}
	}
	free(oncpu);
	/* the zones with most self time stay, max_zones a thread slot; the
	 * rest are one "[other]" a slot (its total a sum of the zones'
	 * outermost totals: an upper bound) */
	/* a process with no finished call yet has no zones (and v is NULL) */
	if (p->z.n > 1)
		qsort(p->z.v, p->z.n, sizeof(*p->z.v), cmp_self);
	kept = calloc(slots, sizeof(*kept));
	other = calloc(slots, sizeof(*other));
	if (!kept || !other) {
		free(kept);
		free(other);
		return -ENOMEM;
	}
	for (k = 0; k < p->z.n; k++) {
		const struct mz *x = &p->z.v[k];
		struct mz *m = &other[x->tidx];
		size_t l;

		if (kept[x->tidx] < o->max_zones) {
			p->z.v[keep++] = *x;
			kept[x->tidx]++;
			continue;
		}
		if (!m->name[0])
			m->oncpu_ns = m->self_oncpu_ns = PROF_SNAP_UNKNOWN;
		snprintf(m->name, sizeof(m->name), "[other]");
		m->tidx = x->tidx;
		m->oncpu_ns = prof_add_known(m->oncpu_ns, x->oncpu_ns);
		m->self_oncpu_ns = prof_add_known(m->self_oncpu_ns, x->self_oncpu_ns);
		m->calls += x->calls;
		m->self_ns += x->self_ns;
		m->total_ns += x->total_ns;
		m->sum_ns += x->sum_ns;
		for (l = 0; l < NLE; l++)
			m->le[l] += x->le[l];
	}
	/* keep <= k: the others go where the merged zones were */
	for (i = 0; i < slots; i++)
		if (other[i].calls)
			p->z.v[keep++] = other[i];
	p->z.n = keep;
	free(kept);
	free(other);
	return 0;
}

/* what the last scrape could not read: said when it changes */
static size_t last_unread;

/* every family of every live process the caller may see */
int pc_metrics(FILE *f, struct pc_src *src, const struct pc_serve_opts *o, bool om)
{
	struct pc_proc *procs = NULL;
	struct proc_zones *pz = NULL;
	size_t np = 0, n = 0, i, unread = 0;
	int fam, err;

	pc_src_pass(src, true);
	err = pc_src_list(src, &procs, &np);
	if (err) {
		pc_src_pass(src, false);
		return err;
	}
	pz = calloc(np ? np : 1, sizeof(*pz));
	if (!pz) {
		pc_src_pass(src, false);
		free(procs);
		return -ENOMEM;
	}
	for (i = 0; i < np; i++) {
		if (!pc_serve_may_show(&procs[i], o))
			continue;
		/* a process that ends between list and read is not an error;
		 * one that cannot be read (another version, corrupt) is
		 * counted, said by the server when the count changes */
		if (pc_src_snapshot(src, procs[i].pid, PROFD_SNAP_START, 0, &pz[n].s)) {
			unread++;
			continue;
		}
		pz[n].annot = prof_snap_annot_sum(pz[n].s);
		pz[n].s->annot = pz[n].annot;
		err = collect(&pz[n], o);
		n++;
		if (err)
			goto cleanup;
	}
	/* the text format has no info type: a gauge of 1, by convention */
	fprintf(f, "# TYPE profd_process%s %s\n", om ? "" : "_info", om ? "info" : "gauge");
	fprintf(f, "# HELP profd_process%s A profiled process: its command, owner and clock.\n",
		om ? "" : "_info");
	for (i = 0; i < n; i++) {
		const struct prof_snapshot *s = pz[i].s;

		fprintf(f, "profd_process_info{pid=\"%u\",comm=\"", s->pid);
		pc_om_label(f, s->comm);
		fprintf(f, "\",uid=\"%u\",clock=\"%s\",kernel=\"%s\"} 1\n", s->uid,
			s->clock == PROF_CLOCK_TSC ? "tsc" : "monotonic",
			prof_snap_any_sched(s) ? "on" : "off");
	}
	fputs("# TYPE profd_process_threads gauge\n", f);
	fputs("# HELP profd_process_threads Threads a process has profiled, alive or exited.\n", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "profd_process_threads{pid=\"%u\",comm=\"", pz[i].s->pid);
		pc_om_label(f, pz[i].s->comm);
		fprintf(f, "\"} %u\n", pz[i].s->nthreads);
	}
	for (fam = 0; fam < (int)NFAMS; fam++) {
		const struct fam *m = &fams[fam];

		/* a counter's family is named without _total in OpenMetrics */
		if (om || fam == 3)
			fprintf(f, "# TYPE %s %s\n", m->name, m->type);
		else
			fprintf(f, "# TYPE %s_total %s\n", m->name, m->type);
		if (om && m->unit)
			fprintf(f, "# UNIT %s %s\n", m->name, m->unit);
		fprintf(f, "# HELP %s%s %s\n", m->name, om || fam == 3 ? "" : "_total", m->help);
		for (i = 0; i < n; i++)
			put_process(f, pz[i].s, &pz[i].z, o, om, fam, pz[i].tids, pz[i].tnames);
	}
	{
		const struct prof_snapshot **ss = calloc(n ? n : 1, sizeof(*ss));

		for (i = 0; ss && i < n; i++)
			ss[i] = pz[i].s;
		if (ss)
			pc_annot_metrics(f, ss, n, om);
		free(ss);
	}
	fputs("# TYPE profd_exporter_unread_processes gauge\n", f);
	fputs("# HELP profd_exporter_unread_processes Live processes this scrape could not read.\n",
	      f);
	fprintf(f, "profd_exporter_unread_processes %zu\n", unread);
	if (om)
		fputs("# EOF\n", f);
	err = ferror(f) ? -EIO : 0;
	if (!err && unread != last_unread)
		fprintf(stderr, "profctl: serve: %zu live process%s could not be read%s\n", unread,
			unread == 1 ? "" : "es",
			unread ? " (profctl report --pid says why)" : " now");
	if (!err)
		last_unread = unread;
cleanup:
	for (i = 0; i < np; i++) {
		free(pz[i].z.v);
		free(pz[i].tids);
		free(pz[i].tnames);
		prof_snapshot__destroy(pz[i].s);
		prof_snap_annot_free(pz[i].annot);
	}
	free(pz);
	free(procs);
	pc_src_pass(src, false);
	return err;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *type,
			     char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int code, const char *text)
{
	char *body = strdup(text);

	if (!body)
		return MHD_NO;
	return reply(c, code, "text/plain; charset=utf-8", body, strlen(body));
}

/* the live page and its JSON (serve_live.c), else 404 */
static enum MHD_Result live(struct MHD_Connection *c, const struct pc_serve_opts *o,
			    const char *url)
{
	struct pc_live_reply r;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char disp[sizeof(r.filename) + 32];
	int found = pc_live_route(url, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "window"),
				  MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "last"),
				  MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "max"), o, &r);

	if (found < 0)
		return MHD_NO;
	if (!found)
		return reply_text(c, MHD_HTTP_NOT_FOUND,
				  "not found: the metrics are at /metrics, the live page at /\n");
	resp = MHD_create_response_from_buffer(r.len, r.body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(r.body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.type);
	/* every answer is of now: no cache may keep it */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (r.filename[0]) {
		snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", r.filename);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disp);
	}
	ret = MHD_queue_response(c, r.code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **req)
{
	const struct pc_serve_opts *o = cls;
	const char *accept;
	struct pc_src src;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	bool om;
	int err;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)req;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
	if (strcmp(url, "/metrics"))
		return live(c, o, url);
	/* OpenMetrics to whoever asks for it (Prometheus does), else the
	 * Prometheus text format */
	accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	om = accept && strstr(accept, "application/openmetrics-text");
	f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	/* per scrape: a profd restarted meanwhile is found again */
	pc_src_open(&src, o->no_daemon);
	src.read_flags = 0;
	pc_warn_quiet = true;
	err = pc_metrics(f, &src, o, om);
	pc_warn_quiet = false;
	pc_src_close(&src);
	if (fclose(f) || err) {
		free(body);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "profctl serve: failed to read the profiles\n");
	}
	return reply(c, MHD_HTTP_OK,
		     om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
			: "text/plain; version=0.0.4; charset=utf-8",
		     body, len);
}

/*
 * Every connection has a deadline for its whole request and answer (one
 * of each: the answer, queued at the handler's first call, closes it):
 * MHD's own timeout is an idle one, reset by each byte, so clients sending
 * a header line every few seconds would hold their places forever.  A
 * reaper thread shuts a connection down at its deadline (MHD then sees it
 * end and closes it), and when SERVE_CONNS are open a new one shuts the
 * oldest: a few slow clients cannot keep a scraper out.
 */
#define SERVE_CONNS 64

struct conn {
	int fd;
	__u64 t0;
	bool used, shut;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct conn c[2 * SERVE_CONNS]; /* the open, and the shut not yet closed */
	__u64 timeout_ns;
	bool stop;
} conns = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* under the lock: shut c down (its fd is open until MHD's CLOSED below) */
static void conn_shut(struct conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->shut = true;
}

/* the oldest connection not yet shut, or NULL; *open: how many there are */
static struct conn *conn_oldest(size_t *open)
{
	struct conn *old = NULL;
	size_t i;

	*open = 0;
	for (i = 0; i < 2 * SERVE_CONNS; i++) {
		struct conn *c = &conns.c[i];

		if (!c->used || c->shut)
			continue;
		++*open;
		if (!old || c->t0 < old->t0)
			old = c;
	}
	return old;
}

static void conn_notify(void *cls, struct MHD_Connection *mc, void **ctx,
			enum MHD_ConnectionNotificationCode toe)
{
	const union MHD_ConnectionInfo *ci;
	struct conn *c = NULL, *old;
	size_t i, open;

	(void)cls;
	pthread_mutex_lock(&conns.lock);
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		c = *ctx;
		if (c)
			c->used = false;
		*ctx = NULL;
		pthread_mutex_unlock(&conns.lock);
		return;
	}
	ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	for (i = 0; i < 2 * SERVE_CONNS && !c; i++)
		if (!conns.c[i].used)
			c = &conns.c[i];
	old = conn_oldest(&open);
	if (old && open >= SERVE_CONNS)
		conn_shut(old);
	if (c && ci) {
		*c = (struct conn){ .fd = ci->connect_fd, .t0 = pc_now_ns(), .used = true };
		*ctx = c;
		pthread_cond_signal(&conns.wake);
	} else if (ci) {
		/* every place is a connection shut but not yet closed */
		shutdown(ci->connect_fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&conns.lock);
}

static void *conn_reaper(void *arg)
{
	struct conn *old;
	size_t open;

	(void)arg;
	pthread_mutex_lock(&conns.lock);
	while (!conns.stop) {
		__u64 now = pc_now_ns(), end;
		struct timespec ts;

		old = conn_oldest(&open);
		if (!old) {
			pthread_cond_wait(&conns.wake, &conns.lock);
			continue;
		}
		end = old->t0 + conns.timeout_ns;
		if (end <= now) {
			conn_shut(old);
			continue;
		}
		ts.tv_sec = (time_t)(end / 1000000000ull);
		ts.tv_nsec = (long)(end % 1000000000ull);
		pthread_cond_timedwait(&conns.wake, &conns.lock, &ts);
	}
	pthread_mutex_unlock(&conns.lock);
	return NULL;
}

/* the reaper's clock is pc_now_ns's */
static int conns_start(unsigned int timeout_s, pthread_t *t)
{
	pthread_condattr_t ca;
	int err;

	conns.timeout_ns = (__u64)timeout_s * 1000000000ull;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&conns.wake, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(t, NULL, conn_reaper, NULL);
	return -err;
}

static void conns_stop(pthread_t t)
{
	pthread_mutex_lock(&conns.lock);
	conns.stop = true;
	pthread_cond_signal(&conns.wake);
	pthread_mutex_unlock(&conns.lock);
	pthread_join(t, NULL);
}

/* sd_listen_fds(3)'s protocol: fd 3 if systemd passed one to us */
static int activated_fd(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");

	if (!pid || !fds || atol(pid) != (long)getpid() || atoi(fds) < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return 3;
}

/* HOST:PORT, [V6]:PORT, :PORT; a listening socket or -errno, said */
static int listen_on(const char *addr)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai = NULL;
	char host[256], *port;
	int fd, one = 1, rc, err;

	snprintf(host, sizeof(host), "%s", addr);
	port = strrchr(host, ':');
	if (!port) {
		pc_warnx("serve: --listen HOST:PORT, not '%s'", addr);
		return -EINVAL;
	}
	*port++ = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (rc) {
		pc_warnx("serve: %s: %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		err = -errno;
		pc_warnx("serve: failed to listen on %s: %s", addr, strerror(-err));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return err;
	}
	freeaddrinfo(ai);
	return fd;
}

/* "http://HOST:PORT/metrics" of a bound socket */
static void say_where(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
		fprintf(stderr, "profctl: serving http://%s:%u/metrics\n", host, port);
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
		fprintf(stderr, "profctl: serving http://[%s]:%u/metrics\n", host, port);
	}
}

int pc_serve_parse(int argc, char **argv, struct pc_serve_opts *so, const char **listen_addr)
{
	struct pc_opts o;
	int err;

	*so = (struct pc_serve_opts){ .max_zones = 200, .max_threads = 32, .timeout_s = 10 };
	*listen_addr = "127.0.0.1:9464";
	err = pc_parse_opts(argc, argv, usage_serve, serve_options, &o);
	if (err)
		return err;
	so->no_daemon = o.no_daemon;
	so->threads = o.per_thread;
	so->all_users = o.all_users;
	if (o.max_zones)
		so->max_zones = o.max_zones;
	if (o.max_threads)
		so->max_threads = o.max_threads;
	if (o.timeout_s)
		so->timeout_s = o.timeout_s;
	if (o.listen)
		*listen_addr = o.listen;
	return 0;
}

int pc_cmd_serve(int argc, char **argv)
{
	struct pc_serve_opts so;
	pthread_t reaper;
	struct MHD_Daemon *d;
	const char *listen_addr;
	sigset_t set;
	int fd, sig, err;

	err = pc_serve_parse(argc, argv, &so, &listen_addr);
	if (err)
		return err < 0 ? 0 : err;
	fd = activated_fd();
	if (fd < 0)
		fd = listen_on(listen_addr);
	if (fd < 0)
		return 1;
	/* the signals end the wait below; the server's thread never sees them */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (so.all_users)
		pc_warnx("serve: --all-users: whoever can connect to it learns every user's "
			 "profiled commands, pids, uids, zones and timings");
	err = conns_start(so.timeout_s, &reaper);
	if (err) {
		pc_warnx("serve: failed to start: %s", strerror(-err));
		close(fd);
		return 1;
	}
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
			     handle, &so, MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_TIMEOUT, so.timeout_s,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)(2 * SERVE_CONNS),
			     MHD_OPTION_NOTIFY_CONNECTION, conn_notify, NULL, MHD_OPTION_END);
	if (!d) {
		pc_warnx("serve: failed to start the HTTP server");
		conns_stop(reaper);
		close(fd);
		return 1;
	}
	say_where(fd);
	if (sigwait(&set, &sig))
		sig = 0;
	MHD_stop_daemon(d);
	pc_live_close();
	conns_stop(reaper);
	close(fd);
	return 0;
}
