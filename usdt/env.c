// SPDX-License-Identifier: MIT
/*
 * env.c - the PROF_* settings, read in one place.
 *
 * Each variable is parsed strictly; a value that does not parse gets one
 * warning line on stderr naming the variable and what it accepts, and the
 * default is used.  Read when the process makes its segment (a fork child
 * again, for its own segment: PROF_KEEP may be set between fork and the
 * child's first zone); a value warned about once is not warned about again
 * in the process or its fork children.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "runtime.h"

struct prof_env prof_env;

/* a variable's value, NULL if unset or empty (empty is unset everywhere) */
static const char *env_get(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int prof_env_parse_flag(const char *s, bool *out)
{
	static const char *const on[] = { "1", "yes", "true", "on" };
	static const char *const off[] = { "0", "no", "false", "off" };
	size_t i;

	for (i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		if (!strcasecmp(s, on[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, off[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int prof_env_parse_u32(const char *s, __u32 lo, __u32 hi, __u32 *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (__u32)v;
	return 0;
}

int prof_env_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if ((*s < '0' || *s > '9') && *s != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0 || v > PROF_ENV_INTERVAL_MAX ||
	    (v > 0 && v < PROF_ENV_INTERVAL_MIN))
		return -EINVAL;
	*out = v;
	return 0;
}

static void env_warn(const char *name, const char *val, const char *want, const char *then)
{
	if (prof_env.warned || prof_env.quiet)
		return;
	fprintf(stderr, "prof: ignoring %s=%s (want %s)%s%s\n", name, val, want, then ? "; " : "",
		then ? then : "");
	prof_env.warn_count++;
}

static bool env_flag(const char *name)
{
	const char *s = env_get(name);
	bool v = false;

	if (s && prof_env_parse_flag(s, &v))
		env_warn(name, s, "1 or 0, yes or no, true or false, on or off", NULL);
	return v;
}

static __u32 env_u32(const char *name, __u32 def, __u32 lo, __u32 hi)
{
	const char *s = env_get(name);
	char want[64];
	__u32 v = def;

	if (s && prof_env_parse_u32(s, lo, hi, &v)) {
		snprintf(want, sizeof(want), "a whole number %u..%u; default %u", lo, hi, def);
		env_warn(name, s, want, NULL);
	}
	return v;
}

void prof_env__read(void)
{
	const char *s;

	/* first: it decides whether the others may warn */
	s = env_get("PROF_QUIET");
	prof_env.quiet = false;
	if (s && prof_env_parse_flag(s, &prof_env.quiet))
		env_warn("PROF_QUIET", s, "1 or 0, yes or no, true or false, on or off", NULL);

	prof_env.keep = env_flag("PROF_KEEP");
	prof_env.no_daemon = env_flag("PROF_NO_DAEMON");
	prof_env.max_threads = env_u32("PROF_MAX_THREADS", 128, 1, 65536);
	prof_env.max_nodes = env_u32("PROF_MAX_NODES", 4096, 16, 1u << 22);
	prof_env.max_sites = env_u32("PROF_MAX_SITES", 4096, 4, 1u << 20);
	s = env_get("PROF_TRACE_EVENTS");
	prof_env.trace_events = PROF_TRACE_EVENTS_DEFAULT;
	if (s && (prof_env_parse_u32(s, 0, PROF_TRACE_EVENTS_MAX, &prof_env.trace_events) ||
		  (prof_env.trace_events & (prof_env.trace_events - 1)))) {
		char want[80];

		snprintf(want, sizeof(want), "0 (off) or a power of two up to %u; default %u",
			 PROF_TRACE_EVENTS_MAX, PROF_TRACE_EVENTS_DEFAULT);
		env_warn("PROF_TRACE_EVENTS", s, want, NULL);
		prof_env.trace_events = PROF_TRACE_EVENTS_DEFAULT;
	}

	prof_env.clock_mono = false;
	s = env_get("PROF_CLOCK");
	if (s && (!strcmp(s, "mono") || !strcmp(s, "monotonic")))
		prof_env.clock_mono = true;
	else if (s && strcmp(s, "tsc"))
		env_warn("PROF_CLOCK", s, "tsc or mono", "using tsc");

	prof_env.log_interval = 0;
	s = env_get("PROF_LOG_INTERVAL");
	if (s && prof_env_parse_seconds(s, &prof_env.log_interval))
		env_warn("PROF_LOG_INTERVAL", s, "seconds, 0.01..86400, e.g. 0.5", "no log");

	free(prof_env.report);
	prof_env.report = NULL;
	s = env_get("PROF_REPORT");
	if (s && strcmp(s, "0"))
		prof_env.report = strdup(!strcmp(s, "1") ? "stderr" : s);

	free(prof_env.save);
	prof_env.save = NULL;
	s = env_get("PROF_SAVE");
	if (s)
		prof_env.save = strdup(s);

	prof_env.report_compensate = env_flag("PROF_REPORT_COMPENSATE");
	prof_env.report_json = false;
	s = env_get("PROF_REPORT_FORMAT");
	if (s && !strcmp(s, "json"))
		prof_env.report_json = true;
	else if (s && strcmp(s, "text"))
		env_warn("PROF_REPORT_FORMAT", s, "text or json", "writing text");

	/* PROFD_SOCKET, profctl's name for it, is read too */
	prof_env.socket[0] = 0;
	s = env_get("PROF_SOCKET");
	if (!s)
		s = env_get("PROFD_SOCKET");
	if (s && strlen(s) < sizeof(((struct sockaddr_un *)0)->sun_path))
		snprintf(prof_env.socket, sizeof(prof_env.socket), "%s", s);
	else if (s)
		env_warn(env_get("PROF_SOCKET") ? "PROF_SOCKET" : "PROFD_SOCKET", s,
			 "a socket path of at most 107 bytes", "using /run/profd/profd.sock");

	if (prof_env.warn_count)
		prof_env.warned = true;
}
