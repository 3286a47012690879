// SPDX-License-Identifier: MIT
/*
 * profctl_list.c - profctl list: the profiled processes the caller may see.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "profctl.h"
#include "prof.h"

#define EXIT_USAGE 2

static const char usage_list[] =
	"usage: profctl list [--format text|json] [--no-daemon]\n"
	"\n"
	"  -f, --format FMT     text (default) or json\n"
	PC_USAGE_NO_DAEMON
	"\n"
	"Profiled processes and threads you may see: pid, command, threads, alive or\n"
	"exited, since when, kernel assistance; with profd, THREADS IN ZONES: how many\n"
	"threads were inside zones on average (at most the threads alive; a call counts\n"
	"when it ends): now, ~1 s and ~30 s averages.\n";

static const struct option list_options[] = {
	PC_OPT_FORMAT,
	PC_OPT_NO_DAEMON,
	PC_OPT_HELP,
	PC_OPT_END,
};

static const char *fmt_since(char *buf, size_t len, __u64 created_ns)
{
	time_t t = (time_t)(created_ns / 1000000000ULL);
	struct tm tm;

	if (!created_ns || !localtime_r(&t, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

int pc_cmd_list(int argc, char **argv)
{
	struct pc_opts o;
	struct pc_src src;
	struct pc_proc *p = NULL;
	size_t n = 0, i;
	int err;

	err = pc_parse_opts(argc, argv, usage_list, list_options, &o);
	if (err)
		return err < 0 ? 0 : err;
	if (o.format != PC_FMT_TEXT && o.format != PC_FMT_JSON) {
		pc_warnx("list: --format text or json");
		return EXIT_USAGE;
	}
	pc_src_open_said(&src, &o, NULL);
	err = pc_src_list(&src, &p, &n);
	if (err) {
		pc_warnx("failed to list profiled processes: %s", strerror(-err));
		pc_src_close(&src);
		return 1;
	}
	if (o.format == PC_FMT_JSON) {
		struct prof_jw w;

		prof_jw_init(&w, stdout);
		prof_jw_start_object(&w);
		prof_jw_u64_field(&w, "version", 1);
		prof_jw_string_field(&w, "source", src.fd >= 0 ? "profd" : "direct");
		prof_jw_name(&w, "processes");
		prof_jw_start_array(&w);
		for (i = 0; i < n; i++) {
			prof_jw_start_object(&w);
			pc_proc_json(&w, &p[i]);
			prof_jw_bool_field(&w, "alive", p[i].alive);
			/* profd only: thousandths of a thread inside zones */
			if (p[i].rates) {
				prof_jw_name(&w, "inzone");
				prof_jw_start_object(&w);
				prof_jw_u64_field(&w, "now", p[i].inzone[0]);
				prof_jw_u64_field(&w, "short", p[i].inzone[1]);
				prof_jw_u64_field(&w, "long", p[i].inzone[2]);
				prof_jw_end_object(&w);
			}
			/* in a container: its own pid there, and its cgroup */
			if (p[i].ns_pid) {
				prof_jw_u64_field(&w, "ns_pid", p[i].ns_pid);
				prof_jw_string_field(&w, "cgroup", p[i].cgroup);
			}
			prof_jw_end_object(&w);
		}
		prof_jw_end_array(&w);
		prof_jw_end_object(&w);
		prof_jw_raw(&w, "\n");
	} else {
		char since[32], kern[16];
		bool ctr = false;

		for (i = 0; i < n; i++)
			ctr |= p[i].ns_pid != 0;
		printf("%7s  %-16s %7s  %-7s %-7s %-19s %s%s\n", "PID", "COMMAND", "THREADS",
		       "STATE", "KERNEL", "SINCE", src.fd >= 0 ? "THREADS IN ZONES now/1s/30s" : "",
		       ctr ? "  CONTAINER PID, CGROUP" : "");
		for (i = 0; i < n; i++) {
			if (p[i].kernel < 0)
				snprintf(kern, sizeof(kern), "?");
			else if (p[i].kernel == 0)
				snprintf(kern, sizeof(kern), "off");
			else
				snprintf(kern, sizeof(kern), "on:%d", p[i].kernel);
			printf("%7d  %-16s %7u  %-7s %-7s %-19s", (int)p[i].pid,
			       p[i].comm[0] ? p[i].comm : "?", p[i].threads,
			       p[i].alive ? "alive" : "exited", kern,
			       fmt_since(since, sizeof(since), p[i].created_ns));
			if (p[i].rates)
				printf(" %.2f/%.2f/%.2f", p[i].inzone[0] / 1e3,
				       p[i].inzone[1] / 1e3, p[i].inzone[2] / 1e3);
			if (p[i].ns_pid)
				printf("  %u, %s", p[i].ns_pid, p[i].cgroup[0] ? p[i].cgroup : "?");
			printf("\n");
		}
		if (src.fd < 0)
			printf("(%zu process%s; read from /dev/shm directly, profd %s)\n", n,
			       n == 1 ? "" : "es", src.why ? "not running" : "not asked");
	}
	free(p);
	pc_src_close(&src);
	return 0;
}
