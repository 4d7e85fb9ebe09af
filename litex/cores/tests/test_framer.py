"""LinkFramer -> LinkDeframer (litex/cores/link/framer.py): every frame type round-trips, CRC catches errors."""

import random

import pytest
from migen import *

from monet.cores.link.common import *
from monet.cores.link.framer import LinkFramer, LinkDeframer

FULL = 2**LINE_BYTES - 1


class Loop(Module):
    """Framer beats straight into the deframer; beat number `flip_beat` gets bit `flip_bit` inverted."""
    def __init__(self, flip_beat, flip_bit):
        self.submodules.framer = LinkFramer()
        self.submodules.deframer = LinkDeframer()
        beat = Signal(8)
        src = self.framer.source
        self.sync += If(src.valid & src.ready, beat.eq(beat + 1))
        self.comb += [
            src.connect(self.deframer.sink, omit={"data"}),
            self.deframer.sink.data.eq(src.data ^ Mux(beat == flip_beat, 1 << flip_bit, 0)),
        ]


def exchange(txns, flip_beat=255, flip_bit=0):
    dut = Loop(flip_beat, flip_bit)
    out = []
    errors = []

    def send():
        for t in txns:
            yield dut.framer.sink.valid.eq(1)
            for k, v in t.items():
                yield getattr(dut.framer.sink, k).eq(v)
            yield
            while not (yield dut.framer.sink.ready):
                yield
        yield dut.framer.sink.valid.eq(0)

    def receive():
        for _ in range(8 * len(txns) + 10):
            src = dut.deframer.source
            if (yield src.valid):
                got = {}
                for k in ("type", "tag", "laddr", "mask", "data"):
                    got[k] = yield getattr(src, k)
                out.append(got)
            yield
        errors.append((yield dut.deframer.crc_errors))

    run_simulation(dut, [send(), receive()])
    return out, errors[0]


def random_txns(rng):
    return [
        dict(type=T_RD_REQ, tag=rng.randrange(256), laddr=rng.getrandbits(36), mask=FULL, data=0),
        dict(type=T_WR_REQ, tag=rng.randrange(256), laddr=rng.getrandbits(36), mask=FULL, data=rng.getrandbits(512)),
        dict(type=T_WR_REQ, tag=rng.randrange(256), laddr=rng.getrandbits(36), mask=0xF0, data=rng.getrandbits(512)),
        dict(type=T_RD_RSP, tag=rng.randrange(256), laddr=rng.getrandbits(36), mask=FULL, data=rng.getrandbits(512)),
        dict(type=T_WR_ACK, tag=rng.randrange(256), laddr=rng.getrandbits(36), mask=FULL, data=0),
    ]


def test_all_frame_types_round_trip():
    txns = random_txns(random.Random(3))
    out, errors = exchange(txns)
    assert errors == 0
    assert len(out) == len(txns)
    for sent, got in zip(txns, out):
        assert (got["type"], got["tag"], got["laddr"]) == (sent["type"], sent["tag"], sent["laddr"])
        if has_data(sent["type"]):
            assert got["data"] == sent["data"]
        if sent["type"] == T_WR_REQ:
            assert got["mask"] == sent["mask"]


@pytest.mark.parametrize("flip_beat,flip_bit", [(0, 5), (0, 64 + 17), (1, 3)])
def test_corrupted_frame_is_dropped_and_counted(flip_beat, flip_bit):
    txns = [dict(type=T_RD_RSP, tag=9, laddr=0x1234, mask=FULL, data=random.Random(1).getrandbits(512))]
    out, errors = exchange(txns, flip_beat=flip_beat, flip_bit=flip_bit)
    assert out == []
    assert errors == 1
