// SPDX-License-Identifier: MIT
/*
 * example.c - an annotated program: a frame loop with nested zones, a
 * zone that sleeps (off-CPU time, with profd), a recursive zone, a public
 * zone used from two places, allocations, and two worker threads.  Run
 * with PROF_REPORT=stderr to see its profile; `make example` runs it under
 * profd when it can.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "prof.h"

PROF_DEFINE(checksum);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* burn about ns nanoseconds of CPU */
static void spin(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

static unsigned fib(unsigned n)
{
	PROF_USDT(fib);
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static uint64_t sum(const unsigned char *p, size_t n)
{
	PROF_SCOPE(checksum);
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += p[i];
	return s;
}

static uint64_t parse(size_t n)
{
	PROF_USDT(parse);
	unsigned char *buf = malloc(n);
	uint64_t s;

	PROF_ALLOC(n);
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)i;
	spin(20000);
	s = sum(buf, n);
	free(buf);
	PROF_FREE(n);
	return s;
}

static void render(void)
{
	PROF_USDT(render);
	spin(500000);
	{
		PROF_USDT(upload);
		spin(100000);
	}
}

/* waiting for the display: wall time, but off the CPU */
static void vsync(void)
{
	PROF_USDT(vsync);
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	uint64_t s = 0;

	PROF_THREAD_NAME(id ? "worker-1" : "worker-0");
	for (int i = 0; i < 2000; i++) {
		PROF_FUNC();
		s += parse(4096);
		s += sum((const unsigned char *)&s, sizeof(s));
	}
	return (void *)(uintptr_t)s;
}

int main(void)
{
	pthread_t th[2];
	volatile unsigned f = 0;

	PROF_THREAD_NAME("main");
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int frame = 0; frame < 100; frame++) {
		PROF_FRAME();
		PROF_USDT(frame);
		render();
		f += fib(12);
		vsync();
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return f == 0;
}
