// SPDX-License-Identifier: MIT
/*
 * usdt/prof_site.c - sites: a zone's descriptor gets its index in the segment's
 * site table the first time it runs.
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

static __u32 site_slot(const struct prof_site *s)
{
	__u32 size = 2 * prof_rt.max_sites;
	__u32 i = (__u32)(((uintptr_t)s >> 3) * 0x9e3779b1u) % size;

	/* never full: at most max_sites keys in 2 * max_sites slots */
	while (prof_rt.site_keys[i] && prof_rt.site_keys[i] != s)
		i = (i + 1) % size;
	return i;
}

void prof_copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	memset(dst + n, 0, len - n);
}

static bool site_same(const struct prof_site_ent *e, const struct prof_site *s)
{
	return e->line == s->line && !strncmp(e->name, s->name ? s->name : "", sizeof(e->name) - 1);
}

/* site index of a descriptor, registering it on first sight */
__u32 prof_site_index(const struct prof_site *s)
{
	struct prof_seg_hdr *h = prof_rt.seg;
	struct prof_site_ent *e;
	const char *file;
	__u32 i, idx;

	pthread_mutex_lock(&prof_rt.lock);
	i = site_slot(s);
	/* a library dlclose()d, another loaded at its address: a descriptor
	 * at a known address with another name or line is a new site */
	if (prof_rt.site_keys[i] && site_same(&prof_rt.sites[prof_rt.site_vals[i]], s)) {
		idx = prof_rt.site_vals[i];
		goto out;
	}
	if (h->nsites >= prof_rt.max_sites) {
		h->sites_dropped++;
		idx = PROF_SITE_NONE;
		goto out;
	}
	idx = h->nsites;
	if (prof_seg_reserve((__u64)((char *)&prof_rt.sites[idx] - (char *)h),
			sizeof(prof_rt.sites[idx]))) {
		prof_seg_nospace();
		idx = PROF_SITE_NONE;
		goto out;
	}
	e = &prof_rt.sites[idx];
	/* a C++ PROF_FUNC carries __PRETTY_FUNCTION__: named once, here */
	if (s->flags & PROF_SITE_FUNC)
		prof_func_name(s->name, e->name, sizeof(e->name));
	else
		prof_copy_str(e->name, sizeof(e->name), s->name);
	prof_copy_str(e->func, sizeof(e->func), s->func);
	/* keep the tail of a long path: it names the file */
	file = s->file ? s->file : "";
	if (strlen(file) >= sizeof(e->file))
		file += strlen(file) - (sizeof(e->file) - 1);
	prof_copy_str(e->file, sizeof(e->file), file);
	e->line = s->line;
	e->flags = s->flags;
	__atomic_store_n(&h->nsites, idx + 1, __ATOMIC_RELEASE);
	prof_rt.site_keys[i] = s;
	prof_rt.site_vals[i] = idx;
out:
	pthread_mutex_unlock(&prof_rt.lock);
	return idx;
}
