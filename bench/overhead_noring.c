// SPDX-License-Identifier: MIT
/* overhead_noring.c - the prof variant without the event ring */
#define PROF_NO_RING 1
#define __PROF_LEAVE bench_leave_noring
#include "prof.h"
#include "zone_leave.h"
#include "overhead.h"

/* the exit, out of line as the runtime's __prof_leave, without the event ring */
static __attribute__((noinline)) void bench_leave_noring(struct __prof_zone *z)
{
	__prof_leave_body(z);
}

extern unsigned long bench_calls;

uint64_t bench_run_noring(void)
{
	BENCH_ZONE_LOOP(bench_zone_noring, bench_calls, (void)i);
}
