"""The transceiver lane codec (litex/cores/phy/gt_lanes.py): the link's blocks cross skewed 8b/10b lanes in
order, the lanes realign on the markers after a late start or a corrupted word, and a whole link runs over it,
replaying what a corrupted word cost."""

import random

import pytest
from migen import *

from monet.cores.common.layouts import BLOCK_BITS, MAX_LANES, T_RD_REQ, T_RD_RSP, T_WR_ACK, T_WR_REQ
from monet.cores.link.core import LinkEndpoint
from monet.cores.link.lanes import LaneDeskew, LaneStriper
from monet.cores.phy.gt_lanes import (LaneBonding, LaneDecoder, LaneEncoder, RowSplitter, TransceiverLanes,
                                      item_layout, word_layout, K28_0, K28_1, K28_5)
from litex.soc.interconnect import stream
from monet.cores.tests.verilog_sim import run_simulation

from .link_responder import send_transactions

MARKER_PERIOD = 48   # short, so that markers fall among the blocks


class CodecWire(Module):
    """One direction of a board link in one clock: row split, encoder, `skews[i]` words of wire on lane i,
    decoders, FIFOs, bonding (TransceiverLanes without the clock crossings). `live[i]` gates lane i's words
    into its decoder (a lane not yet up); `corrupt[i]` sets a K flag on the word lane i's decoder gets."""
    def __init__(self, lanes, skews):
        self.submodules.splitter = splitter = RowSplitter(lanes)
        self.submodules.encoder  = encoder  = LaneEncoder(lanes, marker_period=MARKER_PERIOD)
        self.submodules.bonding  = bonding  = LaneBonding(lanes, window=MARKER_PERIOD // 4)
        self.sink, self.sources, self.up = splitter.sink, bonding.sources, bonding.up
        self.live    = Signal(lanes, reset=2**lanes - 1)
        self.corrupt = Signal(lanes)
        self.comb += [splitter.source.connect(encoder.sink), bonding.locked.eq(2**lanes - 1)]
        for lane in range(lanes):
            wire = encoder.words[lane]
            for _ in range(skews[lane]):
                later = Record(word_layout)
                self.sync += later.raw_bits().eq(wire.raw_bits())
                wire = later
            decoder = LaneDecoder()
            fifo = stream.SyncFIFO(item_layout, 32)
            self.submodules += decoder, fifo
            self.comb += [
                decoder.word.data.eq(wire.data),
                decoder.word.ctrl.eq(wire.ctrl | Mux(self.corrupt[lane], 0b0010, 0)),
                decoder.valid.eq(self.live[lane]),
                decoder.source.connect(fifo.sink),
                fifo.source.connect(bonding.sinks[lane]),
            ]


class CodecPath(Module):
    """Striper -> CodecWire -> deskew: beats in, beats out."""
    def __init__(self, lanes, skews):
        self.lanes_log2 = Signal(2, reset=lanes.bit_length() - 1)
        self.submodules.striper = striper = LaneStriper(self.lanes_log2)
        self.submodules.wire    = wire    = CodecWire(lanes, skews)
        self.submodules.deskew  = deskew  = LaneDeskew(self.lanes_log2)
        self.sink, self.source = striper.sink, deskew.source
        self.live, self.corrupt, self.up = wire.live, wire.corrupt, wire.up
        self.first_word = Signal(32)
        self.comb += [striper.source.connect(wire.sink), self.first_word.eq(wire.encoder.words[0].data)]
        for lane in range(MAX_LANES):
            self.comb += wire.sources[lane].connect(deskew.sinks[lane])


def random_beats(rng, n):
    return [(rng.getrandbits(512), rng.getrandbits(8), rng.randrange(1, 9)) for _ in range(n)]


def blocks_of(beats):
    """The used blocks of beats, in order: (data, ctrl)."""
    return [((d >> (BLOCK_BITS*b)) & (2**BLOCK_BITS - 1), (k >> b) & 1) for d, k, c in beats for b in range(c)]


def send_beats(dut, beats, gaps, rng):
    """Generator: once the lanes are up, offers the beats at dut.sink with random gaps of up to `gaps` cycles."""
    yield dut.source.ready.eq(1)
    while not (yield dut.up):
        yield
    for data, ctrl, count in beats:
        for _ in range(rng.randrange(0, gaps + 1)):
            yield dut.sink.valid.eq(0)
            yield
        yield dut.sink.valid.eq(1)
        yield dut.sink.data.eq(data)
        yield dut.sink.ctrl.eq(ctrl)
        yield dut.sink.count.eq(count)
        yield
        while not (yield dut.sink.ready):
            yield
    yield dut.sink.valid.eq(0)


def drive(dut, beats, gaps, rng, live, corrupt_at=None):
    """Testbench processes: beats sent with random gaps; `live` (cycle -> lane mask); a corrupted word on
    (cycle, lane); the received beats with their cycle."""
    received = []

    def send():
        yield from send_beats(dut, beats, gaps, rng)

    def watch(cycles):
        for cycle in range(cycles):
            yield dut.live.eq(live(cycle))
            yield dut.corrupt.eq(corrupt_at[1] if corrupt_at and cycle == corrupt_at[0] else 0)
            if (yield dut.source.valid):
                received.append((cycle, (yield dut.source.data), (yield dut.source.ctrl), (yield dut.source.count)))
            yield

    return send, watch, received


@pytest.mark.parametrize("lanes", [1, 2, 4, 8])
def test_blocks_cross_skewed_lanes_in_order(lanes):
    rng = random.Random(lanes)
    skews = [rng.randrange(0, 5) for _ in range(lanes)]
    beats = random_beats(rng, 40)
    dut = CodecPath(lanes, skews)
    send, watch, received = drive(dut, beats, gaps=3, rng=rng, live=lambda cycle: 2**lanes - 1)
    run_simulation(dut, [send(), watch(1400)])
    got = blocks_of([(d, k, c) for _, d, k, c in received])
    assert got == blocks_of(beats)
    # Rows: never more than a block a lane in a received beat.
    assert max(c for *_, c in received) <= lanes


def test_words_on_the_wire_are_idles_headers_and_data():
    """A marker first, then the comma while idle; a lone block goes as a header announcing one block, then its
    two words."""
    dut = CodecPath(1, [0])
    words = []
    block = 0x1122334455667788

    def send():
        for _ in range(6):
            yield
        yield dut.sink.valid.eq(1)
        yield dut.sink.data.eq(block)
        yield dut.sink.ctrl.eq(1)
        yield dut.sink.count.eq(1)
        yield
        yield dut.sink.valid.eq(0)

    def watch():
        for _ in range(16):
            words.append((yield dut.first_word))
            yield

    run_simulation(dut, [send(), watch()])
    assert words[1:5] == [K28_1, K28_5, K28_5, K28_5]   # words[0]: the word register's reset
    at = words.index(K28_0 | (0 << 8) | (1 << 16) | (1 << 24))
    assert words[at + 1:at + 3] == [block & 0xFFFF_FFFF, block >> 32]
    assert words[at + 3] == K28_5


def contiguous_run(sent, got):
    """True if `got` is sent[i:i+len(got)] for some i."""
    if not got:
        return False
    starts = [i for i, block in enumerate(sent) if block == got[0]]
    return any(sent[i:i + len(got)] == got for i in starts)


def test_lanes_align_after_a_late_lane_and_realign_after_a_corrupted_word():
    lanes = 4
    rng = random.Random(7)
    beats = random_beats(rng, 300)
    dut = CodecPath(lanes, [0, 2, 1, 3])
    ups = []
    # Lane 2 comes up 30 cycles late; a data word of lane 1 is corrupted at cycle 400.
    send, watch, received = drive(dut, beats, gaps=2, rng=rng, live=lambda cycle: 0b1011 if cycle < 30 else 0b1111,
                                  corrupt_at=(400, 0b0010))

    def watch_up():
        for cycle in range(3000):
            ups.append((yield dut.up))
            yield

    sent = blocks_of(beats)
    run_simulation(dut, [send(), watch(3000), watch_up()])
    rises = [c for c in range(1, len(ups)) if ups[c] and not ups[c - 1]]
    falls = [c for c in range(1, len(ups)) if not ups[c] and ups[c - 1]]
    assert len(rises) == 2 and len(falls) == 1, (rises, falls)
    assert rises[0] > 30 and falls[0] > 400 and rises[1] > falls[0]
    before = blocks_of([(d, k, c) for cycle, d, k, c in received if rises[0] <= cycle < 400])
    after  = blocks_of([(d, k, c) for cycle, d, k, c in received if cycle >= rises[1]])
    assert contiguous_run(sent, before) and contiguous_run(sent, after)
    assert after[-1] == sent[-1]


class LoopedLanes(Module):
    """TransceiverLanes (clock crossings and the delay line included) in one clock over stand-in transceivers
    whose received word is the sent one a cycle later; a striper in front and a deskew behind."""
    def __init__(self, lanes):
        self.lanes_log2 = Signal(2, reset=lanes.bit_length() - 1)
        transceivers = []
        for _ in range(lanes):
            ends = {"sink": stream.Endpoint(word_layout), "source": stream.Endpoint(word_layout)}
            gt = type("Transceiver", (), ends)()
            self.sync += [gt.source.data.eq(gt.sink.data), gt.source.ctrl.eq(gt.sink.ctrl)]
            transceivers.append(gt)
        self.submodules.striper = striper = LaneStriper(self.lanes_log2)
        self.submodules.phy     = phy     = TransceiverLanes(transceivers, "sys", ["sys"] * lanes,
                                                             marker_period=MARKER_PERIOD, with_delay_line=True,
                                                             delay_depth=64)
        self.submodules.deskew  = deskew  = LaneDeskew(self.lanes_log2)
        self.sink, self.source, self.up, self.delay = striper.sink, deskew.source, phy.up, phy.delay
        self.comb += [striper.source.connect(phy.sink), phy.locked.eq(2**lanes - 1)]
        for lane in range(MAX_LANES):
            self.comb += phy.sources[lane].connect(deskew.sinks[lane])


@pytest.mark.parametrize("delay", [0, 40])
def test_the_delay_line_holds_rows_exactly_its_delay_and_keeps_their_order(delay):
    rng = random.Random(delay)
    beats = random_beats(rng, 30)
    dut = LoopedLanes(2)
    rows_in, rows_out, received = [], [], []

    def send():
        yield dut.delay.eq(delay)
        yield from send_beats(dut, beats, 2, rng)

    def watch():
        line = dut.phy.delay_line
        for cycle in range(1200):
            if (yield line.sink.valid) and (yield line.sink.ready):
                rows_in.append(cycle)
            if (yield line.source.valid) and (yield line.source.ready):
                rows_out.append(cycle)
            if (yield dut.source.valid):
                received.append(((yield dut.source.data), (yield dut.source.ctrl), (yield dut.source.count)))
            yield

    run_simulation(dut, [send(), watch()])
    assert blocks_of(received) == blocks_of(beats)
    # Every row waits exactly the delay (the line's FIFO costs a cycle at 0).
    assert [b - a for a, b in zip(rows_in, rows_out)] == [max(delay, 1)] * len(rows_in)


class CodecLink(Module):
    """Two link ends (a: compute, b: memory) over 4 lanes of the codec each way."""
    LANES = 4

    def __init__(self):
        log2 = Signal(2, reset=2)
        self.submodules.a = a = LinkEndpoint(log2)
        self.submodules.b = b = LinkEndpoint(log2)
        self.submodules.a2b = a2b = CodecWire(self.LANES, [0, 2, 1, 3])
        self.submodules.b2a = b2a = CodecWire(self.LANES, [1, 0, 3, 0])
        self.comb += [a.rx_up.eq(b2a.up), b.rx_up.eq(a2b.up)]
        self.comb += a.connect_phy(a2b.sink, b2a.sources)
        self.comb += b.connect_phy(b2a.sink, a2b.sources)


def test_a_link_over_the_codec_delivers_once_in_order_through_a_slip():
    """Transactions both ways; a corrupted word on lane 1 (a to b) mid-run drops b's receive side until the
    lanes realign: the frames lost are replayed and nothing arrives twice or out of order."""
    rng = random.Random(3)
    full = 2**64 - 1
    a2b_txns = [(rng.choice([T_RD_REQ, T_WR_REQ]), i % 128, i, full, rng.getrandbits(512)) for i in range(80)]
    a2b_txns = [(t, tag, la, m, d if t == T_WR_REQ else 0) for t, tag, la, m, d in a2b_txns]
    b2a_txns = [(rng.choice([T_RD_RSP, T_WR_ACK]), i % 128, i, full, rng.getrandbits(512)) for i in range(80)]
    b2a_txns = [(t, tag, la, m, d if t == T_RD_RSP else 0) for t, tag, la, m, d in b2a_txns]
    dut = CodecLink()
    got = {"a": [], "b": []}
    stats = {}

    def sender(end, txns):
        yield "passive"
        yield end.sink.valid.eq(0)
        while not (yield dut.a2b.up) or not (yield dut.b2a.up):
            yield
        yield from send_transactions(end.sink, txns)

    def watch():
        for end in (dut.a, dut.b):
            yield end.source.ready.eq(1)
            yield end.retry.timeout.eq(256)
            yield end.checker.timeout.eq(256)
        for cycle in range(3000):
            yield dut.a2b.corrupt.eq(0b0010 if cycle == 40 else 0)   # mid-traffic: the lanes align by cycle 10
            for name, end in (("a", dut.a), ("b", dut.b)):
                if (yield end.source.valid):
                    got[name].append(((yield end.source.type), (yield end.source.tag), (yield end.source.laddr),
                                      (yield end.source.mask), (yield end.source.data)))
            yield
        for name, end in (("a", dut.a), ("b", dut.b)):
            stats[name] = {"reinits": (yield end.reinits), "replays": (yield end.retry.replays)}
        stats["realigns"] = (yield dut.a2b.bonding.realigns)

    run_simulation(dut, [sender(dut.a, a2b_txns), sender(dut.b, b2a_txns), watch()])
    assert got["b"] == a2b_txns and got["a"] == b2a_txns
    assert stats["realigns"] == 1 and stats["b"]["reinits"] >= 1 and stats["a"]["replays"] >= 1
