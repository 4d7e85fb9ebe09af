"""FrameInjector (litex/cores/phy/injector.py), beside a channel direction's serializer: each fault kind on the
first frame that travels alone after the injector is armed, every other block through unchanged, over 1 and 8
lanes.

Frames are built from the wire format's documented layout (test_packing.documented_frame), so a frame whose
type the injector changed must carry the CRC that layout gives the changed frame. One model serves every case
(the kind, copies, `at` and lane count are signals)."""

import random

import pytest
from migen import *

from monet.cores.common.layouts import *
from monet.cores.link.lanes import LaneDeskew, LaneStriper
from monet.cores.phy.codes import FAULT_KINDS
from monet.cores.phy.channel import SimChannelDirection
from monet.cores.phy.injector import TYPE_FLIP
from monet.cores.tests.verilog_sim import run_simulation

from .test_packing import documented_frame, header, words


class Bench(Module):
    """Beats striped over the lanes, through a channel direction (its injector beside the serializer, a beat a
    cycle, 1 cycle of delay), and rebuilt."""
    def __init__(self):
        self.lanes_log2 = Signal(2)
        self.submodules.striper = LaneStriper(self.lanes_log2)
        self.block_ps = Signal(16, reset=500)
        self.submodules.dir = SimChannelDirection(self.lanes_log2, self.block_ps, 4000, Constant(1, 16),
                                                  [Constant(0, 8)] * MAX_LANES, depth=16)
        self.submodules.deskew = LaneDeskew(self.lanes_log2)
        self.injector = self.dir.injector
        self.sink, self.source = self.striper.sink, self.deskew.source
        self.comb += [self.striper.source.connect(self.dir.sink), self.source.ready.eq(1)]
        for line, lane in zip(self.dir.sources, self.deskew.sinks):
            self.comb += line.connect(lane)


BENCH = Bench()
LINE = random.Random(5).getrandbits(512)
FIELDS = dict(ack=0x12, nak=0, credits=3)
READ = documented_frame([[header(T_RD_REQ, 0x21, 0x400)]], seq=5, **FIELDS)
ANSWER = documented_frame([[header(T_RD_RSP, 0x22, 0x401)] + words(LINE)], seq=6, **FIELDS)
LATER = documented_frame([[header(T_RD_REQ, 0x23, 0x402)]], seq=7, **FIELDS)
ALONE = documented_frame([], seq=8, **FIELDS)   # a trailer alone: acks and credits, no transaction


def beats_of(frame):
    """A frame in beats of its own, as the framer sends a frame when nothing is queued behind it."""
    return [frame[i:i + BEAT_BLOCKS] for i in range(0, len(frame), BEAT_BLOCKS)]


def run(beats, kind="none", lanes=8, copies=1, at=0, gap=0, lead=0, block_ps=500, stamps=None):
    """Arms the injector with `kind`, then offers `beats` (lists of (block, ctrl)), `gap` idle cycles after each; returns
    the beats that come out and the injector's applied count, frame blocks and sequence number."""
    dut, out = BENCH, []

    def drive():
        yield dut.lanes_log2.eq(lanes.bit_length() - 1)
        yield dut.block_ps.eq(block_ps)
        yield dut.injector.kind.eq(FAULT_KINDS[kind])
        yield dut.injector.copies.eq(copies)
        yield dut.injector.at.eq(at)
        yield dut.injector.arm.eq(1)
        yield
        yield dut.injector.arm.eq(0)
        for _ in range(lead):
            yield
        for beat in beats:
            yield dut.sink.valid.eq(1)
            yield dut.sink.count.eq(len(beat))
            yield dut.sink.data.eq(sum(b << (64 * i) for i, (b, _) in enumerate(beat)))
            yield dut.sink.ctrl.eq(sum(c << i for i, (_, c) in enumerate(beat)))
            yield
            while not (yield dut.sink.ready):
                yield
            yield dut.sink.valid.eq(0)
            for _ in range(gap):
                yield
        yield dut.sink.valid.eq(0)

    def watch():
        for cycle in range(40 + lead + (8 + gap) * len(beats) + copies * 3 * block_ps // 500):
            if (yield dut.source.valid):
                if stamps is not None:
                    stamps.append(cycle)
                data, ctrl, count = (yield dut.source.data), (yield dut.source.ctrl), (yield dut.source.count)
                out.append([(data >> (64 * i) & (2**64 - 1), ctrl >> i & 1) for i in range(count)])
            yield
        out.append(((yield dut.injector.applied), (yield dut.injector.frame_blocks), (yield dut.injector.frame_seq),
                    (yield dut.injector.pending), (yield dut.dir.errors.blocks)))

    run_simulation(dut, [drive(), watch()])
    *status, carried = out.pop()
    if stamps is not None:
        stamps.append(carried)
    return out, tuple(status)


def blocks(beats):
    return [b for beat in beats for b in beat]


def retyped(frame):
    """The documented frame whose first header's type has TYPE_FLIP flipped, with its own CRC."""
    units = [[(frame[0][0] ^ TYPE_FLIP, 1)] + frame[1:-1]]
    low = frame[-1][0] & (2**32 - 1)
    return documented_frame(units, seq=low >> 4 & 0x3FF, **FIELDS)


STREAM = beats_of(ALONE) + beats_of(READ) + beats_of(ANSWER) + beats_of(LATER)


@pytest.mark.parametrize("lanes", [1, 8])
def test_unarmed_every_beat_passes_unchanged(lanes):
    out, (applied, _, _, pending) = run(STREAM, lanes=lanes)
    assert out == STREAM
    assert pending == 0


@pytest.mark.parametrize("lanes", [1, 8])
@pytest.mark.parametrize("kind,first,second", [
    ("crc",       [(READ[0][0], 1), (READ[1][0] ^ 1 << 63, 1)], None),
    ("type",      retyped(READ), None),
    ("truncated", READ[:1], None),
    ("duplicate", READ + READ, None),
    ("skip",      [], None),
])
def test_the_first_frame_with_a_transaction_gets_the_fault_and_nothing_else_changes(kind, first, second, lanes):
    applied0 = run([], lanes=lanes)[1][0]
    out, (applied, frame_blocks, frame_seq, pending) = run(STREAM, kind, lanes=lanes)
    assert blocks(out) == ALONE + first + ANSWER + LATER
    assert (applied - applied0, frame_blocks, frame_seq, pending) == (1, len(READ), 5, 0)


def test_a_truncated_line_is_cut_inside_its_unit_and_a_retyped_one_keeps_a_valid_crc():
    out, _ = run(beats_of(ANSWER) + beats_of(LATER), "truncated")
    assert blocks(out) == ANSWER[:5] + LATER
    out, _ = run(beats_of(ANSWER) + beats_of(LATER), "type")
    assert blocks(out) == retyped(ANSWER) + LATER


@pytest.mark.parametrize("lanes,block_ps", [(8, 500), (1, 4400)])
def test_a_flood_sends_the_frame_in_full_beats_each_for_its_time_on_the_lanes(lanes, block_ps):
    stamps = []
    out, _ = run(beats_of(READ) + beats_of(LATER), "flood", copies=9, lanes=lanes, block_ps=block_ps,
                 stamps=stamps)
    carried = stamps.pop()
    assert blocks(out) == READ * 9 + LATER
    assert [len(beat) for beat in out] == [8, 8, 2, len(LATER)]
    assert carried == 9 * len(READ) + len(LATER)   # the lanes carry the beats' blocks, no more
    # A full beat over 1 lane at 15 Gb/s is 8 blocks of 4.4 ns: the next leaves 9 cycles later (one a cycle over 8).
    assert stamps[1] - stamps[0] == (9 if lanes == 1 else 1)


def test_frames_that_share_a_beat_pass_and_the_next_alone_is_taken():
    shared = [READ + LATER]
    out, (_, _, frame_seq, _) = run(shared + beats_of(ANSWER) + beats_of(LATER), "skip")
    assert blocks(out) == READ + LATER + LATER
    assert frame_seq == 6


def test_a_line_whose_trailer_comes_with_the_next_frame_is_sent_on_unchanged():
    # The answer's second beat carries the next frame too: the frame does not travel alone.
    beats = [ANSWER[:8], ANSWER[8:] + LATER, READ]
    out, (_, _, frame_seq, _) = run(beats, "duplicate")
    assert blocks(out) == ANSWER + LATER + READ + READ
    assert frame_seq == 5


def test_frames_before_the_armed_delay_pass():
    out, (_, _, frame_seq, _) = run(beats_of(READ) + beats_of(ANSWER), "skip", at=3, gap=4)
    assert blocks(out) == READ
    assert frame_seq == 6


def arm(kind, at=0):
    yield BENCH.injector.kind.eq(FAULT_KINDS[kind])
    yield BENCH.injector.at.eq(at)
    yield BENCH.injector.arm.eq(1)
    yield
    yield BENCH.injector.arm.eq(0)


def test_arming_again_replaces_the_setting_and_none_disarms():
    states = []

    def bench():
        yield BENCH.lanes_log2.eq(3)
        yield from arm("skip", at=50)
        yield
        states.append((yield BENCH.injector.pending))
        yield from arm("none")   # stands down
        yield
        states.append((yield BENCH.injector.pending))
        yield from arm("skip", at=50)
        yield from arm("duplicate", at=1)   # replaces the skip and its delay
        for _ in range(3):
            yield
        states.append((yield BENCH.injector.fsm.state))

    run_simulation(BENCH, bench())
    hunt = BENCH.injector.fsm.encoding["HUNT"]
    assert states == [1, 0, hunt]


@pytest.mark.parametrize("kind", ["lane", "down"])
def test_a_channel_fault_finds_its_frame_and_lets_it_pass(kind):
    applied0 = run([])[1][0]
    out, (applied, _, _, pending) = run(STREAM, kind)
    assert out == STREAM
    assert (applied - applied0, pending) == (1, 0)


def test_a_long_frame_twice_goes_whole_each_time():
    out, _ = run(beats_of(ANSWER) + beats_of(LATER), "duplicate")
    assert blocks(out) == ANSWER + ANSWER + LATER


def test_four_beats_without_a_trailer_are_sent_on_unchanged():
    # Longer than the injector holds (the fourth beat, not full, ends no frame either): sent as it came, and the
    # next frame that travels alone is taken.
    body = [(0x100 + i, 0) for i in range(8)]
    beats = [[(header(T_RD_RSP, 5, 0x600)[0], 1)] + body[1:], body, body, body[:4], READ]
    out, (_, _, frame_seq, _) = run(beats, "skip")
    assert blocks(out) == blocks(beats[:4])
    assert frame_seq == 5


@pytest.mark.parametrize("at", [0, 8])
def test_the_injector_looks_for_its_frame_at_cycles_after_it_is_armed(at):
    out, _ = run(beats_of(READ), "skip", at=at, lead=at)
    assert blocks(out) == []          # taken: the first cycle it looks
    if at:
        out, _ = run(beats_of(READ), "skip", at=at, lead=at - 1)
        assert blocks(out) == READ    # a cycle sooner: passed
