#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/profctl_bench.sh [PROFCTL] [GEN] - profctl at scale: a process of
# 64 threads x 11,110 nodes (bench/profctl_gen.c), then
#   report latency (median of 9 runs) for each view and format, and
#   top at 10 Hz: CPU used per wall second over 10 s.
# Goals: report < 100 ms, top < 5% of a core.
set -eu
cd "$(dirname "$0")/.."
PROFCTL=${1:-.output/profctl}
GEN=${2:-.output/bench/profctl_gen}
export PROFCTL_NO_DAEMON=1 PROF_NO_DAEMON=1

# each tree run 4 times: every node has calls of several durations
coproc G { PROF_MAX_NODES=16384 PROF_MAX_THREADS=128 exec "$GEN" -t 64 -r 4 -i "${GEN_INTERVAL_MS:-0}"; }
read -r ready pid <&"${G[0]}"
[ "$ready" = ready ] || { echo "generator failed"; exit 1; }
trap 'exec {G[1]}>&-; wait' EXIT

ms() {	# median wall ms of 9 runs of "$@"
	local i t0 t1 ts=()
	for i in 1 2 3 4 5 6 7 8 9; do
		t0=$(date +%s%N)
		"$@" >/dev/null
		t1=$(date +%s%N)
		ts+=($(( (t1 - t0) / 1000 )))
	done
	printf '%s\n' "${ts[@]}" | sort -n | sed -n 5p | awk '{ printf "%.1f", $1 / 1000 }'
}

nodes=$("$PROFCTL" report --pid "$pid" --format csv | tail -n +2 | wc -l)
echo "profctl: pid $pid, 64 threads, $nodes nodes shown"
for v in "tree text:" "flat text:--flat" "callers text:--callers z5" "merged tree:--merge-threads" \
	 "tree json:--format json" "tree csv:--format csv" "folded:--format folded" \
	 "html:--format html"; do
	name=${v%%:*}
	args=${v#*:}
	# shellcheck disable=SC2086
	printf '  report %-14s %7s ms\n' "$name" "$(ms "$PROFCTL" report --pid "$pid" $args -o /dev/null)"
done

# top at 10 Hz for 10 s: CPU seconds per wall second
t0=$(date +%s%N)
cpu=$( { /usr/bin/env time -f '%U %S' "$PROFCTL" top --pid "$pid" -d 0.1 -n 100 >/dev/null; } 2>&1 | tail -1)
t1=$(date +%s%N)
awk -v c="$cpu" -v w=$(( t1 - t0 )) 'BEGIN { split(c, a, " ");
	printf "  top -d 0.1, 100 frames: %.2f s wall, %.2f s cpu = %.1f%% of a core\n",
	w / 1e9, a[1] + a[2], 100 * (a[1] + a[2]) / (w / 1e9) }'
