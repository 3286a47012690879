/* SPDX-License-Identifier: MIT */
/*
 * profctl_opts.h - each verb's options as a table, as perf's parse-options
 * has it: a verb lists the entries below that it takes (a getopt_long
 * table, ended by PC_OPT_END, or PC_OPT_END_OPERANDS when operands may
 * follow its options) and pc_parse_opts (profctl_opts.c) fills struct
 * pc_opts from them.  An option of another verb's table is refused as
 * "not accepted"; tests/check_options.py reads these tables to see that
 * every verb's every option is run by a test.
 */
#ifndef PROFCTL_OPTS_H
#define PROFCTL_OPTS_H

#include <getopt.h>

/* the values of the options that have no short form */
enum {
	PC_OPTV_SINCE_RESET = 256,
	PC_OPTV_SINCE_START,
	PC_OPTV_LAST,
	PC_OPTV_FLAT,
	PC_OPTV_CALLERS,
	PC_OPTV_THREADS,
	PC_OPTV_ROWS,
	PC_OPTV_COLOR,
	PC_OPTV_INPUT,
	PC_OPTV_NO_DAEMON,
	PC_OPTV_DRY_RUN,
	PC_OPTV_PER_CALL,
	PC_OPTV_PER_FRAME,
	PC_OPTV_SLOW,
	PC_OPTV_COUNT,
	PC_OPTV_COMPENSATE,
	PC_OPTV_MERGE_THREADS,
	PC_OPTV_WEIGHT,
	PC_OPTV_INSIDE,
	PC_OPTV_LISTEN,
	PC_OPTV_MAX_ZONES,
	PC_OPTV_MAX_THREADS,
	PC_OPTV_TIMEOUT,
	PC_OPTV_ALL_USERS,
};

/* clang-format off: one entry a line, as tests/check_options.py reads them */
#define PC_OPT_PID { "pid", required_argument, NULL, 'p' }
#define PC_OPT_TID { "tid", required_argument, NULL, 't' }
#define PC_OPT_SINCE_RESET { "since-reset", no_argument, NULL, PC_OPTV_SINCE_RESET }
#define PC_OPT_SINCE_START { "since-start", no_argument, NULL, PC_OPTV_SINCE_START }
/* the two ends a count may start from: a verb that takes one takes both */
#define PC_OPT_SINCE PC_OPT_SINCE_RESET, PC_OPT_SINCE_START
#define PC_OPT_LAST { "last", required_argument, NULL, PC_OPTV_LAST }
#define PC_OPT_SORT { "sort", required_argument, NULL, 's' }
#define PC_OPT_FLAT { "flat", no_argument, NULL, PC_OPTV_FLAT }
#define PC_OPT_CALLERS { "callers", required_argument, NULL, PC_OPTV_CALLERS }
#define PC_OPT_INSIDE { "inside", required_argument, NULL, PC_OPTV_INSIDE }
/* serve's view per thread (report's default; report merges with --merge-threads) */
#define PC_OPT_THREADS { "threads", no_argument, NULL, PC_OPTV_THREADS }
#define PC_OPT_MERGE_THREADS { "merge-threads", no_argument, NULL, PC_OPTV_MERGE_THREADS }
#define PC_OPT_WEIGHT { "weight", required_argument, NULL, PC_OPTV_WEIGHT }
#define PC_OPT_FORMAT { "format", required_argument, NULL, 'f' }
#define PC_OPT_OUTPUT { "output", required_argument, NULL, 'o' }
#define PC_OPT_ROWS { "rows", required_argument, NULL, PC_OPTV_ROWS }
#define PC_OPT_COLOR { "color", required_argument, NULL, PC_OPTV_COLOR }
#define PC_OPT_INPUT { "input", required_argument, NULL, PC_OPTV_INPUT }
#define PC_OPT_NO_DAEMON { "no-daemon", no_argument, NULL, PC_OPTV_NO_DAEMON }
#define PC_OPT_DRY_RUN { "dry-run", no_argument, NULL, PC_OPTV_DRY_RUN }
#define PC_OPT_PER_CALL { "per-call", no_argument, NULL, PC_OPTV_PER_CALL }
#define PC_OPT_PER_FRAME { "per-frame", no_argument, NULL, PC_OPTV_PER_FRAME }
#define PC_OPT_SLOW { "slow", required_argument, NULL, PC_OPTV_SLOW }
#define PC_OPT_COUNT { "count", required_argument, NULL, PC_OPTV_COUNT }
#define PC_OPT_COMPENSATE { "compensate", no_argument, NULL, PC_OPTV_COMPENSATE }
#define PC_OPT_DELAY { "delay", required_argument, NULL, 'd' }
#define PC_OPT_ITERATIONS { "iterations", required_argument, NULL, 'n' }
#define PC_OPT_LISTEN { "listen", required_argument, NULL, PC_OPTV_LISTEN }
#define PC_OPT_MAX_ZONES { "max-zones", required_argument, NULL, PC_OPTV_MAX_ZONES }
#define PC_OPT_MAX_THREADS { "max-threads", required_argument, NULL, PC_OPTV_MAX_THREADS }
#define PC_OPT_TIMEOUT { "timeout", required_argument, NULL, PC_OPTV_TIMEOUT }
#define PC_OPT_ALL_USERS { "all-users", no_argument, NULL, PC_OPTV_ALL_USERS }
/* every table has it: pc_parse_opts prints the verb's usage */
#define PC_OPT_HELP { "help", no_argument, NULL, 'h' }
#define PC_OPT_END { NULL, 0, NULL, 0 }
/* getopt_long stops at the NULL name; pc_parse_opts reads the value */
#define PC_OPT_END_OPERANDS { NULL, 0, NULL, 1 }
/* clang-format on */

/* the --help lines of options that several verbs word alike, so that they
 * stay alike */
#define PC_USAGE_OUTPUT "  -o, --output FILE    write there instead of stdout\n"
#define PC_USAGE_SINCE                                                                \
	"      --since-reset    count from your last `profctl reset` (the default)\n" \
	"      --since-start    count from the process start, ignoring resets\n"
#define PC_USAGE_COLOR                                                                  \
	"      --color WHEN     auto (default: a terminal, NO_COLOR unset or empty),\n" \
	"                       always, never\n"
#define PC_USAGE_NO_DAEMON "      --no-daemon      do not ask profd (also PROFCTL_NO_DAEMON=1)\n"

struct pc_opts;
/* a verb's options from table (see above); usage is its --help text.  0,
 * -1 after --help, or an exit status (2: bad usage, said).  With operands,
 * o->args is the first; without, an operand is bad usage */
int pc_parse_opts(int argc, char **argv, const char *usage, const struct option *table,
		  struct pc_opts *o);

#endif /* PROFCTL_OPTS_H */
