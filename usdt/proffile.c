// SPDX-License-Identifier: MIT
/*
 * proffile.c - saved profiles: a header and a segment image without its
 * runs of zero words, written (profctl save, PROF_SAVE at exit).  The
 * format is described in proffile.h; proffile_load.c reads it back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "proffile.h"

static const char file_magic[PROF_FILE_MAGIC_LEN] = PROF_FILE_MAGIC;

/*
 * Records over the image's words: a run of zeros, then the words up to the
 * next run of at least two zero words (a lone zero costs no more as a
 * literal than a new record).  out NULL: only count the bytes.
 */
static size_t encode_body(const __u64 *w, size_t nw, unsigned char *out)
{
	size_t i = 0, len = 0;

	while (i < nw) {
		size_t z = i, l;
		__u32 rec[2];

		while (z < nw && !w[z] && z - i < 0xffffffffu)
			z++;
		l = z;
		while (l < nw && l - z < 0xffffffffu) {
			if (!w[l] && (l + 1 == nw || !w[l + 1]))
				break;
			l++;
		}
		rec[0] = (__u32)(z - i);
		rec[1] = (__u32)(l - z);
		if (out) {
			memcpy(out + len, rec, sizeof(rec));
			memcpy(out + len + sizeof(rec), w + z, (l - z) * 8);
		}
		len += sizeof(rec) + (l - z) * 8;
		i = l;
	}
	return len;
}

int prof_file_encode(const struct prof_snapshot *s, void **buf, size_t *len)
{
	struct prof_file_hdr h;
	struct timespec ts;
	unsigned char *out;
	void *img = NULL;
	size_t ilen = 0, blen;
	int err;

	err = prof_snapshot__write(s, &img, &ilen);
	if (err)
		return err;
	/* image_geom pads every region to 4096: whole words */
	if (ilen % 8) {
		free(img);
		return -EINVAL;
	}
	blen = encode_body(img, ilen / 8, NULL);
	out = malloc(sizeof(h) + blen);
	if (!out) {
		free(img);
		return -ENOMEM;
	}
	encode_body(img, ilen / 8, out + sizeof(h));
	free(img);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, file_magic, sizeof(h.magic));
	h.version = PROF_FILE_VERSION;
	h.hdr_size = sizeof(h);
	h.bom = PROF_FILE_BOM;
	h.seg_version = PROF_SEG_VERSION;
	h.image_size = ilen;
	h.body_size = blen;
	h.body_hash = prof_file_hash(out + sizeof(h), blen);
	clock_gettime(CLOCK_REALTIME, &ts);
	h.saved_ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	h.span_ns = s->span_ns;
	h.pid = s->pid;
	memcpy(h.comm, s->comm, sizeof(h.comm));
	h.comm[sizeof(h.comm) - 1] = '\0';
	h.ns_pid = s->ns_pid;
	memcpy(h.cgroup, s->cgroup, sizeof(h.cgroup));
	h.cgroup[sizeof(h.cgroup) - 1] = '\0';
	memcpy(out, &h, sizeof(h));
	*buf = out;
	*len = sizeof(h) + blen;
	return 0;
}

int prof_file_save(const char *path, const struct prof_snapshot *s)
{
	char tmp[4096];
	size_t len, off = 0;
	void *buf;
	int fd, err, n;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	err = prof_file_encode(s, &buf, &len);
	if (err)
		return err;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	while (off < len) {
		ssize_t w = write(fd, (char *)buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)w;
	}
	if (!err && close(fd))
		err = -errno;
	else if (err)
		close(fd);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
cleanup:
	free(buf);
	return err;
}

const char *prof_file_strerror(int err)
{
	switch (err) {
	case PROF_FILE_E_MAGIC:
		return "not a profd profile (profctl save writes one)";
	case PROF_FILE_E_VERSION:
		return "a profile of a version this profctl does not read (saved by another profd)";
	case PROF_FILE_E_TRUNC:
		return "truncated profile (shorter than its header says)";
	case PROF_FILE_E_HASH:
		return "corrupt profile (its checksum does not match)";
	case PROF_FILE_E_BIG:
		return "profile too big to read";
	case PROF_FILE_E_ORDER:
		return "a profile saved on a machine of another byte order";
	case -EINVAL:
		return "corrupt profile";
	default:
		return strerror(-err);
	}
}
