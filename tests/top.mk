# SPDX-License-Identifier: MIT
# profctl top on a real terminal (tmux), issue 16
UNIT_TESTS += $(OUTPUT)/tests/test_top
