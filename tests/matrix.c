// SPDX-License-Identifier: MIT
/*
 * matrix.c - every macro of prof.h, included after other system headers as
 * user code does.  test_compilers builds it with gcc and clang at -std=c99,
 * c11 and gnu11 with -Wall -Wextra -Wpedantic -Werror, runs it, and reads
 * its report: each zone below is called ROUNDS times (mx_func twice that).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"

#define ROUNDS 7

PROF_DEFINE(mx_public);
PROF_DECLARE(mx_public);

static volatile unsigned long sink;
static pthread_mutex_t mx_mutex = PTHREAD_MUTEX_INITIALIZER;

static void mx_func(unsigned long i)
{
	PROF_FUNC();
	sink += i;
}

static void mx_scoped(unsigned long i)
{
	PROF_SCOPE(mx_public);
	mx_func(i);
}

int main(void)
{
	unsigned long i;
	char *p;

	PROF_THREAD_NAME("matrix");
	for (i = 0; i < ROUNDS; i++) {
		PROF_USDT(mx_zone);
		PROF_FRAME();
		p = malloc(64);
		PROF_ALLOC(64);
		mx_scoped(i);
		PROF_BEGIN(mx_begin);
		mx_func(i);
		PROF_END();
		memset(p, 0, 64);
		free(p);
		PROF_FREE(64);
		/* annotations: any arithmetic type, C's cleanup-free calls */
		PROF_PLOT(mx_plot, i);
		PROF_PLOT(mx_plot, 1.5f);
		PROF_MESSAGE("round %lu", i);
		PROF_MESSAGE("no arguments");
		PROF_ZONE_VALUE(i);
		PROF_ZONE_TEXT("text");
		if (PROF_MUTEX_LOCK(mx_lock, &mx_mutex) == 0)
			(void)PROF_MUTEX_UNLOCK(mx_lock, &mx_mutex);
		PROF_LOCK_WAIT(mx_generic);
		PROF_LOCK_ACQUIRED(mx_generic);
		PROF_LOCK_RELEASED(mx_generic);
	}
	printf("matrix ok %lu\n", (unsigned long)sink);
	return 0;
}
