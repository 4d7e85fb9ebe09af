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
from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.build.generic_platform import Pins, Subsignal
from litex.gen import LiteXModule
from litex.soc.integration.soc_core import SoCCore
from litex.soc.cores.clock import USIDELAYCTRL, USMMCM
from litedram.core.controller import ControllerSettings
from litedram.modules import MT40A256M16
from litedram.phy import usddrphy
from liteiclink.serdes.gth4_ultrascale import GTH4, GTH4QuadPLL

from monet.cores.link.core import LinkEndpoint
from monet.cores.memcard.core import MemoryCard
from monet.cores.memcard.ddr4 import DDR4_DEPTH, DDR4Memory, TrafficRefresher
from monet.soc.cards import REMOTE_TAGS, SYS_CLK_HZ, BoardLanes, ComputeCard, transceiver_io
from monet.soc.facts import LINK_RETRY_DEPTH, code_constants
from monet.soc.remote import memory_stages

CAGES        = {"sfp": 4, "fmc": 8}    # lanes each place has, in the order a default is chosen
ROLES        = ("compute", "memory")
# The memory card: the PL's DDR4 (one MT40A256M16, 16 bits, 512 MB) through LiteDRAM, an SRAM beside it, and a
# management CPU (VexRiscv, LiteX's BIOS: DDR4 initialisation and calibration, a console on the USB UART).
PL_DDR4_SIZE     = 512 * 1024 * 1024
MEMCARD_SRAM_SIZE = 256 * 1024
MGMT_ROM_SIZE, MGMT_SRAM_SIZE = 0x10000, 0x2000

# Transceiver pins the litex-boards platform lacks: the SFP+ cages (bank 230, GTHE4_CHANNEL_X1Y12..15) and their
# reference clock, and FMC HPC0's DP lanes and GBTCLK0 as lanes.
_sfp_pins = [("E4", "E3", "D2", "D1"), ("D6", "D5", "C4", "C3"), ("B6", "B5", "B2", "B1"), ("A8", "A7", "A4", "A3")]
_fmc_pins = [tuple(f"FMC_HPC0:DP{i}_{pin}" for pin in ("C2M_P", "C2M_N", "M2C_P", "M2C_N")) for i in range(8)]
_io = [
    ("sfp_refclk", 0, Subsignal("p", Pins("C8")), Subsignal("n", Pins("C7"))),
    ("fmc_refclk", 0, Subsignal("p", Pins("FMC_HPC0:GBTCLK0_M2C_C_P")),
                      Subsignal("n", Pins("FMC_HPC0:GBTCLK0_M2C_C_N"))),
] + transceiver_io("sfp", _sfp_pins) + transceiver_io("fmc", _fmc_pins)


def platform():
    """The litex-boards ZCU102 platform with our transceiver pins."""
    from litex_boards.platforms import xilinx_zcu102
    plat = xilinx_zcu102.Platform()
    plat.add_extension(_io)
    return plat


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
    def __init__(self, lanes, rate_gbps, cage, with_delay_line=False):
        self.cage = cage
        plat = platform()
        self.crg = _MemoryCardClocks(plat, SYS_CLK_HZ)
        SoCCore.__init__(self, plat, SYS_CLK_HZ, ident=f"MONet-open memory card, ZCU102, {lanes} x {rate_gbps:g} Gb/s",
                         cpu_type="vexriscv", cpu_variant="lite", integrated_rom_size=MGMT_ROM_SIZE,
                         integrated_sram_size=MGMT_SRAM_SIZE, uart_name="serial")

        self.ddrphy = usddrphy.USPDDRPHY(plat.request("ddram"), memtype="DDR4", sys_clk_freq=SYS_CLK_HZ,
                                         iodelay_clk_freq=500e6)
        # LiteX's SDRAM core without a CPU bus port: its DFI injector is what the BIOS needs.
        # Refreshes timed by the memory card's traffic, as in the sim (ddr4.py's TrafficRefresher).
        self.add_sdram("sdram", phy=self.ddrphy, module=MT40A256M16(SYS_CLK_HZ, "1:4"), size=PL_DDR4_SIZE,
                       with_soc_interconnect=False,
                       controller_settings=ControllerSettings(refresh_cls=TrafficRefresher))
        ddr4 = DDR4Memory(PL_DDR4_SIZE, SYS_CLK_HZ, depth=DDR4_DEPTH, core=self.sdram)
        # Named as in the sim (remote.memcard, remote.link_m), so firmware/lib's drivers find the same CSRs.
        self.remote = remote = LiteXModule()
        remote.memcard = memcard = MemoryCard(size=PL_DDR4_SIZE, sram_size=MEMCARD_SRAM_SIZE,
                                              max_outstanding=REMOTE_TAGS, ddr4=ddr4, clk_freq=SYS_CLK_HZ,
                                              gate_clocks=False)
        memcard.add_control()
        remote.link_m = link = LinkEndpoint(Signal(2, reset=log2_int(lanes)), retry_depth=LINK_RETRY_DEPTH)
        link.add_control()
        remote.stages_m = memory_stages(link)
        remote.stages_m.add_control()
        self.lanes = phy = BoardLanes(plat, lanes, rate_gbps, cage, self.crg.cd_sys.clk, SYS_CLK_HZ, GTH4,
                                      GTH4QuadPLL, with_delay_line)
        self.comb += [
            link.source.connect(memcard.sink),
            memcard.source.connect(link.sink),
            link.credit_freed.eq(memcard.taken),
            link.rx_up.eq(phy.up),
        ] + link.connect_phy(phy.sink, phy.sources)
        for name, value in (("MEMCARD_SIZE", PL_DDR4_SIZE), ("MEMCARD_SRAM_SIZE", MEMCARD_SRAM_SIZE),
                            ("NOMINAL_CLK_HZ", SYS_CLK_HZ),
                            ("LINK_RETRY_DEPTH", LINK_RETRY_DEPTH), ("LINK_LANES", lanes),
                            ("LINK_RATE_MBPS", int(rate_gbps * 1000)), *code_constants().items()):
            self.add_constant(name, value)


def make_card(role, lanes, rate_gbps, cage, ps_preset=None, with_delay_line=False):
    """The SoC of `role` ("compute" or "memory"), its lanes on `cage` (checked: cards.resolve_cage)."""
    if role == "compute":
        return ComputeCard(platform(), "ZCU102", lanes, rate_gbps, cage, GTH4, GTH4QuadPLL, ps_preset, with_delay_line)
    return MemoryCardSoC(lanes, rate_gbps, cage, with_delay_line)
