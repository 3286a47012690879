// SPDX-License-Identifier: MIT
/*
 * profctl_input.c - a profile read back from a file (report --input,
 * diff): a saved profile (usdt/proffile.h, as profctl save and PROF_SAVE
 * write it) into the snapshot every view renders, or a JSON report
 * (report_load.h); a segment image is left to the caller.
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
#include "proffile.h"
#include "report_load.h"

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
