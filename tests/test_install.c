// SPDX-License-Identifier: MIT
/*
 * test_install.c - what `make install` leaves, as a user of the library
 * meets it: the public header and only the two it includes, prof(3), the
 * reports' JSON Schema, a prof.pc (prof.h needs no sys/sdt.h), and
 * a program built from the installed tree with pkg-config alone that
 * runs as it is and profiles itself (another prefix: prof.pc's rpath;
 * /usr/local: no rpath, ldconfig), a staged DESTDIR install, `make setup`
 * installing, and a library without the readers' code.  Runs from the
 * repository root (as tests/run does).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

static char prefix[128];

static int exists(const char *rel)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", prefix, rel);
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int setup(void **state)
{
	(void)state;
	snprintf(prefix, sizeof(prefix), "/tmp/prof-install.XXXXXX");
	if (!mkdtemp(prefix))
		return -1;
	/* the build is there already (tests/run builds first): this installs */
	return test_sh("make -s install PREFIX=%s >%s/make.log 2>&1 || { cat %s/make.log; exit 1; "
		       "}",
		       prefix, prefix, prefix)
		       ? -1
		       : 0;
}

static int teardown(void **state)
{
	(void)state;
	test_sh("rm -rf %s", prefix);
	return 0;
}

static void test_files(void **state)
{
	(void)state;
	assert_true(exists("include/prof/prof.h"));
	/* what prof.h includes, and nothing else of the tree's headers */
	assert_true(exists("include/prof/slab.h"));
	assert_true(exists("include/prof/profsched.h"));
	assert_false(exists("include/prof/snapshot.h"));
	assert_false(exists("include/prof/runtime.h"));
	assert_int_equal(test_sh("test $(ls %s/include/prof | wc -l) = 3", prefix), 0);
	assert_true(exists("share/man/man3/prof.3"));
	assert_true(exists("share/man/man1/profctl.1"));
	assert_true(exists("share/man/man8/profd.8"));
	assert_true(exists("share/prof/report.schema.json"));
	assert_int_equal(
		test_sh("cmp -s tests/report.schema.json %s/share/prof/report.schema.json", prefix),
		0);
	/* prof.h writes its USDT notes itself: no sys/sdt.h to install */
	assert_int_equal(test_sh("! grep -q '#include <sys/sdt.h>' %s/include/prof/prof.h", prefix),
			 0);
	assert_int_equal(test_sh("PKG_CONFIG_PATH=%s/lib/pkgconfig pkg-config --list-all | "
				 "grep '^prof ' | grep -q sdt && exit 1; exit 0",
				 prefix),
			 0);
	/* prof(3) renders and lists every macro and variable */
	assert_int_equal(
		test_sh("MANWIDTH=80 man -l %s/share/man/man3/prof.3 2>&1 >/dev/null | "
			"grep -q . && exit 1; "
			"t=$(MANWIDTH=80 man -l %s/share/man/man3/prof.3 2>/dev/null); "
			"for w in PROF_USDT PROF_FUNC PROF_DEFINE PROF_DECLARE PROF_SCOPE "
			"PROF_BEGIN PROF_END PROF_FRAME PROF_ALLOC PROF_FREE PROF_THREAD_NAME "
			"PROF_REPORT PROF_REPORT_FORMAT PROF_REPORT_COMPENSATE PROF_LOG_INTERVAL "
			"PROF_MAX_THREADS "
			"PROF_MAX_NODES PROF_MAX_SITES PROF_CLOCK PROF_KEEP PROF_SOCKET "
			"PROFD_SOCKET PROF_NO_DAEMON PROF_QUIET; do "
			"echo \"$t\" | grep -q \"$w\" || { echo \"prof(3) lacks $w\"; exit 1; }; "
			"done",
			prefix, prefix),
		0);
}

/*
 * A program built against the installed tree with pkg-config only, linked
 * to libprof.so.0, runs as it is: no LD_LIBRARY_PATH (prof.pc's rpath)
 */
static void test_build_against_install(void **state)
{
	(void)state;
	assert_int_equal(
		test_sh("cd %s && printf '%%s\\n' '#include <prof.h>' "
			"'int main(void) { PROF_USDT(installed_zone); return 0; }' > app.c && "
			"cc -Wall -Werror app.c "
			"$(PKG_CONFIG_PATH=%s/lib/pkgconfig pkg-config --cflags --libs prof) "
			"-o app && readelf -d app | grep -q 'NEEDED.*libprof.so.0' && "
			"env -u LD_LIBRARY_PATH PROF_NO_DAEMON=1 PROF_REPORT=stderr "
			"./app 2>report.txt && grep -q installed_zone report.txt",
			prefix, prefix),
		0);
}

/*
 * A packager's staged install (DESTDIR) for another prefix: prof.pc names
 * the final prefix and its rpath; a program built from the stage runs
 * from it; ldconfig is left to the package.  /usr/local's prof.pc has no
 * rpath: ld.so finds it there once ldconfig ran.
 */
static void test_destdir_install(void **state)
{
	(void)state;
	assert_int_equal(test_sh("make -s install DESTDIR=%s/stage PREFIX=/opt/prof-test "
				 ">%s/stage.log 2>&1 || { cat %s/stage.log; exit 1; }",
				 prefix, prefix, prefix),
			 0);
	assert_int_equal(
		test_sh("f=%s/stage/opt/prof-test/lib/pkgconfig/prof.pc && "
			"grep -qx 'prefix=/opt/prof-test' $f && "
			"grep -q '^Libs: -L${libdir} -Wl,-rpath,${libdir} -lprof -lpthread$' $f",
			prefix),
		0);
	assert_int_equal(test_sh("cd %s && d=%s/stage/opt/prof-test/lib && "
				 "cc -Wall -Werror app.c $(PKG_CONFIG_SYSROOT_DIR=%s/stage "
				 "PKG_CONFIG_PATH=$d/pkgconfig pkg-config --cflags --libs prof) "
				 "-o staged && "
				 "LD_LIBRARY_PATH=$d PROF_NO_DAEMON=1 PROF_REPORT=stderr "
				 "./staged 2>staged.txt && grep -q installed_zone staged.txt",
				 prefix, prefix, prefix),
			 0);
	assert_int_equal(
		test_sh("make -s install DESTDIR=%s/sys PREFIX=/usr/local >%s/sys.log 2>&1 && "
			"grep -q '^Libs: -L${libdir} -lprof -lpthread$' "
			"%s/sys/usr/local/lib/pkgconfig/prof.pc",
			prefix, prefix, prefix),
		0);
}

/* README's first command, make setup, installs (here: what it would run) */
static void test_setup_installs(void **state)
{
	(void)state;
	assert_int_equal(test_sh("make -n setup PREFIX=%s/setup 2>&1 | "
				 "grep -q 'install -m 0644 usdt/prof.h'",
				 prefix),
			 0);
}

/*
 * The library an application links carries what it runs: the
 * ABI prof.h's macros call, and none of what only profd and profctl use
 * (libprofread.a's, and a few named here so that moving a file back into
 * libprof does not pass unseen).
 */
static void test_library_symbols(void **state)
{
	static const char *const reader_only[] = {
		/* discover.c */
		"prof_seg_list",
		"prof_seg_open",
		"prof_proc_cgroup",
		/* reader_trace.c */
		"prof_seg_trace",
		"prof_seg_trace_newest",
		"prof_trace__destroy",
		/* proffile_load.c */
		"prof_file_check",
		"prof_file_decode",
		"prof_file_is",
	};
	char names[512] = "";
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(reader_only) / sizeof(reader_only[0]); i++) {
		strcat(names, " ");
		strcat(names, reader_only[i]);
	}
	/* prof.h's declarations of __prof_ functions and variables: the ABI */
	assert_int_equal(test_sh("abi=$(sed -En "
				 "-e 's/^[a-z0-9_]+ \\*?(__prof_[a-z_]+)\\(.*/\\1/p' "
				 "-e 's/^extern .*[ *](__prof_[a-z_]+)( __attribute__.*)?;$/\\1/p' "
				 "usdt/prof.h); "
				 "test $(echo $abi | wc -w) -ge 14 || "
				 "{ echo \"prof.h: ABI not found: $abi\"; exit 1; }; "
				 "so=$(nm -D --defined-only %s/lib/libprof.so.0 | "
				 "awk '{ sub(/@.*/, \"\", $NF); print $NF }'); "
				 "for s in $abi; do echo \"$so\" | grep -qx $s || "
				 "{ echo \"libprof.so lacks $s\"; exit 1; }; done",
				 prefix),
			 0);
	/* nothing libprofread.a defines, nor the names above: exported or
	 * not (the installed libraries keep their local symbols' names) */
	assert_int_equal(test_sh("r=$(nm -g --defined-only .output/libprofread.a | "
				 "awk 'NF == 3 { print $3 }'); "
				 "test $(echo $r | wc -w) -ge 10 || "
				 "{ echo \"libprofread.a: $r\"; exit 1; }; "
				 "so=$(nm --defined-only %s/lib/libprof.so.0 | "
				 "awk '{ sub(/@.*/, \"\", $NF); print $NF }'); "
				 "a=$(nm --defined-only %s/lib/libprof.a | "
				 "awk 'NF == 3 { print $3 }'); "
				 "echo \"$a\" | grep -qx seg_check || "
				 "{ echo \"libprof.a: no local symbols to look at\"; exit 1; }; "
				 "for s in%s $r; do "
				 "echo \"$so\" | grep -qx $s && "
				 "{ echo \"libprof.so defines $s\"; exit 1; }; "
				 "echo \"$a\" | grep -qx $s && "
				 "{ echo \"libprof.a defines $s\"; exit 1; }; "
				 "done; exit 0",
				 prefix, prefix, names),
			 0);
}

/*
 * A program may name its functions as libprof's internals are named: the
 * installed libraries define only the ABI (__prof_*) globally.  Both links
 * must build (no "multiple definition" from libprof.a) and run with the
 * program's own functions and the library's own (a prof_report_text of
 * the program's taken by the library would print no report).
 */
static void test_names_free(void **state)
{
	static const char *const src[] = {
		"#include <stdio.h>",
		"#include <prof.h>",
		"int read_seg(void) { return 1; }",
		"int seg_check(void) { return 2; }",
		"int slab_view(void) { return 3; }",
		"int pool_add(void) { return 4; }",
		"int flat_size(void) { return 5; }",
		"int open_ticks(void) { return 6; }",
		"int thread_derive(void) { return 7; }",
		"int prof_report_text(void) { return 8; }",
		"int prof_env;",
		"int main(void) {",
		"	PROF_USDT(own_names_zone);",
		"	return read_seg() + seg_check() + slab_view() + pool_add() + flat_size() +",
		"	       open_ticks() + thread_derive() + prof_report_text() + prof_env != "
		"36;",
		"}",
	};
	size_t i;
	FILE *f;
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/names.c", prefix);
	f = fopen(path, "w");
	assert_non_null(f);
	for (i = 0; i < sizeof(src) / sizeof(src[0]); i++)
		fprintf(f, "%s\n", src[i]);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(test_sh("cd %s && cc -Wall -Werror -Iinclude/prof names.c lib/libprof.a "
				 "-lpthread -o names-a && PROF_NO_DAEMON=1 PROF_REPORT=stderr "
				 "./names-a 2>a.txt && grep -q own_names_zone a.txt",
				 prefix),
			 0);
	assert_int_equal(
		test_sh("cd %s && cc -Wall -Werror -Iinclude/prof names.c -Llib -lprof "
			"-lpthread -o names-so && LD_LIBRARY_PATH=lib PROF_NO_DAEMON=1 "
			"PROF_REPORT=stderr ./names-so 2>so.txt && grep -q own_names_zone so.txt",
			prefix),
		0);
}

/*
 * Every global symbol the installed libraries define is the ABI's,
 * __prof_ (or at least prof_) named, and each of the .so's is in its
 * version node, PROF_2.
 */
static void test_exports_prefixed(void **state)
{
	(void)state;
	assert_int_equal(test_sh("bad=$(nm -g --defined-only %s/lib/libprof.a | "
				 "awk 'NF == 3 && $3 !~ /^_?_?prof_/ { print $3 }'); "
				 "test -z \"$bad\" || { echo \"libprof.a exports $bad\"; exit 1; }",
				 prefix),
			 0);
	assert_int_equal(
		test_sh("n=0; for s in $(nm -D --defined-only --with-symbol-versions "
			"%s/lib/libprof.so.0 | awk '{ print $NF }'); do "
			"case $s in PROF_2) ;; __prof_*@@PROF_2|prof_*@@PROF_2) n=$((n + 1)) ;; "
			"*) echo \"libprof.so exports $s\"; exit 1 ;; esac; done; "
			"test $n -ge 14 || { echo \"libprof.so: $n symbols in PROF_2\"; exit 1; }",
			prefix),
		0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_build_against_install),
		cmocka_unit_test(test_destdir_install),
		cmocka_unit_test(test_setup_installs),
		cmocka_unit_test(test_library_symbols),
		cmocka_unit_test(test_names_free),
		cmocka_unit_test(test_exports_prefixed),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, setup, teardown);
}
