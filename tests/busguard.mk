# SPDX-License-Identifier: MIT
# reading a segment truncated under the mapping (usdt/busguard.c): under
# ASan too, whose leak check sees a read that kept what it allocated
UNIT_TESTS += $(OUTPUT)/tests/test_busguard
SAN_TESTS += $(OUTPUT)/tests/test_busguard
