# SPDX-License-Identifier: MIT
# The fast path's tests: zones, slabs, the reader and the reports.

FASTPATH_TESTS := test_counts test_timing test_structure test_overflow test_lifecycle \
	test_disable test_cxx test_probes test_report test_reader test_open test_trace \
	test_sitecache test_mono test_exitprobe test_zone_exact

UNIT_TESTS += $(patsubst %,$(OUTPUT)/tests/%,$(FASTPATH_TESTS))
# the runtime's own tests, also built with CROSS= and run under qemu-user
# (there the probe test reads the notes; its tracers skip)
RUNTIME_TESTS += $(patsubst %,$(OUTPUT)/tests/%,$(FASTPATH_TESTS))
# the probe test reads ELF notes and attaches bpftrace: the plain build is enough
SAN_TESTS += $(patsubst %,$(OUTPUT)/tests/%,$(filter-out test_probes,$(FASTPATH_TESTS)))
TEST_EXTRA += $(OUTPUT)/tests/probe_helper $(OUTPUT)/tests/disable_obj.o \
	$(OUTPUT)/tests/enable_obj.o

# two reads of a thread compared node by node
$(OUTPUT)/tests/test_reader: tests/snap_fixture.h

# public zones from two files
$(OUTPUT)/tests/test_structure: tests/test_structure.c tests/structure_b.c tests/fastpath.h \
		tests/testutil.h $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests tests/test_structure.c tests/structure_b.c -o $@ \
		$(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)

# C++ PROF_FUNC sites, named in reports (test_cxx) and by profctl zones
# (test_profctl); no exceptions: the C compiler links it too
$(OUTPUT)/tests/zones_cxx.o: tests/zones_cxx.cc usdt/prof.h | $(OUTPUT)/tests
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(ALL_CXXFLAGS) -fno-exceptions -c $< -o $@

$(OUTPUT)/tests/test_cxx: tests/test_cxx.cc $(OUTPUT)/tests/zones_cxx.o tests/fastpath.h \
		tests/testutil.h $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(ALL_CXXFLAGS) -Itests $< $(OUTPUT)/tests/zones_cxx.o -o $@ $(ALL_LDFLAGS) \
		$(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)

# every macro under -DPROF_DISABLE, and the same source enabled as the control
# (never with --coverage: its counters are symbols of their own, not the
# test's business, and the check is that the object names nothing of ours)
$(OUTPUT)/tests/disable_obj.o: tests/disable_obj.c usdt/prof.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(filter-out $(SAN_cov),$(ALL_CFLAGS)) -DPROF_DISABLE -c $< -o $@

$(OUTPUT)/tests/enable_obj.o: tests/disable_obj.c usdt/prof.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/test_disable: tests/test_disable.c $(OUTPUT)/tests/disable_obj.o \
		$(OUTPUT)/tests/enable_obj.o tests/fastpath.h tests/testutil.h $(LIBPROF_READ) \
		$(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests $< $(OUTPUT)/tests/disable_obj.o -o $@ \
		$(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)

# a program with known zones for readelf and bpftrace
$(OUTPUT)/tests/probe_helper: tests/probe_helper.c usdt/prof.h $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LIBPROF_A) -lpthread

$(OUTPUT)/tests/test_probes: $(OUTPUT)/tests/probe_helper
$(patsubst %,$(OUTPUT)/tests/%,$(FASTPATH_TESTS)): tests/fastpath.h
$(OUTPUT)/tests/test_timing $(OUTPUT)/tests/test_report: TEST_LIBS += -lm
# its zones' slow enters, counted on their way to the runtime's
$(OUTPUT)/tests/test_sitecache: TEST_LIBS += -Wl,--wrap=__prof_enter_slow
$(OUTPUT)/tests/test_exitprobe: TEST_LIBS += -Wl,--wrap=__prof_exit_probe

# the compensated view: its busy-waits read the TSC, so not
# under a sanitizer or qemu-user
UNIT_TESTS += $(OUTPUT)/tests/test_compensate
$(OUTPUT)/tests/test_compensate: tests/fastpath.h

# prof.h with every compiler and language standard: builds and
# runs tests/matrix.c and matrix.cc against libprof.a (the installed one, alone: what an
# application links)
UNIT_TESTS += $(OUTPUT)/tests/test_compilers
$(OUTPUT)/tests/test_compilers: tests/test_compilers.c tests/matrix.c tests/matrix.cc \
		tests/lto_a.c tests/lto_b.c tests/sitesize.c tests/sitesize_lock.c usdt/zone_leave.h \
		tests/testutil.h usdt/prof.h $(LIBPROF_READ) $(LIBPROF_A) $(LIBPROF_PUB_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -DSRC_DIR='"$(CURDIR)"' \
		-DLIBPROF_A='"$(abspath $(LIBPROF_PUB_A))"' $(if $(filter cov,$(SAN)),-DLIBPROF_LIBS='"-lgcov"') \
		$< -o $@ $(ALL_LDFLAGS) \
		$(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)
