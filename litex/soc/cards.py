#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""What every Zynq US+ board target shares: the lanes on the board's transceivers, the link settings' checks,
and the compute card (the PS masters ReMAT). The boards (zcu102.py, zcu111.py) give the platform, the pins and
the transceiver kind; `monet board build` (board.py) builds them.
"""

from migen import *
from migen.genlib.cdc import MultiReg

from litex.build.generic_platform import Pins, Subsignal
from litex.gen import LiteXModule
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCCore
from litex.soc.interconnect import axi, wishbone
from litex.soc.interconnect.csr import AutoCSR, CSRField, CSRStatus, CSRStorage

from monet.cores.common.layouts import LINE_BYTES, MAX_LANES
from monet.cores.link.core import LinkEndpoint
from monet.cores.pbb.core import PBB
from monet.cores.phy.align import LOSS_BITS, loss_fields
from monet.cores.phy.gt_lanes import LINE_EFFICIENCY, TransceiverLanes
from monet.cores.remat.codes import TARGET_REMOTE0
from monet.cores.remat.core import ReMAT
from monet.cores.remat.port import WishboneRematPort
from monet.soc.errors import BoardError
from monet.soc.facts import (BOARD_LANES, BOARD_RATES_GBPS, LINK_CREDITS, LINK_RETRY_DEPTH, REMOTE_TAGS,
                             code_constants, credit_constants)
from monet.soc.remote import compute_stages

SYS_CLK_HZ   = 250_000_000
REFCLK_HZ    = 156.25e6          # every cage's reference: one quad PLL gives 10, 12.5 or 15 Gb/s from it
# ReMAT on a board: 16 sections of 256 MB (a 4 GB window), the sim's tags, three ports (two PS masters, the PBB).
REMOTE_SECTIONS, REMOTE_SECTION_BITS = 16, 28
PBB_BUCKETS  = 64
# The optional fiber emulation (--delay-line): up to 511 cycles one way, 2 us or about 400 m of fiber.
DELAY_LINE_DEPTH = 512
# The PS's master windows (UG1085 table 10-1): HPM0_FPD carries the CSRs (LiteX's convention), HPM1_FPD's
# 4 GB high window is ReMAT's port 0, HPM0_LPD's 512 MB window its port 1.
CSR_BASE       = 0xA000_0000
HPM1_FPD_HIGH  = 0x5_0000_0000
HPM0_LPD_BASE  = 0x8000_0000
HPM0_LPD_SIZE  = 0x2000_0000
PS_DDR_LOW_SIZE = 0x8000_0000
PS_QSPI_SIZE   = 0x0400_0000


def resolve_cage(lanes, rate_gbps, cage, cages):
    """The cage the lanes go to (`cage`, or the first of the board's `cages`, name -> lanes, with room for
    them); refuses lane counts, rates and cages the board does not have, by flag."""
    if lanes not in BOARD_LANES:
        raise BoardError(f"--lanes {lanes}: accepted are {', '.join(map(str, BOARD_LANES))}")
    if rate_gbps not in BOARD_RATES_GBPS:
        raise BoardError(f"--rate {rate_gbps:g}: accepted are {', '.join(f'{r:g}' for r in BOARD_RATES_GBPS)} (Gb/s)")
    cage = cage or next((name for name, n in cages.items() if n >= lanes), next(iter(cages)))
    if cage not in cages:
        raise BoardError(f"--cage {cage}: accepted are {', '.join(cages)}")
    if lanes > cages[cage]:
        wide = [name for name, n in cages.items() if n >= lanes]
        hint = f"{lanes} lanes need --cage {wide[0]}" if wide else f"this board has at most {max(cages.values())}"
        raise BoardError(f"--lanes {lanes} with --cage {cage}: the {cage} cages have {cages[cage]} lanes ({hint})")
    return cage


def transceiver_io(cage, pins):
    """Platform IOs `<cage>_tx` and `<cage>_rx` (p and n) of lane i from pins[i] = (TX p, TX n, RX p, RX n)."""
    return [(f"{cage}_{direction}", lane, Subsignal("p", Pins(p)), Subsignal("n", Pins(n)))
            for lane, (tx_p, tx_n, rx_p, rx_n) in enumerate(pins)
            for direction, p, n in (("tx", tx_p, tx_n), ("rx", rx_p, rx_n))]


class BoardLanes(LiteXModule, AutoCSR):
    """`lanes` transceiver channels (liteiclink's `transceiver`, GTH4 or GTY, 8b/10b with 40-bit words) at
    `rate_gbps` on `cage`, one `quad_pll` a quad of four from the cage's REFCLK_HZ reference, carrying the
    link's lane words (TransceiverLanes). The pins are the platform's `<cage>_tx`, `<cage>_rx` and
    `<cage>_refclk`. Lane 0's transmit clock drives every lane (their TX buffers take up the phase).
    CSRs: liteiclink's per-lane controls (enables, readiness, PRBS, and `loopback`, the transceiver's LOOPBACK
    port) as `lane<i>_*`, `realigns` and `lane_losses` (the bonding's losses of alignment, by lane), and with
    `with_delay_line` `emulated_delay`: cycles received rows wait, fiber emulated in the fabric.
    """
    def __init__(self, plat, lanes, rate_gbps, cage, sys_clk, sys_clk_freq, transceiver, quad_pll,
                 with_delay_line=False):
        refclk_pads = plat.request(f"{cage}_refclk")
        refclk = Signal(name="refclk")
        self.specials += Instance("IBUFDS_GTE4", i_CEB=0, i_I=refclk_pads.p, i_IB=refclk_pads.n, o_O=refclk)
        linerate = rate_gbps * 1e9
        plls = [quad_pll(refclk, REFCLK_HZ, linerate) for _ in range((lanes + 3) // 4)]
        for i, pll in enumerate(plls):
            setattr(self.submodules, f"qpll{i}", pll)
        serdes, rx_domains = [], []
        for lane in range(lanes):
            tx_clk = None if lane == 0 else serdes[0].cd_tx.clk
            gt = ClockDomainsRenamer({"tx": f"lane{lane}_tx", "rx": f"lane{lane}_rx"})(
                transceiver(plls[lane // 4], plat.request(f"{cage}_tx", lane), plat.request(f"{cage}_rx", lane),
                            sys_clk_freq, data_width=40, tx_buffer_enable=True, rx_buffer_enable=False,
                            tx_clk=tx_clk))
            gt.add_stream_endpoints()
            gt.add_base_control()
            gt.add_loopback_control()   # near-end loopback for bring-up (`prbs loopback=near`)
            setattr(self.submodules, f"lane{lane}", gt)
            serdes.append(gt)
            rx_domains.append(f"lane{lane}_rx")
            plat.add_period_constraint(gt.cd_rx.clk, 1e9 / gt.rx_clk_freq)
            plat.add_false_path_constraints(sys_clk, gt.cd_rx.clk)
        plat.add_period_constraint(serdes[0].cd_tx.clk, 1e9 / serdes[0].tx_clk_freq)
        plat.add_false_path_constraints(sys_clk, serdes[0].cd_tx.clk)
        self.phy = phy = TransceiverLanes(serdes, "lane0_tx", rx_domains, with_delay_line=with_delay_line,
                                          delay_depth=DELAY_LINE_DEPTH)
        up = [Signal(name=f"rx_ready{lane}") for lane in range(lanes)]
        for gt, ready in zip(serdes, up):
            self.specials += MultiReg(gt.rx_ready, ready)     # the clock aligner's, in the transmit clock
        self.comb += phy.locked.eq(Cat(*up))
        self.sink, self.sources, self.up = phy.sink, phy.sources, phy.up
        self._realigns = CSRStatus(32, description="Times the lanes lost alignment (a lane slipped or dropped) "
                                               "and were realigned.")
        self._lane_losses = CSRStatus(fields=[
            CSRField(f"lane{lane}", size=LOSS_BITS, description=f"Lane {lane}'s losses of alignment (held at 255).")
            for lane in range(lanes)])
        self.comb += [self._realigns.status.eq(phy.realigns), *loss_fields(self._lane_losses, phy.losses)]
        if with_delay_line:
            self._emulated_delay = CSRStorage(16, description="Emulated fiber: cycles each received row waits "
                                              f"(0 to {DELAY_LINE_DEPTH - 1}; 4.9 ns a meter one way).")
            self.comb += phy.delay.eq(self._emulated_delay.storage)


class _PSClocks(LiteXModule):
    """The system clock is the PS's PL clock 0 (set to the system frequency in the PS configuration)."""
    def __init__(self):
        self.rst    = Signal()
        self.cd_sys = ClockDomain()
        self.comb  += [ClockSignal("sys").eq(ClockSignal("ps")), ResetSignal("sys").eq(ResetSignal("ps") | self.rst)]


class ComputeCard(SoCCore):
    """A Zynq US+ compute card: the PS (quad A53, Linux) masters ReMAT through two AXI master ports, ReMAT sends
    remote accesses over the link on the board's transceivers (BoardLanes), the PBB measures on ReMAT's third
    port. The PS's own DDR4 is the local baseline (Linux's node 0). CSRs on HPM0_FPD at 0xA000_0000.

    Each PS port reaches ReMAT as 32-bit accesses, one at a time (AXI -> Wishbone -> WishboneRematPort), as the
    sim's uncached CPU port does; the PBB drives ReMAT at line rate. `plat` is the board's platform (with the
    cage's pins), `transceiver` and `quad_pll` liteiclink's classes for its transceivers.
    """
    mem_map = {"csr": CSR_BASE}

    def __init__(self, plat, board, lanes, rate_gbps, cage, transceiver, quad_pll, ps_preset=None,
                 with_delay_line=False):
        self.cage = cage
        self.crg = _PSClocks()
        SoCCore.__init__(self, plat, SYS_CLK_HZ,
                         ident=f"MONet-open compute card, {board}, {lanes} x {rate_gbps:g} Gb/s",
                         cpu_type="zynqmp", integrated_sram_size=0, with_uart=False)
        self.cpu.config.update({"PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ": SYS_CLK_HZ // 1_000_000})
        if ps_preset:
            self.cpu.set_preset(ps_preset)
        # The PS's own memories, so that LiteX's software headers describe them: DDR low (the local
        # baseline) and the QSPI flash the PS resets into.
        self.bus.add_region("sram", SoCRegion(origin=self.cpu.mem_map["sram"], size=PS_DDR_LOW_SIZE))
        self.bus.add_region("rom", SoCRegion(origin=self.cpu.mem_map["rom"], size=PS_QSPI_SIZE, linker=True))

        # Named as in the sim (remote.remat, remote.link_c), so firmware/lib's drivers find the same CSRs.
        self.remote = remote = LiteXModule()
        remote.remat = remat = ReMAT(n_ports=3, n_sections=REMOTE_SECTIONS, section_bits=REMOTE_SECTION_BITS,
                                     tags=REMOTE_TAGS)
        remat.add_control()
        remote.link_c = link = LinkEndpoint(Signal(2, reset=log2_int(lanes)), retry_depth=LINK_RETRY_DEPTH,
                                            credit_limit=LINK_CREDITS)
        link.add_control()
        remote.stages_c = compute_stages(remat, link)
        remote.stages_c.add_control()
        self.lanes = phy = BoardLanes(plat, lanes, rate_gbps, cage, self.crg.cd_sys.clk, SYS_CLK_HZ, transceiver,
                                      quad_pll, with_delay_line)
        self.comb += [
            remat.sources[TARGET_REMOTE0].connect(link.sink),
            link.source.connect(remat.sinks[TARGET_REMOTE0]),
            link.rx_up.eq(phy.up),
        ] + link.connect_phy(phy.sink, phy.sources)

        # The PS's two master ports into ReMAT's arbitration.
        for port, (gp, base) in enumerate(((1, HPM1_FPD_HIGH), (2, HPM0_LPD_BASE))):
            master = self.cpu.add_axi_gp_master(gp, data_width=32)
            bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
            bridge = axi.AXI2Wishbone(master, bus, base_address=base & 0xFFFF_FFFF)
            remat_port = WishboneRematPort(remat.ports[port], remat.window_size)
            setattr(self.submodules, f"ps_bridge{port}", bridge)
            setattr(self.submodules, f"ps_port{port}", remat_port)
            self.comb += bus.connect(remat_port.bus)
        # LiteX clocks every master port from the HPM0_FPD clock input; HPM1_FPD has its own.
        self.cpu.cpu_params["i_maxihpm1_fpd_aclk"] = ClockSignal("ps")

        self.pbb = PBB(remat.ports[2], max_outstanding=REMOTE_TAGS, buckets=PBB_BUCKETS)
        self.pbb.add_control()
        for name, value in (("REMOTE_SECTIONS", REMOTE_SECTIONS), ("REMOTE_SECTION_BITS", REMOTE_SECTION_BITS),
                            ("REMOTE_TAGS", REMOTE_TAGS), ("NOMINAL_CLK_HZ", SYS_CLK_HZ),
                            ("LINK_RETRY_DEPTH", LINK_RETRY_DEPTH), ("LINK_MAX_LANES", MAX_LANES),
                            ("LINK_LANES", lanes), ("LINK_RATE_MBPS", int(rate_gbps * 1000)),
                            ("LINK_EFFICIENCY_PERMILLE", round(LINE_EFFICIENCY * 1000)),
                            ("REMOTE_LINE_BYTES", LINE_BYTES), ("PBB_BUCKETS", PBB_BUCKETS),
                            ("REMOTE_WINDOW0_BASE", HPM1_FPD_HIGH), ("REMOTE_WINDOW1_BASE", HPM0_LPD_BASE),
                            ("REMOTE_WINDOW1_SIZE", HPM0_LPD_SIZE), *code_constants().items(),
                            *credit_constants().items()):
            self.add_constant(name, value)
        if with_delay_line:
            self.add_constant("LANES_MAX_DELAY", DELAY_LINE_DEPTH - 1)
