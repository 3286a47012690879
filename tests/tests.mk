# SPDX-License-Identifier: MIT
# Tests are cmocka programs.  Each tests/*.mk appends to:
#   UNIT_TESTS  unprivileged; also built and run under ASan and TSan if in SAN_TESTS
#   ROOT_TESTS  need root and the real BPF program; skip (with a reason) otherwise
#   SAN_TESTS   the unit tests that also run under SAN=asan and SAN=tsan
#   RUNTIME_TESTS  the unit tests of libprof alone (no profd, BPF or tracer):
#               also cross-built (CROSS=) and run under qemu-user
# tests/run runs every tier and prints one summary line; tests/mutate (make
# mutate) checks that they catch the bugs listed in tests/mutations.txt.

UNIT_TESTS :=
ROOT_TESTS :=
SAN_TESTS :=
RUNTIME_TESTS :=
TEST_LIBS := -lcmocka -lpthread
# a coverage build: what a test's child runs before its _exit() counts too
# (tests/cov_exit.c writes its counts then)
ifeq ($(SAN),cov)
TEST_LIBS += -Wl,--wrap=_exit $(OUTPUT)/tests/libcov_exit.a
endif

include $(filter-out tests/tests.mk,$(wildcard tests/*.mk))

ifeq ($(SAN),cov)
$(UNIT_TESTS) $(ROOT_TESTS): $(OUTPUT)/tests/libcov_exit.a
$(OUTPUT)/tests/libcov_exit.a: tests/cov_exit.c | $(OUTPUT)/tests
	$(call msg,AR,$@)
	$(Q)$(CC) $(filter-out $(SAN_cov),$(ALL_CFLAGS)) -c $< -o $(@:.a=.o) && rm -f $@ && \
		$(AR) rcs $@ $(@:.a=.o)
endif

# a test links the readers' library before libprof: testutil.h finds
# segments as profctl does (discover.c)
$(OUTPUT)/tests/%: tests/%.c tests/testutil.h $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< -o $@ $(ALL_LDFLAGS) $(LIBPROF_READ) \
		$(LIBPROF_A) $(TEST_LIBS)

$(OUTPUT)/tests/%: tests/%.cc tests/testutil.h $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(ALL_CXXFLAGS) -Itests $< -o $@ $(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) \
		$(TEST_LIBS)

.PHONY: tests-build tests-san runtime-build test-runtime
# everything the runner needs, and the lists it reads
tests-build: all $(UNIT_TESTS) $(ROOT_TESTS) $(TEST_EXTRA)
	$(Q)printf '%s\n' $(UNIT_TESTS) > $(OUTPUT)/tests/unit.list
	$(Q)printf '%s\n' $(ROOT_TESTS) > $(OUTPUT)/tests/root.list
tests-san: lib $(SAN_TESTS)
	$(Q)printf '%s\n' $(SAN_TESTS) > $(OUTPUT)/tests/san.list

# the runtime's tests alone, for CROSS= too
runtime-build: lib $(RUNTIME_TESTS)
	$(Q)printf '%s\n' $(RUNTIME_TESTS) > $(OUTPUT)/tests/runtime.list

test:
	$(Q)tests/run

# make test with every CPU kept busy by stress-ng meanwhile (tests/load):
# a test that holds only on an idle machine fails here
.PHONY: test-load
test-load:
	$(Q)tests/load tests/run

# make CROSS=aarch64-linux-gnu- lib test-runtime: build and run them there
test-runtime:
	$(Q)CROSS=$(CROSS) TIERS=runtime tests/run

# the bugs of tests/mutations.txt, each applied to a scratch copy (as many
# copies at once as CPUs): the tests must catch every one (tests/mutate says
# how long it takes)
.PHONY: mutate check-deps
mutate:
	$(Q)tests/mutate

# a changed header rebuilds exactly what includes it (tests/run runs it too)
check-deps: all
	$(Q)python3 tests/check_deps.py
