# SPDX-License-Identifier: MIT
# profd's costs (issue 3): the context-switch tax, and sampling CPU.
PINGPONG := $(OUTPUT)/bench/pingpong
$(PINGPONG): bench/pingpong.c $(LIBPROF_A) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LIBPROF_A) -lpthread

.PHONY: bench-profd
bench-profd: $(PINGPONG) $(PROFD) $(OUTPUT)/bench/profctl_gen
	@echo "== pipe ping-pong, without and with profd"; $(PINGPONG) -p $(PROFD)
	@echo "== profd sampling CPU"; bench/profd_cpu.sh $(PROFD) $(OUTPUT)/bench/profctl_gen
BENCH_RUN += bench-profd
