/* SPDX-License-Identifier: MIT */
/*
 * daemon/profd/profd_log.h - profd's log (profd_log.c).
 */
#ifndef PROFD_LOG_H
#define PROFD_LOG_H

#include <stdbool.h>

/* logging: stderr or syslog */
void log_init(bool use_syslog, int verbose);
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* PROFD_LOG_H */
