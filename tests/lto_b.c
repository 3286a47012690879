// SPDX-License-Identifier: MIT
/* lto_b.c - see lto_a.c: lto_a 3 calls, lto_b 5 */
#include <stdio.h>

#include "prof.h"

void lto_a(void);

static void __attribute__((noinline)) lto_b(void)
{
	PROF_USDT(lto_b);
}

int main(void)
{
	int i;

	for (i = 0; i < 5; i++) {
		if (i < 3)
			lto_a();
		lto_b();
	}
	printf("matrix ok\n");
	return 0;
}
