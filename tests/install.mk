# SPDX-License-Identifier: MIT
# make install into a temporary prefix, and a program built against it (issue 16)
UNIT_TESTS += $(OUTPUT)/tests/test_install
