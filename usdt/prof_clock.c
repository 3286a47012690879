// SPDX-License-Identifier: MIT
/*
 * usdt/prof_clock.c - the runtime's clock: the counter __prof_now reads, its rate
 * (calibrated once per process), and the monotonic clock beside it.
 */
#define _GNU_SOURCE
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "zone_leave.h"
#include "runtime.h"
#include "snapshot.h"
#include "proffile.h"
#include "funcname.h"
#include "prof_int.h"

__u64 prof_mono_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

uint64_t __prof_clock_mono(void)
{
	return prof_mono_ns(CLOCK_MONOTONIC);
}

/* the counter __prof_now reads runs at one rate on every CPU */
static bool counter_usable(void)
{
#if defined(__x86_64__)
	unsigned int a, b, c, d;

	/* the invariant TSC bit */
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d))
		return false;
	return d & (1u << 8);
#else
	/* aarch64: the generic timer's virtual count has a fixed frequency */
	return true;
#endif
}

void __prof_exit_probe(const struct prof_site *site, uint64_t ticks)
{
	site->exit_probe(site->name, site->file, site->line, prof_ticks_to_ns(ticks));
}

/*
 * Pick the clock and find its rate, once per process: every reader
 * converts with the published rate.  aarch64 says it (cntfrq_el0); the TSC
 * is measured against CLOCK_MONOTONIC_RAW over ~2 ms.
 */
__u64 prof_clock_calibrate(void)
{
	/* written only when it changes: a fork child recalibrates while the
	 * fast path of its thread may read it */
	if (prof_env.clock_mono || !counter_usable()) {
		if (__prof_clock_tsc)
			__prof_clock_tsc = 0;
		return 1000000000ull;
	}
	if (!__prof_clock_tsc)
		__prof_clock_tsc = 1;
#if defined(__aarch64__)
	{
		__u64 hz;

		__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
		if (hz >= 1000)
			return hz;
		/* firmware left it unset: no rate to trust */
		__prof_clock_tsc = 0;
		return 1000000000ull;
	}
#else
	__u64 t0, r0, t1, r1;

	r0 = prof_mono_ns(CLOCK_MONOTONIC_RAW);
	t0 = __prof_now();
	do
		r1 = prof_mono_ns(CLOCK_MONOTONIC_RAW);
	while (r1 - r0 < 2000000);
	t1 = __prof_now();
	return (__u64)((double)(t1 - t0) * 1e9 / (double)(r1 - r0));
#endif
}

/* a day of ticks: a zone longer than that is a broken clock, not a
 * measurement (an anomaly) */
__u64 prof_day(void)
{
	return (__u64)(86400e9 / prof_rt.ns_per_tick);
}
