// SPDX-License-Identifier: MIT
/*
 * usdt/prof_seg.c - the segment: its shm file made and mapped, each page reserved
 * before anything writes it, and what a zone costs measured once at start.
 */
#define _GNU_SOURCE
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "zone_leave.h"
#include "runtime.h"
#include "snapshot.h"
#include "proffile.h"
#include "funcname.h"
#include "prof_int.h"

/*
 * shm_open a fresh, exclusive name: prof.<pid>.<start>, or, when another
 * file squats that (any user may create it: pid and start are public), the
 * same with a random 63-bit suffix nobody can guess ahead of us.
 */
static int seg_create(pid_t pid, __u64 token, char *name, size_t len)
{
	int fd = -1, i;

	for (i = 0; i < 32; i++) {
		unsigned long long r = 0;

		if (i == 0) {
			snprintf(name, len, "/" PROF_SHM_PREFIX "%d.%llu", (int)pid,
				 (unsigned long long)token);
		} else {
			if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
				r = (unsigned long long)prof_mono_ns(CLOCK_MONOTONIC) * 0x9e3779b97f4a7c15ull;
			snprintf(name, len, "/" PROF_SHM_PREFIX "%d.%llu.%llu", (int)pid,
				 (unsigned long long)token, (r >> 1) | 1);
		}
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	return fd < 0 ? -errno : fd;
}

/*
 * Segments are sparse, and tmpfs may be full (any user can fill /dev/shm):
 * a page the fast path first touches there raises SIGBUS.  So every page
 * is reserved (fallocate) on a slow path before anything writes it, and
 * what finds no room is not recorded, counted in the header's 'nospace'.
 * The pages are mapped writable here too (MADV_POPULATE_WRITE, Linux 5.14;
 * older kernels refuse it and fault them in later): otherwise the fast
 * path takes a page fault at each first touch, one per 256 events of a new
 * thread's ring, ~3 ns a zone over its first 16384 zones here.
 */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
int prof_seg_reserve(__u64 off, __u64 len)
{
	__u64 lo = off & ~4095ull, hi = (off + len + 4095) & ~4095ull;

	if (prof_rt.seg_fd < 0 || !len)
		return 0;
	if (fallocate(prof_rt.seg_fd, 0, (off_t)lo, (off_t)(hi - lo)))
		return -errno;
	if (prof_rt.seg)
		(void)madvise((char *)prof_rt.seg + lo, hi - lo, MADV_POPULATE_WRITE);
	return 0;
}

void prof_seg_nospace(void)
{
	static bool said;

	if (prof_rt.seg)
		__atomic_add_fetch(&prof_rt.seg->nospace, 1, __ATOMIC_RELAXED);
	if (!said)
		prof_warnx("/dev/shm is full: some threads, zones or nodes are not profiled "
			   "(the report counts them)");
	said = true;
}

/* the pages node n of a slab needs: its node, ext record and open word,
 * and its histogram block's rows and row map when n opens a block */
static int slab_reserve_node(struct prof_slab_hdr *h, __u32 n)
{
	__u64 base = (__u64)((char *)h - (char *)prof_rt.seg);
	const struct prof_region *r = prof_rt.region;
	__u64 blk = (__u64)PROF_HIST_BLOCK * PROF_HIST_BUCKETS * sizeof(__u32);
	int err;

	err = prof_seg_reserve(base + r[PROF_REGION_NODES].off + (__u64)n * PROF_NODE_SIZE,
			  PROF_NODE_SIZE);
	if (!err)
		err = prof_seg_reserve(base + r[PROF_REGION_EXT].off + (__u64)n * PROF_NODE_EXT_SIZE,
				  PROF_NODE_EXT_SIZE);
	if (!err)
		err = prof_seg_reserve(base + r[PROF_REGION_OPEN].off + (__u64)n * sizeof(__u64),
				  sizeof(__u64));
	if (!err && !(n % PROF_HIST_BLOCK)) {
		__u64 k = n / PROF_HIST_BLOCK;

		err = prof_seg_reserve(base + r[PROF_REGION_ROWMAP].off +
					  k * PROF_ROWMAP_WORDS * sizeof(__u64),
				  PROF_ROWMAP_WORDS * sizeof(__u64));
		if (!err)
			err = prof_seg_reserve(base + r[PROF_REGION_HIST].off + k * blk, blk);
	}
	return err;
}

/* nodes [from, to) of a slab, one syscall per page at most */
int prof_slab_reserve_nodes(struct prof_slab_hdr *h, __u32 from, __u32 to, __u32 *res)
{
	__u32 i;
	int err = 0;

	for (i = from; !err && i < to; i++) {
		/* a node shares its pages with its neighbours: only where a
		 * region's page (or a histogram block) begins */
		if (i == from || !(i % (4096 / PROF_NODE_SIZE)) || !(i % (4096 / sizeof(__u64))) ||
		    (i * PROF_NODE_EXT_SIZE) / 4096 != ((i - 1) * PROF_NODE_EXT_SIZE) / 4096 ||
		    !(i % PROF_HIST_BLOCK))
			err = slab_reserve_node(h, i);
	}
	if (!err)
		*res = to;
	return err;
}

/* a slab's header, its event ring and its first nnodes nodes; 0 or -errno */
int prof_slab_reserve(struct prof_slab_hdr *h, __u32 nnodes, __u32 *res)
{
	__u64 base = (__u64)((char *)h - (char *)prof_rt.seg);
	const struct prof_region *r = &prof_rt.region[PROF_REGION_RING];
	int err = prof_seg_reserve(base, PROF_SLAB_HDR_SIZE);

	if (!err && r->size)
		err = prof_seg_reserve(base + r->off, r->size);
	return err ? err : prof_slab_reserve_nodes(h, 0, nnodes, res);
}

/*
 * What a zone costs, measured once at start on this machine: back-to-back
 * zones of a private site, their writes landing in the last-resort sink
 * (the calling thread has no slab yet).  'cost' is what the code around a
 * zone pays (its parent's self time grows by it), 'inner' the part between
 * the zone's own two clock reads (its own time grows by it).  The minimum
 * over a few rounds: the cost without interference.
 */
static volatile unsigned short calib_sema; /* never set: no probe fires */
static struct prof_sink calib_sink; /* the calibration's writes, nobody else's */
static const struct prof_site calib_site = {
	"calibration", __FILE__, "calibrate", 0, 0, &calib_sema, NULL, { 0, 0 }
};


static void zone_calibrate(__u64 *cost, __u64 *inner)
{
	struct __prof_thread *t = &__prof_tls, saved = *t;
	/* node 1 cached; on the monotonic clock no cache, and the slow
	 * enter (busy: it does nothing else) gives node 1 too */
	struct __prof_cache c = { { { ~0u, 0 }, { ~0u, 0 }, { ~0u, 0 }, { ~0u, 0 },
				    { ~0u, 0 }, { ~0u, 0 }, { ~0u, 0 }, { ~0u, 0 } }, 1, &calib_site };
	int busy = prof_tpriv.busy;
	__u32 round, i;
	__u64 best = ~0ull, best_in = ~0ull;

	if (__prof_clock_tsc)
		c.way[PROF_NODE_ROOT & (__PROF_WAYS - 1)] = (struct __prof_way){ PROF_NODE_ROOT, 1 };

	prof_tpriv.busy = 1;
	prof_thread_bind_sink(t, &calib_sink);
	t->day = prof_day(); /* its calls count (on the monotonic clock, in __prof_anomaly) */
	t->cur = PROF_NODE_ROOT;
	for (round = 0; round < 5; round++) {
		__u64 t0, t1, calls, ticks;

		memset(&calib_sink.nodes[1], 0, sizeof(calib_sink.nodes[1]));
		t0 = __prof_now();
		for (i = 0; i < 1024; i++) {
			struct __prof_zone z;

			__prof_enter(&z, &calib_site, &c, 0);
			__prof_leave(&z);
		}
		t1 = __prof_now();
		calls = calib_sink.nodes[1].calls;
		ticks = calib_sink.nodes[1].ticks;
		if (calls && t1 - t0 < best * 1024) {
			best = (t1 - t0) / 1024;
			best_in = ticks / calls;
		}
	}
	*t = saved;
	prof_tpriv.busy = busy;
	*cost = best == ~0ull ? 0 : best;
	*inner = best_in == ~0ull || best_in > *cost ? 0 : best_in;
}

/* create and map this process's segment; caller holds the lock */
/* the new segment's file at fd sized, its header's page reserved, and
 * mapped at *memp; 0 or -errno (the file unlinked and fd closed then) */
static int seg_size_map(int fd, const char *name, __u64 size, void **memp)
{
	struct rlimit rl;
	void *mem;
	int err;

	/* past RLIMIT_FSIZE, ftruncate raises SIGXFSZ: the program would die */
	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size) {
		prof_warnx("segment %s needs %llu bytes, past RLIMIT_FSIZE (%llu); profiling off",
			   name, (unsigned long long)size, (unsigned long long)rl.rlim_cur);
		err = -EFBIG;
		goto fail;
	}
	if (ftruncate(fd, (off_t)size)) {
		err = -errno;
		prof_warnx("failed to size segment %s to %llu bytes: %s; profiling off", name,
			   (unsigned long long)size, strerror(-err));
		goto fail;
	}
	/* the header's page before anything writes it */
	if (fallocate(fd, 0, 0, PROF_SEG_HDR_SIZE)) {
		err = -errno;
		prof_warnx("no room in /dev/shm for segment %s: %s; profiling off", name,
			   strerror(-err));
		goto fail;
	}
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = -errno;
	if (mem == MAP_FAILED) {
		prof_warnx("failed to map segment %s: %s; profiling off", name, strerror(-err));
		goto fail;
	}
	*memp = mem;
	return 0;
fail:
	shm_unlink(name);
	close(fd);
	return err;
}

/* the header's fields, all but its magic (which says they are there) */
static void seg_hdr_fill(struct prof_seg_hdr *h, __u64 token, __u64 hz, __u64 size,
			 __u64 sites_off, __u64 slabs_off)
{
	h->version = PROF_SEG_VERSION;
	h->hdr_size = sizeof(*h);
	h->seg_size = size;
	h->pid = (__u32)getpid();
	h->uid = (__u32)getuid();
	h->start_token = token;
	h->created_ns = prof_mono_ns(CLOCK_REALTIME);
	if (prof_proc_comm(0, 0, h->comm, sizeof(h->comm)))
		h->comm[0] = 0;
	h->clock = __prof_clock_tsc ? PROF_CLOCK_TSC : PROF_CLOCK_MONO;
	h->tick_hz = hz;
	h->mono_base_ns = prof_mono_ns(CLOCK_MONOTONIC);
	h->tick_base = __prof_now();
	h->max_sites = prof_rt.max_sites;
	h->site_size = sizeof(struct prof_site_ent);
	h->max_threads = prof_rt.max_threads;
	h->max_nodes = prof_rt.max_nodes;
	h->node_size = sizeof(struct prof_node);
	h->hist_buckets = PROF_HIST_BUCKETS;
	h->ext_size = sizeof(struct prof_node_ext);
	h->hist_block = PROF_HIST_BLOCK;
	h->sites_off = sites_off;
	h->slabs_off = slabs_off;
	h->slab_size = prof_rt.slab_size;
	h->minor = PROF_SEG_MINOR;
	h->slab_hdr_size = sizeof(struct prof_slab_hdr);
	h->nregions = PROF_REGIONS;
	memcpy(h->region, prof_rt.region, sizeof(prof_rt.region));
	h->nparts = PROF_PARTS;
	memcpy(h->part, prof_rt.part, sizeof(prof_rt.part));
	h->agg_slab = prof_rt.max_threads;
}

int prof_seg_init(void)
{
	struct prof_seg_hdr *h;
	__u64 sites_off, slabs_off, slab_size, size, hz;
	pid_t pid = getpid();
	/* self, not /proc/<pid>: in a pid namespace that shares its parent's
	 * /proc, <pid> there is another process (pid 1 would be the host's init) */
	__u64 token = prof_self_start_token();
	char name[96];
	void *mem = NULL;
	int fd, err;

	prof_env__read();
	/* a forked child keeps its parent's geometry: its node indices */
	if (!prof_rt.max_nodes) {
		prof_rt.max_threads = prof_env.max_threads;
		prof_rt.max_nodes = prof_env.max_nodes;
		prof_rt.max_sites = prof_env.max_sites;
		prof_rt.ring_events = prof_env.trace_events;
	}
	prof_rt.keep = prof_env.keep;

	sites_off = PROF_SEG_HDR_SIZE;
	slabs_off = sites_off + (__u64)prof_rt.max_sites * sizeof(struct prof_site_ent);
	slabs_off = (slabs_off + 4095) & ~4095ull;
	slab_size = prof_slab_layout(prof_rt.max_nodes, PROF_HIST_SHIFT, prof_rt.ring_events,
				     prof_annot_layout(prof_rt.part), prof_rt.region);
	prof_rt.slab_size = slab_size;
	/* one slab past the threads': the exited threads' aggregate */
	size = slabs_off + slab_size * ((__u64)prof_rt.max_threads + 1);

	fd = seg_create(pid, token, name, sizeof(name));
	if (fd < 0) {
		err = fd;
		prof_warnx("failed to create segment %s: %s; profiling off", name, strerror(-err));
		return err;
	}
	/*
	 * In use: a shared flock, held by the open file the mapping keeps (past
	 * the close below) until the mapping goes: at exit or exec (and in a
	 * fork child, at its first zone).  profctl clean sees it from any pid
	 * namespace; it probes only a segment whose header is complete (so
	 * after this) or stale, and this never waits.
	 */
	flock(fd, LOCK_SH | LOCK_NB);
	err = seg_size_map(fd, name, size, &mem);
	if (err)
		return err;
	if (prof_rt.seg_fd >= 0)
		close(prof_rt.seg_fd); /* a fork child's copy of its parent's */
	prof_rt.seg_fd = fd;

	hz = prof_clock_calibrate();
	prof_rt.ns_per_tick = 1e9 / (double)hz;
	h = mem;
	zone_calibrate(&h->zone_cost, &h->zone_inner);
	seg_hdr_fill(h, token, hz, size, sites_off, slabs_off);
	__atomic_store_n(&h->magic, PROF_SEG_MAGIC, __ATOMIC_RELEASE);
	/* a fork child's: the parent's exited threads are not its own */
	prof_rt.agg = NULL;
	prof_rt.nfree = prof_rt.free_head = prof_rt.nclean = 0;

	prof_rt.seg = h;
	prof_rt.seg_len = size;
	snprintf(prof_rt.seg_name, sizeof(prof_rt.seg_name), "%s", name);
	prof_rt.sites = (struct prof_site_ent *)((char *)mem + sites_off);
	prof_rt.slabs = (char *)mem + slabs_off;
	/* a forked child keeps the map: its sites keep their indices */
	if (!prof_rt.site_keys)
		prof_rt.site_keys =
			calloc(2 * (size_t)prof_rt.max_sites, sizeof(*prof_rt.site_keys));
	if (!prof_rt.site_vals)
		prof_rt.site_vals =
			calloc(2 * (size_t)prof_rt.max_sites, sizeof(*prof_rt.site_vals));
	if (!prof_rt.site_keys || !prof_rt.site_vals) {
		prof_warnx("failed to allocate the site table; profiling off");
		munmap(mem, size);
		shm_unlink(name);
		prof_rt.seg = NULL;
		return -ENOMEM;
	}
	return 0;
}
