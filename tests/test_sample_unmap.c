// SPDX-License-Identifier: MIT
/*
 * test_sample_unmap.c - code unmapped while profd samples it (root).
 *
 * tests/sample_unmap.c loads a library, burns in it inside zone in_a,
 * unloads it, loads another where it was (alike but for its function's
 * name) and burns inside in_b, over and over.  profd must run on, and name
 * each sampled frame from the library mapped at its instant, or give its
 * address: never the other library's function at that place.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "prof.h"
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "profd_private.h"

static pid_t profd_pid = -1;
static char dir[64], sock[128];

struct counts {
	unsigned long long own, wrong, bare, prog, all;
};

/* --inside zone of pid as CSV: self samples in the function named own, in
 * a function of the other library (wrong), in no function (bare), and in
 * the program's own functions (prog) */
static void inside(pid_t pid, const char *zone, const char *own, const char *other,
		   struct counts *c)
{
	char p[16], out[128], *csv, *l;
	const char *args[] = { "report", "--pid", p, "--inside", zone, "--format", "csv", NULL };

	memset(c, 0, sizeof(*c));
	snprintf(p, sizeof(p), "%d", (int)pid);
	snprintf(out, sizeof(out), "%s/inside.csv", dir);
	assert_int_equal(test_profctl_run(out, args), 0);
	csv = test_slurp(out, NULL);
	assert_non_null(csv);
	for (l = strchr(csv, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		/* pid,zone,func,file,line,module,self,...: no commas in these */
		const char *f[7], *q = l + 1;
		char func[128];
		unsigned long long self;
		int k;

		for (k = 0; k < 7 && q; k++) {
			f[k] = q;
			q = strpbrk(q, ",\n");
			q = q && *q == ',' ? q + 1 : NULL;
		}
		if (k < 7)
			continue;
		snprintf(func, sizeof(func), "%.*s", (int)(f[3] - f[2] - 1), f[2]);
		self = strtoull(f[6], NULL, 10);
		c->all += self;
		if (!strcmp(func, own))
			c->own += self;
		/* the program's own code inside the zone (the zone's macro,
		 * the call into the library): named, and not a library's */
		else if (func[0] && !strncmp(f[5], "sample_unmap+", 13))
			c->prog += self;
		else if (!func[0])
			c->bare += self;
		else if (strstr(func, other))
			c->wrong += self;
	}
	fprintf(stderr, "%s:\n%s", zone, csv);
	free(csv);
}

static void test_unmapped(void **state)
{
	struct counts a, b;
	char cmd[8400], prog_path[4096], line[16] = "";
	__u64 end;
	FILE *prog;
	pid_t pid = 0;

	(void)state;
	test_need_profd(profd_pid);
	snprintf(prog_path, sizeof(prog_path), "%s", test_beside("tests/sample_unmap"));
	snprintf(cmd, sizeof(cmd), "echo $$; exec %s %s 120", prog_path, test_beside("tests"));
	prog = popen(cmd, "r");
	assert_non_null(prog);
	assert_non_null(fgets(line, sizeof(line), prog));
	pid = (pid_t)atoi(line);
	assert_true(pid > 0);
	assert_non_null(fgets(line, sizeof(line), prog));
	if (strncmp(line, "same", 4)) {
		kill(pid, SIGKILL);
		pclose(prog);
		fail_msg("unmap_b.so was not loaded where unmap_a.so was: nothing is proved");
	}
	for (end = now_ns() + 60000000000ull;; usleep(300000)) {
		inside(pid, "in_b", "burn_b", "_a", &b);
		if (b.all >= 300 || now_ns() > end)
			break;
	}
	inside(pid, "in_a", "burn_a", "_b", &a);
	kill(pid, SIGKILL);
	pclose(prog);
	/* never the other library's name; its own for most samples (those
	 * drained after the maps changed again are their addresses) */
	assert_int_equal(b.wrong, 0);
	assert_int_equal(a.wrong, 0);
	assert_true(b.all >= 300 && a.all >= 300);
	assert_true(b.own * 2 >= b.all);
	assert_true(a.own * 2 >= a.all);
	assert_true(a.own + a.bare + a.prog == a.all && b.own + b.bare + b.prog == b.all);
	/* and profd ran on */
	assert_int_equal(kill(profd_pid, 0), 0);
	assert_int_equal(waitpid(profd_pid, NULL, WNOHANG), 0);
}

TEST_PROFD_GROUP("test_sample_unmap")

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unmapped),
	};

	return test_run_group(tests, setup, teardown);
}
