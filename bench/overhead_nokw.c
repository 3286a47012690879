// SPDX-License-Identifier: MIT
/* overhead_nokw.c - the prof variant without the kernel-word reads */
#define PROF_NO_KERNEL_WORD 1
#include "prof.h"
#include "overhead.h"

unsigned long bench_calls;

uint64_t bench_run_nokw(void)
{
	uint64_t x = 1;

	for (unsigned long i = 0; i < bench_calls; i++) {
		PROF_USDT(bench_zone_nokw);
		x = bench_work(x);
	}
	return x;
}
