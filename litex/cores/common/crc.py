#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Parallel CRC over a whole word in one cycle (combinational XOR trees)."""

from migen import *

# CRC-32 (IEEE 802.3) polynomial, MSB-first form without the x^32 term.
CRC32_POLY = 0x04C11DB7


def crc_matrix(data_width, width=32, poly=CRC32_POLY, init=(1 << 32) - 1):
    """Returns, for each CRC output bit, (constant, [data bit indices]) such that
    crc[i] = constant ^ XOR(data[j] for j in indices). Data is fed MSB (bit data_width-1) first."""
    # Each state bit is a (constant, frozenset of data indices) pair; XOR is symmetric difference.
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
    return [(c, sorted(t)) for c, t in state]


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


def parity(value, width):
    """XOR of all bits of `value`, as word-wide operations: AND-free folding of 64-bit words, then halving.

    Verilator turns each step into a few machine operations, where a bit-by-bit tree costs one per bit;
    this is what keeps the wide CRCs cheap in simulation.
    """
    words = [value[i:min(i + 64, width)] for i in range(0, width, 64)]
    while len(words) > 1:
        words = [words[i] ^ words[i + 1] if i + 1 < len(words) else words[i] for i in range(0, len(words), 2)]
    folded, bits = words[0], min(64, width)
    while bits > 1:
        half = (bits + 1) // 2
        folded = folded[:half] ^ folded[half:bits]
        bits = half
    return folded[0]


class ParallelCRC(Module):
    """CRC of `data_width` bits in one cycle, combinational (latency: 0 cycles).

    Each CRC bit is the parity of the data under a constant mask (from crc_matrix), inverted where the
    initial value contributes. Used by the link framer and deframer on the canonical frame image.
    """
    def __init__(self, data_width, width=32, poly=CRC32_POLY):
        self.data = Signal(data_width)
        self.crc  = Signal(width)

        # # #

        for i, (const, terms) in enumerate(crc_matrix(data_width, width, poly)):
            mask   = sum(1 << j for j in terms)
            masked = Signal(data_width, name=f"crc_masked{i}")
            self.comb += [
                masked.eq(self.data & mask),
                self.crc[i].eq(parity(masked, data_width) ^ const),
            ]
