// SPDX-License-Identifier: MIT
/*
 * sample_busy.c - a busy program for bench/sample_cost.sh: -t threads, each
 * running zone "outer" around zone "inner" around a 50 us computation, for
 * -d seconds; prints "steps N cpu_ns C" (every thread's steps, and the
 * process's CPU time) at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <prof.h>

static volatile int stop;
static unsigned long total[64];

__attribute__((noinline)) static unsigned long compute(unsigned long x)
{
	int i;

	for (i = 0; i < 20000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

static void *run(void *arg)
{
	unsigned long *n = arg, x = 1;

	while (!stop) {
		PROF_USDT(outer);
		{
			PROF_USDT(inner);
			x = compute(x);
		}
		(*n)++;
	}
	return (void *)(x & 1);
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	struct timespec ts;
	unsigned long steps = 0;
	int t = 4, d = 10, i, c;

	while ((c = getopt(argc, argv, "t:d:")) != -1) {
		if (c == 't')
			t = atoi(optarg);
		else if (c == 'd')
			d = atoi(optarg);
	}
	if (t < 1 || t > 64)
		t = 4;
	for (i = 0; i < t; i++)
		pthread_create(&th[i], NULL, run, &total[i]);
	sleep((unsigned int)d);
	stop = 1;
	for (i = 0; i < t; i++) {
		pthread_join(th[i], NULL);
		steps += total[i];
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	printf("steps %lu cpu_ns %llu\n", steps,
	       (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
	return 0;
}
