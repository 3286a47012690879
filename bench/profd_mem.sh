#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/profd_mem.sh PROFD GEN [PROFD_ARGS...] - profd's memory (RSS, PSS,
# and RssAnon, its private part: the segment it maps is shared with the
# process) and CPU while it keeps 60 s of history of one big process: 64
# threads x 11,110 nodes (711,040), each thread running the same PART tenths of its
# tree again every 100 ms (PART=1 by default: a tenth of the nodes keeps
# changing, the rest stays as built; PART=10: every node changes between
# any two frames).  Samples profd every 10 s for SECS (default 150: a big
# process's frames are spaced by what they cost, up to tens of seconds, so
# 60 s of history fills later than 60 s); prints the peak and the last, the frames
# kept and what --max-memory dropped (from profctl status), and profd's CPU
# per sampling pass.  Extra arguments go to profd (--max-memory 256M).
set -eu
PROFD=$1 GEN=$2
shift 2
SECS=${SECS:-150} PART=${PART:-1}
PROFCTL=${PROFCTL:-$(dirname "$PROFD")/profctl}
[ "$(id -u)" = 0 ] || { echo "profd_mem: skipped: profd needs root"; exit 0; }
tmp=$(mktemp -d)
sock=$tmp/profd.sock
coproc G { PROF_SOCKET=$sock PROF_MAX_NODES=16384 PROF_MAX_THREADS=128 \
	exec "$GEN" -t 64 -d 4 -i 100 -p "$PART"; }
read -r ready gpid <&"${G[0]}"
[ "$ready" = ready ] || { echo "profd_mem: generator failed"; exit 1; }
"$PROFD" --socket "$sock" --interval 100 --history 60 "$@" 2>"$tmp/log" &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; exec {G[1]}>&-; rm -rf "$tmp"' EXIT
cpu() { awk '{ print $14 + $15 }' "/proc/$dpid/stat"; }
kb() { awk -v k="$1" '$1 == k ":" { print $2 }' "/proc/$dpid/smaps_rollup"; }
anon() { awk '$1 == "RssAnon:" { print $2 }' "/proc/$dpid/status"; }
samples() { PROFD_SOCKET=$sock "$PROFCTL" status 2>/dev/null |
	awk '/^sampling every/ { print $4 }'; }
sleep 2
c0=$(cpu) n0=$(samples)
peak_rss=0 peak_pss=0 peak_anon=0
for ((t = 10; t <= SECS; t += 10)); do
	sleep 10
	rss=$(kb Rss) pss=$(kb Pss) an=$(anon)
	((rss > peak_rss)) && peak_rss=$rss
	((an > peak_anon)) && peak_anon=$an
	((pss > peak_pss)) && peak_pss=$pss
	echo "profd_mem: ${t}s: RSS $((rss / 1024)) MiB (private $((an / 1024)) MiB), PSS $((pss / 1024)) MiB"
done
c1=$(cpu) n1=$(samples)
PROFD_SOCKET=$sock "$PROFCTL" status 2>/dev/null | grep -E '^(history|  the newest)' || true
hz=$(getconf CLK_TCK)
awk -v c=$((c1 - c0)) -v hz="$hz" -v n=$((n1 - n0)) -v pr="$peak_rss" -v pp="$peak_pss" -v pa="$peak_anon" \
	-v part="$PART" -v args="$*" 'BEGIN {
	printf "profd_mem: 711,040 nodes, %d/10 changing, 60 s history %s: peak RSS %d MiB " \
		"(private %d MiB), PSS %d MiB; %.2f ms CPU per sampling pass (%d passes)\n",
		part, args, pr / 1024, pa / 1024, pp / 1024, n ? 1000 * c / hz / n : 0, n }'
