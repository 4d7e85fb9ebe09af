"""The stage timer (litex/cores/common/stages.py): units that travel alone are timed to the cycle, segment by
segment, with gaps that vary from unit to unit; a unit that meets another on its way is not timed but counted
as spoiled; the next unit may set off in the cycle the last one arrives; `clear` starts over."""

import random

import pytest
from migen import Module, Signal

from monet.cores.common.stages import StageTimer
from monet.cores.tests.verilog_sim import run_simulation

POINT_COUNTS = (2, 5)


class Timers(Module):
    """One timer per point count in one model (one Verilator build). Point 1 of each is watched through two
    signals (valid and ready, say), the others through one."""
    def __init__(self):
        self.timers, self.inputs = {}, {}
        for n in POINT_COUNTS:
            timer = StageTimer([f"p{k}" for k in range(n)])
            setattr(self.submodules, f"timer{n}", timer)
            inputs = [[Signal(name=f"t{n}_p{k}_{i}") for i in range(2 if k == 1 else 1)] for k in range(n)]
            for k, signals in enumerate(inputs):
                timer.watch(f"p{k}", *signals)
            self.timers[n], self.inputs[n] = timer, inputs


DUTS = Timers()


def schedule(n, units, seed):
    """Events (cycle, point) of `units` units and what the timer should make of them: per segment the summed
    cycles of the lone units, how many were lone, how many spoiled. A unit's gaps between points vary from 1
    to 7 cycles; about one unit in four has a second setting off while it travels (neither timed, one spoiled
    sample); one in four of the others hands over to the next in its last cycle."""
    rng = random.Random(seed)
    events, sums, lone, spoiled = [], [0] * (n - 1), 0, 0
    cycle = 5
    for _ in range(units):
        gaps = [rng.randrange(1, 8) for _ in range(n - 1)]
        times = [cycle]
        for gap in gaps:
            times.append(times[-1] + gap)
        events += [(t, k) for k, t in enumerate(times)]
        # Any cycle while it travels, a middle point's included (both fire then: still a stray).
        between = list(range(times[0] + 1, times[-1]))
        if between and rng.random() < 0.25:          # a second unit sets off while the first travels
            # Its point 0 spoils the first's sample; its other points come after the first's last, when no
            # sample is open, and are ignored.
            second = [rng.choice(between)] + [times[-1] + k for k in range(1, n)]
            events += [(t, k) for k, t in enumerate(second)]
            spoiled += 1
            cycle = second[-1] + rng.randrange(1, 4)
        elif rng.random() < 1 / 3:                   # the next unit sets off as this one arrives
            sums = [s + g for s, g in zip(sums, gaps)]
            lone += 1
            cycle = times[-1]
        else:
            sums = [s + g for s, g in zip(sums, gaps)]
            lone += 1
            cycle = times[-1] + rng.randrange(1, 4)
    return sorted(events), sums, lone, spoiled


def drive(n, events, clear_at=None):
    timer, inputs = DUTS.timers[n], DUTS.inputs[n]
    result = {}
    by_cycle = {}
    for cycle, point in events:
        by_cycle.setdefault(cycle, set()).add(point)
    end = max(by_cycle) + 8

    def run():
        for cycle in range(end):
            for k, signals in enumerate(inputs):
                for s in signals:
                    yield s.eq(int(k in by_cycle.get(cycle, ())))
            yield timer.clear.eq(int(cycle == clear_at))
            yield
        result["sums"] = []
        for total in timer.sums:
            result["sums"].append((yield total))
        result["count"] = yield timer.count
        result["spoiled"] = yield timer.spoiled
    run_simulation(DUTS, [run()])
    return result


@pytest.mark.parametrize("n", POINT_COUNTS)
def test_lone_units_are_timed_to_the_cycle_and_others_spoiled(n):
    events, sums, lone, spoiled = schedule(n, 40, seed=n)
    assert spoiled > 0 and lone > 20
    result = drive(n, events)
    assert result == {"sums": sums, "count": lone, "spoiled": spoiled}


def test_a_point_without_its_second_signal_does_not_fire():
    """Point 1 watches two signals: with one of them low, the unit never passes it (the sample stays open)."""
    n = 5
    timer, inputs = DUTS.timers[n], DUTS.inputs[n]
    result = {}

    def run():
        for cycle in range(40):
            fired = {5: [0], 8: [1], 12: [2], 14: [3], 20: [4]}.get(cycle, [])
            for k, signals in enumerate(inputs):
                for i, s in enumerate(signals):
                    yield s.eq(int(k in fired and not (k == 1 and i == 1)))
            yield
        result["count"] = yield timer.count
        result["spoiled"] = yield timer.spoiled
    run_simulation(DUTS, [run()])
    # Points 2-4 come while the sample waits for point 1: it is spoiled, not timed.
    assert result == {"count": 0, "spoiled": 1}


def test_clear_drops_the_sums_and_an_open_sample():
    n = 5
    before, _, _, _ = schedule(n, 6, seed=7)
    start = max(t for t, _ in before) + 5
    cut_short = [(start + 2*k, k) for k in range(n)]   # open when the clear comes (it opens 2 cycles late)
    after, sums, lone, spoiled = schedule(n, 5, seed=8)
    result = drive(n, before + cut_short + [(t + start + 20, k) for t, k in after], clear_at=start + 3)
    assert result == {"sums": sums, "count": lone, "spoiled": spoiled}


def test_a_point_again_or_a_stray_at_the_hand_over_spoils_and_only_the_lone_unit_counts():
    n = 5
    replay = [(10, 0), (12, 1), (14, 2), (15, 1), (16, 3), (18, 4)]         # point 1 again (a replayed frame)
    crowded = [(30, 0), (31, 1), (32, 2), (33, 3), (34, 4), (34, 0), (34, 2),   # point 2 with the hand-over
               (35, 1), (36, 2), (37, 3), (38, 4)]
    # Two strays at once (a unit setting off, point 3 out of turn) while point 2 is awaited; then the rest in turn.
    pair = [(40, 0), (41, 1), (43, 0), (43, 3), (45, 2), (46, 3), (47, 4)]
    lone = [(50, 0), (52, 1), (53, 2), (57, 3), (60, 4)]
    result = drive(n, replay + crowded + pair + lone)
    assert result == {"sums": [2, 1, 4, 3], "count": 1, "spoiled": 3}


def test_the_counts_carry_across_bit_31():
    """count and spoiled are whole 32-bit words (the CSRs'): from 2**31 - 1, one sample of each."""
    timer, inputs = DUTS.timers[2], DUTS.inputs[2]
    result = {}

    def run():
        yield timer.count.eq(2**31 - 1)
        yield timer.spoiled.eq(2**31 - 1)
        events = {3: [0], 5: [1], 8: [0], 9: [0]}    # one unit timed, then a second spoiled by a third
        for cycle in range(16):
            for k, signals in enumerate(inputs):
                for signal in signals:
                    yield signal.eq(int(k in events.get(cycle, [])))
            yield
        result["count"] = yield timer.count
        result["spoiled"] = yield timer.spoiled
    run_simulation(DUTS, [run()])
    assert result == {"count": 2**31, "spoiled": 2**31}


@pytest.mark.parametrize("clear_at", range(72, 79))
def test_a_clear_as_a_sample_ends_leaves_nothing_counted(clear_at):
    """The sample's last point fires in cycle 74 and the timer sees it in 76: whether the clear comes before,
    with or after the sample's end reaches the sums, nothing of it stays."""
    result = drive(5, [(70, 0), (71, 1), (72, 2), (73, 3), (74, 4)], clear_at=clear_at)
    assert result == {"sums": [0, 0, 0, 0], "count": 0, "spoiled": 0}


def test_each_point_is_watched_once_and_every_point_is_watched():
    timer = StageTimer(["a", "b", "c"])
    timer.watch("a", Signal())
    with pytest.raises(AssertionError, match="watched twice"):
        timer.watch("a", Signal())
    with pytest.raises(AssertionError, match="need a decode"):
        timer.watch("b", Signal(2))
    with pytest.raises(AssertionError, match=r"never watched: \['b', 'c'\]"):
        timer.finalize()
