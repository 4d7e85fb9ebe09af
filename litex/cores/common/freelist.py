#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A free list of ids: which of `n` tags (or transaction ids) are free to hand out."""

from migen import *

from litex.gen import LiteXModule

from monet.cores.common.arith import count_strobes


class FreeList(LiteXModule):
    """The free ids of 0 .. `n` - 1 (or the `n` ids given) in a ring (LUT RAM), all free after reset, handed out
    in the order they came back; pushed ids may come from a wider space of `id_bits` (lists that share ids). One
    id out (`pop`) and one back (`push` with `push_id`) a cycle, both in the same cycle if need be.

    A priority search over a mask of free ids would be as many logic levels deep as it has ids (17 LUT levels
    for 128); the ring's head is one LUT-RAM read from a register, so handing out an id stays one a cycle at
    250 MHz. Latency: `head` and `available` hold the next id now (0 cycles); an id pushed is handed out
    again at the earliest the next cycle. Pushing an id that is not out, or popping while none is
    `available`, is the caller's error.

    with_floor: `room` (a register, no later than `available`) says more than `floor` ids are free, so that a
    caller may keep `floor` of them back (fewer ids out at once than the list holds, set at run time); it
    compares with the floor of the cycle before, so a new floor holds from the second cycle on.
    """
    def __init__(self, n, ids=None, id_bits=None, with_floor=False):
        assert n & (n - 1) == 0 and n >= 2, "the ring's pointers wrap: n is a power of two"
        ids = list(range(n)) if ids is None else list(ids)   # the free ids after reset (n of them)
        assert len(ids) == n
        width = id_bits or bits_for(max(max(ids), 1))       # ids pushed may be any of a wider space
        self.head      = Signal(width)      # the id `pop` takes.
        self.available = Signal()           # an id is free.
        self.pop       = Signal()
        self.push      = Signal()
        self.push_id   = Signal(width)

        # # #

        bits = log2_int(n)
        # Not an attribute: LiteX would map an attribute Memory into the CSR space.
        ring = Memory(width, n, init=ids)
        read, write = ring.get_port(async_read=True), ring.get_port(write_capable=True)
        self.specials += ring, read, write
        rd_ptr, wr_ptr = Signal(bits), Signal(bits)
        # Free ids held: n after reset. The +1 and -1 are made before `pop` and `push` choose, so that those
        # late strobes only drive a multiplexer.
        level, level_up = Signal(bits + 1, reset=n), Signal(bits + 1)
        level_down = Signal(bits + 1)
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
        if with_floor:
            # The next level's compare, each of the three made from registers: pop and push only choose.
            self.floor = Signal(bits + 1)
            self.room  = Signal(reset=1)
            self.sync += If(self.push & ~self.pop, self.room.eq(level_up > self.floor)
                ).Elif(self.pop & ~self.push, self.room.eq(level_down > self.floor)
                ).Else(self.room.eq(level > self.floor))


class PairedFreeList(LiteXModule):
    """The free ids of 0 .. `n` - 1 in two FreeLists of `n` / 2, so that two ids can go out and two come back
    in one cycle (a transaction and the one paired with it, two answers in one cycle).

    `first` is the head of the list holding more ids, `second` the other's: `pop_first` takes one id,
    `pop_first` with `pop_second` two. An id coming back goes to the list holding fewer (`push_first`), a
    second one in the same cycle to the other. The two lists never differ by more than one id, so one id is
    free exactly when `available`, two when `two_available`, as with one list of `n`. Latency as FreeList's:
    0 cycles out, an id back is out again the next cycle at the earliest.
    """
    def __init__(self, n):
        assert n & (n - 1) == 0 and n >= 4
        half, id_bits = n // 2, log2_int(n)
        self.first, self.second = Signal(id_bits), Signal(id_bits)
        self.available, self.two_available = Signal(), Signal()
        self.pop_first, self.pop_second = Signal(), Signal()
        self.push_first, self.push_second = Signal(), Signal()
        self.push_first_id, self.push_second_id = Signal(id_bits), Signal(id_bits)

        # # #

        self.list_a = a = FreeList(half, ids=range(half), id_bits=id_bits)
        self.list_b = b = FreeList(half, ids=range(half, n), id_bits=id_bits)
        # List A's free ids less list B's, plus one: 0, 1 or 2.
        lean = Signal(2, reset=1)
        b_fuller, a_fuller = Signal(), Signal()
        self.comb += [
            b_fuller.eq(lean == 0),
            a_fuller.eq(lean == 2),
            self.first.eq(Mux(b_fuller, b.head, a.head)),
            self.second.eq(Mux(b_fuller, a.head, b.head)),
            self.available.eq(a.available | b.available),
            self.two_available.eq(a.available & b.available),
            # Out: the first from the fuller list (A when even), the second from the other.
            a.pop.eq(Mux(b_fuller, self.pop_second, self.pop_first)),
            b.pop.eq(Mux(b_fuller, self.pop_first, self.pop_second)),
            # Back: the first to the emptier list (A when even), the second to the other.
            a.push.eq(Mux(a_fuller, self.push_second, self.push_first)),
            b.push.eq(Mux(a_fuller, self.push_first, self.push_second)),
            a.push_id.eq(Mux(a_fuller, self.push_second_id, self.push_first_id)),
            b.push_id.eq(Mux(a_fuller, self.push_first_id, self.push_second_id)),
        ]
        # The lean moves by A's net change less B's.
        count_strobes(self, lean, ups=[a.push, b.pop], downs=[a.pop, b.push])
