// SPDX-License-Identifier: MIT
/*
 * profd_tsc.c - may a TSC delta be trusted across CPUs on this machine?
 *
 * A zone that migrated read its two TSC values on two CPUs.  Where the
 * TSCs are synchronized that delta is exact, and a migration is a fact
 * about the call (another core, cold caches), not a doubt about its time.
 * profd decides once, at start: the kernel keeps "tsc" as its clocksource
 * only while its own checks find the TSC stable and synchronized; the CPU
 * must say constant_tsc and nonstop_tsc; and a measurement here must never
 * see time go backwards between two CPUs (one writes its TSC, the other
 * reads it and then its own, many times, both ways, for every CPU against
 * the first).  Runtimes learn the verdict when they register.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "profd.h"

#define TSC_ROUNDS 5000

static struct profd_tsc tsc;

#if defined(__x86_64__) || defined(__i386__)
static inline __u64 rdtsc_ordered(void)
{
	unsigned int lo, hi;

	/* rdtscp waits for earlier loads; lfence keeps later ones after it */
	__asm__ volatile("rdtscp; lfence" : "=a"(lo), "=d"(hi) : : "rcx", "memory");
	return ((__u64)hi << 32) | lo;
}

struct warp {
	int cpu;
	volatile __u64 *slot;	/* the writer's TSC, 0 when taken */
	volatile int *go;	/* 1: start; 2: stop (the reader gave up) */
	__u64 back;		/* largest backwards step the reader saw, ticks */
};

#define TSC_BUDGET_NS 200000000ull /* a pair's test on a busy machine: then no verdict */

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* the writer: its TSC, as soon as the last one was taken */
static void *warp_writer(void *arg)
{
	struct warp *w = arg;
	int i;

	pin(w->cpu);
	while (!*w->go)
		;
	for (i = 0; i < TSC_ROUNDS && *w->go == 1; i++) {
		while (__atomic_load_n(w->slot, __ATOMIC_ACQUIRE) && *w->go == 1)
			;
		__atomic_store_n(w->slot, rdtsc_ordered(), __ATOMIC_RELEASE);
	}
	return NULL;
}

/* the reader, on the other CPU: its own TSC after the writer's; -ETIME if
 * the machine is too busy to finish in the budget */
static int warp_reader(int cpu, volatile __u64 *slot, volatile int *go, __u64 *backp)
{
	__u64 back = 0, theirs, mine, end = profd_now_ns() + TSC_BUDGET_NS;
	int i;

	pin(cpu);
	*go = 1;
	for (i = 0; i < TSC_ROUNDS; i++) {
		while (!(theirs = __atomic_load_n(slot, __ATOMIC_ACQUIRE)))
			if (profd_now_ns() > end) {
				*go = 2;
				return -ETIME;
			}
		mine = rdtsc_ordered();
		if (mine < theirs && theirs - mine > back)
			back = theirs - mine;
		__atomic_store_n(slot, 0, __ATOMIC_RELEASE);
	}
	*backp = back;
	return 0;
}

/* the largest backwards step between cpu a writing and cpu b reading */
static int warp_pair(int a, int b, __u64 *back)
{
	volatile __u64 slot = 0;
	volatile int go = 0;
	struct warp w = { a, &slot, &go, 0 };
	pthread_t t;

	int err;

	if (pthread_create(&t, NULL, warp_writer, &w))
		return -EAGAIN;
	err = warp_reader(b, &slot, &go, back);
	pthread_join(t, NULL);
	return err;
}
#endif

/* the first line of a small file, without its newline */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* does /proc/cpuinfo's first flags line name every flag in want? */
static bool cpu_flags(const char *const *want, const char **missing)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "re");
	bool ok = false;

	*missing = want[0];
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char pad[4096 + 2];
		int i;

		if (strncmp(line, "flags", 5))
			continue;
		snprintf(pad, sizeof(pad), " %s", strchr(line, ':') ? strchr(line, ':') + 1 : "");
		pad[strcspn(pad, "\n")] = ' ';
		ok = true;
		for (i = 0; want[i]; i++) {
			char tok[64];

			snprintf(tok, sizeof(tok), " %s ", want[i]);
			if (!strstr(pad, tok)) {
				*missing = want[i];
				ok = false;
				break;
			}
		}
		break;
	}
	fclose(f);
	return ok;
}

void profd_tsc_check(void)
{
	static const char *const want[] = { "constant_tsc", "nonstop_tsc", NULL };
	char cs[64] = "";
	const char *missing;
	cpu_set_t old;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	tsc.synced = false;
	if (read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs,
		      sizeof(cs)) ||
	    strcmp(cs, "tsc")) {
		snprintf(tsc.why, sizeof(tsc.why), "the kernel's clocksource is %s, not tsc",
			 cs[0] ? cs : "unknown");
		return;
	}
	if (!cpu_flags(want, &missing)) {
		snprintf(tsc.why, sizeof(tsc.why), "the CPU does not say %s", missing);
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	if (sched_getaffinity(0, sizeof(old), &old))
		CPU_ZERO(&old);
	tsc.rounds = 0;
	for (int c = 1; c < ncpu; c++) {
		__u64 b1 = 0, b2 = 0;

		if (warp_pair(0, c, &b1) || warp_pair(c, 0, &b2)) {
			if (CPU_COUNT(&old))
				sched_setaffinity(0, sizeof(old), &old);
			snprintf(tsc.why, sizeof(tsc.why),
				 "the cross-CPU test could not finish (a busy machine)");
			return;
		}
		if (b1 > tsc.back_ticks)
			tsc.back_ticks = b1;
		if (b2 > tsc.back_ticks)
			tsc.back_ticks = b2;
		tsc.rounds += 2 * TSC_ROUNDS;
	}
	if (CPU_COUNT(&old))
		sched_setaffinity(0, sizeof(old), &old);
	if (tsc.back_ticks) {
		snprintf(tsc.why, sizeof(tsc.why),
			 "time went back %llu ticks from one CPU to another",
			 (unsigned long long)tsc.back_ticks);
		return;
	}
	tsc.synced = true;
	snprintf(tsc.why, sizeof(tsc.why),
		 "clocksource tsc, constant_tsc nonstop_tsc, never backwards in %llu cross-CPU reads",
		 (unsigned long long)tsc.rounds);
#else
	(void)ncpu;
	(void)old;
	snprintf(tsc.why, sizeof(tsc.why), "no TSC on this architecture");
#endif
}

const struct profd_tsc *profd_tsc(void)
{
	return &tsc;
}
