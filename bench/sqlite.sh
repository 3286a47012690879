#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/sqlite.sh [LIBPROF_A] - a real program: SQLite's speedtest1, built
# from Debian's source package of sqlite3, with a zone at the top of 22 hot
# functions of the amalgamation (FUNCS below) (bench/sqlite_zone.h), three builds:
#   bare   no zones
#   pair   a hand-written rdtsc pair into a per-site thread-local accumulator
#   usdt   PROF_USDT (this tree's prof.h and libprof.a, no profd)
# then ROUNDS (7) interleaved rounds of `speedtest1 --size SIZE --memdb`
# (100), each round the three builds in a rotated order, user CPU time
# (bash's time) of each run; prints the medians, the slowdown of each
# against bare, the zones a run (the pair build counts them), the added ns
# a zone, and (valgrind installed: it is in .ci/deps) the instructions a
# zone adds under callgrind at --size CG_SIZE (10), which no load on the
# machine changes, and the code a zone adds at its site (the zoned object's
# sections against the bare one's).  x86-64 only (the pair reads rdtsc).
#
# Needs, and installs as root if missing (saying so): dpkg-dev (dpkg-source),
# tcl (the amalgamation's build).  Downloads the source package with
# apt-get source through a private apt configuration under WORK (a deb-src
# entry for this system's suite on deb.debian.org); nothing else leaves the
# machine.  WORK (.output/bench/sqlite) keeps the source and the builds, so
# a second run only rebuilds the zoned objects and measures.
# SQLITE_BUILD_ONLY=1 stops after the builds (bench/compensate.sh).
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
LIBPROF=$(realpath "${1:-.output/pub/libprof.a}")
WORK=${WORK:-$ROOT/.output/bench/sqlite}
ROUNDS=${ROUNDS:-7}
SIZE=${SIZE:-100}
CC=${CC:-cc}
# the hot functions of speedtest1 (perf, bare build): the b-tree's seeks and
# steps, record compares, the page cache, cell parsing, the VM; about 65 M
# zones a run, as dense as the issue's 22 sites (61 M).  The three densest
# tiny ones perf also shows (sqlite3VdbeSerialGet, vdbeRecordCompareInt,
# btreeParseCellPtr: 51 M more) are left out; SQLITE_FUNCS="f g ..." zones
# another list.
FUNCS=(${SQLITE_FUNCS:-sqlite3VdbeExec sqlite3_step sqlite3VdbeHalt sqlite3BtreeIndexMoveto
	sqlite3BtreeTableMoveto vdbeRecordCompareString sqlite3VdbeRecordCompareWithSkip
	sqlite3VdbeRecordUnpack btreeParseCellPtrIndex pcache1Fetch getPageNormal getAndInitPage
	moveToRoot balance_nonroot sqlite3BtreeNext sqlite3BtreePrevious sqlite3BtreeInsert
	sqlite3BtreeDelete insertCell freeSpace pageFindSlot patternCompare})

[ "$(uname -m)" = x86_64 ] || { echo "bench/sqlite.sh: x86-64 only (the pair reads rdtsc)"; exit 1; }
[ -f "$LIBPROF" ] || { echo "bench/sqlite.sh: no $LIBPROF: make lib first"; exit 1; }

need=()
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
command -v tclsh >/dev/null || need+=(tcl)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench/sqlite.sh: needs ${need[*]}: apt-get install -y ${need[*]} as root"
		exit 1
	fi
	echo "bench/sqlite.sh: installing ${need[*]} (apt-get install -y)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi

mkdir -p "$WORK"
cd "$WORK"
# the source package, through a private apt configuration: the system's
# sources stay as they are
if [ ! -f src/test/speedtest1.c ]; then
	. /etc/os-release
	mkdir -p apt/lists/partial apt/archives/partial dl
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
		"http://deb.debian.org/debian ${VERSION_CODENAME:-bookworm} main" >apt/sources.list
	aptopts=(-o Dir::Etc::SourceList="$WORK/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$WORK/apt/lists" -o Dir::Cache="$WORK/apt"
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
	echo "bench/sqlite.sh: downloading Debian's source package sqlite3 (apt-get source)"
	apt-get -q "${aptopts[@]}" update >/dev/null
	(cd dl && apt-get -q "${aptopts[@]}" --download-only source sqlite3 >/dev/null)
	rm -rf src
	dpkg-source --no-check -x dl/sqlite3_*.dsc src >/dev/null
fi
echo "sqlite3 $(cat src/VERSION) (Debian source package $(cd dl && ls sqlite3_*.dsc | sed 's/^sqlite3_//; s/\.dsc$//'))"

# the amalgamation, once
if [ ! -f bld/sqlite3.c ]; then
	mkdir -p bld
	(cd bld && ../src/configure --disable-tcl >configure.log 2>&1 && make sqlite3.c >make.log 2>&1)
fi

# a zone as the first statement of each function's body: the line that
# opens the definition (column 0, not a prototype), then the first line
# ending in "{"
awk -v funcs="${FUNCS[*]}" '
BEGIN { n = split(funcs, f, " "); for (i = 1; i <= n; i++) id[f[i]] = i - 1 }
{
	print
	if (seek == "" && match($0, /^[A-Za-z_][A-Za-z0-9_ *]*[ *]([A-Za-z0-9_]+)\(/)) {
		name = $0; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
		if ((name in id) && !(name in done) && $0 !~ /;[ \t]*$/)
			seek = name
	}
	if (seek != "" && $0 ~ /;[ \t]*$/ && $0 !~ /\{/) {
		seek = ""
	} else if (seek != "" && $0 ~ /\{[ \t]*$/) {
		printf "BENCH_ZONE(%d, %s);\n", id[seek], seek
		done[seek] = 1; seek = ""
	}
}
END { for (i = 1; i <= n; i++) if (!(f[i] in done)) { print "no definition of " f[i] > "/dev/stderr"; bad = 1 }
      exit bad }' bld/sqlite3.c >bld/sqlite3_zoned.c.tmp
mv bld/sqlite3_zoned.c.tmp bld/sqlite3_zoned.c

# the three builds: speedtest1.c without zones, the amalgamation three ways
# (-g changes no code: bench/compensate.sh's perf names inlined functions)
CFLAGS_ST=(-O2 -g -DNDEBUG -Ibld)
echo "building speedtest1 three ways (${#FUNCS[@]} zoned functions; a minute or two)"
[ -f bld/speedtest1.o ] || $CC "${CFLAGS_ST[@]}" -c src/test/speedtest1.c -o bld/speedtest1.o
names=(bare pair usdt)
for m in 0 1 2; do
	$CC "${CFLAGS_ST[@]}" -I"$ROOT/usdt" -I"$ROOT/bpf" -DBENCH_MODE=$m -DBENCH_NSITES=${#FUNCS[@]} \
		-include "$ROOT/bench/sqlite_zone.h" -c bld/sqlite3_zoned.c -o "bld/sqlite3_${names[m]}.o" &
	[ $m = 1 ] && wait
done
wait
for m in 0 1 2; do
	libs=(-lm -lpthread)
	[ $m = 2 ] && libs=("$LIBPROF" "${libs[@]}")
	$CC bld/speedtest1.o "bld/sqlite3_${names[m]}.o" -o "bld/speedtest1_${names[m]}" "${libs[@]}"
done
# bench/compensate.sh needs the builds and the zoned functions only
printf '%s\n' "${FUNCS[@]}" >bld/funcs
[ -z "${SQLITE_BUILD_ONLY:-}" ] || exit 0

# the zones' code: each build's amalgamation object, its .text and its
# other executable sections (cold: .text.unlikely, the probes' stubs),
# against the bare build's, a site
sect() { size -A "$1" | awk -v hot="$2" '$1 ~ /^\.text/ { if (($1 == ".text") == hot) n += $2 } END { print n + 0 }'; }
code_line=$(awk -v n="${#FUNCS[@]}" -v bh="$(sect bld/sqlite3_bare.o 1)" -v bc="$(sect bld/sqlite3_bare.o 0)" \
	-v ph="$(sect bld/sqlite3_pair.o 1)" -v pc="$(sect bld/sqlite3_pair.o 0)" \
	-v uh="$(sect bld/sqlite3_usdt.o 1)" -v uc="$(sect bld/sqlite3_usdt.o 0)" 'BEGIN {
	printf "code a site (.text; cold sections): pair %+.0f; %+.0f, usdt %+.0f; %+.0f bytes (bare .text %d)\n",
		(ph - bh) / n, (pc - bc) / n, (uh - bh) / n, (uc - bc) / n, bh }')

export PROF_NO_DAEMON=1
unset PROF_REPORT PROF_SAVE PROF_LOG_INTERVAL
args=(--size "$SIZE" --memdb)
# zones a run, as the pair counts them; the runtime's own estimate of its cost
BENCH_COUNT=bld/count "bld/speedtest1_pair" "${args[@]}" >/dev/null
zones=$(head -1 bld/count)
echo "zones a run by function (the pair build's counts):"
tail -n +2 bld/count | while read -r i n; do echo "${FUNCS[i]} $n"; done | sort -k2,2nr |
	awk '{ printf "  %-34s %12d\n", $1, $2 }'
PROF_REPORT=bld/report.json PROF_REPORT_FORMAT=json bld/speedtest1_usdt "${args[@]}" >/dev/null
probe_ns=$(grep -o '"probe_cost_ns":[0-9]*' bld/report.json | head -1 | cut -d: -f2)

# instructions (callgrind; the same on any machine, under any load) at a
# smaller size: each build's total less the bare build's, a zone
cg_size=${CG_SIZE:-10}
cg_line=
if command -v valgrind >/dev/null; then
	cg_args=(--size "$cg_size" --memdb)
	BENCH_COUNT=bld/count.cg "bld/speedtest1_pair" "${cg_args[@]}" >/dev/null
	declare -A ir
	for v in "${names[@]}"; do
		valgrind --tool=callgrind --callgrind-out-file=bld/cg.out "bld/speedtest1_$v" \
			"${cg_args[@]}" >/dev/null 2>bld/cg.err || { cat bld/cg.err; exit 1; }
		ir[$v]=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' bld/cg.out)
	done
	cg_line=$(awk -v z="$(head -1 bld/count.cg)" -v b="${ir[bare]}" -v p="${ir[pair]}" \
		-v u="${ir[usdt]}" -v s="$cg_size" 'BEGIN {
		printf "instructions a zone (callgrind, --size %d, %.1f M zones): pair %.1f, usdt %.1f\n",
			s, z / 1e6, (p - b) / z, (u - b) / z }')
else
	cg_line="instructions a zone: valgrind not installed, not counted"
fi

declare -A times
TIMEFORMAT=%3U
echo "speedtest1 ${args[*]}: $ROUNDS rounds, each the three builds in turn (user CPU s)"
for r in $(seq 1 "$ROUNDS"); do
	line="round $r:"
	for k in 0 1 2; do
		v=${names[(r + k) % 3]}
		t=$({ time "bld/speedtest1_$v" "${args[@]}" >/dev/null 2>&1; } 2>&1)
		times[$v]+="$t "
		line+=" $v $t"
	done
	echo "  $line"
done
median() { printf '%s\n' $1 | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
bare=$(median "${times[bare]}")
echo
printf '%-6s %10s %9s %12s\n' build "user s" slowdown "ns a zone"
for v in "${names[@]}"; do
	m=$(median "${times[$v]}")
	awk -v v="$v" -v m="$m" -v b="$bare" -v z="$zones" 'BEGIN {
		printf "%-6s %10.3f %8.2fx %12s\n", v, m, m / b,
			v == "bare" ? "-" : sprintf("%.1f", (m - b) * 1e9 / z) }'
done
awk -v z="$zones" -v m="$(median "${times[usdt]}")" -v b="$bare" -v p="${probe_ns:-}" 'BEGIN {
	printf "zones a run %.1f M; %.1f M a second of the bare build, %.1f M of the usdt build\n",
		z / 1e6, z / b / 1e6, z / m / 1e6
	if (p != "")
		printf "the runtime'"'"'s own estimate (PROF_REPORT probe_cost_ns): %.1f ns a zone, %.3f s a run\n",
			p / z, p / 1e9 }'
echo "$cg_line"
echo "$code_line"
