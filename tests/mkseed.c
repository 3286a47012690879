// SPDX-License-Identifier: MIT
/*
 * mkseed.c - write a small valid segment image (this process's own
 * profile: nested, recursive and public zones over two threads) to
 * argv[1], as a seed for the fuzzer; and with argv[2], a copy of the live
 * segment there (event rings and annotations).
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
		PROF_ZONE_VALUE(i);
		PROF_ZONE_TEXT("seed");
		PROF_PLOT(seed_plot, i);
		PROF_MESSAGE("seed %d", i);
		PROF_LOCK_WAIT(seed_lock);
		PROF_LOCK_ACQUIRED(seed_lock);
		PROF_LOCK_RELEASED(seed_lock);
		{
			PROF_USDT(inner);
			rec(3);
		}
	}
	return arg;
}

/* this process's live segment, mapped (testutil.h's, without cmocka) */
static void *own_segment(size_t *len)
{
	__u64 token = prof_proc_start_token(getpid());
	struct prof_seg_ent *ents;
	void *mem = NULL;
	struct stat st;
	size_t n, i;
	int fd;

	if (prof_seg_list(geteuid(), &ents, &n))
		return NULL;
	for (i = 0; i < n && !mem; i++) {
		if (ents[i].pid != (__u32)getpid() || ents[i].start_token != token)
			continue;
		fd = prof_seg_open(&ents[i]);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st)) {
			mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
			if (mem == MAP_FAILED)
				mem = NULL;
			*len = (size_t)st.st_size;
		}
		close(fd);
	}
	free(ents);
	return mem;
}

int main(int argc, char **argv)
{
	struct prof_snapshot *s;
	pthread_t th;
	size_t len;
	void *img;
	FILE *f;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: mkseed FILE [LIVE]\n");
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
	if (argc == 3) {
		img = own_segment(&len);
		f = img ? fopen(argv[2], "w") : NULL;
		if (!f || fwrite(img, 1, len, f) != len || fclose(f)) {
			fprintf(stderr, "mkseed: failed to write %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		munmap(img, len);
	}
	return 0;
}
