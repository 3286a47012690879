// SPDX-License-Identifier: MIT
/*
 * mkseed.c - write a small valid segment image (this process's own
 * profile: nested, recursive and public zones over two threads) to
 * argv[1], as a seed for the fuzzer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof.h"
#include "testutil.h"

static int rec(int n)
{
	PROF_USDT(rec);
	return n ? rec(n - 1) + 1 : 0;
}

static void *work(void *arg)
{
	PROF_THREAD_NAME("seed-worker");
	for (int i = 0; i < 10; i++) {
		PROF_USDT(outer);
		PROF_ALLOC(64);
		{
			PROF_USDT(inner);
			rec(3);
		}
	}
	return arg;
}

int main(int argc, char **argv)
{
	struct prof_snapshot *s;
	pthread_t th;
	size_t len;
	void *img;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: mkseed FILE\n");
		return 2;
	}
	PROF_FRAME();
	work(NULL);
	PROF_FRAME();
	if (pthread_create(&th, NULL, work, NULL)) {
		fprintf(stderr, "mkseed: pthread_create failed\n");
		return 1;
	}
	pthread_join(th, NULL);
	s = test_snapshot(0);
	if (!s || prof_snapshot__write(s, &img, &len)) {
		fprintf(stderr, "mkseed: failed to read own segment\n");
		return 1;
	}
	f = fopen(argv[1], "w");
	if (!f || fwrite(img, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "mkseed: failed to write %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	free(img);
	prof_snapshot__destroy(s);
	return 0;
}
