# SPDX-License-Identifier: MIT
# profd's tests: the protocol (unprivileged) and the real BPF program (root).

UNIT_TESTS += $(OUTPUT)/tests/test_proto

$(OUTPUT)/tests/test_proto: tests/test_proto.c usdt/proto.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< -o $@ $(ALL_LDFLAGS) $(TEST_LIBS)

# needs profd and profctl beside it (it runs ../profd, ../profctl) and the client
# and the program its container tests run inside one (tests/ctr_payload); the
# programs share tests/profd_fixture.h: the kernel facts (test_profd), users
# who do not trust each other, what profd answers with, containers
PROFD_ROOT_TESTS := test_profd test_profd_users test_profd_views test_profd_container
ROOT_TESTS += $(patsubst %,$(OUTPUT)/tests/%,$(PROFD_ROOT_TESTS))
$(patsubst %,$(OUTPUT)/tests/%,$(PROFD_ROOT_TESTS)): $(OUTPUT)/tests/%: tests/%.c tests/testutil.h \
		tests/profd_fixture.h $(PROFD_CLIENT_OBJ) $(LIBPROF_READ) $(LIBPROF_A) $(PROFD) $(PROFCTL) \
		$(OUTPUT)/tests/ctr_payload | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< -o $@ $(ALL_LDFLAGS) $(PROFD_CLIENT_OBJ) \
		$(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS) -lm

UNIT_TESTS += $(OUTPUT)/tests/test_systemd_unit
$(OUTPUT)/tests/test_systemd_unit: $(PROFD) systemd/profd.service

# users who do not trust each other: quotas, pid reuse, attach on demand (root)
GUARD_TESTS := test_guard test_guard_asks
ROOT_TESTS += $(patsubst %,$(OUTPUT)/tests/%,$(GUARD_TESTS))
$(patsubst %,$(OUTPUT)/tests/%,$(GUARD_TESTS)): $(OUTPUT)/tests/%: tests/%.c tests/testutil.h \
		tests/guard_fixture.h $(PROFD_CLIENT_OBJ) $(LIBPROF_READ) $(LIBPROF_A) $(PROFD) $(PROFCTL) \
		| $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< -o $@ $(ALL_LDFLAGS) $(PROFD_CLIENT_OBJ) \
		$(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)

# history frames as reverse deltas, rebuilt exactly (profd_hist.c alone)
UNIT_TESTS += $(OUTPUT)/tests/test_profd_hist
SAN_TESTS += $(OUTPUT)/tests/test_profd_hist
$(OUTPUT)/tests/test_profd_hist: tests/test_profd_hist.c tests/testutil.h daemon/profd/profd_hist.c \
		daemon/profd/profd.h $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< daemon/profd/profd_hist.c -o $@ \
		$(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)

# profd's options and log, linked with profd_conf.c and profd_log.c alone:
# --history's time as profctl's --last spells one (test_profd_conf), every
# option that takes a time through one reader (test_conf_times), and the
# options as a user mistypes them (--max-memory's units, ranges, --help, an
# unknown option) and the log's lines, paths make coverage showed no test
# took (test_cover_profd)
PROFD_CONF_TESTS := $(patsubst %,$(OUTPUT)/tests/%,test_profd_conf test_conf_times test_cover_profd)
UNIT_TESTS += $(PROFD_CONF_TESTS)
$(PROFD_CONF_TESTS): $(OUTPUT)/tests/%: tests/%.c tests/testutil.h daemon/profd/profd_conf.c \
		daemon/profd/profd_log.c daemon/profd/profd.h daemon/profd/profd_conf.h \
		$(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< daemon/profd/profd_conf.c \
		daemon/profd/profd_log.c -o $@ $(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)

# profd when what it asks of the kernel fails: tests/fault_shim.c, preloaded
# into it, fails the calls a test names (never built with a sanitizer's or
# gcov's flags: it is not what is measured)
ROOT_TESTS += $(OUTPUT)/tests/test_fault_profd
TEST_EXTRA += $(OUTPUT)/tests/libfault.so
$(OUTPUT)/tests/libfault.so: tests/fault_shim.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(filter-out $(SAN_$(SAN)),$(ALL_CFLAGS)) -fPIC -shared $< -o $@ -ldl
$(OUTPUT)/tests/test_fault_profd: tests/test_fault_profd.c tests/testutil.h tests/profd_fixture.h \
		$(PROFD_CLIENT_OBJ) $(LIBPROF_READ) $(LIBPROF_A) $(PROFD) $(PROFCTL) \
		$(OUTPUT)/tests/libfault.so | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< -o $@ $(ALL_LDFLAGS) $(PROFD_CLIENT_OBJ) \
		$(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS) -lm
