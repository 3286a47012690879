// SPDX-License-Identifier: MIT
/*
 * profd_bpf.c - load bpf/profsched.bpf.c and own its slots.
 *
 * profd assigns slots: {slot, gen} in the thread's task storage, with a gen
 * never used before, and the tid's bit in 'tidbits', the program's filter;
 * it removes both when it frees a slot.  The record
 * array is frozen right after load: nothing in user space can write it, not
 * profd and not the processes its fd is handed to (a read-only fd cannot
 * be mmapped at all: the kernel refuses MAP_SHARED without FMODE_WRITE for
 * BPF maps).  The program restarts a record from zero on its new owner's
 * first switch (gen differs), so a reused tid never inherits numbers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "profd.h"
#include "profsched.h"
/* generated code casts const away */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "profsched.skel.h"
#pragma GCC diagnostic pop

struct kslot {
	pid_t pid; /* 0: free */
	pid_t tid;
	__u64 gen;
};

static struct {
	struct profsched_bpf *skel;
	int ro_fd; /* the frozen array, handed to clients */
	__u64 gen; /* last generation handed out */
	__u32 nslots;
	__u32 used;
	__u32 hint; /* where to look for a free slot */
	struct kslot *slots;
	__u64 *tidbits; /* the program's map, mapped read-write */
	char why[128];
} kb = { .ro_fd = -1 };

static int libbpf_log(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	char buf[512];

	if (lvl == LIBBPF_DEBUG && conf.verbose < 2)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = 0;
	log_debug("%s", buf);
	return 0;
}

static bool tid_alive(pid_t pid, pid_t tid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return stat(path, &st) == 0;
}

int kbpf_open(__u32 nslots)
{
	struct profsched_bpf *skel = NULL;
	int err, fd;

	libbpf_set_print(libbpf_log);
	kb.nslots = nslots;
	kb.slots = calloc(nslots, sizeof(*kb.slots));
	if (!kb.slots) {
		snprintf(kb.why, sizeof(kb.why), "out of memory");
		return -ENOMEM;
	}
	skel = profsched_bpf__open();
	if (!skel) {
		err = -errno;
		snprintf(kb.why, sizeof(kb.why), "failed to open the BPF object: %s",
			 strerror(-err));
		goto cleanup;
	}
	skel->rodata->targ_tgid = 0;
	/* task storage has no size: one entry per registered task, at most */
	if ((err = bpf_map__set_max_entries(skel->maps.recs, nslots))) {
		snprintf(kb.why, sizeof(kb.why), "failed to size the maps: %s", strerror(-err));
		goto cleanup;
	}
	err = profsched_bpf__load(skel);
	if (err) {
		snprintf(kb.why, sizeof(kb.why),
			 "failed to load the BPF program: %s (needs BTF, CAP_BPF, CAP_PERFMON)",
			 strerror(-err));
		goto cleanup;
	}
	err = profsched_bpf__attach(skel);
	if (err) {
		snprintf(kb.why, sizeof(kb.why), "failed to attach to sched_switch: %s",
			 strerror(-err));
		goto cleanup;
	}
	kb.tidbits = mmap(NULL, PROF_SCHED_TIDBITS_WORDS * sizeof(__u64), PROT_READ | PROT_WRITE,
			  MAP_SHARED, bpf_map__fd(skel->maps.tidbits), 0);
	if (kb.tidbits == MAP_FAILED) {
		err = -errno;
		kb.tidbits = NULL;
		snprintf(kb.why, sizeof(kb.why), "failed to map the tid filter: %s",
			 strerror(-err));
		goto cleanup;
	}
	fd = bpf_map__fd(skel->maps.recs);
	/* from here only the program writes records; clients may only read */
	if (bpf_map_freeze(fd)) {
		err = -errno;
		snprintf(kb.why, sizeof(kb.why), "failed to freeze the record array: %s",
			 strerror(-err));
		goto cleanup;
	}
	kb.ro_fd = fd;
	kb.skel = skel;
	kb.why[0] = 0;
	log_info("bpf: sched_switch program attached, %u slots", nslots);
	return 0;
cleanup:
	if (kb.tidbits)
		munmap(kb.tidbits, PROF_SCHED_TIDBITS_WORDS * sizeof(__u64));
	kb.tidbits = NULL;
	profsched_bpf__destroy(skel);
	log_warnx("bpf: %s; running without kernel assistance", kb.why);
	return err;
}

void kbpf_close(void)
{
	/* ro_fd is the skeleton's map fd */
	kb.ro_fd = -1;
	if (kb.tidbits)
		munmap(kb.tidbits, PROF_SCHED_TIDBITS_WORDS * sizeof(__u64));
	kb.tidbits = NULL;
	profsched_bpf__destroy(kb.skel);
	kb.skel = NULL;
	free(kb.slots);
	kb.slots = NULL;
}

bool kbpf_on(void)
{
	return kb.skel != NULL;
}

const char *kbpf_why(void)
{
	return kb.skel ? "" : kb.why[0] ? kb.why : "disabled";
}

int kbpf_ro_fd(void)
{
	return kb.ro_fd;
}

__u32 kbpf_nslots(void)
{
	return kb.skel ? kb.nslots : 0;
}

__u32 kbpf_used(void)
{
	return kb.used;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd of one thread */
#endif

/* a pidfd of thread tid of process pid, or -errno */
static int thread_pidfd(pid_t pid, pid_t tid)
{
	int fd;

	if (!tid_alive(pid, tid))
		return -ESRCH;
	fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	/* a tid reused since the check belongs to another process: refuse it */
	if (fd >= 0 && !tid_alive(pid, tid)) {
		close(fd);
		return -ESRCH;
	}
	return fd < 0 ? -errno : fd;
}

/* the program's filter: a tid's bit is set while it holds a slot (one at
 * most: kbpf_assign frees a tid's old slot first) */
static void tidbit(pid_t tid, bool set)
{
	__u64 *w, bit;

	if ((__u32)tid / 64 >= PROF_SCHED_TIDBITS_WORDS)
		return; /* beyond any pid_max: the program falls back to the storage */
	w = &kb.tidbits[(__u32)tid / 64];
	bit = 1ULL << ((__u32)tid % 64);
	if (set)
		__atomic_fetch_or(w, bit, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(w, ~bit, __ATOMIC_RELEASE);
}

static void slot_release(__u32 i)
{
	int pidfd = thread_pidfd(kb.slots[i].pid, kb.slots[i].tid);

	/* the task's entry first: from here the program no longer writes the
	 * slot.  A thread that is gone took its entry with it. */
	if (pidfd >= 0) {
		bpf_map__delete_elem(kb.skel->maps.tids, &pidfd, sizeof(pidfd), 0);
		close(pidfd);
	}
	tidbit(kb.slots[i].tid, false);
	kb.slots[i].pid = 0;
	kb.slots[i].tid = 0;
	kb.used--;
}

int kbpf_assign(pid_t pid, pid_t tid, __u32 *slot, __u64 *gen)
{
	struct prof_sched_slot val;
	__u32 i, n;
	int err, pidfd;

	if (!kb.skel)
		return -EOPNOTSUPP;
	if (pid <= 0 || tid <= 0 || !tid_alive(pid, tid))
		return -ESRCH;
	/* a tid registered before (re-registration, or a reused tid): fresh slot */
	for (i = 0; i < kb.nslots; i++)
		if (kb.slots[i].pid && kb.slots[i].tid == tid)
			slot_release(i);
	for (n = 0; n < kb.nslots; n++) {
		i = (kb.hint + n) % kb.nslots;
		if (!kb.slots[i].pid)
			break;
	}
	if (n == kb.nslots) {
		kbpf_sweep();
		for (i = 0; i < kb.nslots && kb.slots[i].pid; i++)
			;
		if (i == kb.nslots)
			return -ENOSPC;
	}
	kb.hint = i + 1;
	/* a generation never used before: the program starts the record afresh */
	val.slot = i;
	val.__pad = 0;
	val.gen = ++kb.gen;
	pidfd = thread_pidfd(pid, tid);
	if (pidfd < 0)
		return pidfd;
	err = bpf_map__update_elem(kb.skel->maps.tids, &pidfd, sizeof(pidfd), &val, sizeof(val),
				   BPF_ANY);
	close(pidfd);
	if (err)
		return err;
	kb.slots[i].gen = val.gen;
	kb.slots[i].pid = pid;
	kb.slots[i].tid = tid;
	kb.used++;
	/* after the storage: a set bit sends the program to look there */
	tidbit(tid, true);
	*slot = i;
	*gen = kb.slots[i].gen;
	return 0;
}

void kbpf_release_pid(pid_t pid)
{
	__u32 i;

	if (!kb.skel)
		return;
	for (i = 0; i < kb.nslots; i++)
		if (kb.slots[i].pid == pid)
			slot_release(i);
}

__u32 kbpf_count_pid(pid_t pid)
{
	__u32 i, n = 0;

	if (!kb.skel)
		return 0;
	for (i = 0; i < kb.nslots; i++)
		n += kb.slots[i].pid == pid;
	return n;
}

void kbpf_sweep(void)
{
	__u32 i;

	if (!kb.skel)
		return;
	for (i = 0; i < kb.nslots; i++)
		if (kb.slots[i].pid && !tid_alive(kb.slots[i].pid, kb.slots[i].tid))
			slot_release(i);
}
