#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Faster Verilog conversion: Migen's grouping of combinational statements by target, in near-linear time.

Migen (and LiteX's Verilog printer) groups the combinational statements that share a target into one
`always @(*)` block with `group_by_targets`. Migen's version rescans every group for each statement whose
targets were seen before, which is quadratic: the sim SoC has about 20,000 combinational statements, and
the grouping took 45 of the 85 s its Verilog generation took. `group_by_targets` here keeps a target ->
group map instead and returns the same groups in the same order with the same statements, so the Verilog is
byte for byte what Migen prints (test_conversion checks it on the cores and the SoC's remote path).
`use_fast_grouping()` installs it where Migen and LiteX call it.
"""

from migen.fhdl import tools as migen_tools
from migen.fhdl import verilog as migen_verilog
from migen.fhdl.tools import flat_iteration, list_targets

MIGEN_GROUP_BY_TARGETS = migen_tools.group_by_targets   # Migen's own (this module is imported before it is replaced)


def group_by_targets(statements):
    """Migen's `group_by_targets`: [(targets, statements)] where statements sharing a target (directly or
    through others) are one group. Groups are in the order of the last statement that joined each, their
    statements in the order given."""
    owner  = {}       # target -> id of its group
    groups = {}       # id -> [targets, [(order, statement)], the order of the last statement that joined]
    for order, statement in enumerate(flat_iteration(statements)):
        targets = set(list_targets(statement))
        joined = {owner[t] for t in targets if t in owner}
        if joined:
            # Merge into the largest group, so that each target is moved to another group O(log n) times.
            base = max(joined, key=lambda gid: len(groups[gid][0]))
            group = groups[base]
            for gid in joined - {base}:
                other_targets, other_statements, _ = groups.pop(gid)
                group[0] |= other_targets
                group[1] += other_statements
                for t in other_targets:
                    owner[t] = base
        else:
            base = order
            group = groups[base] = [set(), [], order]
        group[0] |= targets
        group[1].append((order, statement))
        group[2] = order
        for t in targets:
            owner[t] = base
    return [(targets, [s for _, s in sorted(members, key=lambda m: m[0])])
            for targets, members, _ in sorted(groups.values(), key=lambda g: g[2])]


def use_fast_grouping(grouping=group_by_targets):
    """Makes Migen's and LiteX's Verilog printers group with `grouping` (idempotent; Migen's own is
    MIGEN_GROUP_BY_TARGETS)."""
    from litex.gen.fhdl import verilog as litex_verilog
    for module in (migen_tools, migen_verilog, litex_verilog):
        module.group_by_targets = grouping
