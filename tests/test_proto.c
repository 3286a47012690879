// SPDX-License-Identifier: MIT
/*
 * test_proto.c - unit: usdt/proto.h accepts exactly the right sizes.
 */
#include <stdbool.h>
#include "testutil.h"
#include "proto.h"

static void test_exact_lengths(void **state)
{
	union {
		char buf[PROFD_MSG_MAX + 8];
		struct profd_hdr h;
	} m;
	__u32 t, len;

	(void)state;
	memset(&m, 0, sizeof(m));
	for (t = 1; t < PROFD_MSG_TYPE_MAX; t++) {
		len = profd_msg_len(t);
		assert_true(len >= sizeof(struct profd_hdr));
		assert_true(len <= PROFD_MSG_MAX);
		m.h.type = t;
		m.h.len = len;
		assert_int_equal(profd_msg_check(m.buf, len), 0);
		/* one byte more or less, in the header or on the wire: refused */
		assert_int_equal(profd_msg_check(m.buf, len + 1), -EBADMSG);
		assert_int_equal(profd_msg_check(m.buf, len - 1), -EBADMSG);
		m.h.len = len + 1;
		assert_int_equal(profd_msg_check(m.buf, len), -EBADMSG);
		m.h.len = len - 1;
		assert_int_equal(profd_msg_check(m.buf, len), -EBADMSG);
	}
}

static void test_unknown_types(void **state)
{
	struct profd_hdr h = { 0, sizeof(h) };

	(void)state;
	assert_int_equal(profd_msg_len(0), 0);
	assert_int_equal(profd_msg_len(PROFD_MSG_TYPE_MAX), 0);
	assert_int_equal(profd_msg_len(0xffffffffu), 0);
	assert_int_equal(profd_msg_check(&h, sizeof(h)), -EBADMSG);
	h.type = PROFD_MSG_TYPE_MAX;
	assert_int_equal(profd_msg_check(&h, sizeof(h)), -EBADMSG);
	assert_int_equal(profd_msg_check(&h, 3), -EBADMSG);
	assert_int_equal(profd_msg_check(&h, 0), -EBADMSG);
}

static void test_fixed_layout(void **state)
{
	(void)state;
	/* the wire structs have no implicit padding and a fixed size */
	assert_int_equal(sizeof(struct profd_hdr), 8);
	assert_int_equal(sizeof(struct profd_register), 8);
	assert_int_equal(sizeof(struct profd_registered), 32);
	assert_int_equal(sizeof(struct profd_snapshot_req), 16);
	assert_int_equal(sizeof(struct profd_snapshot_rep), 32 + PROFD_CGROUP_MAX);
	assert_int_equal(sizeof(struct profd_wire_proc), 88 + PROFD_CGROUP_MAX);
	assert_int_equal(sizeof(struct profd_segment), 8);
	assert_int_equal(sizeof(struct profd_wire_status), 392);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_exact_lengths), cmocka_unit_test(test_unknown_types),
	  cmocka_unit_test(test_fixed_layout))
