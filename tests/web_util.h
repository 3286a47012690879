/* SPDX-License-Identifier: MIT */
/*
 * web_util.h - what the tests of profctl serve share (test_profctl_web.c,
 * test_profctl_web_profd.c through a real profd, test_profctl_serve.c,
 * test_profctl_profd.c): live_worker started, profctl serve started as a
 * user, a request over HTTP/1.0, a number in JSON text.
 */
#ifndef WEB_UTIL_H
#define WEB_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "testutil.h"
#include "profctl.h"

/* the first line a child writes on fd, at most len - 1 bytes */
static inline void first_line(int fd, char *line, size_t len)
{
	ssize_t n, got = 0;

	while (got < (ssize_t)len - 1 && (n = read(fd, line + got, len - 1 - (size_t)got)) > 0) {
		got += n;
		line[got] = '\0';
		if (strchr(line, '\n'))
			break;
	}
	line[got > 0 ? got : 0] = '\0';
}

/*
 * fork with the child's fd (1 or 2) a pipe to us, the child killed with
 * us: 0 in the child; in the parent the child's pid once the first line
 * it writes there is in line (len bytes), -1 if there is no child
 */
static inline pid_t fork_first_line(int fd, char *line, size_t len)
{
	int p[2];
	pid_t pid;

	line[0] = '\0';
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], fd);
		close(p[0]);
		return 0;
	}
	close(p[1]);
	if (pid > 0)
		first_line(p[0], line, len);
	close(p[0]);
	return pid;
}

/* profctl serve as uid (0: as we are) on 127.0.0.1:0, asking profd or
 * not; its port */
static inline pid_t serve_as(uid_t uid, bool profd, unsigned int *p)
{
	char line[256];
	pid_t pid = fork_first_line(2, line, sizeof(line));

	if (pid == 0) {
		char *argv[] = { (char *)(uintptr_t) "profctl", (char *)(uintptr_t) "serve",
				 (char *)(uintptr_t) "--listen", (char *)(uintptr_t) "127.0.0.1:0",
				 profd ? NULL : (char *)(uintptr_t) "--no-daemon", NULL };

		if (uid && (setgid(uid) || setuid(uid)))
			_exit(3);
		/* a change of credentials cleared it: a failed assertion must
		 * leave no server behind either */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (uid)
			setenv("XDG_RUNTIME_DIR", "/nonexistent", 1);
		exit(profctl_main(profd ? 4 : 5, argv));
	}
	if (pid < 0 || sscanf(line, "profctl: serving http://127.0.0.1:%u/metrics", p) != 1) {
		fprintf(stderr, "serve said: '%s'\n", line);
		return -1;
	}
	return pid;
}

/* .output/tests/live_worker with n threads, once it says "ready"; -1 if not */
static inline pid_t worker_start(const char *n)
{
	char line[64];
	pid_t pid = fork_first_line(1, line, sizeof(line));

	if (pid == 0) {
		execl(".output/tests/live_worker", "live_worker", n, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || strcmp(line, "ready\n")) {
		fprintf(stderr, "live_worker said: '%s'\n", line);
		return -1;
	}
	return pid;
}

/*
 * An HTTP/1.0 request to 127.0.0.1:p, waiting at most wait_s for the
 * answer (0: as long as it takes): the status (-1: none); *body malloc'd
 * ("" without an answer), *len its length and *head the status line and
 * headers (malloc'd) where not NULL
 */
static inline int web_http(unsigned int p, const char *method, const char *path,
			   const char *accept, int wait_s, char **body, size_t *len, char **head)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p) };
	char req[1024], *buf = NULL, *end;
	size_t n_all = 0, blen;
	FILE *f;
	ssize_t n;
	int fd, code = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	if (wait_s) {
		struct timeval tv = { .tv_sec = wait_s };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n%s%s%s\r\n", method, path,
		 accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	f = open_memstream(&buf, &n_all);
	while ((n = read(fd, req, sizeof(req))) > 0)
		fwrite(req, 1, (size_t)n, f);
	fclose(f);
	close(fd);
	if (buf)
		sscanf(buf, "HTTP/1.%*d %d", &code);
	end = buf ? strstr(buf, "\r\n\r\n") : NULL;
	blen = end ? n_all - (size_t)(end + 4 - buf) : 0;
	*body = malloc(blen + 1);
	if (blen)
		memcpy(*body, end + 4, blen);
	(*body)[blen] = 0;
	if (len)
		*len = blen;
	if (head) {
		if (end)
			*end = 0;
		*head = strdup(buf ? buf : "");
	}
	free(buf);
	return code;
}

/* GET path of 127.0.0.1:p, as web_http */
static inline int get(unsigned int p, const char *path, char **body, size_t *len, char **head)
{
	return web_http(p, "GET", path, NULL, 0, body, len, head);
}

static inline int get_code(unsigned int p, const char *path)
{
	char *body;
	size_t len;
	int code = get(p, path, &body, &len, NULL);

	free(body);
	return code;
}

/* the number after "key": in text from the first "from" on; -1 for null,
 * -2 if absent */
static inline long long num_after(const char *text, const char *from, const char *key)
{
	const char *p = strstr(text, from);
	char k[64];

	if (!p)
		return -2;
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(p, k);
	if (!p)
		return -2;
	p += strlen(k);
	if (!strncmp(p, "null", 4))
		return -1;
	return strtoll(p, NULL, 10);
}

/* serve and the worker stopped, dir removed; 0 or -1 */
static inline int web_end(pid_t server, pid_t worker, const char *dir)
{
	int st;

	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, &st, 0);
	}
	if (worker > 0) {
		kill(worker, SIGKILL);
		waitpid(worker, &st, 0);
	}
	return test_rm_rf(dir);
}

#endif /* WEB_UTIL_H */
