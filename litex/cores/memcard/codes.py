#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The memory card's codes as plain Python, without Migen: which memory serves the card's window (the
`memory` CSR). The host reads them through monet.soc.facts, the firmware as soc.h constants (MEMCARD_MEMORY_*)."""

MEMORIES = {
    "sram": 0,   # the on-card SRAM (a line a cycle)
    "ddr4": 1,   # DDR4 through LiteDRAM (with_ddr4)
    "hmc":  2,   # an HMC (a memory module given as `hmc`)
}
MEMORY_SRAM, MEMORY_DDR4, MEMORY_HMC = MEMORIES["sram"], MEMORIES["ddr4"], MEMORIES["hmc"]
