"""Power and energy per bit of a remote-memory configuration: the MONet paper's Table 2 (s.5.B, 8 lanes, 8 m)
per component, scaled to a lane count, and its net energy pJ/bit = P / (GB/s x 8) fed with the bandwidth
our campaigns measured.

Sources and assumptions:
- Watts per component, memory type and lane rate are the paper's Table 2 (8 lanes; the reference brief's T5).
  The table's achieved bandwidth (PBB, 8 m) and pJ/bit are kept beside them so the formula is checked against
  every entry (within 1 %; the paper's own arithmetic is rounded).
- Lane count: the per-lane parts (the electrical transceivers at both ends, the opto-electronic transceivers
  and the optical switch's ports) scale with lanes / 8; everything else (ARM cores, ReMAT on each card, the
  DDR4 I/O, the memory itself) is fixed. The paper gives no table for other lane counts: this split is ours.
- Lane rates are the table's (10, 12.5, 15 Gb/s): the transceiver power of other rates is not stated.
- Measured bandwidth (`bandwidth_from_records`): the best remote bandwidth point of a memory at the lane
  count and rate, 64 B accesses, at the distance nearest 8 m (Table 2's); HMC points of the half-width HMC
  (the paper's Table 2 HMC is its HW configuration: 22.6 GB/s at 15 Gb/s, T4).

Input (YAML, every key optional):

    memories: [ddr4, hmc]      # Table 2's memory types
    rates_gbps: [10, 12.5, 15] # Table 2's lane rates
    lanes: [8]                 # 1 to 8
    bandwidth_GBps:            # bandwidth to price instead of the paper's (or a results store's), per memory and rate
      ddr4: {15: 8.4}
"""

from monet.model import ModelInputError

TABLE2_LANES = 8
# Watts per component at 10 / 12.5 / 15 Gb/s, 8 lanes, 8 m (MONet Table 2).
TABLE2_WATTS = {
    "ddr4": {
        "ARM 4-core": (2.6, 2.6, 2.6),
        "CPU ReMAT": (1.98, 1.98, 1.98),
        "MEM ReMAT": (1.83, 1.83, 1.83),
        "DDR4 I/O": (0.58, 0.58, 0.58),
        "Memory": (6.6, 6.6, 6.6),
        "CPU (E) transceiver": (2.3, 2.7, 3.0),
        "OE transceiver": (6.0, 6.8, 7.2),
        "Optical switch": (1.6, 1.6, 1.6),
        "MEM (E) transceiver": (2.5, 2.8, 3.1),
    },
    "hmc": {
        "ARM 4-core": (2.65, 2.65, 2.65),
        "CPU ReMAT": (2.6, 2.85, 3.15),
        "MEM ReMAT": (0.0, 0.0, 0.0),
        "DDR4 I/O": (0.0, 0.0, 0.0),
        "Memory": (11.45, 11.45, 11.45),
        "CPU (E) transceiver": (1.8, 2.1, 2.3),
        "OE transceiver": (6.0, 6.8, 7.2),
        "Optical switch": (1.6, 1.6, 1.6),
        "MEM (E) transceiver": (0.0, 0.0, 0.0),
    },
}
TABLE2_RATES_GBPS = (10.0, 12.5, 15.0)
# Table 2's totals (W), achieved bandwidth (GB/s) and net energy (pJ/bit) as printed.
TABLE2_TOTAL_W = {"ddr4": (26.0, 27.5, 28.5), "hmc": (26.1, 27.4, 28.4)}
TABLE2_ACHIEVED_GBPS = {"ddr4": (6.8, 7.6, 8.1), "hmc": (14.5, 18.1, 22.6)}
TABLE2_PJ_PER_BIT = {"ddr4": (477.3, 452.4, 440.5), "hmc": (225.3, 189.4, 156.9)}
# The parts with one instance per lane (scaled by lanes / 8).
PER_LANE_COMPONENTS = ("CPU (E) transceiver", "OE transceiver", "Optical switch", "MEM (E) transceiver")
MEMORIES = tuple(TABLE2_WATTS)
MAX_LANES = 8


def _rate_index(rate_gbps, where="rates_gbps"):
    try:
        return TABLE2_RATES_GBPS.index(float(rate_gbps))
    except (TypeError, ValueError):
        raise ModelInputError(f"{where}: {rate_gbps!r} is not a lane rate of the paper's Table 2; give one of "
                              f"{', '.join(f'{r:g}' for r in TABLE2_RATES_GBPS)} (Gb/s)") from None


def _check_memory(memory, where="memories"):
    if memory not in TABLE2_WATTS:
        raise ModelInputError(f"{where}: {memory!r} is not a memory of the paper's Table 2; give one of "
                              f"{', '.join(MEMORIES)}")


def _check_lanes(lanes):
    if not isinstance(lanes, int) or isinstance(lanes, bool) or not 1 <= lanes <= MAX_LANES:
        raise ModelInputError(f"lanes: {lanes!r} is not a lane count; give an integer from 1 to {MAX_LANES}")


def components_w(memory, rate_gbps, lanes=TABLE2_LANES):
    """Watts per component of `memory` at `rate_gbps` with `lanes` lanes."""
    _check_memory(memory)
    _check_lanes(lanes)
    i = _rate_index(rate_gbps)
    return {name: watts[i] * (lanes / TABLE2_LANES if name in PER_LANE_COMPONENTS else 1.0)
            for name, watts in TABLE2_WATTS[memory].items()}


def pj_per_bit(watts, bandwidth_gbps):
    """Net energy per bit moved: W / (GB/s x 8 bit/B) is nJ/bit; x 1000 for pJ."""
    if not bandwidth_gbps or bandwidth_gbps <= 0:
        raise ModelInputError(f"bandwidth: {bandwidth_gbps!r} GB/s cannot be priced; give a bandwidth > 0")
    return 1000.0 * watts / (bandwidth_gbps * 8.0)


def bandwidth_from_records(records, memory, lanes, rate_gbps, distance_m=8):
    """The best measured remote bandwidth (GB/s) of `memory` at `lanes` x `rate_gbps`, 64 B accesses, at the
    stored distance nearest `distance_m`; None when the store has no such point."""
    from monet.report.tables import axis
    points = [r for r in records if r["point"].get("benchmark") == "bandwidth"
              and axis(r["point"], "memory") == memory and axis(r["point"], "placement") == "remote"
              and axis(r["point"], "profile") == "ours" and axis(r["point"], "size") == 64
              and r["point"].get("op") in ("read", "write") and r["point"].get("lanes") == lanes
              and float(r["point"].get("rate_gbps", 0)) == float(rate_gbps)
              and (memory != "hmc" or axis(r["point"], "hmc_width") == "half")]
    if not points:
        return None
    nearest = min({r["point"]["distance_m"] for r in points}, key=lambda d: abs(d - distance_m))
    return max(r["result"]["bandwidth_GBps"] for r in points if r["point"]["distance_m"] == nearest)


def _list(config, key, default):
    value = config.get(key, list(default))
    if not isinstance(value, list) or not value:
        raise ModelInputError(f"{key}: {value!r} is not a list; give a YAML list such as {list(default)}")
    return value


def run(config, progress=None, records=None):
    """Table 2 rebuilt per memory, lane count and rate: the components, the total, and pJ/bit at the paper's
    bandwidth and at ours (`config`'s `bandwidth_GBps`, else `records` from a results store)."""
    config = dict(config or {})
    unknown = set(config) - {"memories", "rates_gbps", "lanes", "bandwidth_GBps"}
    if unknown:
        raise ModelInputError(f"{sorted(unknown)[0]}: not a power model input; give memories, rates_gbps, lanes, "
                              "bandwidth_GBps")
    memories, rates, lane_counts = (_list(config, "memories", MEMORIES), _list(config, "rates_gbps", TABLE2_RATES_GBPS),
                                    _list(config, "lanes", [TABLE2_LANES]))
    given = config.get("bandwidth_GBps") or {}
    if not isinstance(given, dict):
        raise ModelInputError(f"bandwidth_GBps: {given!r} is not a mapping; give e.g. {{ddr4: {{15: 8.4}}}}")
    for memory, by_rate in given.items():
        _check_memory(memory, "bandwidth_GBps")
        if not isinstance(by_rate, dict):
            raise ModelInputError(f"bandwidth_GBps.{memory}: {by_rate!r} is not a mapping of lane rate to GB/s")
        for rate, gbps in by_rate.items():
            _rate_index(rate, f"bandwidth_GBps.{memory}")
            if not isinstance(gbps, (int, float)) or gbps <= 0:
                raise ModelInputError(f"bandwidth_GBps.{memory}.{rate}: {gbps!r} is not a bandwidth; give GB/s > 0")
    rows = []
    cases = [(m, n, r) for m in memories for n in lane_counts for r in rates]
    for done, (memory, lanes, rate) in enumerate(cases):
        parts = components_w(memory, rate, lanes)
        total = sum(parts.values())
        i = _rate_index(rate)
        paper_gbps = TABLE2_ACHIEVED_GBPS[memory][i] if lanes == TABLE2_LANES else None
        ours = {float(k): v for k, v in given.get(memory, {}).items()}.get(float(rate))
        source = "input" if ours is not None else None
        if ours is None and records is not None:
            ours = bandwidth_from_records(records, memory, lanes, rate)
            source = "results" if ours is not None else None
        rows.append({
            "memory": memory, "lanes": lanes, "rate_gbps": float(rate), "components_w": parts, "total_w": total,
            "paper_total_w": TABLE2_TOTAL_W[memory][i] if lanes == TABLE2_LANES else None,
            "paper_GBps": paper_gbps,
            "paper_pj_per_bit": TABLE2_PJ_PER_BIT[memory][i] if lanes == TABLE2_LANES else None,
            "pj_per_bit_paper_bandwidth": pj_per_bit(total, paper_gbps) if paper_gbps else None,
            "measured_GBps": ours, "measured_source": source,
            "pj_per_bit_measured": pj_per_bit(total, ours) if ours else None,
        })
        if progress:
            progress(done + 1, len(cases), f"{memory} {lanes} x {rate:g} Gb/s")
    return {"model": "power", "inputs": config, "rows": rows,
            "source": "MONet Table 2 (8 lanes, 8 m); per-lane parts scaled by lanes / 8"}


def sections(result, out):
    """Report sections: Table 2 rebuilt (the paper's watts and bandwidth beside ours) and a plot of pJ/bit."""
    from monet.report.tables import fmt, figure
    rows = result["rows"]
    with figure(out / "power.png", "Net energy per bit (paper Table 2)", "memory, lanes x lane rate",
                "pJ/bit") as ax:
        labels = [f"{r['memory']} {r['lanes']}x{r['rate_gbps']:g}" for r in rows]
        xs = range(len(rows))
        ax.bar([x - 0.2 for x in xs], [r["paper_pj_per_bit"] or 0 for r in rows], width=0.4, label="paper")
        ax.bar([x + 0.2 for x in xs], [r["pj_per_bit_measured"] or 0 for r in rows], width=0.4,
               label="at our measured bandwidth")
        ax.set_xticks(list(xs), labels, rotation=30, fontsize=7)
    table = [[r["memory"], r["lanes"], fmt(r["rate_gbps"]), fmt(r["total_w"], 2), fmt(r["paper_total_w"], 1),
              fmt(r["paper_GBps"], 1), fmt(r["paper_pj_per_bit"], 1), fmt(r["pj_per_bit_paper_bandwidth"], 1),
              fmt(r["measured_GBps"], 2), r["measured_source"] or "-", fmt(r["pj_per_bit_measured"], 1)]
             for r in rows]
    return [("Power and energy per bit (paper Table 2)",
             ["memory", "lanes", "Gb/s", "W (model)", "W (paper)", "GB/s (paper)", "pJ/bit (paper)",
              "pJ/bit (model, paper GB/s)", "GB/s (ours)", "ours from", "pJ/bit (ours)"], table, "power.png",
             "Watts per component are the paper's Table 2 (8 lanes, 8 m); at other lane counts the per-lane parts "
             "(electrical and opto-electronic transceivers, switch ports) scale by lanes / 8. pJ/bit = W / (GB/s x "
             "8) x 1000, with the paper's achieved bandwidth (a check of the formula) and with ours: a results "
             "store's best remote 64 B bandwidth at the distance nearest 8 m (HMC: half width, as Table 2's), or "
             "a bandwidth given in the model's input.")]


def summary(result):
    """Table 2 as the terminal shows it, with the formula's check against the paper's pJ/bit."""
    from monet.report.tables import fmt, table_lines
    rows = result["rows"]
    checked = [r for r in rows if r["paper_pj_per_bit"]]
    worst = max((abs(r["pj_per_bit_paper_bandwidth"] / r["paper_pj_per_bit"] - 1) for r in checked), default=None)
    lines = table_lines([[r["memory"], r["lanes"], fmt(r["rate_gbps"]), fmt(r["total_w"], 2), fmt(r["paper_GBps"], 1),
                          fmt(r["pj_per_bit_paper_bandwidth"], 1), fmt(r["paper_pj_per_bit"], 1),
                          fmt(r["measured_GBps"], 2), fmt(r["pj_per_bit_measured"], 1)] for r in rows],
                        ["memory", "lanes", "Gb/s", "W", "paper GB/s", "pJ/bit", "paper pJ/bit", "our GB/s",
                         "our pJ/bit"])
    if worst is not None:
        lines.append(f"Table 2 from its inputs: largest pJ/bit deviation {100 * worst:.2f} % "
                     f"({'PASS' if worst <= 0.01 else 'FAIL'}: within 1 %)")
    return lines
