#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Where a frame's CRC-32 says its one flipped bit is: the first step of repairing a frame instead of resending it.

A frame's syndrome, the CRC the deframer works out XOR the one its trailer carries, depends on the error alone
(a CRC is linear): a single flipped bit with d message bits behind it gives x^(32 + d) mod G, a flipped bit i
of the trailer's CRC field x^i mod G. Counted in blocks from the frame's end (block 0 the trailer, whose CRC
field is its upper half and is fed last but behind nothing), the bit at (block m, bit b) of the frame has the
syndrome x^k mod G with k = 64 m + b for m >= 1 and k = b ^ 32 in the trailer. The IEEE polynomial gives a
distinct x^k for every k below 2**32 - 1, far beyond a frame (137 blocks at most: 8 units of a pair and a
trailer), and no two flipped bits of a frame share a syndrome with one (the code's distance is 4 over such
lengths), so a syndrome equal to some x^k with k inside the frame names its bit; three flipped bits or more
can alias one (at about 1 in 500,000 of such frames for the largest).
"""

from functools import reduce
from operator import or_, xor

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.crc import CRC32_POLY, crc_reference
from monet.cores.common.fifo import LevelFIFO
from monet.cores.common.layouts import BLOCK_BITS

CRC_BITS = 32
FRAME_BLOCKS_BITS = 8   # a frame's length in blocks: 137 at most
syndrome_layout = [("syndrome", CRC_BITS), ("blocks", FRAME_BLOCKS_BITS)]
position_layout = [("found", 1), ("block", FRAME_BLOCKS_BITS), ("bit", log2_int(BLOCK_BITS))]


def over_x(r):
    """r / x mod G, for r a CRC register's value (below x^32): G's constant term is 1, so r + G is a multiple
    of x when r is not. (A zero bit fed to the register, crc_reference(0, 1, init=r), is r x mod G.)"""
    return ((r ^ CRC32_POLY) >> 1) | (1 << (CRC_BITS - 1)) if r & 1 else r >> 1


def x_power(k):
    """x^k mod G: a CRC register holding 1, fed k zero bits."""
    return crc_reference(0, k, init=1)


def syndrome_of_bit(block, bit):
    """The syndrome of a frame whose bit `bit` of block `block` from its end (0: the trailer) alone is flipped."""
    return x_power(BLOCK_BITS * block + bit if block else bit ^ 32)


class SyndromeLocator(LiteXModule):
    """Finds the one flipped bit a failed frame's syndrome names, if it names one inside the frame.

    `sink` takes a syndrome and the frame's length in blocks into a queue of `queue` (one a cycle; `missed`
    counts those that found it full). The head's syndrome is compared with x^k mod G for `blocks_per_cycle`
    blocks' worth of k (64 each) a cycle, from the frame's end, and stepped back by as many blocks (times
    x^-64 a block, a constant matrix: an XOR of up to 32 bits a bit). `source` shows for one cycle whether a
    bit was found (`found`) and where: `block` from the frame's end (0 its trailer) and `bit` in that block.
    Its `ready` is not read: nothing holds a result back.

    Latency: s + 3 cycles from the syndrome taken into an empty queue, s the step (from 0) that holds its bit,
    or ceil(blocks / blocks_per_cycle) + 2 when no step does: 1 the queue, 1 each step's compare (registered),
    1 the result. Each step's compares and the OR of their hits are registered: the deframer that holds it is at
    8 levels (`monet board estimate --cores link.deframer`), its deepest path elsewhere.
    """
    def __init__(self, blocks_per_cycle=2, queue=4):
        assert blocks_per_cycle in (1, 2, 4)
        self.sink   = sink   = stream.Endpoint(syndrome_layout)
        self.source = source = stream.Endpoint(position_layout)
        self.missed = Signal(32)

        # # #

        per_step = BLOCK_BITS * blocks_per_cycle
        self.fifo = fifo = LevelFIFO(syndrome_layout, queue)
        self.comb += sink.connect(fifo.sink)
        self.sync += If(sink.valid & ~sink.ready, self.missed.eq(self.missed + 1))

        syndrome = Signal(CRC_BITS)   # the head's syndrome, stepped back `per_step` bits a cycle
        blocks   = Signal(FRAME_BLOCKS_BITS)
        first    = Signal(FRAME_BLOCKS_BITS)   # the first block, from the end, that this step covers (< 137 + 4)
        busy     = Signal()
        # A step's compare, registered: whether it hit, which k, its first block, and whether it was the last.
        seen, seen_hit, seen_last = Signal(), Signal(), Signal()
        seen_k     = Signal(log2_int(per_step))
        seen_first = Signal(FRAME_BLOCKS_BITS)
        finish     = Signal()

        hits = [syndrome == x_power(k) for k in range(per_step)]
        k_bits = [reduce(or_, [hit for k, hit in enumerate(hits) if k >> b & 1]) for b in range(len(seen_k))]
        # Each bit of the stepped syndrome: the XOR of the bits whose x^i / x^per_step has it set.
        columns = []
        for i in range(CRC_BITS):
            r = 1 << i
            for _ in range(per_step):
                r = over_x(r)
            columns.append(r)
        stepped = [reduce(xor, [syndrome[i] for i in range(CRC_BITS) if columns[i] >> o & 1]) for o in range(CRC_BITS)]

        bit_bits = log2_int(BLOCK_BITS)
        block = Signal(FRAME_BLOCKS_BITS)
        self.comb += [
            fifo.source.ready.eq(~busy),
            finish.eq(seen & (seen_hit | seen_last)),
            block.eq(seen_first + (seen_k[bit_bits:] if blocks_per_cycle > 1 else 0)),
            source.valid.eq(finish),
            source.found.eq(seen_hit & (block < blocks)),
            source.block.eq(block),
            source.bit.eq(Mux(block == 0, seen_k[:bit_bits] ^ 32, seen_k[:bit_bits])),
        ]
        self.sync += [
            If(fifo.source.valid & ~busy,
                busy.eq(1), syndrome.eq(fifo.source.syndrome), blocks.eq(fifo.source.blocks), first.eq(0),
            ).Elif(busy & ~finish,
                syndrome.eq(Cat(*stepped)), first.eq(first + blocks_per_cycle),
            ),
            seen.eq(busy & ~finish),
            # The compares are worked out only in a step (a simulator then skips them between failed frames).
            If(busy & ~finish,
                seen_hit.eq(reduce(or_, hits)),
                seen_k.eq(Cat(*k_bits)),
                seen_first.eq(first),
                seen_last.eq(first + blocks_per_cycle >= blocks),
            ),
            If(finish, busy.eq(0), seen.eq(0)),
        ]
