// SPDX-License-Identifier: MIT
/*
 * render_html.c - one self-contained html page: the template
 * (daemon/profctl/report.html, embedded at build time as report_html.h) with the
 * data as a json literal in place of its placeholder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profctl.h"
#include "profctl_samples.h"
#include "report_html.h"

#define PLACEHOLDER "/*@PROFCTL_DATA@*/null"
#define TRACE_PLACEHOLDER "/*@PROFCTL_TRACE@*/null"

/*
 * "%s[%d,\"%s\",%llu,...]", in place: parent, name, then the columns
 * PROF_OUT_COLUMNS gives the html page (null where unknown), which the page
 * finds by the keys in its data's "cols"
 */
static void html_node(struct prof_out *out, const struct prof_snapshot *s,
		      const struct prof_snap_thread *t, const __u64 *oncpu, __u32 j,
		      const __u8 *clash, __u64 given)
{
	const struct prof_snap_node *nd = &t->nodes[j];
	char *p = prof_out_row(out);
	int k;

	if (j) {
		*p++ = ',';
		*p++ = '[';
		p = prof_put_u64(p, nd->parent);
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

		*prof_put_where(w, &s->sites[nd->site]) = 0;
		p = prof_json_esc_body(p, w);
	}
	*p++ = '"';
	for (k = 0; k < PC_COLS; k++) {
		__u64 v;

		if (!pc_cols[k].html)
			continue;
		v = pc_col_node(s, t, oncpu, j, (enum pc_col)k);
		/* the self time profd's sampled frames below it took over */
		if ((k == PC_COL_SELF || k == PC_COL_SELF_ONCPU) && v != PROF_SNAP_UNKNOWN)
			v -= given < v ? given : v;
		*p++ = ',';
		if (v == PROF_SNAP_UNKNOWN) {
			memcpy(p, "null", 4);
			p += 4;
		} else
			p = prof_put_u64(p, v);
	}
	*p++ = ']';
	out->p = p;
}

/* a thread as {"tid",...,"nodes":[...]}; tid 0 is the threads merged */
static int html_thread(FILE *f, struct prof_out *out, const struct prof_snapshot *s,
		       const struct prof_snap_thread *t, const __u8 *clash,
		       const struct pc_samples *sm)
{
	struct pc_html_rows x;
	__u64 *oncpu = NULL;
	__u32 j, cap = 0;
	char lb[64];

	if (prof_snap_oncpu_room(s, t, &oncpu, &cap)) {
		free(oncpu);
		return -ENOMEM;
	}

	fprintf(f, "{\"tid\":%u,\"name\":\"", t->tid);
	prof_json_fbody(f, prof_snap_thread_label(t, lb, sizeof(lb)));
	fprintf(f, "\",\"total\":%llu,", (unsigned long long)prof_snap_ns(s, prof_snap_thread_total(t)));
	if (t->oncpu_ns == PROF_SNAP_UNKNOWN)
		fputs("\"oncpu\":null,", f);
	else
		fprintf(f, "\"oncpu\":%llu,", (unsigned long long)t->oncpu_ns);
	fprintf(f, "\"frames\":%llu,\"frame_total\":%llu,\"frame_max\":%llu,\"nodes\":[",
		(unsigned long long)t->frames, (unsigned long long)prof_snap_ns(s, t->frame_ticks),
		(unsigned long long)prof_snap_ns(s, t->frame_max));
	if (pc_samples_html(sm, s, t, oncpu, &x)) {
		pc_html_rows_free(&x);
		free(oncpu);
		return -ENOMEM;
	}
	prof_out_init(out, f);
	for (j = 0; j < t->nnodes; j++)
		html_node(out, s, t, oncpu, j, clash, x.given ? x.given[j] : 0);
	prof_out_flush(out);
	/* profd's sampled frames, nodes below their zone: no calls, their
	 * time on the CPU as wall and on-CPU time */
	for (size_t r = 0; r < x.n; r++) {
		fprintf(f, ",[%u,\"", x.r[r].parent);
		prof_json_fbody(f, x.r[r].name);
		fprintf(f, "\",0,%llu,%llu,0,0,0,0,0,0,0,0,0,0,0,0,%llu,%llu]",
			(unsigned long long)x.r[r].total, (unsigned long long)x.r[r].self,
			(unsigned long long)x.r[r].total, (unsigned long long)x.r[r].self);
	}
	fputs("]}", f);
	pc_html_rows_free(&x);
	free(oncpu);
	return 0;
}

/*
 * {"version":1,"sched":b,"cols":[key...],"processes":[{"pid","comm","samples_state",
 * "tsc_synced","threads":
 * [thread...],"merged":thread}]}: "merged" (the threads merged by call
 * path, as --threads does) where a process has more than one thread
 */
static int html_data(FILE *f, struct prof_snapshot *const *snaps, size_t n, bool sched,
		     const struct pc_opts *o)
{
	struct prof_out *out = malloc(sizeof(*out));
	size_t p;
	__u32 i;
	int err = 0, k;

	if (!out)
		return -ENOMEM;
	fprintf(f, "{\"version\":1,\"sched\":%s,\"cols\":[", sched ? "true" : "false");
	for (k = 0; k < PC_COLS; k++)
		if (pc_cols[k].html)
			fprintf(f, "%s\"%s\"", k ? "," : "", pc_cols[k].key);
	fputs("],\"processes\":[", f);
	for (p = 0; p < n && !err; p++) {
		const struct prof_snapshot *s = snaps[p];
		struct prof_snapshot *m = NULL;
		__u8 *clash = prof_snap_name_clashes(s);
		/* through profd (or a saved file): its sampled stacks */
		struct pc_samples *sm = o->samples_src ? pc_samples_get(o->samples_src, (pid_t)s->pid)
						       : NULL;

		fprintf(f, "%s{\"pid\":%u,\"comm\":\"", p ? "," : "", s->pid);
		prof_json_fbody(f, s->comm);
		/* in a container: the page's header says where */
		if (s->ns_pid) {
			fprintf(f, "\",\"ns_pid\":%u,\"cgroup\":\"", s->ns_pid);
			prof_json_fbody(f, s->cgroup);
		}
		/* and what it says of stack sampling */
		if (s->samples_state) {
			fputs("\",\"samples_state\":\"", f);
			prof_json_fbody(f, s->samples_state);
		}
		fprintf(f, "\",\"tsc_synced\":%s,\"threads\":[",
			s->flags & PROF_SEG_TSC_SYNCED ? "true" : "false");
		struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
		const struct prof_snap_thread *t;

		for (i = 0; !err && (t = prof_snap_next(&it)); i++) {
			if (i)
				fputc(',', f);
			err = html_thread(f, out, s, t, clash, sm);
		}
		if (!err)
			err = it.err;
		fputc(']', f);
		if (!err && s->nthreads > 1) {
			m = pc_merge_threads(s);
			if (!m) {
				err = -errno;
			} else {
				fputs(",\"merged\":", f);
				err = html_thread(f, out, m, &m->threads[0], clash, sm);
			}
		}
		fputc('}', f);
		pc_snap_free(m);
		pc_samples_free(sm);
		free(clash);
	}
	fputs("]}", f);
	free(out);
	return err;
}

int pc_render_html(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o)
{
	const char *tpl = (const char *)report_html, *at, *tr, *end = tpl + report_html_len;
	bool sched = false;
	size_t p;
	int err;

	at = memmem(tpl, report_html_len, PLACEHOLDER, strlen(PLACEHOLDER));
	tr = at ? memmem(at, (size_t)(end - at), TRACE_PLACEHOLDER, strlen(TRACE_PLACEHOLDER))
		: NULL;
	if (!at || !tr)
		return -EINVAL;
	for (p = 0; p < n; p++)
		sched |= prof_snap_any_sched(snaps[p]);
	fwrite(tpl, 1, (size_t)(at - tpl), f);
	err = html_data(f, snaps, n, sched, o);
	if (err)
		return err;
	at += strlen(PLACEHOLDER);
	fwrite(at, 1, (size_t)(tr - at), f);
	/* the timeline's data, escaped as every JSON is (no "</script>") */
	fputs(o->trace_json ? o->trace_json : "null", f);
	tr += strlen(TRACE_PLACEHOLDER);
	fwrite(tr, 1, (size_t)(end - tr), f);
	return ferror(f) ? -EIO : 0;
}
