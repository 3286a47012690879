// SPDX-License-Identifier: MIT
/* overhead_noring.c - the prof variant without the event ring */
#define PROF_NO_RING 1
#include "prof.h"
#include "overhead.h"

extern unsigned long bench_calls;

uint64_t bench_run_noring(void)
{
	uint64_t x = 1;

	for (unsigned long i = 0; i < bench_calls; i++) {
		PROF_USDT(bench_zone_noring);
		x = bench_work(x);
	}
	return x;
}
