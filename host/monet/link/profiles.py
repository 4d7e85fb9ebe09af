"""Link profiles and memory models: run-time settings of one sim build, so every path shares a model.

`ours`: the MONet-open link. PHY latency from PG056 (link_model), frames of up to 8 units sharing a CRC
trailer, consecutive lines paired under one header, ReMAT issuing a line a cycle.

`monet`: the MONet paper's DDR4 path, an AXI memory-mapped to stream conversion (the streamer) in front of
Aurora 64B/66B. Each constant, its source, and whether it was calibrated against the paper:

| constant | value | source |
|---|---|---|
| Aurora latency, one way | 48 user_clk cycles | PG074 "Latency": protocol engine about 46 + gearbox 1-2. PG074's 54-55 also counts about 7 cycles of clock compensation, which we charge as a throughput gap, not as latency on every word. |
| user_clk | line rate / 66 (64 bits a lane per cycle) | PG074, 64B/66B with a 64-bit lane interface |
| gearbox pause | 1 cycle in 32 (tready low) | PG074 |
| clock compensation | 8 blocks every 4992 cycles | PG074 |
| framing | one frame per transaction (header, 64 B, CRC trailer), no pairing | the paper's streamer sends one 64 B transaction at a time; Aurora's CRC option closes each frame |
| streamer throughput | 8.29 GB/s | derived from the paper (T3: streamer at 64 B width = 53.5 % of 15.5 GB/s MM) |
| streamer latency | 48.4 ns round trip, less what our own ReMAT + link logic already costs: 1 cycle (4.4 ns) left (that logic is 11 cycles, 44 ns, with the link's cut-throughs and the memory card's front; it was 13 before the front, which left nothing, 21 behind the framer's and deframer's register stages for 250 MHz, and 9 before them, which left 3) | derived from the paper (T1 R_DOV: a local 64 B streamer write is 65.8 ns against 17.4 ns memory-mapped); calibrated: the 11 cycles are measured on our sim (`bench latency`'s breakdown) |

Memories (`memory` axis, the memory card's `memory` CSR): `sram` the on-card SRAM, a line a cycle; `ddr4`
the paper's DDR4 SO-DIMM (MTA8ATF51264HZ-2G1) through LiteDRAM's controller and SDRAM PHY model, its
timings and their sources in litex/cores/memcard/ddr4.py; `hmc` an HMC terminated on the memory card: our
HMC host controller, one HMC link (`hmc_width` axis: full 16 lanes or half 8, at the point's lane rate)
and the HMC device model, its timings and their sources in litex/cores/hmc/ and phy/hmc_channel.py.

Nothing here was fitted to the paper's remote figures (526.6 ns, 8.1 GB/s): they are what the benchmarks
compare against.
"""

from dataclasses import dataclass

from monet.link import model as link_model
from monet.soc.facts import MEMORIES   # the memory card's `memory` CSR codes (memcard/codes.py)

AURORA_LATENCY_USER_CLK = 48
GEARBOX_PAUSE_EVERY     = 32
CC_BLOCKS, CC_PERIOD    = 8, 4992
STREAMER_GBPS           = 8.29
STREAMER_EXTRA_CYCLES   = 1

HMC_WIDTHS = {"full": 16, "half": 8}           # an HMC link's lanes
HMC_RATES_GBPS = (10.0, 12.5, 15.0)            # the lane rates an HMC takes (the spec's; the paper's T3 setup)


PLACEMENTS = ("remote", "local")   # behind our link (BFCT target 0), or the compute card's own (target 1)


def memory_refusal(memory, rate_gbps, lanes=8, placement="remote", hmc_width="full", hmc_native=0):
    """Why a point's memory settings cannot run together, or None. An HMC's lanes run at the link's rate
    (as in the paper's remote HMC), and an HMC takes 10, 12.5 or 15 Gb/s only. Native HMC (`hmc_native`)
    is an HMC link stretched over the fibers instead of our link: remote, HMC only, one fiber lane per HMC
    lane, so only half width (8 lanes) fits our 8 fibers."""
    if memory == "hmc" and rate_gbps not in HMC_RATES_GBPS:
        return (f"memory hmc at rate {rate_gbps:g} Gb/s is not accepted; an HMC's lanes run at "
                f"{', '.join(f'{r:g}' for r in HMC_RATES_GBPS)} Gb/s")
    if not hmc_native:
        return None
    if memory != "hmc":
        return f"hmc_native 1 with memory {memory} is not accepted; native HMC needs memory hmc"
    if placement != "remote":
        return f"hmc_native 1 with placement {placement} is not accepted; native HMC over fiber is remote"
    if lanes != HMC_WIDTHS[hmc_width]:
        return (f"hmc_native 1 at hmc_width {hmc_width} over {lanes} lanes is not accepted; native HMC needs a "
                f"fiber lane per HMC lane: hmc_width half with lanes 8")
    return None


@dataclass(frozen=True)
class Profile:
    name: str
    max_units: int
    pairing: bool
    issue_rate: int          # ReMAT pacing, requests a cycle in 1/65536 (0: unlimited)
    extra_cycles: int        # fixed round-trip latency beyond our logic (the streamer)
    aurora: bool             # Aurora latency and gaps instead of the bare PHY

    def link_ns(self, rate_gbps):
        """One-way latency of the link's PHY layers (everything but fiber), ns."""
        if self.aurora:
            return AURORA_LATENCY_USER_CLK * 66.0 / rate_gbps
        return link_model.phy_ns(rate_gbps)

    def block_ps(self, rate_gbps):
        """Average time of a 66-bit block, with the profile's gaps spread over the blocks."""
        ps = 66_000 / rate_gbps
        if self.aurora:
            ps /= (1 - 1 / GEARBOX_PAUSE_EVERY) * (1 - CC_BLOCKS / CC_PERIOD)
        return round(ps)

    def delay_cycles(self, distance_rt_m, rate_gbps):
        return link_model.delay_cycles(distance_rt_m, rate_gbps, self.link_ns(rate_gbps))

    def settings(self):
        return {"max_units": self.max_units, "pairing": int(self.pairing), "issue_rate": self.issue_rate,
                "extra_cycles": self.extra_cycles}


PROFILES = {
    "ours": Profile("ours", max_units=8, pairing=True, issue_rate=0, extra_cycles=0, aurora=False),
    "monet": Profile("monet", max_units=1, pairing=False,
                     issue_rate=round(link_model.lines_per_cycle(STREAMER_GBPS) * 65536),
                     extra_cycles=STREAMER_EXTRA_CYCLES, aurora=True),
}
