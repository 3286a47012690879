// SPDX-License-Identifier: MIT
/*
 * discover.c - find segments in /dev/shm, and open them carefully; and
 * the namespace facts that name a process in a container (NSpid, the
 * user namespace's uid map, the cgroup).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot.h"
#include "fmt.h"

#define SHM_DIR "/dev/shm"

/* prof.<pid>.<token>[.<n>] */
static int parse_name(const char *name, __u32 *pid, __u64 *token)
{
	unsigned long long p, t;
	int n = 0;

	if (strncmp(name, PROF_SHM_PREFIX, strlen(PROF_SHM_PREFIX)))
		return -EINVAL;
	name += strlen(PROF_SHM_PREFIX);
	if (sscanf(name, "%llu.%llu%n", &p, &t, &n) != 2 || p == 0 || p > 0x7fffffff)
		return -EINVAL;
	name += n;
	if (*name == '.') {
		unsigned long long k;
		int m = 0;

		if (sscanf(name + 1, "%llu%n", &k, &m) != 1 || name[1 + m])
			return -EINVAL;
	} else if (*name) {
		return -EINVAL;
	}
	*pid = (__u32)p;
	*token = t;
	return 0;
}

struct ent_vec {
	struct prof_seg_ent *v;
	size_t n, cap;
};

static int ent_push(struct ent_vec *ev, const struct prof_seg_ent *e)
{
	struct prof_seg_ent *nv;

	nv = prof_grow(ev->v, ev->n, &ev->cap, sizeof(*nv), 16);
	if (!nv)
		return -ENOMEM;
	ev->v = nv;
	ev->v[ev->n++] = *e;
	return 0;
}

/*
 * The segments of dir (a /dev/shm) owned by uid, each passed to name(),
 * which fills in its pid here and whether it lives (false: leave it out).
 */
typedef bool (*seg_namer)(struct prof_seg_ent *e, const struct stat *st, void *arg);

/* dir's entry NAME (dfd: dir open, or AT_FDCWD: found by its path), a
 * segment's name on a regular file owned by uid (any if (uid_t)-1): 0 and
 * e filled, but for its liveness */
static int ent_at(int dfd, const char *dir, const char *name, uid_t uid,
		  struct prof_seg_ent *e, struct stat *st)
{
	memset(e, 0, sizeof(*e));
	if (strlen(dir) + 1 + strlen(name) >= sizeof(e->path) ||
	    parse_name(name, &e->pid, &e->start_token))
		return -EINVAL;
	snprintf(e->path, sizeof(e->path), "%s/%s", dir, name);
	if (fstatat(dfd, dfd == AT_FDCWD ? e->path : name, st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISREG(st->st_mode) || (uid != (uid_t)-1 && st->st_uid != uid))
		return -EINVAL;
	e->uid = (__u32)st->st_uid;
	e->ino = (__u64)st->st_ino;
	return 0;
}

static int list_dir(const char *dir, uid_t uid, seg_namer name, void *arg, struct ent_vec *ev)
{
	struct prof_seg_ent e;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int dfd, err = 0;

	d = opendir(dir);
	if (!d)
		return -errno;
	dfd = dirfd(d);
	while (!err && (de = readdir(d)))
		if (!ent_at(dfd, dir, de->d_name, uid, &e, &st) && name(&e, &st, arg))
			err = ent_push(ev, &e);
	closedir(d);
	return err;
}

/* the last pid's start token: a process may have several files (and a
 * user may name thousands after one pid), /proc is read once for them */
struct token_memo {
	__u32 pid;
	__u64 token;
};

static bool name_here(struct prof_seg_ent *e, const struct stat *st, void *arg)
{
	struct token_memo *m = arg;

	(void)st;
	if (m->pid != e->pid) {
		m->pid = e->pid;
		m->token = prof_proc_start_token((pid_t)e->pid);
	}
	e->alive = m->token && m->token == e->start_token;
	return true;
}

int prof_seg_list(uid_t uid, struct prof_seg_ent **ents, size_t *n)
{
	struct ent_vec ev = { 0 };
	struct token_memo memo = { 0 };
	int err;

	*ents = NULL;
	*n = 0;
	err = list_dir(SHM_DIR, uid, name_here, &memo, &ev);
	if (err) {
		free(ev.v);
		return err;
	}
	*ents = ev.v;
	*n = ev.n;
	return 0;
}

int prof_seg_ent_here(const char *name, struct prof_seg_ent *e)
{
	struct token_memo memo = { 0 };
	struct stat st;
	int err;

	/* by its path: a name none of ours costs no system call */
	err = ent_at(AT_FDCWD, SHM_DIR, name, (uid_t)-1, e, &st);
	if (!err)
		name_here(e, &st, &memo);
	return err;
}

__u64 prof_ns_ino(pid_t pid, const char *ns)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	return stat(path, &st) ? 0 : (__u64)st.st_ino;
}

/* the last number of the "NSpid:" line of a status file; how many there are */
static int status_nspid(const char *path, __u32 *inner)
{
	char buf[4096], *p, *end;
	unsigned long v = 0;
	ssize_t n;
	int fd, levels = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	p = strstr(buf, "\nNSpid:");
	if (!p)
		return -ENOENT;
	p += strlen("\nNSpid:");
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		v = strtoul(p, &end, 10);
		p = end;
		levels++;
	}
	if (!v || v > 0x7fffffff)
		return -EINVAL;
	*inner = (__u32)v;
	return levels;
}

int prof_proc_nspid(pid_t pid, __u32 *inner)
{
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = status_nspid(path, inner);
	return err < 0 ? err : 0;
}

int prof_proc_nslevels(pid_t pid)
{
	char path[64];
	__u32 inner;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return status_nspid(path, &inner);
}

int prof_task_nspid(pid_t pid, pid_t tid, __u32 *inner)
{
	char path[80];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	err = status_nspid(path, inner);
	return err < 0 ? err : 0;
}

int prof_task_from_nspid(pid_t pid, __u32 inner, pid_t *tid)
{
	char path[64];
	struct dirent *de;
	__u32 v;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	while ((de = readdir(d))) {
		long t = strtol(de->d_name, NULL, 10);

		if (t <= 0 || prof_task_nspid(pid, (pid_t)t, &v) || v != inner)
			continue;
		closedir(d);
		*tid = (pid_t)t;
		return 0;
	}
	closedir(d);
	return -ESRCH;
}

int prof_proc_ns_uid(pid_t pid, uid_t uid, uid_t *inner)
{
	unsigned long long in, out, cnt;
	char path[64];
	FILE *f;
	int err = -ERANGE;

	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* "inside outside count", outside in the reader's user namespace */
	while (fscanf(f, "%llu %llu %llu", &in, &out, &cnt) == 3) {
		if (uid >= out && uid - out < cnt) {
			*inner = (uid_t)(in + (uid - out));
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

void prof_proc_cgroup(pid_t pid, char *buf, size_t len)
{
	char path[64], line[1024], *cg = NULL, *p, *best = NULL;
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	/* cgroup v2: "0::/path"; a v1 line names controllers before its path */
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "0::", 3)) {
			cg = line + 3;
			break;
		}
	}
	fclose(f);
	if (!cg)
		return;
	/* the innermost unit: runtimes nest their own groups inside it */
	for (p = strtok(cg[0] == '/' ? cg + 1 : cg, "/"); p; p = strtok(NULL, "/")) {
		size_t l = strlen(p);

		if ((l > 6 && !strcmp(p + l - 6, ".scope")) ||
		    (l > 8 && !strcmp(p + l - 8, ".service")))
			best = p;
	}
	if (best)
		snprintf(buf, len, "%s", best);
	else
		snprintf(buf, len, "/%s", cg[0] == '/' ? cg + 1 : cg);
}

/*
 * Another mount namespace's /dev/shm: a name there is translated to the
 * process of that namespace (procs[], n of them) whose innermost pid and
 * start token it carries.
 */
struct ns_procs {
	const pid_t *procs;
	__u32 *inner; /* their innermost pids, read at the first name */
	size_t n;
	bool have_inner;
	dev_t shm_dev; /* our /dev/shm's: a namespace that shares it */
	__u64 pidns;   /* ours */
};

static bool name_in_ns(struct prof_seg_ent *e, const struct stat *st, void *arg)
{
	struct ns_procs *np = arg;
	size_t i;

	/* our own /dev/shm seen again (a service's private mount namespace) */
	if (st->st_dev == np->shm_dev)
		return false;
	/* one read per process, not one per process and name */
	if (!np->have_inner) {
		for (i = 0; i < np->n; i++)
			if (prof_proc_nspid(np->procs[i], &np->inner[i]))
				np->inner[i] = 0;
		np->have_inner = true;
	}
	for (i = 0; i < np->n; i++) {
		if (np->inner[i] != e->pid || !e->start_token ||
		    prof_proc_start_token(np->procs[i]) != e->start_token)
			continue;
		/* a private /dev/shm in our pid namespace names the pid as we do */
		e->ns_pid = prof_ns_ino(np->procs[i], "pid") != np->pidns ? e->pid : 0;
		e->pid = (__u32)np->procs[i];
		e->alive = true;
		return true;
	}
	return false;
}

struct mnt_proc {
	pid_t pid;
	__u64 mnt;
};

static int cmp_mnt(const void *a, const void *b)
{
	const struct mnt_proc *x = a, *y = b;

	return PROF_CMP(x->mnt, y->mnt) ?: PROF_CMP(x->pid, y->pid);
}

int prof_seg_list_ns(uid_t uid, struct prof_seg_ent **ents, size_t *n)
{
	struct mnt_proc *mp = NULL, *nm;
	struct ent_vec ev = { 0 };
	size_t cnt = 0, cap = 0, i, j, k;
	__u64 self = prof_ns_ino(0, "mnt");
	pid_t *procs = NULL;
	__u32 *inner = NULL;
	struct dirent *de;
	struct stat st;
	char path[64];
	dev_t shm_dev;
	DIR *d;
	int err = 0;

	shm_dev = stat(SHM_DIR, &st) ? 0 : st.st_dev;
	*ents = NULL;
	*n = 0;
	d = opendir("/proc");
	if (!d)
		return -errno;
	/* the processes of other mount namespaces we may look into */
	while ((de = readdir(d))) {
		long p = strtol(de->d_name, NULL, 10);
		__u64 mnt;

		if (p <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld", p);
		if (stat(path, &st) || (uid != (uid_t)-1 && st.st_uid != uid))
			continue;
		mnt = prof_ns_ino((pid_t)p, "mnt");
		if (!mnt || mnt == self)
			continue;
		nm = prof_grow(mp, cnt, &cap, sizeof(*mp), 64);
		if (!nm) {
			err = -ENOMEM;
			goto cleanup;
		}
		mp = nm;
		mp[cnt].pid = (pid_t)p;
		mp[cnt++].mnt = mnt;
	}
	procs = calloc(cnt ? cnt : 1, sizeof(*procs));
	inner = calloc(cnt ? cnt : 1, sizeof(*inner));
	if (!procs || !inner) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (cnt)
		qsort(mp, cnt, sizeof(*mp), cmp_mnt);
	/* one look per namespace, through its first process's root */
	for (i = 0; i < cnt && !err; i = j) {
		struct ns_procs np = { procs, inner, 0, false, shm_dev, prof_ns_ino(0, "pid") };
		char dir[64];

		for (j = i; j < cnt && mp[j].mnt == mp[i].mnt; j++)
			procs[np.n++] = mp[j].pid;
		for (k = i; k < j; k++) {
			snprintf(dir, sizeof(dir), "/proc/%d/root" SHM_DIR, (int)mp[k].pid);
			/* our own /dev/shm (a service's private mount namespace) */
			if (!stat(dir, &st) && st.st_dev == shm_dev)
				break;
			/* gone meanwhile: the next process of the namespace */
			err = list_dir(dir, uid, name_in_ns, &np, &ev);
			if (err != -ENOENT && err != -ESRCH)
				break;
			err = 0;
		}
		/* not ours to look into (EACCES), or no /dev/shm there */
		if (err && err != -ENOMEM)
			err = 0;
	}
cleanup:
	closedir(d);
	free(mp);
	free(procs);
	free(inner);
	if (err) {
		free(ev.v);
		return err;
	}
	*ents = ev.v;
	*n = ev.n;
	return 0;
}

int prof_seg_open(const struct prof_seg_ent *ent)
{
	struct stat st;
	int fd, err;

	fd = open(ent->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* the name was checked, now the object we really opened */
	if (!S_ISREG(st.st_mode) || st.st_uid != ent->uid || (st.st_mode & 0077)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}
