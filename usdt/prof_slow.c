// SPDX-License-Identifier: MIT
/*
 * usdt/prof_slow.c - the zones' slow paths: a new node, a context switch seen inside
 * a zone, anomalies, unbalanced zones, BEGIN/END, frames, allocations.
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
	if (c->way[cur & (__PROF_WAYS - 1)].parent == (cur | CACHE_MONO))
		return (__u64)prev << 32 | c->way[cur & (__PROF_WAYS - 1)].node;
	prof_tpriv.busy = 1;
	node = enter_slow(site, c, &prev);
	prof_tpriv.busy = 0;
	errno = saved;
	return (__u64)prev << 32 | node;
}

/*
 * Most misses of a site's way: a node the thread has, called from a
 * parent whose way holds another, on the TSC.  Found in the thread's table (which only
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
 * An enter that missed its site's way (or any enter on the monotonic
 * clock): the node for (cur, site) and the node to return to, then the
 * call's marks as the fast enter makes them, the node current first, and
 * its exit probe wanted as the site's enter tells it (prof.h).
 */
void __prof_enter_slow(struct __prof_zone *z, const struct prof_site *site)
{
	struct __prof_cache *c = z->c;
	uint32_t fl = *site->exit_sema ? __PROF_EXIT_WANTED : 0;
	uint64_t pn;

	/* the exit's way to its site (always the same: a handler's zone of
	 * this site writing it meanwhile writes the same) */
	c->sitep = site;
	pn = enter_node(site, c, __prof_tls.cur);
	__u32 node = (__u32)pn;
	uint64_t t;

	z->prev = (__u32)(pn >> 32);
	if (__builtin_expect(__prof_clock_tsc, 1)) {
		__prof_enter_mark(z, node, fl);
		return;
	}
	/* the monotonic clock: its start marked (see __prof_now) */
	__prof_tls.cur = node;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	z->node = node | fl;
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
 * The site's way for parent, (parent -> node) from now on.  A way is
 * never seen half written by a zone of the same site in a signal
 * handler: its parent is ~0 (no thread's node) while it changes.
 */
static void cache_put(struct __prof_cache *c, __u32 parent, __u32 node)
{
	struct __prof_way *w = &c->way[parent & (__PROF_WAYS - 1)];

	/* on the monotonic clock every enter takes the slow branch: its
	 * parents are marked (CACHE_MONO, above the way's bits), so that the
	 * fast path's compares fail */
	if (!__prof_clock_tsc)
		parent |= CACHE_MONO;
	w->parent = ~0u;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w->node = node;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w->parent = parent;
}

static __u32 enter_slow(const struct prof_site *site, struct __prof_cache *c, uint32_t *prev)
{
	struct __prof_thread *t = &__prof_tls;
	__u32 sidx, node;

	if (t->cur >= __PROF_FORKED) {
		prof_thread_prepare();
		/* the zone returns to the thread's real node, not to a marker */
		*prev = t->cur;
	}
	if (!prof_tpriv.te) {
		/* not profiled: everything lands in the sink's node 1 */
		cache_put(c, t->cur, 1);
		return 1;
	}
	if (!c->site)
		c->site = prof_site_index(site) + 1;
	sidx = c->site - 1;
	node = prof_node_lookup(t->cur, sidx);
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

/* a delta negative or longer than a day: counted, not added (no exit
 * probe: it has no duration) */
static void call_anomaly(__u32 node)
{
	struct __prof_thread *t = &__prof_tls;

	node &= ~__PROF_EXIT_WANTED;

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
 * for one without them; node's __PROF_EXIT_WANTED fires the exit probe
 */
static void call_count(const struct prof_site *site, uint32_t node, __u64 start, __u64 d,
		       bool facts, __u64 zseq, __u64 zoffcpu, __u64 seq)
{
	bool fire = node & __PROF_EXIT_WANTED;
	struct __prof_thread *t = &__prof_tls;
	struct prof_node *n;

	node &= ~__PROF_EXIT_WANTED;
	n = &t->nodes[node];

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
	if (fire)
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
	__atomic_store_n(&t->limit, prof_fast_limit(t), __ATOMIC_RELAXED);
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
	uint32_t node = z->node & ~__PROF_EXIT_WANTED;

	if (__prof_tls.cur != node)
		__prof_unbalanced(node, z->prev);
	__prof_tls.cur = z->prev;
	__PROF_STORE(&__prof_tls.open[node], 0);
	/* z->node: its exit probe's flag goes along */
	if (d > __prof_tls.limit)
		__prof_anomaly(site, z->node, z->start, d, z->seq, z->offcpu, seq);
	else
		call_count(site, z->node, z->start, d, true, z->seq, z->offcpu, seq);
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
	/* a zone open across fork() closing in the child: move, then it is
	 * balanced after all */
	if (__prof_tls.cur == __PROF_FORKED) {
		prof_fork_move_self();
		if (__prof_tls.cur == node)
			return;
	}
	if (prof_tpriv.hdr)
		__PROF_ADD(&prof_tpriv.hdr->unbalanced, 1);
	/* the zones opened under this one and never closed are over too */
	close_open_below(__prof_tls.cur, node);
	/* prof_tpriv by name, not through a pointer to it: gcc 12's UBSan
	 * build tested that pointer for null against stale flags */
	while (prof_tpriv.nbegin &&
	       !node_is_ancestor(prof_tpriv.begin[prof_tpriv.nbegin - 1].node & ~__PROF_EXIT_WANTED,
				 prev))
		prof_tpriv.nbegin--;
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

	/* its exit probe wanted, as a site's enter tells (prof.h) */
	__prof_enter(&z, site, c, *site->exit_sema ? __PROF_EXIT_WANTED : 0);
	if (p->nbegin >= PROF_BEGIN_DEPTH) {
		/* too deep to track: undo the enter, count it */
		__prof_tls.cur = z.prev;
		__PROF_STORE(&__prof_tls.open[z.node & ~__PROF_EXIT_WANTED], 0);
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
	if (!p->nbegin || (p->begin[p->nbegin - 1].node & ~__PROF_EXIT_WANTED) != __prof_tls.cur) {
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
		/* its exit stub went with the library */
		z->node &= ~__PROF_EXIT_WANTED;
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
	prof_copy_str(buf, sizeof(buf), name);
	for (i = 0; i < sizeof(buf); i++)
		__PROF_STORE(&prof_tpriv.hdr->name[i], buf[i]);
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
