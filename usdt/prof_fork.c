// SPDX-License-Identifier: MIT
/*
 * usdt/prof_fork.c - fork: the child's segment, made at its first zone activity, and
 * the forking thread's move out of the parent's slab.
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

/* the parent's mapping in a fork child, once nobody copies from it;
 * caller holds the lock */
void prof_fork_drop_old(void)
{
	if (prof_rt.fork_old)
		munmap(prof_rt.fork_old, prof_rt.fork_old_len);
	prof_rt.fork_old = NULL;
}


/*
 * The child of fork() gets a segment of its own, made at its first zone
 * activity, not here: a child that only execs (system(), popen()) must
 * leave no segment behind.  Until then nothing in the child writes the
 * parent's segment: the forking thread's current node is parked on a
 * marker no per-site cache holds, so its next enter, exit, END, FRAME or
 * ALLOC takes a slow path that moves it (prof_fork_move_self), and a thread
 * the child starts publishes the segment first (thread_init).
 */
void prof_fork_child(void)
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
		t->limit = prof_fast_limit(t);
	if (!prof_rt.seg)
		return;
	prof_rt.fork_pending = true;
	prof_fork_mover = t->cur != __PROF_UNINIT;
	if (prof_fork_mover) {
		p->fork_cur = t->cur;
		t->cur = __PROF_FORKED;
	}
}

/* make the fork child's segment, with the parent's sites at the same
 * indices; caller holds the lock */
void prof_fork_publish_locked(void)
{
	struct prof_seg_hdr *old = prof_rt.seg;
	struct prof_site_ent *old_sites = prof_rt.sites;
	__u32 nsites = old->nsites;

	prof_rt.fork_pending = false;
	prof_rt.fork_old = old;
	prof_rt.fork_old_len = prof_rt.seg_len;
	prof_rt.seg = NULL;
	if (prof_seg_init()) {
		prof_rt.disabled = true;
	} else {
		memcpy(prof_rt.sites, old_sites, (size_t)nsites * sizeof(*old_sites));
		prof_rt.seg->nsites = nsites;
		/* threads do not survive fork: the child's own logger, if any */
		prof_logger__atfork_child();
	}
	/* nobody left to copy from it */
	if (!prof_fork_mover)
		prof_fork_drop_old();
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
		prof_node_init(&nodes[i], old_nodes[i].site, old_nodes[i].parent);
		open[i] = t->open[i];
	}
	prof_thread_bind_slab(t, hdr);
	p->priv = m;
	return true;
}

void prof_fork_move_self(void)
{
	struct prof_tpriv *p = &prof_tpriv;
	struct __prof_thread *t = &__prof_tls;
	struct prof_node *old_nodes = t->nodes;
	__u32 cur = p->fork_cur, i, idx;

	pthread_mutex_lock(&prof_rt.lock);
	if (prof_rt.fork_pending)
		prof_fork_publish_locked();
	if (p->te && prof_rt.seg && prof_rt.seg->nslabs < prof_rt.max_threads &&
	    !prof_slab_reserve(prof_rt_slab(prof_rt.seg->nslabs), p->nnodes, &p->res_nodes)) {
		struct prof_slab_hdr *hdr;
		struct prof_node *nodes;

		idx = prof_rt.seg->nslabs;
		hdr = prof_rt_slab(idx);
		nodes = prof_rt_region(hdr, PROF_REGION_NODES);
		memcpy(hdr->name, p->hdr->name, sizeof(hdr->name));
		for (i = 0; i < p->nnodes; i++)
			prof_node_init(&nodes[i], old_nodes[i].site, old_nodes[i].parent);
		/* the zones open across fork() go on in the child */
		{
			__u64 *open = prof_rt_region(hdr, PROF_REGION_OPEN);

			for (i = 0; i < p->nnodes; i++)
				open[i] = t->open[i];
		}
		prof_slab_claim(hdr);
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
		prof_thread_bind_slab(t, hdr);
		t->cur = cur;
	} else if (p->te) {
		/* no segment or no slab: counted nowhere from here */
		free(p->te);
		p->te = NULL;
		p->hdr = NULL;
		if (fork_private_slab(p, t, old_nodes)) {
			t->cur = cur;
		} else {
			prof_thread_sink(t);
			t->cur = cur < 2 ? cur : 1;
		}
	} else {
		/* a sink thread already: its private nodes stay */
		t->cur = cur;
	}
	prof_fork_mover = false;
	prof_fork_drop_old();
	pthread_mutex_unlock(&prof_rt.lock);
	prof_agent__kick();
}
