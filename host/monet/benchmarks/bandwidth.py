"""Sustained bandwidth from the benchmark block, link utilisation and latency under load (paper Figs 7, 9, 14)."""

import math

from monet.benchmarks import Benchmark, Param, Verdict, paper_check, register
from monet.link import model as link_model
from monet.report.paper import (HMC_QUADRANT_GBPS, PAPER_BANDWIDTH_GBPS, PAPER_HMC_LOCAL_FW_SHARE,
                                PAYLOAD_UTILISATION_TARGET, THESIS_HMC_LINK_GBPS)
from monet.report import table1
from monet.report.stats import histogram_percentile
from monet.report.tables import MEMORY_SERIES, figure, fmt, group, memory_label, op_style, paper_memory, print_table
from monet.sim.link_setup import configure_link, link_record, map_remote_windows, memory_service
from monet.soc.facts import NOMINAL_CLK_HZ, PBB_BUCKETS, REMOTE_TAGS, peak_GBps

# A bandwidth-vs-distance series: everything but the distance is the same (runs of other lengths or depths
# at one distance belong to other sweeps).
DISTANCE_SERIES = ("profile", *MEMORY_SERIES, "op", "pattern", "size", "lanes", "rate_gbps", "outstanding", "count")
# The share of its short-reach bandwidth below which a link over fiber counts as stopped by its loops (issue 13:
# where native HMC over fiber falls below 90 %).
DISTANCE_FLOOR = 0.9


DDR4_PEAK_GBPS = peak_GBps(NOMINAL_CLK_HZ)   # 16.0: DDR4-2000 at LiteDRAM's 4:1 (the part's own is 17.06)
# The paper's memory utilisation of an HMC: against one quadrant's 40 GB/s (4 vaults x 10 GB/s), what one
# link reaches (T4: 22.5 GB/s remote at half width is 56.25 %).
MEMORY_PEAK_GBPS = {"ddr4": DDR4_PEAK_GBPS, "hmc": HMC_QUADRANT_GBPS}

SIZES = (8, 16, 32, 64, 128)
OPS = ("read", "write", "mixed")
PBB_PORTS = ("remat", "hmc")   # the benchmark block on ReMAT's port, or on the HMC controller's block port
MIXED_READ_PERCENT = 53   # the best mix of 128 B reads and writes on an HMC link (thesis, Table 3.5)
MIXES = ("random", "even")   # a mix's reads: at random, or spread evenly (the ratio's running sum)


class PbbPortError(ValueError):
    """A point the benchmark block's HMC block port cannot run (the message names it and what would be)."""


def pbb_port_refusal(pbb_port, memory, placement, hmc_native, size):
    """Why a point cannot use `pbb_port`, or None. The HMC controller's block port moves 128 B blocks of the
    compute card's own HMC: memory hmc, placement local, not native, size 128."""
    if pbb_port == "remat":
        return None
    if pbb_port not in PBB_PORTS:
        return f"pbb_port {pbb_port!r} is not accepted; accepted: {', '.join(PBB_PORTS)}"
    needs = {"memory": (memory, "hmc"), "placement": (placement, "local"), "hmc_native": (hmc_native, 0),
             "size": (size, 128)}
    for key, (value, accepted) in needs.items():
        if value != accepted:
            return (f"pbb_port hmc with {key} {value} is not accepted; the HMC controller's block port moves "
                    f"128 B blocks of the local HMC: memory hmc, placement local, hmc_native 0, size 128")
    return None


def pbb_read_ratio(read_percent):
    """The benchmark block's read ratio (reads per 256 accesses) nearest to `read_percent` %."""
    return round(read_percent * 256 / 100)


def measure(target, op, outstanding, link, pattern="seq", count=20000, seed=1, check=False, size=64,
            cycles_per_line=64, read_percent=MIXED_READ_PERCENT, pbb_port="remat", mix="random"):
    """Sustained bandwidth of `count` accesses of `size` bytes from the benchmark block (ReMAT's second
    port) over LinkSettings `link`. Below 64 B an access is one masked line transaction; 128 B is two on
    consecutive lines. `op` mixed: each access a read with probability `read_percent` %, a write otherwise
    (both count); `mix` even spreads the reads evenly instead (reads and writes alternate at 50 %).
    `pbb_port` hmc: the block on the HMC controller's 128 B block port instead, each access one RD128 or
    WR128 (local HMC only; PbbPortError otherwise)."""
    refusal = pbb_port_refusal(pbb_port, link.memory, link.placement, link.hmc_native, size)
    if refusal:
        raise PbbPortError(refusal)
    direct = pbb_port == "hmc"
    lines_per_access = 2 if size == 128 else 1
    transactions_per_access = 1 if direct else lines_per_access
    configured = configure_link(target, link)
    info = target.fw.facts()
    windows = map_remote_windows(target, info, configured["bfct_target"])
    mapped = len(windows) * info["section_bytes"]
    span = 1 << (mapped.bit_length() - 1)   # the largest power of two inside the mapped windows
    # Histogram bucket width: the buckets below the last (which takes the overflow) must cover the worst
    # latency expected, the round trip plus every outstanding response queued behind the others on the link.
    bound = 2 * configured["delay"] + 32 + outstanding * link_model.serialization_cycles(10, link.lanes, link.rate_gbps)
    shift = max(0, math.ceil(math.log2(bound / (PBB_BUCKETS - 1))))
    # The firmware gives up on a run that exceeds this many cycles (a generous bound: 64 cycles a line).
    lines = count * lines_per_access
    budget = min(2**32 - 1, 1_000_000 + int(cycles_per_line * lines))
    run, memory_figures = memory_service(target, lambda: target.fw.pbb(
        op=op, ratio=pbb_read_ratio(read_percent) if op == "mixed" else None, mix=mix if op == "mixed" else None,
        pattern=pattern, addr=0, span=span,
        count=count * transactions_per_access, size=size, outstanding=outstanding, seed=seed, check=check,
        shift=shift, direct=1 if direct else None, timeout=budget, wait=max(300, lines // 100)))
    if run.get("timed_out"):
        raise RuntimeError(f"benchmark block stalled: {run['completed']} of {run['count']} transactions completed "
                           f"(CRC errors: compute {run['crc_errors_c']}, memory {run['crc_errors_m']})")
    payload = run["completed"] * (size if direct else min(size, link_model.LINE_BYTES))
    seconds = run["cycles"] * link_model.CLK_PS * 1e-12
    bw = payload / seconds / 1e9
    # The link figures are our link's: none where the run did not cross it (local memory, native HMC).
    over_link = link.placement == "remote" and not link.hmc_native
    capacity = link_model.payload_capacity_GBps(link.lanes, link.rate_gbps) if over_link else None
    # Cycles the data's direction was busy (a mix's data go both ways).
    data_busy = {"read": run["busy_b2a"], "write": run["busy_a2b"], "mixed": run["busy_a2b"] + run["busy_b2a"]}[op]
    line_bits = data_busy * link_model.CLK_PS * 1e-3 * link.lanes * link.rate_gbps
    hist = run["hist"]
    pct = {}
    for p in (50, 90, 99, 99.9):
        cycles = histogram_percentile(hist, shift, p, highest=run["lat_max"])
        pct[f"p{p:g}".replace(".", "_")] = None if cycles is None else link_model.cycles_to_ns(cycles)
    return {
        "op": op, "pattern": pattern, "size": size, "outstanding": outstanding,
        "read_percent": {"read": 100, "write": 0}.get(op, read_percent), "mix": mix if op == "mixed" else None,
        "distance_m": link.distance_m, "lanes": link.lanes,
        "rate_gbps": link.rate_gbps, "profile": link.profile,
        "memory": link.memory,
        "pbb_port": pbb_port,
        "transactions": run["completed"] // transactions_per_access,
        "line_transactions": run["completed"] * lines_per_access // transactions_per_access,
        "cycles": run["cycles"],
        "bandwidth_GBps": bw,
        "payload_capacity_GBps": capacity,
        "link_utilisation": bw / (2 * link.lanes * link.rate_gbps / 8) if over_link else None,
        "payload_utilisation": bw / capacity if over_link else None,
        "link_efficiency": payload * 8 / line_bits if line_bits and over_link else None,
        # The paper's memory utilisation: achieved against the memory's peak (DDR4 only: the SRAM has none).
        "memory_peak_GBps": MEMORY_PEAK_GBPS.get(link.memory),
        "memory_utilisation": bw / MEMORY_PEAK_GBPS[link.memory] if link.memory in MEMORY_PEAK_GBPS else None,
        **memory_figures,
        "errors": run["errors"], "bus_errors": run["bus_errors"],
        "latency_ns": {"min": link_model.cycles_to_ns(run["lat_min"]),
                       "mean": link_model.cycles_to_ns(run["lat_sum"] / max(run["completed"], 1)),
                       "max": link_model.cycles_to_ns(run["lat_max"]), **pct},
        "histogram": {"bucket_cycles": 1 << shift, "counts": hist, "overflow": hist[-1]},
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "link": link_record(configured),
    }


@register
class Bandwidth(Benchmark):
    """Sustained bandwidth from the benchmark block."""

    order = 20
    params = (
        Param("op", "read, write or mixed (reads and writes at random, --read-percent reads)", choices=OPS,
              default="read", required=True),
        Param("read_percent", "mixed: percent of the accesses that are reads (53: the thesis's best mix for 128 B "
              "on an HMC link)", low=1, high=99, integer=True, default=MIXED_READ_PERCENT, flag="--read-percent",
              only_with=("op", "mixed")),
        Param("mix", "mixed: random (each access a read with probability --read-percent) or even (reads spread "
              "evenly: reads and writes alternate at 50 %)", choices=MIXES, default="random",
              only_with=("op", "mixed")),
        Param("pattern", "seq or random addresses", choices=("seq", "random"), default="seq"),
        Param("size", "bytes per access: 8..64 one line transaction, 128 two", choices=SIZES, default=64),
        Param("outstanding", "transactions in flight (at most ReMAT's tags)", low=1, high=REMOTE_TAGS, integer=True,
              default=REMOTE_TAGS),
        Param("count", "transactions", low=1, high=2**31, integer=True, default=20000),
        Param("pbb_port", "remat (the benchmark block on ReMAT's port) or hmc (on the HMC controller's 128 B "
              "block port, RD128/WR128, as the paper's block measures its local HMC: placement local, size 128)",
              choices=PBB_PORTS, default="remat", flag="--pbb-port", only_with=("memory", "hmc")),
    )
    errors = (PbbPortError,)

    def refuse(self, values, targets):
        sizes = [s for s in values["size"] if s != 128]
        if "hmc" in values.get("pbb_port", ()) and sizes:
            return "pbb_port", f"hmc moves 128 B blocks: size {sizes[0]} is not accepted with it; accepted: 128"
        return None

    smallest = {"op": ["read"], "outstanding": [32], "count": [500]}

    def sim_cycles(self, point):
        capacity = link_model.payload_capacity_GBps(point["lanes"], point["rate_gbps"])
        return point["count"] * (2 if point["size"] == 128 else 1) / link_model.lines_per_cycle(capacity)

    def refuse_point(self, point):
        return pbb_port_refusal(point.get("pbb_port", "remat"), point["memory"], point["placement"],
                                point["hmc_native"], point["size"])

    def run(self, target, point, log=None):
        return measure(target, point["op"], point["outstanding"], self.link(point), pattern=point["pattern"],
                       count=point["count"], size=point["size"],
                       read_percent=point.get("read_percent", MIXED_READ_PERCENT), mix=point.get("mix", "random"),
                       pbb_port=point.get("pbb_port", "remat"))

    def verdicts(self, point, result):
        if point["memory"] == "hmc" and point["placement"] == "local" and point["hmc_width"] == "full":
            return hmc_link_verdicts(point, result["bandwidth_GBps"])
        if point["profile"] != "ours":
            return [paper_check("bandwidth (GB/s)", result["bandwidth_GBps"], PAPER_BANDWIDTH_GBPS[point["rate_gbps"]],
                                point["distance_m"] == 8 and point["lanes"] == 8 and point["size"] == 64,
                                "8 lanes at 8 m")]
        # The link's targets, on the SRAM (a line a cycle): with DDR4 the memory's own limits come first.
        # The target is one direction's: reads or writes alone (a mix moves data both ways).
        if point["size"] == 64 and point["lanes"] == 8 and point["rate_gbps"] == 15.0 and point["memory"] == "sram" \
                and point["op"] in ("read", "write") and result["payload_utilisation"] is not None:
            goal, util = PAYLOAD_UTILISATION_TARGET[point["pattern"]], result["payload_utilisation"]
            return [Verdict(f"payload utilisation {util:.1%} (target >= {goal:.0%} for 64 B {point['pattern']} "
                            f"{point['op']}s on our link at 8 x 15 Gb/s, SRAM)", util >= goal)]
        return []

    def show(self, point, result):
        print(f"{point['op']} bandwidth, {point['profile']} profile, {point['size']} B {point['pattern']}, "
              f"{point['outstanding']} outstanding, {point['distance_m']:g} m, {point['lanes']} x "
              f"{point['rate_gbps']:g} Gb/s ({result['transactions']} accesses)")
        rows = [[k, f"{result[k]:.3f}" if result[k] is not None else "-"] for k in
                ("bandwidth_GBps", "payload_capacity_GBps", "payload_utilisation", "link_utilisation",
                 "link_efficiency")]
        rows += [[f"latency {k} (ns)", f"{v:.1f}" if v is not None else "-"] for k, v in result["latency_ns"].items()]
        print_table(rows, ["figure", "value"])

    def paper_figures(self, records, profile):
        """The paper's bandwidth figures: the best 8 m, 64 B read or write at 8 lanes of each of its lane rates
        (DDR4 where it ran, else the SRAM), the link's utilisation at 15 Gb/s, and (our link) T1's remote HMC
        write latency, one 64 B line write at a time from the block, half-width HMC behind our link."""
        def at(rate):
            return paper_memory([r for r in records if r["point"]["benchmark"] == "bandwidth"
                                 and r["point"]["lanes"] == 8 and r["point"]["rate_gbps"] == rate
                                 and r["point"]["distance_m"] == 8 and r["point"]["profile"] == profile
                                 and r["point"].get("size", 64) == 64 and r["point"]["op"] != "mixed"])
        figures = {f"remote DDR4 bandwidth, 8 x {rate:g} Gb/s": max((r["result"]["bandwidth_GBps"] for r in at(rate)),
                                                                    default=None) for rate in PAPER_BANDWIDTH_GBPS}
        figures["link utilisation, 8 x 15 Gb/s"] = max((r["result"]["link_utilisation"] for r in at(15.0)),
                                                       default=None)
        figures["remote HMC write latency, 8 m"] = \
            table1.measured(records)[table1.REMOTE_HMC_LABEL]["write_ns"] if profile == "ours" else None
        return figures

    def sections(self, records, out):
        bw = [r for r in records if r["point"]["benchmark"] == self.name]
        if not bw:
            return []
        with figure(out / "bandwidth.png", "Sustained bandwidth vs link capacity (paper Fig 7)",
                    "lanes x lane rate (Gb/s)", "bandwidth (GB/s)") as ax:
            draw_bandwidth(ax, records)
        sections = [(
            "Bandwidth and utilisation (paper Figs 7, 9)",
            ["profile", "memory", "op", "pattern", "size (B)", "distance (m)", "lanes", "rate", "outstanding",
             "GB/s", "capacity GB/s", "payload util.", "link util.", "link eff.", "memory util."],
            [[r["point"]["profile"], memory_label(r["point"]), op_label(r["point"]), r["point"]["pattern"],
              r["point"]["size"], fmt(r["point"]["distance_m"], 0), r["point"]["lanes"],
              fmt(r["point"]["rate_gbps"]), r["point"]["outstanding"], fmt(r["result"]["bandwidth_GBps"], 2),
              fmt(r["result"]["payload_capacity_GBps"], 2), fmt(r["result"]["payload_utilisation"], 3),
              fmt(r["result"]["link_utilisation"], 3), fmt(r["result"]["link_efficiency"], 3),
              fmt(r["result"].get("memory_utilisation"), 3)] for r in bw],
            "bandwidth.png",
            "Link utilisation is the paper's: achieved / (2 x lanes x rate / 8). Payload utilisation is against "
            "one direction's capacity after 64b/66b; link efficiency is payload bits over line bits while the "
            "data direction was busy. Memory utilisation (DDR4) is the paper's too: achieved / the DRAM's peak "
            f"({DDR4_PEAK_GBPS:.1f} GB/s in the sim: one 64 B burst a cycle at LiteDRAM's 4:1; the "
            "paper's DDR4-2133 part peaks at 17.06).")]
        series = group(records, self.name, DISTANCE_SERIES)
        hmc = {k: rs for k, rs in series.items() if is_remote_hmc(dict(zip(DISTANCE_SERIES, k)))}
        series = {k: rs for k, rs in series.items() if k not in hmc}
        if any(len({r["point"]["distance_m"] for r in rs}) > 1 for rs in series.values()):
            with figure(out / "bandwidth_distance.png",
                        "Sustained bandwidth vs distance, 8 x 15 Gb/s (paper Fig 14 baseline)",
                        "round-trip distance (m)", "bandwidth (GB/s)") as ax:
                draw_bandwidth_distance(ax, series)
            sections.append(("Sustained bandwidth vs distance (paper Fig 14 baseline)", [], [],
                             "bandwidth_distance.png",
                             "Enough requests in flight keep the link busy at any distance; with too few, "
                             "bandwidth falls as the round trip grows (Little's law)."))
        sections += native_hmc_section(hmc, out)
        sections.append((
            "Latency percentiles under load (hardware histogram)",
            ["profile", "op", "pattern", "size (B)", "distance (m)", "lanes", "rate", "outstanding", "p50", "p90",
             "p99", "p99.9", "max (ns)"],
            [[r["point"]["profile"], r["point"]["op"], r["point"]["pattern"], r["point"]["size"],
              fmt(r["point"]["distance_m"], 0), r["point"]["lanes"], fmt(r["point"]["rate_gbps"]),
              r["point"]["outstanding"]] + [fmt(r["result"]["latency_ns"][k]) for k in ("p50", "p90", "p99",
                                                                                        "p99_9", "max")]
             for r in bw], None,
            "Percentiles are upper edges of histogram buckets (within one bucket of the true value); '-' where a "
            "percentile fell in the open last bucket."))
        return sections


def hmc_link_verdicts(point, gbps):
    """A local full-width HMC (one link, no link of ours) against the thesis's single-link figures at 10 Gb/s
    and the paper's share of the quadrant's 40 GB/s (T4)."""
    share, paper_share = gbps / HMC_QUADRANT_GBPS, PAPER_HMC_LOCAL_FW_SHARE[point["rate_gbps"]]
    return [paper_check(f"HMC link {point['op']} bandwidth (GB/s)", gbps, THESIS_HMC_LINK_GBPS[point["op"]],
                        point["rate_gbps"] == 10.0 and point["pattern"] == "seq",
                        "16 lanes at 10 Gb/s, linear addresses (Schmidt's thesis)"),
            paper_check(f"share of the quadrant's {HMC_QUADRANT_GBPS:g} GB/s", share, paper_share,
                        point["op"] == "mixed", "the best read/write mix (T4)")]


def op_label(point):
    """read, write, or mixed with its share of reads (and "even" where they were spread evenly)."""
    if point["op"] == "mixed":
        even = ", even" if point.get("mix") == "even" else ""
        return f"mixed {point.get('read_percent', MIXED_READ_PERCENT)} % reads{even}"
    return point["op"]


def is_remote_hmc(point):
    return point["memory"] == "hmc" and point["placement"] == "remote"


def best_by_distance(records):
    """{distance: the best bandwidth measured there}."""
    best = {}
    for r in records:
        d = r["point"]["distance_m"]
        best[d] = max(best.get(d, 0.0), r["result"]["bandwidth_GBps"])
    return dict(sorted(best.items()))


def fall_distance(best, floor=DISTANCE_FLOOR):
    """Where a bandwidth-vs-distance series ({distance: GB/s}) first falls below `floor` x its bandwidth at the
    shortest distance: {reference_GBps, threshold_GBps, last_above_m, first_below_m, at_m} with `at_m`
    interpolated linearly between the two measured distances; first_below_m and at_m are None if it never
    falls within the distances measured."""
    distances = sorted(best)
    reference = best[distances[0]]
    threshold = floor * reference
    fall = {"reference_GBps": reference, "threshold_GBps": threshold, "last_above_m": distances[0],
            "first_below_m": None, "at_m": None}
    for near, far in zip(distances, distances[1:]):
        if best[far] < threshold:
            share = (best[near] - threshold) / (best[near] - best[far])
            fall.update(last_above_m=near, first_below_m=far, at_m=near + share * (far - near))
            break
        fall["last_above_m"] = far
    return fall


def native_hmc_section(series, out):
    """Native HMC over fiber beside the HMC terminated on the memory card behind our link: bandwidth against
    distance, and where each falls below DISTANCE_FLOOR of its short-reach bandwidth."""
    curves = {k: best_by_distance(rs) for k, rs in series.items()}
    curves = {k: c for k, c in curves.items() if len(c) > 1}
    if not curves:
        return []
    rows = []
    with figure(out / "hmc_native_distance.png", "Remote HMC over fiber: native HMC link vs terminated behind ours",
                "round-trip distance (m)", "bandwidth (GB/s)") as ax:
        for key, best in sorted(curves.items()):
            p = dict(zip(DISTANCE_SERIES, key))
            fall = fall_distance(best)
            link = "native HMC" if p["hmc_native"] else "terminated (our link)"
            label = f"{link}: {p['op']} {p['size']} B, HMC {p['hmc_width']}, {p['lanes']}x{p['rate_gbps']:g}G"
            xs = list(best)
            line, = ax.plot(xs, [best[x] for x in xs], op_style(p["op"], "-" if p["hmc_native"] else ":"), label=label)
            if fall["at_m"] is not None:
                ax.plot([fall["at_m"]], [fall["threshold_GBps"]], "v", color=line.get_color(), markersize=9,
                        label=f"{link} {p['op']} below {DISTANCE_FLOOR:.0%} at {fall['at_m']:.0f} m")
            rows.append([link, p["op"], p["size"], p["hmc_width"], f"{p['lanes']} x {p['rate_gbps']:g}",
                         fmt(fall["reference_GBps"], 2), f"{xs[0]:g}-{xs[-1]:g}",
                         fmt(fall["at_m"], 0) if fall["at_m"] is not None else f"not within {xs[-1]:g}",
                         f"{fall['last_above_m']:g}-{fall['first_below_m']:g}" if fall["at_m"] is not None else "-",
                         fmt(best[xs[-1]] / fall["reference_GBps"], 3)])
    return [("Native HMC over fiber vs terminated (bandwidth vs distance)",
             ["link", "op", "size (B)", "HMC width", "lanes x rate", "GB/s at shortest", "distances (m)",
              f"below {DISTANCE_FLOOR:.0%} at (m)", "measured between (m)", "share at longest"], rows,
             "hmc_native_distance.png",
             f"Native: the HMC link itself stretched over the fiber (MONet's native HMC), so its retry pointers "
             f"and its host's tokens (255 FLITs) must cover the round trip; terminated: the HMC link stays on the "
             f"memory card and our link crosses the fiber. 'Below {DISTANCE_FLOOR:.0%} at' interpolates "
             f"linearly between the last distance at or above {DISTANCE_FLOOR:.0%} of the shortest distance's "
             f"bandwidth and the first below it.")]


def draw_bandwidth(ax, records):
    keys = ("profile", *MEMORY_SERIES, "op", "pattern", "size", "distance_m")
    for key, rs in sorted(group(records, "bandwidth", keys).items()):
        p = dict(zip(keys, key))
        best = {}
        for r in rs:
            x = r["point"]["lanes"] * r["point"]["rate_gbps"]
            best[x] = max(best.get(x, 0.0), r["result"]["bandwidth_GBps"])
        if len(best) < 2:
            continue
        xs = sorted(best)
        ax.plot(xs, [best[x] for x in xs], op_style(p["op"]),
                label=f"{p['profile']} {memory_label(p)} {p['op']} {p['pattern']} "
                f"{p['size']} B {p['distance_m']:g} m")
    caps = sorted({r["point"]["lanes"] * r["point"]["rate_gbps"] for r in records
                   if r["point"]["benchmark"] == "bandwidth"})
    if caps:
        # lanes x rate is what is plotted, so one lane at that aggregate rate gives the same capacity.
        ax.plot(caps, [link_model.payload_capacity_GBps(1, c) for c in caps], "k:_", markersize=14,
                label="payload capacity (one way)")
    rates = sorted(PAPER_BANDWIDTH_GBPS)
    ax.plot([8 * r for r in rates], [PAPER_BANDWIDTH_GBPS[r] for r in rates], "kx",
            label="paper: remote DDR4, 8 lanes")


def draw_bandwidth_distance(ax, series):
    for key, rs in sorted(series.items()):
        p = dict(zip(DISTANCE_SERIES, key))
        best = best_by_distance(rs)
        if len(best) < 2:
            continue
        xs = list(best)
        ax.plot(xs, [best[x] for x in xs], op_style(p["op"]),
                label=f"{p['profile']} {memory_label(p)} {p['op']} {p['pattern']} "
                f"{p['size']} B {p['lanes']}x{p['rate_gbps']:g}G")
    ax.plot([8], [PAPER_BANDWIDTH_GBPS[15.0]], "kx", label="paper: remote DDR4, 8 x 15 Gb/s, 8 m")
