// SPDX-License-Identifier: MIT
/*
 * profctl_log.c - what profctl says on stderr ("profctl: ..."), and the one
 * line said when a segment was truncated under a read.  The lowest of
 * profctl's files: every other may call it, it calls none of them.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include "busguard.h"
#include "profctl.h"

/*
 * A segment its owner truncates while profctl reads it: the read sees
 * zeros from there (busguard.c) and goes on; the verb then fails with one
 * line instead of profctl dying of a bus error, and its errors since (the
 * zeros' doing) are not said.  hits_seen: the faults counted when the verb
 * started; hits_said: when the one line was said.
 */
static unsigned long hits_seen, hits_said = ~0ul;

void pc_bus_guard(void)
{
	prof_bus_guard();
	hits_seen = prof_bus_hits();
	hits_said = ~0ul;
}

bool pc_bus_hit(void)
{
	return prof_bus_hits() != hits_seen;
}

void pc_bus_said(void)
{
	hits_said = prof_bus_hits();
	pc_warnx("a segment was truncated by its owner while profctl read it: what was shown "
		 "is incomplete");
}

bool pc_warn_quiet;

void pc_warnx(const char *fmt, ...)
{
	va_list ap;

	if ((pc_bus_hit() && prof_bus_hits() != hits_said) || pc_warn_quiet)
		return;
	fputs("profctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
