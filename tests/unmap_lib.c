// SPDX-License-Identifier: MIT
/*
 * unmap_lib.c - the library test_sample_unmap loads, runs and unloads,
 * built twice (UNMAP_B 0 and 1) alike but for its function's name, so
 * that the second is loaded where the first was and burns at the same
 * offsets: a frame of one named from the other's symbols is a wrong name.
 */
static volatile unsigned long sink;

unsigned long unmap_run(unsigned long n);

#if UNMAP_B
#define BURN_FN burn_b
#else
#define BURN_FN burn_a
#endif

__attribute__((noinline)) static void BURN_FN(unsigned long n)
{
	unsigned long i, x = sink;

	for (i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
}

unsigned long unmap_run(unsigned long n)
{
	BURN_FN(n);
	return sink;
}
