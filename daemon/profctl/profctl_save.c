// SPDX-License-Identifier: MIT
/*
 * profctl_save.c - profiles that leave the machine as files: `profctl
 * save` writes one (usdt/proffile.h), and --input reads one back through
 * pc_read_file, into the same snapshot every view renders; --input reads
 * a JSON report too (report_load.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "profctl.h"
#include "profctl_samples.h"
#ifndef PROFCTL_NO_CLIENT
#include "client.h"
#endif
#include "proffile.h"
#include "report_load.h"

static const char usage_save[] =
	"usage: profctl save [--pid P] [--since-reset | --since-start | --last 10s]\n"
	"                    -o FILE [--no-daemon]\n"
	"\n"
	"  -p, --pid P          the process (default: your only profiled process)\n"
	"      --since-reset    count from your last `profctl reset` (the default)\n"
	"      --since-start    count from the process start, ignoring resets\n"
	"      --last DURATION  the last DURATION (10s, 2m) of profd's history; without\n"
	"                       profd, the next DURATION, measured\n"
	"  -o, --output FILE    the file to write (replaced whole)\n"
	"      --no-daemon      do not ask profd (also PROFCTL_NO_DAEMON=1)\n"
	"\n"
	"The process's profile as one compact, versioned file: every thread, zone and\n"
	"histogram, with profd's kernel columns when profd answers.  Read it with\n"
	"`profctl report --input FILE` (every view and format) or `profctl diff`.\n"
	"PROF_SAVE=PATH in a program's environment writes the same at its exit.\n";

/* what a file holds before it is refused: its image fits in memory */
#define PC_FILE_MAX (PROF_FILE_IMAGE_MAX + (PROF_FILE_IMAGE_MAX >> 2))

static int read_all(int fd, void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t r = pread(fd, (char *)buf + off, len - off, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return PROF_FILE_E_TRUNC;
		off += (size_t)r;
	}
	return 0;
}

/* the image rebuilt in a memfd, which the reader maps and keeps (lazy) */
static int file_image_fd(const void *buf, size_t len, int *out)
{
	struct prof_file_hdr h;
	void *img;
	int fd, err;

	err = prof_file_check(buf, len, PROF_FILE_IMAGE_MAX, &h);
	if (err)
		return err;
	fd = memfd_create("profctl-input", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* a sparse file: the zero runs cost nothing */
	if (ftruncate(fd, (off_t)h.image_size)) {
		err = -errno;
		close(fd);
		return err;
	}
	img = mmap(NULL, h.image_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (img == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	err = prof_file_decode(buf, len, img, h.image_size, 0);
	munmap(img, h.image_size);
	if (err) {
		close(fd);
		return err;
	}
	*out = fd;
	return 0;
}

/* a JSON report (what report --format json writes), loaded whole */
static int read_json(const char *path, int fd, size_t len, struct prof_snapshot **snap)
{
	char why[256];
	void *buf;
	int err;

	if ((__u64)len > PC_FILE_MAX) {
		pc_warnx("%s: %s", path, prof_file_strerror(PROF_FILE_E_BIG));
		return PROF_FILE_E_BIG;
	}
	buf = malloc(len ? len : 1);
	if (!buf) {
		pc_warnx("%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	err = read_all(fd, buf, len);
	if (err)
		snprintf(why, sizeof(why), "%s", prof_file_strerror(err));
	else
		err = prof_json_load(buf, len, snap, why, sizeof(why));
	free(buf);
	if (err)
		pc_warnx("%s: %s", path, why);
	return err;
}

int pc_read_file(const char *path, int fd, unsigned int flags, struct prof_snapshot **snap)
{
	struct prof_file_hdr h;
	char head[PROF_FILE_MAGIC_LEN] = { 0 };
	struct stat st;
	__u64 seg_magic = PROF_SEG_MAGIC;
	size_t len;
	void *buf = NULL;
	int img = -1, err;

	if (fstat(fd, &st))
		return -errno;
	len = (size_t)st.st_size;
	err = read_all(fd, head, len < sizeof(head) ? len : sizeof(head));
	if (err)
		goto said;
	/* a segment image (a copy of /dev/shm/prof.*): the caller reads it */
	if (len >= sizeof(seg_magic) && !memcmp(head, &seg_magic, sizeof(seg_magic)))
		return -ENOMSG;
	if (prof_json_is(head, len < sizeof(head) ? len : sizeof(head)))
		return read_json(path, fd, len, snap);
	if (!prof_file_is(head, len)) {
		pc_warnx("%s: %s", path, prof_file_strerror(PROF_FILE_E_MAGIC));
		return -EINVAL;
	}
	if ((__u64)st.st_size > PC_FILE_MAX) {
		err = PROF_FILE_E_BIG;
		goto said;
	}
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto said;
	}
	err = read_all(fd, buf, len);
	if (!err)
		err = file_image_fd(buf, len, &img);
	if (!err) {
		prof_file_check(buf, len, PROF_FILE_IMAGE_MAX, &h);
		/* the sampled stacks saved with it, symbolized then */
		err = pc_file_take_samples(buf, len, &h);
		if (!err)
			err = prof_snapshot__read_fd_opts(img, flags, snap);
		close(img);
		/* the image checked out, the segment in it did not */
		if (err == -EPROTO)
			err = PROF_FILE_E_VERSION;
		if (!err) {
			(*snap)->span_ns = h.span_ns;
			(*snap)->ns_pid = h.ns_pid;
			memcpy((*snap)->cgroup, h.cgroup, sizeof((*snap)->cgroup));
		}
	}
said:
	free(buf);
	if (err)
		pc_warnx("%s: %s", path, prof_file_strerror(err));
	return err;
}

int pc_cmd_save(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src = { .fd = -1 };
	struct pc_proc *procs = NULL;
	struct prof_snapshot *s = NULL;
	size_t np = 0, i, alive = 0, pick = 0, len = 0;
	void *buf = NULL;
	FILE *f;
	int err, ret = 1;

	err = pc_parse_opts(argc, argv, usage_save,
			    "pid since-reset since-start last output no-daemon", &o);
	if (err)
		return err < 0 ? 0 : err;
	if (o.args < argc) {
		pc_warnx("save: unexpected argument '%s'; see --help", argv[o.args]);
		return 2;
	}
	if (!o.out || !strcmp(o.out, "-")) {
		pc_warnx("save: -o FILE says where (a profile is binary: not to stdout)");
		return 2;
	}
	{
		char fallback[96];

		/* without profd's history, --last measures the next seconds
		 * (pc_src_snapshot), as report does */
		snprintf(fallback, sizeof(fallback),
			 "no history: measuring the next %us of the process directly", o.last_s);
		pc_src_open_said(&src, &o, o.mode == PROFD_SNAP_LAST ? fallback : NULL);
	}
	/* every node and histogram: the file is the whole profile */
	src.read_flags = 0;
	if (!o.pid) {
		err = pc_src_list(&src, &procs, &np);
		if (err) {
			pc_warnx("failed to list profiled processes: %s", strerror(-err));
			goto cleanup;
		}
		for (i = 0; i < np; i++)
			if (procs[i].alive)
				alive++, pick = i;
		if (alive != 1) {
			pc_warnx("save: %s: say which with --pid",
				 alive ? "more than one profiled process"
				       : "no live profiled process of yours");
			goto cleanup;
		}
		o.pid = procs[pick].pid;
	}
	err = pc_src_snapshot(&src, o.pid, o.mode, o.last_s, &s);
	if (err)
		goto cleanup;
	/* written as every -o output is (pc_out_open) */
	err = prof_file_encode(s, &buf, &len);
	/* profd's sampled stacks go with it, symbolized: a file read on
	 * another machine needs no binaries */
#ifndef PROFCTL_NO_CLIENT
	if (!err && src.fd >= 0) {
		struct profd_samples_rep rep = { 0 };
		char *text = NULL;
		size_t tlen = 0;

		if (!profd_samples(src.fd, o.pid, &text, &tlen, &rep))
			err = pc_file_add_samples(&buf, &len, text, tlen, rep.hz);
		free(text);
	}
#endif
	if (err) {
		pc_warnx("%s: failed to save: %s", o.out, prof_file_strerror(err));
		goto cleanup;
	}
	f = pc_open_out(&o);
	if (!f)
		goto cleanup;
	fwrite(buf, 1, len, f);
	if (pc_close_out(f, &o))
		goto cleanup;
	ret = 0;
cleanup:
	free(buf);
	prof_snapshot__destroy(s);
	free(procs);
	pc_src_close(&src);
	return ret;
}
