# SPDX-License-Identifier: MIT
# profctl's tests: golden views of a fixed snapshot, live programs,
# and the html report in headless Chromium.
include daemon/profctl/profctl.mk

# how a profctl test links (these below, and tests/annot.mk's): its source
# and any objects it names, with profctl's library
define link_profctl_test
$(call msg,CC,$@)
$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< $(filter %.o,$^) -o $@ $(ALL_LDFLAGS) \
	$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS) $(PROFCTL_LIBS)
endef

PROFCTL_TESTS := test_profctl test_profctl_cli test_profctl_live test_profctl_html test_profctl_save \
	test_profctl_diff test_profctl_pprof test_profctl_serve test_profctl_trace test_annot \
	test_profctl_opts
UNIT_TESTS += $(patsubst %,$(OUTPUT)/tests/%,$(PROFCTL_TESTS))
# the golden views read lazily, thread after thread, and the live
# tests read segments that change and shrink under them: under the
# sanitizers too
SAN_TESTS += $(OUTPUT)/tests/test_profctl $(OUTPUT)/tests/test_profctl_cli $(OUTPUT)/tests/test_profctl_live \
	$(OUTPUT)/tests/test_profctl_save $(OUTPUT)/tests/test_profctl_diff \
	$(OUTPUT)/tests/test_profctl_pprof $(OUTPUT)/tests/test_profctl_trace
TEST_EXTRA += $(PROFCTL)

$(patsubst %,$(OUTPUT)/tests/%,$(PROFCTL_TESTS)): $(OUTPUT)/tests/%: tests/%.c \
		tests/profctl_fixture.h tests/profctl_run.h tests/profctl_child.h tests/testutil.h tests/prom.h \
		$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(link_profctl_test)

# serve's tests share their HTTP client
$(OUTPUT)/tests/test_profctl_serve: tests/web_util.h

# C++ PROF_FUNC sites for `profctl zones` (tests/fastpath.mk)
$(OUTPUT)/tests/test_profctl: $(OUTPUT)/tests/zones_cxx.o tests/snap_fixture.h

# through a real profd (root, BPF): save keeps the kernel columns, serve
# shows a process to its owner and not to another user
ROOT_TESTS += $(OUTPUT)/tests/test_profctl_profd
$(OUTPUT)/tests/test_profctl_profd: tests/test_profctl_profd.c tests/testutil.h tests/profd_private.h tests/web_util.h $(PROFCTL_LIB) \
		$(LIBPROF_READ) $(LIBPROF_A) $(PROFD) | $(OUTPUT)/tests
	$(link_profctl_test)

# named locks under a real profd (root, BPF): a wait that slept says so
ROOT_TESTS += $(OUTPUT)/tests/test_annot_profd
$(OUTPUT)/tests/test_annot_profd: tests/test_annot_profd.c tests/testutil.h tests/profd_private.h \
		$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) $(PROFD) | $(OUTPUT)/tests
	$(link_profctl_test)

# every view of a real threaded program obeys what any profile obeys:
# since start, since a reset, --last, a diff of two saves, top's interval,
# a saved file in every format (text, JSON, CSV, folded, pprof read by
# go tool pprof, diff, html), and serve (scraped by the real Prometheus too)
# (root, BPF: calls with kernel facts)
ROOT_TESTS += $(OUTPUT)/tests/test_oracle
$(OUTPUT)/tests/test_oracle: tests/test_oracle.c tests/oracle_fixture.h tests/testutil.h tests/profd_private.h tests/prom.h $(PROFCTL_LIB) \
		$(LIBPROF_READ) $(LIBPROF_A) $(PROFD) | $(OUTPUT)/tests
	$(link_profctl_test)

# serve's live page in a real browser (headless Chromium through Selenium,
# tests/test_live.py), against live_worker, a program of a few threads that
# a signal stops and starts; bench/live_bench.sh runs it with 64
UNIT_TESTS += $(OUTPUT)/tests/test_profctl_web
TEST_EXTRA += $(OUTPUT)/tests/live_worker
$(OUTPUT)/tests/live_worker: tests/live_worker.c usdt/prof.h $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LIBPROF_A) -lpthread

# and through a real profd (root, BPF): profd's history, the kernel
# columns, the scheduler lanes
ROOT_TESTS += $(OUTPUT)/tests/test_profctl_web_profd
$(OUTPUT)/tests/test_profctl_web_profd: tests/profd_private.h $(PROFD)
$(OUTPUT)/tests/test_profctl_web $(OUTPUT)/tests/test_profctl_web_profd: $(OUTPUT)/tests/%: tests/%.c \
		tests/web_util.h tests/testutil.h $(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) \
		$(OUTPUT)/tests/live_worker $(PROFCTL) | $(OUTPUT)/tests
	$(link_profctl_test)

# what profctl says when a user's ask cannot be done: -o outputs refused or
# failing, save without a file, --input too big, status without profd or
# with one that refuses (paths make coverage showed no test took)
UNIT_TESTS += $(OUTPUT)/tests/test_cover_profctl
$(OUTPUT)/tests/test_cover_profctl: tests/test_cover_profctl.c tests/testutil.h tests/profd_private.h \
		tests/profctl_fixture.h tests/profctl_run.h \
		$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(link_profctl_test)

# profctl's client against a profd that answers wrong (client.c: paths make
# coverage showed no test took)
UNIT_TESTS += $(OUTPUT)/tests/test_cover_client
$(OUTPUT)/tests/test_cover_client: tests/test_cover_client.c tests/testutil.h $(PROFD_CLIENT_OBJ) \
		$(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< -o $@ $(ALL_LDFLAGS) $(PROFD_CLIENT_OBJ) \
		$(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)

# the JSON report read back, made wrong one field at a time (report_load.c:
# paths make coverage showed no test took)
UNIT_TESTS += $(OUTPUT)/tests/test_cover_json
SAN_TESTS += $(OUTPUT)/tests/test_cover_json
$(OUTPUT)/tests/test_cover_json: tests/test_cover_json.c tests/testutil.h tests/golden/tree_json \
		$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(link_profctl_test)

# profctl when an allocation fails, each in turn (tests/fault_shim.c)
UNIT_TESTS += $(OUTPUT)/tests/test_fault_profctl
$(OUTPUT)/tests/test_fault_profctl: tests/test_fault_profctl.c tests/testutil.h tests/profd_private.h \
		tests/profctl_fixture.h tests/profctl_run.h $(OUTPUT)/tests/libfault.so $(PROFCTL) \
		$(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(link_profctl_test)
