#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Memory card: the de-streamer that executes link transactions on its memory (SRAM or DDR4) and answers them."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.delay import DelayLine
from monet.cores.common.layouts import *
from monet.cores.memcard.ddr4 import DDR4Memory


MEMORY_SRAM = 0   # `memory` values: the on-card SRAM (a line a cycle) ...
MEMORY_DDR4 = 1   # ... or DDR4 through LiteDRAM (with_ddr4)


class MemoryCard(LiteXModule):
    """Executes read and write requests on the card's memory, chosen at run time by `memory`: a 512-bit wide
    SRAM that serves a line a cycle, or (with_ddr4) DDR4 through LiteDRAM (`ddr4.DDR4Memory`).

    Latency, request taken to response offered: SRAM 3 cycles (request FIFO 2, memory read 1), DDR4 2 plus
    the DRAM's (see `DDR4Memory`); then the delay line's max(`latency`, 1) (`latency`: a CSR, default 0,
    the fixed extra cycles of a modelled streamer). `service_sum` / `service_count` measure the memory's
    share, request leaving the input FIFO to response entering the delay line. A request beyond the memory's
    size or of another type is answered with an error frame by the SRAM stage. Requests are bounded by the
    requester's tags, so `max_outstanding` sizes the input FIFO and nothing is ever dropped. Switch
    `memory` only while no request is in flight.

    The DRAM runs in its own clock domain, `ddr4`, the system clock itself. With `gate_ddr4_clock` (the
    sim's choice) that clock stops while `memory` selects the SRAM: Verilator evaluates the controller, its
    16 bank machines and the PHY model's banks only on their clock's edges, so a frozen DRAM costs the model
    nothing and SRAM runs keep the speed of a card without DDR4. Stopped, the DRAM neither refreshes nor
    forgets (the PHY model keeps its data).
    """
    def __init__(self, size=4*1024*1024, max_outstanding=32, with_ddr4=False, clk_freq=250e6, gate_ddr4_clock=True):
        assert size % LINE_BYTES == 0
        self.sink   = sink   = stream.Endpoint(txn_layout)  # requests from the link (never stalled).
        self.source = source = stream.Endpoint(txn_layout)  # responses to the link.
        self.latency = Signal(16)
        self.memory  = Signal()      # MEMORY_SRAM or MEMORY_DDR4
        self.reads   = Signal(32)
        self.writes  = Signal(32)
        self.errors  = Signal(32)
        self.service_sum   = Signal(32)
        self.service_count = Signal(32)
        self.taken   = Signal()     # a request left the input FIFO (a credit back to the requester).

        # # #

        now = Signal(32)
        self.sync += now.eq(now + 1)

        lines = size // LINE_BYTES
        self.mem = mem = Memory(LINE_BITS, lines)
        port = mem.get_port(write_capable=True, we_granularity=8)
        self.specials += mem, port

        self.requests = requests = stream.SyncFIFO(txn_layout, max_outstanding, buffered=True)
        self.comb += sink.connect(requests.sink)

        req       = requests.source
        in_range  = Signal()
        is_access = Signal()
        to_ddr4   = Signal()
        self.comb += [
            in_range.eq(req.laddr < lines),
            is_access.eq(in_range & ((req.type == T_RD_REQ) | (req.type == T_WR_REQ))),
        ]
        self.delay = delay = DelayLine(txn_layout, max_outstanding)
        self.comb += delay.delay.eq(self.latency)

        # DDR4: requests go to the DRAM, whose responses take the delay line before the SRAM stage's.
        ddr4_valid = Signal()
        if with_ddr4:
            self.ddr4 = ddr4 = ClockDomainsRenamer("ddr4")(DDR4Memory(size, clk_freq, depth=max_outstanding))
            self.add_ddr4_clock(gated=gate_ddr4_clock)
            self.comb += [
                to_ddr4.eq(is_access & (self.memory == MEMORY_DDR4)),
                # The DRAM's inputs stay still while the SRAM serves, or its logic would be evaluated anyway.
                If(self.memory == MEMORY_DDR4,
                    req.connect(ddr4.sink, omit={"valid", "ready"}),
                    ddr4.sink.stamp.eq(now),
                ),
                ddr4.sink.valid.eq(req.valid & to_ddr4),
                ddr4_valid.eq(ddr4.source.valid),
            ]

        # SRAM stage: access the memory (reads come out the next cycle); errors are answered here too.
        stage_valid = Signal()
        stage_go    = Signal()   # the stage's response enters the delay line
        stage       = Record(txn_layout)
        stage_read  = Signal()
        stage_stamp = Signal(32)
        self.comb += [
            stage_go.eq(delay.sink.ready & ~ddr4_valid),
            self.taken.eq(req.valid & req.ready),
            req.ready.eq(Mux(to_ddr4, ddr4.sink.ready if with_ddr4 else 0, ~stage_valid | stage_go)),
            # While the stage waits, keep its address so the read data stays valid.
            port.adr.eq(Mux(stage_valid & ~stage_go, stage.laddr, req.laddr)),
            port.dat_w.eq(req.data),
            If(req.valid & req.ready & ~to_ddr4 & in_range & (req.type == T_WR_REQ),
                port.we.eq(req.mask)
            ),
        ]
        self.sync += [
            If(stage_go, stage_valid.eq(0)),
            If(req.valid & req.ready,
                If(~to_ddr4,
                    stage_valid.eq(1),
                    stage_read.eq(in_range & (req.type == T_RD_REQ)),
                    stage.tag.eq(req.tag),
                    stage.laddr.eq(req.laddr),
                    stage_stamp.eq(now),
                    If(~is_access,
                        stage.type.eq(T_ERR),
                    ).Elif(req.type == T_RD_REQ,
                        stage.type.eq(T_RD_RSP),
                    ).Else(
                        stage.type.eq(T_WR_ACK),
                    )
                ),
                If(~is_access,
                    self.errors.eq(self.errors + 1),
                ).Elif(req.type == T_RD_REQ,
                    self.reads.eq(self.reads + 1),
                ).Else(
                    self.writes.eq(self.writes + 1),
                )
            )
        ]
        # The response waits out the programmed latency, then goes to the link: the DRAM's first.
        stamp = Signal(32)
        from_stage = [
            delay.sink.valid.eq(stage_valid),
            delay.sink.type.eq(stage.type),
            delay.sink.tag.eq(stage.tag),
            delay.sink.laddr.eq(stage.laddr),
            delay.sink.mask.eq(2**LINE_BYTES - 1),
            delay.sink.data.eq(Mux(stage_read, port.dat_r, 0)),
            stamp.eq(stage_stamp),
        ]
        if with_ddr4:
            self.comb += If(ddr4_valid,
                ddr4.source.connect(delay.sink, omit={"stamp"}),
                stamp.eq(ddr4.source.stamp),
            ).Else(*from_stage)
        else:
            self.comb += from_stage
        self.comb += delay.source.connect(source)
        service = Signal(32)
        self.comb += service.eq(now - stamp)
        self.sync += If(delay.sink.valid & delay.sink.ready,
            self.service_sum.eq(self.service_sum + service),
            self.service_count.eq(self.service_count + 1),
        )

    def add_ddr4_clock(self, gated):
        """The `ddr4` domain: the system clock, stopped while the SRAM is selected (`gated`). The gate opens
        and closes on the falling edge, so the gated clock never glitches."""
        self.clock_domains.cd_ddr4 = cd_ddr4 = ClockDomain()
        self.comb += cd_ddr4.rst.eq(ResetSignal())
        if not gated:
            self.comb += cd_ddr4.clk.eq(ClockSignal())
            return
        self.clock_domains.cd_ddr4_gate = cd_gate = ClockDomain(reset_less=True)
        gate = Signal()
        self.comb += [
            cd_gate.clk.eq(~ClockSignal()),
            cd_ddr4.clk.eq(ClockSignal() & gate),
        ]
        self.sync.ddr4_gate += gate.eq(self.memory == MEMORY_DDR4)

    def add_control(self):
        self._latency = CSRStorage(16, description="Extra access latency, cycles (0: the memory's own speed).")
        self._reads   = CSRStatus(32, description="Line reads served.")
        self._writes  = CSRStatus(32, description="Line writes served.")
        self._errors  = CSRStatus(32, description="Requests answered with an error (out of range, bad type).")
        self._memory  = CSRStorage(1, description="Memory: 0 the on-card SRAM, 1 DDR4 (if built with it).")
        self._service_sum   = CSRStatus(32, description="Sum of the memory's service times, cycles.")
        self._service_count = CSRStatus(32, description="Responses the service sum covers.")
        self.comb += [
            self.latency.eq(self._latency.storage),
            self.memory.eq(self._memory.storage),
            self._reads.status.eq(self.reads),
            self._writes.status.eq(self.writes),
            self._errors.status.eq(self.errors),
            self._service_sum.status.eq(self.service_sum),
            self._service_count.status.eq(self.service_count),
        ]
        if hasattr(self, "ddr4"):
            self._refreshes = CSRStatus(32, description="DDR4 refresh commands issued.")
            self.comb += self._refreshes.status.eq(self.ddr4.refreshes)
