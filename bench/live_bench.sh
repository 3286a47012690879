#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/live_bench.sh PROFCTL WORKER - profctl serve's live page open in
# headless Chromium on a 64-thread process (tests/live_worker: about 500
# zone calls a thread a second) for SECS seconds: serve's CPU (its
# utime + stime over the time the page is open, every request the page
# makes once a second: top, report and trace of the window) and the
# browser's draw time per update (bench/live_bench.py).  Goals: serve
# under 2% of a CPU, each update under 100 ms to draw.  Without profd
# (PROFCTL_NO_DAEMON=1) unless PROFD=1.
set -eu
PROFCTL=$1 WORKER=$2 SECS=${SECS:-30} THREADS=${THREADS:-64}
tmp=$(mktemp -d)
export XDG_RUNTIME_DIR=$tmp
[ "${PROFD:-0}" = 1 ] || export PROF_NO_DAEMON=1 PROFCTL_NO_DAEMON=1
coproc W { exec "$WORKER" "$THREADS"; }
wpid=$W_PID
read -r ready <&"${W[0]}"
[ "$ready" = ready ] || { echo "live_bench: worker failed"; exit 1; }
"$PROFCTL" serve --listen 127.0.0.1:0 2>"$tmp/serve.log" &
spid=$!
trap 'kill $spid $wpid 2>/dev/null; wait $spid $wpid 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do
	grep -q serving "$tmp/serve.log" && break
	sleep 0.05
done
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/serve.log")
[ -n "$port" ] || { echo "live_bench: serve did not start"; cat "$tmp/serve.log"; exit 1; }
cpu() { awk '{ print $14 + $15 }' "/proc/$spid/stat"; }
c0=$(cpu); t0=$(date +%s%N)
set +e
out=$(/usr/bin/python3 bench/live_bench.py "http://127.0.0.1:$port" "$wpid" "$SECS")
rc=$?
set -e
c1=$(cpu); t1=$(date +%s%N)
[ $rc = 77 ] && { echo "live_bench: skipped: no chromium, chromium-driver or python3-selenium"; exit 0; }
[ $rc = 0 ] || exit 1
hz=$(getconf CLK_TCK)
awk -v c=$((c1 - c0)) -v hz="$hz" -v w=$((t1 - t0)) -v t="$THREADS" -v out="$out" 'BEGIN {
	split(out, f, " ")
	printf "live_bench: %d threads, page open %.0f s: serve %.2f%% of a CPU; %d updates, " \
	       "draw per update median %s ms, p95 %s ms, max %s ms\n",
		t, w / 1e9, 100 * c / hz / (w / 1e9), f[2], f[6], f[7], f[8] }'
