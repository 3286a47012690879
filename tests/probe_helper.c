// SPDX-License-Identifier: MIT
/*
 * probe_helper.c - a program with known zones for test_probes.
 *
 *	probe_helper sema		print the two probe_zone semaphores
 *	probe_helper run N GOFILE	print "ready", wait (at most 30 s) for
 *					GOFILE and for a tracer on all four
 *					probes (their semaphores), print the
 *					semaphores, make exactly N probe_zone
 *					and N probe_fn calls, print "done"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prof.h"

extern volatile unsigned short prof_probe_zone_semaphore __attribute__((visibility("hidden")));
extern volatile unsigned short prof_probe_zone__exit_semaphore
	__attribute__((visibility("hidden")));
extern volatile unsigned short prof_func_semaphore __attribute__((visibility("hidden")));
extern volatile unsigned short prof_func__exit_semaphore __attribute__((visibility("hidden")));

static volatile unsigned long sink;

static __attribute__((noinline)) void probe_zone_call(unsigned long i)
{
	PROF_USDT(probe_zone);
	sink += i;
}

static __attribute__((noinline)) void probe_fn(unsigned long i)
{
	PROF_FUNC();
	sink += i;
}

static void print_sema(void)
{
	printf("sema enter=%u exit=%u\n", prof_probe_zone_semaphore,
	       prof_probe_zone__exit_semaphore);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	unsigned long n, i;
	int waited;

	if (argc == 2 && !strcmp(argv[1], "sema")) {
		print_sema();
		return 0;
	}
	if (argc != 4 || strcmp(argv[1], "run")) {
		fprintf(stderr, "usage: probe_helper sema | run N GOFILE\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (waited = 0; access(argv[3], F_OK); waited++) {
		if (waited > 3000) {
			fprintf(stderr, "probe_helper: no %s after 30 s\n", argv[3]);
			return 3;
		}
		usleep(10000);
	}
	/* the kernel raises a semaphore as it registers the probe */
	for (waited = 0; !(prof_probe_zone_semaphore && prof_probe_zone__exit_semaphore &&
			   prof_func_semaphore && prof_func__exit_semaphore);
	     waited++) {
		if (waited > 1000) {
			printf("sema timeout\n");
			break;
		}
		usleep(10000);
	}
	/* and the last one's program is attached just after */
	usleep(300000);
	print_sema();
	for (i = 0; i < n; i++) {
		probe_zone_call(i);
		probe_fn(i);
	}
	printf("done\n");
	fflush(stdout);
	return 0;
}
