// SPDX-License-Identifier: MIT
/*
 * sitesize_lock.c - what a counted mutex puts at its site: test_compilers
 * builds this with gcc and clang at -O2 (-c only) and takes every
 * executable byte of the object but sz_lock_bare's twice (the same lock
 * and unlock, bare) for the pair's.
 */
#include "prof.h"

void sz_work(void);
void sz_lock_bare(pthread_mutex_t *m);
void sz_lock(pthread_mutex_t *m);

void sz_lock_bare(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	sz_work();
	pthread_mutex_unlock(m);
}

void sz_lock(pthread_mutex_t *m)
{
	PROF_MUTEX_LOCK(sz_mutex, m);
	sz_work();
	PROF_MUTEX_UNLOCK(sz_mutex, m);
}
