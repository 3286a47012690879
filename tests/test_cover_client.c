// SPDX-License-Identifier: MIT
/*
 * test_cover_client.c - unit: profctl's client (daemon/profctl/client.c)
 * against a profd that answers wrong, paths make coverage showed no test
 * took.  Each answer is queued on a socket pair before the call (the
 * request waits unread on the other end): an answer of another type, an
 * error code that is not one, an fd whose size is not the one said, more
 * threads or slices than the protocol holds, no fd, two fds, a snapshot
 * of another pid.  Each is refused (-EPROTO, -EBADMSG, -EINVAL), never
 * believed; a right answer is taken.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "testutil.h"
#include "prof.h"
#include "client.h"
#include "proto.h"

/* a packet of type with payload, and nfds copies of fd (0..2) along */
static void queue(int sock, __u32 type, const void *p, size_t len, int fd, int nfds)
{
	char pkt[PROFD_MSG_MAX];
	struct profd_hdr h = { type, (__u32)(sizeof(h) + len) };

	memcpy(pkt, &h, sizeof(h));
	memcpy(pkt + sizeof(h), p, len);
	assert_int_equal(test_send_fds(sock, pkt, sizeof(h) + len, fd, nfds),
			 (ssize_t)(sizeof(h) + len));
}

/* a memfd holding len bytes of buf */
static int memfd_of(const void *buf, size_t len)
{
	int fd = memfd_create("test", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	return fd;
}

struct pair {
	int me;	  /* the client's end */
	int fake; /* profd's */
};

static struct pair pair_new(void)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	return (struct pair){ sv[0], sv[1] };
}

static void pair_end(struct pair p)
{
	close(p.me);
	close(p.fake);
}

/* profd_slices against one queued answer: its return, threads in *n */
static int slices_with(__u32 type, const struct profd_slices_rep *rep,
		       const struct profd_slices_thread *t, size_t tlen, int nfds, __u32 *n)
{
	struct profd_slices_thread *out = NULL;
	struct pair p = pair_new();
	int fd = memfd_of(t, tlen), err;

	queue(p.fake, type, rep, rep ? sizeof(*rep) : 0, fd, nfds);
	close(fd);
	err = profd_slices(p.me, 1, &out, n);
	if (err)
		assert_null(out);
	free(out);
	pair_end(p);
	return err;
}

static void test_slices(void **state)
{
	struct profd_slices_thread t[2];
	struct profd_slices_rep rep = { .threads = 2, .size = sizeof(t) };
	__u32 n;

	(void)state;
	memset(t, 0, sizeof(t));
	t[0].tid = 7;
	t[0].n = 1;
	/* right: taken */
	assert_int_equal(slices_with(PROFD_MSG_SLICES, &rep, t, sizeof(t), 1, &n), 0);
	assert_int_equal(n, 2);
	/* another type of answer */
	assert_int_equal(slices_with(PROFD_MSG_OK, NULL, t, sizeof(t), 0, &n), -EPROTO);
	/* no fd, two fds */
	assert_int_equal(slices_with(PROFD_MSG_SLICES, &rep, t, sizeof(t), 0, &n), -EPROTO);
	assert_int_equal(slices_with(PROFD_MSG_SLICES, &rep, t, sizeof(t), 2, &n), -EBADMSG);
	/* the fd holds less than said */
	assert_int_equal(slices_with(PROFD_MSG_SLICES, &rep, t, sizeof(t[0]), 1, &n), -EPROTO);
	/* the size is not the threads' */
	rep.threads = 1;
	assert_int_equal(slices_with(PROFD_MSG_SLICES, &rep, t, sizeof(t), 1, &n), -EPROTO);
	/* a thread with more slices than one keeps */
	rep.threads = 2;
	t[1].n = PROFD_SLICES_MAX + 1;
	assert_int_equal(slices_with(PROFD_MSG_SLICES, &rep, t, sizeof(t), 1, &n), -EPROTO);
	assert_int_equal(n, 0);
}

/* an error answer: its code if it is one (-1..-4095), else -EPROTO */
static void test_error_codes(void **state)
{
	static const struct {
		int sent, got;
	} cases[] = { { -ESRCH, -ESRCH },
		      { -4095, -4095 },
		      { 5, -EPROTO },
		      { 0, -EPROTO },
		      { -4096, -EPROTO } };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct profd_error e = { .err = cases[i].sent };
		struct profd_slices_thread *out = NULL;
		struct pair p = pair_new();
		__u32 n;

		queue(p.fake, PROFD_MSG_ERROR, &e, sizeof(e), -1, 0);
		assert_int_equal(profd_slices(p.me, 1, &out, &n), cases[i].got);
		pair_end(p);
	}
}

/* profd_samples against one queued answer (text NULL: the state alone) */
static int samples_with(const struct profd_samples_rep *rep, const char *body, int nfds,
			char **text)
{
	struct profd_samples_rep got;
	struct pair p = pair_new();
	int fd = memfd_of(body, strlen(body)), err;
	size_t len;

	queue(p.fake, PROFD_MSG_SAMPLES, rep, sizeof(*rep), fd, nfds);
	close(fd);
	err = profd_samples(p.me, 1, text, &len, &got);
	if (!err)
		assert_string_equal(got.why, rep->why);
	if (!err && text)
		assert_int_equal(len, strlen(body));
	pair_end(p);
	return err;
}

static void test_samples(void **state)
{
	struct profd_samples_rep rep = { .size = 4, .samples = 1, .hz = 99 };
	char *text = NULL;

	(void)state;
	strcpy(rep.why, "off");
	assert_int_equal(samples_with(&rep, "1\t1\n", 1, &text), 0);
	assert_string_equal(text, "1\t1\n");
	free(text);
	text = NULL;
	/* the state and count alone */
	assert_int_equal(samples_with(&rep, "1\t1\n", 1, NULL), 0);
	/* the fd holds more than said, or there is none */
	assert_int_equal(samples_with(&rep, "1\t1\n2\t2\n", 1, &text), -EPROTO);
	assert_int_equal(samples_with(&rep, "1\t1\n", 0, &text), -EPROTO);
	assert_null(text);
}

/* a snapshot image of another pid than the one asked: refused */
static void test_snapshot_other_pid(void **state)
{
	struct prof_snapshot *s = NULL;
	struct profd_snapshot_rep rep = { 0 };
	struct pair p = pair_new();
	size_t len;
	void *img;
	int fd, err;

	(void)state;
	{
		/* this process has a segment once a zone ran */
		PROF_USDT(cover_client_zone);
	}
	s = test_snapshot(getpid());
	assert_non_null(s);
	len = prof_snapshot__image_size(s);
	img = calloc(1, len);
	assert_non_null(img);
	assert_int_equal(prof_snapshot__write_into(s, img, len), 0);
	prof_snapshot__destroy(s);
	fd = memfd_of(img, len);
	free(img);
	rep.size = len;
	queue(p.fake, PROFD_MSG_SNAPSHOT, &rep, sizeof(rep), fd, 1);
	close(fd);
	s = NULL;
	/* the image is of this process, asked as pid 1 */
	err = profd_snapshot(p.me, 1, PROFD_SNAP_START, 0, &s);
	assert_int_equal(err, -EINVAL);
	assert_null(s);
	pair_end(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slices),
		cmocka_unit_test(test_error_codes),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_snapshot_other_pid),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
