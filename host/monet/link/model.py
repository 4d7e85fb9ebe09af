"""Physical model of the link: lane rate, PHY and fiber latencies, and their cost in cycles.

Sources of the defaults:
- 64b/66b: a 64-bit block takes 66 line bits, so one block lasts 66 / rate ns.
- PHY: Xilinx PG056, GTHE4 64-bit (64b/66b) fixed delay: TX 176 UI, RX 125.5 UI, plus 1 UI per Gb/s of
  line rate above 2 Gb/s. UI = 1 / line rate.
- Fiber: 4.9 ns per metre one way (single-mode fiber, group index 1.468). Distances on the CLI are round
  trip, as in the MONet paper: 8 m round trip is 4 m of fiber each way.
"""

import math

from monet.soc.facts import BEAT_BLOCKS, CHANNEL_MAX_DELAY, LINE_BYTES, MAX_LANES, NOMINAL_CLK_HZ, STAGE_SEGMENTS

LANES           = tuple(1 << i for i in range(MAX_LANES.bit_length()))   # 1, 2, 4, 8
RATES_GBPS      = (10.0, 12.5, 15.0, 25.0)
FIBER_NS_PER_M  = 4.9
PHY_TX_UI       = 176.0
PHY_RX_UI       = 125.5
CLK_PS          = 10**12 // NOMINAL_CLK_HZ
MAX_DELAY       = CHANNEL_MAX_DELAY   # cycles one way, bounded by the channel's delay lines.


def block_ps(rate_gbps):
    return round(66_000 / rate_gbps)


def payload_capacity_GBps(lanes, rate_gbps):
    """Payload the lanes carry one way after 64b/66b coding, GB/s."""
    return lanes * rate_gbps * 64 / 66 / 8


def phy_ns(rate_gbps, tx_ui=PHY_TX_UI, rx_ui=PHY_RX_UI):
    """One-way PHY latency (TX + RX) at a lane rate."""
    ui_ns = 1.0 / rate_gbps
    return (tx_ui + rx_ui + max(rate_gbps - 2.0, 0.0)) * ui_ns


def fiber_ns(distance_rt_m):
    """One-way fiber latency for a round-trip distance."""
    return FIBER_NS_PER_M * distance_rt_m / 2.0


def delay_cycles(distance_rt_m, rate_gbps, link_ns=None):
    """One-way channel delay (PHY + fiber) in whole cycles, as programmed in the channel: rounded up, so that
    the modelled PHY is never faster than its data sheet (`link_ns`: another profile's one-way PHY-layer
    latency instead of PG056's). The rounding to 6 places keeps an exact multiple of a cycle at its count."""
    one_way = phy_ns(rate_gbps) if link_ns is None else link_ns
    return math.ceil(round((one_way + fiber_ns(distance_rt_m)) * 1000 / CLK_PS, 6))


def max_distance_m(rate_gbps):
    """Largest round-trip distance the channel's delay lines hold at this rate."""
    return (MAX_DELAY * CLK_PS / 1000 - phy_ns(rate_gbps)) * 2 / FIBER_NS_PER_M


def serialization_cycles(blocks, lanes, rate_gbps):
    """Cycles a frame of `blocks` takes on the wire: beats of 8 blocks, ceil(k/N) block times each."""
    ps, left = 0, blocks
    while left > 0:
        k = min(left, BEAT_BLOCKS)
        ps += math.ceil(k / lanes) * block_ps(rate_gbps)
        left -= k
    return max(1, math.ceil(ps / CLK_PS))


def lines_per_cycle(bandwidth_GBps):
    """64 B lines a system cycle at `bandwidth_GBps` of payload."""
    return bandwidth_GBps * 1e9 / LINE_BYTES / NOMINAL_CLK_HZ


def cycles_to_ns(cycles):
    return cycles * CLK_PS / 1000.0


def read_breakdown(hw_cycles, distance_rt_m, lanes, rate_gbps, memory_cycles=1, link_ns=None):
    """Splits a measured 64 B remote read (ReMAT port to port, cycles) into its parts, in ns.

    fiber and PHY come from the model (`link_ns`: one-way PHY-layer latency of another profile);
    `channel_rounding` is what rounding the one-way delay up to whole cycles adds; serialization is a
    2-block request plus a 10-block response; memory is `memory_cycles`, the memory card's measured mean
    service time plus its programmed extra latency (a profile's streamer); ReMAT + link logic is the rest.
    """
    one_way = phy_ns(rate_gbps) if link_ns is None else link_ns
    delay = delay_cycles(distance_rt_m, rate_gbps, link_ns)
    fiber = 2 * fiber_ns(distance_rt_m)
    phy = 2 * one_way
    rounding = cycles_to_ns(2 * delay) - fiber - phy
    ser_cycles = serialization_cycles(2, lanes, rate_gbps) + serialization_cycles(10, lanes, rate_gbps)
    mem_cycles = memory_cycles
    logic_cycles = hw_cycles - 2 * delay - ser_cycles - mem_cycles
    return {
        "total_ns": cycles_to_ns(hw_cycles),
        "fiber_ns": fiber,
        "phy_ns": phy,
        "channel_rounding_ns": rounding,
        "serialization_ns": cycles_to_ns(ser_cycles),
        "memory_ns": cycles_to_ns(mem_cycles),
        "remat_link_logic_ns": cycles_to_ns(logic_cycles),
        "remat_link_logic_cycles": logic_cycles,
    }


def linkless_breakdown(hw_cycles, memory_cycles, fiber_ns=0.0):
    """read_breakdown's parts for an access that does not take our link (a local memory, or native HMC whose
    own link carries `fiber_ns` of fiber, both ways, inside the memory's measured `memory_cycles`)."""
    logic_cycles = hw_cycles - memory_cycles
    return {
        "total_ns": cycles_to_ns(hw_cycles),
        "fiber_ns": fiber_ns,
        "phy_ns": 0.0,
        "channel_rounding_ns": 0.0,
        "serialization_ns": 0.0,
        "memory_ns": cycles_to_ns(memory_cycles) - fiber_ns,
        "remat_link_logic_ns": cycles_to_ns(logic_cycles),
        "remat_link_logic_cycles": logic_cycles,
    }


def breakdown_by_layer(breakdown):
    """A read_breakdown in four shares that add up to its total, ns: `memory` (the memory's service time),
    `link` (ReMAT, link logic and serialization), `phy` (the PHYs, with the channel's rounding to whole
    cycles) and `fiber`."""
    return {
        "memory": breakdown["memory_ns"],
        "link": breakdown["remat_link_logic_ns"] + breakdown["serialization_ns"],
        "phy": breakdown["phy_ns"] + breakdown["channel_rounding_ns"],
        "fiber": breakdown["fiber_ns"],
    }


def measured_stages(timers, latency_mean_cycles, memory_cycles):
    """The stage timers' sums (the firmware's `stages` answer: per card, summed cycles per segment over the
    accesses that travelled alone, in STAGE_SEGMENTS' order) as the stages of one such access, in the order
    it passes them, cycles and ns. Each card times its own points on its own clock: the wire both ways (PHY, fiber, the first beat's
    serialization, both directions) is the compute card's lanes-to-lanes time less the memory card's
    turnaround, and the memory card's stage is split into its memory (`memory_cycles`: the card's measured
    service time and programmed extra latency) and its front. `unaccounted_cycles` is the ReMAT latency's mean
    less the stages' sum (0 when every access was timed alone). None without a timed access."""
    def means(card):
        """A card's mean cycles per segment, by name; None if it timed nothing (or is not in the answer)."""
        timer = timers.get(card)
        if not timer or not timer["count"]:
            return None
        return {segment: total / timer["count"] for segment, total in zip(STAGE_SEGMENTS[card], timer["sums"])}
    compute, memory = means("compute"), means("memory")
    if compute is None:
        return None
    stages = {"remat_out": compute["request_to_link_tx"], "compute_link_tx": compute["link_tx_to_lanes_tx"]}
    beyond = compute["lanes_tx_to_lanes_rx"]
    if memory is not None:
        turnaround = {"memory_link_rx": memory["lanes_rx_to_link_rx"],
                      "memory_card_front": memory["link_rx_to_link_tx"] - memory_cycles, "memory": memory_cycles,
                      "memory_link_tx": memory["link_tx_to_lanes_tx"]}
        stages["wire_both_ways"] = beyond - sum(turnaround.values())
        stages.update(turnaround)
    else:   # the memory card's timer is on another board
        stages["beyond_the_card"] = beyond
    stages["compute_link_rx"] = compute["lanes_rx_to_link_rx"]
    stages["remat_back"] = compute["link_rx_to_answer"]
    total = sum(stages.values())
    return {
        "timed": timers["compute"]["count"],
        "spoiled": timers["compute"]["spoiled"],
        "memory_timed": timers["memory"]["count"] if "memory" in timers else None,
        "cycles": stages,
        "ns": {k: cycles_to_ns(v) for k, v in stages.items()},
        "total_cycles": total,
        "unaccounted_cycles": latency_mean_cycles - total,
    }
