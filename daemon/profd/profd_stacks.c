// SPDX-License-Identifier: MIT
/*
 * profd_stacks.c - sampled user stacks of registered threads (--sample-hz),
 * each counted under the zone that was open on its thread at that instant.
 *
 * bpf/profsample.bpf.c runs on a cpu-clock perf_event on every CPU (open
 * from the start, enabled only while some thread is registered: an idle
 * profd samples nothing, and its fds do not come and go) and
 * sends a registered thread's stack and the instant through a ring
 * buffer.  Every 10 to 100 ms (drain_period) profd drains it: the instant becomes the
 * process's tick, profd_attrib.c reads from the thread's slab which zone
 * was open then, profd_sym.c names the frames, and the stack is counted
 * in the process's table under (thread, zone path).  A cpu-clock event
 * fires only while a thread runs: a zone asleep gets no samples.
 *
 * Drained often enough because attribution reads the thread's event ring,
 * which a busy thread overwrites: a sample older than what the ring holds is
 * counted as "[zone unknown]", never guessed.  The tables are bounded
 * (SAMPLE_MAX_BYTES, and a quarter of --max-memory; profd_seg.c counts
 * them in --max-memory): a stack that does not fit is counted under its
 * zone as "[stacks dropped]".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "profd.h"
#include "profd_stacks.h"
#include "prof.h"
#include "profsched.h"
#include "profsample.h"
#include "slab.h"
#include "fmt.h"
#include "reader_int.h"
/* generated code casts const away */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "profsample.skel.h"
#pragma GCC diagnostic pop

#define SAMPLE_DRAIN_NS 10000000ull /* 10 ms: the ring of a busy thread lasts longer */
#define SAMPLE_DRAIN_MAX_NS 100000000ull /* 100 ms: threads whose rings last */
#define SAMPLE_MAPPING_NS 2000000000ull /* 10 ms drains this long after maps moved */
#define SAMPLE_MAX_BYTES (64ull << 20)
#define SAMPLE_BATCH 65536	/* samples a drain takes at most */
#define SAMPLE_BUCKETS 1024	/* a process's hash chains */
#define SAMPLE_LINGER_NS 600000000000ull /* an exited process's samples stay */
#define SAMPLE_KEY_MAX 16384	/* a stack's key, bytes */
#define SAMPLE_TIDS 64		/* threads whose own tid a process remembers */

struct sstack {
	struct sstack *next;
	__u64 hash, count;
	__u32 tid;
	char key[]; /* zone path TAB frames (RS between frames) */
};

struct sproc {
	struct sproc *next;
	pid_t pid;
	struct sym_proc *sym;
	struct sstack *b[SAMPLE_BUCKETS];
	__u64 bytes, samples, unknown, dropped;
	__u64 last_ns; /* a sample last counted, or the process seen gone */
	__u32 tids[SAMPLE_TIDS][2]; /* host tid, its own (inner_tid) */
	__u32 ntids;
	__u32 map_gen; /* the newest sample's maps generation */
	bool gone;
};

static struct {
	struct profsample_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	struct bpf_link *unmap; /* prof_unmap: maps generations counted */
	int *pfd;
	int ncpus;
	bool attached;
	int tfd;
	__u32 hz;
	struct prof_sample *batch;
	__u32 nbatch;
	__u64 period;	/* the drain's, SAMPLE_DRAIN_NS to SAMPLE_DRAIN_MAX_NS */
	__u64 span_min; /* this drain: the shortest time a thread's ring held */
	__u64 mapping_ns; /* a sampled process's maps moved last (CLOCK_MONOTONIC) */
	__u64 tick_now, mono_now;   /* the counter and CLOCK_MONOTONIC, this drain's */
	__u64 tick_last, mono_last; /* the last drain's */
	struct sproc *procs;
	__u64 bytes;
	__u64 drained, drain_ns; /* samples drained, profd's CPU draining them */
	__u64 named_none, named_none_ns; /* the same in drains that named no frame anew */
	char why[160];
} sm = { .tfd = -1 };

const char *sample_why(void)
{
	return sm.why;
}

__u64 sample_bytes(void)
{
	return sm.bytes + sym_cache_bytes();
}
__u64 sample_dropped(void)
{
	__u64 d = 0;

	if (sm.skel)
		d = sm.skel->bss->dropped;
	return d;
}

__u32 sample_map_gen(pid_t pid)
{
	__u32 k = (__u32)pid, v = 0;

	if (sm.skel && sm.unmap)
		bpf_map_lookup_elem(bpf_map__fd(sm.skel->maps.mapgen), &k, &v);
	return v;
}

int sample_timer_fd(void)
{
	return sm.skel ? sm.tfd : -1;
}

int sample_ring_fd(void)
{
	return sm.skel ? bpf_map__fd(sm.skel->maps.samples) : -1;
}

static int on_sample(void *ctx, void *data, size_t len)
{
	(void)ctx;
	if (len < sizeof(struct prof_sample) || sm.nbatch >= SAMPLE_BATCH)
		return 0;
	memcpy(&sm.batch[sm.nbatch++], data, sizeof(struct prof_sample));
	return 0;
}

static int open_events(void);

/*
 * The kernel's ring: PROF_SAMPLE_RING bytes, or PROFD_TEST_SAMPLE_RING's
 * (a power of two of pages) where a test needs it to fill: the samples it
 * has no room for are counted (sample_dropped) and status says so
 */
static int ring_size(struct profsample_bpf *skel)
{
	const char *env = getenv("PROFD_TEST_SAMPLE_RING");
	unsigned long v;
	char *end;

	if (!env || !*env)
		return 0;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (errno || *end || v < 4096 || v > PROF_SAMPLE_RING || (v & (v - 1)))
		return -EINVAL;
	return bpf_map__set_max_entries(skel->maps.samples, (__u32)v);
}

/*
 * The sampler's BPF side undone, as far as it got: the unmap tracer, the
 * ring, the skeleton (skel: sm.skel once it opened), the per-CPU events'
 * arrays and the timer.  Its events are closed first (close_events).
 */
static void sampler_free(struct profsample_bpf *skel)
{
	bpf_link__destroy(sm.unmap);
	sm.unmap = NULL;
	ring_buffer__free(sm.rb);
	sm.rb = NULL;
	profsample_bpf__destroy(skel);
	sm.skel = NULL;
	free(sm.links);
	free(sm.pfd);
	sm.links = NULL;
	sm.pfd = NULL;
	if (sm.tfd >= 0)
		close(sm.tfd);
	sm.tfd = -1;
}

int sample_open(__u32 hz)
{
	struct profsample_bpf *skel;
	int err, fd = kbpf_tidslots_fd();

	sm.hz = hz;
	if (!hz) {
		snprintf(sm.why, sizeof(sm.why), "profd --sample-hz 0");
		return 0;
	}
	if (fd < 0) {
		snprintf(sm.why, sizeof(sm.why), "profd runs without kernel assistance (%s)",
			 kbpf_why());
		return -ENOTSUP;
	}
	/* the frame cache within --max-memory: an eighth of it, 4 MiB at most */
	sym_cache_bound(conf.max_memory / 8 < (4ull << 20) ? conf.max_memory / 8 : 4ull << 20);
	sm.batch = calloc(SAMPLE_BATCH, sizeof(*sm.batch));
	skel = profsample_bpf__open();
	if (!skel || !sm.batch) {
		err = -errno ? -errno : -ENOMEM;
		goto fail;
	}
	err = ring_size(skel);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.tidslots, fd);
	if (!err)
		err = profsample_bpf__load(skel);
	if (err) {
		/* a kernel without the vm_unmapped_area tracepoint: sampled,
		 * but code unmapped may be named as what is mapped there after */
		profsample_bpf__destroy(skel);
		skel = profsample_bpf__open();
		if (!skel) {
			err = -errno;
			goto fail;
		}
		bpf_program__set_autoload(skel->progs.prof_unmap, false);
		err = ring_size(skel);
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.tidslots, fd);
		if (!err)
			err = profsample_bpf__load(skel);
		if (err)
			goto fail;
	}
	if (bpf_program__autoload(skel->progs.prof_unmap))
		sm.unmap = bpf_program__attach(skel->progs.prof_unmap);
	if (!sm.unmap)
		log_warnx("sample: no maps generations (vm_unmapped_area not traced): code a "
			  "process unmaps may be named as what it maps there after");
	sm.rb = ring_buffer__new(bpf_map__fd(skel->maps.samples), on_sample, NULL, NULL);
	if (!sm.rb) {
		err = -errno;
		goto fail;
	}
	sm.ncpus = libbpf_num_possible_cpus();
	sm.links = calloc(sm.ncpus > 0 ? (size_t)sm.ncpus : 1, sizeof(*sm.links));
	sm.pfd = calloc(sm.ncpus > 0 ? (size_t)sm.ncpus : 1, sizeof(*sm.pfd));
	sm.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sm.ncpus <= 0 || !sm.links || !sm.pfd || sm.tfd < 0) {
		err = -ENOMEM;
		goto fail;
	}
	for (int c = 0; c < sm.ncpus; c++)
		sm.pfd[c] = -1;
	sm.skel = skel;
	sm.why[0] = 0;
	err = open_events();
	if (err)
		return err;
	log_info("sample: %u Hz per CPU while a thread is registered", hz);
	return 0;
fail:
	snprintf(sm.why, sizeof(sm.why), "profd failed to load its sampler: %s",
		 strerror(err < 0 ? -err : EINVAL));
	log_warnx("sample: %s", sm.why);
	sampler_free(skel);
	return err;
}

static void close_events(void)
{
	for (int c = 0; c < sm.ncpus; c++) {
		bpf_link__destroy(sm.links[c]);
		sm.links[c] = NULL;
		if (sm.pfd[c] >= 0)
			close(sm.pfd[c]);
		sm.pfd[c] = -1;
	}
}

/* the events on or off (they stay open: profd's fds do not come and go
 * with the threads registered), the drain's timer with them */
static void events_on(bool on)
{
	struct itimerspec its = { 0 };

	for (int c = 0; c < sm.ncpus; c++)
		if (sm.pfd[c] >= 0)
			ioctl(sm.pfd[c], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
	sm.period = SAMPLE_DRAIN_NS;
	if (on) {
		its.it_interval.tv_nsec = (long)sm.period;
		its.it_value = its.it_interval;
	}
	timerfd_settime(sm.tfd, 0, &its, NULL);
	sm.attached = on;
}

/*
 * The drain's period: a sample is attributed from its thread's event ring,
 * which must still hold every call since the sample was taken.  Each drain
 * measures how far back each sampled thread's ring reaches; the next comes
 * within a quarter of the shortest (10 ms at least, 100 ms at most, at
 * most twice the last: a ring that has not wrapped yet says nothing of how
 * soon it will), and 10 ms for 2 s after a sampled process mapped code (its
 * frames are named only from maps of their sample's generation).  A ring of
 * samples past half full wakes profd at once (profsample.bpf.c).  Threads
 * whose rings reach back 400 ms or more, or asleep, so cost profd 10
 * wakeups a second rather than 100.
 */
static void drain_period(void)
{
	__u64 next = sm.nbatch ? sm.span_min / 4 : SAMPLE_DRAIN_MAX_NS;
	struct itimerspec its = { 0 };

	if (next > sm.period * 2)
		next = sm.period * 2;
	if (sm.mapping_ns && profd_now_ns() - sm.mapping_ns < SAMPLE_MAPPING_NS)
		next = SAMPLE_DRAIN_NS;
	if (next < SAMPLE_DRAIN_NS)
		next = SAMPLE_DRAIN_NS;
	if (next > SAMPLE_DRAIN_MAX_NS)
		next = SAMPLE_DRAIN_MAX_NS;
	if (next == sm.period || !sm.attached)
		return;
	sm.period = next;
	its.it_interval.tv_sec = (time_t)(next / 1000000000ull);
	its.it_interval.tv_nsec = (long)(next % 1000000000ull);
	its.it_value = its.it_interval;
	timerfd_settime(sm.tfd, 0, &its, NULL);
}

/* a cpu-clock event on every CPU, the program on each, off until a thread
 * registers */
static int open_events(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = sm.hz,
		.freq = 1,
		.disabled = 1,
	};
	int c, n = 0, err = 0;

	for (c = 0; c < sm.ncpus; c++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, c, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			/* an offline CPU has no event: the others sample */
			if (errno != ENODEV)
				err = -errno;
			continue;
		}
		sm.pfd[c] = fd;
		sm.links[c] = bpf_program__attach_perf_event(sm.skel->progs.prof_sample, fd);
		if (!sm.links[c]) {
			err = -errno;
			continue;
		}
		n++;
	}
	if (!n) {
		snprintf(sm.why, sizeof(sm.why), "profd failed to open cpu-clock perf events: %s",
			 strerror(err ? -err : ENODEV));
		log_warnx("sample: %s", sm.why);
		close_events();
		return err ? err : -ENODEV;
	}
	/* attaching enabled them */
	events_on(false);
	return 0;
}

/* sampling while some thread is registered */
void sample_poll(void)
{
	if (!sm.skel || sm.why[0])
		return;
	if (kbpf_used() && !sm.attached)
		events_on(true);
	else if (!kbpf_used() && sm.attached) {
		sample_drain();
		events_on(false);
	}
}

void sample_close(void)
{
	struct sproc *p, *pn;
	struct sstack *s, *sn;
	size_t i;

	/* what the samples cost profd itself (bench/sample_cost.sh reads it) */
	if (sm.drained && sm.named_none)
		log_info("sample: %llu samples drained, %.2f us of profd's CPU each; %.2f us in the "
			 "drains that named no frame from ELF and DWARF (%llu samples)",
			 (unsigned long long)sm.drained, (double)sm.drain_ns / 1e3 / (double)sm.drained,
			 (double)sm.named_none_ns / 1e3 / (double)sm.named_none,
			 (unsigned long long)sm.named_none);
	if (sm.skel)
		close_events();
	sampler_free(sm.skel);
	free(sm.batch);
	sm.batch = NULL;
	for (p = sm.procs; p; p = pn) {
		pn = p->next;
		for (i = 0; i < SAMPLE_BUCKETS; i++)
			for (s = p->b[i]; s; s = sn) {
				sn = s->next;
				free(s);
			}
		sym_proc__destroy(p->sym);
		free(p);
	}
	sm.procs = NULL;
	sym_cache_free();
}

static struct sproc *proc_of(pid_t pid, bool make)
{
	struct sproc *p;

	for (p = sm.procs; p; p = p->next)
		if (p->pid == pid && !p->gone)
			return p;
	if (!make || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->sym = sym_proc__new(pid, sample_map_gen);
	p->next = sm.procs;
	sm.procs = p;
	sm.bytes += sizeof(*p);
	return p;
}

static __u64 hash_str(const char *s, __u32 tid)
{
	__u64 h = 1469598103934665603ull ^ tid;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static __u64 budget(void)
{
	__u64 b = conf.max_memory / 4;

	return b < SAMPLE_MAX_BYTES ? b : SAMPLE_MAX_BYTES;
}

/* count one stack of tid under key; a new one only within the budget, else
 * under its zone's "[stacks dropped]" line (one a zone: past the budget) */
static void count(struct sproc *p, __u32 tid, const char *key, const char *path, bool force)
{
	__u64 h = hash_str(key, tid);
	struct sstack **bp = &p->b[h % SAMPLE_BUCKETS], *s;
	size_t len;

	for (s = *bp; s; s = s->next)
		if (s->hash == h && s->tid == tid && !strcmp(s->key, key)) {
			s->count++;
			p->samples++;
			return;
		}
	len = strlen(key) + 1;
	if (!force && sm.bytes + sizeof(*s) + len > budget()) {
		char other[PROF_ATTR_DEPTH * PROF_NAME_MAX + 64];

		p->dropped++;
		snprintf(other, sizeof(other), "%s\t[stacks dropped]\x1f\x1f" "0\x1f", path);
		count(p, tid, other, path, true);
		return;
	}
	s = malloc(sizeof(*s) + len);
	if (!s)
		return;
	s->hash = h;
	s->tid = tid;
	s->count = 1;
	memcpy(s->key, key, len);
	s->next = *bp;
	*bp = s;
	p->bytes += sizeof(*s) + len;
	sm.bytes += sizeof(*s) + len;
	p->samples++;
}

/* CLOCK_MONOTONIC ns as the segment's ticks: its clock, or back from a
 * tick and ns taken together at this drain, at the rate the counter kept
 * against CLOCK_MONOTONIC since the last drain (the segment's own rate,
 * measured over 2 ms against CLOCK_MONOTONIC_RAW, when there is none):
 * a sample up to 100 ms old is converted within a microsecond */
struct tick_map {
	bool mono;
	__u64 hz, tick_now, mono_now;
	double per_ns; /* ticks a ns */
};

/* this drain's counter and CLOCK_MONOTONIC, taken together */
static void tick_anchor(void)
{
	__u64 best = ~0ull;
	int i;

	sm.tick_last = sm.tick_now;
	sm.mono_last = sm.mono_now;
	for (i = 0; i < 3; i++) {
		__u64 a = __prof_counter(), mn = profd_now_ns(), b = __prof_counter();

		if (b - a < best) {
			best = b - a;
			sm.tick_now = a + (b - a) / 2;
			sm.mono_now = mn;
		}
	}
}

static bool tick_map_of(const void *mem, size_t len, struct tick_map *m)
{
	const struct prof_seg_hdr *h = mem;

	if (len < sizeof(*h))
		return false;
	m->mono = LD(&h->clock) == PROF_CLOCK_MONO;
	m->hz = LD(&h->tick_hz);
	m->per_ns = 1.0;
	if (m->mono)
		return true;
	if (!m->hz)
		return false;
	m->tick_now = sm.tick_now;
	m->mono_now = sm.mono_now;
	m->per_ns = (double)m->hz / 1e9;
	/* a rate measured over 5 ms or more, within a tenth of the segment's */
	if (sm.mono_last && sm.mono_now - sm.mono_last >= 5000000 && sm.tick_now > sm.tick_last) {
		double r = (double)(sm.tick_now - sm.tick_last) /
			   (double)(sm.mono_now - sm.mono_last);

		if (r > m->per_ns * 0.9 && r < m->per_ns * 1.1)
			m->per_ns = r;
	}
	return true;
}

static __u64 tick_of(const struct tick_map *m, __u64 ns)
{
	if (m->mono)
		return ns;
	if (ns >= m->mono_now)
		return m->tick_now;
	return m->tick_now - (__u64)((double)(m->mono_now - ns) * m->per_ns);
}

static int cmp_sample(const void *a, const void *b)
{
	const struct prof_sample *x = a, *y = b;

	return PROF_CMP(x->pid, y->pid) ?: PROF_CMP(x->tid, y->tid) ?:
	       PROF_CMP(x->mono_ns, y->mono_ns);
}

/* a sample's frames, innermost first, RS apart, after "path TAB"; a frame
 * that does not fit whole is left out, with those after it */
static void stack_key(struct sproc *p, const struct prof_sample *s, const char *path, char *key,
		      size_t size)
{
	size_t off = strlen(path), w;
	__u32 i, n = s->nframes < PROF_SAMPLE_FRAMES ? s->nframes : PROF_SAMPLE_FRAMES;

	if (off + 2 > size)
		off = 0;
	else {
		memcpy(key, path, off);
		key[off++] = '\t';
	}
	for (i = 0; i < n && off + 1 < size; i++) {
		char f[1024];
		const char *fr;

		if (!s->ip[i])
			break;
		fr = sym_frame(p->sym, s->ip[i], i > 0, s->map_gen, f, sizeof(f));
		w = strlen(fr);
		if (off + (i ? 1 : 0) + w + 1 > size)
			break;
		if (i)
			key[off++] = '\x1e';
		memcpy(key + off, fr, w);
		off += w;
	}
	key[off] = 0;
}

/* tid as the process names it (its pid namespace's), as its slab and every
 * view do: /proc once a thread (SAMPLE_TIDS cached, the oldest replaced) */
static __u32 inner_tid(struct sproc *p, __u32 tid)
{
	__u32 i, inner;

	for (i = 0; i < SAMPLE_TIDS; i++)
		if (p->tids[i][0] == tid)
			return p->tids[i][1];
	if (prof_task_nspid(p->pid, (pid_t)tid, &inner))
		inner = tid;
	i = p->ntids++ % SAMPLE_TIDS;
	p->tids[i][0] = tid;
	p->tids[i][1] = inner;
	return inner;
}

#define LOOK_RECENT 8 /* zone paths a sample's is looked for among */

/* a zone path named in a look: (slab, node) and its names */
struct look_path {
	__u32 slab, node;
	char *path;
};

/*
 * What one guarded look at the segment makes of a process's samples (the
 * batch's, by thread then time): each thread's run of them attributed at
 * once (one look a process and drain, not one a thread), each sample's zone
 * path named once a look (a sample's is looked for among the last
 * LOOK_RECENT named: the few zones a drain's samples fall in, named once
 * each, not once each time the zone changes).
 */
struct look_attr {
	const struct prof_sample *a;
	__u32 n;
	const __u32 *tid;     /* each sample's thread, as the process names it */
	struct prof_attr *at; /* each sample's node */
	const char **path;    /* each sample's zone path (in paths), NULL: none */
	struct look_path *paths;
	__u32 npaths, room;
	__u64 span_ns;	      /* how far back the threads' rings reach (~0: all) */
};

static void undo_attr(void *arg)
{
	struct look_attr *la = arg;
	__u32 i;

	for (i = 0; i < la->npaths; i++)
		free(la->paths[i].path);
	la->npaths = 0;
	for (i = 0; i < la->n; i++)
		la->path[i] = NULL;
}

/* how far back tid's event ring reaches now, in ns (~0: to its start) */
static __u64 ring_span(const void *mem, const struct seg_geom *g, __u32 tid,
		       const struct tick_map *tm)
{
	__u64 oldest, now;

	if (prof_seg_ring_oldest_g(mem, g, tid, &oldest) || !oldest)
		return ~0ull;
	now = tick_of(tm, profd_now_ns());
	if (now <= oldest)
		return 0;
	if (tm->mono)
		return now - oldest;
	return (__u64)((double)(now - oldest) / tm->per_ns);
}

/* node's zone path in slab, named in this look already or now; NULL if the
 * slab does not say */
static const char *look_path(struct look_attr *la, const void *mem, const struct seg_geom *g,
			     __u32 slab, __u32 node)
{
	char path[PROF_ATTR_DEPTH * PROF_NAME_MAX];
	struct look_path *lp;
	__u32 i;

	for (i = la->npaths; i > 0 && i + LOOK_RECENT > la->npaths; i--)
		if (la->paths[i - 1].slab == slab && la->paths[i - 1].node == node)
			return la->paths[i - 1].path;
	if (prof_seg_node_path_g(mem, g, slab, node, path, sizeof(path)))
		return NULL;
	if (la->npaths == la->room) {
		__u32 want = la->room ? la->room * 2 : 16;

		lp = realloc(la->paths, want * sizeof(*lp));
		if (!lp)
			return NULL;
		la->paths = lp;
		la->room = want;
	}
	lp = &la->paths[la->npaths];
	lp->path = strdup(path);
	if (!lp->path)
		return NULL;
	lp->slab = slab;
	lp->node = node;
	la->npaths++;
	return lp->path;
}

/* the zone each sample fell in, and its path, read from the live segment */
static int look_attr(const void *mem, size_t len, void *arg)
{
	struct look_attr *la = arg;
	struct tick_map tm = { 0 };
	struct seg_geom g;
	__u32 i, j;
	int err;

	/* checked once: every thread's calls below read it as checked */
	err = seg_check(mem, len, &g);
	if (err)
		return err;
	if (!tick_map_of(mem, len, &tm))
		return -EINVAL;
	for (i = 0; i < la->n; i++)
		la->at[i].tick = tick_of(&tm, la->a[i].mono_ns);
	for (i = 0; i < la->n; i = j) {
		__u64 span;
		int slab;

		for (j = i; j < la->n && la->a[j].tid == la->a[i].tid; j++)
			;
		/* a thread the slab does not say: its samples unknown */
		slab = prof_seg_attribute_g(mem, &g, la->tid[i], la->at + i, j - i);
		if (slab < 0)
			continue;
		span = ring_span(mem, &g, la->tid[i], &tm);
		if (span < la->span_ns)
			la->span_ns = span;
		for (; i < j; i++) {
			__u32 node = la->at[i].node;

			if (node == PROF_ATTR_UNKNOWN || node == PROF_ATTR_OUTSIDE)
				continue;
			la->path[i] = look_path(la, mem, &g, (__u32)slab, node);
			if (!la->path[i])
				la->at[i].node = PROF_ATTR_UNKNOWN;
		}
	}
	return 0;
}

/* one process's n samples of the batch, by thread then time */
static void take_proc(struct sproc *p, struct prof_sample *a, __u32 n)
{
	struct look_attr la = { .a = a, .n = n, .span_ns = ~0ull };
	char *key = malloc(SAMPLE_KEY_MAX);
	__u32 *tids = calloc(n, sizeof(*tids));
	__u32 i;

	la.tid = tids;
	la.at = calloc(n, sizeof(*la.at));
	la.path = calloc(n, sizeof(*la.path));
	if (!la.at || !la.path || !key || !tids)
		goto out;
	for (i = 0; i < n; i++)
		tids[i] = i && a[i].tid == a[i - 1].tid ? tids[i - 1] : inner_tid(p, a[i].tid);
	if (seg_look_pid(p->pid, look_attr, undo_attr, &la))
		for (i = 0; i < n; i++)
			la.at[i].node = PROF_ATTR_UNKNOWN;
	if (la.span_ns < sm.span_min)
		sm.span_min = la.span_ns;
	/* a process mapping code: a frame is named only from the maps of its
	 * sample's generation, so drain at once, before they move again */
	for (i = 0; i < n; i++)
		if (a[i].map_gen != p->map_gen) {
			p->map_gen = a[i].map_gen;
			sm.mapping_ns = profd_now_ns();
		}
	for (i = 0; i < n; i++) {
		__u32 node = la.at[i].node;
		const char *path = la.path[i] ? la.path[i] : "";

		if (node == PROF_ATTR_UNKNOWN || (node != PROF_ATTR_OUTSIDE && !la.path[i])) {
			path = "[zone unknown]";
			p->unknown++;
		}
		stack_key(p, &a[i], path, key, SAMPLE_KEY_MAX);
		count(p, tids[i], key, path, false);
	}
	p->last_ns = profd_now_ns();
	undo_attr(&la);
out:
	free(la.paths);
	free(la.at);
	free(la.path);
	free(tids);
	free(key);
}

static void forget_gone(void)
{
	struct sproc **pp = &sm.procs, *p;
	__u64 now = profd_now_ns();
	size_t i;

	while ((p = *pp)) {
		if (!p->gone && !seg_alive_pid(p->pid)) {
			p->gone = true;
			p->last_ns = now;
			sym_proc__destroy(p->sym);
			p->sym = NULL;
		}
		if (p->gone && now - p->last_ns > SAMPLE_LINGER_NS) {
			struct sstack *s, *sn;

			*pp = p->next;
			for (i = 0; i < SAMPLE_BUCKETS; i++)
				for (s = p->b[i]; s; s = sn) {
					sn = s->next;
					free(s);
				}
			sm.bytes -= p->bytes + sizeof(*p);
			free(p);
			continue;
		}
		pp = &p->next;
	}
}

/* this thread's CPU time, ns */
static __u64 cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

void sample_drain(void)
{
	__u64 t, c0, named0, named1, hits;
	__u32 i, j;

	if (!sm.skel)
		return;
	c0 = cpu_now();
	sym_counts(&named0, &hits);
	if (sm.tfd >= 0 && read(sm.tfd, &t, sizeof(t)) < 0 && errno != EAGAIN)
		return;
	sm.nbatch = 0;
	sm.span_min = ~0ull;
	ring_buffer__consume(sm.rb);
	/* after: every sample taken is before it */
	tick_anchor();
	qsort(sm.batch, sm.nbatch, sizeof(*sm.batch), cmp_sample);
	for (i = 0; i < sm.nbatch; i = j) {
		struct sproc *p;

		for (j = i; j < sm.nbatch && sm.batch[j].pid == sm.batch[i].pid; j++)
			;
		p = proc_of((pid_t)sm.batch[i].pid, true);
		if (p)
			take_proc(p, &sm.batch[i], j - i);
	}
	drain_period();
	forget_gone();
	t = cpu_now() - c0;
	sm.drained += sm.nbatch;
	sm.drain_ns += t;
	sym_counts(&named1, &hits);
	if (named1 == named0) {
		sm.named_none += sm.nbatch;
		sm.named_none_ns += t;
	}
}

int sample_dump(pid_t pid, FILE *out, __u64 *nsamples)
{
	struct sproc *p, *best = NULL;
	struct sstack *s;
	size_t i;

	*nsamples = 0;
	for (p = sm.procs; p; p = p->next) {
		if (p->pid == pid && (!best || (best->gone && !p->gone)))
			best = p;
		/* pid 0: how many are kept, no stacks */
		if (!pid)
			*nsamples += p->samples;
	}
	/* pid 0: how the frames were named, by ELF and DWARF or from the cache;
	 * the samples the kernel's ring had no room for; what the tables and
	 * the frame cache take */
	if (!pid) {
		__u64 lookups, hits;

		sym_counts(&lookups, &hits);
		fprintf(out, "frames\t%llu\t%llu\t%llu\t%llu\t%llu\n", (unsigned long long)lookups,
			(unsigned long long)hits, (unsigned long long)sample_dropped(),
			(unsigned long long)sm.bytes, (unsigned long long)sym_cache_bytes());
	}
	if (!best)
		return ferror(out) ? -EIO : 0;
	/* tid TAB count TAB zone path TAB frames */
	for (i = 0; i < SAMPLE_BUCKETS; i++)
		for (s = best->b[i]; s; s = s->next)
			fprintf(out, "%u\t%llu\t%s\n", s->tid, (unsigned long long)s->count, s->key);
	*nsamples = best->samples;
	return ferror(out) ? -EIO : 0;
}

