#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""DDR4 behind LiteDRAM: the memory card's DRAM, line transactions on a LiteDRAM native port.

The part is the MONet paper's SO-DIMM, Micron MTA8ATF51264HZ-2G1: eight MT40A512M8 (4 Gb, x8) on a 64-bit
bus at DDR4-2133, CL 15 (speed bin 2133P). LiteDRAM ships MT40A512M8 only at 2400/2666 and the x16 module
MTA4ATF51264HZ (2 bank groups, down-binned 13.5 ns timings), so the part is described here with the timings
of the 2133P bin:

| timing | value | source |
|---|---|---|
| tRCD, tRP | 14.06 ns (15 tCK of 0.938 ns) | JEDEC JESD79-4 speed bin DDR4-2133P; Micron MT40A512M8 data sheet, -093E |
| tRAS | 33 ns | same tables (tRC = tRAS + tRP = 47.06 ns) |
| tWR | 15 ns | JESD79-4 |
| tRFC (1x) | 260 ns | JESD79-4, 4 Gb die |
| tREFI | 7.8 us | JESD79-4, normal temperature range |
| tFAW | max(20 tCK, 21 ns) | JESD79-4, 1 KB page (x8), DDR4-2133 |
| tRRD_S, tRRD_L | max(4 tCK, 3.7 ns), max(4 tCK, 5.3 ns) | JESD79-4, 1 KB page: another bank group, the same one (`controller.DDR4Controller` keeps both; LiteDRAM's one tRRD, for a board's LiteDRAM core, is tRRD_L) |
| tWTR | max(4 tCK, 7.5 ns) | JESD79-4 tWTR_L |
| tRTP | max(4 tCK, 7.5 ns) | JESD79-4 (`controller.BankMachine` keeps it; LiteDRAM's bank machine has none) |
| tCCD | 4 tCK | JESD79-4 tCCD_S: LiteDRAM does not model bank groups; with tCCD_L (5 tCK) a 4:1 controller could not issue a burst every cycle |
| tZQCS | max(128 tCK, 80 ns) | JESD79-4 |

Geometry of the die: 16 banks (4 groups of 4), 1024 columns, 32768 rows; the bus is 8 B wide, so one row
across the module is 8 KiB. The sim holds only the memory card's size: `sized_module` keeps the banks,
columns and every timing and cuts the rows.

Clocking: LiteDRAM runs DDR4 at 4:1, four DRAM clocks a system cycle; at the nominal 250 MHz that is
DDR4-2000 (CL 15, CWL 11 as LiteDRAM picks them for tCK = 1 ns), peak 16.0 GB/s, where the paper's 2133 MT/s
module peaks at 17.06 GB/s (the paper's "17 GB/s"). One system cycle moves one burst of eight beats, 64 B:
exactly one line, so the native port is 512 bits wide and a line transaction is one port command.
"""

from functools import reduce
from operator import or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from litedram.core.controller import ControllerSettings
from litedram.core.multiplexer import cmd_request_rw_layout
from litedram.core.refresher import RefreshSequencer, RefreshTimer, ZQCSExecuter
from litedram.common import LiteDRAMNativePort
from litedram.core.crossbar import LiteDRAMCrossbar
from litedram.modules import DDR4Module, _SpeedgradeTimings, _TechnologyTimings
from litedram.phy.model import get_sdram_phy_settings

from monet.cores.common.fifo import BypassFIFO
from monet.cores.common.layouts import *
from monet.cores.memcard.bank_model import sdram_phy_model
from monet.cores.memcard.controller import DDR4Controller

DDR4_BUS_BITS   = 64
DDR4_CLK_RATIO  = "1:4"
DDR4_MEMTYPE    = "DDR4"
REFRESH_OWED_MAX = 8     # refreshes a DDR4 controller may postpone (JESD79-4): then one is issued at once
REFRESH_IDLE_CYCLES = 256   # a memory idle this long (1 us at 250 MHz) takes the refreshes it owes at once
# Requests a memory card lets into its DDR4 front at once (`depth`): a row miss at 0.65 lines a cycle needs
# about 20, and the rest wait in the card's input FIFO (as deep as the requester's tags). At 256 the front's
# FIFOs cost 12,000 LUTs and a ninth logic level (`monet board estimate --card memory --cores ddr4`).
DDR4_DEPTH = 128


class MTA8ATF51264HZ(DDR4Module):
    """Micron MTA8ATF51264HZ-2G1: 8 x MT40A512M8, DDR4-2133 (see the module docstring for every source)."""
    ngroupbanks = 4
    ngroups     = 4
    nbanks      = ngroups * ngroupbanks
    nrows       = 32768
    ncols       = 1024
    trefi = {"1x": 7800, "2x": 7800 / 2, "4x": 7800 / 4}
    trfc  = {"1x": (None, 260), "2x": (None, 160), "4x": (None, 110)}
    tRRD_S = (4, 3.7)
    tRRD_L = (4, 5.3)
    tRTP   = (4, 7.5)
    technology_timings = _TechnologyTimings(tREFI=trefi, tWTR=(4, 7.5), tCCD=(4, None), tRRD=tRRD_L,
                                            tZQCS=(128, 80))
    speedgrade_timings = {"2133": _SpeedgradeTimings(tRP=14.06, tRCD=14.06, tWR=15, tRFC=trfc, tFAW=(20, 21),
                                                     tRAS=33)}
    speedgrade_timings["default"] = speedgrade_timings["2133"]


def sized_module(module_cls, size):
    """`module_cls` cut to `size` bytes: fewer rows, the same banks, columns and timings."""
    row_bytes = module_cls.nbanks * module_cls.ncols * DDR4_BUS_BITS // 8
    assert size % row_bytes == 0 and size // row_bytes <= module_cls.nrows, \
        f"{size} B is not a whole number of {row_bytes} B rows across the banks"
    rows = size // row_bytes
    assert rows & (rows - 1) == 0, "the row count must be a power of two"
    cls = type(f"{module_cls.__name__}_{size >> 10}KiB", (module_cls,), {"nrows": rows})

    def __init__(self, *args, **kwargs):
        module_cls.__init__(self, *args, **kwargs)
        # The address bus keeps the die's width: A10 (auto-precharge, precharge all) must exist.
        self.geom_settings.addressbits = max(self.geom_settings.addressbits, log2_int(module_cls.nrows))
    cls.__init__ = __init__
    return cls


def request_layout(stamp_bits=32):
    """A request or its answer at DDR4Memory's ports: a line transaction and the stamp it carries through."""
    return txn_layout + [("stamp", stamp_bits)]


class TrafficRefresher(LiteXModule):
    """LiteDRAM's Refresher timed by the traffic. The same commands (precharge all, REF, then a ZQCS when
    one is due) from LiteDRAM's own timer, sequencer and ZQCS executer; what changes is when. A refresh falls
    due every tREFI and is owed (`owed`) until the memory's last access in flight completes with none
    behind it (`quiet`, a pulse from the memory's front), until the memory has been `idle` (nothing in
    flight or offered, a level from the front) for REFRESH_IDLE_CYCLES, or at once when REFRESH_OWED_MAX
    are owed: JESD79-4 lets a controller postpone up to 8 refreshes (at most 9 x tREFI between two).

    Why: a refresh holds the DRAM for tRP + tRFC (70 cycles at 250 MHz), and LiteDRAM issues it when its
    timer says, so an access that arrives then waits for it whatever the traffic (the latency's p99). Issued
    as an access completes, it runs in the gap behind that access, which for a requester that waits for each
    answer (a CPU's dependent loads) is a whole round trip plus its own work. Accesses that arrive while it
    holds the DRAM (`cmd.valid`) are the front's refresh waits. Under sustained load the refreshes run up to 8 x tREFI late, one
    at a time; a memory left idle owes none when its traffic starts again. Without `quiet` and `idle`
    driven, every refresh is 8 x tREFI late.

    Parameters as LiteDRAM's Refresher (ControllerSettings(refresh_cls=TrafficRefresher)); `postponing` is
    not used: the traffic postpones.
    """
    def __init__(self, settings, clk_freq, zqcs_freq=1e0, postponing=1):
        abits  = settings.geom.addressbits
        babits = settings.geom.bankbits + log2_int(settings.phy.nranks)
        self.cmd     = cmd = stream.Endpoint(cmd_request_rw_layout(a=abits, ba=babits))
        self.quiet   = Signal()
        self.idle    = Signal()
        self.owed    = Signal(max=REFRESH_OWED_MAX + 2)

        # # #

        self.timer = timer = RefreshTimer(settings.timing.tREFI)
        self.sequencer = sequencer = RefreshSequencer(cmd, settings.timing.tRP, settings.timing.tRFC)
        self.comb += timer.wait.eq(~timer.done)
        idle_for = Signal(max=REFRESH_IDLE_CYCLES + 1)   # cycles the memory has been idle, up to the limit
        self.sync += [
            self.owed.eq(self.owed + timer.done - sequencer.start),
            If(~self.idle, idle_for.eq(0)).Elif(idle_for != REFRESH_IDLE_CYCLES, idle_for.eq(idle_for + 1)),
        ]
        wanted = self.quiet | (idle_for == REFRESH_IDLE_CYCLES) | (self.owed >= REFRESH_OWED_MAX)
        # `cmd.valid` (the bank machines' refresh request) is the state alone, so that it starts from
        # registers: the refresh ends in a state of its own (RELEASE: `last`, the multiplexer lets go), a
        # cycle after its commands, where LiteDRAM's Refresher ends in the cycle they are done.
        self.fsm = fsm = FSM()
        self.comb += [
            cmd.valid.eq(~fsm.ongoing("IDLE") & ~fsm.ongoing("RELEASE")),
            cmd.last.eq(fsm.ongoing("RELEASE")),
        ]
        fsm.act("IDLE",
            If((self.owed != 0) & wanted, NextState("WAIT-BANK-MACHINES"))
        )
        fsm.act("WAIT-BANK-MACHINES",
            If(cmd.ready, sequencer.start.eq(1), NextState("DO-REFRESH"))
        )
        if settings.timing.tZQCS is None:
            fsm.act("DO-REFRESH",
                If(sequencer.done, NextState("RELEASE"))
            )
        else:   # a ZQCS that has fallen due follows the refresh
            self.zqcs_timer = zqcs_timer = RefreshTimer(int(clk_freq / zqcs_freq))
            self.zqcs = zqcs = ZQCSExecuter(cmd, settings.timing.tRP, settings.timing.tZQCS)
            self.comb += zqcs_timer.wait.eq(~zqcs.done)
            fsm.act("DO-REFRESH",
                If(sequencer.done,
                    If(zqcs_timer.done, zqcs.start.eq(1), NextState("DO-ZQCS")).Else(NextState("RELEASE")))
            )
            fsm.act("DO-ZQCS",
                If(zqcs.done, NextState("RELEASE"))
            )
        fsm.act("RELEASE",
            NextState("IDLE")
        )


def one_hot_select(choices):
    """The value of the (select, value) pair whose select is set, at most one being set: an AND-OR of the
    values gated by their selects (no priority chain); 0 when none is set."""
    return reduce(or_, [Replicate(select, len(value)) & value for select, value in choices])


class BankPorts(LiteXModule):
    """One LiteDRAM native port per bank, each wired to its bank machine: LiteDRAMCrossbar's routing for the
    case where every port only ever addresses its own bank, without its arbitration. The crossbar's round-robin
    arbiters and locks (a port granted by one bank is locked out of the others) decide nothing then, but their
    logic is on the command path: the lock of every bank into every bank's choice, 11 logic levels at 16
    banks. Cycle for cycle the crossbar's behaviour: a command goes to its bank machine in its cycle (the
    bank's address bits dropped), write data is asked for and read data is flagged `write_latency` and
    `read_latency` cycles after the bank machine's signals (registers, as the crossbar delays them), the
    controller's one write data bus takes the data of the port whose write is due; `soon` flags each port's
    completion a cycle ahead (the register before the strobe). Latency: none on commands."""
    def __init__(self, controller):
        interface = controller.interface
        settings  = controller.settings
        bank_bits = log2_int(interface.nbanks)
        bank_shift = settings.geom.colbits - interface.address_align
        assert settings.phy.write_latency >= 1, "`soon` must be a register"
        self.ports = []
        self.soon  = []   # per port (write, read): its write's data is taken, its read's data comes, next cycle
        write_due = []
        for i in range(interface.nbanks):
            port = LiteDRAMNativePort("both", interface.address_width + bank_bits, interface.data_width, id=i)
            bank = getattr(interface, f"bank{i}")
            soon = (self.delayed(bank.wdata_ready, settings.phy.write_latency),
                    self.delayed(bank.rdata_valid, settings.phy.read_latency))
            wdata_ready, rdata_valid = (self.delayed(strobe, 1) for strobe in soon)
            self.soon.append(soon)
            self.comb += [
                bank.valid.eq(port.cmd.valid),
                bank.we.eq(port.cmd.we),
                bank.addr.eq(port.get_row_column_address(bank_bits, interface.address_width, bank_shift)),
                port.cmd.ready.eq(bank.ready),
                port.wdata.ready.eq(wdata_ready),
                port.rdata.valid.eq(rdata_valid),
                port.rdata.data.eq(interface.rdata),
            ]
            write_due.append((wdata_ready, port.wdata))
            self.ports.append(port)
        # At most one port's write is due in a cycle (the controller has one data bus): an OR of the gated data.
        self.comb += [
            interface.wdata.eq(one_hot_select([(due, w.data) for due, w in write_due])),
            interface.wdata_we.eq(one_hot_select([(due, w.we) for due, w in write_due])),
        ]

    def delayed(self, signal, cycles):
        for _ in range(cycles):
            later = Signal()
            self.sync += later.eq(signal)
            signal = later
        return signal


class DDR4Memory(LiteXModule):
    """Line reads and writes on DDR4 through LiteDRAM's controller, with LiteDRAM's SDRAM PHY model and
    banks that write a word at once (`with_phy_model`, `bank_model.py`; without it, `dfi` is left for a
    board's PHY). A board passes `core` instead: the LiteDRAM core of its SoC (SoC.add_sdram: controller,
    crossbar, and the DFI injector through which the BIOS initialises and calibrates the DRAM), whose module
    and PHY set the geometry and timings.

    A bus narrower than 64 bits (the ZCU102's 16-bit PL DDR4) moves a line in several bursts: the native port
    then converts lines to bursts (LiteDRAM's port converter) and is the only one (`ports` 1), so that answers
    leave one at a time. At 16 bits the peak is a quarter of the 64-bit one at the same clock.

    sink: requests (only in-range T_RD_REQ / T_WR_REQ; the memory card answers the rest).
    source: responses (T_RD_RSP with the line, T_WR_ACK once the controller took the write's data), with
    `stamp` passed through. A request goes to the native port of its bank (`ports`, default one a bank):
    LiteDRAM's crossbar keeps each port on one bank until that bank's commands drain, so with one port for
    everything a line in another bank waits for the whole row cycle of the one before. With a port a bank and
    its own controller, the ports are wired to their bank machines (BankPorts) instead of through the
    crossbar, whose arbitration then decides nothing but was 11 logic levels deep. Answers keep the order
    of their port, so two accesses to one line are answered in order; lines in different banks may pass each
    other (the link's tags match them). A command is taken a cycle at most; at most `depth` requests are
    between the command and the response leaving `source`, so read data, which LiteDRAM never holds back,
    always has room.

    Service time (request offered here to response offered), measured on the generated Verilog at 250 MHz
    (test_memcard): a row hit 4 cycles for a write and 11 for a read (13 for the first read after writes,
    tWTR); a row miss 21 (read) or 23 (write, after reads); a closed row 18 (write) or 20 (read). Of a row
    hit's 11: the bank machine 1 (its queue's head, a register: `controller.BankMachine`; LiteDRAM's took 2),
    LiteDRAM's command multiplexer and the PHY's read latency 10; the answer's fields are registered a cycle
    ahead (BankPorts' `soon`) and it goes around the empty response FIFO with its data (through the
    crossbar, with a board's LiteDRAM core, the response FIFO's cycle stays). A request to a bank other than
    the one the multiplexer's round-robin last chose waits a cycle more for it to turn. Back to
    back, sequential lines stream at 0.98 a cycle (15.7 GB/s, 98 % of the peak) and scattered lines, each a
    row miss, at 0.65 with 64 in flight (10.3 GB/s, test_controller; tFAW allows four activations in 6
    cycles, 0.67): the controller (`controller.DDR4Controller`) times activations by bank group, where
    LiteDRAM's one tRRD (tRRD_L, 3 cycles with its margin) held them to a third (0.41 measured). A refresh
    (tRFC = 66 cycles, every tREFI = 1950 cycles) holds everything behind it; `refreshes` counts REF commands on the DFI bus, `refresh_waits` the
    requests that arrived while the DRAM was held for one (they wait for it).

    Refresh: the controller's refresher is a TrafficRefresher (with a `core`, if its SoC chose one), told
    when the last access in flight completes, so that a refresh runs behind an access rather than in front
    of one. A refresh closes every row; the front then reads the line it was last asked for again
    (`reopen`, its data dropped), so that an access to the row that was open finds it open: a row hit
    (11 cycles) rather than a closed row (20). Another row of that bank then costs a precharge more.
    """
    def __init__(self, size, clk_freq, module_cls=MTA8ATF51264HZ, depth=32, ports=None, stamp_bits=32,
                 with_phy_model=True, core=None):
        self.sink          = sink   = stream.Endpoint(request_layout(stamp_bits))
        self.source        = source = stream.Endpoint(request_layout(stamp_bits))
        self.refreshes     = Signal(32)
        self.refresh_waits = Signal(32)

        # # #

        if core is None:
            self.module = module = sized_module(module_cls, size)(clk_freq, DDR4_CLK_RATIO)
            settings = get_sdram_phy_settings(memtype=DDR4_MEMTYPE, data_width=DDR4_BUS_BITS, clk_freq=clk_freq)
            if with_phy_model:    # made first, as before the option, so the sim's Verilog (and model) is unchanged
                self.phy    = sdram_phy_model(module, settings, clk_freq=clk_freq)
            self.controller = controller = DDR4Controller(settings, module, clk_freq,
                ControllerSettings(refresh_cls=TrafficRefresher))
            crossbar = None
            self.dfi        = controller.dfi   # without the model, a board's PHY (USPDDRPHY) connects here
            if with_phy_model:
                self.comb += controller.dfi.connect(self.phy.dfi)
        else:
            controller, crossbar = core.controller, core.crossbar
        geom = controller.settings.geom
        banks = 2**geom.bankbits
        converted = controller.interface.data_width < LINE_BITS
        ports = ports or (1 if converted else banks)
        assert banks % ports == 0 and not (converted and ports > 1)
        if crossbar is None and ports == banks:
            self.bank_ports = BankPorts(controller)
            self.ports = self.bank_ports.ports
        else:
            if crossbar is None:
                self.crossbar = crossbar = LiteDRAMCrossbar(controller.interface)
            self.ports = [crossbar.get_port(data_width=LINE_BITS) for _ in range(ports)]
        assert 2**self.ports[0].address_width * LINE_BYTES == size, "`size` is not the DRAM's"
        # ROW_BANK_COL: a port address is row, bank, then the bursts of one row (the crossbar's own split).
        bank_shift = geom.colbits - controller.interface.address_align

        # Refresh commands (CS, RAS and CAS low, WE high) on any DFI phase.
        refresh = Signal()
        self.comb += refresh.eq(reduce(or_, [~p.cs_n & ~p.ras_n & ~p.cas_n & p.we_n for p in controller.dfi.phases]))
        self.sync += If(refresh, self.refreshes.eq(self.refreshes + 1))

        # Command: the sink's request, or with none offered the reopening read; taken by the port of its bank
        # when that port takes it and (a request) a response slot is free.
        # With BankPorts each port's completion is known a cycle ahead (`soon`): the answer's fields are
        # registered then and the answer goes around the empty response FIFO in the cycle of its data.
        early = hasattr(self, "bank_ports")
        if early:
            response = BypassFIFO(request_layout(stamp_bits), depth)
            completes = [write | read for write, read in self.bank_ports.soon]
            reads = [read for _, read in self.bank_ports.soon]
        else:
            response = stream.SyncFIFO(request_layout(stamp_bits), depth, buffered=False)
            completes = [port.wdata.ready | port.rdata.valid for port in self.ports]
            reads = [port.rdata.valid for port in self.ports]
        self.submodules += response
        in_flight = Signal(max=depth + 1)    # requests between their command and their answer leaving
        issue     = Signal()                 # a request's command is taken
        room      = Signal()
        select    = Signal(max=max(ports, 2))   # the request's port
        last      = Signal(LADDR_BITS)   # the line of the last request taken ...
        last_port = Signal(len(self.ports))   # ... and its port, one-hot
        reopen    = Signal()             # a refresh closed the rows: read `last` again while nothing is offered
        reopening = Signal()             # the reopening read is out ...
        reopen_at = Signal(len(self.ports))   # ... on this port (one-hot)
        reopened  = Signal()             # ... and completes this cycle: its data is dropped
        idle      = Signal(reset=1)      # no request in flight (registered): the reopening read goes only then

        def bank(laddr):
            return laddr[bank_shift:bank_shift + log2_int(ports)] if ports > 1 else 0
        self.comb += [
            room.eq(in_flight < depth),
            select.eq(bank(sink.laddr)),
            sink.ready.eq(Array(p.cmd.ready for p in self.ports)[select] & room),
        ]
        completions = []
        fires = []
        for i, port in enumerate(self.ports):
            pending = stream.SyncFIFO([("tag", TAG_BITS), ("laddr", LADDR_BITS), ("stamp", stamp_bits)], depth,
                                      buffered=False)   # this port's commands, in order of completion
            wdata   = stream.SyncFIFO([("data", LINE_BITS), ("we", LINE_BYTES)], depth, buffered=False)
            self.submodules += pending, wdata
            fire = Signal()
            self.comb += [
                port.cmd.valid.eq(sink.valid & (select == i) & room |
                                  ~sink.valid & reopen & ~reopening & idle & last_port[i]),
                port.cmd.we.eq(sink.valid & (sink.type == T_WR_REQ)),
                port.cmd.addr.eq(Mux(sink.valid, sink.laddr, last)),
                port.cmd.last.eq(1),
                # The port's own handshake (not `issue`, which picks the port's readiness by the bank bits).
                fire.eq(port.cmd.valid & port.cmd.ready),
                pending.sink.valid.eq(fire),
                pending.sink.tag.eq(sink.tag),
                pending.sink.laddr.eq(sink.laddr),
                pending.sink.stamp.eq(sink.stamp),
                wdata.sink.valid.eq(fire & port.cmd.we),
                wdata.sink.data.eq(sink.data),
                wdata.sink.we.eq(sink.mask),
                # The controller takes write data `write_latency` after its command: the FIFO has it by then.
                port.wdata.valid.eq(wdata.source.valid),
                port.wdata.data.eq(wdata.source.data),
                port.wdata.we.eq(wdata.source.we),
                wdata.source.ready.eq(port.wdata.ready),
                port.rdata.ready.eq(1),
                pending.source.ready.eq(completes[i]),
            ]
            completions.append((port, pending))
            fires.append(fire)
        reopen_fire = Signal()
        self.comb += [
            issue.eq(sink.valid & sink.ready),
            reopen_fire.eq(~sink.valid & reduce(or_, fires)),
        ]
        self.sync += [
            If(issue, last.eq(sink.laddr), last_port.eq(1 << select)),
            If(refresh & (last_port != 0), reopen.eq(1)).Elif(reopen_fire, reopen.eq(0)),
            # Sent only with nothing in flight, the reopening read heads its port's pending commands: the
            # port's next completion is its.
            If(reopen_fire, reopening.eq(1), reopen_at.eq(last_port)).Elif(reopened, reopening.eq(0)),
        ]
        # Completion, in each port's command order: a write when its data goes, a read when its data comes.
        # One a cycle at most: the controller has one data bus and, after a read, waits read_latency - 1
        # cycles before a write command. So the answer's fields are an OR of each port's, gated by its
        # completion (registers: the crossbar's or BankPorts' delayed strobes), not a chain of priorities;
        # `early`, a cycle ahead into registers.
        def completed(field):
            return one_hot_select([(c, getattr(pending.source, field)) for c, (_, pending) in zip(completes, completions)])
        answer = Record([("valid", 1), ("read", 1), ("tag", TAG_BITS), ("laddr", LADDR_BITS), ("stamp", stamp_bits)])
        answered = [
            answer.valid.eq(reduce(or_, completes) & ~reopened),
            answer.read.eq(reduce(or_, reads)),
            answer.tag.eq(completed("tag")),
            answer.laddr.eq(completed("laddr")),
            answer.stamp.eq(completed("stamp")),
        ]
        if early:
            self.sync += answered
        else:
            self.comb += answered
        self.comb += [
            reopened.eq(reopening & reduce(or_, [c & reopen_at[i] for i, c in enumerate(completes)])),
            response.sink.valid.eq(answer.valid),
            response.sink.tag.eq(answer.tag),
            response.sink.laddr.eq(answer.laddr),
            response.sink.stamp.eq(answer.stamp),
            response.sink.type.eq(Mux(answer.read, T_RD_RSP, T_WR_ACK)),
            response.sink.mask.eq(2**LINE_BYTES - 1),
            response.sink.data.eq(self.ports[0].rdata.data),   # the controller's one read data bus
            response.source.connect(source),
        ]
        leaving = Signal()
        self.comb += leaving.eq(source.valid & source.ready)
        last_answer = Signal()   # the one request in flight is answered, none is taken
        self.comb += last_answer.eq(leaving & (in_flight == 1) & ~issue)
        self.sync += [
            in_flight.eq(in_flight + issue - leaving),
            # in_flight's next value is 0: compares of the register, not of the sum (a carry chain shorter).
            idle.eq(((in_flight == 0) | last_answer) & ~issue),
        ]

        # The refresher: told (a cycle later) when the last request in flight has been answered with none
        # behind it, so that its refresh runs in the gap that follows; the requests that arrive while it
        # holds the DRAM wait for it.
        refresher = controller.refresher
        if hasattr(refresher, "quiet"):
            self.sync += refresher.quiet.eq(last_answer)
            self.comb += refresher.idle.eq(idle & ~sink.valid)
        self.sync += If(sink.valid & sink.ready & refresher.cmd.valid, self.refresh_waits.eq(self.refresh_waits + 1))
