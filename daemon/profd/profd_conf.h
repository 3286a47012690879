/* SPDX-License-Identifier: MIT */
/*
 * daemon/profd/profd_conf.h - profd's settings, parsed once at start
 * (profd_conf.c), and its clock.
 */
#ifndef PROFD_CONF_H
#define PROFD_CONF_H

#include <stdbool.h>
#include <linux/types.h>

struct profd_conf {
	const char *sock_path;
	__u32 interval_ms;	/* sampling */
	__u32 history_s;	/* "last N seconds" reach back this far */
	__u32 keep_s;		/* exited processes stay this long */
	__u32 max_exited;	/* and at most this many */
	__u32 nslots;		/* kernel records */
	/* per uid: fair shares of what every user draws from */
	__u32 uid_slots;	/* kernel records */
	__u32 uid_conns;	/* control connections */
	__u32 max_conns;	/* control connections, all uids (0: as fds allow) */
	__u32 uid_segs;		/* processes followed (alive) */
	__u32 max_segs;		/* processes followed (alive), all uids: an fd each */
	__u64 uid_kept_bytes;	/* exited processes' data kept */
	__u64 max_memory;	/* history and kept data, all processes */
	__u32 sample_hz;	/* stacks sampled a second a CPU (0: off) */
	__u32 idle_s;		/* a connection that asks nothing this long is closed */
	bool daemonize;
	bool syslog;
	bool no_bpf;
	bool no_ns_scan;	/* not into other mount namespaces' /dev/shm */
	int verbose;
};

extern struct profd_conf conf;

extern __u64 profd_start_ns;
__u64 profd_now_ns(void);	/* CLOCK_MONOTONIC */
/* the options (profd --help); exits on a bad one */
void profd_conf_parse(int argc, char **argv);

#endif /* PROFD_CONF_H */
