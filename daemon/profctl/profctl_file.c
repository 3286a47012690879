// SPDX-License-Identifier: MIT
/*
 * profctl_file.c - files profctl opens by a name another user could have
 * made first: reset baselines in /dev/shm (or a runtime directory), -o
 * outputs in /tmp or anywhere else.  Nothing already at such a name is
 * followed (a symlink), waited on (a FIFO), or taken for ours (another
 * owner's file): it is refused with one line saying what it is, or, for an
 * output, replaced by a file of our own renamed onto the name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "profctl.h"

void pc_file_what(const struct stat *st, char *buf, size_t len)
{
	const char *kind = S_ISREG(st->st_mode)	   ? "a file"
			   : S_ISDIR(st->st_mode)  ? "a directory"
			   : S_ISLNK(st->st_mode)  ? "a symlink"
			   : S_ISFIFO(st->st_mode) ? "a FIFO"
			   : S_ISSOCK(st->st_mode) ? "a socket"
						   : "a device";

	snprintf(buf, len, "%s of uid %u", kind, (unsigned int)st->st_uid);
}

int pc_open_own(const char *path, int flags, uid_t uid, struct stat *st, char *why, size_t len)
{
	int fd, fl, err;

	why[0] = 0;
	/* O_NONBLOCK: a FIFO opens at once (or fails), never waits for a writer */
	fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		/* a symlink (ELOOP), a directory (EISDIR), a FIFO nobody reads
		 * (ENXIO): say what is there */
		if (err != -ENOENT && !lstat(path, st) &&
		    (!S_ISREG(st->st_mode) || st->st_uid != uid)) {
			pc_file_what(st, why, len);
			return -EPERM;
		}
		return err;
	}
	if (fstat(fd, st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode) || st->st_uid != uid) {
		pc_file_what(st, why, len);
		close(fd);
		return -EPERM;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int pc_tmp_beside(const char *path, const char *tag, char *tmp, size_t len)
{
	int n = snprintf(tmp, len, "%s.%s.XXXXXX", path, tag), fd;

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	/* O_EXCL with a name nobody can guess: nothing is followed or taken */
	fd = mkostemp(tmp, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* -o outputs: the temporary file each stream is written to until closed */
static struct {
	FILE *f;
	char tmp[PATH_MAX + 32];
} outs[4];

/*
 * A symlink of ours, or of root's (/dev/stdout), is one we follow; not one
 * another user made, in a sticky directory or one of theirs (where the
 * kernel's fs.protected_symlinks would follow it too).
 */
static bool link_trusted(const struct stat *lst)
{
	return lst->st_uid == geteuid() || lst->st_uid == 0;
}

/* what is at path, opened to be written directly: a terminal, /dev/null,
 * a FIFO of ours, or what a trusted symlink leads to; -errno, said */
static int open_direct(const char *path, bool follow)
{
	char what[64];
	struct stat st;
	int fd, fl, err;

	fd = open(path,
		  O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? O_CREAT : O_NOFOLLOW),
		  0666);
	if (fd < 0) {
		err = -errno;
		pc_warnx("%s: failed to open for writing: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) ||
	    !(S_ISCHR(st.st_mode) || (S_ISFIFO(st.st_mode) && st.st_uid == geteuid()) ||
	      (follow && S_ISREG(st.st_mode))) ||
	    (S_ISREG(st.st_mode) && ftruncate(fd, 0))) {
		pc_file_what(&st, what, sizeof(what));
		pc_warnx("%s: %s: not written (remove it, or name another file)", path, what);
		close(fd);
		return -EPERM;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

FILE *pc_out_open(const char *path)
{
	struct stat st;
	bool there, ours;
	size_t k;
	mode_t mask;
	int fd;
	FILE *f;

	for (k = 0; k < sizeof(outs) / sizeof(outs[0]) && outs[k].f; k++)
		;
	if (k == sizeof(outs) / sizeof(outs[0])) {
		pc_warnx("%s: failed to open for writing: %s", path, strerror(EMFILE));
		return NULL;
	}
	outs[k].tmp[0] = 0;
	there = !lstat(path, &st);
	ours = there && S_ISREG(st.st_mode) && st.st_uid == geteuid();
	if (there && !S_ISREG(st.st_mode) && (!S_ISLNK(st.st_mode) || link_trusted(&st))) {
		fd = open_direct(path, S_ISLNK(st.st_mode));
		if (fd < 0)
			return NULL;
	} else {
		/*
		 * A new file beside it, renamed onto the name when complete:
		 * what was there (another user's symlink or hard link in a
		 * sticky directory) is replaced, never written through.
		 */
		fd = pc_tmp_beside(path, "tmp", outs[k].tmp, sizeof(outs[k].tmp));
		/* a directory we may not add to: a file of ours there, in place */
		if (fd == -EACCES && ours) {
			char why[64];

			outs[k].tmp[0] = 0;
			fd = pc_open_own(path, O_WRONLY, geteuid(), &st, why, sizeof(why));
			if (fd >= 0 && ftruncate(fd, 0)) {
				int err = -errno;

				close(fd);
				fd = err;
			}
		}
		if (fd < 0) {
			pc_warnx("%s: failed to open for writing: %s", path, strerror(-fd));
			return NULL;
		}
		mask = umask(0);
		umask(mask);
		/* as fopen would make it, or as the file of ours it replaces was */
		if (outs[k].tmp[0])
			fchmod(fd, ours ? st.st_mode & 07777 : 0666 & ~mask);
	}
	f = fdopen(fd, "w");
	if (!f) {
		pc_warnx("%s: failed to open for writing: %s", path, strerror(errno));
		close(fd);
		if (outs[k].tmp[0])
			unlink(outs[k].tmp);
		return NULL;
	}
	outs[k].f = f;
	return f;
}

int pc_out_close(FILE *f, const char *path)
{
	char tmp[sizeof(outs[0].tmp)] = "";
	size_t k;
	int err = 0;

	for (k = 0; k < sizeof(outs) / sizeof(outs[0]); k++)
		if (outs[k].f == f) {
			snprintf(tmp, sizeof(tmp), "%s", outs[k].tmp);
			outs[k].f = NULL;
		}
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && tmp[0] && rename(tmp, path))
		err = -errno;
	if (err && tmp[0])
		unlink(tmp);
	if (err)
		pc_warnx("%s: failed to write: %s", path, strerror(-err));
	return err;
}

void pc_out_discard(FILE *f)
{
	size_t k;

	for (k = 0; k < sizeof(outs) / sizeof(outs[0]); k++)
		if (outs[k].f == f) {
			if (outs[k].tmp[0])
				unlink(outs[k].tmp);
			outs[k].f = NULL;
		}
	fclose(f);
}

/* --- reset baselines ------------------------------------------------------- */

/*
 * A reset whose name another user holds (a file, a directory, a FIFO made
 * first in the sticky /dev/shm) is kept under "NAME.alt.RANDOM", a name
 * nobody can take before it exists; readers look for those of ours when
 * NAME is not ours.  Listed once a run.
 */
static char **alts;
static size_t nalts;
static bool alts_listed;

static void list_alts(const char *dir)
{
	char prefix[64], **v;
	struct dirent *de;
	DIR *d;

	if (alts_listed)
		return;
	alts_listed = true;
	d = opendir(dir);
	if (!d)
		return;
	snprintf(prefix, sizeof(prefix), "profctl.%u.", (unsigned int)getuid());
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) || !strstr(de->d_name, ".alt."))
			continue;
		v = realloc(alts, (nalts + 1) * sizeof(*alts));
		if (!v)
			break;
		alts = v;
		alts[nalts] = strdup(de->d_name);
		if (alts[nalts])
			nalts++;
	}
	closedir(d);
}

/* path's directory in dir; its name */
static const char *split(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	snprintf(dir, len, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	return slash ? slash + 1 : path;
}

/* name is one of the other names of the reset whose name is base */
static bool is_alt(const char *name, const char *base)
{
	size_t bl = strlen(base);

	return !strncmp(name, base, bl) && !strncmp(name + bl, ".alt.", 5);
}

/* the next of path's other names from alts[*i] on, its path in p; false
 * after the last */
static bool alt_next(const char *path, size_t *i, char *p, size_t len)
{
	char dir[PATH_MAX];
	const char *base = split(path, dir, sizeof(dir));

	list_alts(dir);
	for (; *i < nalts; ++*i)
		if (is_alt(alts[*i], base)) {
			snprintf(p, len, "%s/%s", dir, alts[(*i)++]);
			return true;
		}
	return false;
}

int pc_baseline_alt(const char *path, char *alt, size_t len)
{
	char p[PATH_MAX + 256], why[64];
	struct timespec best = { 0 };
	struct stat st;
	size_t i = 0;
	int fd;

	alt[0] = 0;
	while (alt_next(path, &i, p, sizeof(p))) {
		fd = pc_open_own(p, O_RDONLY, getuid(), &st, why, sizeof(why));
		if (fd < 0)
			continue;
		close(fd);
		/* the newest: a reset removes the older ones, unless it died first */
		if (st.st_mtim.tv_sec > best.tv_sec ||
		    (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec > best.tv_nsec)) {
			best = st.st_mtim;
			snprintf(alt, len, "%s", p);
		}
	}
	return alt[0] ? 0 : -ENOENT;
}

/* path's other names of ours, but keep (NULL: every one) */
static void drop_alts(const char *path, const char *keep)
{
	char p[PATH_MAX + 256];
	struct stat st;
	size_t i = 0;

	/* listed again: keep is new */
	alts_listed = false;
	while (nalts)
		free(alts[--nalts]);
	while (alt_next(path, &i, p, sizeof(p)))
		if ((!keep || strcmp(p, keep)) && !lstat(p, &st) && st.st_uid == getuid())
			unlink(p);
}

int pc_baseline_put(const char *path, const void *buf, size_t len)
{
	char tmp[PATH_MAX + 32], alt[PATH_MAX + 64], what[64] = "";
	struct stat st;
	size_t off = 0;
	__u64 r;
	int fd, err = 0, i;

	fd = pc_tmp_beside(path, "tmp", tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	while (off < len) {
		ssize_t w = write(fd, (const char *)buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err = -errno;
			break;
		}
		off += (size_t)w;
	}
	if (close(fd) && !err)
		err = -errno;
	if (err)
		goto cleanup;
	/* atomic replace; the sticky /dev/shm refuses to replace another's file */
	if (!rename(tmp, path)) {
		drop_alts(path, NULL);
		return 0;
	}
	err = -errno;
	if (lstat(path, &st) || (S_ISREG(st.st_mode) && st.st_uid == getuid()))
		goto cleanup;
	/* another user holds the name: a name of ours nobody could take first */
	pc_file_what(&st, what, sizeof(what));
	for (i = 0; i < 8; i++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			break;
		snprintf(alt, sizeof(alt), "%s.alt.%016llx", path, (unsigned long long)r);
		if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, alt, RENAME_NOREPLACE)) {
			pc_warnx(
				"%s: %s, not yours: the reset is kept as %s (your reports find it)",
				path, what, alt);
			drop_alts(path, alt);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
cleanup:
	unlink(tmp);
	return err;
}
