// SPDX-License-Identifier: MIT
/*
 * profd_bpf.c - load bpf/profsched.bpf.c and own its slots.
 *
 * profd assigns slots: a gen never used before in 'slotgen', then slot + 1
 * in the tid's 'tidslots' entry (both arrays mapped read-write here); it
 * clears the entry when it frees the slot.  The record
 * array is frozen right after load: nothing in user space can write it, not
 * profd and not the processes its fd is handed to (a read-only fd cannot
 * be mmapped at all: the kernel refuses MAP_SHARED without FMODE_WRITE for
 * BPF maps).  The program restarts a record from zero on its new owner's
 * first switch (gen differs), so a reused tid never inherits numbers.
 *
 * The program is loaded once but attached only while a slot is in use (and
 * a second after): an idle profd costs the rest of the machine nothing
 * per context switch.
 * Each uid may hold conf.uid_slots slots at most, so one user cannot take
 * them all; a slot belongs to the connection that asked for it (its owner),
 * and goes back when that connection does.
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

#define KBPF_LINGER_NS 1000000000ull /* attached this long after the last slot goes */

struct kslot {
	pid_t pid; /* 0: free */
	pid_t tid;
	uid_t uid;
	__u64 owner; /* the connection's id */
	__u64 gen;
};

static struct {
	struct profsched_bpf *skel;
	struct bpf_link *link; /* attached while used > 0 (and KBPF_LINGER_NS after) */
	__u64 idle_ns;	       /* when used last fell to 0 */
	int ro_fd; /* the frozen array, handed to clients */
	__u64 gen; /* last generation handed out */
	__u32 nslots;
	__u32 used;
	__u32 hint; /* where to look for a free slot */
	struct kslot *slots;
	__u64 *tidslots; /* the program's maps, mapped read-write */
	size_t tidslots_len;
	__u32 tid_limit; /* tids below it have an entry: pid_max at load */
	__u64 *slotgen;
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

/* tids are below pid_max; a tid above a raised one gets no kernel word */
static __u32 pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	unsigned long v = 0;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	if (v < 1024 || v > PROF_SCHED_PID_MAX_LIMIT)
		v = PROF_SCHED_PID_MAX_LIMIT;
	/* whole words */
	return (__u32)((v + PROF_SCHED_TIDS_PER_WORD - 1) / PROF_SCHED_TIDS_PER_WORD *
		       PROF_SCHED_TIDS_PER_WORD);
}

static __u64 *map_rw(struct bpf_map *m, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap_tables(void)
{
	if (kb.tidslots)
		munmap(kb.tidslots, kb.tidslots_len);
	if (kb.slotgen)
		munmap(kb.slotgen, (size_t)kb.nslots * sizeof(__u64));
	kb.tidslots = kb.slotgen = NULL;
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
	kb.tid_limit = pid_max();
	kb.tidslots_len = (size_t)(kb.tid_limit / PROF_SCHED_TIDS_PER_WORD) * sizeof(__u64);
	if ((err = bpf_map__set_max_entries(skel->maps.recs, nslots)) ||
	    (err = bpf_map__set_max_entries(skel->maps.slotgen, nslots)) ||
	    (err = bpf_map__set_max_entries(skel->maps.tidslots,
					    kb.tid_limit / PROF_SCHED_TIDS_PER_WORD))) {
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
	/* attached on the first registration (kbpf_attach), not here */
	kb.tidslots = map_rw(skel->maps.tidslots, kb.tidslots_len);
	kb.slotgen = map_rw(skel->maps.slotgen, (size_t)nslots * sizeof(__u64));
	if (!kb.tidslots || !kb.slotgen) {
		err = -errno;
		snprintf(kb.why, sizeof(kb.why), "failed to map the slot tables: %s",
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
	log_info("bpf: sched_switch program loaded, %u slots; attached while one is used", nslots);
	return 0;
cleanup:
	unmap_tables();
	profsched_bpf__destroy(skel);
	log_warnx("bpf: %s; running without kernel assistance", kb.why);
	return err;
}

void kbpf_close(void)
{
	/* ro_fd is the skeleton's map fd */
	kb.ro_fd = -1;
	bpf_link__destroy(kb.link);
	kb.link = NULL;
	unmap_tables();
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

/* a tid's entry in 'tidslots': slot + 1, or 0 for none */
static void tid_entry(pid_t tid, __u32 v)
{
	__u32 shift = 16 * ((__u32)tid % PROF_SCHED_TIDS_PER_WORD);
	__u64 *w = &kb.tidslots[(__u32)tid / PROF_SCHED_TIDS_PER_WORD], old;

	/* the only writer: a read and one store the program sees whole */
	old = __atomic_load_n(w, __ATOMIC_RELAXED);
	__atomic_store_n(w, (old & ~(0xffffULL << shift)) | (__u64)v << shift, __ATOMIC_RELEASE);
}

/* the program on sched_switch; 0 or -errno */
static int kbpf_attach(void)
{
	int err;

	if (kb.link)
		return 0;
	kb.link = bpf_program__attach(kb.skel->progs.prof_sched_switch);
	if (!kb.link) {
		err = -errno;
		log_warnx("bpf: failed to attach to sched_switch: %s", strerror(-err));
		return err;
	}
	log_debug("bpf: attached to sched_switch");
	return 0;
}

bool kbpf_attached(void)
{
	return kb.link != NULL;
}

static void slot_release(__u32 i)
{
	/* from here the program no longer writes the slot for its task */
	tid_entry(kb.slots[i].tid, 0);
	kb.slots[i].pid = 0;
	kb.slots[i].tid = 0;
	kb.slots[i].uid = 0;
	kb.slots[i].owner = 0;
	kb.used--;
	/* nobody left to count for: detached by kbpf_sweep a moment later */
	if (!kb.used)
		kb.idle_ns = profd_now_ns();
}

int kbpf_assign(pid_t pid, pid_t tid, uid_t uid, __u64 owner, __u32 *slot, __u64 *gen)
{
	__u32 i, n, mine = 0;
	int err;

	if (!kb.skel)
		return -EOPNOTSUPP;
	if (pid <= 0 || tid <= 0 || !tid_alive(pid, tid))
		return -ESRCH;
	if ((__u32)tid >= kb.tid_limit)
		return -ERANGE; /* pid_max was raised since profd started */
	/* a tid registered before (re-registration, or a reused tid): fresh slot */
	for (i = 0; i < kb.nslots; i++)
		if (kb.slots[i].pid && kb.slots[i].tid == tid)
			slot_release(i);
	for (i = 0; i < kb.nslots; i++)
		mine += kb.slots[i].pid && kb.slots[i].uid == uid;
	if (mine >= conf.uid_slots)
		return -EDQUOT;
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
	/* a generation never used before: the program starts the record
	 * afresh.  The gen first: an entry naming the slot publishes it. */
	kb.slots[i].gen = ++kb.gen;
	__atomic_store_n(&kb.slotgen[i], kb.gen, __ATOMIC_RELEASE);
	tid_entry(tid, i + 1);
	kb.slots[i].pid = pid;
	kb.slots[i].tid = tid;
	kb.slots[i].uid = uid;
	kb.slots[i].owner = owner;
	kb.used++;
	err = kbpf_attach();
	if (err) {
		slot_release(i);
		return err;
	}
	/* the thread exited, and its tid may name another task already */
	if (!tid_alive(pid, tid)) {
		slot_release(i);
		return -ESRCH;
	}
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

void kbpf_release_owner(__u64 owner)
{
	__u32 i;

	if (!kb.skel || !owner)
		return;
	for (i = 0; i < kb.nslots; i++)
		if (kb.slots[i].pid && kb.slots[i].owner == owner)
			slot_release(i);
}

__u32 kbpf_count_uid(uid_t uid)
{
	__u32 i, n = 0;

	if (!kb.skel)
		return 0;
	for (i = 0; i < kb.nslots; i++)
		n += kb.slots[i].pid && kb.slots[i].uid == uid;
	return n;
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
	/*
	 * Nobody to count for since a moment: switches cost nothing again.
	 * The moment spares a program that is started again and again (a
	 * test suite, a shell loop) a detach and attach each time.
	 */
	if (!kb.used && kb.link && profd_now_ns() - kb.idle_ns >= KBPF_LINGER_NS) {
		bpf_link__destroy(kb.link);
		kb.link = NULL;
		log_debug("bpf: detached from sched_switch");
	}
}
