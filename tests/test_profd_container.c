// SPDX-License-Identifier: MIT
/*
 * test_profd_container.c - root tier: programs in containers (their
 * own pid, mount and ipc namespaces and /dev/shm) profiled through the
 * host's profd, with and without its socket, rootless, and profd with
 * least privilege.
 *
 * Fixtures (profd, the child driver, teardown): profd_fixture.h.
 */
#include "profd_fixture.h"

static void ctr_files_remove(void);

static int teardown(void **state)
{
	(void)state;
	fixture_teardown();
	ctr_files_remove();
	return 0;
}

/* --- containers ------------------------------------------------------- */

/*
 * A container as a runtime makes one, with unshare(1): new pid, mount and
 * ipc namespaces (and a user namespace for a rootless one), a fresh /proc,
 * a fresh tmpfs on /dev/shm and on /run, and profd's socket bind-mounted
 * at the default path, or not at all (and with ctr_hide_ns, its pid 1's
 * /proc/1/ns hidden: its runtime cannot hand profd its pid namespace, as
 * one before protocol 5 does not).  tests/ctr_payload runs in it as its
 * pid 1, says "R 1" once registered ("U 1" if not), and lives until its
 * stdin closes.
 */
static const char ctr_script[] =
	"set -e\n"
	"mount -t tmpfs -o mode=1777 tmpfs /dev/shm\n"
	"mount -t tmpfs tmpfs /run\n"
	"mkdir -p /run/profd\n"
	"if [ -n \"$HIDENS\" ]; then mount -t tmpfs tmpfs /proc/$$/ns; fi\n"
	"if [ -n \"$HOSTSOCK\" ]; then\n"
	"	touch /run/profd/profd.sock\n"
	"	mount --bind \"$HOSTSOCK\" /run/profd/profd.sock\n"
	"fi\n"
	"exec env -u PROF_SOCKET -u PROFD_SOCKET \"$PAYLOAD\" $WAIT\n";

static bool ctr_hide_ns;

struct ctr {
	struct child unshare; /* the runtime: its stdin, and its stdout and stderr */
	pid_t pid;	      /* the payload, on the host */
	char said[16];	      /* its line */
};

/* the container's payload pid on the host: unshare's child */
static pid_t ctr_payload_pid(pid_t unshare)
{
	char path[64];
	int pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)unshare, (int)unshare);
	f = fopen(path, "r");
	if (f && fscanf(f, "%d", &pid) != 1)
		pid = 0;
	if (f)
		fclose(f);
	return pid;
}

/*
 * A program built beside us (tests/ctr_payload, profctl), where uid may run
 * it: the build tree may be private (a scratch copy in a 0700 directory),
 * SOCK_DIR is not.  The copy is SOCK_DIR/<its name>.<our pid>, removed by
 * ctr_end.
 */
static const char *bin_for(uid_t uid, const char *name, char copy[128])
{
	static char built[4096];
	const char *src = sibling_bin(name, built, sizeof(built));
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	char buf[65536];
	int in, out = -1;
	ssize_t n;

	if (!uid)
		return src;
	snprintf(copy, 128, SOCK_DIR "/%s.%d", base, (int)getpid());
	unlink(copy);
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in >= 0)
		out = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return copy;
}

/* start one, wait (bounded) for the payload's line; skip if unshare cannot */
static struct ctr ctr_start(uid_t uid, bool with_sock, const char *wait)
{
	static char copy[128];
	const char *payload = bin_for(uid, "tests/ctr_payload", copy);
	struct ctr c = { .pid = -1 };
	struct pollfd pf;
	ssize_t n = 0;

	if (access("/usr/bin/unshare", X_OK) && access("/bin/unshare", X_OK)) {
		printf("skip: no unshare(1)\n");
		skip();
	}
	if (child_start(&c.unshare) == 0) {
		const char *argv[16] = { "unshare" };
		int k = 1;

		if (dup2(c.unshare.rd, 0) < 0 || dup2(c.unshare.wr, 1) < 0 ||
		    dup2(c.unshare.wr, 2) < 0)
			_exit(126);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(125);
		if (uid) {
			argv[k++] = "--user";
			argv[k++] = "--map-root-user";
		}
		argv[k++] = "--pid";
		argv[k++] = "--fork";
		argv[k++] = "--mount";
		argv[k++] = "--ipc";
		argv[k++] = "--mount-proc";
		argv[k++] = "sh";
		argv[k++] = "-c";
		argv[k++] = ctr_script;
		argv[k] = NULL;
		setenv("HOSTSOCK", with_sock ? sock_path : "", 1);
		setenv("HIDENS", ctr_hide_ns ? "1" : "", 1);
		setenv("PAYLOAD", payload, 1);
		setenv("WAIT", wait, 1);
		execvp("unshare", (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	kids_add(c.unshare.pid);
	pf.fd = c.unshare.rd;
	pf.events = POLLIN;
	/* the payload waits 5 s for profd at most */
	if (poll(&pf, 1, 20000) == 1)
		n = read(c.unshare.rd, c.said, sizeof(c.said) - 1);
	if (n > 0)
		c.said[n] = 0;
	if (n < 2 || (c.said[0] != 'R' && c.said[0] != 'U')) {
		printf("skip: unshare could not make the container (uid %u): %s\n", (unsigned)uid,
		       n > 0 ? c.said : "no output");
		skip();
	}
	c.pid = ctr_payload_pid(c.unshare.pid);
	assert_true(c.pid > 0);
	return c;
}

/* bin_for's copies and test_container's documents, if any */
static void ctr_files_remove(void)
{
	static const char *const left[] = { "ctr_payload.%d", "profctl.%d", "ctr.%d.0.json",
					     "ctr.%d.1.json", "ctr.%d.2.json" };
	char name[64], path[128];
	size_t i;

	for (i = 0; i < sizeof(left) / sizeof(left[0]); i++) {
		snprintf(name, sizeof(name), left[i], (int)getpid());
		snprintf(path, sizeof(path), SOCK_DIR "/%s", name);
		unlink(path);
	}
}

static void ctr_end(struct ctr *c)
{
	ctr_files_remove();
	child_end(&c->unshare);
}

/* profd's entry for pid, once it follows it (bounded) */
static bool profd_entry(int fd, pid_t pid, struct profd_proc *out)
{
	__u64 end = now_ns() + 10000000000ull;
	struct profd_proc *procs;
	size_t n, i;

	while (now_ns() < end) {
		if (!profd_list(fd, &procs, &n)) {
			for (i = 0; i < n && procs[i].pid != (__u32)pid; i++)
				;
			if (i < n)
				*out = procs[i];
			free(procs);
			if (i < n)
				return true;
		}
		usleep(20000);
	}
	return false;
}

/* the container's scheduler facts, seen from the host through profd: the
 * migrations its migrate_zone counted (one a call with kernel facts) */
static __u64 check_ctr_snapshot(int fd, const struct ctr *c, uid_t uid)
{
	const struct prof_snap_node *m;
	struct prof_snapshot *s;
	__u64 migrated;

	s = snap_of(fd, c->pid, PROFD_SNAP_START);
	assert_non_null(s);
	/* named by its host pid; its own pid, its cgroup and its owner said */
	assert_int_equal(s->pid, c->pid);
	assert_int_equal(s->ns_pid, 1);
	assert_true(s->cgroup[0] != 0);
	assert_int_equal(s->uid, uid);
	/* the container's tids translated: every call had kernel facts */
	check_migrated(s, &m);
	migrated = m->migrated;
	prof_snapshot__destroy(s);
	return migrated;
}

/* a container with profd's socket (ctr_start), its payload registered and
 * followed by profd (fd) as pid 1 of its namespace: profd's entry into *e */
static struct ctr ctr_registered(int fd, struct profd_proc *e)
{
	struct ctr c = ctr_start(0, true, "5");

	assert_string_equal(c.said, "R 1\n");
	assert_true(profd_entry(fd, c.pid, e));
	assert_int_equal(e->ns_pid, 1);
	return c;
}

/*
 * profctl inside the container (args: nsenter ... profctl list --format
 * json): through profd, its pid 1 listed by that pid, with none of the
 * host's pids (host's, nor the container's own as the host sees it); then
 * args made report --pid 1: its text (free it)
 */
static char *ctr_inside(const char **args, pid_t host, pid_t ctr)
{
	char hk[32], ck[32], *text;

	assert_int_equal(cmd_run(0, "nsenter", args, false, &text), 0);
	snprintf(hk, sizeof(hk), "\"pid\":%d,", (int)host);
	snprintf(ck, sizeof(ck), "\"pid\":%d,", (int)ctr);
	assert_all_in(text, "\"source\":\"profd\"", "\"pid\":1,");
	assert_none_in(text, "\"ns_pid\"", hk, ck);
	free(text);
	args[12] = "report";
	args[13] = "--pid";
	args[14] = "1";
	assert_int_equal(cmd_run(0, "nsenter", args, false, &text), 0);
	assert_non_null(strstr(text, "process 1 (ctr_payload)"));
	return text;
}

/*
 * A container with profd's socket bind-mounted: its runtime registers as
 * usual, through the default path, and hands its segment over.  The host
 * lists and reports it by host pid with its own pid and cgroup, and with
 * kernel facts; profctl inside sees it (and only it) by its own pid; a
 * second host user does not see it.
 */
static void test_container(void **state)
{
	char hp[16], pidkey[32], migr[32], *text = NULL;
	const char *list_json[] = { "list", "--format", "json", NULL };
	struct profd_proc e;
	struct child host;
	struct ctr c;
	int fd;

	(void)state;
	need_two_cpus();
	fd = need_profd();
	host = spawn_followed(fd, stay_zone);
	c = ctr_registered(fd, &e);
	assert_true(e.alive);
	assert_int_equal(e.kernel, 1);
	assert_true(e.cgroup[0] != 0);
	/* each call with kernel facts moved once: all 20 but the few whose
	 * return to a CPU the kernel did not show (assert_facts) */
	snprintf(migr, sizeof(migr), "\"migrated\":%llu,",
		 (unsigned long long)check_ctr_snapshot(fd, &c, 0));

	/* profctl on the host: list and report, JSON carrying where it runs */
	snprintf(hp, sizeof(hp), "%d", (int)c.pid);
	snprintf(pidkey, sizeof(pidkey), "\"pid\":%d,", (int)c.pid);
	assert_int_equal(profctl_run(list_json, false, &text), 0);
	assert_non_null(strstr(text, pidkey));
	assert_non_null(strstr(text, "\"ns_pid\":1,"));
	free(text);
	{
		const char *args[] = { "report", "--pid", hp, "--format", "json", NULL, NULL, NULL };
		static const char *const view[][2] = { { NULL, NULL },
						       { "--flat", NULL },
						       { "--callers", "migrate_zone" } };
		char doc[3][96], cmd[512];
		int v;

		for (v = 0; v < 3; v++) {
			FILE *out;

			args[5] = view[v][0];
			args[6] = view[v][1];
			assert_int_equal(profctl_run(args, false, &text), 0);
			assert_non_null(strstr(text, pidkey));
			assert_non_null(strstr(text, "\"ns_pid\":1,\"cgroup\":\""));
			/* the report says what the snapshot did: on failure, what
			 * each node had */
			if (!v && !strstr(text, migr)) {
				const char *m = text;

				while ((m = strstr(m, "\"migrated\":")))
					print_message("%.24s\n", m++);
				fail_msg("no node of %s", migr);
			}
			snprintf(doc[v], sizeof(doc[v]), SOCK_DIR "/ctr.%d.%d.json", (int)getpid(), v);
			out = fopen(doc[v], "w");
			assert_non_null(out);
			fputs(text, out);
			fclose(out);
			free(text);
		}
		/* the documents, ns_pid and cgroup included, are the schema's */
		snprintf(cmd, sizeof(cmd),
			 "test ! -f tests/check_schema.py || ! python3 -c 'import json' 2>/dev/null"
			 " || python3 tests/check_schema.py tests/report.schema.json %s %s %s",
			 doc[0], doc[1], doc[2]);
		assert_int_equal(system(cmd), 0);
		for (v = 0; v < 3; v++)
			unlink(doc[v]);
	}
	{
		const char *args[] = { "report", "--pid", hp, NULL, NULL, NULL };

		assert_int_equal(profctl_run(args, false, &text), 0);
		assert_non_null(strstr(text, "container pid 1, cgroup "));
		free(text);
		args[3] = "--format";
		args[4] = "html";
		assert_int_equal(profctl_run(args, false, &text), 0);
		assert_non_null(strstr(text, "\"ns_pid\":1,\"cgroup\":"));
		free(text);
	}
	{
		/* a saved profile says where it ran too */
		char file[128];
		const char *save[] = { "save", "--pid", hp, "-o", file, NULL };
		const char *back[] = { "report", "--input", file, NULL };

		snprintf(file, sizeof(file), SOCK_DIR "/ctr.%d.prof", (int)getpid());
		assert_int_equal(profctl_run(save, false, &text), 0);
		free(text);
		assert_int_equal(profctl_run(back, false, &text), 0);
		assert_non_null(strstr(text, "container pid 1, cgroup "));
		free(text);
		unlink(file);
	}

	/* profctl inside, through the bind-mounted socket: its own pids only */
	{
		static char bin[4096];
		const char *args[] = { "nsenter", "-t", hp, "-p", "-m", "--", "env", "-u",
				       "PROF_SOCKET", "-u", "PROFD_SOCKET",
				       sibling_bin("profctl", bin, sizeof(bin)), "list", "--format",
				       "json", NULL };
		const char *flat[] = { "nsenter",      "-t",	   hp,	     "-p",	    "-m",
				       "--",	       "env",	   "-u",     "PROF_SOCKET", "-u",
				       "PROFD_SOCKET", bin,	   "report", "--pid",	    "1",
				       "--flat",       "--format", "csv",    NULL };
		char *row;

		text = ctr_inside(args, host.pid, c.pid);
		assert_null(strstr(text, "container pid"));
		free(text);
		/* a reset by its own pid: its reports inside count from
		 * there, the host's do not */
		args[12] = "reset";
		assert_int_equal(cmd_run(0, "nsenter", args, false, &text), 0);
		free(text);
		assert_int_equal(cmd_run(0, "nsenter", flat, false, &text), 0);
		row = strstr(text, ",migrate_zone,");
		assert_true(!row || !strncmp(row, ",migrate_zone,0,", 16));
		free(text);
		assert_true(profctl_calls(c.pid, "migrate_zone", false) > 0);
	}

	/* another host user sees none of it */
	assert_false(as_user(UID_B, c.pid).listed);
	ctr_end(&c);
	child_end(&host);
	close(fd);
	stop_profd();
}

/*
 * A container that cannot reach profd's socket: profd finds it in its
 * /dev/shm through /proc/<pid>/root, without kernel facts; so does profctl
 * on the host, directly.
 */
static void test_container_no_socket(void **state)
{
	const char *args[] = { "list", "--format", "json", NULL };
	char pidkey[32], hp[16], *text = NULL;
	struct profd_proc e;
	struct ctr c;
	int fd;

	(void)state;
	fd = need_profd();
	c = ctr_start(0, false, "0");
	assert_string_equal(c.said, "U 1\n");
	assert_true(profd_entry(fd, c.pid, &e));
	assert_int_equal(e.ns_pid, 1);
	assert_int_equal(e.kernel, 0);
	snprintf(pidkey, sizeof(pidkey), "\"pid\":%d,", (int)c.pid);
	assert_int_equal(profctl_run(args, true, &text), 0);
	assert_non_null(strstr(text, "\"source\":\"direct\""));
	assert_non_null(strstr(text, pidkey));
	assert_non_null(strstr(text, "\"ns_pid\":1,"));
	free(text);
	snprintf(hp, sizeof(hp), "%d", (int)c.pid);
	{
		const char *rep[] = { "report", "--pid", hp, "--format", "json", NULL };

		assert_int_equal(profctl_run(rep, true, &text), 0);
		assert_non_null(strstr(text, "\"ns_pid\":1,"));
		assert_non_null(strstr(text, "\"name\":\"migrate_zone\""));
		free(text);
	}
	ctr_end(&c);
	close(fd);
	stop_profd();
}

/*
 * A rootless container: an unprivileged user's user namespace maps its root
 * to that user.  The host names it by that uid: root sees it with kernel
 * facts, its user sees it, another user does not.  Its payload unlinks its
 * segment's name once registered: profd follows the segment it was handed.
 * profd does not look into other mount namespaces here: its look, once a
 * second, would find the name before it goes often enough to hide a
 * handover that never happened.
 */
static void test_container_rootless(void **state)
{
	struct as_user_res r;
	struct profd_proc e;
	struct ctr c;
	int fd;

	(void)state;
	need_two_cpus();
	fd = need_profd_opts((const char *const[]){ "--no-ns-scan", NULL });
	c = ctr_start(UID_A, true, "5 hide");
	assert_string_equal(c.said, "R 1\n");
	assert_true(profd_entry(fd, c.pid, &e));
	assert_int_equal(e.uid, UID_A);
	assert_int_equal(e.ns_pid, 1);
	check_ctr_snapshot(fd, &c, UID_A);
	r = as_user(UID_A, c.pid);
	assert_true(r.listed);
	assert_int_equal(r.snapshot, 0);
	assert_false(as_user(UID_B, c.pid).listed);
	ctr_end(&c);

	/* without profd, its user finds their own container through /proc/PID/root */
	c = ctr_start(UID_A, false, "0");
	{
		char copy[128], key[32], *text = NULL;
		const char *args[] = { "profctl", "list", "--format", "json", "--no-daemon", NULL };
		const char *bin = bin_for(UID_A, "profctl", copy);

		snprintf(key, sizeof(key), "\"pid\":%d,", (int)c.pid);
		assert_int_equal(cmd_run(UID_A, bin, args, true, &text), 0);
		assert_non_null(strstr(text, key));
		assert_non_null(strstr(text, "\"ns_pid\":1,"));
		free(text);
		assert_int_equal(cmd_run(UID_B, bin, args, true, &text), 0);
		assert_null(strstr(text, key));
		free(text);
	}
	ctr_end(&c);
	close(fd);
	stop_profd();
}

/* a connection to profd that hands over no pid namespace; fd or -1 */
static int connect_bare(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Claims of a pid namespace profd must refuse, as the unit runs it: a host
 * process handing over the container's (it still gets the host's answers,
 * the container's process by its host pid), and a process in the container
 * handing over the host's (it gets nothing, not even a process profd
 * could not place in a namespace) or one nested below its own; with its
 * own, it gets the container's process as pid 1.  0, or the step that
 * failed.
 */
static int ns_claims(pid_t ctr)
{
	struct profd_proc *procs;
	char path[64];
	int ctrns, hostns, ns, fd, st, bad;
	size_t n, i;
	pid_t p, q, k;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)ctr);
	ctrns = open(path, O_RDONLY | O_CLOEXEC);
	hostns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (ctrns < 0 || hostns < 0)
		return 1;
	fd = connect_bare();
	if (fd < 0 || profd_pidns(fd, ctrns) != -EPERM)
		return 2;
	if (profd_list(fd, &procs, &n))
		return 3;
	for (i = 0; i < n && !(procs[i].pid == (__u32)ctr && procs[i].ns_pid == 1); i++)
		;
	free(procs);
	close(fd);
	if (i == n)
		return 4;
	p = fork();
	if (p == 0) {
		if (setns(ctrns, CLONE_NEWPID))
			_exit(5);
		q = fork();
		if (q == 0) {
			fd = connect_bare();
			if (fd < 0 || profd_pidns(fd, hostns) != -EPERM)
				_exit(6);
			if (profd_list(fd, &procs, &n) || n)
				_exit(7);
			free(procs);
			close(fd);
			/* a namespace of its own making, one level below its own */
			if (unshare(CLONE_NEWPID))
				_exit(12);
			/* the link is there once the namespace has its first process */
			k = fork();
			if (k == 0) {
				pause();
				_exit(0);
			}
			ns = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
			fd = connect_bare();
			bad = ns < 0 || fd < 0 || profd_pidns(fd, ns) != -EPERM;
			if (k > 0) {
				kill(k, SIGKILL);
				waitpid(k, NULL, 0);
			}
			if (bad)
				_exit(13);
			close(fd);
			fd = profd_connect(sock_path);
			if (fd < 0 || profd_list(fd, &procs, &n))
				_exit(8);
			bad = n != 1 || procs[0].pid != 1 || procs[0].ns_pid;
			free(procs);
			_exit(bad ? 9 : 0);
		}
		_exit(q > 0 && waitpid(q, &st, 0) == q && WIFEXITED(st) ? WEXITSTATUS(st) : 10);
	}
	bad = p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) ? WEXITSTATUS(st) : 11;
	close(ctrns);
	close(hostns);
	return bad;
}

/*
 * The same under the least privilege the systemd unit gives profd (its own
 * uid, CAP_BPF, CAP_PERFMON, CAP_DAC_READ_SEARCH): no ptrace rights, so no
 * /proc/PID/ns.  The handover and NSpid still name the container's process
 * and its threads: listed and reported with kernel facts.  Inside, profctl
 * proves its pid namespace with an fd of it, and so did the runtime with
 * its handover: profd answers in the container's terms, with none of the
 * host's processes; a namespace merely claimed is refused.
 */
static void test_container_least_privilege(void **state)
{
	static char bin[4096];
	const char *args[] = { "nsenter", "-t", NULL, "-p", "-m", "--", "env", "-u",
			       "PROF_SOCKET", "-u", "PROFD_SOCKET",
			       sibling_bin("profctl", bin, sizeof(bin)), "list", "--format",
			       "json", NULL };
	char hp[16], *text = NULL;
	struct profd_proc e;
	struct child host;
	struct ctr c, c2;
	int fd;

	(void)state;
	need_two_cpus();
	profd_as = UID_B;
	fd = need_profd();
	host = spawn_followed(fd, stay_zone);
	c = ctr_registered(fd, &e);
	assert_int_equal(e.kernel, 1);
	check_ctr_snapshot(fd, &c, 0);
	/* a second container whose runtime cannot prove its namespace */
	ctr_hide_ns = true;
	c2 = ctr_registered(fd, &e);
	ctr_hide_ns = false;
	snprintf(hp, sizeof(hp), "%d", (int)c.pid);
	args[2] = hp;
	text = ctr_inside(args, host.pid, c.pid);
	assert_non_null(strstr(text, "migrate_zone"));
	free(text);
	assert_int_equal(ns_claims(c.pid), 0);
	/* a host process of a user profd may not look into: placed in
	 * profd's namespace by its NSpid alone, it registers */
	{
		struct child a = spawn(stay_zone, UID_A, 5);

		assert_int_equal(child_wait(&a), 'R');
		child_end(&a);
	}
	ctr_end(&c2);
	ctr_end(&c);
	child_end(&host);
	close(fd);
	stop_profd();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_container, teardown),
		cmocka_unit_test_teardown(test_container_no_socket, teardown),
		cmocka_unit_test_teardown(test_container_rootless, teardown),
		cmocka_unit_test_teardown(test_container_least_privilege, teardown),
	};

	/* its containers' processes are found through /proc/PID/root */
	profd_ns_scan = true;
	return profd_run_tests(tests);
}
