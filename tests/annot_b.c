// SPDX-License-Identifier: MIT
/*
 * annot_b.c - a second file of test_annot_window: the lock and the plot
 * it uses are named as in the first, with no declaration, and are the
 * same lock and plot (prof(3): a name is one lock or plot per process).
 */
#include <pthread.h>
#include "prof.h"

void annot_b_use(int n);

static pthread_mutex_t b_mutex = PTHREAD_MUTEX_INITIALIZER;

void annot_b_use(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (PROF_MUTEX_LOCK(aw_shared, &b_mutex) == 0)
			(void)PROF_MUTEX_UNLOCK(aw_shared, &b_mutex);
		PROF_PLOT(aw_sharedp, 100 + i);
	}
}
