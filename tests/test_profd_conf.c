// SPDX-License-Identifier: MIT
/*
 * test_profd_conf.c - profd's options (daemon/profd/profd_conf.c): --history
 * takes a time as profctl's --last does ("90s", "2m"), bare seconds too,
 * and refuses what is not whole seconds in its range.
 */
#include <getopt.h>
#include <sys/wait.h>

#include "testutil.h"
#include "profd.h"

/* profd_conf_parse of "profd --history VAL" in a child (a bad value exits);
 * the child's exit status, and conf.history_s through a pipe */
static int parse_history(const char *val, __u32 *secs)
{
	int fds[2], status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char a0[] = "profd", a1[] = "--history", a2[32];
		char *argv[] = { a0, a1, a2, NULL };

		snprintf(a2, sizeof(a2), "%s", val);
		close(fds[0]);
		/* quiet: a bad value's message is what is tested, not shown */
		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		optind = 1;
		profd_conf_parse(3, argv);
		if (write(fds[1], &conf.history_s, sizeof(conf.history_s)) !=
		    (ssize_t)sizeof(conf.history_s))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	*secs = 0;
	if (read(fds[0], secs, sizeof(*secs)) != (ssize_t)sizeof(*secs))
		*secs = 0;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_history_durations(void **state)
{
	static const struct {
		const char *val;
		int status;
		__u32 secs;
	} cases[] = {
		{ "90", 0, 90 },    { "90s", 0, 90 },    { "2m", 0, 120 },  { "1h", 0, 3600 },
		{ "1000ms", 0, 1 }, { "86400", 0, 86400 }, { "500ms", 1, 0 }, { "1.5s", 1, 0 },
		{ "0", 1, 0 },      { "86401", 1, 0 },   { "2d", 1, 0 },    { "", 1, 0 },
	};
	size_t i;
	__u32 secs;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int status = parse_history(cases[i].val, &secs);

		if (status != cases[i].status || (!status && secs != cases[i].secs))
			fail_msg("--history \"%s\": exit %d, %u s; want exit %d, %u s",
				 cases[i].val, status, secs, cases[i].status, cases[i].secs);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history_durations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
