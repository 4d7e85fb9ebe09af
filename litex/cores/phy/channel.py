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
- per-lane delay lines: TX PHY + fiber + RX PHY (the `delay` CSR, whole cycles) plus the lane's skew;
- chosen faults (`inject`): one frame's (injector.py, beside the serializer), or from a frame it finds, one
  lane's blocks all hit, one lane or the link down for a number of cycles, or one lane's word lost;
- lane markers every `marker_period` cycles, and at the receiving end the lanes' alignment on them
  (align.py, the board's bonding's): a lane that slips or loses lock is found, counted and realigned;
- loopbacks for bring-up between the ends' ports and the directions (`loopback`, add_loopbacks()).

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
from monet.cores.common.striping import lanes_cases, stripe
from monet.cores.phy.align import LOSS_BITS, LaneAligner, loss_fields
from monet.cores.phy.codes import FAULT_KINDS, LOOPBACKS
from monet.cores.phy.errors import ErrorInjector
from monet.cores.phy.injector import FrameInjector
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

    `block_ps` is the time of one 66-bit block at the lane rate; `clk_ps` the cycle time. While `use_alt`, it
    takes its beats from `alt` (the fault injector's, whole beats, dealt over the lanes as they are taken) and
    `sink` waits.
    """
    def __init__(self, lanes_log2, block_ps, clk_ps):
        self.sink    = sink   = stream.Endpoint(bundle_layout())
        self.alt     = alt    = stream.Endpoint(beat_layout)
        self.use_alt = Signal()
        self.source  = source = stream.Endpoint(bundle_layout())

        # # #

        self.wire = wire = WireTime(clk_ps)
        self.busy_cycles = wire.busy_cycles
        # Lane 0 carries the most blocks of any lane: ceil(k/N), its used slots.
        per_lane = Signal(4)
        self.comb += If(self.use_alt,
            lanes_cases(lanes_log2, lambda n: per_lane.eq((alt.count + n - 1) >> log2_int(n))),
        ).Else(
            per_lane.eq(reduce(add, [sink.lane0_used[i] for i in range(BEAT_BLOCKS)])),
        )
        payload = Record(bundle_layout())
        self.comb += [
            wire.cost.eq(per_lane * block_ps),
            wire.offered.eq(Mux(self.use_alt, alt.valid, sink.valid)),
            sink.ready.eq(wire.accept & ~self.use_alt),
            alt.ready.eq(wire.accept & self.use_alt),
            source.valid.eq(wire.done),
            wire.drained.eq(source.ready),
            source.payload.raw_bits().eq(payload.raw_bits()),
        ]
        self.sync += If(wire.take,
            If(self.use_alt, payload.raw_bits().eq(0), stripe(lanes_log2, alt, payload)
            ).Else(payload.raw_bits().eq(sink.payload.raw_bits())),
        )


class SimChannelDirection(LiteXModule):
    """One direction of the channel: serializer (with the injector beside it, a fault on a chosen frame:
    injector.py), bit errors, a delay line per lane (delay + skew[lane]), then the lanes' alignment (align.py).

    Every lane carries a marker in the same cycle every `marker_period` cycles, in a cycle no beat leaves the
    serializer (a real lane sends it in place of an idle block, so it costs the model nothing); one more
    period without such a cycle, and the marker takes the next beat's cycle (the beat leaves a cycle later).
    Markers pass the bit errors by.

    While `down`, lane words are lost. The lanes set in `garble` have every block hit by an error (the lane's
    error threshold at its maximum: a receiver that lost lock delivers garbage). The lanes set in `lane_down`
    lose their words and their receivers are unlocked (the aligner drains them and realigns them at their next
    marker). A lane set in `slip` (a strobe) loses its next word: its blocks come a row late until the aligner
    finds the slip at the next marker. `up`: the receiving end's lanes are aligned (rows flow).
    """
    def __init__(self, lanes_log2, block_ps, clk_ps, delay, skews, depth=1024, salt=0, marker_period=1024,
                 window=512):
        self.sink      = stream.Endpoint(bundle_layout())
        self.down      = Signal()
        self.garble    = Signal(MAX_LANES)
        self.lane_down = Signal(MAX_LANES)
        self.slip      = Signal(MAX_LANES)

        # # #

        self.injector   = inj = FrameInjector(lanes_log2)
        self.serializer = ser = LaneSerializer(lanes_log2, block_ps, clk_ps)
        self.errors     = err = ErrorInjector(salt=salt)
        self.aligner    = aligner = LaneAligner([lane_layout(lane) for lane in range(MAX_LANES)], window=window)
        self.sources, self.up = aligner.sources, aligner.aligned
        sink = self.sink
        self.comb += [
            # The injector watches the beats; it may keep them off the wire (block), take one (hold) or send its
            # own (sending).
            ser.sink.valid.eq(sink.valid & ~inj.block),
            ser.sink.payload.eq(sink.payload),
            sink.ready.eq(Mux(inj.block, inj.hold, ser.sink.ready)),
            inj.sink.valid.eq(sink.valid),
            inj.sink.payload.eq(sink.payload),
            inj.sink.ready.eq(sink.ready),
            inj.ready.eq(ser.sink.ready),
            inj.source.connect(ser.alt),
            ser.use_alt.eq(inj.sending),
            ser.source.connect(err.sink),
            lanes_cases(lanes_log2, lambda n: aligner.active.eq(2**n - 1)),
            aligner.locked.eq(~self.lane_down),
        ]
        wire = err.source
        since    = Signal(max=2*marker_period)   # cycles since the last marker
        marker   = Signal()
        slipping = Signal(MAX_LANES)             # lanes whose next word is lost
        self.comb += marker.eq((since >= marker_period - 1) & (~wire.valid | (since == 2*marker_period - 1)))
        self.sync += [
            If(marker, since.eq(0)).Else(since.eq(since + 1)),
            If(wire.valid & wire.ready, slipping.eq(0)),
            If(self.slip != 0, slipping.eq(self.slip)),
        ]
        readies = []
        for lane in range(MAX_LANES):
            line = DelayLine(lane_layout(lane) + [("marker", 1)], depth)
            setattr(self.submodules, f"lane{lane}", line)
            lost = Signal(name=f"lost{lane}")
            self.comb += [
                lost.eq(self.down | self.lane_down[lane] | (slipping[lane] & ~marker)),
                line.delay.eq(delay + skews[lane]),
                line.sink.valid.eq((wire.valid | marker) & ~lost),
                line.sink.data.eq(getattr(wire, f"lane{lane}_data")),
                line.sink.ctrl.eq(getattr(wire, f"lane{lane}_ctrl")),
                line.sink.used.eq(getattr(wire, f"lane{lane}_used")),
                line.sink.marker.eq(marker),
                line.source.connect(aligner.sinks[lane]),
            ]
            readies.append(line.sink.ready)
        # A wire cannot push back; a full delay line only means the depth bounds the distance. A beat waits
        # only for a marker that is overdue.
        self.comb += wire.ready.eq(reduce(and_, readies) & ~marker)


class Window(LiteXModule):
    """`active` for `length` cycles, starting `after` cycles after `start` (both taken with it)."""
    def __init__(self):
        self.start   = Signal()
        self.after   = Signal(32)
        self.length  = Signal(32)
        self.active  = Signal()

        # # #

        remaining = Signal(32)
        wait      = Signal(32)
        armed     = Signal()
        length    = Signal(32)
        self.comb += self.active.eq(remaining != 0)
        self.sync += [
            If(self.start,
                armed.eq(1), wait.eq(self.after), length.eq(self.length),
            ).Elif(armed,
                If(wait == 0, armed.eq(0), remaining.eq(length)).Else(wait.eq(wait - 1)),
            ).Elif(self.active,
                remaining.eq(remaining - 1),
            ),
        ]


class SimChannel(LiteXModule):
    """Both directions of the link between the compute card (a) and the memory card (b).

    Run-time settings (CSRs with add_control(), or drive the signals directly in unit tests):
    lanes_log2, block_ps (66000 / lane rate in Gb/s), delay (cycles, one way: PHY TX + fiber + PHY RX),
    skew (cycles, per lane), per-lane block error thresholds, burst length and seed (errors.py, the same
    for both directions, each with its own generators), and `down_for`: cycles of link down, starting
    `down_after` cycles after `go_down` (so it can fall in the middle of a run the CPU waits on). `a_up` and
    `b_up` are the receivers' status (not down, lanes aligned); `down_total` counts down cycles. `dark` (a
    circuit switch's, phy/switch.py: no light while its circuit is set up or absent) holds the link down as
    long as it is high.

    A chosen fault (`inject_kind`, litex/cores/phy/codes.py) in the direction `inject_toward` (0: compute to
    memory), at the first frame with a transaction that the direction's injector finds from `inject_at` cycles
    after `inject_arm` (injector.py): on that frame (a flood sends `inject_copies` of it), or from it every block
    of lane `inject_lane` hit, that lane down or every lane down, for `inject_cycles`, or that lane's next word
    lost (a slip).

    The ends connect to `a_sink`/`a_sources` (the compute card) and `b_sink`/`b_sources` (the memory card):
    straight to the directions, or in a `loopback` (add_loopbacks()). `injected` counts the faults put
    on the wire; `inject_pending` is high until the armed one is done.
    """
    def __init__(self, clk_ps=4000, depth=1024, marker_period=1024, window=512):
        self.lanes_log2 = Signal(2, reset=3)
        self.block_ps   = Signal(16, reset=4400)   # 15 Gb/s.
        self.delay      = Signal(16, reset=10)
        self.skews      = [Signal(8, name=f"skew{i}") for i in range(MAX_LANES)]
        self.down_for   = Signal(32)
        self.down_after = Signal(32)
        self.go_down    = Signal()
        self.dark       = Signal()
        self.a_up       = Signal()
        self.b_up       = Signal()
        self.down_total = Signal(32)
        self.inject_kind    = Signal(4)
        self.inject_toward  = Signal()
        self.inject_lane    = Signal(3)
        self.inject_at      = Signal(32)
        self.inject_copies  = Signal(16)
        self.inject_cycles  = Signal(32)
        self.inject_arm     = Signal()
        self.injected       = Signal(32)
        self.inject_pending = Signal()
        self.loopback       = Signal(2)   # LOOPBACKS (codes.py)
        # The ends' ports, the loopbacks between them and the directions: what each end sends (a bundle of lane
        # words, its tx_lanes) and receives (lane words, its rx_lanes).
        self.a_sink    = stream.Endpoint(bundle_layout())
        self.b_sink    = stream.Endpoint(bundle_layout())
        self.a_sources = [stream.Endpoint(lane_layout(lane)) for lane in range(MAX_LANES)]
        self.b_sources = [stream.Endpoint(lane_layout(lane)) for lane in range(MAX_LANES)]

        # # #

        self.a2b, self.b2a = [SimChannelDirection(self.lanes_log2, self.block_ps, clk_ps, self.delay, self.skews, depth,
                                                  salt=salt, marker_period=marker_period, window=window)
                              for salt in (1, 2)]
        # Error settings shared by both directions (each direction keeps its own generators).
        self.thresholds = [Signal(THRESHOLD_BITS, name=f"threshold{lane}") for lane in range(MAX_LANES)]
        self.burst      = Signal(6, reset=1)
        self.seed       = Signal(32)
        self.seed_load  = Signal()
        for direction in (self.a2b, self.b2a):
            err = direction.errors
            self.comb += [err.thresholds[lane].eq(Mux(direction.garble[lane], 2**THRESHOLD_BITS - 1, threshold))
                          for lane, threshold in enumerate(self.thresholds)]
            self.comb += [err.burst.eq(self.burst), err.seed.eq(self.seed), err.seed_load.eq(self.seed_load)]
        # The link down: when `go_down` asks, or from a frame an injector found for a chosen `down` fault.
        found = Signal()
        self.comb += found.eq(self.a2b.injector.found | self.b2a.injector.found)
        self.down_window = down = Window()
        self.comb += [
            down.start.eq(self.go_down | found & (self.inject_kind == FAULT_KINDS["down"])),
            down.after.eq(Mux(self.go_down, self.down_after, 0)),
            down.length.eq(Mux(self.go_down, self.down_for, self.inject_cycles)),
            self.a2b.down.eq(down.active | self.dark), self.b2a.down.eq(down.active | self.dark),
            self.a_up.eq(~self.a2b.down & self.b2a.up), self.b_up.eq(~self.a2b.down & self.a2b.up),
        ]
        self.sync += If(self.a2b.down, self.down_total.eq(self.down_total + 1))

        # Chosen faults: the injectors' own on a frame, and from a frame they found a lane garbled or down for a
        # while, or a word of it lost.
        self.lane_window = lane = Window()
        lane_toward = Signal()
        lane_mask   = Signal(MAX_LANES)
        lane_lost   = Signal()     # the lane is down (lane_down), not garbled (lane)
        chosen = 1 << self.inject_lane
        slip   = found & (self.inject_kind == FAULT_KINDS["slip"])
        self.comb += [
            lane.start.eq(found & ((self.inject_kind == FAULT_KINDS["lane"])
                                   | (self.inject_kind == FAULT_KINDS["lane_down"]))),
            lane.length.eq(self.inject_cycles),
            self.a2b.garble.eq(Mux(lane.active & ~lane_toward & ~lane_lost, lane_mask, 0)),
            self.b2a.garble.eq(Mux(lane.active & lane_toward & ~lane_lost, lane_mask, 0)),
            self.a2b.lane_down.eq(Mux(lane.active & ~lane_toward & lane_lost, lane_mask, 0)),
            self.b2a.lane_down.eq(Mux(lane.active & lane_toward & lane_lost, lane_mask, 0)),
            self.a2b.slip.eq(Mux(slip & ~self.inject_toward, chosen, 0)),
            self.b2a.slip.eq(Mux(slip & self.inject_toward, chosen, 0)),
        ]
        self.sync += If(lane.start,
            lane_toward.eq(self.inject_toward),
            lane_mask.eq(chosen),
            lane_lost.eq(self.inject_kind == FAULT_KINDS["lane_down"]),
        )
        for toward, direction in enumerate((self.a2b, self.b2a)):
            self.comb += [
                direction.injector.kind.eq(self.inject_kind),
                direction.injector.copies.eq(self.inject_copies),
                direction.injector.at.eq(self.inject_at),
                direction.injector.arm.eq(self.inject_arm & (self.inject_toward == toward)),
            ]
        self.comb += [
            self.injected.eq(self.a2b.injector.applied + self.b2a.injector.applied),
            self.inject_pending.eq(self.a2b.injector.pending | self.b2a.injector.pending | lane.active | down.active),
        ]
        self.add_loopbacks()

    def add_loopbacks(self):
        """The ends' ports to the directions, or in a loop: near, the compute card's words as they leave its
        serializer come back to it (inside its PHY: no bit errors, no fiber), the memory card's are dropped; far,
        the memory card's PHY sends the rows it receives back toward the compute card (both directions' errors
        and delays), its own words wait and it receives nothing. The compute card's words go on the line in
        every mode."""
        near = self.loopback == LOOPBACKS["near"]
        far  = self.loopback == LOOPBACKS["far"]
        leaving = self.a2b.serializer.source
        self.comb += self.a_sink.connect(self.a2b.sink)
        for lane, (a_src, b_src, a2b_src, b2a_src) in enumerate(
                zip(self.a_sources, self.b_sources, self.a2b.sources, self.b2a.sources)):
            self.comb += [
                If(near,
                    a_src.valid.eq(leaving.valid & leaving.ready),
                    a_src.data.eq(getattr(leaving, f"lane{lane}_data")),
                    a_src.ctrl.eq(getattr(leaving, f"lane{lane}_ctrl")),
                    a_src.used.eq(getattr(leaving, f"lane{lane}_used")),
                    b2a_src.ready.eq(1),
                ).Else(
                    b2a_src.connect(a_src),
                ),
                If(far,
                    a2b_src.ready.eq(self.b2a.sink.ready),
                ).Else(
                    a2b_src.connect(b_src),
                ),
            ]
        received = [(f"lane{lane}_{field}", getattr(source, field)) for lane, source in enumerate(self.a2b.sources)
                    for field in ("data", "ctrl", "used")]   # the rows the memory card gets, as a bundle again
        self.comb += If(far,
            self.b2a.sink.valid.eq(self.a2b.sources[0].valid),
            *[getattr(self.b2a.sink, name).eq(value) for name, value in received],
            self.b_sink.ready.eq(0),
        ).Elif(near,
            self.b_sink.ready.eq(1),
        ).Else(
            self.b_sink.connect(self.b2a.sink),
        )

    def add_control(self):
        self._lanes_log2 = CSRStorage(2,  reset=3,    description="log2 of active lanes (0..3: 1, 2, 4, 8).")
        self._block_ps   = CSRStorage(16, reset=4400, description="Time of one 66-bit block at the lane rate, ps.")
        self._delay      = CSRStorage(16, reset=10,   description="One-way delay, cycles: PHY TX + fiber + PHY RX.")
        self._skew       = CSRStorage(fields=[CSRField(f"lane{lane}", size=8, description=f"Lane {lane}'s extra delay, cycles.")
                                              for lane in range(MAX_LANES)])
        self._loopback   = CSRStorage(2, description="Bring-up loopback (litex/cores/phy/codes.py): 0 none, 1 near "
                                                    "(the compute card's words back to it inside its PHY), 2 far "
                                                    "(the memory card's PHY sends back what it receives).")
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
        for direction in ("a2b", "b2a"):
            end = "memory" if direction == "a2b" else "compute"
            csr = CSRStatus(name=f"lane_losses_{direction}", fields=[
                CSRField(f"lane{lane}", size=LOSS_BITS,
                         description=f"Lane {lane}: losses of alignment at the {end} card (held at 255).")
                for lane in range(MAX_LANES)])
            setattr(self, f"_lane_losses_{direction}", csr)
            self.comb += loss_fields(csr, getattr(self, direction).aligner.losses)
        self._inject_at     = CSRStorage(32, description="Cycles from the write of `inject` before its fault may start.")
        self._inject_copies = CSRStorage(16, reset=64, description="`flood`: copies of the frame sent.")
        self._inject_cycles = CSRStorage(32, description="`lane`, `down`, `lane_down`: cycles the lane's blocks are "
                                                             "hit, the link is down or the lane is down.")
        self._inject = CSRStorage(fields=[
            CSRField("kind",   size=4, description="The fault (litex/cores/phy/codes.py: 1..6 on a frame, 7 a lane "
                                                   "garbled, 8 the link down, 9 a lane's slip, 10 a lane down; 0 "
                                                   "disarms); written: armed."),
            CSRField("toward", size=1, description="0: compute to memory, 1: memory to compute."),
            CSRField("lane",   size=3, description="`lane`, `slip`, `lane_down`: the lane."),
        ])
        self._injected = CSRStatus(32, description="Faults put on the wire: frames faulted, and frames a lane or link "
                                                   "fault started at.")
        self._injector = CSRStatus(fields=[
            CSRField("pending", size=1, description="The armed fault is not done yet."),
            CSRField("frame_blocks", size=6, description="The last frame faulted in the direction chosen: its blocks."),
            CSRField("frame_seq", size=SEQ_BITS, description="The last frame faulted in the direction chosen: its "
                                                             "sequence number."),
        ])
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
            self.inject_kind.eq(self._inject.fields.kind),
            self.inject_toward.eq(self._inject.fields.toward),
            self.inject_lane.eq(self._inject.fields.lane),
            self.inject_arm.eq(self._inject.re),
            self.inject_at.eq(self._inject_at.storage),
            self.inject_copies.eq(self._inject_copies.storage),
            self.inject_cycles.eq(self._inject_cycles.storage),
            self._injected.status.eq(self.injected),
            self._injector.fields.pending.eq(self.inject_pending),
        ]
        for field in ("frame_blocks", "frame_seq"):
            self.comb += getattr(self._injector.fields, field).eq(
                Mux(self.inject_toward, getattr(self.b2a.injector, field), getattr(self.a2b.injector, field)))
        self.comb += [
            self.lanes_log2.eq(self._lanes_log2.storage),
            self.loopback.eq(self._loopback.storage),
            self.block_ps.eq(self._block_ps.storage),
            self.delay.eq(self._delay.storage),
            self._busy_a2b.status.eq(self.a2b.serializer.busy_cycles),
            self._busy_b2a.status.eq(self.b2a.serializer.busy_cycles),
        ]
        self.comb += [self.skews[i].eq(getattr(self._skew.fields, f"lane{i}")) for i in range(MAX_LANES)]

