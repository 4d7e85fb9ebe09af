#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Memory card: the de-streamer that executes link transactions on its memory and answers them."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.delay import DelayLine
from monet.cores.common.layouts import *


class MemoryCard(LiteXModule):
    """Executes read and write requests on a 512-bit wide on-card memory, in order, one a cycle.

    Latency, request taken to response offered: 3 cycles (request FIFO 2, memory read 1) plus the delay
    line's max(`latency`, 1) (`latency`: a CSR, default 0, which stands in for a DRAM until the DDR4/HMC
    timing models arrive). A request beyond the memory's size is answered with an error frame. Requests are
    bounded by the requester's tags, so `max_outstanding` sizes the input FIFO and nothing is ever dropped.
    """
    def __init__(self, size=4*1024*1024, max_outstanding=32):
        assert size % LINE_BYTES == 0
        self.sink   = sink   = stream.Endpoint(txn_layout)  # requests from the link (never stalled).
        self.source = source = stream.Endpoint(txn_layout)  # responses to the link.
        self.latency = Signal(16)
        self.reads   = Signal(32)
        self.writes  = Signal(32)
        self.errors  = Signal(32)
        self.taken   = Signal()     # a request left the input FIFO (a credit back to the requester).

        # # #

        lines = size // LINE_BYTES
        self.mem = mem = Memory(LINE_BITS, lines)
        port = mem.get_port(write_capable=True, we_granularity=8)
        self.specials += mem, port

        self.requests = requests = stream.SyncFIFO(txn_layout, max_outstanding, buffered=True)
        self.comb += sink.connect(requests.sink)

        # Stage 1: access the memory (reads come out the next cycle).
        req       = requests.source
        in_range  = Signal()
        self.comb += in_range.eq(req.laddr < lines)
        self.delay = delay = DelayLine(txn_layout, max_outstanding)
        self.comb += delay.delay.eq(self.latency)

        stage_valid = Signal()
        stage       = Record(txn_layout)
        stage_read  = Signal()
        self.comb += [
            self.taken.eq(req.valid & req.ready),
            req.ready.eq(~stage_valid | delay.sink.ready),
            # While the stage waits, keep its address so the read data stays valid.
            port.adr.eq(Mux(stage_valid & ~delay.sink.ready, stage.laddr, req.laddr)),
            port.dat_w.eq(req.data),
            If(req.valid & req.ready & in_range & (req.type == T_WR_REQ),
                port.we.eq(req.mask)
            ),
        ]
        self.sync += [
            If(delay.sink.ready, stage_valid.eq(0)),
            If(req.valid & req.ready,
                stage_valid.eq(1),
                stage_read.eq(in_range & (req.type == T_RD_REQ)),
                stage.tag.eq(req.tag),
                stage.laddr.eq(req.laddr),
                If(~in_range | ((req.type != T_RD_REQ) & (req.type != T_WR_REQ)),
                    stage.type.eq(T_ERR),
                    self.errors.eq(self.errors + 1),
                ).Elif(req.type == T_RD_REQ,
                    stage.type.eq(T_RD_RSP),
                    self.reads.eq(self.reads + 1),
                ).Else(
                    stage.type.eq(T_WR_ACK),
                    self.writes.eq(self.writes + 1),
                )
            )
        ]
        # Stage 2: the response waits out the programmed latency, then goes to the link.
        self.comb += [
            delay.sink.valid.eq(stage_valid),
            delay.sink.type.eq(stage.type),
            delay.sink.tag.eq(stage.tag),
            delay.sink.laddr.eq(stage.laddr),
            delay.sink.mask.eq(2**LINE_BYTES - 1),
            delay.sink.data.eq(Mux(stage_read, port.dat_r, 0)),
            delay.source.connect(source),
        ]

    def add_control(self):
        self._latency = CSRStorage(16, description="Extra access latency, cycles (0: on-card SRAM speed).")
        self._reads   = CSRStatus(32, description="Line reads served.")
        self._writes  = CSRStatus(32, description="Line writes served.")
        self._errors  = CSRStatus(32, description="Requests answered with an error (out of range, bad type).")
        self.comb += [
            self.latency.eq(self._latency.storage),
            self._reads.status.eq(self.reads),
            self._writes.status.eq(self.writes),
            self._errors.status.eq(self.errors),
        ]
