// SPDX-License-Identifier: MIT
/*
 * agent.c - the profd client inside the profiled process.
 *
 * One background thread per process (never one of the application's)
 * connects to profd's socket ($PROF_SOCKET, else $PROFD_SOCKET, else the default), registers
 * each profiled thread once, receives the kernel record array's fd
 * (once per connection; the array holds the records of this uid's threads
 * only, and is frozen, so nobody can write it from user space) and maps
 * it read-only.  It then points
 * the thread's fast path at its record (te->fast->krec, stored under
 * prof_rt.lock so the thread cannot exit meanwhile) once the kernel has
 * started that record afresh for it.  With profd absent it
 * retries about once a second; a hung profd costs this thread a timeout,
 * never the application a wait.  The only thing an application thread
 * does here is write an eventfd (prof_agent__kick).  Once connected and its
 * threads registered, it hands profd the segment's fd (PROFD_MSG_SEGMENT):
 * in a container, whose /dev/shm profd cannot see, that is how profd finds
 * the process.  Before all that, on connecting, it hands profd an fd of its
 * pid namespace (PROFD_MSG_PIDNS), by which profd knows which container the
 * process is in without looking at /proc/PID/ns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <stdio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "proto.h"

#define AGENT_RETRY_MS 1000	/* reconnect period while profd is absent */
#define AGENT_IO_TIMEOUT_MS 250 /* per request: a hung profd costs this */
#define AGENT_BATCH 64		/* registrations per round */
#define AGENT_MAX_SLOTS (1u << 20)
#define AGENT_PEND_MAX 256    /* threads waiting for their first switch */
#define AGENT_PEND_MS 10      /* how often they are looked at */
#define AGENT_PEND_TRIES 6000 /* a minute; then the next connection */

struct agent_pend {
	__u32 tid;
	__u32 slot;
	__u64 gen;
	__u32 tries;
};

/* all fields under prof_rt.lock, except where noted */
static struct {
	bool enabled; /* prof_agent__start ran: keep a thread alive */
	bool absent;  /* the last try found no profd: first zones do not wait */
	bool running; /* the thread exists in this process */
	int efd;      /* kicks; read by kick without the lock */
	char path[108];
	/* agent thread only */
	int sock;
	bool handed; /* the segment went to this connection's profd */
	bool no_pidns; /* profd does not take PROFD_MSG_PIDNS */
	const struct prof_sched_rec *recs;
	void *recs_mem; /* the same, for munmap */
	size_t recs_len;
	__u32 nslots;
	struct agent_pend pend[AGENT_PEND_MAX];
	__u32 npend;
} agent = { .efd = -1, .sock = -1 };

static void agent_disconnect(void)
{
	struct prof_tentry *te;

	if (agent.sock >= 0)
		close(agent.sock);
	agent.sock = -1;
	/*
	 * The old array stays mapped: a thread may hold its record pointer
	 * right now.  Its numbers just stop moving until the thread is
	 * registered again with the next profd.
	 */
	agent.recs = NULL;
	agent.recs_mem = NULL;
	agent.npend = 0;
	pthread_mutex_lock(&prof_rt.lock);
	for (te = prof_rt.threads; te; te = te->next) {
		/* profd is gone: its records say nothing from now on */
		if (te->registered)
			prof_cover_request(te, &prof_zero_rec, 0);
		te->registered = false;
	}
	pthread_mutex_unlock(&prof_rt.lock);
}

/* a thread waiting at its first zone: answered (its record, or NULL);
 * false if it was not waiting (any more) */
static bool agent_sync_answer(struct prof_tentry *te, const struct prof_sched_rec *rec, __u64 gen)
{
	if (!te->sync_wait)
		return false;
	te->sync_rec = rec;
	te->sync_gen = gen;
	te->sync_done = true;
	pthread_cond_broadcast(&prof_reg_cv);
	return true;
}

/* no profd to ask: nobody waits for one */
static void agent_sync_release(void)
{
	struct prof_tentry *te;

	pthread_mutex_lock(&prof_rt.lock);
	for (te = prof_rt.threads; te; te = te->next)
		agent_sync_answer(te, NULL, 0);
	pthread_mutex_unlock(&prof_rt.lock);
}

static int agent_send_fd(__u32 type, int fd, bool *broken);

/*
 * Our pid namespace, an fd of it: profd names our namespace by it where it
 * may not look at /proc/PID/ns (a container's, profd under its unit).  A
 * profd before it (protocol 4) refuses it as malformed (-EBADMSG) and drops
 * the connection: -EAGAIN, and the next connection goes without.  0, or
 * -errno (not connected); a refusal of the namespace is no error.
 */
static int agent_hand_pidns(void)
{
	bool broken;
	int fd, err;

	if (agent.no_pidns)
		return 0;
	fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	err = agent_send_fd(PROFD_MSG_PIDNS, fd, &broken);
	if (!broken && err != -EBADMSG)
		return 0;
	close(agent.sock);
	agent.sock = -1;
	if (broken)
		return err;
	agent.no_pidns = true;
	return -EAGAIN;
}

static int agent_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 0, AGENT_IO_TIMEOUT_MS * 1000 };
	int fd, fl;

	if (strlen(agent.path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, agent.path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* non-blocking: a full backlog (hung profd) is a retry, not a wait */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		int err = -errno;

		close(fd);
		return err;
	}
	agent.sock = fd;
	return agent_hand_pidns();
}

/* one REGISTER round trip: 0, 1 if profd refused the thread, or -errno
 * (drop the connection); *mfd gets the map fd if one came along */
static int agent_request(__u32 tid, bool late, struct profd_registered *out, int *mfd)
{
	struct {
		struct profd_hdr h;
		struct profd_register r;
	} req = { { PROFD_MSG_REGISTER, sizeof(req) },
		  { tid, (agent.recs ? 0 : PROFD_REG_WANT_FD) | (late ? PROFD_REG_LATE : 0) } };
	union {
		char buf[PROFD_MSG_MAX];
		struct profd_hdr h;
	} rep;
	struct profd_recv r;
	ssize_t n;
	int err;

	*mfd = -1;
	if (send(agent.sock, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
		return -EIO;
	n = profd_recv(agent.sock, rep.buf, sizeof(rep.buf), 0, &r);
	if (n <= 0)
		return n < 0 ? (int)n : -ECONNRESET;
	*mfd = r.fd;
	err = r.cut || r.nfds > 1 ? -EBADMSG : profd_msg_check(rep.buf, (size_t)n);
	if (!err && rep.h.type == PROFD_MSG_ERROR) {
		struct profd_error e;

		memcpy(&e, rep.buf + sizeof(rep.h), sizeof(e));
		if (*mfd >= 0)
			close(*mfd);
		*mfd = -1;
		/* a refusal for this thread (1), not a broken connection */
		return e.err < 0 ? 1 : -EPROTO;
	}
	if (!err && rep.h.type != PROFD_MSG_REGISTERED)
		err = -EPROTO;
	if (!err) {
		memcpy(out, rep.buf + sizeof(rep.h), sizeof(*out));
		if (out->tid != tid)
			err = -EPROTO;
	}
	if (err && *mfd >= 0) {
		close(*mfd);
		*mfd = -1;
	}
	return err;
}

/*
 * One request of type (SEGMENT, PIDNS: an 8-byte payload of zeros) with fd
 * (taken); 0 if profd said OK, its ERROR's code, or -EPROTO / -errno for a
 * broken connection (*broken set then).
 */
static int agent_send_fd(__u32 type, int fd, bool *broken)
{
	struct {
		struct profd_hdr h;
		struct profd_segment s; /* the layout of profd_pidns too */
	} req = { { type, sizeof(req) }, { 0, 0 } };
	union {
		char buf[PROFD_MSG_MAX];
		struct profd_hdr h;
	} rep;
	struct profd_error e;
	ssize_t n;

	*broken = true;
	n = profd_send(agent.sock, &req, sizeof(req), MSG_NOSIGNAL, fd);
	close(fd);
	if (n != (ssize_t)sizeof(req))
		return -EIO;
	n = recv(agent.sock, rep.buf, sizeof(rep.buf), 0);
	if (n <= 0)
		return n < 0 ? -errno : -ECONNRESET;
	if (profd_msg_check(rep.buf, (size_t)n) ||
	    (rep.h.type != PROFD_MSG_OK && rep.h.type != PROFD_MSG_ERROR))
		return -EPROTO;
	*broken = false;
	if (rep.h.type == PROFD_MSG_OK)
		return 0;
	memcpy(&e, rep.buf + sizeof(rep.h), sizeof(e));
	return e.err < 0 ? e.err : -EPROTO;
}

/*
 * Hand profd our segment (a dup of its fd, taken under the lock: a fork
 * child replaces it).  profd's refusal is no error: it finds the segment
 * by its name then, or not at all; -errno only for a broken connection.
 */
static int agent_hand_segment(void)
{
	bool broken;
	int fd, err;

	pthread_mutex_lock(&prof_rt.lock);
	fd = prof_rt.seg_fd >= 0 ? fcntl(prof_rt.seg_fd, F_DUPFD_CLOEXEC, 0) : -1;
	pthread_mutex_unlock(&prof_rt.lock);
	if (fd < 0)
		return 0;
	err = agent_send_fd(PROFD_MSG_SEGMENT, fd, &broken);
	return broken ? err : 0;
}

/* map the array profd sent: read-only, validated geometry */
static int agent_map(int mfd, const struct profd_registered *r)
{
	void *mem;
	size_t len;

	if (r->rec_size != sizeof(struct prof_sched_rec) || !r->nslots ||
	    r->nslots > AGENT_MAX_SLOTS)
		return -EPROTO;
	len = (size_t)r->nslots * sizeof(struct prof_sched_rec);
	len = (len + 4095) & ~(size_t)4095;
	mem = mmap(NULL, len, PROT_READ, MAP_SHARED, mfd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	agent.recs = mem;
	agent.recs_mem = mem;
	agent.recs_len = len;
	agent.nslots = r->nslots;
	return 0;
}

/* a thread profd answered for: registered, with slot or PROF_NO_SLOT; a
 * thread waiting at its first zone gets its record (or none) and takes it
 * itself: true then */
static bool agent_mark(__u32 tid, __u32 slot, __u64 gen)
{
	struct prof_tentry *te;
	bool answered = false;

	pthread_mutex_lock(&prof_rt.lock);
	for (te = prof_rt.threads; te; te = te->next) {
		if ((__u32)te->tid != tid || !te->alive || te->registered)
			continue;
		te->registered = true;
		te->kslot = slot;
		answered = agent_sync_answer(te, slot == PROF_NO_SLOT ? NULL : &agent.recs[slot], gen);
		break;
	}
	pthread_mutex_unlock(&prof_rt.lock);
	return answered;
}

/* threads whose record was not ready when they took their answer: handed
 * over like any other once it is */
static void agent_take_wants(void)
{
	struct prof_tentry *te;

	pthread_mutex_lock(&prof_rt.lock);
	for (te = prof_rt.threads; te; te = te->next) {
		if (!te->want_pend)
			continue;
		te->want_pend = false;
		if (!te->alive || !te->registered || te->kslot == PROF_NO_SLOT ||
		    te->kslot >= agent.nslots || agent.npend == AGENT_PEND_MAX)
			continue;
		agent.pend[agent.npend].tid = (__u32)te->tid;
		agent.pend[agent.npend].slot = te->kslot;
		agent.pend[agent.npend].gen = te->sync_gen;
		agent.pend[agent.npend].tries = 0;
		agent.npend++;
	}
	pthread_mutex_unlock(&prof_rt.lock);
}

/* point a thread's fast path at its record, if it still lives */
static void agent_point(__u32 tid, __u32 slot, __u64 gen)
{
	struct prof_tentry *te;

	pthread_mutex_lock(&prof_rt.lock);
	for (te = prof_rt.threads; te; te = te->next) {
		if ((__u32)te->tid != tid || !te->alive || !te->registered || te->kslot != slot)
			continue;
		/* the thread takes it at its next zone exit */
		prof_cover_request(te, &agent.recs[slot], gen);
		break;
	}
	pthread_mutex_unlock(&prof_rt.lock);
}

/*
 * A record is started afresh by the kernel on its owner's first switch
 * after the assignment (its gen then matches).  Until then it may hold a
 * previous owner's numbers, so the thread is pointed at it only after.
 */
static bool rec_ready(__u32 slot, __u64 gen)
{
	return __atomic_load_n(&agent.recs[slot].gen, __ATOMIC_ACQUIRE) == gen;
}

/* bind the pending threads whose records are ready; true if any remain */
static bool agent_pending(void)
{
	__u32 i, j;

	for (i = j = 0; i < agent.npend; i++) {
		struct agent_pend *p = &agent.pend[i];

		if (rec_ready(p->slot, p->gen))
			agent_point(p->tid, p->slot, p->gen);
		else if (p->tries++ < AGENT_PEND_TRIES)
			agent.pend[j++] = *p;
	}
	agent.npend = j;
	return j > 0;
}

/* register every alive thread that has no record yet; -errno: reconnect */
static int agent_register_all(void)
{
	__u32 tids[AGENT_BATCH];
	bool late[AGENT_BATCH];
	struct prof_tentry *te;
	struct profd_registered r = { 0 };
	size_t n, i;
	int err, mfd;

	do {
		n = 0;
		pthread_mutex_lock(&prof_rt.lock);
		for (te = prof_rt.threads; te && n < AGENT_BATCH; te = te->next)
			if (te->alive && !te->registered) {
				late[n] = te->late;
				tids[n++] = (__u32)te->tid;
			}
		pthread_mutex_unlock(&prof_rt.lock);

		for (i = 0; i < n; i++) {
			err = agent_request(tids[i], late[i], &r, &mfd);
			if (err < 0)
				return err;
			if (err == 1) {
				/* refused (gone, no slot left): do not ask again */
				agent_mark(tids[i], PROF_NO_SLOT, 0);
				continue;
			}
			if (!agent.recs) {
				err = mfd >= 0 ? agent_map(mfd, &r) : -EPROTO;
				if (mfd >= 0)
					close(mfd);
				if (err)
					return err;
			} else if (mfd >= 0) {
				close(mfd);
			}
			if (r.slot >= agent.nslots)
				return -EPROTO;
			/* profd's verdict on the TSC, for every reader of the segment */
			if ((r.flags & PROFD_REGD_TSC_SYNCED) && prof_rt.seg)
				__atomic_or_fetch(&prof_rt.seg->flags, PROF_SEG_TSC_SYNCED,
						  __ATOMIC_RELAXED);
			if (agent_mark(tids[i], r.slot, r.gen))
				continue;
			if (rec_ready(r.slot, r.gen) || agent.npend == AGENT_PEND_MAX) {
				agent_point(tids[i], r.slot, r.gen);
			} else {
				agent.pend[agent.npend].tid = tids[i];
				agent.pend[agent.npend].slot = r.slot;
				agent.pend[agent.npend].gen = r.gen;
				agent.pend[agent.npend].tries = 0;
				agent.npend++;
			}
		}
	} while (n == AGENT_BATCH);
	return 0;
}

static void *agent_main(void *arg)
{
	struct pollfd pfd[2];
	int wait;
	__u64 v;

	(void)arg;
	for (;;) {
		if (agent.sock < 0 && !agent_connect())
			agent.handed = false;
		if (agent.sock >= 0 && agent_register_all())
			agent_disconnect();
		/* after the registrations: a first zone waits for those, not this */
		if (agent.sock >= 0 && !agent.handed) {
			if (agent_hand_segment())
				agent_disconnect();
			else
				agent.handed = true;
		}
		__atomic_store_n(&agent.absent, agent.sock < 0, __ATOMIC_RELAXED);
		if (agent.sock < 0)
			agent_sync_release();
		else if (agent.recs)
			agent_take_wants();
		wait = agent.sock >= 0 && agent_pending() ? AGENT_PEND_MS : AGENT_RETRY_MS;

		pfd[0].fd = agent.efd;
		pfd[0].events = POLLIN;
		pfd[1].fd = agent.sock;
		pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		if (poll(pfd, agent.sock >= 0 ? 2 : 1, wait) < 0 && errno != EINTR)
			usleep(AGENT_RETRY_MS * 1000);
		if (pfd[0].revents & POLLIN)
			if (read(agent.efd, &v, sizeof(v)) < 0)
				v = 0;
		/* profd never speaks first: anything here is a hangup */
		if (agent.sock >= 0 && pfd[1].revents)
			agent_disconnect();
	}
	return NULL;
}

/* caller holds prof_rt.lock */
static void agent_spawn(void)
{
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t thr;

	if (agent.running)
		return;
	if (agent.efd < 0)
		agent.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (agent.efd < 0)
		return;
	/* the agent takes no signal meant for the application */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	if (!pthread_create(&thr, &at, agent_main, NULL)) {
		agent.running = true;
		pthread_setname_np(thr, "prof-agent");
	}
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* called with prof_rt.lock held, once, when the segment is created */
void prof_agent__start(void)
{
	const char *p = prof_env.socket;

	if (agent.enabled)
		return;
	snprintf(agent.path, sizeof(agent.path), "%s", *p ? p : PROFD_SOCKET_DEFAULT);
	agent.enabled = true;
	agent_spawn();
}

/* an application thread was added; prof_rt.lock is not held */
void prof_agent__kick(void)
{
	__u64 one = 1;
	int fd;

	if (!__atomic_load_n(&agent.enabled, __ATOMIC_RELAXED))
		return;
	if (!__atomic_load_n(&agent.running, __ATOMIC_RELAXED)) {
		/* a forked child: its agent died with the parent's threads */
		pthread_mutex_lock(&prof_rt.lock);
		agent_spawn();
		pthread_mutex_unlock(&prof_rt.lock);
	}
	fd = __atomic_load_n(&agent.efd, __ATOMIC_RELAXED);
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		return; /* counter full: a kick is pending anyway */
}

const struct prof_sched_rec *prof_agent__register_sync(struct prof_tentry *te, __u64 *gen)
{
	const struct prof_sched_rec *rec = NULL;
	struct timespec dl;

	if (!__atomic_load_n(&agent.enabled, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&agent.absent, __ATOMIC_RELAXED))
		return NULL;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += PROF_REG_WAIT_MS * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&prof_rt.lock);
	te->sync_wait = true;
	te->sync_done = false;
	pthread_mutex_unlock(&prof_rt.lock);
	prof_agent__kick();
	pthread_mutex_lock(&prof_rt.lock);
	while (!te->sync_done)
		if (pthread_cond_timedwait(&prof_reg_cv, &prof_rt.lock, &dl))
			break;
	/* a late answer finds nobody waiting: the thread goes the usual way,
	 * and profd hears it was late (profctl status counts them) */
	te->sync_wait = false;
	te->late = !te->sync_done;
	if (te->sync_done && te->sync_rec) {
		rec = te->sync_rec;
		*gen = te->sync_gen;
	}
	pthread_mutex_unlock(&prof_rt.lock);
	return rec;
}

void prof_agent__want(struct prof_tentry *te)
{
	pthread_mutex_lock(&prof_rt.lock);
	te->want_pend = true;
	pthread_mutex_unlock(&prof_rt.lock);
	prof_agent__kick();
}

/* in the child of fork(), single-threaded: forget the parent's agent */
void prof_agent__atfork_child(void)
{
	if (agent.sock >= 0)
		close(agent.sock);
	agent.sock = -1;
	if (agent.efd >= 0)
		close(agent.efd);
	agent.efd = -1;
	/* nobody else runs: the parent's mapping can go */
	if (agent.recs_mem)
		munmap(agent.recs_mem, agent.recs_len);
	agent.recs = NULL;
	agent.recs_mem = NULL;
	agent.npend = 0;
	agent.running = false;
}
