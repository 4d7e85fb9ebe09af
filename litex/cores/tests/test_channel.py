"""SimChannel serializer and delay lines (litex/cores/phy/channel.py) against the host's link model."""

import pytest
from migen import *

from monet.cores.link.lanes import LaneStriper
from monet.cores.phy.channel import SimChannelDirection
from monet.cores.tests.verilog_sim import run_simulation
from monet.link import model as link_model


class Direction(Module):
    """Striper and one channel direction; lanes, lane rate and delay are run-time settings (one model)."""
    def __init__(self):
        self.lanes_log2 = Signal(2)
        self.block_ps = Signal(16)
        self.delay = Signal(16)
        skews = [Signal(8) for _ in range(8)]
        self.submodules.striper = LaneStriper(self.lanes_log2)
        self.submodules.dir = SimChannelDirection(self.lanes_log2, self.block_ps, link_model.CLK_PS, self.delay,
                                                  skews, depth=64)
        self.comb += self.striper.source.connect(self.dir.sink)
        self.sink = self.striper.sink
        self.out = self.dir.sources[0]
        for s in self.dir.sources:
            self.comb += s.ready.eq(1)


def run(lanes, rate, delay, counts):
    dut = Direction()
    sent, arrived = [], []

    def settings():
        yield dut.lanes_log2.eq(lanes.bit_length() - 1)
        yield dut.block_ps.eq(link_model.block_ps(rate))
        yield dut.delay.eq(delay)
        yield

    def watch():
        yield from settings()
        # Until everything has arrived, with a bound: 2 cycles per block at the slowest setting, plus slack.
        for cycle in range(100 + 2 * 8 * sum(counts)):
            if len(arrived) == len(counts):
                break
            if (yield dut.sink.valid) and (yield dut.sink.ready):
                sent.append(cycle)
            if (yield dut.out.valid):
                arrived.append(cycle)
            yield

    def drive():
        yield from settings()
        for count in counts:
            yield dut.sink.valid.eq(1)
            yield dut.sink.count.eq(count)
            yield
            while not (yield dut.sink.ready):
                yield
        yield dut.sink.valid.eq(0)

    run_simulation(dut, [drive(), watch()])
    return sent, arrived


@pytest.mark.parametrize("lanes", [1, 2, 4, 8])
@pytest.mark.parametrize("rate", [10.0, 15.0, 25.0])
def test_lone_frame_latency_is_serialization_plus_delay(lanes, rate):
    delay = 7
    for blocks in (2, 8):
        sent, arrived = run(lanes, rate, delay, [blocks])
        expected = link_model.serialization_cycles(blocks, lanes, rate) + delay
        assert arrived[0] - sent[0] == expected, (blocks, sent, arrived)


@pytest.mark.parametrize("lanes,rate", [(1, 10.0), (4, 12.5), (8, 15.0), (8, 25.0)])
def test_back_to_back_throughput_matches_lane_rate(lanes, rate):
    n = 40
    sent, arrived = run(lanes, rate, 3, [8] * n)
    assert len(arrived) == n
    cycles = arrived[-1] - arrived[0]
    expected = (n - 1) * -(-8 // lanes) * link_model.block_ps(rate) / link_model.CLK_PS
    # A beat never leaves in less than a cycle; otherwise the carried remainder keeps the average exact.
    assert abs(cycles - max(expected, n - 1)) <= 1
