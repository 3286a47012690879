# SPDX-License-Identifier: MIT
# a library with zones loaded and unloaded while the program runs: the
# program exports libprof's ABI to it (-rdynamic), as a plugin host does
UNIT_TESTS += $(OUTPUT)/tests/test_dlopen
DL_PLUGINS := $(OUTPUT)/tests/dl_plugin_a.so $(OUTPUT)/tests/dl_plugin_b.so

$(OUTPUT)/tests/dl_plugin_%.so: tests/dl_plugin.c usdt/prof.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -DPLUG_B=$(if $(filter b,$*),1,0) $< -o $@

$(OUTPUT)/tests/test_dlopen: tests/test_dlopen.c tests/testutil.h $(DL_PLUGINS) $(LIBPROF_READ) \
		$(LIBPROF_A) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -DPLUGIN_DIR='"$(abspath $(OUTPUT)/tests)"' $< -o $@ \
		-rdynamic $(ALL_LDFLAGS) $(LIBPROF_READ) $(LIBPROF_A) $(TEST_LIBS) -ldl
