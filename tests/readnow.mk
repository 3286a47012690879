# SPDX-License-Identifier: MIT
# a live read measures open calls after its copy (a fault in the middle of
# it ends a child's call).  Not under the sanitizers: it handles SIGSEGV.
UNIT_TESTS += $(OUTPUT)/tests/test_readnow
# the flat pass's (top's) on-CPU figures are report's, open calls too
UNIT_TESTS += $(OUTPUT)/tests/test_flat_oncpu
SAN_TESTS += $(OUTPUT)/tests/test_flat_oncpu
