// SPDX-License-Identifier: MIT
/*
 * daemon/profd/profd_conf.c - profd's settings (conf: its options, parsed
 * once at start) and its clock.  Every profd file reads them through
 * profd_conf.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profd.h"
#include "prof.h"
#include "client.h"
#include "fmt.h"

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
__u64 profd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: profd [-dhv] [--socket PATH] [--interval TIME] [--history TIME]\n"
		"             [--keep TIME] [--slots N] [--uid-slots N] [--uid-conns N]\n"
		"             [--max-conns N] [--uid-procs N] [--uid-kept MB] [--idle TIME]\n"
		"             [--syslog] [--no-bpf] [--no-ns-scan] [--max-memory BYTES]\n"
		"             [--sample-hz N]\n"
		"\n"
		"  -d, --daemon        detach once the socket is up, then log to syslog\n"
		"  -s, --socket PATH   control socket (default %s)\n"
		"  -i, --interval TIME sampling interval (\"100ms\", \"1s\" or bare milliseconds;\n"
		"                      default 100ms, 10ms..1h)\n"
		"      --history TIME  how far back \"the last N seconds\" reaches, in whole\n"
		"                      seconds (\"90s\", \"2m\" or \"90\"; default 60s, 1s..1d)\n"
		"      --keep TIME     keep exited processes this long (\"10m\", \"1h\" or bare\n"
		"                      seconds; default 10m, 0..30 days), at most the 64 that\n"
		"                      exited last\n"
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
		"      --idle TIME     close a connection that asks nothing this long (\"30s\",\n"
		"                      \"1m\" or bare seconds), unless it registered threads\n"
		"                      (default 10s)\n"
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

/*
 * every option that takes a time: as profctl's --last takes one ("90s",
 * "2m", "100ms"), in whole units of unit_ns (seconds, milliseconds), from lo
 * to hi of them; a bare number counts units, as these options were always
 * documented (and 0, or past the parser's week, only so)
 */
static __u32 arg_time(const char *opt, const char *s, __u64 unit_ns, __u32 lo, __u32 hi)
{
	bool ms = unit_ns == 1000000ull, ok;
	unsigned long long n;
	__u64 ns;

	if (*s && !s[strspn(s, "0123456789")]) {
		errno = 0;
		n = strtoull(s, NULL, 10);
		ok = !errno;
	} else {
		ok = !prof_parse_duration(s, &ns) && !(ns % unit_ns);
		n = ok ? ns / unit_ns : 0;
	}
	if (!ok || n < lo || n > hi)
		fatalx("%s: want a time in whole %s from %u to %u (%s), got \"%s\"", opt,
		       ms ? "milliseconds" : "seconds", lo, hi,
		       ms ? "\"100ms\", \"1s\" or bare milliseconds"
			  : "\"90s\", \"2m\" or bare seconds",
		       s);
	return (__u32)n;
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

void profd_conf_parse(int argc, char **argv)
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
			conf.interval_ms = arg_time("--interval", optarg, 1000000ull, 10, 3600000);
			break;
		case O_HISTORY:
			conf.history_s = arg_time("--history", optarg, 1000000000ull, 1, 86400);
			break;
		case O_KEEP:
			conf.keep_s = arg_time("--keep", optarg, 1000000000ull, 0, 30 * 86400);
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
			conf.idle_s = arg_time("--idle", optarg, 1000000000ull, 1, 86400);
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
