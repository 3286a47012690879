// SPDX-License-Identifier: MIT
/*
 * usdt/fdpass.c - one packet of the control socket with at most one fd
 * passed along (SCM_RIGHTS), sent or received: profd's, its client's and
 * the runtime's agent's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"

ssize_t profd_recv(int sock, void *buf, size_t len, int flags, struct profd_recv *r)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { buf, len };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = ctl.buf,
			      .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm;
	ssize_t n;

	r->fd = -1;
	r->nfds = 0;
	r->cut = false;
	n = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	/*
	 * Every fd that came is ours now: the space for one holds two (it is
	 * rounded up), and an fd not taken would stay open for good.  The
	 * first is kept, the rest closed; the caller tells more than one by
	 * nfds.
	 */
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t j, k;
		int one;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (j = 0; j < k; j++, r->nfds++) {
			memcpy(&one, CMSG_DATA(cm) + j * sizeof(int), sizeof(int));
			if (r->fd < 0)
				r->fd = one;
			else
				close(one);
		}
	}
	r->cut = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
	return n;
}

ssize_t profd_send(int sock, const void *buf, size_t len, int flags, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	/* sendmsg only reads it (iovec has no const) */
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	n = sendmsg(sock, &msg, flags);
	return n < 0 ? -errno : n;
}

int profd_send_msg(int sock, __u32 type, const void *payload, size_t plen, int flags, int fd)
{
	union {
		char buf[PROFD_MSG_MAX];
		struct profd_hdr h;
	} m;
	size_t len = sizeof(m.h) + plen;
	ssize_t n;

	if (plen > sizeof(m.buf) - sizeof(m.h))
		return -EMSGSIZE;
	m.h.type = type;
	m.h.len = (__u32)len;
	if (plen)
		memcpy(m.buf + sizeof(m.h), payload, plen);
	n = profd_send(sock, m.buf, len, flags, fd);
	if (n < 0)
		return (int)n;
	return n == (ssize_t)len ? 0 : -EIO;
}
