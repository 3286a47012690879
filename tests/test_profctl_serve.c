// SPDX-License-Identifier: MIT
/*
 * test_profctl_serve.c - `profctl serve`, the OpenMetrics exporter: the
 * exposition of a child with known calls (counters, histogram, info;
 * --max-zones and --threads bound the labels), `promtool check metrics`
 * on it, the HTTP server on loopback, a real Prometheus scraping it whose
 * samples of a zone called 200 times a second rise 200 a second, and
 * another user seeing none of our processes.  What is not installed (promtool,
 * prometheus) or not allowed (setuid without root) is skipped, saying why.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "testutil.h"
#include "client.h"
#include "profctl_child.h"
#include "prof.h"
#include "profd_private.h"
#include "web_util.h"
#include "prom.h"

#define RATE_HZ 200

static char dir[64];
static pid_t ticker = -1;
static struct child prog, tick;
static volatile unsigned long sink;

static void sv_inner(void)
{
	PROF_USDT(srv_inner);
	for (int i = 0; i < 50; i++)
		sink += (unsigned long)i;
}

static void sv_outer(void)
{
	PROF_USDT(srv_outer);
	sv_inner();
	sv_inner();
}

static void sv_other(void)
{
	PROF_USDT(srv_other);
	sink++;
}

/* the driven child's round: n outer calls (2n inner) and one other */
static void driven_round(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		sv_outer();
	sv_other();
}

/* a zone RATE_HZ times a second, on absolute deadlines: the rate holds
 * on average however late a wakeup is */
static void ticker_main(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	for (;;) {
		{
			PROF_USDT(srv_tick);
			sink++;
		}
		t.tv_nsec += 1000000000L / RATE_HZ;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_nsec -= 1000000000L;
			t.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
}

static void drive(unsigned int n)
{
	test_live_drive(&prog, n);
}

static int setup(void **state)
{
	(void)state;
	if (test_live_setup("test_profctl_serve", dir, &prog, NULL, driven_round))
		return -1;
	if (child_start(&tick) == 0)
		ticker_main();
	ticker = tick.pid;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	test_live_stop(&prog);
	child_kill(&tick);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

/* the value of the series that starts with prefix (its name and labels) */
static double series(const char *text, const char *prefix)
{
	const char *p = text;
	size_t n = strlen(prefix);

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, n)) {
			p = strchr(p + n, ' ');
			assert_non_null(p);
			return strtod(p + 1, NULL);
		}
	return -1;
}

static void test_exposition(void **state)
{
	struct pc_serve_opts so = { .max_zones = 200, .max_threads = 32 };
	char key[256], lbl[128];
	double prev = -1;
	char *text;
	const char *p;
	int k;

	(void)state;
	drive(100);
	text = scrape(&so, true);
	snprintf(lbl, sizeof(lbl), "{pid=\"%d\",comm=\"", (int)prog.pid);
	p = strstr(text, lbl);
	assert_non_null(p);
	/* the families, OpenMetrics style; on-CPU time beside wall time
	 * (without profd nobody knows it: the family is there, with no
	 * sample, never 0) */
	assert_all_in(text, "# TYPE profd_zone_calls counter\n",
		      "# TYPE profd_zone_duration_seconds histogram\n",
		      "# UNIT profd_zone_self_seconds seconds\n", "# TYPE profd_process info\n",
		      "# TYPE profd_zone_oncpu_seconds counter\n",
		      "# TYPE profd_zone_self_oncpu_seconds counter\n");
	snprintf(key, sizeof(key), "profd_zone_oncpu_seconds_total{pid=\"%d\"", (int)prog.pid);
	assert_null(strstr(text, key));
	snprintf(key, sizeof(key), "profd_zone_self_oncpu_seconds_total{pid=\"%d\"", (int)prog.pid);
	assert_null(strstr(text, key));
	assert_int_equal(strcmp(text + strlen(text) - 6, "# EOF\n"), 0);
	/* what could not be read is counted, not hidden */
	assert_true(series(text, "profd_exporter_unread_processes ") >= 0);
	/* exact calls: zone labels follow pid and comm */
	p = strstr(text, "profd_zone_calls_total{pid=\"");
	assert_non_null(p);
	snprintf(key, sizeof(key), "profd_zone_calls_total{pid=\"%d\"", (int)prog.pid);
	assert_true(strstr(text, key) != NULL);
	{
		char comm[64];
		const char *c = strstr(text, key) + strlen(key);

		assert_int_equal(sscanf(c, ",comm=\"%63[^\"]\"", comm), 1);
		snprintf(lbl, sizeof(lbl), "{pid=\"%d\",comm=\"%s\",zone=", (int)prog.pid, comm);
	}
	snprintf(key, sizeof(key), "profd_zone_calls_total%s\"srv_inner\"}", lbl);
	assert_true(series(text, key) == 200);
	snprintf(key, sizeof(key), "profd_zone_calls_total%s\"srv_outer\"}", lbl);
	assert_true(series(text, key) == 100);
	snprintf(key, sizeof(key), "profd_zone_calls_total%s\"srv_other\"}", lbl);
	assert_true(series(text, key) == 1);
	/* self <= total, both > 0 */
	snprintf(key, sizeof(key), "profd_zone_seconds_total%s\"srv_outer\"}", lbl);
	assert_true(series(text, key) > 0);
	{
		double total = series(text, key);

		snprintf(key, sizeof(key), "profd_zone_self_seconds_total%s\"srv_outer\"}", lbl);
		assert_true(series(text, key) > 0 && series(text, key) <= total);
	}
	/* the histogram: cumulative buckets up to +Inf == count == calls */
	for (k = 0; k < 15; k++) {
		static const char *const le[] = { "1e-06",  "3e-06", "1e-05", "3e-05", "0.0001",
						  "0.0003", "0.001", "0.003", "0.01",  "0.03",
						  "0.1",    "0.3",   "1",     "3",     "10" };
		double v;

		snprintf(key, sizeof(key),
			 "profd_zone_duration_seconds_bucket%s\"srv_inner\",le=\"%s\"}", lbl,
			 le[k]);
		v = series(text, key);
		assert_true(v >= prev && v <= 200);
		prev = v;
	}
	snprintf(key, sizeof(key), "profd_zone_duration_seconds_bucket%s\"srv_inner\",le=\"+Inf\"}",
		 lbl);
	assert_true(series(text, key) == 200);
	snprintf(key, sizeof(key), "profd_zone_duration_seconds_count%s\"srv_inner\"}", lbl);
	assert_true(series(text, key) == 200);
	/* a call of 50 additions is well under 10 s */
	assert_true(prev == 200);
	/* counters only grow: a later scrape has more */
	free(text);
	drive(10);
	text = scrape(&so, true);
	snprintf(key, sizeof(key), "profd_zone_calls_total%s\"srv_outer\"}", lbl);
	assert_true(series(text, key) == 110);
	free(text);
}

static void test_bounded(void **state)
{
	struct pc_serve_opts so = { .max_zones = 1, .max_threads = 32 };
	char key[128];
	char *text;
	const char *p;
	int n = 0;

	(void)state;
	drive(3);
	text = scrape(&so, false);
	/* one zone and [other] for our driven child */
	snprintf(key, sizeof(key), "profd_zone_calls_total{pid=\"%d\"", (int)prog.pid);
	for (p = strstr(text, key); p; p = strstr(p + 1, key))
		n++;
	assert_int_equal(n, 2);
	assert_non_null(strstr(text, "zone=\"[other]\"}"));
	/* without --threads, no tid label */
	assert_null(strstr(text, "tid=\""));
	/* the text format: counters' TYPE names carry _total, no EOF */
	assert_non_null(strstr(text, "# TYPE profd_zone_calls_total counter\n"));
	assert_null(strstr(text, "# EOF"));
	free(text);
	so.max_zones = 200;
	so.threads = true;
	text = scrape(&so, false);
	snprintf(key, sizeof(key), ",tid=\"%d\",thread=\"", (int)prog.pid);
	assert_non_null(strstr(text, key));
	free(text);
}

static void test_promtool(void **state)
{
	struct pc_serve_opts so = { .max_zones = 200, .max_threads = 32, .threads = true };
	char path[128], cmd[512];
	char *text;
	FILE *f;

	(void)state;
	if (!have("promtool")) {
		fprintf(stderr, "skipped: promtool not installed (Debian prometheus)\n");
		skip();
	}
	drive(2);
	text = scrape(&so, false);
	snprintf(path, sizeof(path), "%s/metrics.txt", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(text);
	/* lint problems are printed and make it exit non-zero */
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	assert_int_equal(system(cmd), 0);
}

/* --- over HTTP ---------------------------------------------------------------- */

/* profctl serve in a child on 127.0.0.1:0 (or, activated, on a socket
 * passed as systemd passes it); its port */
static void test_http(void **state)
{
	unsigned int port;
	char *body, key[64];
	pid_t pid;

	(void)state;
	pid = serve_start(&port);
	assert_int_equal(
		http(port, "GET", "/metrics", "application/openmetrics-text; version=1.0.0", &body),
		200);
	snprintf(key, sizeof(key), "{pid=\"%d\"", (int)ticker);
	assert_non_null(strstr(body, key));
	assert_non_null(strstr(body, "# EOF\n"));
	free(body);
	assert_int_equal(http(port, "GET", "/metrics", NULL, &body), 200);
	assert_null(strstr(body, "# EOF"));
	free(body);
	assert_int_equal(http(port, "GET", "/other", NULL, &body), 404);
	free(body);
	assert_int_equal(http(port, "POST", "/metrics", NULL, &body), 405);
	free(body);
	serve_stop(pid);
}

/* socket activation: the socket systemd passes is the one served */
static void test_activated(void **state)
{
	unsigned int port;
	char *body, key[64];
	pid_t pid;

	(void)state;
	pid = serve_start_how(&port, true, NULL);
	assert_int_not_equal(port, 1);
	assert_int_equal(http(port, "GET", "/metrics", NULL, &body), 200);
	snprintf(key, sizeof(key), "{pid=\"%d\"", (int)ticker);
	assert_non_null(strstr(body, key));
	free(body);
	serve_stop(pid);
}

/* the socket and service units verify, ExecStart pointed at our profctl */
static void test_units(void **state)
{
	char cmd[1024], d[] = "/tmp/profctl-units.XXXXXX", exe[512];
	ssize_t n;
	int rc;

	(void)state;
	if (system("systemd-analyze --help 2>/dev/null | grep -q verify")) {
		fprintf(stderr, "skipped: no systemd-analyze verify\n");
		skip();
	}
	/* the profctl beside this test: .output/tests/.. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	*strrchr(exe, '/') = '\0';
	strcat(exe, "/profctl");
	/* a sanitizer build has none: the units' syntax is still checked */
	if (access(exe, X_OK))
		snprintf(exe, sizeof(exe), "/bin/true");
	assert_non_null(mkdtemp(d));
	snprintf(cmd, sizeof(cmd),
		 "cp systemd/profctl-serve.socket %s/ && "
		 "sed 's|/usr/local/bin/profctl|%s|' systemd/profctl-serve.service "
		 "> %s/profctl-serve.service && "
		 "systemd-analyze verify --man=no %s/profctl-serve.socket %s/profctl-serve.service",
		 d, exe, d, d, d);
	rc = system(cmd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(rc, 0);
}

/*
 * The counter's rate between the first and the last sample Prometheus
 * stored in the last RATE_WINDOW, once they are RATE_SPAN_S apart (a
 * scrape each RATE_SCRAPE_S, when prometheus keeps its pace: under load
 * it made 3 in 30 s).  Not rate(): it divides by the whole window,
 * whatever the samples span (157 for samples rising 200.7 a second, 12
 * in 15 s).  Long, for a loaded machine: a scrape or ticks late by half a
 * second (the ticker catches up after) move a 4 s span's rate 12% (seen:
 * 177.9 for 200, both CPUs busy), a 14 s span's 4%; and a scrape may take
 * two seconds (serve reads every process of root's on the machine).
 */
#define RATE_SCRAPE_S 2
#define RATE_WINDOW "30s"
#define RATE_SPAN_S 14

static void test_prometheus(void **state)
{
	char sel[160];
	unsigned int port, wport;
	pid_t serve, prom;
	__u64 end;
	double v = -1, span = 0;
	int n = -1, st;
	bool up = false;

	(void)state;
	if (!have("prometheus")) {
		fprintf(stderr, "skipped: prometheus not installed (Debian prometheus)\n");
		skip();
	}
	serve = serve_start(&port);
	prom = prom_start(dir, port, RATE_SCRAPE_S, &wport);
	/* the ticker's zone: %7B %22 %7D are { " } */
	snprintf(sel, sizeof(sel),
		 "profd_zone_calls_total%%7Bzone=%%22srv_tick%%22,pid=%%22%d%%22%%7D", (int)ticker);
	/* prometheus up within 60 s, then samples far enough apart within 60 s */
	for (end = now_ns() + 60000000000ull; now_ns() < end; usleep(200 * 1000)) {
		if (waitpid(prom, &st, WNOHANG) == prom)
			fail_msg("prometheus exited early (status %d)", st);
		if (!prom_up(wport))
			continue;
		if (!up)
			end = now_ns() + 60000000000ull;
		up = true;
		n = prom_samples(wport, sel, RATE_WINDOW, &v, &span);
		if (span >= RATE_SPAN_S)
			break;
	}
	kill(prom, SIGTERM);
	waitpid(prom, &st, 0);
	if (span < RATE_SPAN_S) {
		char *body = NULL;
		__u64 t0 = now_ns();

		/* what a scrape takes now: over RATE_SCRAPE_S, prometheus drops it */
		http_wait_s = 60;
		http(port, "GET", "/metrics", NULL, &body);
		http_wait_s = 0;
		free(body);
		serve_stop(serve);
		fail_msg("prometheus %s: %d scrapes of the zone in the last %s, %.1f s apart, "
			 "want %d s (a scrape takes %.1f s now)",
			 up ? "up" : "never up", n, RATE_WINDOW, span, RATE_SPAN_S,
			 (double)(now_ns() - t0) / 1e9);
	}
	serve_stop(serve);
	/* the known rate, within 10% */
	if (v < RATE_HZ * 0.9 || v > RATE_HZ * 1.1)
		fail_msg("the zone's calls rose %g a second over %d scrapes %.1f s apart, want %d",
			 v, n, span, RATE_HZ);
}

/* another user sees none of our processes, directly or over HTTP */
static void test_other_user(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: needs root to become another user\n");
		skip();
	}
	/* readable by all: only profctl's own rule keeps nobody out */
	{
		char paths[4][96];
		size_t i, n = test_seg_paths(ticker, prof_proc_start_token(ticker), paths, 4);

		assert_true(n >= 1);
		for (i = 0; i < n; i++)
			assert_int_equal(chmod(paths[i], 0644), 0);
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pc_serve_opts so = { .max_zones = 200, .max_threads = 32 };
		struct pc_src src;
		char *buf = NULL, key[32];
		size_t len = 0;
		FILE *f;

		/* nobody, with a runtime directory of its own */
		if (setgid(65534) || setuid(65534))
			_exit(2);
		setenv("XDG_RUNTIME_DIR", "/nonexistent", 1);
		f = open_memstream(&buf, &len);
		pc_src_open(&src, true);
		if (pc_metrics(f, &src, &so, true))
			_exit(3);
		pc_src_close(&src);
		fclose(f);
		/* none of ours (another run's processes of nobody may be there) */
		snprintf(key, sizeof(key), "pid=\"%d\"", (int)ticker);
		if (strstr(buf, key))
			_exit(4);
		snprintf(key, sizeof(key), "pid=\"%d\"", (int)prog.pid);
		if (strstr(buf, key))
			_exit(5);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* a connection to 127.0.0.1:port that has sent a request line and no end
 * of its headers: a slow client */
static int slow_conn(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	static const char line[] = "GET /metrics HTTP/1.1\r\n";
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    send(fd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* fd's server closed it (EOF or reset), waiting at most ms */
static bool closed_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1)
		return false;
	return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

/*
 * A client that sends a header line every 200 ms is closed at the
 * deadline of its request (--timeout 2), not kept by an idle timer each
 * line resets.
 */
static void test_slow_client(void **state)
{
	unsigned int port;
	pid_t pid;
	int fd, i;
	bool closed = false;

	(void)state;
	pid = serve_start_how(&port, false, "2");
	fd = slow_conn(port);
	assert_true(fd >= 0);
	/* at most 10 times its deadline */
	for (i = 0; i < 100 && !closed; i++) {
		closed = closed_within(fd, 200);
		if (!closed)
			send(fd, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL);
	}
	close(fd);
	serve_stop(pid);
	assert_true(closed);
}

/*
 * 130 slow clients (more than the server holds, 64 open at once) that
 * keep sending header lines, the deadline far: a scrape is still answered,
 * at once (each new connection shuts the oldest when 64 are open).
 */
static void test_slow_clients_full(void **state)
{
	unsigned int port;
	struct child slow;
	char *body;
	pid_t pid;
	int code;

	(void)state;
	pid = serve_start_how(&port, false, "600");
	if (child_start(&slow) == 0) {
		int fds[130], n = 0, k;

		for (k = 0; k < 130; k++)
			if ((fds[n] = slow_conn(port)) >= 0)
				n++;
		child_say(&slow, 'r');
		/* a line each on every one, until killed */
		for (;;) {
			for (k = 0; k < n; k++)
				send(fds[k], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL);
			poll(NULL, 0, 200);
		}
	}
	child_ready(&slow);
	/* far sooner than the deadline frees a place */
	http_wait_s = 60;
	code = http(port, "GET", "/metrics", NULL, &body);
	http_wait_s = 0;
	free(body);
	child_kill(&slow);
	serve_stop(pid);
	assert_int_equal(code, 200);
}

/*
 * qsort(NULL, 0, ...) is undefined behaviour (glibc declares its base
 * nonnull; the UBSan build aborts on it): every qsort of this program
 * comes here, and fails the test on a NULL base, sanitizer or not.
 */
static int (*qsort_cmp)(const void *, const void *);

static int qsort_adapt(const void *a, const void *b, void *arg)
{
	(void)arg;
	return qsort_cmp(a, b);
}

void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	void *b = base;

	/* what the declaration promises is what is checked: not assumed */
	__asm__("" : "+r"(b));
	if (!b) {
		fprintf(stderr, "qsort of a NULL base (%zu elements)\n", n);
		abort();
	}
	qsort_cmp = cmp;
	qsort_r(b, n, size, qsort_adapt, NULL);
}

/* listings of /dev/shm (an opendir of it), counted here */
static int shm_listings;

DIR *opendir(const char *name)
{
	static DIR *(*real)(const char *);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "opendir");
	if (!strcmp(name, "/dev/shm"))
		__atomic_add_fetch(&shm_listings, 1, __ATOMIC_RELAXED);
	return real ? real(name) : NULL;
}

/*
 * A scrape lists /dev/shm once, however many processes it reads.  It
 * listed it (and looked into every other mount namespace) again for each
 * process: with the hundreds of a busy machine, one scrape took minutes,
 * Prometheus stored none, and the server's stop waited for it.
 */
static void test_one_listing(void **state)
{
	struct pc_serve_opts so = { .max_zones = 200, .max_threads = 32 };
	char key[32], *text;
	int n;

	(void)state;
	drive(1);
	shm_listings = 0;
	/* of the driven child and the ticker (which test_other_user left
	 * unreadable, but listed) at least */
	text = scrape(&so, true);
	n = __atomic_load_n(&shm_listings, __ATOMIC_RELAXED);
	snprintf(key, sizeof(key), "pid=\"%d\"", (int)prog.pid);
	assert_non_null(strstr(text, key));
	free(text);
	assert_int_equal(n, 1);
}

/* a process inside its first call, none finished: no zone yet */
static void test_no_finished_call(void **state)
{
	struct pc_serve_opts so = { .max_zones = 200, .max_threads = 32 };
	struct child k;
	char *text, key[64];

	(void)state;
	if (child_start(&k) == 0) {
		{
			PROF_USDT(srv_open_only);
			child_say(&k, 'r');
			child_hear(&k);
		}
		_exit(0);
	}
	child_ready(&k);
	text = scrape(&so, true);
	snprintf(key, sizeof(key), "profd_process_info{pid=\"%d\"", (int)k.pid);
	assert_non_null(strstr(text, key));
	free(text);
	child_end(&k);
}

TEST_MAIN(setup, teardown, cmocka_unit_test(test_exposition), cmocka_unit_test(test_bounded),
	  cmocka_unit_test(test_promtool), cmocka_unit_test(test_http), cmocka_unit_test(test_activated),
	  cmocka_unit_test(test_units), cmocka_unit_test(test_prometheus),
	  cmocka_unit_test(test_other_user), cmocka_unit_test(test_slow_client),
	  cmocka_unit_test(test_slow_clients_full), cmocka_unit_test(test_no_finished_call),
	  cmocka_unit_test(test_one_listing))
