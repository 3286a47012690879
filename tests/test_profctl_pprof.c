// SPDX-License-Identifier: MIT
/*
 * test_profctl_pprof.c - `report --format pprof` of the fixed snapshot
 * (profctl_fixture.h): the gzipped profile.proto decoded here (zlib,
 * protobuf-c) has a sample per node with its calls, self and on-CPU self
 * time and its stack leaf first; and the real reader, `go tool pprof`
 * (Debian's golang-go), shows the zones with flat = self and cum = total
 * (-top) and the stacks (-traces).  The go part is skipped, saying so,
 * where go is not installed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <zlib.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "profctl_fixture.h"
#include "profile.pb-c.h"
#include "profd_private.h"

static char dir[64], img[128], pb[128], out[128];

/* profctl report --input img --format pprof [flag] -o to, in-process */
static int pprof_to(const char *flag, char *to)
{
	char *argv[] = { (char *)(uintptr_t) "profctl",	 (char *)(uintptr_t) "report",
			 (char *)(uintptr_t) "--input",	 img,
			 (char *)(uintptr_t) "--format", (char *)(uintptr_t) "pprof",
			 (char *)(uintptr_t) "-o",	 to,
			 (char *)(uintptr_t)flag,	 NULL };

	return profctl_main(flag ? 9 : 8, argv);
}

static int setup(void **state)
{
	void *buf;
	size_t len;
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_profctl_pprof.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("PROFCTL_NO_DAEMON", "1", 1);
	snprintf(img, sizeof(img), "%s/fixture.img", dir);
	snprintf(pb, sizeof(pb), "%s/fixture.pb.gz", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	if (fx_image(&buf, &len))
		return -1;
	f = fopen(img, "w");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
		return -1;
	free(buf);
	return pprof_to(NULL, pb) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return test_rm_rf(dir);
}

/* the file, gunzipped and unpacked */
static Perftools__Profiles__Profile *load(void)
{
	static unsigned char raw[1 << 20];
	gzFile z = gzopen(pb, "rb");
	int n;

	assert_non_null(z);
	n = gzread(z, raw, sizeof(raw));
	assert_true(n > 0 && n < (int)sizeof(raw));
	/* a gzip stream, whole */
	assert_int_equal(gzclose(z), Z_OK);
	return perftools__profiles__profile__unpack(NULL, (size_t)n, raw);
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

/* the zone name of location id */
static const char *loc_name(const Perftools__Profiles__Profile *p, uint64_t id)
{
	size_t i, j;

	for (i = 0; i < p->n_location; i++) {
		if (p->location[i]->id != id)
			continue;
		assert_int_equal(p->location[i]->n_line, 1);
		for (j = 0; j < p->n_function; j++)
			if (p->function[j]->id == p->location[i]->line[0]->function_id)
				return str(p, p->function[j]->name);
	}
	fail_msg("location %llu not found", (unsigned long long)id);
	return NULL;
}

/* the sample whose stack, leaf first, is names (NULL-terminated) */
static const Perftools__Profiles__Sample *sample_of(const Perftools__Profiles__Profile *p,
						    const char *tname, const char *const *names)
{
	size_t i, k, n = 0;

	while (names[n])
		n++;
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const char *thread = NULL;

		for (k = 0; k < s->n_label; k++)
			if (!strcmp(str(p, s->label[k]->key), "thread"))
				thread = str(p, s->label[k]->str);
		if (s->n_location_id != n || !thread || strcmp(thread, tname))
			continue;
		for (k = 0; k < n && !strcmp(loc_name(p, s->location_id[k]), names[k]); k++)
			;
		if (k == n)
			return s;
	}
	return NULL;
}

/* the value of s's string label key, NULL if it has none */
static const char *label_of(const Perftools__Profiles__Profile *p,
			    const Perftools__Profiles__Sample *s, const char *key)
{
	size_t k;

	for (k = 0; k < s->n_label; k++)
		if (!strcmp(str(p, s->label[k]->key), key))
			return str(p, s->label[k]->str);
	return NULL;
}

static void test_decoded(void **state)
{
	Perftools__Profiles__Profile *p = load();
	static const char *const lex_parse[] = { "lex", "parse", "main_loop", NULL };
	static const char *const wrender[] = { "render", NULL };
	static const char *const fib3[] = { "fib", "fib", "fib", NULL };
	const Perftools__Profiles__Sample *s;
	size_t i;

	(void)state;
	assert_non_null(p);
	assert_string_equal(p->string_table[0], "");
	/* calls, wall and (the worker has scheduler facts) cpu */
	assert_int_equal(p->n_sample_type, 3);
	assert_string_equal(str(p, p->sample_type[0]->type), "calls");
	assert_string_equal(str(p, p->sample_type[0]->unit), "count");
	assert_string_equal(str(p, p->sample_type[1]->type), "wall");
	assert_string_equal(str(p, p->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(str(p, p->sample_type[2]->type), "cpu");
	assert_string_equal(str(p, p->default_sample_type), "wall");
	/* a sample per node: main 8, worker 3 and its [overflow] */
	assert_int_equal(p->n_sample, 8 + 4);
	s = sample_of(p, "main", lex_parse);
	assert_non_null(s);
	assert_int_equal(s->n_value, 3);
	assert_int_equal(s->value[0], 1000);
	assert_int_equal(s->value[1], 8000000);
	/* main's calls had no kernel facts: its cpu 0 says unknown, labelled */
	assert_int_equal(s->value[2], 0);
	assert_non_null(label_of(p, s, "oncpu"));
	assert_string_equal(label_of(p, s, "oncpu"), "unknown");
	/* worker's render: 30 ms, 4 ms off-CPU, 6 ms in its children */
	s = sample_of(p, "worker", wrender);
	assert_non_null(s);
	assert_int_equal(s->value[0], 20);
	assert_int_equal(s->value[1], 30000000 - 5000000 - 1000000);
	assert_int_equal(s->value[2], 30000000 - 4000000 - 5000000 - 1000000);
	assert_null(label_of(p, s, "oncpu"));
	/* recursion: a stack with the same location thrice, self 1.5 ms */
	s = sample_of(p, "main", fib3);
	assert_non_null(s);
	assert_int_equal(s->value[0], 4);
	assert_int_equal(s->value[1], 1500000);
	/* functions say where the zone is */
	for (i = 0; i < p->n_function; i++)
		if (!strcmp(str(p, p->function[i]->name), "parse")) {
			assert_string_equal(str(p, p->function[i]->filename), "golden.c");
			assert_int_equal(p->function[i]->start_line, 20);
		}
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* go tool pprof ARGS FILE into out; its text */
static char *go_pprof(const char *args)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "env -i PATH=/usr/bin:/bin HOME=%s GOCACHE=%s/gocache go tool pprof %s %s "
		 ">%s 2>&1",
		 dir, dir, args, pb, out);
	if (system(cmd))
		return NULL;
	return test_slurp(out, NULL);
}

static bool have_go(void)
{
	return !system("command -v go >/dev/null 2>&1");
}

/* a -top row: "flat flat% sum% cum cum% name" */
static void top_row(const char *text, const char *name, const char *flat, const char *cum)
{
	const char *p = text;
	char f[32], c[32], nm[64], line[256];

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		if (sscanf(line, "%31s %*s %*s %31s %*s %63s", f, c, nm) == 3 &&
		    !strcmp(nm, name)) {
			assert_string_equal(f, flat);
			assert_string_equal(c, cum);
			return;
		}
		p = nl ? nl + 1 : NULL;
	}
	fail_msg("go tool pprof -top: no row for %s in:\n%s", name, text);
}

static void test_go_tool_pprof(void **state)
{
	char *text;

	(void)state;
	if (!have_go()) {
		fprintf(stderr,
			"skipped: go not installed (Debian golang-go): go tool pprof not run\n");
		skip();
	}
	text = go_pprof("-top -nodefraction=0 -nodecount=100");
	assert_non_null(text);
	assert_non_null(strstr(text, "Type: wall"));
	/* flat is self, cum is total, merged over threads */
	top_row(text, "main_loop", "15ms", "50ms");
	top_row(text, "render", "38ms", "45ms");
	top_row(text, "lex", "14ms", "14ms");
	top_row(text, "parse", "12ms", "20ms");
	top_row(text, "fib", "3ms", "3ms");
	free(text);
	text = go_pprof("-top -nodefraction=0 -sample_index=calls");
	assert_non_null(text);
	top_row(text, "lex", "1250", "1250");
	top_row(text, "main_loop", "10", "1170");
	free(text);
	text = go_pprof("-top -nodefraction=0 -sample_index=cpu");
	assert_non_null(text);
	/* worker's render on CPU 20 ms of its own, 26 with its callees; main's
	 * had no kernel facts: none of its time is counted on CPU */
	top_row(text, "render", "20ms", "26ms");
	free(text);
	text = go_pprof("-traces");
	assert_non_null(text);
	assert_non_null(strstr(text, "thread:  main\n"));
	assert_non_null(strstr(text, "8ms   lex\n             parse\n             main_loop\n"));
	assert_non_null(strstr(text, "thread:  worker\n"));
	free(text);
}

/* pprof is binary: not to a terminal, no flat or callers view */
static void test_usage(void **state)
{
	(void)state;
	assert_int_equal(pprof_to("--flat", out), 2);
}

TEST_MAIN(setup, teardown, cmocka_unit_test(test_decoded), cmocka_unit_test(test_go_tool_pprof),
	  cmocka_unit_test(test_usage))
