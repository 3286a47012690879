// SPDX-License-Identifier: MIT
/*
 * ctr_payload.c - the program test_profd_container runs inside a container: it
 * waits (bounded) for its kernel record, runs zones that hop between two
 * CPUs and zones that stay, says "R <pid>" (registered) or "U <pid>" on
 * stdout, and lives until its stdin closes.
 *
 *	ctr_payload [SECONDS [hide]]
 *
 * SECONDS: how long to wait for profd (default 5; 0: not).  hide: once
 * registered, unlink its segment's name, as a process whose /dev/shm
 * profd cannot look into: only the segment it handed over finds it then.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prof.h"
#include "migrate_zones.h"


static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void ctr_wait_zone(void)
{
	PROF_USDT(ctr_wait_zone);
}

/* this thread's kernel record is live (taken at a zone's exit) */
static int registered(double seconds)
{
	unsigned long long end = now_ns() + (unsigned long long)(seconds * 1e9);

	for (;;) {
		if (__prof_tls.krec && __prof_tls.krec->gen)
			return 1;
		if (now_ns() >= end)
			return 0;
		ctr_wait_zone();
		usleep(10000);
	}
}

/* our segments' names in /dev/shm, gone (the mapping stays) */
static void hide(void)
{
	char prefix[32], path[300];
	struct dirent *de;
	DIR *d = opendir("/dev/shm");

	snprintf(prefix, sizeof(prefix), "prof.%d.", (int)getpid());
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	double wait = argc > 1 ? atof(argv[1]) : 5;
	int reg;
	char c;

	ctr_wait_zone();
	reg = wait > 0 && registered(wait);
	if (argc > 2 && !strcmp(argv[2], "hide"))
		hide();
	migrate_calls();
	printf("%c %d\n", reg ? 'R' : 'U', (int)getpid());
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
