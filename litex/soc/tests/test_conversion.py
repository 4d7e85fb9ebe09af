"""Fast conversion (litex/soc/conversion.py): grouping of combinational statements gives the same groups, in
the same order, as Migen's own group_by_targets, on random statements and on a real path; lowering keeps the
nodes it does not change and takes the numbers their copies would have; and the Verilog is unchanged."""

import random

import pytest
from litex.gen.fhdl import verilog as litex_verilog
from migen import Array, Cat, If, Module, Signal
from migen.fhdl import tools as migen_tools
from migen.fhdl import verilog
from migen.fhdl.structure import DUID
from migen.fhdl.tools import _ComplexSliceLowerer
from migen.fhdl.visit import NodeTransformer

from monet.soc.conversion import MIGEN_GROUP_BY_TARGETS as MIGEN_GROUPING, MIGEN_LOWERING, group_by_targets, \
    use_fast_conversion, use_fast_grouping, use_fast_lowering, visit_operator, visit_slice
from monet.soc.hmc import HMCMemoryPath


def same_groups(a, b):
    return len(a) == len(b) and all(ta == tb and len(sa) == len(sb) and all(x is y for x, y in zip(sa, sb))
                                    for (ta, sa), (tb, sb) in zip(a, b))


@pytest.mark.parametrize("seed", range(20))
def test_random_statements_group_as_migen_groups_them(seed):
    rng = random.Random(seed)
    signals = [Signal(4, name=f"s{i}") for i in range(rng.randint(3, 40))]
    statements = []
    for _ in range(rng.randint(1, 120)):
        targets = rng.sample(signals, rng.randint(1, 3))
        if len(targets) == 1:
            statements.append(targets[0].eq(rng.randrange(16)))
        else:     # one statement, several targets: it joins their groups
            statements.append(If(signals[0], *[t.eq(1) for t in targets]))
    assert same_groups(group_by_targets(statements), MIGEN_GROUPING(statements))


def migens_verilog(make):
    """The Verilog of `make()` converted by Migen's own grouping and lowering."""
    try:
        use_fast_grouping(MIGEN_GROUPING)
        use_fast_lowering(MIGEN_LOWERING)
        return str(verilog.convert(make(), name="top"))
    finally:
        use_fast_conversion()


def test_a_real_path_converts_to_the_same_verilog():
    comb = HMCMemoryPath(storage_bytes=4096).get_fragment().comb
    assert same_groups(group_by_targets(comb), MIGEN_GROUPING(comb))
    before = migens_verilog(lambda: HMCMemoryPath(storage_bytes=4096))
    use_fast_conversion()
    # Installed where the printers call it (the comparison alone would pass with Migen's on both sides).
    assert all(module.group_by_targets is group_by_targets for module in (migen_tools, verilog, litex_verilog))
    assert str(verilog.convert(HMCMemoryPath(storage_bytes=4096), name="top")) == before


class Lowered(Module):
    """What each lowering pass changes: slices of expressions (read and written), an array read and written,
    a part-select, beside operator trees that no pass changes."""
    def __init__(self):
        a, b, sel = Signal(8), Signal(8), Signal(2)
        self.out, self.acc = Signal(8), Signal(8)
        regs = Array(Signal(8, name=f"reg{i}") for i in range(4))
        self.comb += self.out.eq(((a ^ b)[1:5] + (a & b)) | Cat(a[0:4], b.part(sel, 4)) | regs[sel])
        self.sync += [self.acc.eq((self.acc + a)[0:8] ^ ((a | b) & ~a)), regs[sel].eq(a), Cat(a, b)[4:12].eq(b)]


def test_a_path_with_every_kind_of_lowering_converts_to_the_same_verilog():
    before = migens_verilog(Lowered)
    use_fast_conversion()
    assert str(verilog.convert(Lowered(), name="top")) == before


def test_lowering_keeps_what_it_does_not_change_and_takes_the_numbers_of_its_copies():
    a, b = Signal(8), Signal(8)
    untouched = (a & b) ^ a[0:8]
    expr = (a ^ b)[1:5] + untouched       # a slice of an expression: the pass gives it a proxy signal
    taken = {}
    try:
        for name, lowering in (("migen", MIGEN_LOWERING), ("fast", (visit_operator, visit_slice))):
            use_fast_lowering(lowering)
            start = DUID.get_max_duid()
            lowered = _ComplexSliceLowerer().visit(expr)
            taken[name] = DUID.get_max_duid() - start
    finally:
        use_fast_lowering()
    assert taken["fast"] == taken["migen"] > 0
    assert lowered is not expr and lowered.operands[1] is untouched     # only the changed path is new
    assert NodeTransformer().visit(untouched) is untouched
