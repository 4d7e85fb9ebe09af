#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Stream FIFOs: one that an element skips while nothing waits in it, and one whose level waits on no adder."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.arith import count_strobes


def _element(endpoint):
    return Cat(endpoint.first, endpoint.last, *endpoint.payload.flatten(), *endpoint.param.flatten())


class LevelFIFO(LiteXModule):
    """LiteX's unbuffered SyncFIFO (LUT RAM read at the oldest element: latency 1 cycle, `depth` elements, a
    power of two) with its level moved by the write and read strobes picking level + 1, level - 1 or level,
    each made beforehand (common/arith.py's count_strobes): Yosys folds LiteX's three-way level update into
    one adder behind the strobes, which costs two carry levels to a late write (a frame's commit).
    """
    def __init__(self, layout, depth):
        assert depth & (depth - 1) == 0 and depth >= 2
        self.sink   = sink   = stream.Endpoint(layout)
        self.source = source = stream.Endpoint(layout)
        self.level  = Signal(max=depth + 1)

        # # #

        storage = Memory(len(_element(sink)), depth)
        wr = storage.get_port(write_capable=True)
        rd = storage.get_port(async_read=True)
        self.specials += storage, wr, rd
        produce, consume = Signal(log2_int(depth)), Signal(log2_int(depth))
        write, read = Signal(), Signal()
        self.comb += [
            sink.ready.eq(self.level != depth),
            source.valid.eq(self.level != 0),
            write.eq(sink.valid & sink.ready),
            read.eq(source.valid & source.ready),
            wr.adr.eq(produce), wr.dat_w.eq(_element(sink)), wr.we.eq(write),
            rd.adr.eq(consume), _element(source).eq(rd.dat_r),
        ]
        self.sync += [If(write, produce.eq(produce + 1)), If(read, consume.eq(consume + 1))]
        count_strobes(self, self.level, ups=[write], downs=[read])


class BypassFIFO(LiteXModule):
    """LiteX's SyncFIFO with a way around it for an element that finds it empty. Order is kept: nothing
    passes an element that waits. `sink.ready` is the FIFO's room alone.

    Unregistered (the default): while the FIFO is empty (and `around` is set) the element `sink` offers is
    offered on `source` in the same cycle, and written into the FIFO only if `source` does not take it then.
    Latency 0 cycles while the FIFO is empty, otherwise 1. `passing`: `source` offers `sink`'s element.

    `registered`: `source` comes out of a register, as from LiteX's buffered SyncFIFO, so that what follows
    starts from a register; an element that finds the FIFO behind the register empty enters the register
    directly. Latency 1 cycle while the FIFO is empty (the buffered SyncFIFO's 2, its memory then its
    register), otherwise 2. `load`: the register takes an element this cycle (from `sink` while `passing`,
    else the FIFO's oldest), for a register kept beside it.
    """
    def __init__(self, layout, depth, registered=False):
        self.sink    = sink   = stream.Endpoint(layout)
        self.source  = source = stream.Endpoint(layout)
        self.around  = Signal(reset=1)   # the way around may be taken (clear: the FIFO alone)
        self.passing = Signal()

        # # #

        self.fifo = fifo = stream.SyncFIFO(layout, depth)
        self.comb += [
            self.passing.eq(self.around & (fifo.level == 0)),
            sink.connect(fifo.sink, omit={"valid"}),
        ]
        if not registered:
            self.comb += If(self.passing,
                sink.connect(source, omit={"ready"}),
                fifo.sink.valid.eq(sink.valid & ~source.ready),
            ).Else(
                fifo.source.connect(source),
                fifo.sink.valid.eq(sink.valid),
            )
            return
        # The register takes an element when it is empty or its element leaves: the FIFO's oldest, or with
        # none waiting the arriving one, which then skips the FIFO.
        self.load = load = Signal()
        direct = Signal()
        self.comb += [
            load.eq(~source.valid | source.ready),
            direct.eq(self.passing & load),
            fifo.sink.valid.eq(sink.valid & ~direct),
            fifo.source.ready.eq(load),
        ]
        self.sync += If(load,
            source.valid.eq(Mux(self.passing, sink.valid, fifo.source.valid)),
            _element(source).eq(Mux(self.passing, _element(sink), _element(fifo.source))),
        )
