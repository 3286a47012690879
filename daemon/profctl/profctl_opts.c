// SPDX-License-Identifier: MIT
/*
 * profctl_opts.c - the options every verb's table (profctl_opts.h) may
 * name, parsed into struct pc_opts; what every verb writes with (-o FILE)
 * and reads from (profd, else its own segments).  Exit status of a bad
 * usage: 2, one line on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "profctl.h"
#include "prof.h"

#define EXIT_USAGE 2

/* every option a table may name: how a refused one is spelled, and whether
 * it is another verb's ("not accepted") or nobody's ("unknown") */
static const struct option every_option[] = {
	PC_OPT_PID,	  PC_OPT_TID,	      PC_OPT_SINCE,    PC_OPT_LAST,	     PC_OPT_SORT,
	PC_OPT_FLAT,	  PC_OPT_CALLERS,     PC_OPT_THREADS,  PC_OPT_MERGE_THREADS, PC_OPT_WEIGHT,
	PC_OPT_FORMAT,	  PC_OPT_OUTPUT,      PC_OPT_ROWS,     PC_OPT_COLOR,	     PC_OPT_INPUT,
	PC_OPT_NO_DAEMON, PC_OPT_DRY_RUN,     PC_OPT_PER_CALL, PC_OPT_PER_FRAME,     PC_OPT_SLOW,
	PC_OPT_COUNT,	  PC_OPT_COMPENSATE,  PC_OPT_DELAY,    PC_OPT_ITERATIONS,    PC_OPT_LISTEN,
	PC_OPT_MAX_ZONES, PC_OPT_MAX_THREADS, PC_OPT_TIMEOUT,  PC_OPT_ALL_USERS,     PC_OPT_HELP,
	PC_OPT_END,
};

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

static const char *opt_long(int val);

/* serve's options; 0 or an exit status */
static int opt_take_serve(int c, const char *arg, struct pc_opts *o)
{
	unsigned int secs;
	long v;

	switch (c) {
	case PC_OPTV_LISTEN:
		/* HOST:PORT: what is no address at all is bad usage; what does
		 * not resolve or bind is said when serve listens */
		if (!strchr(arg, ':')) {
			pc_warnx("bad --listen '%s' (HOST:PORT, :PORT, [::1]:PORT)", arg);
			return EXIT_USAGE;
		}
		o->listen = arg;
		break;
	case PC_OPTV_MAX_ZONES:
	case PC_OPTV_MAX_THREADS:
		if (parse_id(arg, &v) || v > 100000) {
			pc_warnx("bad --%s '%s' (1 to 100000)", opt_long(c), arg);
			return EXIT_USAGE;
		}
		*(c == PC_OPTV_MAX_ZONES ? &o->max_zones : &o->max_threads) = (unsigned int)v;
		break;
	case PC_OPTV_TIMEOUT:
		/* a time as --last reads it: "30s", "2m", or bare seconds */
		if (parse_last(arg, &secs) || !secs || secs > 100000) {
			pc_warnx("bad --timeout '%s' (whole seconds, 1s to 100000s: 10, 30s, 2m)",
				 arg);
			return EXIT_USAGE;
		}
		o->timeout_s = secs;
		break;
	case PC_OPTV_THREADS:
		o->per_thread = true;
		break;
	case PC_OPTV_ALL_USERS:
		o->all_users = true;
		break;
	}
	return 0;
}

/* a count of 1 to max (0: to the largest int) into *out, or EXIT_USAGE
 * with a line that says what was wrong */
static int take_count(const char *arg, long max, const char *what, int *out)
{
	long v;

	if (parse_id(arg, &v) || (max && v > max)) {
		if (max)
			pc_warnx("bad %s '%s' (1 to %ld)", what, arg, max);
		else
			pc_warnx("bad %s '%s'", what, arg);
		return EXIT_USAGE;
	}
	*out = (int)v;
	return 0;
}

/* opt_take's options that set a word or a number */
static int opt_take_more(int c, const char *arg, struct pc_opts *o)
{
	__u64 ns;

	switch (c) {
	case PC_OPTV_ROWS:
		return take_count(arg, 0, "row count", &o->rows);
	case PC_OPTV_COLOR:
		if (strcmp(arg, "auto") && strcmp(arg, "always") && strcmp(arg, "never")) {
			pc_warnx("bad --color '%s' (auto, always, never)", arg);
			return EXIT_USAGE;
		}
		o->color_when = arg;
		break;
	case PC_OPTV_COUNT:
		return take_count(arg, 100000, "count", &o->count);
	case 'd':
		if (pc_parse_duration(arg, &ns) || ns < 10000000ull || ns > 3600000000000ull) {
			pc_warnx("bad delay '%s' (10ms to 1h: 0.5, 500ms, 2s)", arg);
			return EXIT_USAGE;
		}
		o->delay = (double)ns / 1e9;
		break;
	case 'n':
		return take_count(arg, 0, "iteration count", &o->iters);
	case PC_OPTV_CALLERS:
		o->callers = arg;
		break;
	case PC_OPTV_INSIDE:
		o->inside = arg;
		break;
	case 'o':
		o->out = arg;
		break;
	case PC_OPTV_INPUT:
		o->input = arg;
		break;
	case PC_OPTV_SLOW:
		o->slow = arg;
		break;
	case PC_OPTV_FLAT:
		o->flat = true;
		break;
	case PC_OPTV_MERGE_THREADS:
		o->threads = true;
		break;
	case PC_OPTV_COMPENSATE:
		o->compensate = true;
		break;
	case PC_OPTV_NO_DAEMON:
		o->no_daemon = true;
		break;
	case PC_OPTV_DRY_RUN:
		o->dry_run = true;
		break;
	case PC_OPTV_PER_CALL:
		o->per_call = true;
		break;
	case PC_OPTV_PER_FRAME:
		o->per_frame = true;
		break;
	default:
		return opt_take_serve(c, arg, o);
	}
	return 0;
}

/* the long name of option val, NULL if none */
static const char *opt_long(int val)
{
	size_t k;

	for (k = 0; every_option[k].name; k++)
		if (every_option[k].val == val)
			return every_option[k].name;
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

/* how many long options of table start as "--arg" does (up to its '='),
 * *val the last one's value */
static size_t opt_matches(const struct option *table, const char *arg, int *val)
{
	size_t len, k, n = 0;

	if (strncmp(arg, "--", 2))
		return 0;
	arg += 2;
	len = strcspn(arg, "=");
	for (k = 0; table[k].name; k++)
		if (!strncmp(table[k].name, arg, len)) {
			/* the whole name: no other can be meant */
			if (!table[k].name[len]) {
				*val = table[k].val;
				return 1;
			}
			*val = table[k].val;
			n++;
		}
	return n;
}

/* getopt's short options for table: ":p:t:h" */
static void short_opts(const struct option *table, char *buf, size_t len)
{
	size_t k, n = 0;

	buf[n++] = ':'; /* a missing value (':') apart from an unknown option */
	for (k = 0; table[k].name && n + 3 < len; k++)
		if (table[k].val < 256) {
			buf[n++] = (char)table[k].val;
			if (table[k].has_arg == required_argument)
				buf[n++] = ':';
		}
	buf[n] = 0;
}

/* getopt's '?' or ':' said as the user wrote it; the exit status */
static int opt_refused(int c, const char *verb, const char *arg, const struct option *table)
{
	char spelled[64];
	int val = 0;
	size_t mine;

	if (c == ':') {
		pc_warnx("%s: %s needs a value", verb,
			 opt_spelled(optopt, arg && !strncmp(arg, "--", 2), spelled,
				     sizeof(spelled)));
		return EXIT_USAGE;
	}
	if (optopt && opt_long(optopt) && arg && !strncmp(arg, "--", 2) &&
	    opt_matches(table, arg, &val) == 1) {
		/* a known option without a value, given one: --flat=3 */
		pc_warnx("%s: --%s takes no value", verb, opt_long(optopt));
		return EXIT_USAGE;
	}
	if (optopt)
		snprintf(spelled, sizeof(spelled), "-%c", optopt);
	else
		snprintf(spelled, sizeof(spelled), "%s", arg ? arg : "");
	mine = opt_matches(table, spelled, &val);
	/* another verb's option, or the start of one: refused by name */
	if (!mine &&
	    (optopt ? opt_long(optopt) != NULL : opt_matches(every_option, spelled, &val) == 1)) {
		c = optopt ? optopt : val;
		/* one meaning across verbs: --threads is a view per thread
		 * (serve's); merging them is --merge-threads */
		pc_warnx("%s: option %s not accepted%s", verb,
			 opt_spelled(c, !optopt, spelled, sizeof(spelled)),
			 c == PC_OPTV_THREADS ? " (--threads is a view per thread, report's "
						"default; --merge-threads merges them)"
					      : "");
		return EXIT_USAGE;
	}
	pc_warnx("%s: %s option %s; see --help", verb,
		 mine > 1 || (!mine && opt_matches(every_option, spelled, &val) > 1) ? "ambiguous"
										     : "unknown",
		 spelled);
	return EXIT_USAGE;
}

/* the value of option c, into o; 0 or an exit status */
static int opt_take(int c, const char *arg, struct pc_opts *o)
{
	long v;

	switch (c) {
	case 'p':
	case 't':
		if (parse_id(arg, &v)) {
			pc_warnx("bad %s '%s'", c == 'p' ? "pid" : "tid", arg);
			return EXIT_USAGE;
		}
		if (c == 'p')
			o->pid = (pid_t)v;
		else
			o->tid = (__u32)v;
		return 0;
	case PC_OPTV_SINCE_RESET:
		o->mode = PC_SNAP_RESET;
		return 0;
	case PC_OPTV_SINCE_START:
		o->mode = PROFD_SNAP_START;
		return 0;
	case PC_OPTV_LAST:
		if (parse_last(arg, &o->last_s)) {
			pc_warnx("bad duration '%s' (whole seconds: 10s, 2m, 1h)", arg);
			return EXIT_USAGE;
		}
		o->mode = PROFD_SNAP_LAST;
		return 0;
	case 's':
		o->sort_set = true;
		o->sort = parse_sort(arg);
		if (o->sort < 0) {
			pc_warnx("bad sort key '%s' (" PROF_SORT_KEYS_TEXT ")", arg);
			return EXIT_USAGE;
		}
		return 0;
	case PC_OPTV_WEIGHT:
		if (!strcmp(arg, "wall"))
			o->weight = PC_WEIGHT_WALL;
		else if (!strcmp(arg, "oncpu"))
			o->weight = PC_WEIGHT_ONCPU;
		else {
			pc_warnx("bad --weight '%s' (wall, oncpu)", arg);
			return EXIT_USAGE;
		}
		return 0;
	case 'f':
		o->format = parse_format(arg);
		if (o->format < 0) {
			pc_warnx("bad format '%s' (text, json, csv, folded, html, pprof)", arg);
			return EXIT_USAGE;
		}
		return 0;
	}
	return opt_take_more(c, arg, o);
}
/* what the options say together, once all are read */
static void opts_settle(struct pc_opts *o)
{
	if (!strcmp(o->color_when, "always"))
		o->color = true;
	else if (!strcmp(o->color_when, "auto"))
		/* no-color.org: an empty NO_COLOR is as good as unset */
		o->color = !o->out && isatty(1) && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
	if (o->format != PC_FMT_TEXT)
		o->color = false;
	if (pc_env_no_daemon())
		o->no_daemon = true;
}

int pc_parse_opts(int argc, char **argv, const char *usage, const struct option *table,
		  struct pc_opts *o)
{
	const char *mode_opt = NULL;
	char shorts[64];
	size_t end;
	int c, err;

	memset(o, 0, sizeof(*o));
	o->mode = PC_SNAP_RESET;
	o->color_when = "auto";
	o->delay = 1.0;
	short_opts(table, shorts, sizeof(shorts));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, table, NULL)) != -1) {
		if (c == '?' || c == ':')
			return opt_refused(c, argv[0], optind > 1 ? argv[optind - 1] : NULL, table);
		if (c == 'h') {
			fputs(usage, stdout);
			return -1;
		}
		/* one of --since-reset, --since-start, --last: the last would win */
		if (c == PC_OPTV_SINCE_RESET || c == PC_OPTV_SINCE_START || c == PC_OPTV_LAST) {
			if (mode_opt && strcmp(mode_opt, opt_long(c))) {
				pc_warnx("%s: --%s and --%s cannot be combined", argv[0], mode_opt,
					 opt_long(c));
				return EXIT_USAGE;
			}
			mode_opt = opt_long(c);
		}
		err = opt_take(c, optarg, o);
		if (err)
			return err;
	}
	/* a verb that takes operands (diff) finds them from o->args on */
	o->args = optind;
	for (end = 0; table[end].name; end++)
		;
	if (optind < argc && !table[end].val) {
		pc_warnx("%s: unexpected argument '%s'; see --help", argv[0], argv[optind]);
		return EXIT_USAGE;
	}
	opts_settle(o);
	return 0;
}

/* -o FILE through pc_out_open: nothing planted at the name is followed */
FILE *pc_open_out(const struct pc_opts *o)
{
	if (!o->out || !strcmp(o->out, "-"))
		return stdout;
	return pc_out_open(o->out);
}

int pc_close_out(FILE *f, const struct pc_opts *o)
{
	if (f == stdout)
		return fflush(f) ? -errno : 0;
	return pc_out_close(f, o->out);
}

int pc_end_out(FILE *f, const struct pc_opts *o, int err)
{
	if (!err)
		return pc_close_out(f, o);
	if (f == stdout)
		fflush(f);
	else
		pc_out_discard(f);
	return err;
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
