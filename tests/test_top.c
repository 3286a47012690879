// SPDX-License-Identifier: MIT
/*
 * test_top.c - `profctl top` on a real terminal: tmux, 80 columns.
 *
 * A child runs two threads in zones until killed: its main thread (no
 * PROF_THREAD_NAME: its comm names it) and one named "io".  top runs in a
 * detached tmux pane; the test reads the pane with capture-pane and types
 * with send-keys.  At 80 columns no line is wider than the pane and each
 * zone's whole name is on its row; a resize to 60 columns is followed;
 * rates say their unit; switching thread names the thread (never "tid
 * 0") and shows its rates and sparkline at once; two sites of one name
 * are two rows, each with its file:line.  Skipped without tmux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include "testutil.h"
#include "prof.h"

#define LONG_ZONE "top_main_loop_zone_with_long_name"

static pid_t child = -1;
static char sock[64], profctl[PATH_MAX], dir[64];
static volatile unsigned long sink;

static void spin_us(unsigned int us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

/* two sites of one name, as two overloads are */
static void twin_a(void)
{
	PROF_USDT(top_twin);
	spin_us(100);
}

static void twin_b(void)
{
	PROF_USDT(top_twin);
	spin_us(50);
}

static void *io_main(void *arg)
{
	(void)arg;
	PROF_THREAD_NAME("io");
	for (;;) {
		PROF_USDT(top_io_zone);
		spin_us(500);
		twin_a();
		twin_b();
		usleep(500);
	}
	return NULL;
}

static void child_main(void)
{
	pthread_t th;

	{
		PROF_USDT(top_start);
	}
	if (pthread_create(&th, NULL, io_main, NULL))
		_exit(3);
	for (;;) {
		PROF_USDT(top_main_loop_zone_with_long_name);
		spin_us(1000);
		usleep(200);
	}
}

static __u64 now_ms(void)
{
	return test_now_ns() / 1000000;
}

/* the pane's text, malloc'd */
static char *capture(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "tmux -L %s capture-pane -p -t top 2>/dev/null", sock);
	return test_popen_text(cmd, NULL);
}

/* columns a line takes: UTF-8 code points (the sparkline's are one each) */
static int line_cols(const char *s, size_t len)
{
	int c = 0;
	size_t i;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			c++;
	return c;
}

/* the widest line of a capture */
static int widest(const char *text)
{
	int w = 0;

	while (*text) {
		size_t len = strcspn(text, "\n");
		int c = line_cols(text, len);

		if (c > w)
			w = c;
		text += len + (text[len] == '\n');
	}
	return w;
}

static bool has_bar(const char *line)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	size_t i;

	for (i = 0; i < 8; i++)
		if (strstr(line, bars[i]))
			return true;
	return false;
}

/* the first number on a row: calls/s */
static double first_number(const char *line)
{
	return strtod(line, NULL);
}

static int setup(void **state)
{
	char exe[PATH_MAX];
	ssize_t n;

	(void)state;
	if (test_sh("command -v tmux >/dev/null 2>&1")) {
		print_message("SKIP: tmux is not installed (.ci/deps installs it)\n");
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	/* .output[/SAN]/tests/test_top -> .output[/SAN]/profctl */
	snprintf(profctl, sizeof(profctl), "%s/../profctl", dirname(exe));
	snprintf(dir, sizeof(dir), "/tmp/test_top.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("XDG_RUNTIME_DIR", dir, 1);
	setenv("PROF_NO_DAEMON", "1", 1);
	setenv("PROF_QUIET", "1", 1);
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0)
		child_main();
	snprintf(sock, sizeof(sock), "proftop%d", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (sock[0])
		test_sh("tmux -L %s kill-server >/dev/null 2>&1", sock);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (dir[0])
		test_sh("rm -rf %s", dir);
	return 0;
}

/* poll the pane until pred holds (10 s at most); the last capture */
static char *wait_for(bool (*pred)(const char *, void *), void *arg, const char *what)
{
	__u64 end = now_ms() + 10000;
	char *text = NULL;

	do {
		free(text);
		usleep(50000);
		text = capture();
		if (pred(text, arg))
			return text;
	} while (now_ms() < end);
	fail_msg("top never showed %s; the pane:\n%s", what, text);
	return NULL;
}

static bool zone_running(const char *text, void *arg)
{
	char line[512];

	return test_line_with(text, (const char *)arg, line, sizeof(line)) &&
	       first_number(line) > 0 && has_bar(line);
}

static bool title_has(const char *text, void *arg)
{
	return strstr(text, (const char *)arg) != NULL;
}

static bool narrow(const char *text, void *arg)
{
	return widest(text) <= *(int *)arg && strstr(text, LONG_ZONE) != NULL;
}

static void test_top_tty(void **state)
{
	char *text, line[512], want[128];
	int sixty = 60;

	(void)state;
	if (child < 0)
		skip();
	/* a pane of 80 x 24 running top every 0.2 s */
	assert_int_equal(test_sh("tmux -L %s -f /dev/null new-session -d -s top -x 80 -y 24 "
				 "'env LANG=C.UTF-8 PROFCTL_NO_DAEMON=1 %s top --pid %d -d 0.2; "
				 "sleep 60'",
				 sock, profctl, (int)child),
			 0);
	text = wait_for(zone_running, LONG_ZONE, "the main zone running");
	print_message("%s", text ? text : "");
	/* nothing wraps, and the name is whole on its row */
	assert_true(widest(text) <= 80);
	assert_non_null(test_line_with(text, LONG_ZONE, line, sizeof(line)));
	assert_non_null(strstr(line, "  " LONG_ZONE));
	/* one unit a column, said in the header */
	assert_non_null(strstr(text, "calls/s"));
	assert_non_null(strstr(text, "self/s"));
	assert_non_null(strstr(text, "total/s"));
	assert_non_null(strstr(text, "all 2 threads"));
	/* two sites of one name are two rows that say where each is */
	{
		const char *a = strstr(text, "  top_twin (test_top.c:"), *b;

		assert_non_null(a);
		b = strstr(a + 1, "  top_twin (test_top.c:");
		assert_non_null(b);
		assert_true(strtol(a + 23, NULL, 10) != strtol(b + 23, NULL, 10));
	}
	free(text);

	/* the first thread: the main one, named by its comm */
	assert_int_equal(test_sh("tmux -L %s send-keys -t top ']'", sock), 0);
	snprintf(want, sizeof(want), "test_top tid %d (1/2)", (int)child);
	text = wait_for(title_has, want, want);
	assert_null(strstr(text, "tid 0"));
	free(text);

	/* the second: io, its rates and history there on the first frame */
	assert_int_equal(test_sh("tmux -L %s send-keys -t top ']'", sock), 0);
	text = wait_for(title_has, " io tid ", "thread io");
	print_message("%s", text ? text : "");
	assert_null(strstr(text, "tid 0"));
	assert_non_null(strstr(text, "(2/2)"));
	assert_non_null(test_line_with(text, "top_io_zone", line, sizeof(line)));
	assert_true(first_number(line) > 0);
	assert_true(has_bar(line));
	/* the main thread's zone is not io's */
	assert_null(strstr(text, LONG_ZONE));
	free(text);

	/* back to all threads, then a narrower terminal */
	assert_int_equal(test_sh("tmux -L %s send-keys -t top a", sock), 0);
	text = wait_for(title_has, "all 2 threads", "all threads again");
	free(text);
	/* o sorts by on-CPU time, as --sort oncpu does */
	assert_int_equal(test_sh("tmux -L %s send-keys -t top o", sock), 0);
	text = wait_for(title_has, "sort oncpu", "the on-CPU sort");
	free(text);
	assert_int_equal(test_sh("tmux -L %s resize-window -t top -x 60 -y 24", sock), 0);
	text = wait_for(narrow, &sixty, "a 60-column layout");
	print_message("%s", text ? text : "");
	assert_non_null(test_line_with(text, LONG_ZONE, line, sizeof(line)));
	assert_non_null(strstr(line, "  " LONG_ZONE));
	assert_non_null(strstr(text, "self/s"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_tty),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
