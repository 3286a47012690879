// SPDX-License-Identifier: MIT
/*
 * sample_prog.c - the program test_sample samples (built with gcc and clang,
 * -O2 -g, with and without frame pointers): in zone "work" it spends 7
 * units of CPU in hot_a and 3 in hot_b, the latter inside a nested zone
 * "inner"; outside every zone it spends 4 units in cold_out; in zone "nap"
 * it sleeps 20 ms.  The same loop body in each (BURN), so units are CPU
 * time.
 *
 *	sample_prog lines	print hot_a's, hot_b's and cold_out's line ranges
 *	sample_prog SECONDS	run that long (a thread each: main)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <prof.h>

/* loop iterations of some 5 ms (calibrated): a call much longer than the
 * sampling period, so a periodic program does not alias with the samples */
static unsigned long unit = 200000;

static volatile unsigned long sink;

/* n steps of a generator; c tells the functions apart (identical ones would
 * be folded into one) */
#define BURN(n, c)                                                        \
	do {                                                              \
		unsigned long i_, x_ = sink;                              \
		for (i_ = 0; i_ < (n); i_++)                              \
			x_ = x_ * 2862933555777941757ul + (c);            \
		sink = x_;                                                \
	} while (0)

enum { HOT_A_FIRST = __LINE__ };
__attribute__((noinline)) static void hot_a(unsigned long n)
{
	BURN(n, 3037000493ul);
}
enum { HOT_A_LAST = __LINE__ };

enum { HOT_B_FIRST = __LINE__ };
__attribute__((noinline)) static void hot_b(unsigned long n)
{
	BURN(n, 1442695040888963407ul);
}
enum { HOT_B_LAST = __LINE__ };

enum { COLD_FIRST = __LINE__ };
__attribute__((noinline)) static void cold_out(unsigned long n)
{
	BURN(n, 1013904223ul);
}
enum { COLD_LAST = __LINE__ };

__attribute__((noinline)) static void work(void)
{
	PROF_USDT(work);
	hot_a(7 * unit);
	{
		PROF_USDT(inner);
		hot_b(3 * unit);
	}
}

__attribute__((noinline)) static void nap(void)
{
	struct timespec ts = { 0, 20000000 };

	PROF_USDT(nap);
	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the fastest of a few runs: a run the scheduler interrupted says too little */
static void calibrate(void)
{
	double best = 0;
	int i;

	for (i = 0; i < 5; i++) {
		double t0 = now_s(), t;

		cold_out(unit);
		t = now_s() - t0;
		if (t > 0 && (best == 0 || t < best))
			best = t;
	}
	if (best > 0)
		unit = (unsigned long)((double)unit * 0.005 / best) + 1;
}

int main(int argc, char **argv)
{
	double end;

	if (argc > 1 && !strcmp(argv[1], "lines")) {
		printf("%d %d %d %d %d %d\n", HOT_A_FIRST, HOT_A_LAST, HOT_B_FIRST, HOT_B_LAST,
		       COLD_FIRST, COLD_LAST);
		return 0;
	}
	calibrate();
	end = now_s() + (argc > 1 ? atof(argv[1]) : 5.0);
	while (now_s() < end) {
		work();
		cold_out(4 * unit);
		nap();
	}
	return 0;
}
