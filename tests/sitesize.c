// SPDX-License-Identifier: MIT
/*
 * sitesize.c - what one zone puts at its site: test_compilers builds this
 * with gcc and clang at -O2 (-c only) and compares sz_one, a function
 * with a zone, against sz_bare, the same function without: its hot bytes
 * (the difference of the two functions' sizes) and its cold ones (every
 * other executable byte of the object: the slow enter's call, the enter
 * probe, the exit stub).
 */
#include "prof.h"

void sz_work(void);
void sz_bare(void);
void sz_one(void);

void sz_bare(void)
{
	sz_work();
}

void sz_one(void)
{
	PROF_USDT(sz_zone);
	sz_work();
}
