/* SPDX-License-Identifier: MIT */
/*
 * proffile.h - a saved profile: one process's snapshot in a file that
 * leaves the machine (`profctl save`, PROF_SAVE=PATH at exit), read back
 * by `profctl report --input` and `profctl diff`.
 *
 * The file is a header (hdr_size bytes, which may grow), then the snapshot's segment image
 * (prof_snapshot__write: the layout of slab.h, PROF_SEG_VERSION, only the
 * nodes in use) with its runs of zero words squeezed out:
 *
 *	struct prof_file_hdr	"profd profile\n", versions, sizes, a hash
 *	records			{ __u32 zeros, __u32 words } then words * 8
 *				bytes: zeros zero words, then those words
 *	samples			version 2 only: profd's sampled stacks, as
 *				text (proto.h), samples_size bytes
 *
 * until image_size bytes are rebuilt.  Native byte order (the header says
 * which).  The loader trusts nothing: the header's sizes, every record and
 * the hash are checked before the image goes to prof_snapshot__read,
 * which checks the image as it checks a live segment.
 *
 *	prof_file_save(path, s)			write s (not lazy) to path
 *	prof_file_encode(s, &buf, &len)		the same into memory
 *	prof_file_strerror(err)			what a -errno of these means
 *
 * and, in proffile_load.c (profctl's, not libprof's):
 *
 *	prof_file_is(buf, len)			starts like a profile file
 *	prof_file_check(buf, len, max, &h)	the header and sizes: 0 or -errno
 *	prof_file_decode(buf, len, img, n, f)	rebuild the image into zeroed img
 */
#ifndef PROF_PROFFILE_H
#define PROF_PROFFILE_H

#include <errno.h>
#include <stddef.h>
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PROF_FILE_MAGIC		"profd profile\n"	/* 14 bytes, then zeros to 16 */
#define PROF_FILE_MAGIC_LEN	16
#define PROF_FILE_VERSION	1
#define PROF_FILE_VERSION_SAMPLES 2	/* version 1, and sampled stacks after the body */
#define PROF_FILE_BOM		0x01020304u
/* an image this big is refused unless the caller asks for more */
#define PROF_FILE_IMAGE_MAX	(4ull << 30)

struct prof_file_hdr {
	char magic[PROF_FILE_MAGIC_LEN];
	__u32 version;		/* PROF_FILE_VERSION */
	__u32 hdr_size;		/* sizeof(struct prof_file_hdr) */
	__u32 bom;		/* PROF_FILE_BOM as the writer stored it */
	__u32 seg_version;	/* the image's PROF_SEG_VERSION */
	__u64 image_size;	/* bytes, a multiple of 8 */
	__u64 body_size;	/* bytes after the header, exactly */
	__u64 body_hash;	/* FNV-1a 64 of those bytes */
	__u64 saved_ns;		/* CLOCK_REALTIME at save, for people */
	__u64 span_ns;		/* the time a --last snapshot covers, 0 if unsaid */
	__u32 pid;		/* the process, for people (the image says too) */
	__u32 __pad;
	char comm[PROF_COMM_MAX];
	/* added in version 1 (hdr_size says whether a file has them; a reader
	 * takes what it knows of a longer header and skips the rest) */
	__u32 ns_pid;		/* in a container: the pid there, else 0 */
	__u32 __pad2;
	char cgroup[PROF_CGROUP_MAX]; /* in a container: its cgroup, else "" */
	/* added with profd's sampled stacks: a version 2 file has them after
	 * its body (profctl save through profd), as profd sends them
	 * (proto.h: profd_samples_rep's text, already symbolized); 0 in a
	 * version 1 file */
	__u64 samples_size;	/* bytes after the body, exactly */
	__u64 samples_hash;	/* FNV-1a 64 of those bytes */
	__u32 samples_hz;	/* profd's --sample-hz then */
	__u32 __pad3;
};
/* the header's first size: files written before ns_pid and cgroup */
#define PROF_FILE_HDR_MIN	offsetof(struct prof_file_hdr, ns_pid)
/* a header longer than this is corrupt, whatever its writer knew */
#define PROF_FILE_HDR_MAX	4096

/* prof_file_decode flags: the fuzzer's, to reach past the hash */
#define PROF_FILE_NO_HASH	0x1

/* errors besides -EINVAL (corrupt), -ENOMEM */
#define PROF_FILE_E_MAGIC	(-ENOMSG)	/* not a profile file */
#define PROF_FILE_E_VERSION	(-EPROTO)	/* another file or segment version */
#define PROF_FILE_E_TRUNC	(-ENODATA)	/* shorter than its header says */
#define PROF_FILE_E_HASH	(-EBADMSG)	/* the body changed after it was written */
#define PROF_FILE_E_BIG		(-EFBIG)	/* image above the caller's max */
#define PROF_FILE_E_ORDER	(-EXDEV)	/* written on a machine of other byte order */

/* the body's hash, FNV-1a 64: the writer (proffile.c) stores it, the
 * loader (proffile_load.c) checks it */
static inline __u64 prof_file_hash(const unsigned char *p, size_t n)
{
	__u64 h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* true if buf (len bytes) starts like a profile file */
int prof_file_is(const void *buf, size_t len);
/* s as a file in memory; *buf malloc'd.  0 or -errno */
int prof_file_encode(const struct prof_snapshot *s, void **buf, size_t *len);
/* write s to path (created 0666 & ~umask, replaced whole: written beside
 * and renamed).  0 or -errno */
int prof_file_save(const char *path, const struct prof_snapshot *s);
/* check the header against len; *hdr gets a copy.  0 or -errno */
int prof_file_check(const void *buf, size_t len, __u64 image_max, struct prof_file_hdr *hdr);
/* rebuild the image (img: hdr.image_size zeroed bytes); 0 or -errno */
int prof_file_decode(const void *buf, size_t len, void *img, size_t img_len, unsigned int flags);
const char *prof_file_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* PROF_PROFFILE_H */
