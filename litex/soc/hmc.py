#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""An HMC as a memory for line transactions (and 128 B blocks on the controller's block port): our host
controller, one HMC link over two HMC channels, the HMC device model."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import *

from monet.cores.hmc.device import HMCDevice
from monet.cores.hmc.host import HMCHostController
from monet.cores.hmc.packet import FLIT_BYTES
from monet.cores.hmc.vaults import unloaded_cycles
from monet.cores.phy.figures import THRESHOLD_BITS, delay_cycles, flit_ps
from monet.cores.phy.hmc_channel import HMCChannel

# Reset values of the link settings: full width at 15 Gb/s, the paper's HMC configuration (T4).
RESET_LANES, RESET_RATE_GBPS = 16, 15


def unloaded_read_cycles(rate_gbps, lanes=16, n_bytes=64, clk_freq=250e6, fiber_ns=0.0):
    """Cycles from a read taken on the path's `sink` to its answer offered on `source` with nothing else in
    flight: the host controller's request register and link layer out (1 + 1), the request's FLIT on the
    channel (whole cycles, at least one) and its `delay`, the device's link layer in (2), its vaults
    (vaults.unloaded_cycles), its link layer out (1), the response's FLITs and the `delay` back, the host's
    link layer in with its CRC stage (3) and the controller's response register (1)."""
    clk_ps = round(1e12 / clk_freq)

    def on_wire(flits):
        return max(1, -(-flits * flit_ps(lanes, rate_gbps) // clk_ps))

    delay = delay_cycles(rate_gbps, fiber_ns, clk_freq, lanes)
    return (1 + 1 + on_wire(1) + delay + 2 + unloaded_cycles(n_bytes, clk_freq) + 1 +
            on_wire(n_bytes // FLIT_BYTES + 1) + delay + 3 + 1)


class HMCMemoryPath(LiteXModule):
    """Line transactions (`txn_layout` on `sink` / `source`) served by an HMC device model over one HMC link:
    host controller (hmc/host.py) -> HMC channel down -> device (hmc/device.py) -> HMC channel up -> back.

    The link's width and lane rate are the channels' `flit_ps`; its SerDes (and any fiber) their `delay`,
    both run-time CSRs (add_control), so one build serves half and full width, 10 to 15 Gb/s, and the HMC
    link stretched over a fiber. `block_sink` / `block_source` are the controller's 128 B block port (RD128,
    WR128; hmc/host.py), for a benchmark block beside the HMC. The link comes up by itself after reset (the
    token exchange): requests wait for it. The path runs in clock domain `domain` (the memory card's gated
    `hmc`); its CSRs stay in the system clock's.

    Latency, request taken to answer offered: `unloaded_read_cycles` below (the host controller 2 cycles out
    and 4 in, each channel's FLIT time and `delay`, the device's link layer 2 in and 1 out and its vaults).
    Unloaded at 16 x 15 Gb/s with the thesis's SerDes: 34 cycles for a 64 B read (measured in test_hmc_host
    on the core's Verilog and in test_sim_hmc on the SoC).
    """
    # The cores' buffers are Memories of whole packets (1156 bits): not for the CSR bus, which would map them.
    autocsr_exclude = {"host", "device", "down", "up"}

    def __init__(self, storage_bytes, clk_freq=250e6, channel_depth=256, domain="sys"):
        clk_ps = round(1e12 / clk_freq)
        in_domain = ClockDomainsRenamer(domain)
        self.host   = host   = in_domain(HMCHostController(with_block_port=True))
        self.device = device = in_domain(HMCDevice(clk_freq=clk_freq, storage_bytes=storage_bytes))
        self.down   = down   = in_domain(HMCChannel(clk_ps=clk_ps, depth=channel_depth, salt=1))
        self.up     = up     = in_domain(HMCChannel(clk_ps=clk_ps, depth=channel_depth, salt=2))
        self.sink, self.source = host.sink, host.source
        self.block_sink, self.block_source = host.block_sink, host.block_source
        self.clk_freq = clk_freq
        self.max_delay = channel_depth - 1     # the longest `delay` the channels' delay lines hold
        self.comb += [
            host.tx.connect(down.sink), down.source.connect(device.rx),
            device.tx.connect(up.sink), up.source.connect(host.rx),
        ]

    def add_control(self):
        reset_delay = delay_cycles(RESET_RATE_GBPS, lanes=RESET_LANES, clk_freq=self.clk_freq)
        self._flit_ps = CSRStorage(16, reset=flit_ps(RESET_LANES, RESET_RATE_GBPS),
                                   description="Time of one 16 B FLIT on the link's lanes, ps (width and lane rate).")
        self._delay   = CSRStorage(16, reset=reset_delay,
                                   description="One-way delay, cycles: host and device SerDes halves plus fiber.")
        self._ber     = CSRStorage(THRESHOLD_BITS, description="Either direction: a FLIT is hit with probability value / 2**40.")
        self._ber_seed = CSRStorage(32, description="Seed of both error generators (written: reloaded).")
        vaults = self.device.vaults
        self._poison = CSRStorage(fields=[CSRField("enable", size=1, description="The HMC answers reads of "
                                                   "`poison_line` ERROR, as a vault with an uncorrectable word would.")])
        self._poison_line = CSRStorage(len(vaults.poison_line), description="The HMC's poisoned line (its byte "
                                                                             "address / 64).")
        self.comb += [vaults.poison.eq(self._poison.fields.enable), vaults.poison_line.eq(self._poison_line.storage)]
        for channel in (self.down, self.up):
            self.comb += [
                channel.flit_ps.eq(self._flit_ps.storage),
                channel.delay.eq(self._delay.storage),
                channel.flit_threshold.eq(self._ber.storage),
                channel.seed.eq(self._ber_seed.storage),
                channel.seed_load.eq(self._ber_seed.re),
            ]
        counters = [
            ("flits_down", self.down.flits, "FLITs carried host to device."),
            ("flits_up",   self.up.flits,   "FLITs carried device to host."),
            ("hits_down",  self.down.hits,  "Packets hit by a bit error host to device."),
            ("hits_up",    self.up.hits,    "Packets hit by a bit error device to host."),
            ("rmw_writes", self.host.rmw_writes, "Writes of part of a line (read-modify-write)."),
            ("block_reads",  self.host.block_reads,  "RD128s from the block port."),
            ("block_writes", self.host.block_writes, "WR128s from the block port."),
            ("errors",     self.host.errors, "ERROR responses and requests that were not requests."),
            ("poisoned",   vaults.poisoned,  "Reads of the HMC's poisoned line answered ERROR."),
        ]
        for end, link in (("host", self.host.link), ("device", self.device.link)):
            counters += [
                (f"{end}_crc_errors",   link.crc_errors,   f"Packets the {end} received with a bad CRC."),
                (f"{end}_replays",      link.replays,      f"Times the {end} replayed its retry buffer."),
                (f"{end}_token_stalls", link.token_stalls, f"Cycles a packet of the {end}'s waited for tokens."),
            ]
        for name, signal, description in counters:
            csr = CSRStatus(len(signal), name=name, description=description)
            setattr(self, f"_{name}", csr)
            self.comb += csr.status.eq(signal)
