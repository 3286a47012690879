// SPDX-License-Identifier: MIT
/*
 * profctl_annot.c - a live process's plots and locks (annot.h) beside its
 * report: read from its segment (through profd, or directly), summed by
 * name, put in the JSON tree ("plots", "locks") and after the text tree
 * (a "locks" section).  They count from the program's start: a reset or
 * --last does not window them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "annot.h"
#include "fmt.h"
#include "profctl.h"

void pc_annot_free(struct prof_snap_annot *a)
{
	if (!a)
		return;
	free(a->plots);
	free(a->locks);
	free(a);
}

struct prof_snap_annot *pc_annot_read(struct pc_src *src, const struct prof_snapshot *s)
{
	struct prof_snap_annot *out;
	struct prof_annot *a;
	const void *mem;
	long np, nl;
	size_t len;

	/* a live process's only: a gone one's segment is no more */
	if (!s->pid || prof_proc_start_token((pid_t)s->pid) != s->start_token ||
	    pc_src_map(src, (pid_t)s->pid, &mem, &len) || prof_seg_annot(mem, len, &a))
		return NULL;
	out = calloc(1, sizeof(*out));
	np = out ? prof_annot_plot_sums(a, &out->plots) : -ENOMEM;
	nl = np >= 0 ? prof_annot_lock_sums(a, &out->locks) : -ENOMEM;
	prof_annot__destroy(a);
	if (np < 0 || nl < 0 || (!np && !nl)) {
		pc_annot_free(out);
		return NULL;
	}
	out->nplots = (size_t)np;
	out->nlocks = (size_t)nl;
	return out;
}

/*
 * The text report's locks: per lock, acquisitions, how many waited, the
 * time waited (total, longest) and held (total, longest), and with profd
 * how many waits slept in the kernel
 */
void pc_render_locks(FILE *f, const struct prof_snapshot *s)
{
	const struct prof_snap_annot *a = s->annot;
	char b[4][16];
	size_t i;

	if (!a || !a->nlocks)
		return;
	fprintf(f, "\nlocks of pid %u (since its start):\n", s->pid);
	fprintf(f, "  %-24s %10s %10s %9s %9s %9s %9s %8s %6s\n", "lock", "acquired", "contended",
		"waited", "wait max", "held", "hold max", "blocked", "unheld");
	for (i = 0; i < a->nlocks; i++) {
		const struct prof_annot_lock_sum *l = &a->locks[i];
		char blocked[24];

		if (l->kernel_waits)
			snprintf(blocked, sizeof(blocked), "%llu", (unsigned long long)l->blocked);
		else
			snprintf(blocked, sizeof(blocked), "-");
		fprintf(f, "  %-24s %10llu %10llu %9s %9s %9s %9s %8s %6llu\n", l->name,
			(unsigned long long)l->acquisitions, (unsigned long long)l->contended,
			prof_fmt_ns(b[0], sizeof(b[0]), prof_snap_ns(s, l->wait_ticks)),
			prof_fmt_ns(b[1], sizeof(b[1]), prof_snap_ns(s, l->wait_max)),
			prof_fmt_ns(b[2], sizeof(b[2]), prof_snap_ns(s, l->hold_ticks)),
			prof_fmt_ns(b[3], sizeof(b[3]), prof_snap_ns(s, l->hold_max)), blocked,
			(unsigned long long)l->unheld);
	}
}

/* a family's TYPE, UNIT and HELP lines; a counter's samples add _total */
static void put_family(FILE *f, const char *name, const char *type, const char *unit,
		       const char *help, bool om)
{
	bool counter = !strcmp(type, "counter");

	fprintf(f, "# TYPE %s%s %s\n", name, counter && !om ? "_total" : "", type);
	if (om && unit)
		fprintf(f, "# UNIT %s %s\n", name, unit);
	fprintf(f, "# HELP %s%s %s\n", name, counter && !om ? "_total" : "", help);
}

static void put_sample(FILE *f, const struct prof_snapshot *s, const char *name, bool counter,
		       const char *what, const char *label, double v)
{
	fprintf(f, "%s%s{pid=\"%u\",comm=\"", name, counter ? "_total" : "", s->pid);
	pc_om_label(f, s->comm);
	fprintf(f, "\",%s=\"", what);
	pc_om_label(f, label);
	fprintf(f, "\"} %.17g\n", v);
}

/* the lock figures serve exports: a family each */
static const struct {
	const char *name, *type, *unit, *help;
} lock_fams[] = {
	{ "profd_lock_acquisitions", "counter", NULL, "Acquisitions of a named lock." },
	{ "profd_lock_contended", "counter", NULL, "Acquisitions of a named lock that waited." },
	{ "profd_lock_wait_seconds", "counter", "seconds", "Time waited for a named lock." },
	{ "profd_lock_hold_seconds", "counter", "seconds", "Time a named lock was held." },
	{ "profd_lock_blocked", "counter", NULL,
	  "Waits for a named lock the thread slept in (profd; no sample without it)." },
};

static bool lock_value(const struct prof_snapshot *s, const struct prof_annot_lock_sum *l,
		       size_t fam, double *v)
{
	switch (fam) {
	case 0:
		*v = (double)l->acquisitions;
		return true;
	case 1:
		*v = (double)l->contended;
		return true;
	case 2:
		*v = (double)prof_snap_ns(s, l->wait_ticks) / 1e9;
		return true;
	case 3:
		*v = (double)prof_snap_ns(s, l->hold_ticks) / 1e9;
		return true;
	default:
		*v = (double)l->blocked;
		return l->kernel_waits != 0;
	}
}

/*
 * A gauge per plot (its newest point) and its points counted, and a
 * counter family per lock figure, labelled as the zones' are (pid, comm)
 * with the plot's or lock's name; nothing when no process has any
 */
void pc_annot_metrics(FILE *f, const struct prof_snapshot *const *s, size_t n, bool om)
{
	size_t i, k, fam, plots = 0, locks = 0;
	double v;

	for (i = 0; i < n; i++) {
		plots += s[i]->annot ? s[i]->annot->nplots : 0;
		locks += s[i]->annot ? s[i]->annot->nlocks : 0;
	}
	if (plots) {
		put_family(f, "profd_plot_value", "gauge", NULL,
			   "The newest point of a PROF_PLOT.", om);
		for (i = 0; i < n; i++)
			for (k = 0; s[i]->annot && k < s[i]->annot->nplots; k++)
				put_sample(f, s[i], "profd_plot_value", false, "plot",
					   s[i]->annot->plots[k].name, s[i]->annot->plots[k].last);
		put_family(f, "profd_plot_points", "counter", NULL,
			   "Points of a PROF_PLOT, since the process started.", om);
		for (i = 0; i < n; i++)
			for (k = 0; s[i]->annot && k < s[i]->annot->nplots; k++)
				put_sample(f, s[i], "profd_plot_points", true, "plot",
					   s[i]->annot->plots[k].name,
					   (double)s[i]->annot->plots[k].count);
	}
	for (fam = 0; locks && fam < sizeof(lock_fams) / sizeof(lock_fams[0]); fam++) {
		put_family(f, lock_fams[fam].name, lock_fams[fam].type, lock_fams[fam].unit,
			   lock_fams[fam].help, om);
		for (i = 0; i < n; i++)
			for (k = 0; s[i]->annot && k < s[i]->annot->nlocks; k++)
				if (lock_value(s[i], &s[i]->annot->locks[k], fam, &v))
					put_sample(f, s[i], lock_fams[fam].name, true, "lock",
						   s[i]->annot->locks[k].name, v);
	}
}
