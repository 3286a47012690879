// SPDX-License-Identifier: MIT
/*
 * busguard.c - SIGBUS from a segment truncated under its mapping (see
 * busguard.h).  The handler maps zeros from the faulting page to the end
 * of that mapping in one call (a page at a time would split it into as
 * many mappings as pages read, up to vm.max_map_count).  Only a read-only
 * file mapping is patched (segments, images, baselines are mapped so;
 * nothing else of a reader's is but its own files' rodata): the mapping
 * is found in /proc/self/maps, read with open and read, which a handler
 * may call.  Any other SIGBUS stays fatal.
 *
 * Jumping out of the read instead (siglongjmp) would abandon whatever the
 * reader had allocated by then, at every fault a user can cause by
 * truncating their own segment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "busguard.h"
#include "snapshot.h"

static unsigned long bus_hits;
static size_t bus_page;

static uintptr_t hex_at(const char **p)
{
	uintptr_t v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

static const char *next_field(const char *p)
{
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	return p;
}

/* the end of the read-only file mapping holding addr, 0 if it is not one */
static uintptr_t ro_file_map_end(uintptr_t addr)
{
	char buf[4096], line[128];
	size_t ll = 0;
	ssize_t n, i;
	uintptr_t end = 0;
	bool done = false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (!done && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n && !done; i++) {
			const char *p = line;
			uintptr_t lo, hi;

			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			/* lo-hi perms offset dev inode [path] */
			lo = hex_at(&p);
			if (*p++ != '-')
				continue;
			hi = hex_at(&p);
			if (*p++ != ' ' || addr < lo || addr >= hi)
				continue;
			done = true;
			if (p[0] != 'r' || p[1] != '-' || p[2] != '-')
				break;
			p = next_field(next_field(next_field(p)));
			/* a file has an inode */
			if (*p >= '1' && *p <= '9')
				end = hi;
		}
	}
	close(fd);
	return end;
}

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	uintptr_t page = (uintptr_t)si->si_addr & ~(uintptr_t)(bus_page - 1), end = 0;
	int saved = errno;

	(void)ctx;
	/* BUS_ADRERR: past the end of a file mapping (not a memory error) */
	if (si->si_code == BUS_ADRERR && page)
		end = ro_file_map_end(page);
	if (end && mmap((void *)page, end - page, PROT_READ,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
		__atomic_add_fetch(&bus_hits, 1, __ATOMIC_SEQ_CST);
		errno = saved;
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int prof_bus_guard(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER };

	bus_page = (size_t)sysconf(_SC_PAGESIZE);
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL) ? -errno : 0;
}

unsigned long prof_bus_hits(void)
{
	return __atomic_load_n(&bus_hits, __ATOMIC_SEQ_CST);
}

int prof_bus_remap(int fd, const void *mem, size_t len)
{
	void *p = mmap((void *)(uintptr_t)mem, len, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);

	return p == MAP_FAILED ? -errno : 0;
}

int prof_bus_read(int fd, const void *mem, size_t len, struct prof_snapshot **snap)
{
	unsigned long hits = prof_bus_hits();
	int err = prof_snapshot__read(mem, len, snap);

	if (prof_bus_hits() == hits)
		return err;
	prof_snapshot__destroy(*snap);
	*snap = NULL;
	prof_bus_remap(fd, mem, len);
	return -EFAULT;
}
