// SPDX-License-Identifier: MIT
/*
 * fault_shim.c - tests only: an LD_PRELOAD library that makes chosen calls
 * fail, so the error paths of a program the tests run (profd) run too and
 * what it says and does then can be checked.  No kernel or libc here fails
 * on demand: a BPF object that does not load, a full fd table, memfd or
 * perf events refused.
 *
 * PROF_FAULT is a comma-separated list of NAME[#N[+]][=ERRNO]:
 *   NAME      every call of NAME fails
 *   NAME#N    only its Nth call (1-based) fails; NAME#N+ the Nth and after
 *   =ERRNO    the errno it fails with (default: EMFILE for calls that make
 *             an fd, ENOMEM otherwise)
 * NAME is a function below, or sys_perf_event_open / sys_pidfd_open for
 * those system calls made through syscall(), or bpf_map_create.MAP for
 * the maps named MAP alone.  A failing call returns what
 * the real one returns on failure (-1, NULL, or -errno for libbpf's
 * functions that return an error) with errno set, and a line with its NAME
 * is added to the file $PROF_FAULT_LOG if set.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>

#define MAX_FAULTS 8

struct fault {
	char name[64];
	unsigned long nth; /* 0: every call */
	int from;	   /* the Nth and every call after */
	int err;
	unsigned long seen; /* calls so far */
};

static struct fault faults[MAX_FAULTS];
static int nfaults = -1;

static void faults_parse(void)
{
	const char *s = getenv("PROF_FAULT");

	nfaults = 0;
	while (s && *s && nfaults < MAX_FAULTS) {
		struct fault *f = &faults[nfaults];
		size_t n = strcspn(s, "#=,");
		char *end;

		memset(f, 0, sizeof(*f));
		if (n >= sizeof(f->name))
			n = sizeof(f->name) - 1;
		memcpy(f->name, s, n);
		s += strcspn(s, "#=,");
		if (*s == '#') {
			f->nth = strtoul(s + 1, &end, 10);
			s = end;
			if (*s == '+') {
				f->from = 1;
				s++;
			}
		}
		if (*s == '=') {
			f->err = (int)strtol(s + 1, &end, 10);
			s = end;
		}
		nfaults++;
		s += strcspn(s, ",");
		if (*s == ',')
			s++;
	}
}

/* a line to $PROF_FAULT_LOG for each call failed (a test's proof that it
 * was; open and write allocate nothing) */
static void fault_said(const char *name)
{
	const char *path = getenv("PROF_FAULT_LOG");
	int fd;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, name, strlen(name)) < 0 || write(fd, "\n", 1) < 0)
		(void)0;
	close(fd);
}

/* the errno this call of name fails with, or 0: let it through */
static int fault_now(const char *name, int dflt)
{
	int i;

	if (nfaults < 0)
		faults_parse();
	for (i = 0; i < nfaults; i++) {
		struct fault *f = &faults[i];
		unsigned long k;

		if (strcmp(f->name, name))
			continue;
		k = __atomic_add_fetch(&f->seen, 1, __ATOMIC_RELAXED);
		if (!f->nth || k == f->nth || (f->from && k > f->nth)) {
			fault_said(name);
			return f->err ? f->err : dflt;
		}
	}
	return 0;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

/* fd-returning calls: -1 and errno */
#define FAIL_FD(name, dflt)                     \
	do {                                    \
		int e_ = fault_now(name, dflt); \
		if (e_) {                       \
			errno = e_;             \
			return -1;              \
		}                               \
	} while (0)

int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	FAIL_FD("accept4", EMFILE);
	return REAL(accept4)(fd, sa, len, flags);
}

int getsockopt(int fd, int level, int opt, void *val, socklen_t *len)
{
	FAIL_FD("getsockopt", ENOMEM);
	return REAL(getsockopt)(fd, level, opt, val, len);
}

int memfd_create(const char *name, unsigned int flags)
{
	FAIL_FD("memfd_create", EMFILE);
	return REAL(memfd_create)(name, flags);
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_perf_event_open)
		FAIL_FD("sys_perf_event_open", EACCES);
	if (nr == SYS_pidfd_open)
		FAIL_FD("sys_pidfd_open", EMFILE);
	return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
 * libbpf's, as profd calls them (declared here: the shim needs no libbpf
 * headers, and links no libbpf: RTLD_NEXT finds the program's)
 */
struct bpf_object_skeleton;
struct bpf_map;
struct bpf_map_create_opts;

int bpf_object__open_skeleton(struct bpf_object_skeleton *s, const void *opts);
int bpf_object__open_skeleton(struct bpf_object_skeleton *s, const void *opts)
{
	int e = fault_now("bpf_object__open_skeleton", ENOMEM);

	if (e) {
		errno = e;
		return -e;
	}
	return REAL(bpf_object__open_skeleton)(s, opts);
}

int bpf_object__load_skeleton(struct bpf_object_skeleton *s);
int bpf_object__load_skeleton(struct bpf_object_skeleton *s)
{
	int e = fault_now("bpf_object__load_skeleton", EPERM);

	if (e) {
		errno = e;
		return -e;
	}
	return REAL(bpf_object__load_skeleton)(s);
}

int bpf_map__set_max_entries(struct bpf_map *m, unsigned int n);
int bpf_map__set_max_entries(struct bpf_map *m, unsigned int n)
{
	int e = fault_now("bpf_map__set_max_entries", EBUSY);

	if (e) {
		errno = e;
		return -e;
	}
	return REAL(bpf_map__set_max_entries)(m, n);
}

int bpf_map_create(int type, const char *name, unsigned int key, unsigned int val, unsigned int max,
		   const struct bpf_map_create_opts *opts);
int bpf_map_create(int type, const char *name, unsigned int key, unsigned int val, unsigned int max,
		   const struct bpf_map_create_opts *opts)
{
	/* libbpf makes maps of its own as it loads (its probes among them):
	 * "bpf_map_create.NAME" counts only the maps named NAME */
	char which[64];
	int e;

	snprintf(which, sizeof(which), "bpf_map_create.%s", name ? name : "");
	e = fault_now(which, ENOMEM);
	if (!e)
		e = fault_now("bpf_map_create", ENOMEM);
	if (e) {
		errno = e;
		return -e;
	}
	return REAL(bpf_map_create)(type, name, key, val, max, opts);
}

int bpf_map_freeze(int fd);
int bpf_map_freeze(int fd)
{
	int e = fault_now("bpf_map_freeze", EPERM);

	if (e) {
		errno = e;
		return -e;
	}
	return REAL(bpf_map_freeze)(fd);
}

struct bpf_program;
struct bpf_link;
struct bpf_link *bpf_program__attach(const struct bpf_program *p);
struct bpf_link *bpf_program__attach(const struct bpf_program *p)
{
	int e = fault_now("bpf_program__attach", EPERM);

	if (e) {
		errno = e;
		return NULL;
	}
	return REAL(bpf_program__attach)(p);
}

/*
 * The allocator, through glibc's own entry points (dlsym would allocate):
 * "malloc#N" fails the Nth of malloc, calloc and realloc together, counted
 * from main() to the program's exit handlers (the loader's and libraries'
 * constructors allocate first, gcov's runtime at exit last: they fail in
 * ways not the program's)
 */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);

static int alloc_armed;

/* exit's: what runs after the program's own exit handlers is the
 * runtime's (gcov writes its counts then, and crashes without memory) */
static void alloc_disarm(void)
{
	alloc_armed = 0;
}

static void alloc_arm(void) __attribute__((constructor(65535)));
static void alloc_arm(void)
{
	/* the last constructor to run: from here on, main's */
	alloc_armed = 1;
}

static int alloc_fails(void)
{
	static int said_exit;

	if (!alloc_armed)
		return 0;
	/* registered now, after libc registered the loader's finalizers
	 * (gcov's among them): run before them (exit runs in reverse) */
	if (!said_exit) {
		said_exit = 1;
		atexit(alloc_disarm);
	}
	return fault_now("malloc", ENOMEM);
}

void *malloc(size_t n)
{
	if (alloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	if (alloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	if (alloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}
