#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Run-time programmable delay line for streams."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.fifo import BypassFIFO


class DelayLine(LiteXModule):
    """Delays each element of a stream by `delay` cycles, set at run time (0 .. depth-1 useful; below
    2**(delay_bits-1) at most: a stamp's age is told from its sign).

    Elements are stamped on entry and released once `delay` cycles have passed, in order; the line holds
    up to `depth` elements, so at one element a cycle `depth` bounds the delay. Latency: max(delay, 1)
    cycles (the FIFO costs one); `with_bypass`: `delay` cycles, an element going around the empty line at
    delay 0 (a BypassFIFO). `sink.ready` drops only when the line is full.
    """
    def __init__(self, layout, depth, delay_bits=16, with_bypass=False):
        self.sink   = sink   = stream.Endpoint(layout)
        self.source = source = stream.Endpoint(layout)
        self.delay  = Signal(delay_bits)

        # # #

        now = Signal(delay_bits)
        self.sync += now.eq(now + 1)

        stamped = [("due", delay_bits)] + list(stream.Endpoint(layout).description.payload_layout)
        if with_bypass:
            self.fifo = fifo = BypassFIFO(stamped, depth)
            self.comb += fifo.around.eq(self.delay == 0)
            passing = fifo.passing
        else:
            self.fifo = fifo = stream.SyncFIFO(stamped, depth, buffered=False)
            passing = 0
        self.comb += [
            sink.connect(fifo.sink, omit={"due"}),
            fifo.sink.due.eq(now + self.delay),
        ]
        # Released when due: (now - due) wraps to a small non-negative value once due has passed. The age is
        # the oldest held element's: one going around is due whatever its stamp, so the subtraction starts
        # from the FIFO's memory and not from the bypass's multiplexer behind the FIFO's level.
        held = fifo.fifo.source if with_bypass else fifo.source
        age = Signal(delay_bits)
        due = Signal()
        self.comb += [
            age.eq(now - held.due),
            due.eq(passing | (age[-1] == 0)),   # an element going around is due: the delay is 0
            fifo.source.connect(source, omit={"due", "valid", "ready"}),
            source.valid.eq(fifo.source.valid & due),
            fifo.source.ready.eq(source.ready & due),
        ]
