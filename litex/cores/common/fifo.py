#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A stream FIFO that an element skips while nothing waits in it."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream


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
        def element(endpoint):
            return Cat(endpoint.first, endpoint.last, *endpoint.payload.flatten(), *endpoint.param.flatten())
        self.sync += If(load,
            source.valid.eq(Mux(self.passing, sink.valid, fifo.source.valid)),
            element(source).eq(Mux(self.passing, element(sink), element(fifo.source))),
        )
