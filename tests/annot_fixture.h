/* SPDX-License-Identifier: MIT */
/*
 * annot_fixture.h - what the tests of named locks and plots share: a lock
 * or a plot of a snapshot's annotations by name, and a live process's
 * profile saved through profctl and read back from the file as JSON.
 */
#ifndef PROF_ANNOT_FIXTURE_H
#define PROF_ANNOT_FIXTURE_H

#include "profctl_child.h"

/* a's lock called name, or NULL (a may be NULL: none) */
static inline const struct prof_annot_lock_sum *lock_named(const struct prof_snap_annot *a,
							   const char *name)
{
	size_t i;

	for (i = 0; a && i < a->nlocks; i++)
		if (!strcmp(a->locks[i].name, name))
			return &a->locks[i];
	return NULL;
}

/* a's plot called name, or NULL (a may be NULL: none) */
static inline const struct prof_annot_plot_sum *plot_named(const struct prof_snap_annot *a,
							   const char *name)
{
	size_t i;

	for (i = 0; a && i < a->nplots; i++)
		if (!strcmp(a->plots[i].name, name))
			return &a->plots[i];
	return NULL;
}

/* process pid's profile since its start saved into file (no profd), then
 * reported from that file as JSON into json */
static inline void saved_json(const char *pid, const char *file, const char *json)
{
	assert_int_equal(profctl((const char *[]){ "save", "--pid", pid, "--no-daemon",
						   "--since-start", "-o", file, NULL }),
			 0);
	assert_int_equal(profctl((const char *[]){ "report", "--input", file, "--format", "json",
						   "-o", json, NULL }),
			 0);
}

#endif /* PROF_ANNOT_FIXTURE_H */
