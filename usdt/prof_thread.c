// SPDX-License-Identifier: MIT
/*
 * usdt/prof_thread.c - threads: a thread's first zone claims a slab (a fresh one, or
 * one an exited thread left), its node table and lookups, and its exit.
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

void prof_thread_bind_sink(struct __prof_thread *t, struct prof_sink *k)
{
	t->nodes = k->nodes;
	t->ext = k->ext;
	t->open = k->open;
	t->rowmap = k->rowmap;
	t->hist = k->hist;
	t->ring = k->ring;
	t->ring_head = &k->ring_hdr.head;
	t->ring_mask = 0;
	t->activity = &prof_sink_activity;
	t->ext_used = &prof_sink_ext_used;
}

static void thread_sink_last_resort(struct __prof_thread *t)
{
	prof_thread_bind_sink(t, &prof_last_resort);
}

/* the fast path's pointers into a slab */
void prof_thread_bind_slab(struct __prof_thread *t, struct prof_slab_hdr *hdr)
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
		/* off: every exit writes one slot nobody reads, after a head
		 * that readers add to the activity word (slab.h) */
		t->ring = (struct prof_event *)(void *)hdr->ring_off_ev;
		t->ring_head = &hdr->ring_off_head;
		t->ring_mask = 0;
	}
	t->activity = &hdr->activity;
	t->ext_used = &hdr->ext_used;
}

static void thread_cover_sync(struct __prof_thread *t, struct prof_tpriv *p,
			      struct prof_tentry *te, struct prof_slab_hdr *hdr);

/* a table of two nodes for a thread we cannot profile: all zones land in 1 */
void prof_thread_sink(struct __prof_thread *t)
{
	struct prof_sink *mem = calloc(1, sizeof(*mem));

	if (mem) {
		prof_thread_bind_sink(t, mem);
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
void prof_node_init(struct prof_node *n, __u32 site, __u32 parent)
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
void prof_slab_claim(struct prof_slab_hdr *hdr)
{
	__u64 gen = __PROF_LOAD(&hdr->gen);

	__PROF_STORE(&hdr->tid, (__u32)prof_gettid());
	__PROF_STORE(&hdr->oncpu_start_ns, prof_mono_ns(CLOCK_THREAD_CPUTIME_ID));
	__PROF_STORE(&hdr->start_tick, __prof_now());
	__PROF_STORE(&hdr->ksched_slot, PROF_NO_SLOT);
	__PROF_STORE(&hdr->nnodes, 2);
	__PROF_STORE(&hdr->state, PROF_SLAB_ALIVE);
	__atomic_store_n(&hdr->gen, (gen | 1) + 1, __ATOMIC_RELEASE);
}

__u32 prof_thread_table_size(void)
{
	__u32 tsize;

	/* a power of two at least twice the nodes: probes stay short */
	for (tsize = 32; tsize < 2 * prof_rt.max_nodes; tsize <<= 1)
		;
	return tsize;
}

static void thread_start(struct __prof_thread *t, struct prof_tpriv *p, struct prof_tentry *te,
			 __u32 tsize);


/*
 * The first zone of a thread when every slab had one: a slab an exited
 * thread left, cleared, is the new thread's; when none is, the exited
 * threads' profiles go into the aggregate first (prof_threads_fold).  Caller
 * holds the lock, released here on success; false (the lock held) if it
 * cannot be.
 */
static bool thread_reuse(struct __prof_thread *t, struct prof_tpriv *p)
{
	struct prof_tentry *te, *next;
	struct prof_slab_hdr *hdr;
	__u32 idx, tsize = prof_thread_table_size();

	if (!prof_rt.nclean && !prof_threads_fold())
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
	prof_slab_claim(hdr);
	thread_start(t, p, te, tsize);
	return true;
}

/* the fast path's limit: a day, or less, so that each call it counts fits
 * an event's duration field (a longer one takes __prof_anomaly) */
__u64 prof_fast_limit(const struct __prof_thread *t)
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
		prof_fork_publish_locked();
	if (!prof_rt.seg && !prof_rt.disabled) {
		if (prof_seg_init())
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
		prof_thread_sink(t);
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
		prof_thread_sink(t);
		return;
	}
	idx = prof_rt.seg->nslabs;
	te = calloc(1, sizeof(*te));
	tsize = prof_thread_table_size();
	p->table = calloc(tsize, sizeof(__u32));
	hdr = prof_rt_slab(idx);
	/* its header, root and overflow nodes must have room, or no profile */
	if (te && p->table && prof_slab_reserve(hdr, 2, &p->res_nodes)) {
		prof_seg_nospace();
		free(te);
		te = NULL;
	}
	if (!te || !p->table) {
		free(te);
		free(p->table);
		p->table = NULL;
		pthread_mutex_unlock(&prof_rt.lock);
		prof_thread_sink(t);
		return;
	}
	nodes = prof_rt_region(hdr, PROF_REGION_NODES);
	prof_node_init(&nodes[PROF_NODE_ROOT], PROF_SITE_NONE, PROF_NODE_ROOT);
	/* node 1 takes every zone entered while the table is full */
	prof_node_init(&nodes[1], PROF_SITE_NONE, PROF_NODE_ROOT);
	prof_slab_claim(hdr);
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
	prof_thread_bind_slab(t, hdr);
	/* a zone longer than a day is a broken clock, not a measurement */
	t->day = prof_day();
	t->limit = prof_fast_limit(t);
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



/* the node for (parent, site), created on a miss; overflow node if full */
__u32 prof_node_lookup(__u32 parent, __u32 site)
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
	    prof_slab_reserve_nodes(p->hdr, p->nnodes,
			       p->nnodes + 64 < p->max_nodes ? p->nnodes + 64 : p->max_nodes,
			       &p->res_nodes)) {
		prof_seg_nospace();
		goto full;
	}
	n = p->nnodes++;
	prof_node_init(&t->nodes[n], site, parent);
	p->table[i] = n + 1;
	__atomic_store_n(&p->hdr->nnodes, p->nnodes, __ATOMIC_RELEASE);
	return n;
full:
	__PROF_ADD(&p->hdr->overflow, 1);
	return 1;
}

/* a thread about to use its slab: initialised, and moved if forked */
void prof_thread_prepare(void)
{
	if (__prof_tls.cur == __PROF_UNINIT)
		thread_init();
	else if (__prof_tls.cur == __PROF_FORKED)
		prof_fork_move_self();
}

void prof_thread_ready(void)
{
	int saved = errno;

	/* a signal handler's call inside our own slow path: not now */
	if (prof_tpriv.busy)
		return;
	prof_tpriv.busy = 1;
	prof_thread_prepare();
	prof_tpriv.busy = 0;
	errno = saved;
}
void prof_thread_mark_exited(struct prof_tpriv *p)
{
	if (__prof_tls.cur == __PROF_FORKED) {
		/* a fork child's thread that never moved: its slab is the
		 * parent's, not ours to mark */
		pthread_mutex_lock(&prof_rt.lock);
		prof_fork_mover = false;
		if (!prof_rt.fork_pending)
			prof_fork_drop_old();
		pthread_mutex_unlock(&prof_rt.lock);
		return;
	}
	if (!p->hdr || !p->te)
		return;
	__PROF_STORE(&p->hdr->oncpu_exit_ns, prof_mono_ns(CLOCK_THREAD_CPUTIME_ID));
	__PROF_STORE(&p->hdr->exit_tick, __prof_now());
	__PROF_STORE(&p->hdr->state, PROF_SLAB_EXITED);
	pthread_mutex_lock(&prof_rt.lock);
	p->te->alive = false;
	p->te->fast = NULL;
	p->te->table = NULL;
	pthread_mutex_unlock(&prof_rt.lock);
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

void prof_thread_exit(void *arg)
{
	struct prof_tpriv *p = arg;

	/* a signal handler's zone meanwhile takes the overflow node */
	p->busy = 1;
	prof_thread_mark_exited(p);
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
