// SPDX-License-Identifier: MIT
/*
 * render_html.c - one self-contained html page: the template
 * (daemon/report.html, embedded at build time as report_html.h) with the
 * data as a json literal in place of its placeholder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profctl.h"
#include "report_html.h"

#define PLACEHOLDER "/*@PROFCTL_DATA@*/null"

/* "%s[%d,\"%s\",%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu]", in place */
static void html_node(struct pc_out *out, const struct prof_snapshot *s,
		      const struct prof_snap_node *nd, __u32 j, const __u8 *clash)
{
	__u64 v[11];
	char *p = pc_out_row(out);
	int k;

	if (j) {
		*p++ = ',';
		*p++ = '[';
		p = pc_put_u64(p, nd->parent);
	} else {
		memcpy(p, "[-1", 3);
		p += 3;
	}
	*p++ = ',';
	*p++ = '"';
	/* a name is under PROF_NAME_MAX bytes: 6 each fits a row */
	p = prof_json_esc_body(p, prof_snap_node_name(s, nd));
	/* two sites of one name (overloads, lambdas): where each is */
	if (clash && nd->site < s->nsites && clash[nd->site]) {
		char w[PROF_FILE_MAX + 32];

		*pc_put_where(w, &s->sites[nd->site]) = 0;
		p = prof_json_esc_body(p, w);
	}
	*p++ = '"';
	v[0] = nd->calls;
	v[1] = prof_snap_ns(s, nd->ticks);
	v[2] = prof_snap_ns(s, prof_snap_self(nd));
	v[3] = prof_snap_ns(s, prof_snap_quantile(s, nd, 0.5));
	v[4] = prof_snap_ns(s, prof_snap_quantile(s, nd, 0.99));
	v[5] = prof_snap_ns(s, nd->max);
	v[6] = nd->preempted;
	v[7] = nd->migrated;
	v[8] = nd->offcpu_ns;
	v[9] = nd->allocs;
	v[10] = nd->alloc_bytes;
	for (k = 0; k < 11; k++) {
		*p++ = ',';
		p = pc_put_u64(p, v[k]);
	}
	*p++ = ']';
	out->p = p;
}

static int html_data(FILE *f, struct prof_snapshot *const *snaps, size_t n, bool sched)
{
	struct pc_out *out = malloc(sizeof(*out));
	size_t p;
	__u32 i, j;
	int err;

	if (!out)
		return -ENOMEM;
	fprintf(f, "{\"version\":1,\"sched\":%s,\"processes\":[", sched ? "true" : "false");
	for (p = 0; p < n; p++) {
		const struct prof_snapshot *s = snaps[p];
		__u8 *clash = pc_name_clashes(s);

		fprintf(f, "%s{\"pid\":%u,\"comm\":\"", p ? "," : "", s->pid);
		prof_json_fbody(f, s->comm);
		fputs("\",\"threads\":[", f);
		for (i = 0; i < s->nthreads; i++) {
			const struct prof_snap_thread *t = &s->threads[i];
			char lb[64];

			err = prof_snap_thread_load(s, &s->threads[i]);
			if (err) {
				free(clash);
				free(out);
				return err;
			}
			fprintf(f, "%s{\"tid\":%u,\"name\":\"", i ? "," : "", t->tid);
			prof_json_fbody(f, prof_snap_thread_label(t, lb, sizeof(lb)));
			fprintf(f, "\",\"total\":%llu,\"frames\":%llu,\"frame_total\":%llu,"
				   "\"frame_max\":%llu,\"nodes\":[",
				(unsigned long long)prof_snap_ns(s, pc_thread_total(t)),
				(unsigned long long)t->frames,
				(unsigned long long)prof_snap_ns(s, t->frame_ticks),
				(unsigned long long)prof_snap_ns(s, t->frame_max));
			pc_out_init(out, f);
			for (j = 0; j < t->nnodes; j++)
				html_node(out, s, &t->nodes[j], j, clash);
			pc_out_flush(out);
			fputs("]}", f);
		}
		fputs("]}", f);
		free(clash);
	}
	fputs("]}", f);
	free(out);
	return 0;
}

int pc_render_html(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o)
{
	const char *tpl = (const char *)report_html, *at;
	size_t len = report_html_len, pre;
	bool sched = false;
	size_t p;
	int err;

	(void)o;
	at = memmem(tpl, len, PLACEHOLDER, strlen(PLACEHOLDER));
	if (!at)
		return -EINVAL;
	for (p = 0; p < n; p++)
		sched |= pc_has_sched(snaps[p]);
	pre = (size_t)(at - tpl);
	fwrite(tpl, 1, pre, f);
	err = html_data(f, snaps, n, sched);
	if (err)
		return err;
	fwrite(at + strlen(PLACEHOLDER), 1, len - pre - strlen(PLACEHOLDER), f);
	return ferror(f) ? -EIO : 0;
}
