#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""ZCU102 (xczu9eg) targets: the compute card, whose PS masters ReMAT, and the DDR4 memory card.

Generated here without Vivado (`monet board build ... --no-compile`): Verilog, Vivado TCL and XDC, the CSR
map (csr.json, csr.csv) and the C headers; a user with Vivado adds nothing but `--build` (and `--load`).
Nothing here has run on a board: the README's "On a board" section lists what is untested.

Lanes: the link's 1, 2, 4 or 8 bonded lanes are GTH4 channels through liteiclink, 8b/10b, 40-bit words,
on the four SFP+ cages (bank 230, reference clock the board's user SI570 at 156.25 MHz) or on FMC HPC0's eight
DP lanes (banks 229 and 228, reference clock GBTCLK0 from the FMC module). One quad PLL a quad gives 10,
12.5 or 15 Gb/s from 156.25 MHz (QPLL1 for 10 and 12.5, QPLL0 for 15). phy/gt_lanes.py carries the link's
blocks over them: 75 % of the line rate under load, where the sim's 64b/66b lanes carry 97 %.
"""

from migen import *
from migen.genlib.cdc import MultiReg
from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.build.generic_platform import Pins, Subsignal
from litex.gen import LiteXModule
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCCore
from litex.soc.interconnect import axi, wishbone
from litex.soc.cores.clock import USIDELAYCTRL, USMMCM
from litex.soc.interconnect.csr import AutoCSR, CSRStatus, CSRStorage
from litedram.modules import MT40A256M16
from litedram.phy import usddrphy
from liteiclink.serdes.gth4_ultrascale import GTH4, GTH4QuadPLL

from monet.cores.common.layouts import LINE_BYTES, MAX_LANES
from monet.cores.link.core import LinkEndpoint
from monet.cores.memcard.core import MemoryCard
from monet.cores.memcard.ddr4 import DDR4Memory
from monet.cores.pbb.core import PBB
from monet.cores.phy.gt_lanes import LINE_EFFICIENCY, TransceiverLanes
from monet.cores.remat.bfct import TARGET_REMOTE0
from monet.cores.remat.core import ReMAT
from monet.cores.remat.port import WishboneRematPort
from monet.soc.board import BoardError, main_for
from monet.soc.remote import LINK_RETRY_DEPTH

BOARD        = "zcu102"
SYS_CLK_HZ   = 250_000_000
RATES_GBPS   = (10.0, 12.5, 15.0)
REFCLK_HZ    = 156.25e6
LANES        = (1, 2, 4, 8)
CAGES        = {"sfp": 4, "fmc": 8}    # lanes each place has
# ReMAT on the board: 16 sections of 256 MB (a 4 GB window), 128 tags, three ports (two PS masters, the PBB).
REMOTE_SECTIONS, REMOTE_SECTION_BITS, REMOTE_TAGS = 16, 28, 128
PBB_BUCKETS  = 64
LINK_CREDITS = 127
# The optional fiber emulation (--delay-line): up to 511 cycles one way, 2 us or about 400 m of fiber.
DELAY_LINE_DEPTH = 512
# The PS's master windows (UG1085 table 10-1): HPM0_FPD carries the CSRs (LiteX's convention), HPM1_FPD's
# 4 GB high window is ReMAT's port 0, HPM0_LPD's 512 MB window its port 1.
CSR_BASE       = 0xA000_0000
HPM1_FPD_HIGH  = 0x5_0000_0000
HPM0_LPD_BASE  = 0x8000_0000
HPM0_LPD_SIZE  = 0x2000_0000
PS_DDR_LOW_SIZE = 0x8000_0000
# The memory card: the PL's DDR4 (one MT40A256M16, 16 bits, 512 MB) through LiteDRAM, an SRAM beside it, and a
# management CPU (VexRiscv, LiteX's BIOS: DDR4 initialisation and calibration, a console on the USB UART).
PL_DDR4_SIZE     = 512 * 1024 * 1024
MEMCARD_SRAM_SIZE = 256 * 1024
MGMT_ROM_SIZE, MGMT_SRAM_SIZE = 0x10000, 0x2000
PS_QSPI_SIZE   = 0x0400_0000

# Transceiver pins the litex-boards platform lacks: the SFP+ cages (bank 230, GTHE4_CHANNEL_X1Y12..15) and their
# reference clock, and FMC HPC0's DP lanes and GBTCLK0 as lanes.
_sfp_pins = [("E4", "E3", "D2", "D1"), ("D6", "D5", "C4", "C3"), ("B6", "B5", "B2", "B1"), ("A8", "A7", "A4", "A3")]
_io = [
    ("sfp_refclk", 0, Subsignal("p", Pins("C8")), Subsignal("n", Pins("C7"))),
    ("fmc_refclk", 0, Subsignal("p", Pins("FMC_HPC0:GBTCLK0_M2C_C_P")),
                      Subsignal("n", Pins("FMC_HPC0:GBTCLK0_M2C_C_N"))),
] + [
    (f"sfp_{direction}", i, Subsignal("p", Pins(p)), Subsignal("n", Pins(n)))
    for i, (tx_p, tx_n, rx_p, rx_n) in enumerate(_sfp_pins)
    for direction, p, n in (("tx", tx_p, tx_n), ("rx", rx_p, rx_n))
] + [
    (f"fmc_{direction}", i, Subsignal("p", Pins(f"FMC_HPC0:DP{i}_{pins}_P")),
                            Subsignal("n", Pins(f"FMC_HPC0:DP{i}_{pins}_N")))
    for i in range(8)
    for direction, pins in (("tx", "C2M"), ("rx", "M2C"))
]


def check_link(lanes, rate_gbps, cage):
    if lanes not in LANES:
        raise BoardError(f"--lanes {lanes}: accepted are {', '.join(map(str, LANES))}")
    if rate_gbps not in RATES_GBPS:
        raise BoardError(f"--rate {rate_gbps:g}: accepted are {', '.join(f'{r:g}' for r in RATES_GBPS)} (Gb/s)")
    if cage not in CAGES:
        raise BoardError(f"--cage {cage}: accepted are {', '.join(CAGES)}")
    if lanes > CAGES[cage]:
        raise BoardError(f"--lanes {lanes} with --cage {cage}: the {cage} cages have {CAGES[cage]} lanes "
                         f"(8 lanes need --cage fmc)")


def default_cage(lanes):
    return "sfp" if lanes <= CAGES["sfp"] else "fmc"


def platform():
    """The litex-boards ZCU102 platform with our transceiver pins."""
    from litex_boards.platforms import xilinx_zcu102
    plat = xilinx_zcu102.Platform()
    plat.add_extension(_io)
    return plat


class BoardLanes(LiteXModule, AutoCSR):
    """`lanes` GTH4 channels at `rate_gbps` on `cage`, one quad PLL a quad of four, carrying the link's lane
    words (TransceiverLanes). Lane 0's transmit clock drives every lane (their TX buffers take up the phase).
    CSRs: liteiclink's per-lane controls (enables, readiness, loopback, PRBS) as `lane<i>_*`, `realigns`, and
    with `with_delay_line` `emulated_delay`: cycles received rows wait, fiber emulated in the fabric.
    """
    def __init__(self, plat, lanes, rate_gbps, cage, sys_clk, sys_clk_freq, with_delay_line=False):
        refclk_pads = plat.request(f"{cage}_refclk")
        refclk = Signal()
        self.specials += Instance("IBUFDS_GTE4", i_CEB=0, i_I=refclk_pads.p, i_IB=refclk_pads.n, o_O=refclk)
        linerate = rate_gbps * 1e9
        plls = [GTH4QuadPLL(refclk, REFCLK_HZ, linerate) for _ in range((lanes + 3) // 4)]
        for i, pll in enumerate(plls):
            setattr(self.submodules, f"qpll{i}", pll)
        serdes, rx_domains = [], []
        for lane in range(lanes):
            tx_clk = None if lane == 0 else serdes[0].cd_tx.clk
            gt = ClockDomainsRenamer({"tx": f"lane{lane}_tx", "rx": f"lane{lane}_rx"})(
                GTH4(plls[lane // 4], plat.request(f"{cage}_tx", lane), plat.request(f"{cage}_rx", lane), sys_clk_freq,
                     data_width=40, tx_buffer_enable=True, rx_buffer_enable=False, tx_clk=tx_clk))
            gt.add_stream_endpoints()
            gt.add_base_control()
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
        self.comb += phy.ready.eq(Cat(*up) == 2**lanes - 1)
        self.sink, self.sources, self.up = phy.sink, phy.sources, phy.up
        self._realigns = CSRStatus(32, description="Times the lanes were found slipped and realigned.")
        self.comb += self._realigns.status.eq(phy.realigns)
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
    """The compute card: the PS (quad A53, Linux) masters ReMAT through two AXI master ports, ReMAT sends remote
    accesses over the link on GTH lanes, the PBB measures on ReMAT's third port. The PS's own DDR4 is the
    local baseline (Linux's node 0). CSRs on HPM0_FPD at 0xA000_0000.

    Each PS port reaches ReMAT as 32-bit accesses, one at a time (AXI -> Wishbone -> WishboneRematPort), as the
    sim's uncached CPU port does; the PBB drives ReMAT at line rate.
    """
    mem_map = {"csr": CSR_BASE}

    def __init__(self, lanes=4, rate_gbps=15.0, cage=None, ps_preset=None, with_delay_line=False):
        cage = cage or default_cage(lanes)
        check_link(lanes, rate_gbps, cage)
        self.cage = cage
        plat = platform()
        self.crg = _PSClocks()
        SoCCore.__init__(self, plat, SYS_CLK_HZ, ident=f"MONet-open compute card, ZCU102, {lanes} x {rate_gbps:g} Gb/s",
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
        self.lanes = phy = BoardLanes(plat, lanes, rate_gbps, cage, self.crg.cd_sys.clk, SYS_CLK_HZ,
                                             with_delay_line)
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
                            ("REMOTE_WINDOW1_SIZE", HPM0_LPD_SIZE)):
            self.add_constant(name, value)


class _MemoryCardClocks(LiteXModule):
    """The memory card's clocks from the 125 MHz oscillator: the system clock, four times it for the DDR4
    PHY's serialisers, and 500 MHz for its IDELAYCTRL."""
    def __init__(self, plat, sys_clk_freq):
        self.rst       = Signal()
        self.cd_sys    = ClockDomain()
        self.cd_sys4x  = ClockDomain()
        self.cd_pll4x  = ClockDomain()
        self.cd_idelay = ClockDomain()
        self.pll = pll = USMMCM(speedgrade=-2)
        self.comb += pll.reset.eq(self.rst)
        pll.register_clkin(plat.request("clk125"), 125e6)
        pll.create_clkout(self.cd_pll4x, 4*sys_clk_freq, buf=None, with_reset=False)
        pll.create_clkout(self.cd_idelay, 500e6)
        plat.add_false_path_constraints(self.cd_sys.clk, pll.clkin)
        # The system clock divides the serialisers' by four in the same clock buffer column: their phases match.
        self.specials += [
            Instance("BUFGCE_DIV", p_BUFGCE_DIVIDE=4, i_CE=1, i_I=self.cd_pll4x.clk, o_O=self.cd_sys.clk),
            Instance("BUFGCE", i_CE=1, i_I=self.cd_pll4x.clk, o_O=self.cd_sys4x.clk),
            AsyncResetSynchronizer(self.cd_sys, ~pll.locked | self.rst),
        ]
        self.idelayctrl = USIDELAYCTRL(cd_ref=self.cd_idelay, cd_sys=self.cd_sys)


class MemoryCardSoC(SoCCore):
    """The DDR4 memory card: the link on GTH lanes, the memory card core (de-streamer) serving from the PL's
    DDR4 through LiteDRAM (its US+ PHY) or a 256 KB SRAM, and a management CPU whose BIOS initialises and
    calibrates the DDR4 and gives a console (USB UART) with the CSRs.

    The DDR4 is the ZCU102's 16-bit PL component: at 250 MHz (DDR4-2000 at LiteDRAM's 4:1) it peaks at
    4 GB/s, a quarter of the paper's 64-bit SO-DIMM. LiteDRAM's USPDDRPHY serialises at four times the system
    clock (1 GHz here); it is proven on this board at 125 MHz (litex-boards' default). A build that misses
    timing or calibration drops to that rate with the MIG instead: see the README's "On a board".
    """
    def __init__(self, lanes=4, rate_gbps=15.0, cage=None, with_delay_line=False):
        cage = cage or default_cage(lanes)
        check_link(lanes, rate_gbps, cage)
        self.cage = cage
        plat = platform()
        self.crg = _MemoryCardClocks(plat, SYS_CLK_HZ)
        SoCCore.__init__(self, plat, SYS_CLK_HZ, ident=f"MONet-open memory card, ZCU102, {lanes} x {rate_gbps:g} Gb/s",
                         cpu_type="vexriscv", cpu_variant="lite", integrated_rom_size=MGMT_ROM_SIZE,
                         integrated_sram_size=MGMT_SRAM_SIZE, uart_name="serial")

        self.ddrphy = usddrphy.USPDDRPHY(plat.request("ddram"), memtype="DDR4", sys_clk_freq=SYS_CLK_HZ,
                                         iodelay_clk_freq=500e6)
        # LiteX's SDRAM core without a CPU bus port: its DFI injector is what the BIOS needs.
        self.add_sdram("sdram", phy=self.ddrphy, module=MT40A256M16(SYS_CLK_HZ, "1:4"), size=PL_DDR4_SIZE,
                       with_soc_interconnect=False)
        ddr4 = DDR4Memory(PL_DDR4_SIZE, SYS_CLK_HZ, depth=REMOTE_TAGS, core=self.sdram)
        # Named as in the sim (remote.memcard, remote.link_m), so firmware/lib's drivers find the same CSRs.
        self.remote = remote = LiteXModule()
        remote.memcard = memcard = MemoryCard(size=PL_DDR4_SIZE, sram_size=MEMCARD_SRAM_SIZE,
                                              max_outstanding=REMOTE_TAGS, ddr4=ddr4, clk_freq=SYS_CLK_HZ,
                                              gate_clocks=False)
        memcard.add_control()
        remote.link_m = link = LinkEndpoint(Signal(2, reset=log2_int(lanes)), retry_depth=LINK_RETRY_DEPTH)
        link.add_control()
        self.lanes = phy = BoardLanes(plat, lanes, rate_gbps, cage, self.crg.cd_sys.clk, SYS_CLK_HZ,
                                             with_delay_line)
        self.comb += [
            link.source.connect(memcard.sink),
            memcard.source.connect(link.sink),
            link.credit_freed.eq(memcard.taken),
            link.rx_up.eq(phy.up),
        ] + link.connect_phy(phy.sink, phy.sources)
        for name, value in (("MEMCARD_SIZE", PL_DDR4_SIZE), ("MEMCARD_SRAM_SIZE", MEMCARD_SRAM_SIZE),
                            ("NOMINAL_CLK_HZ", SYS_CLK_HZ),
                            ("LINK_RETRY_DEPTH", LINK_RETRY_DEPTH), ("LINK_LANES", lanes),
                            ("LINK_RATE_MBPS", int(rate_gbps * 1000))):
            self.add_constant(name, value)


def make_card(role, lanes=4, rate_gbps=15.0, cage=None, ps_preset=None, with_delay_line=False):
    """The SoC of `role` ("compute" or "memory")."""
    if role == "compute":
        return ComputeCard(lanes, rate_gbps, cage, ps_preset, with_delay_line)
    return MemoryCardSoC(lanes, rate_gbps, cage, with_delay_line)


if __name__ == "__main__":
    raise SystemExit(main_for(BOARD))
