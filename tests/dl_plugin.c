// SPDX-License-Identifier: MIT
/*
 * dl_plugin.c - a shared library with zones, for test_dlopen: built twice
 * (PLUG_B=0 and 1), alike but for the zones' names, so that the second
 * is likely loaded where the first was.
 */
#include "prof.h"

void plug_zones(int n);
void plug_begin(void);
void plug_trace_open(int on);

/* plug_open's exit semaphore, as a tracer attached to its exit raises it */
#if PLUG_B
extern volatile unsigned short plug_open_exit_sem __asm__("__prof_sem.plug_open_b__exit")
	__attribute__((visibility("hidden")));
#else
extern volatile unsigned short plug_open_exit_sem __asm__("__prof_sem.plug_open_a__exit")
	__attribute__((visibility("hidden")));
#endif

void plug_zones(int n)
{
	int i;

	/* a zone's name is its argument's spelling: no macro in it */
	for (i = 0; i < n; i++) {
#if PLUG_B
		PROF_USDT(plug_zone_b);
#else
		PROF_USDT(plug_zone_a);
#endif
	}
}

/* opens a zone the caller closes (PROF_END), maybe after dlclose */
void plug_begin(void)
{
#if PLUG_B
	PROF_BEGIN(plug_open_b);
#else
	PROF_BEGIN(plug_open_a);
#endif
}

/* a tracer on plug_open's exit, or none: the zone's exit is then wanted
 * (its END goes the rare way, through this library's site and stub) */
void plug_trace_open(int on)
{
	plug_open_exit_sem = (unsigned short)(on ? 1 : 0);
}
