// SPDX-License-Identifier: MIT
/*
 * test_oracle.c - every view of a real threaded program obeys what any
 * profile obeys (root, a private profd: calls with kernel facts).
 *
 * A child runs more threads than CPUs in long calls made of short busy
 * ones and naps (so calls straddle every window), a thread that naps in
 * long calls, and threads that come and go (folded into the aggregate of
 * exited threads).  Each view of it - since start, since a reset taken in
 * the middle of calls, profd's --last 1s, the difference of two saves,
 * two of top's reads, a saved file read back, as JSON too - is checked:
 *
 *	self >= 0; open part <= total; avg <= max; p50 <= p90 <= p99 <= max
 *	off-CPU <= the closed calls' wall time, so on-CPU >= 0 and <= total
 *	on-CPU nests: a node's >= its children's sum
 *	the window is at most as long as asked, and says how long it is
 *	the process (threads merged) is the sum of its threads
 *	base + diff = new, for every counter figures.h lists
 *	a figure is the same number in the saved file, its JSON and CSV,
 *	its folded stacks (wall and on-CPU), its pprof (go tool pprof, the
 *	paths of calls still open too) and its html page's data;
 *	diff's on-CPU change too (base + change = new);
 *	a change the same in diff's JSON and text and the saves' reports;
 *	serve's counters of a program gone still are its saved file's, in
 *	process and as the real Prometheus scrapes them
 *
 * The program, its profd and the invariants are oracle_fixture.h's.  Waits
 * are on conditions with deadlines.  Skips, saying why, unless root with
 * kernel assistance.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <jansson.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "proffile.h"
#include "fmt.h"
#include "report_load.h"
#include "prof.h"
#include "profd_private.h"
#include "prom.h"

#include "oracle_fixture.h"

/* --- the views ------------------------------------------------------ */

static void test_since_start(void **state)
{
	struct prof_snapshot *s;

	(void)state;
	need_profd();
	wait_naps(0, 2);
	s = view(PROFD_SNAP_START, 0);
	check_window("since start", s);
	prof_snapshot__destroy(s);
}

/* a reset taken in the middle of calls (every batch is 1.2 s, naps 0.4 s) */
static void test_since_reset(void **state)
{
	struct prof_snapshot *s;
	struct pc_src src;
	__u64 from;

	(void)state;
	need_profd();
	wait_naps(0, 1);
	pc_src_open(&src, false);
	assert_int_equal(pc_src_reset(&src, child), 0);
	pc_src_close(&src);
	from = naps_now();
	wait_naps(from, 2);
	s = view(PC_SNAP_RESET, 0);
	check_window("since reset", s);
	prof_snapshot__destroy(s);
}

/* profd's last second: never longer than asked, and the report says how
 * long it is, and that it is shorter than asked when it is */
static void test_last(void **state)
{
	char pid[16], out[128];
	const char *a[] = { "report", "--pid", pid, "--last", "1s", "--flat", NULL };
	struct prof_snapshot *s;
	char *text;
	const char *p;

	(void)state;
	need_profd();
	wait_naps(0, 5);
	s = view(PROFD_SNAP_LAST, 1);
	if (!s->span_ns || s->span_ns > 1000000000ull)
		fail_msg("--last 1s covers %llu ns", (unsigned long long)s->span_ns);
	check_window("--last 1s", s);
	prof_snapshot__destroy(s);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	snprintf(out, sizeof(out), "%s/last.txt", dir);
	text = test_profctl_text(out, a, NULL);
	p = strstr(text, ", the last ");
	if (!p)
		fail_msg("--last 1s does not say what it covers:\n%s", text);
	/* "1.00s" or "950ms (1.00s asked: ...)" */
	if (strncmp(p, ", the last 1.00s", 16) && !strstr(p, " (1.00s asked: profd's nearest frame)"))
		fail_msg("--last 1s is shorter than asked and does not say so:\n%.120s", p);
	free(text);
}

/* the child's since-start view saved to file */
static void save_now(const char *file)
{
	struct prof_snapshot *s = view(PROFD_SNAP_START, 0);

	assert_int_equal(prof_file_save(file, s), 0);
	prof_snapshot__destroy(s);
}

/* two saves, and their difference: base + diff = new, each counter */
static void test_diff_of_saves(void **state)
{
	char a[128], b[128];
	struct prof_snapshot *base, *newer, *d;
	__u32 i, j;

	(void)state;
	need_profd();
	snprintf(a, sizeof(a), "%s/a.prof", dir);
	snprintf(b, sizeof(b), "%s/b.prof", dir);
	wait_naps(0, 1);
	save_now(a);
	wait_naps(naps_now(), 2);
	save_now(b);
	assert_int_equal(pc_read_image(a, 0, &base), 0);
	assert_int_equal(pc_read_image(b, 0, &newer), 0);
	check_view("saved file", newer);
	assert_int_equal(pc_read_image(b, 0, &d), 0);
	assert_int_equal(prof_snapshot__diff(d, base), 0);
	check_window("diff of two saves", d);
	/* base + diff = new: threads by identity, nodes by index */
	for (i = 0; i < d->nthreads; i++) {
		const struct prof_snap_thread *dt = &d->threads[i], *nt = &newer->threads[i], *bt = NULL;

		for (j = 0; j < base->nthreads; j++)
			if (base->threads[j].tid == dt->tid &&
			    base->threads[j].start_tick == dt->start_tick && !dt->folds &&
			    !base->threads[j].folds)
				bt = &base->threads[j];
		if (!bt)
			continue;
		for (j = 1; j < dt->nnodes && j < bt->nnodes; j++) {
			const struct prof_snap_node *dn = &dt->nodes[j], *bn = &bt->nodes[j],
						    *nn = &nt->nodes[j];
#define SUM_BACK(f, unit, across, window, flat, slab, key)                                             \
	if (PROF_FIG_IS(DIFF, window) && bn->f + dn->f != nn->f)                               \
		fail_msg("tid %u %s: %s base %llu + diff %llu != new %llu", dt->tid,           \
			 prof_snap_node_name(d, dn), #f, (unsigned long long)bn->f,            \
			 (unsigned long long)dn->f, (unsigned long long)nn->f);
			PROF_NODE_COUNTS(SUM_BACK)
			PROF_NODE_TIMES(SUM_BACK)
#undef SUM_BACK
			/* the total too, whatever the table says of it, where no
			 * call was open at either save */
			if (!bn->open && !nn->open && bn->ticks + dn->ticks != nn->ticks)
				fail_msg("tid %u %s: total base %llu + diff %llu != new %llu",
					 dt->tid, prof_snap_node_name(d, dn),
					 (unsigned long long)bn->ticks, (unsigned long long)dn->ticks,
					 (unsigned long long)nn->ticks);
		}
	}
	prof_snapshot__destroy(d);
	prof_snapshot__destroy(base);
	prof_snapshot__destroy(newer);
}

/* top: two reads of the flat rows, each row's interval */
static void test_top_interval(void **state)
{
	struct prof_snapshot *s1 = NULL, *s2 = NULL;
	struct prof_flat_row *r1 = NULL, *r2 = NULL;
	size_t n1 = 0, n2 = 0, i, k;
	struct pc_src src;
	bool seen = false;

	(void)state;
	need_profd();
	wait_naps(0, 1);
	pc_src_open(&src, false);
	assert_int_equal(pc_src_raw(&src, child, &s1), 0);
	assert_int_equal(prof_snap_flat(s1, 0, PROF_SORT_SELF, &r1, &n1), 0);
	wait_naps(naps_now(), 2);
	assert_int_equal(pc_src_raw(&src, child, &s2), 0);
	assert_int_equal(prof_snap_flat(s2, 0, PROF_SORT_SELF, &r2, &n2), 0);
	pc_src_close(&src);
	for (i = 0; i < n2; i++) {
		struct prof_flat_row w;
		const char *name = r2[i].site < s2->nsites ? s2->sites[r2[i].site].name : "?";

		for (k = 0; k < n1 && r1[k].site != r2[i].site; k++)
			;
		if (k == n1)
			continue;
		prof_flat_window(&w, &r2[i], &r1[k]);
		if (!w.calls)
			continue;
		seen |= w.kernel_calls != 0;
		if ((w.ticks - w.open_ticks) / w.calls > w.max)
			fail_msg("top: %s avg %llu above max %llu", name,
				 (unsigned long long)((w.ticks - w.open_ticks) / w.calls),
				 (unsigned long long)w.max);
		/* the interval's max: of the calls that ended in it, so at most
		 * all their time, and never above the max since start */
		if (w.max > r2[i].max ||
		    w.max > (r2[i].ticks - r2[i].open_ticks) - (r1[k].ticks - r1[k].open_ticks))
			fail_msg("top: %s interval max %llu above the calls that ended in it", name,
				 (unsigned long long)w.max);
		if (w.kernel_calls == w.calls &&
		    w.offcpu_ns > prof_snap_ns(s2, w.ticks - w.open_ticks) + w.calls + 1000)
			fail_msg("top: %s off-CPU %llu ns above its closed time %llu ns", name,
				 (unsigned long long)w.offcpu_ns,
				 (unsigned long long)prof_snap_ns(s2, w.ticks - w.open_ticks));
	}
	assert_true(seen);
	free(r1);
	free(r2);
	prof_snapshot__destroy(s1);
	prof_snapshot__destroy(s2);
}

/* the zones the program makes, the figures compared for */
static const char *const zones[] = { "o_batch", "o_work", "o_nap", "o_longnap", "o_forever" };
#define NZONES (sizeof(zones) / sizeof(zones[0]))

/* node a of s's ta and b of o's tb are one call path, by zone names (two
 * snapshots number their sites each its own way) */
static bool same_named_path(const struct prof_snapshot *s, const struct prof_snap_thread *ta,
			    __u32 a, const struct prof_snapshot *o,
			    const struct prof_snap_thread *tb, __u32 b)
{
	while (a && b) {
		if (strcmp(prof_snap_node_name(s, &ta->nodes[a]), prof_snap_node_name(o, &tb->nodes[b])))
			return false;
		a = ta->nodes[a].parent;
		b = tb->nodes[b].parent;
	}
	return !a && !b;
}

/*
 * One saved file in every format: its JSON read back is the file, figure
 * for figure (figures.h's counts exactly; times to the ns a tick is
 * rounded to), each CSV row's calls, total and self time are its node's,
 * and each row of the flat text list says the calls of its zone in every
 * thread.
 */
static void test_formats(void **state)
{
	char file[128], js[128], csv[128], why[256];
	const char *aj[] = { "report", "--input", file, "--format", "json", NULL };
	const char *ac[] = { "report", "--input", file, "--format", "csv", NULL };
	const char *at[] = { "report", "--input", file, "--flat", "--color", "never", NULL };
	struct prof_snapshot *f, *j;
	char *text, *line;
	size_t len = 0;
	__u32 i, k, rows = 0;

	(void)state;
	need_profd();
	snprintf(file, sizeof(file), "%s/f.prof", dir);
	snprintf(js, sizeof(js), "%s/f.json", dir);
	snprintf(csv, sizeof(csv), "%s/f.csv", dir);
	wait_naps(0, 1);
	save_now(file);
	assert_int_equal(pc_read_image(file, 0, &f), 0);
	text = test_profctl_text(js, aj, &len);
	assert_int_equal(prof_json_load(text, len, &j, why, sizeof(why)), 0);
	free(text);
	assert_int_equal(j->nthreads, f->nthreads);
	for (i = 0; i < f->nthreads; i++) {
		const struct prof_snap_thread *ft = &f->threads[i], *jt = NULL;

		for (k = 0; k < j->nthreads; k++)
			if (j->threads[k].tid == ft->tid && !j->threads[k].folds == !ft->folds)
				jt = &j->threads[k];
		if (!jt)
			fail_msg("json: no thread %u", ft->tid);
		for (k = 2; k < ft->nnodes; k++) {
			const struct prof_snap_node *fn = &ft->nodes[k], *jn = NULL;
			__u32 m;

			if (prof_snap_node_hidden(ft, k))
				continue;
			for (m = 2; m < jt->nnodes && !jn; m++)
				if (same_named_path(j, jt, m, f, ft, k))
					jn = &jt->nodes[m];
			if (!jn)
				fail_msg("json: tid %u has no %s (%llu calls, open %u, node %u of %u, "
					 "json %u)", ft->tid, prof_snap_node_name(f, fn),
					 (unsigned long long)fn->calls, fn->open, k, ft->nnodes,
					 jt->nnodes);
#define SAME(f_, unit, across, window, flat, slab, key)                                                \
	if (fn->f_ != jn->f_)                                                                \
		fail_msg("json: tid %u %s: %s %llu, the file's %llu", ft->tid,                 \
			 prof_snap_node_name(f, fn), key, (unsigned long long)jn->f_,          \
			 (unsigned long long)fn->f_);
			PROF_NODE_COUNTS(SAME)
#undef SAME
			if (prof_snap_ns(f, fn->ticks) != prof_snap_ns(j, jn->ticks))
				fail_msg("json: %s total differs", prof_snap_node_name(f, fn));
		}
	}
	text = test_profctl_text(csv, ac, &len);
	/* pid,comm,tid,thread,node,parent,depth,zone,path,calls,total_ns,... */
	for (line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		unsigned int tid, node;
		unsigned long long calls, total, self;
		const struct prof_snap_thread *ft = NULL;
		char *p = line + 1;
		int c;

		if (sscanf(p, "%*u,%*[^,],%u,%*[^,],%u,", &tid, &node) != 2)
			continue;
		for (c = 0; c < 9 && p; c++)
			p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
		if (!p || sscanf(p, "%llu,%llu,%llu", &calls, &total, &self) != 3)
			continue;
		for (i = 0; i < f->nthreads; i++)
			if (f->threads[i].tid == tid && !f->threads[i].folds)
				ft = &f->threads[i];
		if (!ft || node >= ft->nnodes)
			continue;
		if (ft->nodes[node].calls != calls)
			fail_msg("csv: tid %u node %u: calls %llu, the file's %llu", tid, node, calls,
				 (unsigned long long)ft->nodes[node].calls);
		/* the file's ticks made ns, as the JSON's are: to the ns */
		if (prof_snap_ns(f, ft->nodes[node].ticks) != total ||
		    prof_snap_ns(f, prof_snap_self(&ft->nodes[node])) != self)
			fail_msg("csv: tid %u node %u: total %llu self %llu ns, the file's %llu %llu",
				 tid, node, total, self,
				 (unsigned long long)prof_snap_ns(f, ft->nodes[node].ticks),
				 (unsigned long long)prof_snap_ns(f, prof_snap_self(&ft->nodes[node])));
		rows++;
	}
	assert_true(rows > 10);
	free(text);
	snprintf(csv, sizeof(csv), "%s/f.txt", dir);
	text = test_profctl_text(csv, at, NULL);
	for (i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		char key[64];
		unsigned long long calls = 0;

		/* the name ends the row, or notes follow it ("[kernel k/n]") */
		snprintf(key, sizeof(key), "  %s", zones[i]);
		for (line = strstr(text, key); line; line = strstr(line + 1, key))
			if (line[strlen(key)] == '\n' || line[strlen(key)] == ' ')
				break;
		if (!line)
			fail_msg("text: no row of %s", zones[i]);
		while (line > text && line[-1] != '\n')
			line--;
		assert_int_equal(sscanf(line, "%llu", &calls), 1);
		if (calls != zone_calls(f, zones[i], false))
			fail_msg("text: %s %llu calls, the file's %llu", zones[i], calls,
				 (unsigned long long)zone_calls(f, zones[i], false));
	}
	free(text);
	prof_snapshot__destroy(j);
	prof_snapshot__destroy(f);
}

/* --- the same figure in every format, of one saved file -------------- */

/* the child's since-start view saved as dir/name; its path into file */
static void save_view(const char *name, char *file, size_t size)
{
	snprintf(file, size, "%s/%s", dir, name);
	wait_naps(0, 1);
	save_now(file);
}

/* `profctl report --input file --format json` read back */
static struct prof_snapshot *json_of(const char *file)
{
	char js[160], why[256];
	const char *a[] = { "report", "--input", file, "--format", "json", NULL };
	struct prof_snapshot *j = NULL;
	size_t len = 0;
	char *text;

	snprintf(js, sizeof(js), "%s.json", file);
	text = test_profctl_text(js, a, &len);
	if (prof_json_load(text, len, &j, why, sizeof(why)))
		fail_msg("%s read back: %s", js, why);
	free(text);
	return j;
}

/* each zone's self wall and self on-CPU time (ns), summed over the nodes
 * and threads of s (closed: only the nodes with a closed call, those
 * pprof has); on-CPU of the nodes with kernel facts only */
struct zone_sums {
	__u64 self[NZONES], self_cpu[NZONES], total[NZONES], total_cpu[NZONES];
	__u64 known_cpu[NZONES]; /* nodes whose self on-CPU is known */
	__u64 nodes; /* of every thread: the on-CPU figures' rounding, 1 ns a node */
};

/* a and b differ by at most slack */
static bool near(__u64 a, __u64 b, __u64 slack)
{
	return a > b ? a - b <= slack : b - a <= slack;
}

static void sum_zones(const struct prof_snapshot *s, bool closed, struct zone_sums *z)
{
	__u32 i, k, m;

	memset(z, 0, sizeof(*z));
	for (i = 0; i < s->nthreads; i++) {
		const struct prof_snap_thread *t = &s->threads[i];
		__u64 *on = calloc(t->nnodes ? t->nnodes : 1, sizeof(*on));

		assert_non_null(on);
		assert_int_equal(prof_snap_oncpu(s, t, on), 0);
		z->nodes += t->nnodes;
		for (k = 2; k < t->nnodes; k++)
			for (m = 0; m < NZONES; m++) {
				__u64 c = prof_snap_self_oncpu(t, on, k);

				if (strcmp(prof_snap_node_name(s, &t->nodes[k]), zones[m]) ||
				    (closed && !t->nodes[k].calls))
					continue;
				z->self[m] += prof_snap_ns(s, prof_snap_self(&t->nodes[k]));
				z->total[m] += prof_snap_ns(s, t->nodes[k].ticks);
				if (c != PROF_SNAP_UNKNOWN) {
					z->self_cpu[m] += c;
					z->known_cpu[m]++;
				}
				if (on[k] != PROF_SNAP_UNKNOWN)
					z->total_cpu[m] += on[k];
			}
		free(on);
	}
}

static int zone_index(const char *name, size_t len)
{
	size_t m;

	for (m = 0; m < NZONES; m++)
		if (strlen(zones[m]) == len && !strncmp(zones[m], name, len))
			return (int)m;
	return -1;
}

/* folded stacks of file, weighing weight: each zone's weight where it is
 * the leaf, summed */
static void folded_sums(const char *file, const char *weight, __u64 *sum)
{
	char out[160];
	const char *a[] = { "report", "--input", file, "--format", "folded", "--weight", weight, NULL };
	char *text, *line, *nl;

	snprintf(out, sizeof(out), "%s.%s.folded", file, weight);
	text = test_profctl_text(out, a, NULL);
	memset(sum, 0, NZONES * sizeof(*sum));
	for (line = text; *line; line = nl + 1) {
		char *sp, *leaf;
		int m;

		nl = strchr(line, '\n');
		if (!nl)
			fail_msg("folded: a line without its end: %s", line);
		*nl = 0;
		sp = strrchr(line, ' ');
		if (!sp)
			fail_msg("folded: no weight in '%s'", line);
		*sp = 0;
		leaf = strrchr(line, ';');
		leaf = leaf ? leaf + 1 : line;
		m = zone_index(leaf, strlen(leaf));
		if (m >= 0)
			sum[m] += strtoull(sp + 1, NULL, 10);
	}
	free(text);
}

/*
 * Folded stacks weigh a stack by its leaf's self time: each zone's
 * weights, summed, are its self wall (and, --weight oncpu, self on-CPU)
 * time in the JSON of the same file.  Wall time to the ns (both are the
 * file's ticks as ns); on-CPU time to 1 ns a node: a node's on-CPU time is
 * its total less its off-CPU time, its total's ticks rounded to ns in the
 * file and read as ns in the JSON, so a self on-CPU figure (a node's less
 * its children's) may differ by one ns a node.
 */
static void test_folded(void **state)
{
	char file[128];
	struct prof_snapshot *j;
	struct zone_sums z;
	__u64 w[NZONES];
	size_t m;

	(void)state;
	need_profd();
	save_view("folded.prof", file, sizeof(file));
	j = json_of(file);
	sum_zones(j, false, &z);
	folded_sums(file, "wall", w);
	for (m = 0; m < NZONES; m++)
		if (w[m] != z.self[m])
			fail_msg("folded: %s weighs %llu ns, its self time in the JSON %llu ns",
				 zones[m], (unsigned long long)w[m],
				 (unsigned long long)z.self[m]);
	folded_sums(file, "oncpu", w);
	for (m = 0; m < NZONES; m++)
		if (!near(w[m], z.self_cpu[m], z.nodes))
			fail_msg("folded --weight oncpu: %s weighs %llu ns, its self on-CPU time "
				 "in the JSON %llu ns",
				 zones[m], (unsigned long long)w[m],
				 (unsigned long long)z.self_cpu[m]);
	assert_true(z.self_cpu[1] > 0 && z.self_cpu[1] < z.self[1]);
	prof_snapshot__destroy(j);
}

/*
 * A JSON thread's nodes (nested "children") by call path ("a;b;c"), into
 * the object paths (path -> node).
 */
static void json_paths(json_t *paths, json_t *nodes, const char *above)
{
	size_t i;

	for (i = 0; i < json_array_size(nodes); i++) {
		json_t *n = json_array_get(nodes, i);
		const char *name = json_string_value(json_object_get(n, "name"));
		char path[1024];

		assert_non_null(name);
		snprintf(path, sizeof(path), "%s%s%s", above, above[0] ? ";" : "", name);
		json_object_set(paths, path, n);
		json_paths(paths, json_object_get(n, "children"), path);
	}
}

/* the column of each figure in an html node ([parent, name, ...]) and its
 * key in a JSON node */
static const struct {
	size_t col;
	const char *key;
} html_cols[] = {
	{ 2, "calls" },	    { 3, "total_ns" },	  { 4, "self_ns" },	  { 5, "p50_ns" },
	{ 6, "p99_ns" },    { 7, "max_ns" },	  { 8, "preempted" },	  { 9, "migrated" },
	{ 10, "offcpu_ns" }, { 11, "allocs" },	  { 12, "alloc_bytes" }, { 13, "open" },
	{ 14, "open_ns" },  { 15, "kernel_calls" }, { 16, "blocked" }, { 17, "oncpu_ns" },
	{ 18, "self_oncpu_ns" },
};

/*
 * The html page of a saved file: the data it embeds (DATA, the literal
 * its script reads) says of every node of every thread what the JSON of
 * the same file says, figure by figure (null where the JSON's is).
 */
static void test_html(void **state)
{
	char file[128], html[160];
	const char *ah[] = { "report", "--input", file, "--format", "html", NULL };
	const char *aj[] = { "report", "--input", file, "--format", "json", NULL };
	json_t *hdoc, *jdoc, *hth, *jth;
	json_error_t err;
	char *text, *at;
	size_t i, k, c, checked = 0, oncpu = 0;

	(void)state;
	need_profd();
	save_view("h.prof", file, sizeof(file));
	snprintf(html, sizeof(html), "%s.html", file);
	text = test_profctl_text(html, ah, NULL);
	at = strstr(text, "const DATA = ");
	assert_non_null(at);
	hdoc = json_loads(at + strlen("const DATA = "), JSON_DISABLE_EOF_CHECK, &err);
	if (!hdoc)
		fail_msg("html: its data does not parse: %s", err.text);
	free(text);
	snprintf(html, sizeof(html), "%s.json", file);
	assert_int_equal(test_profctl_run(html, aj), 0);
	jdoc = json_load_file(html, 0, &err);
	if (!jdoc)
		fail_msg("json: %s", err.text);
	hth = json_object_get(json_array_get(json_object_get(hdoc, "processes"), 0), "threads");
	jth = json_object_get(json_array_get(json_object_get(jdoc, "processes"), 0), "threads");
	assert_true(json_array_size(hth) > 2);
	assert_int_equal(json_array_size(hth), json_array_size(jth));
	for (i = 0; i < json_array_size(hth); i++) {
		json_t *ht = json_array_get(hth, i), *jt = json_array_get(jth, i);
		const json_t *hn = json_object_get(ht, "nodes");
		json_t *paths = json_object();
		char(*hp)[1024] = calloc(json_array_size(hn) + 1, sizeof(*hp));

		assert_non_null(hp);
		assert_int_equal(json_integer_value(json_object_get(ht, "tid")),
				 json_integer_value(json_object_get(jt, "tid")));
		json_paths(paths, json_object_get(jt, "nodes"), "");
		for (k = 2; k < json_array_size(hn); k++) {
			const json_t *row = json_array_get(hn, k), *jn;
			size_t parent = (size_t)json_integer_value(json_array_get(row, 0));
			const char *name = json_string_value(json_array_get(row, 1));

			assert_true(parent < k && name);
			snprintf(hp[k], sizeof(hp[k]), "%s%s%s", parent > 1 ? hp[parent] : "",
				 parent > 1 ? ";" : "", name);
			jn = json_object_get(paths, hp[k]);
			if (!jn)
				fail_msg("html: tid %lld %s is not in the JSON",
					 json_integer_value(json_object_get(ht, "tid")), hp[k]);
			for (c = 0; c < sizeof(html_cols) / sizeof(html_cols[0]); c++) {
				const json_t *hv = json_array_get(row, html_cols[c].col);
				const json_t *jv = json_object_get(jn, html_cols[c].key);

				if (json_is_null(hv) != json_is_null(jv) ||
				    json_integer_value(hv) != json_integer_value(jv))
					fail_msg("html: tid %lld %s %s %lld, the JSON's %lld",
						 json_integer_value(json_object_get(ht, "tid")),
						 hp[k], html_cols[c].key, json_integer_value(hv),
						 json_integer_value(jv));
				oncpu += !strcmp(html_cols[c].key, "oncpu_ns") && !json_is_null(hv);
			}
			checked++;
		}
		assert_int_equal(json_object_size(paths), json_array_size(hn) - 2);
		free(hp);
		json_decref(paths);
	}
	assert_true(checked > 10 && oncpu > 0);
	json_decref(hdoc);
	json_decref(jdoc);
}

/* go tool pprof ARGS of file into out; 0 or its status */
static int go_pprof(const char *args, const char *pb, const char *out)
{
	char cmd[768];

	snprintf(cmd, sizeof(cmd),
		 "env -i PATH=/usr/bin:/bin HOME=%s GOCACHE=%s/gocache go tool pprof %s %s "
		 ">%s 2>&1",
		 dir, dir, args, pb, out);
	return system(cmd);
}

/*
 * pprof of the saved file, read by the real `go tool pprof -raw`: each
 * sample's values (wall, cpu, ... ns and counts, integers) summed by its
 * leaf's function are the zone's self wall and self on-CPU time in the
 * JSON of the same file (as test_folded: wall to the ns, on-CPU to 1 ns a
 * node), the call path of a call still open too; and so their totals.
 */
static void test_pprof(void **state)
{
	char file[128], pb[160], raw[160];
	const char *a[] = { "report", "--input", file, "--format", "pprof", NULL };
	struct prof_snapshot *j;
	struct zone_sums z;
	__u64 wall[NZONES] = { 0 }, cpu[NZONES] = { 0 };
	__u64 wall_all = 0, cpu_all = 0, self_all = 0, cpu_json = 0;
	int wi = -1, ci = -1, fn_of[4096];
	char *text, *line, *nl, *samples, *locs;
	size_t m;

	(void)state;
	need_profd();
	if (system("command -v go >/dev/null 2>&1")) {
		fprintf(stderr, "skipped: go not installed (Debian golang-go): pprof not read\n");
		skip();
	}
	save_view("pprof.prof", file, sizeof(file));
	snprintf(pb, sizeof(pb), "%s.pb.gz", file);
	snprintf(raw, sizeof(raw), "%s.raw", file);
	assert_int_equal(test_profctl_run(pb, a), 0);
	if (go_pprof("-raw", pb, raw))
		fail_msg("go tool pprof -raw %s failed", pb);
	text = test_slurp(raw, NULL);
	assert_non_null(text);
	/* the locations: "     1: 0x0 M=1 o_work file:0:0 s=0", a zone each */
	memset(fn_of, -1, sizeof(fn_of));
	locs = strstr(text, "\nLocations\n");
	if (!locs)
		fail_msg("go tool pprof -raw: no locations:\n%s", text);
	for (line = locs + 11; *line && (nl = strchr(line, '\n')); line = nl + 1) {
		unsigned int id;
		char name[128];

		if (sscanf(line, " %u: %*s M=%*u %127s", &id, name) == 2 && id < 4096)
			fn_of[id] = zone_index(name, strlen(name));
		else if (sscanf(line, " %u: %*s %127s", &id, name) == 2 && id < 4096)
			fn_of[id] = zone_index(name, strlen(name));
	}
	/* "Samples:\nwall/nanoseconds cpu/nanoseconds ...\n  v v v: leaf ... " */
	samples = strstr(text, "Samples:\n");
	if (!samples)
		fail_msg("go tool pprof -raw: no samples:\n%s", text);
	line = samples + 9;
	nl = strchr(line, '\n');
	assert_non_null(nl);
	{
		char *tok, *save = NULL;
		int k = 0;

		*nl = 0;
		for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save), k++) {
			if (!strncmp(tok, "wall/", 5))
				wi = k;
			if (!strncmp(tok, "cpu/", 4))
				ci = k;
		}
	}
	if (wi < 0 || ci < 0)
		fail_msg("go tool pprof -raw: no wall and cpu sample types");
	for (line = nl + 1; line < locs && (nl = strchr(line, '\n')); line = nl + 1) {
		unsigned long long v[16];
		char *p = line, *colon = strchr(line, ':');
		unsigned int id;
		int k = 0;

		*nl = 0;
		/* a label line ("thread:[main]") has no number before its colon */
		if (!colon || strspn(line, " 0123456789") != (size_t)(colon - line))
			continue;
		while (p < colon && k < 16) {
			char *e;

			v[k] = strtoull(p, &e, 10);
			if (e == p)
				break;
			p = e;
			k++;
		}
		if (k <= wi || k <= ci || sscanf(colon + 1, "%u", &id) != 1 || id >= 4096)
			fail_msg("go tool pprof -raw: a sample line unread: %s", line);
		if (fn_of[id] >= 0) {
			wall[fn_of[id]] += v[wi];
			cpu[fn_of[id]] += v[ci];
		}
	}
	j = json_of(file);
	sum_zones(j, false, &z);
	for (m = 0; m < NZONES; m++) {
		if (wall[m] != z.self[m] || !near(cpu[m], z.self_cpu[m], z.nodes))
			fail_msg("pprof: %s wall %llu cpu %llu ns, self %llu on-CPU %llu ns in "
				 "the JSON",
				 zones[m], (unsigned long long)wall[m], (unsigned long long)cpu[m],
				 (unsigned long long)z.self[m], (unsigned long long)z.self_cpu[m]);
		wall_all += wall[m];
		cpu_all += cpu[m];
		self_all += z.self[m];
		cpu_json += z.self_cpu[m];
	}
	assert_true(cpu[1] > 0 && cpu[1] < wall[1]);
	/* the call path of a call still open (o_forever's) is there too */
	assert_true(wall[NZONES - 1] > 0);
	/* and so the totals: every sample's wall and cpu, the JSON's */
	if (wall_all != self_all || !near(cpu_all, cpu_json, z.nodes))
		fail_msg("pprof: wall %llu cpu %llu ns in all, the JSON's %llu and %llu",
			 (unsigned long long)wall_all, (unsigned long long)cpu_all,
			 (unsigned long long)self_all, (unsigned long long)cpu_json);
	free(text);
	prof_snapshot__destroy(j);
}

/* a change as diff's text writes it: "+1.50ms", "-812ns", "0" */
static const char *diff_dns(char *buf, size_t len, double d)
{
	char t[32];
	double a = d < 0 ? -d : d;

	if (a < 0.5)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%c%s", d > 0 ? '+' : '-',
			 prof_fmt_ns(t, sizeof(t), (__u64)(a + 0.5)));
	return buf;
}

static double jnum(const json_t *o, const char *side, const char *key)
{
	const json_t *v = json_object_get(json_object_get(o, side), key);

	if (!json_is_number(v))
		fail_msg("diff json: no %s.%s", side, key);
	return json_number_value(v);
}

/*
 * `profctl diff` of two saves, as JSON and as text (diff has no CSV), and
 * the JSON reports of the two files: each zone's change of calls is the
 * same number in all three; of self and total time the same number in the
 * diff's JSON and text (the text rounds it to three digits, as
 * prof_fmt_ns does: compared as text), and in the reports' difference to
 * 1 ns a node (a zone's time is its ticks summed, then made ns, in the
 * diff; each node's made ns, then summed, in the reports).
 */
/* an on-CPU figure of a diff's side or change: NAN where null (unknown) */
static double jcpu(const json_t *o, const char *side, const char *key)
{
	const json_t *v = json_object_get(json_object_get(o, side), key);

	if (json_is_null(v))
		return NAN;
	return jnum(o, side, key);
}

static void test_diff_formats(void **state)
{
	char a[128], b[128], out[160], buf[48];
	const char *aj[] = { "diff", "--format", "json", a, b, NULL };
	const char *at[] = { "diff", "--color", "never", a, b, NULL };
	struct prof_snapshot *ja, *jb;
	struct zone_sums za, zb, ma, mb;
	json_t *doc, *rows;
	json_error_t err;
	double calls[NZONES], dcalls[NZONES], dself[NZONES], dtotal[NZONES];
	double cpu[3][NZONES], scpu[3][NZONES]; /* base, new, change */
	bool seen[NZONES] = { false };
	char *text, *line, *nl;
	size_t m, i, found = 0;

	(void)state;
	need_profd();
	save_view("d1.prof", a, sizeof(a));
	wait_naps(naps_now(), 1);
	save_view("d2.prof", b, sizeof(b));
	snprintf(out, sizeof(out), "%s/d.json", dir);
	assert_int_equal(test_profctl_run(out, aj), 0);
	doc = json_load_file(out, 0, &err);
	if (!doc)
		fail_msg("diff json: %s", err.text);
	rows = json_object_get(doc, "zones");
	assert_true(json_is_array(rows));
	for (i = 0; i < json_array_size(rows); i++) {
		const json_t *r = json_array_get(rows, i);
		const char *name = json_string_value(json_object_get(r, "name"));
		int k = name ? zone_index(name, strlen(name)) : -1;

		if (k < 0)
			continue;
		calls[k] = jnum(r, "new", "calls");
		dcalls[k] = jnum(r, "change", "calls");
		dself[k] = jnum(r, "change", "self_ns");
		dtotal[k] = jnum(r, "change", "total_ns");
		cpu[0][k] = jcpu(r, "base", "oncpu_ns");
		cpu[1][k] = jcpu(r, "new", "oncpu_ns");
		cpu[2][k] = jcpu(r, "change", "oncpu_ns");
		scpu[0][k] = jcpu(r, "base", "self_oncpu_ns");
		scpu[1][k] = jcpu(r, "new", "self_oncpu_ns");
		scpu[2][k] = jcpu(r, "change", "self_oncpu_ns");
		seen[k] = true;
	}
	json_decref(doc);
	ja = json_of(a);
	jb = json_of(b);
	sum_zones(ja, false, &za);
	sum_zones(jb, false, &zb);
	/* diff's on-CPU is of each side's threads merged, as report --threads */
	{
		struct prof_snapshot *x = pc_merge_threads(ja), *y = pc_merge_threads(jb);

		assert_non_null(x);
		assert_non_null(y);
		sum_zones(x, false, &ma);
		sum_zones(y, false, &mb);
		pc_snap_free(x);
		pc_snap_free(y);
	}
	for (m = 0; m < NZONES; m++) {
		double c = (double)zone_calls(jb, zones[m], false) -
			   (double)zone_calls(ja, zones[m], false);

		if (!seen[m])
			fail_msg("diff json: no zone %s", zones[m]);
		if (dcalls[m] != c || calls[m] != (double)zone_calls(jb, zones[m], false))
			fail_msg("diff json: %s calls %.0f (%+.0f), the reports' %llu (%+.0f)",
				 zones[m], calls[m], dcalls[m],
				 (unsigned long long)zone_calls(jb, zones[m], false), c);
		if (fabs(dself[m] - ((double)zb.self[m] - (double)za.self[m])) >
			    (double)(za.nodes + zb.nodes) ||
		    fabs(dtotal[m] - ((double)zb.total[m] - (double)za.total[m])) >
			    (double)(za.nodes + zb.nodes))
			fail_msg("diff json: %s self %+.0f total %+.0f ns, the reports' %+.0f %+.0f",
				 zones[m], dself[m], dtotal[m],
				 (double)zb.self[m] - (double)za.self[m],
				 (double)zb.total[m] - (double)za.total[m]);
		/* on-CPU (CPU time): each side the saves' (threads merged), and
		 * base + change = new (every zone has calls with kernel facts) */
		if (isnan(cpu[1][m]) || isnan(scpu[1][m]) || isnan(cpu[2][m]) ||
		    isnan(scpu[2][m]))
			fail_msg("diff json: %s on-CPU unknown", zones[m]);
		/* the JSON rounds each thread's node to the ns: 1 ns a node of
		 * the threads the merge folds */
		if (fabs(cpu[1][m] - (double)mb.total_cpu[m]) > (double)zb.nodes ||
		    fabs(scpu[1][m] - (double)mb.self_cpu[m]) > (double)zb.nodes ||
		    (!isnan(cpu[0][m]) &&
		     (fabs(cpu[0][m] - (double)ma.total_cpu[m]) > (double)za.nodes ||
		      fabs(scpu[0][m] - (double)ma.self_cpu[m]) > (double)za.nodes)))
			fail_msg("diff json: %s on-CPU %.0f self %.0f, base %.0f %.0f; the "
				 "reports' %llu %llu, base %llu %llu",
				 zones[m], cpu[1][m], scpu[1][m], cpu[0][m], scpu[0][m],
				 (unsigned long long)mb.total_cpu[m],
				 (unsigned long long)mb.self_cpu[m],
				 (unsigned long long)ma.total_cpu[m],
				 (unsigned long long)ma.self_cpu[m]);
		if (fabs((isnan(cpu[0][m]) ? 0 : cpu[0][m]) + cpu[2][m] - cpu[1][m]) > 1 ||
		    fabs((isnan(scpu[0][m]) ? 0 : scpu[0][m]) + scpu[2][m] - scpu[1][m]) > 1)
			fail_msg("diff json: %s on-CPU base %.0f + change %.0f != new %.0f (self "
				 "%.0f + %.0f != %.0f)",
				 zones[m], cpu[0][m], cpu[2][m], cpu[1][m], scpu[0][m], scpu[2][m],
				 scpu[1][m]);
	}
	prof_snapshot__destroy(ja);
	prof_snapshot__destroy(jb);
	/* the text's zone table: calls Δcalls self Δself Δ% total Δtotal ... name */
	snprintf(out, sizeof(out), "%s/d.txt", dir);
	text = test_profctl_text(out, at, NULL);
	for (line = text; *line && (nl = strchr(line, '\n')); line = nl + 1) {
		char *tok[24], *save = NULL, *t;
		int n = 0, k;

		*nl = 0;
		/* the call paths' table follows the zones' */
		if (!strncmp(line, "call paths (", 12))
			break;
		for (t = strtok_r(line, " ", &save); t && n < 24; t = strtok_r(NULL, " ", &save))
			tok[n++] = t;
		if (n < 13 || (k = zone_index(tok[n - 1], strlen(tok[n - 1]))) < 0)
			continue;
		snprintf(buf, sizeof(buf), "%.0f", calls[k]);
		if (strcmp(tok[0], buf))
			fail_msg("diff text: %s calls %s, its json %s", zones[k], tok[0], buf);
		snprintf(buf, sizeof(buf), dcalls[k] ? "%+.0f" : "0", dcalls[k]);
		if (strcmp(tok[1], buf))
			fail_msg("diff text: %s Δcalls %s, its json %s", zones[k], tok[1], buf);
		if (strcmp(tok[3], diff_dns(buf, sizeof(buf), dself[k])))
			fail_msg("diff text: %s Δself %s, its json %s", zones[k], tok[3], buf);
		if (strcmp(tok[6], diff_dns(buf, sizeof(buf), dtotal[k])))
			fail_msg("diff text: %s Δtotal %s, its json %s", zones[k], tok[6], buf);
		found++;
	}
	if (found < NZONES)
		fail_msg("diff text: %zu of the %zu zones:\n%s", found, NZONES, text);
	free(text);
}

static void *still_worker(void *arg)
{
	(void)arg;
	o_batch(150);
	return NULL;
}

/* a program whose profile stops changing: at a byte on go, threads run
 * batches and end; a byte on done, and it waits, in no zone, to be killed */
static void still_program(const struct child *c)
{
	pthread_t th[3];
	int i;

	o_nap(); /* its segment, for profd to find */
	if (!child_hear(c))
		_exit(2);
	for (i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, still_worker, NULL))
			_exit(2);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	child_say(c, 'd');
	for (;;)
		pause();
}

/* a sample's value in an exposition: name{pid="P",...zone="Z"...} V;
 * false if none */
static bool sample_ns(const char *text, const char *name, pid_t pid, const char *zone, __u64 *v)
{
	char head[160], z[96];
	const char *p;

	snprintf(head, sizeof(head), "\n%s{pid=\"%d\",", name, (int)pid);
	snprintf(z, sizeof(z), ",zone=\"%s\"}", zone);
	for (p = strstr(text, head); p; p = strstr(p + 1, head)) {
		const char *e = strchr(p + 1, '\n'), *q = strstr(p, z);

		if (q && (!e || q < e)) {
			double x = strtod(q + strlen(z), NULL);

			/* calls as they are; seconds (%.9f) back to ns */
			*v = (__u64)((strstr(name, "seconds") ? x * 1e9 : x) + 0.5);
			return true;
		}
	}
	return false;
}

/*
 * serve's OpenMetrics (pc_metrics, in process, every user's processes)
 * of a program whose profile no longer changes, and the JSON of its
 * saved file: each zone's calls, self and total wall time, on-CPU and
 * self on-CPU time are the JSON's summed over threads and paths.  Calls
 * and wall time exactly (serve writes seconds to the ns, %.9f, read back
 * rounded to the ns), on-CPU time to 1 ns a node as test_folded says.
 * The saved file is read before and after the scrape: the same figures,
 * or the program was not still, and it is tried again.
 */
/*
 * The real Prometheus scraping `profctl serve`: each zone's counters of
 * the still program, as its API answers a query of each, are the JSON's
 * of its saved file (z): calls, wall seconds (self, total) and CPU seconds
 * (on-CPU, self on-CPU), to the ns (a node's rounding on-CPU).
 */
static void prom_check(const struct zone_sums *z, const struct prof_snapshot *j)
{
	static const char *const fam[] = { "profd_zone_calls_total", "profd_zone_self_seconds_total",
					   "profd_zone_seconds_total",
					   "profd_zone_oncpu_seconds_total",
					   "profd_zone_self_oncpu_seconds_total" };
	unsigned int port, wport;
	pid_t serve, prom;
	char q[256], exe[512];
	ssize_t n;
	__u64 end;
	double v = -1;
	size_t m, k;
	int st;

	if (!have("prometheus")) {
		fprintf(stderr, "skipped: prometheus not installed (Debian prometheus): "
				"serve checked in process only\n");
		return;
	}
	/* the profctl beside this test (.output/tests/..): this process has
	 * threads a fork of it would strand */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	*strrchr(exe, '/') = '\0';
	strcat(exe, "/profctl");
	serve = serve_start_exe(&port, false, NULL, exe);
	/* every segment in /dev/shm is read each scrape: a slow one on a
	 * machine with many (other tests') is still a scrape */
	prom = prom_start(dir, port, 10, &wport);
	/* %7B %22 %7D are { " }: a scrape of the still program's o_work (its
	 * calls: its on-CPU has no series when its threads had no kernel facts) */
	snprintf(q, sizeof(q), "%s%%7Bpid=%%22%d%%22,zone=%%22o_work%%22%%7D", fam[0], (int)still);
	for (end = now_ns() + 60000000000ull; now_ns() < end && v < 0; usleep(200000)) {
		if (waitpid(prom, &st, WNOHANG) == prom)
			fail_msg("prometheus exited early (status %d)", st);
		if (prom_up(wport))
			v = prom_query(wport, q);
	}
	if (v < 0) {
		char *body = NULL, key[32];

		http_wait_s = 30;
		http(port, "GET", "/metrics", NULL, &body);
		snprintf(key, sizeof(key), "pid=\"%d\"", (int)still);
		fail_msg("prometheus: no scrape of %s in 60 s; serve %s the still program", q,
			 body && strstr(body, key) ? "shows" : "does not show");
	}
	for (m = 0; m < NZONES; m++) {
		__u64 want[5] = { zone_calls(j, zones[m], false), z->self[m], z->total[m],
				  z->total_cpu[m], z->self_cpu[m] };

		for (k = 0; k < 5; k++) {
			__u64 got;

			snprintf(q, sizeof(q), "%s%%7Bpid=%%22%d%%22,zone=%%22%s%%22%%7D", fam[k],
				 (int)still, zones[m]);
			v = prom_query(wport, q);
			/* no series: no call (or, on-CPU, no kernel facts) */
			if (v < 0 && !want[k])
				continue;
			got = (__u64)((k ? v * 1e9 : v) + 0.5);
			if (v < 0 || (k < 3 ? got != want[k] : !near(got, want[k], z->nodes)))
				fail_msg("prometheus: %s %s %.9f, the JSON's %llu", zones[m], fam[k], v,
					 (unsigned long long)want[k]);
		}
	}
	kill(prom, SIGTERM);
	waitpid(prom, &st, 0);
	serve_stop(serve);
}

static void test_serve(void **state)
{
	struct pc_serve_opts so = { .max_zones = 200, .max_threads = 32, .all_users = true };
	char file[128];
	__u64 end;

	(void)state;
	need_profd();
	if (child_start(&still_prog) == 0) {
		still_program(&still_prog);
		_exit(0);
	}
	still = still_prog.pid;
	for (end = now_ns() + 20000000000ull; !followed(still); usleep(50000))
		if (now_ns() > end)
			fail_msg("profd does not follow the still program");
	child_go(&still_prog);
	child_ready(&still_prog);
	snprintf(file, sizeof(file), "%s/still.prof", dir);
	for (end = now_ns() + 20000000000ull;;) {
		static const char *const fam[] = { "profd_zone_calls_total",
						   "profd_zone_self_seconds_total",
						   "profd_zone_seconds_total",
						   "profd_zone_oncpu_seconds_total",
						   "profd_zone_self_oncpu_seconds_total" };
		struct prof_snapshot *s = NULL, *j;
		struct zone_sums z, z2;
		struct pc_src src;
		char *buf = NULL;
		size_t len = 0, m, k;
		FILE *f;
		bool same;

		pc_src_open(&src, false);
		assert_int_equal(pc_src_snapshot(&src, still, PROFD_SNAP_START, 0, &s), 0);
		pc_src_close(&src);
		assert_int_equal(prof_file_save(file, s), 0);
		prof_snapshot__destroy(s);
		j = json_of(file);
		sum_zones(j, false, &z);
		f = open_memstream(&buf, &len);
		assert_non_null(f);
		pc_src_open(&src, false);
		assert_true(src.fd >= 0);
		assert_int_equal(pc_metrics(f, &src, &so, true), 0);
		pc_src_close(&src);
		fclose(f);
		pc_src_open(&src, false);
		assert_int_equal(pc_src_snapshot(&src, still, PROFD_SNAP_START, 0, &s), 0);
		pc_src_close(&src);
		sum_zones(s, false, &z2);
		prof_snapshot__destroy(s);
		same = !memcmp(z.self, z2.self, sizeof(z.self)) &&
		       !memcmp(z.self_cpu, z2.self_cpu, sizeof(z.self_cpu));
		if (!same && now_ns() < end) {
			prof_snapshot__destroy(j);
			free(buf);
			usleep(50000);
			continue;
		}
		assert_true(same);
		for (m = 0; m < NZONES; m++) {
			__u64 want[5] = { zone_calls(j, zones[m], false), z.self[m], z.total[m],
					  z.total_cpu[m], z.self_cpu[m] };

			for (k = 0; k < 5; k++) {
				__u64 v = 0;
				bool has = sample_ns(buf, fam[k], still, zones[m], &v);

				/* no sample: no call (or, on-CPU, no kernel facts) */
				if (!has && !want[k])
					continue;
				if (!has || (k < 3 ? v != want[k] : !near(v, want[k], z.nodes)))
					fail_msg("serve: %s %s %llu (%s), the JSON's %llu:\n%s",
						 zones[m], fam[k], (unsigned long long)v,
						 has ? "a sample" : "no sample",
						 (unsigned long long)want[k], buf);
			}
		}
		/* o_work ran, on the CPU and off it (its naps are o_nap's) */
		/* (unknown when its threads had no kernel facts: registered
		 * after their first zone gave up waiting, on a loaded machine) */
		if (!z.known_cpu[1])
			printf("o_work's on-CPU unknown: its threads had no kernel facts\n");
		else if (!(z.self_cpu[1] > 0 && z.total_cpu[0] > z.self_cpu[1]))
			fail_msg("o_work self on-CPU %llu, o_batch on-CPU %llu (total %llu)",
				 (unsigned long long)z.self_cpu[1], (unsigned long long)z.total_cpu[0],
				 (unsigned long long)z.total[0]);
		prom_check(&z, j);
		prof_snapshot__destroy(j);
		free(buf);
		break;
	}
	kill(still, SIGKILL);
	waitpid(still, NULL, 0);
	still = -1;
}

TEST_MAIN(setup, teardown, cmocka_unit_test(test_since_start), cmocka_unit_test(test_since_reset),
	  cmocka_unit_test(test_last), cmocka_unit_test(test_diff_of_saves),
	  cmocka_unit_test(test_top_interval), cmocka_unit_test(test_formats),
	  cmocka_unit_test(test_folded), cmocka_unit_test(test_pprof),
	  cmocka_unit_test(test_diff_formats), cmocka_unit_test(test_serve), cmocka_unit_test(test_html))
