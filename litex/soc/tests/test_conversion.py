"""Fast grouping of combinational statements (litex/soc/conversion.py): the same groups, in the same order,
as Migen's own group_by_targets, on random statements and on a real path; and the Verilog is unchanged."""

import random

import pytest
from migen import If, Signal
from migen.fhdl import verilog

from monet.soc.conversion import MIGEN_GROUP_BY_TARGETS as MIGEN_GROUPING, group_by_targets, use_fast_grouping
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


def test_a_real_path_converts_to_the_same_verilog():
    comb = HMCMemoryPath(storage_bytes=4096).get_fragment().comb
    assert same_groups(group_by_targets(comb), MIGEN_GROUPING(comb))
    try:
        use_fast_grouping(MIGEN_GROUPING)
        before = str(verilog.convert(HMCMemoryPath(storage_bytes=4096), name="top"))
    finally:
        use_fast_grouping()
    after = str(verilog.convert(HMCMemoryPath(storage_bytes=4096), name="top"))
    assert after == before
