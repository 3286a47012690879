// SPDX-License-Identifier: MIT
/*
 * report_load.c - a JSON tree report read back into a snapshot (jansson).
 * See report_load.h.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "fmt.h"
#include "report_load.h"

/* what a report nests: its own 256 levels of zones, then thread, process */
#define LOAD_DEPTH_MAX (PROF_SNAP_DEPTH_MAX + 1)

struct ld {
	struct prof_snapshot *s;
	char *why;
	size_t whylen;
	__u32 *site_tab; /* open addressing, site index + 1, 0 empty */
	__u32 site_cap;	 /* a power of 2 */
	__u32 site_max;	 /* the sites array's room */
	size_t hist_cap;
	__u32 tid; /* the thread being read, for messages */
};

__attribute__((format(printf, 2, 3))) static int bad(struct ld *L, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* one line, whatever a name it quotes holds */
	prof_fmt_name(msg, sizeof(msg), msg);
	if (L->tid)
		snprintf(L->why, L->whylen, "corrupt JSON report: thread %u: %s", L->tid, msg);
	else
		snprintf(L->why, L->whylen, "corrupt JSON report: %s", msg);
	return -EINVAL;
}

static int nomem(struct ld *L)
{
	snprintf(L->why, L->whylen, "out of memory reading the JSON report");
	return -ENOMEM;
}

/* a count: a non-negative integer */
static int get_u64(struct ld *L, const json_t *o, const char *key, __u64 *v)
{
	const json_t *j = json_object_get(o, key);

	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return bad(L, "\"%s\" %s", key, j ? "is not a count" : "is missing");
	*v = (__u64)json_integer_value(j);
	return 0;
}

static int get_u32(struct ld *L, const json_t *o, const char *key, __u32 *v)
{
	__u64 x;
	int err = get_u64(L, o, key, &x);

	if (err)
		return err;
	if (x > 0xffffffffu)
		return bad(L, "\"%s\" is too big", key);
	*v = (__u32)x;
	return 0;
}

/* several counts of o, each key into its place; the first missing or bad
 * one refused */
struct u64_key {
	const char *key;
	__u64 *v;
};

static int get_u64s(struct ld *L, const json_t *o, const struct u64_key *keys, size_t n)
{
	size_t k;
	int err = 0;

	for (k = 0; !err && k < n; k++)
		err = get_u64(L, o, keys[k].key, keys[k].v);
	return err;
}

/* a string that is one of two words, a or b: *is_b says which */
static int get_either(struct ld *L, const json_t *o, const char *key, const char *a, const char *b,
		      bool *is_b)
{
	const json_t *j = json_object_get(o, key);

	if (!json_is_string(j) ||
	    (strcmp(json_string_value(j), a) && strcmp(json_string_value(j), b)))
		return bad(L, "\"%s\" is not \"%s\" or \"%s\"", key, a, b);
	*is_b = !strcmp(json_string_value(j), b);
	return 0;
}

/* a string that fits in len bytes with its NUL, without a NUL in it */
static int get_str(struct ld *L, const json_t *o, const char *key, char *out, size_t len)
{
	const json_t *j = json_object_get(o, key);
	size_t n;

	if (!json_is_string(j))
		return bad(L, "\"%s\" %s", key, j ? "is not a string" : "is missing");
	n = json_string_length(j);
	if (n >= len || memchr(json_string_value(j), '\0', n))
		return bad(L, "\"%s\" is longer than %zu bytes", key, len - 1);
	memcpy(out, json_string_value(j), n);
	out[n] = '\0';
	return 0;
}

static int get_bool(struct ld *L, const json_t *o, const char *key, bool *v)
{
	const json_t *j = json_object_get(o, key);

	if (!json_is_boolean(j))
		return bad(L, "\"%s\" %s", key, j ? "is not true or false" : "is missing");
	*v = json_is_true(j);
	return 0;
}

/*
 * ns back to ticks: the ticks whose prof_snap_ns is ns, so that what the
 * report said of a node it says again (at a rate above 1 GHz every ns has
 * some; otherwise the nearest)
 */
static __u64 ticks_of(const struct prof_snapshot *s, __u64 ns)
{
	long double t;
	__u64 t0;
	int d;

	if (s->tick_hz == 1000000000ull)
		return ns;
	t = (long double)ns * (long double)s->tick_hz / 1e9L;
	t0 = t >= 1.8e19L ? ~0ull - 2 : (__u64)(t + 0.5L);
	for (d = -2; d <= 2; d++) {
		__u64 c = t0 + (__u64)(__s64)d;

		if ((d < 0 && t0 < (__u64)-d) || (d > 0 && c < t0))
			continue;
		if (prof_snap_ns(s, c) == ns)
			return c;
	}
	return t0;
}

static __u64 hash_site(const struct prof_snap_site *x)
{
	const char *parts[3] = { x->name, x->file, x->func };
	__u64 h = 0xcbf29ce484222325ull ^ x->line;
	int k;

	for (k = 0; k < 3; k++) {
		const unsigned char *p = (const unsigned char *)parts[k];

		for (; *p; p++)
			h = (h ^ *p) * 0x100000001b3ull;
		h = (h ^ 0xff) * 0x100000001b3ull;
	}
	return h;
}

static bool same_site(const struct prof_snap_site *a, const struct prof_snap_site *b)
{
	return a->line == b->line && !strcmp(a->name, b->name) && !strcmp(a->file, b->file) &&
	       !strcmp(a->func, b->func);
}

static int site_rehash(struct ld *L, __u32 cap)
{
	__u32 *tab = calloc(cap, sizeof(*tab)), i;

	if (!tab)
		return nomem(L);
	for (i = 0; i < L->s->nsites; i++) {
		__u32 h = (__u32)hash_site(&L->s->sites[i]) & (cap - 1);

		while (tab[h])
			h = (h + 1) & (cap - 1);
		tab[h] = i + 1;
	}
	free(L->site_tab);
	L->site_tab = tab;
	L->site_cap = cap;
	return 0;
}

/* room in the sites array for one more; 0 or -ENOMEM */
static int site_room(struct ld *L)
{
	struct prof_snapshot *s = L->s;
	struct prof_snap_site *v;
	__u32 max;

	if (s->nsites < L->site_max)
		return 0;
	max = L->site_max ? L->site_max * 2 : 64;
	v = realloc(s->sites, (size_t)max * sizeof(*v));
	if (!v)
		return nomem(L);
	s->sites = v;
	L->site_max = max;
	return 0;
}

/* the index of the site x names, added if new */
static int site_of(struct ld *L, const struct prof_snap_site *x, __u32 *idx)
{
	struct prof_snapshot *s = L->s;
	__u32 h;
	int err;

	if ((s->nsites + 1) * 2 > L->site_cap) {
		if (L->site_cap >= (1u << 30))
			return bad(L, "too many zones");
		err = site_rehash(L, L->site_cap ? L->site_cap * 2 : 64);
		if (err)
			return err;
	}
	h = (__u32)hash_site(x) & (L->site_cap - 1);
	for (; L->site_tab[h]; h = (h + 1) & (L->site_cap - 1)) {
		if (same_site(&s->sites[L->site_tab[h] - 1], x)) {
			*idx = L->site_tab[h] - 1;
			return 0;
		}
	}
	if (site_room(L))
		return -ENOMEM;
	s->sites[s->nsites] = *x;
	L->site_tab[h] = s->nsites + 1;
	*idx = s->nsites++;
	return 0;
}

/* a node's histogram into the pool: "hist_lo" and the buckets from it */
static int load_hist(struct ld *L, const json_t *jn, struct prof_snap_node *n)
{
	struct prof_snapshot *s = L->s;
	const json_t *jh = json_object_get(jn, "hist");
	size_t i, nb;
	__u32 *v;
	__u32 lo = 0;
	int err;

	if (!jh) {
		if (!n->calls)
			return 0;
		snprintf(L->why, L->whylen,
			 "a JSON report without histograms (written before they were added): "
			 "its percentiles are unknown; report the process again, or use "
			 "`profctl save`");
		return -EPROTO;
	}
	if (!json_is_array(jh))
		return bad(L, "\"hist\" is not a list");
	err = get_u32(L, jn, "hist_lo", &lo);
	if (err)
		return err;
	nb = json_array_size(jh);
	if (lo > PROF_HIST_BUCKETS || nb > PROF_HIST_BUCKETS - lo)
		return bad(L, "\"hist\" goes past bucket %u", PROF_HIST_BUCKETS - 1);
	v = prof_grow_to(s->hist, s->nhist + nb, &L->hist_cap, sizeof(*v), 4096);
	if (!v)
		return nomem(L);
	s->hist = v;
	for (i = 0; i < nb; i++) {
		const json_t *c = json_array_get(jh, i);

		if (!json_is_integer(c) || json_integer_value(c) < 0 ||
		    json_integer_value(c) > 0xffffffffll)
			return bad(L, "a \"hist\" bucket is not a count");
		s->hist[s->nhist + i] = (__u32)json_integer_value(c);
	}
	n->hist_lo = lo;
	n->hist_n = (__u32)nb;
	n->hist_off = s->nhist;
	s->nhist += nb;
	return 0;
}

/* nodes a list of them holds, their children too; checks the shape */
static int count_nodes(struct ld *L, const json_t *list, __u32 depth, __u64 *n)
{
	size_t i;
	int err;

	if (!json_is_array(list))
		return bad(L, "\"%s\" is not a list", depth ? "children" : "nodes");
	if (depth >= LOAD_DEPTH_MAX)
		return bad(L, "zones nested more than %u deep", LOAD_DEPTH_MAX);
	for (i = 0; i < json_array_size(list); i++) {
		const json_t *jn = json_array_get(list, i);

		if (!json_is_object(jn))
			return bad(L, "a node is not an object");
		if (++*n >= 0xfffffff0u)
			return bad(L, "too many nodes");
		err = count_nodes(L, json_object_get(jn, "children"), depth + 1, n);
		if (err)
			return err;
	}
	return 0;
}

#define COUNT_KEY(f, unit, across, window, flat, slab, key) key,
static const char *const node_counts[] = { PROF_NODE_COUNTS(COUNT_KEY) };
#undef COUNT_KEY

static int load_node(struct ld *L, struct prof_snap_thread *t, const json_t *jn, __u32 i,
		     __u32 parent, __u32 depth, __u32 *next);

/* the nodes of a list as children of parent, linked in the list's order */
static int load_list(struct ld *L, struct prof_snap_thread *t, const json_t *list, __u32 parent,
		     __u32 depth, __u32 *next)
{
	__u32 prev = PROF_SNAP_NONE, k;
	size_t i;
	int err;

	/* the root's first child is the overflow node, in the report only
	 * when something landed there */
	if (!parent)
		prev = 1;
	for (i = 0; i < json_array_size(list); i++) {
		const json_t *jn = json_array_get(list, i);
		const json_t *name = json_object_get(jn, "name");
		bool ovf = !parent && !i && json_is_string(name) &&
			   !strcmp(json_string_value(name), "[overflow]");

		k = ovf ? 1 : (*next)++;
		err = load_node(L, t, jn, k, parent, depth, next);
		if (err)
			return err;
		if (ovf)
			continue;
		if (prev == PROF_SNAP_NONE)
			t->nodes[parent].first_child = k;
		else
			t->nodes[prev].next_sibling = k;
		prev = k;
	}
	return 0;
}

static int load_node(struct ld *L, struct prof_snap_thread *t, const json_t *jn, __u32 i,
		     __u32 parent, __u32 depth, __u32 *next)
{
	const struct prof_snapshot *s = L->s;
	struct prof_snap_node *n = &t->nodes[i];
	struct prof_snap_site site;
#define COUNT_FIELD(f, unit, across, window, flat, slab, key) &n->f,
	__u64 *counts[] = { PROF_NODE_COUNTS(COUNT_FIELD) };
#undef COUNT_FIELD
	__u64 open = 0, total = 0, self = 0, open_ns = 0, max = 0;
	const struct u64_key times[] = {
		{ "open", &open },    { "open_ns", &open_ns }, { "total_ns", &total },
		{ "self_ns", &self }, { "max_ns", &max },
	};
	size_t k;
	int err;

	memset(&site, 0, sizeof(site));
	err = get_str(L, jn, "name", site.name, sizeof(site.name));
	if (!err)
		err = get_str(L, jn, "file", site.file, sizeof(site.file));
	if (!err)
		err = get_u32(L, jn, "line", &site.line);
	/* "func" came with the histograms; a report without either is
	 * refused for its histograms */
	if (!err && json_object_get(jn, "func"))
		err = get_str(L, jn, "func", site.func, sizeof(site.func));
	for (k = 0; !err && k < sizeof(counts) / sizeof(counts[0]); k++)
		err = get_u64(L, jn, node_counts[k], counts[k]);
	if (!err)
		err = get_u64s(L, jn, times, sizeof(times) / sizeof(times[0]));
	if (err)
		return err;
	if (open > 1 || self > total || open_ns > total)
		return bad(L, "zone %s: open, self_ns or open_ns out of range", site.name);
	n->parent = parent;
	n->depth = depth;
	n->first_child = PROF_SNAP_NONE;
	n->next_sibling = PROF_SNAP_NONE;
	n->open = (__u32)open;
	n->ticks = ticks_of(s, total);
	n->child_ticks = n->ticks - ticks_of(s, self);
	if (n->child_ticks > n->ticks)
		n->child_ticks = 0;
	n->open_ticks = ticks_of(s, open_ns);
	n->max = ticks_of(s, max);
	if (i == 1) {
		n->site = PROF_SITE_NONE;
	} else {
		err = site_of(L, &site, &n->site);
		if (err)
			return err;
	}
	err = load_hist(L, jn, n);
	if (err)
		return err;
	return load_list(L, t, json_object_get(jn, "children"), i, depth + 1, next);
}

static int load_thread(struct ld *L, const json_t *jt, __u32 slab, struct prof_snap_thread *t)
{
	struct prof_snapshot *s = L->s;
	const json_t *j, *nodes = json_object_get(jt, "nodes");
	__u64 wall = 0, outside = 0, ft = 0, fm = 0, nn = 0;
	const struct u64_key counts[] = {
		{ "wall_ns", &wall },	      { "outside_ns", &outside },
		{ "overflow", &t->overflow }, { "unbalanced", &t->unbalanced },
		{ "frames", &t->frames },     { "frame_total_ns", &ft },
		{ "frame_max_ns", &fm },
	};
	__u32 next = 2;
	bool exited;
	int err;

	if (!json_is_object(jt))
		return bad(L, "a thread is not an object");
	err = get_u32(L, jt, "tid", &t->tid);
	if (err)
		return err;
	L->tid = t->tid;
	err = get_str(L, jt, "name", t->name, sizeof(t->name));
	if (!err)
		err = get_u64s(L, jt, counts, sizeof(counts) / sizeof(counts[0]));
	if (err)
		return err;
	if (outside > wall)
		return bad(L, "outside_ns above wall_ns");
	err = get_either(L, jt, "state", "alive", "exited", &exited);
	if (err)
		return err;
	t->state = exited ? PROF_SLAB_EXITED : PROF_SLAB_ALIVE;
	j = json_object_get(jt, "oncpu_ns");
	if (json_is_null(j))
		t->oncpu_ns = PROF_SNAP_UNKNOWN;
	else if (!json_is_integer(j) || json_integer_value(j) < 0)
		return bad(L, "\"oncpu_ns\" is not a count or null");
	else
		t->oncpu_ns = (__u64)json_integer_value(j);
	j = json_object_get(jt, "kernel_slot");
	if (!json_is_integer(j) || json_integer_value(j) < -1 ||
	    json_integer_value(j) >= (json_int_t)PROF_NO_SLOT)
		return bad(L, "\"kernel_slot\" is not a slot or -1");
	t->ksched_slot = json_integer_value(j) < 0 ? PROF_NO_SLOT : (__u32)json_integer_value(j);
	t->slab = slab;
	t->frame_ticks = ticks_of(s, ft);
	t->frame_max = ticks_of(s, fm);
	err = count_nodes(L, nodes, 0, &nn);
	if (err)
		return err;
	/* the root and the overflow node, which the report shows only when
	 * something landed there */
	t->nodes = calloc(nn + 2, sizeof(*t->nodes));
	if (!t->nodes)
		return nomem(L);
	t->nnodes = 2;
	t->nodes[0].site = PROF_SITE_NONE;
	t->nodes[0].first_child = 1;
	t->nodes[0].next_sibling = PROF_SNAP_NONE;
	t->nodes[0].ticks = ticks_of(s, wall);
	t->nodes[0].child_ticks = t->nodes[0].ticks - ticks_of(s, outside);
	if (t->nodes[0].child_ticks > t->nodes[0].ticks)
		t->nodes[0].child_ticks = 0;
	t->nodes[1].site = PROF_SITE_NONE;
	t->nodes[1].depth = 1;
	t->nodes[1].first_child = PROF_SNAP_NONE;
	t->nodes[1].next_sibling = PROF_SNAP_NONE;
	err = load_list(L, t, nodes, 0, 1, &next);
	if (err)
		return err;
	/* a second "[overflow]" where the first node belongs */
	if (next > nn + 2)
		return bad(L, "more nodes than listed");
	t->nnodes = next;
	L->tid = 0;
	return 0;
}

/* the zone cost in ticks from the threads' estimates of what their zones
 * cost them (calls times the cost): the thread of most calls says it best */
static int load_zone_cost(struct ld *L, const json_t *threads)
{
	struct prof_snapshot *s = L->s;
	__u64 best = 0, cost = 0;
	bool known = false;
	__u32 i, k;

	for (i = 0; i < s->nthreads; i++) {
		const json_t *j = json_object_get(json_array_get(threads, i), "probe_cost_ns");
		const struct prof_snap_thread *t = &s->threads[i];
		__u64 calls = 0;

		if (!j || json_is_null(j))
			continue;
		if (!json_is_integer(j) || json_integer_value(j) < 0)
			return bad(L, "\"probe_cost_ns\" is not a count or null");
		known = true;
		for (k = 1; k < t->nnodes; k++)
			calls += t->nodes[k].calls + t->nodes[k].open + t->nodes[k].anomalies;
		if (calls > best) {
			best = calls;
			cost = (ticks_of(s, (__u64)json_integer_value(j)) + calls / 2) / calls;
		}
	}
	/* measured (if at nothing a call: no thread had one to say) */
	if (known)
		s->zone_cost = cost ? cost : 1;
	return 0;
}

/*
 * A name of a lock or plot: a string without a NUL; one that does not fit
 * (a name the runtime cut at PROF_NAME_MAX - 1 bytes whose bytes of no
 * UTF-8 JSON brought back as characters of two bytes) is cut again, at a
 * character's start, never refused
 */
static int get_name(struct ld *L, const json_t *o, char *out)
{
	const json_t *j = json_object_get(o, "name");
	size_t n;

	if (!json_is_string(j))
		return bad(L, "\"name\" %s", j ? "is not a string" : "is missing");
	n = json_string_length(j);
	if (memchr(json_string_value(j), '\0', n))
		return bad(L, "a name holds a NUL");
	if (n > PROF_NAME_MAX - 1)
		for (n = PROF_NAME_MAX - 1; n && (json_string_value(j)[n] & 0xc0) == 0x80; n--)
			;
	memcpy(out, json_string_value(j), n);
	out[n] = '\0';
	return 0;
}

/*
 * A lock's or plot's figure by its key (figures.h): a count, ns (back to
 * ticks), a plot's value; null, where the writer writes it, what a window
 * could not tell (PROF_SNAP_UNKNOWN, NAN)
 */
static int fig_u64(struct ld *L, const json_t *o, const char *key, bool ns, bool nullable,
		   __u64 *v)
{
	int err;

	if (nullable && json_is_null(json_object_get(o, key))) {
		*v = PROF_SNAP_UNKNOWN;
		return 0;
	}
	err = get_u64(L, o, key, v);
	if (err)
		return err;
	if (ns)
		*v = ticks_of(L->s, *v);
	/* a count that says unknown is not one */
	if (*v == PROF_SNAP_UNKNOWN)
		return bad(L, "\"%s\" is too big", key);
	return 0;
}

static int fig_double(struct ld *L, const json_t *o, const char *key, double *v)
{
	const json_t *j = json_object_get(o, key);

	if (json_is_null(j))
		*v = NAN;
	else if (json_is_number(j))
		*v = json_number_value(j);
	else
		return bad(L, "\"%s\" %s", key, j ? "is not a number or null" : "is missing");
	return 0;
}

/*
 * What a lock's or plot's entry (what) starts with: the thread it is put
 * on, the report's first (the report has them by name alone, as every
 * view shows them), and its name
 */
static int annot_head(struct ld *L, const json_t *j, const char *what, __u32 *tid, __u64 *start,
		      char *name)
{
	const struct prof_snapshot *s = L->s;

	*tid = s->nthreads ? s->threads[0].tid : 0;
	*start = s->nthreads ? s->threads[0].start_tick : 0;
	if (!json_is_object(j))
		return bad(L, "a %s is not an object", what);
	return get_name(L, j, name);
}

/* each entry of a list by one(L, entry, its index), counted in *n */
static int load_each(struct ld *L, const json_t *list,
		     int (*one)(struct ld *, const json_t *, __u32), __u32 *n)
{
	size_t i;
	int err;

	for (i = 0; i < json_array_size(list); i++) {
		err = one(L, json_array_get(list, i), *n);
		if (err)
			return err;
		(*n)++;
	}
	return 0;
}

/* an annotation's name as a site of its kind (PROF_SITE_LOCK, _PLOT) */
static int annot_site(struct ld *L, const char *name, __u32 flags, __u32 *idx)
{
	struct prof_snapshot *s = L->s;

	if (site_room(L))
		return -ENOMEM;
	memset(&s->sites[s->nsites], 0, sizeof(s->sites[s->nsites]));
	memcpy(s->sites[s->nsites].name, name, PROF_NAME_MAX);
	s->sites[s->nsites].flags = flags;
	*idx = s->nsites++;
	return 0;
}

/*
 * A lock of "locks" (summed by name over threads and zones): each figure
 * figures.h gives a key.  "blocked" is null where no wait had profd's
 * word (kernel_waits 0); what is not written (kernel_waits, the wait
 * histogram) is made so that the report says again what it said
 */
static int load_lock(struct ld *L, const json_t *jl, __u32 k)
{
	struct prof_snap_lock *l = &L->s->locks[k];
	char name[PROF_NAME_MAX];
	int err;

	err = annot_head(L, jl, "lock", &l->tid, &l->start_tick, name);
#define LOCK_LOAD(f, unit, across, window, key)                                              \
	if (!err && key[0])                                                                  \
		err = fig_u64(L, jl, key, !strcmp(#unit, "ticks"),                           \
			      !strcmp(#unit, "ticks") || !strcmp(key, "blocked"), &l->f);
	PROF_LOCK_FIGS(LOCK_LOAD)
#undef LOCK_LOAD
	if (err)
		return err;
	if (l->blocked == PROF_SNAP_UNKNOWN)
		l->blocked = 0;
	else
		l->kernel_waits = l->blocked ? l->blocked : 1;
	/* the longest wait's bucket, so that a window of it finds it */
	if (l->contended && l->wait_max != PROF_SNAP_UNKNOWN) {
		int b = l->wait_max ? 63 - __builtin_clzll(l->wait_max) : 0;

		l->wait_hist[b < PROF_LOCK_HIST ? b : PROF_LOCK_HIST - 1] =
			l->contended > 0xffffffffu ? 0xffffffffu : (__u32)l->contended;
	}
	return annot_site(L, name, PROF_SITE_LOCK, &l->site);
}

/* the double next to x, up or down (nextafter, without libm) */
static double ulp_step(double x, bool up)
{
	__u64 b;

	if (x == 0)
		return up ? 5e-324 : -5e-324;
	memcpy(&b, &x, sizeof(b));
	b += (x > 0) == up ? 1 : (__u64)-1;
	memcpy(&x, &b, sizeof(x));
	return x;
}

/* a plot of "plots": its figures by key, "mean" back to their sum */
static int load_plot(struct ld *L, const json_t *jp, __u32 k)
{
	struct prof_snap_plot *p = &L->s->plots[k];
	char name[PROF_NAME_MAX];
	double mean = 0;
	int err;

	err = annot_head(L, jp, "plot", &p->tid, &p->start_tick, name);
#define PLOT_LOAD(f, unit, across, window, key)                                              \
	if (!err && key[0])                                                                  \
		err = _Generic(p->f, double                                                  \
			       : fig_double(L, jp, key, (double *)&p->f), default            \
			       : fig_u64(L, jp, key, false, false, (__u64 *)&p->f));
	PROF_PLOT_FIGS(PLOT_LOAD)
#undef PLOT_LOAD
	if (!err)
		err = fig_double(L, jp, "mean", &mean);
	if (err)
		return err;
	/* the sum whose mean is the report's (the product can round a
	 * last bit away) */
	p->sum = mean * (double)p->count;
	for (int u = 0; u < 4 && p->count && p->sum / (double)p->count != mean; u++)
		p->sum = ulp_step(p->sum, p->sum / (double)p->count < mean);
	return annot_site(L, name, PROF_SITE_PLOT, &p->site);
}

/* a report reads at most what a process could have had: a name each */
#define LOAD_ANNOT_MAX 16384

/*
 * The process's "locks" and "plots" (report version 4; none before), as
 * one thread's entries: the report has them by name only, which is how
 * every view shows them (prof_snap_annot_sum)
 */
static int load_annot(struct ld *L, const json_t *jp)
{
	struct prof_snapshot *s = L->s;
	const json_t *jl = json_object_get(jp, "locks"), *jpl = json_object_get(jp, "plots");
	int err;

	if ((jl && !json_is_array(jl)) || (jpl && !json_is_array(jpl)))
		return bad(L, "\"locks\" or \"plots\" is not a list");
	if (json_array_size(jl) > LOAD_ANNOT_MAX || json_array_size(jpl) > LOAD_ANNOT_MAX)
		return bad(L, "more than %u locks or plots", LOAD_ANNOT_MAX);
	s->locks = calloc(json_array_size(jl) + 1, sizeof(*s->locks));
	s->plots = calloc(json_array_size(jpl) + 1, sizeof(*s->plots));
	if (!s->locks || !s->plots)
		return nomem(L);
	err = load_each(L, jl, load_lock, &s->nlocks);
	return err ? err : load_each(L, jpl, load_plot, &s->nplots);
}

static int load_process(struct ld *L, const json_t *jp)
{
	struct prof_snapshot *s = L->s;
	const json_t *threads;
	bool exited = false, synced = false, mono;
	__u32 i;
	int err;

	if (!json_is_object(jp))
		return bad(L, "a process is not an object");
	err = get_u32(L, jp, "pid", &s->pid);
	if (!err)
		err = get_u32(L, jp, "uid", &s->uid);
	if (!err)
		err = get_str(L, jp, "comm", s->comm, sizeof(s->comm));
	if (!err)
		err = get_u64(L, jp, "tick_hz", &s->tick_hz);
	if (!err)
		err = get_bool(L, jp, "exited", &exited);
	if (!err)
		err = get_bool(L, jp, "tsc_synced", &synced);
	if (!err && json_object_get(jp, "span_ns"))
		err = get_u64(L, jp, "span_ns", &s->span_ns);
	if (err)
		return err;
	/* what a clock can tick at: 1 kHz to 1 THz */
	if (s->tick_hz < 1000 || s->tick_hz > 1000000000000ull)
		return bad(L, "\"tick_hz\" out of range");
	err = get_either(L, jp, "clock", "tsc", "monotonic", &mono);
	if (err)
		return err;
	s->clock = mono ? PROF_CLOCK_MONO : PROF_CLOCK_TSC;
	s->flags = (exited ? PROF_SEG_EXITED : 0) | (synced ? PROF_SEG_TSC_SYNCED : 0);
	threads = json_object_get(jp, "threads");
	if (!json_is_array(threads))
		return bad(L, "\"threads\" is not a list");
	if (json_array_size(threads) > 0xffffffu)
		return bad(L, "too many threads");
	s->threads = calloc(json_array_size(threads) + 1, sizeof(*s->threads));
	if (!s->threads)
		return nomem(L);
	for (i = 0; i < json_array_size(threads); i++) {
		err = load_thread(L, json_array_get(threads, i), i, &s->threads[i]);
		s->nthreads = i + 1;
		if (err)
			return err;
	}
	for (i = 0; i < s->nthreads; i++)
		if (prof_snap_mark_recursion(&s->threads[i], s->nsites))
			return nomem(L);
	/* after the zones: their sites are looked up, these only added */
	err = load_annot(L, jp);
	if (err)
		return err;
	return load_zone_cost(L, threads);
}

int prof_json_is(const void *buf, size_t len)
{
	const char *p = buf;
	size_t i;

	for (i = 0; i < len && strchr(" \t\r\n", p[i]) && p[i]; i++)
		;
	return i < len && p[i] == '{';
}

int prof_json_load(const void *buf, size_t len, struct prof_snapshot **snap, char *why,
		   size_t whylen)
{
	struct ld L = { .why = why, .whylen = whylen };
	const json_t *j, *procs;
	json_error_t jerr;
	json_t *doc;
	int err;

	*snap = NULL;
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		/* jansson's text quotes the input near the error: one line */
		prof_fmt_name(jerr.text, sizeof(jerr.text), jerr.text);
		snprintf(why, whylen, "not a JSON report: %s at line %d, column %d", jerr.text,
			 jerr.line, jerr.column);
		return -EINVAL;
	}
	if (!json_is_object(doc)) {
		err = bad(&L, "not an object");
		goto cleanup;
	}
	j = json_object_get(doc, "view");
	if (j) {
		snprintf(why, whylen,
			 "a JSON report of the %s view has no call tree: --input reads "
			 "`profctl report --format json`",
			 json_is_string(j) ? json_string_value(j) : "another");
		err = -EPROTO;
		goto cleanup;
	}
	j = json_object_get(doc, "version");
	/* 3 added on-CPU times, which a read derives again, and 4 samples
	 * and the sampling state, which it does not read, and the locks and
	 * plots, which it does (load_annot): 2 to 4 read the same */
	if (!json_is_integer(j) || json_integer_value(j) < 2 ||
	    json_integer_value(j) > PROF_REPORT_JSON_VERSION) {
		snprintf(why, whylen, "a JSON report of a version this profctl does not read (%s)",
			 json_is_integer(j) ? "it reads versions 2 to 4" : "no \"version\"");
		err = -EPROTO;
		goto cleanup;
	}
	procs = json_object_get(doc, "processes");
	if (!json_is_array(procs)) {
		err = bad(&L, "\"processes\" is not a list");
		goto cleanup;
	}
	if (json_array_size(procs) != 1) {
		snprintf(why, whylen,
			 "a JSON report of %zu processes: --input reads one (report --pid P)",
			 json_array_size(procs));
		err = -EPROTO;
		goto cleanup;
	}
	L.s = calloc(1, sizeof(*L.s));
	if (!L.s) {
		err = nomem(&L);
		goto cleanup;
	}
	err = load_process(&L, json_array_get(procs, 0));
	if (err)
		goto cleanup;
	*snap = L.s;
	L.s = NULL;
cleanup:
	prof_snapshot__destroy(L.s);
	free(L.site_tab);
	json_decref(doc);
	return err;
}
