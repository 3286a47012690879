// SPDX-License-Identifier: MIT
/*
 * profctl_annot.c - a live process's plots and locks (annot.h) beside its
 * report: read from its segment (through profd, or directly), summed by
 * name, put in the JSON tree ("plots", "locks") and after the text tree
 * (a "locks" section).  They count from the program's start: a reset or
 * --last does not window them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "annot.h"
#include "fmt.h"
#include "profctl.h"

void pc_annot_free(struct prof_snap_annot *a)
{
	if (!a)
		return;
	free(a->plots);
	free(a->locks);
	free(a);
}

struct prof_snap_annot *pc_annot_read(struct pc_src *src, const struct prof_snapshot *s)
{
	struct prof_snap_annot *out;
	struct prof_annot *a;
	const void *mem;
	long np, nl;
	size_t len;

	/* a live process's only: a gone one's segment is no more */
	if (!s->pid || prof_proc_start_token((pid_t)s->pid) != s->start_token ||
	    pc_src_map(src, (pid_t)s->pid, &mem, &len) || prof_seg_annot(mem, len, &a))
		return NULL;
	out = calloc(1, sizeof(*out));
	np = out ? prof_annot_plot_sums(a, &out->plots) : -ENOMEM;
	nl = np >= 0 ? prof_annot_lock_sums(a, &out->locks) : -ENOMEM;
	prof_annot__destroy(a);
	if (np < 0 || nl < 0 || (!np && !nl)) {
		pc_annot_free(out);
		return NULL;
	}
	out->nplots = (size_t)np;
	out->nlocks = (size_t)nl;
	return out;
}

/*
 * The text report's locks: per lock, acquisitions, how many waited, the
 * time waited (total, longest) and held (total, longest), and with profd
 * how many waits slept in the kernel
 */
void pc_render_locks(FILE *f, const struct prof_snapshot *s)
{
	const struct prof_snap_annot *a = s->annot;
	char b[4][16];
	size_t i;

	if (!a || !a->nlocks)
		return;
	fprintf(f, "\nlocks of pid %u (since its start):\n", s->pid);
	fprintf(f, "  %-24s %10s %10s %9s %9s %9s %9s %8s %6s\n", "lock", "acquired", "contended",
		"waited", "wait max", "held", "hold max", "blocked", "unheld");
	for (i = 0; i < a->nlocks; i++) {
		const struct prof_annot_lock_sum *l = &a->locks[i];
		char blocked[24];

		if (l->kernel_waits)
			snprintf(blocked, sizeof(blocked), "%llu", (unsigned long long)l->blocked);
		else
			snprintf(blocked, sizeof(blocked), "-");
		fprintf(f, "  %-24s %10llu %10llu %9s %9s %9s %9s %8s %6llu\n", l->name,
			(unsigned long long)l->acquisitions, (unsigned long long)l->contended,
			prof_fmt_ns(b[0], sizeof(b[0]), prof_snap_ns(s, l->wait_ticks)),
			prof_fmt_ns(b[1], sizeof(b[1]), prof_snap_ns(s, l->wait_max)),
			prof_fmt_ns(b[2], sizeof(b[2]), prof_snap_ns(s, l->hold_ticks)),
			prof_fmt_ns(b[3], sizeof(b[3]), prof_snap_ns(s, l->hold_max)), blocked,
			(unsigned long long)l->unheld);
	}
}
