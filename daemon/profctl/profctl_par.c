// SPDX-License-Identifier: MIT
/*
 * profctl_par.c - a snapshot's threads rendered on two CPUs, in order.
 *
 * The caller renders the even threads straight to the output; a helper
 * renders the odd ones, each into memory, through its own lazy view of
 * the same read (prof_snapshot__lazy_view), and the caller writes each
 * after the even one before it.  The helper runs at most two threads
 * ahead: two slots, each filled by the helper and emptied by the caller,
 * their buffers kept from thread to thread (a fresh buffer a thread, as
 * open_memstream gives, cost more than the second CPU won).
 * One CPU, one thread, or a snapshot that is not lazy: the caller alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "profctl.h"

struct par_slot {
	char *buf; /* an odd thread's text, len bytes of cap */
	size_t len, cap;
	int err;
	bool full;
};

/* the helper's stream: appends to its slot's buffer */
static ssize_t slot_write(void *cookie, const char *data, size_t n)
{
	struct par_slot *sl = cookie;

	if (sl->len + n > sl->cap) {
		size_t cap = sl->cap ? sl->cap : 1 << 16;
		char *b;

		while (cap < sl->len + n)
			cap *= 2;
		b = realloc(sl->buf, cap);
		if (!b)
			return -1;
		sl->buf = b;
		sl->cap = cap;
	}
	memcpy(sl->buf + sl->len, data, n);
	sl->len += n;
	return (ssize_t)n;
}

struct par {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct prof_snapshot *view; /* the helper's */
	pc_thread_fn fn;
	void *ctx;
	struct par_slot slot[2];
	bool quit;
};

static void *par_helper(void *arg)
{
	struct par *p = arg;
	__u32 i, k;

	for (i = 1, k = 0; i < p->view->nthreads; i += 2, k ^= 1) {
		static const cookie_io_functions_t io = { .write = slot_write };
		struct par_slot *sl = &p->slot[k];
		FILE *m;
		int err;

		pthread_mutex_lock(&p->lock);
		while (sl->full && !p->quit)
			pthread_cond_wait(&p->cv, &p->lock);
		if (p->quit) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		pthread_mutex_unlock(&p->lock);
		sl->len = 0;
		m = fopencookie(sl, "w", io);
		err = m ? p->fn(p->ctx, m, p->view, i) : -ENOMEM;
		/* the text is in the slot once the stream is closed */
		if (m && fclose(m) && !err)
			err = -EIO;
		pthread_mutex_lock(&p->lock);
		sl->err = err;
		sl->full = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->lock);
		if (err)
			break;
	}
	return NULL;
}

int pc_thread_begin(const struct prof_snapshot *s, __u32 i, __u32 **kids, __u32 *nkids)
{
	const struct prof_snap_thread *t = &s->threads[i];
	int err = prof_snap_thread_load(s, &s->threads[i]);

	if (err || t->nnodes <= *nkids)
		return err;
	free(*kids);
	*kids = malloc(t->nnodes * sizeof(**kids));
	*nkids = *kids ? t->nnodes : 0;
	return *kids ? 0 : -ENOMEM;
}

int pc_cpus(void)
{
	cpu_set_t set;

	/* the CPUs we may run on (taskset, cpusets), not those online */
	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

static int par_alone(FILE *f, const struct prof_snapshot *s, pc_thread_fn fn, void *ctx)
{
	__u32 i;
	int err = 0;

	for (i = 0; i < s->nthreads && !err; i++)
		err = fn(ctx, f, s, i);
	return err;
}

int pc_par_threads(FILE *f, const struct prof_snapshot *s, pc_thread_fn fn, void *ctx_main,
		   void *ctx_helper)
{
	struct par p = { .fn = fn, .ctx = ctx_helper };
	pthread_t th;
	__u32 i;
	int err = 0;

	if (s->nthreads < 2 || !s->lazy || pc_cpus() < 2)
		return par_alone(f, s, fn, ctx_main);
	p.view = prof_snapshot__lazy_view(s);
	if (!p.view)
		return par_alone(f, s, fn, ctx_main);
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cv, NULL);
	if (pthread_create(&th, NULL, par_helper, &p)) {
		err = par_alone(f, s, fn, ctx_main);
		goto cleanup;
	}
	for (i = 0; i < s->nthreads && !err; i += 2) {
		struct par_slot *sl = &p.slot[(i / 2) % 2];

		err = fn(ctx_main, f, s, i);
		if (err || i + 1 >= s->nthreads)
			break;
		pthread_mutex_lock(&p.lock);
		while (!sl->full)
			pthread_cond_wait(&p.cv, &p.lock);
		pthread_mutex_unlock(&p.lock);
		err = sl->err;
		if (!err && sl->len && fwrite(sl->buf, 1, sl->len, f) != sl->len)
			err = -EIO;
		pthread_mutex_lock(&p.lock);
		sl->full = false;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.lock);
	}
	pthread_mutex_lock(&p.lock);
	p.quit = true;
	pthread_cond_broadcast(&p.cv);
	pthread_mutex_unlock(&p.lock);
	pthread_join(th, NULL);
	free(p.slot[0].buf);
	free(p.slot[1].buf);
cleanup:
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.lock);
	prof_snapshot__destroy(p.view);
	return err;
}
