// SPDX-License-Identifier: MIT
/*
 * sample_garbage.c - a program whose stack is garbage while profd samples
 * it (test_sample): inside zone "garbage" it spins with its frame pointer
 * set to an address nothing maps, so a frame-pointer walk of its stack
 * reads nothing it can follow.  x86-64 only (elsewhere it just spins).
 *
 *	sample_garbage SECONDS
 */
#include <stdlib.h>
#include <time.h>
#include <prof.h>

__attribute__((noinline)) static void garbage(unsigned long n)
{
	PROF_USDT(garbage);
#if defined(__x86_64__)
	__asm__ volatile("push %%rbp\n\tmovabs $0x4141414141414141, %%rbp\n"
			 "1:\n\tdec %0\n\tjnz 1b\n\tpop %%rbp"
			 : "+r"(n)
			 :
			 : "memory", "cc");
#else
	while (n--)
		__asm__ volatile("" ::: "memory");
#endif
}

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 5);

	while (time(NULL) < end)
		garbage(10000000);
	return 0;
}
