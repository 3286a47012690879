// SPDX-License-Identifier: MIT
/* overhead_nokw.c - the prof variant without the kernel-word reads */
#define PROF_NO_KERNEL_WORD 1
#define __PROF_LEAVE bench_leave_nokw
#include "prof.h"
#include "zone_leave.h"
#include "overhead.h"

/* the exit, out of line as the runtime's __prof_leave, without the kernel word */
static __attribute__((noinline)) void bench_leave_nokw(struct __prof_zone *z)
{
	__prof_leave_body(z);
}

unsigned long bench_calls;

uint64_t bench_run_nokw(void)
{
	BENCH_ZONE_LOOP(bench_zone_nokw, bench_calls, (void)i);
}
