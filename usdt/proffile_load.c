// SPDX-License-Identifier: MIT
/*
 * proffile_load.c - a saved profile read back (profctl report --input,
 * profctl diff): the header checked, then the image rebuilt from its
 * records.  The writer is proffile.c; the format is in proffile.h.  Not
 * in libprof: an application writes profiles, never reads them.
 */
#include <errno.h>
#include <string.h>
#include "proffile.h"

static const char file_magic[PROF_FILE_MAGIC_LEN] = PROF_FILE_MAGIC;

int prof_file_is(const void *buf, size_t len)
{
	return len >= PROF_FILE_MAGIC_LEN && !memcmp(buf, file_magic, PROF_FILE_MAGIC_LEN);
}

int prof_file_check(const void *buf, size_t len, __u64 image_max, struct prof_file_hdr *hdr)
{
	struct prof_file_hdr h;

	if (!prof_file_is(buf, len))
		return PROF_FILE_E_MAGIC;
	/* the version first: a newer header may be longer */
	if (len < offsetof(struct prof_file_hdr, bom))
		return PROF_FILE_E_TRUNC;
	memcpy(&h, buf, offsetof(struct prof_file_hdr, bom));
	if (h.version != PROF_FILE_VERSION && h.version != PROF_FILE_VERSION_SAMPLES)
		return PROF_FILE_E_VERSION;
	if (len < PROF_FILE_HDR_MIN)
		return PROF_FILE_E_TRUNC;
	memset(&h, 0, sizeof(h));
	memcpy(&h, buf, PROF_FILE_HDR_MIN);
	if (h.hdr_size < PROF_FILE_HDR_MIN || h.hdr_size > PROF_FILE_HDR_MAX || h.hdr_size % 8)
		return -EINVAL;
	if (len < h.hdr_size)
		return PROF_FILE_E_TRUNC;
	/* what this reader knows of the header; a longer one's rest is skipped */
	memcpy(&h, buf, h.hdr_size < sizeof(h) ? h.hdr_size : sizeof(h));
	h.comm[sizeof(h.comm) - 1] = '\0';
	h.cgroup[sizeof(h.cgroup) - 1] = '\0';
	if (h.bom != PROF_FILE_BOM)
		return PROF_FILE_E_ORDER;
	if (h.seg_version != PROF_SEG_VERSION)
		return PROF_FILE_E_VERSION;
	if (h.image_size < PROF_SEG_HDR_SIZE || h.image_size % 8)
		return -EINVAL;
	if (h.image_size > image_max)
		return PROF_FILE_E_BIG;
	/* a version 2 file's header holds where its samples are */
	if (h.version == PROF_FILE_VERSION_SAMPLES &&
	    (h.hdr_size < offsetof(struct prof_file_hdr, __pad3) || !h.samples_size))
		return -EINVAL;
	if (h.version == PROF_FILE_VERSION)
		h.samples_size = 0;
	if (h.body_size > len - h.hdr_size || h.samples_size > len - h.hdr_size - h.body_size)
		return PROF_FILE_E_TRUNC;
	if (h.body_size + h.samples_size < len - h.hdr_size)
		return -EINVAL;
	if (hdr)
		*hdr = h;
	return 0;
}

int prof_file_decode(const void *buf, size_t len, void *img, size_t img_len, unsigned int flags)
{
	const unsigned char *p = buf, *end;
	struct prof_file_hdr h;
	__u64 *w = img;
	size_t nw, i = 0;
	int err;

	err = prof_file_check(buf, len, img_len, &h);
	if (err)
		return err;
	if (h.image_size != img_len)
		return -EINVAL;
	p += h.hdr_size;
	end = p + h.body_size;
	if (!(flags & PROF_FILE_NO_HASH) && prof_file_hash(p, h.body_size) != h.body_hash)
		return PROF_FILE_E_HASH;
	nw = img_len / 8;
	while (p < end) {
		__u32 rec[2];

		if ((size_t)(end - p) < sizeof(rec))
			return -EINVAL;
		memcpy(rec, p, sizeof(rec));
		p += sizeof(rec);
		/* a record that stops nothing, or goes past the image or body */
		if ((!rec[0] && !rec[1]) || rec[0] > nw - i || rec[1] > nw - i - rec[0] ||
		    (size_t)(end - p) / 8 < rec[1])
			return -EINVAL;
		i += rec[0];
		memcpy(w + i, p, (size_t)rec[1] * 8);
		i += rec[1];
		p += (size_t)rec[1] * 8;
	}
	return i == nw ? 0 : -EINVAL;
}
