// SPDX-License-Identifier: MIT
/*
 * mkfileseed.c - a segment image (argv[1], as mkseed writes) saved as a
 * profile file (argv[2]): the seed of the saved-profile fuzzer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proffile.h"

int main(int argc, char **argv)
{
	struct prof_snapshot *s;
	int fd, err;

	if (argc != 3) {
		fprintf(stderr, "usage: mkfileseed IMAGE FILE\n");
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
	if (err) {
		fprintf(stderr, "mkfileseed: %s\n", prof_file_strerror(err));
		return 1;
	}
	prof_snapshot__destroy(s);
	return 0;
}
