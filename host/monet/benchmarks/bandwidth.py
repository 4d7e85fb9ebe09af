"""Sustained bandwidth from the benchmark block, link utilisation and latency under load (paper Figs 7, 9, 14)."""

from monet import bench, link_model
from monet.benchmarks import Benchmark, Param, Verdict, paper_check, register
from monet.paper import PAPER_BANDWIDTH_GBPS, PAYLOAD_UTILISATION_TARGET
from monet.soc.sim import REMOTE_TAGS
from monet.tables import figure, fmt, group, print_table

# A bandwidth-vs-distance series: everything but the distance is the same (runs of other lengths or depths
# at one distance belong to other sweeps).
DISTANCE_SERIES = ("profile", "op", "pattern", "size", "lanes", "rate_gbps", "outstanding", "count")


@register
class Bandwidth(Benchmark):
    """Sustained bandwidth from the benchmark block."""

    order = 20
    params = (
        Param("op", "read, write or mixed (reads and writes at random, --read-percent reads)", choices=bench.OPS,
              default="read", required=True),
        Param("read_percent", "mixed: percent of the accesses that are reads (53: the thesis's best mix for 128 B "
              "on an HMC link)", low=1, high=99, integer=True, default=bench.MIXED_READ_PERCENT, flag="--read-percent",
              only_with=("op", "mixed")),
        Param("pattern", "seq or random addresses", choices=("seq", "random"), default="seq"),
        Param("size", "bytes per access: 8..64 one line transaction, 128 two", choices=bench.SIZES, default=64),
        Param("outstanding", "transactions in flight (at most ReMAT's tags)", low=1, high=REMOTE_TAGS, integer=True,
              default=REMOTE_TAGS),
        Param("count", "transactions", low=1, high=2**31, integer=True, default=20000),
    )

    def run(self, target, point, log=None):
        return bench.bandwidth(target, point["op"], point["outstanding"], point["distance_m"], point["lanes"],
                               point["rate_gbps"], pattern=point["pattern"], count=point["count"],
                               size=point["size"], profile=point["profile"], memory=point["memory"],
                               hmc_width=point["hmc_width"],
                               placement=point["placement"], hmc_native=point["hmc_native"],
                               read_percent=point.get("read_percent", bench.MIXED_READ_PERCENT))

    def verdicts(self, point, result):
        if point["profile"] != "ours":
            return [paper_check("bandwidth (GB/s)", result["bandwidth_GBps"], PAPER_BANDWIDTH_GBPS[point["rate_gbps"]],
                                point["distance_m"] == 8 and point["lanes"] == 8 and point["size"] == 64,
                                "8 lanes at 8 m")]
        # The link's targets, on the SRAM (a line a cycle): with DDR4 the memory's own limits come first.
        if point["size"] == 64 and point["lanes"] == 8 and point["rate_gbps"] == 15.0 and point["memory"] == "sram":
            goal, util = PAYLOAD_UTILISATION_TARGET[point["pattern"]], result["payload_utilisation"]
            return [Verdict(f"payload utilisation {util:.1%} (target >= {goal:.0%} for 64 B {point['pattern']})",
                            util >= goal)]
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
            [[r["point"]["profile"], r["point"]["memory"], r["point"]["op"], r["point"]["pattern"],
              r["point"]["size"], fmt(r["point"]["distance_m"], 0), r["point"]["lanes"],
              fmt(r["point"]["rate_gbps"]), r["point"]["outstanding"], fmt(r["result"]["bandwidth_GBps"], 2),
              fmt(r["result"]["payload_capacity_GBps"], 2), fmt(r["result"]["payload_utilisation"], 3),
              fmt(r["result"]["link_utilisation"], 3), fmt(r["result"]["link_efficiency"], 3),
              fmt(r["result"].get("memory_utilisation"), 3)] for r in bw],
            "bandwidth.png",
            "Link utilisation is the paper's: achieved / (2 x lanes x rate / 8). Payload utilisation is against "
            "one direction's capacity after 64b/66b; link efficiency is payload bits over line bits while the "
            "data direction was busy. Memory utilisation (DDR4) is the paper's too: achieved / the DRAM's peak "
            f"({bench.DDR4_PEAK_GBPS:.1f} GB/s in the sim: one 64 B burst a cycle at LiteDRAM's 4:1; the "
            "paper's DDR4-2133 part peaks at 17.06).")]
        series = group(records, self.name, DISTANCE_SERIES)
        if any(len({r["point"]["distance_m"] for r in rs}) > 1 for rs in series.values()):
            with figure(out / "bandwidth_distance.png",
                        "Sustained bandwidth vs distance, 8 x 15 Gb/s (paper Fig 14 baseline)",
                        "round-trip distance (m)", "bandwidth (GB/s)") as ax:
                draw_bandwidth_distance(ax, series)
            sections.append(("Sustained bandwidth vs distance (paper Fig 14 baseline)", [], [],
                             "bandwidth_distance.png",
                             "Enough requests in flight keep the link busy at any distance; with too few, "
                             "bandwidth falls as the round trip grows (Little's law)."))
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


def draw_bandwidth(ax, records):
    groups = group(records, "bandwidth", ("profile", "op", "pattern", "size", "distance_m"))
    for (profile, op, pattern, size, d), rs in sorted(groups.items()):
        best = {}
        for r in rs:
            x = r["point"]["lanes"] * r["point"]["rate_gbps"]
            best[x] = max(best.get(x, 0.0), r["result"]["bandwidth_GBps"])
        if len(best) < 2:
            continue
        xs = sorted(best)
        ax.plot(xs, [best[x] for x in xs], "o-", label=f"{profile} {op} {pattern} {size} B {d:g} m")
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
    for (profile, op, pattern, size, lanes, rate, _, _), rs in sorted(series.items()):
        best = {}
        for r in rs:
            d = r["point"]["distance_m"]
            best[d] = max(best.get(d, 0.0), r["result"]["bandwidth_GBps"])
        if len(best) < 2:
            continue
        xs = sorted(best)
        ax.plot(xs, [best[x] for x in xs], "o-", label=f"{profile} {op} {pattern} {size} B {lanes}x{rate:g}G")
    ax.plot([8], [PAPER_BANDWIDTH_GBPS[15.0]], "kx", label="paper: remote DDR4, 8 x 15 Gb/s, 8 m")
