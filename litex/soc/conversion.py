#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Faster Verilog conversion, byte for byte Migen's: the grouping of combinational statements by target in
near-linear time, and lowering passes that keep the expressions they do not change.

Migen (and LiteX's Verilog printer) groups the combinational statements that share a target into one
`always @(*)` block with `group_by_targets`. Migen's version rescans every group for each statement whose
targets were seen before, which is quadratic: the sim SoC has about 20,000 combinational statements, and
the grouping took 45 of the 85 s its Verilog generation took. `group_by_targets` here keeps a target ->
group map instead and returns the same groups in the same order with the same statements, so the Verilog is
byte for byte what Migen prints (test_conversion checks it on the cores and the SoC's remote path).
`use_fast_grouping()` installs it where Migen and LiteX call it.

Before printing, Migen lowers the fragment three times (complex slices, basics, again after the specials):
each pass is a NodeTransformer that rebuilds every operator and slice of every expression, although it
changes only a few (a slice of an expression gets a proxy signal, an array a multiplexer). The link's CRC
trees are a million operators: profiled, the passes were 45 % of the sim SoC's generation. `use_fast_lowering()`
keeps an operator or a slice whose operands come back unchanged, so that only the changed paths are rebuilt
(the SoC's generation 29-34 s -> 17-21 s, the link's conversion 17-20 s -> 5-6 s). Migen's Signals
hash by their creation number (duid), and LiteX's printer iterates sets of them: a node kept still takes
the number its copy would have taken, so every later signal has the same number and the Verilog the same
order. The functions keep the shape of Migen's (no local variable), because a signal made inside a pass (a
slice's proxy) is named from the variables the calls on the stack store into.
`use_fast_conversion()` installs both.
"""

from migen.fhdl import tools as migen_tools
from migen.fhdl import verilog as migen_verilog
from migen.fhdl.structure import DUID, _Operator, _Slice
from migen.fhdl.tools import flat_iteration, list_targets
from migen.fhdl.visit import NodeTransformer

MIGEN_GROUP_BY_TARGETS = migen_tools.group_by_targets   # Migen's own (this module is imported before it is replaced)
MIGEN_LOWERING = (NodeTransformer.visit_Operator, NodeTransformer.visit_Slice)


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


def _take_a_number():
    """Counts a node as made: the number Migen's copy of it would have taken."""
    DUID._DUID__next_uid += 1


def _operator_unless_same(node, operands):
    for new, old in zip(operands, node.operands):
        if new is not old:
            return _Operator(node.op, operands)
    _take_a_number()
    return node


def _slice_unless_same(node, value):
    if value is not node.value:
        return _Slice(value, node.start, node.stop)
    _take_a_number()
    return node


def visit_operator(self, node):
    """NodeTransformer.visit_Operator that returns `node` itself when no operand changed."""
    return _operator_unless_same(node, [self.visit(o) for o in node.operands])


def visit_slice(self, node):
    """NodeTransformer.visit_Slice that returns `node` itself when its value did not change."""
    return _slice_unless_same(node, self.visit(node.value))


def use_fast_lowering(lowering=(visit_operator, visit_slice)):
    """Makes every NodeTransformer (Migen's lowering passes) visit operators and slices with `lowering`
    (idempotent; Migen's own is MIGEN_LOWERING)."""
    NodeTransformer.visit_Operator, NodeTransformer.visit_Slice = lowering


def use_fast_conversion():
    """The fast grouping and the fast lowering: the Verilog Migen and LiteX print, sooner."""
    use_fast_grouping()
    use_fast_lowering()
