// SPDX-License-Identifier: MIT
/*
 * disable_obj.c - every macro of prof.h once.  Built with -DPROF_DISABLE it
 * must not reference the runtime at all (test_disable checks the object);
 * built without, it is the control that shows the checks can see them.
 */
#include "prof.h"

int disabled_work(int n);

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
	}
	return r;
}
