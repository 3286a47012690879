// SPDX-License-Identifier: MIT
/*
 * profctl_pprof.c - `report --format pprof`: the call trees as a gzipped
 * pprof profile (daemon/profile.proto, encoded by protobuf-c, gzipped by
 * zlib), for go tool pprof, Pyroscope, Parca, Grafana.
 *
 * One sample per call-tree node (not the root) with a call or time (a call
 * still open, 0 calls, has its time so far), its stack the zones from the
 * node up, leaf first.  pprof adds a sample's values to its leaf for
 * "flat" and to every frame of its stack for "cum", so a node's sample
 * carries its own part: calls, wall self time (flat: self, cum: total,
 * as profctl's tree has them) and, with profd, on-CPU self time
 * (prof_snap_self_oncpu), all in nanoseconds.  Each zone site is a
 * function (the zone's name, its C function as the system name, file,
 * line) and a location.  Samples are labelled with the pid, tid and
 * thread name; a sample has no way to say a value is unknown, so one
 * whose on-CPU time nobody knows (no kernel facts) has cpu 0 and the label
 * oncpu="unknown", which -tagignore leaves out.
 *
 * Through profd with sampled stacks, a node's on-CPU self time is shared
 * out among the stacks sampled in its zone (as folded stacks do): each is
 * a sample of its own whose stack is the sampled frames (leaf first, down
 * to the zone's function, each a location with its file and line) above
 * the zones, with its share as wall and cpu time and no calls; the node's
 * own sample keeps the rest (its time off the CPU).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "profctl.h"
#include "profctl_samples.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__ValueType pb_valuetype;

#define NLABELS 4 /* pid, tid, thread, and oncpu where unknown */

struct pp_sample {
	size_t stack_off, depth;
	int64_t v[3];
	int64_t pid, tid, thread; /* label values: num, num, string index */
	bool cpu_unknown;	  /* v[2] is no fact: label oncpu="unknown" */
};

/* everything the message points to, freed at once */
struct pp {
	pb_profile prof;
	char **str;
	size_t nstr, capstr;
	pb_sample *samples;
	pb_sample **sample_ptrs;
	pb_location *locs;
	pb_location **loc_ptrs;
	pb_line *lines;
	pb_line **line_ptrs;
	pb_function *funcs;
	pb_function **func_ptrs;
	size_t nlocs, caplocs;
	pb_valuetype types[3], *type_ptrs[3];
	pb_label *labels; /* NLABELS per sample */
	pb_label **label_ptrs;
	int64_t *values; /* n_sample_type per sample */
	uint64_t *stack; /* every sample's locations, one pool */
	size_t nstack, capstack;
	int64_t comment[2];    /* what it is; the first process's stack sampling */
	struct pp_sample *spl; /* the samples as built, linked at the end */
	size_t nspl, capspl;
	const struct pc_frame **fr; /* the sampled frames' locations, from frbase */
	size_t frbase;
};

/* a string's index; strings are few (sites, threads), no dedup but "" */
static int64_t pp_str(struct pp *p, const char *s)
{
	if (!s[0] && p->nstr)
		return 0;
	if (p->nstr == p->capstr) {
		size_t cap = p->capstr ? p->capstr * 2 : 64;
		char **v = realloc(p->str, cap * sizeof(*v));

		if (!v)
			return -1;
		p->str = v;
		p->capstr = cap;
	}
	p->str[p->nstr] = strdup(s);
	if (!p->str[p->nstr])
		return -1;
	return (int64_t)p->nstr++;
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 256;
	void *n;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*v, c * size);
	if (!n)
		return -ENOMEM;
	*v = n;
	*cap = c;
	return 0;
}

/* the locations and functions of one process's sites, ids from base + 1;
 * the last one is [overflow] */
/* room for need locations, each with its line and function */
static int pp_room(struct pp *p, size_t need)
{
	size_t cap;
	void *a, *b, *c;

	if (grow((void **)&p->locs, &p->caplocs, need, sizeof(*p->locs)))
		return -ENOMEM;
	/* the parallel arrays grow with it */
	cap = p->caplocs;
	a = realloc(p->lines, cap * sizeof(*p->lines));
	if (a)
		p->lines = a;
	b = a ? realloc(p->funcs, cap * sizeof(*p->funcs)) : NULL;
	if (b)
		p->funcs = b;
	c = b ? realloc(p->fr, cap * sizeof(*p->fr)) : NULL;
	if (c)
		p->fr = c;
	return a && b && c ? 0 : -ENOMEM;
}

static int pp_sites(struct pp *p, const struct prof_snapshot *s)
{
	size_t need = p->nlocs + s->nsites + 1, i;

	if (pp_room(p, need))
		return -ENOMEM;
	for (i = 0; i <= s->nsites; i++) {
		size_t k = p->nlocs + i;
		const struct prof_snap_site *site = i < s->nsites ? &s->sites[i] : NULL;
		pb_function *fn = &p->funcs[k];
		pb_line *ln = &p->lines[k];
		pb_location *loc = &p->locs[k];

		perftools__profiles__function__init(fn);
		perftools__profiles__line__init(ln);
		perftools__profiles__location__init(loc);
		fn->id = k + 1;
		fn->name = pp_str(p, site ? site->name : "[overflow]");
		fn->system_name = pp_str(p, site ? site->func : "");
		fn->filename = pp_str(p, site ? site->file : "");
		fn->start_line = site ? site->line : 0;
		if (fn->name < 0 || fn->system_name < 0 || fn->filename < 0)
			return -ENOMEM;
		ln->function_id = fn->id;
		ln->line = fn->start_line;
		loc->id = k + 1;
		/* pointers are set once every array has its final place */
		loc->n_line = 1;
	}
	p->nlocs = need;
	p->frbase = need;
	return 0;
}

/* a sampled frame's location id: one per distinct frame of the process */
static int64_t pp_frame(struct pp *p, const struct pc_frame *f)
{
	size_t k;
	pb_function *fn;
	pb_line *ln;

	for (k = p->frbase; k < p->nlocs; k++)
		if (pc_frame_same(p->fr[k], f))
			return (int64_t)k + 1;
	if (pp_room(p, p->nlocs + 1))
		return -1;
	k = p->nlocs;
	fn = &p->funcs[k];
	ln = &p->lines[k];
	perftools__profiles__function__init(fn);
	perftools__profiles__line__init(ln);
	perftools__profiles__location__init(&p->locs[k]);
	fn->id = k + 1;
	fn->name = pp_str(p, f->func[0] ? f->func : f->mod);
	fn->system_name = pp_str(p, f->func);
	fn->filename = pp_str(p, f->file);
	if (fn->name < 0 || fn->system_name < 0 || fn->filename < 0)
		return -1;
	ln->function_id = fn->id;
	ln->line = f->line;
	p->locs[k].id = k + 1;
	p->locs[k].n_line = 1;
	p->fr[k] = f;
	p->nlocs++;
	return (int64_t)k + 1;
}

/* node i's stacks sampled in its zone, each a sample with its share of
 * cpu_ns above the node's zone stack (at zstack, depth zdepth); what was
 * given out, or -ENOMEM */
static int64_t pp_node_samples(struct pp *p, const struct pc_samples *sm,
			       const struct prof_snapshot *s, const struct prof_snap_thread *t,
			       __u32 i, size_t zstack, size_t zdepth, const struct pp_sample *node,
			       __u64 cpu_ns)
{
	const char *func = pc_node_func(s, t, i);
	char path[PROF_SNAP_DEPTH_MAX * 8];
	__u64 in = 0, given = 0;
	size_t k;

	pc_node_path(s, t, i, path, sizeof(path));
	in = pc_node_samples(sm, t, path);
	for (k = 0; in && cpu_ns && k < sm->n; k++) {
		const struct pc_stack *st = &sm->st[k];
		__u64 share = (__u64)((double)cpu_ns * (double)st->count / (double)in);
		__u32 top = pc_stack_top(st, func), j;
		struct pp_sample *x;

		if (!st->nframes || !share || !pc_stack_of(st, t, path))
			continue;
		if (grow((void **)&p->spl, &p->capspl, p->nspl + 1, sizeof(*p->spl)) ||
		    grow((void **)&p->stack, &p->capstack, p->nstack + top + zdepth,
			 sizeof(*p->stack)))
			return -ENOMEM;
		x = &p->spl[p->nspl++];
		*x = *node;
		x->stack_off = p->nstack;
		x->depth = top + zdepth;
		for (j = 0; j < top; j++) {
			int64_t id = pp_frame(p, &st->f[j]);

			if (id < 0)
				return -ENOMEM;
			p->stack[p->nstack++] = (uint64_t)id;
		}
		/* the zones above: the node's own stack (the pool may have moved) */
		memmove(&p->stack[p->nstack], &p->stack[zstack], zdepth * sizeof(*p->stack));
		p->nstack += zdepth;
		x->v[0] = 0;
		x->v[1] = (int64_t)share;
		x->v[2] = (int64_t)share;
		x->cpu_unknown = false;
		given += share;
	}
	return (int64_t)given;
}

static int pp_thread(struct pp *p, const struct prof_snapshot *s, const struct prof_snap_thread *t,
		     size_t locbase, int ntypes, const struct pc_samples *sm)
{
	char label[64];
	int64_t name;
	__u64 *cpu = NULL;
	__u32 i, j;

	prof_snap_thread_label(t, label, sizeof(label));
	name = pp_str(p, label);
	if (name < 0)
		return -ENOMEM;
	/* on-CPU time as profctl's tree has it (nested: self never below 0) */
	if (ntypes > 2) {
		cpu = malloc((t->nnodes ? t->nnodes : 1) * sizeof(*cpu));
		if (!cpu || prof_snap_oncpu(s, t, cpu)) {
			free(cpu);
			return -ENOMEM;
		}
	}
	for (i = 1; i < t->nnodes; i++) {
		const struct prof_snap_node *n = &t->nodes[i];
		struct pp_sample *x;
		size_t depth = 0;

		/* a path whose only call is still open has time: a sample */
		if (prof_snap_node_hidden(t, i) || (!n->calls && !n->ticks))
			continue;
		for (j = i; j && depth <= t->nnodes; j = t->nodes[j].parent)
			depth++;
		if (grow((void **)&p->spl, &p->capspl, p->nspl + 1, sizeof(*p->spl)) ||
		    grow((void **)&p->stack, &p->capstack, p->nstack + depth, sizeof(*p->stack))) {
			free(cpu);
			return -ENOMEM;
		}
		x = &p->spl[p->nspl++];
		x->stack_off = p->nstack;
		x->depth = 0;
		/* leaf first; the reader made parent links end at the root */
		for (j = i; j && x->depth < depth; j = t->nodes[j].parent) {
			__u32 site = t->nodes[j].site;

			p->stack[p->nstack++] = locbase + (site < s->nsites ? site : s->nsites) + 1;
			x->depth++;
		}
		x->v[0] = (int64_t)n->calls;
		x->v[1] = (int64_t)prof_snap_ns(s, prof_snap_self(n));
		x->cpu_unknown = false;
		if (cpu) {
			__u64 self = prof_snap_self_oncpu(t, cpu, i);

			x->cpu_unknown = self == PROF_SNAP_UNKNOWN;
			x->v[2] = x->cpu_unknown ? 0 : (int64_t)self;
		}
		x->pid = s->pid;
		x->tid = t->tid;
		x->thread = name;
		if (sm && sm->total) {
			/* the node's on-CPU self time (its wall self if unknown)
			 * to the stacks sampled in it */
			struct pp_sample node = *x;
			size_t at = (size_t)(x - p->spl);
			__u64 wall = (__u64)x->v[1];
			__u64 c = cpu && !x->cpu_unknown && (__u64)x->v[2] < wall ? (__u64)x->v[2]
										 : wall;
			int64_t given = pp_node_samples(p, sm, s, t, i, node.stack_off, node.depth,
							&node, c);

			if (given < 0) {
				free(cpu);
				return -ENOMEM;
			}
			x = &p->spl[at];
			x->v[1] -= given;
			if (cpu && !x->cpu_unknown)
				x->v[2] = x->v[2] > given ? x->v[2] - given : 0;
		}
	}
	free(cpu);
	return 0;
}

static void pp_free(struct pp *p)
{
	size_t i;

	for (i = 0; i < p->nstr; i++)
		free(p->str[i]);
	free(p->str);
	free(p->samples);
	free(p->sample_ptrs);
	free(p->locs);
	free(p->loc_ptrs);
	free(p->lines);
	free(p->line_ptrs);
	free(p->funcs);
	free(p->func_ptrs);
	free(p->labels);
	free(p->label_ptrs);
	free(p->values);
	free(p->stack);
	free(p->spl);
	free(p->fr);
}

/* every pointer of the message, once the arrays stop moving */
static int pp_link(struct pp *p, int ntypes, int64_t k_pid, int64_t k_tid, int64_t k_thread,
		   int64_t k_oncpu, int64_t v_unknown)
{
	size_t i;

	p->samples = calloc(p->nspl ? p->nspl : 1, sizeof(*p->samples));
	p->sample_ptrs = calloc(p->nspl ? p->nspl : 1, sizeof(*p->sample_ptrs));
	p->labels = calloc((p->nspl ? p->nspl : 1) * NLABELS, sizeof(*p->labels));
	p->label_ptrs = calloc((p->nspl ? p->nspl : 1) * NLABELS, sizeof(*p->label_ptrs));
	p->values = calloc((p->nspl ? p->nspl : 1) * (size_t)ntypes, sizeof(*p->values));
	p->loc_ptrs = calloc(p->nlocs ? p->nlocs : 1, sizeof(*p->loc_ptrs));
	p->line_ptrs = calloc(p->nlocs ? p->nlocs : 1, sizeof(*p->line_ptrs));
	p->func_ptrs = calloc(p->nlocs ? p->nlocs : 1, sizeof(*p->func_ptrs));
	if (!p->samples || !p->sample_ptrs || !p->labels || !p->label_ptrs || !p->values ||
	    !p->loc_ptrs || !p->line_ptrs || !p->func_ptrs)
		return -ENOMEM;
	for (i = 0; i < p->nlocs; i++) {
		p->line_ptrs[i] = &p->lines[i];
		p->locs[i].line = &p->line_ptrs[i];
		p->loc_ptrs[i] = &p->locs[i];
		p->func_ptrs[i] = &p->funcs[i];
	}
	for (i = 0; i < p->nspl; i++) {
		pb_sample *x = &p->samples[i];
		pb_label *l = &p->labels[i * NLABELS];
		int k;

		perftools__profiles__sample__init(x);
		x->n_location_id = p->spl[i].depth;
		x->location_id = p->stack + p->spl[i].stack_off;
		x->n_value = (size_t)ntypes;
		x->value = p->values + i * (size_t)ntypes;
		for (k = 0; k < ntypes; k++)
			x->value[k] = p->spl[i].v[k];
		for (k = 0; k < NLABELS; k++) {
			perftools__profiles__label__init(&l[k]);
			p->label_ptrs[i * NLABELS + k] = &l[k];
		}
		l[0].key = k_pid;
		l[0].num = p->spl[i].pid;
		l[1].key = k_tid;
		l[1].num = p->spl[i].tid;
		l[2].key = k_thread;
		l[2].str = p->spl[i].thread;
		l[3].key = k_oncpu;
		l[3].str = v_unknown;
		x->n_label = p->spl[i].cpu_unknown ? 4 : 3;
		x->label = &p->label_ptrs[i * NLABELS];
		p->sample_ptrs[i] = x;
	}
	p->prof.n_sample = p->nspl;
	p->prof.sample = p->sample_ptrs;
	p->prof.n_location = p->nlocs;
	p->prof.location = p->loc_ptrs;
	p->prof.n_function = p->nlocs;
	p->prof.function = p->func_ptrs;
	p->prof.n_string_table = p->nstr;
	p->prof.string_table = p->str;
	return 0;
}

/* buf as gzip on f */
static int gzip_out(FILE *f, const uint8_t *buf, size_t len)
{
	unsigned char out[1 << 16];
	z_stream z;
	int zr, err = 0;

	memset(&z, 0, sizeof(z));
	/* 16 + 15: a gzip header and trailer around a 32 KB window */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			err = -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

int pc_render_pprof(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o)
{
	struct pp p;
	int64_t k_pid, k_tid, k_thread, k_oncpu, v_unknown;
	uint8_t *buf = NULL;
	size_t i, len;
	int ntypes = 2, err = -ENOMEM;
	char comment[160], state[PC_SAMPLES_STATE_MAX + 16] = "stack samples: ";

	/* a uInt holds what deflate takes in one go */
	memset(&p, 0, sizeof(p));
	perftools__profiles__profile__init(&p.prof);
	if (pp_str(&p, "") < 0)
		goto cleanup;
	for (i = 0; i < n; i++)
		if (prof_snap_any_sched(snaps[i]))
			ntypes = 3;
	{
		static const char *const names[3][2] = { { "calls", "count" },
							 { "wall", "nanoseconds" },
							 { "cpu", "nanoseconds" } };
		int k;

		for (k = 0; k < ntypes; k++) {
			perftools__profiles__value_type__init(&p.types[k]);
			p.types[k].type = pp_str(&p, names[k][0]);
			p.types[k].unit = pp_str(&p, names[k][1]);
			p.type_ptrs[k] = &p.types[k];
			/* a string not kept: index -1, a profile pprof cannot read */
			if (p.types[k].type < 0 || p.types[k].unit < 0)
				goto cleanup;
		}
		p.prof.n_sample_type = (size_t)ntypes;
		p.prof.sample_type = p.type_ptrs;
		/* pprof shows wall time unless told otherwise */
		p.prof.default_sample_type = p.types[1].type;
	}
	k_pid = pp_str(&p, "pid");
	k_tid = pp_str(&p, "tid");
	k_thread = pp_str(&p, "thread");
	k_oncpu = pp_str(&p, "oncpu");
	v_unknown = pp_str(&p, "unknown");
	if (k_pid < 0 || k_tid < 0 || k_thread < 0 || k_oncpu < 0 || v_unknown < 0)
		goto cleanup;
	for (i = 0; i < n; i++) {
		const struct prof_snapshot *s = snaps[i];
		size_t base = p.nlocs;

		struct prof_snap_iter it = PROF_SNAP_ITER(s, 0);
		const struct prof_snap_thread *t;
		/* through profd: its sampled stacks above their zones */
		struct pc_samples *sm = o->samples_src ? pc_samples_get(o->samples_src, (pid_t)s->pid)
						       : NULL;

		err = pp_sites(&p, s);
		while (!err && (t = prof_snap_next(&it)))
			err = pp_thread(&p, s, t, base, ntypes, sm);
		/* whether stacks are sampled, or why not (pprof -comments) */
		if (i == 0 && o->samples_src)
			/* sm NULL (out of memory) says so, as JSON's state does */
			pc_samples_state(sm, state + strlen(state), sizeof(state) - strlen(state));
		if (!err)
			err = it.err;
		pc_samples_free(sm);
		if (err)
			goto cleanup;
		if (i == 0) {
			p.prof.time_nanos = (int64_t)s->created_ns;
			p.prof.duration_nanos = (int64_t)s->span_ns;
		}
	}
	snprintf(comment, sizeof(comment), "profd: %zu process%s, first pid %u (%s)", n,
		 n == 1 ? "" : "es", n ? snaps[0]->pid : 0, n ? snaps[0]->comm : "");
	p.comment[0] = pp_str(&p, comment);
	p.comment[1] = pp_str(&p, state);
	if (p.comment[0] < 0 || p.comment[1] < 0) {
		/* err is the threads' (0) by now */
		err = -ENOMEM;
		goto cleanup;
	}
	p.prof.n_comment = state[strlen("stack samples: ")] ? 2 : 1;
	p.prof.comment = p.comment;
	p.prof.period_type = &p.types[1];
	p.prof.period = 1;
	err = pp_link(&p, ntypes, k_pid, k_tid, k_thread, k_oncpu, v_unknown);
	if (err)
		goto cleanup;
	len = perftools__profiles__profile__get_packed_size(&p.prof);
	if (len > 0xffffffffu) {
		err = -EFBIG;
		goto cleanup;
	}
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	perftools__profiles__profile__pack(&p.prof, buf);
	err = gzip_out(f, buf, len);
	if (!err && ferror(f))
		err = -EIO;
cleanup:
	free(buf);
	pp_free(&p);
	return err;
}
