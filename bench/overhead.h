/* SPDX-License-Identifier: MIT */
/* overhead.h - the variants of bench/overhead.c built apart */
#ifndef PROF_BENCH_OVERHEAD_H
#define PROF_BENCH_OVERHEAD_H
#include <stdint.h>

uint64_t bench_work(uint64_t x);
/* PROF_USDT with the kernel word compiled out (overhead_nokw.c) */
uint64_t bench_run_nokw(void);
/* PROF_USDT with the event ring compiled out (overhead_noring.c) */
uint64_t bench_run_noring(void);
extern unsigned long bench_calls;

/*
 * The loop every zone variant measures, written once so that the variants
 * differ only by what they add: a zone around the work, then also (the
 * call's index is i).  The body of a run function: it returns.
 */
#define BENCH_ZONE_LOOP(zone, n, also)                  \
	uint64_t x = 1;                                 \
	for (unsigned long i = 0; i < (n); i++) {       \
		PROF_USDT(zone);                        \
		x = bench_work(x);                      \
		also;                                   \
	}                                               \
	return x

#endif
