#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The link's lanes on 8b/10b transceivers: lane words to 32-bit transceiver words and back, and bonding.

A board's lanes are GTH4 channels through liteiclink, which encodes 8b/10b in the fabric and moves four
symbols a word (`data`, one `ctrl` bit a symbol marking a K character). The link's blocks are 64 bits with a
ctrl flag (the 64b/66b sync header of common/wire.py) and a used flag (idle fill at the end of a beat's last
row, as bonded lanes send). Per lane, words are, byte 0 first:

| word | bytes | meaning |
|---|---|---|
| idle | K28.5, 0, 0, 0 | nothing to send; K28.5 is the comma the transceiver aligns on |
| marker | K28.1, 0, 0, 0 | sent in the same word on every lane every `marker_period` words: bonding |
| header | K28.0, count - 1, ctrl bits, used bits | `count` (1..8) blocks follow, two data words each, low word first |

A header is built from the rows (one block a lane) waiting when it is due, so under load 8 blocks share it:
16 data words in 17, 75 % of the line rate after 8b/10b's 80 % (64b/66b would carry 97 %: the transceiver's
own 64B/66B gearbox, which liteiclink does not drive, is the way to it). A lone block costs a header and two
words. Rows keep the beat's order, so the receiving link sees the same blocks in the same order; its beats
are rows (N blocks), which its deframer takes as they come.

Bonding: each lane's items (blocks and markers) cross into the system clock in a FIFO of their own; a row
leaves when every lane has a block at its head. Markers must come out of every lane together; a lane with a
marker when another has a block has slipped (a lost or corrupted word): the bonding drops `up`, counts the
lane, discards the other lanes' items up to that marker and pops the markers together; a lane whose
transceiver drops is realigned at its first marker once back (align.py). The link replays what was lost
(its watchdog re-initialises when `up` returns).

Latency (transmit): the row split 0 cycles, the clock crossing (LiteX's AsyncFIFO, 2-3 cycles of the
transceiver clock), the window 1, the registered word 1; a block's high word leaves 2 words after its header.
Receive: the decoder 1 cycle after a block's high word, the crossing 2-3 system cycles, bonding 0.
"""

from functools import reduce

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.delay import DelayLine
from monet.cores.common.layouts import BEAT_BLOCKS, BLOCK_BITS, MAX_LANES, bundle_layout, lane_layout
from monet.cores.phy.align import LaneAligner

K28_0 = 0x1C   # a header: blocks follow
K28_1 = 0x3C   # the bonding marker
K28_5 = 0xBC   # idle, the comma
WORD_BYTES = 4
MAX_COUNT = 8           # blocks under one header
MARKER_PERIOD = 1024    # words between markers: 0.1 % of the line
# Payload share of the line rate under load: 8b/10b, then 16 data words in every 17.
LINE_EFFICIENCY = 0.8 * (2*MAX_COUNT) / (2*MAX_COUNT + 1)

word_layout = [("data", 8*WORD_BYTES), ("ctrl", WORD_BYTES)]
item_layout = [("data", BLOCK_BITS), ("ctrl", 1), ("used", 1), ("marker", 1)]


def row_layout(lanes):
    """One block a lane, lane i's at bits [64*i, 64*(i+1)) of `data` and bit i of `ctrl` and `used`."""
    return [("data", BLOCK_BITS*lanes), ("ctrl", lanes), ("used", lanes)]


def _widened_sum(module, bits, name):
    total = Signal(len(bits).bit_length(), name=name)
    module.comb += total.eq(reduce(lambda a, b: a + b, bits))
    return total


class RowSplitter(LiteXModule):
    """The link's bundle of lane words (a beat) to rows, a row a cycle (0 cycles).

    With N lanes a beat of k blocks is ceil(k/N) rows (lane 0's used slots): row s holds slot s of every lane,
    fill blocks (used 0) included, as the sim channel charges them.
    """
    def __init__(self, lanes):
        assert lanes in (1, 2, 4, 8)
        self.sink   = sink   = stream.Endpoint(bundle_layout())
        self.source = source = stream.Endpoint(row_layout(lanes))

        # # #

        slots = BEAT_BLOCKS // lanes
        rows  = _widened_sum(self, [sink.lane0_used[s] for s in range(slots)], "rows")
        row   = Signal(max=max(slots, 2))
        after = Signal(len(rows) + 1)
        last  = Signal()
        self.comb += [
            after.eq(row + 1),
            last.eq(after >= rows),
            source.valid.eq(sink.valid & (rows != 0)),
            sink.ready.eq((source.ready & last) | (rows == 0)),
        ]
        for lane in range(lanes):
            data = getattr(sink, f"lane{lane}_data")
            ctrl = getattr(sink, f"lane{lane}_ctrl")
            used = getattr(sink, f"lane{lane}_used")
            self.comb += [
                source.data[BLOCK_BITS*lane:BLOCK_BITS*(lane + 1)].eq(
                    Array(data[BLOCK_BITS*s:BLOCK_BITS*(s + 1)] for s in range(slots))[row]),
                source.ctrl[lane].eq(Array(ctrl[s] for s in range(slots))[row]),
                source.used[lane].eq(Array(used[s] for s in range(slots))[row]),
            ]
        self.sync += If(source.valid & source.ready, If(last, row.eq(0)).Else(row.eq(row + 1)))


class LaneEncoder(LiteXModule):
    """Rows to one transceiver word a lane a cycle, every lane in lockstep (`words[i]`, registered).

    Rows wait in a window of MAX_COUNT: a LUT-RAM FIFO for the data and registers for the ctrl and used bits,
    which the header carries for every row it announces. Latency: a row taken into an empty window is in a
    header word 2 cycles later (window, word register), its high word 2 words after that.
    """
    def __init__(self, lanes, marker_period=MARKER_PERIOD):
        self.sink  = sink = stream.Endpoint(row_layout(lanes))
        self.words = [Record(word_layout, name=f"word{lane}") for lane in range(lanes)]

        # # #

        self.fifo = fifo = stream.SyncFIFO([("data", BLOCK_BITS*lanes)], MAX_COUNT, buffered=False)
        level   = Signal(max=MAX_COUNT + 1)
        ctrls   = [Signal(lanes, name=f"ctrl_w{p}") for p in range(MAX_COUNT)]
        useds   = [Signal(lanes, name=f"used_w{p}") for p in range(MAX_COUNT)]
        left    = Signal(max=2*MAX_COUNT + 1)     # data words left in the superblock
        since   = Signal(max=marker_period + 1, reset=marker_period - 1)   # a marker first
        push    = Signal()
        pop     = Signal()
        slot    = Signal(max=MAX_COUNT + 1)       # where a pushed row's bits go
        self.comb += [
            sink.ready.eq(fifo.sink.ready),
            fifo.sink.valid.eq(sink.valid),
            fifo.sink.data.eq(sink.data),
            push.eq(sink.valid & sink.ready),
            pop.eq((left != 0) & left[0]),          # a block's high word
            fifo.source.ready.eq(pop),
            slot.eq(level - pop),
        ]
        for p in range(MAX_COUNT):
            above_c = ctrls[p + 1] if p + 1 < MAX_COUNT else 0
            above_u = useds[p + 1] if p + 1 < MAX_COUNT else 0
            self.sync += If(push & (slot == p),
                ctrls[p].eq(sink.ctrl), useds[p].eq(sink.used),
            ).Elif(pop,
                ctrls[p].eq(above_c), useds[p].eq(above_u),
            )
        self.sync += level.eq(level + push - pop)

        marker_due = Signal()
        header     = Signal()
        count_m1   = Signal(8)       # the header's count - 1, a byte
        self.comb += [marker_due.eq(since >= marker_period - 1), count_m1.eq(level - 1)]
        self.sync += [
            If(left == 0,
                If(marker_due,
                    since.eq(0),
                ).Else(
                    since.eq(since + 1),
                    left.eq(2*level),
                )
            ).Else(
                since.eq(Mux(marker_due, since, since + 1)),
                left.eq(left - 1),
            )
        ]
        self.comb += header.eq((left == 0) & ~marker_due & (level != 0))
        for lane, word in enumerate(self.words):
            block = fifo.source.data[BLOCK_BITS*lane:BLOCK_BITS*(lane + 1)]
            ctrl_bits = Cat(*[ctrls[p][lane] for p in range(MAX_COUNT)])
            used_bits = Cat(*[useds[p][lane] for p in range(MAX_COUNT)])
            self.sync += [
                If(left == 0,
                    word.ctrl.eq(0b0001),
                    If(marker_due,
                        word.data.eq(K28_1),
                    ).Elif(header,
                        word.data.eq(Cat(C(K28_0, 8), count_m1, ctrl_bits, used_bits)),
                    ).Else(
                        word.data.eq(K28_5),
                    )
                ).Else(
                    word.ctrl.eq(0),
                    word.data.eq(Mux(left[0], block[32:], block[:32])),
                )
            ]


class LaneDecoder(LiteXModule):
    """One lane's words to items, blocks and markers (`source`, a cycle after a block's high word; it cannot be
    held back). A K character where a data word belongs ends the superblock and is read as a header; its
    blocks are lost (`errors`), and bonding sees the slip at the next marker.
    """
    def __init__(self):
        self.word   = word   = Record(word_layout)
        self.valid  = Signal(reset=1)     # a word this cycle (the transceiver is up)
        self.source = source = stream.Endpoint(item_layout)
        self.errors = Signal(32)

        # # #

        left  = Signal(max=2*MAX_COUNT + 1)
        low   = Signal(32)
        ctrls = Signal(MAX_COUNT)
        useds = Signal(MAX_COUNT)
        kind  = word.data[:8]
        is_k  = word.ctrl[0]
        strange = Signal()     # a K character inside a superblock
        start = Signal()
        count = Signal(4)      # widened: in a Verilog concatenation the sum would keep 3 bits (8 -> 0)
        self.comb += [
            count.eq(word.data[8:11] + 1),
            strange.eq((left != 0) & (word.ctrl != 0)),
            start.eq(self.valid & ((left == 0) | strange)),
        ]
        self.sync += [
            source.valid.eq(0),
            If(self.valid & strange, self.errors.eq(self.errors + 1)),
            If(start,
                left.eq(0),
                If(is_k & (kind == K28_0),
                    left.eq(Cat(C(0, 1), count)),
                    ctrls.eq(word.data[16:24]),
                    useds.eq(word.data[24:32]),
                ).Elif(is_k & (kind == K28_1),
                    source.valid.eq(1),
                    source.marker.eq(1),
                    source.used.eq(0),
                )
            ).Elif(self.valid,
                left.eq(left - 1),
                If(~left[0],
                    low.eq(word.data),
                ).Else(
                    source.valid.eq(1),
                    source.marker.eq(0),
                    source.data.eq(Cat(low, word.data)),
                    source.ctrl.eq(ctrls[0]),
                    source.used.eq(useds[0]),
                    ctrls.eq(ctrls[1:]),
                    useds.eq(useds[1:]),
                )
            )
        ]


class LaneBonding(LiteXModule):
    """The lanes' items (heads of their FIFOs, `sinks`) to rows, as lane words for the link's deskew
    (`sources`, MAX_LANES of them as the sim channel has; block in slot 0). 0 cycles.

    Alignment on the markers (align.py's LaneAligner): from reset the lanes hunt for their first markers; a lane
    that slips is found at its next marker and realigned there, a lane whose transceiver drops (`locked`, one
    bit a lane) is drained and realigned at its first marker once it is back, the others waiting at theirs for
    at most `window` cycles (a quarter of the marker period: above any skew of bonded lanes). `up`: rows flow
    (the link's rx_up). `realigns` counts the losses of alignment, `losses` them by lane (align.py).
    """
    def __init__(self, lanes, window=MARKER_PERIOD // 4):
        self.sinks    = sinks   = [stream.Endpoint(item_layout) for _ in range(lanes)]
        self.sources  = sources = [stream.Endpoint(lane_layout(lane)) for lane in range(MAX_LANES)]

        # # #

        block_layout = [("data", BLOCK_BITS), ("ctrl", 1), ("used", 1)]
        self.aligner = aligner = LaneAligner([block_layout] * lanes, window=window, start_aligned=False)
        self.locked, self.up = aligner.locked, aligner.aligned
        self.realigns, self.losses = aligner.realigns, aligner.losses
        for sink, lane_sink, lane_source, source in zip(sinks, aligner.sinks, aligner.sources, sources):
            self.comb += [
                sink.connect(lane_sink),
                source.valid.eq(lane_source.valid),
                source.data[:BLOCK_BITS].eq(lane_source.data),
                source.ctrl[0].eq(lane_source.ctrl),
                source.used[0].eq(lane_source.used),
                lane_source.ready.eq(source.ready),
            ]


class TransceiverLanes(LiteXModule):
    """The link's PHY on 8b/10b transceivers with liteiclink's stream endpoints (`sink`/`source` of 32-bit
    words and 4 K flags in their own clocks): what the sim channel is to the sim, for one direction each way.

    `sink` takes the link's lane words (its `tx_lanes`), `sources` give them back (its `rx_lanes`), `up` is its
    `rx_up`. Every lane sends from `tx_domain` (one transmit clock for the bonded lanes, the transceivers' TX
    buffers absorbing phase); lane i receives in `rx_domains[i]`. `locked` (system clock, a bit a lane) is high
    while the lane's transceiver is initialised and aligned; a lane that drops is realigned alone (LaneBonding).

    `with_delay_line`: received rows wait `delay` cycles (set at run time, up to `delay_depth` - 1) before the
    link takes them: fiber emulated in the fabric, so distance sweeps run without spools. It adds a cycle
    even at 0 (the delay line's FIFO).
    """
    def __init__(self, serdes, tx_domain, rx_domains, marker_period=MARKER_PERIOD, tx_depth=8, rx_depth=16,
                 with_delay_line=False, delay_depth=512):
        lanes = len(serdes)
        self.sink  = sink = stream.Endpoint(bundle_layout())
        self.locked = Signal(lanes)
        self.delay  = Signal(16)

        # # #

        self.splitter = splitter = RowSplitter(lanes)
        self.tx_cdc   = tx_cdc   = ClockDomainsRenamer({"write": "sys", "read": tx_domain})(
            stream.AsyncFIFO(row_layout(lanes), tx_depth))
        self.encoder  = encoder  = ClockDomainsRenamer(tx_domain)(LaneEncoder(lanes, marker_period))
        self.bonding  = bonding  = LaneBonding(lanes, window=marker_period // 4)
        self.sources, self.up = bonding.sources, bonding.up
        self.realigns, self.losses = bonding.realigns, bonding.losses
        if with_delay_line:
            self.sources = self.delayed_rows(bonding.sources, lanes, delay_depth)
        self.comb += [
            sink.connect(splitter.sink),
            splitter.source.connect(tx_cdc.sink),
            tx_cdc.source.connect(encoder.sink),
            bonding.locked.eq(self.locked),
        ]
        for lane, (gt, rx_domain) in enumerate(zip(serdes, rx_domains)):
            decoder = ClockDomainsRenamer(rx_domain)(LaneDecoder())
            rx_cdc  = ClockDomainsRenamer({"write": rx_domain, "read": "sys"})(stream.AsyncFIFO(item_layout, rx_depth))
            setattr(self.submodules, f"decoder{lane}", decoder)
            setattr(self.submodules, f"rx_cdc{lane}", rx_cdc)
            self.comb += [
                gt.sink.valid.eq(1),
                gt.sink.data.eq(encoder.words[lane].data),
                gt.sink.ctrl.eq(encoder.words[lane].ctrl),
                gt.source.ready.eq(1),
                decoder.word.data.eq(gt.source.data),
                decoder.word.ctrl.eq(gt.source.ctrl),
                decoder.source.connect(rx_cdc.sink),
                rx_cdc.source.connect(bonding.sinks[lane]),
            ]

    def delayed_rows(self, sources, lanes, depth):
        """The bonding's rows through a delay line of `depth` rows; returns the lane words that come out."""
        self.delay_line = line = DelayLine(row_layout(lanes), depth)
        outputs = [stream.Endpoint(lane_layout(lane)) for lane in range(MAX_LANES)]
        self.comb += [
            line.delay.eq(self.delay),
            line.sink.valid.eq(sources[0].valid),
            line.source.ready.eq(outputs[0].ready),
        ]
        for lane in range(lanes):
            self.comb += [
                line.sink.data[BLOCK_BITS*lane:BLOCK_BITS*(lane + 1)].eq(sources[lane].data[:BLOCK_BITS]),
                line.sink.ctrl[lane].eq(sources[lane].ctrl[0]),
                line.sink.used[lane].eq(sources[lane].used[0]),
                sources[lane].ready.eq(line.sink.ready),
                outputs[lane].valid.eq(line.source.valid),
                outputs[lane].data[:BLOCK_BITS].eq(line.source.data[BLOCK_BITS*lane:BLOCK_BITS*(lane + 1)]),
                outputs[lane].ctrl[0].eq(line.source.ctrl[lane]),
                outputs[lane].used[0].eq(line.source.used[lane]),
            ]
        return outputs
