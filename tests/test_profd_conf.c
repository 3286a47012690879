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
#include "conf_parse.h"

/* profd --history VAL parsed in a child: its exit status, conf.history_s */
static int parse_history(const char *val, __u32 *secs)
{
	return parse_one("--history", val, offsetof(struct profd_conf, history_s), secs);
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
