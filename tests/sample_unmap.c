// SPDX-License-Identifier: MIT
/*
 * sample_unmap.c - a program that unmaps sampled code: test_sample_unmap
 * runs it under profd.  Over and over it loads unmap_a.so, burns in it
 * inside zone "in_a", unloads it, loads unmap_b.so (where a was, most
 * often), burns inside zone "in_b", and unloads it.
 *
 *	sample_unmap DIR SECONDS	the libraries in DIR; after the first
 *					round, "same" or "moved": b loaded
 *					where a was, or not
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <prof.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* lib loaded, run for n steps, unloaded; its base address */
static unsigned long run(const char *dir, const char *lib, unsigned long n, int b)
{
	char path[4096];
	struct link_map *lm = NULL;
	unsigned long (*fn)(unsigned long);
	unsigned long base;
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, lib);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "sample_unmap: %s\n", dlerror());
		exit(1);
	}
	*(void **)&fn = dlsym(h, "unmap_run");
	if (!fn || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm)
		exit(1);
	base = (unsigned long)lm->l_addr;
	if (b) {
		PROF_USDT(in_b);
		fn(n);
	} else {
		PROF_USDT(in_a);
		fn(n);
	}
	dlclose(h);
	return base;
}

int main(int argc, char **argv)
{
	double end;
	int round = 0;

	if (argc != 3)
		return 2;
	end = now_s() + atof(argv[2]);
	while (now_s() < end) {
		unsigned long a = run(argv[1], "unmap_a.so", 20000000, 0);
		int same = run(argv[1], "unmap_b.so", 20000000, 1) == a;

		if (!round++) {
			puts(same ? "same" : "moved");
			fflush(stdout);
		}
	}
	return 0;
}
