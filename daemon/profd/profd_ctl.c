// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd_ctl.c - the control socket: SOCK_SEQPACKET, one request per
 * packet, exact lengths (usdt/proto.h), SO_PEERCRED on every connection.
 *
 * A client that sends a malformed packet gets an ERROR and is dropped; a
 * client that does not read its answers is dropped instead of blocking
 * profd (every send is MSG_DONTWAIT).  The agent of a profiled process
 * keeps its connection open; when it closes, the process's slots go back.
 *
 * A connection is bound to its process for its whole life by a pidfd
 * (SO_PEERPIDFD, or pidfd_open of the peer's pid checked against the
 * process's start time): when that process exits, the connection is
 * closed and its slots go back, whoever holds the socket then, so a
 * reused pid never inherits it.  Fair shares: each uid may hold
 * conf.uid_conns connections (root has a reserve above the total); with
 * every place taken, a uid that holds fewer than another takes a place of
 * the one that holds the most (ctl_evict); one that is not an agent's and
 * asks nothing for conf.idle_s is closed.  fds are shared out at start
 * between connections and followed processes (ctl_limits).  Out of fds
 * all the same, profd sheds the pending connection with a reserve fd
 * instead of spinning on a listener it cannot accept from.  Warnings a client causes
 * are rate-limited per uid.
 *
 * A peer in another pid namespace (a container with profd's socket
 * bind-mounted in) names threads and processes as it sees them: its tids
 * are translated to ours through NSpid (one that translates to none of
 * its process's threads is refused), it sees only the processes of its
 * namespace, and its pids are translated both ways.  An agent may hand
 * over its segment's fd (PROFD_MSG_SEGMENT): profd follows a segment it
 * cannot name in its own /dev/shm without any path.
 *
 * Which namespace that is, /proc/PID/ns/pid says only with ptrace rights
 * over the peer (the systemd unit gives none): a peer proves it instead by
 * handing over an fd of its own (PROFD_MSG_PIDNS).  An fd cannot be
 * forged, and it is taken only if it is a pid namespace's, the peer's by
 * all the kernel lets us see: the same as /proc/PID/ns/pid where we may
 * read that, else exactly as many levels below ours as the peer's NSpid
 * has.  The host's namespace is never taken from a peer NSpid puts below
 * it, nor another from a peer NSpid puts in ours.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/nsfs.h>
#include <linux/sched.h>

#include "prof.h"
#include "profd.h"
#include "profd_stacks.h"
#include "proto.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

#define CTL_MAX_CONNS 8192     /* at most; fewer when RLIMIT_NOFILE is low */
#define CTL_ROOT_RESERVE 16    /* connections only root may take past the total */
#define CTL_FD_SPARE 32        /* fds profd opens for a moment */
#define CTL_SNDBUF (1 << 20)
#define CTL_WARN_BURST 5       /* warnings a uid may cause in a window */
#define CTL_WARN_WINDOW_S 60
#define CTL_WARN_BUCKETS 64

struct conn {
	struct conn *next;
	__u64 id; /* owns the kernel slots it registered */
	int fd;
	int pidfd; /* the peer process, -1 if it could not be pinned */
	struct ucred cred;
	__u64 pidns;	 /* the peer's pid namespace (inode) */
	__u64 last_ns;	 /* its last request */
	bool registered; /* an agent: owns slots of cred.pid */
	bool sent_fd;
	bool dead; /* closed; freed by ctl_reap (events of this batch may name it) */
};

/* the pidfd's epoll tag: the conn's address with its low bit set */
#define PIDFD_TAG(c) ((void *)((uintptr_t)(c) | 1))

static struct {
	int lfd;
	int lockfd;	     /* flock'd <path>.lock, held for profd's life */
	char path[PATH_MAX]; /* the socket's, absolute */
	char lock[PATH_MAX + 8];
	struct conn *conns;
	struct conn *dead;
	__u32 nconns;
	__u32 max_conns;  /* from RLIMIT_NOFILE at open */
	__u64 next_id;
	int reserve_fd;	  /* closed to shed a connection when out of fds */
	bool paused;	  /* out of fds and no reserve: listener off until one frees */
	int epfd;
	struct {
		uid_t uid;
		__u32 tokens;
		__u32 dropped;
		__u64 window_ns;
	} warn[CTL_WARN_BUCKETS];
} ctl = { .lfd = -1, .lockfd = -1, .reserve_fd = -1, .epfd = -1 };

/*
 * A warning a client's uid caused: CTL_WARN_BURST at once, then one a
 * window, and how many were dropped (uids share a bucket by uid %
 * CTL_WARN_BUCKETS: a collision only shares the budget).
 */
static void ctl_warn_uid(uid_t uid, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ctl_warn_uid(uid_t uid, const char *fmt, ...)
{
	__typeof__(ctl.warn[0]) *w = &ctl.warn[uid % CTL_WARN_BUCKETS];
	__u64 now = profd_now_ns();
	char buf[256];
	va_list ap;

	if (w->uid != uid || now - w->window_ns >= CTL_WARN_WINDOW_S * 1000000000ull) {
		if (w->dropped)
			log_warnx("ctl: %u more warnings caused by uid %u were not logged",
				  w->dropped, (unsigned)w->uid);
		w->uid = uid;
		w->tokens = CTL_WARN_BURST;
		w->dropped = 0;
		w->window_ns = now;
	}
	if (!w->tokens) {
		w->dropped++;
		return;
	}
	w->tokens--;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_warnx("%s", buf);
}

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

/* the fds open now: what profd holds before it takes connections */
static __u32 fds_open(void)
{
	struct dirent *d;
	__u32 n = 0;
	DIR *dir = opendir("/proc/self/fd");

	if (!dir)
		return 32;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/*
 * As many fds as we may have, shared out so that no use of them can take
 * another's: a connection takes two (socket, pidfd), a followed process
 * one; what profd holds now, CTL_FD_SPARE for what it opens for a moment
 * (a /proc file, a snapshot's memfd, a received fd) and root's reserve
 * of connections come first; then half the rest for connections, half
 * for processes.  Followed processes once took every fd there was (one
 * user's 1,000 processes under the usual 1,024), and every connection,
 * root's too, was shed.  A uid's share of connections is half at most.
 */
static void ctl_limits(void)
{
	struct rlimit rl;
	__u64 n = 1024, held = fds_open() + CTL_FD_SPARE + 2 * CTL_ROOT_RESERVE;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		n = rl.rlim_cur == RLIM_INFINITY ? 1ull << 20 : rl.rlim_cur;
	}
	n = n > held + 32 ? n - held : 32;
	ctl.max_conns = n / 4 < CTL_MAX_CONNS ? (__u32)(n / 4) : CTL_MAX_CONNS;
	if (conf.max_conns && conf.max_conns < ctl.max_conns)
		ctl.max_conns = conf.max_conns;
	conf.max_segs = n / 2 < conf.max_segs ? (__u32)(n / 2) : conf.max_segs;
	if (conf.uid_conns > ctl.max_conns / 2)
		conf.uid_conns = ctl.max_conns / 2 ? ctl.max_conns / 2 : 1;
	log_info("ctl: at most %u connections (%u a uid), %u processes followed", ctl.max_conns,
		 conf.uid_conns, conf.max_segs);
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
	ctl_limits();
	ctl.reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return 0;
}

static void ctl_resume(int epfd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ctl_listener_tag() };

	if (ctl.reserve_fd < 0)
		ctl.reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ctl.paused && ctl.reserve_fd >= 0 &&
	    !epoll_ctl(epfd, EPOLL_CTL_ADD, ctl.lfd, &ev))
		ctl.paused = false;
}

/* closed now, freed by ctl_reap after this batch of events */
static void conn_free(int epfd, struct conn *c)
{
	struct conn **pp;

	if (c->dead)
		return;
	for (pp = &ctl.conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	c->dead = true;
	c->next = ctl.dead;
	ctl.dead = c;
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->pidfd >= 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->pidfd, NULL);
		close(c->pidfd);
	}
	/* the process's agent is gone: so is the process, or its interest */
	if (c->registered)
		kbpf_release_owner(c->id);
	/* and the array it was handed goes when its uid's last one does */
	if (c->sent_fd)
		kbpf_uid_put(c->cred.uid);
	ctl.nconns--;
	/* an fd is free again */
	ctl_resume(epfd);
}

void ctl_reap(void)
{
	struct conn *c;

	while ((c = ctl.dead)) {
		ctl.dead = c->next;
		free(c);
	}
}

void ctl_close(void)
{
	struct conn *c, *next;

	for (c = ctl.conns; c; c = next) {
		next = c->next;
		close(c->fd);
		if (c->pidfd >= 0)
			close(c->pidfd);
		free(c);
	}
	ctl_reap();
	if (ctl.reserve_fd >= 0)
		close(ctl.reserve_fd);
	ctl.reserve_fd = -1;
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

static __u32 conns_of(uid_t uid)
{
	struct conn *c;
	__u32 n = 0;

	for (c = ctl.conns; c; c = c->next)
		n += c->cred.uid == uid;
	return n;
}

/*
 * Every place taken, and uid comes: it gets one if another uid holds
 * more than it does, by closing a connection of a uid that holds the
 * most (not root's): one not an agent's first, the longest idle.  So a
 * user with many uids (a subordinate range, /etc/subuid), or two users
 * at their shares, cannot keep a third out.  True if a place was freed.
 */
static bool ctl_evict(int epfd, uid_t uid)
{
	struct conn *c, *pick = NULL;
	__u32 n = 0, most = 0, mine, k;
	uid_t *u;

	u = malloc(ctl.nconns * sizeof(*u) + 1);
	if (!u)
		return false;
	for (c = ctl.conns; c; c = c->next)
		if (c->cred.uid != 0)
			u[n++] = c->cred.uid;
	profd_uid_sort(u, n);
	mine = profd_uid_run(u, n, uid);
	for (c = ctl.conns; c; c = c->next) {
		if (c->cred.uid == 0 || (k = profd_uid_run(u, n, c->cred.uid)) <= mine || k < most)
			continue;
		if (k > most || !pick || pick->registered > c->registered ||
		    (pick->registered == c->registered && c->last_ns < pick->last_ns))
			pick = c;
		most = k;
	}
	free(u);
	if (!pick)
		return false;
	ctl_warn_uid(pick->cred.uid, "ctl: all %u places taken: closing a connection of uid %u "
		     "(it holds %u) for uid %u", ctl.max_conns, (unsigned)pick->cred.uid, most,
		     (unsigned)uid);
	conn_free(epfd, pick);
	return true;
}

/*
 * Out of fds: take the pending connection with the reserve fd and close
 * it.  True if one was shed (look for more), false if none was pending
 * (accept fails with EMFILE whether or not one is) or none can be.
 */
static bool ctl_shed(int epfd, int err)
{
	bool shed = false;
	int fd;

	if (ctl.reserve_fd >= 0) {
		close(ctl.reserve_fd);
		ctl.reserve_fd = -1;
		fd = accept4(ctl.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			close(fd);
			shed = true;
		}
		ctl.reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	if (shed)
		ctl_warn_uid((uid_t)-1,
			     "ctl: out of fds (%s) with %u connections; refusing a connection",
			     strerror(err), ctl.nconns);
	/* no reserve left: stop listening until an fd frees, rather than spin */
	if (ctl.reserve_fd < 0 && !ctl.paused && !epoll_ctl(epfd, EPOLL_CTL_DEL, ctl.lfd, NULL))
		ctl.paused = true;
	return shed && !ctl.paused;
}

/* refused: the reason, and closed */
static void refuse(int fd, int err)
{
	union {
		char buf[sizeof(struct profd_hdr) + sizeof(struct profd_error)];
		struct profd_hdr h;
	} m;
	struct profd_error e = { .err = err };

	m.h.type = PROFD_MSG_ERROR;
	m.h.len = sizeof(m.buf);
	memcpy(m.buf + sizeof(m.h), &e, sizeof(e));
	send(fd, m.buf, sizeof(m.buf), MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

void ctl_accept(int epfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ucred cred;
	socklen_t len;
	struct conn *c;
	int fd, sz = CTL_SNDBUF;

	ctl.epfd = epfd;
	for (;;) {
		fd = accept4(ctl.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				if (ctl_shed(epfd, errno))
					continue;
				return;
			}
			return;
		}
		len = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || len != sizeof(cred)) {
			log_warn("ctl: failed to get the peer's credentials for fd=%d", fd);
			close(fd);
			continue;
		}
		/* fair shares: a uid's, and the total (root has a reserve past it) */
		if (cred.uid != 0 && conns_of(cred.uid) >= conf.uid_conns) {
			ctl_warn_uid(cred.uid, "ctl: uid %u holds %u connections; refusing another",
				     (unsigned)cred.uid, conf.uid_conns);
			refuse(fd, -EDQUOT);
			continue;
		}
		if (ctl.nconns >= ctl.max_conns + (cred.uid == 0 ? CTL_ROOT_RESERVE : 0) &&
		    (cred.uid == 0 || !ctl_evict(epfd, cred.uid))) {
			ctl_warn_uid(cred.uid, "ctl: %u connections, refusing another (uid %u)",
				     ctl.nconns, (unsigned)cred.uid);
			refuse(fd, -EUSERS);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->cred = cred;
		c->id = ++ctl.next_id;
		c->pidfd = profd_peer_pidfd(fd, cred.pid);
		/* read while the pidfd pins the peer: a pid not reused since.
		 * Unknown, the peer gets our namespace's answers (it is ours,
		 * or gone) but may register nothing */
		c->pidns = cred.pid > 0 ? seg_pidns_of(cred.pid) : 0;
		if (profd_pidfd_exited(c->pidfd))
			c->pidns = 0;
		if (c->pidfd < 0) {
			if (c->pidfd == -EMFILE || c->pidfd == -ENFILE) {
				free(c);
				close(fd);
				ctl_warn_uid((uid_t)-1, "ctl: out of fds with %u connections; "
					     "refusing a connection", ctl.nconns);
				if (ctl_shed(epfd, EMFILE))
					continue;
				return;
			}
			/* a peer in another pid namespace, say: it may ask, not register */
			log_debug("ctl: no pidfd for pid %d: %s", (int)cred.pid, strerror(-c->pidfd));
			c->pidfd = -1;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		c->fd = fd;
		c->last_ns = profd_now_ns();
		ev.data.ptr = c;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
			log_warn("ctl: failed to watch fd=%d", fd);
			if (c->pidfd >= 0)
				close(c->pidfd);
			free(c);
			close(fd);
			continue;
		}
		/* the process exits: the connection goes, whoever holds it */
		ev.data.ptr = PIDFD_TAG(c);
		if (c->pidfd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, c->pidfd, &ev)) {
			close(c->pidfd);
			c->pidfd = -1;
		}
		c->next = ctl.conns;
		ctl.conns = c;
		ctl.nconns++;
		log_debug("ctl: connection from pid %d uid %u", (int)c->cred.pid,
			  (unsigned)c->cred.uid);
	}
}

/* idle connections that are not agents go; a paused listener is retried */
void ctl_tick(int epfd)
{
	__u64 now = profd_now_ns(), idle = (__u64)conf.idle_s * 1000000000ull;
	struct conn *c, *next;

	for (c = ctl.conns; c; c = next) {
		next = c->next;
		if (!c->registered && now - c->last_ns > idle) {
			log_debug("ctl: closing pid %d's idle connection", (int)c->cred.pid);
			conn_free(epfd, c);
		}
	}
	ctl_resume(epfd);
}

/* one packet, maybe with an fd; never blocks */
static int conn_send(struct conn *c, __u32 type, const void *payload, size_t plen, int fd)
{
	return profd_send_msg(c->fd, type, payload, plen, MSG_DONTWAIT | MSG_NOSIGNAL, fd);
}

/* an answer with a memfd the peer maps: sealed first (it stays what we
 * wrote, whatever the peer does), closed after */
static int send_sealed(struct conn *c, __u32 type, const void *payload, size_t plen, int fd)
{
	int err;

	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	err = conn_send(c, type, payload, plen, fd);
	close(fd);
	return err;
}

static int conn_error(struct conn *c, int err)
{
	struct profd_error e = { .err = err };

	return conn_send(c, PROFD_MSG_ERROR, &e, sizeof(e), -1);
}

/* registrations that came after the thread's first zone stopped waiting */
static __u32 late_registrations;

/* the peer's tid as we name it; -ESRCH if none of its threads is that */
static int peer_tid(const struct conn *c, __u32 tid, pid_t *ours)
{
	if (!c->pidns)
		return -ESRCH;
	if (c->pidns == seg_pidns()) {
		*ours = (pid_t)tid;
		return 0;
	}
	return prof_task_from_nspid(c->cred.pid, tid, ours);
}

static int do_register(struct conn *c, const struct profd_register *r)
{
	struct profd_registered rep = { .tid = r->tid, .rec_size = sizeof(struct prof_sched_rec) };
	bool give = !c->sent_fd || (r->flags & PROFD_REG_WANT_FD);
	pid_t tid;
	int err;

	if (!kbpf_on())
		return conn_error(c, -EOPNOTSUPP);
	if (r->tid == 0 || r->tid > 0x7fffffff)
		return conn_error(c, -EINVAL);
	/* the process that connected, still there: its pid is still its own */
	if (profd_pidfd_exited(c->pidfd))
		return conn_error(c, -ESRCH);
	/* a container's tid is ours only once translated; never as it is */
	err = peer_tid(c, r->tid, &tid);
	if (err) {
		log_debug("ctl: pid %d tid %u: not a thread of it here", (int)c->cred.pid, r->tid);
		return conn_error(c, err);
	}
	/* kbpf_assign checks /proc/<peer pid>/task/<tid>: the peer's own thread */
	err = kbpf_assign(c->cred.pid, tid, c->cred.uid, c->id, &rep.slot, &rep.gen);
	/* and it did not exit meanwhile (the tid could be another's then) */
	if (!err && profd_pidfd_exited(c->pidfd)) {
		kbpf_release_owner(c->id);
		err = -ESRCH;
	}
	if (err) {
		log_debug("ctl: pid %d tid %u not registered: %s", (int)c->cred.pid, r->tid,
			  strerror(-err));
		return conn_error(c, err);
	}
	c->registered = true;
	if (r->flags & PROFD_REG_LATE)
		late_registrations++;
	/* the uid's own records only: slot indexes them */
	rep.nslots = kbpf_uid_nslots();
	rep.has_fd = give;
	rep.flags = profd_tsc()->synced ? PROFD_REGD_TSC_SYNCED : 0;
	err = conn_send(c, PROFD_MSG_REGISTERED, &rep, sizeof(rep),
			give ? kbpf_uid_fd(c->cred.uid) : -1);
	/* kept while this connection lives: the process maps it once */
	if (!err && give && !c->sent_fd) {
		kbpf_uid_hold(c->cred.uid);
		c->sent_fd = true;
	}
	log_debug("ctl: pid %d tid %u (%d) -> slot %u gen %llu", (int)c->cred.pid, r->tid, (int)tid,
		  rep.slot, (unsigned long long)rep.gen);
	return err;
}

/* history and kept data against --max-memory */
static void status_memory(struct profd_wire_status *st)
{
	struct seg_mem_stat m;
	__u64 now = profd_now_ns();

	seg_mem_stat(&m);
	st->max_memory = conf.max_memory;
	st->mem_history = m.history;
	st->mem_kept = m.kept;
	st->frames = m.frames;
	st->frames_dropped = m.frames_dropped;
	st->kept_dropped = m.kept_dropped;
	st->histories_dropped = m.histories_dropped;
	st->windows_refused = m.windows_refused;
	st->last_drop_pid = (__u32)m.last_drop_pid;
	st->last_drop_age_ns = m.last_drop_pid && now > m.last_drop_ns ? now - m.last_drop_ns : 0;
	st->bad_segments = seg_bad_count();
	st->rescans = seg_rescans();
}

/* the peer's pid namespace, proved by an fd of it */
static int do_pidns(struct conn *c, const struct profd_pidns *r, int fd)
{
	__u64 ino = 0;
	int depth;
	bool ok;

	if (fd < 0 || r->flags || r->__pad)
		return conn_error(c, -EINVAL);
	if (profd_pidfd_exited(c->pidfd) || !c->pidns)
		return conn_error(c, -ESRCH);
	depth = profd_pidns_depth(fd, &ino);
	/* what the kernel told us of the peer stands: a claim must agree.
	 * Else below ours, as deep as NSpid says the peer is, and it still
	 * the peer (its pid not reused meanwhile) */
	if (c->pidns != SEG_PIDNS_OTHER)
		ok = depth >= 0 && ino == c->pidns;
	else
		ok = depth >= 0 && prof_proc_nslevels(c->cred.pid) == depth + 1 &&
		     !profd_pidfd_exited(c->pidfd);
	if (!ok) {
		ctl_warn_uid(c->cred.uid, "ctl: pid %d uid %u handed over a pid namespace not its own",
			     (int)c->cred.pid, (unsigned)c->cred.uid);
		return conn_error(c, -EPERM);
	}
	c->pidns = ino;
	return conn_send(c, PROFD_MSG_OK, NULL, 0, -1);
}

/* the agent's own segment, handed over: followed if it has no name here */
static int do_segment(struct conn *c, const struct profd_segment *r, int fd)
{
	int err;

	if (fd < 0 || r->flags || r->__pad)
		return conn_error(c, -EINVAL);
	if (profd_pidfd_exited(c->pidfd) || !c->pidns)
		return conn_error(c, -ESRCH);
	err = seg_adopt_fd(fd, c->cred.pid, c->cred.uid, c->pidns);
	if (err) {
		log_debug("ctl: pid %d's segment not followed: %s", (int)c->cred.pid,
			  strerror(-err));
		return conn_error(c, err);
	}
	return conn_send(c, PROFD_MSG_OK, NULL, 0, -1);
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
	status_memory(&st);
	return conn_send(c, PROFD_MSG_STATUS, &st, sizeof(st), -1);
}

struct list_ctx {
	struct conn *c;
	__u32 n;
};

static int list_one(const struct profd_wire_proc *p, pid_t host_pid, void *arg)
{
	struct list_ctx *x = arg;
	struct profd_wire_proc q = *p;

	q.kernel = p->alive ? kbpf_count_pid(host_pid) : 0;
	x->n++;
	return conn_send(x->c, PROFD_MSG_PROC, &q, sizeof(q), -1);
}

static int do_list(struct conn *c)
{
	struct list_ctx x = { c, 0 };
	struct profd_end end;
	int err;

	err = seg_list(c->cred.uid, c->pidns, list_one, &x);
	if (err)
		return err;
	end.count = x.n;
	end.__pad = 0;
	return conn_send(c, PROFD_MSG_END, &end, sizeof(end), -1);
}

/* a pid the peer names, as we name it: the same in our namespace */
static pid_t peer_pid(const struct conn *c, __u32 pid)
{
	if (!c->pidns || c->pidns == seg_pidns())
		return (pid_t)pid;
	return seg_host_pid(c->pidns, (pid_t)pid);
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
	pid_t pid;

	/* resets are the client's (a baseline file of its user): profd keeps
	 * none to subtract */
	if (r->mode == PROFD_SNAP_RESET)
		return conn_error(c, -EOPNOTSUPP);
	if (r->mode > PROFD_SNAP_LAST || r->pid == 0 || r->pid > 0x7fffffff)
		return conn_error(c, -EINVAL);
	pid = peer_pid(c, r->pid);
	if (pid < 0)
		return conn_error(c, -ESRCH);
	seg_where(pid, c->pidns, &rep.ns_pid, rep.cgroup, sizeof(rep.cgroup), &rep.uid);
	err = seg_snapshot(c->cred.uid, pid, (int)r->mode, r->seconds, &a);
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
		prof_snapshot__destroy(snap);
		err = conn_send(c, PROFD_MSG_SNAPSHOT, &rep, sizeof(rep), fd);
		close(fd);
		return err;
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
	rep.size = len;
	prof_snapshot__destroy(snap);
	return send_sealed(c, PROFD_MSG_SNAPSHOT, &rep, sizeof(rep), fd);
cleanup:
	prof_snapshot__destroy(snap);
	if (fd >= 0)
		close(fd);
	log_warnx("ctl: failed to answer a snapshot of pid %u: %s", r->pid, strerror(-err));
	return conn_error(c, err);
}

/* the scheduler's last runs of pid's registered threads, in a sealed memfd */
/* the process a pid request names, as our pid, if the peer may read it */
static int pid_req_target(struct conn *c, const struct profd_pid_req *r, pid_t *out)
{
	pid_t pid;
	int err;

	if (r->pid == 0 || r->pid > 0x7fffffff || r->__pad)
		return -EINVAL;
	pid = peer_pid(c, r->pid);
	if (pid < 0)
		return -ESRCH;
	err = seg_access(c->cred.uid, pid);
	if (err)
		return err;
	*out = pid;
	return 0;
}

/* a process's sampled stacks (profd_stacks.c), as text in a sealed memfd */
static int do_samples(struct conn *c, const struct profd_pid_req *r)
{
	struct profd_samples_rep rep = { 0 };
	FILE *f = NULL;
	int err, fd;
	pid_t pid = 0;

	/* pid 0: the sampler's state and count alone (profctl status) */
	err = r->pid || r->__pad ? pid_req_target(c, r, &pid) : 0;
	if (err)
		return conn_error(c, err);
	fd = memfd_create("profd-samples", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return conn_error(c, -errno);
	rep.hz = sample_timer_fd() >= 0 ? conf.sample_hz : 0;
	snprintf(rep.why, sizeof(rep.why), "%s", sample_why());
	f = fdopen(dup(fd), "w");
	err = f ? sample_dump(pid, f, &rep.samples) : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -EIO;
	if (err) {
		close(fd);
		return conn_error(c, err);
	}
	rep.size = (__u64)lseek(fd, 0, SEEK_END);
	return send_sealed(c, PROFD_MSG_SAMPLES, &rep, sizeof(rep), fd);
}

/* a memfd (name) that holds len bytes of buf, or -errno */
static int memfd_of(const char *name, const void *buf, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	if (len && write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static int do_slices(struct conn *c, const struct profd_pid_req *r)
{
	struct profd_slices_rep rep = { 0 };
	struct profd_slices_thread *t = NULL;
	int err, fd, n, i;
	pid_t pid;

	err = pid_req_target(c, r, &pid);
	if (err)
		return conn_error(c, err);
	if (!kbpf_on())
		return conn_error(c, -EOPNOTSUPP);
	n = (int)kbpf_count_pid(pid);
	t = calloc(n ? (size_t)n : 1, sizeof(*t));
	if (!t)
		return conn_error(c, -ENOMEM);
	n = kbpf_slices(pid, t, (__u32)n);
	if (n < 0) {
		free(t);
		return conn_error(c, n);
	}
	/* the tids the process itself uses (its pid namespace's), as its rings do */
	for (i = 0; i < n; i++) {
		__u32 inner;

		if (!prof_task_nspid(pid, (pid_t)t[i].tid, &inner))
			t[i].tid = inner;
	}
	rep.threads = (__u32)n;
	rep.size = (__u64)n * sizeof(*t);
	fd = memfd_of("profd-slices", t, rep.size);
	free(t);
	if (fd < 0)
		return conn_error(c, fd);
	return send_sealed(c, PROFD_MSG_SLICES, &rep, sizeof(rep), fd);
}

/* a well-formed request of type, its payload at pl; fd (or -1) stays the
 * caller's, which closes it after (what a request keeps of it is a dup) */
static int conn_dispatch(struct conn *c, __u32 type, const void *pl, int fd)
{
	switch (type) {
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
	case PROFD_MSG_RESET_REQ:
		/* a client that asks profd to keep a reset: profd keeps none */
		return conn_error(c, -EOPNOTSUPP);
	case PROFD_MSG_SLICES_REQ: {
		struct profd_pid_req r;

		memcpy(&r, pl, sizeof(r));
		return do_slices(c, &r);
	}
	case PROFD_MSG_SAMPLES_REQ: {
		struct profd_pid_req r;

		memcpy(&r, pl, sizeof(r));
		return do_samples(c, &r);
	}
	case PROFD_MSG_SEGMENT: {
		struct profd_segment r;

		memcpy(&r, pl, sizeof(r));
		return do_segment(c, &r, fd);
	}
	case PROFD_MSG_PIDNS: {
		struct profd_pidns r;

		memcpy(&r, pl, sizeof(r));
		return do_pidns(c, &r, fd);
	}
	default:
		/* well formed, but an answer type: not a request */
		conn_error(c, -EBADMSG);
		return -EBADMSG;
	}
}

/* one request; 1: nothing to read, -errno drops the connection */
static int conn_request(struct conn *c)
{
	union {
		char buf[PROFD_MSG_MAX + 1];
		struct profd_hdr h;
	} m;
	const void *pl = m.buf + sizeof(struct profd_hdr);
	struct profd_recv got;
	ssize_t n;
	int err, fd;

	/* room for one fd (a segment's): more than one is malformed */
	n = profd_recv(c->fd, m.buf, sizeof(m.buf), MSG_DONTWAIT, &got);
	if (n == -EAGAIN || n == -EINTR)
		return 1;
	if (n <= 0)
		return n ? (int)n : -ECONNRESET;
	fd = got.fd;
	c->last_ns = profd_now_ns();
	err = got.cut || got.nfds > 1 ? -EBADMSG : profd_msg_check(m.buf, (size_t)n);
	/* an fd rides only with a segment or a pid namespace */
	if (!err && fd >= 0 && m.h.type != PROFD_MSG_SEGMENT && m.h.type != PROFD_MSG_PIDNS)
		err = -EBADMSG;
	if (err) {
		if (fd >= 0)
			close(fd);
		ctl_warn_uid(c->cred.uid, "ctl: malformed packet (%zd bytes) from pid %d uid %u; dropping it",
			     n, (int)c->cred.pid, (unsigned)c->cred.uid);
		conn_error(c, err);
		return err;
	}
	err = conn_dispatch(c, m.h.type, pl, fd);
	if (fd >= 0)
		close(fd);
	return err;
}

void ctl_event(int epfd, void *ptr, __u32 events)
{
	struct conn *c = ptr;
	int i, err = 0;

	/* the peer process exited: its connection and its slots go */
	if ((uintptr_t)ptr & 1) {
		c = (struct conn *)((uintptr_t)ptr & ~(uintptr_t)1);
		if (c->dead)
			return;
		log_debug("ctl: pid %d exited; closing its connection", (int)c->cred.pid);
		conn_free(epfd, c);
		return;
	}
	if (c->dead)
		return;

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
