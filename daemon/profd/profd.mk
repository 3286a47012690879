# SPDX-License-Identifier: MIT
# profd, the BPF program and the client library (included by the top Makefile).
# profctl's own rules live in daemon/profctl/profctl.mk (included at the end), which
# defines PROFCTL (its binaries) and may use PROFD_CLIENT_OBJS.

BPF_CFLAGS ?= -g -O2
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
LIBBPF_LIBS := -lbpf -lelf -lz
SYSTEMD_UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(PREFIX)/share/man

PROFD := $(OUTPUT)/profd
PROFD_SRCS := daemon/profd/profd.c daemon/profd/profd_conf.c daemon/profd/profd_log.c \
	daemon/profd/profd_bpf.c daemon/profd/profd_seg.c \
	daemon/profd/profd_discover.c daemon/profd/profd_sample.c daemon/profd/profd_history.c \
	daemon/profd/profd_query.c \
	daemon/profd/profd_ctl.c daemon/profd/profd_peer.c daemon/profd/profd_tsc.c \
	daemon/profd/profd_share.c
# history frames as deltas (profd_history.c keeps them)
PROFD_SRCS += daemon/profd/profd_hist.c
# its sampling cursor: a few words a sample of a followed process
PROFD_SRCS += daemon/profd/profd_cursor.c
# sampled stacks under the zone open: the sampler, attribution, symbols
PROFD_SRCS += daemon/profd/profd_stacks.c daemon/profd/profd_attrib.c daemon/profd/profd_sym.c
PROFD_OBJS := $(patsubst daemon/%.c,$(OUTPUT)/daemon/%.o,$(PROFD_SRCS))
PROFD_CLIENT_OBJ := $(OUTPUT)/daemon/profctl/client.o
PROFD_CLIENT_OBJS := $(PROFD_CLIENT_OBJ)
PROFSCHED_SKEL := $(OUTPUT)/profsched.skel.h $(OUTPUT)/profsample.skel.h
PROFCTL ?=

# generated, but kept: they are what the objects depend on
.SECONDARY: $(PROFSCHED_SKEL) $(OUTPUT)/bpf/profsched.bpf.o $(OUTPUT)/bpf/profsample.bpf.o

.PHONY: daemon install-daemon vmlinux

# regenerate the checked-in vmlinux.h from the running kernel's BTF
vmlinux:
	$(call msg,GEN,bpf/vmlinux.h)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > bpf/vmlinux.h

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c bpf/%.h bpf/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall $(WERROR_FLAG) \
		-Ibpf -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# every daemon object depends on the skeleton: it is generated before them
# (their other headers: the .d files)
$(OUTPUT)/daemon/profd/%.o: daemon/profd/%.c $(PROFSCHED_SKEL) | $(OUTPUT)/daemon/profd
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -c $< -o $@

$(PROFD_CLIENT_OBJ): daemon/profctl/client.c | $(OUTPUT)/daemon/profctl
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -c $< -o $@

$(PROFD): $(PROFD_OBJS) $(LIBPROF_READ) $(LIBPROF_A)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $(PROFD_OBJS) -o $@ $(LIBPROF_READ) $(LIBPROF_A) $(LIBBPF_LIBS) -ldw -lpthread

install-daemon: $(PROFD)
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(SYSTEMD_UNITDIR) $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(PROFD) $(DESTDIR)$(PREFIX)/sbin/profd
	sed 's|/usr/local/sbin/profd|$(PREFIX)/sbin/profd|' systemd/profd.service \
		> $(DESTDIR)$(SYSTEMD_UNITDIR)/profd.service
	install -m 0644 man/profd.8 $(DESTDIR)$(MANDIR)/man8/profd.8

include daemon/profctl/profctl.mk

daemon: $(PROFD) $(PROFD_CLIENT_OBJS) $(PROFCTL)
