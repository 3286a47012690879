// SPDX-License-Identifier: MIT
/*
 * profctl_clean.c - remove the segments that exited processes left behind.
 *
 * A segment outlives its process when the process is killed (or keeps it,
 * PROF_KEEP): that is what makes a post-mortem report possible, and also
 * what fills /dev/shm, which is memory, until someone removes it.  A
 * segment goes only if its process is gone (the pid in its name does not
 * run with the start token in its name) and no process maps it: the pid in
 * the name is its process's pid in its own pid namespace, and a process in
 * another namespace is seen by its mapping, found in /proc/<pid>/maps.
 * profd loses nothing: it keeps its own copy of an exited process's data.
 * With the segment goes profctl's reset baseline for that process.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "profctl.h"

struct mapped {
	ino_t *ino;
	size_t n, cap;
};

/* the inodes on device dev that a process we may inspect maps */
static void scan_maps(dev_t dev, struct mapped *m)
{
	unsigned int maj = major(dev), min = minor(dev);
	char path[288], *line = NULL;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		FILE *f;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* addr perms offset major:minor inode path */
		while (getline(&line, &cap, f) > 0) {
			unsigned int a, b;
			unsigned long long ino;

			if (sscanf(line, "%*s %*s %*s %x:%x %llu", &a, &b, &ino) != 3 || a != maj ||
			    b != min || !ino)
				continue;
			if (m->n == m->cap) {
				size_t nc = m->cap ? m->cap * 2 : 64;
				ino_t *v = realloc(m->ino, nc * sizeof(*v));

				if (!v)
					break;
				m->ino = v;
				m->cap = nc;
			}
			m->ino[m->n++] = (ino_t)ino;
		}
		fclose(f);
	}
	free(line);
	closedir(d);
}

static bool is_mapped(const struct mapped *m, ino_t ino)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->ino[i] == ino)
			return true;
	return false;
}

/* the command in the segment's header, read (not mapped: it may shrink) */
static void seg_comm(const struct prof_seg_ent *e, char *comm, size_t len)
{
	struct prof_seg_hdr h;
	int fd = prof_seg_open(e);

	snprintf(comm, len, "?");
	if (fd < 0)
		return;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && h.magic == PROF_SEG_MAGIC) {
		h.comm[sizeof(h.comm) - 1] = 0;
		snprintf(comm, len, "%s", h.comm);
	}
	close(fd);
}

int pc_clean(pid_t pid, bool dry_run, FILE *out)
{
	struct prof_seg_ent *ents = NULL;
	struct mapped m = { 0 };
	size_t ne = 0, i, removed = 0, found = 0;
	unsigned long long bytes = 0;
	struct stat st;
	int err, ret = 0;

	/* root cleans after everyone, a user after themselves */
	err = prof_seg_list(getuid() ? getuid() : (uid_t)-1, &ents, &ne);
	if (err) {
		pc_warnx("/dev/shm: %s", strerror(-err));
		return 1;
	}
	if (ne && !stat(ents[0].path, &st))
		scan_maps(st.st_dev, &m);
	for (i = 0; i < ne; i++) {
		const struct prof_seg_ent *e = &ents[i];
		char comm[PROF_COMM_MAX], base[256];

		if (pid && e->pid != (__u32)pid)
			continue;
		found++;
		if (lstat(e->path, &st) || !S_ISREG(st.st_mode) || st.st_uid != e->uid)
			continue;
		/* checked last, just before the unlink */
		if (e->alive || is_mapped(&m, st.st_ino) ||
		    prof_proc_start_token((pid_t)e->pid) == e->start_token) {
			if (pid) {
				pc_warnx("pid %d is running (or its segment is mapped): nothing "
					 "removed",
					 (int)pid);
				ret = 1;
			}
			continue;
		}
		seg_comm(e, comm, sizeof(comm));
		if (!dry_run && unlink(e->path)) {
			if (errno != ENOENT) {
				pc_warnx("%s: failed to remove: %s", e->path, strerror(errno));
				ret = 1;
			}
			continue;
		}
		/* the caller's own baseline of it, if any */
		if (!dry_run &&
		    !pc_baseline_path((pid_t)e->pid, e->start_token, base, sizeof(base)))
			unlink(base);
		removed++;
		bytes += (unsigned long long)st.st_blocks * 512;
		fprintf(out, "%s %s (pid %u, %s, %.1f MiB)\n", dry_run ? "would remove" : "removed",
			e->path, e->pid, comm, (double)st.st_blocks * 512 / (1 << 20));
	}
	if (pid && !found) {
		pc_warnx("pid %d: no segment of yours in /dev/shm", (int)pid);
		ret = 1;
	} else if (!pid || removed) {
		fprintf(out, "%s %zu segment%s of exited processes, %.1f MiB\n",
			dry_run ? "would remove" : "removed", removed, removed == 1 ? "" : "s",
			(double)bytes / (1 << 20));
	}
	free(m.ino);
	free(ents);
	return ret;
}
