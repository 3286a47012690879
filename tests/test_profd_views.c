// SPDX-License-Identifier: MIT
/*
 * test_profd_views.c - root tier: what profd answers with, and what
 * profctl shows of it: snapshots since start and lazily, top, resets both
 * ways and per user, post-mortem data, the last N seconds, history in
 * bounded memory, an idle profd's memory.
 *
 * Fixtures (profd, the child driver, teardown): profd_fixture.h.
 */
#include "profd_fixture.h"
#include "shm_private.h"

static int teardown(void **state)
{
	(void)state;
	fixture_teardown();
	return 0;
}

/* --- what profd answers with ------------------------------------------ */

/* calls of the zone called name over every thread of a lazy snapshot */
static __u64 lazy_calls(const struct prof_snapshot *s, const char *name)
{
	struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
	const struct prof_snap_thread *t;
	const struct prof_snap_node *n;
	__u64 calls = 0;

	while ((t = prof_snap_next(&it))) {
		n = test_node(s, t, name);
		calls += n ? n->calls : 0;
	}
	assert_int_equal(it.err, 0);
	return calls;
}

/*
 * Nothing to subtract (since start): profd hands over the live segment,
 * read lazily as a direct read reads it, and the same data.  profd keeps
 * no resets: a snapshot since one is refused as unsupported, and the live
 * segment still counts every call.
 */
static void test_snapshot_paths(void **state)
{
	const unsigned int lazy = PROF_READ_LAZY;
	struct prof_snapshot *s = NULL, *d;
	struct child c;
	int fd;

	(void)state;
	fd = need_profd();
	c = spawn_followed(fd, work_sleep);
	assert_int_equal(profd_snapshot_opts(fd, c.pid, PROFD_SNAP_START, 0, lazy, &s, NULL), 0);
	assert_non_null(s->lazy);
	d = test_snapshot_opts(c.pid, lazy);
	assert_non_null(d);
	assert_int_equal(s->nthreads, d->nthreads);
	assert_int_equal(s->start_token, d->start_token);
	assert_int_equal(lazy_calls(s, "sleep_zone"), SLEEP_CALLS);
	assert_int_equal(lazy_calls(d, "sleep_zone"), SLEEP_CALLS);
	prof_snapshot__destroy(s);
	prof_snapshot__destroy(d);

	assert_int_equal(profd_snapshot_opts(fd, c.pid, PROFD_SNAP_RESET, 0, lazy, &s, NULL),
			 -EOPNOTSUPP);
	assert_null(s);
	assert_true(child_again(&c));
	assert_int_equal(profd_snapshot_opts(fd, c.pid, PROFD_SNAP_START, 0, lazy, &s, NULL), 0);
	assert_int_equal(lazy_calls(s, "sleep_zone"), 2 * SLEEP_CALLS);
	prof_snapshot__destroy(s);
	child_end(&c);
	profd_done(fd);
}

/* profd's snapshot of pid has calls of zones A and B (a deadline of 10 s) */
static void wait_zones_seen(int fd, pid_t pid, const char *a, const char *b)
{
	struct prof_snapshot *s;
	bool seen = false;
	__u64 end;

	for (end = now_ns() + 10000000000ull; !seen && now_ns() < end; usleep(20000)) {
		if (profd_snapshot(fd, pid, PROFD_SNAP_START, 0, &s))
			continue;
		seen = node_named(s, a) && node_named(s, b);
		prof_snapshot__destroy(s);
	}
	assert_true(seen);
}

/* two threads in zones for ~2 s: main in reg_zone, a second in unreg_zone */
/* one site both threads call: the registered one first, then only the other */
static void moved_call(void)
{
	PROF_USDT(moved_zone);
	usleep(2000);
}

static void *unreg_thread(void *arg)
{
	for (int i = 0; i < 800; i++) {
		{
			PROF_USDT(unreg_zone);
			usleep(2000);
		}
		moved_call();
	}
	return arg;
}

static void work_two_kinds(void)
{
	pthread_t th;

	for (int i = 0; i < 5; i++)
		moved_call();
	if (pthread_create(&th, NULL, unreg_thread, NULL))
		_exit(6);
	for (int i = 0; i < 800; i++) {
		PROF_USDT(reg_zone);
		usleep(2000);
	}
	pthread_join(th, NULL);
}

/* the columns of zone's row in the last frame of top's text, or NULL */
static char *top_row(const char *text, const char *zone, char *buf, size_t len)
{
	const char *at = NULL, *p = text, *nl;

	while ((p = strstr(p, zone))) {
		at = p;
		p += strlen(zone);
	}
	if (!at)
		return NULL;
	while (at > text && at[-1] != '\n')
		at--;
	nl = strchr(at, '\n');
	snprintf(buf, len, "%.*s", (int)(nl ? nl - at : (long)strlen(at)), at);
	return buf;
}

/* how many of a row's blank-separated fields are "-" */
static int dash_fields(const char *row)
{
	int n = 0;

	for (const char *p = row; (p = strstr(p, " -")); p += 2)
		n += p[2] == ' ' || !p[2];
	return n;
}

/*
 * top's kernel columns for an interval whose calls had no kernel facts
 * say "-" (unknown), not 0 and not all of the time on the CPU: a uid held
 * to one kernel slot, its second thread's zone has none.  So does a zone
 * whose earlier calls had them (the first thread's) and whose calls in
 * the interval do not (the second's): the interval's count decides.
 */
static void test_top_unknown_facts(void **state)
{
	static const char *const one[] = { "--uid-slots", "1", NULL };
	char p[16], row[3][512], *text = NULL;
	const char *args[] = { "top", "--pid", p, "-d", "0.3", "-n", "3", NULL };
	struct child c;
	int fd;

	(void)state;
	fd = need_profd_opts(one);
	c = spawn(work_two_kinds, UID_A, 5);
	snprintf(p, sizeof(p), "%d", (int)c.pid);
	/* its zones run meanwhile: top samples them once profd sees both */
	wait_zones_seen(fd, c.pid, "reg_zone", "unreg_zone");
	assert_int_equal(profctl_run(args, false, &text), 0);
	assert_non_null(text);
	if (!strstr(text, "on-cpu/s"))
		fail_msg("no kernel columns:\n%s", text);
	assert_non_null(top_row(text, "unreg_zone", row[0], sizeof(row[0])));
	assert_non_null(top_row(text, " reg_zone", row[1], sizeof(row[1])));
	printf("%s\n%s\n", row[0], row[1]);
	/* the unregistered thread's row: its four kernel columns unknown */
	assert_non_null(strstr(row[0], " - "));
	assert_null(strstr(row[1], " - "));
	assert_non_null(top_row(text, "moved_zone", row[2], sizeof(row[2])));
	printf("%s\n", row[2]);
	/* all four kernel columns: on-CPU, preempted, blocked, migrated */
	assert_int_equal(dash_fields(row[2]), 4);
	free(text);
	assert_int_equal(child_wait(&c), 'R');
	child_end(&c);
	profd_done(fd);
}

/*
 * profctl top through profd: it maps the segment profd hands over once
 * and streams it every refresh, as it streams its own without profd.
 */
static void test_top_via_profd(void **state)
{
	char pid[16], *text = NULL;
	const char *args[] = { "top", "--pid", pid, "-d", "0.05", "-n", "3", NULL };
	struct child c;
	int fd;

	(void)state;
	fd = need_profd();
	c = spawn_followed(fd, work_sleep);
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	assert_int_equal(profctl_run(args, false, &text), 0);
	assert_non_null(text);
	assert_non_null(strstr(text, "profctl top - pid"));
	assert_non_null(strstr(text, "sleep_zone"));
	assert_non_null(strstr(text, "spin_zone"));
	/* the kernel columns, as report has them */
	assert_non_null(strstr(text, "on-cpu/s"));
	assert_non_null(strstr(text, "preempt/s"));
	assert_non_null(strstr(text, "blocked/s"));
	free(text);
	child_end(&c);
	profd_done(fd);
}

/* uid's profctl reset (0: ours), through profd or not, then a round of c's work */
static void reset_then_round(uid_t uid, const char *const *reset, bool no_daemon, struct child *c)
{
	char *text = NULL;

	assert_int_equal(profctl_as(uid, reset, no_daemon, &text), 0);
	free(text);
	assert_true(child_again(c));
}

/* zone's calls in uid's report of pid are n, read through profd and without it */
static void calls_both_ways(uid_t uid, pid_t pid, const char *zone, long n)
{
	int way;

	for (way = 0; way < 2; way++)
		assert_int_equal(user_calls(uid, pid, zone, way), n);
}

/* profctl's baseline files in a private directory of ours, and a child
 * running work_sleep once profd follows it, its pid in p (16 bytes) */
static struct child sleeper_followed(int fd, char *p)
{
	struct child c;

	xdg_private();
	c = spawn_followed(fd, work_sleep);
	snprintf(p, 16, "%d", (int)c.pid);
	return c;
}

/*
 * A reset is one file of its user's: it counts whichever way it was made
 * (through profd or not) and whichever way the report is read (in both
 * orders), and across a restart of profd.
 */
static void test_reset_both_ways(void **state)
{
	char p[16];
	const char *reset[] = { "reset", "--pid", p, NULL };
	struct prof_snapshot *s;
	struct child c;
	int fd;

	(void)state;
	fd = need_profd();
	c = sleeper_followed(fd, p);
	assert_int_equal(profctl_calls(c.pid, "sleep_zone", false), SLEEP_CALLS);

	/* reset without profd, one more round: both ways count that round */
	reset_then_round(0, reset, true, &c);
	calls_both_ways(0, c.pid, "sleep_zone", SLEEP_CALLS);

	/* two more rounds, reset through profd, one more: still one round */
	assert_true(child_again(&c));
	assert_true(child_again(&c));
	assert_int_equal(profctl_calls(c.pid, "sleep_zone", false), 3 * SLEEP_CALLS);
	reset_then_round(0, reset, false, &c);
	calls_both_ways(0, c.pid, "sleep_zone", SLEEP_CALLS);

	/* reset through profd, a round, reset without it, a round: only the
	 * last round counts, and the other way round too */
	reset_then_round(0, reset, false, &c);
	reset_then_round(0, reset, true, &c);
	calls_both_ways(0, c.pid, "sleep_zone", SLEEP_CALLS);
	reset_then_round(0, reset, true, &c);
	reset_then_round(0, reset, false, &c);
	calls_both_ways(0, c.pid, "sleep_zone", SLEEP_CALLS);

	/* profd restarts: the reset holds through the new one, and one made
	 * through it holds without it */
	assert_true(child_again(&c));
	close(fd);
	stop_profd();
	fd = need_profd();
	s = snap_of(fd, c.pid, PROFD_SNAP_START);
	assert_non_null(s);
	prof_snapshot__destroy(s);
	calls_both_ways(0, c.pid, "sleep_zone", 2 * SLEEP_CALLS);
	reset_then_round(0, reset, false, &c);
	calls_both_ways(0, c.pid, "sleep_zone", SLEEP_CALLS);

	child_end(&c);
	profd_done(fd);
}

/*
 * A reset is its user's alone: the owner's zeroes the owner's reports, not
 * root's, and root's zeroes root's, not the owner's (profd once kept one
 * baseline a process, which either moved for both), through profd or
 * without it.  A user who may not read the process may not reset it.
 */
static void test_reset_per_user(void **state)
{
	char p[16];
	const char *reset[] = { "reset", "--pid", p, NULL };
	struct prof_snapshot *s;
	char *text = NULL;
	struct child c;
	int fd, way;

	(void)state;
	fd = need_profd();
	/* root's baselines in a private directory; the owner's, whose it is
	 * not, in /dev/shm */
	xdg_private();
	s = spawn_snap(fd, stay_zone, UID_A, &c);
	prof_snapshot__destroy(s);
	snprintf(p, sizeof(p), "%d", (int)c.pid);

	/* the owner resets through profd, a call: one for the owner, two for root */
	reset_then_round(UID_A, reset, false, &c);
	calls_both_ways(UID_A, c.pid, "stay_zone", 1);
	assert_int_equal(user_calls(0, c.pid, "stay_zone", false), 2);
	/* root resets through profd, a call: one for root, the owner's two */
	reset_then_round(0, reset, false, &c);
	assert_int_equal(user_calls(0, c.pid, "stay_zone", false), 1);
	calls_both_ways(UID_A, c.pid, "stay_zone", 2);
	/* the owner resets without profd, a call: the owner's one, root's two */
	reset_then_round(UID_A, reset, true, &c);
	calls_both_ways(UID_A, c.pid, "stay_zone", 1);
	assert_int_equal(user_calls(0, c.pid, "stay_zone", false), 2);
	/* another user may not reset it either way, and nothing moved */
	for (way = 0; way < 2; way++) {
		assert_int_not_equal(profctl_as(UID_B, reset, way, &text), 0);
		free(text);
	}
	calls_both_ways(UID_A, c.pid, "stay_zone", 1);

	rm_shm_baselines(UID_A, c.pid);
	child_end(&c);
	profd_done(fd);
}

/*
 * A process profd no longer follows (its post-mortem data aged out) whose
 * segment is still in /dev/shm (PROF_KEEP=1): profctl reads it directly.
 */
static void test_profd_forgot(void **state)
{
	static const char *const keep[] = { "--keep", "1", NULL };
	struct prof_snapshot *s;
	struct child c;
	pid_t pid;
	__u64 end;
	int fd;

	(void)state;
	fd = need_profd_opts(keep);
	setenv("PROF_KEEP", "1", 1);
	c = spawn_followed(fd, work_sleep);
	unsetenv("PROF_KEEP");
	pid = c.pid;
	child_end(&c);
	/* kept 1 s after the exit, then dropped (within a few samples) */
	for (end = now_ns() + 10000000000ull;; usleep(50000)) {
		int err = profd_snapshot(fd, pid, PROFD_SNAP_START, 0, &s);

		if (!err)
			prof_snapshot__destroy(s);
		if (err == -ESRCH || now_ns() >= end) {
			assert_int_equal(err, -ESRCH);
			break;
		}
	}
	assert_int_equal(profctl_calls(pid, "sleep_zone", false), SLEEP_CALLS);
	{
		char path[160];
		struct prof_seg_ent *ents;
		size_t n, i;

		/* the kept segment is ours to remove */
		if (!prof_seg_list(geteuid(), &ents, &n)) {
			for (i = 0; i < n; i++)
				if (ents[i].pid == (__u32)pid) {
					snprintf(path, sizeof(path), "%s", ents[i].path);
					unlink(path);
				}
			free(ents);
		}
	}
	profd_done(fd);
}

/* four seconds of 10 ms zones */
static void work_steady(void)
{
	int i;

	for (i = 0; i < 400; i++) {
		PROF_USDT(steady_zone);
		spin_ns(10000000);
	}
}

/* steady_zone's calls over the last secs through profd, and the span it covers */
static __u64 last_calls(int fd, pid_t pid, __u32 secs, __u64 *span_ns)
{
	struct prof_snapshot *s = NULL;
	struct profd_answer a;
	__u64 calls;

	assert_int_equal(window_of(fd, pid, secs, &s, &a), 0);
	calls = node_named(s, "steady_zone") ? node_named(s, "steady_zone")->calls : 0;
	*span_ns = a.span_ns;
	prof_snapshot__destroy(s);
	return calls;
}

/*
 * "The last N seconds" covers at most N seconds: frames of a small process
 * are about history/64 apart (under a second by default) and the oldest
 * one inside N is taken; the answer says what it covers.
 */
static void test_last_seconds(void **state)
{
	__u64 span1, span3, c1, c3;
	struct child c;
	int fd;

	(void)state;
	fd = need_profd();
	c = spawn_registered(work_steady);
	c1 = last_calls(fd, c.pid, 1, &span1);
	c3 = last_calls(fd, c.pid, 3, &span3);
	printf("last 1 s: %llu calls over %.2f s; last 3 s: %llu calls over %.2f s\n",
	       (unsigned long long)c1, span1 / 1e9, (unsigned long long)c3, span3 / 1e9);
	/* never longer than asked: the oldest frame inside it (frames are
	 * about a second apart, more when profd's passes run late on a loaded
	 * machine, 1.2 s seen: over 1 of 3 s while they are under 2 s apart,
	 * where the newest frame would give under one frame's gap) */
	assert_true(span1 > 0 && span1 <= 1000000000ull);
	assert_true(span3 > 1000000000ull && span3 <= 3000000000ull);
	assert_true(c1 <= c3);
	/* and profctl's report says what it covers */
	{
		char p[16], unit[4] = "", *text = NULL, *at;
		const char *args[] = { "report", "--pid", p, "--last", "1s", NULL };
		double v = 0;

		snprintf(p, sizeof(p), "%d", (int)c.pid);
		assert_int_equal(profctl_run(args, false, &text), 0);
		assert_non_null(text);
		at = strstr(text, ", the last ");
		if (!at || sscanf(at + 11, "%lf%3[a-z]", &v, unit) != 2)
			fail_msg("no span in the title:\n%.300s", text);
		v *= !strcmp(unit, "s") ? 1e9 : !strcmp(unit, "ms") ? 1e6 : 0;
		assert_true(v > 0 && v <= 1.0e9);
		free(text);
	}
	child_end(&c);
	profd_done(fd);
}

/*
 * A window with no frame inside it is refused, not answered with the
 * whole life: frames 10 s apart (--history 640), the only one taken when
 * the process was found, asked for the last second once that frame is
 * more than a second old.  A longer window is answered from that frame.
 */
static void test_last_no_frame(void **state)
{
	const char *opts[] = { "--history", "640", NULL };
	struct prof_snapshot *s = NULL;
	struct profd_answer a;
	struct child c;
	__u64 seen;
	int fd, err;

	(void)state;
	fd = need_profd_opts(opts);
	c = spawn_followed(fd, work_steady);
	seen = now_ns();
	/* the first frame's time is profd's (its tick after the follow, late
	 * on a busy machine): asked until that frame has left the last
	 * second, and before the next is due */
	for (;;) {
		err = profd_snapshot_opts(fd, c.pid, PROFD_SNAP_LAST, 1, 0, &s, &a);
		if (err == -EAGAIN || now_ns() > seen + 8000000000ull)
			break;
		prof_snapshot__destroy(s);
		s = NULL;
		usleep(100000);
	}
	assert_int_equal(err, -EAGAIN);
	assert_null(s);
	assert_int_equal(profd_snapshot_opts(fd, c.pid, PROFD_SNAP_LAST, 60, 0, &s, &a), 0);
	assert_true(a.span_ns >= 1000000000ull && a.span_ns <= 60000000000ull);
	prof_snapshot__destroy(s);
	child_end(&c);
	close(fd);
	stop_profd();
}

/* a tree of 10 zones nested 3 deep (1,110 nodes), all run again each time */
static void bound_rec(int d);
#define BZ(n)                              \
	static void bz##n(int d)           \
	{                                  \
		PROF_USDT(bz##n);          \
		bound_rec(d);              \
	}
/* clang-format off */
BZ(0) BZ(1) BZ(2) BZ(3) BZ(4) BZ(5) BZ(6) BZ(7) BZ(8) BZ(9)
/* clang-format on */

static void bound_rec(int d)
{
	static void (*const z[10])(int) = { bz0, bz1, bz2, bz3, bz4, bz5, bz6, bz7, bz8, bz9 };
	int i;

	if (d-- > 0)
		for (i = 0; i < 10; i++)
			z[i](d);
}

static void work_tree(void)
{
	bound_rec(3);
}

/*
 * --max-memory: a process whose every node changes between frames fills a
 * small bound with deltas; profd drops its oldest frames to stay within it,
 * says so in its status, still answers a window its kept frames reach, and
 * refuses (ENODATA) one that needed a dropped frame rather than answer it
 * shorter; profctl says why.  Alone in a private /dev/shm, so no one else's
 * processes count (and none grows to drop more while it asks).
 */
static void test_history_bound(void **state)
{
	const char *const extra[] = { "--max-memory", "3M", "--no-ns-scan", NULL };
	struct prof_snapshot *s = NULL;
	struct profd_status st;
	struct profd_answer a;
	struct child c;
	__u64 end, used, born;
	__u32 secs;
	int fd, err;

	(void)state;
	private_shm();
	profd_history = "10";
	fd = need_profd_opts(extra);
	born = now_ns();
	c = spawn_registered(work_tree);
	/* every node changes every 50 ms or so: for 9 s (a process older than
	 * the window asked below, which the dropped frames' age sets), then on
	 * until profd has dropped a frame (the frames fill the bound later
	 * where its passes are slower), 30 s at most */
	for (end = now_ns() + 9000000000ull;; usleep(50000)) {
		assert_true(child_again(&c));
		if (now_ns() < end)
			continue;
		assert_int_equal(profd_status(fd, &st), 0);
		if (st.frames_dropped || now_ns() > end + 21000000000ull)
			break;
	}
	used = st.mem_history + st.mem_kept;
	printf("max %llu: history %llu in %llu frames, kept %llu; dropped %llu frames, newest "
	       "of pid %u, %.2f s old\n",
	       (unsigned long long)st.max_memory, (unsigned long long)st.mem_history,
	       (unsigned long long)st.frames, (unsigned long long)st.mem_kept,
	       (unsigned long long)st.frames_dropped, st.last_drop_pid,
	       st.last_drop_age_ns / 1e9);
	assert_int_equal(st.max_memory, 3ull << 20);
	assert_true(used <= st.max_memory);
	assert_true(st.frames_dropped > 0);
	assert_int_equal(st.last_drop_pid, (__u32)c.pid);
	/* a window past the newest frame dropped (and shorter than the
	 * process's life): refused, not answered shorter */
	secs = (__u32)(st.last_drop_age_ns / 1000000000ull) + 2;
	assert_true(secs < (now_ns() - born) / 1000000000ull);
	err = profd_snapshot_opts(fd, c.pid, PROFD_SNAP_LAST, secs, 0, &s, &a);
	assert_int_equal(err, -ENODATA);
	assert_null(s);
	assert_int_equal(profd_status(fd, &st), 0);
	assert_true(st.windows_refused >= 1);
	/* a window the kept frames reach: answered, as long as asked at most */
	if (st.last_drop_age_ns > 1000000000ull) {
		assert_int_equal(window_of(fd, c.pid, 1, &s, &a), 0);
		assert_true(a.span_ns > 0 && a.span_ns <= 1000000000ull);
		assert_non_null(node_named(s, "bz0"));
		prof_snapshot__destroy(s);
	} else {
		printf("frames kept span %.2f s only: the 1 s window not tried\n",
		       st.last_drop_age_ns / 1e9);
	}
	/* profctl says why, and its status what went */
	{
		char p[16], w[16], *text = NULL;
		const char *last[] = { "report", "--pid", p, "--last", w, NULL };
		const char *status[] = { "status", NULL };

		snprintf(p, sizeof(p), "%d", (int)c.pid);
		snprintf(w, sizeof(w), "%us", secs);
		assert_int_not_equal(profctl_run(last, false, &text), 0);
		free(text);
		text = NULL;
		assert_int_equal(profctl_run(status, false, &text), 0);
		assert_non_null(text);
		if (!strstr(text, "history dropped for memory: ") ||
		    strstr(text, "history dropped for memory: none"))
			fail_msg("status says no drop:\n%s", text);
		free(text);
	}
	child_end(&c);
	profd_done(fd);
}

/* --- reset and post-mortem -------------------------------------------- */

#define LS_CALLS 5
#define LS_LONG_NS 20000000ull
#define LS_SHORT_NS 100000ull

/* long calls the first time, short ones after */
static void work_long_short(void)
{
	static int round;
	int i;

	for (i = 0; i < LS_CALLS; i++) {
		PROF_USDT(ls_zone);
		spin_ns(round ? LS_SHORT_NS : LS_LONG_NS);
	}
	round++;
}

/*
 * Long calls before a reset, short ones after: since the reset (made
 * through profd, read without it, and the other way round), the report
 * has the short calls' count, total and max, not the long ones'.
 */
static void test_reset_total_max(void **state)
{
	char p[16];
	const char *reset[] = { "reset", "--pid", p, NULL };
	unsigned long long v[5];
	struct child c;
	int fd, way;

	(void)state;
	fd = need_profd();
	xdg_private();
	for (way = 0; way < 2; way++) {
		c = spawn_followed(fd, work_long_short);
		snprintf(p, sizeof(p), "%d", (int)c.pid);
		reset_then_round(0, reset, way, &c);
		assert_true(profctl_row(0, c.pid, "ls_zone", !way, NULL, v));
		printf("reset %s profd, read %s it: %llu calls, total %llu ns, max %llu ns\n",
		       way ? "without" : "through", way ? "through" : "without", v[0], v[1], v[4]);
		assert_int_equal(v[0], LS_CALLS);
		/* at least the short calls' time, far below one long call's */
		assert_true(v[1] >= LS_CALLS * LS_SHORT_NS);
		assert_true(v[1] < LS_LONG_NS);
		assert_true(v[4] >= LS_SHORT_NS);
		assert_true(v[4] < LS_LONG_NS / 2);
		child_end(&c);
	}
	profd_done(fd);
}

/*
 * A reset holds after the process exits, read from profd's post-mortem
 * data: reset through profd, a round, reset without it, a round, exit;
 * long after, only the last round counts (the later reset's file is the
 * baseline, however much later the report is read).
 */
static void test_reset_postmortem(void **state)
{
	char p[16];
	const char *reset[] = { "reset", "--pid", p, NULL };
	const struct prof_snap_node *n;
	struct prof_snapshot *s;
	struct child c;
	__u64 end, t0;
	pid_t pid;
	int fd;

	(void)state;
	fd = need_profd();
	c = sleeper_followed(fd, p);
	t0 = now_ns();
	reset_then_round(0, reset, false, &c);
	reset_then_round(0, reset, true, &c);
	/* after exit, once profd saw it go, the data stays */
	pid = c.pid;
	child_end(&c);
	for (end = now_ns() + 10000000000ull; listed_alive(fd, pid) == 1 && now_ns() < end;)
		usleep(20000);
	assert_int_equal(listed_alive(fd, pid), 0);
	/* later than the first reset was before the exit */
	usleep((useconds_t)((now_ns() - t0) / 1000) + 200000);
	assert_int_equal(profctl_calls(pid, "sleep_zone", false), SLEEP_CALLS);
	assert_int_equal(profd_snapshot(fd, pid, PROFD_SNAP_START, 0, &s), 0);
	n = node_named(s, "sleep_zone");
	assert_non_null(n);
	assert_int_equal(n->calls, 3 * SLEEP_CALLS);
	/* the child left with _exit: no exit handler, profd saw it go */
	assert_int_equal(s->pid, pid);
	prof_snapshot__destroy(s);
	profd_done(fd);
}

/* --- memory ------------------------------------------------------------ */

/* Rss of the [heap] of pid, in bytes, or 0 */
static size_t heap_rss(pid_t pid)
{
	char path[64], line[256];
	size_t kb = 0;
	bool heap = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[heap]"))
			heap = true;
		else if (heap && sscanf(line, "Rss: %zu kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb * 1024;
}

/* bytes a snapshot of pid holds, as profd's reader allocates it */
static size_t snapshot_bytes(pid_t pid)
{
	struct prof_snapshot *s;
	struct mallinfo2 a, b;

	a = mallinfo2();
	s = test_snapshot(pid);
	b = mallinfo2();
	prof_snapshot__destroy(s);
	return s ? (b.uordblks + b.hblkhd) - (a.uordblks + a.hblkhd) : 0;
}

/* processes profd lists as exited */
static size_t count_exited(int fd)
{
	struct profd_proc *v = NULL;
	size_t n = 0, i, exited = 0;

	if (profd_list(fd, &v, &n))
		return 0;
	for (i = 0; i < n; i++)
		exited += !v[i].alive;
	free(v);
	return exited;
}

#define IDLE_KIDS 8

/*
 * Idle processes that are killed cost profd about one snapshot each, not
 * one per frame of its history ring: with --history 1 the ring of an idle
 * child fills with eight frames of the same counts in a second, and they
 * share one snapshot with the last look at exit.  Alone in a private
 * /dev/shm, so no one else's processes count.
 */
static void test_idle_memory(void **state)
{
	struct child c[IDLE_KIDS];
	size_t h0, h1, snap;
	__u64 end;
	int fd, i;

	(void)state;
	private_shm();
	profd_history = "1";
	/* the host's /dev/shm is another mount namespace's now: not its
	 * business; and no sampling: a sample of a child while it registers
	 * has profd read its symbols (libdw's megabytes, not history's) */
	fd = need_profd_opts((const char *const[]){ "--no-ns-scan", "--sample-hz", "0", NULL });
	h0 = heap_rss(profd_pid);
	for (i = 0; i < IDLE_KIDS; i++)
		c[i] = spawn_registered(NULL);
	snap = snapshot_bytes(c[0].pid);
	assert_true(snap > 0);
	/* the ring: eight frames, 125 ms apart, and some turns of it (two
	 * seconds of samples, one each 50 ms) */
	wait_samples(fd, 40);
	for (i = 0; i < IDLE_KIDS; i++) {
		kill(c[i].pid, SIGKILL);
		child_end(&c[i]);
	}
	for (end = now_ns() + 5000000000ull; now_ns() < end && count_exited(fd) < IDLE_KIDS;)
		usleep(50000);
	assert_int_equal(count_exited(fd), IDLE_KIDS);
	h1 = heap_rss(profd_pid);
	printf("profd heap %zu -> %zu bytes for %d idle exited processes, a snapshot %zu\n", h0, h1,
	       IDLE_KIDS, snap);
	/*
	 * One snapshot each and the rest of their entries: less than two
	 * snapshots' worth.  Nine before (eight frames and the last); pages
	 * of them that were never touched do not count, so it came out at
	 * about four.
	 */
	assert_true(h1 < h0 + (size_t)IDLE_KIDS * 2 * snap);
	profd_done(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_top_unknown_facts, teardown),
		cmocka_unit_test_teardown(test_reset_postmortem, teardown),
		cmocka_unit_test_teardown(test_reset_total_max, teardown),
		cmocka_unit_test_teardown(test_snapshot_paths, teardown),
		cmocka_unit_test_teardown(test_top_via_profd, teardown),
		cmocka_unit_test_teardown(test_reset_both_ways, teardown),
		cmocka_unit_test_teardown(test_reset_per_user, teardown),
		cmocka_unit_test_teardown(test_profd_forgot, teardown),
		cmocka_unit_test_teardown(test_last_seconds, teardown),
		cmocka_unit_test_teardown(test_last_no_frame, teardown),
		cmocka_unit_test_teardown(test_idle_memory, teardown),
		cmocka_unit_test_teardown(test_history_bound, teardown),
	};

	setenv("PROF_QUIET", "1", 1);
	unsetenv("PROF_NO_DAEMON");
	test_filter_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
