// SPDX-License-Identifier: MIT
/*
 * client.c - daemon/profctl/client.h over usdt/proto.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "proto.h"

#define CLIENT_SEND_TIMEOUT_MS 1000
#define CLIENT_RECV_TIMEOUT_MS 10000 /* a snapshot of a large process */
#define CLIENT_QUICK_TIMEOUT_MS 1000 /* status and list: small answers */
#define CLIENT_MAX_PROCS 65536

/* PROF_SOCKET, as the runtime reads it, or its older name PROFD_SOCKET */
const char *profd_socket_path(void)
{
	const char *p = getenv("PROF_SOCKET");

	if (!p || !*p)
		p = getenv("PROFD_SOCKET");
	return p && *p ? p : PROFD_SOCKET_DEFAULT;
}

static void quick(int fd, bool on);
static int recv_rep(int fd, __u32 want, void *payload, size_t plen, int *rfd, __u32 *got);

static int connect_raw(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval snd = { CLIENT_SEND_TIMEOUT_MS / 1000, 0 };
	struct timeval rcv = { CLIENT_RECV_TIMEOUT_MS / 1000, 0 };
	int fd, fl, err;

	if (!path)
		path = profd_socket_path();
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* non-blocking: a full backlog fails at once instead of hanging */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof(rcv)))
		goto fail;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

static int send_req(int fd, __u32 type, const void *payload, size_t plen)
{
	return profd_send_msg(fd, type, payload, plen, MSG_NOSIGNAL, -1);
}

/*
 * One answer.  want: the type expected; an ERROR answer returns its code.
 * *rfd (if not NULL) gets an fd passed along, else such an fd is closed.
 */
static int recv_rep(int fd, __u32 want, void *payload, size_t plen, int *rfd, __u32 *got)
{
	union {
		char buf[PROFD_MSG_MAX + 1];
		struct profd_hdr h;
	} m;
	struct profd_recv r;
	int pfd, err;
	ssize_t n;

	if (rfd)
		*rfd = -1;
	n = profd_recv(fd, m.buf, sizeof(m.buf), 0, &r);
	if (n < 0) {
		if (n != -EAGAIN)
			return (int)n;
		/* the answer may still come: read as the next question's, it
		 * would lie.  The connection is given up (later calls on it
		 * fail; a caller connects again) */
		shutdown(fd, SHUT_RDWR);
		return -ETIMEDOUT;
	}
	if (n == 0)
		return -ECONNRESET;
	pfd = r.fd;
	err = r.cut || r.nfds > 1 ? -EBADMSG : profd_msg_check(m.buf, (size_t)n);
	if (err)
		goto lost;
	if (got)
		*got = m.h.type;
	if (m.h.type == PROFD_MSG_ERROR) {
		struct profd_error e;

		memcpy(&e, m.buf + sizeof(m.h), sizeof(e));
		err = e.err < 0 && e.err > -4096 ? e.err : -EPROTO;
		goto out;
	}
	if (m.h.type != want && !(got && want == PROFD_MSG_PROC && m.h.type == PROFD_MSG_END)) {
		err = -EPROTO;
		goto lost;
	}
	if (m.h.len - sizeof(m.h) > plen) {
		err = -EPROTO;
		goto lost;
	}
	memcpy(payload, m.buf + sizeof(m.h), m.h.len - sizeof(m.h));
	if (rfd) {
		*rfd = pfd;
		pfd = -1;
	}
	goto out;
lost:
	/* out of step with profd: what follows would be misread too */
	shutdown(fd, SHUT_RDWR);
out:
	if (pfd >= 0)
		close(pfd);
	return err;
}

int profd_pidns(int fd, int nsfd)
{
	struct {
		struct profd_hdr h;
		struct profd_pidns p;
	} req = { { PROFD_MSG_PIDNS, sizeof(req) }, { 0, 0 } };
	ssize_t n;
	int err;

	n = profd_send(fd, &req, sizeof(req), MSG_NOSIGNAL, nsfd);
	if (n != (ssize_t)sizeof(req)) {
		__u32 got = 0;
		int why;

		err = n < 0 ? (int)n : -EIO;
		/* refused as it connected (a uid's share, every place taken):
		 * why waits to be read */
		why = err == -EPIPE ? recv_rep(fd, PROFD_MSG_OK, &req.p, 0, NULL, &got) : 0;
		return got == PROFD_MSG_ERROR ? why : err;
	}
	quick(fd, true);
	err = recv_rep(fd, PROFD_MSG_OK, &req.p, 0, NULL, NULL);
	quick(fd, false);
	return err;
}

/*
 * Connected, and our pid namespace handed over, so that a profd that may
 * not look at /proc/PID/ns still answers in our terms.  A profd before
 * PROFD_MSG_PIDNS (protocol 4) refuses it as malformed and drops the
 * connection: connected again without.  Our namespace refused, we are
 * judged as before; any other error (a refused connection, a hung profd)
 * is the connection's.
 */
int profd_connect(const char *path)
{
	int fd = connect_raw(path), ns, err;

	if (fd < 0)
		return fd;
	ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return fd;
	err = profd_pidns(fd, ns);
	close(ns);
	if (!err || err == -EPERM)
		return fd;
	close(fd);
	return err == -EBADMSG ? connect_raw(path) : err;
}

/* a hung profd costs a status or a list one second, not ten */
static void quick(int fd, bool on)
{
	int ms = on ? CLIENT_QUICK_TIMEOUT_MS : CLIENT_RECV_TIMEOUT_MS;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* what profd_status copies from the wire as it came (the texts are ended
 * apart) */
#define STATUS_NUMBERS(X)                                                             \
	X(version) X(bpf_on) X(processes) X(threads) X(slots_free) X(interval_ms)     \
	X(samples) X(tsc_synced) X(late) X(uptime_ns) X(max_memory) X(mem_history)    \
	X(mem_kept) X(frames) X(frames_dropped) X(kept_dropped) X(histories_dropped) \
	X(windows_refused) X(last_drop_age_ns) X(last_drop_pid) X(bad_segments) X(rescans)

int profd_status(int fd, struct profd_status *st)
{
	struct profd_wire_status w;
	int err;

	quick(fd, true);
	err = send_req(fd, PROFD_MSG_STATUS_REQ, NULL, 0);
	if (!err)
		err = recv_rep(fd, PROFD_MSG_STATUS, &w, sizeof(w), NULL, NULL);
	quick(fd, false);
	if (err)
		return err;
	memset(st, 0, sizeof(*st));
#define COPY(f) st->f = w.f;
	STATUS_NUMBERS(COPY)
#undef COPY
	memcpy(st->bpf_why, w.bpf_why, sizeof(st->bpf_why));
	st->bpf_why[sizeof(st->bpf_why) - 1] = 0;
	memcpy(st->tsc_why, w.tsc_why, sizeof(st->tsc_why));
	st->tsc_why[sizeof(st->tsc_why) - 1] = 0;
	return 0;
}

int profd_list(int fd, struct profd_proc **procs, size_t *n)
{
	union {
		struct profd_wire_proc p;
		struct profd_end e;
	} w;
	struct profd_proc *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	__u32 type;
	int err;

	*procs = NULL;
	*n = 0;
	quick(fd, true);
	err = send_req(fd, PROFD_MSG_LIST_REQ, NULL, 0);
	while (!err) {
		err = recv_rep(fd, PROFD_MSG_PROC, &w, sizeof(w), NULL, &type);
		if (err)
			break;
		if (type == PROFD_MSG_END) {
			if (w.e.count != cnt)
				err = -EPROTO;
			break;
		}
		if (cnt >= CLIENT_MAX_PROCS) {
			err = -E2BIG;
			break;
		}
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		memset(&v[cnt], 0, sizeof(v[cnt]));
		v[cnt].pid = w.p.pid;
		v[cnt].uid = w.p.uid;
		v[cnt].start_token = w.p.start_token;
		memcpy(v[cnt].comm, w.p.comm, sizeof(v[cnt].comm));
		v[cnt].comm[sizeof(v[cnt].comm) - 1] = 0;
		v[cnt].threads = w.p.threads;
		v[cnt].alive = w.p.alive;
		v[cnt].kernel = w.p.kernel;
		v[cnt].created_ns = w.p.created_ns;
		v[cnt].inzone_now = w.p.inzone_now;
		v[cnt].inzone_short = w.p.inzone_short;
		v[cnt].inzone_long = w.p.inzone_long;
		v[cnt].ns_pid = w.p.ns_pid;
		memcpy(v[cnt].cgroup, w.p.cgroup, sizeof(v[cnt].cgroup));
		v[cnt].cgroup[sizeof(v[cnt].cgroup) - 1] = 0;
		cnt++;
	}
	quick(fd, false);
	if (err) {
		free(v);
		return err;
	}
	*procs = v;
	*n = cnt;
	return 0;
}

int profd_snapshot(int fd, pid_t pid, int mode, uint32_t seconds, struct prof_snapshot **snap)
{
	return profd_snapshot_opts(fd, pid, mode, seconds, 0, snap, NULL);
}

int profd_segment_fd(int fd, pid_t pid, int mode, uint32_t seconds, int *sfd,
		     struct profd_answer *ans)
{
	struct profd_snapshot_req req = { .pid = (__u32)pid,
					  .mode = (__u32)mode,
					  .seconds = seconds };
	struct profd_snapshot_rep rep;
	int err;

	*sfd = -1;
	if (pid <= 0 || mode < PROFD_SNAP_START || mode > PROFD_SNAP_LAST)
		return -EINVAL;
	err = send_req(fd, PROFD_MSG_SNAPSHOT_REQ, &req, sizeof(req));
	if (!err)
		err = recv_rep(fd, PROFD_MSG_SNAPSHOT, &rep, sizeof(rep), sfd, NULL);
	if (err)
		return err;
	if (ans) {
		ans->span_ns = rep.span_ns;
		ans->based = rep.flags & PROFD_SNAP_F_BASED;
		ans->ns_pid = rep.ns_pid;
		memcpy(ans->cgroup, rep.cgroup, sizeof(ans->cgroup));
		ans->cgroup[sizeof(ans->cgroup) - 1] = 0;
		ans->uid = rep.uid;
	}
	return *sfd < 0 ? -EPROTO : 0;
}

int profd_name_snapshot(struct prof_snapshot *s, pid_t pid, const struct profd_answer *ans)
{
	/* a container's header names it as its namespace does: profd said so */
	if (ans->ns_pid && s->pid == ans->ns_pid) {
		s->ns_pid = s->pid;
		s->pid = (__u32)pid;
		s->uid = ans->uid;
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", ans->cgroup);
	}
	return s->pid == (__u32)pid ? 0 : -EINVAL;
}

int profd_snapshot_opts(int fd, pid_t pid, int mode, uint32_t seconds, unsigned int flags,
			struct prof_snapshot **snap, struct profd_answer *ans)
{
	struct profd_answer a;
	int err, sfd;

	*snap = NULL;
	err = profd_segment_fd(fd, pid, mode, seconds, &sfd, &a);
	if (err)
		return err;
	if (ans)
		*ans = a;
	/* the live segment or an image: the same validation either way, and
	 * it must be the process asked for */
	err = prof_snapshot__read_fd_opts(sfd, flags, snap);
	close(sfd);
	if (!err && profd_name_snapshot(*snap, pid, &a)) {
		prof_snapshot__destroy(*snap);
		*snap = NULL;
		err = -EINVAL;
	}
	return err;
}

int profd_slices(int fd, pid_t pid, struct profd_slices_thread **out, uint32_t *n)
{
	struct profd_pid_req req = { .pid = (__u32)pid };
	struct profd_slices_rep rep;
	struct profd_slices_thread *t;
	struct stat st;
	ssize_t got;
	int err, sfd = -1;

	*out = NULL;
	*n = 0;
	if (pid <= 0)
		return -EINVAL;
	err = send_req(fd, PROFD_MSG_SLICES_REQ, &req, sizeof(req));
	if (!err)
		err = recv_rep(fd, PROFD_MSG_SLICES, &rep, sizeof(rep), &sfd, NULL);
	if (err)
		return err;
	/* what profd says must be what the fd holds, and no more than a
	 * thread of the process each */
	if (sfd < 0 || fstat(sfd, &st) || (__u64)st.st_size != rep.size ||
	    rep.size != (__u64)rep.threads * sizeof(*t) || rep.threads > 1u << 22) {
		if (sfd >= 0)
			close(sfd);
		return -EPROTO;
	}
	t = calloc(rep.threads ? rep.threads : 1, sizeof(*t));
	if (!t) {
		close(sfd);
		return -ENOMEM;
	}
	got = rep.size ? pread(sfd, t, rep.size, 0) : 0;
	close(sfd);
	if (got != (ssize_t)rep.size) {
		free(t);
		return -EPROTO;
	}
	for (uint32_t i = 0; i < rep.threads; i++)
		if (t[i].n > PROFD_SLICES_MAX) {
			free(t);
			return -EPROTO;
		}
	*out = t;
	*n = rep.threads;
	return 0;
}

int profd_samples(int fd, pid_t pid, char **text, size_t *len, struct profd_samples_rep *rep)
{
	struct profd_pid_req req = { .pid = (__u32)pid };
	struct stat st;
	char *t;
	ssize_t got;
	int err, sfd = -1;

	if (text)
		*text = NULL;
	*len = 0;
	if (pid < 0)
		return -EINVAL;
	err = send_req(fd, PROFD_MSG_SAMPLES_REQ, &req, sizeof(req));
	if (!err)
		err = recv_rep(fd, PROFD_MSG_SAMPLES, rep, sizeof(*rep), &sfd, NULL);
	if (err)
		return err;
	/* what profd says must be what the fd holds; its line of why ends */
	rep->why[sizeof(rep->why) - 1] = 0;
	if (sfd < 0 || fstat(sfd, &st) || (__u64)st.st_size != rep->size ||
	    rep->size > 1ull << 32) {
		if (sfd >= 0)
			close(sfd);
		return -EPROTO;
	}
	/* the state and count alone */
	if (!text) {
		close(sfd);
		return 0;
	}
	t = malloc(rep->size + 1);
	if (!t) {
		close(sfd);
		return -ENOMEM;
	}
	got = rep->size ? pread(sfd, t, rep->size, 0) : 0;
	close(sfd);
	if (got != (ssize_t)rep->size) {
		free(t);
		return -EPROTO;
	}
	t[rep->size] = 0;
	*text = t;
	*len = rep->size;
	return 0;
}
