# SPDX-License-Identifier: MIT
# profctl at scale: report latency and top's CPU on 64 threads x
# 11,110 nodes.  `make bench-profctl`; figures go to BENCHMARKS.md.
include daemon/profctl/profctl.mk

PROFCTL_GEN := $(OUTPUT)/bench/profctl_gen
$(PROFCTL_GEN): bench/profctl_gen.c usdt/prof.h $(LIBPROF_A) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LIBPROF_A) -lpthread

.PHONY: bench-profctl
bench-profctl: $(PROFCTL) $(PROFCTL_GEN)
	@echo "== profctl at 64 threads x 11110 nodes"; bench/profctl_bench.sh $(PROFCTL) $(PROFCTL_GEN)
BENCH_RUN += bench-profctl

# serve's live page on a 64-thread process: serve's CPU, the
# browser's draw time per update
.PHONY: bench-live
bench-live: $(PROFCTL) $(OUTPUT)/tests/live_worker
	@echo "== profctl serve's live page, 64 threads"; bench/live_bench.sh $(PROFCTL) $(OUTPUT)/tests/live_worker
BENCH_RUN += bench-live
