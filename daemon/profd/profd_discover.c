// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd_discover.c - finding the segments to follow: /dev/shm
 * listed and watched, other mount namespaces', handed-over fds; each
 * checked before it is followed, the bad ones remembered.
 *
 * Containers: a process in another mount namespace has a /dev/shm of its
 * own.  Its runtime hands its segment's fd to profd when it registers
 * (seg_adopt_fd: no path needed), and the periodic rescan looks into the
 * /dev/shm of every other mount namespace through /proc/<pid>/root
 * (prof_seg_list_ns), for containers that cannot reach profd's socket.
 * Either way the process is named by its host pid; its header names it as
 * its own namespaces do (its pid there, from NSpid; its uid there, from its
 * uid map), and is checked against those.  A peer in another pid namespace
 * sees only the processes of its namespace, by the pids it knows them by.
 *
 * Fair shares: a uid's processes are followed conf.uid_segs at a time, all
 * uids' conf.max_segs (each holds an fd: the rest are the connections',
 * profd_ctl.c), and its exited processes' data take conf.uid_kept_bytes at
 * most (those followed first go first).  A segment with more than one link, or whose file is
 * one already followed, is refused: one file under many names would be
 * followed, and kept, many times.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>
#include "busguard.h"
#include "profd.h"
#include "proto.h"
#include "profd_seg.h"

static struct seg_bad **bad_bucket(ino_t ino)
{
	return &sg.bad_hash[((__u64)ino * 0x9e3779b97f4a7c15ull) >> 52];
}

static struct seg_bad *bad_find(const char *path, ino_t ino)
{
	struct seg_bad *b;

	for (b = *bad_bucket(ino); b; b = b->hnext)
		if (b->ino == ino && !strcmp(b->path, path))
			return b;
	return NULL;
}

static bool bad_known(const char *path, ino_t ino)
{
	struct seg_bad *b = bad_find(path, ino);

	return b && !b->since;
}

/*
 * path (uid's) is not ready: look at it again at the samples until 'until'
 * (0: SEG_PENDING_NS from its first look, and a pending name keeps its
 * first time, so one never published is dropped, to come back at the
 * backstop; a suspect's deadline is its own).
 */
static void seg_retry(const char *path, uid_t uid, __u64 until)
{
	static const char dir[] = "/dev/shm/";
	__u64 now = profd_now_ns();
	struct seg_pending *p;
	bool first = !until;
	__u32 i, mine = 0;

	if (first)
		until = now + SEG_PENDING_NS;
	if (strncmp(path, dir, sizeof(dir) - 1))
		return;
	path += sizeof(dir) - 1;
	for (i = 0; i < sg.npending; i++) {
		if (!strcmp(sg.pending[i].name, path))
			break;
		mine += sg.pending[i].uid == uid;
	}
	if (i == sg.npending) {
		if (mine >= SEG_PENDING_UID)
			return;
		if (sg.npending == SEG_PENDING_MAX) {
			sg.overflowed = true;
			return;
		}
		sg.npending++;
		p = &sg.pending[i];
		snprintf(p->name, sizeof(p->name), "%s", path);
		p->uid = uid;
		p->until = until;
		/* a suspect is settled at its deadline */
		p->drop = first ? now + SEG_PENDING_DROP_NS : until;
		p->next = 0;
		return;
	}
	p = &sg.pending[i];
	if (!first && until > p->until)
		p->until = p->drop = until;
}

/* a few lines a minute: a user can make bad segments by the thousand */
static bool seg_warn_ok(void)
{
	static __u64 window;
	static __u32 n, dropped;
	__u64 now = profd_now_ns();

	if (now - window >= 60000000000ull) {
		if (dropped)
			log_warnx("seg: %u more segments skipped, not logged", dropped);
		window = now;
		n = dropped = 0;
	}
	if (n < 10) {
		n++;
		return true;
	}
	dropped++;
	return false;
}

static void bad_unlink(struct seg_bad *b)
{
	struct seg_bad **pp = bad_bucket(b->ino);

	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	*(b->newer ? &b->newer->older : &sg.bad) = b->older;
	*(b->older ? &b->older->newer : &sg.bad_oldest) = b->newer;
	free(b);
	sg.nbad--;
}

static struct seg_bad *bad_new(const char *path, ino_t ino, __u64 since)
{
	struct seg_bad *b, **bucket = bad_bucket(ino);

	if (sg.nbad >= SEG_BAD_MAX)
		bad_unlink(sg.bad_oldest);
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	snprintf(b->path, sizeof(b->path), "%s", path);
	b->ino = ino;
	b->since = since;
	b->hnext = *bucket;
	*bucket = b;
	b->older = sg.bad;
	*(sg.bad ? &sg.bad->newer : &sg.bad_oldest) = b;
	sg.bad = b;
	sg.nbad++;
	return b;
}

/* its file is gone (or another file has its name); a handed-over
 * segment's (no path: "pid N's segment") stays until it is evicted */
static bool bad_gone(const struct seg_bad *b)
{
	struct stat st;

	if (b->path[0] != '/')
		return false;
	return lstat(b->path, &st) ? errno == ENOENT || errno == ENOTDIR : st.st_ino != b->ino;
}

void bad_prune(__u64 now)
{
	__u64 every = (__u64)sg.nbad * 100000ull;
	struct seg_bad *b, *older;

	if (every < SEG_BAD_PRUNE_NS)
		every = SEG_BAD_PRUNE_NS;
	if (!sg.nbad || now - sg.bad_pruned < every)
		return;
	sg.bad_pruned = now;
	for (b = sg.bad; b; b = older) {
		older = b->older;
		if (bad_gone(b))
			bad_unlink(b);
	}
}

static void bad_add(const char *path, ino_t ino, const char *why)
{
	struct seg_bad *b = bad_find(path, ino);

	if (b && !b->since)
		return;
	if (seg_warn_ok())
		log_warnx("seg: skipping %s: %s", path, why);
	if (b)
		b->since = 0;
	else
		bad_new(path, ino, 0);
}

/* a suspect that read after all */
static void bad_forget(const char *path, ino_t ino)
{
	struct seg_bad *b = bad_find(path, ino);

	if (b && b->since)
		bad_unlink(b);
}

/* a published segment that did not read: bad once it has not for
 * SEG_SUSPECT_NS, else looked at again at the rescans until then */
static void bad_suspect(const char *path, ino_t ino, uid_t uid, const char *why)
{
	struct seg_bad *b = bad_find(path, ino);
	__u64 now = profd_now_ns() | 1; /* never 0, never before since */

	if (!b && !(b = bad_new(path, ino, now)))
		return;
	if (!b->since)
		return;
	if (now - b->since >= SEG_SUSPECT_NS) {
		bad_add(path, ino, why);
		return;
	}
	seg_retry(path, uid, b->since + SEG_SUSPECT_NS + 200000000ull);
}

static struct seg *seg_find_path(const char *path)
{
	struct seg *s;

	for (s = sg.list; s; s = s->next)
		if (!strcmp(s->path, path))
			return s;
	return NULL;
}

/* processes followed that hold an fd (conf.max_segs) */
static bool seg_fds_full(void)
{
	struct seg *s;
	__u32 n = 0;

	for (s = sg.list; s; s = s->next)
		n += s->fd >= 0;
	return n >= conf.max_segs;
}

/*
 * Every place taken (conf.max_segs, or the table), and a process of uid
 * comes: it gets one if another uid (not root) has more processes
 * followed than uid has, by no longer following the newest of that uid's
 * (the one with the least history; it is looked for again when a place
 * frees).  So many uids (a subordinate range, /etc/subuid) cannot keep
 * another user's processes out.  True if a place was freed.
 */
static bool seg_evict_for(uid_t uid)
{
	struct seg *s, *pick = NULL, **pp;
	__u32 n = 0, most = 0, mine, k;
	uid_t *u = malloc(sg.n * sizeof(*u) + 1);

	if (!u)
		return false;
	for (s = sg.list; s; s = s->next)
		if (s->alive && s->uid != 0)
			u[n++] = s->uid;
	profd_uid_sort(u, n);
	mine = profd_uid_run(u, n, uid);
	for (s = sg.list; s; s = s->next) {
		if (!s->alive || s->uid == 0 || (k = profd_uid_run(u, n, s->uid)) <= mine ||
		    k < most)
			continue;
		if (k > most || !pick || s->found_ns > pick->found_ns)
			pick = s;
		most = k;
	}
	free(u);
	if (!pick)
		return false;
	if (seg_warn_ok())
		log_warnx("seg: every place taken: no longer following pid %d of uid %u (it has "
			  "%u) for uid %u",
			  (int)pick->pid, (unsigned)pick->uid, most, (unsigned)uid);
	for (pp = &sg.list; *pp != pick; pp = &(*pp)->next)
		;
	*pp = pick->next;
	seg_free(pick);
	sg.n--;
	sg.refused = true;
	return true;
}

static __u32 seg_alive_of(uid_t uid)
{
	struct seg *s;
	__u32 n = 0;

	for (s = sg.list; s; s = s->next)
		n += s->alive && s->uid == uid;
	return n;
}

/*
 * pid's pid namespace: its inode, which needs ptrace rights over pid (root
 * has them; profd's systemd unit does not).  Without them, NSpid still
 * says whether it is ours: another is SEG_PIDNS_OTHER then, which matches
 * no peer's (a container's peer sees none of its namespace's processes
 * then, rather than every container's, unless the peer proves its own
 * with an fd of it: seg_adopt_fd's pidns).  0 if pid is gone.
 */

__u64 seg_pidns_of(pid_t pid)
{
	__u64 ino = prof_ns_ino(pid, "pid");
	int levels;

	if (ino)
		return ino;
	levels = prof_proc_nslevels(pid);
	if (levels <= 0)
		return 0;
	return levels == 1 ? sg.pidns : SEG_PIDNS_OTHER;
}

/* a process's namespaces as its header names it: 0 or -errno */
static int seg_ns_names(pid_t pid, uid_t uid, __u32 *hdr_pid, uid_t *hdr_uid, __u64 *pidns)
{
	int err;

	*pidns = seg_pidns_of(pid);
	if (!*pidns)
		return -ESRCH;
	*hdr_pid = (__u32)pid;
	*hdr_uid = uid;
	if (*pidns != sg.pidns && (err = prof_proc_nspid(pid, hdr_pid)))
		return err;
	return prof_proc_ns_uid(pid, uid, hdr_uid);
}

static int look_magic(struct seg *s, void *arg)
{
	*(__u64 *)arg = *(const volatile __u64 *)s->mem;
	return 0;
}

/* the segment's magic, a guarded read; 0 if it faults */
static __u64 seg_magic(struct seg *s)
{
	__u64 magic = 0;

	return seg_guard(s, look_magic, NULL, &magic) ? 0 : magic;
}

/*
 * The checks before a segment open at fd is mapped: its file (*st), its
 * process's namespaces (how its header names it: *hdr_pid, *hdr_uid, and
 * its pid namespace *pidns), its owner's share.  0 or -errno (what is
 * wrong with it noted: bad, or pending).
 */
static int seg_vet(const struct prof_seg_ent *e, int fd, __u64 proved, struct stat *st,
		   __u32 *hdr_pid, uid_t *hdr_uid, __u64 *pidns)
{
	struct stat pst;
	struct seg *o;
	char proc[32];
	int err;

	if (fstat(fd, st) || bad_known(e->path, st->st_ino))
		return -EPERM;
	/* one file, one process: no second name for it, nor a second look */
	if (st->st_nlink > 1) {
		bad_add(e->path, st->st_ino, "more than one link to it");
		return -EPERM;
	}
	for (o = sg.list; o; o = o->next)
		if (o->alive && o->ino == st->st_ino && o->dev == st->st_dev)
			break;
	if (o) {
		/* a container's, handed over and found in its /dev/shm too */
		if (o->pid != (pid_t)e->pid || o->start_token != e->start_token)
			bad_add(e->path, st->st_ino, "the file of a segment already followed");
		return -EALREADY;
	}
	err = seg_ns_names((pid_t)e->pid, st->st_uid, hdr_pid, hdr_uid, pidns);
	if (!err && e->ns_pid && e->ns_pid != *hdr_pid)
		err = -ESRCH;
	/* only where NSpid says another and /proc/PID/ns could not say which */
	if (!err && *pidns == SEG_PIDNS_OTHER && proved && proved != SEG_PIDNS_OTHER &&
	    proved != sg.pidns)
		*pidns = proved;
	/* gone meanwhile is no fault of the segment's */
	if (err && prof_proc_start_token((pid_t)e->pid) == e->start_token)
		bad_add(e->path, st->st_ino, "its pid or uid cannot be translated");
	if (err)
		return err;
	/* the owner's share of processes followed; a listing when a place
	 * frees looks for it again */
	if (seg_alive_of(st->st_uid) >= conf.uid_segs) {
		sg.refused = true;
		if (seg_warn_ok())
			log_warnx("seg: uid %u has %u processes followed; not following pid %u yet",
				  (unsigned)st->st_uid, conf.uid_segs, e->pid);
		return -EDQUOT;
	}
	snprintf(proc, sizeof(proc), "/proc/%u", e->pid);
	/* the process itself must belong to the file's owner */
	if (stat(proc, &pst) || pst.st_uid != st->st_uid) {
		bad_add(e->path, st->st_ino, "owner differs from the process's");
		return -EPERM;
	}
	/* being created: not sized or not published yet: pending */
	if (st->st_size < PROF_SEG_HDR_SIZE) {
		seg_retry(e->path, st->st_uid, 0);
		return -EAGAIN;
	}
	return 0;
}

/*
 * Verify and map one new segment, open read-only at fd (taken): e names
 * it (pid and uid ours; e->ns_pid, if any, what its header says); pidns,
 * if not 0, the pid namespace its process proved with an fd of it, which
 * names a namespace /proc/PID/ns would not let us name.  0, or -errno
 * (-EALREADY: followed already).
 */
static int seg_follow(const struct prof_seg_ent *e, int fd, __u64 proved)
{
	struct prof_snapshot *snap = NULL;
	struct stat st;
	struct seg *s;
	__u32 hdr_pid;
	uid_t hdr_uid;
	__u64 pidns;
	int err;

	err = seg_vet(e, fd, proved, &st, &hdr_pid, &hdr_uid, &pidns);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto cleanup;
	snprintf(s->path, sizeof(s->path), "%s", e->path);
	s->pid = (pid_t)e->pid;
	s->uid = e->uid;
	s->start_token = e->start_token;
	s->hdr_pid = hdr_pid;
	s->hdr_uid = hdr_uid;
	s->pidns = pidns;
	if (pidns != sg.pidns)
		prof_proc_cgroup(s->pid, s->cgroup, sizeof(s->cgroup));
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->fd = fd;
	s->len = (size_t)st.st_size;
	s->mem = mmap(NULL, s->len, PROT_READ, MAP_SHARED, fd, 0);
	if (s->mem == MAP_FAILED) {
		err = -errno;
		s->mem = NULL;
		seg_free(s);
		if (err == -ENOMEM)
			seg_retry(e->path, st.st_uid, 0);
		return err;
	}
	err = seg_read(s, &snap);
	if (err) {
		/* unpublished (magic not yet stored) looks the same as corrupt:
		 * only a segment with a magic is suspect, and bad only if it
		 * stays so */
		if (err != -EINVAL || s->len >= PROF_SEG_HDR_SIZE) {
			if (err == -EPERM || err == -EFAULT)
				bad_add(e->path, st.st_ino, strerror(-err));
			else if (seg_magic(s) == PROF_SEG_MAGIC)
				bad_suspect(e->path, st.st_ino, st.st_uid, strerror(-err));
			else
				seg_retry(e->path, st.st_uid, 0);
		}
		seg_free(s);
		return err;
	}
	/* every place taken: one of a uid with more, once this one proved
	 * itself a process's (else a bad file would cost another its place) */
	if ((sg.n >= SEG_MAX || seg_fds_full()) && !seg_evict_for(st.st_uid)) {
		sg.refused = true;
		prof_snapshot__destroy(snap);
		seg_free(s);
		return -ENOSPC;
	}
	bad_forget(e->path, st.st_ino);
	s->alive = true;
	s->found_ns = profd_now_ns();
	s->born_ns = snap->mono_base_ns && snap->mono_base_ns < s->found_ns ? snap->mono_base_ns
									    : s->found_ns;
	/* the checking read is the first frame: no second full read for it */
	ring_push(s, s->found_ns, snap, snap->now_tick);
	s->next = sg.list;
	sg.list = s;
	sg.n++;
	if (s->pidns != sg.pidns)
		log_info("seg: following pid %d (%s), uid %u: pid %u in its namespace, %s",
			 (int)s->pid, snap->comm, (unsigned)s->uid, s->hdr_pid,
			 s->cgroup[0] ? s->cgroup : "no cgroup");
	else
		log_info("seg: following pid %d (%s), uid %u", (int)s->pid, snap->comm,
			 (unsigned)s->uid);
	return 0;
cleanup:
	close(fd);
	return err;
}

/* open, verify and map one new segment found by its name: seg_follow's
 * answer, -ENOSPC for a full table */
static int seg_adopt(const struct prof_seg_ent *e)
{
	int fd;

	if (!e->alive)
		return -ESRCH;
	fd = prof_seg_open(e);
	if (fd >= 0)
		return seg_follow(e, fd, 0);
	/* out of fds or memory for now: again at the samples */
	if (fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM)
		seg_retry(e->path, e->uid, 0);
	return fd;
}

/* a segment of our /dev/shm handed over: its name, looked at now */
static void seg_consider_fd(int fd)
{
	char self[40], path[128];
	struct prof_seg_ent e;
	const char *name;
	ssize_t n;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = 0;
	name = strrchr(path, '/');
	if (name && !prof_seg_ent_here(name + 1, &e))
		seg_consider(&e);
}

int seg_adopt_fd(int fd, pid_t pid, uid_t uid, __u64 pidns)
{
	struct prof_seg_ent e = { .pid = (__u32)pid, .uid = (__u32)uid };
	struct statfs sf;
	struct stat st;
	char self[40];
	__u32 hdr_pid;
	int rfd, err;

	/* a shm object of the peer's, private: nothing else is mapped */
	if (fstat(fd, &st) || fstatfs(fd, &sf))
		return -errno;
	/* in our /dev/shm under a name that names it here: found as usual,
	 * but now, so the peer's next request finds it followed (its name
	 * may wait in inotify's queue, or for a sample, as not ready then) */
	if (st.st_dev == sg.shm_dev && seg_pidns_of(pid) == sg.pidns) {
		if (sg.ifd >= 0)
			seg_inotify_event();
		seg_consider_fd(fd);
		return 0;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != uid || (st.st_mode & 0077) ||
	    sf.f_type != TMPFS_MAGIC)
		return -EPERM;
	e.start_token = prof_proc_start_token(pid);
	if (!e.start_token || prof_proc_nspid(pid, &hdr_pid))
		return -ESRCH;
	e.ns_pid = hdr_pid;
	e.alive = true;
	snprintf(e.path, sizeof(e.path), "pid %d's segment (handed over)", (int)pid);
	/* a read-only open file of our own: the peer's may write, and ours
	 * goes to clients as it is */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (rfd < 0)
		return -errno;
	err = seg_follow(&e, rfd, pidns);
	return err == -EALREADY ? 0 : err;
}

static struct seg *seg_find_alive(pid_t pid, __u64 start_token)
{
	struct seg *s;

	for (s = sg.list; s; s = s->next)
		if (s->alive && s->pid == pid && s->start_token == start_token)
			return s;
	return NULL;
}

/* the /dev/shm of other mount namespaces: at most once a second (a walk of
 * /proc), for containers that did not hand their segment over; from the
 * sampling timer, so a burst of new segments (inotify) does not walk it */
void seg_rescan_ns(void)
{
	struct prof_seg_ent *ents = NULL;
	__u64 now = profd_now_ns();
	size_t n = 0, i;
	int err;

	if (conf.no_ns_scan || (sg.ns_scan_ns && now - sg.ns_scan_ns < 1000000000ull))
		return;
	sg.ns_scan_ns = now;
	err = prof_seg_list_ns((uid_t)-1, &ents, &n);
	if (err) {
		log_warnx("seg: failed to look into other mount namespaces: %s", strerror(-err));
		return;
	}
	for (i = 0; i < n; i++)
		if (!seg_find_alive((pid_t)ents[i].pid, ents[i].start_token))
			seg_adopt(&ents[i]);
	free(ents);
}

/* a segment's name listed or reported: followed, unless it is already or
 * was found bad */
int seg_consider(const struct prof_seg_ent *e)
{
	struct seg *s = seg_find_path(e->path);

	if (s && s->start_token == e->start_token)
		return 0;
	/* skipped before: not opened again (seg_follow checks the inode it
	 * opens too) */
	if (bad_known(e->path, (ino_t)e->ino))
		return -EPERM;
	return seg_adopt(e);
}

void seg_rescan(void)
{
	struct prof_seg_ent *ents = NULL;
	size_t n = 0, i;
	int err;

	sg.rescans++;
	sg.rescan_ns = profd_now_ns();
	err = prof_seg_list((uid_t)-1, &ents, &n);
	if (err) {
		log_warnx("seg: failed to list /dev/shm: %s", strerror(-err));
		return;
	}
	for (i = 0; i < n; i++)
		seg_consider(&ents[i]);
	free(ents);
}

/* the pending names, again: each until followed, found bad, gone or late */
void seg_pending_run(__u64 now)
{
	struct seg_pending *p;
	struct prof_seg_ent e;
	__u32 i = 0;
	bool last;
	int err;

	while (i < sg.npending) {
		p = &sg.pending[i];
		/* the last look at its time (a suspect's settles it) */
		last = now >= p->drop;
		if (!last && now >= p->until) {
			if (now < p->next) {
				i++;
				continue;
			}
			p->next = now + SEG_PENDING_SLOW_NS;
		}
		err = prof_seg_ent_here(p->name, &e);
		if (err == -ENOENT || err == -EINVAL)
			goto drop; /* gone, or no longer a segment's */
		if (err) {
			i++; /* no fd, no memory: again */
			continue;
		}
		/* followed (0), found bad, or refused for a full table or its
		 * user's share (looked for again when a place frees): done */
		err = seg_consider(&e);
		if (!last && err && err != -EDQUOT && err != -ENOSPC &&
		    !bad_known(e.path, (ino_t)e.ino)) {
			i++;
			continue;
		}
drop:
		sg.pending[i] = sg.pending[--sg.npending];
	}
}

int seg_inotify_fd(void)
{
	return sg.ifd;
}

/* new names in /dev/shm: each looked at alone; a lost event (the queue
 * overflowed) lists all of it */
void seg_inotify_event(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	struct prof_seg_ent e;
	bool all = false, lost = false;
	ssize_t n;
	char *p;

	while ((n = read(sg.ifd, buf, sizeof(buf))) > 0)
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & (IN_IGNORED | IN_UNMOUNT))
				lost = true;
			else if (ev->mask & IN_Q_OVERFLOW)
				all = true;
			else if (!all && ev->len && !prof_seg_ent_here(ev->name, &e))
				seg_consider(&e);
		}
	/* at the next sample, at most one a second: a user who floods the
	 * queue does not keep profd listing */
	if (all)
		sg.overflowed = true;
	/* the watch went (/dev/shm unmounted): the backstop finds segments */
	if (lost) {
		log_warnx("seg: inotify on /dev/shm ended; listing it every %llu s",
			  SEG_RESCAN_BLIND_NS / 1000000000ull);
		close(sg.ifd);
		sg.ifd = -1;
		sg.overflowed = true;
	}
}
