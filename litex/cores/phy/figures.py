#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The channel's figures as plain Python, without Migen (the host reads them through monet.soc.facts): a bit
error rate as the threshold a block or a FLIT is hit below, a FLIT's time on the lanes, and an HMC link's
SerDes delays."""

import math

from monet.cores.common.layouts import HMC_FLIT_BITS as FLIT_BITS

BLOCK_LINE_BITS = 66    # a block on the wire: 64 data bits and the 2-bit sync header.
THRESHOLD_BITS  = 40    # a block is hit when a 40-bit draw is below the lane's threshold.


def block_threshold(ber):
    """The per-block threshold for a bit error rate: P(block hit) = 1 - (1 - ber)**66, in 1/2**40."""
    p_block = 1 - (1 - ber)**BLOCK_LINE_BITS
    return min(2**THRESHOLD_BITS - 1, round(p_block * 2**THRESHOLD_BITS))


def flit_ps(lanes, rate_gbps):
    """Picoseconds a FLIT takes on `lanes` lanes at `rate_gbps` each."""
    return round(FLIT_BITS * 1000 / (lanes * rate_gbps))


def flit_threshold(ber):
    """The per-FLIT hit threshold, in 1/2**40, for a bit error rate."""
    return min(2**THRESHOLD_BITS - 1, round((1 - (1 - ber)**FLIT_BITS) * 2**THRESHOLD_BITS))


# SerDes latencies (ns), per direction, beside the fiber. The host's FPGA SerDes: the thesis's Table 3.6
# measured TX + RX in internal loopback as 19 cycles of its user clock (lanes x rate / 512 b: 312.5 MHz at
# 16 x 10G, 390.625 at 12.5G; 468.75 at 15G is derived, not measured); half each way. The device's: the
# thesis's Table 3.1 "HMC delay" in the retry-pointer loop (26.5, 25.9, 22.3 ns at 10, 12.5, 15 Gb/s) less
# our device link layer's 3 cycles from a packet in to its RRP out, half each way.
HOST_SERDES_CYCLES = 19
HMC_DELAY_NS = {10: 26.5, 12.5: 25.9, 15: 22.3}
DEVICE_LINK_CYCLES = 3


def host_serdes_ns(rate_gbps, lanes=16):
    return HOST_SERDES_CYCLES * 512 / (lanes * rate_gbps)


def device_serdes_ns(rate_gbps, clk_freq=250e6):
    return HMC_DELAY_NS[rate_gbps] - DEVICE_LINK_CYCLES * 1e9 / clk_freq


def delay_cycles(rate_gbps, fiber_ns=0.0, clk_freq=250e6, lanes=16):
    """One direction's `delay`: half of each end's SerDes plus the fiber, in whole cycles (rounded up). The
    host's SerDes clock scales with the link's width; the device's delay was measured at full width."""
    ns = (host_serdes_ns(rate_gbps, lanes) + device_serdes_ns(rate_gbps, clk_freq)) / 2 + fiber_ns
    return max(1, math.ceil(ns * clk_freq / 1e9 - 1e-9))
