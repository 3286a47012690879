/* SPDX-License-Identifier: MIT */
/*
 * busguard.h - reading a segment its owner may truncate under the mapping
 * (profd and profctl; libprofread.a).  A read past the new end raises
 * SIGBUS: the handler maps zeros from the faulting page to the end of that
 * mapping and the read goes on (the reader treats every byte as hostile),
 * so no read is ever abandoned half way with what it allocated.  The
 * caller tells a faulted read by prof_bus_hits().
 */
#ifndef PROF_BUSGUARD_H
#define PROF_BUSGUARD_H

#include <stddef.h>

struct prof_snapshot;

/* install the SIGBUS handler; 0 or -errno */
int prof_bus_guard(void);
/* faults patched since prof_bus_guard(), in every thread */
unsigned long prof_bus_hits(void);
/* map the file at fd over mem (len bytes) again, as it was mapped
 * read-only and shared: zeros a fault patched in give way to the file */
int prof_bus_remap(int fd, const void *mem, size_t len);
/*
 * prof_snapshot__read of mem, the mapping of fd: a read that faulted
 * fails whole with -EFAULT (*snap NULL, nothing kept, the mapping the
 * file's again); else as prof_snapshot__read.
 */
int prof_bus_read(int fd, const void *mem, size_t len, struct prof_snapshot **snap);

#endif
