// SPDX-License-Identifier: MIT
/*
 * profd.c - the profiling daemon: options, logging, readiness, main loop.
 *
 * One thread, one epoll: the control socket and its connections, inotify
 * on /dev/shm, a timerfd for sampling, a signalfd for shutdown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "profd.h"
#include "prof.h"
#include "client.h"
#include "profd_stacks.h"

struct profd_conf conf = {
	.sock_path = PROFD_SOCKET_DEFAULT,
	.interval_ms = 100,
	.history_s = 60,
	.keep_s = 600,
	.max_exited = 64,
	.nslots = PROF_SCHED_MAX_SLOTS,
	.uid_slots = 0, /* a quarter of --slots unless set */
	.uid_conns = 1024,
	.uid_segs = 1024,
	.max_segs = 4096, /* fewer when RLIMIT_NOFILE is low */
	.uid_kept_bytes = 256ull << 20,
	.idle_s = 10,
	.sample_hz = 997,
};
__u64 profd_start_ns;

static bool log_syslog;
static int log_verbose;

__u64 profd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

void log_init(bool use_syslog, int verbose)
{
	log_syslog = use_syslog;
	log_verbose = verbose;
	if (use_syslog)
		openlog("profd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/* syslog or stderr, never both: under systemd both end in the journal */
static void vlog(int pri, const char *fmt, va_list ap, const char *err)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (log_syslog) {
		if (err)
			syslog(pri, "%s: %s", buf, err);
		else
			syslog(pri, "%s", buf);
		return;
	}
	if (err)
		fprintf(stderr, "profd: %s: %s\n", buf, err);
	else
		fprintf(stderr, "profd: %s\n", buf);
}

void log_warn(const char *fmt, ...)
{
	const char *err = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, err);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, NULL);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 1 && !log_syslog)
		return;
	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap, NULL);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 2)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap, NULL);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	const char *err = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, err);
	va_end(ap);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, NULL);
	va_end(ap);
	exit(1);
}

/* sd_notify without libsystemd: one datagram to $NOTIFY_SOCKET */
static void notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (path[0] == '@')
		sa.sun_path[0] = 0;
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		log_warn("failed to notify systemd");
	close(fd);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: profd [-dhv] [--socket PATH] [--interval MS] [--history SEC]\n"
		"             [--keep SEC] [--slots N] [--uid-slots N] [--uid-conns N]\n"
		"             [--max-conns N] [--uid-procs N] [--uid-kept MB] [--idle SEC]\n"
		"             [--syslog] [--no-bpf] [--no-ns-scan] [--max-memory BYTES]\n"
		"             [--sample-hz N]\n"
		"\n"
		"  -d, --daemon        detach once the socket is up, then log to syslog\n"
		"  -s, --socket PATH   control socket (default %s)\n"
		"  -i, --interval MS   sampling interval (default 100, 10..3600000)\n"
		"      --history SEC   how far back \"the last N seconds\" reaches (default 60,\n"
		"                      1..86400)\n"
		"      --keep SEC      keep exited processes this long (default 600, 0..2592000),\n"
		"                      at most the 64 that exited last\n"
		"      --max-memory BYTES  history and kept data of all processes together\n"
		"                      (K, M, G suffixes; default 1G, or a quarter of RAM if\n"
		"                      less; 1M..1T): past it the oldest frames of the\n"
		"                      biggest processes go first\n"
		"      --slots N       kernel records, threads at once (default %u, at most "
		"65535)\n"
		"      --uid-slots N   kernel records one uid may hold (default a quarter of "
		"--slots)\n"
		"      --uid-conns N   connections one uid may hold (default 1024; root has a\n"
		"                      reserve)\n"
		"      --max-conns N   connections of all uids (default and at most what\n"
		"                      RLIMIT_NOFILE leaves: a uid past its share gives a\n"
		"                      place to another)\n"
		"      --uid-procs N   processes of one uid followed at once (default 1024)\n"
		"      --uid-kept MB   exited processes' data kept per uid (default 256)\n"
		"      --idle SEC      close a connection that asks nothing this long, unless\n"
		"                      it registered threads (default 10)\n"
		"      --syslog        log to syslog instead of stderr, without detaching\n"
		"      --no-bpf        run without kernel assistance\n"
		"      --no-ns-scan    do not look into other mount namespaces' /dev/shm (a\n"
		"                      container that hands its segment over is followed)\n"
		"      --sample-hz N   sample registered threads' stacks N times a second\n"
		"                      on each CPU, counted under the zone open (default\n"
		"                      997, 0 off, at most 10000; needs kernel assistance)\n"
		"  -v, --verbose       more logging (twice: debug)\n"
		"  -h, --help          this text\n",
		PROFD_SOCKET_DEFAULT, PROF_SCHED_MAX_SLOTS);
}

static __u32 arg_u32(const char *opt, const char *s, __u32 lo, __u32 hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v < lo || v > hi)
		fatalx("%s: want %u..%u, got \"%s\"", opt, lo, hi, s);
	return (__u32)v;
}

/* bytes, with a K, M or G suffix (powers of 1024), 1 MiB to 1 TiB */
static __u64 arg_bytes(const char *opt, const char *s)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end && !end[1] && strchr("kKmMgG", *end))
		shift = *end == 'k' || *end == 'K' ? 10 : *end == 'm' || *end == 'M' ? 20 : 30;
	else if (*end)
		v = 0;
	if (errno || !*s || *s == '-' || v > (1ull << 40) >> shift || v << shift < (1ull << 20))
		fatalx("%s: want bytes (K, M, G suffixes) from 1M to 1T, got \"%s\"", opt, s);
	return v << shift;
}

/* history and kept data by default: 1 GiB, or a quarter of RAM if less */
static __u64 default_max_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	__u64 ram = pages > 0 && psize > 0 ? (__u64)pages * (__u64)psize : 0;

	if (ram && ram / 4 < (1ull << 30))
		return ram / 4 > (1ull << 20) ? ram / 4 : 1ull << 20;
	return 1ull << 30;
}

static void parse_args(int argc, char **argv)
{
	enum { O_HISTORY = 256, O_KEEP, O_SLOTS, O_SYSLOG, O_NO_BPF, O_NO_NS_SCAN, O_UID_SLOTS,
	       O_UID_CONNS, O_MAX_CONNS, O_UID_PROCS, O_UID_KEPT, O_IDLE, O_MAX_MEMORY, O_SAMPLE_HZ };
	static const struct option opts[] = {
		{ "daemon", no_argument, NULL, 'd' },
		{ "socket", required_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "history", required_argument, NULL, O_HISTORY },
		{ "keep", required_argument, NULL, O_KEEP },
		{ "slots", required_argument, NULL, O_SLOTS },
		{ "uid-slots", required_argument, NULL, O_UID_SLOTS },
		{ "uid-conns", required_argument, NULL, O_UID_CONNS },
		{ "max-conns", required_argument, NULL, O_MAX_CONNS },
		{ "uid-procs", required_argument, NULL, O_UID_PROCS },
		{ "uid-kept", required_argument, NULL, O_UID_KEPT },
		{ "idle", required_argument, NULL, O_IDLE },
		{ "max-memory", required_argument, NULL, O_MAX_MEMORY },
		{ "syslog", no_argument, NULL, O_SYSLOG },
		{ "no-bpf", no_argument, NULL, O_NO_BPF },
		{ "no-ns-scan", no_argument, NULL, O_NO_NS_SCAN },
		{ "sample-hz", required_argument, NULL, O_SAMPLE_HZ },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "ds:i:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			conf.daemonize = true;
			break;
		case 's':
			conf.sock_path = optarg;
			break;
		case 'i':
			conf.interval_ms = arg_u32("--interval", optarg, 10, 3600000);
			break;
		case O_HISTORY:
			conf.history_s = arg_u32("--history", optarg, 1, 86400);
			break;
		case O_KEEP:
			conf.keep_s = arg_u32("--keep", optarg, 0, 30 * 86400);
			break;
		case O_SLOTS:
			conf.nslots = arg_u32("--slots", optarg, 1, PROF_SCHED_MAX_SLOTS_LIMIT);
			break;
		case O_UID_SLOTS:
			conf.uid_slots = arg_u32("--uid-slots", optarg, 1, PROF_SCHED_MAX_SLOTS_LIMIT);
			break;
		case O_UID_CONNS:
			conf.uid_conns = arg_u32("--uid-conns", optarg, 1, 65536);
			break;
		case O_MAX_CONNS:
			conf.max_conns = arg_u32("--max-conns", optarg, 2, 65536);
			break;
		case O_UID_PROCS:
			conf.uid_segs = arg_u32("--uid-procs", optarg, 1, 65536);
			break;
		case O_UID_KEPT:
			conf.uid_kept_bytes = (__u64)arg_u32("--uid-kept", optarg, 0, 1 << 20) << 20;
			break;
		case O_IDLE:
			conf.idle_s = arg_u32("--idle", optarg, 1, 86400);
			break;
		case O_MAX_MEMORY:
			conf.max_memory = arg_bytes("--max-memory", optarg);
			break;
		case O_SYSLOG:
			conf.syslog = true;
			break;
		case O_NO_NS_SCAN:
			conf.no_ns_scan = true;
			break;
		case O_NO_BPF:
			conf.no_bpf = true;
			break;
		case O_SAMPLE_HZ:
			conf.sample_hz = arg_u32("--sample-hz", optarg, 0, 10000);
			break;
		case 'v':
			conf.verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(1);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(1);
	}
	if (!conf.max_memory)
		conf.max_memory = default_max_memory();
	if (!conf.uid_slots)
		conf.uid_slots = conf.nslots / 4 ? conf.nslots / 4 : 1;
}

static int epoll_add(int epfd, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* tags for the fds that are not connections */
static char tag_timer, tag_signal, tag_inotify, tag_sample;

int main(int argc, char **argv)
{
	struct itimerspec its = { 0 };
	struct epoll_event evs[64];
	__u64 ticks, last_rescan = 0;
	sigset_t sigs;
	int epfd, tfd, sfd, ifd, n, i, err;
	bool stop = false;

	parse_args(argc, argv);
	/* with -d, stderr until detached: a failed start is seen where it was asked for */
	log_init(conf.syslog, conf.verbose);
	profd_start_ns = profd_now_ns();

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = ctl_lock(conf.sock_path);
	if (err == -EADDRINUSE)
		fatalx("another profd holds %s.lock", conf.sock_path);
	if (err == -EPERM)
		fatalx("%s.lock is not a regular file of this user's: not a lock of profd's",
		       conf.sock_path);
	if (err)
		fatalx("failed to open the control socket %s: %s", conf.sock_path, strerror(-err));
	if (conf.no_bpf)
		log_info("bpf: disabled by --no-bpf");
	else
		kbpf_open(conf.nslots);
	sample_open(conf.sample_hz);
	if ((err = seg_init()))
		fatalx("failed to set up discovery: %s", strerror(-err));
	err = ctl_open(conf.sock_path);
	if (err == -EADDRINUSE)
		fatalx("another profd is answering on %s", conf.sock_path);
	if (err)
		fatalx("failed to open the control socket %s: %s", conf.sock_path, strerror(-err));

	/*
	 * Detach only now: the socket is bound and BPF was tried, so the
	 * parent's exit status says whether profd started.  The fds so far
	 * (bpf, inotify, the socket) go along; the signalfd and the epoll
	 * that watches it are made after, in the child (a signalfd polls the
	 * signals of the process that added it to the epoll).
	 */
	if (conf.daemonize) {
		if (daemon(0, 0))
			fatal("failed to detach");
		log_init(true, conf.verbose);
	}

	epfd = epoll_create1(EPOLL_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (epfd < 0 || tfd < 0 || sfd < 0)
		fatal("failed to create the event fds");
	its.it_interval.tv_sec = conf.interval_ms / 1000;
	its.it_interval.tv_nsec = (long)(conf.interval_ms % 1000) * 1000000;
	its.it_value = its.it_interval;
	if (timerfd_settime(tfd, 0, &its, NULL))
		fatal("failed to arm the sampling timer");
	if (epoll_add(epfd, ctl_listen_fd(), ctl_listener_tag()) ||
	    epoll_add(epfd, tfd, &tag_timer) || epoll_add(epfd, sfd, &tag_signal))
		fatal("failed to watch the event fds");
	if (sample_timer_fd() >= 0 && epoll_add(epfd, sample_timer_fd(), &tag_sample))
		fatal("failed to watch the sample timer");
	ifd = seg_inotify_fd();
	if (ifd >= 0 && epoll_add(epfd, ifd, &tag_inotify))
		fatal("failed to watch inotify fd=%d", ifd);

	/* before the first registration: each carries the verdict */
	profd_tsc_check();
	log_info("tsc %s: %s", profd_tsc()->synced ? "synchronized" : "not trusted across CPUs",
		 profd_tsc()->why);
	/* processes that started before us */
	seg_rescan();
	last_rescan = profd_now_ns();
	log_info("ready on %s, sampling every %u ms, kernel assistance %s%s%s", conf.sock_path,
		 conf.interval_ms, kbpf_on() ? "on" : "off", kbpf_on() ? "" : ": ", kbpf_why());
	{
		char msg[256];

		snprintf(msg, sizeof(msg), "READY=1\nSTATUS=kernel assistance %s%s%s",
			 kbpf_on() ? "on" : "off", kbpf_on() ? "" : ": ", kbpf_why());
		notify(msg);
	}

	while (!stop) {
		n = epoll_wait(epfd, evs, 64, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fatal("epoll_wait");
		}
		for (i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &tag_timer) {
				if (read(tfd, &ticks, sizeof(ticks)) < 0)
					continue;
				/* the rescan backs inotify up */
				if (profd_now_ns() - last_rescan >= seg_rescan_period()) {
					seg_rescan();
					last_rescan = profd_now_ns();
				}
				seg_sample();
				sample_poll();
				ctl_tick(epfd);
			} else if (tag == &tag_signal) {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
					log_info("signal %u, exiting", si.ssi_signo);
					stop = true;
				}
			} else if (tag == &tag_sample) {
				sample_drain();
			} else if (tag == &tag_inotify) {
				seg_inotify_event();
			} else if (ctl_is_listener(tag)) {
				ctl_accept(epfd);
			} else {
				ctl_event(epfd, tag, evs[i].events);
			}
		}
		ctl_reap();
	}
	notify("STOPPING=1");
	ctl_close();
	sample_close();
	seg_fini();
	kbpf_close();
	close(epfd);
	close(tfd);
	close(sfd);
	return 0;
}
