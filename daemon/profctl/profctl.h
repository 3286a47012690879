/* SPDX-License-Identifier: MIT */
/*
 * profctl.h - internals shared by profctl's files (not installed).
 *
 *	profctl_main(argc, argv)	the whole CLI; main() calls it, tests too
 *	pc_src_*			where snapshots come from: profd or the
 *					caller's own segments in /dev/shm
 *	pc_view_*, pc_merge_threads	derived snapshots: one thread, all merged
 *	pc_render_*			text tree, flat, callers, csv, folded, html
 */
#ifndef PROFCTL_H
#define PROFCTL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "fmt.h"
#include "json_writer.h"
#include "proto.h"
#include "snapshot.h"
#include "profctl_opts.h"

#define PC_FMT_TEXT	0
#define PC_FMT_JSON	1
#define PC_FMT_CSV	2
#define PC_FMT_FOLDED	3
#define PC_FMT_HTML	4
#define PC_FMT_PPROF	5	/* gzipped pprof protobuf (profctl_pprof.c) */

/* what a folded stack weighs: self wall time, or self on-CPU time */
#define PC_WEIGHT_WALL	0
#define PC_WEIGHT_ONCPU	1

/*
 * Since this user's last `profctl reset`: profctl's own mode, never asked
 * of profd (which keeps no baselines): the process since its start, less
 * the baseline file the reset left (pc_baseline_save).
 */
#define PC_SNAP_RESET	0x100

struct pc_opts {
	pid_t pid;		/* 0: every visible live process */
	__u32 tid;		/* 0: every thread */
	int mode;		/* PROFD_SNAP_START, PROFD_SNAP_LAST (proto.h), PC_SNAP_RESET */
	unsigned int last_s;
	int sort;		/* PROF_SORT_* */
	bool sort_set;		/* --sort given */
	bool flat;
	bool threads;		/* merge the threads of a process */
	const char *callers;	/* --callers ZONE */
	const char *inside;	/* --inside ZONE: profd's samples in it */
	int format;		/* PC_FMT_* */
	bool color;
	const char *out;	/* -o FILE */
	const char *input;	/* --input FILE: a saved segment image */
	bool no_daemon;		/* --no-daemon / PROFCTL_NO_DAEMON */
	int rows;		/* flat rows, 0 = all */
	bool dry_run;		/* clean --dry-run */
	bool per_call;		/* diff --per-call */
	bool per_frame;		/* diff --per-frame */
	const char *slow;	/* trace --slow ZONE:THRESHOLD */
	int count;		/* trace --count N */
	bool compensate;	/* report --compensate */
	const char *trace_json;	/* report --format html: the timeline's data */
	const struct pc_src *samples_src; /* report: profd (or --input), for its samples */
	int weight;		/* folded: PC_WEIGHT_* */
	int args;		/* pc_parse_opts: argv index of the first operand */
	const char *color_when;	/* --color: auto, always, never */
	double delay;		/* top --delay, seconds */
	int iters;		/* top --iterations, 0: until quit */
	const char *listen;	/* serve --listen HOST:PORT, NULL: its default */
	bool per_thread;	/* serve --threads */
	bool all_users;		/* serve --all-users */
	unsigned int max_zones; /* serve --max-zones, 0: its default */
	unsigned int max_threads; /* serve --max-threads, 0: its default */
	unsigned int timeout_s;	  /* serve --timeout, 0: its default */
};

int profctl_main(int argc, char **argv);

/* profctl_text.c: a CSV field, quoted when it must be */
void pc_csv_str(FILE *f, const char *s);
/* profctl_text.c: an OpenMetrics label value, escaped (serve, annot's families) */
void pc_om_label(FILE *f, const char *s);

/* the machine formats' columns, as usdt/figures.h's PROF_OUT_COLUMNS lists them */
enum pc_col {
#define PC_COL_ENUM(id, key, tree, flat, html) PC_COL_##id,
	PROF_OUT_COLUMNS(PC_COL_ENUM)
#undef PC_COL_ENUM
	PC_COLS
};
struct pc_col_info {
	const char *key;
	bool tree, flat, html;
};
extern const struct pc_col_info pc_cols[PC_COLS];
/* column c of node j of t (oncpu: prof_snap_oncpu's, per node), in ns where
 * a time; PROF_SNAP_UNKNOWN where nobody knows (and for pct_thread, a share
 * its writer computes) */
__u64 pc_col_node(const struct prof_snapshot *s, const struct prof_snap_thread *t,
		  const __u64 *oncpu, __u32 j, enum pc_col c);
/* the same for a flat row; PROF_SNAP_UNKNOWN for a column rows do not have */
__u64 pc_col_row(const struct prof_snapshot *s, const struct prof_flat_row *r, enum pc_col c);
/* profctl_text.c: a folded frame's bytes that would break the line (and
 * ';' too) as '_'; whether s has any of the first kind */
void pc_folded_safe(char *s, bool semicolon);
bool pc_folded_needs(const char *s);

/* report's options that do not go together (profctl_report.c): one row each */
struct pc_conflict {
	bool (*when)(const struct pc_opts *o);
	const char *why;     /* said after "report: ", exit 2 */
	const char *example; /* report options that meet it (tests), or NULL */
};
extern const struct pc_conflict pc_report_conflicts[];
extern const size_t pc_report_nconflicts;

/* -o FILE or stdout, said if it fails; and its close, said */
FILE *pc_open_out(const struct pc_opts *o);
int pc_close_out(FILE *f, const struct pc_opts *o);
/* pc_close_out, or, after err (a render that failed part way), closed
 * without putting the part written in place: err, or pc_close_out's */
int pc_end_out(FILE *f, const struct pc_opts *o, int err);

/* clean: remove the segments of exited processes (pid's only, if not 0),
 * or with dry_run say which; lines on out; exit status */
int pc_clean(pid_t pid, bool dry_run, FILE *out);

/* SIGBUS from a segment truncated under its mapping: the read sees zeros
 * from there, pc_bus_hit() says it happened since pc_bus_guard(), and
 * pc_warnx is quiet from then on */
void pc_bus_guard(void);
bool pc_bus_hit(void);
/* say so, in the one line the verb's errors since give way to */
void pc_bus_said(void);

/* logging: "profctl: ..." on stderr; nothing while pc_warn_quiet (a
 * server that says what matters its own way) */
void pc_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern bool pc_warn_quiet;

/* --- sources (profctl_src.c) --------------------------------------------- */

struct pc_proc {
	pid_t pid;
	uid_t uid;
	__u64 start_token;
	char comm[PROF_COMM_MAX];
	__u32 threads;
	bool alive;
	int kernel;		/* threads with kernel assistance, -1 unknown */
	__u64 created_ns;	/* CLOCK_REALTIME, 0 unknown */
	bool rates;		/* profd: the in-zone rates below are known */
	__u32 inzone[3];	/* thousandths of a thread in zones: now, ~1 s, ~30 s */
	char path[96];		/* direct: the segment */
	__u32 ns_pid;		/* in a container: its pid there, else 0 */
	char cgroup[PROF_CGROUP_MAX]; /* with ns_pid: its cgroup */
};

struct pc_src {
	int fd;			/* profd socket, -1 when reading directly */
	unsigned int read_flags; /* direct: PROF_READ_* (NO_HIST for views
				 * without percentiles) */
	pid_t live_pid;		/* direct: the segment pc_src_flat keeps mapped */
	void *live_mem;
	size_t live_len;
	struct prof_seg_flat_cache *flat_cache; /* its threads' shares of the rows */
	__u32 live_ns_pid;	/* a container's: the pid its header names */
	__u32 live_uid;		/* and its owner here */
	char live_cgroup[PROF_CGROUP_MAX];
	int why;		/* direct: the connect error, 0 if not tried */
	const char *sock;
	bool pass;		/* direct: pc_src_pass, keep pc_src_list's listing */
	struct prof_seg_ent *pass_ents; /* and where each process is found */
	size_t pass_n;
};

/* connect to profd unless told not to; never fails: falls back to direct */
void pc_src_open(struct pc_src *src, bool no_daemon);
void pc_src_close(struct pc_src *src);
/* after err from profd on src->fd: a connection given up (a timeout, out
 * of step, closed) is made again for the next request; if that fails,
 * reads go direct */
void pc_src_lost(struct pc_src *src, int err);
/*
 * A pass over the processes of a list (on), or its end: directly, the
 * next pc_src_list's listing of /dev/shm is where the pass's reads find
 * each process, instead of a listing each (a scrape of every process).
 * N.B. a process started after that list is still found, listing again.
 */
void pc_src_pass(struct pc_src *src, bool on);
/* the processes the caller may see; *procs malloc'd */
int pc_src_list(struct pc_src *src, struct pc_proc **procs, size_t *n);
/* a listed process's fields that list and serve's /api/processes both write
 * (pid, uid, comm, threads, kernel, created_ns), into the open object */
struct prof_jw;
void pc_proc_json(struct prof_jw *w, const struct pc_proc *p);
/* a snapshot of one process in a pc_opts mode; 0 or -errno, with a message
 * already printed */
int pc_src_snapshot(struct pc_src *src, pid_t pid, int mode, unsigned int secs,
		    struct prof_snapshot **snap);
/*
 * "The last secs seconds" without profd's history: the next secs instead,
 * of every pid at once (one wait), each read less the read secs before
 * (span_ns as measured).  out[i] NULL for a pid that could not be read or
 * became another process.  0; with one pid, its -errno.
 */
int pc_src_measure(const pid_t *pids, size_t n, unsigned int secs, struct prof_snapshot **out);
/* a raw snapshot, no baseline (top's deltas) */
int pc_src_raw(struct pc_src *src, pid_t pid, struct prof_snapshot **snap);
/* pid's segment as it lives (through profd, or directly), mapped until
 * another pid is asked of src; 0 or -errno, said */
int pc_src_map(struct pc_src *src, pid_t pid, const void **mem, size_t *len);
/* flat rows of pid since start, for views refreshed often: directly, the
 * segment stays mapped between calls and only node counters are read
 * (prof_seg_flat); *snap has no nodes */
int pc_src_flat(struct pc_src *src, pid_t pid, __u32 tid, struct prof_snapshot **snap,
		struct prof_flat_row **rows, size_t *n);
/* store pid's whole snapshot now (through profd if it follows it, else
 * read directly) as this user's baseline file: what PC_SNAP_RESET subtracts */
int pc_src_reset(struct pc_src *src, pid_t pid);
/* resolve the processes a verb works on: one pid, or every live one */
int pc_src_targets(struct pc_src *src, pid_t pid, struct pc_proc **procs, size_t *n);

/* --- names another user could have made first (profctl_file.c) ---------- */

/*
 * path opened with flags as a regular file of uid's, never following a
 * symlink nor waiting on a FIFO (O_NOFOLLOW|O_NONBLOCK, cleared once it is
 * a file): the fd; -ENOENT if nothing is there; -EPERM if something else
 * is (a FIFO, a directory, a device, a symlink, another owner's file), *st
 * and why ("a FIFO of uid 1001") saying what; or another -errno
 */
int pc_open_own(const char *path, int flags, uid_t uid, struct stat *st, char *why, size_t len);
/* "a FIFO of uid 1001": what st is, for a line that refuses it */
void pc_file_what(const struct stat *st, char *buf, size_t len);
/* a new file "path.tag.XXXXXX" (O_EXCL, 0600) beside path: its fd, its name
 * in tmp; -errno */
int pc_tmp_beside(const char *path, const char *tag, char *tmp, size_t len);
/*
 * -o FILE (every verb's): written to a new file beside it, renamed onto the
 * name by pc_out_close, so a symlink, a hard link or another user's file
 * at the name is replaced, never written through; a terminal, /dev/null,
 * a FIFO of ours, and a symlink of ours or of root's (/dev/stdout)
 * are written directly.  NULL, said, on failure.
 */
FILE *pc_out_open(const char *path);
/* closed and in place; 0 or -errno, said */
int pc_out_close(FILE *f, const char *path);
/* closed and dropped (what was written to a file beside it goes: what was
 * at the name stays) */
void pc_out_discard(FILE *f);
/* a reset kept under another name (its name held by another user): the
 * newest of ours, in alt; -ENOENT if none */
int pc_baseline_alt(const char *path, char *alt, size_t len);
/* len bytes as the reset at path (else, its name held, another name);
 * 0 or -errno */
int pc_baseline_put(const char *path, const void *buf, size_t len);

/* reset baselines: a private file per (uid, pid, start token), the one
 * place a reset is kept */
int pc_baseline_path(pid_t pid, __u64 token, char *buf, size_t len);
/* where they are kept: $XDG_RUNTIME_DIR if a private directory of ours,
 * else /dev/shm */
const char *pc_baseline_dir(void);
int pc_baseline_save(const struct prof_snapshot *s);
/* *base NULL if none; 0 or -errno */
int pc_baseline_load(pid_t pid, __u64 token, struct prof_snapshot **base);

/* PROFCTL_NO_DAEMON set: a yes (1, yes, true, on; anything but a no) */
bool pc_env_no_daemon(void);
/* a time as every option that takes one spells it (usdt/fmt.h) */
static inline int pc_parse_duration(const char *s, __u64 *ns)
{
	return prof_parse_duration(s, ns);
}

/* a segment image from a file (--input), read with PROF_READ_* flags */
int pc_read_image(const char *path, unsigned int flags, struct prof_snapshot **snap);
/* profd or direct, as pc_src_open, saying once on stderr which and why
 * (fallback: what profctl does instead, NULL for the usual) */
void pc_src_open_said(struct pc_src *src, const struct pc_opts *o, const char *fallback);

/* --- derived snapshots (profctl_snap.c) ---------------------------------- */

/* a view of one thread; shares memory with s, free with free() */
struct prof_snapshot *pc_view_thread(const struct prof_snapshot *s, __u32 tid);
/* one thread holding every path of every thread, merged by (path, site);
 * owns its memory: free with pc_snap_free */
struct prof_snapshot *pc_merge_threads(const struct prof_snapshot *s);
void pc_snap_free(struct prof_snapshot *s);
/* CLOCK_MONOTONIC, ns */
__u64 pc_now_ns(void);
/* numbers and durations as text, an output buffer (usdt/fmt.h); the text
 * tree and flat list, sorted children, overloads (usdt/snapshot.h) */
/* JSON strings: usdt/json_writer.h (prof_json_fbody, prof_jw_*) */

/* --- renderers (render_*.c) ---------------------------------------------- */

int pc_render_tree(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o);
int pc_render_flat(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o);
/* -ENOENT if the zone is not in s */
int pc_render_callers(FILE *f, const struct prof_snapshot *s, const struct pc_opts *o);
int pc_render_csv(FILE *f, struct prof_snapshot *const *snaps, size_t n, const struct pc_opts *o);
int pc_render_folded(FILE *f, struct prof_snapshot *const *snaps, size_t n,
		     const struct pc_opts *o);
/* json of --flat and --callers (the tree's is prof_report_json) */
int pc_render_json_view(FILE *f, struct prof_snapshot *const *snaps, size_t n,
			const struct pc_opts *o);
int pc_render_html(FILE *f, struct prof_snapshot *const *snaps, size_t n,
		   const struct pc_opts *o);
/* the call trees as a gzipped pprof profile.proto: a sample per node */
int pc_render_pprof(FILE *f, struct prof_snapshot *const *snaps, size_t n,
		    const struct pc_opts *o);

/* callers arithmetic, shared by text, csv and tests */
/* a zone's name as the views print it, " (file:line)" after a shared one */
#define PC_LABEL_MAX (PROF_NAME_MAX + PROF_FILE_MAX + 16)
struct pc_caller_row {
	char name[PC_LABEL_MAX];
	__u64 calls;
	__u64 ticks;		/* on behalf of (parents) / of (children) */
};
struct pc_callers {
	char zone[PC_LABEL_MAX];	/* the site, as the rows print it */
	__u64 calls, ticks, self, max;	/* the zone: outermost ticks */
	struct pc_caller_row *parents, *children;
	size_t nparents, nchildren;
};
/*
 * The sites --callers SPEC means: the one whose name and file:line the
 * views print as SPEC ("build (a.cc:12)", for a name two sites share), or
 * else every site named SPEC.  Their count; *sites malloc'd (NULL if 0).
 */
size_t pc_callers_sites(const struct prof_snapshot *s, const char *spec, __u32 **sites);
/* one site's callers and callees; -ENOENT if no node has it */
int pc_callers_site(const struct prof_snapshot *s, __u32 site, struct pc_callers *c);
/* the one site spec means; -ENOENT if none, -ENOTUNIQ if several */
int pc_callers(const struct prof_snapshot *s, const char *spec, struct pc_callers *c);
void pc_callers_free(struct pc_callers *c);

/* --- verbs in their own files --------------------------------------------- */

int pc_zones(const char *path, FILE *f);
/* each verb (profctl_VERB.c; zones, top and clean in theirs): argv[0] is
 * the verb; exit status */
int pc_cmd_report(int argc, char **argv);
int pc_cmd_list(int argc, char **argv);
int pc_cmd_reset(int argc, char **argv);
int pc_cmd_status(int argc, char **argv);
int pc_cmd_zones(int argc, char **argv);
int pc_cmd_top(int argc, char **argv);
int pc_cmd_clean(int argc, char **argv);
/* profctl save / diff (profctl_save.c, profctl_diff.c): exit status */
int pc_cmd_save(int argc, char **argv);
int pc_cmd_diff(int argc, char **argv);
/* profctl serve: an OpenMetrics exporter (profctl_serve.c) */
int pc_cmd_serve(int argc, char **argv);
/* trace: the event rings as a Chrome trace (profctl_trace.c) */
int pc_cmd_trace(int argc, char **argv);
/* pid's event rings (tid's only, if not 0) as trace's JSON, malloc'd in
 * *json; 0 or -errno (said) */
int pc_trace_json(struct pc_src *src, pid_t pid, __u32 tid, char **json);
/* the same of the calls that ended in the last last_ns (0: all the rings
 * hold), at most max of them in all, the newest (0: every one) */
int pc_trace_json_last(struct pc_src *src, pid_t pid, __u32 tid, __u64 last_ns, __u64 max,
		       char **json);

/* profctl_annot.c: a live process's plots and locks by name, or NULL (none,
 * or not live); and the text report's locks section */
struct prof_snap_annot *pc_annot_read(struct pc_src *src, const struct prof_snapshot *s);
/* serve's families of the n processes' plots and locks (OpenMetrics if om) */
void pc_annot_metrics(FILE *f, const struct prof_snapshot *const *s, size_t n, bool om);
struct pc_serve_opts {
	bool threads;		/* tid and thread labels */
	unsigned int max_zones;	/* a process (a thread, with threads); the rest "[other]" */
	unsigned int max_threads; /* with threads; the rest tid="other" */
	bool no_daemon;
	bool all_users;		/* every user's processes src shows, not only ours */
	unsigned int timeout_s;	/* a connection's whole request and answer */
};
/* serve's options (its table, as every verb's) into so and *listen_addr,
 * their defaults where not given: 0, -1 after --help, or an exit status */
int pc_serve_parse(int argc, char **argv, struct pc_serve_opts *so, const char **listen_addr);
/* whether serve shows p to its callers: alive, and its user's own
 * unless all_users (the metrics and the live page alike) */
bool pc_serve_may_show(const struct pc_proc *p, const struct pc_serve_opts *o);
/* one scrape: every live process src shows, as OpenMetrics (om) or the
 * Prometheus text format; 0 or -errno */
int pc_metrics(FILE *f, struct pc_src *src, const struct pc_serve_opts *o, bool om);
/* a saved profile (proffile.h) open as fd at path; 0 or -errno, said */
int pc_read_file(const char *path, int fd, unsigned int flags, struct prof_snapshot **snap);
int pc_top(struct pc_src *src, const struct pc_opts *o, double interval, int iterations);
/* top without --pid: the index of the newest live process (of none, the
 * newest exited one), -1 if n is 0 */
int pc_top_pick(const struct pc_proc *p, size_t n);
/* without --pid: pc_top_pick's process, said when there is a choice or it
 * exited; 0 or -errno (-ENOENT: none) */
int pc_pick_pid(struct pc_src *src, pid_t *pid);
/* top's row layout for a terminal cols wide: the width of a row, the
 * columns shown ("calls/s,%self,...") in heads, the zone name's width */
int pc_top_layout(int cols, bool sched, int name_len, char *heads, size_t len, int *name);
/* profctl_top_locks.c: top's rows of the named locks, a the frame's and b
 * the one dt seconds before (by name), at most left lines; lines written */
int pc_top_locks(FILE *f, const struct prof_snap_annot *a, const struct prof_snap_annot *b,
		 double dt, __u64 tick_hz, int left, const char *el);
/* profctl_diff_locks.c: diff's named locks of BASE sa and NEW sb, as text
 * (at most rows of them, 0: all; nothing if neither has any) and as the
 * JSON document's "locks" (none if neither has any) */
void pc_diff_locks_text(FILE *f, const struct prof_snapshot *sa, const struct prof_snapshot *sb,
			int rows);
void pc_diff_locks_json(struct prof_jw *w, const struct prof_snapshot *sa,
			const struct prof_snapshot *sb);

#endif /* PROFCTL_H */
