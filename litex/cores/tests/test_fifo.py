"""The FIFO that an element skips while nothing waits in it (litex/cores/common/fifo.py), the FIFO whose level
is moved by strobes (LevelFIFO: LiteX's SyncFIFO's behaviour, its level exact every cycle) and the delay line
built on it (litex/cores/common/delay.py, with_bypass): every element comes out once, in order, whatever the
producer and consumer do; an element that finds the FIFO empty comes out in its own cycle (unregistered) or
the next (registered), one behind others as late as the FIFO makes it; `sink.ready` is the FIFO's room alone.
The delay line delays each element by exactly its programmed delay, going around itself at delay 0 (with_bypass),
max(delay, 1) without."""

import random

import pytest
from migen import Module

from monet.cores.common.delay import DelayLine
from monet.cores.common.fifo import BypassFIFO, LevelFIFO
from monet.cores.tests.verilog_sim import run_simulation

LAYOUT = [("data", 16)]
DEPTH = 4
MODES = ("unregistered", "registered")
DELAYS = (0, 1, 3)


class FIFOs(Module):
    """One FIFO of each kind and one delay line in one model (one Verilator build); each test drives its own."""
    def __init__(self):
        self.fifos = {mode: BypassFIFO(LAYOUT, DEPTH, registered=mode == "registered") for mode in MODES}
        self.submodules.unregistered = self.fifos["unregistered"]
        self.submodules.registered = self.fifos["registered"]
        self.fifos["level"] = self.submodules.level = LevelFIFO(LAYOUT, DEPTH)
        self.submodules.line = self.line = DelayLine(LAYOUT, 8, with_bypass=True)
        self.submodules.plain_line = self.plain_line = DelayLine(LAYOUT, 8)


DUTS = FIFOs()


def drive(dut, offers, takes, cycles, delay=None):
    """Offers and takes at random per cycle (probabilities `offers` and `takes`); returns, for each element,
    (value, cycle offered and taken, cycle it came out), and the cycles where `sink.ready` was low."""
    rng = random.Random(hash((offers, takes, delay)) & 0xFFFF)
    log = {"in": [], "out": [], "full": [], "level": []}

    def run():
        if delay is not None:
            yield dut.delay.eq(delay)
        value = 1
        for cycle in range(cycles):
            offer = cycle < cycles - 40 and rng.random() < offers
            take = rng.random() < takes
            yield dut.sink.valid.eq(int(offer))
            yield dut.sink.data.eq(value)
            yield dut.source.ready.eq(int(take))
            yield
            # This cycle's view, before the edge that takes what is offered.
            if hasattr(dut, "level"):
                log["level"].append((yield dut.level))
            if offer and (yield dut.sink.ready):
                log["in"].append((value, cycle))
                value += 1
            if offer and not (yield dut.sink.ready):
                log["full"].append(cycle)
            if take and (yield dut.source.valid):
                log["out"].append(((yield dut.source.data), cycle))
        yield dut.sink.valid.eq(0)
        yield

    run_simulation(DUTS, run())
    return log


@pytest.mark.parametrize("mode", MODES + ("level",))
@pytest.mark.parametrize("offers,takes", [(0.3, 1.0), (0.9, 0.5), (0.7, 0.8)])
def test_every_element_comes_out_once_in_order(mode, offers, takes):
    log = drive(DUTS.fifos[mode], offers, takes, 300)
    assert [v for v, _ in log["out"]] == [v for v, _ in log["in"]]
    assert all(c_out >= c_in for (_, c_in), (_, c_out) in zip(log["in"], log["out"]))
    if offers > takes:
        assert log["full"], "the run never filled the FIFO"


@pytest.mark.parametrize("offers,takes", [(0.9, 0.5), (0.5, 0.9), (1.0, 1.0)])
def test_the_level_fifo_counts_what_it_holds_and_is_full_at_its_depth(offers, takes):
    """LevelFIFO: its level is what went in less what came out, every cycle; it refuses exactly when it holds
    its depth; an element is out the cycle after it went in (as LiteX's SyncFIFO)."""
    log = drive(DUTS.fifos["level"], offers, takes, 300)
    assert [v for v, _ in log["out"]] == [v for v, _ in log["in"]]
    held = [sum(c < cycle for _, c in log["in"]) - sum(c < cycle for _, c in log["out"]) for cycle in range(300)]
    assert log["level"] == held
    assert all(held[c] == DEPTH for c in log["full"])     # refused only when full
    if offers > takes:
        assert log["full"], "the run never filled the FIFO"
    assert all(c_out > c_in for (_, c_in), (_, c_out) in zip(log["in"], log["out"]))
    if offers == takes == 1.0:
        assert [c_out - c_in for (_, c_in), (_, c_out) in zip(log["in"], log["out"])] == [1] * len(log["in"])


@pytest.mark.parametrize("mode,latency", [("unregistered", 0), ("registered", 1)])
def test_an_element_that_finds_the_fifo_empty_skips_it(mode, latency):
    """Sparse elements, a consumer always ready: each comes out `latency` cycles after it is offered."""
    log = drive(DUTS.fifos[mode], 0.2, 1.0, 200)
    assert len(log["in"]) > 20
    assert [c_out - c_in for (_, c_in), (_, c_out) in zip(log["in"], log["out"])] == [latency] * len(log["in"])


@pytest.mark.parametrize("mode,latency", [("unregistered", 0), ("registered", 1)])
def test_back_to_back_elements_keep_one_a_cycle(mode, latency):
    """An element every cycle, a consumer always ready: one comes out every cycle, each `latency` after it was
    offered (the registered FIFO's register takes the next element as its own leaves)."""
    log = drive(DUTS.fifos[mode], 1.0, 1.0, 120)
    assert [c_out - c_in for (_, c_in), (_, c_out) in zip(log["in"], log["out"])] == [latency] * len(log["in"])


@pytest.mark.parametrize("mode", MODES)
def test_elements_that_waited_come_out_one_a_cycle(mode):
    """Three elements offered while the consumer waits, then taken: they come out in three cycles in a row."""
    dut = DUTS.fifos[mode]
    seen = []

    def run():
        yield dut.source.ready.eq(0)
        for value in (7, 8, 9):
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(value)
            yield
        yield dut.sink.valid.eq(0)
        for _ in range(3):
            yield
        yield dut.source.ready.eq(1)
        for cycle in range(6):
            yield
            if (yield dut.source.valid):
                seen.append(((yield dut.source.data), cycle))

    run_simulation(DUTS, run())
    assert [v for v, _ in seen] == [7, 8, 9]
    assert [c for _, c in seen] == [seen[0][1], seen[0][1] + 1, seen[0][1] + 2]


@pytest.mark.parametrize("delay", DELAYS)
def test_the_delay_line_delays_each_element_by_its_delay(delay):
    """Sparse elements, a consumer always ready: each comes out exactly `delay` cycles after it went in (at 0,
    around the line in its own cycle)."""
    log = drive(DUTS.line, 0.2, 1.0, 200, delay=delay)
    assert len(log["in"]) > 20
    assert [c_out - c_in for (_, c_in), (_, c_out) in zip(log["in"], log["out"])] == [delay] * len(log["in"])


@pytest.mark.parametrize("delay", DELAYS)
def test_without_the_bypass_the_line_costs_a_cycle_at_delay_0(delay):
    """The delay line as the channel and the HMC's channel have it: max(delay, 1) cycles."""
    log = drive(DUTS.plain_line, 0.2, 1.0, 200, delay=delay)
    assert len(log["in"]) > 20
    assert [c_out - c_in for (_, c_in), (_, c_out) in zip(log["in"], log["out"])] == [max(delay, 1)] * len(log["in"])


@pytest.mark.parametrize("delay", DELAYS)
def test_the_delay_line_keeps_every_element_under_back_pressure(delay):
    log = drive(DUTS.line, 0.7, 0.6, 300, delay=delay)
    assert [v for v, _ in log["out"]] == [v for v, _ in log["in"]]
    assert all(c_out - c_in >= delay for (_, c_in), (_, c_out) in zip(log["in"], log["out"]))


LONG_DELAY = 30_000     # above 2**14: only the 16-bit age's top bit tells it (a 15-bit age, or the bit below, would not)


@pytest.mark.parametrize("line", ["line", "plain_line"])
def test_a_long_delay_is_kept_to_the_cycle(line):
    """Near the longest delay the line's 16-bit stamps allow (below 2**15), with and without the bypass:
    elements offered in cycles 0, 1 and 5 come out LONG_DELAY cycles after each."""
    dut, out = getattr(DUTS, line), []

    def run():
        yield dut.delay.eq(LONG_DELAY)
        yield dut.source.ready.eq(1)
        for cycle in range(LONG_DELAY + 8):
            yield dut.sink.valid.eq(int(cycle in (0, 1, 5)))
            yield dut.sink.data.eq(cycle + 1)
            yield
            if (yield dut.source.valid):
                out.append(((yield dut.source.data), cycle))

    run_simulation(DUTS, run(), max_cycles=LONG_DELAY + 100)
    assert out == [(1, LONG_DELAY), (2, LONG_DELAY + 1), (6, LONG_DELAY + 5)]


def test_a_level_fifo_is_a_power_of_two_deep_and_two_at_least():
    for depth in (1, 3, 6):
        with pytest.raises(AssertionError):
            LevelFIFO(LAYOUT, depth)
    LevelFIFO(LAYOUT, 2)
