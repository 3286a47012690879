/* SPDX-License-Identifier: MIT */
/*
 * annot_util.h - the tests' reading of their own process's annotations
 * (annot.h), as profctl reads them.  Include after testutil.h.
 */
#ifndef ANNOT_UTIL_H
#define ANNOT_UTIL_H

#include "annot.h"

/* this process's annotations, read as profctl reads them */
static inline struct prof_annot *own_annot(void)
{
	struct prof_annot *a;
	size_t len = 0;
	void *seg = test_own_segment(&len);

	assert_int_equal(prof_seg_annot(seg, len, &a), 0);
	munmap(seg, len);
	return a;
}

static inline const struct prof_annot_thread *annot_of(const struct prof_annot *a, __u32 tid)
{
	__u32 i;

	for (i = 0; i < a->nthreads; i++)
		if (a->threads[i].tid == tid)
			return &a->threads[i];
	fail_msg("no annotations of tid %u", tid);
	return NULL;
}

#endif /* ANNOT_UTIL_H */
