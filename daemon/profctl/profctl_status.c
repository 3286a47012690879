// SPDX-License-Identifier: MIT
/*
 * profctl_status.c - profctl status: profd up or not, kernel assistance, its
 * memory, versions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "profctl.h"
#include "profctl_samples.h"
#include "prof.h"
#ifndef PROFCTL_NO_CLIENT
#include "client.h"
#endif

static const char usage_status[] =
	"usage: profctl status [--no-daemon]\n"
	"\n"
	PC_USAGE_NO_DAEMON
	"\n"
	"profd up or not, kernel assistance on or off and why, stack sampling on (at\n"
	"what rate, samples lost) or off and why, what its stacks and frame cache take,\n"
	"counts, versions; what\n"
	"profd's history and kept data take against its --max-memory, and what it\n"
	"dropped to stay within it (frames, exited processes, whole histories, and the\n"
	"\"last N s\" windows it refused because they needed a dropped frame).\n";

static const struct option status_options[] = {
	PC_OPT_NO_DAEMON,
	PC_OPT_HELP,
	PC_OPT_END,
};

/* profd's history and kept data against its --max-memory, and what went */
static void status_memory(const struct profd_status *st)
{
	const double mib = 1024.0 * 1024.0;

	printf("history: %.1f MiB of %.1f MiB (--max-memory): live processes %.1f MiB in %llu "
	       "frames, exited %.1f MiB\n",
	       (double)(st->mem_history + st->mem_kept) / mib, (double)st->max_memory / mib,
	       (double)st->mem_history / mib, (unsigned long long)st->frames,
	       (double)st->mem_kept / mib);
	if (!st->frames_dropped && !st->kept_dropped && !st->histories_dropped) {
		printf("history dropped for memory: none\n");
		return;
	}
	printf("history dropped for memory: %llu frames (the oldest of the biggest processes "
	       "first), %llu exited processes, %llu whole histories; %llu windows refused\n",
	       (unsigned long long)st->frames_dropped, (unsigned long long)st->kept_dropped,
	       (unsigned long long)st->histories_dropped, (unsigned long long)st->windows_refused);
	if (st->last_drop_pid)
		printf("  the newest drop: pid %u, a frame of %.1f s ago: its --last windows that "
		       "long or longer are refused\n",
		       st->last_drop_pid, (double)st->last_drop_age_ns / 1e9);
}

/* profd's stack sampling, and how it named the frames */
static void status_samples(const struct pc_src *src)
{
	char state[PC_SAMPLES_STATE_MAX];
	struct pc_samples *sm = pc_samples_get(src, 0);

	printf("stack samples: %s\n", pc_samples_state(sm, state, sizeof(state)));
	if (sm && !sm->why[0])
		printf("stack frames named: %llu from ELF and DWARF, %llu from the cache (one "
		       "for every process, by build-id)\n",
		       (unsigned long long)sm->named, (unsigned long long)sm->cached);
	if (sm && !sm->why[0])
		printf("stack samples' memory: %llu KiB of stacks, %llu KiB of cached frames (in "
		       "--max-memory)\n",
		       (unsigned long long)(sm->table_bytes + 1023) / 1024,
		       (unsigned long long)(sm->cache_bytes + 1023) / 1024);
	pc_samples_free(sm);
}

int pc_cmd_status(int argc, char **argv)
{
	char state[PC_SAMPLES_STATE_MAX];
	struct pc_opts o;
	struct pc_src src;
	struct pc_proc *p = NULL;
	size_t n = 0, i, alive = 0;
	int err;

	err = pc_parse_opts(argc, argv, usage_status, status_options, &o);
	if (err)
		return err < 0 ? 0 : err;
	pc_src_open(&src, o.no_daemon);
	printf("profctl %d.%d, segment version %d\n", PROF_VERSION_MAJOR, PROF_VERSION_MINOR,
	       PROF_SEG_VERSION);
#ifndef PROFCTL_NO_CLIENT
	if (src.fd >= 0) {
		struct profd_status st;

		err = profd_status(src.fd, &st);
		if (err) {
			printf("profd: connected to %s but status failed: %s\n", src.sock,
			       strerror(-err));
			/* what follows is read directly */
			close(src.fd);
			src.fd = -1;
			src.why = err;
		} else {
			printf("profd: running at %s, version %u.%u, up %llus\n", src.sock,
			       st.version >> 16, st.version & 0xffff,
			       (unsigned long long)(st.uptime_ns / 1000000000ULL));
			if (st.bpf_on)
				printf("kernel assistance: on\n");
			else
				printf("kernel assistance: off (%.*s)\n", (int)sizeof(st.bpf_why),
				       st.bpf_why);
			printf("processes followed: %u, threads with a kernel slot: %u, slots "
			       "free: %u\n",
			       st.processes, st.threads, st.slots_free);
			printf("sampling every %ums, %llu samples\n", st.interval_ms,
			       (unsigned long long)st.samples);
			status_samples(&src);
			printf("threads registered late (their first zone stopped waiting, its "
			       "first calls without kernel facts): %u\n",
			       st.late);
			printf("tsc: %s (%s)\n",
			       st.tsc_synced
				       ? "synchronized across CPUs: a migrated call's time is exact"
				       : "not trusted across CPUs: a migrated call's time is "
					 "suspect",
			       st.tsc_why);
			status_memory(&st);
			printf("files in /dev/shm skipped as not a good segment: %u; full "
			       "listings of /dev/shm: %llu\n",
			       st.bad_segments, (unsigned long long)st.rescans);
		}
	} else
#endif
	{
		if (!src.why)
			printf("profd: not asked (--no-daemon or PROFCTL_NO_DAEMON)");
		else if (!src.sock)
			printf("profd: not in this build");
		else
			printf("profd: not running (%s: %s)", src.sock, strerror(-src.why));
		printf("; profctl reads your segments in /dev/shm directly\n");
		printf("kernel assistance: off (needs profd)\n");
		printf("stack samples: %s\n", pc_samples_state_of(&src, 0, state, sizeof(state)));
	}
	err = pc_src_list(&src, &p, &n);
	if (!err) {
		for (i = 0; i < n; i++)
			alive += p[i].alive;
		printf("profiled processes visible: %zu (%zu alive)\n", n, alive);
		free(p);
	}
	pc_src_close(&src);
	return 0;
}
