// SPDX-License-Identifier: MIT
/*
 * profctl_gen.c - a process with T threads (default 64), each with a call
 * tree of 11,110 nodes (10 zones nested 4 deep: 10 + 100 + 1000 + 10000;
 * -d 3 for 1,110), for profctl's and profd's benchmarks.  Run with
 * PROF_MAX_NODES=16384.
 * Each thread runs its tree -r times (default 1) to build it, so every
 * node has that many calls (of different durations) to reduce to
 * percentiles.  Prints "ready PID" when every tree is built, then keeps
 * the threads alive, each re-running its tree every -i milliseconds (0:
 * idle), until stdin closes.  -p P: each run after the build covers
 * the first P of the ten top-level subtrees only, so P tenths of the nodes
 * keep changing and the rest stay as built (a big process whose paths are
 * mostly cold: profd's history keeps only what changed).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "prof.h"

static void rec(int d);
static volatile unsigned long sink;
static volatile int done;
static int interval_ms, depth = 4, rounds = 1, part = 10;
static pthread_barrier_t built;

#define Z(n)                              \
	static void z##n(int d)           \
	{                                 \
		PROF_USDT(z##n);          \
		sink += (unsigned long)d; \
		rec(d);                   \
	}
/* clang-format off */
Z(0) Z(1) Z(2) Z(3) Z(4) Z(5) Z(6) Z(7) Z(8) Z(9)
	/* clang-format on */

	static void (*const zs[10])(int) = { z0, z1, z2, z3, z4, z5, z6, z7, z8, z9 };

static void rec(int d)
{
	int i;

	if (d == 0)
		return;
	for (i = 0; i < 10; i++)
		zs[i](d - 1);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int r = 0; r < rounds; r++)
		rec(depth);
	pthread_barrier_wait(&built);
	while (!done) {
		if (interval_ms && part < 10) {
			for (int k = 0; k < part; k++)
				zs[k](depth - 1);
			usleep((useconds_t)interval_ms * 1000);
		} else if (interval_ms) {
			rec(depth);
			usleep((useconds_t)interval_ms * 1000);
		} else {
			usleep(100000);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = 64, c, i;
	pthread_t *th;
	char buf[64];

	while ((c = getopt(argc, argv, "t:i:d:r:p:")) != -1) {
		if (c == 't')
			nthreads = atoi(optarg);
		else if (c == 'd')
			depth = atoi(optarg);
		else if (c == 'i')
			interval_ms = atoi(optarg);
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'p')
			part = atoi(optarg);
		else
			return 2;
	}
	if (nthreads < 1 || nthreads > 1024 || depth < 1 || depth > 5 || rounds < 1 || part < 1 ||
	    part > 10)
		return 2;
	th = calloc((size_t)nthreads, sizeof(*th));
	pthread_barrier_init(&built, NULL, (unsigned)nthreads + 1);
	for (i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	pthread_barrier_wait(&built);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	done = 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}
