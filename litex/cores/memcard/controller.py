#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""LiteDRAM's controller with DDR4's bank groups (activations timed by tRRD_S, tRRD_L and tFAW) and bank
machines of our own (a request's command offered a cycle sooner, from registers).

LiteDRAM times every activation with one tRRD and counts its timings with a margin of three quarters of a
system cycle, because it does not know on which of the four DFI phases the next command lands. For DDR4 the
one tRRD must then be tRRD_L (the same-group value), and with the margin 5.3 ns is 3 system cycles at
250 MHz: a bank activated at most every third cycle, which caps scattered 64 B lines at 5.3 GB/s where
JESD79-4 allows an activation every tRRD_S (4 tCK, one cycle) in another bank group and four in any tFAW
(21 ns, six cycles), 10.7 GB/s. `DDR4Controller` is LiteDRAM's controller (its refresher and multiplexer,
unchanged) with the activate-to-activate timings taken out of the multiplexer and kept by
`ActivationWindow`, per bank group, in whole cycles, and with a `BankMachine` a bank in place of LiteDRAM's:
LiteDRAM's compares a request's row with the open one on the way to the multiplexer's choice (9 logic
levels at 16 banks, the deepest path of the memory card), and takes two cycles to offer a lone request's
command; ours decides the compare as a request is taken and offers it the next cycle (8 levels).

Whole cycles are exact when every activation lands on the same DFI phase: LiteDRAM's multiplexer puts it on
the command phase of its read or write state (`rdphase - 1`, `wrphase - 1`), one phase when the PHY reads
and writes on the same phase (LiteDRAM's DDR4 settings, and so the sim's). Otherwise the timings keep
LiteDRAM's margin (`phase_margin_ck`).
"""

import copy
from math import ceil

from migen import *

from litex.gen import LiteXModule

from litex.soc.interconnect import stream

from litedram.common import LiteDRAMInterface, burst_lengths, cmd_layout, cmd_request_rw_layout, tXXDController
from litedram.core.bankmachine import _AddressSlicer
from litedram.core.multiplexer import Multiplexer
from litedram.phy import dfi

from monet.cores.common.fifo import BypassFIFO


def timing_cycles(timing, phy_settings, clk_freq, margin_ck):
    """A (tCK count, ns) timing in system cycles: max of the two, plus `margin_ck` DRAM clocks, rounded up."""
    ck, ns = timing
    nphases = phy_settings.nphases
    tck_ns  = 1e9 / (clk_freq * nphases)
    return max(1, ceil((max(ck or 0, (ns or 0) / tck_ns) + margin_ck) / nphases))


def activation_cycles(module, phy_settings, clk_freq):
    """The module's (tRRD_S, tRRD_L, tFAW) in system cycles: each as max(tCK count, ns) rounded up to whole
    cycles, plus LiteDRAM's margin when activations may land on different DFI phases (`phase_margin_ck`)."""
    margin = phase_margin_ck(phy_settings)
    return tuple(timing_cycles(t, phy_settings, clk_freq, margin)
                 for t in (module.tRRD_S, module.tRRD_L, module.get("tFAW")))


def read_to_precharge_cycles(module, phy_settings, clk_freq):
    """The module's tRTP (read to precharge) in system cycles, with LiteDRAM's margin (nphases - 1): a READ
    and the PRE behind it land on different phases (the read phase, the command phase before it)."""
    return timing_cycles(module.tRTP, phy_settings, clk_freq, phy_settings.nphases - 1)


def without_timings(settings, *names):
    """A copy of controller `settings` whose timings `names` are None (LiteDRAM then builds no timer for them)."""
    copied = copy.copy(settings)
    copied.timing = copy.copy(settings.timing)
    for name in names:
        setattr(copied.timing, name, None)
    return copied


def phase_margin_ck(phy_settings):
    """DRAM clocks by which two activations' phases may differ: none when the PHY reads and writes on one
    phase (every ACT then on phase rdphase - 1), else LiteDRAM's own margin (nphases - 1)."""
    rdphase, wrphase = phy_settings.rdphase, phy_settings.wrphase
    same = isinstance(rdphase, int) and isinstance(wrphase, int) and rdphase == wrphase
    return 0 if same else phy_settings.nphases - 1


class ActivationWindow(LiteXModule):
    """Which banks may be activated this cycle: a bank not within `trc` cycles (2 or more) of its own last ACT
    (tRC, as LiteDRAM's bank machine keeps it), nor within `trrd_s` cycles of any ACT, nor within `trrd_l` of one to
    its group, and at most four ACTs in any `tfaw` cycles (JESD79-4's tRRD_S, tRRD_L and tFAW, in system
    cycles).

    act, group: an ACT is issued this cycle, to this bank group (the multiplexer's choice).
    activated: one bit a bank, its ACT issued this cycle (its bank machine's tRC strobe).
    allowed: one bit a bank, a register: the bank may issue an ACT this cycle. It stands where the bank
    machine's own tRC register stood, so no path is deeper. Latency: an ACT holds back the next ones from
    the next cycle on.
    """
    def __init__(self, nbanks, ngroups, trc, trrd_s, trrd_l, tfaw):
        assert 1 <= trrd_s <= trrd_l <= tfaw and tfaw >= 2 and trc >= 2
        self.act       = Signal()
        self.group     = Signal(max=max(ngroups, 2))
        self.activated = Signal(nbanks)
        self.allowed   = Signal(nbanks, reset=2**nbanks - 1)

        # # #

        def recent(now, cycles):
            """Whether there was an ACT (`now`) in each of the last cycles - 1 cycles, this one first: the
            ones a window of `cycles` that ends next cycle holds (shift registers behind `now`)."""
            entries = [now] if cycles > 1 else []
            for _ in range(cycles - 2):
                entries.append(Signal())
                self.sync += entries[-1].eq(entries[-2])
            return entries
        in_tfaw = recent(self.act, tfaw)
        in_trrd = in_tfaw[:trrd_s - 1]
        # Next cycle's ACT to a group is allowed when the windows that would end with it hold what the DRAM
        # allows. This cycle's ACT (the end of the multiplexer's choice, the deepest input) meets the
        # registers' part at the last gate: the ACTs of the cycles before counted from registers alone.
        # (The count is a signal of its own width: in Verilog a sum compared with 3 would be summed in two
        # bits.)
        earlier_count = Signal(max=tfaw)
        self.comb += earlier_count.eq(sum(in_tfaw[1:]))
        tfaw_ok = (earlier_count <= 2) | ((earlier_count == 3) & ~self.act)
        group_next = [tfaw_ok & (Cat(*in_trrd, *recent(self.act & (self.group == g), trrd_l), 0) == 0)
                      for g in range(ngroups)]
        banks_a_group = nbanks // ngroups
        for n in range(nbanks):
            # tRC: cycles left before the bank's next ACT (LiteDRAM's tXXDController, its next value).
            left = Signal(max=trc)
            trc_next = Signal()
            self.comb += trc_next.eq(~self.activated[n] & (left <= 1))
            self.sync += [
                If(self.activated[n], left.eq(trc - 1)).Elif(left != 0, left.eq(left - 1)),
                self.allowed[n].eq(trc_next & group_next[n // banks_a_group]),
            ]


class BankMachine(LiteXModule):
    """One bank's requests in, its DRAM commands out (to LiteDRAM's Multiplexer), with LiteDRAM's BankMachine
    interface: `req` (a LiteDRAMInterface bank: valid, ready, we, addr, lock, wdata_ready, rdata_valid), `cmd`,
    `refresh_req` / `refresh_gnt`; `act_allowed` (the ActivationWindow's register for the bank: its tRC,
    tRRD and tFAW) and `activated` (its ACT taken) in place of its own tRC timer.

    A request waits in a queue of `settings.cmd_buffer_depth` whose head is a register (BypassFIFO,
    registered): one that finds the bank idle enters the head the cycle it is offered, so its command is
    offered the next cycle (1 cycle; LiteDRAM's BankMachine takes 2, a FIFO and then its row-compare buffer).
    Whether the head's row is the open one (`hit`) and whether the request behind it opens another row
    (`new_row`, kept beside each request in the queue, from a compare with the request taken before it)
    are decided as requests are taken, so the command a bank offers is a function of registers: no address
    compare on the way to the multiplexer's choice. From the head: a row hit offers its READ or WRITE, with
    auto-precharge when the request behind it opens another row; another row open offers a PRE; no row
    open offers an ACT (each the cycle its timings allow; LiteDRAM's takes a cycle more to decide).

    Timings kept here, in system cycles: tRCD (ACT to READ/WRITE) and tRP (PRE, or an auto-precharge, to
    ACT) as LiteDRAM counts them; tRAS (ACT to PRE), write recovery (WRITE to PRE: write latency + tWR +
    tCCD, LiteDRAM's) and tRTP (READ to PRE, `trtp`; LiteDRAM has none) before a PRE, an auto-precharge's
    tRP and a refresh. The multiplexer keeps tCCD, tWTR and the read/write turnaround.

    Latency: a request to an idle bank: 1 cycle to its command on a row hit; on a closed row its ACT 1
    cycle, its READ/WRITE tRCD later; another row open, its PRE 1 cycle (when tRAS, tRTP and write recovery
    have passed), the ACT tRP later.
    """
    def __init__(self, n, address_width, address_align, settings, trtp):
        self.req = req = Record(cmd_layout(address_width))
        self.refresh_req = refresh_req = Signal()
        self.refresh_gnt = refresh_gnt = Signal()
        self.act_allowed = Signal(reset=1)
        self.activated   = Signal()
        geom, timing = settings.geom, settings.timing
        self.cmd = cmd = stream.Endpoint(cmd_request_rw_layout(geom.addressbits, geom.bankbits))

        # # #

        slicer = _AddressSlicer(geom.colbits, address_align)
        self.queue = queue = BypassFIFO([("we", 1), ("addr", address_width), ("new_row", 1)],
                                        settings.cmd_buffer_depth, registered=True)
        head, behind = queue.source, queue.fifo.source
        last_row = Signal(geom.rowbits)   # the row of the request taken last
        self.comb += [
            # Around the queue only into an empty head, so that where a request goes never waits for the
            # multiplexer's choice (one arriving as the head's READ or WRITE goes waits a cycle in the queue).
            queue.around.eq(~head.valid),
            queue.sink.valid.eq(req.valid),
            queue.sink.we.eq(req.we),
            queue.sink.addr.eq(req.addr),
            queue.sink.new_row.eq(slicer.row(req.addr) != last_row),
            req.ready.eq(queue.sink.ready),
            req.lock.eq(head.valid | behind.valid),   # (LiteDRAM's crossbar keeps the bank's port while locked)
        ]
        self.sync += If(req.valid & req.ready, last_row.eq(slicer.row(req.addr)))

        opened = Signal()   # a row is open (the head's `hit` says whether it is the head's)
        hit    = Signal()   # the head's row is the open one
        auto_precharge = Signal()
        self.comb += auto_precharge.eq(behind.valid & behind.new_row)   # used only with the head's READ or WRITE

        taken = Signal()
        cas, activate, precharge, in_refresh = Signal(), Signal(), Signal(), Signal()
        self.comb += [
            taken.eq(cmd.valid & cmd.ready),
            cmd.ba.eq(n),
            cmd.a.eq(Mux(activate, slicer.row(head.addr), ((hit & auto_precharge) << 10) | slicer.col(head.addr))),
            self.activated.eq(taken & activate),
            queue.source.ready.eq(taken & cas),   # the head leaves with its READ or WRITE
            req.wdata_ready.eq(taken & cas & head.we),
            req.rdata_valid.eq(taken & cas & ~head.we),
        ]

        # Timers: ready when the cycles since their command have passed (LiteDRAM's tXXDController).
        write_latency = ceil(settings.phy.cwl / settings.phy.nphases)
        self.tras = tras = tXXDController(timing.tRAS)
        self.trtp = trtp_timer = tXXDController(trtp)
        self.twtp = twtp = tXXDController(write_latency + timing.tWR + timing.tCCD)
        self.comb += [
            tras.valid.eq(taken & activate),
            trtp_timer.valid.eq(taken & cas & ~head.we),
            twtp.valid.eq(taken & cas & head.we),
        ]
        may_precharge = Signal()
        self.comb += may_precharge.eq(tras.ready & trtp_timer.ready & twtp.ready)

        self.sync += [
            If(taken & activate, opened.eq(1)
            ).Elif(taken & precharge | taken & cas & auto_precharge | in_refresh, opened.eq(0)),
            # The head's hit, decided as it enters: its row is the row of the request before it (`new_row`
            # clear), which is the open one while a row is open and no refresh closes it. (A READ or WRITE
            # that precharges as the next enters does so because the next opens another row.)
            If(queue.load,
                hit.eq(~Mux(queue.passing, queue.sink.new_row, behind.new_row) & opened & ~in_refresh),
            ).Elif(taken & activate, hit.eq(1)
            ).Elif(in_refresh, hit.eq(0)),
        ]

        self.fsm = fsm = FSM()
        fsm.act("REGULAR",
            If(refresh_req,
                NextState("REFRESH")
            ).Elif(head.valid,
                If(hit,
                    cas.eq(1),
                    cmd.valid.eq(1),
                    cmd.cas.eq(1),
                    cmd.we.eq(head.we),
                    cmd.is_write.eq(head.we),
                    cmd.is_read.eq(~head.we),
                    If(taken & auto_precharge, NextState("AUTOPRECHARGE")),
                ).Elif(opened,
                    precharge.eq(1),
                    cmd.valid.eq(may_precharge),
                    cmd.ras.eq(1),
                    cmd.we.eq(1),
                    cmd.is_cmd.eq(1),
                    If(taken, NextState("TRP")),
                ).Else(
                    activate.eq(1),
                    cmd.valid.eq(self.act_allowed),
                    cmd.ras.eq(1),
                    cmd.is_cmd.eq(1),
                    If(taken, NextState("TRCD")),
                )
            )
        )
        fsm.act("AUTOPRECHARGE",   # the DRAM precharges by itself once tRAS and the READ's or WRITE's recovery allow
            If(may_precharge, NextState("TRP"))
        )
        fsm.act("REFRESH",
            in_refresh.eq(1),
            refresh_gnt.eq(refresh_req & may_precharge),   # granted only while asked
            If(~refresh_req, NextState("REGULAR"))
        )
        fsm.delayed_enter("TRP", "REGULAR", timing.tRP - 1)
        fsm.delayed_enter("TRCD", "REGULAR", timing.tRCD - 1)


class DDR4Controller(LiteXModule):
    """LiteDRAM's controller (`LiteDRAMController`'s interface; its refresher and Multiplexer) with one
    `BankMachine` (ours) a bank, whose activations are timed per bank group by an `ActivationWindow` instead
    of the multiplexer's one tRRD and its tFAW: a bank does not offer its ACT while the window holds it back
    (the window's register is the bank's `act_allowed`). `module` gives the bank groups (`ngroups`, the
    upper bits of the bank address, as LiteDRAM's DDR4 PHYs drive BG), its tFAW and `tRRD_S`, `tRRD_L`,
    `tRTP` as (tCK, ns).

    Latency: a request's command 1 cycle after the bank takes it (the bank machine's), then LiteDRAM's
    multiplexer (its round-robin turns to a bank in a cycle when it last chose another) and the PHY.
    """
    def __init__(self, phy_settings, module, clk_freq, controller_settings):
        geom, timing = module.geom_settings, module.timing_settings
        self.settings = settings = controller_settings
        settings.phy, settings.geom, settings.timing = phy_settings, geom, timing
        address_align = log2_int(burst_lengths[phy_settings.memtype])
        nbanks = 2**geom.bankbits
        ngroups = module.ngroups
        banks_a_group = nbanks // ngroups
        assert phy_settings.nranks == 1

        self.interface = interface = LiteDRAMInterface(address_align, settings)
        self.dfi = dfi.Interface(addressbits=geom.addressbits, bankbits=geom.bankbits,
                                 nranks=phy_settings.nranks, databits=phy_settings.dfi_databits,
                                 nphases=phy_settings.nphases)

        # # #

        self.refresher = settings.refresh_cls(settings, clk_freq=clk_freq,
                                              zqcs_freq=settings.refresh_zqcs_freq,
                                              postponing=settings.refresh_postponing)
        self.trrd_s, self.trrd_l, self.tfaw = activation_cycles(module, phy_settings, clk_freq)
        self.activations = window = ActivationWindow(nbanks, ngroups, timing.tRC, self.trrd_s, self.trrd_l,
                                                     self.tfaw)
        self.trtp = read_to_precharge_cycles(module, phy_settings, clk_freq)
        bank_machines = []
        for n in range(nbanks):
            bank_machine = BankMachine(n, address_width=interface.address_width, address_align=address_align,
                                       settings=settings, trtp=self.trtp)
            self.add_module(f"bankmachine{n}", bank_machine)
            self.comb += [
                getattr(interface, f"bank{n}").connect(bank_machine.req),
                window.activated[n].eq(bank_machine.activated),
                bank_machine.act_allowed.eq(window.allowed[n]),
            ]
            bank_machines.append(bank_machine)

        # The multiplexer without its activate-to-activate timers (None: always ready). Its round-robin
        # visits the bank machines in the order given: banks of one group far apart (0, 4, 8, 12, 1, ...), so
        # that a bank held back by the group of the ACT just issued is seldom the next it grants.
        interleaved = [bank_machines[n] for n in sorted(range(nbanks), key=lambda n: (n % banks_a_group, n))]
        self.multiplexer = multiplexer = Multiplexer(settings=without_timings(settings, "tRRD", "tFAW"),
                                                     bank_machines=interleaved, refresher=self.refresher,
                                                     dfi=self.dfi, interface=interface)
        chosen = multiplexer.choose_cmd
        self.comb += [
            window.act.eq(chosen.accept() & chosen.activate()),
            window.group.eq(chosen.cmd.ba[log2_int(banks_a_group):]),
        ]
