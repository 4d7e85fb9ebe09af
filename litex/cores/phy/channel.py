#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Sim channel model: N bonded serial lanes at a lane rate, over fiber, through PHYs, with per-lane skew.

Everything is set at run time over CSRs, so one Verilator build serves a whole sweep.

Per direction:
- a serializer that holds each beat for ceil(k/N) block times (66 bits at the lane rate each: 64b/66b),
  tracked in picoseconds with the remainder carried to the next beat, so throughput is exact and each
  beat's latency is rounded up to whole cycles;
- bit errors: a per-lane bit error rate, single-bit or burst, seeded and repeatable (errors.py);
- link down: for a programmed number of cycles every lane word sent is lost and the receivers report the
  link down (as a PHY loses lock), both directions at once;
- per-lane delay lines: TX PHY + fiber + RX PHY (the `delay` CSR, whole cycles) plus the lane's skew.

Defaults (their sources: host/monet/link/model.py): PHY TX and RX fixed latencies from PG056's
GTHE4 64-bit (64b/66b) figures: TX 176 UI, RX 125.5 UI, plus 1 UI per Gb/s above 2 Gb/s; fiber 4.9 ns/m
one way (group index 1.468). The host computes cycles from these at the nominal clock.
"""

from functools import reduce
from operator import add, and_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.delay import DelayLine
from monet.cores.common.layouts import *
from monet.cores.phy.errors import ErrorInjector
from monet.cores.phy.figures import THRESHOLD_BITS


class WireTime(LiteXModule):
    """The time an item spends on the wire: holds each item taken for `cost` picoseconds, then releases it.

    Throughput is exact: an item released mid-cycle leaves the rest of that cycle to the next one (its time
    is tracked in picoseconds, the remainder carried). The carry is at most one cycle: an item cannot have
    started before the cycle it was taken in, so a run of items shorter than a cycle does not bank the
    wire's idle time for a later burst. Latency: max(1, ceil(cost)) cycles.

    `offered`/`accept` are the upstream valid/ready, `done`/`drained` the downstream valid/ready; `take` is
    high in the cycle an item is taken.
    """
    def __init__(self, clk_ps, cost_bits=24):
        self.cost        = Signal(cost_bits)
        self.offered     = Signal()
        self.accept      = Signal()
        self.take        = Signal()
        self.done        = Signal()
        self.drained     = Signal()
        self.held        = Signal()
        self.busy_cycles = Signal(32)  # cycles with an item on the wire (link occupancy).

        # # #

        held      = self.held
        remaining = Signal((cost_bits + 1, True))
        after     = Signal((cost_bits + 1, True))
        carry     = Signal((cost_bits + 1, True))
        self.comb += [
            after.eq(remaining - clk_ps),
            self.done.eq(held & (after <= 0)),
            # At most one cycle of credit: below it (remaining < 0), after - remaining is exactly -clk_ps. No
            # negative literal: Migen prints -4000 as 13'sd4192, which the SoC's Verilator build did not take
            # for -4000 (the PBB measured 2 % above the link's capacity).
            carry.eq(Mux(~self.done, 0, Mux(remaining < 0, after - remaining, after))),
            self.accept.eq(~held | (self.done & self.drained)),
            self.take.eq(self.offered & self.accept),
        ]
        self.sync += [
            If(held, self.busy_cycles.eq(self.busy_cycles + 1)),
            If(held & ~self.done, remaining.eq(after)),
            If(self.done & self.drained, held.eq(0)),
            If(self.take,
                held.eq(1),
                remaining.eq(self.cost + carry),
            ),
        ]


class LaneSerializer(LiteXModule):
    """Holds each beat of lane words for its serialization time (>= 1 cycle), then releases it.

    `block_ps` is the time of one 66-bit block at the lane rate; `clk_ps` the cycle time.
    """
    def __init__(self, lanes_log2, block_ps, clk_ps):
        self.sink   = sink   = stream.Endpoint(bundle_layout())
        self.source = source = stream.Endpoint(bundle_layout())

        # # #

        self.wire = wire = WireTime(clk_ps)
        self.busy_cycles = wire.busy_cycles
        # Lane 0 carries the most blocks of any lane: its used slots give ceil(k/N).
        per_lane = Signal(4)
        self.comb += per_lane.eq(reduce(add, [sink.lane0_used[i] for i in range(BEAT_BLOCKS)]))
        payload = Record(bundle_layout())
        self.comb += [
            wire.cost.eq(per_lane * block_ps),
            wire.offered.eq(sink.valid),
            sink.ready.eq(wire.accept),
            source.valid.eq(wire.done),
            wire.drained.eq(source.ready),
            source.payload.raw_bits().eq(payload.raw_bits()),
        ]
        self.sync += If(wire.take, payload.raw_bits().eq(sink.payload.raw_bits()))


class SimChannelDirection(LiteXModule):
    """One direction of the channel: serializer, bit errors, then a delay line per lane (delay + skew[lane]).

    While `down`, lane words are lost.
    """
    def __init__(self, lanes_log2, block_ps, clk_ps, delay, skews, depth=1024, salt=0):
        self.sink    = stream.Endpoint(bundle_layout())
        self.sources = []
        self.down    = Signal()

        # # #

        self.serializer = ser = LaneSerializer(lanes_log2, block_ps, clk_ps)
        self.errors     = err = ErrorInjector(salt=salt)
        self.comb += [self.sink.connect(ser.sink), ser.source.connect(err.sink)]
        wire = err.source
        readies = []
        for lane in range(MAX_LANES):
            line = DelayLine(lane_layout(lane), depth)
            setattr(self.submodules, f"lane{lane}", line)
            self.comb += [
                line.delay.eq(delay + skews[lane]),
                line.sink.valid.eq(wire.valid & ~self.down),
                line.sink.data.eq(getattr(wire, f"lane{lane}_data")),
                line.sink.ctrl.eq(getattr(wire, f"lane{lane}_ctrl")),
                line.sink.used.eq(getattr(wire, f"lane{lane}_used")),
            ]
            readies.append(line.sink.ready)
            self.sources.append(line.source)
        # A wire cannot push back; a full delay line only means the depth bounds the distance.
        self.comb += wire.ready.eq(reduce(and_, readies))


class SimChannel(LiteXModule):
    """Both directions of the link between the compute card (a) and the memory card (b).

    Run-time settings (CSRs with add_control(), or drive the signals directly in unit tests):
    lanes_log2, block_ps (66000 / lane rate in Gb/s), delay (cycles, one way: PHY TX + fiber + PHY RX),
    skew (cycles, per lane), per-lane block error thresholds, burst length and seed (errors.py, the same
    for both directions, each with its own generators), and `down_for`: cycles of link down, starting
    `down_after` cycles after `go_down` (so it can fall in the middle of a run the CPU waits on). `a_up` and
    `b_up` are the receivers' status; `down_total` counts down cycles.
    """
    def __init__(self, clk_ps=4000, depth=1024):
        self.lanes_log2 = Signal(2, reset=3)
        self.block_ps   = Signal(16, reset=4400)   # 15 Gb/s.
        self.delay      = Signal(16, reset=10)
        self.skews      = [Signal(8, name=f"skew{i}") for i in range(MAX_LANES)]
        self.down_for   = Signal(32)
        self.down_after = Signal(32)
        self.go_down    = Signal()
        self.a_up       = Signal()
        self.b_up       = Signal()
        self.down_total = Signal(32)

        # # #

        self.a2b = SimChannelDirection(self.lanes_log2, self.block_ps, clk_ps, self.delay, self.skews, depth, salt=1)
        self.b2a = SimChannelDirection(self.lanes_log2, self.block_ps, clk_ps, self.delay, self.skews, depth, salt=2)
        # Error settings shared by both directions (each direction keeps its own generators).
        self.thresholds = [Signal(THRESHOLD_BITS, name=f"threshold{lane}") for lane in range(MAX_LANES)]
        self.burst      = Signal(6, reset=1)
        self.seed       = Signal(32)
        self.seed_load  = Signal()
        for err in (self.a2b.errors, self.b2a.errors):
            self.comb += [b.eq(a) for a, b in zip(self.thresholds, err.thresholds)]
            self.comb += [err.burst.eq(self.burst), err.seed.eq(self.seed), err.seed_load.eq(self.seed_load)]
        remaining = Signal(32)
        wait      = Signal(32)
        armed     = Signal()
        length    = Signal(32)
        down = Signal()
        self.comb += [
            down.eq(remaining != 0),
            self.a2b.down.eq(down), self.b2a.down.eq(down),
            self.a_up.eq(~down), self.b_up.eq(~down),
        ]
        self.sync += [
            If(self.go_down,
                armed.eq(1), wait.eq(self.down_after), length.eq(self.down_for),
            ).Elif(armed,
                If(wait == 0, armed.eq(0), remaining.eq(length)).Else(wait.eq(wait - 1)),
            ).Elif(down,
                remaining.eq(remaining - 1),
            ),
            If(down, self.down_total.eq(self.down_total + 1)),
        ]

    def add_control(self):
        self._lanes_log2 = CSRStorage(2,  reset=3,    description="log2 of active lanes (0..3: 1, 2, 4, 8).")
        self._block_ps   = CSRStorage(16, reset=4400, description="Time of one 66-bit block at the lane rate, ps.")
        self._delay      = CSRStorage(16, reset=10,   description="One-way delay, cycles: PHY TX + fiber + PHY RX.")
        self._skew       = CSRStorage(fields=[CSRField(f"lane{lane}", size=8, description=f"Lane {lane}'s extra delay, cycles.")
                                              for lane in range(MAX_LANES)])
        self._busy_a2b   = CSRStatus(32, description="Cycles the compute-to-memory direction was serializing.")
        self._busy_b2a   = CSRStatus(32, description="Cycles the memory-to-compute direction was serializing.")
        for lane in range(MAX_LANES):
            csr = CSRStorage(THRESHOLD_BITS, name=f"ber_lane{lane}",
                             description=f"Lane {lane}: a 66-bit block is hit with probability value / 2**40.")
            setattr(self, f"_ber_lane{lane}", csr)
            self.comb += self.thresholds[lane].eq(csr.storage)
        self._ber_burst  = CSRStorage(6, reset=1, description="Bits flipped per error event (1: single-bit errors).")
        self._ber_seed   = CSRStorage(32, description="Seed of the error generators (written: reloaded).")
        self._down_after = CSRStorage(32, description="Cycles from the write of `down` to the start of the interval.")
        self._down       = CSRStorage(32, description="Written: the link goes down for this many cycles.")
        self._down_total = CSRStatus(32, description="Cycles the link was down.")
        self._blocks_a2b = CSRStatus(48, description="Blocks carried compute-to-memory (66 bits each).")
        self._blocks_b2a = CSRStatus(48, description="Blocks carried memory-to-compute.")
        self._hits_a2b   = CSRStatus(32, description="Blocks hit by an error compute-to-memory.")
        self._hits_b2a   = CSRStatus(32, description="Blocks hit by an error memory-to-compute.")
        self.comb += [
            self.burst.eq(self._ber_burst.storage),
            self.seed.eq(self._ber_seed.storage),
            self.seed_load.eq(self._ber_seed.re),
            self.down_for.eq(self._down.storage),
            self.down_after.eq(self._down_after.storage),
            self.go_down.eq(self._down.re),
            self._down_total.status.eq(self.down_total),
            self._blocks_a2b.status.eq(self.a2b.errors.blocks),
            self._blocks_b2a.status.eq(self.b2a.errors.blocks),
            self._hits_a2b.status.eq(self.a2b.errors.hits),
            self._hits_b2a.status.eq(self.b2a.errors.hits),
        ]
        self.comb += [
            self.lanes_log2.eq(self._lanes_log2.storage),
            self.block_ps.eq(self._block_ps.storage),
            self.delay.eq(self._delay.storage),
            self._busy_a2b.status.eq(self.a2b.serializer.busy_cycles),
            self._busy_b2a.status.eq(self.b2a.serializer.busy_cycles),
        ]
        self.comb += [self.skews[i].eq(getattr(self._skew.fields, f"lane{i}")) for i in range(MAX_LANES)]

