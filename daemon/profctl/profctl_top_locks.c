// SPDX-License-Identifier: MIT
/*
 * profctl_top_locks.c - `profctl top`'s named locks: each lock's rates over
 * the interval, from two successive frames of its figures by name.
 */
#include <stdio.h>
#include <string.h>
#include "annot.h"
#include "profctl.h"

/* a counter's growth from then to now; none where it went back (the
 * process was reset, or is another one, between the frames), as a zone's
 * window takes it */
static double grown(__u64 now, __u64 then)
{
	return now > then ? (double)(now - then) : 0.0;
}

int pc_top_locks(FILE *f, const struct prof_snap_annot *a, const struct prof_snap_annot *b,
		 double dt, __u64 tick_hz, int left, const char *el)
{
	static const struct prof_annot_lock_sum none;
	double dticks = dt * (double)tick_hz;
	size_t i, j;
	int used = 0;

	/* rates need two samples */
	if (!a || !b || !a->nlocks || left < 2 || dt <= 0)
		return 0;
	fprintf(f, "%-28s %12s %12s %8s %8s%s\n", "lock", "acquired/s", "contended/s", "wait%",
		"hold%", el);
	used++;
	for (i = 0; i < a->nlocks && used < left; i++, used++) {
		const struct prof_annot_lock_sum *l = &a->locks[i], *p = &none;

		for (j = 0; j < b->nlocks; j++)
			if (!strcmp(b->locks[j].name, l->name)) {
				p = &b->locks[j];
				break;
			}
		fprintf(f, "%-28.28s %12.1f %12.1f %7.1f%% %7.1f%%%s\n", l->name,
			grown(l->acquisitions, p->acquisitions) / dt,
			grown(l->contended, p->contended) / dt,
			100.0 * grown(l->wait_ticks, p->wait_ticks) / dticks,
			100.0 * grown(l->hold_ticks, p->hold_ticks) / dticks, el);
	}
	return used;
}
