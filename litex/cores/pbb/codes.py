#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The benchmark block's codes as plain Python, without Migen: its modes (the `mode` CSR) and address patterns
(the `pattern` CSR). The firmware takes them as soc.h constants (PBB_MODE_*, PBB_PATTERN_*)."""

MODES = {"read": 0, "write": 1, "mixed": 2}
PATTERNS = {"seq": 0, "stride": 1, "random": 2}
MODE_READ, MODE_WRITE, MODE_MIXED = MODES["read"], MODES["write"], MODES["mixed"]
PATTERN_SEQ, PATTERN_STRIDE, PATTERN_RANDOM = PATTERNS["seq"], PATTERNS["stride"], PATTERNS["random"]
