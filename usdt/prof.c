// SPDX-License-Identifier: MIT
/*
 * usdt/prof.c - the runtime's process-wide state (prof_rt, the thread-local
 * fast-path words) and its start: the per-thread key and the fork and exit
 * hooks.  The fast path is inline in prof.h; the slow paths, which run once
 * per thread, site or node, or on a rare event, are in usdt/prof_*.c
 * (usdt/prof_int.h lists them).
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

struct prof_rt prof_rt = { .lock = PTHREAD_MUTEX_INITIALIZER, .seg_fd = -1 };
bool prof_fork_mover; /* the forking thread has yet to move out */

const struct prof_sched_rec prof_zero_rec = { .seq = PROF_SEQ_UNCOVERED };
pthread_cond_t prof_reg_cv = PTHREAD_COND_INITIALIZER;
/* the activity word and ext flag of a thread without a slab (a sink):
 * nobody reads them */
__u64 prof_sink_activity;
__u32 prof_sink_ext_used;

/* shared by every sink thread that failed malloc, and by a zone in a signal
 * handler that interrupted its thread's first zone: racy, but in bounds */
struct prof_sink prof_last_resort;

__thread struct __prof_thread __prof_tls __attribute__((tls_model("initial-exec"))) = {
	.cur = __PROF_UNINIT,
	.krec = &prof_zero_rec,
	.activity = &prof_sink_activity,
	.ext_used = &prof_sink_ext_used,
	/* never NULL: a zone in a signal handler may run before the slab */
	.nodes = prof_last_resort.nodes,
	.ext = prof_last_resort.ext,
	.open = prof_last_resort.open,
	.rowmap = prof_last_resort.rowmap,
	.hist = prof_last_resort.hist,
	.ring = prof_last_resort.ring,
	.ring_head = &prof_last_resort.ring_hdr.head,
};
int __prof_clock_tsc = 1;

__thread struct prof_tpriv prof_tpriv __attribute__((tls_model("initial-exec")));
pthread_key_t prof_key;
pthread_once_t prof_once = PTHREAD_ONCE_INIT;

pid_t prof_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

__u64 prof_ticks_to_ns(__u64 ticks)
{
	return (__u64)((double)ticks * prof_rt.ns_per_tick);
}

void prof_warnx(const char *fmt, ...)
{
	va_list ap;

	if (prof_env.quiet)
		return;
	va_start(ap, fmt);
	fputs("prof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void prof_fork_prepare(void)
{
	pthread_mutex_lock(&prof_rt.lock);
}
static void prof_fork_parent(void)
{
	pthread_mutex_unlock(&prof_rt.lock);
}

void prof_once_init(void)
{
	pthread_key_create(&prof_key, prof_thread_exit);
	pthread_atfork(prof_fork_prepare, prof_fork_parent, prof_fork_child);
	atexit(prof_atexit);
}
