# SPDX-License-Identifier: MIT
# profd's options that take a time: one reader for all (profd_conf.c)
UNIT_TESTS += $(OUTPUT)/tests/test_conf_times
$(OUTPUT)/tests/test_conf_times: tests/test_conf_times.c tests/testutil.h daemon/profd/profd_conf.c \
		daemon/profd/profd_log.c daemon/profd/profd.h daemon/profd/profd_conf.h \
		$(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< daemon/profd/profd_conf.c \
		daemon/profd/profd_log.c -o $@ $(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)
