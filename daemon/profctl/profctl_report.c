// SPDX-License-Identifier: MIT
/*
 * profctl_report.c - profctl report: the snapshots chosen (live, since a reset or the
 * start, the last N seconds, a saved file) and handed to a renderer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "profctl.h"
#include "profctl_samples.h"
#include "prof.h"
#ifndef PROFCTL_NO_CLIENT
#include "client.h"
#endif

#define EXIT_USAGE 2

static const char usage_report[] =
	"usage: profctl report [--pid P] [--tid T] [--since-reset | --since-start | --last 10s]\n"
	"                      [--sort self|total|calls|max|p99|oncpu|self-oncpu]\n"
	"                      [--flat | --callers ZONE | --inside ZONE] [--merge-threads]\n"
	"                      [--format text|json|csv|folded|html|pprof]\n"
	"                      [--weight wall|oncpu] [-o FILE]\n"
	"                      [--rows N] [--color auto|always|never] [--input FILE]\n"
	"                      [--compensate] [--no-daemon]\n"
	"\n"
	"  -p, --pid P          one process (default: every live process of yours)\n"
	"  -t, --tid T          one thread\n"
	PC_USAGE_SINCE
	"      --last DURATION  the last DURATION (10s, 2m; whole seconds) of profd's\n"
	"                       history; without profd, measure the next DURATION instead\n"
	"  -s, --sort KEY       order siblings and rows by self|total|calls|max|p99 (wall\n"
	"                       time) or oncpu|self-oncpu (CPU time, profd; unknown last)\n"
	"                       (not p99 with --flat: flat rows have no percentiles;\n"
	"                       not with --callers: its rows are by time)\n"
	"      --flat           zones merged across threads and call paths\n"
	"      --callers ZONE   ZONE's parents (summing to it) and children; sites that\n"
	"                       share the name get a section each, \"build (a.cc:12)\":\n"
	"                       --callers 'build (a.cc:12)' selects that one\n"
	"      --inside ZONE    the functions and lines profd sampled while ZONE was\n"
	"                       open (self: the innermost frame; incl: anywhere on\n"
	"                       the stack); '[outside zones]' for the rest (text,\n"
	"                       json, csv; needs profd --sample-hz, on by default)\n"
	"      --merge-threads  merge the threads of a process into one tree\n"
	"  -f, --format FMT     text (default), json, csv, folded, html, pprof (folded,\n"
	"                       html and pprof are the tree: no --flat or --callers;\n"
	"                       pprof is gzipped profile.proto for go tool pprof)\n"
	"      --weight W       folded stacks weigh self wall time (wall, the default)\n"
	"                       or self on-CPU time (oncpu: stacks without kernel facts\n"
	"                       left out, counted on stderr)\n"
	PC_USAGE_OUTPUT
	"      --rows N         at most N rows in the --flat list\n"
	PC_USAGE_COLOR
	"      --input FILE     read a profile saved by `profctl save` or PROF_SAVE (or a\n"
	"                       JSON report, or a segment image) instead of a live process\n"
	"                       (no --pid or --last)\n"
	"      --compensate     take each zone's estimated cost (measured at the\n"
	"                       program's start) out of its parent's self time and\n"
	"                       its own total (text and json)\n"
	PC_USAGE_NO_DAEMON;

static const struct option report_options[] = {
	PC_OPT_PID,	   PC_OPT_TID,	   PC_OPT_SINCE,	 PC_OPT_LAST,	PC_OPT_SORT,
	PC_OPT_FLAT,	   PC_OPT_CALLERS, PC_OPT_MERGE_THREADS, PC_OPT_FORMAT, PC_OPT_WEIGHT,
	PC_OPT_OUTPUT,	   PC_OPT_ROWS,	   PC_OPT_COLOR,	 PC_OPT_INPUT,	PC_OPT_NO_DAEMON,
	PC_OPT_COMPENSATE, PC_OPT_INSIDE,  PC_OPT_HELP,		 PC_OPT_END,
};

struct owned {
	struct prof_snapshot *raw;    /* prof_snapshot__destroy */
	struct prof_snapshot *view;   /* free() */
	struct prof_snapshot *merged; /* pc_snap_free */
	struct prof_snap_annot *annot; /* prof_snap_annot_free */
	char state[PC_SAMPLES_STATE_MAX]; /* its samples_state */
};

static void owned_free(struct owned *w)
{
	prof_snapshot__destroy(w->raw);
	free(w->view);
	pc_snap_free(w->merged);
	prof_snap_annot_free(w->annot);
}

static int render(FILE *f, struct prof_snapshot **snaps, size_t n, const struct pc_opts *o)
{
	size_t i, found = 0;
	int err = 0;

	switch (o->format) {
	case PC_FMT_JSON:
		if (o->flat || o->callers)
			return pc_render_json_view(f, snaps, n, o);
		return pc_render_json_tree(f, snaps, n, o->samples_src);
	case PC_FMT_CSV:
		return pc_render_csv(f, snaps, n, o);
	case PC_FMT_FOLDED:
		return pc_render_folded(f, snaps, n, o);
	case PC_FMT_HTML:
		return pc_render_html(f, snaps, n, o);
	case PC_FMT_PPROF:
		return pc_render_pprof(f, snaps, n, o);
	}
	for (i = 0; i < n && (!err || err == -ENOENT); i++) {
		if (i && found)
			fputc('\n', f);
		if (o->callers)
			err = pc_render_callers(f, snaps[i], o);
		else if (o->flat)
			err = pc_render_flat(f, snaps[i], o);
		else
			err = pc_render_tree(f, snaps[i], o);
		if (!err && !o->callers && !o->flat)
			prof_report_locks(f, snaps[i]);
		if (!err)
			found++;
	}
	if (err == -ENOENT && found)
		err = 0;
	return err;
}

/*
 * What a view reads of each segment: no histograms where no percentile is
 * shown, and lazily (one thread's nodes at a time: every view goes thread
 * by thread) so a big process is never copied whole, the next thread
 * loaded on another CPU while this one is rendered.  --threads (and html's
 * merged view) adds the threads' histograms up and the JSON tree writes
 * them: their loads copy them.
 */
static unsigned int report_read_flags(const struct pc_opts *o)
{
	bool data = o->format == PC_FMT_TEXT || o->format == PC_FMT_CSV || o->format == PC_FMT_JSON;
	unsigned int flags = 0;

	/* the flat list, the callers view and folded stacks have no
	 * percentile (html is always the tree) */
	if (o->format == PC_FMT_FOLDED || o->format == PC_FMT_PPROF ||
	    (data && (o->flat || o->callers)))
		flags |= PROF_READ_NO_HIST;
	flags |= PROF_READ_LAZY;
	/* html has a merged view of each process beside its threads; the JSON
	 * tree carries the histograms themselves (--input reads them) */
	if (o->threads || o->format == PC_FMT_HTML ||
	    (o->format == PC_FMT_JSON && !o->flat && !o->callers))
		flags |= PROF_READ_LAZY_HIST;
	/* compensation rewrites every thread's nodes: read them all at once */
	if (o->compensate)
		flags &= ~(PROF_READ_LAZY | PROF_READ_LAZY_HIST);
	return flags;
}

/* 1 if a segment of yours is pid's live process's, 0 if all are of
 * processes that exited, -ENOENT if there is none */
static int direct_alive(pid_t pid)
{
	struct prof_seg_ent *ents = NULL;
	size_t ne = 0, i;
	int ret = -ENOENT;

	if (prof_seg_list(getuid(), &ents, &ne))
		return -ENOENT;
	for (i = 0; i < ne; i++)
		if ((pid_t)ents[i].pid == pid)
			ret = ret == 1 || ents[i].alive ? 1 : 0;
	free(ents);
	return ret;
}

/*
 * What report refuses to combine, one row each: when it holds, the reason
 * (after "report: ") and exit 2.  Each row's example is a command line that
 * meets it, which tests/test_profctl.c runs to see exactly that reason.
 */
static bool inside_view(const struct pc_opts *o)
{
	return o->inside && (o->flat || o->callers || o->format == PC_FMT_FOLDED ||
			     o->format == PC_FMT_HTML || o->format == PC_FMT_PPROF);
}

static bool flat_callers(const struct pc_opts *o)
{
	return o->flat && o->callers;
}

static bool folded_view(const struct pc_opts *o)
{
	return o->format == PC_FMT_FOLDED && (o->flat || o->callers);
}

static bool pprof_view(const struct pc_opts *o)
{
	return o->format == PC_FMT_PPROF && (o->flat || o->callers);
}

static bool pprof_tty(const struct pc_opts *o)
{
	return o->format == PC_FMT_PPROF && (!o->out || !strcmp(o->out, "-")) && isatty(1);
}

static bool html_view(const struct pc_opts *o)
{
	return o->format == PC_FMT_HTML && (o->flat || o->callers);
}

/* flat rows merge nodes: their histograms are not added up */
static bool weight_not_folded(const struct pc_opts *o)
{
	return o->weight != PC_WEIGHT_WALL && o->format != PC_FMT_FOLDED;
}

static bool flat_p99(const struct pc_opts *o)
{
	return o->flat && o->sort == PROF_SORT_P99;
}

static bool rows_not_flat(const struct pc_opts *o)
{
	return o->rows && !o->flat;
}

/* its rows are the time spent on behalf of the zone, biggest first */
static bool callers_sort(const struct pc_opts *o)
{
	return o->callers && o->sort_set;
}

/* the other formats carry no mark that their times are compensated */
static bool compensate_format(const struct pc_opts *o)
{
	return o->compensate && o->format != PC_FMT_TEXT && o->format != PC_FMT_JSON;
}

/* an image is one process as it was: no process to choose, no history */
static bool input_pid(const struct pc_opts *o)
{
	return o->input && o->pid;
}

static bool input_last(const struct pc_opts *o)
{
	return o->input && !o->pid && o->mode == PROFD_SNAP_LAST;
}

const struct pc_conflict pc_report_conflicts[] = {
	{ flat_callers, "--flat and --callers cannot be combined", "--flat --callers z" },
	{ inside_view, "--inside is a view of its own: no --flat or --callers, and text, json "
		       "or csv",
	  "--inside z --flat" },
	{ folded_view, "--format folded is the call stacks: it has no --flat or --callers view",
	  "--format folded --flat" },
	{ pprof_view, "--format pprof is the call trees: it has no --flat or --callers view",
	  "--format pprof --callers z" },
	{ pprof_tty, "--format pprof is gzipped binary: -o FILE, or a pipe", NULL },
	{ html_view, "--format html is the call tree: it has no --flat or --callers view",
	  "--format html --flat" },
	{ flat_p99,
	  "--flat rows have no percentiles: sort them by self, total, calls, max, oncpu or "
	  "self-oncpu",
	  "--flat --sort p99" },
	{ weight_not_folded, "--weight is what a --format folded stack weighs", "--weight oncpu" },
	{ rows_not_flat, "--rows limits the --flat list", "--rows 3" },
	{ callers_sort, "--callers rows are ordered by their time: no --sort",
	  "--callers z --sort self" },
	{ compensate_format, "--compensate is for --format text and json",
	  "--compensate --format csv" },
	{ input_pid, "--input reads a saved image: no --pid", "--input f --pid 1" },
	{ input_last, "--input reads a saved image: no --last", "--input f --last 5s" },
};
const size_t pc_report_nconflicts = sizeof(pc_report_conflicts) / sizeof(pc_report_conflicts[0]);

/*
 * What report shows of one process's snapshot w->raw: compensated, one
 * thread of it (--tid), its threads merged (--merge-threads).  0 with
 * *out, 1 when the process has no such thread (skipped, w freed), -1 on
 * an error (said)
 */
static int report_view(const struct pc_opts *o, struct owned *w, struct prof_snapshot **out)
{
	struct prof_snapshot *s = w->raw;

	if (o->compensate && prof_snapshot__compensate(s) == -ENODATA)
		pc_warnx("pid %u: no zone cost was measured (a profile from before it was): "
			 "not compensated",
			 s->pid);
	if (o->tid) {
		w->view = pc_view_thread(s, o->tid);
		if (!w->view) {
			owned_free(w);
			memset(w, 0, sizeof(*w));
			return 1;
		}
		s = w->view;
	}
	if (o->threads) {
		w->merged = pc_merge_threads(s);
		if (!w->merged) {
			/* the caller frees w with the others */
			pc_warnx("pid %u: failed to merge threads: %s", s->pid, strerror(errno));
			return -1;
		}
		s = w->merged;
	}
	*out = s;
	return 0;
}

/* what the tree's views tell beside the counts: the plots and locks of the
 * snapshot's window, and whether stacks are sampled or why not */
static void report_told(const struct pc_opts *o, const struct pc_src *src, struct owned *w,
			struct prof_snapshot *s)
{
	if (!o->flat && !o->callers && (o->format == PC_FMT_TEXT || o->format == PC_FMT_JSON)) {
		w->annot = prof_snap_annot_sum(s);
		s->annot = w->annot;
	}
	/* the ones with a title: text, JSON, html */
	if (!o->flat && !o->callers &&
	    (o->format == PC_FMT_TEXT || o->format == PC_FMT_JSON || o->format == PC_FMT_HTML))
		s->samples_state = pc_samples_state_of(src, (pid_t)s->pid, w->state,
						       sizeof(w->state));
}

/* report --inside ZONE: profd's samples of each process, no snapshot */
static int report_inside(const struct pc_src *src, const struct pc_proc *procs, size_t np,
			 const struct pc_opts *o)
{
	FILE *f;
	int err = 0, ret = 1;
	size_t i;

	pid_t pid = 0;

	/* a file's samples come with its image (and its pid) */
	if (o->input) {
		struct prof_snapshot *img;

		if (pc_read_image(o->input, PROF_READ_NO_HIST, &img))
			return 1;
		pid = (pid_t)img->pid;
		prof_snapshot__destroy(img);
	}
	f = pc_open_out(o);
	if (!f)
		return 1;
	for (i = 0; i < np && !err; i++) {
		struct pc_samples *s = pc_samples_get(src, o->input ? pid : procs[i].pid);

		if (!s) {
			err = -ENOMEM;
			break;
		}
		err = pc_render_inside(f, s, o->input ? pid : procs[i].pid, o->inside, o);
		pc_samples_free(s);
	}
	if (err)
		pc_warnx("failed to render the report: %s", strerror(-err));
	if (pc_end_out(f, o, err) == 0)
		ret = 0;
	return ret;
}

/* one process's profile: the file's (--input), the one measured directly
 * (measured: taken from there), or profd's or its segment's */
static int report_raw(const struct pc_opts *o, struct pc_src *src, pid_t pid,
		      struct prof_snapshot **measured, struct prof_snapshot **raw)
{
	if (o->input)
		return pc_read_image(o->input, report_read_flags(o), raw);
	if (measured) {
		*raw = *measured;
		*measured = NULL;
		return *raw ? 0 : -ESRCH;
	}
	return pc_src_snapshot(src, pid, o->mode, o->last_s, raw);
}

/* why there is nothing to report */
static void report_none_said(const struct pc_opts *o)
{
	if (o->tid)
		pc_warnx("tid %u: no such profiled thread%s", o->tid,
			 o->pid ? " in that process" : "");
	else
		pc_warnx("no profile could be read");
}

int pc_cmd_report(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src = { .fd = -1 };
	struct pc_proc *procs = NULL;
	struct owned *own = NULL;
	struct prof_snapshot **snaps = NULL, **measured = NULL;
	pid_t *pids = NULL; /* --last without profd: what is measured */
	size_t np = 0, n = 0, i;
	bool measure = false;
	char fallback[96], *trace_json = NULL;
	FILE *f = NULL;
	int err, ret = 1;

	err = pc_parse_opts(argc, argv, usage_report, report_options, &o);
	if (err)
		return err < 0 ? 0 : err;
	for (i = 0; i < pc_report_nconflicts; i++)
		if (pc_report_conflicts[i].when(&o)) {
			pc_warnx("report: %s", pc_report_conflicts[i].why);
			return EXIT_USAGE;
		}
	if (o.input) {
		np = 1;
		procs = calloc(1, sizeof(*procs));
		pc_samples_input();
	} else {
		snprintf(fallback, sizeof(fallback),
			 "no history: measuring the next %us of your own processes directly",
			 o.last_s);
		pc_src_open_said(&src, &o, o.mode == PROFD_SNAP_LAST ? fallback : NULL);
		src.read_flags = report_read_flags(&o);
		/* without profd's history, --last measures the next seconds */
		measure = o.mode == PROFD_SNAP_LAST && src.fd < 0;
		if (measure && o.pid && direct_alive(o.pid) == 0) {
			pc_warnx("pid %d has exited: nothing to measure, and --last needs profd's "
				 "history",
				 (int)o.pid);
			goto cleanup;
		}
		err = pc_src_targets(&src, o.pid, &procs, &np);
		if (err)
			goto cleanup;
	}
	if (o.inside) {
		ret = report_inside(&src, procs, np, &o);
		goto cleanup;
	}
	own = calloc(np ? np : 1, sizeof(*own));
	snaps = calloc(np ? np : 1, sizeof(*snaps));
	measured = calloc(np ? np : 1, sizeof(*measured));
	pids = calloc(np ? np : 1, sizeof(*pids));
	if (!own || !snaps || !measured || !pids || !procs) {
		pc_warnx("out of memory");
		goto cleanup;
	}
	if (measure) {
		for (i = 0; i < np; i++)
			pids[i] = (pid_t)procs[i].pid;
		err = pc_src_measure(pids, np, o.last_s, measured);
		if (err && o.pid)
			goto cleanup;
	}
	for (i = 0; i < np; i++) {
		struct owned *w = &own[n];
		struct prof_snapshot *s;

		err = report_raw(&o, &src, procs[i].pid, measure ? &measured[i] : NULL, &w->raw);
		if (err) {
			/* one process vanishing between list and read is not fatal */
			if (o.pid || o.input)
				goto cleanup;
			continue;
		}
		err = report_view(&o, w, &s);
		if (err < 0)
			goto cleanup;
		if (!err) {
			report_told(&o, &src, w, s);
			snaps[n++] = s;
		}
	}
	if (!n) {
		report_none_said(&o);
		goto cleanup;
	}
	/* html: the first process's timeline, from its live segment's rings */
	if (o.format == PC_FMT_HTML && !o.input &&
	    pc_trace_json(&src, (pid_t)snaps[0]->pid, o.tid, &trace_json) == 0)
		o.trace_json = trace_json;
	/* profd's samples (or the file's), in the nodes of JSON, folded, pprof */
	o.samples_src = &src;
	f = pc_open_out(&o);
	if (!f)
		goto cleanup;
	err = render(f, snaps, n, &o);
	if (err == -ENOENT && o.callers)
		pc_warnx("zone '%s' not found", o.callers);
	else if (err)
		pc_warnx("failed to render the report: %s", strerror(-err));
	if (pc_end_out(f, &o, err) == 0)
		ret = 0;
cleanup:
	free(trace_json);
	for (i = 0; own && i < np; i++)
		owned_free(&own[i]);
	for (i = 0; measured && i < np; i++)
		prof_snapshot__destroy(measured[i]);
	free(own);
	free(snaps);
	free(measured);
	free(pids);
	free(procs);
	pc_src_close(&src);
	return ret;
}
