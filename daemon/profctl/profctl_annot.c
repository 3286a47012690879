// SPDX-License-Identifier: MIT
/*
 * profctl_annot.c - a live process's plots and locks (annot.h) as top
 * reads them (from its segment, through profd or directly, summed by
 * name: top takes its interval's rates itself), and serve's metrics of
 * them.  report takes them from its snapshot (prof_snap_annot_sum), which
 * windows them as it windows the zones.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "annot.h"
#include "fmt.h"
#include "profctl.h"

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
		prof_snap_annot_free(out);
		return NULL;
	}
	out->nplots = (size_t)np;
	out->nlocks = (size_t)nl;
	return out;
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
