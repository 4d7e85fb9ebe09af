#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The error a board build refuses a setting with (Migen-free: the board build's driver and the boards' shared
checks in cards.py both raise it, and the command line catches it)."""


class BoardError(ValueError):
    """A board setting out of range or a missing tool: the message names it and what is accepted."""
