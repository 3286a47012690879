// SPDX-License-Identifier: MIT
/*
 * reader_trace.c - the event rings (slab.h): each thread's last calls, oldest
 * first, copied while the threads write them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annot.h"
#include "reader_int.h"

/*
 * The event rings of mem's threads (slab.h).  Each ring is copied while its
 * thread may write it: what the thread overwrote during the copy is left
 * out, never shown torn.
 */
int prof_seg_trace(const void *mem, size_t len, struct prof_trace **out)
{
	return prof_seg_trace_newest(mem, len, 0, out);
}

int prof_seg_trace_newest(const void *mem, size_t len, __u64 newest, struct prof_trace **out)
{
	const struct prof_seg_hdr *h = mem;
	const struct prof_region *rr;
	struct prof_trace *t;
	struct seg_geom g;
	__u32 nslabs, i;
	__u64 nev, want, k;
	int err;

	*out = NULL;
	err = seg_check(mem, len, &g);
	if (err)
		return err;
	nslabs = LDA(&h->nslabs);
	if (nslabs > g.max_threads)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->threads = calloc(nslabs ? nslabs : 1, sizeof(*t->threads)))) {
		free(t);
		return -ENOMEM;
	}
	t->tick_hz = g.tick_hz;
	t->tick_base = LD(&h->tick_base);
	t->mono_base_ns = LD(&h->mono_base_ns);
	t->clock = LD(&h->clock);
	t->pid = LD(&h->pid);
	t->image = g.snap_tick != 0;
	rr = &g.region[PROF_REGION_RING];
	nev = rr->size ? (rr->size - PROF_RING_HDR_SIZE) / sizeof(struct prof_event) : 0;
	t->ring_events = nev;
	want = newest && newest < nev ? newest : nev;
	for (i = 0; i < nslabs && nev; i++) {
		const char *slab = (const char *)mem + g.slabs_off + (__u64)i * g.slab_size;
		const struct prof_slab_hdr *sh = (const void *)slab;
		const struct prof_ring *r = (const void *)(slab + rr->off);
		const struct prof_event *ev = prof_ring_events(r);
		struct prof_trace_thread *tt = &t->threads[t->nthreads];
		bool live = !g.snap_tick && g.folds;
		__u64 h1, h2, lo, n, first, gen = live ? LDA(&sh->gen) : 0;
		__u32 state;

		if (LDA(&sh->magic) != PROF_SLAB_MAGIC)
			continue;
		/* a slab between two threads (slab.h): its last one's events
		 * went with it */
		if (live && (gen & 1))
			continue;
		state = LD(&sh->state);
		if (state != PROF_SLAB_ALIVE && state != PROF_SLAB_EXITED)
			continue;
		tt->tid = LD(&sh->tid);
		tt->slab = i;
		tt->gen = LD(&sh->gen);
		tt->ev = malloc(want * sizeof(*tt->ev));
		if (!tt->ev) {
			prof_trace__destroy(t);
			return -ENOMEM;
		}
		h1 = LDA(&r->head);
		/* the newest want events below the head, oldest first; acquire:
		 * each load of the copy before the second head's (a fence would
		 * say it once, but TSan does not see fences) */
		first = h1 > want ? h1 - want : 0;
		for (k = first; k < h1; k++) {
			tt->ev[k - first].start = LDA(&ev[k & (nev - 1)].start);
			tt->ev[k - first].dur_node = LDA(&ev[k & (nev - 1)].dur_node);
		}
		h2 = LD(&r->head);
		/* it changed hands during the copy: never two threads' events */
		if (live && LD(&sh->gen) != gen) {
			free(tt->ev);
			tt->ev = NULL;
			continue;
		}
		if (h2 < h1) {
			/* heads only grow: not a ring a thread writes */
			prof_trace__destroy(t);
			return -EINVAL;
		}
		/* a live writer may be at event h2, which overwrites h2 - nev
		 * (an exited thread's ring is whole) */
		lo = h1 > nev ? h1 - nev : 0;
		if (state == PROF_SLAB_ALIVE && h2 + 1 > nev && h2 + 1 - nev > lo)
			lo = h2 + 1 - nev;
		/* what the ring held before the newest: left unread */
		if (lo < first) {
			tt->skipped = first - lo;
			lo = first;
		}
		n = h1 > lo ? h1 - lo : 0;
		if (n && lo > first)
			memmove(tt->ev, tt->ev + (lo - first), n * sizeof(*tt->ev));
		tt->n = n;
		tt->written = h1;
		t->nthreads++;
	}
	/* after the rings: a value names a call its ring has, or had */
	err = prof_seg_annot(mem, len, &t->annot);
	if (err) {
		prof_trace__destroy(t);
		return err;
	}
	*out = t;
	return 0;
}

void prof_trace__destroy(struct prof_trace *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nthreads; i++)
		free(t->threads[i].ev);
	prof_annot__destroy(t->annot);
	free(t->threads);
	free(t);
}
