/* SPDX-License-Identifier: MIT */
/*
 * profctl_run.h - what test_profctl.c and test_profctl_cli.c share: the
 * fixed snapshot (profctl_fixture.h) written as a segment image in a
 * private directory (setup, teardown), profctl run in-process with its
 * output and errors caught (run, run_text, run_stdout, usage_error); a
 * file's text is testutil.h's test_slurp.  Include after profd_private.h.
 */
#ifndef PROF_TEST_PROFCTL_RUN_H
#define PROF_TEST_PROFCTL_RUN_H


static char dir[64], image[128];

static inline int setup(void **state)
{
	void *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_profctl.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(image, sizeof(image), "%s/golden.seg", dir);
	if (fx_image(&buf, &len))
		return -1;
	f = fopen(image, "w");
	if (!f || fwrite(buf, 1, len, f) != len)
		return -1;
	fclose(f);
	free(buf);
	/* no profd for these, no colour unless asked */
	setenv("PROFCTL_NO_DAEMON", "1", 1);
	setenv("NO_COLOR", "1", 1);
	return 0;
}

static inline int teardown(void **state)
{
	(void)state;
	return test_rm_rf(dir);
}

/* run profctl with argv (NULL-terminated), stderr into errbuf; exit status */
static inline int run(const char **args, char *errbuf, size_t errlen)
{
	char scratch[1]; /* stderr is caught even when nobody reads it */

	return test_profctl_run_io(dir, NULL, args, errbuf ? errbuf : scratch,
				   errbuf ? errlen : sizeof(scratch));
}

/* run profctl with argv, which must succeed; the text it wrote to out */
static inline char *run_text(const char **args, const char *out)
{
	char *text;

	assert_int_equal(run(args, NULL, 0), 0);
	text = test_slurp(out, NULL);
	assert_non_null(text);
	/* never NULL for a caller's %s (the compiler does not know the
	 * assertion ends the test) */
	return text ? text : strdup("");
}

/* profctl with args is a usage error: exit 2, and want (one line) on stderr */
static inline void usage_error(const char **args, const char *want)
{
	char err[512];
	int rc = run(args, err, sizeof(err));

	if (rc != 2 || strcmp(err, want))
		fail_msg("profctl %s ...: exit %d, stderr '%s'; want exit 2, '%s'", args[0], rc,
			 err, want);
}

/* run profctl with argv, stdout into a malloc'd string; exit status */
static inline int run_stdout(const char **args, char **text)
{
	char out[160], scratch[1]; /* stderr is caught even when nobody reads it */
	int rc;

	snprintf(out, sizeof(out), "%s/stdout", dir);
	rc = test_profctl_run_io(dir, out, args, scratch, sizeof(scratch));
	*text = test_slurp(out, NULL);
	assert_non_null(*text);
	return rc;
}

#endif /* PROF_TEST_PROFCTL_RUN_H */
