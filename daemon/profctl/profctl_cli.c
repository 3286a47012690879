// SPDX-License-Identifier: MIT
/*
 * profctl_cli.c - profctl's verbs: list, report, reset, top, status, zones.
 * Option parsing, choosing the snapshots, and handing them to a renderer.
 * Exit status: 0, 1 on an error (one line on stderr), 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "profctl.h"
#include "prof.h"
#ifndef PROFCTL_NO_CLIENT
#include "client.h"
#endif

#define EXIT_USAGE 2

static const char usage_main[] =
	"usage: profctl VERB [OPTIONS]\n"
	"       profctl --help | --version\n"
	"\n"
	"  list [OPTIONS]           profiled processes you may see\n"
	"  report [OPTIONS]         call tree, flat list, callers, in text/json/csv/folded/html\n"
	"  reset [OPTIONS]          the next report counts from now\n"
	"  top [OPTIONS]            live view of the hottest zones\n"
	"  status [OPTIONS]         profd up or not, kernel assistance, versions\n"
	"  zones BINARY             the zones compiled into an ELF file\n"
	"  clean [OPTIONS]          remove the segments exited processes left in /dev/shm\n"
	"  save [OPTIONS] -o FILE   a process's profile as a file, for report --input and diff\n"
	"  diff [OPTIONS] BASE NEW  two profiles compared, per zone and per call path\n"
	"  serve [OPTIONS]          OpenMetrics for Prometheus over HTTP\n"
	"  trace [OPTIONS]          the last calls of every thread as a timeline (Chrome JSON)\n"
	"\n"
	"  -h, --help               this text\n"
	"      --version            profctl's version\n"
	"\n"
	"profctl VERB --help for a verb's options.  Without profd, profctl reads your own\n"
	"processes' segments in /dev/shm directly.\n";

static const char usage_report[] =
	"usage: profctl report [--pid P] [--tid T] [--since-reset | --since-start | --last 10s]\n"
	"                      [--sort self|total|calls|max|p99|oncpu|self-oncpu]\n"
	"                      [--flat | --callers ZONE] [--merge-threads]\n"
	"                      [--format text|json|csv|folded|html|pprof]\n"
	"                      [--weight wall|oncpu] [-o FILE]\n"
	"                      [--rows N] [--color auto|always|never] [--input FILE]\n"
	"                      [--compensate] [--no-daemon]\n"
	"\n"
	"  -p, --pid P          one process (default: every live process of yours)\n"
	"  -t, --tid T          one thread\n"
	"      --since-reset    count from your last `profctl reset` (the default)\n"
	"      --since-start    count from the process start, ignoring resets\n"
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
	"      --merge-threads  merge the threads of a process into one tree\n"
	"  -f, --format FMT     text (default), json, csv, folded, html, pprof (folded,\n"
	"                       html and pprof are the tree: no --flat or --callers;\n"
	"                       pprof is gzipped profile.proto for go tool pprof)\n"
	"      --weight W       folded stacks weigh self wall time (wall, the default)\n"
	"                       or self on-CPU time (oncpu: stacks without kernel facts\n"
	"                       left out, counted on stderr)\n"
	"  -o, --output FILE    write there instead of stdout\n"
	"      --rows N         at most N rows in the --flat list\n"
	"      --color WHEN     auto (default: a terminal, NO_COLOR unset or empty),\n"
	"                       always, never\n"
	"      --input FILE     read a profile saved by `profctl save` or PROF_SAVE (or a\n"
	"                       JSON report, or a segment image) instead of a live process\n"
	"                       (no --pid or --last)\n"
	"      --compensate     take each zone's estimated cost (measured at the\n"
	"                       program's start) out of its parent's self time and\n"
	"                       its own total (text and json)\n"
	"      --no-daemon      do not ask profd (also PROFCTL_NO_DAEMON=1)\n";

static const char usage_reset[] =
	"usage: profctl reset [--pid P] [--no-daemon]\n"
	"\n"
	"  -p, --pid P          one process (default: every live process of yours)\n"
	"      --no-daemon      do not ask profd (also PROFCTL_NO_DAEMON=1)\n"
	"\n"
	"Your next reports of P count from now.  Nothing is written to the process:\n"
	"profctl keeps its counters as they are now in a file of yours\n"
	"($XDG_RUNTIME_DIR or /dev/shm, mode 0600), the reset's only record.  So a\n"
	"reset is yours alone (another user's reports of P are as they were), holds\n"
	"with or without profd and across its restarts, and goes with the file\n"
	"(profctl clean removes those of processes gone).  If another user took the\n"
	"file's name first, it is kept under another (said), where your reports find it.\n";

static const char usage_top[] =
	"usage: profctl top [--pid P] [--delay SECONDS] [--iterations N]\n"
	"                   [--sort self|total|calls|max|oncpu] [--no-daemon]\n"
	"\n"
	"  -p, --pid P          the process (default: the newest live one of yours)\n"
	"  -d, --delay TIME     refresh every TIME, 10ms to 1h (0.5, 500ms, 2s; default 1s)\n"
	"  -n, --iterations N   quit after N frames (default: on q or Ctrl-C)\n"
	"  -s, --sort KEY       rows by self (default), total, calls, max (wall time) or\n"
	"                       oncpu (CPU time, profd)\n"
	"      --no-daemon      do not ask profd (also PROFCTL_NO_DAEMON=1)\n"
	"\n"
	"The hottest zones over the last interval, with a sparkline of each row's self\n"
	"time.  Each column says its unit: per second over the last interval, avg per\n"
	"call and max of the calls that ended in it (max: exact when above every\n"
	"earlier call, else a bound on it); with profd also on-CPU time, preempted and\n"
	"migrated calls per second.  Without --pid, the newest live process.  Keys:\n"
	"s self, t total, c calls, m max, o on-CPU, space or p\n"
	"pause, tab or ] next thread, [ previous thread, a all threads, q or Ctrl-C quit.\n"
	"Without a terminal, prints one frame per interval.\n";

static const char usage_list[] =
	"usage: profctl list [--format text|json] [--no-daemon]\n"
	"\n"
	"  -f, --format FMT     text (default) or json\n"
	"      --no-daemon      do not ask profd (also PROFCTL_NO_DAEMON=1)\n"
	"\n"
	"Profiled processes and threads you may see: pid, command, threads, alive or\n"
	"exited, since when, kernel assistance; with profd, THREADS IN ZONES: how many\n"
	"threads were inside zones on average (at most the threads alive; a call counts\n"
	"when it ends): now, ~1 s and ~30 s averages.\n";

static const char usage_status[] =
	"usage: profctl status [--no-daemon]\n"
	"\n"
	"      --no-daemon      do not ask profd (also PROFCTL_NO_DAEMON=1)\n"
	"\n"
	"profd up or not, kernel assistance on or off and why, counts, versions; what\n"
	"profd's history and kept data take against its --max-memory, and what it\n"
	"dropped to stay within it (frames, exited processes, whole histories, and the\n"
	"\"last N s\" windows it refused because they needed a dropped frame).\n";

static const char usage_zones[] =
	"usage: profctl zones BINARY\n"
	"\n"
	"The zones (USDT probes of provider prof) compiled into an ELF executable or\n"
	"shared library, read from its notes without running it, as readelf -n shows them.\n";

static const char usage_clean[] =
	"usage: profctl clean [--pid P] [--dry-run]\n"
	"\n"
	"  -p, --pid P          only P's segment (an error if P still runs)\n"
	"      --dry-run        say what would be removed; remove nothing\n"
	"\n"
	"A segment outlives a process that was killed (or set PROF_KEEP), for post-mortem\n"
	"reports, and holds its memory in /dev/shm until it is removed.  clean removes\n"
	"those of your processes (root: of everyone's) that no longer run, in any pid\n"
	"namespace, and the reset baselines profctl keeps of processes gone, one line\n"
	"each, then a total.  profd keeps its own copy of an exited process's data.\n";

/* every verb's --sort: the keys prof_sort_names spells */
static int parse_sort(const char *s)
{
	int i;

	for (i = 0; i < PROF_SORT_NKEYS; i++)
		if (!strcmp(s, prof_sort_names[i]))
			return i;
	return -1;
}

static int parse_format(const char *s)
{
	static const char *const fmts[] = { "text", "json", "csv", "folded", "html", "pprof" };
	int i;

	for (i = 0; i < 6; i++)
		if (!strcmp(s, fmts[i]))
			return i;
	return -1;
}

int pc_parse_duration(const char *s, __u64 *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		      { "", 1e9 }, { "m", 60e9 },  { "h", 3600e9 } };
	size_t n = strspn(s, "0123456789."), k;
	const char *end = s + n;
	char num[32], *nend;
	double v;

	/* strtod would take "inf", "nan", hex and exponents: digits and
	 * points only, all of them read ("1.2.3" is not), then the unit */
	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = 0;
	errno = 0;
	v = strtod(num, &nend);
	if (errno || *nend || v <= 0)
		return -EINVAL;
	for (k = 0; k < sizeof(units) / sizeof(units[0]); k++)
		if (!strcmp(end, units[k].unit))
			break;
	if (k == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	v *= units[k].ns;
	if (v < 1 || v > 7 * 86400e9)
		return -EINVAL;
	*ns = (__u64)v;
	return 0;
}

/* --last: a duration of whole seconds */
static int parse_last(const char *s, unsigned int *secs)
{
	__u64 ns;

	if (pc_parse_duration(s, &ns) || ns % 1000000000ull)
		return -EINVAL;
	*secs = (unsigned int)(ns / 1000000000ull);
	return 0;
}

static int parse_id(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x7fffffff)
		return -EINVAL;
	*out = v;
	return 0;
}

enum {
	OPT_SINCE_RESET = 256,
	OPT_SINCE_START,
	OPT_LAST,
	OPT_FLAT,
	OPT_CALLERS,
	OPT_THREADS,
	OPT_ROWS,
	OPT_COLOR,
	OPT_INPUT,
	OPT_NO_DAEMON,
	OPT_DRY_RUN,
	OPT_PER_CALL,
	OPT_PER_FRAME,
	OPT_SLOW,
	OPT_COUNT,
	OPT_COMPENSATE,
	OPT_MERGE_THREADS,
	OPT_WEIGHT,
};

static const struct option report_longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "since-reset", no_argument, NULL, OPT_SINCE_RESET },
	{ "since-start", no_argument, NULL, OPT_SINCE_START },
	{ "last", required_argument, NULL, OPT_LAST },
	{ "sort", required_argument, NULL, 's' },
	{ "flat", no_argument, NULL, OPT_FLAT },
	{ "callers", required_argument, NULL, OPT_CALLERS },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ "merge-threads", no_argument, NULL, OPT_MERGE_THREADS },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "input", required_argument, NULL, OPT_INPUT },
	{ "no-daemon", no_argument, NULL, OPT_NO_DAEMON },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "per-call", no_argument, NULL, OPT_PER_CALL },
	{ "per-frame", no_argument, NULL, OPT_PER_FRAME },
	{ "slow", required_argument, NULL, OPT_SLOW },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "compensate", no_argument, NULL, OPT_COMPENSATE },
	{ "delay", required_argument, NULL, 'd' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* the long name of option val, NULL if none */
static const char *opt_long(int val)
{
	size_t k;

	for (k = 0; report_longopts[k].name; k++)
		if (report_longopts[k].val == val)
			return report_longopts[k].name;
	return NULL;
}

/* option val as the user wrote it: "--pid" for a long one, else "-p" */
static const char *opt_spelled(int val, bool is_long, char *buf, size_t len)
{
	const char *name = opt_long(val);

	if (name && (is_long || val >= 256))
		snprintf(buf, len, "--%s", name);
	else
		snprintf(buf, len, "-%c", val);
	return buf;
}

/* "--s": the start of more than one long option */
static bool opt_ambiguous(const char *arg)
{
	size_t len, k, n = 0;

	if (strncmp(arg, "--", 2))
		return false;
	arg += 2;
	len = strcspn(arg, "=");
	for (k = 0; report_longopts[k].name; k++)
		n += !strncmp(report_longopts[k].name, arg, len);
	return n > 1;
}

/* name is a word of the space-separated list */
static bool word_in(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = strstr(list, name); p; p = strstr(p + 1, name))
		if ((p == list || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
			return true;
	return false;
}

/* pc_parse_opts: the verb takes operands after its options */
static bool parse_operands;

/* the options every verb shares; 0, or an exit status */
static int parse_opts(int argc, char **argv, const char *usage, const char *allowed,
		      struct pc_opts *o, double *delay, int *iters)
{
	const char *color = "auto", *mode_opt = NULL;
	char spelled[64];
	long v;
	int c, li;

	memset(o, 0, sizeof(*o));
	o->mode = PC_SNAP_RESET;
	optind = 1;
	opterr = 0;
	/* the leading ':' tells a missing value (':') from an unknown option */
	while ((li = -1, c = getopt_long(argc, argv, ":p:t:s:f:o:d:n:h", report_longopts, &li)) !=
	       -1) {
		const char *arg = optind > 1 ? argv[optind - 1] : NULL;

		if (c == ':') {
			pc_warnx("%s: %s needs a value", argv[0],
				 opt_spelled(optopt, arg && !strncmp(arg, "--", 2), spelled,
					     sizeof(spelled)));
			return EXIT_USAGE;
		}
		if (c == '?' && opt_long(optopt)) {
			/* a known option without a value, given one: --flat=3 */
			pc_warnx("%s: --%s takes no value", argv[0], opt_long(optopt));
			return EXIT_USAGE;
		}
		if (c == '?') {
			if (optopt)
				snprintf(spelled, sizeof(spelled), "-%c", optopt);
			else
				snprintf(spelled, sizeof(spelled), "%s", arg ? arg : "");
			pc_warnx("%s: %s option %s; see --help", argv[0],
				 opt_ambiguous(spelled) ? "ambiguous" : "unknown", spelled);
			return EXIT_USAGE;
		}
		if (c == 'h') {
			fputs(usage, stdout);
			return -1;
		}
		/* the value, if any, is argv[optind - 1]: name the option */
		if (!word_in(allowed, opt_long(c))) {
			/* one meaning across verbs: --threads is a view per
			 * thread (serve's); merging them is --merge-threads */
			pc_warnx("%s: option %s not accepted%s", argv[0],
				 opt_spelled(c, li >= 0, spelled, sizeof(spelled)),
				 c == OPT_THREADS ? " (--threads is a view per thread, report's "
						    "default; --merge-threads merges them)"
						  : "");
			return EXIT_USAGE;
		}
		/* one of --since-reset, --since-start, --last: the last would win */
		if (c == OPT_SINCE_RESET || c == OPT_SINCE_START || c == OPT_LAST) {
			if (mode_opt && strcmp(mode_opt, opt_long(c))) {
				pc_warnx("%s: --%s and --%s cannot be combined", argv[0], mode_opt,
					 opt_long(c));
				return EXIT_USAGE;
			}
			mode_opt = opt_long(c);
		}
		switch (c) {
		case 'p':
			if (parse_id(optarg, &v)) {
				pc_warnx("bad pid '%s'", optarg);
				return EXIT_USAGE;
			}
			o->pid = (pid_t)v;
			break;
		case 't':
			if (parse_id(optarg, &v)) {
				pc_warnx("bad tid '%s'", optarg);
				return EXIT_USAGE;
			}
			o->tid = (__u32)v;
			break;
		case OPT_SINCE_RESET:
			o->mode = PC_SNAP_RESET;
			break;
		case OPT_SINCE_START:
			o->mode = PROFD_SNAP_START;
			break;
		case OPT_LAST:
			if (parse_last(optarg, &o->last_s)) {
				pc_warnx("bad duration '%s' (whole seconds: 10s, 2m, 1h)", optarg);
				return EXIT_USAGE;
			}
			o->mode = PROFD_SNAP_LAST;
			break;
		case 's':
			o->sort_set = true;
			o->sort = parse_sort(optarg);
			if (o->sort < 0) {
				pc_warnx("bad sort key '%s' (" PROF_SORT_KEYS_TEXT ")", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_FLAT:
			o->flat = true;
			break;
		case OPT_CALLERS:
			o->callers = optarg;
			break;
		case OPT_MERGE_THREADS:
			o->threads = true;
			break;
		case OPT_WEIGHT:
			if (!strcmp(optarg, "wall"))
				o->weight = PC_WEIGHT_WALL;
			else if (!strcmp(optarg, "oncpu"))
				o->weight = PC_WEIGHT_ONCPU;
			else {
				pc_warnx("bad --weight '%s' (wall, oncpu)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'f':
			o->format = parse_format(optarg);
			if (o->format < 0) {
				pc_warnx("bad format '%s' (text, json, csv, folded, html, pprof)",
					 optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			o->out = optarg;
			break;
		case OPT_ROWS:
			if (parse_id(optarg, &v)) {
				pc_warnx("bad row count '%s'", optarg);
				return EXIT_USAGE;
			}
			o->rows = (int)v;
			break;
		case OPT_COLOR:
			color = optarg;
			if (strcmp(color, "auto") && strcmp(color, "always") &&
			    strcmp(color, "never")) {
				pc_warnx("bad --color '%s' (auto, always, never)", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_INPUT:
			o->input = optarg;
			break;
		case OPT_COMPENSATE:
			o->compensate = true;
			break;
		case OPT_NO_DAEMON:
			o->no_daemon = true;
			break;
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case OPT_PER_CALL:
			o->per_call = true;
			break;
		case OPT_PER_FRAME:
			o->per_frame = true;
			break;
		case OPT_SLOW:
			o->slow = optarg;
			break;
		case OPT_COUNT:
			if (parse_id(optarg, &v) || v > 100000) {
				pc_warnx("bad count '%s' (1 to 100000)", optarg);
				return EXIT_USAGE;
			}
			o->count = (int)v;
			break;
		case 'd': {
			__u64 ns;

			if (!delay || pc_parse_duration(optarg, &ns) || ns < 10000000ull ||
			    ns > 3600000000000ull) {
				pc_warnx("bad delay '%s' (10ms to 1h: 0.5, 500ms, 2s)", optarg);
				return EXIT_USAGE;
			}
			*delay = (double)ns / 1e9;
			break;
		}
		case 'n':
			if (!iters || parse_id(optarg, &v)) {
				pc_warnx("bad iteration count '%s'", optarg);
				return EXIT_USAGE;
			}
			*iters = (int)v;
			break;
		}
	}
	/* a verb that takes operands (diff) finds them from o->args on */
	o->args = optind;
	if (optind < argc && !parse_operands) {
		pc_warnx("%s: unexpected argument '%s'; see --help", argv[0], argv[optind]);
		return EXIT_USAGE;
	}
	if (!strcmp(color, "always"))
		o->color = true;
	else if (!strcmp(color, "auto"))
		/* no-color.org: an empty NO_COLOR is as good as unset */
		o->color = !o->out && isatty(1) && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
	if (o->format != PC_FMT_TEXT)
		o->color = false;
	if (getenv("PROFCTL_NO_DAEMON") && strcmp(getenv("PROFCTL_NO_DAEMON"), "0"))
		o->no_daemon = true;
	return 0;
}

int pc_parse_opts(int argc, char **argv, const char *usage, const char *allowed, struct pc_opts *o)
{
	int err;

	parse_operands = true;
	err = parse_opts(argc, argv, usage, allowed, o, NULL, NULL);
	parse_operands = false;
	return err;
}

/* -o FILE through pc_out_open: nothing planted at the name is followed */
static FILE *open_out(const struct pc_opts *o)
{
	if (!o->out || !strcmp(o->out, "-"))
		return stdout;
	return pc_out_open(o->out);
}

static int close_out(FILE *f, const struct pc_opts *o)
{
	if (f == stdout)
		return fflush(f) ? -errno : 0;
	return pc_out_close(f, o->out);
}

FILE *pc_open_out(const struct pc_opts *o)
{
	return open_out(o);
}

int pc_close_out(FILE *f, const struct pc_opts *o)
{
	return close_out(f, o);
}

/*
 * profd, else the caller's own segments: the fallback said once, on
 * stderr, unless the user asked for it (--no-daemon, PROFCTL_NO_DAEMON)
 */
void pc_src_open_said(struct pc_src *src, const struct pc_opts *o, const char *fallback)
{
	pc_src_open(src, o->no_daemon);
	if (src->fd >= 0 || !src->why)
		return;
	if (!fallback)
		fallback = "reading your own processes directly";
	if (!src->sock)
		pc_warnx("profd: not in this build: %s", fallback);
	else if (src->why == -ENOENT || src->why == -ECONNREFUSED)
		pc_warnx("profd not running (%s): %s", src->sock, fallback);
	else
		pc_warnx("profd not reachable (%s: %s): %s", src->sock, strerror(-src->why),
			 fallback);
}

/* --- report ------------------------------------------------------------------ */

struct owned {
	struct prof_snapshot *raw;    /* prof_snapshot__destroy */
	struct prof_snapshot *view;   /* free() */
	struct prof_snapshot *merged; /* pc_snap_free */
	struct prof_snap_annot *annot; /* pc_annot_free */
};

static void owned_free(struct owned *w)
{
	prof_snapshot__destroy(w->raw);
	free(w->view);
	pc_snap_free(w->merged);
	pc_annot_free(w->annot);
}

static int render(FILE *f, struct prof_snapshot **snaps, size_t n, const struct pc_opts *o)
{
	size_t i, found = 0;
	int err = 0;

	switch (o->format) {
	case PC_FMT_JSON:
		if (o->flat || o->callers)
			return pc_render_json_view(f, snaps, n, o);
		return prof_report_json(f, snaps, n);
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
			pc_render_locks(f, snaps[i]);
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
	{ weight_not_folded, "--weight is what a --format folded stack weighs",
	  "--weight oncpu" },
	{ rows_not_flat, "--rows limits the --flat list", "--rows 3" },
	{ callers_sort, "--callers rows are ordered by their time: no --sort",
	  "--callers z --sort self" },
	{ compensate_format, "--compensate is for --format text and json",
	  "--compensate --format csv" },
	{ input_pid, "--input reads a saved image: no --pid", "--input f --pid 1" },
	{ input_last, "--input reads a saved image: no --last", "--input f --last 5s" },
};
const size_t pc_report_nconflicts = sizeof(pc_report_conflicts) / sizeof(pc_report_conflicts[0]);

static int cmd_report(int argc, char **argv)
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

	err = parse_opts(argc, argv, usage_report,
			 "pid tid since-reset since-start last sort flat callers "
			 "merge-threads format weight output rows color input no-daemon compensate",
			 &o, NULL, NULL);
	if (err)
		return err < 0 ? 0 : err;
	for (i = 0; i < sizeof(pc_report_conflicts) / sizeof(pc_report_conflicts[0]); i++)
		if (pc_report_conflicts[i].when(&o)) {
			pc_warnx("report: %s", pc_report_conflicts[i].why);
			return EXIT_USAGE;
		}
	if (o.input) {
		np = 1;
		procs = calloc(1, sizeof(*procs));
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

		if (o.input) {
			err = pc_read_image(o.input, report_read_flags(&o), &w->raw);
		} else if (measure) {
			w->raw = measured[i];
			measured[i] = NULL;
			err = w->raw ? 0 : -ESRCH;
		} else {
			err = pc_src_snapshot(&src, procs[i].pid, o.mode, o.last_s, &w->raw);
		}
		if (err) {
			/* one process vanishing between list and read is not fatal */
			if (o.pid || o.input)
				goto cleanup;
			continue;
		}
		s = w->raw;
		if (o.compensate && prof_snapshot__compensate(s) == -ENODATA)
			pc_warnx(
				"pid %u: no zone cost was measured (a profile from before it was): "
				"not compensated",
				s->pid);
		if (o.tid) {
			w->view = pc_view_thread(s, o.tid);
			if (!w->view) {
				owned_free(w);
				memset(w, 0, sizeof(*w));
				continue;
			}
			s = w->view;
		}
		if (o.threads) {
			w->merged = pc_merge_threads(s);
			if (!w->merged) {
				pc_warnx("pid %u: failed to merge threads: %s", s->pid,
					 strerror(errno));
				owned_free(w);
				goto cleanup;
			}
			s = w->merged;
		}
		/* the tree's plots and locks, from the live segment */
		if (!o.input && !measure && o.mode != PROFD_SNAP_LAST && !o.flat && !o.callers &&
		    (o.format == PC_FMT_TEXT || o.format == PC_FMT_JSON)) {
			w->annot = pc_annot_read(&src, s);
			s->annot = w->annot;
		}
		snaps[n++] = s;
	}
	if (!n) {
		if (o.tid)
			pc_warnx("tid %u: no such profiled thread%s", o.tid,
				 o.pid ? " in that process" : "");
		else
			pc_warnx("no profile could be read");
		goto cleanup;
	}
	/* html: the first process's timeline, from its live segment's rings */
	if (o.format == PC_FMT_HTML && !o.input &&
	    pc_trace_json(&src, (pid_t)snaps[0]->pid, o.tid, &trace_json) == 0)
		o.trace_json = trace_json;
	f = open_out(&o);
	if (!f)
		goto cleanup;
	err = render(f, snaps, n, &o);
	if (err == -ENOENT && o.callers)
		pc_warnx("zone '%s' not found", o.callers);
	else if (err)
		pc_warnx("failed to render the report: %s", strerror(-err));
	if (close_out(f, &o) == 0 && !err)
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

/* --- reset ------------------------------------------------------------------- */

static int cmd_reset(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src;
	struct pc_proc *procs = NULL;
	size_t np = 0, i;
	int err, ret = 0;

	err = parse_opts(argc, argv, usage_reset, "pid no-daemon", &o, NULL, NULL);
	if (err)
		return err < 0 ? 0 : err;
	pc_src_open_said(&src, &o, NULL);
	err = pc_src_targets(&src, o.pid, &procs, &np);
	if (err) {
		pc_src_close(&src);
		return 1;
	}
	for (i = 0; i < np; i++) {
		if (pc_src_reset(&src, procs[i].pid))
			ret = 1;
	}
	free(procs);
	pc_src_close(&src);
	return ret;
}

/* --- list and status ----------------------------------------------------------- */

static const char *fmt_since(char *buf, size_t len, __u64 created_ns)
{
	time_t t = (time_t)(created_ns / 1000000000ULL);
	struct tm tm;

	if (!created_ns || !localtime_r(&t, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

static int cmd_list(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src;
	struct pc_proc *p = NULL;
	size_t n = 0, i;
	int err;

	err = parse_opts(argc, argv, usage_list, "format no-daemon", &o, NULL, NULL);
	if (err)
		return err < 0 ? 0 : err;
	if (o.format != PC_FMT_TEXT && o.format != PC_FMT_JSON) {
		pc_warnx("list: --format text or json");
		return EXIT_USAGE;
	}
	pc_src_open_said(&src, &o, NULL);
	err = pc_src_list(&src, &p, &n);
	if (err) {
		pc_warnx("failed to list profiled processes: %s", strerror(-err));
		pc_src_close(&src);
		return 1;
	}
	if (o.format == PC_FMT_JSON) {
		struct prof_jw w;

		prof_jw_init(&w, stdout);
		prof_jw_start_object(&w);
		prof_jw_u64_field(&w, "version", 1);
		prof_jw_string_field(&w, "source", src.fd >= 0 ? "profd" : "direct");
		prof_jw_name(&w, "processes");
		prof_jw_start_array(&w);
		for (i = 0; i < n; i++) {
			prof_jw_start_object(&w);
			prof_jw_name(&w, "pid");
			prof_jw_int(&w, (int)p[i].pid);
			prof_jw_u64_field(&w, "uid", p[i].uid);
			prof_jw_string_field(&w, "comm", p[i].comm);
			prof_jw_u64_field(&w, "threads", p[i].threads);
			prof_jw_bool_field(&w, "alive", p[i].alive);
			prof_jw_name(&w, "kernel");
			prof_jw_int(&w, p[i].kernel);
			prof_jw_u64_field(&w, "created_ns", p[i].created_ns);
			/* profd only: thousandths of a thread inside zones */
			if (p[i].rates) {
				prof_jw_name(&w, "inzone");
				prof_jw_start_object(&w);
				prof_jw_u64_field(&w, "now", p[i].inzone[0]);
				prof_jw_u64_field(&w, "short", p[i].inzone[1]);
				prof_jw_u64_field(&w, "long", p[i].inzone[2]);
				prof_jw_end_object(&w);
			}
			/* in a container: its own pid there, and its cgroup */
			if (p[i].ns_pid) {
				prof_jw_u64_field(&w, "ns_pid", p[i].ns_pid);
				prof_jw_string_field(&w, "cgroup", p[i].cgroup);
			}
			prof_jw_end_object(&w);
		}
		prof_jw_end_array(&w);
		prof_jw_end_object(&w);
		prof_jw_raw(&w, "\n");
	} else {
		char since[32], kern[16];
		bool ctr = false;

		for (i = 0; i < n; i++)
			ctr |= p[i].ns_pid != 0;
		printf("%7s  %-16s %7s  %-7s %-7s %-19s %s%s\n", "PID", "COMMAND", "THREADS",
		       "STATE", "KERNEL", "SINCE", src.fd >= 0 ? "THREADS IN ZONES now/1s/30s" : "",
		       ctr ? "  CONTAINER PID, CGROUP" : "");
		for (i = 0; i < n; i++) {
			if (p[i].kernel < 0)
				snprintf(kern, sizeof(kern), "?");
			else if (p[i].kernel == 0)
				snprintf(kern, sizeof(kern), "off");
			else
				snprintf(kern, sizeof(kern), "on:%d", p[i].kernel);
			printf("%7d  %-16s %7u  %-7s %-7s %-19s", (int)p[i].pid,
			       p[i].comm[0] ? p[i].comm : "?", p[i].threads,
			       p[i].alive ? "alive" : "exited", kern,
			       fmt_since(since, sizeof(since), p[i].created_ns));
			if (p[i].rates)
				printf(" %.2f/%.2f/%.2f", p[i].inzone[0] / 1e3,
				       p[i].inzone[1] / 1e3, p[i].inzone[2] / 1e3);
			if (p[i].ns_pid)
				printf("  %u, %s", p[i].ns_pid, p[i].cgroup[0] ? p[i].cgroup : "?");
			printf("\n");
		}
		if (src.fd < 0)
			printf("(%zu process%s; read from /dev/shm directly, profd %s)\n", n,
			       n == 1 ? "" : "es", src.why ? "not running" : "not asked");
	}
	free(p);
	pc_src_close(&src);
	return 0;
}

/* profd's history and kept data against its --max-memory, and what went */
static void status_memory(const struct profd_status *st)
{
	const double mib = 1024.0 * 1024.0;

	printf("history: %.1f MiB of %.1f MiB (--max-memory): live processes %.1f MiB in %llu "
	       "frames, exited %.1f MiB\n",
	       (double)(st->mem_history + st->mem_kept) / mib, (double)st->max_memory / mib,
	       (double)st->mem_history / mib, (unsigned long long)st->frames,
	       (double)st->mem_kept / mib);
	if (!st->frames_dropped && !st->kept_dropped && !st->histories_dropped) {
		printf("history dropped for memory: none\n");
		return;
	}
	printf("history dropped for memory: %llu frames (the oldest of the biggest processes "
	       "first), %llu exited processes, %llu whole histories; %llu windows refused\n",
	       (unsigned long long)st->frames_dropped, (unsigned long long)st->kept_dropped,
	       (unsigned long long)st->histories_dropped, (unsigned long long)st->windows_refused);
	if (st->last_drop_pid)
		printf("  the newest drop: pid %u, a frame of %.1f s ago: its --last windows that "
		       "long or longer are refused\n",
		       st->last_drop_pid, (double)st->last_drop_age_ns / 1e9);
}

static int cmd_status(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src;
	struct pc_proc *p = NULL;
	size_t n = 0, i, alive = 0;
	int err;

	err = parse_opts(argc, argv, usage_status, "no-daemon", &o, NULL, NULL);
	if (err)
		return err < 0 ? 0 : err;
	pc_src_open(&src, o.no_daemon);
	printf("profctl %d.%d, segment version %d\n", PROF_VERSION_MAJOR, PROF_VERSION_MINOR,
	       PROF_SEG_VERSION);
#ifndef PROFCTL_NO_CLIENT
	if (src.fd >= 0) {
		struct profd_status st;

		err = profd_status(src.fd, &st);
		if (err) {
			printf("profd: connected to %s but status failed: %s\n", src.sock,
			       strerror(-err));
			/* what follows is read directly */
			close(src.fd);
			src.fd = -1;
			src.why = err;
		} else {
			printf("profd: running at %s, version %u.%u, up %llus\n", src.sock,
			       st.version >> 16, st.version & 0xffff,
			       (unsigned long long)(st.uptime_ns / 1000000000ULL));
			if (st.bpf_on)
				printf("kernel assistance: on\n");
			else
				printf("kernel assistance: off (%.*s)\n", (int)sizeof(st.bpf_why),
				       st.bpf_why);
			printf("processes followed: %u, threads with a kernel slot: %u, slots "
			       "free: %u\n",
			       st.processes, st.threads, st.slots_free);
			printf("sampling every %ums, %llu samples\n", st.interval_ms,
			       (unsigned long long)st.samples);
			printf("threads registered late (their first zone stopped waiting, its "
			       "first calls without kernel facts): %u\n",
			       st.late);
			printf("tsc: %s (%s)\n",
			       st.tsc_synced ? "synchronized across CPUs: a migrated call's time is exact"
					     : "not trusted across CPUs: a migrated call's time is suspect",
			       st.tsc_why);
			status_memory(&st);
			printf("files in /dev/shm skipped as not a good segment: %u; full "
			       "listings of /dev/shm: %llu\n",
			       st.bad_segments, (unsigned long long)st.rescans);
		}
	} else
#endif
	{
		if (!src.why)
			printf("profd: not asked (--no-daemon or PROFCTL_NO_DAEMON)");
		else if (!src.sock)
			printf("profd: not in this build");
		else
			printf("profd: not running (%s: %s)", src.sock, strerror(-src.why));
		printf("; profctl reads your segments in /dev/shm directly\n");
		printf("kernel assistance: off (needs profd)\n");
	}
	err = pc_src_list(&src, &p, &n);
	if (!err) {
		for (i = 0; i < n; i++)
			alive += p[i].alive;
		printf("profiled processes visible: %zu (%zu alive)\n", n, alive);
		free(p);
	}
	pc_src_close(&src);
	return 0;
}

static int cmd_zones(int argc, char **argv)
{
	if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_zones, argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : EXIT_USAGE;
	}
	return pc_zones(argv[1], stdout) ? 1 : 0;
}

static int cmd_top(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src;
	double delay = 1.0;
	int iters = 0, err;

	err = parse_opts(argc, argv, usage_top, "pid sort no-daemon delay iterations", &o, &delay,
			 &iters);
	if (err)
		return err < 0 ? 0 : err;
	/* an interval's rows have no histogram and no call tree */
	if (o.sort == PROF_SORT_P99 || o.sort == PROF_SORT_SELF_ONCPU) {
		pc_warnx("top: --sort %s not available: top sorts by self, total, calls, max or "
			 "oncpu",
			 prof_sort_names[o.sort]);
		return EXIT_USAGE;
	}
	pc_src_open_said(&src, &o, NULL);
	err = pc_top(&src, &o, delay, iters);
	pc_src_close(&src);
	return err ? 1 : 0;
}

/* --- clean ------------------------------------------------------------------- */

static int cmd_clean(int argc, char **argv)
{
	struct pc_opts o;
	int err;

	err = parse_opts(argc, argv, usage_clean, "pid dry-run", &o, NULL, NULL);
	if (err)
		return err < 0 ? 0 : err;
	return pc_clean(o.pid, o.dry_run, stdout);
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
} verbs[] = {
	{ "report", cmd_report },  { "list", cmd_list },     { "reset", cmd_reset },
	{ "top", cmd_top },	   { "status", cmd_status }, { "zones", cmd_zones },
	{ "clean", cmd_clean },	   { "save", pc_cmd_save },  { "diff", pc_cmd_diff },
	{ "serve", pc_cmd_serve }, { "trace", pc_cmd_trace },
};

/* the index of the verb called name, or -1 */
static int verb_named(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(name, verbs[i].name))
			return (int)i;
	return -1;
}

int profctl_main(int argc, char **argv)
{
	int v, i, rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage_main, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("profctl %d.%d\n", PROF_VERSION_MAJOR, PROF_VERSION_MINOR);
		return 0;
	}
	v = verb_named(argv[1]);
	if (v >= 0) {
		pc_bus_guard();
		rc = verbs[v].fn(argc - 1, argv + 1);
		if (pc_bus_hit()) {
			pc_bus_said();
			rc = 1;
		}
		return rc;
	}
	/* profctl --pid 3 report: options follow their verb */
	for (i = 2; argv[1][0] == '-' && i < argc; i++) {
		v = verb_named(argv[i]);
		if (v >= 0) {
			pc_warnx("options come after the verb: profctl %s %s ...", verbs[v].name,
				 argv[1]);
			return EXIT_USAGE;
		}
	}
	pc_warnx("unknown verb '%s'; see profctl --help", argv[1]);
	return EXIT_USAGE;
}
