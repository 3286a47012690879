// SPDX-License-Identifier: MIT
/*
 * profctl_clean.c - remove what exited processes left behind.
 *
 * A segment outlives its process when the process is killed (or keeps it,
 * PROF_KEEP): that is what makes a post-mortem report possible, and also
 * what fills /dev/shm, which is memory, until someone removes it.  A
 * segment is in use while its process lives: the runtime holds a shared
 * flock on it for as long as it maps it, which any pid namespace sees (the
 * pid in a segment's name is its process's pid in its own namespace).  So
 * a segment goes only if it takes an exclusive flock at once, its pid and
 * start token do not run here either, and its header is complete (or it
 * is older than a few seconds: a crash during creation).  It is unlinked
 * while the lock is held.  profd loses nothing: it keeps its own copy of
 * an exited process's data.
 *
 * A reset leaves a baseline file (a copy of the process's counters) in
 * $XDG_RUNTIME_DIR or /dev/shm; a baseline of a process that
 * no longer runs goes too: yours, or as root every one in /dev/shm.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "profctl.h"

/* a segment whose header is still being written, or a crash's */
#define CLEAN_YOUNG_S 10

struct tally {
	bool dry_run;
	FILE *out;
	size_t removed;
	unsigned long long bytes;
};

static void said(struct tally *t, const char *path, const struct stat *st, const char *what)
{
	t->removed++;
	t->bytes += (unsigned long long)st->st_blocks * 512;
	fprintf(t->out, "%s %s (%s, %.1f MiB)\n", t->dry_run ? "would remove" : "removed", path,
		what, (double)st->st_blocks * 512 / (1 << 20));
}

/*
 * 1 if the segment at e was removed (or would be), 0 if it is in use,
 * -errno on an error (said)
 */
static int clean_segment(const struct prof_seg_ent *e, struct tally *t)
{
	struct prof_seg_hdr h;
	struct stat st, at;
	char what[PROF_COMM_MAX + 32];
	bool complete;
	int fd, ret = 0;

	fd = open(e->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != e->uid)
		goto out;
	/*
	 * Before the lock: the runtime takes its lock before it writes the
	 * header, so a complete header has it, and a young incomplete one may
	 * be about to (where a probe of ours would make its attempt fail).
	 */
	complete = pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && h.magic == PROF_SEG_MAGIC;
	if (!complete && time(NULL) - st.st_ctime < CLEAN_YOUNG_S)
		goto out;
	/* held (shared) by its process while it maps it, in any namespace, and
	 * by a child it forked until the child's first zone */
	if (flock(fd, LOCK_EX | LOCK_NB))
		goto out;
	if (e->alive || prof_proc_start_token((pid_t)e->pid) == e->start_token)
		goto out;
	/* still the file at that name */
	if (lstat(e->path, &at) || at.st_ino != st.st_ino || at.st_dev != st.st_dev)
		goto out;
	if (!t->dry_run && unlink(e->path)) {
		ret = errno == ENOENT ? 0 : -errno;
		if (ret)
			pc_warnx("%s: failed to remove: %s", e->path, strerror(-ret));
		goto out;
	}
	h.comm[sizeof(h.comm) - 1] = 0;
	snprintf(what, sizeof(what), "pid %u, %s", e->pid, complete ? h.comm : "?");
	said(t, e->path, &st, what);
	ret = 1;
out:
	close(fd); /* and the lock */
	return ret;
}

/* a segment of pid's with that token stays (gone: the ones that do not) */
static bool seg_remains(const struct prof_seg_ent *segs, const bool *gone, size_t n, __u64 pid,
			__u64 token)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!gone[i] && segs[i].pid == pid && segs[i].start_token == token)
			return true;
	return false;
}

/*
 * profctl.<uid>.<pid>.<token> in dir: baselines of processes gone.  One
 * whose segment clean kept stays with it (its process may run in another
 * pid namespace, where /proc here cannot tell).
 */
static void clean_baselines(const char *dir, uid_t uid, pid_t only, const struct prof_seg_ent *segs,
			    const bool *gone, size_t nsegs, struct tally *t)
{
	char path[512], what[64];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned long long u, p, tok;
		int n = 0;

		/* and NAME.alt.RANDOM, kept when another user held the name */
		if (sscanf(de->d_name, "profctl.%llu.%llu.%llu%n", &u, &p, &tok, &n) != 3 ||
		    (de->d_name[n] && strncmp(de->d_name + n, ".alt.", 5)) ||
		    (uid != (uid_t)-1 && u != uid) || (only && p != (__u64)only))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_uid != (uid_t)u ||
		    prof_proc_start_token((pid_t)p) == tok ||
		    seg_remains(segs, gone, nsegs, p, tok))
			continue;
		if (!t->dry_run && unlink(path))
			continue;
		snprintf(what, sizeof(what), "reset baseline of pid %llu", p);
		said(t, path, &st, what);
	}
	closedir(d);
}

int pc_clean(pid_t pid, bool dry_run, FILE *out)
{
	struct tally t = { .dry_run = dry_run, .out = out };
	struct prof_seg_ent *ents = NULL;
	/* root cleans after everyone, a user after themselves */
	uid_t uid = getuid() ? getuid() : (uid_t)-1;
	size_t ne = 0, i, found = 0, running = 0;
	const char *dir = pc_baseline_dir();
	bool *gone;
	int err, ret = 0;

	err = prof_seg_list(uid, &ents, &ne);
	gone = calloc(ne ? ne : 1, sizeof(*gone));
	if (err || !gone) {
		pc_warnx("/dev/shm: %s", strerror(err ? -err : ENOMEM));
		free(gone);
		free(ents);
		return 1;
	}
	for (i = 0; i < ne; i++) {
		if (pid && ents[i].pid != (__u32)pid)
			continue;
		found++;
		err = clean_segment(&ents[i], &t);
		if (err < 0)
			ret = 1;
		running += err == 0;
		gone[i] = err == 1;
	}
	/* a baseline stays with a segment that stays */
	clean_baselines("/dev/shm", uid, pid, ents, gone, ne, &t);
	/* and where ours are kept, if not there */
	if (strcmp(dir, "/dev/shm"))
		clean_baselines(dir, getuid(), pid, ents, gone, ne, &t);
	free(gone);
	free(ents);
	if (pid && !found && !t.removed) {
		pc_warnx("pid %d: no segment of yours in /dev/shm", (int)pid);
		return 1;
	}
	if (pid && running && !t.removed) {
		pc_warnx("pid %d's segment is in use (by it, or by a child it forked that has "
			 "not entered a zone): nothing removed",
			 (int)pid);
		return 1;
	}
	fprintf(out, "%s %zu file%s, %.1f MiB\n", dry_run ? "would remove" : "removed", t.removed,
		t.removed == 1 ? "" : "s", (double)t.bytes / (1 << 20));
	return ret;
}

/* --- the verb ---------------------------------------------------------------- */

static const char usage_clean[] =
	"usage: profctl clean [--pid P] [--dry-run]\n"
	"\n"
	"  -p, --pid P          only P's segment (an error if P still runs)\n"
	"      --dry-run        say what would be removed; remove nothing\n"
	"\n"
	"A segment outlives a process that was killed (or set PROF_KEEP), for post-mortem\n"
	"reports, and holds its memory in /dev/shm until it is removed.  clean removes\n"
	"those of your processes (root: of everyone's) that no longer run, in any pid\n"
	"namespace, and the reset baselines profctl keeps of processes gone, one line\n"
	"each, then a total.  profd keeps its own copy of an exited process's data.\n";

static const struct option clean_options[] = {
	PC_OPT_PID,
	PC_OPT_DRY_RUN,
	PC_OPT_HELP,
	PC_OPT_END,
};

int pc_cmd_clean(int argc, char **argv)
{
	struct pc_opts o;
	int err;

	err = pc_parse_opts(argc, argv, usage_clean, clean_options, &o);
	if (err)
		return err < 0 ? 0 : err;
	return pc_clean(o.pid, o.dry_run, stdout);
}
