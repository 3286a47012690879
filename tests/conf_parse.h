/* SPDX-License-Identifier: MIT */
/*
 * conf_parse.h - profd's option parser run on one option in a child (a
 * bad value makes it exit), what test_profd_conf.c and test_conf_times.c
 * share.  Include after testutil.h and profd.h.
 */
#ifndef PROF_TEST_CONF_PARSE_H
#define PROF_TEST_CONF_PARSE_H

#include <getopt.h>
#include <stddef.h>
#include <sys/wait.h>

/* profd_conf_parse of "profd OPT VAL" in a child (a bad value exits); the
 * child's exit status, and the __u32 of conf at off through a pipe */
static inline int parse_one(const char *opt, const char *val, size_t off, __u32 *got)
{
	int fds[2], status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char a0[] = "profd", a1[32], a2[32];
		char *argv[] = { a0, a1, a2, NULL };

		snprintf(a1, sizeof(a1), "%s", opt);
		snprintf(a2, sizeof(a2), "%s", val);
		close(fds[0]);
		/* quiet: a bad value's exit is what is tested, not its message */
		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		optind = 1;
		profd_conf_parse(3, argv);
		if (write(fds[1], (const char *)&conf + off, sizeof(*got)) != (ssize_t)sizeof(*got))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	*got = 0;
	if (read(fds[0], got, sizeof(*got)) != (ssize_t)sizeof(*got))
		*got = 0;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

#endif /* PROF_TEST_CONF_PARSE_H */
