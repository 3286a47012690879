/* SPDX-License-Identifier: MIT */
/*
 * profctl_child.h - profctl ARGS... run in a forked child (profctl_main), and
 * one scrape of serve's metrics, as the tests of its verbs on live
 * processes do.
 */
#ifndef PROF_PROFCTL_CHILD_H
#define PROF_PROFCTL_CHILD_H

#include <sys/wait.h>
#include "profctl.h"

/* profctl ARGS... (NULL-terminated, 14 at most) in a child, its exit status */
static __attribute__((unused)) int profctl(const char **args)
{
	char *argv[16] = { strdup("profctl") };
	pid_t p;
	int st, n = 1;

	while (args[n - 1] && n < 15) {
		argv[n] = strdup(args[n - 1]);
		n++;
	}
	argv[n] = NULL;
	p = fork();
	assert_true(p >= 0);
	if (p == 0)
		_exit(profctl_main(n, argv));
	while (n--)
		free(argv[n]);
	assert_int_equal(waitpid(p, &st, 0), p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* one scrape, OpenMetrics (om) or the Prometheus text format, of every
 * live process of ours read directly (noinline: gcc takes open_memstream's
 * buffer for a local of ours) */
static __attribute__((noinline, unused)) char *scrape(const struct pc_serve_opts *so, bool om)
{
	struct pc_src src;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	pc_src_open(&src, true);
	src.read_flags = 0;
	assert_int_equal(pc_metrics(f, &src, so, om), 0);
	pc_src_close(&src);
	assert_int_equal(fclose(f), 0);
	return buf;
}

#endif /* PROF_PROFCTL_CHILD_H */
