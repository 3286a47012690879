/* SPDX-License-Identifier: MIT */
/*
 * bench/sqlite_zone.h - the zone bench/sqlite.sh puts at the top of each
 * hot function of SQLite's amalgamation (forced in with -include), three
 * ways by BENCH_MODE:
 *	0  nothing: the bare build
 *	1  a hand-written rdtsc pair into a per-site thread-local
 *	   accumulator (ticks and calls), the floor a zone is measured against
 *	2  PROF_USDT(name)
 * BENCH_ZONE(id, name): id is the site's index, 0 .. BENCH_NSITES - 1.
 */
#ifndef BENCH_SQLITE_ZONE_H
#define BENCH_SQLITE_ZONE_H

/* what sqlite3.c defines before its own includes, which this header
 * now comes before (the same in every mode) */
#define _LARGE_FILE 1
#define _FILE_OFFSET_BITS 64
#define _LARGEFILE_SOURCE 1
#define _GNU_SOURCE

#if BENCH_MODE == 1
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

struct bench_acc {
	unsigned long long ticks, calls;
};
struct bench_pair {
	struct bench_acc *acc;
	unsigned long long t0;
};
static __thread struct bench_acc bench_acc[BENCH_NSITES];

static inline void bench_pair_end(struct bench_pair *p)
{
	p->acc->ticks += __rdtsc() - p->t0;
	p->acc->calls++;
}

/* the main thread's zones to the file BENCH_COUNT names: the sum, then
 * each site's (its index, its calls) */
__attribute__((destructor)) static void bench_count(void)
{
	const char *path = getenv("BENCH_COUNT");
	unsigned long long calls = 0;
	FILE *f;
	int i;

	if (!path || !(f = fopen(path, "w")))
		return;
	for (i = 0; i < BENCH_NSITES; i++)
		calls += bench_acc[i].calls;
	fprintf(f, "%llu\n", calls);
	for (i = 0; i < BENCH_NSITES; i++)
		fprintf(f, "%d %llu\n", i, bench_acc[i].calls);
	fclose(f);
}

#define BENCH_ZONE(id, name)                \
	struct bench_pair bench_pair_##name \
		__attribute__((cleanup(bench_pair_end))) = { &bench_acc[id], __rdtsc() }
#elif BENCH_MODE == 2
#include <prof.h>
#define BENCH_ZONE(id, name) PROF_USDT(name)
#else
#define BENCH_ZONE(id, name)
#endif

#endif
