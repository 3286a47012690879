#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/sample_cost.sh PROFD BUSY - what profd's stack sampling costs: a
# busy 4-thread program (bench/sample_busy.c) under profd --sample-hz 997
# and --sample-hz 0, interleaved (ROUNDS of each, SECS each): profd's CPU
# and the program's steps per CPU second.  Goal: at most 1% of one CPU.
set -eu
PROFD=$1 BUSY=$2 SECS=${SECS:-10} ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "sample_cost: skipped: profd needs root"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hz=$(getconf CLK_TCK)
for r in $(seq "$ROUNDS"); do
	for rate in 997 0; do
		sock=$tmp/profd.$rate.sock
		"$PROFD" --socket "$sock" --sample-hz "$rate" 2>"$tmp/log" &
		dpid=$!
		for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
		c0=$(awk '{ print $14 + $15 }' "/proc/$dpid/stat")
		out=$(PROF_SOCKET=$sock "$BUSY" -t 4 -d "$SECS")
		c1=$(awk '{ print $14 + $15 }' "/proc/$dpid/stat")
		kill "$dpid"
		wait "$dpid" 2>/dev/null || true
		echo "$rate $((c1 - c0)) $out" >>"$tmp/runs"
	done
done
awk -v hz="$hz" -v secs="$SECS" '
	{ n[$1]++; d[$1] += $2 / hz; steps[$1] += $4; cpu[$1] += $6 / 1e9 }
	END {
		for (r in n)
			printf "sample_cost: --sample-hz %4s: profd %.2f%% of a CPU, program %.0f steps per CPU s (%d runs of %d s)\n",
				r, 100 * d[r] / (n[r] * secs), steps[r] / cpu[r], n[r], secs
		if (n[0] && n[997])
			printf "sample_cost: sampling costs profd %.2f%% of a CPU, the program %.2f%% of its steps per CPU s\n",
				100 * (d[997] - d[0]) / (n[997] * secs),
				100 * (1 - (steps[997] / cpu[997]) / (steps[0] / cpu[0]))
	}' "$tmp/runs"
