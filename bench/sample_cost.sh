#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/sample_cost.sh PROFD BUSY [BASE] - what profd's stack sampling costs:
# a busy 4-thread program (bench/sample_busy.c) under profd --sample-hz 997
# and --sample-hz 0, interleaved (ROUNDS of each, SECS each): profd's CPU
# (/proc/PID/schedstat) and its CPU a sample kept, and the program's steps
# per CPU second.  Goal: at most 1% of one CPU.  profd (-v) says at its
# exit what its drains cost a sample, in its own CPU time (less sensitive to
# the machine's load than its share of a CPU): all of them, and those that
# named no frame from ELF and DWARF (the steady state, once a program's
# addresses are named).
# BASE: another profd (another build) run beside PROFD in every round, at
# 997 Hz: the two compared under the same load.
# With PERF=1 a run more each round: sampling off in profd, and perf record
# -F 997 -g on every CPU instead (frame pointers, to a file): the floor a
# 997 Hz sampler pays here, for comparison.
# With BPF_STATS=1 the kernel counts the time of every BPF program on the
# machine (kernel.bpf_stats_enabled, set back to what it was at the end):
# profd's prof_sample program's own time a run and a call.
set -eu
PROFD=$1 BUSY=$2 BASE=${3:-} SECS=${SECS:-10} ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "sample_cost: skipped: profd needs root"; exit 0; }
tmp=$(mktemp -d)
stats0=
if [ "${BPF_STATS:-0}" = 1 ]; then
	stats0=$(cat /proc/sys/kernel/bpf_stats_enabled)
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
fi
cleanup() {
	[ -z "$stats0" ] || echo "$stats0" >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$tmp"
}
trap cleanup EXIT

# the CPU time a process has run, ns
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }

# run_time_ns and run_cnt of profd $1's perf_event program (prog_type 7,
# BPF_PROG_TYPE_PERF_EVENT: prof_sample, its only one), from its fd's fdinfo
bpf_prog_stats() {
	awk 'FNR == 1 { perf = 0 } /^prog_type:/ { perf = $2 == 7 } perf && /^run_time_ns:/ { t = $2 }
	     perf && /^run_cnt:/ { c = $2 } END { if (c != "") print t, c }' /proc/"$1"/fdinfo/* 2>/dev/null
}

for r in $(seq "$ROUNDS"); do
	modes="new:997 new:0"
	[ -n "$BASE" ] && modes="base:997 new:997 new:0"
	[ "${PERF:-0}" = 1 ] && command -v perf >/dev/null && modes="$modes new:perf"
	for mode in $modes; do
		bin=$PROFD
		[ "${mode%%:*}" = base ] && bin=$BASE
		rate=${mode#*:}
		sock=$tmp/profd.sock
		hz=$rate
		[ "$rate" = perf ] && hz=0
		rm -f "$sock"
		"$bin" -v --socket "$sock" --sample-hz "$hz" 2>"$tmp/log" &
		dpid=$!
		for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
		c0=$(cpu_ns "$dpid")
		b0=$(bpf_prog_stats "$dpid")
		ppid=
		if [ "$rate" = perf ]; then
			perf record -q -F 997 -g -a -o "$tmp/perf.data" 2>/dev/null &
			ppid=$!
		fi
		out=$(PROF_SOCKET=$sock "$BUSY" -t 4 -d "$SECS")
		if [ -n "$ppid" ]; then
			kill -INT "$ppid"
			wait "$ppid" 2>/dev/null || true
		fi
		c1=$(cpu_ns "$dpid")
		b1=$(bpf_prog_stats "$dpid")
		# the samples kept: profctl beside the profd that kept them
		kept=$(PROF_SOCKET=$sock "$(dirname "$bin")/profctl" status 2>/dev/null |
		       sed -n 's/.* \([0-9][0-9]*\) kept$/\1/p')
		kill "$dpid"
		wait "$dpid" 2>/dev/null || true
		# "N samples drained, X us ... each; Y us in the drains ... (M samples)"
		drain=$(sed -n 's/.*sample: \([0-9]*\) samples drained, \([0-9.]*\) us.*; \([0-9.]*\) us in the drains.*(\([0-9]*\) samples)$/\1 \2 \4 \3/p' "$tmp/log")
		bt=0 bc=0
		if [ -n "$b0" ] && [ -n "$b1" ]; then
			set -- $b0 $b1
			bt=$(($3 - $1)) bc=$(($4 - $2))
		fi
		echo "$mode $((c1 - c0)) ${kept:-0} $bt $bc ${drain:-0 0 0 0} $out load $(cut -d' ' -f1 /proc/loadavg)" |
			tee -a "$tmp/runs" | sed 's/^/sample_cost: run /'
	done
done
awk -v secs="$SECS" '
	{ m = $1; n[m]++; d[m] += $2 / 1e9; kept[m] += $3; bt[m] += $4; bc[m] += $5
	  dn[m] += $6; dus[m] += $6 * $7; sn[m] += $8; sus[m] += $8 * $9
	  steps[m] += $11; cpu[m] += $13 / 1e9 }
	END {
		for (m in n) {
			printf "sample_cost: %-9s profd %.2f%% of a CPU, %d samples kept, program %.0f steps per CPU s (%d runs of %d s)\n",
				m, 100 * d[m] / (n[m] * secs), kept[m] / n[m], steps[m] / cpu[m], n[m], secs
			if (kept[m])
				printf "sample_cost: %-9s profd %.2f us of CPU a sample kept (all of its CPU)\n",
					m, 1e6 * d[m] / kept[m]
			if (dn[m])
				printf "sample_cost: %-9s profd drained %d samples, %.2f us of its CPU each; %.2f us in the drains that named no frame (%d samples)\n",
					m, dn[m], dus[m] / dn[m], sn[m] ? sus[m] / sn[m] : 0, sn[m]
			if (bc[m])
				printf "sample_cost: %-9s BPF program %.0f ns a call, %d calls, %.3f%% of a CPU\n",
					m, bt[m] / bc[m], bc[m] / n[m], 100 * bt[m] / 1e9 / (n[m] * secs)
		}
		split("new base", who, " ")
		for (w in who) {
			on = who[w] ":997"; off = "new:0"
			if (!n[on] || !n[off])
				continue
			printf "sample_cost: %s: sampling costs profd %.2f%% of a CPU (%.2f us a sample kept), the program %.2f%% of its steps per CPU s\n",
				who[w], 100 * (d[on] / n[on] - d[off] / n[off]) / secs,
				kept[on] ? 1e6 * (d[on] / n[on] - d[off] / n[off]) / (kept[on] / n[on]) : 0,
				100 * (1 - (steps[on] / cpu[on]) / (steps[off] / cpu[off]))
		}
		if (n["new:perf"] && n["new:0"])
			printf "sample_cost: perf record -F 997 -g costs the program %.2f%% of its steps per CPU s\n",
				100 * (1 - (steps["new:perf"] / cpu["new:perf"]) / (steps["new:0"] / cpu["new:0"]))
	}' "$tmp/runs"
