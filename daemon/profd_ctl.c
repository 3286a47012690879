// SPDX-License-Identifier: MIT
/*
 * profd_ctl.c - the control socket: SOCK_SEQPACKET, one request per
 * packet, exact lengths (daemon/proto.h), SO_PEERCRED on every connection.
 *
 * A client that sends a malformed packet gets an ERROR and is dropped; a
 * client that does not read its answers is dropped instead of blocking
 * profd (every send is MSG_DONTWAIT).  The agent of a profiled process
 * keeps its connection open; when it closes, the process's slots go back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "prof.h"
#include "profd.h"
#include "proto.h"

#define CTL_MAX_CONNS 1024
#define CTL_SNDBUF (1 << 20)

struct conn {
	struct conn *next;
	int fd;
	struct ucred cred;
	bool registered; /* an agent: owns slots of cred.pid */
	bool sent_fd;
};

static struct {
	int lfd;
	int lockfd;	     /* flock'd <path>.lock, held for profd's life */
	char path[PATH_MAX]; /* the socket's, absolute */
	char lock[PATH_MAX + 8];
	struct conn *conns;
	__u32 nconns;
} ctl = { .lfd = -1, .lockfd = -1 };

/* the listener's epoll tag: a unique address that is no conn */
static char ctl_listen_tag;

bool ctl_is_listener(void *ptr)
{
	return ptr == &ctl_listen_tag;
}

void *ctl_listener_tag(void)
{
	return &ctl_listen_tag;
}

int ctl_listen_fd(void)
{
	return ctl.lfd;
}

/*
 * Whether something accepts connections on the socket at sa: 0 for a
 * stale socket (refused, or gone), -EADDRINUSE for a live one.
 */
static int ctl_probe(const struct sockaddr_un *sa)
{
	int fd, err = 0;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* non-blocking: a full backlog is EAGAIN, and that one is alive too */
	if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) || errno == EAGAIN)
		err = -EADDRINUSE;
	else if (errno != ECONNREFUSED && errno != ENOENT)
		err = -errno;
	close(fd);
	return err;
}

/*
 * One profd per socket: the probe-unlink-bind below is a race between two
 * profds started at once on a stale socket (each would unlink the other's
 * fresh one), so each first takes <path>.lock, and keeps it.  Taken before
 * BPF is loaded: a second profd touches nothing.  A lock file unlinked by
 * its exiting holder while we opened it is no lock: taken, it must still
 * be the file at that name.
 */
int ctl_lock(const char *path)
{
	struct sockaddr_un sa;
	char dir[sizeof(sa.sun_path)], *slash;
	struct stat st, at;
	int fd, i;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	/* kept absolute for the unlink at exit: -d changes directory after the bind */
	ctl.path[0] = 0;
	if (path[0] != '/' && !getcwd(ctl.path, sizeof(ctl.path) - 1))
		return -errno;
	if (path[0] != '/')
		strcat(ctl.path, "/");
	if (strlen(ctl.path) + strlen(path) >= sizeof(ctl.path))
		return -ENAMETOOLONG;
	strcat(ctl.path, path);
	snprintf(ctl.lock, sizeof(ctl.lock), "%s.lock", ctl.path);
	/* the directory, if missing (RuntimeDirectory= makes it under systemd) */
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
	}
	for (i = 0; i < 8; i++) {
		fd = open(ctl.lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int err = errno == EWOULDBLOCK ? -EADDRINUSE : -errno;

			close(fd);
			return err;
		}
		if (!fstat(fd, &st) && !stat(ctl.lock, &at) && st.st_ino == at.st_ino &&
		    st.st_dev == at.st_dev) {
			/* another user's file there (in /tmp, say) is no lock of ours */
			if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
				close(fd);
				return -EPERM;
			}
			ctl.lockfd = fd;
			return 0;
		}
		close(fd);
	}
	return -EAGAIN;
}

int ctl_open(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, err;

	if (ctl.lockfd < 0 && (err = ctl_lock(path)))
		return err;
	strcpy(sa.sun_path, path);
	/* a stale socket from a previous run; never anything else, nor a live one */
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		err = ctl_probe(&sa);
		if (err)
			return err;
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0666) || listen(fd, 128)) {
		err = -errno;
		close(fd);
		return err;
	}
	ctl.lfd = fd;
	return 0;
}

static void conn_free(int epfd, struct conn *c)
{
	struct conn **pp;

	for (pp = &ctl.conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	/* the process's agent is gone: so is the process, or its interest */
	if (c->registered)
		kbpf_release_pid(c->cred.pid);
	ctl.nconns--;
	free(c);
}

void ctl_close(void)
{
	struct conn *c, *next;

	for (c = ctl.conns; c; c = next) {
		next = c->next;
		close(c->fd);
		free(c);
	}
	ctl.conns = NULL;
	if (ctl.lfd >= 0) {
		close(ctl.lfd);
		unlink(ctl.path);
	}
	ctl.lfd = -1;
	/* the lock last, and unlinked while held: the next profd makes its own */
	if (ctl.lockfd >= 0) {
		unlink(ctl.lock);
		close(ctl.lockfd);
	}
	ctl.lockfd = -1;
}

void ctl_accept(int epfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t len;
	struct conn *c;
	int fd, sz = CTL_SNDBUF;

	while ((fd = accept4(ctl.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		if (ctl.nconns >= CTL_MAX_CONNS) {
			log_warnx("ctl: %u connections, refusing another", ctl.nconns);
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		len = sizeof(c ? c->cred : (struct ucred){ 0 });
		if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) ||
		    len != sizeof(c->cred)) {
			log_warn("ctl: failed to get the peer's credentials for fd=%d", fd);
			free(c);
			close(fd);
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		c->fd = fd;
		ev.data.ptr = c;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
			log_warn("ctl: failed to watch fd=%d", fd);
			free(c);
			close(fd);
			continue;
		}
		c->next = ctl.conns;
		ctl.conns = c;
		ctl.nconns++;
		log_debug("ctl: connection from pid %d uid %u", (int)c->cred.pid,
			  (unsigned)c->cred.uid);
	}
}

/* one packet, maybe with an fd; never blocks */
static int conn_send(struct conn *c, __u32 type, const void *payload, size_t plen, int fd)
{
	union {
		char buf[PROFD_MSG_MAX];
		struct profd_hdr h;
	} m;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctlbuf;
	struct iovec iov = { m.buf, sizeof(m.h) + plen };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	m.h.type = type;
	m.h.len = (__u32)(sizeof(m.h) + plen);
	if (plen)
		memcpy(m.buf + sizeof(m.h), payload, plen);
	if (fd >= 0) {
		memset(&ctlbuf, 0, sizeof(ctlbuf));
		msg.msg_control = ctlbuf.buf;
		msg.msg_controllen = sizeof(ctlbuf.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	n = sendmsg(c->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return n == (ssize_t)iov.iov_len ? 0 : -EIO;
}

static int conn_error(struct conn *c, int err)
{
	struct profd_error e = { .err = err };

	return conn_send(c, PROFD_MSG_ERROR, &e, sizeof(e), -1);
}

/* registrations that came after the thread's first zone stopped waiting */
static __u32 late_registrations;

static int do_register(struct conn *c, const struct profd_register *r)
{
	struct profd_registered rep = { .tid = r->tid, .rec_size = sizeof(struct prof_sched_rec) };
	bool give = !c->sent_fd || (r->flags & PROFD_REG_WANT_FD);
	int err;

	if (!kbpf_on() || kbpf_ro_fd() < 0)
		return conn_error(c, -EOPNOTSUPP);
	if (r->tid == 0 || r->tid > 0x7fffffff)
		return conn_error(c, -EINVAL);
	/* kbpf_assign checks /proc/<peer pid>/task/<tid>: the peer's own thread */
	err = kbpf_assign(c->cred.pid, (pid_t)r->tid, &rep.slot, &rep.gen);
	if (err) {
		log_debug("ctl: pid %d tid %u not registered: %s", (int)c->cred.pid, r->tid,
			  strerror(-err));
		return conn_error(c, err);
	}
	c->registered = true;
	if (r->flags & PROFD_REG_LATE)
		late_registrations++;
	rep.nslots = kbpf_nslots();
	rep.has_fd = give;
	rep.flags = profd_tsc()->synced ? PROFD_REGD_TSC_SYNCED : 0;
	err = conn_send(c, PROFD_MSG_REGISTERED, &rep, sizeof(rep), give ? kbpf_ro_fd() : -1);
	if (!err && give)
		c->sent_fd = true;
	log_debug("ctl: pid %d tid %u -> slot %u gen %llu", (int)c->cred.pid, r->tid, rep.slot,
		  (unsigned long long)rep.gen);
	return err;
}

static int do_status(struct conn *c)
{
	struct profd_wire_status st = { .version = PROF_VERSION };

	st.bpf_on = kbpf_on();
	snprintf(st.bpf_why, sizeof(st.bpf_why), "%s", kbpf_why());
	st.processes = seg_count();
	st.threads = kbpf_used();
	st.slots_free = kbpf_nslots() - kbpf_used();
	if (!kbpf_on())
		st.slots_free = 0;
	st.interval_ms = conf.interval_ms;
	st.samples = seg_samples();
	st.uptime_ns = profd_now_ns() - profd_start_ns;
	st.tsc_synced = profd_tsc()->synced;
	st.late = late_registrations;
	snprintf(st.tsc_why, sizeof(st.tsc_why), "%s", profd_tsc()->why);
	return conn_send(c, PROFD_MSG_STATUS, &st, sizeof(st), -1);
}

struct list_ctx {
	struct conn *c;
	__u32 n;
};

static int list_one(const struct profd_wire_proc *p, void *arg)
{
	struct list_ctx *x = arg;
	struct profd_wire_proc q = *p;

	q.kernel = p->alive ? kbpf_count_pid((pid_t)p->pid) : 0;
	x->n++;
	return conn_send(x->c, PROFD_MSG_PROC, &q, sizeof(q), -1);
}

static int do_list(struct conn *c)
{
	struct list_ctx x = { c, 0 };
	struct profd_end end;
	int err;

	err = seg_list(c->cred.uid, list_one, &x);
	if (err)
		return err;
	end.count = x.n;
	end.__pad = 0;
	return conn_send(c, PROFD_MSG_END, &end, sizeof(end), -1);
}

static int do_snapshot(struct conn *c, const struct profd_snapshot_req *r)
{
	struct profd_snapshot_rep rep = { 0 };
	struct prof_snapshot *snap = NULL;
	struct seg_answer a;
	void *mem = MAP_FAILED;
	size_t len = 0;
	struct stat st;
	int err, fd = -1;

	if (r->mode > PROFD_SNAP_LAST || r->pid == 0 || r->pid > 0x7fffffff)
		return conn_error(c, -EINVAL);
	err = seg_snapshot(c->cred.uid, (pid_t)r->pid, (int)r->mode, r->seconds, &a);
	snap = a.snap;
	fd = a.live_fd;
	rep.span_ns = a.span_ns;
	rep.flags = a.based ? PROFD_SNAP_F_BASED : 0;
	if (err) {
		log_debug("ctl: no snapshot of pid %u (mode %u) for uid %u: %s", r->pid, r->mode,
			  (unsigned)c->cred.uid, strerror(-err));
		return conn_error(c, err);
	}
	if (fd >= 0) {
		/* the live segment: the client reads it as it reads its own */
		rep.size = fstat(fd, &st) ? 0 : (__u64)st.st_size;
		goto send;
	}
	/*
	 * A sealed memfd, the image written straight into it: only what is
	 * not zero is, so its histograms stay holes, and the client maps
	 * exactly what we wrote.
	 */
	len = prof_snapshot__image_size(snap);
	fd = memfd_create("profd-snapshot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (ftruncate(fd, (off_t)len)) {
		err = -errno;
		goto cleanup;
	}
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	err = prof_snapshot__write_into(snap, mem, len);
	munmap(mem, len);
	if (err)
		goto cleanup;
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	rep.size = len;
send:
	prof_snapshot__destroy(snap);
	err = conn_send(c, PROFD_MSG_SNAPSHOT, &rep, sizeof(rep), fd);
	close(fd);
	return err;
cleanup:
	prof_snapshot__destroy(snap);
	if (fd >= 0)
		close(fd);
	log_warnx("ctl: failed to answer a snapshot of pid %u: %s", r->pid, strerror(-err));
	return conn_error(c, err);
}

static int do_reset(struct conn *c, const struct profd_pid_req *r)
{
	int err;

	if (r->pid == 0 || r->pid > 0x7fffffff)
		return conn_error(c, -EINVAL);
	err = seg_reset(c->cred.uid, (pid_t)r->pid);
	if (err)
		return conn_error(c, err);
	return conn_send(c, PROFD_MSG_OK, NULL, 0, -1);
}

/* one request; 1: nothing to read, -errno drops the connection */
static int conn_request(struct conn *c)
{
	union {
		char buf[PROFD_MSG_MAX + 1];
		struct profd_hdr h;
	} m;
	struct iovec iov = { m.buf, sizeof(m.buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	const void *pl = m.buf + sizeof(struct profd_hdr);
	ssize_t n;
	int err;

	/* no control buffer: fds a client tries to pass are closed by the kernel */
	n = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -errno;
	if (n == 0)
		return -ECONNRESET;
	err = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ? -EBADMSG
							 : profd_msg_check(m.buf, (size_t)n);
	if (err) {
		log_warnx("ctl: malformed packet (%zd bytes) from pid %d uid %u; dropping it", n,
			  (int)c->cred.pid, (unsigned)c->cred.uid);
		conn_error(c, err);
		return err;
	}
	switch (m.h.type) {
	case PROFD_MSG_REGISTER: {
		struct profd_register r;

		memcpy(&r, pl, sizeof(r));
		return do_register(c, &r);
	}
	case PROFD_MSG_STATUS_REQ:
		return do_status(c);
	case PROFD_MSG_LIST_REQ:
		return do_list(c);
	case PROFD_MSG_SNAPSHOT_REQ: {
		struct profd_snapshot_req r;

		memcpy(&r, pl, sizeof(r));
		return do_snapshot(c, &r);
	}
	case PROFD_MSG_RESET_REQ: {
		struct profd_pid_req r;

		memcpy(&r, pl, sizeof(r));
		return do_reset(c, &r);
	}
	default:
		/* well formed, but an answer type: not a request */
		conn_error(c, -EBADMSG);
		return -EBADMSG;
	}
}

void ctl_event(int epfd, void *ptr, __u32 events)
{
	struct conn *c = ptr;
	int i, err = 0;

	/* a bounded number per wakeup: one client cannot starve the rest */
	for (i = 0; i < 16 && !err && (events & EPOLLIN); i++)
		err = conn_request(c);
	if (err == 1)
		err = 0;
	if (err || ((events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN))) {
		if (err && err != -ECONNRESET)
			log_debug("ctl: dropping pid %d: %s", (int)c->cred.pid, strerror(-err));
		conn_free(epfd, c);
	}
}
