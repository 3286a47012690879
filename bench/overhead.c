// SPDX-License-Identifier: MIT
/*
 * overhead.c - what a zone costs, in one run, against the hand-written
 * floor.
 *
 * Around a ~50 ns work function, per call:
 *	bare	the function alone
 *	floor	rdtsc before and after, delta and count into thread-locals
 *	prof	PROF_USDT around it (kernel word read: the default)
 *	nokw	PROF_USDT with the kernel-word reads compiled out
 *	noring	PROF_USDT with the event ring compiled out
 *		(PROF_NO_KERNEL_WORD, bench only): the price of that word
 *	plot	PROF_USDT and a PROF_PLOT point in it
 *	value	PROF_USDT and a PROF_ZONE_VALUE on its call
 *	lock	a bare pthread mutex locked and unlocked around it
 *	mutex	the same through PROF_MUTEX_LOCK/UNLOCK (uncontended)
 * Overhead = (variant - bare) / call.  Rounds alternate the variants and
 * the minimum of each is kept, so frequency drift hits all alike.  With
 * two threads each runs the same loop at once.
 *
 *	overhead [-n CALLS] [-r ROUNDS] [-t THREADS]
 *	overhead -v VARIANT [-n CALLS]	one variant once, fixed work, after
 *					1000 warm-up calls: for counting
 *					instructions in bench_measured under
 *					callgrind
 */
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prof.h"
#include "overhead.h"

static __thread uint64_t floor_ticks, floor_calls;
static unsigned long calls = 2000000, rounds = 7, work_iters;
#define SYNC_CALLS() (bench_calls = calls)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) uint64_t bench_work(uint64_t x)
{
	for (unsigned long i = 0; i < work_iters; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

static uint64_t run_bare(void)
{
	uint64_t x = 1;

	for (unsigned long i = 0; i < calls; i++)
		x = bench_work(x);
	return x;
}

static uint64_t run_floor(void)
{
	uint64_t x = 1;

	for (unsigned long i = 0; i < calls; i++) {
		uint64_t t0 = __builtin_ia32_rdtsc();

		x = bench_work(x);
		floor_ticks += __builtin_ia32_rdtsc() - t0;
		floor_calls++;
	}
	return x;
}

static uint64_t run_prof(void)
{
	BENCH_ZONE_LOOP(bench_zone, calls, (void)i);
}

static uint64_t run_plot(void)
{
	BENCH_ZONE_LOOP(bench_zone, calls, PROF_PLOT(bench_plot, i));
}

static uint64_t run_value(void)
{
	BENCH_ZONE_LOOP(bench_zone, calls, PROF_ZONE_VALUE(i));
}

static pthread_mutex_t bench_mutex = PTHREAD_MUTEX_INITIALIZER;

static uint64_t run_lock(void)
{
	uint64_t x = 1;

	for (unsigned long i = 0; i < calls; i++) {
		pthread_mutex_lock(&bench_mutex);
		x = bench_work(x);
		pthread_mutex_unlock(&bench_mutex);
	}
	return x;
}

static uint64_t run_mutex(void)
{
	uint64_t x = 1;

	for (unsigned long i = 0; i < calls; i++) {
		PROF_MUTEX_LOCK(bench_lock, &bench_mutex);
		x = bench_work(x);
		PROF_MUTEX_UNLOCK(bench_lock, &bench_mutex);
	}
	return x;
}

typedef uint64_t (*variant_fn)(void);

/* the calls callgrind counts (bench/callgrind-zone collects in here only) */
static __attribute__((noinline, used)) uint64_t bench_measured(variant_fn fn)
{
	return fn();
}

static const struct {
	const char *name;
	variant_fn fn;
} variants[] = {
	{ "bare", run_bare },
	{ "floor", run_floor },
	{ "prof", run_prof },
	{ "nokw", bench_run_nokw },
	{ "noring", bench_run_noring },
	{ "plot", run_plot },
	{ "value", run_value },
	{ "lock", run_lock },
	{ "mutex", run_mutex },
};
#define NVAR (sizeof(variants) / sizeof(variants[0]))

struct result {
	double ns[NVAR]; /* best ns per call */
};

static pthread_barrier_t barrier;
static volatile uint64_t sink;

static void *bench_thread(void *arg)
{
	struct result *r = arg;
	unsigned long k;
	size_t v;

	for (v = 0; v < NVAR; v++)
		r->ns[v] = 1e30;
	/* warm the zone's slow path, caches and branch predictors */
	sink += run_prof() + bench_run_nokw() + bench_run_noring() + run_plot() + run_value() +
		run_mutex();
	for (k = 0; k < rounds; k++) {
		for (v = 0; v < NVAR; v++) {
			uint64_t t0, t1;

			pthread_barrier_wait(&barrier);
			t0 = now_ns();
			sink += variants[v].fn();
			t1 = now_ns();
			if ((double)(t1 - t0) / (double)calls < r->ns[v])
				r->ns[v] = (double)(t1 - t0) / (double)calls;
		}
	}
	sink += floor_ticks + floor_calls;
	return NULL;
}

/* size the work function to ~50 ns */
static void calibrate(void)
{
	uint64_t t0, t1;
	unsigned long save = calls;

	calls = 200000;
	work_iters = 100;
	t0 = now_ns();
	sink += run_bare();
	t1 = now_ns();
	work_iters = (unsigned long)(100.0 * 50.0 / ((double)(t1 - t0) / (double)calls));
	if (work_iters < 1)
		work_iters = 1;
	calls = save;
}

int main(int argc, char **argv)
{
	unsigned long nthreads = 1, t;
	pthread_t th[64];
	struct result res[64];
	const char *only = NULL;
	long work = -1;
	int c;

	while ((c = getopt(argc, argv, "n:r:t:v:w:h")) != -1) {
		switch (c) {
		case 'w':
			work = strtol(optarg, NULL, 0);
			break;
		case 'v':
			only = optarg;
			break;
		case 'n':
			calls = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 't':
			nthreads = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: overhead [-n CALLS] [-r ROUNDS] [-t THREADS] "
					"[-w WORK_ITERS] [-v bare|floor|prof|nokw|noring|plot|value|"
					"lock|mutex]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!calls || !rounds || !nthreads || nthreads > 64) {
		fprintf(stderr, "overhead: bad arguments\n");
		return 2;
	}
	if (only) {
		unsigned long n = calls;
		size_t v;

		work_iters = 10;
		for (v = 0; v < NVAR; v++) {
			if (strcmp(variants[v].name, only))
				continue;
			/* warm: the first zone makes the segment and calibrates */
			calls = 1000;
			SYNC_CALLS();
			sink += variants[v].fn();
			calls = n;
			SYNC_CALLS();
			sink += bench_measured(variants[v].fn);
		}
		return 0;
	}
	/* -w 0: zones back to back; default: around ~50 ns of work */
	if (work >= 0)
		work_iters = (unsigned long)work;
	else
		calibrate();
	SYNC_CALLS();
	pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
	for (t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, bench_thread, &res[t]);
	for (t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);

	for (t = 0; t < nthreads; t++) {
		double bare = res[t].ns[0], fl = res[t].ns[1] - bare, pr = res[t].ns[2] - bare;
		double nk = res[t].ns[3] - bare, nr = res[t].ns[4] - bare;

		printf("threads=%lu thread=%lu work=%.1fns floor=+%.2fns prof=+%.2fns "
		       "prof-floor=%+.2fns ratio=%.2f kernel-word=%+.2fns ring=%+.2fns\n",
		       nthreads, t, bare, fl, pr, pr - fl, fl > 0 ? pr / fl : 0, pr - nk, pr - nr);
		/* annotations: over the zone they are in, a mutex over a bare one */
		printf("threads=%lu thread=%lu plot=%+.2fns value=%+.2fns (over prof) "
		       "mutex=%+.2fns (over a bare lock and unlock, prof=+%.2fns)\n",
		       nthreads, t, res[t].ns[5] - res[t].ns[2], res[t].ns[6] - res[t].ns[2],
		       res[t].ns[8] - res[t].ns[7], pr);
	}
	return 0;
}
