# SPDX-License-Identifier: MIT
# profctl top on a real terminal (tmux)
UNIT_TESTS += $(OUTPUT)/tests/test_top
