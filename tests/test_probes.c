// SPDX-License-Identifier: MIT
/*
 * test_probes.c - every zone is a USDT probe pair with semaphores:
 * `readelf -n` on probe_helper lists prof:probe_zone, prof:probe_zone__exit,
 * prof:func and prof:func__exit, each with a semaphore; with no tracer the
 * semaphores read 0; with bpftrace attached (root) they are raised and
 * bpftrace counts exactly the N calls the helper makes on each probe.
 */
#define _GNU_SOURCE
#include "fastpath.h"

#define CALLS 2500

static const char *helper(char *buf, size_t len)
{
	struct stat st;

	assert_non_null(test_sibling("probe_helper", buf, len));
	if (stat(buf, &st))
		fail_msg("missing %s: build it with make tests-build", buf);
	return buf;
}

/* the whole output of a command, malloc'd */
static char *run_cmd(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, n;
	char chunk[4096];

	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
		buf = realloc(buf, len + n + 1);
		assert_non_null(buf);
		memcpy(buf + len, chunk, n);
		len += n;
	}
	assert_int_equal(pclose(p), 0);
	if (!buf)
		buf = calloc(1, 1);
	buf[len] = 0;
	return buf;
}

struct note {
	char name[64];
	unsigned long long sema;
	char args[64];
};

/* the prof provider's notes from readelf -n output */
static size_t parse_notes(char *out, struct note *v, size_t max)
{
	size_t n = 0;
	char *line, *save = NULL;
	int in_prof = 0;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p;

		if ((p = strstr(line, "Provider: "))) {
			in_prof = !strcmp(p + 10, "prof");
			if (in_prof && n < max)
				memset(&v[n++], 0, sizeof(v[0]));
		} else if (in_prof && (p = strstr(line, "Name: "))) {
			snprintf(v[n - 1].name, sizeof(v[0].name), "%s", p + 6);
		} else if (in_prof && (p = strstr(line, "Semaphore: "))) {
			v[n - 1].sema = strtoull(p + 11, NULL, 16);
		} else if (in_prof && (p = strstr(line, "Arguments: "))) {
			snprintf(v[n - 1].args, sizeof(v[0].args), "%s", p + 11);
		}
	}
	return n;
}

static const struct note *find_note(const struct note *v, size_t n, const char *name)
{
	const struct note *r = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name)) {
			if (r)
				fail_msg("probe prof:%s listed twice", name);
			r = &v[i];
		}
	if (!r)
		fail_msg("no probe prof:%s in readelf -n", name);
	return r;
}

static void test_readelf_notes(void **state)
{
	static const char *const names[] = { "probe_zone", "probe_zone__exit", "func",
					     "func__exit" };
	char bin[PATH_MAX], cmd[PATH_MAX + 32];
	struct note notes[32];
	const struct note *e[4];
	char *out;
	size_t n, i, j;

	(void)state;
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", helper(bin, sizeof(bin)));
	out = run_cmd(cmd);
	n = parse_notes(out, notes, 32);
	free(out);
	assert_int_equal(n, 4);
	for (i = 0; i < 4; i++) {
		e[i] = find_note(notes, n, names[i]);
		if (!e[i]->sema)
			fail_msg("prof:%s has no semaphore", names[i]);
		for (j = 0; j < i; j++)
			assert_true(e[i]->sema != e[j]->sema);
	}
	/* exit probes carry (site, ticks) in the argument registers */
	assert_string_equal(e[1]->args, "8@%rdi 8@%rsi");
	assert_string_equal(e[3]->args, "8@%rdi 8@%rsi");
	/* an enter probe carries the site descriptor */
	assert_non_null(strstr(e[0]->args, "8@"));
}

static void test_semaphore_idle(void **state)
{
	char bin[PATH_MAX], cmd[PATH_MAX + 32];
	char *out;

	(void)state;
	snprintf(cmd, sizeof(cmd), "PROF_QUIET=1 '%s' sema", helper(bin, sizeof(bin)));
	out = run_cmd(cmd);
	assert_string_equal(out, "sema enter=0 exit=0\n");
	free(out);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f)
		return calloc(1, 1);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)len + 1);
	if (buf && len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)
		buf[0] = 0;
	fclose(f);
	return buf;
}

/* wait up to secs for needle in file path */
static int wait_for(const char *path, const char *needle, int secs)
{
	int i;

	for (i = 0; i < secs * 20; i++) {
		char *s = slurp(path);
		int found = s && strstr(s, needle);

		free(s);
		if (found)
			return 1;
		usleep(50000);
	}
	return 0;
}

static pid_t spawn_sh(const char *cmd, const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		FILE *f = freopen(out, "w", stdout);

		if (!f || dup2(1, 2) < 0)
			_exit(126);
		setpgid(0, 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static long long map_value(const char *out, const char *map)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), "\n%s: ", map);
	p = strstr(out, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static void test_bpftrace_counts(void **state)
{
	char bin[PATH_MAX], dir[] = "/tmp/prof-probes.XXXXXX", go[64], hout[64], bout[64];
	char hcmd[PATH_MAX + 128], bcmd[4 * PATH_MAX + 512];
	char *h = NULL, *b = NULL;
	pid_t hp = -1, bp = -1;
	int st;

	(void)state;
	if (geteuid() != 0) {
		print_message("skip: attaching bpftrace needs root\n");
		skip();
	}
	if (system("command -v bpftrace >/dev/null 2>&1")) {
		print_message("skip: bpftrace is not installed\n");
		skip();
	}
	if (access("/sys/kernel/tracing/uprobe_events", F_OK) &&
	    access("/sys/kernel/debug/tracing/uprobe_events", F_OK) &&
	    system("mount -t tracefs tracefs /sys/kernel/tracing >/dev/null 2>&1")) {
		print_message("skip: no tracefs, and it could not be mounted\n");
		skip();
	}
	helper(bin, sizeof(bin));
	assert_non_null(mkdtemp(dir));
	snprintf(go, sizeof(go), "%s/go", dir);
	snprintf(hout, sizeof(hout), "%s/helper.out", dir);
	snprintf(bout, sizeof(bout), "%s/bpftrace.out", dir);

	/* the helper first: it waits for the go file */
	snprintf(hcmd, sizeof(hcmd), "PROF_QUIET=1 exec '%s' run %d %s", bin, CALLS, go);
	hp = spawn_sh(hcmd, hout);
	assert_true(hp > 0);
	assert_true(wait_for(hout, "ready", 30));

	snprintf(bcmd, sizeof(bcmd),
		 "exec bpftrace -e '"
		 "usdt:%s:prof:probe_zone { @enter = count(); } "
		 "usdt:%s:prof:probe_zone__exit { @exit = count(); @ticks = sum(arg1); } "
		 "usdt:%s:prof:func { @fn = count(); } "
		 "usdt:%s:prof:func__exit { @fnexit = count(); }'",
		 bin, bin, bin, bin);
	bp = spawn_sh(bcmd, bout);
	assert_true(bp > 0);
	if (!wait_for(bout, "Attaching", 60)) {
		b = slurp(bout);
		kill(hp, SIGKILL);
		kill(bp, SIGKILL);
		test_wait(hp, 5);
		test_wait(bp, 5);
		fail_msg("bpftrace did not attach in 60 s: %s", b);
	}
	/* go: the helper also waits for the probes' semaphores */
	fclose(fopen(go, "w"));
	st = test_wait(hp, 60);
	h = slurp(hout);
	kill(bp, SIGINT);
	if (!test_exited_ok(test_wait(bp, 30)))
		print_message("bpftrace exit status not 0\n");
	b = slurp(bout);
	print_message("helper: %sbpftrace: %s\n", h, b);
	assert_true(test_exited_ok(st));
	assert_non_null(strstr(h, "done"));
	assert_null(strstr(h, "sema timeout"));
	/* attached: the semaphores are raised */
	assert_null(strstr(h, "sema enter=0"));
	assert_null(strstr(h, "exit=0\n"));
	assert_int_equal(map_value(b, "@enter"), CALLS);
	assert_int_equal(map_value(b, "@exit"), CALLS);
	assert_int_equal(map_value(b, "@fn"), CALLS);
	assert_int_equal(map_value(b, "@fnexit"), CALLS);
	assert_true(map_value(b, "@ticks") > 0);
	free(h);
	free(b);
	unlink(go);
	unlink(hout);
	unlink(bout);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readelf_notes),
		cmocka_unit_test(test_semaphore_idle),
		cmocka_unit_test(test_bpftrace_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
