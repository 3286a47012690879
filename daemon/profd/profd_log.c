// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd_log.c - profd's log: stderr, or syslog (-d, --syslog),
 * never both.  Every profd file logs through it (profd_log.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "profd_log.h"

static bool log_syslog;
static int log_verbose;

void log_init(bool use_syslog, int verbose)
{
	log_syslog = use_syslog;
	log_verbose = verbose;
	if (use_syslog)
		openlog("profd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/* syslog or stderr, never both: under systemd both end in the journal */
static void vlog(int pri, const char *fmt, va_list ap, const char *err)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (log_syslog) {
		if (err)
			syslog(pri, "%s: %s", buf, err);
		else
			syslog(pri, "%s", buf);
		return;
	}
	if (err)
		fprintf(stderr, "profd: %s: %s\n", buf, err);
	else
		fprintf(stderr, "profd: %s\n", buf);
}

void log_warn(const char *fmt, ...)
{
	const char *err = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, err);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, NULL);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 1 && !log_syslog)
		return;
	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap, NULL);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 2)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap, NULL);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	const char *err = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, err);
	va_end(ap);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, NULL);
	va_end(ap);
	exit(1);
}
