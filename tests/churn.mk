# SPDX-License-Identifier: MIT
# Thread churn: exited threads folded, their slabs reused.
UNIT_TESTS += $(OUTPUT)/tests/test_churn
SAN_TESTS += $(OUTPUT)/tests/test_churn
$(OUTPUT)/tests/test_churn: tests/fastpath.h
