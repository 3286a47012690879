// SPDX-License-Identifier: MIT
/*
 * live_worker.c - a profiled program for the live page's browser test
 * (tests/test_live.py) and benchmark (bench/live_bench.sh): N threads
 * (argv[1], 4 by default), each a frame loop of nested zones with a short
 * sleep, about a hundred zone calls a thread a second.  SIGUSR1 stops the
 * work (every thread then waits outside any zone, so its profile holds
 * still), SIGUSR2 starts it again; it prints "ready" once every thread
 * has called each zone, and runs until killed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "prof.h"

static volatile sig_atomic_t stopped;
static volatile unsigned long sink;
static pthread_barrier_t started;

static void on_sig(int sig)
{
	stopped = sig == SIGUSR1;
}

static void pause_ms(long ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	nanosleep(&ts, NULL);
}

static void leaf(int n)
{
	PROF_USDT(lw_leaf);
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

static void parse(void)
{
	PROF_USDT(lw_parse);
	leaf(2000);
	leaf(1000);
}

static void render(void)
{
	PROF_USDT(lw_render);
	leaf(5000);
	{
		PROF_USDT(lw_wait);
		pause_ms(1);
	}
}

static void frame(void)
{
	PROF_FRAME();
	{
		PROF_USDT(lw_frame);
		parse();
		render();
	}
}

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)(intptr_t)arg);
	PROF_THREAD_NAME(name);
	frame();
	pthread_barrier_wait(&started);
	for (;;) {
		if (stopped) {
			pause_ms(5);
			continue;
		}
		frame();
		pause_ms(8);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4, i;
	struct sigaction sa = { .sa_handler = on_sig };
	sigset_t set;

	if (n < 1 || n > 1024) {
		fprintf(stderr, "usage: live_worker [THREADS]\n");
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	pthread_barrier_init(&started, NULL, (unsigned)n + 1);
	/* the workers take the signals: main only waits */
	for (i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, (void *)(intptr_t)i))
			return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_barrier_wait(&started);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
