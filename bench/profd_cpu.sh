#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/profd_cpu.sh PROFD GEN - profd's CPU while it samples 64 threads x
# 1,110 nodes at 10 Hz, every thread re-running its whole tree every 100 ms
# (so every node changes between samples).  Goal: under 1% of a core.
set -eu
PROFD=$1 GEN=$2 SECS=${SECS:-20}
[ "$(id -u)" = 0 ] || { echo "profd_cpu: skipped: profd needs root"; exit 0; }
tmp=$(mktemp -d)
sock=$tmp/profd.sock
coproc G { PROF_SOCKET=$sock PROF_MAX_NODES=2048 exec "$GEN" -t 64 -d 3 -i 100; }
read -r ready gpid <&"${G[0]}"
[ "$ready" = ready ] || { echo "profd_cpu: generator failed"; exit 1; }
"$PROFD" --socket "$sock" --interval 100 2>"$tmp/log" &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; exec {G[1]}>&-; rm -rf "$tmp"' EXIT
sleep 3
cpu() { awk '{ print $14 + $15 }' "/proc/$dpid/stat"; }
c0=$(cpu); t0=$(date +%s%N)
sleep "$SECS"
c1=$(cpu); t1=$(date +%s%N)
hz=$(getconf CLK_TCK)
awk -v c=$((c1 - c0)) -v hz="$hz" -v w=$((t1 - t0)) 'BEGIN {
	printf "profd_cpu: 64 threads x 1110 nodes, 10 Hz: %.2f%% of a core over %.0f s\n",
		100 * c / hz / (w / 1e9), w / 1e9 }'
