#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Memory card: the de-streamer that executes link transactions on its memory (SRAM, DDR4 or HMC) and answers them."""

from functools import reduce
from operator import or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.csr import codes_text
from monet.cores.common.delay import DelayLine
from monet.cores.common.fifo import BypassFIFO
from monet.cores.common.layouts import *
from monet.cores.memcard.codes import MEMORIES, MEMORY_DDR4, MEMORY_HMC
from monet.cores.memcard.ddr4 import DDR4_DEPTH, DDR4Memory



# A request's class, kept beside it in the input FIFO: below the selected memory's size, a read or write
# request in range, one for DDR4 or the HMC rather than the SRAM stage, and a read of the poisoned line.
CLASS_LAYOUT = [("in_range", 1), ("is_access", 1), ("to_other", 1), ("poisoned", 1)]
CLASS_FIELDS = {name for name, _ in CLASS_LAYOUT}


class MemoryCard(LiteXModule):
    """Executes read and write requests on the card's memory, chosen at run time by `memory`: a 512-bit wide
    SRAM that serves a line a cycle, (with_ddr4) DDR4 through LiteDRAM (`ddr4.DDR4Memory`), or `hmc`: any
    module that serves line transactions on a `txn_layout` sink and source, answering each request once
    with its tag, its logic in clock domain `hmc` (the SoC passes its HMC controller, link and device
    model, soc/hmc.py). A `memory` value the card was not built with is served by the SRAM.

    Latency, request taken to response offered: SRAM 2 cycles (the input FIFO's register 1, the memory read
    1), DDR4 and HMC 1 plus the memory's own; then the delay line's `latency` (a CSR, default 0, the fixed
    extra cycles of a modelled streamer). A request that finds the input FIFO empty enters its output
    register directly (BypassFIFO), and an answer goes around the empty delay line at latency 0; behind
    others a request waits in the FIFO (2 cycles) and an answer in the delay line (at least 1).
    `service_sum` / `service_count` measure the memory's share, request leaving the input FIFO's register to
    response entering the delay line (they follow an answer by 3 cycles). A request beyond the memory's
    size or of another type is answered with an error frame by the SRAM stage, and so is a read of the poisoned
    line (`poison`, `poison_line`: fault injection, as the memory would answer an uncorrectable word; whatever
    the memory, the SRAM stage answers it and `poisoned` counts it). Requests are bounded by the
    requester's tags, so `max_outstanding` sizes the input FIFO and nothing is ever dropped; the DDR4 front
    takes DDR4_DEPTH of them at most, the rest wait in the FIFO. Switch `memory` only while no request is in
    flight.

    The DRAM and the HMC run in clock domains of their own, `ddr4` and `hmc`, the system clock itself. With
    `gate_clocks` (the sim's choice) each stops while `memory` selects another memory: Verilator evaluates
    the controller, its 16 bank machines and the PHY model's banks only on their clock's edges, so a frozen
    DRAM costs the model nothing and SRAM runs keep the speed of a card without DDR4. Stopped, a memory
    neither refreshes nor forgets (the PHY model and the HMC's vaults keep their data); an HMC link waits
    where it stopped.

    With `with_local_port`, `local_sink` / `local_source` serve a second requester beside the link: the
    sim's compute card reaches the same memories as its local memory, without the link (ReMAT's local
    target). Its requests wait while the link's arrive and take the same input FIFO (the requesters' tags
    are shared, so `max_outstanding` still bounds both); each answer goes back the way its request came
    (a bit a tag), and `taken` counts only the link's (its credits).

    `size` is the DDR4's and the HMC's; the SRAM has `sram_size` (default `size`, as the sim has it: one size
    for every memory). A board passes its DDR4 as `ddr4` (a DDR4Memory on its LiteDRAM core) instead of with_ddr4's
    DDR4Memory on LiteDRAM's PHY model.
    """
    def __init__(self, size=4*1024*1024, max_outstanding=32, with_ddr4=False, hmc=None, clk_freq=250e6,
                 gate_clocks=True, with_local_port=False, sram_size=None, ddr4=None):
        assert size % LINE_BYTES == 0
        self.sink   = sink   = stream.Endpoint(txn_layout)  # requests from the link (never stalled).
        self.source = source = stream.Endpoint(txn_layout)  # responses to the link.
        self.latency = Signal(16)
        self.memory  = Signal(2)     # MEMORY_SRAM, MEMORY_DDR4 or MEMORY_HMC
        self.reads   = Signal(32)
        self.writes  = Signal(32)
        self.errors  = Signal(32)
        self.service_sum   = Signal(32)
        self.service_count = Signal(32)
        self.taken   = Signal()     # a request left the input FIFO (a credit back to the requester).
        # A line whose reads the memory answers with an error, as an uncorrectable word would be (`poison`).
        self.poison      = Signal()
        self.poison_line = Signal(32)
        self.poisoned    = Signal(32)   # reads of it answered with an error

        # # #

        self.now = now = Signal(32)     # the cycle count the service times are stamped with
        self.sync += now.eq(now + 1)

        lines = size // LINE_BYTES
        sram_lines = (sram_size or size) // LINE_BYTES
        self.mem = mem = Memory(LINE_BITS, sram_lines)
        port = mem.get_port(write_capable=True, we_granularity=8)
        self.specials += mem, port

        # A request that finds nothing waiting enters the FIFO's output register directly (1 cycle; 2 behind
        # others). What the card does with it (in range, an access, for DDR4 or the HMC) is decided as it
        # arrives and kept beside it, so that its readiness and what it meets next (SRAM address, DDR4
        # command) start from that register.
        self.requests = requests = BypassFIFO(txn_layout + CLASS_LAYOUT, max_outstanding, registered=True)
        arriving  = requests.sink
        req       = requests.source
        from_local = Signal()   # the request leaving the input FIFO came through the local port
        if with_local_port:
            self.local_sink   = local_sink   = stream.Endpoint(txn_layout)
            self.local_source = local_source = stream.Endpoint(txn_layout)
            origin = Memory(1, 2**TAG_BITS)      # a tag's request came through the local port
            origin_w = origin.get_port(write_capable=True)
            origin_req = origin.get_port(async_read=True)
            origin_rsp = origin.get_port(async_read=True)
            self.specials += origin, origin_w, origin_req, origin_rsp
            self.comb += [
                If(sink.valid,
                    sink.connect(requests.sink),
                ).Else(
                    local_sink.connect(requests.sink),
                ),
                origin_w.adr.eq(requests.sink.tag),
                origin_w.dat_w.eq(~sink.valid),
                origin_w.we.eq(requests.sink.valid & requests.sink.ready),
                origin_req.adr.eq(req.tag),
                from_local.eq(origin_req.dat_r),
            ]
        else:
            self.comb += sink.connect(requests.sink)

        in_range, is_access, to_other = req.in_range, req.is_access, req.to_other
        built = [MEMORY_DDR4] * (with_ddr4 or ddr4 is not None) + [MEMORY_HMC] * (hmc is not None)
        if sram_lines == lines:
            bound = lines
        else:    # the SRAM's size when it serves, the other memory's when one is selected
            bound = Mux(reduce(or_, [self.memory == value for value in built], 0), lines, sram_lines)
        self.comb += [
            arriving.in_range.eq(arriving.laddr < bound),
            arriving.poisoned.eq(self.poison & (arriving.type == T_RD_REQ) & (arriving.laddr == self.poison_line)),
            arriving.is_access.eq(arriving.in_range & ~arriving.poisoned &
                                  ((arriving.type == T_RD_REQ) | (arriving.type == T_WR_REQ))),
        ]
        self.delay = delay = DelayLine(txn_layout, max_outstanding, with_bypass=True)
        self.comb += delay.delay.eq(self.latency)

        # DDR4 and HMC: requests go to the selected memory, whose responses take the delay line before the
        # SRAM stage's. Each memory's inputs stay still while it is not selected, or its logic would be
        # evaluated anyway.
        others = []         # (memory, its `memory` value, the stamp of a response it offers)
        if with_ddr4 or ddr4 is not None:
            self.ddr4 = ddr4 = ClockDomainsRenamer("ddr4")(
                ddr4 if ddr4 is not None else DDR4Memory(size, clk_freq, depth=min(max_outstanding, DDR4_DEPTH)))
            self.add_gated_clock("ddr4", MEMORY_DDR4, gate_clocks)
            self.comb += If(self.memory == MEMORY_DDR4, ddr4.sink.stamp.eq(now))
            others.append((ddr4, MEMORY_DDR4, ddr4.source.stamp))
        if hmc is not None:
            self.hmc = hmc
            self.add_gated_clock("hmc", MEMORY_HMC, gate_clocks)
            # The HMC answers out of order: each tag's start time waits in a table.
            stamps = Memory(32, 2**TAG_BITS)
            stamp_w = stamps.get_port(write_capable=True)
            stamp_r = stamps.get_port(async_read=True)
            self.specials += stamps, stamp_w, stamp_r
            self.comb += [
                stamp_w.adr.eq(req.tag), stamp_w.dat_w.eq(now),
                stamp_w.we.eq(hmc.sink.valid & hmc.sink.ready),
                stamp_r.adr.eq(hmc.source.tag),
            ]
            others.append((hmc, MEMORY_HMC, stamp_r.dat_r))
        other_ready = Signal()   # the selected memory takes the request
        other_valid = Signal()   # a memory offers a response
        selected    = Signal(max(len(others), 1))
        for i, (memory, value, _) in enumerate(others):
            self.comb += [
                selected[i].eq(self.memory == value),
                If(selected[i],
                    req.connect(memory.sink, omit={"valid", "ready", "stamp"} | CLASS_FIELDS),
                    other_ready.eq(memory.sink.ready),
                ),
                memory.sink.valid.eq(req.valid & to_other & selected[i]),
            ]
        self.comb += [
            arriving.to_other.eq(arriving.is_access & (selected != 0)),
            other_valid.eq(reduce(or_, [m.source.valid for m, _, _ in others], 0)),
        ]

        # SRAM stage: access the memory (reads come out the next cycle); errors are answered here too.
        stage_valid = Signal()
        stage_go    = Signal()   # the stage's response enters the delay line
        stage       = Record(txn_layout)
        stage_read  = Signal()
        stage_stamp = Signal(32)
        self.comb += [
            stage_go.eq(delay.sink.ready & ~other_valid),
            self.taken.eq(req.valid & req.ready & ~from_local),
            req.ready.eq(Mux(to_other, other_ready, ~stage_valid | stage_go)),
            # While the stage waits, keep its address so the read data stays valid.
            port.adr.eq(Mux(stage_valid & ~stage_go, stage.laddr, req.laddr)),
            port.dat_w.eq(req.data),
            If(req.valid & req.ready & ~to_other & in_range & (req.type == T_WR_REQ),
                port.we.eq(req.mask)
            ),
        ]
        self.sync += [
            If(stage_go, stage_valid.eq(0)),
            If(req.valid & req.ready,
                If(~to_other,
                    stage_valid.eq(1),
                    stage_read.eq(is_access & (req.type == T_RD_REQ)),
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
                    If(req.poisoned, self.poisoned.eq(self.poisoned + 1)),
                ).Elif(req.type == T_RD_REQ,
                    self.reads.eq(self.reads + 1),
                ).Else(
                    self.writes.eq(self.writes + 1),
                )
            )
        ]
        # The response waits out the programmed latency, then goes to the link: DDR4's or the HMC's first.
        stamp = Signal(32)
        responses = If(0)
        for memory, _, memory_stamp in others:
            responses = responses.Elif(memory.source.valid,
                memory.source.connect(delay.sink, omit={"stamp"}),
                stamp.eq(memory_stamp),
            )
        self.comb += responses.Else(
            delay.sink.valid.eq(stage_valid),
            delay.sink.type.eq(stage.type),
            delay.sink.tag.eq(stage.tag),
            delay.sink.laddr.eq(stage.laddr),
            delay.sink.mask.eq(2**LINE_BYTES - 1),
            delay.sink.data.eq(Mux(stage_read, port.dat_r, 0)),
            stamp.eq(stage_stamp),
        )
        if with_local_port:
            self.comb += [
                origin_rsp.adr.eq(delay.source.tag),
                If(origin_rsp.dat_r,
                    delay.source.connect(local_source),
                ).Else(
                    delay.source.connect(source),
                ),
            ]
        else:
            self.comb += delay.source.connect(source)
        # The answer's stamp is registered, then its service time, then summed: from the DDR4 front's answer,
        # the difference and the sum's carry chains in one cycle were 11 levels.
        served, stamped = Signal(2), Signal(32)
        service = Signal(32)
        self.sync += [
            served.eq(Cat(delay.sink.valid & delay.sink.ready, served[0])),
            stamped.eq(stamp),
            service.eq(now - 1 - stamped),   # `stamped` was taken a cycle ago
            If(served[1],
                self.service_sum.eq(self.service_sum + service),
                self.service_count.eq(self.service_count + 1),
            ),
        ]

    def add_gated_clock(self, name, memory, gated):
        """The clock domain `name`: the system clock, stopped while `memory` is not selected (`gated`). The
        gate opens and closes on the falling edge, so the gated clock never glitches."""
        cd = ClockDomain(name)
        setattr(self.clock_domains, f"cd_{name}", cd)
        self.comb += cd.rst.eq(ResetSignal())
        if not gated:
            self.comb += cd.clk.eq(ClockSignal())
            return
        cd_gate = ClockDomain(f"{name}_gate", reset_less=True)
        setattr(self.clock_domains, f"cd_{name}_gate", cd_gate)
        gate = Signal(name=f"{name}_gate")
        self.comb += [
            cd_gate.clk.eq(~ClockSignal()),
            cd.clk.eq(ClockSignal() & gate),
        ]
        gate_sync = getattr(self.sync, f"{name}_gate")
        gate_sync += gate.eq(self.memory == memory)

    def add_control(self):
        self._latency = CSRStorage(16, description="Extra access latency, cycles (0: the memory's own speed).")
        self._reads   = CSRStatus(32, description="Line reads served.")
        self._writes  = CSRStatus(32, description="Line writes served.")
        self._errors  = CSRStatus(32, description="Requests answered with an error (out of range, bad type).")
        self._memory  = CSRStorage(2, description=f"Memory: {codes_text(MEMORIES)} (the memories it is built "
                                                  "with; codes.py).")
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
        self._poison = CSRStorage(fields=[CSRField("enable", size=1, description="Answer reads of `line` with an "
                                                   "error, as the memory would an uncorrectable word.")])
        self._poison_line = CSRStorage(32, description="The poisoned line (line address: byte address / 64).")
        self._poisoned    = CSRStatus(32, description="Reads of the poisoned line answered with an error.")
        self.comb += [
            self.poison.eq(self._poison.fields.enable),
            self.poison_line.eq(self._poison_line.storage),
            self._poisoned.status.eq(self.poisoned),
        ]
        if hasattr(self, "ddr4"):
            self._refreshes = CSRStatus(32, description="DDR4 refresh commands issued.")
            self._refresh_waits = CSRStatus(32, description="Requests that arrived while the DDR4 was held "
                                                            "for a refresh (they wait for it).")
            self.comb += [
                self._refreshes.status.eq(self.ddr4.refreshes),
                self._refresh_waits.status.eq(self.ddr4.refresh_waits),
            ]
