// SPDX-License-Identifier: MIT
/*
 * discover.c - find segments in /dev/shm, and open them carefully.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot.h"

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

int prof_seg_list(uid_t uid, struct prof_seg_ent **ents, size_t *n)
{
	struct prof_seg_ent *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int dfd;

	*ents = NULL;
	*n = 0;
	d = opendir(SHM_DIR);
	if (!d)
		return -errno;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		struct prof_seg_ent e = { 0 };

		if (strlen(de->d_name) + sizeof(SHM_DIR "/") > sizeof(e.path) ||
		    parse_name(de->d_name, &e.pid, &e.start_token))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (uid != (uid_t)-1 && st.st_uid != uid)
			continue;
		e.uid = (__u32)st.st_uid;
		memcpy(e.path, SHM_DIR "/", sizeof(SHM_DIR "/"));
		strcat(e.path, de->d_name);
		e.alive = prof_proc_start_token((pid_t)e.pid) == e.start_token;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[cnt++] = e;
	}
	closedir(d);
	*ents = v;
	*n = cnt;
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
