/* SPDX-License-Identifier: MIT */
/*
 * prof.h - instrumented zones for C and C++, each a USDT probe.
 *
 * The whole API, and what each call costs once warm:
 *
 *	PROF_USDT(name);	zone from here to the end of the block: at
 *				enter a cache compare, an rdtsc, a few
 *				stores; at exit a call (an rdtsc, a few
 *				compares, plain stores); some 140 bytes of
 *				code at the site
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
 * Annotations (a call each, out of line; see "Annotations" below): a value
 * some 42 instructions, a plot point 68 (it reads the clock), a counted
 * mutex pair 140 over a bare lock and unlock (BENCHMARKS.md):
 *
 *	PROF_PLOT(name, v);	a number over time: a point in the thread's
 *				ring, and the plot's min/max/last/count
 *	PROF_MESSAGE(fmt, ...);	a line of text at an instant (vsnprintf on
 *				the caller's stack, cut at 111 bytes)
 *	PROF_ZONE_VALUE(v);	a number on the current call (its trace args)
 *	PROF_ZONE_TEXT(s);	a short text on it (cut at 39 bytes)
 *	PROF_MUTEX_LOCK(name, m)   pthread_mutex_lock(m), counted: an int
 *	PROF_MUTEX_UNLOCK(name, m) pthread_mutex_unlock(m), counted: an int
 *	PROF_LOCK_WAIT(name);	any lock: about to wait for it
 *	PROF_LOCK_ACQUIRED(name); got it (after a WAIT: the wait counts)
 *	PROF_LOCK_RELEASED(name); let it go (the hold counts)
 *
 * Zone names are identifiers: they are also the USDT probe names, provider
 * "prof": prof:NAME fires on enter, prof:NAME__exit on exit.  Their
 * arguments, a stable layout, 8 bytes each:
 *
 *	arg0	the zone's name (char *; a PROF_FUNC zone's is its function's,
 *		in C++ its __PRETTY_FUNCTION__)
 *	arg1	the site's file (char *)	arg2	its line
 *	arg3	exit only: the zone's duration in ns
 *
 * Each probe has a semaphore, so a probe nobody attached costs a load and a
 * not-taken branch (a zone's enter reads both of its name's at once); the
 * exit probe converts ticks to ns only while a tracer is attached.  N.B. a
 * zone fires its exit probe if that probe was attached at its enter: one
 * entered before the tracer attached does not.  PROF_FUNC sites are all the probes prof:func, func__exit:
 * their name and file:line arguments tell them apart.  A public zone's exit
 * probe gives PROF_DEFINE's file and line.
 *
 * Compilers: gcc and clang (GCC 6 and clang 9 or later: asm flag outputs),
 * C99 and later, C++11 and later, x86-64 and aarch64; no feature-test
 * macro is needed before including this header.
 *
 * The first zone of a thread takes the slow path (segment, slab, site and
 * node creation); after that nothing locks, allocates or enters the kernel.
 *
 * Environment: PROF_REPORT=stderr|PATH prints a report at exit,
 * PROF_REPORT_FORMAT=text|json, PROF_REPORT_COMPENSATE=1 (the zones' own
 * cost taken out of it), PROF_LOG_INTERVAL=SECONDS logs a line per
 * thread and zone each interval, PROF_MAX_THREADS, PROF_MAX_NODES,
 * PROF_MAX_SITES size the segment, PROF_CLOCK=mono forces clock_gettime,
 * PROF_KEEP=1 keeps the segment after a clean exit, PROF_SOCKET (or its
 * older name PROFD_SOCKET, as profctl) names profd's socket,
 * PROF_NO_DAEMON=1 never contacts profd; a bad value is named on stderr.
 *
 * Zones are safe in signal handlers: a handler's zone that interrupts its
 * thread inside the runtime's own slow path (the thread's first zone, a
 * new site or node) counts in the thread's [overflow] node, and errno is
 * kept.  N.B. a thread's first zone creates its slab (it allocates): it
 * must not be a handler's; enter one zone in the thread first.
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
/* annotations: the lock itself still taken and released */
#include <pthread.h>
#define PROF_PLOT(name, v)	do { (void)(v); } while (0)
static inline void __attribute__((format(printf, 1, 2))) __prof_message_off(const char *fmt, ...)
{
	(void)fmt;
}
#define PROF_MESSAGE(...)	do { if (0) __prof_message_off(__VA_ARGS__); } while (0)
#define PROF_ZONE_VALUE(v)	do { (void)(v); } while (0)
#define PROF_ZONE_TEXT(s)	do { (void)(s); } while (0)
#define PROF_MUTEX_LOCK(name, m)	pthread_mutex_lock(m)
#define PROF_MUTEX_UNLOCK(name, m)	pthread_mutex_unlock(m)
#define PROF_LOCK_WAIT(name)	do { } while (0)
#define PROF_LOCK_ACQUIRED(name) do { } while (0)
#define PROF_LOCK_RELEASED(name) do { } while (0)

#else /* !PROF_DISABLE */

#include <pthread.h>
#include <stdint.h>
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
	/* the exit stub: its first instruction is the probe prof:NAME__exit */
	void (*exit_probe)(const char *name, const char *file, unsigned long long line,
			   unsigned long long ns);
	/* a zone site's semaphores, enter and exit (exit_sema points here) */
	volatile unsigned short sema[2];
};

/* the layout the asm of __PROF_SITE_ASM writes */
typedef char __prof_site_layout[__builtin_offsetof(struct prof_site, sema) == 48 &&
				sizeof(struct prof_site) == 56 ? 1 : -1];

/*
 * Per site, per thread: the (parent -> node) last seen here under each of
 * a few parents, a way each, chosen by the parent's low bits (direct
 * mapped: the enter's compare is the way's, no search), so a function
 * called from several places, or recursing, finds its node without the
 * slow path; and the site's descriptor, for its exit.  A way's parent is
 * ~0 while unused (or changing).
 */
#define __PROF_WAYS	8
struct __prof_way {
	uint32_t parent;
	uint32_t node;
};
struct __prof_cache {
	struct __prof_way way[__PROF_WAYS];
	uint32_t site;		/* site index + 1, 0 = not yet registered */
	const struct prof_site *sitep; /* the site, set by every slow enter */
};

/* an open zone: on the stack of the code it measures, its address all the
 * exit (a call) takes */
struct __prof_zone {
	struct __prof_cache *c;	/* its site's (its descriptor in c->sitep) */
	uint64_t start;
	uint64_t seq;		/* kernel record at enter */
	uint64_t offcpu;
	uint32_t prev;		/* node to return to */
	uint32_t node;
};
/* the enter copies the record's first two words into seq and offcpu at once */
__PROF_STATIC_ASSERT(__builtin_offsetof(struct __prof_zone, offcpu) ==
		     __builtin_offsetof(struct __prof_zone, seq) + 8 &&
		     __builtin_offsetof(struct prof_sched_rec, seq) == 0 &&
		     __builtin_offsetof(struct prof_sched_rec, offcpu_ns) == 8,
		     "the kernel word's copy at enter");

/* the calling thread's fast-path state */
struct __prof_thread {
	struct prof_node *nodes;	/* this thread's node table, in the slab */
	uint32_t *hist;			/* its histograms (prof_hist_index) */
	uint32_t cur;			/* current node; __PROF_UNINIT before init */
	uint64_t limit;			/* a delta above this takes __prof_anomaly
					 * (above a day it is one; at most
					 * PROF_EV_DUR_MAX); 0 while a new kernel
					 * word waits for the thread (its next
					 * exit takes it) */
	uint64_t day;			/* a delta above this is an anomaly (a
					 * broken clock): a day; 0 before the
					 * thread's slab */
	const volatile struct prof_sched_rec *krec; /* kernel word, never NULL once init */
	__u64 *activity;		/* the slab's activity word, never NULL once init */
	struct prof_node_ext *ext;	/* the nodes' ext records */
	__u32 *ext_used;		/* the slab's ext_used flag */
	__u64 *rowmap;			/* the histogram blocks' row maps */
	__u64 *open;			/* per node: its open call's start, 0 if none */
	struct prof_event *ring;	/* the slab's event ring (a private slot
					 * when the ring is off) */
	__u64 *ring_head;		/* its head: events written; the events
					 * start PROF_RING_HDR_SIZE after it */
	uint64_t ring_mask;		/* events in the ring - 1 */
	void *priv;			/* the runtime's own state of the thread
					 * (NULL before its first zone) */
};

/*
 * In an open zone's node (z->node): its exit probe is to fire, as its
 * name's exit semaphore was raised at its enter (a zone entered before a
 * tracer attached fires no exit probe).  The exit's compare of the
 * current node with z->node then fails, and the exit takes its rare path,
 * which fires the probe: the common exit never reads a semaphore.  No
 * node has this bit (at most 2^22 nodes).
 */
#define __PROF_EXIT_WANTED 0x80000000U

#define __PROF_UNINIT 0xfffffffeU
#define __PROF_FORKED 0xfffffffdU	/* a fork child's thread, not moved yet */
/* a thread whose slab went back (at its exit): no site cache holds it (an
 * unused one holds ~0), so its zones take the slow path to the sink's
 * overflow node; the values from here up are no node */
#define __PROF_GONE 0xfffffffcU

extern __thread struct __prof_thread __prof_tls __attribute__((tls_model("initial-exec")));
extern int __prof_clock_tsc;

/* an enter that missed the site's way: z (its cache set) entered (cold:
 * its call is out of the site's way), its exit probe wanted if the site's
 * exit semaphore is raised */
void __prof_enter_miss(struct __prof_zone *z, const struct prof_site *site) __attribute__((cold));
/* an enter that missed both ways */
void __prof_enter_slow(struct __prof_zone *z, const struct prof_site *site);
/* a zone's exit (the cleanup of PROF_USDT's zone, the guard's destructor) */
void __prof_leave(struct __prof_zone *z);
void __prof_leave_slow(uint32_t node, uint64_t zseq, uint64_t zoffcpu, uint64_t seq, uint64_t d);
/* a zone's exit that is not the common one (zone_leave.h): d its ticks,
 * seq the kernel word's count at its end */
void __prof_leave_rare(struct __prof_zone *z, uint64_t d, uint64_t seq);
/* node with its __PROF_EXIT_WANTED, if set */
void __prof_anomaly(const struct prof_site *site, uint32_t node, uint64_t start, uint64_t d,
		    uint64_t zseq, uint64_t zoffcpu, uint64_t seq);
void __prof_unbalanced(uint32_t node, uint32_t prev);
void __prof_begin(const struct prof_site *site, struct __prof_cache *c);
void __prof_end(void);
void __prof_frame(void);
void __prof_thread_name(const char *name);
void __prof_alloc_slow(int is_free, uint64_t bytes);
void __prof_exit_probe(const struct prof_site *site, uint64_t ticks);
uint64_t __prof_clock_mono(void);

/*
 * The clock: the CPU's counter, rdtsc on x86-64 (when the TSC is
 * invariant), the virtual counter cntvct_el0 on aarch64 (its rate is
 * cntfrq_el0); with PROF_CLOCK=mono, or no usable counter, CLOCK_MONOTONIC
 * through the runtime (a call, and no feature-test macro asked of the
 * includer).
 *
 * The choice is made once, and a zone's fast path never tests it: on the
 * monotonic clock no site cache ever matches (the runtime marks the
 * parents it caches), so every enter takes its slow branch, which reads
 * that clock and marks the start with __PROF_MONO; the fast exit's delta
 * from such a start is above any limit, so the exit takes __prof_anomaly,
 * which reads the clock again.
 */
#define __PROF_MONO	(1ull << 63)	/* a zone's start on the monotonic clock */

static inline __attribute__((always_inline)) uint64_t __prof_counter(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	uint64_t t;

	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(t));
	return t;
#else
	return __prof_clock_mono();
#endif
}

static inline __attribute__((always_inline)) uint64_t __prof_now(void)
{
	if (__builtin_expect(__prof_clock_tsc, 1))
		return __prof_counter();
	return __prof_clock_mono();
}

/*
 * Relaxed, not read-modify-write: only the owning thread writes a slab.
 * On x86-64 an add is one instruction on memory (a reader sees the old
 * value or the new, never a torn one); TSan builds keep the atomics, so
 * it sees every write.
 */
#define __PROF_LOAD(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define __PROF_STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#if defined(__SANITIZE_THREAD__)
#define __PROF_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define __PROF_TSAN 1
#endif
#endif
#define __PROF_ADD(p, v)	__PROF_STORE((p), __PROF_LOAD(p) + (v))
#if defined(__x86_64__) && !defined(__PROF_TSAN)
/* the fast path's adds: __u64 (Q) and __u32 (L) */
#define __PROF_ADDQ(p, v)	__asm__ __volatile__("addq %1, %0" : "+m"(*(p)) : "er"(__PROF_CAST(uint64_t, v)))
#define __PROF_ADDL(p, v)	__asm__ __volatile__("addl %1, %0" : "+m"(*(p)) : "ir"(__PROF_CAST(uint32_t, v)))
/* after the node's counters: a reader that sees it unchanged skips the
 * slab (x86 stores are release stores; the clobber keeps them before) */
#define __PROF_BUMP(p)		__asm__ __volatile__("addq $1, %0" : "+m"(*(p)) : : "memory")
#else
#define __PROF_ADDQ(p, v)	__PROF_ADD((p), (v))
#define __PROF_ADDL(p, v)	__PROF_ADD((p), (v))
#define __PROF_BUMP(p)		__atomic_store_n((p), __PROF_LOAD(p) + 1, __ATOMIC_RELEASE)
#endif

/*
 * An enter's marks, its node known (and the node to return to in z): the
 * node made current first (a signal handler's zone of the same site is a
 * child from here on), then the kernel word and the clock, and the call
 * open for readers.
 *
 * The fast path names __prof_tls itself, never through a pointer: with
 * -fsanitize=null GCC tests a pointer's flags after an "add gottpoff", and
 * the linker's relaxation of that add into a lea leaves the flags stale.
 */
static inline __attribute__((always_inline)) void
__prof_enter_mark(struct __prof_zone *z, uint32_t node, uint32_t fl)
{
	__prof_tls.cur = node;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	z->node = node + fl;	/* | (no node has fl's bit): one lea */
#ifndef PROF_NO_KERNEL_WORD
	/* the record's seq and off-CPU time, adjacent in both: one 16-byte
	 * load and store (not a volatile read: the fence above orders it, the
	 * one below keeps it before the clock).  The kernel writes the record
	 * at this thread's switches, between its instructions: on x86-64 the
	 * one load sees both words as of one switch (two loads could see a
	 * switch between them) */
	__builtin_memcpy(&z->seq, __PROF_PTR(const void *, __PROF_PTR(uintptr_t, __prof_tls.krec)),
			 2 * sizeof(uint64_t));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#else
	z->seq = z->offcpu = 0;	/* bench/overhead only: the word's cost */
#endif
	z->start = __prof_counter();
	/* in flight: readers add its elapsed time to the node */
	__PROF_STORE(&__prof_tls.open[node], z->start);
}

/*
 * A zone's enter, at its site: the site's way for the current node, then
 * the marks; 0 when it missed (z then holds its cache and the node to
 * return to), and the site calls __prof_enter_miss (the slow enter),
 * with the site's descriptor, made only there.  The exit is a call too
 * (__prof_leave: all it needs is in the zone).  On the monotonic clock no
 * way ever matches (see __prof_now).  FL is 0, or __PROF_EXIT_WANTED when
 * the exit probe is to fire.
 */
static inline __attribute__((always_inline)) int __prof_enter_hit(struct __prof_zone *z,
								 struct __prof_cache *c, uint32_t fl)
{
	uint32_t cur = __prof_tls.cur;
	const struct __prof_way *w;

	/* the cache's address once, in a register: shorter than the TLS
	 * offsets of its fields */
	__asm__("" : "+r"(c));
	z->c = c;
	z->prev = cur;
	w = &c->way[cur & (__PROF_WAYS - 1)];
	if (__builtin_expect(w->parent != cur, 0))
		return 0;
	__prof_enter_mark(z, w->node, fl);
	return 1;
}

static inline __attribute__((always_inline)) void
__prof_enter(struct __prof_zone *z, const struct prof_site *site, struct __prof_cache *c,
	     uint32_t fl)
{
	if (!__prof_enter_hit(z, c, fl))
		__prof_enter_miss(z, site);
}

static inline __attribute__((always_inline)) void __prof_mem(int is_free, uint64_t bytes)
{
	struct prof_node_ext *n;

	if (__builtin_expect(__prof_tls.cur >= __PROF_GONE, 0)) {
		__prof_alloc_slow(is_free, bytes);
		return;
	}
	n = &__prof_tls.ext[__prof_tls.cur];
	__PROF_STORE(__prof_tls.ext_used, 1);
	if (is_free) {
		__PROF_ADDQ(&n->frees, 1);
		__PROF_ADDQ(&n->free_bytes, bytes);
	} else {
		__PROF_ADDQ(&n->allocs, 1);
		__PROF_ADDQ(&n->alloc_bytes, bytes);
	}
	__PROF_BUMP(__prof_tls.activity);
}

#ifdef __cplusplus
}
#endif

/*
 * The probe plumbing.  Each probe is a USDT note in the layout of
 * systemtap's sys/sdt.h (readelf -n, bpftrace, perf and gdb read it), with
 * these arguments, 8 bytes each:
 *
 *	prof:NAME	 arg0 name (char *), arg1 file (char *), arg2 line
 *	prof:NAME__exit	 the same, and arg3 the zone's duration in ns
 *
 * A site's descriptor, its name's two semaphores and its exit stub are defined by
 * one asm statement in the site's block, which also hands the descriptor's
 * address to the code (the lea the compiler would emit anyway), so nothing
 * C or C++ declares names a symbol defined in asm: g++ drops the asm label
 * of a block-scope extern inside a template.  .ifndef keeps one of each per
 * site and object however often the block is inlined or instantiated.
 * They live in .probes, written data: the kernel's uprobe counter (and the
 * tools that find it by that section) reach the semaphores there.  The
 * exit probe is the first instruction of the stub, a function of its own
 * with the four arguments in argument registers: the runtime's
 * __prof_exit_probe converts ticks to ns and calls it only when the exit
 * semaphore is set.  A public zone (PROF_DEFINE) is a C definition with a
 * C stub; a PROF_SCOPE site raises its name's enter semaphore.
 */
#if defined(__x86_64__)
#define __PROF_ADDR "i"		/* a symbol's address, printed by %c */
#define __PROF_STUB_ARGS "8@%%rdi 8@%%rsi 8@%%rdx 8@%%rcx"
#define __PROF_LEA(sym, op)	"lea " sym "(%%rip), %" op "\n"
#elif defined(__aarch64__)
#define __PROF_ADDR "S"
#define __PROF_STUB_ARGS "8@x0 8@x1 8@x2 8@x3"
#define __PROF_LEA(sym, op)							\
	"adrp %" op ", " sym "\n" "add %" op ", %" op ", :lo12:" sym "\n"
/* FIRE: is the semaphore SYM set (a compare on memory; DEFS, asm text,
 * first) */
#define __PROF_SEM_TEST(sym, defs, fire)					\
	do {									\
		unsigned long __prof_st;					\
		__asm__ __volatile__(defs "adrp %x1, " sym "\n\t"		\
				     "ldrh %w1, [%x1, :lo12:" sym "]\n\t"	\
				     "cmp %w1, #0"				\
				     : "=@ccne"(fire), "=&r"(__prof_st));	\
	} while (0)
#else
#error "prof.h: zones need x86-64 or aarch64; build with -DPROF_DISABLE elsewhere"
#endif

/* a note for the probe prof:PROBE at a nop here; SEMA and ARGS are asm text */
#define __PROF_NOTE(probe, sema, args)						\
	"990:\tnop\n"								\
	".pushsection .note.stapsdt,\"?\",\"note\"\n"				\
	".balign 4\n"								\
	".4byte 992f-991f, 994f-993f, 3\n"					\
	"991:\t.asciz \"stapsdt\"\n"						\
	"992:\t.balign 4\n"							\
	"993:\t.8byte 990b\n"							\
	".8byte _.stapsdt.base\n"						\
	".8byte " sema "\n"							\
	".asciz \"prof\"\n"							\
	".asciz \"" probe "\"\n"						\
	".asciz \"" args "\"\n"							\
	"994:\t.balign 4\n"							\
	".popsection\n"								\
	".ifndef _.stapsdt.base\n"						\
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"	\
	".weak _.stapsdt.base\n"						\
	".hidden _.stapsdt.base\n"						\
	"_.stapsdt.base: .space 1\n"						\
	".size _.stapsdt.base, 1\n"						\
	".popsection\n"								\
	".endif\n"

#define __PROF_ARGS3 "8@%[__a0] 8@%[__a1] 8@%[__a2]"
#define __PROF_OPS3(name, file, line)						\
	[__a0] "r"(__PROF_CAST(const char *, name)),				\
	[__a1] "r"(__PROF_CAST(const char *, file)),				\
	[__a2] "r"(__PROF_CAST(unsigned long long, line))

/*
 * The enter probe, if a tracer raised the semaphore SEMA (asm text), and
 * FL (a uint32_t lvalue) __PROF_EXIT_WANTED if one raised the exit
 * semaphore XSEMA, else 0: the compares are in asm, on memory (C cannot
 * name the semaphores, asm symbols; volatile: read at every enter); DEFS,
 * asm text, comes first.
 */
#if defined(__x86_64__)
/*
 * On x86-64 the probe itself is out of the function's way, in a cold
 * section of its own (.text.unlikely.prof<n>, one per copy of the site,
 * so that --gc-sections drops it with its function; "?": in a comdat
 * function's group), its arguments in the registers its note names,
 * saved around it below the red zone.  A name's two semaphores are
 * adjacent (__PROF_SEM_ASM): one load of 4 bytes tells that neither is
 * raised (and is then FL's 0); out of line its low half is the enter
 * count, its high half the exit one, turned into FL without a branch.
 * N.B. it was once a subsection of the function's section: one object's
 * stubs then sat at the end of its .text, counted as the sites' hot code.
 */
#define __PROF_ENTER_PROBE(probe, sema, xsema, name, defs, fl)			\
	__asm__ __volatile__(defs						\
			     "mov " sema "(%%rip), %k[__fl]\n\t"		\
			     "test %k[__fl], %k[__fl]\n\t"			\
			     "jne 995f\n"					\
			     "996:\n"						\
			     ".pushsection .text.unlikely.prof%=,\"ax?\",\"progbits\"\n" \
			     "995:\ttestw %w[__fl], %w[__fl]\n\t"		\
			     "je 997f\n\t"					\
			     "add $-128, %%rsp\n\t"				\
			     "push %%rdi\n\tpush %%rsi\n\tpush %%rdx\n\t"	\
			     "lea %c[__pn](%%rip), %%rdi\n\t"			\
			     "lea %c[__pf](%%rip), %%rsi\n\t"			\
			     "mov %[__pl], %%edx\n"				\
			     __PROF_NOTE(#probe, sema, "8@%%rdi 8@%%rsi 8@%%rdx") \
			     "pop %%rdx\n\tpop %%rsi\n\tpop %%rdi\n\t"	\
			     "sub $-128, %%rsp\n"				\
			     /* fl: the exit count's half, 0 or not, to		\
			      * __PROF_EXIT_WANTED or 0 (pushed and popped	\
			      * with the probe's registers if it is one) */	\
			     "997:\tshr $16, %k[__fl]\n\t"			\
			     "neg %k[__fl]\n\t"				\
			     "sbb %k[__fl], %k[__fl]\n\t"			\
			     "shl $31, %k[__fl]\n\t"				\
			     "jmp 996b\n"					\
			     ".popsection\n"					\
			     : [__fl] "=r"(fl)					\
			     : [__pn] __PROF_ADDR(name), [__pf] __PROF_ADDR(__FILE__), \
			     [__pl] "n"(__LINE__))
#else
#define __PROF_ENTER_PROBE(probe, sema, xsema, name, defs, fl)			\
	do {									\
		int __prof_fire;						\
		__PROF_SEM_TEST(sema, defs, __prof_fire);			\
		if (__builtin_expect(__prof_fire, 0))				\
			__asm__ __volatile__(__PROF_NOTE(#probe, sema, __PROF_ARGS3) \
					     :: __PROF_OPS3(name, __FILE__, __LINE__)); \
		__PROF_SEM_TEST(xsema, "", __prof_fire);			\
		(fl) = __prof_fire ? __PROF_EXIT_WANTED : 0;			\
	} while (0)
#endif

/*
 * The asm symbols of site ID: quoted, with the compiled file's name, so
 * that sites of two files stay apart when LTO puts both in one assembly
 * (ID is __COUNTER__, which restarts in every file), and with its name's
 * symbol, so that each instance of a C++ template is a site of its own
 * (one ID, a __PRETTY_FUNCTION__ each); inlined copies share it.  N.B. the
 * file's path must hold no '"', '\\' or '%'.
 */
#define __PROF_SYM(kind, id)	"\"__prof_" kind #id "." __BASE_FILE__ ".%c[__n]\""

/*
 * One semaphore per probe name, shared by every site of that name in the
 * program or library (hidden, one copy kept by the linker): bpftrace and
 * bcc raise only the first location's semaphore of a name several sites
 * share (each PROF_FUNC is prof:func), so a semaphore a site had to itself
 * left the other sites' probes silent.  .ifndef: one per assembly.  A
 * name's enter and exit semaphores are defined together, adjacent (the
 * enter probe's one compare reads both), in one group; only where the
 * exit's is already some other name's enter (a zone named NAME__exit) is
 * it defined alone, and the pair's second half is padding.
 */
#define __PROF_SEM(probe)	"\"__prof_sem." probe "\""
#define __PROF_SEM_DEF(probe)							\
	".weak " __PROF_SEM(probe) "\n"						\
	".hidden " __PROF_SEM(probe) "\n"					\
	__PROF_SEM(probe) ": .2byte 0\n"						\
	".size " __PROF_SEM(probe) ", 2\n"
#define __PROF_SEM_ASM(probe)							\
	".ifndef " __PROF_SEM(probe) "\n"					\
	".pushsection .probes,\"awG\",\"progbits\"," __PROF_SEM(probe) ",comdat\n" \
	".balign 4\n"								\
	__PROF_SEM_DEF(probe)							\
	".ifndef " __PROF_SEM(probe "__exit") "\n"				\
	__PROF_SEM_DEF(probe "__exit")						\
	".else\n"								\
	".2byte 0\n"								\
	".endif\n"								\
	".popsection\n"								\
	".endif\n"								\
	".ifndef " __PROF_SEM(probe "__exit") "\n"				\
	".pushsection .probes,\"awG\",\"progbits\"," __PROF_SEM(probe "__exit") ",comdat\n" \
	".balign 2\n"								\
	__PROF_SEM_DEF(probe "__exit")						\
	".popsection\n"								\
	".endif\n"

/*
 * A site: its descriptor __prof_sID (struct prof_site; exit_sema points at
 * its name's exit semaphore, sema[] is unused), its exit stub __prof_xID;
 * SP gets the descriptor's address.
 */
#define __PROF_SITE_ASM(probe, id)						\
	__PROF_SEM_ASM(probe)							\
	".ifndef " __PROF_SYM("s", id) "\n"					\
	".pushsection .probes,\"aw\",\"progbits\"\n"				\
	".balign 8\n"								\
	__PROF_SYM("s", id) ":\n"						\
	".8byte %c[__n], %c[__f], %c[__fn]\n"					\
	".4byte %c[__l], %c[__fl]\n"						\
	".8byte " __PROF_SEM(probe "__exit") ", " __PROF_SYM("x", id) "\n"	\
	".2byte 0, 0\n"								\
	".balign 8\n"								\
	".popsection\n"								\
	".pushsection .text.prof_probes,\"ax\",\"progbits\"\n"			\
	".p2align 4\n"								\
	".type " __PROF_SYM("x", id) ", @function\n"				\
	__PROF_SYM("x", id) ":\n"						\
	__PROF_NOTE(probe "__exit", __PROF_SEM(probe "__exit"), __PROF_STUB_ARGS) \
	"ret\n"									\
	".size " __PROF_SYM("x", id) ", .-" __PROF_SYM("x", id) "\n"		\
	".popsection\n"								\
	".endif\n"								\
	__PROF_LEA(__PROF_SYM("s", id), "[__sp]")
/* the site's descriptor, an expression (a zone is declarations only: a
 * statement expression, __extension__ for -Wpedantic) */
#define __PROF_SITE(name, probe, func, flags, id)				\
	__extension__({								\
		const struct prof_site *__prof_sp;				\
		__asm__(__PROF_SITE_ASM(#probe, id)				\
			: [__sp] "=r"(__prof_sp)				\
			: [__n] __PROF_ADDR(name), [__f] __PROF_ADDR(__FILE__),	\
			  [__fn] __PROF_ADDR(func), [__l] "n"(__LINE__),	\
			  [__fl] "n"(flags));					\
		__prof_sp;							\
	})

/* a public zone's exit stub: a function, its parameters the arguments */
#define __PROF_STUB_PARAMS							\
	const char *n, const char *f, unsigned long long l, unsigned long long ns
#define __PROF_STUB_BODY(probe, semp)						\
	__asm__ __volatile__(__PROF_NOTE(#probe "__exit", "%c[__s]",		\
					 __PROF_ARGS3 " 8@%[__a3]")		\
			     :: [__s] __PROF_ADDR(semp), __PROF_OPS3(n, f, l),	\
			     [__a3] "r"(ns))

#define __PROF_CACHE(id)							\
	static __thread struct __prof_cache __prof_cache_##id = {		\
		{ { 0xffffffffU, 0 }, { 0xffffffffU, 0 }, { 0xffffffffU, 0 }, { 0xffffffffU, 0 },	\
		  { 0xffffffffU, 0 }, { 0xffffffffU, 0 }, { 0xffffffffU, 0 }, { 0xffffffffU, 0 } }, 0, 0 }

/* bench/overhead's variants bring their own exit (zone_leave.h) */
#ifndef __PROF_LEAVE
#define __PROF_LEAVE	__prof_leave
#endif

/*
 * A zone: PROBE (its enter probe, a statement that sets __prof_fl) fires,
 * then the enter; the expression SITEP (its descriptor; the asm that
 * defines it, the semaphores and the exit stub) is evaluated on a miss
 * only, out of the site's way.  Declarations only: C's exit is the zone's
 * cleanup, C++'s a guard's destructor.
 */
#define __PROF_ENTER(z, c, probe, sitep)					\
	__extension__({								\
		uint32_t __prof_fl;						\
		probe;								\
		__prof_enter_hit(z, c, __prof_fl) ? 0 : (__prof_enter_miss(z, sitep), 0); \
	})
#ifdef __cplusplus
struct __prof_guard {
	struct __prof_zone *z;
	explicit __prof_guard(struct __prof_zone *zone) : z(zone) {}
	~__prof_guard() { __PROF_LEAVE(z); }
	__prof_guard(const __prof_guard &) = delete;
	__prof_guard &operator=(const __prof_guard &) = delete;
};
#define __PROF_OPEN(probe, sitep, id)						\
	__PROF_CACHE(id);							\
	struct __prof_zone __prof_z_##id;					\
	const int __prof_e_##id __attribute__((unused)) =			\
		__PROF_ENTER(&__prof_z_##id, &__prof_cache_##id, probe, sitep); \
	__prof_guard __prof_g_##id(&__prof_z_##id)
#else
#define __PROF_OPEN(probe, sitep, id)						\
	__PROF_CACHE(id);							\
	struct __prof_zone __prof_z_##id __attribute__((cleanup(__PROF_LEAVE)));	\
	const int __prof_e_##id __attribute__((unused)) =			\
		__PROF_ENTER(&__prof_z_##id, &__prof_cache_##id, probe, sitep)
#endif

#define __PROF_ZONE(name, probe, func, flags, id)				\
	__PROF_OPEN(__PROF_ENTER_PROBE(probe, __PROF_SEM(#probe), __PROF_SEM(#probe "__exit"), \
				       name, "", __prof_fl),			\
		    __PROF_SITE(name, probe, func, flags, id), id)
#define __PROF_ZONE_(name, probe, func, flags, id)				\
	__PROF_ZONE(name, probe, func, flags, id)

/* measure from here to the end of the enclosing block */
#define PROF_USDT(name)								\
	__PROF_ZONE_(#name, name, __func__, 0, __COUNTER__)

/*
 * a zone named after the enclosing function; probes prof:func.  C++
 * passes the signature: the runtime names the zone from it once, at the
 * site's first call ("geo::sum<double>", not "sum")
 */
#ifdef __cplusplus
#define __PROF_FUNC_NAME	__PRETTY_FUNCTION__
#else
#define __PROF_FUNC_NAME	__func__
#endif
#define PROF_FUNC()								\
	__PROF_ZONE_(__PROF_FUNC_NAME, func, __func__, PROF_SITE_FUNC, __COUNTER__)

/*
 * Public zones: one zone, many sites (each site still its own enter probe).
 * N.B. PROF_DEFINE in exactly one file of a program or library.  The exit
 * semaphore is its name's (__PROF_SEM_ASM, defined by the stub's asm),
 * beside the enter one its sites test.
 */
#define PROF_DEFINE(name)							\
	extern volatile unsigned short __prof_zsem_##name			\
		__asm__("__prof_sem." #name "__exit")				\
		__attribute__((visibility("hidden")));				\
	static void __prof_zstub_##name(__PROF_STUB_PARAMS)			\
	{									\
		__asm__ __volatile__(__PROF_SEM_ASM(#name));			\
		__PROF_STUB_BODY(name, &__prof_zsem_##name);			\
	}									\
	PROF_DECLARE(name);							\
	const struct prof_site prof_zone_##name = {				\
		#name, __FILE__, 0, __LINE__, PROF_SITE_PUBLIC,			\
		&__prof_zsem_##name, __prof_zstub_##name, { 0, 0 } }
#define PROF_DECLARE(name)							\
	extern const struct prof_site prof_zone_##name __asm__("prof_zone_" #name)

#define __PROF_SCOPE(name, id)							\
	__PROF_OPEN(__PROF_ENTER_PROBE(name, __PROF_SEM(#name), __PROF_SEM(#name "__exit"), \
				       #name, __PROF_SEM_ASM(#name), __prof_fl), \
		    &prof_zone_##name, id)
#define __PROF_SCOPE_(name, id)	__PROF_SCOPE(name, id)
#define PROF_SCOPE(name)	__PROF_SCOPE_(name, __COUNTER__)

/*
 * N.B. PROF_BEGIN/PROF_END pair up per thread, innermost first.  An END
 * with no open BEGIN, or whose BEGIN is not the current zone, is counted
 * in the thread's "unbalanced" and otherwise ignored.
 */
#define __PROF_BEGIN(name, id)							\
	do {									\
		__PROF_CACHE(id);						\
		uint32_t __prof_fl;						\
		__PROF_ENTER_PROBE(name, __PROF_SEM(#name), __PROF_SEM(#name "__exit"), \
				   #name, "", __prof_fl);			\
		/* the runtime reads the exit semaphore itself */		\
		(void)__prof_fl;						\
		__prof_begin(__PROF_SITE(#name, name, __func__, PROF_SITE_BEGIN, id), \
			     &__prof_cache_##id);				\
	} while (0)
#define __PROF_BEGIN_(name, id)	__PROF_BEGIN(name, id)
#define PROF_BEGIN(name)	__PROF_BEGIN_(name, __COUNTER__)
#define PROF_END()		__prof_end()

#define PROF_FRAME()		__prof_frame()
#define PROF_ALLOC(bytes)	__prof_mem(0, __PROF_CAST(uint64_t, bytes))
#define PROF_FREE(bytes)	__prof_mem(1, __PROF_CAST(uint64_t, bytes))
#define PROF_THREAD_NAME(s)	__prof_thread_name(s)

/*
 * Annotations: per thread, lock-free, bounded (slab.h's rings and tables),
 * readable live and after a crash, as zones are; each a call into the
 * runtime (usdt/annot.c), never a change to a zone's own code.
 *
 * Names are identifiers, as zones': a name is one plot or one lock in the
 * whole process, whatever file or library uses it (no declaration
 * needed).  N.B. a name's first use on a thread is a slow path (it may
 * lock and allocate): not from a signal handler; and a thread's first
 * annotation makes its slab if no zone has (as its first zone would).
 *
 * What bad input does (each counted in the thread's annot_dropped or
 * annot_cut, never written out of its entry):
 *  - a value of any arithmetic type is converted to double; a NaN or an
 *    infinity is dropped (a plot keeps finite numbers only);
 *  - a NULL text is the empty text; a longer text is cut at its entry's
 *    length (a message 111 bytes, a zone text 39);
 *  - a value or text outside any zone is dropped;
 *  - a message (or any annotation) from a signal handler that interrupts
 *    one of its own thread's annotations is dropped; one that does not is
 *    kept.  The formatting is vsnprintf, as async-signal-safe as the
 *    format (%d, %s and %x are, in glibc; %f takes the locale);
 *  - a release of a lock the thread does not hold is counted (unheld) and
 *    otherwise ignored; a second acquire of a held name (recursion, or two
 *    locks given one name) nests: the hold runs from the first acquire to
 *    the last release;
 *  - more than PROF_PLOTS_MAX plots, or PROF_LOCKS_MAX (lock, zone) pairs,
 *    on a thread: the extra ones are dropped.
 */
#ifdef __cplusplus
extern "C" {
#endif
struct __prof_aname {		/* a plot's or lock's name, one per site */
	const char *name;
	unsigned int flags;	/* PROF_SITE_PLOT or PROF_SITE_LOCK */
};
struct __prof_acache {		/* per site and thread: where its name is */
	uint32_t epoch;		/* the thread's binding it was found in */
	uint32_t slot;		/* the plot's, or the lock name's, index */
	uint32_t node;		/* a lock: the zone lslot is for */
	uint32_t lslot;		/* a lock: (lock, zone)'s index */
};
void __prof_plot(const struct __prof_aname *n, struct __prof_acache *c, double v);
void __prof_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void __prof_zone_value(double v);
void __prof_zone_text(const char *s);
void __prof_lock_wait(const struct __prof_aname *n, struct __prof_acache *c);
void __prof_lock_acquired(const struct __prof_aname *n, struct __prof_acache *c);
void __prof_lock_released(const struct __prof_aname *n, struct __prof_acache *c);
/* a counted mutex: its site's trylock took it, or said err (cold: a wait) */
void __prof_mutex_took(const struct __prof_aname *n, struct __prof_acache *c);
int __prof_mutex_wait(const struct __prof_aname *n, struct __prof_acache *c, pthread_mutex_t *m,
		      int err) __attribute__((cold));
int __prof_mutex_unlock(const struct __prof_aname *n, struct __prof_acache *c, pthread_mutex_t *m);
#ifdef __cplusplus
}
#endif

/* a name's descriptor and cache, in the block of its use */
#define __PROF_ANAME(name, fl, id)						\
	static const struct __prof_aname __prof_an_##id = { #name, fl };	\
	static __thread struct __prof_acache __prof_ac_##id
#define __PROF_ACALL(name, fl, fn, id)						\
	do {									\
		__PROF_ANAME(name, fl, id);					\
		fn(&__prof_an_##id, &__prof_ac_##id);				\
	} while (0)
#define __PROF_PLOT(name, v, id)						\
	do {									\
		__PROF_ANAME(name, PROF_SITE_PLOT, id);				\
		__prof_plot(&__prof_an_##id, &__prof_ac_##id, __PROF_CAST(double, v)); \
	} while (0)
/* the trylock at the site: the runtime's common acquisition is then a
 * leaf, with no frame to keep the mutex across the trylock's call */
#define __PROF_MUTEX_LOCK(name, m, id)						\
	__extension__({								\
		__PROF_ANAME(name, PROF_SITE_LOCK, id);				\
		pthread_mutex_t *__prof_m_##id = (m);				\
		int __prof_e_##id = pthread_mutex_trylock(__prof_m_##id);	\
		if (__builtin_expect(!__prof_e_##id, 1))			\
			__prof_mutex_took(&__prof_an_##id, &__prof_ac_##id);	\
		else								\
			__prof_e_##id = __prof_mutex_wait(&__prof_an_##id, &__prof_ac_##id, \
							  __prof_m_##id, __prof_e_##id); \
		__prof_e_##id;							\
	})
#define __PROF_MUTEX(name, m, fn, id)						\
	__extension__({								\
		__PROF_ANAME(name, PROF_SITE_LOCK, id);				\
		fn(&__prof_an_##id, &__prof_ac_##id, (m));			\
	})
#define __PROF_PLOT_(name, v, id)	__PROF_PLOT(name, v, id)
#define __PROF_ACALL_(name, fl, fn, id)	__PROF_ACALL(name, fl, fn, id)
#define __PROF_MUTEX_(name, m, fn, id)	__PROF_MUTEX(name, m, fn, id)
#define __PROF_MUTEX_LOCK_(name, m, id)	__PROF_MUTEX_LOCK(name, m, id)

#define PROF_PLOT(name, v)	__PROF_PLOT_(name, v, __COUNTER__)
#define PROF_MESSAGE(...)	__prof_message(__VA_ARGS__)
#define PROF_ZONE_VALUE(v)	__prof_zone_value(__PROF_CAST(double, v))
#define PROF_ZONE_TEXT(s)	__prof_zone_text(s)
#define PROF_MUTEX_LOCK(name, m)						\
	__PROF_MUTEX_LOCK_(name, m, __COUNTER__)
#define PROF_MUTEX_UNLOCK(name, m)						\
	__PROF_MUTEX_(name, m, __prof_mutex_unlock, __COUNTER__)
#define PROF_LOCK_WAIT(name)							\
	__PROF_ACALL_(name, PROF_SITE_LOCK, __prof_lock_wait, __COUNTER__)
#define PROF_LOCK_ACQUIRED(name)						\
	__PROF_ACALL_(name, PROF_SITE_LOCK, __prof_lock_acquired, __COUNTER__)
#define PROF_LOCK_RELEASED(name)						\
	__PROF_ACALL_(name, PROF_SITE_LOCK, __prof_lock_released, __COUNTER__)

#endif /* PROF_DISABLE */

#endif /* PROF_H */
