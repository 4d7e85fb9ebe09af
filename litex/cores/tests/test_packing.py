"""PackedFramer -> PackedDeframer (litex/cores/link/packing.py): transactions survive, frames share a
trailer under load, consecutive lines pair under one header, a lone request leaves at once, and a
corrupted frame is dropped whole (counted repairable, its bit located, when one bit was flipped).

Runs on the generated Verilog in Verilator (`verilog_sim`). The framer's frame size, the bit to corrupt and
the beats fed to the deframer directly are signals, so one model serves every case but the deframer built
too shallow: a model is a minute of a cold CI run."""

import random

import pytest
from migen import *

from litex.soc.interconnect import stream

from monet.cores.common.layouts import *
from monet.cores.link.packing import CommitFIFO, PackedFramer, PackedDeframer
from monet.cores.link.repair import SLOTS, TAIL_CYCLES, syndrome_of_bit
from monet.cores.tests.verilog_sim import run_simulation

from .link_responder import offer
from .test_crc import crc32_mpeg2

FULL = 2**LINE_BYTES - 1


class Loop(Module):
    """Beats from the framer into the deframer while `ready` (the link takes a beat); beat number
    `flip_beat` gets bit `flip_bit` inverted. A beat on `inject` goes to the deframer instead (the framer
    idle), for frames the framer would never build. The deframer's transactions are taken while `take`."""
    def __init__(self, deframer_depth=64):
        self.submodules.framer = PackedFramer()
        self.submodules.deframer = PackedDeframer(depth=deframer_depth)
        self.ready = Signal(reset=1)
        self.take = Signal(reset=1)
        self.flip_beat = Signal(16, reset=2**16 - 1)
        self.flip_bit = Signal(max=len(self.framer.source.data))
        self.inject = inject = stream.Endpoint(beat_layout)
        src, dst = self.framer.source, self.deframer.sink
        beat = Signal(16)
        self.sync += If(src.valid & src.ready, beat.eq(beat + 1))
        self.comb += [
            dst.valid.eq(src.valid & self.ready | inject.valid),
            dst.data.eq(Mux(inject.valid, inject.data, src.data ^ Mux(beat == self.flip_beat, 1 << self.flip_bit, 0))),
            dst.ctrl.eq(Mux(inject.valid, inject.ctrl, src.ctrl)),
            dst.count.eq(Mux(inject.valid, inject.count, src.count)),
            src.ready.eq(dst.ready & self.ready),
            inject.ready.eq(dst.ready),
            self.deframer.source.ready.eq(self.take),
        ]


# Made once, so each is converted to Verilog once per test process.
LOOP = Loop()
SHALLOW_LOOP = Loop(deframer_depth=20)


def random_txn(rng, kinds=(T_RD_REQ, T_WR_REQ, T_RD_RSP, T_WR_ACK), after=None):
    """A random transaction; with `after`, often of the same type on the next line (a pair candidate)."""
    t = rng.choice(kinds)
    laddr = rng.getrandbits(36)
    if after is not None and rng.random() < 0.6:
        t, laddr = after["type"], (after["laddr"] + 1) % 2**36
    mask = FULL if rng.random() < 0.7 else rng.getrandbits(64)
    return dict(type=t, tag=rng.randrange(256), laddr=laddr,
                mask=mask if t == T_WR_REQ else FULL, data=rng.getrandbits(512) if has_data(t) else 0)


def exchange(txns, max_units=8, flip_beat=2**16 - 1, flip_bit=0, gap=0, ready_every=1, shallow=False,
             seqs=None, take_from=0):
    """Sends `txns` through framer and deframer (sequence numbers 0, 1, ... unless `seqs` gives them);
    returns what the deframer delivers, the framer's (cycle, count) beats, and both ends' counters.
    `shallow`: a deframer of 20 blocks instead of 64. `gap`: idle cycles after each transaction, or a list
    of them, one a transaction. `take_from`: the cycle from which the deframer's transactions are taken."""
    dut = SHALLOW_LOOP if shallow else LOOP
    gaps = gap if isinstance(gap, list) else [gap] * len(txns)
    out, beats, stats, delivered = [], [], {}, []
    stats["delivered_at"] = delivered

    def send():
        yield dut.framer.max_units.eq(max_units)
        yield dut.flip_beat.eq(flip_beat)
        yield dut.flip_bit.eq(flip_bit)
        for seq, t, after in zip(seqs or range(len(txns)), txns, gaps):
            yield dut.framer.sink.valid.eq(1)
            yield dut.framer.sink.seq.eq(seq % 2**SEQ_BITS)
            for k, v in t.items():
                yield getattr(dut.framer.sink, k).eq(v)
            yield
            while not (yield dut.framer.sink.ready):
                yield
            yield dut.framer.sink.valid.eq(0)
            for _ in range(after):
                yield
        yield dut.framer.sink.valid.eq(0)

    def watch():
        for cycle in range(40 + 12 * len(txns) * 2 + 12 * sum(gaps)):
            yield dut.ready.eq(cycle % ready_every == 0)
            yield dut.take.eq(cycle >= take_from)
            if (yield dut.framer.source.valid) and (yield dut.framer.source.ready):
                beats.append((cycle, (yield dut.framer.source.count)))
            src = dut.deframer.source
            if (yield src.valid) and (yield src.ready):
                got = {}
                for k in ("type", "tag", "laddr", "mask", "data"):
                    got[k] = yield getattr(src, k)
                out.append(got)
                delivered.append(cycle)
            yield
        stats["crc_errors"] = yield dut.deframer.crc_errors
        stats["frames"] = yield dut.deframer.frames
        stats["overflow"] = yield dut.deframer.overflow
        stats["commit_overflow"] = yield dut.deframer.commit_overflow
        stats["pairs"] = yield dut.framer.pairs
        stats["sent_frames"] = yield dut.framer.frames

    run_simulation(dut, [send(), watch()])
    return out, beats, stats


def same(sent, got):
    if (got["type"], got["tag"], got["laddr"]) != (sent["type"], sent["tag"], sent["laddr"]):
        return False
    if has_data(sent["type"]) and got["data"] != sent["data"]:
        return False
    return sent["type"] != T_WR_REQ or got["mask"] == sent["mask"]


def random_stream(rng, n):
    txns = [random_txn(rng)]
    while len(txns) < n:
        txns.append(random_txn(rng, after=txns[-1]))
    return txns


@pytest.mark.parametrize("max_units,ready_every,gap", [(1, 1, 0), (4, 3, 0), (8, 2, 1)])
def test_transactions_survive_back_to_back(max_units, ready_every, gap):
    rng = random.Random(max_units * 10 + ready_every + 100 * gap)
    txns = random_stream(rng, 20)
    out, beats, stats = exchange(txns, max_units=max_units, ready_every=ready_every, gap=gap)
    assert stats["crc_errors"] == 0 and stats["overflow"] == 0
    assert len(out) == len(txns) and all(same(s, g) for s, g in zip(txns, out))
    if gap == 0 and ready_every > 1:
        assert stats["pairs"] > 0


def test_consecutive_lines_pair_under_one_header():
    rng = random.Random(9)
    txns = [dict(type=T_WR_REQ, tag=i, laddr=100 + i, mask=FULL, data=rng.getrandbits(512)) for i in range(32)]
    out, beats, stats = exchange(txns, max_units=8, ready_every=2)
    blocks = sum(c for _, c in beats)
    assert stats["pairs"] >= 14                                      # nearly every line found its partner
    assert blocks == 32 * 9 - stats["pairs"] * 1 + stats["frames"]    # a pair saves one header
    assert len(out) == 32 and all(same(s, g) for s, g in zip(txns, out))


LONE = {   # a transaction alone on an idle link, and the beats of its frame (the unit and its trailer)
    "read request": (dict(type=T_RD_REQ, tag=3, laddr=0x40, mask=FULL, data=0), [2]),
    "write ack":    (dict(type=T_WR_ACK, tag=9, laddr=0x7, mask=FULL, data=0), [2]),
    "read response": (dict(type=T_RD_RSP, tag=200, laddr=2**36 - 1, mask=FULL, data=2**512 - 3), [8, 2]),
    "masked write": (dict(type=T_WR_REQ, tag=17, laddr=0x123456789, mask=0xF0F0, data=2**511 + 5), [8, 3]),
}


@pytest.mark.parametrize("kind", LONE)
def test_a_lone_transaction_cuts_through_two_cycles_after_it_comes(kind):
    """Both cut-throughs. The framer's: offered in the testbench's cycle 1, the transaction lands (cycle 2)
    and its whole frame is in the express buffer in cycle 3, whose first beat leaves then, the rest the next
    cycle (through the packing stages the first beat left in cycle 5). The deframer's: the frame is checked
    from its beats and delivered around the commit FIFO 2 cycles after its last beat (6 through the ring),
    once: the ring's copy of it is neither delivered nor counted again."""
    t, counts = LONE[kind]
    out, beats, stats = exchange([t])
    assert [c for _, c in beats] == counts
    assert [cycle for cycle, _ in beats] == list(range(3, 3 + len(counts)))
    assert stats["delivered_at"] == [beats[-1][0] + 2]
    assert len(out) == 1 and same(t, out[0])
    assert stats["sent_frames"] == stats["frames"] == 1 and stats["crc_errors"] == 0


def test_a_lone_frame_its_consumer_does_not_take_at_once_waits_in_the_commit_fifo():
    """The cut-through's transaction goes around the commit FIFO only when it is taken in its frame's commit
    cycle; otherwise it waits in the FIFO like any other, once, and those behind it follow it in order."""
    t, _ = LONE["read response"]
    later = dict(LONE["read request"][0], tag=4)
    out, _, stats = exchange([t, later], gap=[12, 0], take_from=30)
    assert [g["tag"] for g in out] == [t["tag"], later["tag"]] and same(t, out[0])
    assert stats["delivered_at"] == [31, 32]    # `take` set in cycle 30 is seen from 31


@pytest.mark.parametrize("kind,flip_beat,flip_bit", [("read request", 0, 64 + 40), ("read response", 0, 64 * 3 + 9),
                                                      ("masked write", 1, 64 + 63), ("read response", 1, 64 + 33)])
def test_a_damaged_lone_frame_is_dropped_and_counted_once(kind, flip_beat, flip_bit):
    """The deframer's cut-through checks the CRC of what it ends: a bit flipped in the frame's first beat or
    its rest (data, or a trailer field) drops the frame, counted once as a CRC error."""
    t, _ = LONE[kind]
    out, _, stats = exchange([t], flip_beat=flip_beat, flip_bit=flip_bit)
    assert out == [] and stats["frames"] == 1 and stats["crc_errors"] == 1


def test_a_line_and_what_shares_its_last_beat_are_both_delivered():
    """A line's rest may share its beat with the next frame: the cut-through ends the line, the ring the
    frame behind it."""
    line = random.Random(4).getrandbits(512)
    frames = [documented_frame([[header(T_RD_RSP, 7, 0x50)] + words(line)], seq=0, ack=0, nak=0, credits=0),
              documented_frame([[header(T_RD_REQ, 8, 0x51)]], seq=1, ack=0, nak=0, credits=0)]
    out, stats = deframe(frames)
    assert out == [(T_RD_RSP, 7, 0x50), (T_RD_REQ, 8, 0x51)]
    assert stats == {"frames": 2, "crc_errors": 0, "overflow": 0, "trailers": [(0, 0, 0, 0), (1, 0, 0, 0)]}


def inject_beats(beats):
    """Offers the deframer beats directly, each (blocks, idle cycles after it), blocks as (block, ctrl)."""
    inject = LOOP.inject
    for blocks, idle in beats:
        yield inject.valid.eq(1)
        yield inject.count.eq(len(blocks))
        yield inject.data.eq(sum(b << (64 * i) for i, (b, _) in enumerate(blocks)))
        yield inject.ctrl.eq(sum(c << i for i, (_, c) in enumerate(blocks)))
        yield
        yield inject.valid.eq(0)
        for _ in range(idle):
            yield


def deframe_beats(beats, cycles=60):
    """Feeds beats (as inject_beats takes them) to the deframer; returns the (type, tag, laddr) it delivers
    with the cycle of each, and its frame and CRC-error counts."""
    dut = LOOP.deframer
    out, stats = [], {}

    def watch():
        for cycle in range(cycles):
            if (yield dut.source.valid):
                out.append(((yield dut.source.type), (yield dut.source.tag), (yield dut.source.laddr), cycle))
            yield
        stats.update(frames=(yield dut.frames), crc_errors=(yield dut.crc_errors))

    run_simulation(LOOP, [inject_beats(beats), watch()])
    return out, stats


def test_a_frame_left_open_by_the_ring_is_not_taken_for_a_new_one():
    """Two reads in a beat without their trailer leave the ring's frame open; when the trailer comes alone
    many cycles later, the ring has nothing else left, but the trailer ends the open frame, not one of its
    own: both reads are delivered, one frame, no CRC error."""
    frame = documented_frame([[header(T_RD_REQ, 1, 0x70)], [header(T_RD_REQ, 2, 0x71)]], seq=0, ack=0, nak=0,
                             credits=0)
    out, stats = deframe_beats([(frame[:2], 12), (frame[2:], 0)])
    assert [o[:3] for o in out] == [(T_RD_REQ, 1, 0x70), (T_RD_REQ, 2, 0x71)]
    assert stats == {"frames": 1, "crc_errors": 0}


def test_the_cut_through_takes_frames_again_once_the_ring_has_emptied():
    """A beat of two frames is the ring's (the cut-through leaves what is behind its frame to it); once the
    ring has nothing left, a lone request is again delivered 2 cycles after its beat."""
    both = (documented_frame([[header(T_RD_REQ, 1, 0x80)]], seq=0, ack=0, nak=0, credits=0) +
            documented_frame([[header(T_RD_REQ, 2, 0x81)]], seq=1, ack=0, nak=0, credits=0))
    lone = documented_frame([[header(T_RD_REQ, 3, 0x82)]], seq=2, ack=0, nak=0, credits=0)
    out, stats = deframe_beats([(both, 20), (lone, 0)])
    assert [o[:3] for o in out] == [(T_RD_REQ, 1, 0x80), (T_RD_REQ, 2, 0x81), (T_RD_REQ, 3, 0x82)]
    # The lone beat is offered in cycle 21 (the first beat in 0, then 20 idle cycles) and taken in 22.
    assert out[2][3] - out[1][3] > 2 and out[2][3] == 24
    assert stats == {"frames": 3, "crc_errors": 0}


def test_a_line_whose_next_beat_is_not_its_rest_is_left_to_the_ring():
    """A line's first beat starts the cut-through, but a ctrl block where its last data block should be is
    not its rest: the ring skips the broken frame as junk (one CRC error) and delivers the next."""
    line = random.Random(5).getrandbits(512)
    broken = documented_frame([[header(T_WR_REQ, 4, 0x60)] + words(line)[:7] + [(line >> 448, 1)]],
                              seq=0, ack=0, nak=0, credits=0)
    frames = [broken, documented_frame([[header(T_RD_REQ, 9, 0x61)]], seq=0, ack=0, nak=0, credits=0)]
    out, stats = deframe(frames)
    assert out == [(T_RD_REQ, 9, 0x61)]
    assert stats == {"frames": 2, "crc_errors": 1, "overflow": 0, "trailers": [(0, 0, 0, 0)]}


def test_under_load_beats_are_full_and_frames_share_a_trailer():
    rng = random.Random(5)
    txns = [dict(type=T_WR_REQ, tag=i, laddr=2 * i, mask=FULL, data=rng.getrandbits(512)) for i in range(24)]
    out, beats, stats = exchange(txns, max_units=8, ready_every=2)
    blocks = sum(c for _, c in beats)
    assert blocks == 24 * 9 + stats["frames"]          # one trailer per frame
    assert stats["frames"] <= 24 // 8 + 1
    assert sum(1 for _, c in beats if c < 8) <= 1       # a partial beat only when the queue ran dry
    assert len(out) == 24


def test_at_full_rate_lines_leave_a_full_beat_every_cycle():
    """The link taking a beat every cycle, back-to-back lines (9 blocks each, more than a beat) keep the
    framer's buffer from running dry: a full beat every cycle from the first to the last but one. A unit
    goes in while the beat leaving makes room for it (the buffer up to 8 blocks over its static room)."""
    rng = random.Random(12)
    txns = [dict(type=T_WR_REQ, tag=i, laddr=2 * i, mask=FULL, data=rng.getrandbits(512)) for i in range(32)]
    out, beats, stats = exchange(txns, max_units=8)
    cycles = [c for c, _ in beats]
    assert cycles == list(range(cycles[0], cycles[0] + len(beats)))
    assert all(count == 8 for _, count in beats[:-1])
    assert len(out) == 32 and stats["crc_errors"] == 0


@pytest.mark.parametrize("flip_beat,flip_bit,step", [(0, 7, 2), (3, 64 * 7 + 33, 2), (2, 64 * 5 + 1, 1)])
def test_a_corrupted_frame_is_dropped_whole_and_the_next_survives(flip_beat, flip_bit, step):
    # step 1: consecutive lines, so the frames carry pairs; step 2: single lines.
    rng = random.Random(flip_beat)
    txns = [dict(type=T_RD_RSP, tag=i, laddr=i * step, mask=FULL, data=rng.getrandbits(512)) for i in range(16)]
    out, beats, stats = exchange(txns, max_units=4, flip_beat=flip_beat, flip_bit=flip_bit, ready_every=2)
    assert stats["crc_errors"] == 1
    got_tags = [g["tag"] for g in out]
    lost = sorted(set(range(16)) - set(got_tags))
    assert 1 <= len(lost) <= 4 * (3 - step) and lost == list(range(lost[0], lost[0] + len(lost)))
    assert all(same(txns[g["tag"]], g) for g in out)


def test_the_ring_fills_behind_a_cut_through_frame_the_link_holds():
    # A lone line cuts through; the link takes a beat only every 4th cycle, so the lines that come 2 cycles
    # behind it go into the ring while the cut-through frame still waits to leave: the beats come from the
    # express buffer first, then from the ring, and every line arrives whole.
    rng = random.Random(4)
    txns = [dict(type=T_RD_RSP, tag=i, laddr=3 * i, mask=FULL, data=rng.getrandbits(512)) for i in range(4)]
    out, _, stats = exchange(txns, gap=[2, 0, 0, 0], ready_every=4)
    assert stats["crc_errors"] == 0 and len(out) == len(txns) and all(same(t, g) for t, g in zip(txns, out))


def framed_blocks(txns, ack, nak, credits):
    """(block, ctrl) of every block the framer alone sends for `txns` (dicts with a `seq`), the link taking
    every beat."""
    framer = LOOP.framer
    blocks = []

    def send():
        yield framer.ack.eq(ack)
        yield framer.nak.eq(nak)
        yield framer.credits.eq(credits)
        yield from offer(framer.sink, txns)

    run_simulation(LOOP, [send(), sent_blocks(framer, 20 + 20 * len(txns), blocks)])
    return blocks


def sent_blocks(framer, cycles, blocks, trailers_made=None):
    """Generator: appends (block, ctrl) of every block `framer` sends in `cycles` cycles, the link taking
    every beat; appends to `trailers_made` each cycle the framer says it made a trailer (`ctrl_sent`)."""
    for _ in range(cycles):
        if (yield framer.source.valid):
            data, ctrl = (yield framer.source.data), (yield framer.source.ctrl)
            blocks.extend((data >> (64 * i) & (2**64 - 1), ctrl >> i & 1) for i in range((yield framer.source.count)))
        if trailers_made is not None and (yield framer.ctrl_sent):
            trailers_made.append(1)
        yield


def test_a_trailer_alone_carries_the_next_sequence_number_to_send():
    # Line responses back to back with a trailer alone asked for all along: the ring's control frames come
    # between and after them. Each carries a sequence number past every transaction sent before it, the
    # next to send once they are all sent (the retry buffer's, here `sink.seq` as the test leaves it): what
    # the peer's checker compares with the one it expects to end a wait for a replay. Each is reported made.
    framer = LOOP.framer
    rng = random.Random(3)
    txns = [dict(type=T_RD_RSP, tag=i, laddr=2 * i, mask=FULL, data=rng.getrandbits(512), seq=10 + i)
            for i in range(8)]
    blocks = []

    def send():
        yield framer.sink.seq.eq(10)
        yield
        yield framer.ctrl_request.eq(1)
        yield from offer(framer.sink, txns)
        yield framer.sink.seq.eq(18)
        for _ in range(8):
            yield
        yield framer.ctrl_request.eq(0)

    trailers_made = []
    run_simulation(LOOP, [send(), sent_blocks(framer, 200, blocks, trailers_made)])
    sent_past, lone = 10, []   # one past the last transaction's sequence number, on the wire so far
    for k, (block, ctrl) in enumerate(blocks):
        if ctrl and block & 0xF == T_TRAILER:
            seq = block >> 4 & 0x7FF
            if k == 0 or blocks[k - 1][1] and blocks[k - 1][0] & 0xF == T_TRAILER:
                lone.append((seq, sent_past))
        elif ctrl:
            sent_past = 10 + (block >> 4 & 0x1FF) + 1    # a header: its tag is its transaction's index
    assert len(lone) >= 2 and all(seq >= past for seq, past in lone), lone
    assert lone[-1] == (18, 18)
    # Each trailer on the wire was reported made, once (the checker's nak and ack are marked sent by it).
    assert len(trailers_made) == sum(1 for block, ctrl in blocks if ctrl and block & 0xF == T_TRAILER)


def documented_frame(units, seq, ack, nak, credits):
    """A frame as packing.py's docstring lays it out, built here from that text: each unit's blocks as
    given, then the trailer [3:0] 0xF, [14:4] seq, [25:15] ack, [26] nak, [31:27] credits, [63:32] the
    CRC-32/MPEG-2 (from zlib) of the units' blocks, block 0 first and each most significant byte first,
    followed by the trailer's bits [31:0]."""
    blocks = [b for unit in units for b in unit]
    low = 0xF | seq << 4 | ack << 15 | nak << 26 | credits << 27
    crc = crc32_mpeg2(b"".join(block.to_bytes(8, "big") for block, _ in blocks) + low.to_bytes(4, "big"))
    return blocks + [(low | crc << 32, 1)]


def header(typ, tag, laddr, has_mask=0, pair_tag=None):
    """A header block as doc/wire-format.md lays it out: [3:0] type, [12:4] tag, [48:13] laddr, [49] has_mask,
    [50] pair, [59:51] tag2."""
    pair = 0 if pair_tag is None else 1 << 50 | pair_tag << 51
    return (typ | tag << 4 | laddr << 13 | has_mask << 49 | pair, 1)


def words(line):
    return [(line >> (64 * i) & (2**64 - 1), 0) for i in range(8)]


def read(tag, laddr, seq):
    return dict(type=T_RD_REQ, tag=tag, laddr=laddr, mask=FULL, data=0, seq=seq)


def test_the_wire_format_is_the_documented_one():
    # A lone read; then, back to back: a masked write, two read responses to consecutive lines (a pair) and
    # a read, which closes the frame (a unit without a line goes last in its frame); the seven reads behind
    # it each in a frame of its own, and so the two of a replay from sequence 12.
    line = random.Random(3).getrandbits(512)
    other = line ^ (1 << 511) ^ 1
    lone = [read(0x15A, 0x9_8765_4321, 0x7FF)]
    stream = ([dict(type=T_WR_REQ, tag=0x11, laddr=0x40, mask=0xF0F0_0000_0000_00FF, data=line, seq=7),
               dict(type=T_RD_RSP, tag=0x22, laddr=0x80, mask=FULL, data=line, seq=8),
               dict(type=T_RD_RSP, tag=0x133, laddr=0x81, mask=FULL, data=other, seq=9)]
              + [read(0x40 + n, 0x100 + n, 10 + n) for n in range(8)]
              + [read(0x60, 0x200, 12), read(0x61, 0x201, 13)])
    assert framed_blocks(lone, ack=0x4A5, nak=1, credits=0x15) == documented_frame(
        [[header(T_RD_REQ, 0x15A, 0x9_8765_4321)]], seq=0x7FF, ack=0x4A5, nak=1, credits=0x15)
    fields = dict(ack=0x55A, nak=0, credits=0x1F)
    assert framed_blocks(stream, **fields) == (
        documented_frame([[header(T_WR_REQ, 0x11, 0x40, has_mask=1), (0xF0F0_0000_0000_00FF, 0)] + words(line),
                          [header(T_RD_RSP, 0x22, 0x80, pair_tag=0x133)] + words(line) + words(other),
                          [header(T_RD_REQ, 0x40, 0x100)]], seq=7, **fields)
        + sum((documented_frame([[header(T_RD_REQ, 0x40 + n, 0x100 + n)]], seq=10 + n, **fields)
               for n in range(1, 8)), [])
        + documented_frame([[header(T_RD_REQ, 0x60, 0x200)]], seq=12, **fields)
        + documented_frame([[header(T_RD_REQ, 0x61, 0x201)]], seq=13, **fields))


def test_a_stream_longer_than_every_buffer_wraps_them_all():
    # 150 line transactions (singles, pairs, masked writes) through the framer and deframer at full rate:
    # every buffer and the commit FIFO (64) wrap around more than once. (Lines only: the deframer parses a
    # unit a cycle, so header-only units mixed with lines at full rate overflow it; see issue 17's note.)
    rng = random.Random(150)
    txns = [random_txn(rng, kinds=(T_WR_REQ, T_RD_RSP))]
    while len(txns) < 150:
        txns.append(random_txn(rng, kinds=(T_WR_REQ, T_RD_RSP), after=txns[-1]))
    out, _, stats = exchange(txns, max_units=8)
    assert (stats["crc_errors"], stats["overflow"]) == (0, 0)
    assert len(out) == 150 and all(same(s, g) for s, g in zip(txns, out))


@pytest.mark.parametrize("step,lost", [(1, 16), (2, 8)])
def test_a_damaged_header_at_full_rate_costs_only_its_frame(step, lost):
    # The first header's type turned to junk: its data blocks are skipped up to the next ctrl block faster
    # than beats arrive, so the buffer never overflows and the next frames arrive whole. (Skipping one
    # block a cycle lost every later frame here.) step 1: a frame of 8 pairs (16 lines); step 2: 8 lines.
    rng = random.Random(step)
    txns = [dict(type=T_RD_RSP, tag=i, laddr=i * step, mask=FULL, data=rng.getrandbits(512)) for i in range(24)]
    out, _, stats = exchange(txns, max_units=8, flip_beat=0, flip_bit=1, ready_every=1)
    assert (stats["crc_errors"], stats["overflow"]) == (1, 0)
    assert [g["tag"] for g in out] == list(range(lost, 24))
    assert all(same(txns[g["tag"]], g) for g in out)


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_transactions_survive_random_gaps_and_link_stalls(seed):
    # Idle cycles between transactions and a link that takes a beat only every few cycles: partial beats,
    # frames closed early, trailers sent on their own, pairs cut across beats at every offset.
    rng = random.Random(seed)
    txns = random_stream(rng, 120)
    gaps = [rng.choice([0, 0, 0, 0, 1, 2, 3, 7, 15]) for _ in txns]
    out, _, stats = exchange(txns, max_units=rng.choice([1, 3, 8]), gap=gaps, ready_every=rng.choice([1, 2, 3]))
    assert (stats["crc_errors"], stats["overflow"]) == (0, 0)
    assert len(out) == len(txns) and all(same(s, g) for s, g in zip(txns, out))


def test_lines_pair_only_under_consecutive_sequence_numbers():
    # Consecutive lines, but the second's sequence number is 2 ahead (the first's + 1 is what the deframer
    # gives the second line of a pair): two frames' worth of units, not a pair.
    rng = random.Random(5)
    txns = [dict(type=T_RD_RSP, tag=i, laddr=7 + i, mask=FULL, data=rng.getrandbits(512)) for i in range(2)]
    out, _, stats = exchange(txns, seqs=[4, 6])
    assert stats["pairs"] == 0 and [g["tag"] for g in out] == [0, 1]
    out, _, stats = exchange(txns, seqs=[4, 5])
    assert stats["pairs"] == 1 and [g["tag"] for g in out] == [0, 1]
    assert stats["sent_frames"] == stats["frames"] >= 1


def test_lines_pair_only_with_a_line_of_their_own_type():
    # A write behind a read response, or a read request behind a write, on the next line under the next sequence
    # number: each carries or asks for a line, but the two are not one pair.
    rng = random.Random(7)
    for first, second in [(T_RD_RSP, T_WR_REQ), (T_WR_REQ, T_RD_REQ)]:
        txns = [dict(type=t, tag=i, laddr=7 + i, mask=FULL, data=rng.getrandbits(512) if has_data(t) else 0)
                for i, t in enumerate((first, second))]
        out, _, stats = exchange(txns, seqs=[4, 5])
        assert stats["pairs"] == 0 and len(out) == 2 and all(same(t, g) for t, g in zip(txns, out))


def test_lines_pair_across_carries_of_the_line_address_and_the_sequence_number():
    # The framer adds one to a line address and a sequence number bit by bit (no carry chain): a carry that
    # runs through every bit of both, a wrap of both, and addresses that differ by one only in a high bit.
    rng = random.Random(6)
    def line(tag, laddr):
        return dict(type=T_WR_REQ, tag=tag, laddr=laddr, mask=FULL, data=rng.getrandbits(512))
    carried = [line(0, 0x7_FFFF_FFFF), line(1, 0x8_0000_0000)]
    out, _, stats = exchange(carried, seqs=[0x1FF, 0x200])
    assert stats["pairs"] == 1 and all(same(t, g) for t, g in zip(carried, out)) and len(out) == 2
    wrapped = [line(2, 2**36 - 1), line(3, 0)]
    out, _, stats = exchange(wrapped, seqs=[2**SEQ_BITS - 1, 0])
    assert stats["pairs"] == 1 and all(same(t, g) for t, g in zip(wrapped, out)) and len(out) == 2
    high = [line(4, 0x4_0000_0000), line(5, 0xC_0000_0001)]
    out, _, stats = exchange(high, seqs=[7, 8])
    assert stats["pairs"] == 0 and [g["tag"] for g in out] == [4, 5]


def test_a_consumer_that_stops_taking_loses_what_the_commit_fifo_cannot_hold_and_counts_it():
    """The deframer cannot hold the link: with its consumer stopped, the commit FIFO keeps the first 63
    transactions of good frames (its 64 entries less one), delivers them in order once the consumer takes
    again, and counts each one after them that found it full, the second line of a pair included."""
    rng = random.Random(9)
    txns = [dict(type=T_RD_RSP, tag=i, laddr=0x1000 + i, mask=FULL, data=rng.getrandbits(512)) for i in range(80)]
    out, _, stats = exchange(txns, take_from=400)
    assert (stats["crc_errors"], stats["overflow"]) == (0, 0) and stats["pairs"] == 40
    assert len(out) == 63 and all(same(t, g) for t, g in zip(txns, out))
    assert stats["commit_overflow"] == len(txns) - len(out)


def test_a_deframer_too_shallow_for_pairs_overflows_and_recovers():
    # 20 blocks cannot hold a pair (17 blocks) and the beat behind it: beats are dropped and counted, their
    # frames fail the CRC, and a lone request after the burst goes through.
    rng = random.Random(4)
    txns = [dict(type=T_RD_RSP, tag=i, laddr=i, mask=FULL, data=rng.getrandbits(512)) for i in range(16)]
    txns += [dict(type=T_RD_REQ, tag=99, laddr=5, mask=FULL, data=0)]
    out, _, stats = exchange(txns, max_units=8, gap=[0] * 15 + [20, 0], shallow=True)
    assert stats["overflow"] > 0 and stats["crc_errors"] > 0
    assert out and same(txns[-1], out[-1])


def deframe(frames):
    """Feeds (block, ctrl) frames to a deframer, 8 blocks a beat, back to back; returns the (type, tag,
    laddr) it delivers and its frames, CRC-error and overflow counts, and each good frame's trailer fields
    (seq, ack, nak, credits) as the deframer hands them on, in stats["trailers"]."""
    dut = LOOP.deframer
    blocks = [b for f in frames for b in f]
    out, stats = [], {"trailers": []}
    beats = [(blocks[at:at + 8], 0) for at in range(0, len(blocks), 8)]

    def watch():
        for _ in range(len(blocks) + 30):
            if (yield dut.source.valid):
                out.append(((yield dut.source.type), (yield dut.source.tag), (yield dut.source.laddr)))
            if (yield dut.frame_end) and (yield dut.frame_ok):
                stats["trailers"].append(((yield dut.frame_seq), (yield dut.frame_ack), (yield dut.frame_nak),
                                          (yield dut.frame_credits)))
            yield
        stats.update(frames=(yield dut.frames), crc_errors=(yield dut.crc_errors), overflow=(yield dut.overflow))

    run_simulation(LOOP, [inject_beats(beats), watch()])
    return out, stats


def test_malformed_frames_with_good_crcs_are_dropped_and_the_next_one_delivered():
    line = random.Random(8).getrandbits(512)
    good = documented_frame([[header(T_RD_REQ, 1, 0x10)]], seq=0, ack=0, nak=0, credits=0)
    unknown_type = documented_frame([[(6 | 2 << 4 | 0x11 << 13, 1)], [header(T_RD_REQ, 3, 0x12)]],
                                    seq=1, ack=0, nak=0, credits=0)
    stray_ctrl = documented_frame([[header(T_WR_REQ, 4, 0x13)] + words(line)[:3] + [(line & 0xFF, 1)]
                                   + words(line)[4:]], seq=2, ack=0, nak=0, credits=0)
    bad_trailer = documented_frame([[header(T_RD_REQ, 5, 0x14)]], seq=3, ack=0, nak=0, credits=0)
    bad_trailer[-1] = (bad_trailer[-1][0] ^ 1 << 5, 1)       # its sequence number changed after the CRC
    last = documented_frame([[header(T_WR_REQ, 6, 0x15)] + words(line)], seq=4, ack=0, nak=0, credits=0)
    out, stats = deframe([good, unknown_type, stray_ctrl, bad_trailer, last])
    assert out == [(T_RD_REQ, 1, 0x10), (T_WR_REQ, 6, 0x15)]
    assert stats == {"frames": 5, "crc_errors": 3, "overflow": 0, "trailers": [(0, 0, 0, 0), (4, 0, 0, 0)]}


def test_a_junk_pair_behind_a_backlog_is_skipped_nine_then_eight_blocks():
    # Four lone reads are parsed one a cycle while beats keep coming, so a backlog builds behind them. The
    # next frame's header has an unknown type and 16 data blocks behind it: the deframer skips 9 blocks,
    # then the 8 before the trailer, keeping every block behind them; the frame after it is delivered.
    rng = random.Random(9)
    reads = documented_frame([[header(T_RD_REQ, t, 0x20 + t)] for t in range(4)], seq=0, ack=0, nak=0, credits=0)
    junk = documented_frame([[(6 | 7 << 4 | 0x30 << 13, 1)] + words(rng.getrandbits(512)) + words(rng.getrandbits(512))],
                            seq=4, ack=0, nak=0, credits=0)
    after = documented_frame([[header(T_RD_REQ, 9, 0x40)]], seq=5, ack=0, nak=0, credits=0)
    out, stats = deframe([reads, junk, after])
    assert out == [(T_RD_REQ, t, 0x20 + t) for t in range(4)] + [(T_RD_REQ, 9, 0x40)]
    assert stats == {"frames": 3, "crc_errors": 1, "overflow": 0, "trailers": [(0, 0, 0, 0), (5, 0, 0, 0)]}


def test_the_trailer_fields_reach_the_checker_whole():
    # Every field at its widest (seq and ack 11 bits, credits 5), then each with only its top bit set.
    frames = [documented_frame([[header(T_RD_REQ, 1, 0x10)]], seq=0x7FF, ack=0x7FF, nak=1, credits=0x1F),
              documented_frame([[header(T_RD_REQ, 2, 0x11)]], seq=0x400, ack=0x400, nak=0, credits=0x10),
              documented_frame([], seq=0x555, ack=0x2AA, nak=1, credits=0x0A)]        # a trailer alone
    out, stats = deframe(frames)
    assert out == [(T_RD_REQ, 1, 0x10), (T_RD_REQ, 2, 0x11)]
    assert stats["trailers"] == [(0x7FF, 0x7FF, 1, 0x1F), (0x400, 0x400, 0, 0x10), (0x555, 0x2AA, 1, 0x0A)]


def test_a_pair_from_a_rows_last_block_is_read_whole_with_its_trailer():
    # The deframer reads its head's blocks out of banks of 8: a pair that starts at the last block of a row
    # with its trailer right behind it (the head's 18th block) spans four rows of the banks. Two frames of
    # reads ahead of it (parsed one a cycle) let the trailer arrive before the head reaches the pair.
    rng = random.Random(17)
    lines = [rng.getrandbits(512) for _ in range(2)]
    reads = [documented_frame([[header(T_RD_REQ, 8*f + t, 0x100 + 8*f + t)] for t in range(8)],
                              seq=8*f, ack=0, nak=0, credits=0) for f in range(2)]
    alone = [documented_frame([], seq=16, ack=0, nak=0, credits=0) for _ in range(5)]
    pair = documented_frame([[header(T_RD_RSP, 0x21, 0x80, pair_tag=0x22)] + words(lines[0]) + words(lines[1])],
                            seq=16, ack=0, nak=0, credits=0)
    assert sum(len(f) for f in reads + alone) % 8 == 7
    out, stats = deframe(reads + alone + [pair])
    assert out == [(T_RD_REQ, t, 0x100 + t) for t in range(16)] + [(T_RD_RSP, 0x21, 0x80), (T_RD_RSP, 0x22, 0x81)]
    assert (stats["frames"], stats["crc_errors"]) == (8, 0)


def flipped(frames, flips):
    """The blocks of `frames` (as `deframe` takes them), back to back, with the bits `flips` ((frame, block,
    bit) each) inverted."""
    frames = [list(f) for f in frames]
    for f, b, bit in flips:
        block, ctrl = frames[f][b]
        frames[f][b] = (block ^ 1 << bit, ctrl)
    return [b for f in frames for b in f]


def located(frames, flips, counts=None):
    """Feeds `frames` (as `deframe` takes them) with the bits `flips` inverted (`flipped`); returns the
    deframer's CRC errors, its `repairable` count and each locator result (found, block from the frame's end,
    bit). `counts`, if given, gets each good frame's transaction count (`frame_txns`)."""
    dut = LOOP.deframer
    blocks = flipped(frames, flips)
    results = []

    def watch():
        for _ in range(len(blocks) + 120):
            if (yield dut.locator.source.valid):
                results.append(((yield dut.locator.source.found), (yield dut.locator.source.block),
                                (yield dut.locator.source.bit)))
            if counts is not None and (yield dut.frame_end) and (yield dut.frame_ok):
                counts.append((yield dut.frame_txns))
            yield
        results.append(((yield dut.crc_errors), (yield dut.repairable)))

    run_simulation(LOOP, [inject_beats([(blocks[at:at + 8], 0) for at in range(0, len(blocks), 8)]), watch()])
    crc_errors, repairable = results.pop()
    return crc_errors, repairable, results


def lines_frame(n, seq, seed):
    rng = random.Random(seed)
    return documented_frame([[header(T_RD_RSP, i, 0x40 + 2 * i)] + words(rng.getrandbits(512)) for i in range(n)],
                            seq=seq, ack=0, nak=0, credits=0)


@pytest.mark.parametrize("lines,block,bit", [(3, 27, 5), (3, 27, 40), (3, 0, 6), (3, 13, 63), (8, 1, 0),
                                             (1, 4, 17), (1, 9, 33)])
def test_a_frame_with_one_flipped_bit_is_repairable_and_the_bit_is_located(lines, block, bit):
    """A frame of 3 or 8 lines (the ring checks it) or a lone line (the cut-through does), one bit flipped: in
    the trailer's sequence number or CRC, a header's tag, a data block: the frame is dropped as before, and
    counted repairable, its bit located from the frame's end. The frame behind it is good and not scanned."""
    frames = [lines_frame(lines, 0, block), lines_frame(1, lines, 9)]
    crc_errors, repairable, results = located(frames, [(0, block, bit)])
    assert (crc_errors, repairable) == (1, 1)
    assert results == [(1, len(frames[0]) - 1 - block, bit)]


def test_two_flipped_bits_or_a_broken_frame_are_not_repairable():
    """Two bits flipped in one frame: scanned, nothing found. A header's type made unknown: the frame breaks
    (junk), is dropped and not scanned."""
    frames = [lines_frame(3, 0, 1), lines_frame(2, 3, 2), lines_frame(1, 5, 3)]
    crc_errors, repairable, results = located(frames, [(0, 3, 9), (0, 20, 50), (1, 9, 1)])
    assert (crc_errors, repairable) == (2, 0)
    assert [found for found, _, _ in results] == [0]


def test_a_trailer_alone_is_scanned_over_its_one_block():
    """A trailer alone, one bit flipped: located in it. Its CRC field changed so that the syndrome names a bit of
    the block before it, which a trailer alone does not have: scanned, nothing found."""
    alone = documented_frame([], seq=3, ack=0, nak=0, credits=0)
    crc_errors, repairable, results = located([alone], [(0, 0, 20)])
    assert (crc_errors, repairable, results) == (1, 1, [(1, 0, 20)])
    outside = syndrome_of_bit(1, 5)
    crc_errors, repairable, results = located([alone], [(0, 0, 32 + i) for i in range(32) if outside >> i & 1])
    assert (crc_errors, repairable) == (1, 0) and [found for found, _, _ in results] == [0]


def test_a_frames_transaction_count_counts_every_unit_and_both_lines_of_a_pair():
    """The ring's frames: a pair, a read and a line (4 transactions), then three reads (3); then a lone read
    (1, the cut-through's, once the ring is idle)."""
    rng = random.Random(6)
    pair = [header(T_RD_RSP, 1, 0x80, pair_tag=2)] + words(rng.getrandbits(512)) + words(rng.getrandbits(512))
    frames = [documented_frame([pair, [header(T_RD_REQ, 3, 0x90)], [header(T_RD_RSP, 4, 0xA0)] +
                                words(rng.getrandbits(512))], seq=0, ack=0, nak=0, credits=0),
              documented_frame([[header(T_RD_REQ, 5 + i, 0xB0 + i)] for i in range(3)], seq=4, ack=0, nak=0,
                               credits=0)]
    counts = []
    assert located(frames, [], counts)[:2] == (0, 0) and counts == [4, 3]
    counts = []
    located([documented_frame([[header(T_RD_REQ, 9, 0xC0)]], seq=7, ack=0, nak=0, credits=0)], [], counts)
    assert counts == [1]


def test_a_framer_too_shallow_for_a_unit_and_a_beat_is_refused():
    # Its buffer holds a unit and its trailer (18 blocks) and a beat behind them: 16 blocks cannot.
    with pytest.raises(AssertionError):
        PackedFramer(depth=16)


@pytest.mark.parametrize("depth", [2, 12, 48])
def test_a_commit_fifo_of_fewer_than_four_or_not_a_power_of_two_entries_is_refused(depth):
    # Its two banks are addressed by the pointers' upper bits: a depth that is not a power of two would wrap them
    # early.
    with pytest.raises(AssertionError):
        CommitFIFO(txn_layout, depth)


def repaired(frames, flips, enable=1, take=1):
    """Feeds `frames` with the bits `flips` inverted (`flipped`) to the deframer, its repair (FrameRepair)
    `enable`d and its offers answered at once (taken if `take`). Returns what the deframer delivered and what
    the repair offered ((seq, transactions) each), sent ((transaction, seq) each, raw bits), fell back on,
    handed on as a trailer ((ack, nak) each) and counted repaired, and the cycles it parked a frame, held
    `parked` and sent a transaction."""
    dut = LOOP.deframer
    repair = dut.repair
    blocks = flipped(frames, flips)
    txn_bits = len(Record(txn_layout).raw_bits())
    out = {"delivered": [], "offers": [], "sent": [], "fallbacks": 0, "trailers": [], "park": [], "parked": [],
           "sending": []}

    def watch():
        for signal, value in ((repair.enable, enable), (repair.offer_ready, 1), (repair.offer_take, take),
                              (repair.source.ready, 1)):
            yield signal.eq(value)
        for cycle in range(len(blocks) + 150):
            for name, signal in (("park", repair.park), ("parked", repair.parked), ("sending", repair.source.valid)):
                if (yield signal):
                    out[name].append(cycle)
            if (yield dut.source.valid):
                out["delivered"].append((yield dut.source.payload.raw_bits()))
            if (yield repair.offer):
                out["offers"].append(((yield repair.seq), (yield repair.txns)))
            if (yield repair.source.valid):
                raw = yield repair.source.payload.raw_bits()
                out["sent"].append((raw & (2**txn_bits - 1), raw >> txn_bits))
            out["fallbacks"] += yield repair.fallback
            if (yield dut.repaired_trailer):
                out["trailers"].append(((yield dut.frame_ack), (yield dut.frame_nak)))
            yield
        out["repaired"] = yield repair.repaired

    run_simulation(LOOP, [inject_beats([(blocks[at:at + 8], 0) for at in range(0, len(blocks), 8)]), watch()])
    return out


def written_pair(rng):
    """A pair's unit: two written lines of `rng`'s data (tags 1 and 2) at line 0x80, 17 blocks."""
    return [header(T_WR_REQ, 1, 0x80, pair_tag=2)] + words(rng.getrandbits(512)) + words(rng.getrandbits(512))


def mixed_frame(seq, ack):
    """A pair of written lines (tags 1 and 2), a read (tag 3) and a masked write (tag 5): 28 blocks, the
    pair's header at block 0, its second line from block 9, the read's header at 17, the masked line's at 18
    (its mask at 19), the trailer at 27."""
    rng = random.Random(6)
    pair = written_pair(rng)
    masked = [header(T_WR_REQ, 5, 0x99, has_mask=1), (0x00FF00FF00FF00F0, 0)] + words(rng.getrandbits(512))
    return documented_frame([pair, [header(T_RD_REQ, 3, 0x90)], masked], seq=seq, ack=ack, nak=1, credits=0)


def read_then_pair_frame(seq):
    """A read (tag 3), then a pair of written lines (tags 1 and 2): 19 blocks, the pair's header at block 1."""
    return documented_frame([[header(T_RD_REQ, 3, 0x90)], written_pair(random.Random(7))], seq=seq, ack=0, nak=0,
                            credits=0)


FRAMES = {   # a frame to damage, its transactions, and a good frame behind it
    "lines": ([lines_frame(3, 0, 5), lines_frame(1, 3, 9)], 3),
    "mixed": ([mixed_frame(0, 7), lines_frame(1, 4, 9)], 4),
    "lone":  ([lines_frame(1, 0, 4), lines_frame(1, 1, 9)], 1),   # a line alone: the cut-through's
    "pair2": ([read_then_pair_frame(0), lines_frame(1, 3, 9)], 3),  # a pair behind another unit
}


@pytest.mark.parametrize("kind,block,bit", [
    ("lines", 5, 40), ("lines", 9, 6), ("lines", 18, 30), ("lines", 0, 60),   # data; a tag, a line address, unused
    ("lines", 27, 7), ("lines", 27, 50),                                       # the trailer's seq; its CRC
    ("mixed", 12, 52), ("mixed", 0, 5), ("mixed", 0, 52), ("mixed", 17, 8),    # a pair's second line, its tags
    ("mixed", 19, 3), ("mixed", 26, 63), ("mixed", 27, 16), ("mixed", 27, 24),  # mask; data; the trailer's ack, nak
    ("lone", 4, 17), ("lone", 0, 20),
    ("mixed", 0, 12), ("mixed", 0, 20), ("pair2", 1, 12)])   # a pair's line address: its second line's derived
                                                              # again (+1 carries), the pair first or not
def test_a_frame_with_one_flipped_bit_is_repaired_whole(kind, block, bit):
    """Wherever the bit is (a data or mask block, a header's tag or line address or unused bits, a pair's line
    address, the trailer's fields), the damaged frame is dropped by the deframer and its transactions come out
    of the repair exactly as sent, numbered from its sequence number; its trailer's ack and nak go on as sent."""
    frames, n = FRAMES[kind]
    good = repaired(frames, [])
    got = repaired(frames, [(0, block, bit)])
    assert good["offers"] == good["sent"] == [] and len(good["delivered"]) == n + 1
    assert got["delivered"] == good["delivered"][n:] and got["fallbacks"] == 0
    assert got["offers"] == [(0, n)] and got["repaired"] == 1
    assert got["sent"] == [(txn, seq) for seq, txn in enumerate(good["delivered"][:n])]
    assert got["trailers"] == [(7, 1) if kind == "mixed" else (0, 0)]


def test_parked_holds_from_the_park_to_tail_cycles_after_the_last_transaction():
    """The checker asks for no lost frame while `parked`: it holds from the cycle after the frame is parked,
    without a gap, until TAIL_CYCLES after the repaired frame's last transaction goes out."""
    frames, n = FRAMES["lines"]
    got = repaired(frames, [(0, 5, 40)])
    (park,), sending = got["park"], got["sending"]
    assert len(sending) == n
    assert got["parked"] == list(range(park + 1, sending[-1] + TAIL_CYCLES + 1))


@pytest.mark.parametrize("kind,flips", [
    ("lines", [(0, 9, 0)]),                   # a type bit (a read answer made a write: the same length)
    ("mixed", [(0, 17, 49)]),                 # a read's pair flag
    ("lines", [(0, 3, 9), (0, 20, 50)]),      # two bits: no syndrome of one
])
def test_a_frame_the_repair_cannot_put_right_falls_back(kind, flips):
    frames, n = FRAMES[kind]
    got = repaired(frames, flips)
    assert got["fallbacks"] == 1 and got["offers"] == got["sent"] == got["trailers"] == []
    assert len(got["delivered"]) == 1 and got["repaired"] == 0


def test_a_repair_off_busy_or_refused_sends_nothing():
    """Off: nothing kept. SLOTS + 1 damaged frames back to back: the first SLOTS are kept, one a slot, and
    repaired in turn; the last finds every slot busy and is not kept (dropped, asked for as before). An offer
    not taken (a duplicate): nothing sent, not counted."""
    frames, n = FRAMES["lines"]
    off = repaired(frames, [(0, 5, 40)], enable=0)
    assert off["offers"] == off["sent"] == [] and off["fallbacks"] == 0 and len(off["delivered"]) == 1
    # Frames of 3, 2 and then one line each (sequence numbers 0, 3, 5, ...), a good one behind them.
    damaged = [frames[0], lines_frame(2, 3, 7)] + [lines_frame(1, 5 + i, 8 + i) for i in range(SLOTS - 1)]
    busy = repaired(damaged + [lines_frame(1, 4 + SLOTS, 20)], [(0, 5, 40), (1, 3, 3)] +
                    [(k, 4, 4) for k in range(2, SLOTS + 1)])
    assert busy["offers"] == [(0, 3), (3, 2)] + [(5 + i, 1) for i in range(SLOTS - 2)]
    assert [seq for _, seq in busy["sent"]] == list(range(3 + SLOTS))
    assert len(busy["delivered"]) == 1 and busy["fallbacks"] == 0 and busy["repaired"] == SLOTS
    refused = repaired(frames, [(0, 5, 40)], take=0)
    assert refused["offers"] == [(0, 3)] and refused["sent"] == [] and refused["repaired"] == 0


def test_lone_frames_in_back_to_back_beats_all_cut_through():
    """A trailer alone, then lone requests, each a beat of its own in consecutive cycles: each beat is ended
    whole by the cut-through, so the ring never counts as holding a frame of its own, and every request is
    delivered 2 cycles after its beat (offered in cycles 1 to 3: taken a cycle later, delivered in 4 and 5)."""
    trailer = documented_frame([], seq=0, ack=0, nak=0, credits=0)
    first = documented_frame([[header(T_RD_REQ, 1, 0x80)]], seq=0, ack=0, nak=0, credits=0)
    second = documented_frame([[header(T_RD_REQ, 2, 0x81)]], seq=1, ack=0, nak=0, credits=0)
    out, stats = deframe_beats([(trailer, 0), (first, 0), (second, 0)])
    assert [(o[1], o[3]) for o in out] == [(1, 4), (2, 5)]
    assert stats == {"frames": 3, "crc_errors": 0}


def test_back_to_back_requests_leave_in_full_beats():
    """Sixteen reads back to back, each closing its frame (a unit without a line does): 32 blocks leave as
    four full beats; none leaves part-full while the next frame's blocks are on their way."""
    txns = [dict(type=T_RD_REQ, tag=i, laddr=i, mask=FULL, data=0) for i in range(16)]
    out, beats, stats = exchange(txns, max_units=8)
    assert [count for _, count in beats] == [8, 8, 8, 8]
    assert len(out) == 16 and stats["sent_frames"] == 16
