// SPDX-License-Identifier: MIT
/*
 * test_profd.c - root tier: the real sched_switch program through profd,
 * what the kernel facts say of a zone: migrations, coverage from a
 * thread's first zone, preemption, off-CPU time, in-zone rates, the
 * records per uid and their reuse, history under churn, a full /dev/shm.
 *
 * Fixtures (profd, the child driver, teardown): profd_fixture.h.
 */
#include "profd_fixture.h"

static int teardown(void **state)
{
	(void)state;
	fixture_teardown();
	return 0;
}

/* --- migration -------------------------------------------------------- */

static void test_migrated(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_node *m;
	struct child c;
	int fd;

	(void)state;
	need_two_cpus();
	fd = need_profd();
	s = spawn_snap(fd, migrate_calls, 0, &c);
	/* every call moved itself: all migrated; the pinned ones never.  A
	 * thread that moves itself waits for the stopper: a blocked call */
	check_migrated(s, &m);
	assert_int_equal(m->blocked, m->kernel_calls);
	prof_snapshot__destroy(s);
	child_end(&c);
	profd_done(fd);
}

#define PINNED_CALLS 20

/* pinned to one cpu, each call sleeps: switched out, back on that cpu */
static void work_pinned_sleep(void)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	set_cpu(0);
	for (i = 0; i < PINNED_CALLS; i++) {
		PROF_USDT(pinned_zone);
		nanosleep(&ts, NULL);
	}
}

/*
 * A call that leaves its CPU and comes back to the same one did not
 * migrate: every call here is switched out (blocked) and none migrated.
 * Pinned, it cannot go elsewhere, so this holds on any machine.
 */
static void test_pinned_not_migrated(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_node *n;
	struct child c;
	int fd;

	(void)state;
	fd = need_profd();
	s = spawn_snap(fd, work_pinned_sleep, 0, &c);
	n = node_named(s, "pinned_zone");
	assert_non_null(n);
	assert_int_equal(n->calls, PINNED_CALLS);
	assert_facts(n, "pinned_zone", PINNED_CALLS);
	assert_int_equal(n->blocked, n->kernel_calls);
	assert_int_equal(n->migrated, 0);
	prof_snapshot__destroy(s);
	child_end(&c);
	profd_done(fd);
}

/* --- coverage ----------------------------------------------------------- */

/*
 * Programs started right after profd, one after another, have kernel facts
 * for every call of a CPU-hopping zone (but a few lost returns:
 * facts_may_lack), each counted migrated, in 20 runs in a row.
 *
 * Whether a first zone is covered too (registered there: it waits for
 * profd, PROF_REG_WAIT_MS at most) is a matter of how fast profd answers,
 * which the load decides: with both CPUs busy, from 20 runs of 20 down to
 * none (the registration then late).  A late one profd does not count is
 * one whose request the agent had sent before the first zone gave up
 * waiting (so without PROFD_REG_LATE) and whose answer came after: seen
 * under load with the runtime traced (no record for the first zone, the
 * thread's late flag set, profd's count unchanged).  It is printed, not
 * asserted: no count of them holds on a loaded machine
 * (test_late_registration checks what a late one does).
 */
static void test_covered_from_first_zone(void **state)
{
	struct profd_status st;
	struct prof_snapshot *s;
	const struct prof_snap_node *m, *init;
	struct child c;
	int fd, run, first = 0, late = 0, unexplained = 0;
	__u64 lacked = 0, late0;

	(void)state;
	need_two_cpus();
	fd = need_profd();
	assert_int_equal(profd_status(fd, &st), 0);
	late0 = st.late;
	for (run = 0; run < 20; run++) {
		/* one at a time, as a user starts them */
		c = spawn(migrate_calls, 0, 5);
		/* registered ('R'): a late registration is counted by now */
		assert_int_equal(child_wait(&c), 'R');
		s = snap_of(fd, c.pid, PROFD_SNAP_START);
		assert_non_null(s);
		m = node_named(s, "migrate_zone");
		init = node_named(s, "init_zone");
		assert_non_null(m);
		assert_non_null(init);
		if (m->kernel_calls != MIGR_CALLS || m->migrated != MIGR_CALLS)
			printf("run %d: %llu calls, %llu with kernel facts, %llu migrated\n", run,
			       (unsigned long long)m->calls, (unsigned long long)m->kernel_calls,
			       (unsigned long long)m->migrated);
		assert_int_equal(profd_status(fd, &st), 0);
		if (init->kernel_calls == 1)
			first++;
		else if (st.late > late0)
			late++;
		else
			unexplained++;
		late0 = st.late;
		assert_facts(m, "migrate_zone", MIGR_CALLS);
		lacked += MIGR_CALLS - m->kernel_calls;
		assert_int_equal(m->migrated, m->kernel_calls);
		prof_snapshot__destroy(s);
		child_end(&c);
	}
	printf("covered from the first zone in %d of 20 runs, %d late, %d late uncounted "
	       "(asked before the wait ended, answered after); "
	       "%llu of %d calls without facts\n",
	       first, late, unexplained, (unsigned long long)lacked, 20 * MIGR_CALLS);
	/* lost returns are rare over all runs: 5%, four times what was measured */
	assert_true(lacked <= 20 * MIGR_CALLS / 20);
	profd_done(fd);
}

/* a profd that does not answer in time: the first zone goes on without
 * it, the thread is covered later, and profd counts it as late */
static void test_late_registration(void **state)
{
	struct profd_status st;
	struct prof_snapshot *s;
	const struct prof_snap_node *init;
	struct child c;
	bool done = false;
	__u64 end;
	int fd;

	(void)state;
	fd = need_profd();
	assert_int_equal(profd_status(fd, &st), 0);
	assert_int_equal(st.late, 0);
	kill(profd_pid, SIGSTOP);
	c = spawn(NULL, 0, 10);
	/* its first zone gave up waiting for the stopped profd: it is over */
	for (end = now_ns() + 10000000000ull; now_ns() < end; usleep(10000)) {
		s = test_snapshot(c.pid);
		init = s ? node_named(s, "init_zone") : NULL;
		done = init && init->calls == 1;
		prof_snapshot__destroy(s);
		if (done)
			break;
	}
	assert_true(done);
	kill(profd_pid, SIGCONT);
	assert_int_equal(child_wait(&c), 'R');
	assert_int_equal(profd_status(fd, &st), 0);
	printf("late registrations: %u\n", st.late);
	assert_int_equal(st.late, 1);
	s = snap_of(fd, c.pid, PROFD_SNAP_START);
	assert_non_null(s);
	init = node_named(s, "init_zone");
	assert_non_null(init);
	/* its first zone ran before profd answered: no facts, and it says so */
	assert_int_equal(init->calls, 1);
	assert_int_equal(init->kernel_calls, 0);
	prof_snapshot__destroy(s);
	child_end(&c);
	profd_done(fd);
}

#define KZ_CALLS 10
static int kz_phase;

static void k_zone(void)
{
	PROF_USDT(k_zone);
	spin_ns(100000);
}

/* first KZ_CALLS calls with profd; the second time, once the agent has
 * seen profd hang up (the thread takes it at its next zone exit), more */
static void work_kz(void)
{
	int i;

	if (kz_phase++) {
		__u64 end = now_ns() + 3000000000ull;

		while (__atomic_load_n(&__prof_tls.limit, __ATOMIC_RELAXED) &&
		       __prof_tls.krec->gen && now_ns() < end)
			usleep(1000);
	}
	for (i = 0; i < KZ_CALLS; i++)
		k_zone();
}

/* after profd is gone, calls have no kernel facts, and say so */
static void test_kernel_calls_after_profd(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_node *k;
	struct child c;
	int fd;

	(void)state;
	fd = need_profd();
	c = spawn_registered(work_kz);
	close(fd);
	kill(profd_pid, SIGKILL);
	waitpid(profd_pid, NULL, 0);
	profd_pid = -1;
	assert_true(child_again(&c));
	/* profd is gone: the segment itself */
	s = test_snapshot(c.pid);
	assert_non_null(s);
	k = node_named(s, "k_zone");
	assert_non_null(k);
	printf("k_zone: %llu calls, %llu with kernel facts\n", (unsigned long long)k->calls,
	       (unsigned long long)k->kernel_calls);
	assert_int_equal(k->calls, 2 * KZ_CALLS);
	assert_facts(k, "k_zone", KZ_CALLS);
	prof_snapshot__destroy(s);
	child_end(&c);
}

/* a busy zone sharing its CPU with two hogs: preempted, never blocked */
static void work_hogged(void)
{
	int i;

	set_cpu(0);
	for (i = 0; i < SLEEP_CALLS; i++) {
		PROF_USDT(hogged_zone);
		spin_ns(20000000);
	}
}

static void test_preempted(void **state)
{
	struct prof_snapshot *s;
	const struct prof_snap_node *h;
	pid_t hog[2];
	struct child c;
	int fd, i;

	(void)state;
	fd = need_profd();
	for (i = 0; i < 2; i++) {
		hog[i] = fork();
		if (hog[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			set_cpu(0);
			for (;;)
				;
		}
		kids_add(hog[i]);
	}
	c = spawn_registered(work_hogged);
	for (i = 0; i < 2; i++)
		kill(hog[i], SIGKILL);
	s = snap_of(fd, c.pid, PROFD_SNAP_START);
	assert_non_null(s);
	h = node_named(s, "hogged_zone");
	assert_non_null(h);
	printf("hogged_zone: %llu calls, %llu preempted, %llu blocked, %.1f ms off-cpu a call\n",
	       (unsigned long long)h->calls, (unsigned long long)h->preempted,
	       (unsigned long long)h->blocked, h->offcpu_ns / 1e6 / SLEEP_CALLS);
	assert_facts(h, "hogged_zone", SLEEP_CALLS);
	/* three runnable on one CPU: a 20 ms call loses it to a hog (all of
	 * them but on a machine so busy a hog itself waits); a spin never
	 * sleeps */
	assert_true(h->preempted >= SLEEP_CALLS / 2);
	assert_int_equal(h->blocked, 0);
	assert_true(h->offcpu_ns <= prof_snap_ns(s, h->ticks));
	prof_snapshot__destroy(s);
	child_end(&c);
	profd_done(fd);
}

/* --- history under churn ------------------------------------------------- */

#define SOAK_KIDS 1500

static void soak_zone(void)
{
	PROF_USDT(soak_zone);
	spin_ns(200000);
}

static void soak_zone_short(void)
{
	PROF_USDT(soak_zone_short);
}

/* a burst of 25 calls, then idle until asked again */
static void work_soak(void)
{
	int i;

	for (i = 0; i < 25; i++)
		soak_zone();
}

/* thousands of short profiled processes, one zone each, pids recurring */
static pid_t churn_start(void)
{
	pid_t p = fork();

	if (p == 0) {
		int i;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* the kids exit(): nothing of ours buffered to print twice */
		fflush(NULL);
		for (i = 0; i < SOAK_KIDS; i++) {
			pid_t k = fork();

			if (k == 0) {
				soak_zone();
				/* a clean exit: the segment goes, half of them; the
				 * others are left as a crash leaves them */
				if (i % 2)
					exit(0);
				_exit(0);
			}
			if (k > 0)
				waitpid(k, NULL, 0);
		}
		_exit(0);
	}
	return p;
}

/*
 * profd following thousands of segments created and exiting around a
 * steady program: every --last N window covers at most N s and at most
 * the program's age, and profd's since-start equals a direct read (the
 * program is idle between bursts, so both see the same calls).
 */
static void test_history_soak(void **state)
{
	struct prof_snapshot *s, *d;
	struct profd_answer a;
	const struct prof_snap_node *n, *dn;
	__u64 born, end;
	__u32 secs;
	struct child c;
	pid_t churn;
	int fd, rounds = 0, st;

	(void)state;
	fd = need_profd();
	born = now_ns();
	c = spawn_registered(work_soak);
	churn = churn_start();
	assert_true(churn > 0);
	kids_add(churn);
	for (end = now_ns() + 8000000000ull; now_ns() < end; rounds++) {
		assert_true(child_again(&c));
		for (secs = 1; secs <= 3; secs++) {
			s = NULL;
			assert_int_equal(window_of(fd, c.pid, secs, &s, &a), 0);
			if (a.span_ns > (__u64)secs * 1000000000ull || a.span_ns > now_ns() - born)
				fail_msg("round %d: --last %u covers %.3f s, the process is %.3f s old",
					 rounds, secs, a.span_ns / 1e9, (now_ns() - born) / 1e9);
			prof_snapshot__destroy(s);
		}
		s = snap_of(fd, c.pid, PROFD_SNAP_START);
		d = test_snapshot(c.pid);
		assert_non_null(s);
		assert_non_null(d);
		n = node_named(s, "soak_zone");
		dn = node_named(d, "soak_zone");
		assert_non_null(n);
		assert_non_null(dn);
		if (n->calls != dn->calls)
			fail_msg("round %d: profd says %llu calls, the segment %llu", rounds,
				 (unsigned long long)n->calls, (unsigned long long)dn->calls);
		assert_int_equal(n->calls, 25ull * (rounds + 2));
		prof_snapshot__destroy(s);
		prof_snapshot__destroy(d);
		/* the next round once profd has sampled again (about 200 ms at
		 * its 50 ms interval), not after a fixed pause */
		wait_samples(fd, 4);
	}
	printf("%d rounds beside %d short processes\n", rounds, SOAK_KIDS);
	assert_true(rounds >= 10);
	kill(churn, SIGKILL);
	waitpid(churn, &st, 0);
	child_end(&c);
	profd_done(fd);
}

/* --- a full /dev/shm ------------------------------------------------------ */

static void *shm_thread(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 100; i++)
		soak_zone_short();
	return NULL;
}

/* the program: zones in main, four threads of zones; it must finish */
static void shm_program(void)
{
	pthread_t th[4];
	int i;

	for (i = 0; i < 100; i++)
		soak_zone_short();
	for (i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, shm_thread, NULL))
			_exit(6);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	exit(0);
}

/* fill /dev/shm (a private 2 MB tmpfs) but for 'room' bytes; 0 or -errno */
static int shm_fill(size_t room)
{
	char buf[4096] = { 0 };
	struct statvfs sv;
	int fd = open("/dev/shm/filler", O_CREAT | O_WRONLY | O_TRUNC, 0600);

	if (fd < 0)
		return -errno;
	while (write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf))
		;
	fsync(fd);
	if (!fstatvfs(fd, &sv) && room) {
		struct stat st;

		/* give back 'room' bytes */
		if (!fstat(fd, &st) && st.st_size > (off_t)room)
			if (ftruncate(fd, st.st_size - (off_t)room))
				room = 0;
	}
	close(fd);
	return 0;
}

/*
 * Another user filled /dev/shm: the program runs on, with what fits
 * profiled and the rest counted, never killed by SIGBUS.  Once with 16 KB
 * left (no slab fits) and once with 600 KB (the first thread's does).
 */
static void test_full_shm(void **state)
{
	static const size_t rooms[] = { 16384, 600 * 1024 };
	size_t r;

	(void)state;
	if (geteuid() != 0) {
		printf("skip: not root\n");
		skip();
	}
	for (r = 0; r < 2; r++) {
		pid_t k = fork();
		int st = -1;

		if (k == 0) {
			struct prof_snapshot *s;
			pid_t prog;
			int pst;

			if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=2m,mode=1777"))
				_exit(77);
			if (shm_fill(rooms[r]))
				_exit(78);
			prog = fork();
			if (prog == 0) {
				setenv("PROF_KEEP", "1", 1);
				setenv("PROF_NO_DAEMON", "1", 1);
				setenv("PROF_QUIET", "1", 1);
				shm_program();
			}
			if (waitpid(prog, &pst, 0) != prog)
				_exit(79);
			if (!WIFEXITED(pst) || WEXITSTATUS(pst)) {
				printf("room %zu: the program ended with status %#x\n", rooms[r], pst);
				fflush(stdout);
				_exit(80);
			}
			s = test_snapshot(prog);
			if (r == 0) {
				/* a segment may exist, with nothing recorded but the loss */
				printf("room %zu: %s, %llu not profiled\n", rooms[r],
				       s ? "a segment" : "no segment",
				       s ? (unsigned long long)s->nospace : 0ull);
				_exit(s && !s->nospace ? 81 : 0);
			}
			if (!s)
				_exit(82);
			printf("room %zu: %u threads profiled, %llu not profiled\n", rooms[r],
			       s->nthreads, (unsigned long long)s->nospace);
			/* the first thread's zones all counted; the rest said lost */
			if (!s->nospace || !s->nthreads || s->threads[0].nnodes < 3)
				_exit(83);
			if (!node_named(s, "soak_zone_short") ||
			    node_named(s, "soak_zone_short")->calls < 100)
				_exit(84);
			_exit(0);
		}
		assert_true(k > 0);
		assert_int_equal(waitpid(k, &st, 0), k);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			printf("skip: no private /dev/shm\n");
			skip();
		}
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

/* --- off-cpu ---------------------------------------------------------- */

/* MONO: the child's zones on the monotonic clock (PROF_CLOCK=mono), whose
 * exits take their kernel facts in __prof_anomaly */
static void offcpu_case(bool mono)
{
	struct prof_snapshot *s;
	const struct prof_snap_node *sl, *sp;
	double wall, off, on, cpu;
	struct child c;
	int fd;

	fd = need_profd();
	if (mono)
		setenv("PROF_CLOCK", "mono", 1);
	c = spawn(work_sleep, 0, 5);
	unsetenv("PROF_CLOCK");
	assert_int_equal(child_wait(&c), 'R');
	s = snap_of(fd, c.pid, PROFD_SNAP_START);
	assert_non_null(s);
	assert_int_equal(s->clock, mono ? PROF_CLOCK_MONO : PROF_CLOCK_TSC);
	sl = node_named(s, "sleep_zone");
	sp = node_named(s, "spin_zone");
	assert_non_null(sl);
	assert_non_null(sp);
	assert_int_equal(sl->calls, SLEEP_CALLS);
	assert_int_equal(sp->calls, SLEEP_CALLS);

	wall = (double)prof_snap_ns(s, sl->ticks) / SLEEP_CALLS / 1e6;
	off = (double)sl->offcpu_ns / SLEEP_CALLS / 1e6;
	on = wall - off;
	printf("sleep_zone: wall %.2f ms, off-cpu %.2f ms, on-cpu %.3f ms per call\n", wall, off,
	       on);
	/* now and then a return to a CPU reaches no sched_switch program
	 * (profsched.h): that sleep has no kernel facts, and no time off the
	 * CPU in the sum (seen once here: 18.07 ms a call of the ten) */
	assert_true(off >= 19.0 * (SLEEP_CALLS - 1) / SLEEP_CALLS && off <= 40.0);
	assert_true(on >= -0.5 && on < 2.0 + 21.0 / SLEEP_CALLS);
	/* a sleep is a voluntary switch: blocked; preempted only as often as
	 * the thread itself says it was (0 on an idle machine) */
	assert_facts(sl, "sleep_zone", SLEEP_CALLS);
	assert_int_equal(sl->blocked, sl->kernel_calls);
	if (sl->preempted > child_cpu[2])
		fail_msg("sleep_zone: %llu calls preempted, the thread was switched out "
			 "involuntarily %llu times in them",
			 (unsigned long long)sl->preempted, (unsigned long long)child_cpu[2]);
	/* off-CPU time never exceeds the calls' time */
	assert_true(sl->offcpu_ns <= prof_snap_ns(s, sl->ticks));
	assert_true(sp->offcpu_ns <= prof_snap_ns(s, sp->ticks));

	wall = (double)prof_snap_ns(s, sp->ticks) / SLEEP_CALLS / 1e6;
	off = (double)sp->offcpu_ns / SLEEP_CALLS / 1e6;
	on = wall - off;
	cpu = (double)child_cpu[1] / SLEEP_CALLS / 1e6;
	printf("spin_zone: wall %.2f ms, off-cpu %.3f ms, on-cpu %.2f ms per call, "
	       "thread cpu time %.2f ms\n",
	       wall, off, on, cpu);
	/*
	 * on-cpu is wall minus what the kernel saw it switched out: it must
	 * match the thread's own cpu clock, however busy the machine is (on
	 * an idle one it is ~ wall)
	 */
	assert_true(wall >= 19.0);
	assert_true(fabs(on - cpu) <= 0.5 + 0.05 * wall);
	prof_snapshot__destroy(s);
	child_end(&c);
	profd_done(fd);
}

static void test_offcpu(void **state)
{
	(void)state;
	offcpu_case(false);
}

static void test_offcpu_mono(void **state)
{
	(void)state;
	offcpu_case(true);
}

/* --- in-zone rates ----------------------------------------------------- */

/* two seconds inside zones, one thread: 400 calls of 5 ms spinning (a
 * ~1 s moving average reaches 1 - 1/e^2 of it).  A zone's time counts
 * when it ends: calls ten times shorter than profd's 50 ms samples keep a
 * late sample from seeing one more call than it spans by more than 10% */
static void work_busy(void)
{
	int i;

	for (i = 0; i < 400; i++) {
		PROF_USDT(busy_zone);
		spin_ns(5000000);
	}
}

/*
 * profd's history of deltas: while one thread spends all its time in a
 * zone, profd's list says about one thread's worth in zones, as the last
 * sample and as the ~1 s average; and nothing for a process that only
 * waits outside zones.
 */
static void test_inzone_rates(void **state)
{
	struct profd_proc *pp;
	__u32 best_now = 0, best_short = 0, idle_now = ~0u;
	struct child c, idle;
	size_t n, i;
	__u64 end;
	int fd;

	(void)state;
	fd = need_profd();
	idle = spawn_registered(NULL);
	c = spawn(work_busy, 0, 5);
	for (end = now_ns() + 10000000000ull; now_ns() < end && best_short < 700; usleep(50000)) {
		assert_int_equal(profd_list(fd, &pp, &n), 0);
		for (i = 0; i < n; i++) {
			if ((pid_t)pp[i].pid == c.pid) {
				if (pp[i].inzone_now > best_now)
					best_now = pp[i].inzone_now;
				if (pp[i].inzone_short > best_short)
					best_short = pp[i].inzone_short;
			}
			if ((pid_t)pp[i].pid == idle.pid)
				idle_now = pp[i].inzone_now;
		}
		free(pp);
	}
	printf("busy child: in zones %.2f now, %.2f over ~1 s (best seen); idle child %.2f\n",
	       best_now / 1e3, best_short / 1e3, idle_now / 1e3);
	/* one thread: at most one thread's worth, whatever a sample's
	 * jitter (a call that began before a sample adds all of it to it) */
	assert_true(best_now >= 700 && best_now <= 1000);
	assert_true(best_short >= 700 && best_short <= 1000);
	assert_int_equal(idle_now, 0);
	assert_int_equal(child_wait(&c), 'R');
	child_end(&c);
	child_end(&idle);
	profd_done(fd);
}

/* --- before and after ------------------------------------------------- */

static void test_before_after(void **state)
{
	struct child before, after;
	struct profd_proc *procs;
	char paths[1][96];
	size_t n, i;
	int fd, seen = 0;
	__u64 end;

	(void)state;
	if (geteuid() != 0) {
		printf("skip: not root\n");
		skip();
	}
	/* before: the agent finds no socket and keeps retrying */
	snprintf(sock_path, sizeof(sock_path), SOCK_DIR "/profd.%d.sock", (int)getpid());
	unlink(sock_path);
	setenv("PROF_SOCKET", sock_path, 1);
	before = spawn(NULL, 0, 10);
	/* its first zone ran (its segment is there) and found no profd */
	for (end = now_ns() + 10000000000ull;
	     !test_seg_paths(before.pid, TEST_ANY_TOKEN, paths, 1) && now_ns() < end;)
		usleep(10000);
	assert_int_equal(test_seg_paths(before.pid, TEST_ANY_TOKEN, paths, 1), 1);
	fd = need_profd();
	assert_int_equal(child_wait(&before), 'R');
	after = spawn_registered(NULL);
	/* profd itself sees both with a kernel slot, the first once its agent
	 * found the socket */
	for (end = now_ns() + 10000000000ull; seen < 2 && now_ns() < end; usleep(20000)) {
		seen = 0;
		assert_int_equal(profd_list(fd, &procs, &n), 0);
		for (i = 0; i < n; i++)
			if ((procs[i].pid == (__u32)before.pid ||
			     procs[i].pid == (__u32)after.pid) &&
			    procs[i].alive && procs[i].kernel >= 1)
				seen++;
		free(procs);
	}
	assert_int_equal(seen, 2);
	child_end(&before);
	child_end(&after);
	profd_done(fd);
}

/* --- kernel records per uid --------------------------------------------- */

static int scan_runs;

/*
 * In a child: the kernel records this process has mapped (the array its
 * record lies in, whole) that belong to a tid of another process ([0]),
 * and to its own ([1]); then SLEEP_CALLS sleeps, for kernel facts.  Run
 * again ('W'), a record of another process is fatal: the child exits.
 */
static void work_scan_records(void)
{
	const char *rec = (const char *)(uintptr_t)__prof_tls.krec;
	unsigned long lo = 0, hi = 0, a, b;
	__u64 seen[2] = { 0, 0 };
	char line[512], path[64];
	struct stat st;
	FILE *f;
	int i;

	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && (uintptr_t)rec >= a &&
		    (uintptr_t)rec < b) {
			lo = a;
			hi = b;
		}
	if (f)
		fclose(f);
	for (a = lo; a + sizeof(struct prof_sched_rec) <= hi; a += sizeof(struct prof_sched_rec)) {
		const volatile struct prof_sched_rec *r = (const void *)a;

		if (!r->gen)
			continue; /* never assigned */
		snprintf(path, sizeof(path), "/proc/self/task/%u", r->tid);
		seen[stat(path, &st) == 0]++;
	}
	if (scan_runs++ && seen[0])
		_exit(7);
	for (i = 0; i < SLEEP_CALLS; i++)
		sleep_zone();
	zone_cpu[0] = seen[0];
	zone_cpu[1] = seen[1];
}

/* record arrays profd holds: frozen arrays of records (its own tables are
 * not frozen; its read-only data has other values) */
static int record_arrays(void)
{
	char path[96], line[128];
	int n = 0, k;
	unsigned v;
	glob_t g;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/*", (int)profd_pid);
	if (glob(path, 0, NULL, &g))
		return 0;
	for (i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (!f)
			continue;
		k = 0;
		while (fgets(line, sizeof(line), f)) {
			k += !strcmp(line, "map_type:\t2\n");
			k += !strcmp(line, "frozen:\t1\n");
			k += sscanf(line, "value_size: %u", &v) == 1 &&
			     v == sizeof(struct prof_sched_rec);
		}
		n += k == 3;
		fclose(f);
	}
	globfree(&g);
	return n;
}

/* profd holds WANT record arrays within SECONDS; says how many it held if
 * not (more than one too many is an array of a uid that came meanwhile) */
static bool wait_record_arrays(int want, double seconds)
{
	__u64 end = now_ns() + (__u64)(seconds * 1e9);
	int n;

	do {
		n = record_arrays();
		if (n == want)
			return true;
		usleep(10000);
	} while (now_ns() < end);
	printf("profd holds %d record arrays after %.0f s, not %d\n", n, seconds, want);
	return false;
}

/* uid's sleep_zone, as root sees it: every call with kernel facts, blocked */
static void check_sleeps(int fd, pid_t pid, __u64 calls)
{
	struct prof_snapshot *s = snap_of(fd, pid, PROFD_SNAP_START);
	const struct prof_snap_node *sl;

	assert_non_null(s);
	sl = node_named(s, "sleep_zone");
	assert_non_null(sl);
	printf("pid %d: sleep_zone %llu calls, %llu with facts, %llu blocked, off-cpu %.2f ms "
	       "of %.2f ms\n",
	       (int)pid, (unsigned long long)sl->calls, (unsigned long long)sl->kernel_calls,
	       (unsigned long long)sl->blocked, sl->offcpu_ns / 1e6,
	       prof_snap_ns(s, sl->ticks) / 1e6);
	assert_int_equal(sl->calls, calls);
	assert_facts(sl, "sleep_zone", calls);
	assert_int_equal(sl->blocked, sl->kernel_calls);
	assert_true(sl->offcpu_ns >= sl->kernel_calls * 19000000ull);
	assert_true(sl->offcpu_ns <= prof_snap_ns(s, sl->ticks));
	prof_snapshot__destroy(s);
}

/*
 * Each user maps only their own threads' records: a second user's
 * process, registered while the first user's is, finds no record of
 * another process in what it mapped, and the first user's, looking again
 * once the second's is registered, neither; both have exact kernel facts.
 * A uid's array goes a few seconds after its last process.
 */
static void test_records_per_uid(void **state)
{
	struct profd_status st;
	struct child a, b;
	__u32 threads;
	__u64 end, ended;
	int fd, arrays;

	(void)state;
	fd = need_profd();
	a = spawn(work_scan_records, UID_A, 5);
	assert_int_equal(child_wait(&a), 'R');
	assert_int_equal(child_cpu[0], 0);
	assert_true(child_cpu[1] >= 1);
	b = spawn(work_scan_records, UID_B, 5);
	assert_int_equal(child_wait(&b), 'R');
	printf("uid %u maps %llu records of its own, %llu of others\n", UID_B,
	       (unsigned long long)child_cpu[1], (unsigned long long)child_cpu[0]);
	assert_int_equal(child_cpu[0], 0);
	assert_true(child_cpu[1] >= 1);
	/* the first user looks again, the second registered meanwhile */
	assert_true(child_again(&a));
	assert_int_equal(record_arrays(), 2);
	check_sleeps(fd, a.pid, 2 * SLEEP_CALLS);
	check_sleeps(fd, b.pid, SLEEP_CALLS);
	/* a uid's array goes a few seconds after its last process (3 s:
	 * the next program of that user finds it made) */
	assert_int_equal(profd_status(fd, &st), 0);
	threads = st.threads;
	ended = now_ns();
	child_end(&a);
	/* its slots back (its connection gone), its array still there */
	for (end = now_ns() + 5000000000ull; st.threads >= threads && now_ns() < end;
	     usleep(10000))
		assert_int_equal(profd_status(fd, &st), 0);
	assert_true(st.threads < threads);
	/* unless this test was kept off the CPU the whole linger since: then
	 * gone is right (a loaded machine) */
	arrays = record_arrays();
	if (arrays != 2) {
		printf("%d record arrays %.1f s after uid %u's last process ended\n", arrays,
		       (now_ns() - ended) / 1e9, UID_A);
		assert_int_equal(arrays, 1);
		assert_true(now_ns() - ended >= 3000000000ull);
	}
	assert_true(wait_record_arrays(1, 10));
	child_end(&b);
	assert_true(wait_record_arrays(0, 10));
	profd_done(fd);
}

/* --- kernel records reused ------------------------------------------------ */

#define REUSE_SLEEPS 30

static void reuse_sleep(int who)
{
	struct timespec ts = { 0, 20000000 };

	if (who == 0) {
		PROF_USDT(reuse_a_zone);
		nanosleep(&ts, NULL);
	} else if (who == 1) {
		PROF_USDT(reuse_b_zone);
		nanosleep(&ts, NULL);
	} else {
		PROF_USDT(reuse_c_zone);
		nanosleep(&ts, NULL);
	}
}

struct reuse_thread {
	int who;			   /* its zone: reuse_a_zone, _b_, _c_ */
	const volatile void *rec;	   /* its kernel record */
	__u64 gen;			   /* that record's gen when it took it */
	unsigned bad;			   /* REUSE_* it found */
};

#define REUSE_UNREGISTERED 1u
#define REUSE_TID 2u	/* the record names another tid */
#define REUSE_SEQ 4u	/* more switches than the thread made */
#define REUSE_OFFCPU 8u /* more time off the CPU than the thread lived */
#define REUSE_MIGR 16u	/* more moves than returns to a CPU */
#define REUSE_LAST 32u	/* its last preempted or blocked switch beyond its switches */

/*
 * A thread that registers, reads its fresh record, then sleeps in its
 * zone.  Started from zero at its first switch, the record counts no more
 * switches than the thread itself made (its rusage), no more time off the
 * CPU than it has lived, no more moves than returns: a record left with a
 * previous owner's numbers (thirty sleeps and more) fails them.
 */
static void *reuse_thread_main(void *arg)
{
	struct reuse_thread *rt = arg;
	const volatile struct prof_sched_rec *r;
	__u64 t0 = now_ns(), seq, off, life;
	__u32 pre, blk, sw;
	struct rusage ru;
	int i;

	if (!wait_registered(10)) {
		rt->bad = REUSE_UNREGISTERED;
		return NULL;
	}
	r = __prof_tls.krec;
	rt->rec = r;
	rt->gen = r->gen;
	seq = r->seq;
	off = r->offcpu_ns;
	pre = r->preempt_seq;
	blk = r->block_seq;
	if (r->tid != (__u32)gettid())
		rt->bad |= REUSE_TID;
	/* read after the record: the thread's switches so far, and its life */
	life = now_ns() - t0;
	getrusage(RUSAGE_THREAD, &ru);
	sw = (__u32)(ru.ru_nvcsw + ru.ru_nivcsw);
	if ((__u32)seq > sw)
		rt->bad |= REUSE_SEQ;
	if (off > life)
		rt->bad |= REUSE_OFFCPU;
	if ((seq >> PROF_SCHED_SEQ_MIGR_SHIFT) > (__u64)sw + 1)
		rt->bad |= REUSE_MIGR;
	if (pre > (__u32)seq || blk > (__u32)seq)
		rt->bad |= REUSE_LAST;
	if (rt->bad)
		fprintf(stderr, "thread %d: record %p gen %llu: seq %llx, off-cpu %llu ns, "
			"preempted at %u, blocked at %u; %u switches, %llu ns alive\n",
			(int)gettid(), (const volatile void *)r, (unsigned long long)rt->gen,
			(unsigned long long)seq, (unsigned long long)off, pre, blk, sw,
			(unsigned long long)life);
	for (i = 0; i < REUSE_SLEEPS; i++)
		reuse_sleep(rt->who);
	return NULL;
}

/* profd's registered threads, asked from the child (within 5 s) */
static bool reuse_threads_are(__u32 want)
{
	const char *sock = getenv("PROF_SOCKET");
	struct profd_status st;
	__u64 end = now_ns() + 5000000000ull;
	int fd = sock ? profd_connect(sock) : -1;
	bool ok = false;

	while (fd >= 0 && !ok && now_ns() < end) {
		ok = !profd_status(fd, &st) && st.threads == want;
		if (!ok)
			usleep(10000);
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

static void reuse_run(struct reuse_thread *rt)
{
	pthread_t th;

	if (pthread_create(&th, NULL, reuse_thread_main, rt) || pthread_join(th, NULL))
		rt->bad |= REUSE_UNREGISTERED;
}

/*
 * In a child (its main thread registered, profd with two slots): the first
 * run, thread A then, once profd has its slot back, thread B, which can
 * only have A's record; the second run (after profd restarted), thread C.
 * zone_cpu[0]: what A and B found wrong; [1]: B had A's record.  What C
 * finds wrong ends the child.
 */
static int reuse_runs;

static void work_reuse(void)
{
	struct reuse_thread a = { 0 }, b = { 0 }, c = { 0 };

	if (reuse_runs++) {
		c.who = 2;
		reuse_run(&c);
		if (c.bad)
			_exit(8); /* child_again sees no answer */
		return;
	}
	a.who = 0;
	reuse_run(&a);
	b.who = 1;
	if (!reuse_threads_are(1))
		b.bad |= REUSE_UNREGISTERED;
	else
		reuse_run(&b);
	zone_cpu[0] = a.bad | b.bad;
	zone_cpu[1] = b.rec && b.rec == a.rec && b.gen != a.gen;
}

/* ZONE's sleeps: every call, exactly, with kernel facts blocked */
static void check_reuse_zone(const struct prof_snapshot *s, const char *zone)
{
	const struct prof_snap_node *n = node_named(s, zone);

	assert_non_null(n);
	printf("%s: %llu calls, %llu with facts, %llu blocked, %llu migrated, off-cpu %.2f ms "
	       "of %.2f ms\n",
	       zone, (unsigned long long)n->calls, (unsigned long long)n->kernel_calls,
	       (unsigned long long)n->blocked, (unsigned long long)n->migrated,
	       n->offcpu_ns / 1e6, prof_snap_ns(s, n->ticks) / 1e6);
	assert_int_equal(n->calls, REUSE_SLEEPS);
	assert_facts(n, zone, REUSE_SLEEPS);
	assert_int_equal(n->blocked, n->kernel_calls);
	assert_true(n->migrated <= n->kernel_calls);
	assert_true(n->offcpu_ns >= n->kernel_calls * 19000000ull);
	assert_true(n->offcpu_ns <= prof_snap_ns(s, n->ticks));
}

/*
 * A kernel record handed from one thread to the next, and from one profd
 * to the next, starts from its new owner's numbers: with two slots (the
 * child's main thread holds one), thread B gets thread A's record, and a
 * thread registered with a restarted profd gets a record of its own; each
 * finds its record counting only its own switches and time, and each
 * zone's sleeps have exact kernel facts.
 */
static void test_records_reused(void **state)
{
	static const char *const two[] = { "--slots", "2", "--uid-slots", "2", NULL };
	struct prof_snapshot *s;
	struct child c;
	int fd;

	(void)state;
	fd = need_profd_opts(two);
	c = spawn_registered(work_reuse);
	assert_int_equal(child_cpu[0], 0);
	assert_int_equal(child_cpu[1], 1);
	s = snap_of(fd, c.pid, PROFD_SNAP_START);
	assert_non_null(s);
	check_reuse_zone(s, "reuse_a_zone");
	check_reuse_zone(s, "reuse_b_zone");
	prof_snapshot__destroy(s);
	close(fd);

	/* the next profd: the child registers again, a new thread too */
	stop_profd();
	fd = start_profd_opts(two);
	assert_true(fd >= 0);
	assert_true(child_again(&c));
	s = snap_of(fd, c.pid, PROFD_SNAP_START);
	assert_non_null(s);
	check_reuse_zone(s, "reuse_c_zone");
	prof_snapshot__destroy(s);
	child_end(&c);
	profd_done(fd);
}

/* the path of pid's live segment (pid's current start token) */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_migrated, teardown),
		cmocka_unit_test_teardown(test_pinned_not_migrated, teardown),
		cmocka_unit_test_teardown(test_covered_from_first_zone, teardown),
		cmocka_unit_test_teardown(test_kernel_calls_after_profd, teardown),
		cmocka_unit_test_teardown(test_late_registration, teardown),
		cmocka_unit_test_teardown(test_preempted, teardown),
		cmocka_unit_test_teardown(test_history_soak, teardown),
		cmocka_unit_test_teardown(test_full_shm, teardown),
		cmocka_unit_test_teardown(test_offcpu, teardown),
		cmocka_unit_test_teardown(test_offcpu_mono, teardown),
		cmocka_unit_test_teardown(test_inzone_rates, teardown),
		cmocka_unit_test_teardown(test_before_after, teardown),
		cmocka_unit_test_teardown(test_records_per_uid, teardown),
		cmocka_unit_test_teardown(test_records_reused, teardown),
	};

	/* its containers' processes are found through /proc/PID/root */
	profd_ns_scan = true;
	return profd_run_tests(tests);
}
