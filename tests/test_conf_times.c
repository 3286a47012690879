// SPDX-License-Identifier: MIT
/*
 * test_conf_times.c - every profd option that takes a time reads it one way
 * (profd_conf.c's arg_time, the parser of profctl's --last): "90s", "2m",
 * "100ms" where the unit allows, and a bare number of the unit each option
 * was always documented in (--interval milliseconds, --keep and --idle
 * seconds, 0 too where the range has it); what is not whole units, or out
 * of range, makes profd exit.
 */
#include <getopt.h>
#include <stddef.h>
#include <sys/wait.h>

#include "testutil.h"
#include "profd.h"
#include "conf_parse.h"

static void test_times(void **state)
{
	static const struct {
		const char *opt, *val;
		size_t off;
		int status;
		__u32 want;
	} cases[] = {
		/* milliseconds: bare, as documented, and with a unit */
		{ "--interval", "100", offsetof(struct profd_conf, interval_ms), 0, 100 },
		{ "--interval", "250ms", offsetof(struct profd_conf, interval_ms), 0, 250 },
		{ "--interval", "2s", offsetof(struct profd_conf, interval_ms), 0, 2000 },
		{ "--interval", "1h", offsetof(struct profd_conf, interval_ms), 0, 3600000 },
		{ "--interval", "5ms", offsetof(struct profd_conf, interval_ms), 1, 0 },
		{ "--interval", "1500us", offsetof(struct profd_conf, interval_ms), 1, 0 },
		{ "--interval", "9", offsetof(struct profd_conf, interval_ms), 1, 0 },
		/* seconds: 0 and past the parser's week, bare only */
		{ "--keep", "0", offsetof(struct profd_conf, keep_s), 0, 0 },
		{ "--keep", "2592000", offsetof(struct profd_conf, keep_s), 0, 2592000 },
		{ "--keep", "10m", offsetof(struct profd_conf, keep_s), 0, 600 },
		{ "--keep", "2592001", offsetof(struct profd_conf, keep_s), 1, 0 },
		{ "--keep", "500ms", offsetof(struct profd_conf, keep_s), 1, 0 },
		{ "--idle", "30", offsetof(struct profd_conf, idle_s), 0, 30 },
		{ "--idle", "1m", offsetof(struct profd_conf, idle_s), 0, 60 },
		{ "--idle", "1.5s", offsetof(struct profd_conf, idle_s), 1, 0 },
		{ "--idle", "0", offsetof(struct profd_conf, idle_s), 1, 0 },
		{ "--idle", "", offsetof(struct profd_conf, idle_s), 1, 0 },
		{ "--idle", "-5", offsetof(struct profd_conf, idle_s), 1, 0 },
		{ "--history", "2m", offsetof(struct profd_conf, history_s), 0, 120 },
	};
	size_t i;
	__u32 got;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int status = parse_one(cases[i].opt, cases[i].val, cases[i].off, &got);

		if (status != cases[i].status || (!status && got != cases[i].want))
			fail_msg("%s \"%s\": exit %d, %u; want exit %d, %u", cases[i].opt,
				 cases[i].val, status, got, cases[i].status, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_times),
	};

	test_filter_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
