/* SPDX-License-Identifier: MIT */
/*
 * fuzz_render.h - what the fuzz targets share: the runtime's start token
 * stubbed, and a snapshot rendered in the views that walk all of it.
 */
#ifndef FUZZ_RENDER_H
#define FUZZ_RENDER_H

#include <stdio.h>
#include <stdlib.h>
#include "snapshot.h"

/* the reader asks the runtime (usdt/prof_proc.c) for a live process's start
 * token; what a fuzzer reads is no live process, and it links no runtime */
__u64 prof_proc_start_token(pid_t pid)
{
	(void)pid;
	return 0;
}

/* the text report, the JSON tree and the flat rows of s, to nowhere */
static inline void fuzz_render(struct prof_snapshot *s)
{
	struct prof_report_opts o = { .sort = PROF_SORT_P99 };
	struct prof_flat_row *rows;
	size_t n;
	FILE *null = fopen("/dev/null", "w");

	if (null) {
		prof_report_text(null, s, &o);
		prof_report_json(null, &s, 1);
		fclose(null);
	}
	if (!prof_snap_flat(s, 0, PROF_SORT_TOTAL, &rows, &n))
		free(rows);
}

#endif /* FUZZ_RENDER_H */
