// SPDX-License-Identifier: MIT
/*
 * profctl_src.c - where profctl's snapshots come from.
 *
 * With profd: the control socket (daemon/profctl/client.h), which answers with a
 * segment image that goes through the same validation as a live segment.
 * Without it: the caller's own segments in /dev/shm, and in the /dev/shm
 * of the containers (other mount namespaces) it may look into through
 * /proc/<pid>/root, read directly.  Either way, a reset is a baseline
 * (the whole process as it was) kept in a private file per user and
 * process, and nowhere else:
 *
 *	$XDG_RUNTIME_DIR/profctl.<uid>.<pid>.<start token>	if usable
 *	/dev/shm/profctl.<uid>.<pid>.<start token>		otherwise
 *
 * created 0600 with O_EXCL|O_NOFOLLOW under a temporary name, then renamed
 * into place; read back only if it is a regular file owned by the caller.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "busguard.h"
#include "json_writer.h"
#include "profctl.h"
#ifndef PROFCTL_NO_CLIENT
#include "client.h"
#endif

bool pc_env_no_daemon(void)
{
	const char *env = getenv("PROFCTL_NO_DAEMON");
	bool on = true;

	/* as the PROF_* flags are read; anything else set, as ever, is a yes */
	if (!env)
		return false;
	if (prof_env_parse_flag(env, &on))
		on = true;
	return on;
}

void pc_src_open(struct pc_src *src, bool no_daemon)
{
	*src = (struct pc_src){ .fd = -1 };
	if (pc_env_no_daemon())
		no_daemon = true;
	/* not asked: why stays 0, so callers can tell it from a failure */
	if (no_daemon)
		return;
#ifndef PROFCTL_NO_CLIENT
	src->sock = profd_socket_path();
	src->fd = profd_connect(src->sock);
	if (src->fd < 0) {
		src->why = src->fd;
		src->fd = -1;
	}
#else
	src->why = -ENOTSUP;
#endif
}

void pc_src_close(struct pc_src *src)
{
	if (src->fd >= 0)
		close(src->fd);
	src->fd = -1;
	if (src->live_mem)
		munmap(src->live_mem, src->live_len);
	src->live_mem = NULL;
	src->live_pid = 0;
	prof_seg_flat_cache__destroy(src->flat_cache);
	src->flat_cache = NULL;
	pc_src_pass(src, false);
}

void pc_src_lost(struct pc_src *src, int err)
{
#ifndef PROFCTL_NO_CLIENT
	if (src->fd < 0 ||
	    (err != -ETIMEDOUT && err != -EPIPE && err != -ECONNRESET && err != -EPROTO))
		return;
	close(src->fd);
	src->fd = profd_connect(src->sock);
	if (src->fd < 0) {
		src->why = src->fd;
		src->fd = -1;
	}
#else
	(void)src, (void)err;
#endif
}

void pc_src_pass(struct pc_src *src, bool on)
{
	free(src->pass_ents);
	src->pass_ents = NULL;
	src->pass_n = 0;
	src->pass = on;
}

/* --- direct ---------------------------------------------------------------- */

/* uid's segments here, then those of the containers it may look into */
static int seg_list_all(uid_t uid, struct prof_seg_ent **ents, size_t *n)
{
	struct prof_seg_ent *ns = NULL, *all;
	size_t nn = 0;
	int err;

	err = prof_seg_list(uid, ents, n);
	if (err)
		return err;
	if (prof_seg_list_ns(uid, &ns, &nn) || !nn) {
		free(ns);
		return 0;
	}
	all = realloc(*ents, (*n + nn) * sizeof(*all));
	if (!all) {
		free(ns);
		return 0;
	}
	memcpy(all + *n, ns, nn * sizeof(*ns));
	free(ns);
	*ents = all;
	*n += nn;
	return 0;
}

/* a container's segment names it as its namespace does: named here */
static int name_direct(struct prof_snapshot *s, const struct prof_seg_ent *e)
{
	if (!e->ns_pid)
		return s->pid == e->pid ? 0 : -EINVAL;
	if (s->pid != e->ns_pid)
		return -EINVAL;
	s->ns_pid = e->ns_pid;
	s->pid = e->pid;
	s->uid = e->uid;
	prof_proc_cgroup((pid_t)e->pid, s->cgroup, sizeof(s->cgroup));
	return 0;
}

static int direct_list(struct pc_src *src, struct pc_proc **procs, size_t *n)
{
	struct prof_seg_ent *ents = NULL;
	struct pc_proc *p;
	size_t ne = 0, i;
	int err;

	*procs = NULL;
	*n = 0;
	err = seg_list_all(getuid(), &ents, &ne);
	if (err)
		return err;
	p = calloc(ne ? ne : 1, sizeof(*p));
	if (!p) {
		free(ents);
		return -ENOMEM;
	}
	for (i = 0; i < ne; i++) {
		struct prof_snapshot *s = NULL;
		int fd = prof_seg_open(&ents[i]);

		p[i].pid = (pid_t)ents[i].pid;
		p[i].uid = ents[i].uid;
		p[i].start_token = ents[i].start_token;
		p[i].alive = ents[i].alive;
		p[i].kernel = -1;
		p[i].ns_pid = ents[i].ns_pid;
		if (ents[i].ns_pid)
			prof_proc_cgroup((pid_t)ents[i].pid, p[i].cgroup, sizeof(p[i].cgroup));
		snprintf(p[i].path, sizeof(p[i].path), "%s", ents[i].path);
		if (fd < 0)
			continue;
		/* the header and the threads: no node need be copied */
		if (!prof_snapshot__read_fd_opts(fd, PROF_READ_LAZY | PROF_READ_NO_HIST, &s)) {
			__u32 k;

			snprintf(p[i].comm, sizeof(p[i].comm), "%s", s->comm);
			p[i].threads = s->nthreads;
			p[i].created_ns = s->created_ns;
			p[i].kernel = 0;
			for (k = 0; k < s->nthreads; k++)
				if (s->threads[k].ksched_slot != PROF_NO_SLOT)
					p[i].kernel++;
			prof_snapshot__destroy(s);
		}
		close(fd);
	}
	/* a pass finds each process here, not in a listing of its own */
	if (src->pass) {
		free(src->pass_ents);
		src->pass_ents = ents;
		src->pass_n = ne;
	} else {
		free(ents);
	}
	*procs = p;
	*n = ne;
	return 0;
}

/* the segment of pid in ents: the live one, else the newest; ne if none */
static size_t seg_pick(const struct prof_seg_ent *ents, size_t ne, pid_t pid)
{
	size_t i, best = ne;

	for (i = 0; i < ne; i++) {
		if ((pid_t)ents[i].pid != pid)
			continue;
		if (best == ne || (ents[i].alive && !ents[best].alive) ||
		    (ents[i].alive == ents[best].alive &&
		     ents[i].start_token > ents[best].start_token))
			best = i;
	}
	return best;
}

/*
 * The segment of pid: the live one, else the newest; messages for misses.
 * Within a pass (src not NULL), in its listing first: a listing for each
 * process made a scrape of P processes cost P listings of /dev/shm and of
 * every mount namespace (minutes, with hundreds of processes).
 */
static int direct_find(struct pc_src *src, pid_t pid, struct prof_seg_ent *out)
{
	struct prof_seg_ent *ents = NULL;
	size_t ne = 0, i, best;
	int err;

	if (src && src->pass_ents &&
	    (best = seg_pick(src->pass_ents, src->pass_n, pid)) < src->pass_n) {
		*out = src->pass_ents[best];
		return 0;
	}
	err = seg_list_all(getuid(), &ents, &ne);
	if (err) {
		pc_warnx("failed to list segments in /dev/shm: %s", strerror(-err));
		return err;
	}
	best = seg_pick(ents, ne, pid);
	if (best < ne) {
		*out = ents[best];
		free(ents);
		return 0;
	}
	free(ents);

	/* say why: somebody else's, not profiled, or no such process */
	ents = NULL;
	ne = 0;
	if (!prof_seg_list((uid_t)-1, &ents, &ne)) {
		for (i = 0; i < ne; i++)
			if ((pid_t)ents[i].pid == pid)
				break;
		/* one's own, made between the two listings: found after all */
		if (i < ne && ents[i].uid == getuid()) {
			*out = ents[i];
			free(ents);
			return 0;
		}
		if (i < ne) {
			unsigned int owner = (unsigned int)ents[i].uid;

			free(ents);
			pc_warnx("pid %d: not yours (segment owned by uid %u); ask profd or run as "
				 "that user",
				 (int)pid, owner);
			return -EPERM;
		}
		free(ents);
	}
	if (kill(pid, 0) == 0 || errno == EPERM) {
		pc_warnx("pid %d: not profiled (no segment in /dev/shm; is it linked with -lprof "
			 "and has it entered a zone?)",
			 (int)pid);
		return -ENOENT;
	}
	pc_warnx("pid %d: no such process", (int)pid);
	return -ESRCH;
}

static void read_error(const char *what, int err)
{
	if (err == -EPROTO)
		pc_warnx("%s: unknown segment version (this profctl reads version %d)", what,
			 PROF_SEG_VERSION);
	else if (err == -EINVAL)
		pc_warnx("%s: corrupt segment, refused", what);
	else
		pc_warnx("%s: failed to read: %s", what, strerror(-err));
}

/* pid's segment, opened read-only (ent says which); fd or -errno, said */
static int direct_open(struct pc_src *src, pid_t pid, struct prof_seg_ent *ent)
{
	int err = direct_find(src, pid, ent), fd;

	if (err)
		return err;
	fd = prof_seg_open(ent);
	if (fd < 0)
		pc_warnx("%s: failed to open: %s", ent->path, strerror(-fd));
	return fd;
}

static int direct_raw(struct pc_src *src, pid_t pid, unsigned int flags,
		      struct prof_snapshot **snap)
{
	struct prof_seg_ent ent;
	int fd, err;

	fd = direct_open(src, pid, &ent);
	if (fd < 0)
		return fd;
	err = prof_snapshot__read_fd_opts(fd, flags, snap);
	close(fd);
	if (!err && name_direct(*snap, &ent)) {
		prof_snapshot__destroy(*snap);
		*snap = NULL;
		err = -EINVAL;
	}
	if (err)
		read_error(ent.path, err);
	return err;
}

int pc_read_image(const char *path, unsigned int flags, struct prof_snapshot **snap)
{
	struct stat st;
	int fd, err;

	/* a FIFO (another user's, in /tmp) is refused below, not waited on */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pc_warnx("%s: failed to open: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		pc_warnx("%s: failed to stat: %s", path, strerror(-err));
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		char what[64];

		pc_file_what(&st, what, sizeof(what));
		close(fd);
		pc_warnx("%s: %s, not a profd profile", path, what);
		return -EINVAL;
	}
	if (st.st_size <= 0) {
		close(fd);
		pc_warnx("%s: not a profd profile (profctl save writes one)", path);
		return -EINVAL;
	}
	/* a saved profile (or a JSON report, said so) rather than an image */
	err = pc_read_file(path, fd, flags, snap);
	if (err != -ENOMSG) {
		close(fd);
		return err;
	}
	/* a lazy snapshot keeps the mapping, not the fd */
	err = prof_snapshot__read_fd_opts(fd, flags, snap);
	close(fd);
	if (err)
		read_error(path, err);
	return err;
}

/* --- baselines ------------------------------------------------------------- */

const char *pc_baseline_dir(void)
{
	const char *dir = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	/* only a private directory of ours */
	if (!dir || !*dir || stat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077))
		dir = "/dev/shm";
	return dir;
}

int pc_baseline_path(pid_t pid, __u64 token, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/profctl.%u.%d.%llu", pc_baseline_dir(),
			 (unsigned int)getuid(), (int)pid, (unsigned long long)token);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pc_baseline_save(const struct prof_snapshot *s)
{
	char path[256];
	void *buf = NULL;
	size_t len = 0;
	int err;

	err = pc_baseline_path((pid_t)s->pid, s->start_token, path, sizeof(path));
	if (!err)
		err = prof_snapshot__write(s, &buf, &len);
	if (!err)
		err = pc_baseline_put(path, buf, len);
	free(buf);
	return err;
}

int pc_baseline_load(pid_t pid, __u64 token, struct prof_snapshot **base)
{
	char path[256], alt[PATH_MAX], why[64];
	const char *from = path;
	struct stat st;
	void *mem;
	int fd, err;

	*base = NULL;
	err = pc_baseline_path(pid, token, path, sizeof(path));
	if (err)
		return err;
	fd = pc_open_own(path, O_RDONLY, getuid(), &st, why, sizeof(why));
	/* not there, or not ours (another user made the name first): a
	 * reset kept under another name, if any */
	if ((fd == -ENOENT || fd == -EPERM) && !pc_baseline_alt(path, alt, sizeof(alt))) {
		from = alt;
		fd = pc_open_own(alt, O_RDONLY, getuid(), &st, why, sizeof(why));
	}
	if (fd == -ENOENT)
		return 0;
	if (fd >= 0 && ((st.st_mode & 022) || st.st_size <= 0)) {
		snprintf(why, sizeof(why), "%s", st.st_size ? "a file others may write" : "empty");
		close(fd);
		fd = -EPERM;
	}
	if (fd == -EPERM) {
		pc_warnx("%s: %s, not a baseline of yours: ignored (counting from the process "
			 "start)",
			 from, why);
		return 0;
	}
	if (fd < 0)
		return fd;
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = -errno;
	close(fd);
	if (mem == MAP_FAILED)
		return err;
	err = prof_snapshot__read(mem, (size_t)st.st_size, base);
	munmap(mem, (size_t)st.st_size);
	return err;
}

/* --- either ---------------------------------------------------------------- */

#ifndef PROFCTL_NO_CLIENT
static int profd_error(pid_t pid, int err)
{
	if (err == -ESRCH)
		pc_warnx("pid %d: no such process (profd)", (int)pid);
	else if (err == -EPERM)
		pc_warnx("pid %d: not yours (profd)", (int)pid);
	else if (err == -EPROTO)
		pc_warnx("pid %d: unknown segment version (profd)", (int)pid);
	else if (err == -EINVAL)
		pc_warnx("pid %d: corrupt segment (profd)", (int)pid);
	else if (err == -EAGAIN)
		pc_warnx("pid %d: profd has no frame of it inside that window yet (it keeps one "
			 "every --interval, see profctl status): ask again, or a longer --last",
			 (int)pid);
	else if (err == -ENODATA)
		pc_warnx("pid %d: profd dropped the history that window needs to stay within its "
			 "--max-memory (see profctl status); a shorter --last may still be served",
			 (int)pid);
	else
		pc_warnx("pid %d: profd failed: %s", (int)pid, strerror(-err));
	return err;
}
#endif

int pc_src_list(struct pc_src *src, struct pc_proc **procs, size_t *n)
{
#ifndef PROFCTL_NO_CLIENT
	if (src->fd >= 0) {
		struct profd_proc *pp = NULL;
		struct pc_proc *p;
		size_t np = 0, i;
		int err = profd_list(src->fd, &pp, &np);

		/* refused (a full profd), hung, gone: what the caller may read */
		if (err) {
			pc_warnx("profd did not answer the list (%s): reading your own processes "
				 "directly",
				 strerror(-err));
			close(src->fd);
			src->fd = -1;
			src->why = err;
			return direct_list(src, procs, n);
		}
		p = calloc(np ? np : 1, sizeof(*p));
		if (!p) {
			free(pp);
			return -ENOMEM;
		}
		for (i = 0; i < np; i++) {
			p[i].pid = (pid_t)pp[i].pid;
			p[i].uid = pp[i].uid;
			p[i].start_token = pp[i].start_token;
			snprintf(p[i].comm, sizeof(p[i].comm), "%s", pp[i].comm);
			p[i].threads = pp[i].threads;
			p[i].alive = pp[i].alive;
			p[i].kernel = (int)pp[i].kernel;
			p[i].created_ns = pp[i].created_ns;
			p[i].rates = true;
			p[i].inzone[0] = pp[i].inzone_now;
			p[i].inzone[1] = pp[i].inzone_short;
			p[i].inzone[2] = pp[i].inzone_long;
			p[i].ns_pid = pp[i].ns_pid;
			snprintf(p[i].cgroup, sizeof(p[i].cgroup), "%s", pp[i].cgroup);
		}
		free(pp);
		*procs = p;
		*n = np;
		return 0;
	}
#endif
	return direct_list(src, procs, n);
}

/*
 * A process that died without its exit handler (killed, crashed) left
 * its segment saying its threads are alive: what /proc says wins.
 */
static void mark_if_gone(struct prof_snapshot *s)
{
	__u32 i;

	if (prof_proc_start_token((pid_t)s->pid) == s->start_token)
		return;
	s->flags |= PROF_SEG_EXITED;
	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].state == PROF_SLAB_ALIVE)
			s->threads[i].state = PROF_SLAB_EXITED;
}

static int src_raw(struct pc_src *src, pid_t pid, struct prof_snapshot **snap);
static int src_snapshot(struct pc_src *src, pid_t pid, int mode, unsigned int secs,
			struct prof_snapshot **snap);

int pc_src_raw(struct pc_src *src, pid_t pid, struct prof_snapshot **snap)
{
	int err = src_raw(src, pid, snap);

	if (!err)
		mark_if_gone(*snap);
	pc_src_lost(src, err);
	return err;
}

int pc_src_snapshot(struct pc_src *src, pid_t pid, int mode, unsigned int secs,
		    struct prof_snapshot **snap)
{
	int err = src_snapshot(src, pid, mode, secs, snap);

	if (!err)
		mark_if_gone(*snap);
	pc_src_lost(src, err);
	return err;
}

/* pid since it started, read with flags: through profd when it follows
 * it, else directly */
static int src_read(struct pc_src *src, pid_t pid, unsigned int flags, struct prof_snapshot **snap)
{
#ifndef PROFCTL_NO_CLIENT
	if (src->fd >= 0) {
		int err = profd_snapshot_opts(src->fd, pid, PROFD_SNAP_START, 0, flags, snap, NULL);

		/* one profd does not follow (yet, or any more): read it directly */
		if (err != -ESRCH)
			return err ? profd_error(pid, err) : 0;
	}
#endif
	(void)src;
	return direct_raw(src, pid, flags, snap);
}

static int src_raw(struct pc_src *src, pid_t pid, struct prof_snapshot **snap)
{
	return src_read(src, pid, src->read_flags, snap);
}

/* pid's live segment (or profd's last image of it), mapped and kept in
 * src until another pid is asked for; 0 or -errno, said */
static int src_map(struct pc_src *src, pid_t pid)
{
	struct prof_seg_ent ent;
	struct stat st;
	int fd, err;

	if (src->live_pid != pid) {
		if (src->live_mem)
			munmap(src->live_mem, src->live_len);
		src->live_mem = NULL;
		src->live_pid = 0;
		/* a new mapping can land where the old one was: forget its shares */
		prof_seg_flat_cache__destroy(src->flat_cache);
		src->flat_cache = prof_seg_flat_cache__new();
		if (!src->flat_cache)
			return -ENOMEM;
		/* without profd no thread has scheduler facts: 64 bytes a
		 * node not read */
		if (src->fd < 0)
			prof_seg_flat_cache__no_sched(src->flat_cache);
#ifndef PROFCTL_NO_CLIENT
		/* profd hands over the live segment (or, once the process is
		 * gone, its last image): mapped once, streamed every refresh */
		fd = -1;
		if (src->fd >= 0) {
			struct profd_answer a;

			snprintf(ent.path, sizeof(ent.path), "pid %d (profd)", (int)pid);
			err = profd_segment_fd(src->fd, pid, PROFD_SNAP_START, 0, &fd, &a);
			/* one profd does not follow: its segment, directly */
			if (err && err != -ESRCH)
				return profd_error(pid, err);
			src->live_ns_pid = err ? 0 : a.ns_pid;
			src->live_uid = err ? 0 : a.uid;
			snprintf(src->live_cgroup, sizeof(src->live_cgroup), "%s",
				 err ? "" : a.cgroup);
		}
		if (fd < 0)
#endif
		{
			fd = direct_open(src, pid, &ent);
			if (fd < 0)
				return fd;
			src->live_ns_pid = ent.ns_pid;
			src->live_uid = ent.uid;
			src->live_cgroup[0] = 0;
			if (ent.ns_pid)
				prof_proc_cgroup(pid, src->live_cgroup, sizeof(src->live_cgroup));
		}
		if (fstat(fd, &st) || st.st_size < (off_t)sizeof(struct prof_seg_hdr)) {
			close(fd);
			read_error(ent.path, -EINVAL);
			return -EINVAL;
		}
		/* the mapping outlives the fd, and the process's unlink at exit */
		src->live_mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		err = -errno;
		close(fd);
		if (src->live_mem == MAP_FAILED) {
			src->live_mem = NULL;
			pc_warnx("%s: failed to map: %s", ent.path, strerror(-err));
			return err;
		}
		src->live_len = (size_t)st.st_size;
		src->live_pid = pid;
	}
	return 0;
}

int pc_src_map(struct pc_src *src, pid_t pid, const void **mem, size_t *len)
{
	int err = src_map(src, pid);

	*mem = err ? NULL : src->live_mem;
	*len = err ? 0 : src->live_len;
	return err;
}

int pc_src_flat(struct pc_src *src, pid_t pid, __u32 tid, struct prof_snapshot **snap,
		struct prof_flat_row **rows, size_t *n)
{
	int err;

	*rows = NULL;
	*n = 0;
	err = src_map(src, pid);
	if (err)
		return err;
	err = prof_seg_flat_cached(src->live_mem, src->live_len, tid, PROF_SORT_SELF,
				   src->flat_cache, snap, rows, n);
	/* a container's header names it as its namespace does */
	if (!err && src->live_ns_pid && (*snap)->pid == src->live_ns_pid) {
		(*snap)->ns_pid = src->live_ns_pid;
		(*snap)->pid = (__u32)pid;
		(*snap)->uid = src->live_uid;
		snprintf((*snap)->cgroup, sizeof((*snap)->cgroup), "%s", src->live_cgroup);
	}
	if (!err && (*snap)->pid != (__u32)pid) {
		/* not the process asked for (its owner rewrote the header) */
		prof_snapshot__destroy(*snap);
		*snap = NULL;
		free(*rows);
		*rows = NULL;
		*n = 0;
		err = -EINVAL;
	}
	if (err)
		read_error("segment", err);
	return err;
}

/*
 * Since the last reset: the process now, less the baseline file its reset
 * left, if any.  The file is the reset's one owner, however the reset was
 * made and however the process is read now (through profd or not, before
 * or after profd restarts): both are the same full snapshot.
 */
static int src_since_reset(struct pc_src *src, pid_t pid, struct prof_snapshot **snap)
{
	struct prof_snapshot *s = NULL, *base = NULL;
	int err;

	err = src_read(src, pid, src->read_flags, &s);
	if (err)
		return err;
	err = pc_baseline_load(pid, s->start_token, &base);
	if (err) {
		pc_warnx("pid %d: failed to read the reset baseline: %s", (int)pid, strerror(-err));
		base = NULL;
	}
	/* a diff needs every node and histogram: read again in full */
	if (base && src->read_flags) {
		prof_snapshot__destroy(s);
		s = NULL;
		err = src_read(src, pid, 0, &s);
		if (err) {
			prof_snapshot__destroy(base);
			return err;
		}
	}
	if (base && prof_snapshot__diff(s, base))
		pc_warnx("pid %d: baseline is of another process, ignored", (int)pid);
	prof_snapshot__destroy(base);
	*snap = s;
	return 0;
}

static int src_snapshot(struct pc_src *src, pid_t pid, int mode, unsigned int secs,
			struct prof_snapshot **snap)
{
	*snap = NULL;
	if (mode == PC_SNAP_RESET)
		return src_since_reset(src, pid, snap);
	if (mode != PROFD_SNAP_LAST)
		return src_read(src, pid, src->read_flags, snap);
#ifndef PROFCTL_NO_CLIENT
	if (src->fd >= 0) {
		struct profd_answer a;
		int err = profd_snapshot_opts(src->fd, pid, mode, secs, src->read_flags, snap, &a);

		/* the time "the last N seconds" really covers: the nearest frame's */
		if (!err) {
			(*snap)->span_ns = a.span_ns;
			(*snap)->span_asked_ns = (__u64)secs * 1000000000ull;
		}
		/* one profd does not follow (yet, or any more): measure directly */
		if (err != -ESRCH)
			return err ? profd_error(pid, err) : 0;
	}
#endif
	pc_warnx("pid %d: %s: no history; measuring the next %us instead", (int)pid,
		 src->fd >= 0 ? "profd does not follow it" : "profd not running", secs);
	return pc_src_measure(&pid, 1, secs, snap);
}

int pc_src_measure(const pid_t *pids, size_t n, unsigned int secs, struct prof_snapshot **out)
{
	struct prof_snapshot **base = calloc(n ? n : 1, sizeof(*base));
	__u64 *t0 = calloc(n ? n : 1, sizeof(*t0));
	size_t i, got = 0;
	int err = 0, e;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	if (!base || !t0) {
		free(base);
		free(t0);
		return -ENOMEM;
	}
	/* every process at once, in full: a diff needs every node and histogram */
	for (i = 0; i < n; i++) {
		t0[i] = pc_now_ns();
		e = direct_raw(NULL, pids[i], 0, &base[i]);
		got += !e;
		if (e && !err)
			err = e;
	}
	if (got)
		sleep(secs);
	for (i = 0; i < n; i++) {
		if (!base[i])
			continue;
		e = direct_raw(NULL, pids[i], 0, &out[i]);
		if (!e) {
			/* the time the difference covers, as measured */
			out[i]->span_ns = pc_now_ns() - t0[i];
			if (prof_snapshot__diff(out[i], base[i])) {
				pc_warnx("pid %d: another process after %us", (int)pids[i], secs);
				prof_snapshot__destroy(out[i]);
				out[i] = NULL;
				e = -ESRCH;
			}
		}
		if (e && !err)
			err = e;
		prof_snapshot__destroy(base[i]);
	}
	free(base);
	free(t0);
	return n == 1 ? err : 0;
}

int pc_src_reset(struct pc_src *src, pid_t pid)
{
	struct prof_snapshot *s = NULL;
	int err;

	/* the whole process now, as a report reads it (in full: a diff needs
	 * every node and histogram), kept in our own file: nothing asks
	 * profd to keep anything, so another user's reports stay as they
	 * were, and the reset holds without profd and across its restarts */
	err = src_read(src, pid, 0, &s);
	if (err)
		return err;
	err = pc_baseline_save(s);
	if (err)
		pc_warnx("pid %d: failed to store the baseline: %s", (int)pid, strerror(-err));
	prof_snapshot__destroy(s);
	return err;
}

int pc_src_targets(struct pc_src *src, pid_t pid, struct pc_proc **procs, size_t *n)
{
	struct pc_proc *all = NULL, *out;
	size_t na = 0, i, k = 0;
	int err;

	*procs = NULL;
	*n = 0;
	if (pid) {
		out = calloc(1, sizeof(*out));
		if (!out)
			return -ENOMEM;
		out->pid = pid;
		*procs = out;
		*n = 1;
		return 0;
	}
	err = pc_src_list(src, &all, &na);
	if (err) {
		pc_warnx("failed to list profiled processes: %s", strerror(-err));
		return err;
	}
	out = calloc(na ? na : 1, sizeof(*out));
	if (!out) {
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < na; i++) {
		size_t j;

		if (!all[i].alive)
			continue;
		/* one entry per pid */
		for (j = 0; j < k; j++)
			if (out[j].pid == all[i].pid)
				break;
		if (j == k)
			out[k++] = all[i];
	}
	free(all);
	if (!k) {
		free(out);
		/* whether profd was asked is said once, when it was not reachable */
		pc_warnx("no profiled process of yours is running");
		return -ESRCH;
	}
	*procs = out;
	*n = k;
	return 0;
}

/* --- without --pid: the process a verb of one process shows ----------------- */

/*
 * Without --pid: the newest live process, or if none runs the newest that
 * exited; -1 if there is none.  Apart, for a test.
 */
int pc_top_pick(const struct pc_proc *p, size_t n)
{
	size_t i;
	int best = -1;

	for (i = 0; i < n; i++) {
		if (best >= 0 && p[best].alive && !p[i].alive)
			continue;
		if (best < 0 || (p[i].alive && !p[best].alive) ||
		    p[i].created_ns > p[best].created_ns)
			best = (int)i;
	}
	return best;
}

int pc_pick_pid(struct pc_src *src, pid_t *pid)
{
	struct pc_proc *p = NULL;
	size_t n = 0, i, alive = 0;
	int err = pc_src_targets(src, 0, &p, &n), best;

	if (err)
		return err;
	best = pc_top_pick(p, n);
	if (best < 0) {
		free(p);
		return -ENOENT;
	}
	*pid = p[best].pid;
	for (i = 0; i < n; i++)
		alive += p[i].alive;
	if (!p[best].alive)
		pc_warnx("no profiled process runs; showing pid %d, which exited (use --pid)",
			 (int)*pid);
	else if (alive > 1)
		pc_warnx("%zu profiled processes run; showing the newest, pid %d (use --pid)",
			 alive, (int)*pid);
	free(p);
	return 0;
}

void pc_proc_json(struct prof_jw *w, const struct pc_proc *p)
{
	prof_jw_u64_field(w, "pid", (__u64)p->pid);
	prof_jw_u64_field(w, "uid", p->uid);
	prof_jw_string_field(w, "comm", p->comm);
	prof_jw_u64_field(w, "threads", p->threads);
	prof_jw_name(w, "kernel");
	prof_jw_int(w, p->kernel);
	prof_jw_u64_field(w, "created_ns", p->created_ns);
}
