#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/sample_cost.sh PROFD BUSY - what profd's stack sampling costs: a
# busy 4-thread program (bench/sample_busy.c) under profd --sample-hz 997
# and --sample-hz 0, interleaved (ROUNDS of each, SECS each): profd's CPU
# and the program's steps per CPU second.  Goal: at most 1% of one CPU.
# With PERF=1 a third run each round: sampling off in profd, and perf record
# -F 997 -g on every CPU instead (frame pointers, to a file): the floor a
# 997 Hz sampler pays here, for comparison.
set -eu
PROFD=$1 BUSY=$2 SECS=${SECS:-10} ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "sample_cost: skipped: profd needs root"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tck=$(getconf CLK_TCK)
for r in $(seq "$ROUNDS"); do
	modes="997 0"
	[ "${PERF:-0}" = 1 ] && command -v perf >/dev/null && modes="997 0 perf"
	for rate in $modes; do
		sock=$tmp/profd.$rate.sock
		hz=$rate
		[ "$rate" = perf ] && hz=0
		"$PROFD" --socket "$sock" --sample-hz "$hz" 2>"$tmp/log" &
		dpid=$!
		for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
		c0=$(awk '{ print $14 + $15 }' "/proc/$dpid/stat")
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
		c1=$(awk '{ print $14 + $15 }' "/proc/$dpid/stat")
		kill "$dpid"
		wait "$dpid" 2>/dev/null || true
		echo "$rate $((c1 - c0)) $out" >>"$tmp/runs"
	done
done
awk -v hz="$tck" -v secs="$SECS" '
	{ n[$1]++; d[$1] += $2 / hz; steps[$1] += $4; cpu[$1] += $6 / 1e9 }
	END {
		for (r in n)
			printf "sample_cost: --sample-hz %4s: profd %.2f%% of a CPU, program %.0f steps per CPU s (%d runs of %d s)\n",
				r, 100 * d[r] / (n[r] * secs), steps[r] / cpu[r], n[r], secs
		if (n[0] && n[997])
			printf "sample_cost: sampling costs profd %.2f%% of a CPU, the program %.2f%% of its steps per CPU s\n",
				100 * (d[997] - d[0]) / (n[997] * secs),
				100 * (1 - (steps[997] / cpu[997]) / (steps[0] / cpu[0]))
		if (n[0] && n["perf"])
			printf "sample_cost: perf record -F 997 -g costs the program %.2f%% of its steps per CPU s\n",
				100 * (1 - (steps["perf"] / cpu["perf"]) / (steps[0] / cpu[0]))
	}' "$tmp/runs"
