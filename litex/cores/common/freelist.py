#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A free list of ids: which of `n` tags (or transaction ids) are free to hand out."""

from migen import *

from litex.gen import LiteXModule


class FreeList(LiteXModule):
    """The free ids of 0 .. `n` - 1 in a ring (LUT RAM), all free after reset, handed out in the order they came
    back. One id out (`pop`) and one back (`push` with `push_id`) a cycle, both in the same cycle if need be.

    A priority search over a mask of free ids would be as many logic levels deep as it has ids (17 LUT levels
    for 128); the ring's head is one LUT-RAM read from a register, so handing out an id stays one a cycle at
    250 MHz. Latency: `head` and `available` hold the next id now (0 cycles); an id pushed is handed out
    again at the earliest the next cycle. Pushing an id that is not out, or popping while none is
    `available`, is the caller's error.
    """
    def __init__(self, n):
        assert n & (n - 1) == 0 and n >= 2, "the ring's pointers wrap: n is a power of two"
        self.head      = Signal(max=n)      # the id `pop` takes.
        self.available = Signal()           # an id is free.
        self.pop       = Signal()
        self.push      = Signal()
        self.push_id   = Signal(max=n)

        # # #

        bits = log2_int(n)
        # Not an attribute: LiteX would map an attribute Memory into the CSR space.
        ring = Memory(bits, n, init=list(range(n)))
        read, write = ring.get_port(async_read=True), ring.get_port(write_capable=True)
        self.specials += ring, read, write
        rd_ptr, wr_ptr = Signal(bits), Signal(bits)
        # Free ids held: n after reset. The +1 and -1 are made before `pop` and `push` choose, so that those
        # late strobes only drive a multiplexer.
        level, level_up, level_down = Signal(bits + 1, reset=n), Signal(bits + 1), Signal(bits + 1)
        self.comb += [
            read.adr.eq(rd_ptr),
            self.head.eq(read.dat_r),
            self.available.eq(level != 0),
            write.adr.eq(wr_ptr),
            write.dat_w.eq(self.push_id),
            write.we.eq(self.push),
            level_up.eq(level + 1),
            level_down.eq(level - 1),
        ]
        self.sync += [
            If(self.pop, rd_ptr.eq(rd_ptr + 1)),
            If(self.push, wr_ptr.eq(wr_ptr + 1)),
            If(self.push & ~self.pop, level.eq(level_up)).Elif(self.pop & ~self.push, level.eq(level_down)),
        ]
