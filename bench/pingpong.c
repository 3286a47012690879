// SPDX-License-Identifier: MIT
/*
 * pingpong.c - what profd's sched_switch program adds to a context switch.
 *
 * Two threads pinned to one CPU pass a byte back and forth through two
 * pipes, each side in a zone, so both threads are profiled and, with profd
 * up, registered: every round trip is two context switches through the
 * BPF program (and no cross-CPU wakeups, whose cost would drown it).
 * Rounds alternate without and with profd (started and stopped by this
 * program on a private socket), in one run, the order flipped every pair;
 * the median of the per-pair ratios is the tax (a guest's speed drifts
 * over seconds: only neighbouring rounds compare).
 *
 *	pingpong -p PROFD [-n ROUNDTRIPS] [-r PAIRS]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prof.h"
#include "snapshot.h"

static int ab[2], ba[2];
static long trips = 200000;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("pingpong: sched_setaffinity");
}

static void *pong(void *arg)
{
	char c;

	pin();
	PROF_THREAD_NAME("pong");
	for (;;) {
		PROF_USDT(pong);
		if (read(ab[0], &c, 1) != 1)
			break;
		if (write(ba[1], &c, 1) != 1)
			break;
	}
	return arg;
}

/* ns per round trip, after a tenth as many unmeasured: a round that
 * follows profd's start (an idle CPU) must not pay for waking it up */
static double round_trips(void)
{
	double t0 = 0;
	char c = 'x';

	for (long i = -trips / 10; i < trips; i++) {
		if (i == 0)
			t0 = now_s();
		PROF_USDT(ping);
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) {
			perror("pingpong: pipe");
			exit(1);
		}
	}
	return (now_s() - t0) * 1e9 / (double)trips;
}

static pid_t profd_start(const char *profd, const char *sock)
{
	struct stat st;
	pid_t pid = fork();

	if (pid == 0) {
		execl(profd, profd, "--socket", sock, "--interval", "100", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && stat(sock, &st); i++)
		usleep(10000);
	/* the agent retries once a second: give both threads their slots */
	usleep(1500000);
	return pid;
}

static void profd_stop(pid_t pid, const char *sock)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	unlink(sock);
}

/* threads of this process with a kernel slot */
static unsigned registered(void)
{
	struct prof_seg_ent *ents;
	struct prof_snapshot *s = NULL;
	unsigned n = 0;
	size_t cnt, i;

	if (prof_seg_list(geteuid(), &ents, &cnt))
		return 0;
	for (i = 0; i < cnt && !s; i++) {
		int fd = ents[i].pid == (__u32)getpid() ? prof_seg_open(&ents[i]) : -1;

		if (fd >= 0) {
			prof_snapshot__read_fd(fd, &s);
			close(fd);
		}
	}
	free(ents);
	for (i = 0; s && i < s->nthreads; i++)
		n += s->threads[i].ksched_slot != PROF_NO_SLOT;
	prof_snapshot__destroy(s);
	return n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *profd = NULL;
	char sock[64];
	double off[32], on[32], ratio[32];
	int pairs = 5, c;
	unsigned reg = 0;
	pthread_t th;

	while ((c = getopt(argc, argv, "p:n:r:")) != -1) {
		if (c == 'p')
			profd = optarg;
		else if (c == 'n')
			trips = atol(optarg);
		else if (c == 'r')
			pairs = atoi(optarg);
		else
			return 2;
	}
	if (!profd || trips < 1 || pairs < 1 || pairs > 32) {
		fprintf(stderr, "usage: pingpong -p PROFD [-n ROUNDTRIPS] [-r PAIRS(1..32)]\n");
		return 2;
	}
	if (geteuid() != 0) {
		printf("pingpong: skipped: profd needs root\n");
		return 0;
	}
	snprintf(sock, sizeof(sock), "/tmp/profd-bench.%d.sock", (int)getpid());
	/* before the first zone: the agent reads it once */
	setenv("PROF_SOCKET", sock, 1);
	if (pipe(ab) || pipe(ba)) {
		perror("pingpong: pipe");
		return 1;
	}
	pin();
	pthread_create(&th, NULL, pong, NULL);
	round_trips(); /* warm up */
	for (int r = 0; r < pairs; r++) {
		pid_t pid;

		if (r % 2 == 0)
			off[r] = round_trips();
		pid = profd_start(profd, sock);
		reg = registered();
		on[r] = round_trips();
		profd_stop(pid, sock);
		if (r % 2 == 1)
			off[r] = round_trips();
		ratio[r] = on[r] / off[r];
	}
	qsort(off, (size_t)pairs, sizeof(double), cmp_d);
	qsort(on, (size_t)pairs, sizeof(double), cmp_d);
	qsort(ratio, (size_t)pairs, sizeof(double), cmp_d);
	printf("pingpong: %ld round trips x %d pairs, %u threads registered with profd\n", trips,
	       pairs, reg);
	printf("pingpong: round trip median %.0f ns without profd, %.0f ns with; "
	       "median pair ratio %+.1f%% (quartiles %+.1f%% .. %+.1f%%)\n",
	       off[pairs / 2], on[pairs / 2], 100.0 * (ratio[pairs / 2] - 1),
	       100.0 * (ratio[pairs / 4] - 1), 100.0 * (ratio[3 * pairs / 4] - 1));
	close(ab[1]);
	return 0;
}
