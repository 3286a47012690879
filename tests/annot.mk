# SPDX-License-Identifier: MIT
# the annotations' windows: a diff, an image, profd's history frames
# (profd_hist.c alone), profctl's reset and --input, the report at exit;
# and a name used in two files (annot_b.c) is one lock, one plot
UNIT_TESTS += $(OUTPUT)/tests/test_annot_window
# the readers of locks and plots, and the threads that write them, under
# ASan, UBSan and TSan too
SAN_TESTS += $(OUTPUT)/tests/test_annot_window $(OUTPUT)/tests/test_annot
$(OUTPUT)/tests/test_annot_window: tests/test_annot_window.c tests/annot_b.c tests/testutil.h tests/profctl_child.h tests/annot_fixture.h \
		daemon/profd/profd_hist.c daemon/profd/profd.h $(PROFCTL_LIB) $(LIBPROF_READ) \
		$(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< tests/annot_b.c daemon/profd/profd_hist.c -o $@ \
		$(ALL_LDFLAGS) $(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS) $(PROFCTL_LIBS)
# locks and plots through every way a profile travels (a JSON report read
# back, a saved file) with hostile names, and exited threads' folded into
# the aggregate
UNIT_TESTS += $(OUTPUT)/tests/test_annot_roundtrip
SAN_TESTS += $(OUTPUT)/tests/test_annot_roundtrip
$(OUTPUT)/tests/test_annot_roundtrip: tests/test_annot_roundtrip.c tests/testutil.h tests/profctl_child.h tests/annot_fixture.h \
		$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(link_profctl_test)
# the counted mutex's common paths (the sites' caches warm): nesting, one
# site from two zones, a release after the thread's exit, the monotonic clock
UNIT_TESTS += $(OUTPUT)/tests/test_annot_mutex
SAN_TESTS += $(OUTPUT)/tests/test_annot_mutex
# top's named locks: two frames' figures, one that went back between them
UNIT_TESTS += $(OUTPUT)/tests/test_top_locks
$(OUTPUT)/tests/test_top_locks: tests/test_top_locks.c tests/testutil.h \
		$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(link_profctl_test)
# diff's named locks: two saved profiles of one process, text and JSON
UNIT_TESTS += $(OUTPUT)/tests/test_diff_locks
$(OUTPUT)/tests/test_diff_locks: tests/test_diff_locks.c tests/testutil.h tests/profctl_child.h \
		$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(link_profctl_test)
