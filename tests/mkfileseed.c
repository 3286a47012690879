// SPDX-License-Identifier: MIT
/*
 * mkfileseed.c - a segment image (argv[1], as mkseed writes) saved as a
 * profile file (argv[2]): the seed of the saved-profile fuzzer.  With a
 * third argument, also a file of hostile names there (quotes, backslashes,
 * newlines, control bytes, bytes of no UTF-8, in the command's, each
 * thread's and a zone's name) and counts that read as negative (-1 as a
 * u64, a max below the mean), and one (HOSTILE_FILE_longest) whose every
 * name fills its array: a saved file holds none longer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proffile.h"

static const char hostile[] = "q\"b\\n\n\t\x01\x1f\x7f\xff\xc3(<b>&";

/* s with hostile names and counts, saved as path */
static int save_hostile(struct prof_snapshot *s, const char *path)
{
	__u32 i;

	snprintf(s->comm, sizeof(s->comm), "%s", hostile);
	for (i = 0; i < s->nthreads; i++) {
		snprintf(s->threads[i].name, sizeof(s->threads[i].name), "%s", hostile);
		if (s->threads[i].nnodes > 1) {
			s->threads[i].nodes[1].calls = ~0ull;
			s->threads[i].nodes[1].max = 1;
			s->threads[i].unbalanced = ~0ull;
		}
	}
	if (s->nsites)
		snprintf(s->sites[0].name, sizeof(s->sites[0].name), "%s", hostile);
	return prof_file_save(path, s);
}

/* s with every name as long as the format holds (no NUL to spare in a
 * reader that miscounts), saved as path */
static int save_longest(struct prof_snapshot *s, const char *path)
{
	__u32 i;

	memset(s->comm, 'c', sizeof(s->comm) - 1);
	s->comm[sizeof(s->comm) - 1] = 0;
	for (i = 0; i < s->nthreads; i++) {
		memset(s->threads[i].name, 't', sizeof(s->threads[i].name) - 1);
		s->threads[i].name[sizeof(s->threads[i].name) - 1] = 0;
	}
	for (i = 0; i < s->nsites; i++) {
		memset(s->sites[i].name, 'z', sizeof(s->sites[i].name) - 1);
		s->sites[i].name[sizeof(s->sites[i].name) - 1] = 0;
	}
	return prof_file_save(path, s);
}

int main(int argc, char **argv)
{
	struct prof_snapshot *s;
	int fd, err;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: mkfileseed IMAGE FILE [HOSTILE_FILE]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	err = prof_snapshot__read_fd(fd, &s);
	close(fd);
	if (!err)
		err = prof_file_save(argv[2], s);
	if (!err && argc == 4)
		err = save_hostile(s, argv[3]);
	if (!err && argc == 4) {
		char longest[4096];

		snprintf(longest, sizeof(longest), "%s_longest", argv[3]);
		err = save_longest(s, longest);
	}
	if (err) {
		fprintf(stderr, "mkfileseed: %s\n", prof_file_strerror(err));
		return 1;
	}
	prof_snapshot__destroy(s);
	return 0;
}
