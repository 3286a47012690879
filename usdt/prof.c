// SPDX-License-Identifier: MIT
/*
 * prof.c - the runtime's slow paths: the segment, thread slabs, sites,
 * nodes, unbalanced zones, frames, exit and fork.  The fast path is inline
 * in prof.h; everything here runs once per thread, site or node, or on a
 * rare event (a context switch seen inside a zone, an unbalanced END).
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

struct prof_rt prof_rt = { .lock = PTHREAD_MUTEX_INITIALIZER, .seg_fd = -1 };
static bool fork_mover; /* the forking thread has yet to move out */

/*
 * The kernel word of a thread profd does not cover: constant, with a seq no
 * real record reaches, so a call that straddles a change of records (profd
 * came or went) sees seq move and is counted as one without kernel facts.
 */
#define PROF_SEQ_UNCOVERED (~0ull)
const struct prof_sched_rec prof_zero_rec = { .seq = PROF_SEQ_UNCOVERED };
pthread_cond_t prof_reg_cv = PTHREAD_COND_INITIALIZER;
/* the activity word and ext flag of a thread without a slab (a sink):
 * nobody reads them */
static __u64 sink_activity;
static __u32 sink_ext_used;

/* a sink's two nodes, their ext records and their histogram block */
struct prof_sink {
	struct prof_node nodes[2];
	struct prof_node_ext ext[2];
	__u64 open[2];
	__u64 rowmap[PROF_ROWMAP_WORDS];
	__u32 hist[PROF_HIST_BLOCK * PROF_HIST_BUCKETS];
	struct prof_event ring[1];
	__u64 ring_head;
};

/* shared by every sink thread that failed malloc, and by a zone in a signal
 * handler that interrupted its thread's first zone: racy, but in bounds */
static struct prof_sink last_resort;

__thread struct __prof_thread __prof_tls __attribute__((tls_model("initial-exec"))) = {
	.cur = __PROF_UNINIT,
	.krec = &prof_zero_rec,
	.activity = &sink_activity,
	.ext_used = &sink_ext_used,
	/* never NULL: a zone in a signal handler may run before the slab */
	.nodes = last_resort.nodes,
	.ext = last_resort.ext,
	.open = last_resort.open,
	.rowmap = last_resort.rowmap,
	.hist = last_resort.hist,
	.ring = last_resort.ring,
	.ring_head = &last_resort.ring_head,
};
int __prof_clock_tsc = 1;

/* per-thread slow-path state */
struct prof_tpriv {
	struct prof_tentry *te; /* NULL: thread not profiled (sink) */
	struct prof_slab_hdr *hdr;
	__u32 *table; /* (parent, site) -> node + 1, 2 * max_nodes */
	void *sink;   /* a sink thread's own nodes, freed at exit */
	void *priv;   /* a fork child's private slab (prof_rt.slab_size), unmapped at exit */
	__u32 table_mask;
	__u32 nnodes; /* our copy of hdr->nnodes */
	__u32 max_nodes;
	__u64 last_frame;
	__u32 res_nodes; /* nodes [0, res_nodes) have their pages reserved */
	volatile sig_atomic_t busy; /* in a slow path that locks or grows the tree:
				     * a zone in a signal handler must not enter one */
	__u64 kgen;   /* the generation of the record the thread uses */
	__u32 fork_cur; /* a fork child's current node, parked */
	__u32 nbegin;
	struct __prof_zone begin[PROF_BEGIN_DEPTH];
	unsigned long long begin_subs[PROF_BEGIN_DEPTH]; /* dl_subs() at each BEGIN */
	/* each BEGIN's site: its cache, which names it too, may be unloaded */
	const struct prof_site *begin_site[PROF_BEGIN_DEPTH];
	struct __prof_cache gone_cache; /* an END's whose site was unloaded */
};

static __thread struct prof_tpriv prof_tpriv;
static pthread_key_t prof_key;
static pthread_once_t prof_once = PTHREAD_ONCE_INIT;

pid_t prof_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

__u64 prof_ticks_to_ns(__u64 ticks)
{
	return (__u64)((double)ticks * prof_rt.ns_per_tick);
}

static void prof_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void prof_warnx(const char *fmt, ...)
{
	va_list ap;

	if (prof_env.quiet)
		return;
	va_start(ap, fmt);
	fputs("prof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static __u64 mono_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

uint64_t __prof_clock_mono(void)
{
	return mono_ns(CLOCK_MONOTONIC);
}

/* the counter __prof_now reads runs at one rate on every CPU */
static bool counter_usable(void)
{
#if defined(__x86_64__)
	unsigned int a, b, c, d;

	/* the invariant TSC bit */
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d))
		return false;
	return d & (1u << 8);
#else
	/* aarch64: the generic timer's virtual count has a fixed frequency */
	return true;
#endif
}

void __prof_exit_probe(const struct prof_site *site, uint64_t ticks)
{
	site->exit_probe(site->name, site->file, site->line, prof_ticks_to_ns(ticks));
}

/*
 * Pick the clock and find its rate, once per process: every reader
 * converts with the published rate.  aarch64 says it (cntfrq_el0); the TSC
 * is measured against CLOCK_MONOTONIC_RAW over ~2 ms.
 */
static __u64 clock_calibrate(void)
{
	/* written only when it changes: a fork child recalibrates while the
	 * fast path of its thread may read it */
	if (prof_env.clock_mono || !counter_usable()) {
		if (__prof_clock_tsc)
			__prof_clock_tsc = 0;
		return 1000000000ull;
	}
	if (!__prof_clock_tsc)
		__prof_clock_tsc = 1;
#if defined(__aarch64__)
	{
		__u64 hz;

		__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
		if (hz >= 1000)
			return hz;
		/* firmware left it unset: no rate to trust */
		__prof_clock_tsc = 0;
		return 1000000000ull;
	}
#else
	__u64 t0, r0, t1, r1;

	r0 = mono_ns(CLOCK_MONOTONIC_RAW);
	t0 = __prof_now();
	do
		r1 = mono_ns(CLOCK_MONOTONIC_RAW);
	while (r1 - r0 < 2000000);
	t1 = __prof_now();
	return (__u64)((double)(t1 - t0) * 1e9 / (double)(r1 - r0));
#endif
}

/* starttime (field 22) of the stat file at path, 0 if unreadable */
static __u64 stat_start_token_at(int dirfd, const char *path)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, i;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* comm may hold spaces and parens: fields count from the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* field 22 (starttime) is the 20th after the ')' */
	for (i = 0; i < 20 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &v) != 1)
		return 0;
	return v;
}

/*
 * Our own, through a /proc/self directory fd: the same file every reader
 * reads as <pid>/stat under /proc (qemu-user fakes the paths
 * "/proc/self/stat" and "/proc/<pid>/stat", a start time that drifts by a
 * tick), and our own process whatever pid namespace /proc is of.
 */
static __u64 self_start_token(void)
{
	int d = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	__u64 v;

	if (d < 0)
		return 0;
	v = stat_start_token_at(d, "stat");
	close(d);
	return v;
}

/* through a /proc directory fd for the same reason */
__u64 prof_proc_start_token(pid_t pid)
{
	int d = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[32];
	__u64 v;

	if (d < 0)
		return 0;
	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	v = stat_start_token_at(d, path);
	close(d);
	return v;
}

static void prof_atexit(void);
static void prof_thread_exit(void *arg);
static void prof_fork_prepare(void)
{
	pthread_mutex_lock(&prof_rt.lock);
}
static void prof_fork_parent(void)
{
	pthread_mutex_unlock(&prof_rt.lock);
}
static void prof_fork_child(void);

static void prof_once_init(void)
{
	pthread_key_create(&prof_key, prof_thread_exit);
	pthread_atfork(prof_fork_prepare, prof_fork_parent, prof_fork_child);
	atexit(prof_atexit);
}

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
				r = (unsigned long long)mono_ns(CLOCK_MONOTONIC) * 0x9e3779b97f4a7c15ull;
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
static int seg_reserve(__u64 off, __u64 len)
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

static void seg_nospace(void)
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

	err = seg_reserve(base + r[PROF_REGION_NODES].off + (__u64)n * PROF_NODE_SIZE,
			  PROF_NODE_SIZE);
	if (!err)
		err = seg_reserve(base + r[PROF_REGION_EXT].off + (__u64)n * PROF_NODE_EXT_SIZE,
				  PROF_NODE_EXT_SIZE);
	if (!err)
		err = seg_reserve(base + r[PROF_REGION_OPEN].off + (__u64)n * sizeof(__u64),
				  sizeof(__u64));
	if (!err && !(n % PROF_HIST_BLOCK)) {
		__u64 k = n / PROF_HIST_BLOCK;

		err = seg_reserve(base + r[PROF_REGION_ROWMAP].off +
					  k * PROF_ROWMAP_WORDS * sizeof(__u64),
				  PROF_ROWMAP_WORDS * sizeof(__u64));
		if (!err)
			err = seg_reserve(base + r[PROF_REGION_HIST].off + k * blk, blk);
	}
	return err;
}

/* nodes [from, to) of a slab, one syscall per page at most */
static int slab_reserve_nodes(struct prof_slab_hdr *h, __u32 from, __u32 to, __u32 *res)
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
static int slab_reserve(struct prof_slab_hdr *h, __u32 nnodes, __u32 *res)
{
	__u64 base = (__u64)((char *)h - (char *)prof_rt.seg);
	const struct prof_region *r = &prof_rt.region[PROF_REGION_RING];
	int err = seg_reserve(base, PROF_SLAB_HDR_SIZE);

	if (!err && r->size)
		err = seg_reserve(base + r->off, r->size);
	return err ? err : slab_reserve_nodes(h, 0, nnodes, res);
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

static void thread_bind_sink(struct __prof_thread *t, struct prof_sink *k);

/* a day of ticks: a zone longer than that is a broken clock, not a
 * measurement (an anomaly) */
static __u64 prof_day(void)
{
	return (__u64)(86400e9 / prof_rt.ns_per_tick);
}

static void zone_calibrate(__u64 *cost, __u64 *inner)
{
	struct __prof_thread *t = &__prof_tls, saved = *t;
	/* node 1 cached; on the monotonic clock no cache, and the slow
	 * enter (busy: it does nothing else) gives node 1 too */
	struct __prof_cache c = { __prof_clock_tsc ? PROF_NODE_ROOT : ~0u, 1, ~0u, 0, 1, ~0u, 0, 0, 0,
				  &calib_site };
	int busy = prof_tpriv.busy;
	__u32 round, i;
	__u64 best = ~0ull, best_in = ~0ull;

	prof_tpriv.busy = 1;
	thread_bind_sink(t, &calib_sink);
	t->day = prof_day(); /* its calls count (on the monotonic clock, in __prof_anomaly) */
	t->cur = PROF_NODE_ROOT;
	for (round = 0; round < 5; round++) {
		__u64 t0, t1, calls, ticks;

		memset(&calib_sink.nodes[1], 0, sizeof(calib_sink.nodes[1]));
		t0 = __prof_now();
		for (i = 0; i < 1024; i++) {
			struct __prof_zone z;

			__prof_enter(&z, &calib_site, &c);
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
static int seg_init(void)
{
	struct prof_seg_hdr *h;
	struct rlimit rl;
	__u64 sites_off, slabs_off, slab_size, size, hz;
	pid_t pid = getpid();
	/* self, not /proc/<pid>: in a pid namespace that shares its parent's
	 * /proc, <pid> there is another process (pid 1 would be the host's init) */
	__u64 token = self_start_token();
	char name[96];
	void *mem;
	int fd, err;
	FILE *f;

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
	/* past RLIMIT_FSIZE, ftruncate raises SIGXFSZ: the program would die */
	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size) {
		prof_warnx("segment %s needs %llu bytes, past RLIMIT_FSIZE (%llu); profiling off",
			   name, (unsigned long long)size, (unsigned long long)rl.rlim_cur);
		shm_unlink(name);
		close(fd);
		return -EFBIG;
	}
	if (ftruncate(fd, (off_t)size)) {
		err = -errno;
		prof_warnx("failed to size segment %s to %llu bytes: %s; profiling off", name,
			   (unsigned long long)size, strerror(-err));
		shm_unlink(name);
		close(fd);
		return err;
	}
	/* the header's page before anything writes it */
	if (fallocate(fd, 0, 0, PROF_SEG_HDR_SIZE)) {
		err = -errno;
		prof_warnx("no room in /dev/shm for segment %s: %s; profiling off", name,
			   strerror(-err));
		shm_unlink(name);
		close(fd);
		return err;
	}
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = -errno;
	if (mem == MAP_FAILED) {
		prof_warnx("failed to map segment %s: %s; profiling off", name, strerror(-err));
		shm_unlink(name);
		close(fd);
		return err;
	}
	if (prof_rt.seg_fd >= 0)
		close(prof_rt.seg_fd); /* a fork child's copy of its parent's */
	prof_rt.seg_fd = fd;

	hz = clock_calibrate();
	prof_rt.ns_per_tick = 1e9 / (double)hz;
	h = mem;
	zone_calibrate(&h->zone_cost, &h->zone_inner);
	h->version = PROF_SEG_VERSION;
	h->hdr_size = sizeof(*h);
	h->seg_size = size;
	h->pid = (__u32)pid;
	h->uid = (__u32)getuid();
	h->start_token = token;
	h->created_ns = mono_ns(CLOCK_REALTIME);
	f = fopen("/proc/self/comm", "re");
	if (f) {
		if (fgets(h->comm, sizeof(h->comm), f))
			h->comm[strcspn(h->comm, "\n")] = 0;
		fclose(f);
	}
	h->clock = __prof_clock_tsc ? PROF_CLOCK_TSC : PROF_CLOCK_MONO;
	h->tick_hz = hz;
	h->mono_base_ns = mono_ns(CLOCK_MONOTONIC);
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
	h->slab_size = slab_size;
	h->minor = PROF_SEG_MINOR;
	h->slab_hdr_size = sizeof(struct prof_slab_hdr);
	h->nregions = PROF_REGIONS;
	memcpy(h->region, prof_rt.region, sizeof(prof_rt.region));
	h->nparts = PROF_PARTS;
	memcpy(h->part, prof_rt.part, sizeof(prof_rt.part));
	h->agg_slab = prof_rt.max_threads;
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

static __u32 site_slot(const struct prof_site *s)
{
	__u32 size = 2 * prof_rt.max_sites;
	__u32 i = (__u32)(((uintptr_t)s >> 3) * 0x9e3779b1u) % size;

	/* never full: at most max_sites keys in 2 * max_sites slots */
	while (prof_rt.site_keys[i] && prof_rt.site_keys[i] != s)
		i = (i + 1) % size;
	return i;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	memset(dst + n, 0, len - n);
}

static bool site_same(const struct prof_site_ent *e, const struct prof_site *s)
{
	return e->line == s->line && !strncmp(e->name, s->name ? s->name : "", sizeof(e->name) - 1);
}

/* site index of a descriptor, registering it on first sight */
static __u32 site_index(const struct prof_site *s)
{
	struct prof_seg_hdr *h = prof_rt.seg;
	struct prof_site_ent *e;
	const char *file;
	__u32 i, idx;

	pthread_mutex_lock(&prof_rt.lock);
	i = site_slot(s);
	/* a library dlclose()d, another loaded at its address: a descriptor
	 * at a known address with another name or line is a new site */
	if (prof_rt.site_keys[i] && site_same(&prof_rt.sites[prof_rt.site_vals[i]], s)) {
		idx = prof_rt.site_vals[i];
		goto out;
	}
	if (h->nsites >= prof_rt.max_sites) {
		h->sites_dropped++;
		idx = PROF_SITE_NONE;
		goto out;
	}
	idx = h->nsites;
	if (seg_reserve((__u64)((char *)&prof_rt.sites[idx] - (char *)h),
			sizeof(prof_rt.sites[idx]))) {
		seg_nospace();
		idx = PROF_SITE_NONE;
		goto out;
	}
	e = &prof_rt.sites[idx];
	/* a C++ PROF_FUNC carries __PRETTY_FUNCTION__: named once, here */
	if (s->flags & PROF_SITE_FUNC)
		prof_func_name(s->name, e->name, sizeof(e->name));
	else
		copy_str(e->name, sizeof(e->name), s->name);
	copy_str(e->func, sizeof(e->func), s->func);
	/* keep the tail of a long path: it names the file */
	file = s->file ? s->file : "";
	if (strlen(file) >= sizeof(e->file))
		file += strlen(file) - (sizeof(e->file) - 1);
	copy_str(e->file, sizeof(e->file), file);
	e->line = s->line;
	e->flags = s->flags;
	__atomic_store_n(&h->nsites, idx + 1, __ATOMIC_RELEASE);
	prof_rt.site_keys[i] = s;
	prof_rt.site_vals[i] = idx;
out:
	pthread_mutex_unlock(&prof_rt.lock);
	return idx;
}

static void thread_bind_sink(struct __prof_thread *t, struct prof_sink *k)
{
	t->nodes = k->nodes;
	t->ext = k->ext;
	t->open = k->open;
	t->rowmap = k->rowmap;
	t->hist = k->hist;
	t->ring = k->ring;
	t->ring_head = &k->ring_head;
	t->ring_mask = 0;
	t->activity = &sink_activity;
	t->ext_used = &sink_ext_used;
}

static void thread_sink_last_resort(struct __prof_thread *t)
{
	thread_bind_sink(t, &last_resort);
}

/* the fast path's pointers into a slab */
static void thread_bind_slab(struct __prof_thread *t, struct prof_slab_hdr *hdr)
{
	t->nodes = prof_rt_region(hdr, PROF_REGION_NODES);
	t->ext = prof_rt_region(hdr, PROF_REGION_EXT);
	t->open = prof_rt_region(hdr, PROF_REGION_OPEN);
	t->rowmap = prof_rt_region(hdr, PROF_REGION_ROWMAP);
	t->hist = prof_rt_region(hdr, PROF_REGION_HIST);
	if (prof_rt.region[PROF_REGION_RING].size) {
		struct prof_ring *r = prof_rt_region(hdr, PROF_REGION_RING);

		t->ring = prof_ring_events(r);
		t->ring_head = &r->head;
		t->ring_mask = prof_rt.ring_events - 1;
	} else {
		/* off: every exit writes one slot nobody reads */
		t->ring = last_resort.ring;
		t->ring_head = &last_resort.ring_head;
		t->ring_mask = 0;
	}
	t->activity = &hdr->activity;
	t->ext_used = &hdr->ext_used;
}

static void fork_publish_locked(void);
static void fork_move_self(void);
static void thread_cover_sync(struct __prof_thread *t, struct prof_tpriv *p,
			      struct prof_tentry *te, struct prof_slab_hdr *hdr);

/* the parent's mapping in a fork child, once nobody copies from it;
 * caller holds the lock */
static void fork_drop_old(void)
{
	if (prof_rt.fork_old)
		munmap(prof_rt.fork_old, prof_rt.fork_old_len);
	prof_rt.fork_old = NULL;
}

/* a table of two nodes for a thread we cannot profile: all zones land in 1 */
static void thread_sink(struct __prof_thread *t)
{
	struct prof_sink *mem = calloc(1, sizeof(*mem));

	if (mem) {
		thread_bind_sink(t, mem);
		/* freed by prof_thread_exit */
		prof_tpriv.sink = mem;
		pthread_setspecific(prof_key, &prof_tpriv);
	} else {
		thread_sink_last_resort(t);
	}
	prof_tpriv.te = NULL;
	prof_tpriv.nnodes = 2;
	prof_tpriv.max_nodes = 2;
	t->cur = PROF_NODE_ROOT;
}

/* atomic stores: in a reused slab a reader may still be copying the
 * previous thread's node (it drops the copy: the slab's gen moved) */
static void node_init(struct prof_node *n, __u32 site, __u32 parent)
{
	__PROF_STORE(&n->site, site);
	__PROF_STORE(&n->parent, parent);
	__PROF_STORE(&n->calls, 0);
	__PROF_STORE(&n->ticks, 0);
	__PROF_STORE(&n->max, 0);
}

/*
 * A slab becomes the calling thread's: its header's fields, then an even
 * gen (release), which tells readers the slab holds a thread again.  The
 * stores are atomic: a reader may still be copying the slab's previous
 * thread (it will find gen changed and drop the copy).
 */
static void slab_claim(struct prof_slab_hdr *hdr)
{
	__u64 gen = __PROF_LOAD(&hdr->gen);

	__PROF_STORE(&hdr->tid, (__u32)prof_gettid());
	__PROF_STORE(&hdr->oncpu_start_ns, mono_ns(CLOCK_THREAD_CPUTIME_ID));
	__PROF_STORE(&hdr->start_tick, __prof_now());
	__PROF_STORE(&hdr->ksched_slot, PROF_NO_SLOT);
	__PROF_STORE(&hdr->nnodes, 2);
	__PROF_STORE(&hdr->state, PROF_SLAB_ALIVE);
	__atomic_store_n(&hdr->gen, (gen | 1) + 1, __ATOMIC_RELEASE);
}

static __u32 thread_table_size(void)
{
	__u32 tsize;

	/* a power of two at least twice the nodes: probes stay short */
	for (tsize = 32; tsize < 2 * prof_rt.max_nodes; tsize <<= 1)
		;
	return tsize;
}

static void thread_start(struct __prof_thread *t, struct prof_tpriv *p, struct prof_tentry *te,
			 __u32 tsize);

static bool threads_fold(void);

/*
 * The first zone of a thread when every slab had one: a slab an exited
 * thread left, cleared, is the new thread's; when none is, the exited
 * threads' profiles go into the aggregate first (threads_fold).  Caller
 * holds the lock, released here on success; false (the lock held) if it
 * cannot be.
 */
static bool thread_reuse(struct __prof_thread *t, struct prof_tpriv *p)
{
	struct prof_tentry *te, *next;
	struct prof_slab_hdr *hdr;
	__u32 idx, tsize = thread_table_size();

	if (!prof_rt.nclean && !threads_fold())
		return false;
	p->table = calloc(tsize, sizeof(__u32));
	if (!p->table)
		return false;
	te = prof_rt.clean_te[--prof_rt.nclean];
	next = te->next;
	hdr = te->hdr;
	idx = te->slab;
	/* nodes 0 and 1 were reserved by the slab's first thread */
	p->res_nodes = 2;
	/* the agent no longer looks at it (alive is false): a new entry */
	memset(te, 0, sizeof(*te));
	te->next = next;
	te->slab = idx;
	te->hdr = hdr;
	slab_claim(hdr);
	thread_start(t, p, te, tsize);
	return true;
}

/* the fast path's limit: a day, or less, so that each call it counts fits
 * an event's duration field (a longer one takes __prof_anomaly) */
static __u64 fast_limit(const struct __prof_thread *t)
{
	return t->day < PROF_EV_DUR_MAX ? t->day : PROF_EV_DUR_MAX;
}

/* first zone of a thread: claim a slab */
static void thread_init(void)
{
	struct __prof_thread *t = &__prof_tls;
	struct prof_tpriv *p = &prof_tpriv;
	struct prof_slab_hdr *hdr;
	struct prof_tentry *te;
	struct prof_node *nodes;
	__u32 idx, tsize;

	t->limit = PROF_EV_DUR_MAX;	/* the sink's, until the slab's */
	t->krec = &prof_zero_rec;
	t->priv = p;
	pthread_once(&prof_once, prof_once_init);

	pthread_mutex_lock(&prof_rt.lock);
	if (prof_rt.fork_pending)
		fork_publish_locked();
	if (!prof_rt.seg && !prof_rt.disabled) {
		if (seg_init())
			prof_rt.disabled = true;
		else {
			if (!prof_env.no_daemon)
				prof_agent__start();
			if (prof_env.log_interval > 0)
				prof_logger__start(prof_env.log_interval);
		}
	}
	if (!prof_rt.seg) {
		pthread_mutex_unlock(&prof_rt.lock);
		thread_sink(t);
		return;
	}
	/* every slab had a thread: the oldest exited one's, folded */
	if (prof_rt.seg->nslabs >= prof_rt.max_threads && (prof_rt.nfree || prof_rt.nclean) &&
	    thread_reuse(t, p))
		return;
	if (prof_rt.seg->nslabs >= prof_rt.max_threads) {
		static bool said;

		prof_rt.seg->threads_dropped++;
		if (!said)
			prof_warnx("all %u thread slabs in use (PROF_MAX_THREADS); "
				   "further threads are not profiled",
				   prof_rt.max_threads);
		said = true;
		pthread_mutex_unlock(&prof_rt.lock);
		thread_sink(t);
		return;
	}
	idx = prof_rt.seg->nslabs;
	te = calloc(1, sizeof(*te));
	tsize = thread_table_size();
	p->table = calloc(tsize, sizeof(__u32));
	hdr = prof_rt_slab(idx);
	/* its header, root and overflow nodes must have room, or no profile */
	if (te && p->table && slab_reserve(hdr, 2, &p->res_nodes)) {
		seg_nospace();
		free(te);
		te = NULL;
	}
	if (!te || !p->table) {
		free(te);
		free(p->table);
		p->table = NULL;
		pthread_mutex_unlock(&prof_rt.lock);
		thread_sink(t);
		return;
	}
	nodes = prof_rt_region(hdr, PROF_REGION_NODES);
	node_init(&nodes[PROF_NODE_ROOT], PROF_SITE_NONE, PROF_NODE_ROOT);
	/* node 1 takes every zone entered while the table is full */
	node_init(&nodes[1], PROF_SITE_NONE, PROF_NODE_ROOT);
	slab_claim(hdr);
	__atomic_store_n(&hdr->magic, PROF_SLAB_MAGIC, __ATOMIC_RELEASE);
	__atomic_store_n(&prof_rt.seg->nslabs, idx + 1, __ATOMIC_RELEASE);

	te->slab = idx;
	te->hdr = hdr;
	te->next = prof_rt.threads;
	prof_rt.threads = te;
	thread_start(t, p, te, tsize);
}

/* the thread's entry and slab are its own from here; caller holds the
 * lock, released here */
static void thread_start(struct __prof_thread *t, struct prof_tpriv *p, struct prof_tentry *te,
			 __u32 tsize)
{
	struct prof_slab_hdr *hdr = te->hdr;

	te->tid = (pid_t)hdr->tid;
	te->fast = t;
	te->table = p->table;
	te->alive = true;
	pthread_mutex_unlock(&prof_rt.lock);

	p->te = te;
	p->hdr = hdr;
	p->table_mask = tsize - 1;
	p->nnodes = 2;
	p->max_nodes = prof_rt.max_nodes;
	thread_bind_slab(t, hdr);
	/* a zone longer than a day is a broken clock, not a measurement */
	t->day = prof_day();
	t->limit = fast_limit(t);
	t->cur = PROF_NODE_ROOT;
	pthread_setspecific(prof_key, p);
	thread_cover_sync(t, p, te, hdr);
}

/*
 * With profd there, a thread is covered from its first zone: it waits
 * (PROF_REG_WAIT_MS at most, once) for the agent to register it.  The
 * wait puts it off the CPU, and its return to it starts the record, so
 * the record is usually ready at once; if not, the agent hands it over
 * later, as for a thread registered in the background.
 */
static void thread_cover_sync(struct __prof_thread *t, struct prof_tpriv *p,
			      struct prof_tentry *te, struct prof_slab_hdr *hdr)
{
	const struct prof_sched_rec *rec;
	__u64 gen = 0;

	rec = prof_agent__register_sync(te, &gen);
	if (!rec)
		return;
	/*
	 * The record starts at the thread's first switch after profd assigned
	 * it: an answer that came before the thread slept needs one (a short
	 * sleep is a switch out and in; timer slack makes it ~50 us).
	 */
	for (int i = 0; i < 3 && __atomic_load_n(&rec->gen, __ATOMIC_ACQUIRE) != gen; i++)
		usleep(1);
	if (__atomic_load_n(&rec->gen, __ATOMIC_ACQUIRE) != gen) {
		prof_agent__want(te);
		return;
	}
	/* no call has ended yet: nothing to rebase */
	t->krec = rec;
	p->kgen = gen;
	__PROF_STORE(&hdr->covered, 1);
	__PROF_STORE(&hdr->ksched_slot, te->kslot);
}

static __u32 node_hash(__u32 parent, __u32 site)
{
	__u64 k = ((__u64)parent << 32) | site;

	k *= 0x9e3779b97f4a7c15ull;
	return (__u32)(k >> 32);
}

/* the thread's node for (parent, site), or NODE_NONE with *slot the
 * table's free entry for it; reads only (a slab's thread, site known) */
#define NODE_NONE 0xffffffffU
static inline __u32 node_find(const struct prof_tpriv *p, __u32 parent, __u32 site, __u32 *slot)
{
	const struct prof_node *nodes = __prof_tls.nodes;
	__u32 i, v;

	for (i = node_hash(parent, site) & p->table_mask;; i = (i + 1) & p->table_mask) {
		v = p->table[i];
		if (!v)
			break;
		if (nodes[v - 1].parent == parent && nodes[v - 1].site == site)
			return v - 1;
	}
	*slot = i;
	return NODE_NONE;
}

/* the node for (parent, site), created on a miss; overflow node if full */
static __u32 node_lookup(__u32 parent, __u32 site)
{
	struct prof_tpriv *p = &prof_tpriv;
	struct __prof_thread *t = &__prof_tls;
	__u32 i, n;

	if (!p->te)
		return 1;
	if (site == PROF_SITE_NONE)
		goto full;
	n = node_find(p, parent, site, &i);
	if (n != NODE_NONE)
		return n;
	if (p->nnodes >= p->max_nodes)
		goto full;
	/* 64 nodes' pages at a time, before the first of them is written */
	if (p->nnodes >= p->res_nodes &&
	    slab_reserve_nodes(p->hdr, p->nnodes,
			       p->nnodes + 64 < p->max_nodes ? p->nnodes + 64 : p->max_nodes,
			       &p->res_nodes)) {
		seg_nospace();
		goto full;
	}
	n = p->nnodes++;
	node_init(&t->nodes[n], site, parent);
	p->table[i] = n + 1;
	__atomic_store_n(&p->hdr->nnodes, p->nnodes, __ATOMIC_RELEASE);
	return n;
full:
	__PROF_ADD(&p->hdr->overflow, 1);
	return 1;
}

/* a thread about to use its slab: initialised, and moved if forked */
static void thread_ready(void)
{
	if (__prof_tls.cur == __PROF_UNINIT)
		thread_init();
	else if (__prof_tls.cur == __PROF_FORKED)
		fork_move_self();
}

static void prof_thread_ready(void)
{
	int saved = errno;

	/* a signal handler's call inside our own slow path: not now */
	if (prof_tpriv.busy)
		return;
	prof_tpriv.busy = 1;
	thread_ready();
	prof_tpriv.busy = 0;
	errno = saved;
}

static __u32 enter_slow(const struct prof_site *site, struct __prof_cache *c, uint32_t *prev);
/* a cached parent on the monotonic clock: no node is this high (slab.h's
 * PROF_EV_NODE_BITS), no marker this low */
#define CACHE_MONO 0x40000000u

static void cache_put(struct __prof_cache *c, __u32 parent, __u32 node);

/*
 * enter_node but for a node found in the thread's table.  Zones are
 * safe in signal handlers.  A handler that interrupts this thread's own
 * slow path (its first zone, a new site or node) must not take the lock
 * it may hold, nor grow the tree it is growing: its zone counts in the
 * thread's [overflow] node (before the thread has a slab, in a shared sink
 * nobody reads), uncached.
 */
static __attribute__((noinline)) uint64_t enter_full(const struct prof_site *site,
						     struct __prof_cache *c, uint32_t cur)
{
	int saved = errno; /* the code a zone interrupts (a handler's) keeps it */
	__u32 node, prev = cur;

	if (prof_tpriv.busy)
		return (__u64)prev << 32 | 1;
	/* on the monotonic clock: the site's cache, as the fast path's */
	if (c->parent == (cur | CACHE_MONO))
		return (__u64)prev << 32 | c->node;
	if (c->parent2 == (cur | CACHE_MONO))
		return (__u64)prev << 32 | c->node2;
	prof_tpriv.busy = 1;
	node = enter_slow(site, c, &prev);
	prof_tpriv.busy = 0;
	errno = saved;
	return (__u64)prev << 32 | node;
}

/*
 * Most misses of a site's two ways: a node the thread has, called from a
 * third parent, on the TSC.  Found in the thread's table (which only
 * grows: a handler that adds to it meanwhile leaves it whole) and cached,
 * the cache guarded from a handler's zone (which would write the same
 * ways), with the thread's state reached from __prof_tls (one load, no
 * TLS call that would make this a full function).  Everything else takes
 * enter_full.
 */
static uint64_t enter_node(const struct prof_site *site, struct __prof_cache *c, uint32_t cur)
{
	struct prof_tpriv *p = __prof_tls.priv;
	__u32 node, slot;

	if (__builtin_expect(p && !p->busy && p->te && c->site && cur < __PROF_GONE &&
			     __prof_clock_tsc, 1)) {
		node = node_find(p, cur, c->site - 1, &slot);
		if (node != NODE_NONE) {
			p->busy = 1;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			cache_put(c, cur, node);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			p->busy = 0;
			return (__u64)cur << 32 | node;
		}
	}
	return enter_full(site, c, cur);
}

/*
 * An enter that missed its site's two ways (or any enter on the monotonic
 * clock): the node for (cur, site) and the node to return to, then the
 * call's marks as the fast enter makes them, the node current first.
 */
void __prof_enter_slow(struct __prof_zone *z, const struct prof_site *site)
{
	struct __prof_cache *c = z->c;
	uint64_t pn;

	/* the exit's way to its site (always the same: a handler's zone of
	 * this site writing it meanwhile writes the same) */
	c->sitep = site;
	pn = enter_node(site, c, __prof_tls.cur);
	__u32 node = (__u32)pn;
	uint64_t t;

	z->prev = (__u32)(pn >> 32);
	if (__builtin_expect(__prof_clock_tsc, 1)) {
		__prof_enter_mark(z, node);
		return;
	}
	/* the monotonic clock: its start marked (see __prof_now) */
	__prof_tls.cur = node;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	z->node = node;
	z->seq = __prof_tls.krec->seq;
	z->offcpu = __prof_tls.krec->offcpu_ns;
	t = __prof_clock_mono();
	z->start = t | __PROF_MONO;
	__PROF_STORE(&__prof_tls.open[node], t);
}

void __prof_leave(struct __prof_zone *z)
{
	__prof_leave_body(z);
}

/*
 * The site's newest (parent -> node); the one it held becomes the older.
 * A way is never seen half written by a zone of the same site in a
 * signal handler: its parent is ~0 (no thread's node) while it changes.
 */
static void cache_put(struct __prof_cache *c, __u32 parent, __u32 node)
{
	/* on the monotonic clock every enter takes the slow branch: its
	 * parents are marked, so that the fast path's compares fail */
	if (!__prof_clock_tsc)
		parent |= CACHE_MONO;
	c->parent2 = ~0u;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->node2 = c->node;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->parent2 = c->parent;
	c->parent = ~0u;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->node = node;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->parent = parent;
}

static __u32 enter_slow(const struct prof_site *site, struct __prof_cache *c, uint32_t *prev)
{
	struct __prof_thread *t = &__prof_tls;
	__u32 sidx, node;

	if (t->cur >= __PROF_FORKED) {
		thread_ready();
		/* the zone returns to the thread's real node, not to a marker */
		*prev = t->cur;
	}
	if (!prof_tpriv.te) {
		/* not profiled: everything lands in the sink's node 1 */
		cache_put(c, t->cur, 1);
		return 1;
	}
	if (!c->site)
		c->site = site_index(site) + 1;
	sidx = c->site - 1;
	node = node_lookup(t->cur, sidx);
	/* the overflow node is not cached: the table may never free, but a
	 * full-table entry must keep counting in 'overflow' */
	if (node != 1)
		cache_put(c, t->cur, node);
	return node;
}

/* a call of node that had no kernel facts, in a thread that is covered:
 * counted apart (see prof_node_ext.kernel_adj) */
static void call_uncovered(__u32 node)
{
	struct __prof_thread *t = &__prof_tls;

	if (!prof_tpriv.hdr || !__PROF_LOAD(&prof_tpriv.hdr->covered))
		return;
	__PROF_STORE(t->ext_used, 1);
	__PROF_ADD(&t->ext[node].kernel_adj, 1);
}

/* a switch count s falls in the zone's (a, b]: b - a switches */
static bool seq_within(__u32 s, __u32 a, __u32 b)
{
	return (__u32)(s - a) - 1 < (__u32)(b - a);
}

/* did a switch out in (a, b] (the last four of them) leave another cpu
 * than this one?  The first of them left the cpu the zone began on */
static bool left_elsewhere(__u64 cpus, __u32 a, __u32 b)
{
	__u32 here = (__u32)sched_getcpu() & 0xffff, j;

	for (j = b; j != a && b - j < 4; j--)
		if (((cpus >> (16 * (j % 4))) & 0xffff) != here)
			return true;
	return false;
}

/* the kernel word moved during the zone: d is its duration in ticks */
void __prof_leave_slow(uint32_t node, uint64_t zseq, uint64_t zoffcpu, uint64_t seq, uint64_t d)
{
	struct __prof_thread *t = &__prof_tls;
	const volatile struct prof_sched_rec *r = t->krec;
	struct prof_node_ext *n = &t->ext[node];
	__u64 off, wall = prof_ticks_to_ns(d);
	__u32 a = (__u32)zseq, b = (__u32)seq, flags = 0;

	/*
	 * Entered or left without a record (profd came or went meanwhile), or
	 * the record is no longer ours (profd handed the slot on): no facts.
	 * Nor when the record's mark is a switch out's while we run: our
	 * return to a CPU reached no sched_switch program (profsched.h), so
	 * the time away since is not in offcpu_ns, and nobody knows it.
	 */
	if (seq == PROF_SEQ_UNCOVERED || zseq == PROF_SEQ_UNCOVERED || r->gen != prof_tpriv.kgen ||
	    !(r->mark_ns & 1)) {
		call_uncovered(node);
		return;
	}
	off = r->offcpu_ns - zoffcpu;
	__PROF_STORE(t->ext_used, 1);
	/* the last involuntary and the last voluntary switch: inside the zone? */
	if (a != b && seq_within((__u32)r->preempt_seq, a, b)) {
		__PROF_ADD(&n->preempted, 1);
		flags |= PROF_EV_PREEMPTED;
	}
	if (a != b && seq_within((__u32)r->block_seq, a, b)) {
		__PROF_ADD(&n->blocked, 1);
		flags |= PROF_EV_BLOCKED;
	}
	/* moved: the kernel counted it, or a switch out left another cpu */
	if ((seq >> PROF_SCHED_SEQ_MIGR_SHIFT) != (zseq >> PROF_SCHED_SEQ_MIGR_SHIFT) ||
	    left_elsewhere(r->out_cpus, a, b)) {
		__PROF_ADD(&n->migrated, 1);
		flags |= PROF_EV_MIGRATED;
	}
	/* off-CPU time is never more than the call's wall time */
	__PROF_ADD(&n->offcpu_ns, off < wall ? off : wall);
	/* the call's event, just published: what the kernel said of it */
	if (flags) {
		struct prof_event *e = &t->ring[(__PROF_LOAD(t->ring_head) - 1) & t->ring_mask];

		__PROF_STORE(&e->dur_node,
			     __PROF_LOAD(&e->dur_node) | (__u64)flags << PROF_EV_FLAG_SHIFT);
	}
}

/* node's first count in bucket b: its block's row map gets the bit */
static void row_mark(uint32_t node, unsigned int b)
{
	__u64 *w = &__prof_tls.rowmap[(node >> PROF_HIST_SHIFT) * PROF_ROWMAP_WORDS + b / 64];

	__PROF_STORE(w, __PROF_LOAD(w) | 1ull << (b % 64));
}

/* a delta negative or longer than a day: counted, not added */
static void call_anomaly(__u32 node)
{
	struct __prof_thread *t = &__prof_tls;

	__PROF_STORE(t->ext_used, 1);
	__PROF_ADD(&t->ext[node].anomalies, 1);
	__PROF_BUMP(t->activity);
}

/* count a call of node in its bucket of the histogram: its row marked
 * first */
static void hist_count(uint32_t node, __u64 d)
{
	unsigned int b = prof_hist_bucket(d);
	__u32 *h = &__prof_tls.hist[prof_hist_index(node, b, PROF_HIST_SHIFT)];

	if (!__PROF_LOAD(h))
		row_mark(node, b);
	__PROF_ADD(h, 1);
}

/*
 * What __prof_leave does for a call: with its kernel facts (the switch
 * counts at enter, zseq and zoffcpu, and at exit, seq), or, FACTS false,
 * for one without them
 */
static void call_count(const struct prof_site *site, uint32_t node, __u64 start, __u64 d,
		       bool facts, __u64 zseq, __u64 zoffcpu, __u64 seq)
{
	struct __prof_thread *t = &__prof_tls;
	struct prof_node *n = &t->nodes[node];

	__PROF_ADD(&n->calls, 1);
	__PROF_ADD(&n->ticks, d);
	if (d > __PROF_LOAD(&n->max))
		__PROF_STORE(&n->max, d);
	hist_count(node, d);
	if (!facts)
		call_uncovered(node);
	/* a call over 2^39 ticks shows that long */
	__prof_ring_put(start, d < PROF_EV_DUR_MAX ? d : PROF_EV_DUR_MAX, node);
	if (facts && seq != zseq)
		__prof_leave_slow(node, zseq, zoffcpu, seq, d);
	__PROF_BUMP(t->activity);
	if (*site->exit_sema)
		__prof_exit_probe(site, d);
}

/*
 * The thread's kernel word changes (the agent set the limit to 0): to its
 * new record, or to none (profd went away).  Every node's kernel_adj flips
 * meaning with 'covered' (see slab.h), so each is rebased, in a window
 * readers see by cover_seq.  Runs in the thread, without a lock: the agent
 * publishes the request under pend_seq.
 */
static void cover_switch(void)
{
	struct __prof_thread *t = &__prof_tls;
	struct prof_tpriv *p = &prof_tpriv;
	struct prof_tentry *te = p->te;
	struct prof_slab_hdr *h = p->hdr;
	const struct prof_sched_rec *rec;
	__u32 s0, s1, i, was, now;
	__u64 gen;

	/* first, so a request made meanwhile brings us back here */
	__atomic_store_n(&t->limit, fast_limit(t), __ATOMIC_RELAXED);
	if (!te || !h)
		return;
	do {
		s0 = __atomic_load_n(&te->pend_seq, __ATOMIC_ACQUIRE);
		rec = __atomic_load_n(&te->pend_krec, __ATOMIC_RELAXED);
		gen = __atomic_load_n(&te->pend_gen, __ATOMIC_RELAXED);
		s1 = __atomic_load_n(&te->pend_seq, __ATOMIC_ACQUIRE);
	} while ((s0 & 1) || s0 != s1);
	if (!rec || (rec == t->krec && gen == p->kgen))
		return;
	was = __PROF_LOAD(&h->covered);
	now = rec != &prof_zero_rec;
	if (was != now) {
		__atomic_store_n(&h->cover_seq, __PROF_LOAD(&h->cover_seq) + 1, __ATOMIC_RELEASE);
		__PROF_STORE(t->ext_used, 1);
		for (i = 0; i < p->nnodes; i++) {
			__u64 calls = __PROF_LOAD(&t->nodes[i].calls);
			__u64 adj = __PROF_LOAD(&t->ext[i].kernel_adj);

			__PROF_STORE(&t->ext[i].kernel_adj, calls > adj ? calls - adj : 0);
		}
		__PROF_STORE(&h->covered, now);
		__atomic_store_n(&h->cover_seq, __PROF_LOAD(&h->cover_seq) + 1, __ATOMIC_RELEASE);
	}
	t->krec = rec;
	p->kgen = gen;
	__PROF_STORE(&h->ksched_slot, now ? te->kslot : PROF_NO_SLOT);
}

void __prof_leave_rare(struct __prof_zone *z, uint64_t d, uint64_t seq)
{
	const struct prof_site *site = z->c->sitep;
	uint32_t node = z->node;

	if (__prof_tls.cur != node)
		__prof_unbalanced(node, z->prev);
	__prof_tls.cur = z->prev;
	__PROF_STORE(&__prof_tls.open[node], 0);
	if (d > __prof_tls.limit)
		__prof_anomaly(site, node, z->start, d, z->seq, z->offcpu, seq);
	else
		call_count(site, node, z->start, d, true, z->seq, z->offcpu, seq);
}

void __prof_anomaly(const struct prof_site *site, uint32_t node, uint64_t start, uint64_t d,
		    uint64_t zseq, uint64_t zoffcpu, uint64_t seq)
{
	struct __prof_thread *t = &__prof_tls;
	__u64 day = t->day;

	/* a zone on the monotonic clock (see __prof_now): its delta is here */
	if (start & __PROF_MONO) {
		start &= ~__PROF_MONO;
		d = __prof_clock_mono() - start;
	}
	/* the fast path's limit in force: above a day an anomaly, else a
	 * call it leaves here (on the monotonic clock, or too long for an
	 * event's duration field, where it saturates) counts as it counts */
	if (__atomic_load_n(&t->limit, __ATOMIC_ACQUIRE) || !day) {
		if (day && d <= day)
			call_count(site, node, start, d, true, zseq, zoffcpu, seq);
		else
			call_anomaly(node);
		return;
	}
	/*
	 * A kernel word change waits: this call had its facts from neither
	 * word whole, so it counts without them, then the thread switches.
	 */
	if (d > day)
		call_anomaly(node);
	else
		call_count(site, node, start, d, false, 0, 0, 0);
	cover_switch();
}

/* the agent: the thread is to use rec from its next zone exit; caller
 * holds prof_rt.lock (te->fast is valid) */
void prof_cover_request(struct prof_tentry *te, const struct prof_sched_rec *rec, __u64 gen)
{
	if (!te->alive || !te->fast)
		return;
	__atomic_store_n(&te->pend_seq, te->pend_seq + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&te->pend_krec, rec, __ATOMIC_RELAXED);
	__atomic_store_n(&te->pend_gen, gen, __ATOMIC_RELAXED);
	__atomic_store_n(&te->pend_seq, te->pend_seq + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&te->fast->limit, 0, __ATOMIC_RELEASE);
}

/* is node a an ancestor of (or equal to) node b? */
static bool node_is_ancestor(__u32 a, __u32 b)
{
	struct __prof_thread *t = &__prof_tls;
	__u32 guard;

	for (guard = 0; guard <= prof_tpriv.nnodes; guard++) {
		if (a == b)
			return true;
		if (b == PROF_NODE_ROOT)
			return false;
		b = t->nodes[b].parent;
	}
	return false;
}

/* clear the open marks from node 'from' up to (not including) 'to', if
 * 'to' is an ancestor of it */
static void close_open_below(__u32 from, __u32 to)
{
	struct __prof_thread *t = &__prof_tls;
	__u32 guard;

	if (from >= prof_tpriv.nnodes || !node_is_ancestor(to, from))
		return;
	for (guard = 0; from != to && guard <= prof_tpriv.nnodes; guard++) {
		__PROF_STORE(&t->open[from], 0);
		from = t->nodes[from].parent;
	}
}

/*
 * A scope closes while another zone is current: a PROF_BEGIN inside it was
 * never ENDed.  Count it, and forget the BEGINs that are now unreachable.
 */
void __prof_unbalanced(uint32_t node, uint32_t prev)
{
	struct prof_tpriv *p = &prof_tpriv;

	/* a zone open across fork() closing in the child: move, then it is
	 * balanced after all */
	if (__prof_tls.cur == __PROF_FORKED) {
		fork_move_self();
		if (__prof_tls.cur == node)
			return;
	}
	if (p->hdr)
		__PROF_ADD(&p->hdr->unbalanced, 1);
	/* the zones opened under this one and never closed are over too */
	close_open_below(__prof_tls.cur, node);
	while (p->nbegin && !node_is_ancestor(p->begin[p->nbegin - 1].node, prev))
		p->nbegin--;
}

/* the libraries unloaded so far (glibc counts them) */
static int dl_subs_first(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_subs;
	return 1;
}

static unsigned long long dl_subs(void)
{
	unsigned long long subs = 0;

	dl_iterate_phdr(dl_subs_first, &subs);
	return subs;
}

/* whether the address is in a loaded object's segment */
static int dl_holds_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t a = (uintptr_t)arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz)
			return 1;
	}
	return 0;
}

/* a stand-in for an unloaded site: no exit probe to fire */
static volatile unsigned short gone_sema;
static const struct prof_site gone_site = {
	.name = "(unloaded)", .file = "", .func = "", .exit_sema = &gone_sema,
};

void __prof_begin(const struct prof_site *site, struct __prof_cache *c)
{
	struct prof_tpriv *p = &prof_tpriv;
	struct __prof_zone z;

	__prof_enter(&z, site, c);
	if (p->nbegin >= PROF_BEGIN_DEPTH) {
		/* too deep to track: undo the enter, count it */
		__prof_tls.cur = z.prev;
		__PROF_STORE(&__prof_tls.open[z.node], 0);
		if (p->hdr)
			__PROF_ADD(&p->hdr->unbalanced, 1);
		return;
	}
	p->begin_subs[p->nbegin] = dl_subs();
	p->begin_site[p->nbegin] = site;
	p->begin[p->nbegin++] = z;
}

void __prof_end(void)
{
	struct prof_tpriv *p = &prof_tpriv;
	struct __prof_zone *z;

	/* an END before any zone of the thread is unbalanced too: count it */
	prof_thread_ready();
	if (!p->nbegin || p->begin[p->nbegin - 1].node != __prof_tls.cur) {
		if (p->hdr)
			__PROF_ADD(&p->hdr->unbalanced, 1);
		return;
	}
	z = &p->begin[--p->nbegin];
	/*
	 * The BEGIN's library was dlclose()d since: its site descriptor and
	 * the cache in its TLS are gone with it (the END read them and
	 * crashed).  The node, the counts and the name copied into the
	 * segment are the runtime's: the call is counted there.
	 */
	if (__builtin_expect(dl_subs() != p->begin_subs[p->nbegin], 0) &&
	    !dl_iterate_phdr(dl_holds_one, (void *)(uintptr_t)p->begin_site[p->nbegin])) {
		memset(&p->gone_cache, 0, sizeof(p->gone_cache));
		p->gone_cache.sitep = &gone_site;
		z->c = &p->gone_cache;
	}
	__prof_leave(z);
}

void __prof_frame(void)
{
	struct prof_tpriv *p = &prof_tpriv;
	struct prof_slab_hdr *h;
	__u64 now = __prof_now(), d;

	prof_thread_ready();
	h = p->hdr;
	if (!h)
		return;
	if (p->last_frame) {
		d = now - p->last_frame;
		if (d <= __prof_tls.day) {
			__PROF_ADD(&h->frames, 1);
			__PROF_ADD(&h->frame_ticks, d);
			if (d > h->frame_max)
				__PROF_STORE(&h->frame_max, d);
			__PROF_ADD(&h->frame_hist[prof_hist_bucket(d)], 1);
			/* a frame is an event too: the root's node, which no zone is */
			__prof_ring_put(p->last_frame, d < PROF_EV_DUR_MAX ? d : PROF_EV_DUR_MAX,
					PROF_NODE_ROOT);
		}
	}
	p->last_frame = now;
}

void __prof_thread_name(const char *name)
{
	char buf[PROF_THREAD_NAME_MAX];
	size_t i;

	prof_thread_ready();
	if (!prof_tpriv.hdr)
		return;
	copy_str(buf, sizeof(buf), name);
	for (i = 0; i < sizeof(buf); i++)
		__PROF_STORE(&prof_tpriv.hdr->name[i], buf[i]);
}

/* annot.c's way in: the calling thread's slab (made, or moved after a
 * fork, now), NULL if it has none */
struct prof_slab_hdr *prof_thread_slab(void)
{
	prof_thread_ready();
	return __prof_tls.cur < __PROF_GONE ? prof_tpriv.hdr : NULL;
}

__u32 prof_site_register(const struct prof_site *s)
{
	return site_index(s);
}

/* region r of slab h reserved (the annotations', at a thread's first); 0
 * or -errno, counted in nospace */
int prof_region_reserve(struct prof_slab_hdr *h, enum prof_region_id r)
{
	int err = seg_reserve((__u64)((char *)h - (char *)prof_rt.seg) + prof_rt.region[r].off,
			      prof_rt.region[r].size);

	if (err)
		seg_nospace();
	return err;
}

void __prof_alloc_slow(int is_free, uint64_t bytes)
{
	prof_thread_ready();
	/* still no slab: a signal handler inside the thread's first zone, or
	 * the thread's slab went back */
	if (__prof_tls.cur >= __PROF_GONE)
		return;
	__prof_mem(is_free, bytes);
}

static void thread_mark_exited(struct prof_tpriv *p)
{
	if (__prof_tls.cur == __PROF_FORKED) {
		/* a fork child's thread that never moved: its slab is the
		 * parent's, not ours to mark */
		pthread_mutex_lock(&prof_rt.lock);
		fork_mover = false;
		if (!prof_rt.fork_pending)
			fork_drop_old();
		pthread_mutex_unlock(&prof_rt.lock);
		return;
	}
	if (!p->hdr || !p->te)
		return;
	__PROF_STORE(&p->hdr->oncpu_exit_ns, mono_ns(CLOCK_THREAD_CPUTIME_ID));
	__PROF_STORE(&p->hdr->exit_tick, __prof_now());
	__PROF_STORE(&p->hdr->state, PROF_SLAB_EXITED);
	pthread_mutex_lock(&prof_rt.lock);
	p->te->alive = false;
	p->te->fast = NULL;
	p->te->table = NULL;
	pthread_mutex_unlock(&prof_rt.lock);
}

/*
 * Exited threads (slab.h, 3.2).  Slow paths, never a zone's: a thread that
 * exits gives its slab up (it stays the thread's, shown as itself); a new
 * thread that finds no free slab folds the exited threads' profiles into
 * the aggregate, a slab of its own past the threads', and takes one of
 * their slabs, so however many threads come and go none is unprofiled,
 * nothing is lost, and the segment keeps its size.
 */

/* the marker of a thread whose slab went back (prof.h) */
#define PROF_CUR_GONE __PROF_GONE

/* the aggregate's header and its root and overflow nodes, at the first
 * fold; caller holds the lock.  0 or -errno */
static int agg_init(void)
{
	struct prof_slab_hdr *a = prof_rt_slab(prof_rt.max_threads);
	__u32 tsize = thread_table_size();
	struct prof_node *nodes;

	if (prof_rt.agg)
		return 0;
	if (!prof_rt.agg_table || prof_rt.agg_mask != tsize - 1) {
		free(prof_rt.agg_table);
		free(prof_rt.fold_map);
		prof_rt.agg_table = calloc(tsize, sizeof(__u32));
		prof_rt.fold_map = calloc(prof_rt.max_nodes, sizeof(__u32));
		if (!prof_rt.agg_table || !prof_rt.fold_map)
			return -ENOMEM;
		prof_rt.agg_mask = tsize - 1;
	}
	memset(prof_rt.agg_table, 0, (size_t)tsize * sizeof(__u32));
	if (slab_reserve(a, 2, &prof_rt.agg_res)) {
		seg_nospace();
		return -ENOSPC;
	}
	nodes = prof_rt_region(a, PROF_REGION_NODES);
	node_init(&nodes[PROF_NODE_ROOT], PROF_SITE_NONE, PROF_NODE_ROOT);
	node_init(&nodes[1], PROF_SITE_NONE, PROF_NODE_ROOT);
	copy_str(a->name, sizeof(a->name), "[exited threads]");
	a->state = PROF_SLAB_EXITED;
	a->ksched_slot = PROF_NO_SLOT;
	a->gen = 2;
	/* once: with slab and tid, what names the aggregate (a diff's match) */
	a->start_tick = prof_rt.seg->tick_base;
	/* CPU time as an image keeps it: exit - start */
	a->oncpu_start_ns = 1;
	a->oncpu_exit_ns = 1;
	a->nnodes = 2;
	__atomic_store_n(&a->magic, PROF_SLAB_MAGIC, __ATOMIC_RELEASE);
	prof_rt.agg = a;
	prof_rt.agg_nnodes = 2;
	return 0;
}

/* the aggregate's node for (parent, site), made on a miss; its overflow
 * node (1) when full or out of room */
static __u32 agg_node(__u32 parent, __u32 site)
{
	struct prof_slab_hdr *a = prof_rt.agg;
	struct prof_node *nodes = prof_rt_region(a, PROF_REGION_NODES);
	__u32 i, v, n, max = prof_rt.max_nodes;

	if (parent == 1)
		return 1;
	for (i = node_hash(parent, site) & prof_rt.agg_mask;; i = (i + 1) & prof_rt.agg_mask) {
		v = prof_rt.agg_table[i];
		if (!v)
			break;
		if (nodes[v - 1].parent == parent && nodes[v - 1].site == site)
			return v - 1;
	}
	if (prof_rt.agg_nnodes >= max)
		return 1;
	if (prof_rt.agg_nnodes >= prof_rt.agg_res &&
	    slab_reserve_nodes(a, prof_rt.agg_nnodes,
			       prof_rt.agg_nnodes + 64 < max ? prof_rt.agg_nnodes + 64 : max,
			       &prof_rt.agg_res)) {
		seg_nospace();
		return 1;
	}
	n = prof_rt.agg_nnodes++;
	node_init(&nodes[n], site, parent);
	prof_rt.agg_table[i] = n + 1;
	__atomic_store_n(&a->nnodes, prof_rt.agg_nnodes, __ATOMIC_RELEASE);
	return n;
}

/* what a slab's region r holds for node i: a pointer to it */
#define SLAB_AT(h, r, type, i) ((type *)prof_rt_region((h), (r)) + (i))

/* node j of the folding thread's slab h into node m of the aggregate a:
 * its completed calls only (an open call never ended: it is not one) */
static void fold_node(struct prof_slab_hdr *h, __u32 j, struct prof_slab_hdr *a, __u32 m)
{
	const struct prof_node *src = SLAB_AT(h, PROF_REGION_NODES, struct prof_node, j);
	struct prof_node *dst = SLAB_AT(a, PROF_REGION_NODES, struct prof_node, m);
	const __u64 *rows = SLAB_AT(h, PROF_REGION_ROWMAP, __u64,
				    (j >> PROF_HIST_SHIFT) * PROF_ROWMAP_WORDS);
	__u64 *arows = SLAB_AT(a, PROF_REGION_ROWMAP, __u64, (m >> PROF_HIST_SHIFT) * PROF_ROWMAP_WORDS);
	const __u32 *hist = prof_rt_region(h, PROF_REGION_HIST);
	__u32 *ahist = prof_rt_region(a, PROF_REGION_HIST);
	unsigned int w, b;

	/* the node's figures, each as figures.h says threads combine it */
#define FOLD_NODE(f, unit, across, window, flat, slab, key)                                       \
	PROF_FIG_IF(NODE, slab, if (PROF_FIG_IS(SUM, across)) __PROF_ADD(&dst->f, src->f);        \
		    else if (src->f > __PROF_LOAD(&dst->f)) __PROF_STORE(&dst->f, src->f);)
	PROF_NODE_COUNTS(FOLD_NODE)
	PROF_NODE_TIMES(FOLD_NODE)
#undef FOLD_NODE
	if (h->ext_used) {
		const struct prof_node_ext *x = SLAB_AT(h, PROF_REGION_EXT, struct prof_node_ext, j);
		struct prof_node_ext *y = SLAB_AT(a, PROF_REGION_EXT, struct prof_node_ext, m);
		/* the calls that had kernel facts (slab.h): the aggregate is
		 * never covered, so its kernel_adj is their count */
		__u64 kc = h->covered ? (src->calls > x->kernel_adj ? src->calls - x->kernel_adj : 0)
				      : (x->kernel_adj < src->calls ? x->kernel_adj : src->calls);

		__PROF_STORE(&a->ext_used, 1);
		/* the ext record's figures, each as figures.h says threads
		 * combine it (every one a sum) */
#define FOLD_EXT(f, unit, across, window, flat, slab, key)                                        \
	PROF_FIG_IF(EXT, slab, _Static_assert(PROF_FIG_IS(SUM, across), #f " folds as a sum");    \
		    __PROF_ADD(&y->f, x->f);)
		PROF_NODE_COUNTS(FOLD_EXT)
#undef FOLD_EXT
		__PROF_ADD(&y->kernel_adj, kc);
	}
	if (!src->calls)
		return;
	/* the buckets the node's block has rows for */
	for (w = 0; w < PROF_ROWMAP_WORDS; w++) {
		for (__u64 bits = rows[w]; bits; bits &= bits - 1) {
			__u32 v, *d;

			b = w * 64 + (unsigned int)__builtin_ctzll(bits);
			v = hist[prof_hist_index(j, b, PROF_HIST_SHIFT)];
			if (!v)
				continue;
			d = &ahist[prof_hist_index(m, b, PROF_HIST_SHIFT)];
			if (!__PROF_LOAD(d))
				__PROF_STORE(&arows[b / 64], __PROF_LOAD(&arows[b / 64]) | 1ull << (b % 64));
			__PROF_ADD(d, v);
		}
	}
}

/* the slab's thread-level counters into the aggregate's */
static void fold_hdr(struct prof_slab_hdr *h, struct prof_slab_hdr *a)
{
	struct prof_node *root = SLAB_AT(a, PROF_REGION_NODES, struct prof_node, PROF_NODE_ROOT);
	__u64 start = h->start_tick, end = h->exit_tick, cpu;
	unsigned int b;

	/* the root's ticks: the threads' wall times */
	__PROF_ADD(&root->ticks, end > start ? end - start : 0);
	cpu = h->oncpu_exit_ns > h->oncpu_start_ns ? h->oncpu_exit_ns - h->oncpu_start_ns : 0;
	/* two clocks may disagree by a little: never more CPU than wall time
	 * (a reader clamps a thread so, and cannot clamp the sum) */
	if (cpu > prof_ticks_to_ns(end > start ? end - start : 0))
		cpu = prof_ticks_to_ns(end > start ? end - start : 0);
	__PROF_ADD(&a->oncpu_exit_ns, cpu);
	if (end > __PROF_LOAD(&a->exit_tick))
		__PROF_STORE(&a->exit_tick, end);
	__PROF_ADD(&a->overflow, h->overflow);
	__PROF_ADD(&a->unbalanced, h->unbalanced);
	__PROF_ADD(&a->frames, h->frames);
	__PROF_ADD(&a->frame_ticks, h->frame_ticks);
	if (h->frame_max > __PROF_LOAD(&a->frame_max))
		__PROF_STORE(&a->frame_max, h->frame_max);
	for (b = 0; b < PROF_HIST_BUCKETS; b++)
		if (h->frame_hist[b])
			__PROF_ADD(&a->frame_hist[b], h->frame_hist[b]);
}

/* a folded slab, zeroed for its next thread (gen odd: no reader reads
 * it); atomic stores, as a reader may be finishing a copy it will drop */
static void slab_clear(struct prof_slab_hdr *h, __u32 nn)
{
	struct prof_node *nodes = prof_rt_region(h, PROF_REGION_NODES);
	struct prof_node_ext *ext = prof_rt_region(h, PROF_REGION_EXT);
	__u64 *open = prof_rt_region(h, PROF_REGION_OPEN), *rows;
	__u32 *hist = prof_rt_region(h, PROF_REGION_HIST);
	__u64 blk, blocks = prof_hist_blocks(nn, PROF_HIST_SHIFT), k;
	__u32 i, x;
	unsigned int b;

	for (i = 0; i < nn; i++) {
		__PROF_STORE(&nodes[i].calls, 0);
		__PROF_STORE(&nodes[i].ticks, 0);
		__PROF_STORE(&nodes[i].max, 0);
		__PROF_STORE(&open[i], 0);
		if (h->ext_used) {
			__u64 *w = (__u64 *)&ext[i];

			for (x = 0; x < sizeof(ext[i]) / sizeof(*w); x++)
				__PROF_STORE(&w[x], 0);
		}
	}
	for (k = 0; k < blocks; k++) {
		rows = SLAB_AT(h, PROF_REGION_ROWMAP, __u64, k * PROF_ROWMAP_WORDS);
		for (b = 0; b < PROF_HIST_BUCKETS; b++) {
			if (!(rows[b / 64] >> (b % 64) & 1))
				continue;
			blk = prof_hist_index((__u32)(k << PROF_HIST_SHIFT), b, PROF_HIST_SHIFT);
			for (x = 0; x < PROF_HIST_BLOCK; x++)
				__PROF_STORE(&hist[blk + x], 0);
		}
		for (x = 0; x < PROF_ROWMAP_WORDS; x++)
			__PROF_STORE(&rows[x], 0);
	}
	/* the event ring starts again: its events were the last thread's */
	if (prof_rt.region[PROF_REGION_RING].size)
		__atomic_store_n(&((struct prof_ring *)prof_rt_region(h, PROF_REGION_RING))->head, 0,
				 __ATOMIC_RELEASE);
	/* the annotations start again at the next thread's first */
	__atomic_store_n(&h->annot, 0, __ATOMIC_RELEASE);
	__PROF_STORE(&h->nplots, 0);
	__PROF_STORE(&h->nlocks, 0);
	__PROF_STORE(&h->annot_dropped, 0);
	__PROF_STORE(&h->annot_cut, 0);
	__PROF_STORE(&h->nnodes, 2);
	__PROF_STORE(&h->overflow, 0);
	__PROF_STORE(&h->unbalanced, 0);
	__PROF_STORE(&h->frames, 0);
	__PROF_STORE(&h->frame_ticks, 0);
	__PROF_STORE(&h->frame_max, 0);
	for (b = 0; b < PROF_HIST_BUCKETS; b++)
		__PROF_STORE(&h->frame_hist[b], 0);
	for (x = 0; x < sizeof(h->name); x++)
		__PROF_STORE(&h->name[x], 0);
	__PROF_STORE(&h->ext_used, 0);
	__PROF_STORE(&h->exit_tick, 0);
	__PROF_STORE(&h->oncpu_exit_ns, 0);
	__PROF_STORE(&h->covered, 0);
}

/* an exited thread's profile into the aggregate, inside the fold's
 * agg_seq window, in the order slab.h gives readers (fold k) */
static void thread_fold(struct prof_tentry *te, __u64 k)
{
	struct prof_seg_hdr *seg = prof_rt.seg;
	struct prof_slab_hdr *h = te->hdr, *a = prof_rt.agg;
	const struct prof_node *nodes = prof_rt_region(h, PROF_REGION_NODES);
	__u32 nn = h->nnodes, j, m, *map = prof_rt.fold_map;
	__u64 gen = h->gen;
	struct prof_fold *f = &seg->fold_ring[(k - 1) % PROF_FOLD_RING];

	for (j = 0; j < nn; j++) {
		/* the root and the overflow node are the aggregate's own */
		m = j < 2 ? j : agg_node(map[nodes[j].parent], nodes[j].site);
		map[j] = m;
		fold_node(h, j, a, m);
	}
	fold_hdr(h, a);
	__PROF_BUMP(&a->activity);
	/* the slab holds no thread: readers skip it from here */
	__atomic_store_n(&h->gen, gen + 1, __ATOMIC_RELEASE);
	__PROF_STORE(&f->slab, te->slab);
	__PROF_STORE(&f->gen, gen);
	__atomic_store_n(&seg->folds, k, __ATOMIC_RELEASE);
}

/*
 * Every exited thread that still has its slab (PROF_FOLD_RING at most)
 * into the aggregate, in one agg_seq window, and their slabs cleared and
 * free; caller holds the lock.  One window for many: a reader of the
 * aggregate races a fold seldom, however fast threads come and go.
 * False if none could be (no room for the aggregate).
 */
static bool threads_fold(void)
{
	struct prof_seg_hdr *seg = prof_rt.seg;
	__u32 seq = seg->agg_seq, n, i;
	__u64 k = seg->folds;

	if (!prof_rt.nfree || agg_init())
		return false;
	n = prof_rt.nfree < PROF_FOLD_RING ? prof_rt.nfree : PROF_FOLD_RING;
	/* a seqlock's write side: odd, then the data (release fence) */
	__atomic_store_n(&seg->agg_seq, seq + 1, __ATOMIC_RELAXED);
	prof_seq_fence_rel();
	for (i = 0; i < n; i++)
		thread_fold(prof_rt.free_te[(prof_rt.free_head + i) % prof_rt.max_threads], ++k);
	__atomic_store_n(&seg->agg_seq, seq + 2, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++) {
		struct prof_tentry *te = prof_rt.free_te[prof_rt.free_head];

		slab_clear(te->hdr, te->hdr->nnodes);
		prof_rt.clean_te[prof_rt.nclean++] = te;
		prof_rt.free_head = (prof_rt.free_head + 1) % prof_rt.max_threads;
		prof_rt.nfree--;
	}
	return true;
}

/*
 * The exiting thread gives its slab up: it stays the thread's, shown as
 * such, until a new thread finds no fresh slab and takes the oldest given
 * up (thread_reuse folds it first).  Its zones from here (a later
 * destructor's, a handler's) land in the shared sink.  Signals are held
 * meanwhile: a handler's zone would find half the pointers moved.
 */
static void thread_release(struct prof_tpriv *p)
{
	sigset_t all, old;

	/* a fork child's thread that never moved: the slab is the parent's */
	if (!p->te || !p->hdr || !prof_rt.seg || __prof_tls.cur == __PROF_FORKED)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&prof_rt.lock);
	if (!prof_rt.free_te) {
		prof_rt.free_te = calloc(prof_rt.max_threads, sizeof(*prof_rt.free_te));
		prof_rt.clean_te = calloc(prof_rt.max_threads, sizeof(*prof_rt.clean_te));
	}
	if (prof_rt.free_te && prof_rt.clean_te && prof_rt.nfree < prof_rt.max_threads) {
		prof_rt.free_te[(prof_rt.free_head + prof_rt.nfree++) % prof_rt.max_threads] = p->te;
		thread_sink_last_resort(&__prof_tls);
		__prof_tls.cur = PROF_CUR_GONE;
		p->hdr = NULL;
	}
	pthread_mutex_unlock(&prof_rt.lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void prof_thread_exit(void *arg)
{
	struct prof_tpriv *p = arg;

	/* a signal handler's zone meanwhile takes the overflow node */
	p->busy = 1;
	thread_mark_exited(p);
	thread_release(p);
	/* the lookup table goes: a zone in a later destructor (or handler)
	 * at a new site lands in the overflow node, as an unprofiled one */
	p->te = NULL;
	free(p->table);
	p->table = NULL;
	if (p->sink) {
		/* a zone in a later destructor lands in the shared last resort */
		thread_sink_last_resort(&__prof_tls);
		free(p->sink);
		p->sink = NULL;
	}
	if (p->priv) {
		thread_sink_last_resort(&__prof_tls);
		__prof_tls.cur = PROF_CUR_GONE;
		munmap(p->priv, prof_rt.slab_size);
		p->priv = NULL;
	}
	p->busy = 0;
}

/* no-color.org: NO_COLOR set and not empty */
static bool no_color(void)
{
	const char *v = getenv("NO_COLOR");

	return v && *v;
}

/* PROF_REPORT=stderr|stdout|PATH, PROF_REPORT_FORMAT=text|json (env.c) */
static void report_at_exit(void)
{
	const char *dst = prof_env.report;
	struct prof_report_opts o = { .sort = PROF_SORT_SELF, .flat_rows = 20 };
	struct prof_snapshot *s = NULL;
	FILE *f;
	int err;

	if (!dst)
		return;
	err = prof_snapshot__read(prof_rt.seg, prof_rt.seg_len, &s);
	if (err) {
		prof_warnx("failed to read own segment for the report: %s", strerror(-err));
		return;
	}
	if (prof_env.report_compensate)
		prof_snapshot__compensate(s);
	if (!strcmp(dst, "stderr")) {
		f = stderr;
		o.color = isatty(2) && !no_color();
	} else if (!strcmp(dst, "stdout")) {
		f = stdout;
		o.color = isatty(1) && !no_color();
	} else {
		f = fopen(dst, "we");
		if (!f) {
			prof_warnx("failed to open PROF_REPORT=%s: %s (want stderr, stdout or a "
				   "writable file)",
				   dst, strerror(errno));
			prof_snapshot__destroy(s);
			return;
		}
	}
	if (prof_env.report_json)
		prof_report_json(f, &s, 1);
	else
		prof_report_text(f, s, &o);
	if (f == stderr || f == stdout)
		fflush(f);
	else
		fclose(f);
	prof_snapshot__destroy(s);
}

/* PROF_SAVE=PATH: the profile as a file (proffile.h); %p in PATH is the pid */
static void save_at_exit(void)
{
	const char *dst = prof_env.save, *p;
	struct prof_snapshot *s = NULL;
	char path[4096];
	size_t n = 0;
	int err;

	if (!dst)
		return;
	for (p = dst; *p && n + 16 < sizeof(path); p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%d", (int)getpid());
			p++;
		} else {
			path[n++] = *p;
		}
	}
	path[n] = '\0';
	err = prof_snapshot__read(prof_rt.seg, prof_rt.seg_len, &s);
	if (!err)
		err = prof_file_save(path, s);
	if (err)
		prof_warnx("failed to save the profile to %s: %s", path, prof_file_strerror(err));
	prof_snapshot__destroy(s);
}

static void prof_atexit(void)
{
	/* a fork child that never profiled: prof_rt.seg is still the parent's */
	if (!prof_rt.seg || prof_rt.fork_pending)
		return;
	thread_mark_exited(&prof_tpriv);
	__PROF_STORE(&prof_rt.seg->exit_tick, __prof_now());
	__atomic_or_fetch(&prof_rt.seg->flags, PROF_SEG_EXITED, __ATOMIC_RELEASE);
	report_at_exit();
	save_at_exit();
	if (!prof_rt.keep)
		shm_unlink(prof_rt.seg_name);
}

/*
 * The child of fork() gets a segment of its own, made at its first zone
 * activity, not here: a child that only execs (system(), popen()) must
 * leave no segment behind.  Until then nothing in the child writes the
 * parent's segment: the forking thread's current node is parked on a
 * marker no per-site cache holds, so its next enter, exit, END, FRAME or
 * ALLOC takes a slow path that moves it (fork_move_self), and a thread
 * the child starts publishes the segment first (thread_init).
 */
static void prof_fork_child(void)
{
	struct prof_tpriv *p = &prof_tpriv;
	struct __prof_thread *t = &__prof_tls;
	struct prof_tentry *te, *next;

	pthread_mutex_unlock(&prof_rt.lock);
	/* the entries of the parent's threads: not ours to follow */
	for (te = prof_rt.threads; te; te = next) {
		next = te->next;
		if (te != p->te) {
			free(te->table);
			free(te);
		}
	}
	prof_rt.threads = NULL;
	prof_rt.nfree = prof_rt.free_head = prof_rt.nclean = 0;
	prof_agent__atfork_child();
	t->krec = &prof_zero_rec;
	p->kgen = 0;
	if (t->day)
		t->limit = fast_limit(t);
	if (!prof_rt.seg)
		return;
	prof_rt.fork_pending = true;
	fork_mover = t->cur != __PROF_UNINIT;
	if (fork_mover) {
		p->fork_cur = t->cur;
		t->cur = __PROF_FORKED;
	}
}

/* make the fork child's segment, with the parent's sites at the same
 * indices; caller holds the lock */
static void fork_publish_locked(void)
{
	struct prof_seg_hdr *old = prof_rt.seg;
	struct prof_site_ent *old_sites = prof_rt.sites;
	__u32 nsites = old->nsites;

	prof_rt.fork_pending = false;
	prof_rt.fork_old = old;
	prof_rt.fork_old_len = prof_rt.seg_len;
	prof_rt.seg = NULL;
	if (seg_init()) {
		prof_rt.disabled = true;
	} else {
		memcpy(prof_rt.sites, old_sites, (size_t)nsites * sizeof(*old_sites));
		prof_rt.seg->nsites = nsites;
		/* threads do not survive fork: the child's own logger, if any */
		prof_logger__atfork_child();
	}
	/* nobody left to copy from it */
	if (!fork_mover)
		fork_drop_old();
}

/* the forking thread, in the child: a slab of its own in the child's
 * segment, with its node structure (counters zero) so the per-site
 * caches, which hold node indices, stay right */
/*
 * A fork child's thread that gets no slab of its own: its site caches and
 * its zones open across fork() name the parent's nodes, up to max_nodes,
 * so a two-node sink would be written far out of bounds.  It goes on in a
 * private slab of the same geometry instead (anonymous, pages taken only
 * as touched), which nobody reads.  False if there is no memory for it.
 */
static bool fork_private_slab(struct prof_tpriv *p, struct __prof_thread *t,
			      const struct prof_node *old_nodes)
{
	struct prof_slab_hdr *hdr;
	struct prof_node *nodes;
	__u64 *open;
	void *m;
	__u32 i;

	if (!prof_rt.slab_size)
		return false;
	m = mmap(NULL, prof_rt.slab_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return false;
	hdr = m;
	nodes = prof_rt_region(hdr, PROF_REGION_NODES);
	open = prof_rt_region(hdr, PROF_REGION_OPEN);
	for (i = 0; i < p->nnodes; i++) {
		node_init(&nodes[i], old_nodes[i].site, old_nodes[i].parent);
		open[i] = t->open[i];
	}
	thread_bind_slab(t, hdr);
	p->priv = m;
	return true;
}

static void fork_move_self(void)
{
	struct prof_tpriv *p = &prof_tpriv;
	struct __prof_thread *t = &__prof_tls;
	struct prof_node *old_nodes = t->nodes;
	__u32 cur = p->fork_cur, i, idx;

	pthread_mutex_lock(&prof_rt.lock);
	if (prof_rt.fork_pending)
		fork_publish_locked();
	if (p->te && prof_rt.seg && prof_rt.seg->nslabs < prof_rt.max_threads &&
	    !slab_reserve(prof_rt_slab(prof_rt.seg->nslabs), p->nnodes, &p->res_nodes)) {
		struct prof_slab_hdr *hdr;
		struct prof_node *nodes;

		idx = prof_rt.seg->nslabs;
		hdr = prof_rt_slab(idx);
		nodes = prof_rt_region(hdr, PROF_REGION_NODES);
		memcpy(hdr->name, p->hdr->name, sizeof(hdr->name));
		for (i = 0; i < p->nnodes; i++)
			node_init(&nodes[i], old_nodes[i].site, old_nodes[i].parent);
		/* the zones open across fork() go on in the child */
		{
			__u64 *open = prof_rt_region(hdr, PROF_REGION_OPEN);

			for (i = 0; i < p->nnodes; i++)
				open[i] = t->open[i];
		}
		slab_claim(hdr);
		/* the rows the parent marked stay marked: its site caches name
		 * buckets whose rows it marked, and the thread keeps them */
		memcpy(prof_rt_region(hdr, PROF_REGION_ROWMAP), t->rowmap,
		       prof_hist_blocks(p->nnodes, PROF_HIST_SHIFT) * PROF_ROWMAP_WORDS *
			       sizeof(__u64));
		hdr->nnodes = p->nnodes;
		__atomic_store_n(&hdr->magic, PROF_SLAB_MAGIC, __ATOMIC_RELEASE);
		__atomic_store_n(&prof_rt.seg->nslabs, idx + 1, __ATOMIC_RELEASE);
		p->te->tid = (pid_t)hdr->tid;
		p->te->slab = idx;
		p->te->hdr = hdr;
		p->te->registered = false;
		p->te->next = prof_rt.threads;
		prof_rt.threads = p->te;
		p->hdr = hdr;
		p->last_frame = 0;
		thread_bind_slab(t, hdr);
		t->cur = cur;
	} else if (p->te) {
		/* no segment or no slab: counted nowhere from here */
		free(p->te);
		p->te = NULL;
		p->hdr = NULL;
		if (fork_private_slab(p, t, old_nodes)) {
			t->cur = cur;
		} else {
			thread_sink(t);
			t->cur = cur < 2 ? cur : 1;
		}
	} else {
		/* a sink thread already: its private nodes stay */
		t->cur = cur;
	}
	fork_mover = false;
	fork_drop_old();
	pthread_mutex_unlock(&prof_rt.lock);
	prof_agent__kick();
}
