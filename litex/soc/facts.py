#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""What the host knows of the hardware, in one place and without Migen: the sim SoC's clock, sizes and depths,
the remote path's limits and timestamp points, and the Migen-free facts of the cores (the link's constants,
the channel's figures, the cores' codes: CODES, which every SoC exports to the firmware as soc.h constants).
`monet --help` and the report import this and never Migen (host/tests/test_imports.py checks it); the gateware
takes the same values from here.
"""

from monet.cores.common.layouts import (BEAT_BLOCKS, LINE_BYTES, MAX_CREDIT_LIMIT, MAX_LANES, REQUESTS_PER_CREDIT,
                                        TAG_BITS, segment_names)
from monet.cores.memcard.codes import MEMORIES
from monet.cores.pbb.codes import MODES, PATTERNS
from monet.cores.phy.codes import FAULT_KINDS, FRAME_FAULTS, LOOPBACKS, OCS_SETUP_S, SWITCH_COMPRESSION
from monet.cores.phy.figures import block_threshold, delay_cycles as hmc_delay_cycles, flit_ps as hmc_flit_ps
from monet.cores.remat.codes import FAULTS, TARGET_LOCAL, TARGET_REMOTE0, TARGET_REMOTE1, TARGETS

NOMINAL_CLK_HZ = 250_000_000  # cycles are the truth; ns are reported at this nominal clock.
REMOTE_BASE    = 0x8000_0000  # inside VexRiscv's uncached I/O region: every access reaches ReMAT.
REMOTE_CACHED_BASE = 0x2000_0000   # the same window, cacheable (below the I/O region), through the combiner
ROM_SIZE       = 0x10000
SRAM_SIZE      = 0x4000
CONSOLE_MAX_SAMPLES = 1024     # the console's timed samples and chase lines: three word buffers in SRAM.
LOCAL_RAM_SIZE = 0x40000       # local memory on the compute card (baseline for comparisons).
# The remote path's size, exported as csr.json constants (REMOTE_*, MEMCARD_SIZE) for the firmware and the host;
# the host checks values against these before anything is built.
REMOTE_SECTIONS     = 16
REMOTE_SECTION_BITS = 20            # 1 MiB sections
REMOTE_TAGS         = 2**TAG_BITS   # ReMAT's outstanding requests (512: a round trip at 100 m)
MEMCARD_SIZE        = 4*1024*1024
PBB_BUCKETS         = 64            # the benchmark block's latency histogram; the last bucket takes the overflow
POOLED_PORTS        = 4             # link ports of a pooled memory card (the compute card and 3 traffic cards)

# A board's link: the lane rates our cards configure its transceivers for (one quad PLL from every cage's
# 156.25 MHz reference) and its bonded lanes (litex/soc/cards.py checks a build's settings against them).
BOARD_RATES_GBPS = (10.0, 12.5, 15.0)
BOARD_LANES      = (1, 2, 4, 8)

USER_INCLUDE = "user_include"   # in a build: generated/ headers for monet-ctl (no bare-metal access functions)
BRIDGE_PORT_ENV = "MONET_SIM_BRIDGE_PORT"   # Vsim's bridge listens on 127.0.0.1 at this port (0: any free one)


# Defaults of the path that software needs to know; the SoC exports them as csr.json constants (the host
# and the firmware read them there), and the host checks values against them before anything is built.
CHANNEL_MAX_DELAY = 1000   # one-way delay software may set, cycles (the delay lines hold channel_depth blocks)
LINK_RETRY_DEPTH  = 512    # transactions each end's retry buffer keeps for replay (as many as the tags)
# Requests the compute end lets toward the memory card's input FIFO (as deep as the tags): the most the trailer's
# credits count, so that the credit loop covers bandwidth x round trip at 100 m as the tags do.
LINK_CREDITS      = MAX_CREDIT_LIMIT


def credit_constants():
    """The credit limit's bounds, as a SoC exports them (the firmware's `retry credits=` checks against them;
    the default is the credit_limit CSR's reset value)."""
    return {"LINK_MAX_CREDITS": MAX_CREDIT_LIMIT, "LINK_REQUESTS_PER_CREDIT": REQUESTS_PER_CREDIT}

# Where a remote access is timestamped (StageTimer), in the order it passes them. On the compute card: ReMAT
# takes the port's request, the link takes it, its frame's first beat leaves for the lanes; the answer's first
# beat comes from the lanes, the link delivers it, ReMAT answers the port. On the memory card: the request's
# first beat comes from the lanes, the link delivers it to the card, the link takes the answer, its first beat
# leaves for the lanes. Each card times its own points on its own clock: the compute card's lanes_tx to
# lanes_rx is the wire both ways and the memory card's whole turnaround.
COMPUTE_POINTS = ("request", "link_tx", "lanes_tx", "lanes_rx", "link_rx", "answer")
MEMORY_POINTS  = ("lanes_rx", "link_rx", "link_tx", "lanes_tx")
# Their segments, in the order the firmware's `stages` command gives each card's sums.
STAGE_SEGMENTS = {"compute": segment_names(COMPUTE_POINTS), "memory": segment_names(MEMORY_POINTS)}


def peak_GBps(clk_freq):
    """The memory card's DDR4 peak at system clock `clk_freq`: its controller takes one 64 B burst a cycle."""
    return clk_freq * LINE_BYTES / 1e9


# The cores' codes, each declared once in its core's codes.py: the gateware compares with them, the host
# programs them, and every SoC exports them as constants (soc.h, csr.json) named PREFIX_NAME, which the
# firmware uses (firmware/lib's pbb.h, memcard.h, remat.h).
CODES = {"CHANNEL_FAULT": FAULT_KINDS, "CHANNEL_LOOPBACK": LOOPBACKS, "MEMCARD_MEMORY": MEMORIES, "PBB_MODE": MODES,
         "PBB_PATTERN": PATTERNS, "REMAT_FAULT": FAULTS, "REMAT_TARGET": TARGETS}


def code_constants():
    """{constant name: value} of every code of CODES, as a SoC exports them."""
    return {f"{prefix}_{name.upper()}": value for prefix, table in CODES.items() for name, value in table.items()}
