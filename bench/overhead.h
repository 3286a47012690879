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

#endif
