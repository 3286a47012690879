# SPDX-License-Identifier: MIT
# make install into a temporary prefix, and a program built against it
UNIT_TESTS += $(OUTPUT)/tests/test_install
