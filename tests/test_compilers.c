// SPDX-License-Identifier: MIT
/*
 * test_compilers.c - prof.h as users build it: matrix.c with gcc and clang
 * at -std=c99, c11, c17 and gnu11, matrix.cc with g++ and clang++ at
 * c++11, c++17 and c++20 (and each at -O0 once), against libprof.a, with
 * the strictest warnings a user may build with (C_WARN, CXX_WARN, -Werror).
 * Each program must build, run, and report every zone with its exact call
 * count; the C++ one must carry an enter and an exit probe for each zone,
 * template instances included.  lto_a.c and lto_b.c, linked with -flto,
 * keep their zones apart.  sitesize.c's zone must stay small at its site
 * (SITE_HOT_MAX, SITE_COLD_MAX) with gcc and clang at -O2 on x86-64, and
 * sitesize_lock.c's counted mutex (LOCK_SITE_MAX).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testutil.h"

#ifndef SRC_DIR
#error "SRC_DIR: the source tree"
#endif
#ifndef LIBPROF_A
#error "LIBPROF_A: the static runtime"
#endif
/* what a program linking LIBPROF_A needs besides it: a coverage build's
 * runtime calls gcov's */
#ifndef LIBPROF_LIBS
#define LIBPROF_LIBS ""
#endif

/* a zone's code at its site, bytes: hot (in its function), cold (out of it) */
#define SITE_HOT_MAX 160
#define SITE_COLD_MAX 400

#define C_WARN                                                                              \
	"-Wall -Wextra -Wpedantic -Wdeclaration-after-statement -Wcast-align -Wconversion " \
	"-Wsign-conversion -Wshadow -Wundef -Werror"
#define CXX_WARN "-Wall -Wextra -Wold-style-cast -Wconversion -Wshadow -Wpedantic -Werror"

struct want {
	const char *zone;
	long calls;
};

/* matrix.c: ROUNDS 7 */
static const struct want want_c[] = {
	{ "mx_zone", 7 }, { "mx_public", 7 }, { "mx_begin", 7 }, { "mx_func", 14 }, { NULL, 0 },
};

/*
 * matrix.cc: ROUNDS 5; both instances of cx_ftmpl are one zone (two
 * sites, one name); a PROF_FUNC is named as C++ names it
 */
static const struct want want_cxx[] = {
	{ "cx_ftmpl", 10 }, { "cx_member", 5 }, { "cx_member_tmpl", 5 },
	{ "geo::box<int>::twice", 5 }, { "cx_nested", 5 }, { "cx_begin", 5 }, { "cx_anon", 5 },
	{ "cx_public", 5 }, { "cx_lambda", 5 }, { "cx_generic", 5 }, { NULL, 0 },
};

static int have(const char *cc)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", cc);
	return !system(cmd);
}

/* calls of zone in the flat section of a text report, -1 if absent: the
 * row's first number, on the line whose name column (after two spaces,
 * up to the end or a note) is zone */
static long flat_calls(const char *report, const char *zone)
{
	const char *p = strstr(report, "\nflat,"), *e, *z;
	size_t zl = strlen(zone);
	long calls;

	if (!p)
		return -1;
	for (; p && *++p; p = strchr(p, '\n')) {
		e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		for (z = p; (z = strstr(z, zone)) && z < e; z++)
			if (z - p >= 2 && z[-1] == ' ' && z[-2] == ' ' &&
			    (z[zl] == '\n' || z[zl] == ' ' || !z[zl]) && sscanf(p, "%ld", &calls) == 1)
				return calls;
	}
	return -1;
}

static int count_str(const char *s, const char *needle)
{
	int n = 0;

	while (s && (s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

static void build_run(const char *cc, const char *std, const char *opt, const char *src,
		      const struct want *want, int cxx)
{
	char dir[] = "/tmp/prof-cc.XXXXXX", cmd[2 * PATH_MAX + 512], bin[64], rep[64], out[64];
	char *r, *o;
	int i;

	assert_non_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	snprintf(rep, sizeof(rep), "%s/report", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(cmd, sizeof(cmd),
		 "%s -std=%s %s %s -I%s/usdt -I%s/bpf %s/tests/%s %s "
		 "%s " LIBPROF_LIBS " -lpthread -o %s >%s 2>&1",
		 cc, std, opt, cxx ? CXX_WARN : C_WARN, SRC_DIR, SRC_DIR, SRC_DIR, src,
		 strcmp(src, "lto_a.c") ? "" : SRC_DIR "/tests/lto_b.c", LIBPROF_A, bin, out);
	if (system(cmd)) {
		o = test_slurp(out, NULL);
		fail_msg("%s -std=%s %s %s does not build:\n%s", cc, std, opt, src, o ? o : "");
	}
	snprintf(cmd, sizeof(cmd),
		 "PROF_QUIET=1 PROF_NO_DAEMON=1 PROF_REPORT=%s %s >%s 2>&1", rep, bin, out);
	if (system(cmd)) {
		o = test_slurp(out, NULL);
		fail_msg("%s -std=%s %s: the program failed:\n%s", cc, std, opt, o ? o : "");
	}
	o = test_slurp(out, NULL);
	assert_non_null(o);
	assert_non_null(strstr(o, "matrix ok"));
	free(o);
	r = test_slurp(rep, NULL);
	assert_non_null(r);
	for (i = 0; want[i].zone; i++)
		if (flat_calls(r, want[i].zone) != want[i].calls)
			fail_msg("%s -std=%s %s: zone %s has %ld calls, want %ld:\n%s", cc, std, opt,
				 want[i].zone, flat_calls(r, want[i].zone), want[i].calls, r);
	free(r);
	if (cxx) {
		/* every zone's probes, in templates and namespaces alike */
		snprintf(cmd, sizeof(cmd), "readelf -n %s >%s 2>&1", bin, out);
		assert_int_equal(system(cmd), 0);
		o = test_slurp(out, NULL);
		for (i = 0; want[i].zone; i++) {
			/* PROF_FUNC zones are the probes prof:func */
			const char *pn = strcmp(want[i].zone, "geo::box<int>::twice") ? want[i].zone : "func";
			char n[160];

			snprintf(n, sizeof(n), "Name: %s\n", pn);
			if (count_str(o, n) < 1)
				fail_msg("%s -std=%s: no probe prof:%s", cc, std, pn);
			snprintf(n, sizeof(n), "Name: %s__exit\n", pn);
			if (count_str(o, n) < 1)
				fail_msg("%s -std=%s: no probe prof:%s__exit", cc, std, pn);
		}
		/* the two instances of the template each fire the enter probe */
		assert_true(count_str(o, "Name: cx_ftmpl\n") >= 2);
		free(o);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void matrix(const char *cc, const char *const *stds, const char *src,
		   const struct want *want, int cxx)
{
	int i;

	if (!have(cc)) {
		print_message("skip: %s is not installed\n", cc);
		skip();
	}
	for (i = 0; stds[i]; i++)
		build_run(cc, stds[i], "-O2", src, want, cxx);
	/* unoptimized: the asm operands must not need the optimizer */
	build_run(cc, stds[0], "-O0 -g", src, want, cxx);
}

/* lto_a.c + lto_b.c with -flto: the same site number in two files */
static const struct want want_lto[] = { { "lto_a", 3 }, { "lto_b", 5 }, { NULL, 0 } };

static void test_lto(void **state)
{
	(void)state;
	build_run("gcc", "gnu11", "-O2 -flto", "lto_a.c", want_lto, 0);
	/* ThinLTO needs lld */
	if (have("clang") && have("ld.lld"))
		build_run("clang", "gnu11", "-O2 -flto=thin -fuse-ld=lld", "lto_a.c", want_lto, 0);
}

static const char *const c_stds[] = { "gnu11", "c99", "c11", "c17", NULL };
static const char *const cxx_stds[] = { "c++17", "c++11", "c++20", NULL };

/* a compiler's matrix: the program it builds at its standards, what that reports */
struct compiler {
	const char *cc, *src;
	const char *const *stds;
	const struct want *want;
	int cxx;
};

static struct compiler gcc = { "gcc", "matrix.c", c_stds, want_c, 0 };
static struct compiler clang = { "clang", "matrix.c", c_stds, want_c, 0 };
static struct compiler gxx = { "g++", "matrix.cc", cxx_stds, want_cxx, 1 };
static struct compiler clangxx = { "clang++", "matrix.cc", cxx_stds, want_cxx, 1 };

static void test_matrix(void **state)
{
	const struct compiler *c = *state;

	matrix(c->cc, c->stds, c->src, c->want, c->cxx);
}

/* the size of symbol sym in object obj (nm -S), -1 if absent */
static long sym_size(const char *obj, const char *sym)
{
	char cmd[PATH_MAX + 64], line[512], name[128], type;
	unsigned long addr, size;
	long r = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -S '%s'", obj);
	f = popen(cmd, "r");
	assert_non_null(f);
	/* undefined symbols have no address nor size: their lines do not scan */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %lx %c %127s", &addr, &size, &type, name) == 4 &&
		    !strcmp(name, sym))
			r = (long)size;
	pclose(f);
	return r;
}

/* bytes in obj's executable sections (readelf -SW: the flags hold X), or
 * in the one named sect */
static long exec_bytes(const char *obj, const char *sect)
{
	char cmd[PATH_MAX + 64], line[512];
	long total = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", obj);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char name[128], type[64], flags[16];
		unsigned long addr, off, size, es;
		const char *p = strchr(line, ']');

		if (!p || sscanf(p + 1, "%127s %63s %lx %lx %lx %lx %15s", name, type, &addr, &off,
				 &size, &es, flags) != 7)
			continue;
		if (strchr(flags, 'X') && (!sect || !strcmp(name, sect)))
			total += (long)size;
	}
	pclose(f);
	return total;
}

/* tests/name.c built by cc at -O2 into dir/name.o (obj) */
static void site_obj(const char *cc, const char *dir, const char *name, char *obj, size_t len)
{
	char cmd[2 * PATH_MAX + 256], out[64];
	char *o;

	if (!have(cc)) {
		print_message("skip: %s is not installed\n", cc);
		skip();
	}
	snprintf(obj, len, "%s/%s.o", dir, name);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(cmd, sizeof(cmd), "%s -std=gnu11 -O2 %s -I%s/usdt -I%s/bpf -c %s/tests/%s.c -o %s >%s 2>&1",
		 cc, C_WARN, SRC_DIR, SRC_DIR, SRC_DIR, name, obj, out);
	if (system(cmd)) {
		o = test_slurp(out, NULL);
		fail_msg("%s: %s.c does not build:\n%s", cc, name, o ? o : "");
	}
}

static void site_size(const char *cc)
{
	char dir[] = "/tmp/prof-sz.XXXXXX", obj[64];
	long bare, one, hot, cold, stray;

	assert_non_null(mkdtemp(dir));
	site_obj(cc, dir, "sitesize", obj, sizeof(obj));
	bare = sym_size(obj, "sz_bare");
	one = sym_size(obj, "sz_one");
	assert_true(bare > 0 && one > 0);
	hot = one - bare;
	cold = exec_bytes(obj, NULL) - one - bare;
	/* .text holds the two functions and the padding between them: an
	 * enter probe's stub there (a subsection of the function's section)
	 * lands after the object's last function, hot code by section */
	stray = exec_bytes(obj, ".text") - one - bare;
	print_message("%s -O2: a zone's site is %ld bytes hot, %ld cold (at most %d, %d)\n", cc,
		      hot, cold, SITE_HOT_MAX, SITE_COLD_MAX);
	if (hot > SITE_HOT_MAX || cold > SITE_COLD_MAX)
		fail_msg("%s: a zone's site is %ld bytes hot, %ld cold: more than %d, %d", cc, hot,
			 cold, SITE_HOT_MAX, SITE_COLD_MAX);
	if (stray > 15)
		fail_msg("%s: .text holds %ld bytes besides the two functions: code of the zone "
			 "out of line but not out of .text",
			 cc, stray);
	assert_int_equal(test_rm_rf(dir), 0);
}

/* check(cc) with gcc and with clang, on x86-64 (the sizes are its) */
static void x86_sizes(void (*check)(const char *cc))
{
#if !defined(__x86_64__)
	print_message("skip: the site's sizes are x86-64's\n");
	skip();
#endif
	check("gcc");
	check("clang");
}

static void test_site_size(void **state)
{
	(void)state;
	x86_sizes(site_size);
}

/* a counted mutex's lock and unlock at their site, bytes in and out of
 * its function: the trylock is at the site, the rest in the runtime */
#define LOCK_SITE_MAX 128

static void lock_site_size(const char *cc)
{
	char dir[] = "/tmp/prof-szl.XXXXXX", obj[64];
	long bare, counted, bytes;

	assert_non_null(mkdtemp(dir));
	site_obj(cc, dir, "sitesize_lock", obj, sizeof(obj));
	bare = sym_size(obj, "sz_lock_bare");
	counted = sym_size(obj, "sz_lock");
	assert_true(bare > 0 && counted > 0);
	bytes = exec_bytes(obj, NULL) - 2 * bare;
	print_message("%s -O2: a counted mutex's pair is %ld bytes at its site (at most %d)\n", cc,
		      bytes, LOCK_SITE_MAX);
	if (bytes > LOCK_SITE_MAX)
		fail_msg("%s: a counted mutex's pair is %ld bytes at its site: more than %d", cc,
			 bytes, LOCK_SITE_MAX);
	assert_int_equal(test_rm_rf(dir), 0);
}

static void test_lock_site_size(void **state)
{
	(void)state;
	x86_sizes(lock_site_size);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* one test a compiler, named for it (TEST_FILTER=test_gcc) */
		{ "test_gcc", test_matrix, NULL, NULL, &gcc },
		{ "test_clang", test_matrix, NULL, NULL, &clang },
		{ "test_gxx", test_matrix, NULL, NULL, &gxx },
		{ "test_clangxx", test_matrix, NULL, NULL, &clangxx },
		cmocka_unit_test(test_lto),
		cmocka_unit_test(test_site_size),
		cmocka_unit_test(test_lock_site_size),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
