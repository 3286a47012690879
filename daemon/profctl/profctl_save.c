// SPDX-License-Identifier: MIT
/*
 * profctl_save.c - profiles that leave the machine as files: `profctl
 * save` writes one (usdt/proffile.h); --input reads one back
 * (profctl_input.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "profctl.h"
#include "profctl_samples.h"
#ifndef PROFCTL_NO_CLIENT
#include "client.h"
#endif
#include "proffile.h"
#include "report_load.h"

static const char usage_save[] =
	"usage: profctl save [--pid P] [--since-reset | --since-start | --last 10s]\n"
	"                    -o FILE [--no-daemon]\n"
	"\n"
	"  -p, --pid P          the process (default: your only profiled process)\n"
	PC_USAGE_SINCE
	"      --last DURATION  the last DURATION (10s, 2m) of profd's history; without\n"
	"                       profd, the next DURATION, measured\n"
	"  -o, --output FILE    the file to write (replaced whole)\n"
	PC_USAGE_NO_DAEMON
	"\n"
	"The process's profile as one compact, versioned file: every thread, zone and\n"
	"histogram, with profd's kernel columns when profd answers.  Read it with\n"
	"`profctl report --input FILE` (every view and format) or `profctl diff`.\n"
	"PROF_SAVE=PATH in a program's environment writes the same at its exit.\n";

static const struct option save_options[] = {
	PC_OPT_PID,	  PC_OPT_SINCE, PC_OPT_LAST, PC_OPT_OUTPUT,
	PC_OPT_NO_DAEMON, PC_OPT_HELP,	PC_OPT_END,
};

int pc_cmd_save(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src = { .fd = -1 };
	struct pc_proc *procs = NULL;
	struct prof_snapshot *s = NULL;
	size_t np = 0, i, alive = 0, pick = 0, len = 0;
	void *buf = NULL;
	FILE *f;
	int err, ret = 1;

	err = pc_parse_opts(argc, argv, usage_save, save_options, &o);
	if (err)
		return err < 0 ? 0 : err;
	if (!o.out || !strcmp(o.out, "-")) {
		pc_warnx("save: -o FILE says where (a profile is binary: not to stdout)");
		return 2;
	}
	{
		char fallback[96];

		/* without profd's history, --last measures the next seconds
		 * (pc_src_snapshot), as report does */
		snprintf(fallback, sizeof(fallback),
			 "no history: measuring the next %us of the process directly", o.last_s);
		pc_src_open_said(&src, &o, o.mode == PROFD_SNAP_LAST ? fallback : NULL);
	}
	/* every node and histogram: the file is the whole profile */
	src.read_flags = 0;
	if (!o.pid) {
		err = pc_src_list(&src, &procs, &np);
		if (err) {
			pc_warnx("failed to list profiled processes: %s", strerror(-err));
			goto cleanup;
		}
		for (i = 0; i < np; i++)
			if (procs[i].alive)
				alive++, pick = i;
		if (alive != 1) {
			pc_warnx("save: %s: say which with --pid",
				 alive ? "more than one profiled process"
				       : "no live profiled process of yours");
			goto cleanup;
		}
		o.pid = procs[pick].pid;
	}
	err = pc_src_snapshot(&src, o.pid, o.mode, o.last_s, &s);
	if (err)
		goto cleanup;
	/* written as every -o output is (pc_out_open) */
	err = prof_file_encode(s, &buf, &len);
	/* profd's sampled stacks go with it, symbolized: a file read on
	 * another machine needs no binaries */
#ifndef PROFCTL_NO_CLIENT
	if (!err && src.fd >= 0) {
		struct profd_samples_rep rep = { 0 };
		char *text = NULL;
		size_t tlen = 0;

		if (!profd_samples(src.fd, o.pid, &text, &tlen, &rep))
			err = pc_file_add_samples(&buf, &len, text, tlen, rep.hz);
		free(text);
	}
#endif
	if (err) {
		pc_warnx("%s: failed to save: %s", o.out, prof_file_strerror(err));
		goto cleanup;
	}
	f = pc_open_out(&o);
	if (!f)
		goto cleanup;
	fwrite(buf, 1, len, f);
	if (pc_close_out(f, &o))
		goto cleanup;
	ret = 0;
cleanup:
	free(buf);
	prof_snapshot__destroy(s);
	free(procs);
	pc_src_close(&src);
	return ret;
}
