# SPDX-License-Identifier: MIT
# a real program: SQLite's speedtest1 from Debian's source
# package, its hot functions zoned three ways (bare, a hand-written rdtsc
# pair, PROF_USDT); `make bench-sqlite`, a few minutes; figures go to
# BENCHMARKS.md.  ROUNDS= and SIZE= pass through to bench/sqlite.sh.
.PHONY: bench-sqlite
bench-sqlite: $(LIBPROF_A)
	@echo "== a real program: SQLite's speedtest1 with zones on its hot functions"
	@bench/sqlite.sh $(LIBPROF_A)
BENCH_RUN += bench-sqlite
