# SPDX-License-Identifier: MIT
# the compensated view against a sampler: each zone's share of self time in
# SQLite's speedtest1, profd's plain and compensated views against perf's
# cpu-clock samples of the bare build (bench/compensate.sh, a few minutes)
.PHONY: bench-compensate
bench-compensate: $(LIBPROF_A) $(PROFCTL)
	@echo "== the compensated view against perf: SQLite's speedtest1"
	@bench/compensate.sh $(LIBPROF_A) $(PROFCTL)
BENCH_RUN += bench-compensate
