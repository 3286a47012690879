// SPDX-License-Identifier: MIT
/*
 * test_profctl_cli.c - profctl's command line on the fixed snapshot: what
 * each bad usage says, the option tables against --help, the man page and
 * the bash completion, the report's conflicting options, durations,
 * colour, and a verb that asks profd nothing it need not.
 */
#define _GNU_SOURCE /* posix_openpt, ptsname */
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "profctl_fixture.h"
#include "prof.h"
#include "profd_private.h"
#include "profctl_run.h"

/* what daemon/profctl/profctl.bash completes after words (the last is the word
 * being completed), sorted and space separated, into buf */
static void complete(const char *words, char *buf, size_t len)
{
	char cmd[512], *out;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "bash -c 'source daemon/profctl/profctl.bash; COMP_WORDS=(profctl %s); "
		 "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _profctl; "
		 "printf \"%%s\\n\" \"${COMPREPLY[@]}\" | LC_ALL=C sort | tr \"\\n\" \" \"'",
		 words);
	out = test_popen_text(cmd, &st);
	assert_int_equal(st, 0);
	snprintf(buf, len, "%s", out);
	free(out);
}

/* len bytes of buf written as dir/name, then reported with --input: refused
 * (1), saying says */
static void input_refused(const void *buf, size_t len, const char *name, const char *says)
{
	char err[512], path[160];
	const char *a[] = { "report", "--input", path, NULL };

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	test_spill(path, buf, len);
	assert_int_equal(run(a, err, sizeof(err)), 1);
	assert_non_null(strstr(err, says));
}

/* render the fixture with extra args into a file and compare with golden */
static void test_errors(void **state)
{
	const char *a1[] = { "report", "--input", image, "--callers", "nope", NULL };
	const char *a2[] = { "report", "--bogus", NULL };
	const char *a3[] = { "report", "--sort", "speed", NULL };
	const char *a4[] = { "frobnicate", NULL };
	const char *a5[] = { "report", "--input", image, "--format", "folded", "--flat", NULL };
	const char *a6[] = { "report", "--pid", "2147483646", NULL };
	char err[512];
	void *buf;
	size_t len;

	(void)state;
	assert_int_equal(run(a1, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "zone 'nope' not found"));
	assert_int_equal(run(a2, err, sizeof(err)), 2);
	assert_int_equal(run(a3, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "bad sort key"));
	assert_int_equal(run(a4, err, sizeof(err)), 2);
	assert_int_equal(run(a5, err, sizeof(err)), 2);
	assert_int_equal(run(a6, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "no such process"));
	/* one line each */
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);

	/* an unknown version and a corrupt image */
	assert_int_equal(fx_image(&buf, &len), 0);
	((struct prof_seg_hdr *)buf)->version = PROF_SEG_VERSION + 1;
	input_refused(buf, len, "v2.seg", "unknown segment version");
	((struct prof_seg_hdr *)buf)->version = PROF_SEG_VERSION;
	((struct prof_seg_hdr *)buf)->node_size = 64;
	input_refused(buf, len, "bad.seg", "corrupt segment");
	free(buf);
}

/* an option error names the option, not its value or a neighbour */
static void test_option_errors(void **state)
{
	const char *a1[] = { "reset", "--tid", "5", NULL };
	const char *a2[] = { "list", "--pid", "1", NULL };
	const char *a3[] = { "report", "--pid", NULL };
	const char *a4[] = { "report", "-o", NULL };
	const char *a5[] = { "top", "--sor", NULL };
	const char *a6[] = { "report", "--flat=3", NULL };
	const char *a7[] = { "status", "-t", "5", NULL };
	const char *a8[] = { "report", "--s", "self", NULL };
	const char *a9[] = { "report", "--bogus", "x", NULL };
	const char *a10[] = { "list", "extra", NULL };
	const char *a11[] = { "save", "-o", "f", "extra", NULL };
	const char *b1[] = { "--no-daemon", "report", NULL };
	const char *b2[] = { "--pid", "3", "top", NULL };
	const char *b3[] = { "--pid", "3", NULL };

	(void)state;
	usage_error(a1, "profctl: reset: option --tid not accepted\n");
	usage_error(a2, "profctl: list: option --pid not accepted\n");
	usage_error(a3, "profctl: report: --pid needs a value\n");
	usage_error(a4, "profctl: report: -o needs a value\n");
	usage_error(a5, "profctl: top: --sort needs a value\n");
	usage_error(a6, "profctl: report: --flat takes no value\n");
	usage_error(a7, "profctl: status: option -t not accepted\n");
	usage_error(a8, "profctl: report: ambiguous option --s; see --help\n");
	usage_error(a9, "profctl: report: unknown option --bogus; see --help\n");
	/* a verb whose table ends without operands refuses them */
	usage_error(a10, "profctl: list: unexpected argument 'extra'; see --help\n");
	usage_error(a11, "profctl: save: unexpected argument 'extra'; see --help\n");
	usage_error(b1, "profctl: options come after the verb: profctl report --no-daemon ...\n");
	usage_error(b2, "profctl: options come after the verb: profctl top --pid ...\n");
	usage_error(b3, "profctl: unknown verb '--pid'; see profctl --help\n");
}

/* every option that takes a time reads it one way (pc_parse_duration) */
static void test_durations(void **state)
{
	static const struct {
		const char *s;
		__u64 ns;
	} ok[] = { { "10s", 10000000000ull }, { "2m", 120000000000ull }, { "1h", 3600000000000ull },
		   { "0.5", 500000000ull },   { "16ms", 16000000ull },	   { "250us", 250000ull },
		   { "100ns", 100ull },	      { "30", 30000000000ull },	   { "1.5s", 1500000000ull } };
	static const char *const bad[] = { "", "s", "10x", "-1", "inf", "nan", "0", "8d", "0x10",
					   "1e3", "10 s", "1s5", "1.2.3s", "." };
	const char *last[] = { "report", "--last", "1500ms", NULL };
	const char *delay[] = { "top", "--delay", "5ms", NULL };
	__u64 ns;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ns = 0;
		if (pc_parse_duration(ok[i].s, &ns) || ns != ok[i].ns)
			fail_msg("'%s': %llu ns, want %llu", ok[i].s, (unsigned long long)ns,
				 (unsigned long long)ok[i].ns);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!pc_parse_duration(bad[i], &ns))
			fail_msg("'%s' read as %llu ns", bad[i], (unsigned long long)ns);
	/* --last counts whole seconds of profd's frames; --delay 10 ms at least */
	usage_error(last, "profctl: bad duration '1500ms' (whole seconds: 10s, 2m, 1h)\n");
	usage_error(delay, "profctl: bad delay '5ms' (10ms to 1h: 0.5, 500ms, 2s)\n");
}

/* every row of report's conflict table refuses its example, with its reason */
static void test_report_conflicts(void **state)
{
	size_t i, k, n = 0;

	(void)state;
	assert_true(pc_report_nconflicts >= 10);
	for (i = 0; i < pc_report_nconflicts; i++) {
		const struct pc_conflict *c = &pc_report_conflicts[i];
		char buf[128], want[256], *save = NULL, *w;
		const char *args[16] = { "report" };

		if (!c->example)
			continue; /* pprof to a terminal: not one here */
		snprintf(buf, sizeof(buf), "%s", c->example);
		for (k = 1, w = strtok_r(buf, " ", &save); w && k < 15;
		     w = strtok_r(NULL, " ", &save))
			args[k++] = w;
		args[k] = NULL;
		snprintf(want, sizeof(want), "profctl: report: %s\n", c->why);
		usage_error(args, want);
		n++;
	}
	assert_int_equal(n, pc_report_nconflicts - 1);
}

/* top sorts by what it has per interval: no percentile */
static void test_top_sort_keys(void **state)
{
	const char *a1[] = { "top", "--sort", "p99", NULL };
	const char *a2[] = { "top", "-s", "p99", "--pid", "1", NULL };
	static const char want[] = "profctl: top: --sort p99 not available: top sorts by self, "
				   "total, calls, max, oncpu or self-oncpu\n";
	char got[256];

	(void)state;
	usage_error(a1, want);
	usage_error(a2, want);
	/* completion offers top's keys, report's include p99 */
	complete("top --sort \"\"", got, sizeof(got));
	assert_string_equal(got, "calls max oncpu self self-oncpu total ");
	complete("report --sort \"\"", got, sizeof(got));
	assert_string_equal(got, "calls max oncpu p99 self self-oncpu total ");
}

/* options that would silently override or be ignored are refused */
static void test_conflicts(void **state)
{
	const char *a1[] = { "report", "--input", image, "--since-reset", "--last", "5s", NULL };
	const char *a2[] = { "report", "--input", image, "--last", "5s", "--since-start", NULL };
	const char *a3[] = { "report", "--input", image, "--flat", "--callers", "lex", NULL };
	const char *a4[] = { "report", "--input", image, "--format", "html", "--flat", NULL };
	const char *a5[] = { "report", "--input",   image, "--format",
			     "html",   "--callers", "lex", NULL };
	const char *a6[] = { "report", "--input", image, "--flat", "--sort", "p99", NULL };
	const char *a7[] = { "report", "--input",  image, "--flat", "--sort",
			     "p99",    "--format", "csv", NULL };
	const char *a8[] = { "report", "--input",  image,  "--flat", "--sort",
			     "p99",    "--format", "json", NULL };
	const char *a9[] = { "report", "--input", image,       "--format", "folded",
			     "--flat", "-o",	  "/dev/null", NULL };
	/* options a view would ignore */
	const char *b1[] = { "report", "--input", image, "--rows", "3", NULL };
	const char *b2[] = {
		"report", "--input", image, "--callers", "lex", "--sort", "calls", NULL
	};
	const char *b3[] = { "report", "--input", image, "--pid", "1", NULL };
	const char *b4[] = { "report", "--input", image, "--last", "5s", NULL };
	const char *b5[] = { "report", "--input", image,       "--flat", "--rows",
			     "3",      "-o",	  "/dev/null", NULL };
	/* the same option twice is no conflict */
	const char *ok[] = { "report",	      "--input", image,	      "--since-start",
			     "--since-start", "-o",	 "/dev/null", NULL };
	static const char html[] = "profctl: report: --format html is the call tree: it has no "
				   "--flat or --callers view\n";
	static const char p99[] = "profctl: report: --flat rows have no percentiles: sort them by "
				  "self, total, calls, max, oncpu or self-oncpu\n";

	(void)state;
	usage_error(a1, "profctl: report: --since-reset and --last cannot be combined\n");
	usage_error(a2, "profctl: report: --last and --since-start cannot be combined\n");
	usage_error(a3, "profctl: report: --flat and --callers cannot be combined\n");
	usage_error(a4, html);
	usage_error(a5, html);
	usage_error(a6, p99);
	usage_error(a7, p99);
	usage_error(a8, p99);
	usage_error(a9, "profctl: report: --format folded is the call stacks: it has no --flat "
			"or --callers view\n");
	assert_int_equal(run(ok, NULL, 0), 0);
	usage_error(b1, "profctl: report: --rows limits the --flat list\n");
	usage_error(b2, "profctl: report: --callers rows are ordered by their time: no --sort\n");
	usage_error(b3, "profctl: report: --input reads a saved image: no --pid\n");
	usage_error(b4, "profctl: report: --input reads a saved image: no --last\n");
	assert_int_equal(run(b5, NULL, 0), 0);
}

static void test_help(void **state)
{
	static const char *const verbs[] = { "report", "list",	"reset", "top",
					     "status", "zones", "clean" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		const char *a[] = { verbs[i], "--help", NULL };
		char *text;

		assert_int_equal(run_stdout(a, &text), 0);
		assert_non_null(strstr(text, "usage: profctl"));
		assert_non_null(strstr(text, verbs[i]));
		free(text);
	}
}

/* report's text on a terminal, NO_COLOR as given (NULL: unset): colour? */
static bool colour_on_tty(const char *no_color)
{
	const char *a[] = { "report", "--input", image, NULL };
	char buf[4096], *name;
	bool esc = false;
	int m, st;
	ssize_t r;
	pid_t p;

	m = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(m >= 0);
	assert_int_equal(grantpt(m), 0);
	assert_int_equal(unlockpt(m), 0);
	name = ptsname(m);
	assert_non_null(name);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		int s = open(name, O_RDWR | O_NOCTTY);

		if (s < 0 || dup2(s, 1) < 0)
			_exit(126);
		close(s);
		close(m);
		if (no_color)
			setenv("NO_COLOR", no_color, 1);
		else
			unsetenv("NO_COLOR");
		_exit(run(a, NULL, 0));
	}
	/* read while it writes: a pty holds only a few KiB; EIO once it is gone */
	while ((r = read(m, buf, sizeof(buf) - 1)) > 0) {
		buf[r] = 0;
		esc |= strchr(buf, '\033') != NULL;
	}
	close(m);
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return esc;
}

/* --color auto: per no-color.org only a non-empty NO_COLOR turns it off */
static void test_no_color(void **state)
{
	(void)state;
	assert_true(colour_on_tty(NULL));
	assert_true(colour_on_tty(""));
	assert_false(colour_on_tty("1"));
}

/* needle in text as a whole option name: not the start of a longer one */
static bool has_opt(const char *text, const char *needle)
{
	size_t len = strlen(needle);
	const char *p;

	for (p = strstr(text, needle); p; p = strstr(p + 1, needle)) {
		char b = p > text ? p[-1] : ' ', a = p[len];

		if (b != '-' && b != '\\' && !(b >= 'a' && b <= 'z') && a != '-' && a != '\\' &&
		    !(a >= 'a' && a <= 'z'))
			return true;
	}
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * What each verb accepts, probed option by option, is exactly what its
 * --help, the man page's synopsis and the bash completion offer.
 */
static void test_docs_agree(void **state)
{
	static const char *const verbs[] = { "list", "report", "reset", "top", "status", "clean" };
	static const struct {
		const char *name, *val;
	} opts[] = {
		{ "pid", "1" },
		{ "tid", "1" },
		{ "since-reset", NULL },
		{ "since-start", NULL },
		{ "last", "10s" },
		{ "sort", "self" },
		{ "flat", NULL },
		{ "callers", "x" },
		{ "threads", NULL },
		{ "merge-threads", NULL },
		{ "weight", "wall" },
		{ "format", "text" },
		{ "output", "/dev/null" },
		{ "rows", "5" },
		{ "color", "never" },
		{ "input", "/nonexistent" },
		{ "compensate", NULL },
		{ "no-daemon", NULL },
		{ "delay", "1" },
		{ "iterations", "1" },
		{ "dry-run", NULL },
	};
	char *man, *help, err[512], got[512], want[512], opt[64], manopt[96], head[64];
	const char *names[32];
	size_t v, i, k, nn;

	(void)state;
	man = test_slurp("man/profctl.1", NULL);
	assert_non_null(man);
	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++) {
		const char *ha[] = { verbs[v], "--help", NULL };
		char *syn, *end;

		assert_int_equal(run_stdout(ha, &help), 0);
		snprintf(head, sizeof(head), "\n.B profctl %s\n", verbs[v]);
		syn = strstr(man, head);
		if (!syn)
			fail_msg("no synopsis of %s in man/profctl.1", verbs[v]);
		syn = strndup(syn, (size_t)(strstr(syn + 1, "\n.br") - syn));
		nn = 0;
		names[nn++] = "--help";
		for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
			const char *a[] = { verbs[v], opt, opts[i].val, "--help", NULL };
			char *o;
			int rc;

			snprintf(opt, sizeof(opt), "--%s", opts[i].name);
			if (!opts[i].val) {
				a[2] = "--help";
				a[3] = NULL;
			}
			rc = run(a, err, sizeof(err));
			if (rc != 0 && !(rc == 2 && strstr(err, "not accepted")))
				fail_msg("%s %s: exit %d, '%s'", verbs[v], opt, rc, err);
			if (has_opt(help, opt) != !rc)
				fail_msg("%s %s: %s, but --help %s it", verbs[v], opt,
					 rc ? "refused" : "accepted", rc ? "names" : "omits");
			/* the man page escapes each dash */
			for (k = 0, o = manopt; opt[k]; k++) {
				if (opt[k] == '-')
					*o++ = '\\';
				*o++ = opt[k];
			}
			*o = 0;
			if (has_opt(syn, manopt) != !rc)
				fail_msg("%s %s: %s, but the man synopsis %s it", verbs[v], opt,
					 rc ? "refused" : "accepted", rc ? "names" : "omits");
			if (!rc)
				names[nn++] = opts[i].name;
		}
		/* the completion: the accepted options and --help, nothing else */
		for (i = 1; i < nn; i++) {
			char *d = malloc(strlen(names[i]) + 3);

			sprintf(d, "--%s", names[i]);
			names[i] = d;
		}
		qsort(names, nn, sizeof(names[0]), cmp_str);
		for (i = 0, end = want; i < nn; i++)
			end += sprintf(end, "%s ", names[i]);
		snprintf(head, sizeof(head), "%s --", verbs[v]);
		complete(head, got, sizeof(got));
		if (strcmp(got, want))
			fail_msg("%s: completion '%s', accepted '%s'", verbs[v], got, want);
		for (i = 0; i < nn; i++)
			if (strcmp(names[i], "--help"))
				free((char *)(uintptr_t)names[i]);
		free(syn);
		free(help);
	}
	/* --version works, and both say so */
	{
		const char *a[] = { "--help", NULL };
		const char *b[] = { "--version", NULL };

		assert_int_equal(run_stdout(a, &help), 0);
		assert_true(has_opt(help, "--version"));
		free(help);
		assert_int_equal(run_stdout(b, &help), 0);
		assert_non_null(strstr(help, "profctl "));
		free(help);
		assert_true(has_opt(man, "\\-\\-version"));
	}
	free(man);
}

/* told not to ask profd, status says so */
static void test_status_not_asked(void **state)
{
	const char *a[] = { "status", NULL };
	char *text;

	(void)state;
	assert_int_equal(run_stdout(a, &text), 0);
	if (!strstr(text, "\nprofd: not asked (--no-daemon or PROFCTL_NO_DAEMON); profctl reads "
			  "your segments in /dev/shm directly\n"))
		fail_msg("status:\n%s", text);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_option_errors),
		cmocka_unit_test(test_report_conflicts),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_conflicts),
		cmocka_unit_test(test_top_sort_keys),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_status_not_asked),
		cmocka_unit_test(test_docs_agree),
		cmocka_unit_test(test_no_color),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

