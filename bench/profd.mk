# SPDX-License-Identifier: MIT
# profd's costs (issue 3): the context-switch tax, and sampling CPU.
PINGPONG := $(OUTPUT)/bench/pingpong
# the floor program: built like bpf/'s, its skeleton beside the bench
$(OUTPUT)/bench/switch_floor.bpf.o: bench/switch_floor.bpf.c bpf/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
		-Ibpf -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp
$(OUTPUT)/bench/switch_floor.skel.h: $(OUTPUT)/bench/switch_floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@
$(PINGPONG): bench/pingpong.c $(LIBPROF_A) $(PROFSCHED_SKEL) $(OUTPUT)/bench/switch_floor.skel.h \
	     bpf/profsched.h | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ibpf -I$(OUTPUT) -I$(OUTPUT)/bench $< -o $@ $(ALL_LDFLAGS) \
		$(LIBPROF_A) $(LIBBPF_LIBS) -lpthread

.PHONY: bench-profd
bench-profd: $(PINGPONG) $(PROFD) $(OUTPUT)/bench/profctl_gen
	@echo "== pipe ping-pong, without and with profd"; $(PINGPONG) -p $(PROFD)
	@echo "== profd sampling CPU"; bench/profd_cpu.sh $(PROFD) $(OUTPUT)/bench/profctl_gen
BENCH_RUN += bench-profd
