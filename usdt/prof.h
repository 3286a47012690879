/* SPDX-License-Identifier: MIT */
/*
 * prof.h - instrumented zones for C and C++, each a USDT probe.
 *
 * The whole API, and what each call costs once warm:
 *
 *	PROF_USDT(name);	zone from here to the end of the block: two
 *				rdtsc, a cache compare, a few plain stores
 *	PROF_FUNC();		the same, named after the enclosing function
 *	PROF_DEFINE(name)	file scope: a public zone, shared by sites
 *	PROF_DECLARE(name)	file scope: refer to a public zone elsewhere
 *	PROF_SCOPE(name);	a site of a public zone (as PROF_USDT)
 *	PROF_BEGIN(name);	open a zone without a scope (as PROF_USDT)
 *	PROF_END();		close the innermost PROF_BEGIN: a call, a
 *				compare; an unbalanced END is counted, ignored
 *	PROF_FRAME();		a frame boundary: a call
 *	PROF_ALLOC(bytes);	allocation charged to the current zone: stores
 *	PROF_FREE(bytes);	the same, for a free
 *	PROF_THREAD_NAME(s);	name this thread in reports: a call
 *
 * Zone names are identifiers: they are also the USDT probe names, provider
 * "prof": prof:NAME fires on enter (arg0: the site descriptor), and
 * prof:NAME__exit on exit (arg0: the site, arg1: duration in ticks).  Each
 * probe has a semaphore, so a probe nobody attached costs a load and a
 * not-taken branch.  PROF_FUNC sites are the probes prof:func, func__exit.
 *
 * The first zone of a thread takes the slow path (segment, slab, site and
 * node creation); after that nothing locks, allocates or enters the kernel.
 *
 * Environment: PROF_REPORT=stderr|PATH prints a report at exit,
 * PROF_REPORT_FORMAT=text|json, PROF_LOG_INTERVAL=SECONDS logs a line per
 * thread and zone each interval, PROF_MAX_THREADS, PROF_MAX_NODES,
 * PROF_MAX_SITES size the segment, PROF_CLOCK=mono forces clock_gettime,
 * PROF_KEEP=1 keeps the segment after a clean exit, PROF_SOCKET (or its
 * older name PROFD_SOCKET, as profctl) names profd's socket,
 * PROF_NO_DAEMON=1 never contacts profd; a bad value is named on stderr.
 *
 * -DPROF_DISABLE compiles every macro to nothing.
 */
#ifndef PROF_H
#define PROF_H

#define PROF_VERSION_MAJOR 0
#define PROF_VERSION_MINOR 1
#define PROF_VERSION ((PROF_VERSION_MAJOR << 16) | PROF_VERSION_MINOR)

#ifdef PROF_DISABLE

#define PROF_USDT(name)		do { } while (0)
#define PROF_FUNC()		do { } while (0)
#define PROF_DEFINE(name)
#define PROF_DECLARE(name)
#define PROF_SCOPE(name)	do { } while (0)
#define PROF_BEGIN(name)	do { } while (0)
#define PROF_END()		do { } while (0)
#define PROF_FRAME()		do { } while (0)
#define PROF_ALLOC(bytes)	do { (void)(bytes); } while (0)
#define PROF_FREE(bytes)	do { (void)(bytes); } while (0)
#define PROF_THREAD_NAME(s)	do { (void)(s); } while (0)

#else /* !PROF_DISABLE */

#ifndef _SDT_HAS_SEMAPHORES
#define _SDT_HAS_SEMAPHORES 1
#endif
#if defined(__has_include) && !__has_include(<sys/sdt.h>)
#error "prof.h needs <sys/sdt.h>: install systemtap-sdt-dev (Debian) or systemtap-sdt-devel (Fedora), or build with -DPROF_DISABLE"
#endif
#include <sys/sdt.h>
#include <stdint.h>
#include <time.h>
#include "slab.h"
#include "profsched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a zone site's descriptor: static const, one per site (or public zone) */
struct prof_site {
	const char *name;
	const char *file;
	const char *func;
	unsigned int line;
	unsigned int flags;	/* PROF_SITE_* from slab.h */
	volatile unsigned short *exit_sema;
	const void *exit_probe;	/* the exit stub: code, called as __prof_exit_fn */
};

typedef void (*__prof_exit_fn)(const struct prof_site *site, unsigned long long ticks);

/* per site, per thread: the last (parent -> node) seen here */
struct __prof_cache {
	uint32_t parent;	/* ~0 until first use */
	uint32_t node;
	uint32_t site;		/* site index + 1, 0 = not yet registered */
};

/* an open zone: on the stack of the code it measures */
struct __prof_zone {
	const struct prof_site *site;
	uint64_t start;
	uint64_t seq;		/* kernel record at enter */
	uint64_t offcpu;
	uint32_t prev;		/* node to return to */
	uint32_t node;
};

/* the calling thread's fast-path state */
struct __prof_thread {
	struct prof_node *nodes;	/* this thread's node table, in the slab */
	uint32_t *hist;			/* its histograms (prof_hist_index) */
	uint32_t cur;			/* current node; __PROF_UNINIT before init */
	uint32_t __pad;
	uint64_t limit;			/* a delta above this is an anomaly; 0
					 * while a new kernel word waits for the
					 * thread (its next exit takes it) */
	const volatile struct prof_sched_rec *krec; /* kernel word, never NULL once init */
	__u64 *activity;		/* the slab's activity word, never NULL once init */
	struct prof_node_ext *ext;	/* the nodes' ext records */
	__u32 *ext_used;		/* the slab's ext_used flag */
	__u64 *rowmap;			/* the histogram blocks' row maps */
	__u64 *open;			/* per node: its open call's start, 0 if none */
};

#define __PROF_UNINIT 0xfffffffeU
#define __PROF_FORKED 0xfffffffdU	/* a fork child's thread, not moved yet */

extern __thread struct __prof_thread __prof_tls __attribute__((tls_model("initial-exec")));
extern int __prof_clock_tsc;

uint32_t __prof_enter_slow(const struct prof_site *site, struct __prof_cache *c, uint32_t *prev);
void __prof_leave_slow(struct __prof_zone *z, uint64_t seq, uint64_t d);
void __prof_anomaly(struct __prof_zone *z, uint64_t d);
void __prof_row_mark(uint32_t node, unsigned int b);
void __prof_unbalanced(struct __prof_zone *z);
void __prof_begin(const struct prof_site *site, struct __prof_cache *c);
void __prof_end(void);
void __prof_frame(void);
void __prof_thread_name(const char *name);
void __prof_alloc_slow(int is_free, uint64_t bytes);

static inline __attribute__((always_inline)) uint64_t __prof_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(__prof_clock_tsc, 1))
		return __builtin_ia32_rdtsc();
#endif
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
}

/* relaxed, not read-modify-write: only the owning thread writes a slab */
#define __PROF_LOAD(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define __PROF_STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define __PROF_ADD(p, v)	__PROF_STORE((p), __PROF_LOAD(p) + (v))
/* after the node's counters: a reader that sees it unchanged skips the slab */
#define __PROF_BUMP(p)		__atomic_store_n((p), __PROF_LOAD(p) + 1, __ATOMIC_RELEASE)

/*
 * The fast path names __prof_tls itself, never through a pointer: with
 * -fsanitize=null GCC tests a pointer's flags after an "add gottpoff", and
 * the linker's relaxation of that add into a lea leaves the flags stale.
 */
static inline __attribute__((always_inline)) void
__prof_enter(struct __prof_zone *z, const struct prof_site *site, struct __prof_cache *c)
{
	z->prev = __prof_tls.cur;
	if (__builtin_expect(c->parent == z->prev, 1))
		z->node = c->node;
	else
		z->node = __prof_enter_slow(site, c, &z->prev);
	__prof_tls.cur = z->node;
	z->site = site;
#ifndef PROF_NO_KERNEL_WORD
	z->seq = __prof_tls.krec->seq;
	z->offcpu = __prof_tls.krec->offcpu_ns;
#else
	z->seq = z->offcpu = 0;
#endif
	z->start = __prof_now();
	/* in flight: readers add its elapsed time to the node */
	__PROF_STORE(&__prof_tls.open[z->node], z->start);
}

static inline __attribute__((always_inline)) void __prof_leave(struct __prof_zone *z)
{
	uint64_t d = __prof_now() - z->start;
	struct prof_node *n;
	uint32_t *h, hc;
	unsigned int b;
#ifndef PROF_NO_KERNEL_WORD
	uint64_t seq = __prof_tls.krec->seq;
#else
	uint64_t seq = 0;	/* bench/overhead only: the word's cost */
#endif

	if (__builtin_expect(__prof_tls.cur != z->node, 0))
		__prof_unbalanced(z);
	/* after the check: in a fork child it moves the node table */
	n = &__prof_tls.nodes[z->node];
	__prof_tls.cur = z->prev;
	__PROF_STORE(&__prof_tls.open[z->node], 0);
	/* unsigned: a negative delta is huge too */
	if (__builtin_expect(d > __prof_tls.limit, 0)) {
		__prof_anomaly(z, d);
		return;
	}
	__PROF_ADD(&n->calls, 1);
	__PROF_ADD(&n->ticks, d);
	if (d > __PROF_LOAD(&n->max))
		__PROF_STORE(&n->max, d);
	b = prof_hist_bucket(d);
	h = &__prof_tls.hist[prof_hist_index(z->node, b, PROF_HIST_SHIFT)];
	hc = __PROF_LOAD(h);
	__PROF_STORE(h, hc + 1);
	/* the node's first count in this bucket: the block's row map says so */
	if (__builtin_expect(!hc, 0))
		__prof_row_mark(z->node, b);
	if (__builtin_expect(seq != z->seq, 0))
		__prof_leave_slow(z, seq, d);
	__PROF_BUMP(__prof_tls.activity);
	if (__builtin_expect(*z->site->exit_sema, 0))
		((__prof_exit_fn)(uintptr_t)z->site->exit_probe)(z->site, d);
}

static inline __attribute__((always_inline)) void __prof_mem(int is_free, uint64_t bytes)
{
	struct prof_node_ext *n;

	if (__builtin_expect(__prof_tls.cur >= __PROF_FORKED, 0)) {
		__prof_alloc_slow(is_free, bytes);
		return;
	}
	n = &__prof_tls.ext[__prof_tls.cur];
	__PROF_STORE(__prof_tls.ext_used, 1);
	if (is_free) {
		__PROF_ADD(&n->frees, 1);
		__PROF_ADD(&n->free_bytes, bytes);
	} else {
		__PROF_ADD(&n->allocs, 1);
		__PROF_ADD(&n->alloc_bytes, bytes);
	}
	__PROF_BUMP(__prof_tls.activity);
}

#ifdef __cplusplus
}
#endif

/*
 * The probe plumbing.  Semaphores and the exit stub are emitted from asm
 * inside the function (C has no other way to define file-scope symbols
 * from a block); .ifndef keeps one per name per object, .weak .hidden one
 * per name per DSO.  The exit stub is a tiny function whose first
 * instruction is the prof:NAME__exit probe, with its two arguments in the
 * argument registers: the generic exit path calls it only when the
 * semaphore says somebody listens.
 */
#define __PROF_STR_(x) #x
#define __PROF_STR(x) __PROF_STR_(x)

#define __PROF_SEMA_ASM(probe)							\
	".ifndef prof_" #probe "_semaphore\n"					\
	".pushsection .probes,\"aw\",@progbits\n"				\
	".weak prof_" #probe "_semaphore\n"					\
	".hidden prof_" #probe "_semaphore\n"					\
	".p2align 1\n"								\
	"prof_" #probe "_semaphore: .hword 0\n"					\
	".popsection\n"								\
	".endif\n"

/*
 * STAP_PROBE_ASM(prof, NAME__exit, 8@%rdi 8@%rsi), spelled as sdt.h's C99
 * branch spells it: its other branch, the one C++ gets (no
 * __STDC_VERSION__), does not quote the arguments and cannot compile.
 */
#define __PROF_EXIT_NOTE(probe)							\
	_SDT_ASM_BODY(prof, probe##__exit, _SDT_ASM_SUBSTR, (8@%rdi 8@%rsi))	\
	_SDT_ASM_BASE

#define __PROF_STUB_ASM(probe, stub)						\
	".ifndef " stub "\n"							\
	".pushsection .text.prof_probes,\"ax\",@progbits\n"					\
	".p2align 4\n"								\
	stub ":\n"								\
	__PROF_EXIT_NOTE(probe)							\
	"ret\n"									\
	".popsection\n"								\
	".endif\n"

#define __PROF_PROBES_ASM(probe, stub)						\
	__asm__(__PROF_SEMA_ASM(probe) __PROF_SEMA_ASM(probe##__exit)		\
		__PROF_STUB_ASM(probe, stub))

/*
 * The asm labels name the symbols the asm above defines: without them C++
 * would look for mangled names (a zone in a namespace), and a zone in an
 * unnamed namespace would declare an internal function it never defines
 * (hence the stub is declared as bytes, and called through a cast).
 */
#define __PROF_EXTERNS(probe, id)						\
	extern volatile unsigned short prof_##probe##_semaphore			\
		__asm__("prof_" #probe "_semaphore")				\
		__attribute__((visibility("hidden")));				\
	extern volatile unsigned short prof_##probe##__exit_semaphore		\
		__asm__("prof_" #probe "__exit_semaphore")			\
		__attribute__((visibility("hidden")));				\
	extern const char __prof_x##id[]					\
		__asm__("__prof_x" #id) __attribute__((visibility("hidden")))

#define __PROF_ENTER_PROBE(probe, sitep)					\
	do {									\
		if (__builtin_expect(prof_##probe##_semaphore, 0))		\
			STAP_PROBE1(prof, probe, sitep);			\
	} while (0)

#define __PROF_DESC(name, probe, func, flags, id)				\
	static const struct prof_site __prof_site_##id = {			\
		name, __FILE__, func, __LINE__, flags,				\
		&prof_##probe##__exit_semaphore, __prof_x##id }

#define __PROF_CACHE(id)							\
	static __thread struct __prof_cache __prof_cache_##id = { 0xffffffffU, 0, 0 }

#ifdef __cplusplus
struct __prof_guard {
	struct __prof_zone z;
	__prof_guard(const struct prof_site *s, struct __prof_cache *c) { __prof_enter(&z, s, c); }
	~__prof_guard() { __prof_leave(&z); }
	__prof_guard(const __prof_guard &) = delete;
	__prof_guard &operator=(const __prof_guard &) = delete;
};
#define __PROF_OPEN(sitep, id)							\
	__PROF_CACHE(id);							\
	__prof_guard __prof_g_##id(sitep, &__prof_cache_##id)
#else
#define __PROF_OPEN(sitep, id)							\
	__PROF_CACHE(id);							\
	struct __prof_zone __prof_z_##id __attribute__((cleanup(__prof_leave)));	\
	__prof_enter(&__prof_z_##id, sitep, &__prof_cache_##id)
#endif

#define __PROF_ZONE(name, probe, func, flags, id)				\
	__PROF_EXTERNS(probe, id);						\
	__PROF_PROBES_ASM(probe, "__prof_x" #id);				\
	__PROF_DESC(name, probe, func, flags, id);				\
	__PROF_ENTER_PROBE(probe, &__prof_site_##id);				\
	__PROF_OPEN(&__prof_site_##id, id)
#define __PROF_ZONE_(name, probe, func, flags, id)				\
	__PROF_ZONE(name, probe, func, flags, id)

/* measure from here to the end of the enclosing block */
#define PROF_USDT(name)								\
	__PROF_ZONE_(#name, name, __func__, 0, __COUNTER__)

/* a zone named after the enclosing function; probes prof:func */
#define PROF_FUNC()								\
	__PROF_ZONE_(__func__, func, __func__, PROF_SITE_FUNC, __COUNTER__)

/*
 * Public zones: one zone, many sites (each site still its own enter probe).
 * N.B. PROF_DEFINE in exactly one file of a program or library.
 */
#define __PROF_DEFINE(name, id)							\
	__asm__(__PROF_SEMA_ASM(name) __PROF_SEMA_ASM(name##__exit)		\
		__PROF_STUB_ASM(name, "prof_zone_" #name "__x"));		\
	extern volatile unsigned short prof_##name##__exit_semaphore		\
		__asm__("prof_" #name "__exit_semaphore")			\
		__attribute__((visibility("hidden")));				\
	extern const char prof_zone_##name##__x[]				\
		__asm__("prof_zone_" #name "__x")				\
		__attribute__((visibility("hidden")));				\
	extern const struct prof_site prof_zone_##name;				\
	const struct prof_site prof_zone_##name = {				\
		#name, __FILE__, 0, __LINE__, PROF_SITE_PUBLIC,			\
		&prof_##name##__exit_semaphore, prof_zone_##name##__x }
#define PROF_DEFINE(name)	__PROF_DEFINE(name, __COUNTER__)
#define PROF_DECLARE(name)	extern const struct prof_site prof_zone_##name

#define __PROF_SCOPE(name, id)							\
	extern volatile unsigned short prof_##name##_semaphore			\
		__asm__("prof_" #name "_semaphore")				\
		__attribute__((visibility("hidden")));				\
	__asm__(__PROF_SEMA_ASM(name) __PROF_SEMA_ASM(name##__exit));		\
	__PROF_ENTER_PROBE(name, &prof_zone_##name);				\
	__PROF_OPEN(&prof_zone_##name, id)
#define __PROF_SCOPE_(name, id)	__PROF_SCOPE(name, id)
#define PROF_SCOPE(name)	__PROF_SCOPE_(name, __COUNTER__)

/*
 * N.B. PROF_BEGIN/PROF_END pair up per thread, innermost first.  An END
 * with no open BEGIN, or whose BEGIN is not the current zone, is counted
 * in the thread's "unbalanced" and otherwise ignored.
 */
#define __PROF_BEGIN(name, id)							\
	do {									\
		__PROF_EXTERNS(name, id);					\
		__PROF_PROBES_ASM(name, "__prof_x" #id);			\
		__PROF_DESC(#name, name, __func__, PROF_SITE_BEGIN, id);	\
		__PROF_CACHE(id);						\
		__PROF_ENTER_PROBE(name, &__prof_site_##id);			\
		__prof_begin(&__prof_site_##id, &__prof_cache_##id);		\
	} while (0)
#define __PROF_BEGIN_(name, id)	__PROF_BEGIN(name, id)
#define PROF_BEGIN(name)	__PROF_BEGIN_(name, __COUNTER__)
#define PROF_END()		__prof_end()

#define PROF_FRAME()		__prof_frame()
#define PROF_ALLOC(bytes)	__prof_mem(0, (uint64_t)(bytes))
#define PROF_FREE(bytes)	__prof_mem(1, (uint64_t)(bytes))
#define PROF_THREAD_NAME(s)	__prof_thread_name(s)

#endif /* PROF_DISABLE */

#endif /* PROF_H */
