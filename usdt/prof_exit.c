// SPDX-License-Identifier: MIT
/*
 * usdt/prof_exit.c - the report at exit (PROF_REPORT) and the saved file (PROF_SAVE).
 */
#define _GNU_SOURCE
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "zone_leave.h"
#include "runtime.h"
#include "snapshot.h"
#include "proffile.h"
#include "funcname.h"
#include "prof_int.h"

/* no-color.org: NO_COLOR set and not empty */
static bool no_color(void)
{
	const char *v = getenv("NO_COLOR");

	return v && *v;
}

/* PROF_REPORT=stderr|stdout|PATH, PROF_REPORT_FORMAT=text|json (env.c) */
static void report_at_exit(void)
{
	const char *dst = prof_env.report;
	struct prof_report_opts o = { .sort = PROF_SORT_SELF, .flat_rows = 20 };
	struct prof_snapshot *s = NULL;
	struct prof_snap_annot *annot;
	FILE *f;
	int err;

	if (!dst)
		return;
	err = prof_snapshot__read(prof_rt.seg, prof_rt.seg_len, &s);
	if (err) {
		prof_warnx("failed to read own segment for the report: %s", strerror(-err));
		return;
	}
	if (prof_env.report_compensate)
		prof_snapshot__compensate(s);
	if (!strcmp(dst, "stderr")) {
		f = stderr;
		o.color = isatty(2) && !no_color();
	} else if (!strcmp(dst, "stdout")) {
		f = stdout;
		o.color = isatty(1) && !no_color();
	} else {
		f = fopen(dst, "we");
		if (!f) {
			prof_warnx("failed to open PROF_REPORT=%s: %s (want stderr, stdout or a "
				   "writable file)",
				   dst, strerror(errno));
			prof_snapshot__destroy(s);
			return;
		}
	}
	/* its plots and locks, summed by name (the text report sums its own) */
	annot = prof_snap_annot_sum(s);
	s->annot = annot;
	if (prof_env.report_json)
		prof_report_json(f, &s, 1);
	else
		prof_report_text(f, s, &o);
	if (f == stderr || f == stdout)
		fflush(f);
	else
		fclose(f);
	prof_snap_annot_free(annot);
	prof_snapshot__destroy(s);
}

/* PROF_SAVE=PATH: the profile as a file (proffile.h); %p in PATH is the pid */
static void save_at_exit(void)
{
	const char *dst = prof_env.save, *p;
	struct prof_snapshot *s = NULL;
	char path[4096];
	size_t n = 0;
	int err;

	if (!dst)
		return;
	for (p = dst; *p && n + 16 < sizeof(path); p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%d", (int)getpid());
			p++;
		} else {
			path[n++] = *p;
		}
	}
	path[n] = '\0';
	err = prof_snapshot__read(prof_rt.seg, prof_rt.seg_len, &s);
	if (!err)
		err = prof_file_save(path, s);
	if (err)
		prof_warnx("failed to save the profile to %s: %s", path, prof_file_strerror(err));
	prof_snapshot__destroy(s);
}

void prof_atexit(void)
{
	/* a fork child that never profiled: prof_rt.seg is still the parent's */
	if (!prof_rt.seg || prof_rt.fork_pending)
		return;
	prof_thread_mark_exited(&prof_tpriv);
	__PROF_STORE(&prof_rt.seg->exit_tick, __prof_now());
	__atomic_or_fetch(&prof_rt.seg->flags, PROF_SEG_EXITED, __ATOMIC_RELEASE);
	report_at_exit();
	save_at_exit();
	if (!prof_rt.keep)
		shm_unlink(prof_rt.seg_name);
}
