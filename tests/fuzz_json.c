// SPDX-License-Identifier: MIT
/*
 * fuzz_json.c - libFuzzer target: arbitrary bytes as a JSON report read by
 * `profctl report --input` (daemon/profctl/report_load.h).  The loader
 * must refuse them with a line saying why or build a snapshot, and what
 * it builds must render in every view the reader's target renders.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the reader asks the runtime (usdt/prof.c) for a live process's start
 * token; a report is no live process, and the fuzzer links no runtime */
__u64 prof_proc_start_token(pid_t pid)
{
	(void)pid;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_report_opts o = { .sort = PROF_SORT_P99 };
	struct prof_snapshot *s = NULL;
	struct prof_flat_row *rows;
	char why[256];
	size_t n;
	FILE *null;

	why[0] = '\0';
	if (prof_json_load(data, size, &s, why, sizeof(why))) {
		/* refused: with one line saying why */
		if (!why[0] || strchr(why, '\n') || s)
			abort();
		return 0;
	}
	null = fopen("/dev/null", "w");
	prof_report_text(null, s, &o);
	prof_report_json(null, &s, 1);
	fclose(null);
	if (!prof_snap_flat(s, 0, PROF_SORT_TOTAL, &rows, &n))
		free(rows);
	prof_snapshot__destroy(s);
	return 0;
}
