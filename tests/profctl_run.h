/* SPDX-License-Identifier: MIT */
/*
 * profctl_run.h - profctl ARGS... run in a forked child (profctl_main), as
 * the tests of its verbs on live processes do.
 */
#ifndef PROF_PROFCTL_RUN_H
#define PROF_PROFCTL_RUN_H

#include <sys/wait.h>
#include "profctl.h"

/* profctl ARGS... (NULL-terminated, 14 at most) in a child, its exit status */
static inline int profctl(const char **args)
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

#endif /* PROF_PROFCTL_RUN_H */
