/* SPDX-License-Identifier: MIT */
/*
 * migrate_zones.h - the workload whose kernel facts the root tests of profd
 * know in advance, run by their children (profd_fixture.h) and by the
 * program inside their containers (ctr_payload.c): MIGR_CALLS calls of
 * migrate_zone, each moving itself to the other cpu, between two calls
 * each of stay_zone, which stays.  Include after prof.h.
 */
#ifndef PROF_TEST_MIGRATE_ZONES_H
#define PROF_TEST_MIGRATE_ZONES_H

#include <sched.h>
#include <time.h>

#define MIGR_CALLS 20

/* on cpu for ns nanoseconds */
static inline void zones_spin(unsigned long long ns)
{
	struct timespec ts;
	unsigned long long now, end = 0;

	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
		if (!end)
			end = now + ns;
	} while (now < end);
}

static inline void set_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static inline void migrate_zone(int to)
{
	PROF_USDT(migrate_zone);
	set_cpu(to);
	zones_spin(200000);
}

static inline void stay_zone(void)
{
	PROF_USDT(stay_zone);
	zones_spin(200000);
}

/* the workload, from cpu 0 */
static inline void migrate_calls(void)
{
	int i, cpu = 0;

	set_cpu(cpu);
	for (i = 0; i < MIGR_CALLS; i++) {
		stay_zone();
		cpu ^= 1;
		migrate_zone(cpu);
		stay_zone();
	}
}

#endif /* PROF_TEST_MIGRATE_ZONES_H */
