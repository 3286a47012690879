// SPDX-License-Identifier: MIT
/*
 * profctl_cli.c - profctl's verbs by name and its own --help; each verb is
 * a file of its own (profctl_VERB.c) with its options' table
 * (profctl_opts.h).  Exit status: 0, 1 on an error (one line on stderr),
 * 2 on bad usage.
 */
#include <string.h>
#include "profctl.h"
#include "profctl_samples.h"
#include "prof.h"

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

static const struct {
	const char *name;
	int (*fn)(int, char **);
} verbs[] = {
	{ "report", pc_cmd_report }, { "list", pc_cmd_list },	  { "reset", pc_cmd_reset },
	{ "top", pc_cmd_top },	     { "status", pc_cmd_status }, { "zones", pc_cmd_zones },
	{ "clean", pc_cmd_clean },   { "save", pc_cmd_save },	  { "diff", pc_cmd_diff },
	{ "serve", pc_cmd_serve },   { "trace", pc_cmd_trace },
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

	/* a file's samples are the invocation's that read it (tests run many) */
	pc_file_samples_forget();
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
