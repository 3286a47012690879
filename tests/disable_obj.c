// SPDX-License-Identifier: MIT
/*
 * disable_obj.c - every macro of prof.h once.  Built with -DPROF_DISABLE it
 * must not reference the runtime at all (test_disable checks the object);
 * built without, it is the control that shows the checks can see them.
 */
#include "prof.h"

int disabled_work(int n);

static pthread_mutex_t dis_mutex = PTHREAD_MUTEX_INITIALIZER;

PROF_DEFINE(dis_public);
PROF_DECLARE(dis_public);

static int dis_helper(int n)
{
	PROF_FUNC();
	return n * 2;
}

int disabled_work(int n)
{
	int r = 0, i;

	PROF_THREAD_NAME("disabled");
	PROF_FRAME();
	for (i = 0; i < n; i++) {
		PROF_USDT(dis_zone);
		PROF_ALLOC(16);
		{
			PROF_SCOPE(dis_public);
			r += dis_helper(i);
		}
		PROF_BEGIN(dis_begin);
		r += 1;
		PROF_END();
		PROF_FREE(16);
		PROF_PLOT(dis_plot, i);
		PROF_MESSAGE("round %d", i);
		PROF_ZONE_VALUE(r);
		PROF_ZONE_TEXT("text");
		if (!PROF_MUTEX_LOCK(dis_lock, &dis_mutex))
			PROF_MUTEX_UNLOCK(dis_lock, &dis_mutex);
		PROF_LOCK_WAIT(dis_generic);
		PROF_LOCK_ACQUIRED(dis_generic);
		PROF_LOCK_RELEASED(dis_generic);
	}
	return r;
}
