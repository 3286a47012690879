// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd.c - the profiling daemon: readiness, main loop (its
 * options are profd_conf.c, its log profd_log.c).
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
#include "profd_stacks.h"
#include "prof.h"
#include "client.h"

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

static int epoll_add(int epfd, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* tags for the fds that are not connections */
static char tag_timer, tag_signal, tag_inotify, tag_sample;

/*
 * The lock, BPF, discovery and the socket, then detached (with -d): a
 * failure exits non-zero where profd was started.
 */
static void start(void)
{
	int err;

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
}

/* the TSC's verdict, processes that started before us, then ready */
static void ready(void)
{
	/* before the first registration: each carries the verdict */
	profd_tsc_check();
	log_info("tsc %s: %s", profd_tsc()->synced ? "synchronized" : "not trusted across CPUs",
		 profd_tsc()->why);
	/* processes that started before us */
	seg_rescan();
	log_info("ready on %s, sampling every %u ms, kernel assistance %s%s%s", conf.sock_path,
		 conf.interval_ms, kbpf_on() ? "on" : "off", kbpf_on() ? "" : ": ", kbpf_why());
	{
		char msg[256];

		snprintf(msg, sizeof(msg), "READY=1\nSTATUS=kernel assistance %s%s%s",
			 kbpf_on() ? "on" : "off", kbpf_on() ? "" : ": ", kbpf_why());
		notify(msg);
	}
}

int main(int argc, char **argv)
{
	struct itimerspec its = { 0 };
	struct epoll_event evs[64];
	__u64 ticks, last_rescan = 0;
	sigset_t sigs;
	int epfd, tfd, sfd, ifd, n, i;
	bool stop = false;

	profd_conf_parse(argc, argv);
	/* with -d, stderr until detached: a failed start is seen where it was asked for */
	log_init(conf.syslog, conf.verbose);
	profd_start_ns = profd_now_ns();

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	start();

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
	ifd = seg_inotify_fd();
	if (sample_timer_fd() >= 0 && epoll_add(epfd, sample_timer_fd(), &tag_sample))
		fatal("failed to watch the sample timer");
	/* edge-triggered: the kernel wakes it only when the ring passes half
	 * full (profsample.bpf.c), never at each sample */
	if (sample_ring_fd() >= 0) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.ptr = &tag_sample };

		if (epoll_ctl(epfd, EPOLL_CTL_ADD, sample_ring_fd(), &ev))
			fatal("failed to watch the sample ring");
	}
	if (ifd >= 0 && epoll_add(epfd, ifd, &tag_inotify))
		fatal("failed to watch inotify fd=%d", ifd);

	ready();
	last_rescan = profd_now_ns();

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
