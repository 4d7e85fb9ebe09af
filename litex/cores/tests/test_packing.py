"""PackedFramer -> PackedDeframer (litex/cores/link/packing.py): transactions survive, frames share a
trailer under load, consecutive lines pair under one header, a lone request leaves at once, and a
corrupted frame is dropped whole.

Runs on the generated Verilog in Verilator (`verilog_sim`); the bit to corrupt is a signal, so one model
per framer size serves every case."""

import random

import pytest
from migen import *

from monet.cores.link.common import *
from monet.cores.link.packing import PackedFramer, PackedDeframer
from monet.cores.tests.verilog_sim import run_simulation

FULL = 2**LINE_BYTES - 1


class Loop(Module):
    """Beats from the framer into the deframer while `ready` (the link takes a beat); beat number
    `flip_beat` gets bit `flip_bit` inverted."""
    def __init__(self, max_units):
        self.submodules.framer = PackedFramer(max_units=max_units)
        self.submodules.deframer = PackedDeframer()
        self.ready = Signal(reset=1)
        self.flip_beat = Signal(16, reset=2**16 - 1)
        self.flip_bit = Signal(max=len(self.framer.source.data))
        src = self.framer.source
        beat = Signal(16)
        self.sync += If(src.valid & src.ready, beat.eq(beat + 1))
        self.comb += [
            src.connect(self.deframer.sink, omit={"data", "valid", "ready"}),
            self.deframer.sink.valid.eq(src.valid & self.ready),
            src.ready.eq(self.deframer.sink.ready & self.ready),
            self.deframer.sink.data.eq(src.data ^ Mux(beat == self.flip_beat, 1 << self.flip_bit, 0)),
            self.deframer.source.ready.eq(1),
        ]


def random_txn(rng, kinds=(T_RD_REQ, T_WR_REQ, T_RD_RSP, T_WR_ACK), after=None):
    """A random transaction; with `after`, often of the same type on the next line (a pair candidate)."""
    t = rng.choice(kinds)
    laddr = rng.getrandbits(36)
    if after is not None and rng.random() < 0.6:
        t, laddr = after["type"], (after["laddr"] + 1) % 2**36
    mask = FULL if rng.random() < 0.7 else rng.getrandbits(64)
    return dict(type=t, tag=rng.randrange(256), laddr=laddr,
                mask=mask if t == T_WR_REQ else FULL, data=rng.getrandbits(512) if has_data(t) else 0)


def exchange(txns, max_units=8, flip_beat=2**16 - 1, flip_bit=0, gap=0, ready_every=1):
    dut = Loop(max_units)
    out, beats, stats = [], [], {}

    def send():
        yield dut.flip_beat.eq(flip_beat)
        yield dut.flip_bit.eq(flip_bit)
        for seq, t in enumerate(txns):
            yield dut.framer.sink.valid.eq(1)
            yield dut.framer.sink.seq.eq(seq % 2**SEQ_BITS)
            for k, v in t.items():
                yield getattr(dut.framer.sink, k).eq(v)
            yield
            while not (yield dut.framer.sink.ready):
                yield
            yield dut.framer.sink.valid.eq(0)
            for _ in range(gap):
                yield
        yield dut.framer.sink.valid.eq(0)

    def watch():
        for cycle in range(40 + 12 * len(txns) * (gap + 2)):
            yield dut.ready.eq(cycle % ready_every == 0)
            if (yield dut.framer.source.valid) and (yield dut.framer.source.ready):
                beats.append((cycle, (yield dut.framer.source.count)))
            src = dut.deframer.source
            if (yield src.valid):
                got = {}
                for k in ("type", "tag", "laddr", "mask", "data"):
                    got[k] = yield getattr(src, k)
                out.append(got)
            yield
        stats["crc_errors"] = yield dut.deframer.crc_errors
        stats["frames"] = yield dut.deframer.frames
        stats["overflow"] = yield dut.deframer.overflow
        stats["pairs"] = yield dut.framer.pairs

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


def test_lone_request_is_two_blocks_and_leaves_at_once():
    t = dict(type=T_RD_REQ, tag=3, laddr=0x40, mask=FULL, data=0)
    out, beats, _ = exchange([t])
    assert [c for _, c in beats] == [2]
    assert beats[0][0] <= 3
    assert len(out) == 1 and same(t, out[0])


def test_under_load_beats_are_full_and_frames_share_a_trailer():
    rng = random.Random(5)
    txns = [dict(type=T_WR_REQ, tag=i, laddr=2 * i, mask=FULL, data=rng.getrandbits(512)) for i in range(24)]
    out, beats, stats = exchange(txns, max_units=8, ready_every=2)
    blocks = sum(c for _, c in beats)
    assert blocks == 24 * 9 + stats["frames"]          # one trailer per frame
    assert stats["frames"] <= 24 // 8 + 1
    assert sum(1 for _, c in beats if c < 8) <= 1       # a partial beat only when the queue ran dry
    assert len(out) == 24


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
