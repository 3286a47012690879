/* SPDX-License-Identifier: MIT */
/*
 * zone_leave.h - a zone's exit, out of line: the runtime's __prof_leave
 * (usdt/prof_slow.c), which every site calls, and bench/overhead's variants built
 * without the kernel word or the event ring (PROF_NO_KERNEL_WORD,
 * PROF_NO_RING, bench only).  Not installed: include after prof.h.
 */
#ifndef PROF_ZONE_LEAVE_H
#define PROF_ZONE_LEAVE_H

#include "prof.h"

/* the call that just ended, into the thread's event ring (slab.h); d at
 * most PROF_EV_DUR_MAX (the fast path's limit is no more: a longer call
 * takes __prof_anomaly, which saturates it) */
static inline __attribute__((always_inline)) void __prof_ring_put(uint64_t start, uint64_t d,
								  uint32_t node)
{
#ifndef PROF_NO_RING
	__u64 *hp = __prof_tls.ring_head; /* once: the stores below may alias */
	uint64_t h = __PROF_LOAD(hp);
	/* the event from the head (struct prof_ring: the events
	 * PROF_RING_HDR_SIZE after it), not from __prof_tls.ring: one load
	 * less; on x86-64 both stores address it as the head plus the
	 * event's offset (gcc would spend an lea on it) */
	uint64_t o = (h & __prof_tls.ring_mask) * sizeof(struct prof_event);
	uint64_t dn = d << PROF_EV_DUR_SHIFT | node;
#if defined(__x86_64__) && !defined(__PROF_TSAN)
	__asm__ __volatile__("movq %[s], %c[e0](%[hp],%[o])\n\t"
			     "movq %[dn], %c[e1](%[hp],%[o])"
			     :
			     : [hp] "r"(hp), [o] "r"(o), [s] "r"(start), [dn] "r"(dn),
			       [e0] "i"(PROF_RING_HDR_SIZE),
			       [e1] "i"(PROF_RING_HDR_SIZE + sizeof(__u64))
			     : "memory");
#else
	struct prof_event *e =
		__PROF_PTR(struct prof_event *, __PROF_PTR(uintptr_t, hp) + PROF_RING_HDR_SIZE + o);

	__PROF_STORE(&e->start, start);
	__PROF_STORE(&e->dur_node, dn);
#endif
	/* on x86-64 one add on memory, h's register free (a store, as
	 * release as any x86 store; only this thread writes the head) */
	__PROF_BUMP(hp);
#else
	(void)start, (void)d, (void)node; /* bench/overhead only: the ring's cost */
	__PROF_BUMP(__prof_tls.activity); /* ... but what readers see of the exit kept */
#endif
}

/* is *p 0: on x86-64 a compare on memory (the counter's value is not
 * wanted in a register; the add that follows is on memory too) */
static inline __attribute__((always_inline)) int __prof_zero32(const uint32_t *p)
{
#if defined(__x86_64__) && !defined(__PROF_TSAN)
	int z;

	__asm__("cmpl $0, %[m]" : "=@cce"(z) : [m] "m"(*p));
	return z;
#else
	return __PROF_LOAD(p) == 0;
#endif
}

/*
 * A call counted, its histogram counter h found: everything a call
 * changes, in the order a reader relies on: the counters, then the call's
 * event and the ring head, which readers add to the activity word (slab.h:
 * the exit bumps no word of its own).  Its exit probe is not wanted (see
 * __PROF_EXIT_WANTED).
 */
static inline __attribute__((always_inline)) void
__prof_leave_count(struct __prof_zone *z, uint64_t d, uint32_t *h)
{
	uint32_t node = z->node;
	struct prof_node *n;

	__prof_tls.cur = z->prev;
	__PROF_STORE(&__prof_tls.open[node], 0);
	n = &__prof_tls.nodes[node];
	__PROF_ADDQ(&n->calls, 1);
	__PROF_ADDQ(&n->ticks, d);
	/* a plain read: only this thread writes it */
	if (d > n->max)
		__PROF_STORE(&n->max, d);
	__PROF_ADDL(h, 1);
	__prof_ring_put(z->start, d, node);
}

/*
 * A zone's exit.  Every call that is not the common one (unbalanced, an
 * anomaly or a new kernel word, the kernel word moved, its bucket's first
 * count: a row to mark, its exit probe wanted: z->node is then not the
 * current node) is found before anything changes and goes whole
 * to __prof_leave_rare, a tail call: this one calls nothing else, so it
 * saves no register.  The bucket is found from the delta without a branch
 * (prof_hist_shift is one bsr): a cached bucket that real programs' deltas
 * left on most calls cost a mispredicted branch and a refill each time.
 */
static inline __attribute__((always_inline)) void __prof_leave_body(struct __prof_zone *z)
{
	/* on the monotonic clock, above the limit (see __prof_now) */
	uint64_t d = __prof_counter() - z->start;
	uint32_t node = z->node;
	/* the node's bucket 0, prof_hist_index(node, 0, PROF_HIST_SHIFT),
	 * known before the clock is: the blocks before its own, 192 rows a
	 * block, its column in them (a multiply, fewer instructions) */
	uint64_t row = node + __PROF_CAST(uint64_t, node >> PROF_HIST_SHIFT) *
				     ((PROF_HIST_BUCKETS - 1) << PROF_HIST_SHIFT);
	uint32_t *h;
#ifndef PROF_NO_KERNEL_WORD
	uint64_t seq = __prof_tls.krec->seq;
#else
	uint64_t seq = z->seq;	/* bench/overhead only: the word's cost */
#endif

	/* unsigned: a negative delta is huge too; a limit of 0 hands over a
	 * new kernel word */
	if (__builtin_expect(__prof_tls.cur != node || d > __prof_tls.limit || seq != z->seq, 0)) {
		__prof_leave_rare(z, d, seq);
		return;
	}
	/* d is below the limit, so below PROF_HIST_TOP: no clamp; the
	 * bucket's 8 too many rows (prof_hist_bucket8) go off in the
	 * address's constant */
	h = &__prof_tls.hist[row + (__PROF_CAST(uint64_t, prof_hist_bucket8(d)) << PROF_HIST_SHIFT) -
			     (8u << PROF_HIST_SHIFT)];
	if (__builtin_expect(__prof_zero32(h), 0))
		__prof_leave_rare(z, d, seq);
	else
		__prof_leave_count(z, d, h);
}

#endif /* PROF_ZONE_LEAVE_H */
