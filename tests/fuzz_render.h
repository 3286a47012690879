/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz_render.h - what the fuzz targets share: what /proc says
 * stubbed, and a snapshot rendered in the views that walk all of it (its
 * locks and plots too).
 */
#ifndef FUZZ_RENDER_H
#define FUZZ_RENDER_H

#include <stdio.h>
#include <stdlib.h>
#include "snapshot.h"

/* what /proc says of a live process (usdt/prof_proc.c): what a fuzzer
 * reads is no live process, and it links no runtime */
void prof_snapshot__add_proc(struct prof_snapshot *s, __u32 tid)
{
	(void)s;
	(void)tid;
}

/* the text report, the JSON tree and the flat rows of s, to nowhere */
static inline void fuzz_render(struct prof_snapshot *s)
{
	struct prof_report_opts o = { .sort = PROF_SORT_P99 };
	struct prof_flat_row *rows;
	size_t n;
	FILE *null = fopen("/dev/null", "w");

	if (null) {
		/* the locks and plots summed by name, as profctl gives them */
		struct prof_snap_annot *a = prof_snap_annot_sum(s);

		prof_report_text(null, s, &o);
		s->annot = a;
		prof_report_json(null, &s, 1);
		s->annot = NULL;
		prof_snap_annot_free(a);
		fclose(null);
	}
	if (!prof_snap_flat(s, 0, PROF_SORT_TOTAL, &rows, &n))
		free(rows);
}

#endif /* FUZZ_RENDER_H */
