// SPDX-License-Identifier: MIT
/*
 * test_probes.c - every zone is a USDT probe pair with semaphores:
 * `readelf -n` on probe_helper lists prof:probe_zone, prof:probe_zone__exit,
 * prof:func and prof:func__exit, each with a semaphore and the documented
 * arguments (name, file, line; and ns on exit), the two PROF_FUNC sites'
 * notes sharing their name's semaphores; with no tracer the
 * semaphores read 0; with bpftrace attached (root) they are raised and
 * bpftrace counts exactly the N calls the helper makes on each probe and on
 * each PROF_FUNC site (bpftrace raises one semaphore per name), reads
 * the zone's name and file as strings and its duration in ns, as the
 * README's one-liner does; perf probe and perf record (root) see the same
 * exit probe with its line and ns arguments.
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

	/* sites of one name share its semaphore: a tracer that raises the
	 * first location's (bpftrace, bcc) enables them all */
	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name)) {
			if (r && r->sema != v[i].sema)
				fail_msg("prof:%s: two sites, two semaphores %llx %llx", name, r->sema,
					 v[i].sema);
			if (!r)
				r = &v[i];
		}
	if (!r)
		fail_msg("no probe prof:%s in readelf -n", name);
	return r;
}

/* probe_zone, probe_zone__exit, func, func__exit: their semaphores */
static const char *const names[] = { "probe_zone", "probe_zone__exit", "func", "func__exit" };
static unsigned long long sema[4];

static void read_notes(const struct note **e, struct note *notes)
{
	char bin[PATH_MAX], cmd[PATH_MAX + 32];
	char *out;
	size_t n, i;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", helper(bin, sizeof(bin)));
	out = run_cmd(cmd);
	n = parse_notes(out, notes, 32);
	free(out);
	/* probe_zone's two, and two PROF_FUNC sites' two each */
	assert_int_equal(n, 6);
	for (i = 0; i < 4; i++) {
		e[i] = find_note(notes, n, names[i]);
		sema[i] = e[i]->sema;
	}
}

/* the probe arguments' words, "8@..." each */
static int count_args(const char *args)
{
	int n = 0;

	for (; *args; args++)
		if (args[0] == '8' && args[1] == '@')
			n++;
	return n;
}

static void test_readelf_notes(void **state)
{
	struct note notes[32];
	const struct note *e[4];
	size_t i, j;

	(void)state;
	read_notes(e, notes);
	for (i = 0; i < 4; i++) {
		if (!e[i]->sema)
			fail_msg("prof:%s has no semaphore", names[i]);
		for (j = 0; j < i; j++)
			assert_true(e[i]->sema != e[j]->sema);
	}
	/* exit probes: (name, file, line, ns) in the argument registers */
#if defined(__x86_64__)
	assert_string_equal(e[1]->args, "8@%rdi 8@%rsi 8@%rdx 8@%rcx");
	assert_string_equal(e[3]->args, "8@%rdi 8@%rsi 8@%rdx 8@%rcx");
#elif defined(__aarch64__)
	assert_string_equal(e[1]->args, "8@x0 8@x1 8@x2 8@x3");
	assert_string_equal(e[3]->args, "8@x0 8@x1 8@x2 8@x3");
#endif
	/* enter probes: (name, file, line), wherever the compiler put them */
	assert_int_equal(count_args(e[0]->args), 3);
	assert_int_equal(count_args(e[2]->args), 3);
}

/* the semaphores as the helper's arguments: " ENTER EXIT FENTER FEXIT" */
static void sema_args(char *buf, size_t len)
{
	struct note notes[32];
	const struct note *e[4];

	read_notes(e, notes);
	snprintf(buf, len, " %llx %llx %llx %llx", sema[0], sema[1], sema[2], sema[3]);
}

static void test_semaphore_idle(void **state)
{
	char bin[PATH_MAX], cmd[PATH_MAX + 128], args[96];
	char *out;

	(void)state;
	/* probe_zone's two */
	sema_args(args, sizeof(args));
	snprintf(cmd, sizeof(cmd), "PROF_QUIET=1 '%s' sema %llx %llx", helper(bin, sizeof(bin)),
		 sema[0], sema[1]);
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

/* wait up to secs for pid's BPF programs on want uprobes in bin (bpftool perf) */
static int wait_uprobes(pid_t pid, const char *bin, int want, int secs)
{
	char head[32];
	int i, n = 0;

	snprintf(head, sizeof(head), "pid %d ", (int)pid);
	for (i = 0; i < secs * 20; i++) {
		char *out = run_cmd("bpftool perf show 2>/dev/null"), *line, *save = NULL;

		for (n = 0, line = strtok_r(out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			n += !strncmp(line, head, strlen(head)) && strstr(line, " uprobe ") &&
			     strstr(line, bin);
		free(out);
		if (n >= want)
			return 1;
		usleep(50000);
	}
	print_message("bpftrace's programs on %d of %d uprobes after %d s\n", n, want, secs);
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
	char key[160];
	const char *p;

	snprintf(key, sizeof(key), "\n%s: ", map);
	p = strstr(out, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* the helper's "outer_ns=... spin_ns=..." line */
static void helper_ns(const char *h, unsigned long long *outer, unsigned long long *spin)
{
	const char *p = strstr(h, "outer_ns=");

	assert_non_null(p);
	assert_int_equal(sscanf(p, "outer_ns=%llu spin_ns=%llu", outer, spin), 2);
}

/*
 * The sum of a zone's exit-probe ns must lie between the time it spun and
 * the time measured around its calls: ticks (or ns off by the tick rate)
 * would not.  1% either way: the runtime's rate is calibrated.
 */
static void check_ns(long long ns, const char *h)
{
	unsigned long long outer, spin;

	helper_ns(h, &outer, &spin);
	print_message("probe ns %lld, spun %llu, around the calls %llu\n", ns, spin, outer);
	assert_true(ns >= (long long)(spin / 100 * 99));
	assert_true(ns <= (long long)(outer / 100 * 101));
}

static int tracing_ok(const char *tool)
{
	char cmd[64];

	/* tests/run's cross tier: qemu-user runs this, and uprobes see qemu */
	if (getenv("PROF_TEST_EMULATED")) {
		print_message("skip: %s cannot trace a program qemu-user emulates\n", tool);
		return 0;
	}
	if (geteuid() != 0) {
		print_message("skip: attaching %s needs root\n", tool);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	if (system(cmd)) {
		print_message("skip: %s is not installed\n", tool);
		return 0;
	}
	if (access("/sys/kernel/tracing/uprobe_events", F_OK) &&
	    access("/sys/kernel/debug/tracing/uprobe_events", F_OK) &&
	    system("mount -t tracefs tracefs /sys/kernel/tracing >/dev/null 2>&1")) {
		print_message("skip: no tracefs, and it could not be mounted\n");
		return 0;
	}
	return 1;
}

/* the test skipped unless tool can trace here; the helper's path into bin
 * (PATH_MAX bytes), its semaphores' arguments into args (96) */
static void need_tracing(const char *tool, char *bin, char *args)
{
	if (!tracing_ok(tool))
		skip();
	sema_args(args, 96);
	helper(bin, PATH_MAX);
}

static void test_bpftrace_counts(void **state)
{
	char bin[PATH_MAX], dir[] = "/tmp/prof-probes.XXXXXX", go[64], hout[64], bout[64];
	char hcmd[PATH_MAX + 256], bcmd[4 * PATH_MAX + 1024], args[96];
	char *h = NULL, *b = NULL;
	pid_t hp = -1, bp = -1;
	int st;

	(void)state;
	need_tracing("bpftrace", bin, args);
	/* bpftool: to see its programs attached */
	if (!tracing_ok("bpftool"))
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(go, sizeof(go), "%s/go", dir);
	snprintf(hout, sizeof(hout), "%s/helper.out", dir);
	snprintf(bout, sizeof(bout), "%s/bpftrace.out", dir);

	/* the helper first: it waits for the go file */
	snprintf(hcmd, sizeof(hcmd), "PROF_QUIET=1 exec '%s' run %d %s%s", bin, CALLS, go, args);
	hp = spawn_sh(hcmd, hout);
	assert_true(hp > 0);
	assert_true(wait_for(hout, "ready", 30));

	snprintf(bcmd, sizeof(bcmd),
		 "exec bpftrace -e '"
		 "usdt:%s:prof:probe_zone { @enter = count(); @efile[str(arg1)] = count(); "
		 "@eline = max(arg2); } "
		 "usdt:%s:prof:func { @fn[str(arg0)] = count(); } "
		 /* the README's one-liner, with sum for hist */
		 "usdt:%s:prof:*__exit { @ns[str(arg0)] = sum(arg3); @nx[str(arg0)] = count(); "
		 "@xline[str(arg0)] = max(arg2); }'",
		 bin, bin, bin);
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
	/* and its programs are on the six locations: the kernel raises a
	 * semaphore as it registers a probe, before bpftrace attaches the
	 * program (calls in between would go uncounted) */
	if (!wait_uprobes(bp, bin, 6, 60)) {
		kill(hp, SIGKILL);
		kill(bp, SIGKILL);
		test_wait(hp, 5);
		test_wait(bp, 5);
		fail_msg("bpftrace's programs were not attached in 60 s");
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
	/* each probe fired on each call, with the zone's name as a string */
	assert_int_equal(map_value(b, "@enter"), CALLS);
	assert_int_equal(map_value(b, "@fn[probe_fn]"), CALLS);
	assert_int_equal(map_value(b, "@fn[probe_fn2]"), CALLS);
	assert_int_equal(map_value(b, "@nx[probe_zone]"), CALLS);
	assert_int_equal(map_value(b, "@nx[probe_fn]"), CALLS);
	assert_int_equal(map_value(b, "@nx[probe_fn2]"), CALLS);
	assert_int_equal(map_value(b, "@efile[tests/probe_helper.c]"), CALLS);
	/* file:line of the site, the same on enter and exit */
	assert_true(map_value(b, "@eline") > 0);
	assert_int_equal(map_value(b, "@xline[probe_zone]"), map_value(b, "@eline"));
	check_ns(map_value(b, "@ns[probe_zone]"), h);
	free(h);
	free(b);
	unlink(go);
	unlink(hout);
	unlink(bout);
	rmdir(dir);
}

/*
 * perf: `perf probe -x BIN sdt_prof:probe_zone__exit` then `perf record
 * -e` that event, as the README shows; perf script prints each hit with
 * arg1..arg4 (name and file pointers, line, ns).  -f: another run may hold
 * the event name, so the event is the one perf says it added.
 */
static void test_perf_probe(void **state)
{
	char bin[PATH_MAX], dir[] = "/tmp/prof-perf.XXXXXX", go[64], args[96], ev[128];
	char cmd[2 * PATH_MAX + 512];
	char *out, *p, *h, *line;
	long long ns = 0, hits = 0, l0 = -1;
	int st;

	(void)state;
	need_tracing("perf", bin, args);
	snprintf(cmd, sizeof(cmd), "perf probe -f -x '%s' -a sdt_prof:probe_zone__exit 2>&1", bin);
	out = run_cmd(cmd);
	p = strstr(out, "sdt_prof:probe_zone__exit");
	if (!p || sscanf(p, "%127s", ev) != 1)
		fail_msg("perf probe added no event: %s", out);
	free(out);
	assert_non_null(mkdtemp(dir));
	snprintf(go, sizeof(go), "%s/go", dir);
	fclose(fopen(go, "w"));
	/* only the exit probe is attached: the helper waits for its semaphore */
	snprintf(cmd, sizeof(cmd),
		 "PROF_QUIET=1 timeout 120 perf record -q -o %s/perf.data -e %s -- '%s' run %d %s %llx "
		 ">%s/helper.out 2>&1",
		 dir, ev, bin, CALLS, go, sema[1], dir);
	st = system(cmd);
	snprintf(cmd, sizeof(cmd), "%s/helper.out", dir);
	h = slurp(cmd);
	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data 2>/dev/null", dir);
	out = run_cmd(cmd);
	snprintf(cmd, sizeof(cmd), "perf probe -q -d %s", ev);
	if (system(cmd))
		print_message("could not delete %s\n", ev);
	print_message("helper: %s", h);
	assert_int_equal(st, 0);
	assert_null(strstr(h, "sema timeout"));
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		long long a3, a4;

		p = strstr(line, " arg3=");
		if (!p || sscanf(p, " arg3=%lld arg4=%lld", &a3, &a4) != 2)
			continue;
		if (l0 < 0)
			l0 = a3;
		assert_int_equal(a3, l0);
		ns += a4;
		hits++;
	}
	assert_int_equal(hits, CALLS);
	assert_true(l0 > 0);
	check_ns(ns, h);
	free(out);
	free(h);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_readelf_notes), cmocka_unit_test(test_semaphore_idle),
	  cmocka_unit_test(test_bpftrace_counts), cmocka_unit_test(test_perf_probe))
