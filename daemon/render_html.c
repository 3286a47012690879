// SPDX-License-Identifier: MIT
/*
 * render_html.c - one self-contained html page: the template
 * (daemon/report.html, embedded at build time as report_html.h) with the
 * data as a json literal in place of its placeholder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include "profctl.h"
#include "daemon/report_html.h"

#define PLACEHOLDER "/*@PROFCTL_DATA@*/null"

static void html_data(FILE *f, struct prof_snapshot *const *snaps, size_t n, bool sched)
{
	size_t p;
	__u32 i, j;

	fprintf(f, "{\"version\":1,\"sched\":%s,\"processes\":[", sched ? "true" : "false");
	for (p = 0; p < n; p++) {
		const struct prof_snapshot *s = snaps[p];

		fprintf(f, "%s{\"pid\":%u,\"comm\":\"", p ? "," : "", s->pid);
		pc_json_str(f, s->comm);
		fputs("\",\"threads\":[", f);
		for (i = 0; i < s->nthreads; i++) {
			const struct prof_snap_thread *t = &s->threads[i];
			char lb[64];

			fprintf(f, "%s{\"tid\":%u,\"name\":\"", i ? "," : "", t->tid);
			pc_json_str(f, prof_snap_thread_label(t, lb, sizeof(lb)));
			fprintf(f, "\",\"total\":%llu,\"nodes\":[",
				(unsigned long long)prof_snap_ns(s, pc_thread_total(t)));
			for (j = 0; j < t->nnodes; j++) {
				const struct prof_snap_node *nd = &t->nodes[j];

				fprintf(f, "%s[%d,\"", j ? "," : "", j ? (int)nd->parent : -1);
				pc_json_str(f, prof_snap_node_name(s, nd));
				fprintf(f, "\",%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu]",
					(unsigned long long)nd->calls,
					(unsigned long long)prof_snap_ns(s, nd->ticks),
					(unsigned long long)prof_snap_ns(s, prof_snap_self(nd)),
					(unsigned long long)prof_snap_ns(
						s, prof_snap_quantile(s, nd, 0.5)),
					(unsigned long long)prof_snap_ns(
						s, prof_snap_quantile(s, nd, 0.99)),
					(unsigned long long)prof_snap_ns(s, nd->max),
					(unsigned long long)nd->preempted,
					(unsigned long long)nd->migrated,
					(unsigned long long)nd->offcpu_ns);
			}
			fputs("]}", f);
		}
		fputs("]}", f);
	}
	fputs("]}", f);
}

int pc_render_html(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o)
{
	const char *tpl = (const char *)report_html, *at;
	size_t len = report_html_len, pre;
	bool sched = false;
	size_t p;

	(void)o;
	at = memmem(tpl, len, PLACEHOLDER, strlen(PLACEHOLDER));
	if (!at)
		return -EINVAL;
	for (p = 0; p < n; p++)
		sched |= pc_has_sched(snaps[p]);
	pre = (size_t)(at - tpl);
	fwrite(tpl, 1, pre, f);
	html_data(f, snaps, n, sched);
	fwrite(at + strlen(PLACEHOLDER), 1, len - pre - strlen(PLACEHOLDER), f);
	return ferror(f) ? -EIO : 0;
}
