# SPDX-License-Identifier: MIT
# profd's costs: the context-switch tax, and sampling CPU.
PINGPONG := $(OUTPUT)/bench/pingpong
# the floor program: built like bpf/'s, its skeleton beside the bench
$(OUTPUT)/bench/switch_floor.bpf.o: bench/switch_floor.bpf.c bpf/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall $(WERROR_FLAG) \
		-Ibpf -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp
$(OUTPUT)/bench/switch_floor.skel.h: $(OUTPUT)/bench/switch_floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@
$(PINGPONG): bench/pingpong.c $(LIBPROF_READ) $(LIBPROF_A) $(PROFSCHED_SKEL) \
	     $(OUTPUT)/bench/switch_floor.skel.h bpf/profsched.h | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ibpf -I$(OUTPUT) -I$(OUTPUT)/bench $< -o $@ $(ALL_LDFLAGS) \
		$(LIBPROF_READ) $(LIBPROF_A) $(LIBBPF_LIBS) -lpthread

.PHONY: bench-profd
bench-profd: $(PINGPONG) $(PROFD) $(OUTPUT)/bench/profctl_gen
	@echo "== pipe ping-pong, without and with profd"; $(PINGPONG) -p $(PROFD)
	@echo "== profd sampling CPU"; bench/profd_cpu.sh $(PROFD) $(OUTPUT)/bench/profctl_gen
BENCH_RUN += bench-profd

# what a history frame costs: a read, a delta, a rebuild
$(OUTPUT)/bench/profd_hist_cost: bench/profd_hist_cost.c daemon/profd/profd_hist.c \
		daemon/profd/profd.h $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) $< daemon/profd/profd_hist.c -o $@ \
		$(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) -lpthread

# profd's memory with 60 s of history of 711k nodes (bench/profd_mem.sh)
.PHONY: bench-profd-mem
bench-profd-mem: $(PROFD) $(PROFCTL) $(OUTPUT)/bench/profctl_gen $(OUTPUT)/bench/profd_hist_cost
	@echo "== profd memory, 60 s of history, 711k nodes"; bench/profd_mem.sh $(PROFD) $(OUTPUT)/bench/profctl_gen

# what sampling stacks costs (profd --sample-hz): profd's CPU and a busy
# 4-thread program's, interleaved with sampling off
$(OUTPUT)/bench/sample_busy: bench/sample_busy.c $(LIBPROF_PUB_A) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fno-omit-frame-pointer $< -o $@ $(ALL_LDFLAGS) $(LIBPROF_PUB_A) -lpthread
# SAMPLE_BASE=PATH: another build's profd measured beside this one
.PHONY: bench-sample
bench-sample: $(PROFD) $(OUTPUT)/bench/sample_busy
	@echo "== stack sampling at 997 Hz, busy 4-thread program"; bench/sample_cost.sh $(PROFD) $(OUTPUT)/bench/sample_busy $(SAMPLE_BASE)
BENCH_RUN += bench-sample
