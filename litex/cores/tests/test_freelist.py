"""The free list of ids (litex/cores/common/freelist.py): every id is free after reset and handed out once;
ids given back come out again in the order they came back, at the earliest the next cycle; a pop and a push
in one cycle keep the count; nothing is handed out while none is free."""

import random

import pytest
from migen import Module

from monet.cores.common.freelist import FreeList
from monet.cores.tests.verilog_sim import run_simulation

SIZES = (4, 16, 128)


class Lists(Module):
    """One free list of each size in one model (one Verilator build for every test); each test drives its own."""
    def __init__(self):
        self.lists = {n: FreeList(n) for n in SIZES}
        for n, free_list in self.lists.items():
            setattr(self.submodules, f"list{n}", free_list)


LISTS = Lists()


@pytest.mark.parametrize("n", SIZES)
def test_ids_come_out_once_each_and_come_back_in_the_order_given(n):
    dut = LISTS.lists[n]
    rng = random.Random(n)
    seen = {"out": [], "empty_cycles": 0, "pushed": []}

    def bench():
        out = []               # ids handed out and not back yet
        free = list(range(n))  # the model: ids in the order they will come out
        for cycle in range(6 * n):
            pop = bool(free) and rng.random() < 0.6
            push = bool(out) and rng.random() < (0.1 if cycle < 3 * n else 0.7)
            back = out.pop(rng.randrange(len(out))) if push else 0
            yield dut.pop.eq(int(pop))
            yield dut.push.eq(int(push))
            yield dut.push_id.eq(back)
            yield
            # This cycle's view, before the edge that takes the pop and the push.
            available, head = (yield dut.available), (yield dut.head)
            assert available == (len(free) > 0), f"cycle {cycle}: available {available} with {len(free)} free"
            if not available:
                seen["empty_cycles"] += 1
            if pop:
                assert head == free[0], f"cycle {cycle}: head {head}, the model's {free[0]}"
                seen["out"].append(head)
                out.append(free.pop(0))
            if push:      # an id given back now is the last free one after the edge
                free.append(back)
                seen["pushed"].append(back)
        yield dut.pop.eq(0)
        yield dut.push.eq(0)
        yield

    run_simulation(LISTS, [bench()])
    assert sorted(seen["out"][:n]) == list(range(n))      # every id once before any comes again
    assert seen["pushed"] and seen["empty_cycles"] > 0     # the run gave ids back and ran out of them
