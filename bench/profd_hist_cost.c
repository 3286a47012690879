// SPDX-License-Identifier: MIT
/*
 * profd_hist_cost.c PID [MS] - what a history frame costs profd, on one
 * process (bench/profctl_gen): two full reads of its segment MS apart
 * (default 1000), then the delta between them (what the older keeps), and
 * the older rebuilt from the newer (a copy taken back through the delta, as
 * a "last N seconds" window does).  CPU time of each step, and the sizes.
 * Under valgrind --tool=callgrind, the functions' instruction counts are
 * the figures to trust on a busy machine.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "profd.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct prof_snapshot *read_pid(pid_t pid)
{
	struct prof_snapshot *s = NULL;
	struct prof_seg_ent *ents;
	size_t n, i;

	if (prof_seg_list((uid_t)-1, &ents, &n))
		return NULL;
	for (i = 0; i < n && !s; i++) {
		int fd;

		if (ents[i].pid != (__u32)pid || !ents[i].alive)
			continue;
		fd = prof_seg_open(&ents[i]);
		if (fd >= 0) {
			prof_snapshot__read_fd(fd, &s);
			close(fd);
		}
	}
	free(ents);
	return s;
}

int main(int argc, char **argv)
{
	struct prof_snapshot *a, *b, *w;
	struct hist_delta *d;
	double t0, t1, t2, t3, t4;
	pid_t pid;

	if (argc < 2)
		return 2;
	pid = atoi(argv[1]);
	t0 = cpu_ms();
	a = read_pid(pid);
	t1 = cpu_ms();
	usleep((useconds_t)(argc > 2 ? atoi(argv[2]) : 1000) * 1000);
	b = read_pid(pid);
	if (!a || !b) {
		fprintf(stderr, "profd_hist_cost: cannot read pid %d\n", (int)pid);
		return 1;
	}
	t2 = cpu_ms();
	d = hist_delta__new(a, b);
	t3 = cpu_ms();
	w = hist_snap_clone(b);
	if (!d || !w || hist_delta__apply(w, d) || !hist_snap_same(w, a)) {
		fprintf(stderr, "profd_hist_cost: the rebuilt frame differs\n");
		return 1;
	}
	t4 = cpu_ms();
	printf("profd_hist_cost: read %.1f ms (%.1f MiB); delta %.1f ms (%.1f MiB, %.1f%%); "
	       "rebuild %.1f ms\n",
	       t1 - t0, hist_snap_bytes(a) / 1048576.0, t3 - t2, hist_delta__bytes(d) / 1048576.0,
	       100.0 * hist_delta__bytes(d) / hist_snap_bytes(a), t4 - t3);
	hist_delta__destroy(d);
	prof_snapshot__destroy(w);
	prof_snapshot__destroy(a);
	prof_snapshot__destroy(b);
	return 0;
}
