"""LaneStriper + LaneDeskew (litex/cores/link/lanes.py): beats survive striping over skewed lanes."""

import random

import pytest
from migen import *

from monet.cores.common.delay import DelayLine
from monet.cores.common.layouts import lane_layout
from monet.cores.common.layouts import MAX_LANES
from monet.cores.link.lanes import LaneStriper, LaneDeskew
from monet.cores.tests.verilog_sim import run_simulation


class StripedPath(Module):
    """Striper, a delay line of 2 + skew cycles per lane, deskew; lanes and skews are run-time settings."""
    def __init__(self):
        self.lanes_log2 = log2 = Signal(2)
        self.skews = skews = [Signal(3) for _ in range(MAX_LANES)]
        self.submodules.striper = LaneStriper(log2)
        self.submodules.deskew = LaneDeskew(log2)
        self.sink, self.source = self.striper.sink, self.deskew.source
        for lane in range(MAX_LANES):
            line = DelayLine(lane_layout(lane), depth=16)
            self.submodules += line
            self.comb += [
                line.delay.eq(2 + skews[lane]),
                line.sink.valid.eq(self.striper.source.valid),
                line.sink.data.eq(getattr(self.striper.source, f"lane{lane}_data")),
                line.sink.ctrl.eq(getattr(self.striper.source, f"lane{lane}_ctrl")),
                line.sink.used.eq(getattr(self.striper.source, f"lane{lane}_used")),
                line.source.connect(self.deskew.sinks[lane]),
            ]
        self.comb += self.striper.source.ready.eq(1)


@pytest.mark.parametrize("lanes", [1, 2, 4, 8])
@pytest.mark.parametrize("skewed", [False, True])
def test_beats_survive_striping_and_deskew(lanes, skewed):
    rng = random.Random(lanes * 10 + skewed)
    skews = [rng.randrange(0, 6) if skewed else 0 for _ in range(MAX_LANES)]
    beats = [(rng.getrandbits(512), rng.getrandbits(8), rng.randrange(1, 9)) for _ in range(12)]
    dut = StripedPath()
    received = []

    def settings():
        yield dut.lanes_log2.eq(lanes.bit_length() - 1)
        for signal, skew in zip(dut.skews, skews):
            yield signal.eq(skew)
        yield

    def send():
        yield from settings()
        for data, ctrl, count in beats:
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(data)
            yield dut.sink.ctrl.eq(ctrl)
            yield dut.sink.count.eq(count)
            yield
        yield dut.sink.valid.eq(0)

    def receive():
        yield from settings()
        yield dut.source.ready.eq(1)
        for _ in range(80):
            if (yield dut.source.valid):
                count = yield dut.source.count
                received.append(((yield dut.source.data), (yield dut.source.ctrl), count))
            yield

    run_simulation(dut, [send(), receive()])
    expected = [(d & (2**(64*c) - 1), k & (2**c - 1), c) for d, k, c in beats]
    got = [(d & (2**(64*c) - 1), k & (2**c - 1), c) for d, k, c in received]
    assert got == expected
