// SPDX-License-Identifier: MIT
/*
 * structure_b.c - the second file of test_structure: a site of the public
 * zone defined there, and a private zone with the same name as one there.
 */
#include "prof.h"

void structure_b_public(void);
void structure_b_private(void);

PROF_DECLARE(struct_public);

void structure_b_public(void)
{
	PROF_SCOPE(struct_public);
}

void structure_b_private(void)
{
	PROF_USDT(struct_private);
}
