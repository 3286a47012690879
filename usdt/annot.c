// SPDX-License-Identifier: MIT
/*
 * annot.c - annotations: plots, messages, values and texts on calls, and
 * named locks (prof.h), written into the calling thread's annotation
 * region (slab.h, "Annotations").
 *
 * Every call here is the owning thread writing its own slab, as a zone
 * exit does: plain stores, rings published with a release store of their
 * head, nothing locked or allocated once a name has its slot on the
 * thread.  What is slow happens once: a thread's first annotation reserves
 * its region, a name's first use in the process registers it as a site
 * (under this file's lock), a name's first use on a thread claims its
 * table entry.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"
#include "prof_int.h"

/* a lock name's state on this thread */
struct annot_lockst {
	__u32 site;	/* the name */
	__u32 aslot;	/* the (lock, zone) entry of the first acquire */
	union {
		struct {
			__u32 depth;	/* acquires not released yet */
			__u32 waiting;	/* a WAIT not followed by its ACQUIRED yet */
		};
		__u64 used;	/* 0: neither held nor waited for (one test) */
	};
	__u64 acq;	/* tick of the first acquire */
	__u64 wait;	/* tick of the WAIT */
	__u64 wseq;	/* the kernel word's seq then */
};

/* a ring of the annotation region */
struct annot_ring {
	__u64 *head;
	char *ent;
	__u64 mask;
};

struct annot_thread {
	struct prof_slab_hdr *hdr;	/* the slab its pointers are in */
	__u32 epoch;			/* ~0 while unbound: no cache matches */
	__u32 nlnames;
	/*
	 * The lock fast paths' whole test is one compare of key against a
	 * cache's epoch: lkey is the epoch when the clock is the TSC, else ~0
	 * as while unbound (no cache holds ~0, and the clock is chosen before
	 * a thread binds: at the runtime's start, or a fork child's before
	 * its thread binds again), and busy beside it is 0.
	 */
	union {
		struct {
			__u32 lkey;
			volatile sig_atomic_t busy; /* writing: a handler's annotation waits not */
		};
		__u64 key;	/* not volatile: read once, at a call's start */
	};
	struct prof_plot *plots;
	struct prof_lock *locks;
	struct annot_ring points, msgs, values, spans;
	__u32 nplots, nlocks;		/* our copies of the slab's */
	struct annot_lockst lname[PROF_LOCKS_MAX];
};

/* the thread's writing flag, ordered (for the compiler: a signal handler
 * runs on this thread) with the writes it guards: a handler that finds it
 * 0 finds nothing half written; a volatile store alone may be moved past
 * the ring's plain and relaxed stores */
#define BUSY_SET(a)								\
	do {									\
		(a)->busy = 1;							\
		__atomic_signal_fence(__ATOMIC_SEQ_CST);			\
	} while (0)
#define BUSY_CLEAR(a)								\
	do {									\
		__atomic_signal_fence(__ATOMIC_SEQ_CST);			\
		(a)->busy = 0;							\
	} while (0)

/* a double's relaxed store (__atomic_store_n takes integers only) */
#define STORE_D(p, v)								\
	do {									\
		double __v = (v);						\
		__atomic_store((p), &__v, __ATOMIC_RELAXED);			\
	} while (0)

/* initial-exec, as the runtime's own TLS (prof.c): one %fs-relative load,
 * where the default model of a -fPIC object is a call to __tls_get_addr
 * that every annotation paid (and its stack frame with it) */
static __thread struct annot_thread annot_tls
	__attribute__((tls_model("initial-exec"))) = { .epoch = ~0u, .lkey = ~0u };
static __u32 annot_epochs;

/* a's binding epoch e (~0: unbound), and the lock key that goes with it */
static void annot_set_epoch(struct annot_thread *a, __u32 e)
{
	a->epoch = e;
	a->lkey = __prof_clock_tsc ? e : ~0u;
}

/* the process's names: name -> site, registered once each */
struct annot_name {
	struct prof_site site;
	__u32 idx;
};
static pthread_mutex_t annot_lock = PTHREAD_MUTEX_INITIALIZER;
static struct annot_name **annot_names;
static size_t annot_nnames;
static pthread_once_t annot_once = PTHREAD_ONCE_INIT;

static void annot_fork_prepare(void)
{
	pthread_mutex_lock(&annot_lock);
}

static void annot_fork_parent(void)
{
	pthread_mutex_unlock(&annot_lock);
}

/*
 * The child's thread was bound to its parent's slab, in a mapping the
 * child drops once the thread moves to a slab of its own (at its next zone
 * or annotation, __PROF_FORKED until then, which annot_get checks too): it
 * binds again at its next annotation.
 */
static void annot_fork_child(void)
{
	pthread_mutex_unlock(&annot_lock);
	annot_tls.hdr = NULL;
	annot_set_epoch(&annot_tls, ~0u);
}

static void annot_init(void)
{
	pthread_atfork(annot_fork_prepare, annot_fork_parent, annot_fork_child);
}

/* the calling thread's slab (made, or moved after a fork, now), NULL if
 * it has none */
static struct prof_slab_hdr *thread_slab(void)
{
	prof_thread_ready();
	return __prof_tls.cur < __PROF_GONE ? prof_tpriv.hdr : NULL;
}

/* the annotation region of slab h reserved; 0 or -errno, counted in
 * nospace */
static int region_reserve(struct prof_slab_hdr *h)
{
	const struct prof_region *r = &prof_rt.region[PROF_REGION_ANNOT];
	int err = prof_seg_reserve((__u64)((char *)h - (char *)prof_rt.seg) + r->off, r->size);

	if (err)
		prof_seg_nospace();
	return err;
}

static inline __u64 annot_dropped(struct annot_thread *a)
{
	if (a && a->hdr)
		__PROF_ADD(&a->hdr->annot_dropped, 1);
	return 0;
}

static void ring_bind(struct annot_ring *r, char *base, const struct prof_region *p, size_t esize)
{
	struct prof_ring *h = (struct prof_ring *)(base + p->off);

	r->head = &h->head;
	r->ent = (char *)prof_ring_events(h);
	r->mask = (p->size - PROF_RING_HDR_SIZE) / esize - 1;
	__atomic_store_n(r->head, 0, __ATOMIC_RELAXED);
}

/* the thread's annotation region, reserved and emptied; false if there is
 * no room for it */
static bool annot_bind(struct annot_thread *a, struct prof_slab_hdr *h)
{
	const struct prof_region *p = prof_rt.part;
	char *base = prof_rt_region(h, PROF_REGION_ANNOT);
	__u32 e;

	a->hdr = NULL;
	annot_set_epoch(a, ~0u);
	if (!prof_rt.region[PROF_REGION_ANNOT].size || region_reserve(h))
		return false;
	a->plots = (struct prof_plot *)(base + p[PROF_PART_PLOTS].off);
	a->locks = (struct prof_lock *)(base + p[PROF_PART_LOCKS].off);
	ring_bind(&a->points, base, &p[PROF_PART_POINTS], sizeof(struct prof_plot_point));
	ring_bind(&a->msgs, base, &p[PROF_PART_MSGS], sizeof(struct prof_msg));
	ring_bind(&a->values, base, &p[PROF_PART_VALUES], sizeof(struct prof_value));
	ring_bind(&a->spans, base, &p[PROF_PART_SPANS], sizeof(struct prof_lock_span));
	a->nplots = a->nlocks = a->nlnames = 0;
	__PROF_STORE(&h->nplots, 0);
	__PROF_STORE(&h->nlocks, 0);
	memset(a->lname, 0, sizeof(a->lname));
	__atomic_store_n(&h->annot, 1, __ATOMIC_RELEASE);
	a->hdr = h;
	/* never ~0, and never 0 (an unused cache's) */
	do
		e = __atomic_add_fetch(&annot_epochs, 1, __ATOMIC_RELAXED);
	while (e == ~0u || !e);
	annot_set_epoch(a, e);
	return true;
}

/*
 * The thread's annotations, bound to its slab (made now if it has none,
 * moved if a fork made it the parent's); NULL when it has none, or when a
 * signal handler interrupted its own thread's annotation.
 */
static struct annot_thread *annot_ready(void)
{
	struct annot_thread *a = &annot_tls;
	struct prof_slab_hdr *h;

	if (a->busy)
		return NULL;
	BUSY_SET(a);
	h = thread_slab();
	/*
	 * After the runtime's start, so that its fork handlers (prof.c's,
	 * registered there) run after this file's at a fork: annot_lock is
	 * taken before the runtime's lock there, as name_site takes them
	 */
	pthread_once(&annot_once, annot_init);
	if (h != a->hdr && (!h || !annot_bind(a, h))) {
		a->hdr = NULL;
		annot_set_epoch(a, ~0u);
	}
	BUSY_CLEAR(a);
	return a->hdr ? a : NULL;
}

/* the fast check: bound, and the thread still in its slab */
static inline __attribute__((always_inline)) struct annot_thread *annot_get(void)
{
	struct annot_thread *a = &annot_tls;

	if (__builtin_expect(!a->hdr || __prof_tls.cur >= __PROF_GONE, 0))
		return annot_ready();
	if (__builtin_expect(a->busy, 0)) {
		__PROF_ADD(&a->hdr->annot_dropped, 1);
		return NULL;
	}
	return a;
}

/* a name's site index, registered at its first use in the process */
static __u32 name_site(const struct __prof_aname *n)
{
	const char *name = n->name ? n->name : "";
	struct annot_name *e, **v;
	__u32 idx = PROF_SITE_NONE;
	size_t i;

	pthread_mutex_lock(&annot_lock);
	for (i = 0; i < annot_nnames; i++) {
		e = annot_names[i];
		if (e->site.flags == n->flags && !strncmp(e->site.name, name, PROF_NAME_MAX - 1)) {
			idx = e->idx;
			goto out;
		}
	}
	e = calloc(1, sizeof(*e));
	v = realloc(annot_names, (annot_nnames + 1) * sizeof(*v));
	if (!e || !v) {
		free(e);
		if (v)
			annot_names = v;
		goto out;
	}
	annot_names = v;
	e->site.name = strndup(name, PROF_NAME_MAX - 1);
	e->site.file = "";
	e->site.func = "";
	e->site.flags = n->flags;
	if (!e->site.name) {
		free(e);
		goto out;
	}
	e->idx = prof_site_index(&e->site);
	annot_names[annot_nnames++] = e;
	idx = e->idx;
out:
	pthread_mutex_unlock(&annot_lock);
	return idx;
}

/* the slow path of a name on this thread: its site; PROF_SITE_NONE if none */
static __u32 cache_site(struct annot_thread *a, const struct __prof_aname *n)
{
	__u32 site;

	BUSY_SET(a);
	site = name_site(n);
	BUSY_CLEAR(a);
	return site;
}

/* the plot's entry on this thread, claimed at its first point */
static __u32 plot_slot(struct annot_thread *a, const struct __prof_aname *n,
		       struct __prof_acache *c)
{
	__u32 site = cache_site(a, n), i;
	struct prof_plot *p;

	if (site == PROF_SITE_NONE)
		return ~0u;
	for (i = 0; i < a->nplots; i++)
		if (a->plots[i].site == site)
			goto found;
	if (a->nplots >= PROF_PLOTS_MAX)
		return ~0u;
	p = &a->plots[i];
	memset(p, 0, sizeof(*p));
	p->site = site;
	a->nplots = i + 1;
	__atomic_store_n(&a->hdr->nplots, a->nplots, __ATOMIC_RELEASE);
found:
	c->slot = i;
	c->epoch = a->epoch;
	return i;
}

static inline bool finite_value(double v)
{
	return __builtin_isfinite(v);
}

/* a point of plot slot p (a's, bound), at now */
static inline __attribute__((always_inline)) void plot_put(struct annot_thread *a, __u32 slot,
							   double v, __u64 now)
{
	struct prof_plot *p = &a->plots[slot];
	struct prof_plot_point *e;
	__u64 h;

	if (!p->count || v < p->min)
		STORE_D(&p->min, v);
	if (!p->count || v > p->max)
		STORE_D(&p->max, v);
	STORE_D(&p->last, v);
	STORE_D(&p->sum, p->sum + v);
	__PROF_STORE(&p->last_tick, now);
	__PROF_STORE(&p->count, p->count + 1);
	h = __PROF_LOAD(a->points.head);
	e = &((struct prof_plot_point *)a->points.ent)[h & a->points.mask];
	__PROF_STORE(&e->tick, now);
	STORE_D(&e->value, v);
	__PROF_STORE(&e->plot, slot);
	__atomic_store_n(a->points.head, h + 1, __ATOMIC_RELEASE);
}

/* any point but the common one: the thread or the name not bound yet, a
 * value that is no number, the monotonic clock, a handler's */
static __attribute__((noinline)) void plot_slow(const struct __prof_aname *n,
						struct __prof_acache *c, double v)
{
	struct annot_thread *a = annot_get();
	__u64 now = __prof_now();

	if (!a)
		return;
	if (__builtin_expect(c->epoch != a->epoch, 0)) {
		if (plot_slot(a, n, c) == ~0u) {
			annot_dropped(a);
			return;
		}
	}
	if (!finite_value(v)) {
		annot_dropped(a);
		return;
	}
	BUSY_SET(a);
	plot_put(a, c->slot, v, now);
	BUSY_CLEAR(a);
}

/* the common point, checked without a call (no stack frame): bound, the
 * name's slot cached, a finite value, the TSC */
void __prof_plot(const struct __prof_aname *n, struct __prof_acache *c, double v)
{
	struct annot_thread *a = &annot_tls;

	if (__builtin_expect(a->hdr && !a->busy && __prof_tls.cur < __PROF_GONE &&
				     c->epoch == a->epoch && finite_value(v) && __prof_clock_tsc,
			     1)) {
		BUSY_SET(a);
		plot_put(a, c->slot, v, __prof_counter());
		BUSY_CLEAR(a);
		return;
	}
	plot_slow(n, c, v);
}

/* text into an entry's words (relaxed stores: a reader copies them while
 * they change, and keeps only what the head says was whole); its length */
static __u32 text_put(char *dst, size_t cap, const char *src, size_t len, struct annot_thread *a)
{
	__u64 w[PROF_MSG_TEXT / 8];
	size_t i;

	if (len > cap - 1) {
		len = cap - 1;
		__PROF_ADD(&a->hdr->annot_cut, 1);
	}
	memset(w, 0, cap);
	memcpy(w, src, len);
	for (i = 0; i < cap / 8; i++)
		__PROF_STORE((__u64 *)dst + i, w[i]);
	return (__u32)len;
}

void __prof_message(const char *fmt, ...)
{
	struct annot_thread *a = annot_get();
	char buf[PROF_MSG_TEXT + 1];
	struct prof_msg *e;
	va_list ap;
	__u64 now = __prof_now(), h;
	size_t len;
	int r;

	if (!a)
		return;
	BUSY_SET(a);
	if (fmt) {
		va_start(ap, fmt);
		/* one byte over the entry's: a longer text is seen cut */
		r = vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		len = r < 0 ? 0 : (size_t)r;
		if (r < 0)
			buf[0] = 0;
	} else {
		buf[0] = 0;
		len = 0;
	}
	if (len > sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	h = __PROF_LOAD(a->msgs.head);
	e = &((struct prof_msg *)a->msgs.ent)[h & a->msgs.mask];
	__PROF_STORE(&e->tick, now);
	__PROF_STORE(&e->node, __prof_tls.cur);
	__PROF_STORE(&e->len, text_put(e->text, sizeof(e->text), buf, len, a));
	__atomic_store_n(a->msgs.head, h + 1, __ATOMIC_RELEASE);
	BUSY_CLEAR(a);
}

/* the next entry of the value ring, for a call of node (kind), its
 * value and length not written yet, its head not published */
static inline __attribute__((always_inline)) struct prof_value *value_entry(struct annot_thread *a,
									    __u32 node, __u16 kind)
{
	__u64 h = __PROF_LOAD(a->values.head);
	struct prof_value *e = &((struct prof_value *)a->values.ent)[h & a->values.mask];

	__PROF_STORE(&e->start, __PROF_LOAD(&__prof_tls.open[node]));
	__PROF_STORE(&e->node, node);
	__PROF_STORE(&e->kind, kind);
	return e;
}

/* a value's entry on the current call, or NULL (no zone: dropped) */
static struct prof_value *value_slot(struct annot_thread *a, __u16 kind)
{
	__u32 node = __prof_tls.cur;

	if (node == PROF_NODE_ROOT) {
		annot_dropped(a);
		return NULL;
	}
	return value_entry(a, node, kind);
}

/* a value on the current call (node, not the root), a's bound */
static inline __attribute__((always_inline)) void value_put(struct annot_thread *a, __u32 node,
							    double v)
{
	struct prof_value *e = value_entry(a, node, PROF_VALUE_NUM);

	STORE_D(&e->value, v);
	__PROF_STORE(&e->len, 0);
	__atomic_store_n(a->values.head, __PROF_LOAD(a->values.head) + 1, __ATOMIC_RELEASE);
}

/* any value but the common one: not bound yet, outside a zone, no number,
 * a handler's */
static __attribute__((noinline)) void zone_value_slow(double v)
{
	struct annot_thread *a = annot_get();

	if (!a)
		return;
	if (!finite_value(v) || __prof_tls.cur == PROF_NODE_ROOT) {
		annot_dropped(a);
		return;
	}
	BUSY_SET(a);
	value_put(a, __prof_tls.cur, v);
	BUSY_CLEAR(a);
}

/* the common value, checked without a call (no stack frame) */
void __prof_zone_value(double v)
{
	struct annot_thread *a = &annot_tls;
	__u32 cur = __prof_tls.cur;

	if (__builtin_expect(a->hdr && !a->busy && cur < __PROF_GONE && cur != PROF_NODE_ROOT &&
				     finite_value(v),
			     1)) {
		BUSY_SET(a);
		value_put(a, cur, v);
		BUSY_CLEAR(a);
		return;
	}
	zone_value_slow(v);
}

void __prof_zone_text(const char *s)
{
	struct annot_thread *a = annot_get();
	struct prof_value *e;

	if (!a)
		return;
	BUSY_SET(a);
	e = value_slot(a, PROF_VALUE_TEXT_KIND);
	if (e) {
		const char *t = s ? s : "";

		STORE_D(&e->value, 0.0);
		__PROF_STORE(&e->len, (__u16)text_put(e->text, sizeof(e->text), t,
						      strnlen(t, PROF_VALUE_TEXT), a));
		__atomic_store_n(a->values.head, __PROF_LOAD(a->values.head) + 1, __ATOMIC_RELEASE);
	}
	BUSY_CLEAR(a);
}

/* --- locks ---------------------------------------------------------------- */

/* the lock name's state on this thread (c->slot), and the (lock, zone)
 * entry of the current zone (c->lslot); false: dropped */
static __attribute__((noinline)) bool lock_slots_slow(struct annot_thread *a,
						      const struct __prof_aname *n,
						      struct __prof_acache *c)
{
	__u32 node = __prof_tls.cur, site, i;
	struct prof_lock *l;

	if (c->epoch != a->epoch) {
		site = cache_site(a, n);
		if (site == PROF_SITE_NONE)
			return false;
		for (i = 0; i < a->nlnames; i++)
			if (a->lname[i].site == site)
				break;
		if (i == a->nlnames) {
			if (i >= PROF_LOCKS_MAX)
				return false;
			memset(&a->lname[i], 0, sizeof(a->lname[i]));
			a->lname[i].site = site;
			a->nlnames++;
		}
		c->slot = i;
	}
	site = a->lname[c->slot].site;
	for (i = 0; i < a->nlocks; i++)
		if (a->locks[i].site == site && a->locks[i].node == node)
			break;
	if (i == a->nlocks) {
		if (i >= PROF_LOCKS_MAX)
			return false;
		l = &a->locks[i];
		memset(l, 0, sizeof(*l));
		l->site = site;
		l->node = node;
		a->nlocks = i + 1;
		__atomic_store_n(&a->hdr->nlocks, a->nlocks, __ATOMIC_RELEASE);
	}
	c->lslot = i;
	c->node = node;
	c->epoch = a->epoch;
	return true;
}

static inline __attribute__((always_inline)) bool lock_slots(struct annot_thread *a,
							     const struct __prof_aname *n,
							     struct __prof_acache *c)
{
	if (__builtin_expect(c->epoch == a->epoch && c->node == __prof_tls.cur, 1))
		return true;
	return lock_slots_slow(a, n, c);
}

static inline __attribute__((always_inline)) void span_put(struct annot_thread *a, __u64 start, __u64 dur, __u32 lock, __u32 flags)
{
	/* the head's address read once: the entry's stores might be to it */
	__u64 *head = a->spans.head, h = __PROF_LOAD(head);
	struct prof_lock_span *e = &((struct prof_lock_span *)a->spans.ent)[h & a->spans.mask];

	__PROF_STORE(&e->start, start);
	__PROF_STORE(&e->dur, dur);
	__PROF_STORE(&e->lock, lock);
	__PROF_STORE(&e->flags, flags);
	__atomic_store_n(head, h + 1, __ATOMIC_RELEASE);
}

/* the common start of every lock call: the thread's annotations, its
 * lock's slots; NULL if dropped (busy set otherwise) */
static inline __attribute__((always_inline)) struct annot_thread *lock_begin(const struct __prof_aname *n, struct __prof_acache *c)
{
	struct annot_thread *a = annot_get();

	if (!a)
		return NULL;
	if (!lock_slots(a, n, c)) {
		annot_dropped(a);
		return NULL;
	}
	BUSY_SET(a);
	return a;
}

static inline __attribute__((always_inline)) void wait_begin(struct annot_lockst *st)
{
	st->wseq = __prof_tls.krec->seq;
	st->wait = __prof_now();
	st->waiting = 1;
}

void __prof_lock_wait(const struct __prof_aname *n, struct __prof_acache *c)
{
	struct annot_thread *a = lock_begin(n, c);

	if (!a)
		return;
	wait_begin(&a->lname[c->slot]);
	BUSY_CLEAR(a);
}

/* a wait that took longer than this is a contended acquisition (a generic
 * lock's; a mutex's trylock says it exactly) */
#define LOCK_CONTENDED_NS 1000.0

static unsigned int wait_bucket(__u64 d)
{
	unsigned int b = d ? 63 - (unsigned int)__builtin_clzll(d) : 0;

	return b < PROF_LOCK_HIST ? b : PROF_LOCK_HIST - 1;
}

/*
 * An acquisition: contended -1 (the wait's length says), 0 or 1.  What the
 * kernel word says of the wait: blocked if the thread slept in it (a
 * voluntary switch out inside it), else it spun (or was preempted).
 */
static inline __attribute__((always_inline)) void
acquired(struct annot_thread *a, struct __prof_acache *c, int contended, __u64 now)
{
	struct annot_lockst *st = &a->lname[c->slot];
	struct prof_lock *l = &a->locks[c->lslot];
	__u64 w = 0;

	if (st->waiting) {
		const volatile struct prof_sched_rec *k = __prof_tls.krec;
		__u64 seq = k->seq;
		__u32 flags = 0;

		w = now > st->wait ? now - st->wait : 0;
		if (contended < 0)
			contended = (double)w * prof_rt.ns_per_tick > LOCK_CONTENDED_NS;
		st->waiting = 0;
		if (contended && seq != ~0ull && st->wseq != ~0ull) {
			/* profd's word covered the wait: the last voluntary
			 * switch out in (a0, b0] says the thread slept */
			__u32 a0 = (__u32)st->wseq, b0 = (__u32)seq, bs = k->block_seq;

			flags |= PROF_SPAN_KERNEL;
			__PROF_ADD(&l->kernel_waits, 1);
			if (a0 != b0 && bs - a0 - 1 < b0 - a0) {
				flags |= PROF_SPAN_BLOCKED;
				__PROF_ADD(&l->blocked, 1);
			}
		}
		if (contended) {
			__PROF_ADD(&l->contended, 1);
			__PROF_ADD(&l->wait_ticks, w);
			if (w > l->wait_max)
				__PROF_STORE(&l->wait_max, w);
			__PROF_ADD(&l->wait_hist[wait_bucket(w)], 1);
			span_put(a, st->wait, w, c->lslot, flags);
		}
	}
	__PROF_ADD(&l->acquisitions, 1);
	if (!st->depth++) {
		st->acq = now;
		st->aslot = c->lslot;
	}
}

void __prof_lock_acquired(const struct __prof_aname *n, struct __prof_acache *c)
{
	struct annot_thread *a = lock_begin(n, c);

	if (!a)
		return;
	acquired(a, c, -1, __prof_now());
	BUSY_CLEAR(a);
}

/* the end of st's hold (its last release) at now: its time and span,
 * in the (lock, zone) entry of its first acquire */
static inline __attribute__((always_inline)) void hold_end(struct annot_thread *a,
							   struct annot_lockst *st, __u64 now)
{
	/* read before the entry's stores, which might be to st */
	__u32 slot = st->aslot;
	__u64 acq = st->acq, d = now > acq ? now - acq : 0;
	struct prof_lock *l = &a->locks[slot];

	__PROF_ADDQ(&l->hold_ticks, d);
	if (d > l->hold_max)
		__PROF_STORE(&l->hold_max, d);
	span_put(a, acq, d, slot, PROF_SPAN_HOLD);
}

static inline __attribute__((always_inline)) void released(struct annot_thread *a,
							   struct __prof_acache *c, __u64 now)
{
	struct annot_lockst *st = &a->lname[c->slot];

	if (!st->depth) {
		__PROF_ADD(&a->locks[c->lslot].unheld, 1);
		return;
	}
	if (!--st->depth)
		hold_end(a, st, now);
}

void __prof_lock_released(const struct __prof_aname *n, struct __prof_acache *c)
{
	struct annot_thread *a = lock_begin(n, c);

	if (!a)
		return;
	released(a, c, __prof_now());
	BUSY_CLEAR(a);
}

/*
 * The counted mutex.  Its common cases are leaves without a stack frame,
 * each one test of the thread's key before the work (see annot_thread)
 * and one read of the clock: an acquisition the trylock at the site
 * made, of a name neither held nor waited for on this thread, in the zone
 * its site's cache holds; a release of a name held once.  The rest (a
 * wait, nesting, a name or zone not cached yet, a handler's call, the
 * monotonic clock) takes the general path, which checks everything again.
 */
static inline __attribute__((always_inline)) bool lock_key(const struct annot_thread *a,
							   const struct __prof_acache *c)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return a->key == c->epoch;
#else
	return a->key == (__u64)c->epoch << 32;
#endif
}

static __attribute__((noinline)) void took_slow(const struct __prof_aname *n,
						struct __prof_acache *c)
{
	struct annot_thread *a = lock_begin(n, c);

	if (a) {
		acquired(a, c, 0, __prof_now());
		BUSY_CLEAR(a);
	}
}

void __prof_mutex_took(const struct __prof_aname *n, struct __prof_acache *c)
{
	struct annot_thread *a = &annot_tls;

	if (__builtin_expect(lock_key(a, c) && c->node == __prof_tls.cur, 1)) {
		struct annot_lockst *st = &a->lname[c->slot];

		BUSY_SET(a);
		if (__builtin_expect(!st->used, 1)) {
			st->acq = __prof_counter();
			st->depth = 1;
			st->aslot = c->lslot;
			__PROF_ADDQ(&a->locks[c->lslot].acquisitions, 1);
			BUSY_CLEAR(a);
			return;
		}
		BUSY_CLEAR(a);
	}
	took_slow(n, c);
}

/* the trylock at the site said err: a wait (EBUSY), or an error */
int __prof_mutex_wait(const struct __prof_aname *n, struct __prof_acache *c, pthread_mutex_t *m,
		      int err)
{
	struct annot_thread *a;

	if (err != EBUSY)
		return err;
	a = lock_begin(n, c);
	if (a) {
		wait_begin(&a->lname[c->slot]);
		BUSY_CLEAR(a);
	}
	err = pthread_mutex_lock(m);
	/* the thread's binding is the same: nothing but a fork changes it,
	 * and this thread did not fork while it waited */
	if (a && !a->busy && c->epoch == a->epoch) {
		BUSY_SET(a);
		if (err)
			a->lname[c->slot].waiting = 0;
		else
			acquired(a, c, 1, __prof_now());
		BUSY_CLEAR(a);
	}
	return err;
}

static __attribute__((noinline)) int mutex_unlock_slow(const struct __prof_aname *n,
						       struct __prof_acache *c, pthread_mutex_t *m)
{
	struct annot_thread *a = lock_begin(n, c);

	if (a) {
		released(a, c, __prof_now());
		BUSY_CLEAR(a);
	}
	return pthread_mutex_unlock(m);
}

int __prof_mutex_unlock(const struct __prof_aname *n, struct __prof_acache *c, pthread_mutex_t *m)
{
	struct annot_thread *a = &annot_tls;

	/* the zone does not matter: the hold is its first acquire's */
	if (__builtin_expect(lock_key(a, c) && __prof_tls.cur < __PROF_GONE, 1)) {
		struct annot_lockst *st = &a->lname[c->slot];

		BUSY_SET(a);
		if (__builtin_expect(st->depth == 1, 1)) {
			st->depth = 0;
			hold_end(a, st, __prof_counter());
			BUSY_CLEAR(a);
			return pthread_mutex_unlock(m);
		}
		BUSY_CLEAR(a);
	}
	return mutex_unlock_slow(n, c, m);
}
