# SPDX-License-Identifier: MIT
# make fuzz: the reader's libFuzzer target and a seed corpus
FUZZ_DIR := .output/fuzz
FUZZ_CFLAGS := -std=gnu11 -g -O1 -Iusdt -Ibpf -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Itests
# the reader, by concern (usdt/reader_int.h)
FUZZ_READER := usdt/reader.c usdt/reader_check.c usdt/reader_hist.c usdt/reader_flat.c usdt/reader_image.c \
	usdt/reader_trace.c usdt/reader_annot.c usdt/reader_locks.c
FUZZ_READER_DEPS := $(FUZZ_READER) usdt/reader_int.h usdt/annot.h

.PHONY: fuzz
fuzz: $(FUZZ_DIR)/fuzz_reader $(FUZZ_DIR)/seeds/seed0 $(FUZZ_DIR)/fuzz_file \
	$(FUZZ_DIR)/file_seeds/seed0 $(FUZZ_DIR)/fuzz_json $(FUZZ_DIR)/json_seeds/tree_json

$(FUZZ_DIR)/fuzz_reader: tests/fuzz_reader.c tests/fuzz_render.h $(FUZZ_READER_DEPS) daemon/profd/profd_cursor.c usdt/report.c usdt/report_text.c usdt/json_writer.c usdt/json_writer.h usdt/fmt.c usdt/fmt.h usdt/slab.h usdt/snapshot.h usdt/figures.h
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(FUZZ_DIR)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) tests/fuzz_reader.c $(FUZZ_READER) daemon/profd/profd_cursor.c \
		usdt/report.c usdt/report_text.c usdt/report_locks.c usdt/json_writer.c usdt/fmt.c -o $@

# and a copy of the live segment: event rings and annotations
$(FUZZ_DIR)/seeds/seed0: .output/tests/mkseed
	$(Q)mkdir -p $(FUZZ_DIR)/seeds
	$(Q)PROF_MAX_NODES=16 PROF_MAX_THREADS=4 PROF_MAX_SITES=8 PROF_TRACE_EVENTS=16 $< $@ \
		$(FUZZ_DIR)/seeds/live0

# the saved-profile loader (usdt/proffile_load.c), seeded with a saved file
$(FUZZ_DIR)/fuzz_file: tests/fuzz_file.c tests/fuzz_render.h usdt/proffile.c usdt/proffile_load.c \
		usdt/proffile.h $(FUZZ_READER_DEPS) usdt/report.c usdt/report_text.c usdt/json_writer.c usdt/json_writer.h \
		usdt/fmt.c usdt/fmt.h usdt/slab.h usdt/snapshot.h usdt/figures.h
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(FUZZ_DIR)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) tests/fuzz_file.c usdt/proffile.c usdt/proffile_load.c $(FUZZ_READER) \
		usdt/report.c usdt/report_text.c usdt/report_locks.c usdt/json_writer.c usdt/fmt.c -o $@

$(FUZZ_DIR)/file_seeds/seed0: $(FUZZ_DIR)/seeds/seed0 .output/tests/mkfileseed
	$(Q)mkdir -p $(FUZZ_DIR)/file_seeds
	$(Q).output/tests/mkfileseed $< $@ $(FUZZ_DIR)/file_seeds/hostile

# the JSON report loader (daemon/profctl/report_load.c, jansson), seeded
# with the golden fixture's JSON reports, and the tree's again with hostile
# names and bad counts (tests/mkjsonseed.py)
$(FUZZ_DIR)/fuzz_json: tests/fuzz_json.c tests/fuzz_render.h daemon/profctl/report_load.c daemon/profctl/report_load.h \
		$(FUZZ_READER_DEPS) usdt/report.c usdt/report_text.c usdt/json_writer.c usdt/json_writer.h usdt/fmt.c usdt/fmt.h usdt/slab.h usdt/snapshot.h usdt/figures.h
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(FUZZ_DIR)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Idaemon/profctl tests/fuzz_json.c daemon/profctl/report_load.c \
		$(FUZZ_READER) usdt/report.c usdt/report_text.c usdt/report_locks.c usdt/json_writer.c usdt/fmt.c -o $@ -ljansson

$(FUZZ_DIR)/json_seeds/tree_json: tests/golden/tree_json tests/golden/threads_json tests/mkjsonseed.py
	$(Q)mkdir -p $(FUZZ_DIR)/json_seeds
	$(Q)cp tests/golden/tree_json tests/golden/threads_json $(FUZZ_DIR)/json_seeds/
	$(Q)python3 tests/mkjsonseed.py tests/golden/tree_json $(FUZZ_DIR)/json_seeds

.output/tests/mkfileseed: tests/mkfileseed.c usdt/proffile.h .output/libprofread.a .output/libprof.a \
		| .output/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests $< -o $@ .output/libprofread.a .output/libprof.a -lpthread

.output/tests/mkseed: tests/mkseed.c tests/testutil.h .output/libprofread.a .output/libprof.a \
		| .output/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests $< -o $@ .output/libprofread.a .output/libprof.a -lpthread

# the reader's own unit tests, beside its fuzz target (test_segflat), and
# profd's sampling cursor on its own (test_cursor); the cursor is profd's,
# not libprof's
$(OUTPUT)/tests/test_segflat $(OUTPUT)/tests/test_cursor: $(OUTPUT)/tests/%: tests/%.c \
		daemon/profd/profd_cursor.c usdt/reader_int.h tests/testutil.h tests/snap_fixture.h \
		tests/nest_work.h $(LIBPROF_READ) $(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -Itests $< daemon/profd/profd_cursor.c \
		-o $@ $(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS)
UNIT_TESTS += $(OUTPUT)/tests/test_segflat $(OUTPUT)/tests/test_cursor
RUNTIME_TESTS += $(OUTPUT)/tests/test_segflat
SAN_TESTS += $(OUTPUT)/tests/test_segflat $(OUTPUT)/tests/test_cursor
