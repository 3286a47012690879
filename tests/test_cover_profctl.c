// SPDX-License-Identifier: MIT
/*
 * test_cover_profctl.c - unit: what profctl says when what a user asks
 * cannot be done, paths no other test took (make coverage showed them):
 * -o outputs refused or failing (every output slot taken, a full device,
 * a name that became a directory, another user's FIFO), save without a
 * file, --input of a file too big to read, and status with no profd, with
 * a profd that refuses status, and with one whose kernel assistance is off
 * and that dropped nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "testutil.h"
#include "client.h"
#include "profctl.h"
#include "annot.h"
#include "proffile.h"
#include "proto.h"
#include "prof.h"
#include "profctl_fixture.h"
#include "profd_private.h"
#include "profctl_run.h"

/* what fn(arg) writes to stderr, into err */
static void caught(void (*fn)(void *), void *arg, char *err, size_t len)
{
	char path[128];
	char *e;
	int saved, fd;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	dup2(fd, 2);
	close(fd);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	e = test_slurp(path, NULL);
	snprintf(err, len, "%s", e ? e : "");
	free(e);
}

/* --- -o outputs ------------------------------------------------------------ */

struct out_case {
	const char *path;
	FILE *f[5];
	int err;
};

/* every output slot taken (four at once): the fifth is refused, not lost */
static void open_five(void *arg)
{
	struct out_case *c = arg;
	int k;

	for (k = 0; k < 5; k++)
		c->f[k] = pc_out_open(c->path);
}

static void test_out_slots(void **state)
{
	struct out_case c = { .path = "/dev/null" };
	char err[512];
	int k;

	(void)state;
	caught(open_five, &c, err, sizeof(err));
	for (k = 0; k < 4; k++)
		assert_non_null(c.f[k]);
	assert_null(c.f[4]);
	assert_non_null(strstr(err, "/dev/null: failed to open for writing: Too many open files"));
	for (k = 0; k < 4; k++)
		assert_int_equal(pc_out_close(c.f[k], c.path), 0);
	/* and once closed, the slots serve again */
	c.f[0] = pc_out_open(c.path);
	assert_non_null(c.f[0]);
	assert_int_equal(pc_out_close(c.f[0], c.path), 0);
}

static void write_close(void *arg)
{
	struct out_case *c = arg;

	c->f[0] = pc_out_open(c->path);
	assert_non_null(c->f[0]);
	fputs("a report\n", c->f[0]);
	c->err = pc_out_close(c->f[0], c->path);
}

/* a device that takes nothing: the write's failure is said, and returned */
static void test_out_full_device(void **state)
{
	struct out_case c = { .path = "/dev/full" };
	char err[512];

	(void)state;
	if (access("/dev/full", W_OK))
		skip();
	caught(write_close, &c, err, sizeof(err));
	assert_int_equal(c.err, -ENOSPC);
	assert_non_null(strstr(err, "/dev/full: failed to write: No space left on device"));
}

/* the name became a directory before the output was complete: nothing
 * replaces it, and the temporary file beside it goes */
static void rename_blocked(void *arg)
{
	struct out_case *c = arg;
	char inner[192];
	int fd;

	c->f[0] = pc_out_open(c->path);
	assert_non_null(c->f[0]);
	fputs("a report\n", c->f[0]);
	assert_int_equal(mkdir(c->path, 0700), 0);
	snprintf(inner, sizeof(inner), "%s/keep", c->path);
	fd = open(inner, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	c->err = pc_out_close(c->f[0], c->path);
}

static void test_out_rename_fails(void **state)
{
	char sub[96], path[128], err[512], cmd[256], *left;
	struct out_case c = { .path = path };

	(void)state;
	snprintf(sub, sizeof(sub), "%s/o", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(path, sizeof(path), "%s/out", sub);
	caught(rename_blocked, &c, err, sizeof(err));
	assert_true(c.err < 0);
	assert_non_null(strstr(err, "/o/out: failed to write: "));
	/* what the directory holds: the directory the name became, alone */
	snprintf(cmd, sizeof(cmd), "ls -A %s > %s/ls", sub, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/ls", dir);
	left = test_slurp(cmd, NULL);
	assert_non_null(left);
	assert_string_equal(left, "out\n");
	free(left);
	snprintf(cmd, sizeof(cmd), "%s/keep", path);
	assert_int_equal(access(cmd, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sub);
	assert_int_equal(system(cmd), 0);
}

static void open_only(void *arg)
{
	struct out_case *c = arg;

	c->f[0] = pc_out_open(c->path);
}

/* a FIFO another user made, with a reader: profctl writes not into it */
static void test_out_fifo_of_another(void **state)
{
	char path[128], err[512];
	struct out_case c = { .path = path };
	int rd;

	(void)state;
	if (geteuid()) {
		print_message("skip: making another user's FIFO needs root\n");
		skip();
	}
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0666), 0);
	assert_int_equal(chown(path, 65534, 65534), 0);
	rd = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	caught(open_only, &c, err, sizeof(err));
	close(rd);
	assert_null(c.f[0]);
	assert_non_null(strstr(err, "fifo: a FIFO of uid 65534: not written"));
	unlink(path);
}

/* profctl args fails: exit code (0: any failure), its errors saying says */
static void fails_saying(const char **args, int code, const char *says)
{
	char err[1024] = "";
	int rc = run(args, err, sizeof(err));

	if (code ? rc != code : !rc)
		fail_msg("profctl %s ...: exit %d, want %d (0: any failure)", args[0], rc, code);
	if (!strstr(err, says))
		fail_msg("profctl %s ...: says '%s', want '%s'", args[0], err, says);
}

/* --- save and --input ------------------------------------------------------ */

static void test_save_needs_file(void **state)
{
	(void)state;
	fails_saying((const char *[]){ "save", "--pid", "1", NULL }, 2,
		     "save: -o FILE says where (a profile is binary: not to stdout)");
	fails_saying((const char *[]){ "save", "--pid", "1", "-o", "-", NULL }, 2,
		     "-o FILE says where");
}

/* a file of `size` bytes (sparse: it costs no disk) starting with head */
static void sparse(const char *path, const void *head, size_t hlen, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, head, hlen), (ssize_t)hlen);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

/* a JSON report and a saved profile larger than any image profctl reads:
 * refused before any of it is read into memory */
static void test_input_too_big(void **state)
{
	char path[128];
	char head[PROF_FILE_MAGIC_LEN] = PROF_FILE_MAGIC;
	const off_t big = (off_t)(PROF_FILE_IMAGE_MAX + (PROF_FILE_IMAGE_MAX >> 2)) + 4096;

	(void)state;
	snprintf(path, sizeof(path), "%s/big.json", dir);
	sparse(path, "{\"version\": 3", 13, big);
	fails_saying((const char *[]){ "report", "--input", path, NULL }, 0,
		     "big.json: profile too big to read");
	unlink(path);
	snprintf(path, sizeof(path), "%s/big.prof", dir);
	sparse(path, head, sizeof(head), big);
	fails_saying((const char *[]){ "report", "--input", path, NULL }, 0,
		     "big.prof: profile too big to read");
	unlink(path);
}

/* --- every process ---------------------------------------------------------- */

/*
 * A live program: body(wait) in a child, once its zones ran (first) and
 * it said so on the ready pipe (then); it ends when the pipe in *go
 * closes (body watches wait)
 */
static pid_t live_child(void (*first)(void), void (*body)(int wait), int *go)
{
	int ready[2], wait[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(wait), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(wait[1]);
		first();
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		body(wait[0]);
		_exit(0);
	}
	close(ready[1]);
	close(wait[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	*go = wait[1];
	return pid;
}

/* one zone of a name nobody else uses */
static void every_zone(void)
{
	for (int i = 0; i < 3; i++) {
		PROF_USDT(cover_every_process);
	}
}

static void until_told(int wait)
{
	char c;

	if (read(wait, &c, 1) < 0)
		_exit(3);
}

/* report without --pid: every live process of the user's (others' tests
 * may run beside this one: ours is among them) */
static void test_report_every_process(void **state)
{
	char want[64], *out;
	pid_t pid;
	int go, st;

	(void)state;
	pid = live_child(every_zone, until_told, &go);
	assert_int_equal(run_stdout((const char *[]){ "report", "--flat", NULL }, &out), 0);
	close(go);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	snprintf(want, sizeof(want), "\nprocess %d (", (int)pid);
	/* its header, at the top or after another process's */
	if ((strncmp(out, want + 1, strlen(want + 1)) && !strstr(out, want)) ||
	    !strstr(out, "cover_every_process"))
		fail_msg("report of every process: no %s with its zone:\n%.2000s", want, out);
	free(out);
}

/* report --tid of a thread the process does not have: said, and a failure */
static void test_report_no_such_thread(void **state)
{
	char pid[16], err[1024] = "";
	pid_t p;
	int go, st;

	(void)state;
	p = live_child(every_zone, until_told, &go);
	snprintf(pid, sizeof(pid), "%d", (int)p);
	assert_int_equal(run((const char *[]){ "report", "--pid", pid, "--tid", "1", NULL }, err,
			     sizeof(err)),
			 1);
	close(go);
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_non_null(strstr(err, "tid 1: no such profiled thread in that process\n"));
}

/* diff's refusals: a format or an order it has not, a pid that is not
 * one, --per-frame of runs without frames; and --sort calls of a process
 * against itself (and list's format it has not) */
static void test_diff_refusals(void **state)
{
	char pid[32];
	pid_t p;
	int go, st;

	(void)state;
	fails_saying((const char *[]){ "diff", "--format", "csv", "a", "b", NULL }, 2,
		     "diff: --format text, json or html\n");
	fails_saying((const char *[]){ "list", "--format", "csv", NULL }, 2,
		     "list: --format text or json\n");
	fails_saying((const char *[]){ "diff", "--sort", "max", "a", "b", NULL }, 2,
		     "diff: --sort self, total, calls, p99, oncpu or self-oncpu\n");
	fails_saying((const char *[]){ "diff", "pid:abc", "pid:1", NULL }, 0,
		     "diff: bad pid in 'pid:abc'\n");
	p = live_child(every_zone, until_told, &go);
	snprintf(pid, sizeof(pid), "pid:%d", (int)p);
	fails_saying((const char *[]){ "diff", "--per-frame", pid, pid, NULL }, 0,
		     "has no PROF_FRAME frames\n");
	assert_int_equal(run((const char *[]){ "diff", "--sort", "calls", pid, pid, NULL }, NULL, 0),
			 0);
	close(go);
	assert_int_equal(waitpid(p, &st, 0), p);
}

/* --- top's orders --------------------------------------------------------- */

static void top_start(void)
{
	PROF_USDT(cov_top_start); /* its segment, for top to find */
}

/* until its pipe closes, 100 empty calls of one zone then one of another
 * that spins 2 ms: many short calls, few long ones */
static void many_and_long(int wait)
{
	struct pollfd pf = { .fd = wait, .events = POLLIN };

	while (!poll(&pf, 1, 0)) {
		for (int i = 0; i < 100; i++) {
			PROF_USDT(cov_top_many);
		}
		{
			PROF_USDT(cov_top_long);
			struct timespec t0, t;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			do
				clock_gettime(CLOCK_MONOTONIC, &t);
			while ((t.tv_sec - t0.tv_sec) * 1000000000l + t.tv_nsec - t0.tv_nsec < 2000000);
		}
	}
}

/*
 * top --sort KEY, three frames: how many show the many calls' row before
 * the long one's (each row is once in each frame: the i-th mentions of the
 * two are of frame i).  A frame where the program did not run (a loaded
 * machine) has every key 0: its rows by their time since the start, the
 * long one first.
 */
static int many_first(const char *pid, const char *key)
{
	char path[128], err[1024] = "", *out;
	const char *m, *l;
	int rc, n = 0, frames = 0;

	snprintf(path, sizeof(path), "%s/stdout", dir);
	rc = test_profctl_run_io(dir, path,
				 (const char *[]){ "top", "--pid", pid, "-n", "3", "-d", "0.4",
						   "--sort", key, NULL },
				 err, sizeof(err));
	if (rc)
		fail_msg("top --sort %s: exit %d:\n%s", key, rc, err);
	out = test_slurp(path, NULL);
	assert_non_null(out);
	for (m = strstr(out, "cov_top_many"), l = strstr(out, "cov_top_long"); m && l;
	     m = strstr(m + 1, "cov_top_many"), l = strstr(l + 1, "cov_top_long")) {
		n += m < l;
		frames++;
	}
	if (frames != 3)
		fail_msg("top --sort %s: %d frames with both rows:\n%s", key, frames, out);
	free(out);
	return n;
}

static void test_top_sort(void **state)
{
	char pid[16];
	pid_t p;
	int go, st;

	(void)state;
	p = live_child(top_start, many_and_long, &go);
	snprintf(pid, sizeof(pid), "%d", (int)p);
	/* calls: the many first wherever the program ran, once at least */
	assert_true(many_first(pid, "calls") >= 1);
	/* the others: the long first, in a frame at least (one where the
	 * program ran its short calls and ended no long one would not) */
	assert_true(many_first(pid, "total") < 3);
	assert_true(many_first(pid, "max") < 3);
	assert_true(many_first(pid, "self") < 3);
	/* without profd no call has CPU time: it runs, in some order */
	many_first(pid, "self-oncpu");
	close(go);
	assert_int_equal(waitpid(p, &st, 0), p);
}

/* report --inside ZONE --format json without profd: what a script reads,
 * the zone's name escaped (a quote, a backslash, a newline), why there are
 * no samples, and no rows */
static void test_inside_json(void **state)
{
	char pid[16], want[512], *out;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_int_equal(run_stdout((const char *[]){ "report", "--pid", pid, "--inside",
						      "q\"b\\s\nl", "--format", "json", NULL },
				    &out),
			 0);
	snprintf(want, sizeof(want),
		 "{\"pid\": %s, \"zone\": \"q\\\"b\\\\s\\u000al\", \"hz\": 0, \"samples\": 0, "
		 "\"samples_own\": 0, \"process_samples\": 0, \"outside_samples\": 0, \"why\": "
		 "\"profd was not asked (--no-daemon)\", \"samples_state\": \"off: profd was not "
		 "asked (--no-daemon)\", \"inside\": []}\n",
		 pid);
	assert_string_equal(out, want);
	free(out);
}

/* --- plots ------------------------------------------------------------------ */

/* two plots of this process, the second named first: their sums come by
 * name, each its own count, min, max, last and sum */
static void test_plot_sums(void **state)
{
	struct prof_annot_plot_sum *v;
	struct prof_annot *a;
	size_t len = 0;
	void *seg;
	long n, i, ia = -1, ib = -1;

	(void)state;
	PROF_PLOT(cov_plot_b, 2.0);
	PROF_PLOT(cov_plot_a, 1.0);
	PROF_PLOT(cov_plot_b, 4.0);
	seg = test_own_segment(&len);
	assert_non_null(seg);
	assert_int_equal(prof_seg_annot(seg, len, &a), 0);
	munmap(seg, len);
	n = prof_annot_plot_sums(a, &v);
	for (i = 0; i < n; i++) {
		if (!strcmp(v[i].name, "cov_plot_a"))
			ia = i;
		if (!strcmp(v[i].name, "cov_plot_b"))
			ib = i;
	}
	assert_true(ia >= 0 && ib > ia);
	assert_int_equal(v[ia].count, 1);
	assert_int_equal(v[ib].count, 2);
	assert_true(v[ib].min == 2.0 && v[ib].max == 4.0 && v[ib].last == 4.0 &&
		    v[ib].sum == 6.0);
	free(v);
	prof_annot__destroy(a);
}

/* --- status ------------------------------------------------------------------ */

static void test_status_no_profd(void **state)
{
	char sock[128], want[512], *out;

	(void)state;
	snprintf(sock, sizeof(sock), "%s/none.sock", dir);
	/* profd asked for, at a socket nobody made */
	unsetenv("PROFCTL_NO_DAEMON");
	setenv("PROF_SOCKET", sock, 1);
	assert_int_equal(run_stdout((const char *[]){ "status", NULL }, &out), 0);
	snprintf(want, sizeof(want),
		 "profd: not running (%s: No such file or directory); profctl reads your "
		 "segments in /dev/shm directly\nkernel assistance: off (needs profd)\n",
		 sock);
	if (!strstr(out, want))
		fail_msg("status said:\n%s\nwant:\n%s", out, want);
	free(out);
	unsetenv("PROF_SOCKET");
	setenv("PROFCTL_NO_DAEMON", "1", 1);
}

/*
 * A profd of our own making on a socket: it takes the pid namespace (as
 * profd does, OK), then answers a status request with *status, or with
 * an error if err; any other request with the error req_err if set, else
 * with a closed connection.
 */
struct fake_profd {
	int lfd;
	int err;
	int req_err;
	struct profd_wire_status status;
};

static void *fake_profd(void *arg)
{
	struct fake_profd *fp = arg;
	union {
		char buf[PROFD_MSG_MAX];
		struct profd_hdr h;
	} m;
	struct profd_recv r;
	int c = accept(fp->lfd, NULL, NULL);

	if (c < 0)
		return NULL;
	while (profd_recv(c, m.buf, sizeof(m.buf), 0, &r) > 0) {
		if (r.fd >= 0)
			close(r.fd);
		if (m.h.type == PROFD_MSG_PIDNS) {
			struct profd_hdr ok = { PROFD_MSG_OK, sizeof(ok) };

			send(c, &ok, sizeof(ok), MSG_NOSIGNAL);
		} else if (m.h.type == PROFD_MSG_STATUS_REQ && fp->err) {
			struct {
				struct profd_hdr h;
				struct profd_error e;
			} e = { { PROFD_MSG_ERROR, sizeof(e) }, { fp->err, 0 } };

			send(c, &e, sizeof(e), MSG_NOSIGNAL);
		} else if (m.h.type == PROFD_MSG_STATUS_REQ) {
			struct {
				struct profd_hdr h;
				struct profd_wire_status s;
			} s = { { PROFD_MSG_STATUS, sizeof(s) }, fp->status };

			send(c, &s, sizeof(s), MSG_NOSIGNAL);
		} else if (fp->req_err) {
			struct {
				struct profd_hdr h;
				struct profd_error e;
			} e = { { PROFD_MSG_ERROR, sizeof(e) }, { fp->req_err, 0 } };

			send(c, &e, sizeof(e), MSG_NOSIGNAL);
		} else {
			break;
		}
	}
	close(c);
	return NULL;
}

/* profctl ARGS against fp on sock: its status; what it printed in *out
 * (free it), what it said in err */
static int against(struct fake_profd *fp, const char *sock, const char **args, char **out,
		   char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[128];
	pthread_t th;
	int rc;

	unlink(sock);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	fp->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(fp->lfd >= 0);
	assert_int_equal(bind(fp->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fp->lfd, 4), 0);
	assert_int_equal(pthread_create(&th, NULL, fake_profd, fp), 0);
	/* profd asked for, at the socket given */
	unsetenv("PROFCTL_NO_DAEMON");
	setenv("PROF_SOCKET", sock, 1);
	snprintf(path, sizeof(path), "%s/stdout", dir);
	rc = test_profctl_run_io(dir, path, args, err, errlen);
	*out = test_slurp(path, NULL);
	assert_non_null(*out);
	unsetenv("PROF_SOCKET");
	setenv("PROFCTL_NO_DAEMON", "1", 1);
	/* profctl has closed its end: the fake's read ends */
	assert_int_equal(pthread_join(th, NULL), 0);
	close(fp->lfd);
	unlink(sock);
	return rc;
}

/* profctl status against fp on sock: what it printed (free it) */
static char *status_of(struct fake_profd *fp, const char *sock)
{
	char *out;

	assert_int_equal(against(fp, sock, (const char *[]){ "status", NULL }, &out, NULL, 0), 0);
	return out;
}

static void test_status_refused(void **state)
{
	struct fake_profd fp = { .err = -EACCES };
	char sock[128], want[512], *out;

	(void)state;
	snprintf(sock, sizeof(sock), "%s/refuses.sock", dir);
	out = status_of(&fp, sock);
	snprintf(want, sizeof(want), "profd: connected to %s but status failed: Permission denied\n",
		 sock);
	if (!strstr(out, want))
		fail_msg("status said:\n%s\nwant:\n%s", out, want);
	/* and it goes on without profd: what it reads itself */
	assert_non_null(strstr(out, "\nprofiled processes visible: "));
	free(out);
}

static void test_status_bpf_off(void **state)
{
	struct fake_profd fp = {
		.status = { .version = 7 << 16 | 3,
			    .bpf_why = "no BTF here",
			    .processes = 2,
			    .interval_ms = 100,
			    .uptime_ns = 42000000000ull,
			    .tsc_why = "test",
			    .max_memory = 8ull << 20,
			    .mem_history = 1ull << 20,
			    .frames = 5 },
	};
	char sock[128], want[512], *out;

	(void)state;
	snprintf(sock, sizeof(sock), "%s/nobpf.sock", dir);
	out = status_of(&fp, sock);
	snprintf(want, sizeof(want), "profd: running at %s, version 7.3, up 42s\n", sock);
	if (!strstr(out, want) || !strstr(out, "kernel assistance: off (no BTF here)\n") ||
	    !strstr(out, "processes followed: 2, ") ||
	    !strstr(out, "history: 1.0 MiB of 8.0 MiB (--max-memory): live processes 1.0 MiB "
			 "in 5 frames, exited 0.0 MiB\n") ||
	    !strstr(out, "history dropped for memory: none\n") ||
	    !strstr(out, "tsc: not trusted across CPUs"))
		fail_msg("status said:\n%s", out);
	free(out);
}

/* profd refuses a process's report: profctl says why in the user's terms */
static void test_report_refused(void **state)
{
	static const struct {
		int err;
		const char *said;
	} cases[] = {
		{ -EPROTO, "pid 1: unknown segment version (profd)\n" },
		{ -EINVAL, "pid 1: corrupt segment (profd)\n" },
		{ -EIO, "pid 1: profd failed: Input/output error\n" },
	};
	char sock[128], err[1024], *out;
	size_t i;

	(void)state;
	snprintf(sock, sizeof(sock), "%s/refuses.sock", dir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake_profd fp = { .req_err = cases[i].err };

		err[0] = 0;
		assert_int_not_equal(against(&fp, sock,
					     (const char *[]){ "report", "--pid", "1", NULL }, &out,
					     err, sizeof(err)),
				     0);
		free(out);
		if (!strstr(err, cases[i].said))
			fail_msg("profd's %d: profctl said:\n%s\nwant: %s", cases[i].err, err,
				 cases[i].said);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_slots),
		cmocka_unit_test(test_out_full_device),
		cmocka_unit_test(test_out_rename_fails),
		cmocka_unit_test(test_out_fifo_of_another),
		cmocka_unit_test(test_save_needs_file),
		cmocka_unit_test(test_input_too_big),
		cmocka_unit_test(test_report_every_process),
		cmocka_unit_test(test_inside_json),
		cmocka_unit_test(test_report_no_such_thread),
		cmocka_unit_test(test_diff_refusals),
		cmocka_unit_test(test_top_sort),
		cmocka_unit_test(test_plot_sums),
		cmocka_unit_test(test_status_no_profd),
		cmocka_unit_test(test_status_refused),
		cmocka_unit_test(test_status_bpf_off),
		cmocka_unit_test(test_report_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
