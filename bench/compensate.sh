#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/compensate.sh [LIBPROF_A [PROFCTL]] - how near each zone's share of
# self time comes to what a sampler sees of the program without zones:
# SQLite's speedtest1 as bench/sqlite.sh builds it (SQLITE_BUILD_ONLY=1:
# no timing rounds), then
#   perf   RUNS (4) runs of the bare build under `perf record -e cpu-clock`
#          (no hardware counters needed) with DWARF call chains; a sample
#          counts for the innermost zoned function on its stack (the zone
#          whose self time it is), samples under none are left out;
#          then RUNS runs of the PROF_USDT build the same way: what each
#          zone's own code (its enter at its site, its exit) adds to a call
#          by the same clock, so what a compensation should take out
#   prof   RUNS runs of the PROF_USDT build saved (PROF_SAVE), each read by
#          `profctl report --flat` plain and --compensate
# Each side's shares are of the zones' summed self time (100% each); the
# table gives each zone's share by perf, the plain view and the compensated
# view, and the mean absolute difference from perf in points, with perf's
# own: its odd runs against its even ones (the sampler's noise).  Then, a
# call: the bare build's time in the zone by perf, and what the zones added
# to it (the zoned build's less the bare's, by perf's samples, which count
# perf's own cost in both), against the zone cost the compensation takes
# out (calibrated at start); and the zones' summed time, compensated
# against plain, beside perf's bare against zoned.
# SIZE (100) is speedtest1's --size; FREQ (10000) perf's sampling rate.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
LIBPROF=$(realpath "${1:-.output/libprof.a}")
PROFCTL=$(realpath "${2:-.output/profctl}")
WORK=${WORK:-$ROOT/.output/bench/sqlite}
RUNS=${RUNS:-4}
SIZE=${SIZE:-100}
FREQ=${FREQ:-10000}

command -v perf >/dev/null || { echo "bench/compensate.sh: needs perf (linux-perf)"; exit 1; }
[ -x "$PROFCTL" ] || { echo "bench/compensate.sh: no $PROFCTL: make first"; exit 1; }
# the builds, unless bench/sqlite.sh made them after the runtime and its
# header last changed
b=$WORK/bld/speedtest1_usdt
if [ ! -f "$WORK/bld/funcs" ] || [ ! -f "$b" ] || [ "$LIBPROF" -nt "$b" ] ||
	[ usdt/prof.h -nt "$b" ] || [ usdt/slab.h -nt "$b" ] || [ bench/sqlite_zone.h -nt "$b" ]; then
	SQLITE_BUILD_ONLY=1 WORK=$WORK bench/sqlite.sh "$LIBPROF"
fi
cd "$WORK/bld"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--size "$SIZE" --memdb)

export PROF_NO_DAEMON=1 PROFCTL_NO_DAEMON=1
unset PROF_REPORT PROF_LOG_INTERVAL PROF_SAVE
# perf: each sample's zone, counted by run (a file a run: zone samples),
# perf.R of the bare build, perfz.R of the zoned one
echo "perf record -e cpu-clock -F $FREQ --call-graph dwarf: $RUNS runs of the bare build, $RUNS of the zoned"
for r in $(seq 1 "$RUNS"); do for b in bare usdt; do
	out=perf
	[ $b = usdt ] && out=perfz
	perf record -q -e cpu-clock -F "$FREQ" --call-graph dwarf,8192 -o "$tmp/perf.data" \
		"./speedtest1_$b" "${args[@]}" >/dev/null 2>"$tmp/perf.err" ||
		{ cat "$tmp/perf.err"; exit 1; }
	# a sample is a paragraph, its frames leaf first, "ip symbol", a
	# function inlined there a frame of its own (the builds have -g); a
	# symbol's compiler suffixes (.cold, .constprop.0, .isra.0) dropped
	perf script -i "$tmp/perf.data" -F ip,sym 2>/dev/null |
		awk -v list=funcs 'BEGIN { while ((getline f <list) > 0) z[f] = 1; RS = "" }
		{
			n = split($0, line, "\n")
			for (i = 1; i <= n; i++) {
				k = split(line[i], w, " ")
				if (k < 2) continue
				s = w[2]; sub(/\..*/, "", s)
				if (s in z) { c[s]++; break }
			}
		}
		END { for (s in c) print s, c[s] }' >"$tmp/$out.$r"
done; done
rm -f "$tmp/perf.data"

# the profiler: each zone's self ns, plain and compensated, and its calls
# (a file a run)
echo "PROF_USDT build, PROF_SAVE: $RUNS runs, profctl report --flat, plain and --compensate"
for r in $(seq 1 "$RUNS"); do
	PROF_SAVE=$tmp/run.prof ./speedtest1_usdt "${args[@]}" >/dev/null
	for v in plain comp; do
		opt=()
		[ $v = comp ] && opt=(--compensate)
		"$PROFCTL" report --input "$tmp/run.prof" --flat --format json "${opt[@]}" |
			grep -o '"zone":"[^"]*","calls":[0-9]*,"total_ns":[0-9]*,"self_ns":[0-9]*' |
			sed 's/"zone":"\([^"]*\)","calls":\([0-9]*\),.*"self_ns":\([0-9]*\)/\1 \3 \2/' \
				>"$tmp/$v.$r"
	done
done
# the cost it takes out, from its title: "a zone's cost (23.1 ns, ..."
cost=$("$PROFCTL" report --input "$tmp/run.prof" --flat --compensate |
	sed -n 's/.*a zone.s cost (\([0-9.]*\) ns.*/\1/p' | head -1)

# the table: shares in percent of each side's zoned self time
awk -v runs="$RUNS" -v dir="$tmp" -v freq="$FREQ" -v cost="${cost:-0}" 'BEGIN {
	while ((getline f <"funcs") > 0) { zone[++nz] = f }
	for (r = 1; r <= runs; r++) {
		for (k = 1; k <= 4; k++) {
			v = k == 1 ? "perf" : k == 2 ? "plain" : k == 3 ? "comp" : "perfz"
			file = dir "/" v "." r
			while ((getline l <file) > 0) {
				split(l, w, " ")
				x[v, w[1]] += w[2]; tot[v] += w[2]
				if (v == "perf") { h = r % 2; y[h, w[1]] += w[2]; ht[h] += w[2] }
				if (v == "plain") { calls[w[1]] += w[3]; ncalls += w[3] }
			}
		}
	}
	printf "%-34s %8s %8s %8s %12s\n", "zone (share of zoned self time)", "perf", "plain", "comp",
		"comp-perf"
	for (i = 1; i <= nz; i++) {
		f = zone[i]
		p = 100 * x["perf", f] / tot["perf"]; a = 100 * x["plain", f] / tot["plain"]
		c = 100 * x["comp", f] / tot["comp"]
		printf "%-34s %7.2f%% %7.2f%% %7.2f%% %+11.2f\n", f, p, a, c, c - p
		da += (a > p ? a - p : p - a); dc += (c > p ? c - p : p - c)
		q = 100 * y[0, f] / ht[0] - 100 * y[1, f] / ht[1]; dp += q < 0 ? -q : q
	}
	printf "mean absolute difference from perf over %d zones: plain %.2f, compensated %.2f points", nz, da / nz, dc / nz
	printf " (perf against itself, odd runs against even: %.2f)\n", dp / nz
	printf "samples %d (perf), %d runs each\n", tot["perf"], runs
	# a call, by perf: samples of 1/freq s, the calls of the same runs
	printf "\n%-34s %9s %9s %12s\n", "a call, by perf (ns)", "calls", "bare", "zones added"
	for (i = 1; i <= nz; i++) {
		f = zone[i]
		if (!calls[f]) continue
		b = x["perf", f] * 1e9 / freq / calls[f]
		d = (x["perfz", f] - x["perf", f]) * 1e9 / freq / calls[f]
		printf "%-34s %9d %9.1f %+12.1f\n", f, calls[f] / runs, b, d
	}
	printf "the zones added %.1f ns a call on average (perf, zoned build against bare); ",
		(tot["perfz"] - tot["perf"]) * 1e9 / freq / ncalls
	printf "the compensation takes out %s ns a zone\n", cost
	printf "the zones summed: compensated %.2f of plain; perf, bare %.2f of zoned\n",
		tot["comp"] / tot["plain"], tot["perf"] / tot["perfz"]
}'
