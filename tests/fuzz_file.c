// SPDX-License-Identifier: MIT
/*
 * fuzz_file.c - libFuzzer target: arbitrary bytes as a saved profile
 * (usdt/proffile.h).  The loader must refuse them or rebuild an image
 * without a crash, and whatever image it rebuilds the reader must refuse
 * or read, and what it reads must render.  The hash is not checked: the
 * fuzzer would rarely get past it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_render.h"
#include "proffile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_snapshot *s = NULL;
	struct prof_file_hdr h;
	void *img;

	/* small images only: the reader's own target covers big geometry */
	if (prof_file_check(data, size, 16u << 20, &h))
		return 0;
	img = aligned_alloc(4096, (h.image_size + 4095) & ~(__u64)4095);
	if (!img)
		return 0;
	memset(img, 0, h.image_size);
	if (prof_file_decode(data, size, img, h.image_size, PROF_FILE_NO_HASH) ||
	    prof_snapshot__read(img, h.image_size, &s)) {
		free(img);
		return 0;
	}
	fuzz_render(s);
	prof_snapshot__destroy(s);
	free(img);
	return 0;
}
