#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A synchronous restart for a module that must start afresh without a reset of its clock domain."""

from migen import *
from migen.fhdl.decorators import ModuleTransformer
from migen.fhdl.tools import list_targets


class RestartInserter(ModuleTransformer):
    """Makes `restart` return every register of a module (and of its submodules) to its reset value in the
    cycle it is high, except the signals `kept()` returns (counters that outlive a restart: what a board's
    software reads must not vanish because a link met a new peer). Memories keep their contents; whatever
    says which of their words are valid is a register, and restarts. No cycle of latency: the restart is
    the last assignment of each register's cycle, as Migen's ResetInserter's."""
    def __init__(self, restart, kept=lambda: ()):
        self.restart = restart
        self.kept    = kept

    def transform_fragment(self, i, f):
        kept = set(self.kept())
        for domain, statements in f.sync.items():
            targets = sorted((t for t in list_targets(statements) if t not in kept and not t.reset_less),
                             key=lambda t: t.duid)
            if targets:
                f.sync[domain] = statements + [If(self.restart, *[t.eq(t.reset) for t in targets])]
