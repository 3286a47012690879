// SPDX-License-Identifier: MIT
/*
 * probe_helper.c - a program with known zones for test_probes.  Its
 * semaphores have no names (prof.h defines them in asm): the test reads
 * their addresses from `readelf -n` and passes them in hex.
 *
 *	probe_helper sema ENTER EXIT	print probe_zone's two semaphores
 *	probe_helper run N GOFILE SEMA...
 *					print "ready", wait (at most 30 s) for
 *					GOFILE (written once the tracer is
 *					attached) and for every SEMA raised,
 *					print the first two, make exactly N
 *					probe_zone calls (each spinning
 *					SPIN_NS), N probe_fn and N probe_fn2
 *					calls (two PROF_FUNC sites), print
 *					the ns spent in probe_zone_call as
 *					seen around the calls, and "done"
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prof.h"

#define SPIN_NS 20000
#define MAX_SEMA 8

static volatile unsigned long sink;
static volatile unsigned short *sema[MAX_SEMA];
static int nsema;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static __attribute__((noinline)) void probe_zone_call(unsigned long i)
{
	PROF_USDT(probe_zone);
	unsigned long long t0 = now_ns();

	while (now_ns() - t0 < SPIN_NS)
		sink += i;
}

static __attribute__((noinline)) void probe_fn(unsigned long i)
{
	PROF_FUNC();
	sink += i;
}

/* a second prof:func site: its probes must fire too */
static __attribute__((noinline)) void probe_fn2(unsigned long i)
{
	PROF_FUNC();
	sink += 2 * i;
}

/* the main program's load bias: the first object dl_iterate_phdr reports */
static int first_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(ElfW(Addr) *)data = info->dlpi_addr;
	return 1;
}

static void parse_sema(int argc, char **argv)
{
	ElfW(Addr) bias = 0;

	dl_iterate_phdr(first_bias, &bias);
	for (nsema = 0; nsema < argc && nsema < MAX_SEMA; nsema++)
		sema[nsema] = (volatile unsigned short *)(bias + strtoull(argv[nsema], NULL, 16));
}

static int all_raised(void)
{
	int i;

	for (i = 0; i < nsema; i++)
		if (!*sema[i])
			return 0;
	return 1;
}

static void print_sema(void)
{
	printf("sema enter=%u exit=%u\n", *sema[0], nsema > 1 ? *sema[1] : 0);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	unsigned long n, i;
	unsigned long long outer = 0, t;
	int waited;

	if (argc == 4 && !strcmp(argv[1], "sema")) {
		parse_sema(2, argv + 2);
		print_sema();
		return 0;
	}
	if (argc < 5 || strcmp(argv[1], "run")) {
		fprintf(stderr, "usage: probe_helper sema ENTER EXIT | run N GOFILE SEMA...\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	parse_sema(argc - 4, argv + 4);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (waited = 0; access(argv[3], F_OK); waited++) {
		if (waited > 3000) {
			fprintf(stderr, "probe_helper: no %s after 30 s\n", argv[3]);
			return 3;
		}
		usleep(10000);
	}
	/*
	 * the kernel raises a semaphore as it registers the probe (perf's
	 * event is on by the exec; bpftrace's programs are attached before
	 * the test writes GOFILE)
	 */
	for (waited = 0; !all_raised(); waited++) {
		if (waited > 1000) {
			printf("sema timeout\n");
			break;
		}
		usleep(10000);
	}
	print_sema();
	for (i = 0; i < n; i++) {
		t = now_ns();
		probe_zone_call(i);
		outer += now_ns() - t;
		probe_fn(i);
		probe_fn2(i);
	}
	printf("outer_ns=%llu spin_ns=%llu\n", outer, (unsigned long long)n * SPIN_NS);
	printf("done\n");
	fflush(stdout);
	return 0;
}
