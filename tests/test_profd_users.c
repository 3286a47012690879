// SPDX-License-Identifier: MIT
/*
 * test_profd_users.c - root tier: profd among users who do not trust
 * each other: what another user may see and do, planted and rewritten
 * segments, hostile segments and clients, floods of bad files and new
 * names, handing a followed segment over, a segment's grace period.
 *
 * Fixtures (profd, the child driver, teardown): profd_fixture.h.
 */
#include "profd_fixture.h"

static bool bad_made; /* test_bad_bounded's files exist: teardown removes them */
static void bad_files_remove(void);
static char share_prefix[96];
#define SHARE_FILES 300 /* more than the pending list's 256, all one uid's */
static void share_files(bool make);

static int teardown(void **state)
{
	(void)state;
	fixture_teardown();
	if (bad_made)
		bad_files_remove();
	if (share_prefix[0]) {
		share_files(false);
		share_prefix[0] = 0;
	}
	return 0;
}

/* --- another user ----------------------------------------------------- */

static void test_other_user(void **state)
{
	struct prof_snapshot *s;
	struct as_user_res r;
	struct child c;
	int fd;

	(void)state;
	fd = need_profd();
	s = spawn_snap(fd, stay_zone, UID_A, &c); /* root sees it */
	assert_int_equal(s->uid, UID_A);
	prof_snapshot__destroy(s);
	/* the owner may read it; profd keeps no resets, the owner's either
	 * (a reset is a file of its user's: test_reset_per_user) */
	r = as_user(UID_A, c.pid);
	assert_int_equal(r.snapshot, 0);
	assert_int_equal(r.reset, -EOPNOTSUPP);
	assert_true(r.listed);
	assert_int_equal(r.slices, 1); /* its one registered thread's */
	/* another user may do nothing of it, each refused on its own, nor
	 * see it listed */
	r = as_user(UID_B, c.pid);
	assert_int_equal(r.snapshot, -EPERM);
	assert_int_equal(r.reset, -EOPNOTSUPP);
	assert_int_equal(r.slices, -EPERM);
	assert_false(r.listed);
	child_end(&c);
	profd_done(fd);
}

static void seg_path_of(pid_t pid, char path[96])
{
	char paths[2][96];

	assert_int_equal(test_seg_paths(pid, prof_proc_start_token(pid), paths, 2), 1);
	memcpy(path, paths[0], 96);
}

/* a root child spawned and followed: profd has rescanned /dev/shm since */
static void profd_rescanned(int fd)
{
	struct child d = spawn_followed(fd, NULL);

	child_end(&d);
}

/*
 * A segment named after user A's live process but owned by user B (B
 * made it, with A's pid and start token in its name and header, and B's
 * uid in it, as its file owner): profd must not follow it as A's process.
 * Were it to, root would read B's file as A's, and B would get A's pid.
 */
static void test_planted_segment(void **state)
{
	char real[96], plant[128], tmp[128];
	struct prof_seg_hdr h;
	struct prof_snapshot *s;
	struct as_user_res r;
	struct child c;
	struct stat st;
	void *img;
	int fd, in, out;

	(void)state;
	fd = need_profd();
	s = spawn_snap(fd, stay_zone, UID_A, &c);
	prof_snapshot__destroy(s);
	/* B's copy of A's segment, with B's uid in its header; renamed into
	 * place whole, so profd never sees it half written */
	seg_path_of(c.pid, real);
	snprintf(plant, sizeof(plant), "%s.7", real);
	snprintf(tmp, sizeof(tmp), "/dev/shm/profd-test-plant.%d", (int)getpid());
	in = open(real, O_RDONLY);
	assert_true(in >= 0 && !fstat(in, &st) && st.st_size >= (off_t)sizeof(h));
	img = malloc((size_t)st.st_size);
	assert_non_null(img);
	assert_int_equal(pread(in, img, (size_t)st.st_size, 0), st.st_size);
	close(in);
	memcpy(&h, img, sizeof(h));
	assert_int_equal(h.uid, UID_A);
	h.uid = UID_B;
	memcpy(img, &h, sizeof(h));
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(out >= 0);
	assert_int_equal(write(out, img, (size_t)st.st_size), st.st_size);
	assert_int_equal(fchown(out, UID_B, UID_B), 0);
	close(out);
	free(img);
	assert_int_equal(rename(tmp, plant), 0);
	profd_rescanned(fd);

	/* root reads A's own segment for A's pid */
	s = snap_of(fd, c.pid, PROFD_SNAP_START);
	assert_non_null(s);
	assert_int_equal(s->uid, UID_A);
	assert_non_null(node_named(s, "stay_zone"));
	prof_snapshot__destroy(s);
	/* and B gets nothing of A's pid */
	r = as_user(UID_B, c.pid);
	assert_int_equal(r.snapshot, -EPERM);
	assert_false(r.listed);
	unlink(plant);
	child_end(&c);
	profd_done(fd);
}

/*
 * The owner rewrites the uid in its live segment's header: the header no
 * longer names the process profd verified, so profd hands over no live
 * fd, reads nothing more from it (a snapshot is the last good look), and
 * its samples fail until it stops following the process.
 */
static void test_header_uid_rewritten(void **state)
{
	struct prof_snapshot *s;
	struct profd_answer a;
	struct stat live, got;
	char path[96];
	__u32 uid = UID_B;
	struct child c;
	__u64 end;
	int fd, seg, sfd;

	(void)state;
	fd = need_profd();
	s = spawn_snap(fd, stay_zone, UID_A, &c);
	assert_int_equal(s->uid, UID_A);
	prof_snapshot__destroy(s);
	seg_path_of(c.pid, path);
	/* before: profd hands over the live segment itself */
	assert_int_equal(stat(path, &live), 0);
	assert_int_equal(profd_segment_fd(fd, c.pid, PROFD_SNAP_START, 0, &sfd, &a), 0);
	assert_true(!fstat(sfd, &got) && got.st_ino == live.st_ino && got.st_dev == live.st_dev);
	close(sfd);

	seg = open(path, O_WRONLY);
	assert_true(seg >= 0);
	assert_int_equal(pwrite(seg, &uid, sizeof(uid), offsetof(struct prof_seg_hdr, uid)),
			 (ssize_t)sizeof(uid));
	close(seg);

	/* no live fd: an image of the last good look, A's */
	sfd = -1;
	if (!profd_segment_fd(fd, c.pid, PROFD_SNAP_START, 0, &sfd, &a)) {
		assert_true(!fstat(sfd, &got) && got.st_ino != live.st_ino);
		close(sfd);
	}
	if (!profd_snapshot(fd, c.pid, PROFD_SNAP_START, 0, &s)) {
		assert_int_equal(s->uid, UID_A);
		prof_snapshot__destroy(s);
	}
	/* the samples fail: after some of them profd stops following it as
	 * a live process (it keeps the last look) */
	for (end = now_ns() + 15000000000ull; now_ns() < end && listed_alive(fd, c.pid) == 1;)
		usleep(50000);
	assert_int_not_equal(listed_alive(fd, c.pid), 1);
	child_end(&c);
	profd_done(fd);
}

/* --- hostile segments and clients ------------------------------------- */

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void test_hostile(void **state)
{
	unsigned long long token = prof_proc_start_token(getpid());
	char path[4][128], junk[65536];
	struct prof_seg_hdr h;
	struct profd_status st;
	struct prof_snapshot *s;
	struct child c;
	int fd, bad, i;

	(void)state;
	fd = need_profd();
	/* segments named after a live process (ours): garbage, a truncated
	 * header, absurd geometry, a FIFO */
	for (i = 0; i < 4; i++)
		snprintf(path[i], sizeof(path[i]), "/dev/shm/prof.%d.%llu.%d", (int)getpid(), token,
			 i + 1);
	srand(42);
	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (char)rand();
	write_file(path[0], junk, sizeof(junk));
	memset(&h, 0, sizeof(h));
	h.magic = PROF_SEG_MAGIC;
	h.version = PROF_SEG_VERSION;
	write_file(path[1], &h, 100);
	h.hdr_size = sizeof(h);
	h.seg_size = 1ull << 40;
	h.max_threads = 65536;
	h.max_nodes = 1u << 22;
	h.slabs_off = 1ull << 39;
	h.pid = (__u32)getpid();
	h.start_token = token;
	memcpy(junk, &h, sizeof(h));
	write_file(path[2], junk, sizeof(junk));
	mkfifo(path[3], 0600);

	/* a client sending garbage: bad lengths, bad types, a huge packet */
	bad = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct profd_hdr hh = { PROFD_MSG_STATUS_REQ, 9 };

		strcpy(sa.sun_path, sock_path);
		assert_int_equal(connect(bad, (struct sockaddr *)&sa, sizeof(sa)), 0);
		send(bad, junk, 7, MSG_NOSIGNAL);
		send(bad, &hh, sizeof(hh), MSG_NOSIGNAL);
		send(bad, junk, sizeof(junk), MSG_NOSIGNAL);
		close(bad);
	}
	/* a client that connects and says nothing stays harmless too */
	bad = profd_connect(sock_path);

	/* profd goes on: new processes are followed and answered */
	s = spawn_snap(fd, stay_zone, 0, &c);
	assert_non_null(node_named(s, "stay_zone"));
	prof_snapshot__destroy(s);
	/* two more sampling passes over the fakes, and it still answers */
	wait_samples(fd, 2);
	assert_true(profd_alive());
	close(fd);
	fd = profd_connect(sock_path);
	assert_true(fd >= 0);
	assert_int_equal(profd_status(fd, &st), 0);
	/* none of the fakes is followed as our process */
	assert_int_equal(profd_snapshot(fd, getpid(), PROFD_SNAP_START, 0, &s), -ESRCH);
	for (i = 0; i < 4; i++)
		unlink(path[i]);
	child_end(&c);
	close(bad);
	profd_done(fd);
}

/* profd_seg.c's SEG_BAD_MAX: the files it remembers as bad */
#define BAD_MAX 16384
#define BAD_MADE (BAD_MAX + 8)

static __u32 bad_segments(int fd)
{
	struct profd_status st;

	assert_int_equal(profd_status(fd, &st), 0);
	return st.bad_segments;
}

/* the name of bad file i (BAD_UNSIZED: a segment's file not sized) */
#define BAD_UNSIZED (-1)
static void bad_name(char *name, size_t len, int i)
{
	snprintf(name, len, "/dev/shm/prof.%d.%llu.%d", (int)getpid(),
		 (unsigned long long)prof_proc_start_token(getpid()), i == BAD_UNSIZED ? 99 : 100 + i);
}

static void bad_base(char *base, size_t len)
{
	snprintf(base, len, "/dev/shm/profd-test-bad.%d", (int)getpid());
}

/* n bad files named after this process: hard links of one, gap_us apart */
static void bad_files(int n, useconds_t gap_us)
{
	char base[64], name[128];
	int i;

	bad_base(base, sizeof(base));
	bad_made = true; /* teardown removes what a failure leaves */
	write_file(base, "x", 1);
	for (i = 0; i < n; i++) {
		bad_name(name, sizeof(name), i);
		assert_int_equal(link(base, name), 0);
		if (gap_us)
			usleep(gap_us);
	}
}

/* test_bad_bounded's and test_new_names_alone's files, all of them */
static void bad_files_remove(void)
{
	char name[128];
	int i;

	for (i = BAD_UNSIZED; i < BAD_MADE; i++) {
		bad_name(name, sizeof(name), i);
		unlink(name);
	}
	bad_base(name, sizeof(name));
	unlink(name);
	bad_made = false;
}

/* profd listed all of /dev/shm (r1 - r0 times from t0 to t1) no more than
 * its backstop does, every 30 s, and once */
static void assert_backstop_only(__u64 r0, __u64 r1, __u64 t0, __u64 t1)
{
	__u64 allowed = (t1 - t0) / 30000000000ull + 1;

	print_message("%llu full listings of /dev/shm in %.2f s (%llu allowed)\n",
		      (unsigned long long)(r1 - r0), (double)(t1 - t0) / 1e9,
		      (unsigned long long)allowed);
	assert_true(r1 - r0 <= allowed);
}

/*
 * profd remembers the files it skipped (so it logs and checks each once),
 * and that memory is bounded: a user who makes bad files by the thousand
 * (here names of a live process, hard links of one file) costs profd at
 * most BAD_MAX entries, and none once the files go.
 */
static void test_bad_bounded(void **state)
{
	__u64 end;
	__u32 b0, n;
	int fd;

	(void)state;
	fd = need_profd();
	b0 = bad_segments(fd);
	/* a name with start token 0, of a pid no process has: not a live
	 * process's (no start token is 0), so not looked at, nor bad */
	{
		pid_t gone = fork();
		char name[96];

		if (!gone)
			_exit(0);
		assert_true(gone > 0);
		waitpid(gone, NULL, 0);
		snprintf(name, sizeof(name), "/dev/shm/prof.%d.0", (int)gone);
		write_file(name, "x", 1);
		profd_rescanned(fd);
		unlink(name);
		assert_int_equal(bad_segments(fd), b0);
	}
	bad_files(BAD_MADE, 0);
	profd_rescanned(fd);
	/* 16k names may overflow inotify's queue: a listing then finds the
	 * rest, at the next sample a second after the last */
	for (end = now_ns() + 10000000000ull; (n = bad_segments(fd)) < BAD_MAX && now_ns() < end;)
		usleep(100000);
	print_message("profd remembers %u bad files of %d made (%u before)\n", n, BAD_MADE, b0);
	assert_int_equal(n, BAD_MAX);
	assert_true(profd_alive());
	bad_files_remove();
	/* pruned within a few seconds of the files' going */
	for (end = now_ns() + 10000000000ull; (n = bad_segments(fd)) > b0 && now_ns() < end;)
		usleep(100000);
	print_message("and %u once they are gone\n", n);
	assert_true(n <= b0);
	profd_done(fd);
}

static __u64 rescans(int fd)
{
	struct profd_status st;

	assert_int_equal(profd_status(fd, &st), 0);
	return st.rescans;
}

/*
 * A new file in /dev/shm is looked at alone, as inotify names it, and a
 * segment not ready yet is looked at again alone: neither lists the rest
 * of /dev/shm again (where a user's thousands of files, or a machine's
 * many processes, made each new one cost a listing of them all at every
 * sample for two seconds).  Only the backstop, every 30 s, lists it (and
 * an inotify overflow, at most once a second).
 */
static void test_new_names_alone(void **state)
{
	__u64 r0, r1, t0, t1;
	char name[128];
	__u32 b0;
	struct child c;
	int fd;

	(void)state;
	fd = need_profd();
	wait_samples(fd, 2);
	b0 = bad_segments(fd);
	r0 = rescans(fd);
	t0 = now_ns();
	/* a process: its segment is made, then published */
	c = spawn_followed(fd, stay_zone);
	/* a segment's file not sized yet, for 2.5 s of samples (50 ms) */
	bad_name(name, sizeof(name), BAD_UNSIZED);
	bad_made = true;
	write_file(name, "", 0);
	wait_samples(fd, 50);
	unlink(name);
	/* and 40 bad files, one after another */
	bad_files(40, 50000);
	/* all 40, and the unsized file gone from its memory (on a busy
	 * machine it may have waited long enough to count as bad) */
	for (t1 = now_ns() + 10000000000ull; bad_segments(fd) != b0 + 40 && now_ns() < t1;)
		usleep(20000);
	r1 = rescans(fd);
	t1 = now_ns();
	/* before they go: profd forgets a removed file within a second */
	assert_int_equal(bad_segments(fd), b0 + 40);
	bad_files_remove();
	assert_backstop_only(r0, r1, t0, t1);
	child_end(&c);
	profd_done(fd);
}

/* test_pending_share's SHARE_FILES files, prof.PID.TOKEN.N of A's process:
 * made (A's, never sized) or removed */
static void share_files(bool make)
{
	char name[160], tmp[64];
	int i, fd;

	snprintf(tmp, sizeof(tmp), "/dev/shm/profd-test-share.%d", (int)getpid());
	for (i = 0; i < SHARE_FILES; i++) {
		snprintf(name, sizeof(name), "%s.%d", share_prefix, 1000 + i);
		if (!make) {
			unlink(name);
			continue;
		}
		/* A's from the start: renamed into place once chowned */
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(fchown(fd, UID_A, UID_A), 0);
		close(fd);
		assert_int_equal(rename(tmp, name), 0);
	}
	unlink(tmp);
}

/*
 * Names not ready yet are looked at again alone, but a user has only a
 * share of that list: user A's SHARE_FILES files named after A's own process and
 * never sized make profd list /dev/shm no more than the backstop would
 * (past the whole list's size it would list all of it, once a second),
 * and B's process is still followed.
 */
static void test_pending_share(void **state)
{
	__u64 r0, r1, t0, t1;
	struct prof_snapshot *s;
	struct child a, b;
	int fd;

	(void)state;
	fd = need_profd();
	a = spawn(stay_zone, UID_A, 5);
	assert_int_equal(child_wait(&a), 'R');
	snprintf(share_prefix, sizeof(share_prefix), "/dev/shm/prof.%d.%llu", (int)a.pid,
		 (unsigned long long)prof_proc_start_token(a.pid));
	wait_samples(fd, 2);
	r0 = rescans(fd);
	t0 = now_ns();
	share_files(true);
	wait_samples(fd, 60);
	s = spawn_snap(fd, stay_zone, UID_B, &b);
	prof_snapshot__destroy(s);
	r1 = rescans(fd);
	t1 = now_ns();
	share_files(false);
	share_prefix[0] = 0;
	assert_backstop_only(r0, r1, t0, t1);
	child_end(&b);
	child_end(&a);
	profd_done(fd);
}

/*
 * A process that hands its segment over is followed before profd answers
 * it: with the next sample 10 s away, its first request finds it (the
 * name inotify reported was most likely not ready then, and would wait
 * for a sample).
 */
static void test_handover_followed(void **state)
{
	const char *const opts[] = { "--interval", "10000", NULL };
	struct prof_snapshot *s;
	struct child c;
	int fd, i;

	(void)state;
	fd = need_profd_opts(opts);
	for (i = 0; i < 3; i++) {
		c = spawn_registered(stay_zone);
		s = NULL;
		assert_int_equal(profd_snapshot(fd, c.pid, PROFD_SNAP_START, 0, &s), 0);
		assert_non_null(node_named(s, "stay_zone"));
		prof_snapshot__destroy(s);
		child_end(&c);
	}
	profd_done(fd);
}

/*
 * A published segment that does not read at first (its clock rate broken
 * while profd was stopped, as a process might be caught mid-change) is
 * read again for a while, not dropped at the first look: mended a few
 * samples later, it is followed.
 */
static void test_segment_grace(void **state)
{
	struct prof_snapshot *s = NULL;
	char path[1][96];
	__u64 hz, zero = 0, end;
	struct child c;
	int fd, seg, err = -ESRCH;

	(void)state;
	fd = need_profd();
	kill(profd_pid, SIGSTOP);
	c = spawn(NULL, 0, 10);
	for (end = now_ns() + 10000000000ull; now_ns() < end; usleep(10000))
		if (test_seg_paths(c.pid, prof_proc_start_token(c.pid), path, 1) == 1)
			break;
	assert_int_equal(test_seg_paths(c.pid, prof_proc_start_token(c.pid), path, 1), 1);
	seg = open(path[0], O_RDWR | O_CLOEXEC);
	assert_true(seg >= 0);
	/* published: wait for the magic, then break the rate */
	for (end = now_ns() + 10000000000ull; now_ns() < end; usleep(10000)) {
		__u64 magic = 0;

		assert_int_equal(pread(seg, &magic, sizeof(magic), 0), sizeof(magic));
		if (magic == PROF_SEG_MAGIC)
			break;
	}
	assert_int_equal(pread(seg, &hz, sizeof(hz), offsetof(struct prof_seg_hdr, tick_hz)),
			 sizeof(hz));
	assert_int_equal(pwrite(seg, &zero, sizeof(zero), offsetof(struct prof_seg_hdr, tick_hz)),
			 sizeof(zero));
	kill(profd_pid, SIGCONT);
	/* profd has looked at it, and failed: three samples on (not waiting
	 * for the child's registration, which may come a second or two
	 * later, after the first zone gave up waiting for profd) */
	wait_samples(fd, 3);
	assert_int_equal(profd_snapshot(fd, c.pid, PROFD_SNAP_START, 0, &s), -ESRCH);
	assert_int_equal(pwrite(seg, &hz, sizeof(hz), offsetof(struct prof_seg_hdr, tick_hz)),
			 sizeof(hz));
	close(seg);
	/* mended within the grace (2 s from the first look): followed */
	for (end = now_ns() + 5000000000ull; now_ns() < end; usleep(20000))
		if (!(err = profd_snapshot(fd, c.pid, PROFD_SNAP_START, 0, &s)))
			break;
	assert_int_equal(err, 0);
	assert_non_null(node_named(s, "init_zone"));
	prof_snapshot__destroy(s);
	child_wait(&c);
	child_end(&c);
	profd_done(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_other_user, teardown),
		cmocka_unit_test_teardown(test_planted_segment, teardown),
		cmocka_unit_test_teardown(test_header_uid_rewritten, teardown),
		cmocka_unit_test_teardown(test_hostile, teardown),
		cmocka_unit_test_teardown(test_bad_bounded, teardown),
		cmocka_unit_test_teardown(test_new_names_alone, teardown),
		cmocka_unit_test_teardown(test_handover_followed, teardown),
		cmocka_unit_test_teardown(test_pending_share, teardown),
		cmocka_unit_test_teardown(test_segment_grace, teardown),
	};

	setenv("PROF_QUIET", "1", 1);
	unsetenv("PROF_NO_DAEMON");
	test_filter_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
