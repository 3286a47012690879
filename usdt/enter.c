// SPDX-License-Identifier: MIT
/*
 * enter.c - a zone's enter that missed its site's newest way: the older
 * way, then the slow enter (usdt/prof_slow.c).  A file of its own, so that the slow
 * enter is a call to another object, which a test can count (ld --wrap).
 */
#include "prof.h"

void __prof_enter_miss(struct __prof_zone *z, const struct prof_site *site)
{
	struct __prof_cache *c = z->c;

	if (__builtin_expect(c->parent2 == z->prev, 1))
		__prof_enter_mark(z, c->node2);
	else
		__prof_enter_slow(z, site);
}
