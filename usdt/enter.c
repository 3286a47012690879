// SPDX-License-Identifier: MIT
/*
 * enter.c - a zone's enter that missed its site's way: the slow enter
 * (usdt/prof_slow.c).  A file of its own, so that the slow enter is a call to
 * another object, which a test can count (ld --wrap).
 */
#include "prof.h"

void __prof_enter_miss(struct __prof_zone *z, const struct prof_site *site)
{
	__prof_enter_slow(z, site);
}
