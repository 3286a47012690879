// SPDX-License-Identifier: MIT
/*
 * fuzz_reader.c - libFuzzer target: arbitrary bytes as a segment.  The
 * reader must reject or accept them without a crash, and whatever it
 * accepts must render, diff and round-trip through prof_snapshot__write.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annot.h"
#include "fuzz_render.h"
#include "snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_snapshot *s = NULL, *b = NULL, *r = NULL;
	struct prof_flat_row *rows;
	size_t n, len;
	void *img, *mem;
	FILE *null;

	/* segments are page aligned; so is our copy */
	mem = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	if (!mem)
		return 0;
	memcpy(mem, data, size);
	/* the streaming flat pass and the no-histogram read take the same bytes */
	if (!prof_seg_flat(mem, size, 0, PROF_SORT_SELF, &r, &rows, &n)) {
		free(rows);
		prof_snapshot__destroy(r);
		r = NULL;
	}
	{
		struct prof_seg_flat_cache *fc = prof_seg_flat_cache__new();
		int pass;

		/* twice: the second from the threads' cached shares */
		for (pass = 0; fc && pass < 2; pass++)
			if (!prof_seg_flat_cached(mem, size, 0, PROF_SORT_SELF, fc, &r, &rows,
						  &n)) {
				free(rows);
				prof_snapshot__destroy(r);
				r = NULL;
			}
		prof_seg_flat_cache__destroy(fc);
	}
	{
		struct prof_seg_cursor *c = prof_seg_cursor__new();
		struct prof_seg_busy busy;

		/* twice: the second call goes through the cursor's memory */
		if (c && !prof_seg_cursor__sample(c, mem, size, &busy))
			prof_seg_cursor__sample(c, mem, size, &busy);
		prof_seg_cursor__destroy(c);
	}
	{
		struct prof_annot *an;

		/* the annotations, and what profctl derives from them */
		if (!prof_seg_annot(mem, size, &an)) {
			struct prof_annot_lock_sum *ls;
			struct prof_annot_plot_sum *ps;
			__u64 first;
			__u32 i;

			if (prof_annot_lock_sums(an, &ls) >= 0)
				free(ls);
			if (prof_annot_plot_sums(an, &ps) >= 0)
				free(ps);
			for (i = 0; i < an->nthreads; i++)
				if (an->threads[i].nvalues)
					prof_annot_values(&an->threads[i], an->threads[i].values[0].node,
							  an->threads[i].values[0].start, &first);
			prof_annot__destroy(an);
		}
	}
	if (!prof_snapshot__read_opts(mem, size, PROF_READ_NO_HIST, &b)) {
		prof_snapshot__destroy(b);
		b = NULL;
	}
	/* lazily: every thread loaded in turn, quantiles from the segment,
	 * or its histograms copied as it is loaded */
	if (!prof_snapshot__read_opts(mem, size,
				      PROF_READ_LAZY | (size & 1 ? PROF_READ_LAZY_HIST : 0), &b)) {
		struct prof_report_opts lo = { .sort = PROF_SORT_P99, .no_flat = 1 };

		null = fopen("/dev/null", "w");
		prof_report_text(null, b, &lo);
		prof_report_json(null, &b, 1);
		fclose(null);
		if (!prof_snap_flat(b, 0, PROF_SORT_TOTAL, &rows, &n))
			free(rows);
		prof_snapshot__destroy(b);
		b = NULL;
	}
	if (prof_snapshot__read(mem, size, &s)) {
		free(mem);
		return 0;
	}
	fuzz_render(s);
	if (!prof_snapshot__write(s, &img, &len)) {
		/* what we wrote, we read back */
		if (prof_snapshot__read(img, len, &r) || r->nthreads != s->nthreads ||
		    r->nsites != s->nsites)
			abort();
		free(img);
	}
	if (!prof_snapshot__read(mem, size, &b))
		prof_snapshot__diff(s, b);
	{
		/* the locks and plots of the window, summed and shown */
		struct prof_snap_annot *an = prof_snap_annot_sum(s);

		null = fopen("/dev/null", "w");
		s->annot = an;
		prof_report_locks(null, s);
		prof_report_json(null, &s, 1);
		s->annot = NULL;
		fclose(null);
		prof_snap_annot_free(an);
	}
	prof_snapshot__destroy(r);
	prof_snapshot__destroy(b);
	prof_snapshot__destroy(s);
	free(mem);
	return 0;
}
