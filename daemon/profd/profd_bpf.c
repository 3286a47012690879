// SPDX-License-Identifier: MIT
/*
 * profd_bpf.c - load bpf/profsched.bpf.c and own its slots.
 *
 * profd assigns slots: where the record is and a gen never used before in
 * 'slots', then slot + 1 in the tid's 'tidslots' entry (both arrays mapped
 * read-write here); it clears the entry when it frees the slot.
 *
 * Records are kept per uid: a uid's first registration makes an array of
 * conf.uid_slots records (its quota) in 'uidrecs', and a process is handed
 * only its uid's array, so nobody maps another user's tids and numbers.
 * The array goes KUID_LINGER_NS after the uid holds no slot and no
 * connection holds it (kbpf_uid_hold): a process keeps the array it mapped
 * for its connection's life, and the next program of the same user (a test
 * suite, a shell loop) finds it made: putting an array in 'uidrecs', and
 * taking it out, each wait for an RCU grace period (tens of ms on a guest),
 * which a first zone waiting to be covered cannot afford.  At most
 * PROF_SCHED_MAX_UIDS uids have one at once (an idle one goes at once for
 * another uid's).  Each array is
 * frozen before the program can see it: nothing in user space can write
 * it, not profd and not the processes its fd is handed to (a read-only fd
 * cannot be mmapped at all: the kernel refuses MAP_SHARED without
 * FMODE_WRITE for BPF maps).  The program restarts a record from zero on
 * its new owner's first switch (gen differs), so a reused slot or tid
 * never inherits numbers.
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
#include "proto.h"
/* generated code casts const away */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "profsched.skel.h"
#pragma GCC diagnostic pop

#define KBPF_LINGER_NS 1000000000ull
/* a uid's record array, idle, stays this long */
#define KUID_LINGER_NS 3000000000ull

/* the wire's slices are the program's, copied as they are */
_Static_assert(PROFD_SLICES_MAX == PROF_SCHED_SLICES, "slices on the wire");
_Static_assert(sizeof(struct profd_slice) == sizeof(struct prof_sched_slice), "slice size");
_Static_assert(offsetof(struct profd_slice, cpu) == offsetof(struct prof_sched_slice, cpu) &&
		       offsetof(struct profd_slice, flags) ==
			       offsetof(struct prof_sched_slice, flags) &&
		       PROFD_SLICE_NO_START == PROF_SLICE_NO_START &&
		       PROFD_SLICE_BLOCKED == PROF_SLICE_BLOCKED,
	       "slice layout"); /* attached this long after the last slot goes */

struct kslot {
	pid_t pid; /* 0: free */
	pid_t tid;
	uid_t uid;
	__u32 uidx; /* its record: kb.uids[uidx]'s entry idx */
	__u32 idx;
	__u64 owner; /* the connection's id */
	__u64 gen;
};

/* a uid's record array */
struct kuid {
	uid_t uid;
	int fd;	    /* -1: not in use */
	__u32 used; /* slots it holds */
	__u32 refs; /* connections it was handed to */
	__u8 *busy; /* per entry: in use */
	__u64 idle_ns; /* when used and refs last fell to 0 */
};

static struct {
	struct profsched_bpf *skel;
	struct bpf_link *link; /* attached while used > 0 (and KBPF_LINGER_NS after) */
	__u64 idle_ns;	       /* when used last fell to 0 */
	__u64 gen;	       /* last generation handed out */
	__u32 nslots;
	__u32 used;
	__u32 hint; /* where to look for a free slot */
	struct kslot *slots;
	__u32 per;   /* records in a uid's array */
	__u32 nuids; /* uid arrays at most */
	struct kuid *uids;
	__u64 *tidslots; /* the program's maps, mapped read-write */
	size_t tidslots_len;
	__u32 tid_limit; /* tids below it have an entry: pid_max at load */
	struct prof_sched_slot *slotinfo;
	char why[128];
} kb;

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
	if (kb.slotinfo)
		munmap(kb.slotinfo, (size_t)kb.nslots * sizeof(*kb.slotinfo));
	kb.tidslots = NULL;
	kb.slotinfo = NULL;
}

/* the uids' arrays, all of them */
static void free_uids(void)
{
	__u32 u;

	for (u = 0; kb.uids && u < kb.nuids; u++) {
		if (kb.uids[u].fd >= 0)
			close(kb.uids[u].fd);
		free(kb.uids[u].busy);
	}
	free(kb.uids);
	kb.uids = NULL;
}

/* a uid's record array, empty; its fd or -errno */
static int uid_array_create(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "prof_uid_recs", sizeof(__u32),
				sizeof(struct prof_sched_rec), kb.per, &o);

	return fd < 0 ? -errno : fd;
}

int kbpf_open(__u32 nslots)
{
	struct profsched_bpf *skel = NULL;
	int err, tmpl = -1;
	__u32 u;

	libbpf_set_print(libbpf_log);
	kb.nslots = nslots;
	/* a uid's array holds its quota */
	kb.per = conf.uid_slots && conf.uid_slots < nslots ? conf.uid_slots : nslots;
	kb.nuids = nslots < PROF_SCHED_MAX_UIDS ? nslots : PROF_SCHED_MAX_UIDS;
	kb.slots = calloc(nslots, sizeof(*kb.slots));
	kb.uids = calloc(kb.nuids, sizeof(*kb.uids));
	if (!kb.slots || !kb.uids) {
		snprintf(kb.why, sizeof(kb.why), "out of memory");
		err = -ENOMEM;
		goto cleanup;
	}
	for (u = 0; u < kb.nuids; u++)
		kb.uids[u].fd = -1;
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
	/* the uids' arrays are made like this one (libbpf 1.1 cannot resize
	 * an inner map it made: it has no object) */
	tmpl = uid_array_create();
	if (tmpl < 0 || (err = bpf_map__set_inner_map_fd(skel->maps.uidrecs, tmpl))) {
		err = tmpl < 0 ? tmpl : err;
		snprintf(kb.why, sizeof(kb.why), "failed to make a record array: %s",
			 strerror(-err));
		goto cleanup;
	}
	if ((err = bpf_map__set_max_entries(skel->maps.uidrecs, kb.nuids)) ||
	    (err = bpf_map__set_max_entries(skel->maps.slots, nslots)) ||
	    (err = bpf_map__set_max_entries(skel->maps.tidslots,
					    kb.tid_limit / PROF_SCHED_TIDS_PER_WORD))) {
		snprintf(kb.why, sizeof(kb.why), "failed to size the maps: %s", strerror(-err));
		goto cleanup;
	}
	err = profsched_bpf__load(skel);
	close(tmpl);
	tmpl = -1;
	if (err) {
		snprintf(kb.why, sizeof(kb.why),
			 "failed to load the BPF program: %s (needs BTF, CAP_BPF, CAP_PERFMON)",
			 strerror(-err));
		goto cleanup;
	}
	/* attached on the first registration (kbpf_attach), not here */
	kb.tidslots = map_rw(skel->maps.tidslots, kb.tidslots_len);
	kb.slotinfo = (struct prof_sched_slot *)map_rw(skel->maps.slots,
						       (size_t)nslots * sizeof(*kb.slotinfo));
	if (!kb.tidslots || !kb.slotinfo) {
		err = -errno;
		snprintf(kb.why, sizeof(kb.why), "failed to map the slot tables: %s",
			 strerror(-err));
		goto cleanup;
	}
	kb.skel = skel;
	kb.why[0] = 0;
	log_info("bpf: sched_switch program loaded, %u slots (%u a uid, %u uids); attached while "
		 "one is used",
		 nslots, kb.per, kb.nuids);
	return 0;
cleanup:
	if (tmpl >= 0)
		close(tmpl);
	unmap_tables();
	profsched_bpf__destroy(skel);
	free_uids();
	free(kb.slots);
	kb.slots = NULL;
	log_warnx("bpf: %s; running without kernel assistance", kb.why);
	return err;
}

void kbpf_close(void)
{
	bpf_link__destroy(kb.link);
	kb.link = NULL;
	unmap_tables();
	profsched_bpf__destroy(kb.skel);
	kb.skel = NULL;
	free(kb.slots);
	kb.slots = NULL;
	free_uids();
}

bool kbpf_on(void)
{
	return kb.skel != NULL;
}

const char *kbpf_why(void)
{
	return kb.skel ? "" : kb.why[0] ? kb.why : "disabled";
}

/* uid's array, or -1 */
static int kuid_find(uid_t uid)
{
	__u32 u;

	for (u = 0; kb.uids && u < kb.nuids; u++)
		if (kb.uids[u].fd >= 0 && kb.uids[u].uid == uid)
			return (int)u;
	return -1;
}

static void kuid_free(__u32 u);

/* an array no slot is in and no connection holds */
static bool kuid_idle(const struct kuid *k)
{
	return k->fd >= 0 && !k->used && !k->refs;
}

/* uid's array, made (empty, frozen, in 'uidrecs') if it has none; or -errno */
static int kuid_get(uid_t uid)
{
	struct kuid *k = NULL;
	int u = kuid_find(uid), fd, err;
	__u32 i;

	if (u >= 0)
		return u;
	for (i = 0; i < kb.nuids && !k; i++)
		if (kb.uids[i].fd < 0)
			k = &kb.uids[i];
	/* none free: an idle one goes now */
	for (i = 0; i < kb.nuids && !k; i++)
		if (kuid_idle(&kb.uids[i])) {
			kuid_free(i);
			k = &kb.uids[i];
		}
	if (!k)
		return -EUSERS;
	u = (int)(k - kb.uids);
	k->busy = calloc(kb.per, 1);
	if (!k->busy)
		return -ENOMEM;
	fd = uid_array_create();
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	/* from here only the program writes records; clients may only read */
	if (bpf_map_freeze(fd) ||
	    bpf_map_update_elem(bpf_map__fd(kb.skel->maps.uidrecs), &u, &fd, BPF_ANY)) {
		err = -errno;
		close(fd);
		goto cleanup;
	}
	k->uid = uid;
	k->fd = fd;
	k->used = k->refs = 0;
	log_debug("bpf: uid %u's record array (%u records) made", (unsigned)uid, kb.per);
	return u;
cleanup:
	free(k->busy);
	k->busy = NULL;
	log_warnx("bpf: failed to make uid %u's record array: %s", (unsigned)uid, strerror(-err));
	return err;
}

/* nobody holds it and no slot is in it: the array goes (kbpf_sweep) */
static void kuid_put_if_idle(__u32 u)
{
	struct kuid *k = &kb.uids[u];

	if (kuid_idle(k))
		k->idle_ns = profd_now_ns();
}

static void kuid_free(__u32 u)
{
	struct kuid *k = &kb.uids[u];

	if (k->fd < 0)
		return;
	bpf_map_delete_elem(bpf_map__fd(kb.skel->maps.uidrecs), &u);
	close(k->fd);
	k->fd = -1;
	free(k->busy);
	k->busy = NULL;
	log_debug("bpf: uid %u's record array freed", (unsigned)k->uid);
}

int kbpf_uid_fd(uid_t uid)
{
	int u = kuid_find(uid);

	return u < 0 ? -1 : kb.uids[u].fd;
}

__u32 kbpf_uid_nslots(void)
{
	return kb.skel ? kb.per : 0;
}

void kbpf_uid_hold(uid_t uid)
{
	int u = kuid_find(uid);

	if (u >= 0)
		kb.uids[u].refs++;
}

void kbpf_uid_put(uid_t uid)
{
	int u = kuid_find(uid);

	if (u >= 0 && kb.uids[u].refs) {
		kb.uids[u].refs--;
		kuid_put_if_idle((__u32)u);
	}
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
/*
 * The program's one-page filter (profsched.h): tid's bit on, or off unless
 * another registered tid shares it.  On before the tid's entry is written,
 * off after it is cleared: the filter never hides a registered tid.
 */
static void tid_filter(pid_t tid, bool on)
{
	__u32 bit = (__u32)tid % PROF_SCHED_FILTER_BITS, i;
	__u64 *w = &kb.skel->bss->tidfilter[bit / 64], m = 1ULL << (bit % 64);

	for (i = 0; !on && i < kb.nslots; i++)
		if (kb.slots[i].pid && kb.slots[i].tid != tid &&
		    (__u32)kb.slots[i].tid % PROF_SCHED_FILTER_BITS == bit)
			return; /* still someone's */
	if (on)
		__atomic_fetch_or(w, m, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(w, ~m, __ATOMIC_RELEASE);
}

static void tid_entry(pid_t tid, __u32 v)
{
	__u32 shift = 16 * ((__u32)tid % PROF_SCHED_TIDS_PER_WORD);
	__u64 *w = &kb.tidslots[(__u32)tid / PROF_SCHED_TIDS_PER_WORD], old;

	if (v)
		tid_filter(tid, true);
	/* the only writer: a read and one store the program sees whole */
	old = __atomic_load_n(w, __ATOMIC_RELAXED);
	__atomic_store_n(w, (old & ~(0xffffULL << shift)) | (__u64)v << shift, __ATOMIC_RELEASE);
	if (!v)
		tid_filter(tid, false);
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

int kbpf_tidslots_fd(void)
{
	return kb.skel ? bpf_map__fd(kb.skel->maps.tidslots) : -1;
}

bool kbpf_attached(void)
{
	return kb.link != NULL;
}

static void slot_release(__u32 i)
{
	struct kuid *k = &kb.uids[kb.slots[i].uidx];

	/* from here the program no longer writes the slot for its task */
	tid_entry(kb.slots[i].tid, 0);
	k->busy[kb.slots[i].idx] = 0;
	k->used--;
	kuid_put_if_idle(kb.slots[i].uidx);
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
	__u32 i, n, idx, mine = 0;
	struct kuid *k;
	int err, u;

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
	u = kuid_get(uid);
	if (u < 0)
		return u;
	k = &kb.uids[u];
	/* below its quota, so below the array's size: a free record */
	for (idx = 0; idx < kb.per && k->busy[idx]; idx++)
		;
	if (idx == kb.per) {
		kuid_put_if_idle((__u32)u);
		return -EDQUOT;
	}
	k->busy[idx] = 1;
	k->used++;
	kb.hint = i + 1;
	kb.slots[i].uidx = (__u32)u;
	kb.slots[i].idx = idx;
	/* where its record is, and a generation never used before: the
	 * program starts the record afresh.  The gen after the place, the
	 * entry naming the slot last: it publishes them. */
	kb.slots[i].gen = ++kb.gen;
	__atomic_store_n(&kb.slotinfo[i].uidx, (__u32)u, __ATOMIC_RELAXED);
	__atomic_store_n(&kb.slotinfo[i].idx, idx, __ATOMIC_RELAXED);
	__atomic_store_n(&kb.slotinfo[i].gen, kb.gen, __ATOMIC_RELEASE);
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
	*slot = idx;
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

/*
 * The scheduler's timeline of pid's registered threads (profsched.h): up to
 * max threads into out, each with what its slices hold now.  The copy is
 * checked against the program writing it: a slice it may have overwritten
 * meanwhile is dropped, and an assignment that changed is not read.
 */
int kbpf_slices(pid_t pid, struct profd_slices_thread *out, __u32 max)
{
	__u32 i, n = 0;

	if (!kb.skel)
		return -EOPNOTSUPP;
	for (i = 0; i < kb.nslots && n < max; i++) {
		const struct prof_sched_slices *v = &kb.slotinfo[i].tl;
		struct profd_slices_thread *t = &out[n];
		__u64 h1, h2, k, lo;

		if (kb.slots[i].pid != pid)
			continue;
		if (__atomic_load_n(&v->gen, __ATOMIC_ACQUIRE) != kb.slots[i].gen)
			continue; /* not switched since it was assigned */
		h1 = __atomic_load_n(&v->head, __ATOMIC_ACQUIRE);
		lo = h1 > PROF_SCHED_SLICES ? h1 - PROF_SCHED_SLICES : 0;
		for (k = lo; k < h1; k++)
			memcpy(&t->s[k - lo], &v->s[k % PROF_SCHED_SLICES], sizeof(t->s[0]));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		h2 = __atomic_load_n(&v->head, __ATOMIC_RELAXED);
		if (__atomic_load_n(&v->gen, __ATOMIC_RELAXED) != kb.slots[i].gen || h2 < h1)
			continue;
		/* the writer may be at h2 already: slot h2 % N is not ours */
		if (h2 + 1 > lo + PROF_SCHED_SLICES) {
			__u64 keep = h2 + 1 - PROF_SCHED_SLICES;

			if (keep >= h1)
				lo = h1;
			else if (keep > lo) {
				memmove(t->s, t->s + (keep - lo), (size_t)(h1 - keep) * sizeof(t->s[0]));
				lo = keep;
			}
		}
		t->tid = (__u32)kb.slots[i].tid;
		t->n = (__u32)(h1 - lo);
		t->written = h1;
		n++;
	}
	return (int)n;
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
	for (i = 0; kb.uids && i < kb.nuids; i++)
		if (kuid_idle(&kb.uids[i]) &&
		    profd_now_ns() - kb.uids[i].idle_ns >= KUID_LINGER_NS)
			kuid_free(i);
	if (!kb.used && kb.link && profd_now_ns() - kb.idle_ns >= KBPF_LINGER_NS) {
		bpf_link__destroy(kb.link);
		kb.link = NULL;
		log_debug("bpf: detached from sched_switch");
	}
}
