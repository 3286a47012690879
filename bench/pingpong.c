// SPDX-License-Identifier: MIT
/*
 * pingpong.c - what profd's sched_switch program adds to a context switch.
 *
 * Two threads pinned to one CPU pass a byte back and forth through two
 * pipes, each side in a zone: every round trip is two context switches
 * (and no cross-CPU wakeups, whose cost would drown the program's).  This
 * guest's speed drifts by up to 25% over seconds, so only neighbouring
 * rounds compare: the figure is the median of per-pair ratios, each pair
 * a round without and a round with, the order flipped every pair.
 *
 * Part 1, the program alone: this process loads profd's program itself
 * (the same skeleton) and attaches and detaches it every -n round trips
 * (~50 ms), which is fast enough to see 1%.  Five programs, interleaved:
 * an empty sched_switch program (the floor: what attaching anything
 * costs), profd's with both threads unregistered, profd's with both
 * registered the way profd registers them (the slot's gen, the tid's
 * entry), and two bounds from switch_floor.bpf.c: switch_pids (two tids
 * read, two clear bits tested: the least any per-thread program does) and
 * switch_recs (both bits set, a tid-indexed record each counted and
 * stamped: the least a record per thread costs).
 *
 * Part 2, the whole daemon: rounds without and with a real profd, started
 * and stopped by this program on a private socket (kept off the pair's
 * CPU: its sampling is measured apart, by profd_cpu.sh), threads registered
 * through the runtime.  Each start takes seconds, so few pairs: a
 * cross-check, noisier than part 1.
 *
 * With -u the two threads are not pinned: the scheduler puts them where it
 * likes (on two CPUs, mostly), as perf bench sched pipe does, and a round
 * trip also crosses CPUs and idles: the program runs four times a round
 * trip (each CPU switches to idle and back) in a longer round trip.
 *
 *	pingpong -p PROFD [-n ROUNDTRIPS] [-r PAIRS] [-R DAEMON_PAIRS] [-u]
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
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "prof.h"
#include "profsched.h"
#include "snapshot.h"
/* generated code casts const away */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "profsched.skel.h"
#include "switch_floor.skel.h"
#pragma GCC diagnostic pop

static int ab[2], ba[2];
static long trips = 10000;
static pid_t pong_tid;
static bool unpinned; /* -u: both threads free on every CPU */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pin(void)
{
	cpu_set_t set;

	if (unpinned)
		return;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("pingpong: sched_setaffinity");
}

static void *pong(void *arg)
{
	char c;

	pin();
	pong_tid = gettid();
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
		cpu_set_t set;

		/* profd's own sampling is measured apart (profd_cpu.sh): keep
		 * it off the CPU the pair runs on, so only the switch tax shows */
		CPU_ZERO(&set);
		for (int c = 1; c < CPU_SETSIZE && c < sysconf(_SC_NPROCESSORS_ONLN); c++)
			CPU_SET(c, &set);
		if (CPU_COUNT(&set))
			sched_setaffinity(0, sizeof(set), &set);
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

struct tally {
	const char *what;
	int n;
	double ratio[1000], added[1000]; /* on / off; ns a switch */
};

/* one pair: a round without and a round with 'prog' attached, in either order */
static int pair(struct bpf_program *prog, int flip, struct tally *t)
{
	struct bpf_link *l;
	double off, on;

	if (flip)
		off = round_trips();
	l = bpf_program__attach(prog);
	if (!l) {
		fprintf(stderr, "pingpong: attach %s: %s\n", t->what, strerror(errno));
		return -1;
	}
	on = round_trips();
	bpf_link__destroy(l);
	if (!flip)
		off = round_trips();
	t->ratio[t->n] = on / off;
	t->added[t->n] = (on - off) / 2; /* two switches a round trip */
	t->n++;
	return 0;
}

static void print_tally(struct tally *t)
{
	int n = t->n;

	qsort(t->ratio, (size_t)n, sizeof(double), cmp_d);
	qsort(t->added, (size_t)n, sizeof(double), cmp_d);
	printf("  %-44s %+5.1f%% (quartiles %+.1f%% .. %+.1f%%), %+4.0f ns a switch\n", t->what,
	       100.0 * (t->ratio[n / 2] - 1), 100.0 * (t->ratio[n / 4] - 1),
	       100.0 * (t->ratio[3 * n / 4] - 1), t->added[n / 2]);
}

/* an empty record array for a uid, as profd makes one by default */
static int uid_array_create(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "prof_uid_recs", sizeof(__u32),
			      sizeof(struct prof_sched_rec), PROF_SCHED_MAX_SLOTS / 4, &o);
}

/* profd's program, its tid table sized as profd sizes it */
static struct profsched_bpf *profsched_load(__u32 *tid_limit)
{
	struct profsched_bpf *sk = profsched_bpf__open();
	unsigned long pm = PROF_SCHED_PID_MAX_LIMIT;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	int tmpl = uid_array_create(); /* uid arrays as profd sizes them by default */

	if (f) {
		if (fscanf(f, "%lu", &pm) != 1 || pm > PROF_SCHED_PID_MAX_LIMIT)
			pm = PROF_SCHED_PID_MAX_LIMIT;
		fclose(f);
	}
	*tid_limit = (__u32)(pm + PROF_SCHED_TIDS_PER_WORD - 1) / PROF_SCHED_TIDS_PER_WORD *
		     PROF_SCHED_TIDS_PER_WORD;
	if (sk &&
	    (tmpl < 0 || bpf_map__set_inner_map_fd(sk->maps.uidrecs, tmpl) ||
	     bpf_map__set_max_entries(sk->maps.tidslots, *tid_limit / PROF_SCHED_TIDS_PER_WORD) ||
	     profsched_bpf__load(sk))) {
		profsched_bpf__destroy(sk);
		sk = NULL;
	}
	if (tmpl >= 0)
		close(tmpl);
	return sk;
}

static void *map_rw(struct bpf_map *m, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);

	return p == MAP_FAILED ? NULL : p;
}

/* a uid's record array at 'uidrecs'[0], as profd makes one; its fd or -1 */
static int uid_array(struct profsched_bpf *sk)
{
	int fd = uid_array_create();
	__u32 u = 0;

	if (fd >= 0 && bpf_map_update_elem(bpf_map__fd(sk->maps.uidrecs), &u, &fd, BPF_ANY)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* tid's bit set in FILTER, a page of PROF_SCHED_FILTER_BITS bits (profsched.h) */
static void filter_set(__u64 *filter, pid_t tid)
{
	__u32 bit = (__u32)tid % PROF_SCHED_FILTER_BITS;

	__atomic_fetch_or(&filter[bit / 64], 1ULL << (bit % 64), __ATOMIC_RELEASE);
}

/* what profd does when a thread registers: the slot's place and gen, then
 * the tid's entry; its record is entry 'slot' of uid array 0 */
static int register_tid(struct profsched_bpf *sk, __u32 tid_limit, pid_t tid, __u32 slot)
{
	size_t tlen = tid_limit / PROF_SCHED_TIDS_PER_WORD * sizeof(__u64);
	size_t glen = bpf_map__max_entries(sk->maps.slots) * sizeof(struct prof_sched_slot);
	__u64 *tids = map_rw(sk->maps.tidslots, tlen);
	struct prof_sched_slot *sl = map_rw(sk->maps.slots, glen);
	__u32 shift = 16 * ((__u32)tid % PROF_SCHED_TIDS_PER_WORD);
	int err = -ENOMEM;

	if (tids && sl && (__u32)tid < tid_limit) {
		sl[slot].uidx = 0;
		sl[slot].idx = slot;
		__atomic_store_n(&sl[slot].gen, slot + 1, __ATOMIC_RELEASE);
		filter_set(sk->bss->tidfilter, tid);
		__atomic_fetch_or(&tids[(__u32)tid / PROF_SCHED_TIDS_PER_WORD],
				  (__u64)(slot + 1) << shift, __ATOMIC_RELEASE);
		err = 0;
	}
	if (tids)
		munmap(tids, tlen);
	if (sl)
		munmap(sl, glen);
	return err;
}

/* kernel.bpf_stats_enabled: its value before, or -1 if it cannot be read */
static int bpf_stats(int on)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r+");
	int was = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &was) != 1)
		was = -1;
	rewind(f);
	fprintf(f, "%d\n", on);
	fclose(f);
	return was;
}

/* ns inside prog a run (the kernel's own count, bpf_stats_enabled), or -1 */
static double ns_a_run(struct bpf_program *prog)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) || !info.run_cnt)
		return -1;
	return (double)info.run_time_ns / (double)info.run_cnt;
}

/* part 1: the program alone, and the bounds, interleaved */
static int program_alone(int pairs)
{
	static struct tally t[5] = { { .what = "empty sched_switch program (the floor)" },
				     { .what = "profd's program, threads unregistered" },
				     { .what = "profd's program, both threads registered" },
				     { .what = "two tids read, two filter bits tested" },
				     { .what = "a tid-indexed record each, both set" } };
	struct switch_floor_bpf *floor = switch_floor_bpf__open_and_load();
	struct profsched_bpf *sk[2];
	struct bpf_program *progs[5];
	__u32 lim[2];
	int err = -1, ufd = -1, stats_was = -1;

	sk[0] = profsched_load(&lim[0]);
	sk[1] = profsched_load(&lim[1]);
	if (!floor || !sk[0] || !sk[1]) {
		fprintf(stderr, "pingpong: cannot load the programs\n");
		goto out;
	}
	ufd = uid_array(sk[1]);
	if (ufd < 0 || register_tid(sk[1], lim[1], gettid(), 0) ||
	    register_tid(sk[1], lim[1], pong_tid, 1)) {
		fprintf(stderr, "pingpong: cannot register the threads\n");
		goto out;
	}
	progs[0] = floor->progs.switch_floor;
	progs[1] = sk[0]->progs.prof_sched_switch;
	progs[2] = sk[1]->progs.prof_sched_switch;
	progs[3] = floor->progs.switch_pids;
	progs[4] = floor->progs.switch_recs;
	filter_set(floor->bss->recfilter, gettid());
	filter_set(floor->bss->recfilter, pong_tid);
	stats_was = bpf_stats(1);
	for (int r = 0; r < pairs; r++)
		for (int k = 0; k < 5; k++)
			if (pair(progs[k], (r + k) % 2, &t[k]))
				goto out;
	printf("pingpong: the program alone, attached and detached every %ld round trips, "
	       "%d pairs each\n",
	       trips, pairs);
	for (int k = 0; k < 5; k++)
		print_tally(&t[k]);
	/* the kernel's count of the time in each program: no drift, no pairs,
	 * but not what the program costs around it (cache lines it evicts) */
	if (stats_was >= 0) {
		printf("  inside the program a run (bpf_stats_enabled):");
		for (int k = 0; k < 5; k++)
			printf(" %.1f ns%s", ns_a_run(progs[k]), k < 4 ? "," : "\n");
	}
	err = 0;
out:
	if (stats_was >= 0)
		bpf_stats(stats_was);
	if (ufd >= 0)
		close(ufd);
	switch_floor_bpf__destroy(floor);
	profsched_bpf__destroy(sk[0]);
	profsched_bpf__destroy(sk[1]);
	return err;
}

/* part 2: the whole daemon, started and stopped */
static void whole_profd(const char *profd, const char *sock, int pairs, long n)
{
	double off[32], on[32], ratio[32];
	long keep = trips;
	unsigned reg = 0;

	trips = n;
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
	trips = keep;
	qsort(off, (size_t)pairs, sizeof(double), cmp_d);
	qsort(on, (size_t)pairs, sizeof(double), cmp_d);
	qsort(ratio, (size_t)pairs, sizeof(double), cmp_d);
	printf("pingpong: the whole profd, started and stopped, %ld round trips x %d pairs, "
	       "%u threads registered\n",
	       n, pairs, reg);
	printf("  round trip median %.0f ns without profd, %.0f ns with; "
	       "median pair ratio %+.1f%% (quartiles %+.1f%% .. %+.1f%%)\n",
	       off[pairs / 2], on[pairs / 2], 100.0 * (ratio[pairs / 2] - 1),
	       100.0 * (ratio[pairs / 4] - 1), 100.0 * (ratio[3 * pairs / 4] - 1));
}

int main(int argc, char **argv)
{
	const char *profd = NULL;
	char sock[64];
	int pairs = 100, dpairs = 6, c;
	struct stat st;
	pthread_t th;

	while ((c = getopt(argc, argv, "p:n:r:R:u")) != -1) {
		if (c == 'p')
			profd = optarg;
		else if (c == 'n')
			trips = atol(optarg);
		else if (c == 'r')
			pairs = atoi(optarg);
		else if (c == 'R')
			dpairs = atoi(optarg);
		else if (c == 'u')
			unpinned = true;
		else
			return 2;
	}
	if (!profd || trips < 10 || pairs < 1 || pairs > 1000 || dpairs < 0 || dpairs > 32) {
		fprintf(stderr, "usage: pingpong -p PROFD [-n ROUNDTRIPS] [-r PAIRS(1..1000)] "
				"[-R DAEMON_PAIRS(0..32)] [-u]\n");
		return 2;
	}
	if (dpairs && (stat(profd, &st) || !S_ISREG(st.st_mode) || access(profd, X_OK))) {
		fprintf(stderr, "pingpong: %s: not a program to run\n", profd);
		return 2;
	}
	if (geteuid() != 0) {
		printf("pingpong: skipped: loading BPF needs root\n");
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
	round_trips(); /* warm up; pong has its tid */
	if (program_alone(pairs))
		return 1;
	if (dpairs)
		whole_profd(profd, sock, dpairs, 10 * trips);
	close(ab[1]);
	return 0;
}
