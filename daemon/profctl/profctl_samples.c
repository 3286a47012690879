// SPDX-License-Identifier: MIT
/*
 * profctl_samples.c - profd's sampled stacks (profd --sample-hz) and
 * `report --inside ZONE`: the functions and lines sampled while ZONE was
 * open, in text, JSON and CSV.
 *
 * profd sends a process's stacks as text (proto.h: profd_samples_rep):
 * one distinct (thread, zone path, stack) a line, already symbolized.  It
 * is profd's, but parsed as carefully as any input: a line that does not
 * parse is skipped, never half-read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profctl.h"
#include "profctl_samples.h"
#include "proffile.h"
#ifndef PROFCTL_NO_CLIENT
#include "client.h"
#endif

void pc_samples_free(struct pc_samples *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		free(s->st[i].f);
	free(s->st);
	free(s->text);
	free(s);
}

/* a field up to sep (or the end), cut there; the rest after it */
static char *cut(char **p, char sep)
{
	char *s = *p, *e;

	if (!s)
		return NULL;
	e = strchr(s, sep);
	if (e) {
		*e = 0;
		*p = e + 1;
	} else {
		*p = NULL;
	}
	return s;
}

static int parse_frames(char *fr, struct pc_stack *st)
{
	size_t cap = 8;
	char *p = fr;

	st->f = calloc(cap, sizeof(*st->f));
	if (!st->f)
		return -ENOMEM;
	while (p && *p) {
		char *one = cut(&p, '\x1e'), *q = one, *line;
		struct pc_frame *f;

		if (st->nframes == cap) {
			void *n = realloc(st->f, 2 * cap * sizeof(*st->f));

			if (!n)
				return -ENOMEM;
			st->f = n;
			cap *= 2;
		}
		f = &st->f[st->nframes];
		f->func = cut(&q, '\x1f');
		f->file = cut(&q, '\x1f');
		line = cut(&q, '\x1f');
		f->mod = cut(&q, '\x1f');
		if (!f->func || !f->file || !line || !f->mod)
			return -EPROTO;
		f->line = (unsigned int)strtoul(line, NULL, 10);
		st->nframes++;
	}
	return 0;
}

int pc_samples_parse(char *text, struct pc_samples *s)
{
	char *p = text;
	size_t cap = 0;

	while (p && *p) {
		char *line = cut(&p, '\n'), *q = line, *tid, *cnt, *path, *fr, *end;
		struct pc_stack st = { 0 };

		tid = cut(&q, '\t');
		cnt = cut(&q, '\t');
		path = cut(&q, '\t');
		fr = q;
		if (!tid || !cnt || !path || !fr)
			continue;
		st.tid = (__u32)strtoul(tid, &end, 10);
		if (*end)
			continue;
		st.count = strtoull(cnt, &end, 10);
		if (*end || !st.count)
			continue;
		st.path = path;
		if (parse_frames(fr, &st)) {
			free(st.f);
			continue;
		}
		if (s->n == cap) {
			void *n = realloc(s->st, (cap ? 2 * cap : 64) * sizeof(*s->st));

			if (!n) {
				free(st.f);
				return -ENOMEM;
			}
			s->st = n;
			cap = cap ? 2 * cap : 64;
		}
		s->st[s->n++] = st;
		s->total += st.count;
	}
	return 0;
}

/* the samples of the profile file read (report --input), as profd sent them */
static struct {
	bool input; /* report --input: samples only from the file */
	char *text; /* NULL: it has none */
	size_t len;
	__u32 hz;
} file_sm;

void pc_samples_input(void)
{
	file_sm.input = true;
}

int pc_file_add_samples(void **buf, size_t *len, const char *text, size_t tlen, __u32 hz)
{
	struct prof_file_hdr h;
	char *n;

	if (!tlen || *len < sizeof(h))
		return 0;
	memcpy(&h, *buf, sizeof(h));
	if (h.hdr_size < sizeof(h) || *len != h.hdr_size + h.body_size)
		return -EINVAL;
	n = realloc(*buf, *len + tlen);
	if (!n)
		return -ENOMEM;
	memcpy(n + *len, text, tlen);
	h.version = PROF_FILE_VERSION_SAMPLES;
	h.samples_size = tlen;
	h.samples_hash = prof_file_hash((const unsigned char *)text, tlen);
	h.samples_hz = hz;
	memcpy(n, &h, sizeof(h));
	*buf = n;
	*len += tlen;
	return 0;
}

void pc_file_samples_forget(void)
{
	free(file_sm.text);
	memset(&file_sm, 0, sizeof(file_sm));
}

int pc_file_take_samples(const void *buf, size_t len, const struct prof_file_hdr *h)
{
	const unsigned char *p = (const unsigned char *)buf + h->hdr_size + h->body_size;

	if (h->version != PROF_FILE_VERSION_SAMPLES)
		return 0;
	if (h->hdr_size + h->body_size + h->samples_size != len)
		return -EINVAL;
	if (prof_file_hash(p, h->samples_size) != h->samples_hash)
		return PROF_FILE_E_HASH;
	free(file_sm.text);
	file_sm.text = malloc(h->samples_size + 1);
	if (!file_sm.text)
		return -ENOMEM;
	memcpy(file_sm.text, p, h->samples_size);
	file_sm.text[h->samples_size] = 0;
	file_sm.len = h->samples_size;
	file_sm.hz = h->samples_hz;
	return 0;
}

/*
 * pid's samples and why there are none: from the profile file report
 * --input read, else from profd.  Each "why" is the bare reason sampling
 * is off; pc_samples_state makes every view's one line of it.
 */
static struct pc_samples *samples_get(const struct pc_src *src, pid_t pid, bool stacks)
{
	struct pc_samples *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	/* a saved profile's: the one file report --input reads */
	if (file_sm.input || file_sm.text) {
		s->file = true;
		s->hz = file_sm.hz;
		if (!file_sm.text) {
			snprintf(s->why, sizeof(s->why),
				 "the profile read has none (saved without profd, or with "
				 "its sampling off)");
			return s;
		}
		s->text = strdup(file_sm.text);
		if (!s->text || pc_samples_parse(s->text, s) == -ENOMEM) {
			pc_samples_free(s);
			return NULL;
		}
		return s;
	}
	if (src->fd < 0) {
		snprintf(s->why, sizeof(s->why), "%s",
			 src->why ? "profd is not running (profd samples stacks, as root)"
				  : "profd was not asked (--no-daemon)");
		return s;
	}
#ifdef PROFCTL_NO_CLIENT
	snprintf(s->why, sizeof(s->why), "profctl was built without profd's client");
#else
	{
		struct profd_samples_rep rep = { 0 };
		unsigned long long named, cached, lost = 0, tables = 0, cache = 0;
		size_t len;
		/* pid 0's text is one line: how frames were named */
		int err = profd_samples(src->fd, pid, stacks || !pid ? &s->text : NULL, &len, &rep);

		s->all = !pid;
		if (err == -EINVAL || err == -EOPNOTSUPP) {
			snprintf(s->why, sizeof(s->why), "this profd does not sample stacks");
		} else if (err) {
			snprintf(s->why, sizeof(s->why), "profd: %s", strerror(-err));
		} else {
			s->hz = rep.hz;
			if (rep.why[0])
				snprintf(s->why, sizeof(s->why), "%s", rep.why);
			/* before the parse, which cuts the text */
			/* a profd before the lost samples and memory were said: 2 */
			if (s->all && sscanf(s->text, "frames\t%llu\t%llu\t%llu\t%llu\t%llu", &named,
					     &cached, &lost, &tables, &cache) >= 2) {
				s->named = named;
				s->cached = cached;
				s->lost = lost;
				s->table_bytes = tables;
				s->cache_bytes = cache;
			}
			if (s->text && pc_samples_parse(s->text, s) == -ENOMEM) {
				pc_samples_free(s);
				return NULL;
			}
			/* profd's count: every line's (pid 0: every process's) */
			if (!s->text || s->all)
				s->total = rep.samples;
		}
	}
#endif
	return s;
}

struct pc_samples *pc_samples_get(const struct pc_src *src, pid_t pid)
{
	return samples_get(src, pid, true);
}

const char *pc_samples_state_of(const struct pc_src *src, pid_t pid, char *buf, size_t len)
{
	struct pc_samples *s = samples_get(src, pid, false);

	pc_samples_state(s, buf, len);
	pc_samples_free(s);
	return buf;
}

const char *pc_samples_state(const struct pc_samples *s, char *buf, size_t len)
{
	if (!s)
		snprintf(buf, len, "unknown (out of memory)");
	else if (s->why[0])
		snprintf(buf, len, "off: %s", s->why);
	else if (s->file)
		snprintf(buf, len, "%llu, saved with the profile (profd sampled at %u Hz a CPU)",
			 (unsigned long long)s->total, s->hz);
	else if (s->all && s->lost)
		snprintf(buf, len,
			 "on at %u Hz a CPU while a thread is registered, %llu kept, %llu lost (the "
			 "kernel's ring was full)",
			 s->hz, (unsigned long long)s->total, (unsigned long long)s->lost);
	else if (s->all)
		snprintf(buf, len, "on at %u Hz a CPU while a thread is registered, %llu kept",
			 s->hz, (unsigned long long)s->total);
	else if (!s->total)
		snprintf(buf, len,
			 "on at %u Hz a CPU, none of this process yet (its threads are sampled "
			 "while they run, once registered with profd)",
			 s->hz);
	else
		snprintf(buf, len, "on at %u Hz a CPU, %llu of this process", s->hz,
			 (unsigned long long)s->total);
	return buf;
}

/* ZONE is open in path (US apart); "[outside zones]": path empty */
static int zone_depth(const char *path, const char *zone)
{
	size_t zl = strlen(zone);
	const char *p = path;
	int d = 0;

	if (!strcmp(zone, PC_OUTSIDE))
		return *path ? -1 : 0;
	while (*p) {
		const char *e = strchr(p, '\x1f');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == zl && !memcmp(p, zone, l))
			return e ? d + 1 : 0; /* 0: ZONE is the innermost */
		d++;
		if (!e)
			break;
		p = e + 1;
	}
	return -1;
}

struct row {
	const struct pc_frame *f;
	__u64 self, incl;
	__u64 seen; /* the last sample line that counted it inclusive */
};

bool pc_frame_same(const struct pc_frame *a, const struct pc_frame *b)
{
	return a->line == b->line && !strcmp(a->func, b->func) && !strcmp(a->file, b->file) &&
	       (a->func[0] || !strcmp(a->mod, b->mod));
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return strcmp(x->f->func, y->f->func);
}

struct inside {
	struct row *rows;
	size_t n;
	__u64 in, own, outside;
};

static int inside_rows(const struct pc_samples *s, const char *zone, __u32 tid, struct inside *v)
{
	size_t i, k, cap = 0;
	__u32 j;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < s->n; i++) {
		const struct pc_stack *st = &s->st[i];
		int d;

		if (tid && st->tid != tid)
			continue;
		if (!st->path[0])
			v->outside += st->count;
		d = zone_depth(st->path, zone);
		if (d < 0)
			continue;
		v->in += st->count;
		if (d == 0)
			v->own += st->count;
		for (j = 0; j < st->nframes; j++) {
			const struct pc_frame *f = &st->f[j];

			for (k = 0; k < v->n && !pc_frame_same(v->rows[k].f, f); k++)
				;
			if (k == v->n) {
				if (v->n == cap) {
					void *nr = realloc(v->rows, (cap ? 2 * cap : 32) *
									    sizeof(*v->rows));

					if (!nr)
						return -ENOMEM;
					v->rows = nr;
					cap = cap ? 2 * cap : 32;
				}
				v->rows[v->n++] = (struct row){ .f = f };
			}
			if (!j)
				v->rows[k].self += st->count;
			/* a frame twice on one stack (recursion) counts once */
			if (v->rows[k].seen != i + 1) {
				v->rows[k].incl += st->count;
				v->rows[k].seen = i + 1;
			}
		}
	}
	if (v->n)
		qsort(v->rows, v->n, sizeof(*v->rows), cmp_row);
	return 0;
}

static double pct(__u64 a, __u64 b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* "func" or, unsymbolized, its module+offset; "file:line" or "" */
static const char *fname(const struct pc_frame *f)
{
	return f->func[0] ? f->func : f->mod;
}

int pc_render_inside(FILE *out, const struct pc_samples *s, pid_t pid, const char *zone,
		     const struct pc_opts *o)
{
	char state[PC_SAMPLES_STATE_MAX];
	struct inside v;
	size_t i;
	int err = inside_rows(s, zone, o->tid, &v);

	if (err)
		return err;
	if (o->format == PC_FMT_JSON) {
		fprintf(out, "{\"pid\": %d, \"zone\": ", (int)pid);
		prof_json_fstr(out, zone);
		fprintf(out, ", \"hz\": %u, \"samples\": %llu, \"samples_own\": %llu, "
			     "\"process_samples\": %llu, \"outside_samples\": %llu, \"why\": ",
			s->hz, (unsigned long long)v.in, (unsigned long long)v.own,
			(unsigned long long)s->total, (unsigned long long)v.outside);
		if (s->why[0])
			prof_json_fstr(out, s->why);
		else
			fputs("null", out);
		fputs(", \"samples_state\": ", out);
		prof_json_fstr(out, pc_samples_state(s, state, sizeof(state)));
		fputs(", \"inside\": [", out);
		for (i = 0; i < v.n; i++) {
			const struct pc_frame *f = v.rows[i].f;

			fputs(i ? ",\n  {\"func\": " : "\n  {\"func\": ", out);
			prof_json_fstr(out, f->func);
			fputs(", \"file\": ", out);
			prof_json_fstr(out, f->file);
			fprintf(out, ", \"line\": %u, \"module\": ", f->line);
			prof_json_fstr(out, f->mod);
			fprintf(out, ", \"samples\": %llu, \"inclusive\": %llu}",
				(unsigned long long)v.rows[i].self,
				(unsigned long long)v.rows[i].incl);
		}
		fputs(v.n ? "\n]}\n" : "]}\n", out);
	} else if (o->format == PC_FMT_CSV) {
		fputs("pid,zone,func,file,line,module,self,self_pct,inclusive,inclusive_pct\n", out);
		for (i = 0; i < v.n; i++) {
			const struct pc_frame *f = v.rows[i].f;

			fprintf(out, "%d,", (int)pid);
			pc_csv_str(out, zone);
			fputc(',', out);
			pc_csv_str(out, f->func);
			fputc(',', out);
			pc_csv_str(out, f->file);
			fprintf(out, ",%u,", f->line);
			pc_csv_str(out, f->mod);
			fprintf(out, ",%llu,%.1f,%llu,%.1f\n", (unsigned long long)v.rows[i].self,
				pct(v.rows[i].self, v.in), (unsigned long long)v.rows[i].incl,
				pct(v.rows[i].incl, v.in));
		}
	} else {
		fprintf(out, "pid %d: %llu samples inside %s", (int)pid, (unsigned long long)v.in,
			zone);
		if (strcmp(zone, PC_OUTSIDE))
			fprintf(out, " (%llu in it, %llu in zones inside it)",
				(unsigned long long)v.own, (unsigned long long)(v.in - v.own));
		fprintf(out, ", of %llu (%u Hz a CPU)\n", (unsigned long long)s->total, s->hz);
		fprintf(out, "  samples: %s\n", pc_samples_state(s, state, sizeof(state)));
		if (v.n)
			fprintf(out, "  %6s %7s %6s %7s  %s\n", "self", "", "incl", "",
				"function (file:line)");
		for (i = 0; i < v.n; i++) {
			const struct pc_frame *f = v.rows[i].f;

			fprintf(out, "  %5.1f%% %7llu %5.1f%% %7llu  %s", pct(v.rows[i].self, v.in),
				(unsigned long long)v.rows[i].self, pct(v.rows[i].incl, v.in),
				(unsigned long long)v.rows[i].incl, fname(f));
			if (f->file[0])
				fprintf(out, " (%s:%u)", f->file, f->line);
			else if (f->func[0])
				fprintf(out, " (%s)", f->mod);
			fputc('\n', out);
		}
	}
	free(v.rows);
	return 0;
}

/* the last zone of a path (US apart) */
static const char *innermost_zone(const char *path)
{
	const char *e = strrchr(path, '\x1f');

	return e ? e + 1 : path;
}

int pc_samples_hottest(const struct pc_samples *s, const char *zone, char *buf, size_t len)
{
	const struct pc_frame *best = NULL;
	__u64 best_n = 0, in = 0;
	size_t i, j;

	buf[0] = 0;
	if (!s)
		return 0;
	/* a frame's self samples in the zone itself: summed over the lines
	 * that have it innermost (few: a zone's stacks) */
	for (i = 0; i < s->n; i++) {
		const struct pc_stack *st = &s->st[i];
		__u64 n = 0;

		if (!st->path[0] || strcmp(innermost_zone(st->path), zone))
			continue;
		in += st->count;
		if (!st->nframes)
			continue;
		for (j = 0; j < s->n; j++) {
			const struct pc_stack *o = &s->st[j];

			if (o->path[0] && o->nframes && !strcmp(innermost_zone(o->path), zone) &&
			    pc_frame_same(&o->f[0], &st->f[0]))
				n += o->count;
		}
		if (n > best_n) {
			best_n = n;
			best = &st->f[0];
		}
	}
	if (!best)
		return 0;
	if (best->file[0]) {
		const char *base = strrchr(best->file, '/');

		snprintf(buf, len, "%s (%s:%u) %.0f%%", fname(best), base ? base + 1 : best->file,
			 best->line, pct(best_n, in));
	} else {
		snprintf(buf, len, "%s %.0f%%", fname(best), pct(best_n, in));
	}
	return 1;
}

/* --- the JSON tree's "samples" and "inside" --------------------------------- */

#define JSON_INSIDE_MAX 16 /* lines a node lists, the most sampled first */

struct json_samples {
	struct prof_snapshot *const *snaps;
	struct pc_samples **by; /* by snapshot */
	size_t n;
};

/* node i's zone path as profd names it: site names, outermost first, US apart */
void pc_node_path(const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i,
		      char *buf, size_t len)
{
	__u32 chain[PROF_SNAP_DEPTH_MAX], d = 0;
	size_t off = 0;

	buf[0] = 0;
	while (i != 0 && i < t->nnodes && d < PROF_SNAP_DEPTH_MAX) {
		chain[d++] = i;
		i = t->nodes[i].parent;
	}
	while (d-- > 0) {
		const struct prof_snap_node *n = &t->nodes[chain[d]];
		const char *name = n->site < s->nsites ? s->sites[n->site].name : "[overflow]";
		int w = snprintf(buf + off, len - off, "%s%s", off ? "\x1f" : "", name);

		if (w < 0 || (size_t)w >= len - off)
			return;
		off += (size_t)w;
	}
}

/* a stack of t sampled while the zone of path was the innermost open: a
 * thread's own; a merged view (tid 0) takes every thread's, the exited
 * threads' aggregate none (their samples are not kept apart) */
const char *pc_node_func(const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i)
{
	const struct prof_snap_node *n = &t->nodes[i];

	return n->site < s->nsites ? s->sites[n->site].func : NULL;
}

__u64 pc_node_samples(const struct pc_samples *sm, const struct prof_snap_thread *t,
		      const char *path)
{
	__u64 in = 0;
	size_t k;

	for (k = 0; k < sm->n; k++)
		if (sm->st[k].nframes && pc_stack_of(&sm->st[k], t, path))
			in += sm->st[k].count;
	return in;
}

__u32 pc_stack_top(const struct pc_stack *st, const char *func)
{
	__u32 j;

	/* not on the stack (a frameless leaf hides its caller, or no frame
	 * pointers): the innermost frame alone, never a chain that skips
	 * frames */
	for (j = 0; func && func[0] && j < st->nframes; j++)
		if (!strcmp(st->f[j].func, func))
			return j + 1;
	return st->nframes ? 1 : 0;
}

bool pc_stack_of(const struct pc_stack *st, const struct prof_snap_thread *t, const char *path)
{
	return !t->folds && (!t->tid || st->tid == t->tid) && !strcmp(st->path, path);
}

static void json_node_samples(void *arg, FILE *f, const struct prof_snapshot *s,
			      const struct prof_snap_thread *t, __u32 i)
{
	const struct json_samples *js = arg;
	const struct pc_samples *sm = NULL;
	struct row rows[JSON_INSIDE_MAX];
	char path[PROF_SNAP_DEPTH_MAX * 8];
	size_t k, r, nr = 0;
	__u64 in = 0;

	for (k = 0; k < js->n; k++)
		if (js->snaps[k] == s)
			sm = js->by[k];
	if (!sm)
		return;
	pc_node_path(s, t, i, path, sizeof(path));
	for (k = 0; k < sm->n; k++) {
		const struct pc_stack *st = &sm->st[k];

		if (!pc_stack_of(st, t, path))
			continue;
		in += st->count;
		if (!st->nframes)
			continue;
		for (r = 0; r < nr && !pc_frame_same(rows[r].f, &st->f[0]); r++)
			;
		if (r == nr) {
			if (nr == JSON_INSIDE_MAX) {
				/* the least sampled goes if this one is more */
				r = nr - 1;
				if (rows[r].self >= st->count)
					continue;
			} else {
				nr++;
			}
			rows[r] = (struct row){ .f = &st->f[0] };
		}
		rows[r].self += st->count;
		qsort(rows, nr, sizeof(*rows), cmp_row);
	}
	fprintf(f, ",\"samples\":%llu,\"inside\":[", (unsigned long long)in);
	for (r = 0; r < nr; r++) {
		fputs(r ? ",{\"func\":" : "{\"func\":", f);
		prof_json_fstr(f, rows[r].f->func[0] ? rows[r].f->func : rows[r].f->mod);
		fputs(",\"file\":", f);
		prof_json_fstr(f, rows[r].f->file);
		fprintf(f, ",\"line\":%u,\"samples\":%llu}", rows[r].f->line,
			(unsigned long long)rows[r].self);
	}
	fputc(']', f);
}

int pc_render_json_tree(FILE *f, struct prof_snapshot *const *snaps, size_t n,
			const struct pc_src *src)
{
	struct json_samples js = { .snaps = snaps, .n = n };
	struct prof_json_hook hook = { .node = json_node_samples, .arg = &js };
	bool any = false;
	size_t k;
	int err;

	/* only through profd (or from a saved file's): without it the tree is
	 * as it always was */
	if (src && (src->fd >= 0 || file_sm.text) && n) {
		js.by = calloc(n, sizeof(*js.by));
		for (k = 0; js.by && k < n; k++) {
			js.by[k] = pc_samples_get(src, (pid_t)snaps[k]->pid);
			any |= js.by[k] && js.by[k]->total;
		}
	}
	err = prof_report_json_hook(f, snaps, n, any ? &hook : NULL);
	for (k = 0; js.by && k < n; k++)
		pc_samples_free(js.by[k]);
	free(js.by);
	return err;
}

/* --- folded stacks: sampled frames below the zone ----------------------------- */

__u64 pc_samples_folded(struct prof_out *out, const struct pc_samples *sm,
			const struct prof_snapshot *s, const struct prof_snap_thread *t, __u32 i,
			const char *label, const char *path, __u64 self_ns, __u64 cpu_ns)
{
	const char *func = pc_node_func(s, t, i);
	char zpath[PROF_SNAP_DEPTH_MAX * 8], fr[512];
	__u64 in = 0, given = 0;
	size_t k;
	__u32 j, top;

	pc_node_path(s, t, i, zpath, sizeof(zpath));
	in = pc_node_samples(sm, t, zpath);
	if (!in || !cpu_ns)
		return self_ns;
	for (k = 0; k < sm->n; k++) {
		const struct pc_stack *st = &sm->st[k];
		__u64 share;

		if (!st->nframes || !pc_stack_of(st, t, zpath))
			continue;
		share = (__u64)((double)cpu_ns * (double)st->count / (double)in);
		if (!share)
			continue;
		top = pc_stack_top(st, func);
		if (label) {
			prof_out_write(out, label, strlen(label));
			prof_out_write(out, ";", 1);
		}
		prof_out_write(out, path, strlen(path));
		/* outermost first, from the function the zone is in */
		for (j = top; j-- > 0;) {
			snprintf(fr, sizeof(fr), ";%s", fname(&st->f[j]));
			pc_folded_safe(fr + 1, true);
			prof_out_write(out, fr, strlen(fr));
		}
		prof_out_printf(out, " %llu\n", (unsigned long long)share);
		given += share;
	}
	return self_ns > given ? self_ns - given : 0;
}

/* --- the html page: sampled frames as nodes below their zone ---------------- */

void pc_html_rows_free(struct pc_html_rows *x)
{
	size_t k;

	for (k = 0; k < x->n; k++)
		free(x->r[k].name);
	free(x->r);
	free(x->given);
	memset(x, 0, sizeof(*x));
}

/* the row of name under parent, made if new; its index in x->r, or -1 */
static long html_row(struct pc_html_rows *x, __u32 parent, const char *name)
{
	size_t k;

	for (k = 0; k < x->n; k++)
		if (x->r[k].parent == parent && !strcmp(x->r[k].name, name))
			return (long)k;
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		void *r = realloc(x->r, cap * sizeof(*x->r));

		if (!r)
			return -1;
		x->r = r;
		x->cap = cap;
	}
	x->r[x->n] = (struct pc_html_row){ .parent = parent, .name = strdup(name) };
	if (!x->r[x->n].name)
		return -1;
	return (long)x->n++;
}

int pc_samples_html(const struct pc_samples *sm, const struct prof_snapshot *s,
		    const struct prof_snap_thread *t, const __u64 *oncpu, struct pc_html_rows *x)
{
	char path[PROF_SNAP_DEPTH_MAX * 8], name[512];
	__u32 i, j;
	size_t k;

	memset(x, 0, sizeof(*x));
	if (!sm || !sm->total)
		return 0;
	x->given = calloc(t->nnodes ? t->nnodes : 1, sizeof(*x->given));
	if (!x->given)
		return -ENOMEM;
	for (i = 1; i < t->nnodes; i++) {
		const char *func = pc_node_func(s, t, i);
		__u64 self = prof_snap_ns(s, prof_snap_self(&t->nodes[i]));
		__u64 cpu = prof_snap_self_oncpu(t, oncpu, i), in = 0;

		if (cpu == PROF_SNAP_UNKNOWN || cpu > self)
			cpu = self;
		pc_node_path(s, t, i, path, sizeof(path));
		in = pc_node_samples(sm, t, path);
		for (k = 0; in && cpu && k < sm->n; k++) {
			const struct pc_stack *st = &sm->st[k];
			__u64 share = (__u64)((double)cpu * (double)st->count / (double)in);
			__u32 parent = i, top;
			long r = -1;

			if (!st->nframes || !share || !pc_stack_of(st, t, path))
				continue;
			/* from the zone's function down: "f()", the innermost
			 * "f() file:line" */
			top = pc_stack_top(st, func);
			for (j = top; j-- > 0;) {
				const struct pc_frame *f = &st->f[j];
				const char *base = strrchr(f->file, '/');

				if (j || !f->file[0])
					snprintf(name, sizeof(name), "%s%s", fname(f),
						 f->func[0] ? "()" : "");
				else
					snprintf(name, sizeof(name), "%s() %s:%u", fname(f),
						 base ? base + 1 : f->file, f->line);
				r = html_row(x, parent, name);
				if (r < 0)
					return -ENOMEM;
				x->r[r].total += share;
				parent = t->nnodes + (__u32)r;
			}
			x->r[r].self += share;
			x->given[i] += share;
		}
	}
	return 0;
}
