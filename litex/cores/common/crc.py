#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Parallel CRC over a whole word in one cycle (combinational XOR trees)."""

from functools import lru_cache
from operator import xor

from migen import *
from migen.fhdl.structure import _Slice

# CRC-32 (IEEE 802.3) polynomial, MSB-first form without the x^32 term.
CRC32_POLY = 0x04C11DB7


@lru_cache(maxsize=None)
def crc_matrix(data_width, width, poly, init):
    """Returns, for each CRC output bit, (constant, (input bit indices)) such that
    crc[i] = constant ^ XOR(input[j] for j in indices). Data is fed MSB (bit data_width-1) first, into a
    register starting at `init`.

    With init=None the starting CRC register is an input too: bits data_width .. data_width+width-1 of the
    input vector hold it, so a long message can be checked piece by piece. Worked out once per arguments (the
    SoC asks for the same matrices over and over: 3 s of its making)."""
    # Each state bit is a (constant, frozenset of input indices) pair; XOR is symmetric difference.
    if init is None:
        state = [(0, frozenset({data_width + i})) for i in range(width)]
    else:
        state = [((init >> i) & 1, frozenset()) for i in range(width)]
    for j in reversed(range(data_width)):
        fb_const, fb_terms = state[width - 1]
        fb = (fb_const, fb_terms ^ {j})
        new = []
        for i in range(width):
            prev = state[i - 1] if i > 0 else (0, frozenset())
            if (poly >> i) & 1:
                new.append((prev[0] ^ fb[0], prev[1] ^ fb[1]))
            else:
                new.append(prev)
        state = new
    return tuple((c, tuple(sorted(t))) for c, t in state)


def crc_reference(value, data_width, width=32, poly=CRC32_POLY, init=(1 << 32) - 1):
    """Bit-serial software model of the same CRC, used by tests and the host."""
    crc = init
    mask = (1 << width) - 1
    for j in reversed(range(data_width)):
        fb = ((crc >> (width - 1)) & 1) ^ ((value >> j) & 1)
        crc = (crc << 1) & mask
        if fb:
            crc ^= poly
    return crc


def bits_of(value):
    """The bits of a Migen value made of signals, slices of them, concatenations and constants, bit 0 first:
    each a one-bit slice of a signal, or 0 or 1."""
    if isinstance(value, Constant):
        return [(value.value >> i) & 1 for i in range(len(value))]
    if isinstance(value, Signal):
        return [value[i] for i in range(len(value))]
    if isinstance(value, _Slice):
        return bits_of(value.value)[value.start:value.stop]
    if isinstance(value, Cat):
        return [bit for part in value.l for bit in bits_of(part)]
    raise TypeError(f"bits_of: {type(value).__name__} is not a signal, slice, concatenation or constant")


def crc_bits(data, state=None, width=32, poly=CRC32_POLY, init=(1 << 32) - 1):
    """The CRC of `data` (fed from its top bit, as ParallelCRC feeds it), one expression of the data's bits a
    CRC bit, bit 0 first, with no signal of their own: the register starts at `init`, or at `state` when
    given (a running CRC). Taken by registers one bit a statement (`If(enable, reg[i].eq(bit))`), they are
    evaluated by Verilator only in the cycles the registers take them, where ParallelCRC's steps are
    evaluated every cycle (and one statement of all 32 would be a line too long for its preprocessor);
    synthesis sees the same XOR trees, and Verilator works out each tree's bits of one signal as one parity
    of that signal under a mask, as cheap as ParallelCRC's."""
    data_bits = bits_of(data)
    inputs = data_bits + (bits_of(state) if state is not None else [])
    outputs = []
    for const, terms in crc_matrix(len(data_bits), width, poly, None if state is not None else init):
        bits = [inputs[j] for j in terms]
        const ^= sum(b for b in bits if isinstance(b, int)) & 1
        bits = [b for b in bits if not isinstance(b, int)]
        tree = balanced(bits) if bits else Constant(0, 1)
        outputs.append(~tree if const else tree)
    return outputs


def crc_data_part(data, zeros_after=0):
    """The data's part of a running CRC, as crc_bits: crc(0, data), with `zeros_after` zero bits fed behind the
    data (the part of a piece that has that much of its message behind it). A running CRC is linear,
    crc(state, data) = crc(state, 0) ^ crc(0, data), so a pipeline can take the two parts apart."""
    return crc_bits(Cat(Constant(0, zeros_after), data) if zeros_after else data, init=0)


def crc_state_part(state, data_width):
    """The state's part of a running CRC over `data_width` bits, as crc_bits: crc(state, 0), the state through
    that many zero bits."""
    return crc_bits(Constant(0, data_width), state=state)


def parity(module, value, width, name):
    """XOR of all bits of `value`, as word-wide operations: 64-bit words XORed together, then halved.

    Each step lands in a signal of its own: Verilator turns a step into a few machine operations (a
    bit-by-bit tree costs one per bit), and Migen's simulator evaluates each step once instead of
    re-walking the whole expression for every slice of it.
    """
    words = [value[i:min(i + 64, width)] for i in range(0, width, 64)]
    acc = Signal(min(64, width), name=f"{name}_w")
    module.comb += acc.eq(balanced(words))
    bits = len(acc)
    while bits > 1:
        half = (bits + 1) // 2
        folded = Signal(half, name=f"{name}_f{half}")
        module.comb += folded.eq(acc[:half] ^ acc[half:bits])
        acc, bits = folded, half
    return acc[0]


def balanced(terms, op=xor):
    """`op` (XOR unless given) of a list of values as a balanced tree: a chain of hundreds would also be too deep
    for Migen's recursive walk."""
    if len(terms) == 1:
        return terms[0]
    half = len(terms) // 2
    return op(balanced(terms[:half], op), balanced(terms[half:], op))


class ParallelCRC(Module):
    """CRC of `data_width` bits in one cycle, combinational (latency: 0 cycles).

    Each CRC bit is the parity of the input under a constant mask (from crc_matrix), inverted where the
    initial value contributes. With `with_state`, `state` is the CRC register before this data (a running
    CRC over a frame); otherwise the register starts at `init` (all ones unless given). Its signals are
    worked out by Verilator every cycle: where only registers take a CRC, under an enable, crc_bits costs
    the sim only the cycles they load.
    """
    def __init__(self, data_width, width=32, poly=CRC32_POLY, with_state=False, init=None):
        self.data  = Signal(data_width)
        self.state = Signal(width)
        self.crc   = Signal(width)

        # # #

        inputs = Cat(self.data, *([self.state] if with_state else []))
        n = len(inputs)
        start = None if with_state else ((1 << width) - 1 if init is None else init)
        for i, (const, terms) in enumerate(crc_matrix(data_width, width, poly, start)):
            mask   = sum(1 << j for j in terms)
            masked = Signal(n, name=f"crc_masked{i}")
            self.comb += [
                masked.eq(inputs & mask),
                self.crc[i].eq(parity(self, masked, n, f"crc_parity{i}") ^ const),
            ]
