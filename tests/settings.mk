# SPDX-License-Identifier: MIT
# The PROF_* settings and the PROF_LOG_INTERVAL lines.  Not under
# the sanitizers: its child forks with the profd client's thread running.
UNIT_TESTS += $(OUTPUT)/tests/test_settings
# percentiles against the exact avg and max
UNIT_TESTS += $(OUTPUT)/tests/test_quantile
SAN_TESTS += $(OUTPUT)/tests/test_quantile
# C++ overloads and lambdas of one name, told apart by file:line
UNIT_TESTS += $(OUTPUT)/tests/test_overload
SAN_TESTS += $(OUTPUT)/tests/test_overload
# what a window does to each figure, on snapshots built by hand
UNIT_TESTS += $(OUTPUT)/tests/test_window
SAN_TESTS += $(OUTPUT)/tests/test_window
$(OUTPUT)/tests/test_window: tests/snap_fixture.h
