# SPDX-License-Identifier: MIT
# profd's sampled stacks under the zone open (profd --sample-hz): which zone
# a tick fell in, read from a slab (unprivileged), and the shares a real
# profd samples in a program built with gcc and clang, with and without
# frame pointers (root, perf_event).

ROOT_TESTS += $(OUTPUT)/tests/test_sample
SAMPLE_PROGS := $(OUTPUT)/tests/sprog_gcc $(OUTPUT)/tests/sprog_clang \
	$(OUTPUT)/tests/sprog_gcc_nofp $(OUTPUT)/tests/sprog_clang_nofp
TEST_EXTRA += $(SAMPLE_PROGS) $(OUTPUT)/tests/sample_garbage

# -O2 -g as a user builds; the _nofp ones leave frame pointers to the compiler
# (both omit them at -O2 on x86-64)
SAMPLE_FP := -fno-omit-frame-pointer
# a coverage build's libprof calls gcov's runtime: gcc's libgcov, which clang
# links too (its own --coverage runtime is another)
SAMPLE_LIBS := $(if $(filter cov,$(SAN)),-lgcov) -lpthread
$(OUTPUT)/tests/sprog_gcc: SAMPLE_CC := gcc $(SAMPLE_FP)
$(OUTPUT)/tests/sprog_clang: SAMPLE_CC := clang $(SAMPLE_FP)
$(OUTPUT)/tests/sprog_gcc_nofp: SAMPLE_CC := gcc
$(OUTPUT)/tests/sprog_clang_nofp: SAMPLE_CC := clang
$(SAMPLE_PROGS): tests/sample_prog.c $(LIBPROF_PUB_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(SAMPLE_CC) -O2 -g -Wall -Werror $(INCLUDES) $< -o $@ $(LIBPROF_PUB_A) $(SAMPLE_LIBS)

# its frame pointer garbage while it runs
$(OUTPUT)/tests/sample_garbage: tests/sample_garbage.c $(LIBPROF_PUB_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -Wall -Werror -fno-omit-frame-pointer $(INCLUDES) $< -o $@ $(LIBPROF_PUB_A) $(SAMPLE_LIBS)

$(OUTPUT)/tests/test_sample: tests/test_sample.c tests/testutil.h tests/profd_private.h \
		daemon/profd/profd_attrib.c daemon/profd/profd_stacks.h $(PROFCTL_LIB) \
		$(LIBPROF_READ) $(LIBPROF_A) $(PROFD) $(SAMPLE_PROGS) $(OUTPUT)/tests/sample_garbage | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< daemon/profd/profd_attrib.c -o $@ \
		$(ALL_LDFLAGS) $(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS) $(PROFCTL_LIBS)

# every report says whether stacks are sampled or why not (unprivileged, and
# root with a real profd on and at --sample-hz 0)
ROOT_TESTS += $(OUTPUT)/tests/test_sample_state
$(OUTPUT)/tests/test_sample_state: tests/test_sample_state.c tests/testutil.h tests/profd_private.h \
		$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) $(PROFD) $(OUTPUT)/tests/sprog_gcc | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< -o $@ \
		$(ALL_LDFLAGS) $(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS) $(PROFCTL_LIBS)

# code unmapped while it is sampled: two libraries loaded in turn at one
# address, their functions in opposite order (root)
ROOT_TESTS += $(OUTPUT)/tests/test_sample_unmap
UNMAP_LIBS := $(OUTPUT)/tests/unmap_a.so $(OUTPUT)/tests/unmap_b.so
TEST_EXTRA += $(UNMAP_LIBS) $(OUTPUT)/tests/sample_unmap
$(OUTPUT)/tests/unmap_%.so: tests/unmap_lib.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -Wall -Werror -fno-omit-frame-pointer -fPIC -shared \
		-DUNMAP_B=$(if $(filter b,$*),1,0) $< -o $@
$(OUTPUT)/tests/sample_unmap: tests/sample_unmap.c $(LIBPROF_PUB_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -Wall -Werror -fno-omit-frame-pointer $(INCLUDES) $< -o $@ \
		$(LIBPROF_PUB_A) $(SAMPLE_LIBS) -ldl
$(OUTPUT)/tests/test_sample_unmap: tests/test_sample_unmap.c tests/testutil.h \
		tests/profd_private.h $(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) $(PROFD) \
		$(UNMAP_LIBS) $(OUTPUT)/tests/sample_unmap | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< -o $@ \
		$(ALL_LDFLAGS) $(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS) $(PROFCTL_LIBS)

# a tick's zone found by the search of the event ring, as the walk finds it
# (unprivileged)
UNIT_TESTS += $(OUTPUT)/tests/test_sample_search
$(OUTPUT)/tests/test_sample_search: tests/test_sample_search.c tests/testutil.h \
		daemon/profd/profd_attrib.c daemon/profd/profd_stacks.h $(LIBPROF_READ) $(LIBPROF_A) \
		| $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< daemon/profd/profd_attrib.c -o $@ \
		$(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)
