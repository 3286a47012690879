// SPDX-License-Identifier: MIT
/*
 * test_readnow.c - a live read measures open calls to a now taken after
 * it copied the slabs, so an open parent never shows less than a child
 * whose call ended during the copy.
 *
 * An image of this process's segment, made live (no snap_tick, the
 * monotonic clock in ns) in a mapping of our own: a parent zone open,
 * its child's node on a page we protect.  The read faults on that page in
 * the middle of its copy; the handler ends the child's call there (its
 * ticks grow by the time since the parent began, as if both began
 * together) and lets the read go on.  A now taken before the copy counts
 * the parent's open call to before that instant, short of its child; a
 * now taken after, no less.  The full read, the lazy one (its threads
 * copied as prof_snap_next walks them) and the flat pass (top's) each.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "prof.h"
#include "testutil.h"

static void rn_child(void)
{
	PROF_USDT(rn_child);
}

/* nodes enough (one a depth) to put the next ones a page past the slab's header */
static void rn_deep(int n)
{
	PROF_USDT(rn_deep);
	if (n > 1)
		rn_deep(n - 1);
}

static void rn_parent(void)
{
	PROF_USDT(rn_parent);
	rn_child();
}

/* the live copy and what the handler does at the fault */
static char *seg, *page;
static size_t seg_len, pagesz;
static struct prof_node *child_node;
static __u64 parent_start, faults;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	char *a = si->si_addr;
	__u64 t = test_now_ns();

	(void)uc;
	if (a < page || a >= page + pagesz) {
		signal(sig, SIG_DFL);
		return;
	}
	/* an instant past any now the read took before the copy */
	while (test_now_ns() <= t + 1000)
		;
	mprotect(page, pagesz, PROT_READ | PROT_WRITE);
	/* the child's call ends here: it began with its parent */
	child_node->ticks += test_now_ns() - parent_start;
	faults++;
}

struct where {
	__u32 tid, slab, parent, child;
};

/* the image, made live in a page-aligned mapping; which nodes are ours */
static void live_copy(struct where *w)
{
	struct prof_snapshot *s = test_snapshot(0);
	struct prof_seg_hdr *h;
	struct prof_slab_hdr *sh;
	struct prof_node *nodes;
	__u64 *open;
	void *img;
	size_t len;
	__u32 i, j;
	bool found = false;

	assert_non_null(s);
	for (i = 0; i < s->nthreads && !found; i++) {
		const struct prof_snap_thread *t = &s->threads[i];

		for (j = 2; j < t->nnodes && !found; j++)
			if (!strcmp(prof_snap_node_name(s, &t->nodes[j]), "rn_child") &&
			    !strcmp(prof_snap_node_name(s, &t->nodes[t->nodes[j].parent]),
				    "rn_parent")) {
				w->tid = t->tid;
				w->slab = t->slab;
				w->child = j;
				w->parent = t->nodes[j].parent;
				found = true;
			}
	}
	assert_true(found);
	assert_int_equal(prof_snapshot__write(s, &img, &len), 0);
	prof_snapshot__destroy(s);
	pagesz = (size_t)sysconf(_SC_PAGESIZE);
	seg_len = (len + pagesz - 1) / pagesz * pagesz;
	seg = mmap(NULL, seg_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(seg != MAP_FAILED);
	memcpy(seg, img, len);
	free(img);
	seg_len = len;
	h = (void *)seg;
	h->snap_tick = 0;
	h->exit_tick = 0;
	h->flags &= ~(__u32)PROF_SEG_EXITED;
	h->clock = PROF_CLOCK_MONO;
	h->tick_hz = 1000000000ull;
	sh = (void *)(seg + h->slabs_off + (size_t)w->slab * h->slab_size);
	sh->state = PROF_SLAB_ALIVE;
	sh->exit_tick = 0;
	nodes = (void *)((char *)sh + h->region[PROF_REGION_NODES].off);
	open = (void *)((char *)sh + h->region[PROF_REGION_OPEN].off);
	/* the parent open since 1 ms ago, one call of 1000 ns before; the
	 * child as much, none open */
	parent_start = test_now_ns() - 1000000;
	sh->start_tick = parent_start - 1000000;
	for (i = 2; i < sh->nnodes; i++)
		open[i] = 0;
	open[w->parent] = parent_start;
	nodes[w->parent].calls = nodes[w->child].calls = 1;
	nodes[w->parent].ticks = nodes[w->child].ticks = 1000;
	nodes[w->parent].max = nodes[w->child].max = 1000;
	child_node = &nodes[w->child];
	page = (char *)((uintptr_t)child_node & ~(uintptr_t)(pagesz - 1));
	/* the fault must come in the copy of the nodes, past what a read
	 * takes of the slab's header before it */
	assert_true(page > (char *)sh);
}

static void arm(void)
{
	struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO };

	child_node->ticks = 1000;
	faults = 0;
	assert_int_equal(sigaction(SIGSEGV, &sa, NULL), 0);
	assert_int_equal(mprotect(page, pagesz, PROT_NONE), 0);
}

static void check_nodes(const struct prof_snap_thread *t, const struct where *w)
{
	const struct prof_snap_node *p = &t->nodes[w->parent], *c = &t->nodes[w->child];

	assert_int_equal(faults, 1);
	assert_true(p->open);
	assert_true(c->ticks > 1000 + 1000000);
	if (p->ticks < c->ticks)
		fail_msg("open parent %llu ticks, its child %llu", (unsigned long long)p->ticks,
			 (unsigned long long)c->ticks);
	assert_true(p->ticks >= p->child_ticks);
}

static void test_full_read(void **state)
{
	const struct prof_snap_thread *t;
	struct prof_snapshot *s;
	struct where w;

	(void)state;
	rn_deep(400);
	rn_parent();
	live_copy(&w);
	arm();
	assert_int_equal(prof_snapshot__read(seg, seg_len, &s), 0);
	t = test_thread(s, w.tid);
	assert_non_null(t);
	check_nodes(t, &w);
	prof_snapshot__destroy(s);
}

static void test_lazy_read(void **state)
{
	struct prof_snapshot *s;
	struct prof_snap_iter it;
	struct prof_snap_thread *t;
	struct where w;
	bool seen = false;

	(void)state;
	rn_deep(400);
	rn_parent();
	live_copy(&w);
	assert_int_equal(prof_snapshot__read_opts(seg, seg_len, PROF_READ_LAZY, &s), 0);
	/* the nodes are copied as the walk loads them: the fault then */
	arm();
	it = PROF_SNAP_ITER(s, 0);
	while ((t = prof_snap_next(&it)))
		if (t->slab == w.slab) {
			check_nodes(t, &w);
			seen = true;
		}
	assert_int_equal(it.err, 0);
	assert_true(seen);
	prof_snapshot__destroy(s);
}

static void test_flat(void **state)
{
	struct prof_snapshot *s;
	struct prof_flat_row *rows;
	const struct prof_flat_row *p = NULL, *c = NULL;
	struct where w;
	size_t n, i;

	(void)state;
	rn_deep(400);
	rn_parent();
	live_copy(&w);
	arm();
	assert_int_equal(prof_seg_flat(seg, seg_len, 0, PROF_SORT_TOTAL, &s, &rows, &n), 0);
	assert_int_equal(faults, 1);
	for (i = 0; i < n; i++) {
		if (rows[i].site >= s->nsites)
			continue;
		if (!strcmp(s->sites[rows[i].site].name, "rn_parent"))
			p = &rows[i];
		if (!strcmp(s->sites[rows[i].site].name, "rn_child"))
			c = &rows[i];
	}
	assert_non_null(p);
	assert_non_null(c);
	assert_int_equal(p->open, 1);
	if (p->ticks < c->ticks)
		fail_msg("open parent's row %llu ticks, its child's %llu",
			 (unsigned long long)p->ticks, (unsigned long long)c->ticks);
	free(rows);
	prof_snapshot__destroy(s);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_full_read), cmocka_unit_test(test_lazy_read),
	  cmocka_unit_test(test_flat))
