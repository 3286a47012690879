// SPDX-License-Identifier: MIT
/*
 * test_busguard.c - a segment its owner truncates while profd or profctl
 * reads it (usdt/busguard.c): the read fails whole, keeps nothing it
 * allocated (profd used to jump out of the reader and leak a partial
 * snapshot at every fault), and the mapping reads the file again after.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "prof.h"
#include "busguard.h"

/* what from holds from off on, into to, holes left holes (a segment is
 * mostly holes); the number of pages with data */
static size_t copy_from(int from, int to, size_t off, size_t len)
{
	static char buf[65536];
	size_t pages = 0;
	off_t at = (off_t)off, end;

	while ((at = lseek(from, at, SEEK_DATA)) >= 0 && (size_t)at < len) {
		end = lseek(from, at, SEEK_HOLE);
		assert_true(end > at);
		for (; at < end; at += (off_t)sizeof(buf)) {
			ssize_t n = pread(from, buf, sizeof(buf), at);

			assert_true(n > 0);
			assert_int_equal(pwrite(to, buf, (size_t)n, at), n);
			pages += (size_t)n / 4096;
		}
	}
	return pages;
}

/* the first page with data at or past off (len if none) */
static size_t next_data(int fd, size_t off, size_t len)
{
	off_t at = lseek(fd, (off_t)off, SEEK_DATA);

	return at < 0 || (size_t)at >= len ? len : (size_t)at & ~(size_t)4095;
}

/*
 * Cut at each page that holds data (the header, what the zone wrote):
 * a read that faulted fails with -EFAULT and returns nothing, whether the
 * reader gave up on the zeros or read on to the end (under ASan, its leak
 * check says nothing was kept); with the file whole again, the same
 * mapping reads the zone, not zeros.
 */
static void test_truncated_read(void **state)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 0, cut, tried = 0, faulted = 0,
	       read_on = 0;
	struct prof_snapshot *s = NULL;
	char path[] = "/dev/shm/prof-busguard.XXXXXX";
	int own, fd, err;
	void *mem;

	(void)state;
	PROF_USDT(busguard_zone);
	own = test_own_seg_fd(&len);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, (off_t)len), 0);
	assert_true(copy_from(own, fd, 0, len) > 0);
	assert_int_equal(prof_bus_guard(), 0);
	mem = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(mem != MAP_FAILED);
	/* whole, it reads */
	assert_int_equal(prof_bus_read(fd, mem, len, &s), 0);
	prof_snapshot__destroy(s);
	for (cut = pg; cut < len && tried < 512; cut = next_data(own, cut + pg, len)) {
		unsigned long hits;
		bool on;

		tried++;
		/* the reader alone on this cut: does it read on over the zeros? */
		assert_int_equal(ftruncate(fd, (off_t)cut), 0);
		hits = prof_bus_hits();
		on = !prof_snapshot__read(mem, len, &s) && prof_bus_hits() != hits;
		read_on += on;
		prof_snapshot__destroy(s);
		assert_int_equal(prof_bus_remap(fd, mem, len), 0);

		hits = prof_bus_hits();
		s = (struct prof_snapshot *)&s;
		err = prof_bus_read(fd, mem, len, &s);
		if (prof_bus_hits() != hits) {
			faulted++;
			assert_int_equal(err, -EFAULT);
			assert_null(s);
		} else {
			prof_snapshot__destroy(s);
		}
		/* whole again, for the next cut */
		assert_int_equal(ftruncate(fd, (off_t)len), 0);
		copy_from(own, fd, cut, len);
	}
	print_message("%zu of %zu cuts faulted, the reader read on past %zu\n", faulted, tried,
		      read_on);
	assert_true(faulted > 0);
	/* the case a jump out of the reader lost most: it had it all */
	assert_true(read_on > 0);
	/* the mapping is the file's: the zone, not zeros */
	assert_int_equal(prof_bus_read(fd, mem, len, &s), 0);
	assert_non_null(test_node(s, &s->threads[0], "busguard_zone"));
	prof_snapshot__destroy(s);
	munmap(mem, len);
	close(fd);
	close(own);
	signal(SIGBUS, SIG_DFL);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_truncated_read))
