// SPDX-License-Identifier: MIT
/*
 * lto_a.c, lto_b.c - two files whose first zones share the site number
 * (__COUNTER__ restarts per file): test_compilers links them with -flto,
 * where both land in one assembly, and each zone must stay its own.
 */
#include "prof.h"

void lto_a(void);

void lto_a(void)
{
	PROF_USDT(lto_a);
}
