#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""ZCU111 (RFSoC xczu28dr) compute card: the paper's compute board.

The same compute card as the ZCU102's (cards.py: the PS masters ReMAT, the PBB, the link), with its lanes on
the four SFP28 cages: bank 128's GTY channels (GTYE4_CHANNEL_X1Y12..15), reference clock the user SI570 on
bank 129's MGTREFCLK1 (156.25 MHz), each cage's TX_DISABLE_B held high. The memory card is a ZCU102
(zcu102.py). litex-boards has no ZCU111 platform: the pins below are the board's (UG1271), as Corundum's
ZCU111 constraints also give them.
"""

from migen import *

from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
from litex.build.xilinx import VivadoProgrammer, XilinxUSPPlatform
from liteiclink.serdes.gty_ultrascale import GTY, GTYQuadPLL

from monet.soc.cards import ComputeCard, transceiver_io

DEVICE = "xczu28dr-ffvg1517-2-e"
CAGES  = {"sfp": 4}
ROLES  = ("compute",)

# (TX p, TX n, RX p, RX n) of SFP28 cages 0-3, and their TX_DISABLE_B (LVCMOS12).
_sfp_pins = [("Y35", "Y36", "AA38", "AA39"), ("V35", "V36", "W38", "W39"), ("T35", "T36", "U38", "U39"),
             ("R33", "R34", "R38", "R39")]
_sfp_tx_disable_b = "G12 G10 K12 J7"
_io = [
    ("sfp_refclk", 0, Subsignal("p", Pins("V31")), Subsignal("n", Pins("V32"))),
    ("sfp_tx_disable_b", 0, Pins(_sfp_tx_disable_b), IOStandard("LVCMOS12"), Misc("SLEW=SLOW"), Misc("DRIVE=8")),
] + transceiver_io("sfp", _sfp_pins)


class Platform(XilinxUSPPlatform):
    def __init__(self, toolchain="vivado"):
        XilinxUSPPlatform.__init__(self, DEVICE, _io, toolchain=toolchain)

    def create_programmer(self):
        return VivadoProgrammer()


def make_card(role, lanes, rate_gbps, cage, ps_preset=None, with_delay_line=False):
    """The compute card (the ZCU111 has no memory-card target: pair it with a ZCU102's), its lanes on `cage`
    (checked: cards.resolve_cage)."""
    assert role in ROLES
    plat = Platform()
    soc = ComputeCard(plat, "ZCU111", lanes, rate_gbps, cage, GTY, GTYQuadPLL, ps_preset, with_delay_line)
    soc.comb += plat.request("sfp_tx_disable_b").eq(2**len(_sfp_pins) - 1)    # every cage's laser on
    return soc
