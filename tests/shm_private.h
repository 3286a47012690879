/* SPDX-License-Identifier: MIT */
/*
 * shm_private.h - a /dev/shm of this process's own: a new mount namespace
 * (private mounts) with a fresh tmpfs there, which the children it starts
 * afterwards share.  Segments of other work on the machine (other test
 * runs, as root too) are then out of sight of a profd that does not look
 * into other mount namespaces (--no-ns-scan): it sees only the test's,
 * and none of theirs come or go meanwhile.  N.B. a reader that does look
 * (profd, root's profctl) finds the host's /dev/shm there, as a
 * container's.  Needs root; the caller keeps the namespace.
 */
#ifndef PROF_TEST_SHM_PRIVATE_H
#define PROF_TEST_SHM_PRIVATE_H

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>

/* 0, or -errno (not root: -EPERM) */
static inline int test_shm_private(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777"))
		return -errno;
	return 0;
}

#endif /* PROF_TEST_SHM_PRIVATE_H */
