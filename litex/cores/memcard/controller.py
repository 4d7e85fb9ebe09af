#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""LiteDRAM's controller with DDR4's bank groups: activations timed by tRRD_S, tRRD_L and tFAW.

LiteDRAM times every activation with one tRRD and counts its timings with a margin of three quarters of a
system cycle, because it does not know on which of the four DFI phases the next command lands. For DDR4 the
one tRRD must then be tRRD_L (the same-group value), and with the margin 5.3 ns is 3 system cycles at
250 MHz: a bank activated at most every third cycle, which caps scattered 64 B lines at 5.3 GB/s where
JESD79-4 allows an activation every tRRD_S (4 tCK, one cycle) in another bank group and four in any tFAW
(21 ns, six cycles), 10.7 GB/s. `DDR4Controller` is LiteDRAM's controller (its refresher, bank machines
and multiplexer, unchanged) with the activate-to-activate timings taken out of the multiplexer and kept
by `ActivationWindow`, per bank group, in whole cycles.

Whole cycles are exact when every activation lands on the same DFI phase: LiteDRAM's multiplexer puts it on
the command phase of its read or write state (`rdphase - 1`, `wrphase - 1`), one phase when the PHY reads
and writes on the same phase (LiteDRAM's DDR4 settings, and so the sim's). Otherwise the timings keep
LiteDRAM's margin (`phase_margin_ck`).
"""

import copy
from math import ceil

from migen import *

from litex.gen import LiteXModule

from litedram.common import LiteDRAMInterface, burst_lengths
from litedram.core.bankmachine import BankMachine
from litedram.core.multiplexer import Multiplexer
from litedram.phy import dfi


def activation_cycles(module, phy_settings, clk_freq):
    """The module's (tRRD_S, tRRD_L, tFAW) in system cycles: each as max(tCK count, ns) rounded up to whole
    cycles, plus LiteDRAM's margin when activations may land on different DFI phases (`phase_margin_ck`)."""
    nphases = phy_settings.nphases
    tck_ns  = 1e9 / (clk_freq * nphases)
    margin  = phase_margin_ck(phy_settings)

    def cycles(timing):
        ck, ns = timing
        return max(1, ceil((max(ck, ns / tck_ns) + margin) / nphases))
    return cycles(module.tRRD_S), cycles(module.tRRD_L), cycles(module.get("tFAW"))


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
        # allows. (The count is a signal of its own width: in Verilog a sum compared with 3 would be summed
        # in two bits.)
        in_tfaw_count = Signal(max=tfaw)
        self.comb += in_tfaw_count.eq(sum(in_tfaw))
        group_next = [(in_tfaw_count <= 3) & (Cat(*in_trrd, *recent(self.act & (self.group == g), trrd_l), 0) == 0)
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


class DDR4Controller(LiteXModule):
    """LiteDRAM's controller (`LiteDRAMController`'s parts and interface: refresher, one BankMachine a bank,
    the Multiplexer) whose activations are timed per bank group by an `ActivationWindow` instead of the
    multiplexer's one tRRD and its tFAW: a bank does not offer its ACT while the window holds it back (the
    window's register in place of its bank machine's tRC register). `module` gives the bank groups
    (`ngroups`, the upper bits of the bank address, as LiteDRAM's DDR4 PHYs drive BG), its tFAW and
    `tRRD_S`, `tRRD_L` as (tCK, ns).

    Latency: as LiteDRAM's controller; an ACT waits only for the timings above (and the bank's own).
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
        # The bank machines without their own tRC timer (None: its ready is left undriven): the window's
        # register for the bank stands in its place, in the ACT's condition.
        bank_settings = without_timings(settings, "tRC")
        bank_machines = []
        for n in range(nbanks):
            bank_machine = BankMachine(n, address_width=interface.address_width, address_align=address_align,
                                       nranks=1, settings=bank_settings)
            self.add_module(f"bankmachine{n}", bank_machine)
            self.comb += [
                getattr(interface, f"bank{n}").connect(bank_machine.req),
                window.activated[n].eq(bank_machine.trccon.valid),   # its ACT taken
                bank_machine.trccon.ready.eq(window.allowed[n]),
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
