# SPDX-License-Identifier: MIT
# make bench: every benchmark; each bench/*.mk appends its commands to BENCH_RUN
BENCH_RUN :=
include $(filter-out bench/bench.mk,$(wildcard bench/*.mk))

OVERHEAD := $(OUTPUT)/bench/overhead
$(OVERHEAD): bench/overhead.c bench/overhead_nokw.c bench/overhead_noring.c bench/overhead.h usdt/zone_leave.h $(LIBPROF_A) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ibench bench/overhead.c bench/overhead_nokw.c bench/overhead_noring.c -o $@ \
		$(ALL_LDFLAGS) $(LIBPROF_A) -lpthread

.PHONY: bench bench-overhead
bench-overhead: $(OVERHEAD)
	@echo "== overhead, 1 thread"; PROF_NO_DAEMON=1 $(OVERHEAD) -t 1
	@echo "== overhead, 2 threads"; PROF_NO_DAEMON=1 $(OVERHEAD) -t 2
	@echo "== instructions per zone (callgrind; repeatable)"; bench/callgrind-zone $(OVERHEAD)

bench: bench-overhead $(BENCH_RUN)
