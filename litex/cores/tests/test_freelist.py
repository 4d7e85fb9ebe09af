"""The free lists of ids (litex/cores/common/freelist.py): every id is free after reset and handed out once;
ids given back come out again in the order they came back, at the earliest the next cycle; a pop and a push
in one cycle keep the count; nothing is handed out while none is free. The paired list hands out and takes
back two a cycle and says when one and when two are free, exactly. A list with a floor says when more ids than
the floor are free, exactly, whatever pops and pushes make of its count."""

import random

import pytest
from migen import Module

from monet.cores.common.freelist import FreeList, PairedFreeList
from monet.cores.tests.verilog_sim import run_simulation

SIZES = (4, 16, 128)
PAIRED_SIZES = (4, 32)
FLOORED = 16


class Lists(Module):
    """One free list of each size in one model (one Verilator build for every test); each test drives its own."""
    def __init__(self):
        self.lists = {n: FreeList(n) for n in SIZES}
        self.paired = {n: PairedFreeList(n) for n in PAIRED_SIZES}
        self.submodules.floored = FreeList(FLOORED, with_floor=True)
        for n, free_list in self.lists.items():
            setattr(self.submodules, f"list{n}", free_list)
        for n, free_list in self.paired.items():
            setattr(self.submodules, f"paired{n}", free_list)


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


@pytest.mark.parametrize("n", PAIRED_SIZES)
def test_two_ids_a_cycle_out_and_back_and_the_free_count_is_exact(n):
    dut = LISTS.paired[n]
    rng = random.Random(n + 1)
    seen = {"pairs": 0, "two_back": 0, "empty": 0}

    def bench():
        out, free = [], n     # ids out; how many are free
        for cycle in range(8 * n):
            want = rng.choice((0, 1, 2, 2)) if cycle < 3 * n else rng.choice((0, 1))
            pops = min(want, free)
            backs = min(rng.choice((0, 1, 2)), len(out))
            back = [out.pop(rng.randrange(len(out))) for _ in range(backs)]
            yield dut.pop_first.eq(pops >= 1)
            yield dut.pop_second.eq(pops == 2)
            yield dut.push_first.eq(backs >= 1)
            yield dut.push_second.eq(backs == 2)
            yield dut.push_first_id.eq(back[0] if backs else 0)
            yield dut.push_second_id.eq(back[1] if backs == 2 else 0)
            yield
            available, two = (yield dut.available), (yield dut.two_available)
            assert (available, two) == (free >= 1, free >= 2), f"cycle {cycle}: {free} free"
            ids = [(yield dut.first), (yield dut.second)][:pops]
            assert len(set(ids)) == pops and not set(ids) & set(out) and all(0 <= i < n for i in ids), \
                f"cycle {cycle}: handed out {ids} while {sorted(out)} are out"
            out += ids
            free += backs - pops
            seen["pairs"] += pops == 2
            seen["two_back"] += backs == 2
            seen["empty"] += free == 0
        for strobe in (dut.pop_first, dut.pop_second, dut.push_first, dut.push_second):
            yield strobe.eq(0)
        yield

    run_simulation(LISTS, [bench()])
    assert seen["pairs"] and seen["two_back"] and seen["empty"]


def test_room_says_more_ids_than_the_floor_are_free():
    """Random pops and pushes (one, the other, both or neither) under floors of 0, 5, 15 and 16: `room` is
    exactly whether more ids than the floor are free, from the cycle after the floor is set; with floor 16
    never, with floor 0 whenever one is free. The run pops only where there is room, so that the ids out
    stop at 16 - floor."""
    dut = LISTS.floored
    rng = random.Random(7)
    seen = {"room": 0, "full_stop": 0}

    def bench():
        out, free = [], FLOORED
        for floor in (0, 5, 15, 16, 0):
            yield dut.floor.eq(floor)
            yield dut.pop.eq(0)
            yield dut.push.eq(0)
            yield
            for cycle in range(4 * FLOORED):
                pop = free > floor and rng.random() < 0.7
                push = bool(out) and rng.random() < 0.3
                back = out.pop(rng.randrange(len(out))) if push else 0
                yield dut.pop.eq(int(pop))
                yield dut.push.eq(int(push))
                yield dut.push_id.eq(back)
                yield
                room = yield dut.room    # this cycle's view, before the edge that takes the pop and the push
                assert room == (free > floor), f"floor {floor}, cycle {cycle}: room {room} with {free} free"
                seen["room"] += room
                seen["full_stop"] += not room and free > 0
                if pop:
                    out.append((yield dut.head))
                free += int(push) - int(pop)
            assert floor == 16 or FLOORED - free >= FLOORED - floor - 1   # the pops reached the floor
        yield dut.pop.eq(0)
        yield dut.push.eq(0)
        yield

    run_simulation(LISTS, [bench()])
    assert seen["room"] and seen["full_stop"]
