/* SPDX-License-Identifier: MIT */
/*
 * prom.h - what the tests that serve OpenMetrics share: profctl serve
 * started and stopped (its port from the line it says), HTTP requests,
 * and the real Prometheus (Debian prometheus) scraping it and answering
 * queries.  Requests go through web_util.h's web_http.
 */
#ifndef PROF_TESTS_PROM_H
#define PROF_TESTS_PROM_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include "web_util.h"

static inline bool have(const char *prog)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return !system(cmd);
}

/*
 * profctl serve --listen 127.0.0.1:0 --no-daemon (--timeout, default 10),
 * from a socket of its own as systemd hands one over if activated; run
 * as profctl_main in a child of this process, or as the program exe if
 * not NULL (a process whose threads a fork would strand); its pid, the
 * port it says it serves in *port
 */
static inline pid_t serve_start_exe(unsigned int *port, bool activated, const char *timeout,
				    const char *exe)
{
	int errp[2];
	char line[256];
	pid_t pid;

	assert_int_equal(pipe(errp), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = {
			(char *)(uintptr_t) "profctl",	   (char *)(uintptr_t) "serve",
			(char *)(uintptr_t) "--listen",	   (char *)(uintptr_t) "127.0.0.1:0",
			(char *)(uintptr_t) "--no-daemon", (char *)(uintptr_t) "--timeout",
			(char *)(uintptr_t)(timeout ? timeout : "10"), NULL
		};

		/* a failed assertion leaves no server behind holding our stdout */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(errp[1], 2);
		close(errp[0]);
		if (activated) {
			struct sockaddr_in a = { .sin_family = AF_INET };
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			char me[16];

			/* sd_listen_fds(3): fd 3, LISTEN_PID ours, LISTEN_FDS 1 */
			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 8) ||
			    dup2(fd, 3) != 3)
				_exit(3);
			snprintf(me, sizeof(me), "%d", (int)getpid());
			setenv("LISTEN_PID", me, 1);
			setenv("LISTEN_FDS", "1", 1);
			/* the socket wins over --listen */
			argv[3] = (char *)(uintptr_t) "127.0.0.1:1";
		}
		if (exe) {
			execv(exe, argv);
			_exit(127);
		}
		exit(profctl_main(7, argv));
	}
	close(errp[1]);
	/* "profctl: serving http://127.0.0.1:PORT/metrics" once it listens */
	first_line(errp[0], line, sizeof(line));
	close(errp[0]);
	if (sscanf(line, "profctl: serving http://127.0.0.1:%u/metrics", port) != 1)
		fail_msg("serve said: '%s'", line);
	return pid;
}

static inline pid_t serve_start_how(unsigned int *port, bool activated, const char *timeout)
{
	return serve_start_exe(port, activated, timeout, NULL);
}

static inline pid_t serve_start(unsigned int *port)
{
	return serve_start_how(port, false, NULL);
}

/* how long http() waits for an answer (0: as long as it takes) */
static int http_wait_s __attribute__((unused));

/* an HTTP/1.0 request to 127.0.0.1:port; the status (-1: none), *body malloc'd */
static inline int http(unsigned int port, const char *method, const char *path, const char *accept,
		       char **body)
{
	return web_http(port, method, path, accept, http_wait_s, body, NULL, NULL);
}

static inline void serve_stop(pid_t pid)
{
	int st;

	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* a free loopback port, for a program that wants one named */
static inline unsigned int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* the first value of a Prometheus instant query's answer, -1 if none */
static inline double prom_query(unsigned int port, const char *query)
{
	char path[512], *body, *p;
	double v = -1;

	snprintf(path, sizeof(path), "/api/v1/query?query=%s", query);
	if (http(port, "GET", path, NULL, &body) != 200) {
		free(body);
		return -1;
	}
	p = strstr(body, "\"value\":[");
	if (p && (p = strstr(p, ",\"")))
		v = strtod(p + 2, NULL);
	free(body);
	return v;
}

/*
 * The samples Prometheus stored of the one series sel names over the last
 * window (a range query, "15s"): how many (-1 if none), in *span the
 * seconds from the first to the last, and in *rate the counter's increase
 * between them over that span.  Not rate(): that divides by the whole
 * window, however much of it the samples cover (and extrapolates by rules
 * of its own).
 */
static inline int prom_samples(unsigned int port, const char *sel, const char *window,
			       double *rate, double *span)
{
	char path[512], *body, *p;
	double t, v, t0 = 0, v0 = 0;
	int n = 0;

	snprintf(path, sizeof(path), "/api/v1/query?query=%s%%5B%s%%5D", sel, window);
	*rate = -1;
	*span = 0;
	if (http(port, "GET", path, NULL, &body) != 200) {
		free(body);
		return -1;
	}
	/* "values":[[1795765964.251,"1086"],[1795765965.251,"1294"],...] */
	p = strstr(body, "\"values\":[");
	for (p = p ? p + 10 : NULL; p && sscanf(p, "[%lf,\"%lf\"]", &t, &v) == 2; n++) {
		if (!n) {
			t0 = t;
			v0 = v;
		} else if (t > t0) {
			*rate = (v - v0) / (t - t0);
			*span = t - t0;
		}
		p = strchr(p, ']');
		p = p && p[1] == ',' ? p + 2 : NULL;
	}
	free(body);
	return n ? n : -1;
}

static inline bool prom_up(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool up;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	up = !connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return up;
}

/*
 * prometheus scraping 127.0.0.1:target every interval_s seconds (a scrape
 * may take as long), its data in dir/tsdb, its API at 127.0.0.1:*wport;
 * its pid (kill it with SIGTERM)
 */
static inline pid_t prom_start(const char *dir, unsigned int target, unsigned int interval_s,
			       unsigned int *wport)
{
	char cfg[128], tsdb[128], web[64];
	pid_t prom;
	FILE *f;

	*wport = free_port();
	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", dir);
	snprintf(tsdb, sizeof(tsdb), "%s/tsdb", dir);
	snprintf(web, sizeof(web), "127.0.0.1:%u", *wport);
	f = fopen(cfg, "w");
	assert_non_null(f);
	fprintf(f,
		"global:\n  scrape_interval: %us\n  scrape_timeout: %us\n"
		"  evaluation_interval: 1s\n"
		"scrape_configs:\n  - job_name: profd\n    static_configs:\n"
		"      - targets: ['127.0.0.1:%u']\n",
		interval_s, interval_s, target);
	fclose(f);
	prom = fork();
	assert_true(prom >= 0);
	if (prom == 0) {
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(null, 1);
		dup2(null, 2);
		execlp("prometheus", "prometheus", "--config.file", cfg, "--storage.tsdb.path",
		       tsdb, "--web.listen-address", web, "--log.level=error", (char *)NULL);
		_exit(127);
	}
	return prom;
}

#endif /* PROF_TESTS_PROM_H */
