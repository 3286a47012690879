// SPDX-License-Identifier: MIT
/*
 * test_systemd_unit.c - profd as a service, without root: the unit parses
 * (systemd-analyze verify, ExecStart pointed at the profd just built) and
 * its exposure rating does not get worse; profd -d reports a failed start
 * in its exit status and detaches only once its socket answers; a second
 * profd on a live socket refuses to start.  --no-bpf throughout: nothing
 * here needs BPF.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include "testutil.h"

#define SOCK_DIR "/tmp/profd-test"

/* the profd built beside this test's directory */
static const char *profd_bin(void)
{
	static char exe[4096];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
	assert_true(n > 0);
	exe[n] = 0;
	strcpy(strrchr(exe, '/'), "/../profd");
	return exe;
}

static char sock_path[100];

static const char *test_sock(const char *name)
{
	mkdir(SOCK_DIR, 0755);
	snprintf(sock_path, sizeof(sock_path), SOCK_DIR "/%s.%d.sock", name, (int)getpid());
	unlink(sock_path);
	return sock_path;
}

/* run a shell command; its exit status, its stdout and stderr in out */
static int run(const char *cmd, char *out, size_t len)
{
	size_t n = 0, r;
	FILE *f;
	int st;

	f = popen(cmd, "r");
	assert_non_null(f);
	while (n + 1 < len && (r = fread(out + n, 1, len - 1 - n, f)) > 0)
		n += r;
	out[n] = 0;
	st = pclose(f);
	printf("%s -> %d: %s", cmd, WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* someone accepts connections on path, now */
static bool answers(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return rc == 0;
}

/* the pid that listens on path (as SO_PEERCRED has it), or -1 */
static pid_t listener_pid(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred = { .pid = -1 };
	socklen_t len = sizeof(cred);
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		cred.pid = -1;
	close(fd);
	return cred.pid;
}

/* the pid of a process whose command line has an argument equal to arg */
static pid_t pid_with_arg(const char *arg)
{
	char path[300], buf[4096];
	struct dirent *d;
	pid_t pid = -1;
	size_t n, i;
	DIR *dir;
	FILE *f;

	dir = opendir("/proc");
	assert_non_null(dir);
	while (pid < 0 && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		for (i = 0; i < n; i += strlen(buf + i) + 1)
			if (!strcmp(buf + i, arg))
				pid = atoi(d->d_name);
	}
	closedir(dir);
	return pid;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static pid_t kids[2] = { -1, -1 };

/* profd in the foreground on sock, answering; its pid */
static pid_t spawn_profd(const char *sock)
{
	pid_t pid;
	int i;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(profd_bin(), "profd", "--no-bpf", "--socket", sock, (char *)NULL);
		_exit(127);
	}
	kids[kids[0] > 0] = pid;
	for (i = 0; i < 250 && listener_pid(sock) != pid; i++)
		sleep_ms(20);
	assert_int_equal(listener_pid(sock), pid);
	return pid;
}

/* after each test, pass or fail: no profd left behind */
static int teardown(void **state)
{
	char lock[sizeof(sock_path) + 8];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++) {
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
		kids[i] = -1;
	}
	/* a killed profd leaves its lock file (unlocked) beside the socket */
	snprintf(lock, sizeof(lock), "%s.lock", sock_path);
	unlink(lock);
	unlink(sock_path);
	return 0;
}

/*
 * systemd-analyze ARGS on the unit, with ExecStart pointed at the profd
 * just built; its exit status.  Skips without systemd-analyze, or without
 * what needs (a grep pattern for its --help).
 */
static int analyze_unit(const char *args, const char *needs)
{
	char cmd[8192], out[16384], dir[] = "/tmp/profd-unit.XXXXXX";
	int rc;

	snprintf(cmd, sizeof(cmd), "systemd-analyze --help 2>/dev/null | grep -q -e '%s'", needs);
	if (system(cmd)) {
		printf("skip: no systemd-analyze with %s\n", needs);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "sed 's|/usr/local/sbin/profd|%s|' systemd/profd.service > %s/profd.service && "
		 "systemd-analyze %s %s/profd.service 2>&1",
		 profd_bin(), dir, args, dir);
	rc = run(cmd, out, sizeof(out));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("could not remove %s\n", dir);
	return rc;
}

static void test_unit_verifies(void **state)
{
	(void)state;
	assert_int_equal(analyze_unit("verify --man=no", "verify"), 0);
}

/*
 * The unit's sandboxing does not get weaker: systemd-analyze security
 * rates it 1.3 (2.1 before IPAddressDeny=, PrivateMounts= and
 * DevicePolicy=; 1.6 before DynamicUser= with ambient capabilities and
 * the @privileged and @resources system calls denied); --threshold is in
 * tenths.
 */
#define UNIT_EXPOSURE_MAX 13

static void test_unit_exposure(void **state)
{
	char args[128];

	(void)state;
	snprintf(args, sizeof(args), "security --offline=yes --threshold=%d", UNIT_EXPOSURE_MAX);
	assert_int_equal(analyze_unit(args, "--threshold"), 0);
}

/* a socket profd cannot make, even as root (/dev/null is no directory):
 * profd -d says so on stderr and exits 1 */
static void test_detach_failed_start(void **state)
{
	char cmd[8192], out[4096];

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s -d --no-bpf --socket /dev/null/profd.sock 2>&1",
		 profd_bin());
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "profd: failed to open the control socket "
				    "/dev/null/profd.sock"));
}

/* when profd -d returns 0 its socket answers already; SIGTERM still stops it */
static void test_detach_ready(void **state)
{
	const char *sock = test_sock("detach");
	char cmd[8192], out[4096];
	pid_t pid;
	int i;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s -d --no-bpf --socket %s 2>&1", profd_bin(), sock);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	pid = pid_with_arg(sock);
	assert_true(pid > 0);
	kids[0] = pid; /* not our child: teardown kills it, cannot reap it */
	assert_true(answers(sock));
	assert_int_equal(kill(pid, SIGTERM), 0);
	/* it unlinks its socket on the way out */
	for (i = 0; i < 250 && access(sock, F_OK) == 0; i++)
		sleep_ms(20);
	assert_int_not_equal(access(sock, F_OK), 0);
	kids[0] = -1;
}

/*
 * A second profd on a socket the first answers on refuses to start, and
 * the first keeps its socket; once the first is gone (killed, its socket
 * file left behind) the next one replaces the stale file.
 */
static void test_second_instance(void **state)
{
	const char *sock = test_sock("twice");
	char cmd[8192], out[4096], want[256];
	pid_t first, next;

	(void)state;
	first = spawn_profd(sock);
	/* a profd that took over would run until timeout kills it */
	snprintf(cmd, sizeof(cmd), "timeout 10 %s --no-bpf --socket %s 2>&1", profd_bin(), sock);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	snprintf(want, sizeof(want), "profd: another profd holds %s.lock\n", sock);
	assert_string_equal(out, want);
	assert_int_equal(waitpid(first, NULL, WNOHANG), 0);
	assert_int_equal(listener_pid(sock), first);

	kill(first, SIGKILL);
	waitpid(first, NULL, 0);
	kids[0] = -1;
	assert_int_equal(access(sock, F_OK), 0);
	next = spawn_profd(sock);
	assert_int_equal(listener_pid(sock), next);
}

/*
 * Two profds started at once on a stale socket: each would see it refused,
 * unlink it and bind its own, the second unlinking the first's.  The lock
 * decides: whoever holds <sock>.lock is the one, and the other touches
 * nothing, the socket included.  The test holds the lock itself, so the
 * race is decided the same way every time.
 */
static void test_lock_decides(void **state)
{
	const char *sock = test_sock("locked");
	char cmd[8192], out[4096], want[400], lock[300];
	struct stat before, after;
	pid_t first;
	int fd;

	(void)state;
	/* a stale socket: its profd was killed */
	first = spawn_profd(sock);
	kill(first, SIGKILL);
	waitpid(first, NULL, 0);
	kids[0] = -1;
	assert_int_equal(stat(sock, &before), 0);
	snprintf(lock, sizeof(lock), "%s.lock", sock);
	fd = open(lock, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	snprintf(cmd, sizeof(cmd), "timeout 10 %s --no-bpf --socket %s 2>&1", profd_bin(), sock);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	snprintf(want, sizeof(want), "profd: another profd holds %s\n", lock);
	assert_string_equal(out, want);
	/* the stale socket is as it was: not unlinked, not replaced */
	assert_int_equal(stat(sock, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	close(fd);
	assert_true(listener_pid(sock) <= 0); /* stale: nobody answers */
	/* the lock free, the next one starts, and answers on the stale socket's path */
	first = spawn_profd(sock);
	assert_int_equal(listener_pid(sock), first);
}

/* a lock file someone else made (in /tmp, say) is not taken for profd's */
static void test_lock_not_ours(void **state)
{
	const char *sock = test_sock("foreign");
	char cmd[8192], out[4096], want[400], lock[300];
	int fd;

	(void)state;
	if (geteuid() != 0) {
		printf("skip: making a file of another user's needs root\n");
		skip();
	}
	snprintf(lock, sizeof(lock), "%s.lock", sock);
	fd = open(lock, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "timeout 10 %s --no-bpf --socket %s 2>&1", profd_bin(), sock);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	snprintf(want, sizeof(want),
		 "profd: %s is not a regular file of this user's: not a lock of profd's\n", lock);
	assert_string_equal(out, want);
	assert_int_not_equal(access(sock, F_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_verifies),
		cmocka_unit_test(test_unit_exposure),
		cmocka_unit_test(test_detach_failed_start),
		cmocka_unit_test_teardown(test_detach_ready, teardown),
		cmocka_unit_test_teardown(test_second_instance, teardown),
		cmocka_unit_test_teardown(test_lock_decides, teardown),
		cmocka_unit_test_teardown(test_lock_not_ours, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
