/* SPDX-License-Identifier: MIT */
/*
 * nest_work.h - a thread's work of nested and recursive zones, for the
 * tests that read a live segment against a full read (test_segflat,
 * test_cursor): 1000 rounds of nest_outer > nest_inner > nest_rec
 * recursing up to three deep, and nest_rec twice deep beside it.
 */
#ifndef PROF_NEST_WORK_H
#define PROF_NEST_WORK_H

#include "prof.h"

static int nest_rec(int n)
{
	PROF_USDT(nest_rec);
	return n ? nest_rec(n - 1) + 1 : 0;
}

/* a pthread start routine; arg returned */
static void *nest_work(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		PROF_USDT(nest_outer);
		{
			PROF_USDT(nest_inner);
			nest_rec(i % 4);
		}
		nest_rec(2);
	}
	return arg;
}

#endif /* PROF_NEST_WORK_H */
