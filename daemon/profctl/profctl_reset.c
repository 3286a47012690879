// SPDX-License-Identifier: MIT
/*
 * profctl_reset.c - profctl reset: the next reports count from now (a baseline
 * of the caller's own, profctl_src.c).
 */
#include <stdlib.h>
#include "profctl.h"
#include "prof.h"

static const char usage_reset[] =
	"usage: profctl reset [--pid P] [--no-daemon]\n"
	"\n"
	"  -p, --pid P          one process (default: every live process of yours)\n"
	PC_USAGE_NO_DAEMON
	"\n"
	"Your next reports of P count from now.  Nothing is written to the process:\n"
	"profctl keeps its counters as they are now in a file of yours\n"
	"($XDG_RUNTIME_DIR or /dev/shm, mode 0600), the reset's only record.  So a\n"
	"reset is yours alone (another user's reports of P are as they were), holds\n"
	"with or without profd and across its restarts, and goes with the file\n"
	"(profctl clean removes those of processes gone).  If another user took the\n"
	"file's name first, it is kept under another (said), where your reports find it.\n";

static const struct option reset_options[] = {
	PC_OPT_PID,
	PC_OPT_NO_DAEMON,
	PC_OPT_HELP,
	PC_OPT_END,
};

int pc_cmd_reset(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src;
	struct pc_proc *procs = NULL;
	size_t np = 0, i;
	int err, ret = 0;

	err = pc_parse_opts(argc, argv, usage_reset, reset_options, &o);
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
