// SPDX-License-Identifier: MIT
/*
 * test_sample.c - profd's sampled stacks, counted under the zone open.
 *
 * Unprivileged: which zone a tick fell in, read from this process's own
 * slab (profd_attrib.c) at ticks taken from its event ring: a closed
 * nested call, a call still open, outside every zone, and a tick the ring
 * no longer covers (unknown, never guessed).
 *
 * Root (profd's perf_event sampler): tests/sample_prog.c built with gcc
 * and clang at -O2 -g, with and without frame pointers, runs 7 units of
 * CPU in hot_a and 3 in hot_b inside zone "work", 4 in cold_out outside
 * every zone, and sleeps in zone "nap".  `profctl report --inside` must
 * show about 70% and 30% in work, each with its file:line, cold_out only
 * outside, and nap (asleep 20 ms of each ~90 ms) next to nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "prof.h"
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "profd_private.h"
#include "profd_stacks.h"
#include "profctl_samples.h"
#include "proffile.h"

static volatile unsigned long sink;

static void spin(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void at_b(void)
{
	PROF_USDT(at_b);
	spin(20000);
}

__attribute__((noinline)) static void at_a(void)
{
	PROF_USDT(at_a);
	spin(20000);
	at_b();
	spin(20000);
}

/* this process's segment as a reader maps it, and this thread's events in
 * it, oldest first (own_end frees them) */
struct own {
	void *mem;
	size_t len;
	struct prof_trace *t;
	const struct prof_trace_thread *tt;
	char buf[256]; /* zone_at's path */
};

static void own_read(struct own *o)
{
	__u32 tid = (__u32)gettid(), i;

	o->mem = test_own_segment(&o->len);
	assert_int_equal(prof_seg_trace(o->mem, o->len, &o->t), 0);
	for (i = 0; i < o->t->nthreads; i++)
		if (o->t->threads[i].tid == tid) {
			o->tt = &o->t->threads[i];
			return;
		}
	fail_msg("no ring for this thread");
}

static void own_end(struct own *o)
{
	prof_trace__destroy(o->t);
	munmap(o->mem, o->len);
}

static __u64 ev_end(const struct prof_event *e)
{
	return e->start + prof_event_ticks(e);
}

/* the path attribution gives a tick of this thread, "" outside, "?" unknown */
static const char *zone_at(struct own *o, __u64 tick)
{
	struct prof_attr a = { .tick = tick };
	int slab = prof_seg_attribute(o->mem, o->len, (__u32)gettid(), &a, 1);

	assert_true(slab >= 0);
	if (a.node == PROF_ATTR_OUTSIDE)
		return "";
	if (a.node == PROF_ATTR_UNKNOWN)
		return "?";
	assert_int_equal(
		prof_seg_node_path(o->mem, o->len, (__u32)slab, a.node, o->buf, sizeof(o->buf)), 0);
	for (char *p = o->buf; *p; p++)
		if (*p == '\x1f')
			*p = '/';
	return o->buf;
}

/* inside a closed nested call, between it and its parent's start, after
 * the parent ended while the outer zone is open, and outside every zone */
static void test_attrib_closed(void **state)
{
	struct prof_event ea, eb, eo;
	struct own o;

	(void)state;
	{
		PROF_USDT(at_outer);
		at_a();
	}
	spin(20000);
	own_read(&o);
	assert_true(o.tt->n >= 3);
	/* in the order they ended: b, a, outer */
	eb = o.tt->ev[o.tt->n - 3];
	ea = o.tt->ev[o.tt->n - 2];
	eo = o.tt->ev[o.tt->n - 1];
	assert_true(ea.start < eb.start && ev_end(&eb) < ev_end(&ea));
	assert_string_equal(zone_at(&o, ea.start + (eb.start - ea.start) / 2), "at_outer/at_a");
	assert_string_equal(zone_at(&o, eb.start + prof_event_ticks(&eb) / 2),
			    "at_outer/at_a/at_b");
	assert_string_equal(zone_at(&o, ev_end(&eb)), "at_outer/at_a");
	assert_string_equal(zone_at(&o, eo.start), "at_outer");
	/* a call's end is outside it: the outer one's is outside every zone */
	assert_string_equal(zone_at(&o, ev_end(&eo)), "");
	assert_string_equal(zone_at(&o, ev_end(&eo) + 1000), "");
	/* the same as one batch (as profd asks): a call does not cover the
	 * later ticks of the batch */
	{
		struct prof_attr at[] = { { .tick = eb.start }, { .tick = ev_end(&eo) } };
		int slab = prof_seg_attribute(o.mem, o.len, (__u32)gettid(), at, 2);

		assert_true(slab >= 0);
		assert_int_equal(prof_seg_node_path(o.mem, o.len, (__u32)slab, at[0].node, o.buf,
						    sizeof(o.buf)),
				 0);
		assert_string_equal(o.buf, "at_outer\x1f"
					   "at_a\x1f"
					   "at_b");
		assert_int_equal(at[1].node, PROF_ATTR_OUTSIDE);
	}
	own_end(&o);
}

/* a zone still open is read from its open word: the ring has no event of it */
static void test_attrib_open(void **state)
{
	struct prof_event eb;
	struct own o;

	(void)state;
	PROF_USDT(at_open);
	at_b();
	spin(20000);
	own_read(&o);
	eb = o.tt->ev[o.tt->n - 1];
	assert_string_equal(zone_at(&o, ev_end(&eb)), "at_open");
	assert_string_equal(zone_at(&o, eb.start), "at_open/at_b");
	own_end(&o);
}

/* a tick older than what the ring still holds is unknown, not guessed */
static void test_attrib_lost(void **state)
{
	struct prof_event eb;
	struct own o;
	size_t i;

	(void)state;
	at_a();
	own_read(&o);
	eb = o.tt->ev[o.tt->n - 2];
	assert_string_equal(zone_at(&o, eb.start), "at_a/at_b");
	/* twice the ring's events since */
	for (i = 0; i < 2 * o.t->ring_events; i++) {
		PROF_USDT(at_churn);
	}
	assert_string_equal(zone_at(&o, eb.start), "?");
	/* how far back the ring reaches (profd's drain period): past that tick */
	{
		__u64 oldest;

		assert_int_equal(prof_seg_ring_oldest(o.mem, o.len, (__u32)gettid(), &oldest), 0);
		assert_true(oldest > ev_end(&eb));
	}
	own_end(&o);
}

struct exiting_arg {
	__u32 tid;
	__u64 tick; /* inside its at_b */
};

static void *exiting(void *arg)
{
	struct exiting_arg *x = arg;
	struct own o;

	at_a();
	own_read(&o);
	x->tid = (__u32)gettid();
	x->tick = o.tt->ev[o.tt->n - 2].start + prof_event_ticks(&o.tt->ev[o.tt->n - 2]) / 2;
	own_end(&o);
	return NULL;
}

/*
 * A thread's samples drained after it ended (profd drains every 10 to 100
 * ms) are attributed from the slab it left, not said unknown; its ring,
 * never wrapped, reaches back to its start
 */
static void test_attrib_exited(void **state)
{
	struct exiting_arg x = { 0 };
	struct prof_attr a = { 0 };
	pthread_t th;
	char buf[256];
	size_t len;
	void *mem;
	__u64 oldest = 1;
	int slab;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, exiting, &x), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(x.tid && x.tick);
	mem = test_own_segment(&len);
	a.tick = x.tick;
	slab = prof_seg_attribute(mem, len, x.tid, &a, 1);
	assert_true(slab >= 0);
	assert_true(a.node != PROF_ATTR_UNKNOWN && a.node != PROF_ATTR_OUTSIDE);
	assert_int_equal(prof_seg_node_path(mem, len, (__u32)slab, a.node, buf, 256), 0);
	assert_string_equal(buf, "at_a\x1f"
				 "at_b");
	assert_int_equal(prof_seg_ring_oldest(mem, len, x.tid, &oldest), 0);
	assert_int_equal(oldest, 0);
	munmap(mem, len);
}

/*
 * A saved profile with samples (version 2): the loader takes exactly its
 * header, body and samples, and profctl refuses samples that changed
 * after they were written; one without samples stays version 1.
 */
static void test_file_samples(void **state)
{
	static const char text[] = "7\t3\twork\thot_a\x1f" "a.c\x1f" "30\x1f" "a+0x10\n";
	struct prof_snapshot *s;
	struct prof_file_hdr h;
	void *buf = NULL;
	size_t len = 0, len1;
	char *junk;

	(void)state;
	at_a();
	s = test_snapshot(0);
	assert_non_null(s);
	assert_int_equal(prof_file_encode(s, &buf, &len), 0);
	len1 = len;
	assert_int_equal(pc_file_add_samples(&buf, &len, text, 0, 997), 0);
	assert_int_equal(len, len1);
	assert_int_equal(prof_file_check(buf, len, PROF_FILE_IMAGE_MAX, &h), 0);
	assert_int_equal(h.version, PROF_FILE_VERSION);
	assert_int_equal(pc_file_add_samples(&buf, &len, text, strlen(text), 997), 0);
	assert_int_equal(len, len1 + strlen(text));
	assert_int_equal(prof_file_check(buf, len, PROF_FILE_IMAGE_MAX, &h), 0);
	assert_int_equal(h.version, PROF_FILE_VERSION_SAMPLES);
	assert_int_equal(pc_file_take_samples(buf, len, &h), 0);
	/* short of its samples, or with bytes after them: refused */
	assert_int_equal(prof_file_check(buf, len - 1, PROF_FILE_IMAGE_MAX, &h), PROF_FILE_E_TRUNC);
	junk = malloc(len + 1);
	assert_non_null(junk);
	memcpy(junk, buf, len);
	junk[len] = 'x';
	assert_int_equal(prof_file_check(junk, len + 1, PROF_FILE_IMAGE_MAX, &h), -EINVAL);
	free(junk);
	/* a changed sample: the checksum says so */
	((char *)buf)[len - 3] ^= 1;
	assert_int_equal(prof_file_check(buf, len, PROF_FILE_IMAGE_MAX, &h), 0);
	assert_int_equal(pc_file_take_samples(buf, len, &h), PROF_FILE_E_HASH);
	pc_file_samples_forget();
	free(buf);
	prof_snapshot__destroy(s);
}

/* --- root: a real profd samples a real program ------------------------------- */

static pid_t profd_pid = -1;
static char sock[128];

/* this run's file KIND in /tmp (into p, n bytes; p): named by our pid, as
 * two copies of the suite (mutate's) run side by side */
static char *own_tmp(char *p, size_t n, const char *kind)
{
	snprintf(p, n, "/tmp/test_sample.%d.%s", (int)getpid(), kind);
	return p;
}

/* one profd for the root tests, started by the first */
static void need_sampler(void)
{
	static bool tried;

	if (!tried) {
		tried = true;
		test_profd_start(own_tmp(sock, sizeof(sock), "sock"), &profd_pid);
	}
	test_need_profd(profd_pid);
}

static int teardown_profd(void **state)
{
	static const char *const left[] = { "out", "sock", "sock.lock" };
	char path[64];
	size_t i;

	(void)state;
	test_profd_stop(profd_pid);
	profd_pid = -1;
	/* what the tests' reads and profd left in /tmp */
	for (i = 0; i < sizeof(left) / sizeof(left[0]); i++)
		unlink(own_tmp(path, sizeof(path), left[i]));
	return 0;
}

struct lines {
	int a0, a1, b0, b1, c0, c1;
};

static pid_t run_prog(const char *name, bool no_daemon)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (no_daemon)
			setenv("PROF_NO_DAEMON", "1", 1);
		execl(test_beside(name), name, "120", (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	return pid;
}

static void prog_lines(const char *name, struct lines *l)
{
	char cmd[4200];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s lines", test_beside(name));
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d %d %d %d %d %d", &l->a0, &l->a1, &l->b0, &l->b1, &l->c0,
				&l->c1),
			 6);
	pclose(p);
}

/* profctl VERB --pid PID args... (NULL after the last), its output as a
 * string (free it), left in /tmp/test_sample.PID.out */
static char *profctl_of(pid_t pid, const char *verb, const char *a0, const char *a1,
			const char *a2, const char *a3, const char *a4, const char *a5)
{
	char path[64], p[16];
	const char *args[] = { verb, "--pid", p, a0, a1, a2, a3, a4, a5, NULL };

	snprintf(p, sizeof(p), "%d", (int)pid);
	assert_int_equal(test_profctl_run(own_tmp(path, sizeof(path), "out"), args), 0);
	return test_slurp(path, NULL);
}

/* report --inside ZONE of pid, in fmt (free it) */
static char *inside(pid_t pid, const char *zone, const char *fmt)
{
	return profctl_of(pid, "report", "--inside", zone, "--format", fmt, NULL, NULL);
}

/* report --format json of pid (free it), checked against the schema */
static char *report_json(pid_t pid)
{
	char cmd[256], out[64],
		*j = profctl_of(pid, "report", "--format", "json", NULL, NULL, NULL, NULL);

	/* from the tree's top, as every test runs (not beside the binary:
	 * .output/SAN/tests is one level deeper) */
	snprintf(cmd, sizeof(cmd),
		 "python3 tests/check_schema.py tests/report.schema.json %s >/dev/null",
		 own_tmp(out, sizeof(out), "out"));
	assert_int_equal(system(cmd), 0);
	return j;
}

/* the cpu shares go tool pprof -lines -top gives hot_a and hot_b at a line
 * of sample_prog.c in pid's pprof profile; false (said) without go */
static bool pprof_shares(pid_t pid, double *a, double *b)
{
	char cmd[1024], line[1024], home[64], out[64];
	FILE *p;

	if (system("command -v go >/dev/null 2>&1")) {
		fprintf(stderr, "skipped the pprof check: go not installed (golang-go)\n");
		return false;
	}
	free(profctl_of(pid, "report", "--format", "pprof", NULL, NULL, NULL, NULL));
	own_tmp(home, sizeof(home), "go");
	snprintf(cmd, sizeof(cmd),
		 "env -i PATH=/usr/bin:/bin HOME=%s GOCACHE=%s/cache go tool pprof -sample_index=cpu "
		 "-lines -top %s 2>/dev/null",
		 home, home, own_tmp(out, sizeof(out), "out"));
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		double pct;

		if (sscanf(line, "%*s %lf%%", &pct) != 1 || !strstr(line, "sample_prog.c:"))
			continue;
		if (strstr(line, " hot_a "))
			*a += pct;
		if (strstr(line, " hot_b "))
			*b += pct;
	}
	pclose(p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
	assert_int_equal(system(cmd), 0);
	return true;
}

/* zone's node in a JSON tree has samples, func its most sampled line */
static bool node_inside(const char *json, const char *zone, const char *func)
{
	char name[128], want[160];
	const char *n, *c, *i, *k;

	snprintf(name, sizeof(name), "{\"name\":\"%s\"", zone);
	snprintf(want, sizeof(want), "\"inside\":[{\"func\":\"%s\"", func);
	n = strstr(json, name);
	if (!n)
		return false;
	c = strstr(n, "\"children\"");
	i = strstr(n, want);
	k = strstr(n, "\"samples\":");
	return c && i && i < c && k && k < c && strtoull(k + 10, NULL, 10) > 0;
}

struct row {
	char func[128], file[512];
	int line;
	double self_pct, incl_pct;
	unsigned long long self;
};

/* the CSV row of func (the first: rows are by self), false if none */
static bool csv_row(const char *csv, const char *func, struct row *r)
{
	const char *l = strchr(csv, '\n');

	while (l && *++l) {
		int n = sscanf(l, "%*d,%*[^,],%127[^,],%511[^,],%d,%*[^,],%llu,%lf,%*u,%lf", r->func,
			       r->file, &r->line, &r->self, &r->self_pct, &r->incl_pct);

		if (n == 6 && !strcmp(r->func, func))
			return true;
		l = strchr(l, '\n');
	}
	return false;
}

/* "pid P: N samples inside ZONE ..., of M": N and M */
static void counts(const char *text, unsigned long long *n, unsigned long long *of)
{
	const char *o = strstr(text, ", of ");

	assert_int_equal(sscanf(text, "pid %*d: %llu samples", n), 1);
	assert_non_null(o);
	assert_int_equal(sscanf(o, ", of %llu", of), 1);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

/* the program until work holds enough samples; its pid */
static pid_t sampled(const char *name, unsigned long long want)
{
	pid_t pid = run_prog(name, false);
	__u64 end = now_ns() + 60000000000ull;
	unsigned long long n = 0, of = 0;

	while (now_ns() < end) {
		char *t = inside(pid, "work", "text");

		counts(t, &n, &of);
		free(t);
		if (n >= want)
			return pid;
		usleep(200000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fail_msg("%s: %llu samples in work after 60 s", name, n);
	return -1;
}

/*
 * The sampled frames below a zone take their share of the zone's own line:
 * the folded stacks of one profile weigh what its zones' self times do,
 * each once.
 */
static void folded_weighs_self(const char *saved)
{
	const char *fa[] = { "report", "--input", saved, "--format", "folded", NULL };
	const char *ja[] = { "report", "--input", saved, "--format", "json", NULL };
	unsigned long long fsum = 0, jsum = 0;
	char *folded, *json;
	const char *p, *e, *sp;
	char out[64];

	assert_int_equal(test_profctl_run(own_tmp(out, sizeof(out), "folded"), fa), 0);
	folded = test_slurp(out, NULL);
	assert_int_equal(test_profctl_run(out, ja), 0);
	json = test_slurp(out, NULL);
	unlink(out);
	for (p = folded; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, '\n');
		for (sp = e; sp > p && sp[-1] != ' ';)
			sp--;
		if (sp > p)
			fsum += strtoull(sp, NULL, 10);
	}
	for (p = json; (p = strstr(p, "\"self_ns\":")); p += 10)
		jsum += strtoull(p + 10, NULL, 10);
	if (fsum != jsum)
		fail_msg("folded stacks weigh %llu ns, the zones' self times %llu", fsum, jsum);
	free(folded);
	free(json);
}

static void check_prog(const char *name)
{
	struct lines l;
	struct row a, b, c;
	unsigned long long n, of;
	char *csv, *out, *nap, *top, *json, *folded;
	double pa = 0, pb = 0;
	bool pprof_ok;
	char saved[64], *back, *html;
	pid_t pid;

	need_sampler();
	prog_lines(name, &l);
	pid = sampled(name, 600);

	/* one frame of top */
	top = profctl_of(pid, "top", "--iterations", "1", "--delay", "0.2", NULL, NULL);
	json = report_json(pid);
	folded = profctl_of(pid, "report", "--format", "folded", NULL, NULL, NULL, NULL);
	html = profctl_of(pid, "report", "--format", "html", NULL, NULL, NULL, NULL);
	pprof_ok = pprof_shares(pid, &pa, &pb);
	own_tmp(saved, sizeof(saved), "prof");
	free(profctl_of(pid, "save", "-o", saved, NULL, NULL, NULL, NULL));
	csv = inside(pid, "work", "csv");
	out = inside(pid, PC_OUTSIDE, "csv");
	nap = inside(pid, "nap", "text");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fprintf(stderr, "%s work:\n%s%s outside:\n%s%s", name, csv, name, out, nap);

	/* 70% and 30% of work, each at a line of its own function */
	assert_true(csv_row(csv, "hot_a", &a));
	assert_true(csv_row(csv, "hot_b", &b));
	assert_true(a.self_pct > 64 && a.self_pct < 76);
	assert_true(b.self_pct > 24 && b.self_pct < 36);
	assert_true(ends_with(a.file, "sample_prog.c") && ends_with(b.file, "sample_prog.c"));
	assert_true(a.line >= l.a0 && a.line <= l.a1);
	assert_true(b.line >= l.b0 && b.line <= l.b1);
	/* a caller is inclusive only: main never ran itself here */
	assert_false(csv_row(csv, "main", &c) && c.self > 0);
	/* what runs outside every zone is not in work, and is all outside */
	assert_false(csv_row(csv, "cold_out", &c) && c.self > 0);
	assert_true(csv_row(out, "cold_out", &c));
	assert_true(c.self_pct > 95);
	assert_true(c.line >= l.c0 && c.line <= l.c1);
	assert_false(csv_row(out, "hot_a", &a) && a.self > 0);
	/* asleep a fifth of the time, nap has next to no samples */
	counts(nap, &n, &of);
	assert_true(of > 0 && n * 100 <= of);
	/* top names each zone's hottest line */
	assert_non_null(strstr(top, "  work  [hot: hot_a (sample_prog.c:"));
	assert_non_null(strstr(top, "  inner  [hot: hot_b (sample_prog.c:"));
	/* the JSON tree's nodes carry their samples and innermost lines */
	assert_true(node_inside(json, "work", "hot_a"));
	assert_true(node_inside(json, "inner", "hot_b"));
	free(csv);
	free(out);
	free(nap);
	free(top);
	/* folded stacks draw the sampled frames below their zone (through the
	 * zone's own function where the stack has it) */
	assert_true(strstr(folded, ";work;hot_a ") || strstr(folded, ";work;work;hot_a "));
	assert_true(strstr(folded, ";inner;hot_b ") || strstr(folded, ";inner;work;hot_b "));
	/* the html page draws the sampled frames as nodes below their zone */
	assert_non_null(strstr(html, "\"hot_a() sample_prog.c:"));
	assert_non_null(strstr(html, "\"hot_b() sample_prog.c:"));
	free(html);
	/* a saved profile keeps the samples, symbolized: read back with the
	 * process gone, the same shares at the same lines */
	{
		const char *args[] = { "report", "--input", saved, "--inside", "work",
				       "--format", "csv", NULL };

		char bpath[64];

		assert_int_equal(test_profctl_run(own_tmp(bpath, sizeof(bpath), "back"), args), 0);
		back = test_slurp(bpath, NULL);
		unlink(bpath);
		folded_weighs_self(saved);
		unlink(saved);
		assert_true(csv_row(back, "hot_a", &a) && a.self_pct > 64 && a.self_pct < 76);
		assert_true(a.line >= l.a0 && a.line <= l.a1);
		assert_true(csv_row(back, "hot_b", &b) && b.self_pct > 24 && b.self_pct < 36);
		free(back);
	}
	/* pprof: the sampled functions at their lines, under the zones (each
	 * zone's on-CPU time shared out: its shares are the zones' CPU times,
	 * which a loaded machine moves more than the samples) */
	if (pprof_ok) {
		assert_true(pa > pb && pb > 10);
		assert_true(pa + pb > 90);
	}
	free(json);
	free(folded);
}

/*
 * The program the test's row names, built by gcc and clang, with frame
 * pointers and without: without, the interrupted instruction (the
 * innermost frame) is still exact, so self shares and lines hold; the
 * callers above it are whatever the stack words say (often cut short).
 */
static void test_prog(void **state)
{
	check_prog(*state);
}

/* a stack that is garbage (its frame pointer points nowhere): profd takes
 * the innermost frame, names it, and runs on */
static void test_garbage_stack(void **state)
{
	struct row r;
	char *csv = NULL;
	__u64 end;
	pid_t pid;

	(void)state;
	need_sampler();
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(test_beside("tests/sample_garbage"), "sample_garbage", "120", (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	for (end = now_ns() + 60000000000ull; now_ns() < end; usleep(200000)) {
		free(csv);
		csv = inside(pid, "garbage", "csv");
		if (csv_row(csv, "garbage", &r) && r.self >= 200)
			break;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fprintf(stderr, "garbage:\n%s", csv);
	assert_true(csv_row(csv, "garbage", &r));
	assert_true(r.self >= 200 && r.self_pct > 95);
	assert_true(ends_with(r.file, "sample_garbage.c"));
	free(csv);
	assert_int_equal(kill(profd_pid, 0), 0);
	assert_int_equal(waitpid(profd_pid, NULL, WNOHANG), 0);
}

/* without profd, the report says why there are no samples, in one line */
static void test_no_profd(void **state)
{
	char path[64], p[16], *t;
	const char *args[] = { "report", "--pid", p, "--inside", "work", NULL };
	pid_t pid = run_prog("tests/sprog_gcc", true);
	__u64 end = now_ns() + 10000000000ull;
	int rc = 1;

	(void)state;
	snprintf(p, sizeof(p), "%d", (int)pid);
	own_tmp(path, sizeof(path), "np");
	setenv("PROFD_SOCKET", "/nonexistent/profd.sock", 1);
	setenv("PROF_SOCKET", "/nonexistent/profd.sock", 1);
	/* its segment appears at its first zone */
	while (now_ns() < end && (rc = test_profctl_run(path, args)) != 0)
		usleep(50000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(rc, 0);
	t = test_slurp(path, NULL);
	assert_non_null(t);
	assert_non_null(strstr(t, "\n  samples: off: profd is not running"));
	free(t);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attrib_closed),
		cmocka_unit_test(test_attrib_open),
		cmocka_unit_test(test_attrib_lost),
		cmocka_unit_test(test_attrib_exited),
		cmocka_unit_test(test_no_profd),
		cmocka_unit_test(test_file_samples),
		/* root */
		test_row("test_gcc", test_prog, "tests/sprog_gcc", NULL),
		test_row("test_clang", test_prog, "tests/sprog_clang", NULL),
		test_row("test_gcc_nofp", test_prog, "tests/sprog_gcc_nofp", NULL),
		test_row("test_clang_nofp", test_prog, "tests/sprog_clang_nofp", NULL),
		cmocka_unit_test(test_garbage_stack),
	};

	test_filter_env();
	/* this process's own zones (attribution) need no profd */
	setenv("PROF_NO_DAEMON", "1", 1);
	return cmocka_run_group_tests(tests, NULL, teardown_profd);
}
