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

#include "fuzz_render.h"
#include "report_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_snapshot *s = NULL;
	char why[256];

	why[0] = '\0';
	if (prof_json_load(data, size, &s, why, sizeof(why))) {
		/* refused: with one line saying why */
		if (!why[0] || strchr(why, '\n') || s)
			abort();
		return 0;
	}
	fuzz_render(s);
	prof_snapshot__destroy(s);
	return 0;
}
