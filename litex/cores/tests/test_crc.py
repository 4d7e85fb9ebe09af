"""ParallelCRC (litex/cores/common/crc.py) against the bit-serial reference, over widths and data. Every engine
the file tests is in one model, so the file costs one Verilator build rather than one per width."""

import random
import zlib

import pytest
from migen import Cat, Constant, Module, Signal

from monet.cores.common.crc import (CRC32_POLY, ParallelCRC, bits_of, crc_bits, crc_data_part, crc_matrix,
                                     crc_reference, crc_state_part)
from monet.cores.tests.verilog_sim import run_simulation

WIDTHS = [8, 64, 200, 640]
MESSAGE_BYTES = [1, 3, 5, 7, 9, 80]
CATALOGUE_WIDTH = 72             # "123456789"
PIECES = [[64], [64, 576], [576, 64, 640, 64]]
PART_WIDTHS = [32, 576, 1088]    # a trailer's bits below its CRC, a line and its header, a pair
LAZY_WIDTH = 576                 # crc_bits: a line and its header, as the framer's cut-through takes them


class Engines(Module):
    """A plain engine for every width the tests use and a running one (`with_state`) for every piece width."""
    def __init__(self):
        widths = set(WIDTHS) | {8 * n for n in MESSAGE_BYTES} | {CATALOGUE_WIDTH}
        self.plain = {w: ParallelCRC(w) for w in sorted(widths)}
        self.running = {w: ParallelCRC(w, with_state=True) for w in sorted({w for p in PIECES for w in p})}
        # The two linear parts of a running CRC, as the framer and deframer take them apart (crc_bits into
        # registers): the data's (from a zero register) and the state's (the state through `w` zero bits).
        self.part_data  = {w: Signal(w, name=f"part_data{w}") for w in PART_WIDTHS}
        self.part_state = {w: Signal(32, name=f"part_state{w}") for w in PART_WIDTHS}
        self.data_part  = {w: Signal(32, name=f"data_part{w}") for w in PART_WIDTHS}
        self.state_part = {w: Signal(32, name=f"state_part{w}") for w in PART_WIDTHS}
        for w in PART_WIDTHS:
            self.sync += [self.data_part[w][i].eq(bit) for i, bit in enumerate(crc_data_part(self.part_data[w]))]
            self.sync += [self.state_part[w][i].eq(bit) for i, bit in enumerate(crc_state_part(self.part_state[w], w))]
        # crc_bits, taken by registers a bit a statement: from the all-ones register, and from `lazy_state`;
        # the data made of two signals, as the cut-throughs' are of several.
        self.lazy_data  = [Signal(64), Signal(LAZY_WIDTH - 64)]
        self.lazy_state = Signal(32)
        self.lazy_plain, self.lazy_running = Signal(32), Signal(32)
        data = Cat(*self.lazy_data)
        self.sync += [self.lazy_plain[i].eq(bit) for i, bit in enumerate(crc_bits(data))]
        self.sync += [self.lazy_running[i].eq(bit) for i, bit in enumerate(crc_bits(data, state=self.lazy_state))]
        self.submodules += list(self.plain.values()) + list(self.running.values())


ENGINES = Engines()


@pytest.mark.parametrize("width", WIDTHS)
def test_parallel_crc_matches_serial_reference(width):
    rng = random.Random(width)
    values = [0, 2**width - 1] + [rng.getrandbits(width) for _ in range(6)]
    assert crcs_from_the_engine(width, values) == [crc_reference(v, width) for v in values]


def test_bits_of_takes_constants_and_slices_bit_by_bit():
    # The cut-throughs' headers have constant fields in them (zero ones there, so a constant's other bits
    # must be right here).
    signal = Signal(8)
    bits = bits_of(Cat(Constant(0b1011, 4), signal[2:5], Constant(1, 1)))
    assert bits[:4] == [1, 1, 0, 1] and bits[7] == 1
    assert [(b.value is signal, b.start) for b in bits[4:7]] == [(True, 2), (True, 3), (True, 4)]


def test_crc_bits_match_the_serial_reference_from_the_initial_value_and_from_a_state():
    rng = random.Random(11)
    cases = [(0, 0), (2**LAZY_WIDTH - 1, 2**32 - 1)] + [(rng.getrandbits(LAZY_WIDTH), rng.getrandbits(32))
                                                      for _ in range(6)]
    got = []

    def gen():
        for value, state in cases:
            yield ENGINES.lazy_data[0].eq(value & (2**64 - 1))
            yield ENGINES.lazy_data[1].eq(value >> 64)
            yield ENGINES.lazy_state.eq(state)
            yield
            yield
            got.append(((yield ENGINES.lazy_plain), (yield ENGINES.lazy_running)))
    run_simulation(ENGINES, gen())
    assert got == [(crc_reference(v, LAZY_WIDTH), crc_reference(v, LAZY_WIDTH, init=s)) for v, s in cases]


def crcs_from_the_engine(width, values):
    """CRCs of `values` computed by the Verilog of ParallelCRC(width), one value a cycle."""
    dut = ENGINES.plain[width]
    got = []

    def gen():
        for v in values:
            yield dut.data.eq(v)
            yield
            got.append((yield dut.crc))
    run_simulation(ENGINES, gen())
    return got


def test_engine_gives_the_catalogue_check_value():
    """The link's CRC is CRC-32/MPEG-2 (poly 0x04C11DB7, init all ones, no reflection, no final XOR). The
    CRC catalogue's check value for the ASCII string "123456789" is 0x0376E6E7: it comes from outside this
    code, so a wrong polynomial or init fails here even though the serial reference shares them."""
    message = int.from_bytes(b"123456789", "big")   # first byte first: the engine takes the top bit first
    assert crcs_from_the_engine(CATALOGUE_WIDTH, [message]) == [0x0376E6E7]


def test_the_matrix_from_a_zero_register_gives_crc32_cksum():
    """CRC-32/CKSUM (POSIX cksum's CRC: poly 0x04C11DB7, init 0, no reflection, final XOR all ones) has the
    catalogue check value 0x765E7680: the matrix and the serial reference both start from any register."""
    message = int.from_bytes(b"123456789", "big")
    matrix = crc_matrix(72, 32, CRC32_POLY, 0)
    assert all(const in (0, 1) for const, _ in matrix)
    crc = sum((const ^ sum(message >> j & 1 for j in terms) % 2) << i for i, (const, terms) in enumerate(matrix))
    assert crc ^ 0xFFFFFFFF == 0x765E7680
    assert crc_reference(message, 72, init=0) ^ 0xFFFFFFFF == 0x765E7680


def _reflect(value, bits):
    return int(f"{value:0{bits}b}"[::-1], 2)


def crc32_mpeg2(message):
    """CRC-32/MPEG-2 from zlib's CRC-32/ISO-HDLC, which differs only in reflection and the final XOR: fed
    bit-reversed bytes, the reflected algorithm computes the unreflected one, bit-reversed."""
    hdlc = zlib.crc32(bytes(_reflect(b, 8) for b in message))
    return _reflect(hdlc ^ 0xFFFFFFFF, 32)


def test_zlib_gives_the_catalogue_check_value_too():
    assert crc32_mpeg2(b"123456789") == 0x0376E6E7


@pytest.mark.parametrize("nbytes", MESSAGE_BYTES)
def test_engine_matches_zlib_on_messages_of_odd_lengths(nbytes):
    """Below 64 bits the engine folds an odd number of bits at some step (24: 12, 6, 3), which a wrong
    halving would get wrong; the answers come from zlib."""
    rng = random.Random(nbytes)
    messages = [bytes(rng.getrandbits(8) for _ in range(nbytes)) for _ in range(4)]
    got = crcs_from_the_engine(8 * nbytes, [int.from_bytes(m, "big") for m in messages])
    assert got == [crc32_mpeg2(m) for m in messages]


def test_the_matrix_constants_are_the_crc_of_zero_data():
    """Each output bit's constant is what it holds for all-zero data: one bit, from the initial register."""
    consts = [const for const, _ in crc_matrix(8, 32, CRC32_POLY, 0xFFFFFFFF)]
    assert consts == [crc32_mpeg2(b"\0") >> i & 1 for i in range(32)]


def test_engine_detects_single_bit_flips():
    width = 640
    base = random.Random(1).getrandbits(width)
    flipped = [base ^ (1 << b) for b in range(0, width, 7)]
    crcs = crcs_from_the_engine(width, [base] + flipped)
    assert all(crc != crcs[0] for crc in crcs[1:])


@pytest.mark.parametrize("pieces", PIECES)
def test_running_crc_over_pieces_equals_crc_of_the_whole(pieces):
    rng = random.Random(len(pieces))
    values = [rng.getrandbits(w) for w in pieces]
    engines = ENGINES.running
    got = []

    def gen():
        state = 0xFFFFFFFF
        for w, v in zip(pieces, values):
            yield engines[w].data.eq(v)
            yield engines[w].state.eq(state)
            yield
            state = yield engines[w].crc
        got.append(state)
    run_simulation(ENGINES, gen())
    whole, width = 0, 0
    for w, v in zip(pieces, values):
        whole, width = (whole << w) | v, width + w
    assert got[0] == crc_reference(whole, width)


@pytest.mark.parametrize("width", PART_WIDTHS)
def test_the_state_part_and_the_data_part_add_up_to_the_running_crc(width):
    """crc(state, data) = crc(state, 0) ^ crc(0, data): the state's part (crc_state_part) and the data's
    (crc_data_part), from the Verilog, XOR to the serial reference started at the state."""
    rng = random.Random(width)
    cases = [(rng.getrandbits(32), rng.getrandbits(width)) for _ in range(4)] + [(0xFFFFFFFF, 0)]
    got = []

    def gen():
        for state, data in cases:
            yield ENGINES.part_state[width].eq(state)
            yield ENGINES.part_data[width].eq(data)
            yield
            yield
            got.append(((yield ENGINES.state_part[width]), (yield ENGINES.data_part[width])))
    run_simulation(ENGINES, gen())
    assert [s ^ d for s, d in got] == [crc_reference(data, width, init=state) for state, data in cases]
    assert got[-1][1] == 0 and got[-1][0] == crc_reference(0, width)
