// SPDX-License-Identifier: MIT
/*
 * report_locks.c - the named locks of a text report, a row a lock summed
 * over its threads and zones (prof_snap_annot_sum): the report at exit and
 * profctl report print the same section, of the same window as the tree
 * above it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "annot.h"
#include "fmt.h"

/* a max a window cannot tell is "-" (figures.h's ALONE) */
static const char *fmt_max(const struct prof_snapshot *s, char *b, size_t n, __u64 ticks)
{
	if (ticks == PROF_SNAP_UNKNOWN)
		return "-";
	return prof_fmt_ns(b, n, prof_snap_ns(s, ticks));
}

/*
 * Per lock: acquisitions, how many waited, the time waited (total,
 * longest) and held (total, longest), with profd how many waits slept in
 * the kernel ("-" without), and releases of a lock not held
 */
void prof_report_locks(FILE *f, const struct prof_snapshot *s)
{
	struct prof_snap_annot *own = NULL;
	const struct prof_snap_annot *a = s->annot;
	char b[4][16];
	size_t i;

	if (!a)
		a = own = prof_snap_annot_sum(s);
	if (!a || !a->nlocks) {
		prof_snap_annot_free(own);
		return;
	}
	fprintf(f, "\nlocks of pid %u:\n", s->pid);
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
			fmt_max(s, b[1], sizeof(b[1]), l->wait_max),
			prof_fmt_ns(b[2], sizeof(b[2]), prof_snap_ns(s, l->hold_ticks)),
			fmt_max(s, b[3], sizeof(b[3]), l->hold_max), blocked,
			(unsigned long long)l->unheld);
	}
	prof_snap_annot_free(own);
}
