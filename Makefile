# SPDX-License-Identifier: MIT
# profd: make | make test | make bench | make install [PREFIX= DESTDIR=]
# V=1 shows the commands.  SAN=asan|tsan builds into .output/SAN/.
# make coverage: the unit and root tiers built with --coverage (SAN=cov, into
# .output/cov/), gcovr's report in .output/cov/html/ (tests/coverage).
# make CROSS=aarch64-linux-gnu- lib test-runtime: the runtime on aarch64,
# its tests under qemu-user.

CC ?= cc
CXX ?= c++
CLANG ?= clang
BPFTOOL ?= bpftool
PREFIX ?= /usr/local
DESTDIR ?=
CFLAGS ?= -O2 -g
SAN ?=
OBJCOPY ?= objcopy

ifeq ($(SAN),)
OUTPUT := .output
else
OUTPUT := .output/$(SAN)
endif
# CROSS=aarch64-linux-gnu- builds the runtime and its tests with that
# toolchain into .output/ARCH/; test-runtime runs them under qemu-ARCH
CROSS ?=
ifneq ($(CROSS),)
CROSS_ARCH := $(firstword $(subst -, ,$(CROSS)))
CC := $(CROSS)gcc
CXX := $(CROSS)g++
AR := $(CROSS)ar
LD := $(CROSS)ld
OBJCOPY := $(CROSS)objcopy
OUTPUT := .output/$(CROSS_ARCH)
endif
SAN_asan := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_tsan := -fsanitize=thread
# atomic counters: the runtime's threads and profd's count the same lines
SAN_cov := --coverage -fprofile-update=atomic
SANFLAGS := $(SAN_$(SAN))

# warnings are errors where we check our own work (make test, make mutate,
# tests/run, CI: WERROR=1); a user's plain make only shows them, so that a
# newer compiler's new warning does not stop a build
WERROR ?=
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
WARN := -Wall -Wextra $(WERROR_FLAG) -Wstrict-prototypes -Wmissing-prototypes -Wshadow \
	-Wpointer-arith -Wcast-qual -Wsign-compare
# every object (and every program built from one source) records the
# headers it included in a .d beside it: a changed header rebuilds exactly
# its includers; -MP keeps a deleted header from stopping the build
DEPFLAGS := -MMD -MP
INCLUDES := -Iusdt -Ibpf -I$(OUTPUT)
DAEMON_INCLUDES := -Idaemon/profd -Idaemon/profctl -I$(OUTPUT)/daemon/profctl
ALL_CFLAGS := -std=gnu11 $(DEPFLAGS) $(WARN) $(INCLUDES) $(SANFLAGS) $(CFLAGS)
ALL_CXXFLAGS := -std=gnu++17 $(DEPFLAGS) -Wall -Wextra $(WERROR_FLAG) -Wshadow $(INCLUDES) $(SANFLAGS) $(CFLAGS)
ALL_LDFLAGS := $(SANFLAGS) $(LDFLAGS)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.PHONY: all lib test bench install uninstall clean vmlinux fuzz format setup example coverage

# --- the application side: libprof ------------------------------------------
# what an application runs: its zones, the profd client, the log, and at
# exit the report (the reader, report.c) or PROF_SAVE's file (proffile.c)
LIB_SRCS := usdt/prof.c usdt/prof_clock.c usdt/prof_proc.c usdt/prof_seg.c usdt/prof_site.c \
	usdt/prof_thread.c usdt/prof_slow.c usdt/prof_fold.c usdt/prof_fold_annot.c usdt/prof_exit.c usdt/prof_fork.c \
	usdt/enter.c usdt/env.c usdt/agent.c usdt/logger.c usdt/reader.c usdt/reader_check.c usdt/reader_hist.c \
	usdt/reader_flat.c usdt/reader_image.c usdt/report.c usdt/report_text.c usdt/proffile.c \
	usdt/json_writer.c usdt/fmt.c usdt/funcname.c usdt/fdpass.c usdt/annot.c usdt/reader_locks.c \
	usdt/report_locks.c
LIB_OBJS := $(patsubst usdt/%.c,$(OUTPUT)/usdt/%.o,$(LIB_SRCS))
# what only the readers run (profd, profctl, tests, benchmarks, linked
# before libprof.a): finding segments, the event rings, loading a file,
# reading a segment its owner may truncate
READ_SRCS := usdt/discover.c usdt/reader_trace.c usdt/reader_annot.c usdt/proffile_load.c usdt/busguard.c
READ_OBJS := $(patsubst usdt/%.c,$(OUTPUT)/usdt/%.o,$(READ_SRCS))
# what profd, profctl, the tests and benchmarks link: every object as it is,
# the internals too (read_seg, seg_check, ...).  Not installed.
LIBPROF_A := $(OUTPUT)/libprof.a
# what an application links (installed): its only global symbols are the
# ABI prof.h calls, __prof_*, so that a program may name its own functions
# as libprof's internals are named.  The .so exports them in version
# PROF_2 (usdt/libprof.map); the archive is its objects linked into one
# (ld -r: they call each other) with every other symbol made local.
LIBPROF_SO := $(OUTPUT)/libprof.so
LIBPROF_PUB_A := $(OUTPUT)/pub/libprof.a
LIBPROF_MAP := usdt/libprof.map
# not installed
LIBPROF_READ := $(OUTPUT)/libprofread.a

EXAMPLE := $(OUTPUT)/example

all: lib $(EXAMPLE) daemon

lib: $(LIBPROF_A) $(LIBPROF_PUB_A) $(LIBPROF_SO)

$(OUTPUT)/usdt/%.o: usdt/%.c | $(OUTPUT)/usdt
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -c $< -o $@

# the libraries depend on this file too: it says which objects are in which
$(LIBPROF_A): $(LIB_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

# the globs are the version script's: one list of what is exported
$(LIBPROF_PUB_A): $(LIB_OBJS) $(LIBPROF_MAP) Makefile | $(OUTPUT)/pub
	$(call msg,AR,$@)
	$(Q)$(LD) -r $(filter %.o,$^) -o $(@:.a=.o)
	$(Q)$(OBJCOPY) --localize-hidden --wildcard $(patsubst %,--keep-global-symbol='%', \
		$(shell sed -n 's/^[[:space:]]*\(__prof_[^;]*\);$$/\1/p' $(LIBPROF_MAP))) $(@:.a=.o)
	$(Q)rm -f $@ && $(AR) rcs $@ $(@:.a=.o)

$(LIBPROF_READ): $(READ_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(LIBPROF_SO): $(LIB_OBJS) $(LIBPROF_MAP) Makefile
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libprof.so.0 -Wl,--version-script=$(LIBPROF_MAP) \
		$(ALL_LDFLAGS) $(filter %.o,$^) -o $@ -lpthread

$(EXAMPLE): usdt/example.c $(LIBPROF_PUB_A) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LIBPROF_PUB_A) -lpthread

$(OUTPUT) $(OUTPUT)/pub $(OUTPUT)/usdt $(OUTPUT)/bpf $(OUTPUT)/daemon/profd $(OUTPUT)/daemon/profctl $(OUTPUT)/tests $(OUTPUT)/bench:
	$(Q)mkdir -p $@

# --- the kernel side and the daemon (see daemon/profd/profd.mk) ------------
include daemon/profd/profd.mk

# --- tests and benchmarks (see tests/tests.mk, bench/bench.mk) --------------
include tests/tests.mk
include bench/bench.mk

# the headers each object and program read when it was last built
-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/*/*.d $(OUTPUT)/*/*/*.d)

# the Debian packages, then the build installed in PREFIX (root, or a
# PREFIX the user may write): after it, cc app.c $(pkg-config --cflags
# --libs prof) builds a program that runs
setup:
	.ci/deps
	@if [ "$$(id -u)" = 0 ] || [ -w "$(DESTDIR)$(PREFIX)" ]; then \
		$(MAKE) --no-print-directory install; \
	else \
		echo "make setup: $(PREFIX) is not yours: nothing installed (as root, or" \
			"make install PREFIX=\$$HOME/.local; see docs/building.md, 'Using another prefix')"; \
	fi

# the annotated example, profiled end to end (under a private profd when
# root), its report printed
example: all
	@usdt/example-run $(EXAMPLE) $(PROFD) $(PROFCTL)

format:
	clang-format -i usdt/*.c bpf/*.bpf.c daemon/*/*.c tests/*.c bench/*.c

# where ld.so finds a library once ldconfig ran: any other PREFIX gets an
# rpath in prof.pc, so that a program built with it finds libprof.so.0
SYSTEM_PREFIXES := /usr /usr/local
comma := ,
PC_RPATH := $(if $(filter $(SYSTEM_PREFIXES),$(PREFIX)),, -Wl$(comma)-rpath$(comma)$${libdir})

# the public header and the two it includes; prof(3); the JSON Schema of
# the reports; ldconfig when root installs into the system itself
install: all
	install -d $(DESTDIR)$(PREFIX)/include/prof $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man3 \
		$(DESTDIR)$(PREFIX)/share/prof
	install -m 0644 usdt/prof.h usdt/slab.h bpf/profsched.h $(DESTDIR)$(PREFIX)/include/prof/
	install -m 0644 man/prof.3 $(DESTDIR)$(PREFIX)/share/man/man3/prof.3
	install -m 0644 tests/report.schema.json $(DESTDIR)$(PREFIX)/share/prof/
	install -m 0644 $(LIBPROF_PUB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 0755 $(LIBPROF_SO) $(DESTDIR)$(PREFIX)/lib/libprof.so.0
	ln -sf libprof.so.0 $(DESTDIR)$(PREFIX)/lib/libprof.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@RPATH@|$(PC_RPATH)|' usdt/prof.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/prof.pc
	$(MAKE) --no-print-directory install-daemon install-profctl
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

coverage:
	$(Q)tests/coverage

clean:
	rm -rf .output
