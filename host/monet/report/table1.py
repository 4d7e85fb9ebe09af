"""The paper's Table 1 rebuilt from a campaign's measured points: per memory configuration (local and remote,
DDR4 and HMC) STREAM and the PBB's bandwidth, remote as a share of local (SB %), remote write latency and its
overhead over local, each beside the paper's value and its deviation."""

from monet.report.paper import PAPER_T1_BANDWIDTH_GBPS, PAPER_T1_SB, PAPER_T1_WRITE
from monet.report.tables import axis, fmt, memory_label

REMOTE_HMC_LABEL = "hmc half"   # T1's remote HMC: half width, terminated on the memory card behind our link
T1_RATE_GBPS = 15.0             # T1's remote links (8 x 15 Gb/s) and its HMC lanes
T1_DISTANCE_M = 8


def _at_t1(point, label):
    """Whether a point is T1's measurement of a configuration: our link at 8 m, 8 x 15 Gb/s when remote; HMC
    lanes at 15 Gb/s. The PBB on the HMC controller's block port measures the same memory as on ReMAT's."""
    if axis(point, "profile") != "ours" or axis(point, "target") != "sim" or \
            memory_label({**point, "pbb_port": "remat"}) != label:
        return False
    if axis(point, "placement") == "remote" and (point["distance_m"] != T1_DISTANCE_M or point["lanes"] != 8):
        return False
    return point["rate_gbps"] == T1_RATE_GBPS or (axis(point, "memory") == "ddr4"
                                                  and axis(point, "placement") == "local")


def is_line_write_latency(point):
    """A PBB point that times one 64 B line write at a time, as the paper's write latencies are measured (the
    latency benchmark's CPU word is a partial line: the HMC controller reads the line before it writes)."""
    return point["benchmark"] == "bandwidth" and point["op"] == "write" and point.get("size", 64) == 64 \
        and point["outstanding"] == 1


def measured(records):
    """{label: {"stream", "pbb", "pbb_point", "write_ns"}}: per configuration the best Triad (GB/s) of STREAM on
    node 1, the best PBB bandwidth (GB/s) and the access that reached it, and the mean latency (ns) of PBB
    line writes one at a time."""
    out = {}
    for label in PAPER_T1_BANDWIDTH_GBPS:
        mine = [r for r in records if _at_t1(r["point"], label)]
        triads = [r["result"]["kernels"]["triad"]["best_MBps"] / 1000 for r in mine
                  if r["point"]["benchmark"] == "stream" and r["point"]["node"] == 1]
        pbb = max((r for r in mine if r["point"]["benchmark"] == "bandwidth"),
                  key=lambda r: r["result"]["bandwidth_GBps"], default=None)
        writes = [r["result"]["latency_ns"]["mean"] for r in mine if is_line_write_latency(r["point"])]
        out[label] = {
            "stream": max(triads, default=None),
            "pbb": pbb and pbb["result"]["bandwidth_GBps"],
            "pbb_point": pbb and (f"{pbb['point']['op']} {pbb['point'].get('size', 64)} B {pbb['point']['pattern']}"
                                  + (" (block port)" if axis(pbb["point"], "pbb_port") == "hmc" else "")),
            "write_ns": sum(writes) / len(writes) if writes else None,
        }
    return out


def deviation(ours, paper):
    """(ours - paper) / paper; for a range (low, high), 0 inside it and against the nearer bound outside."""
    if ours is None:
        return None
    low, high = paper if isinstance(paper, tuple) else (paper, paper)
    nearer = low if ours < low else high if ours > high else None
    return 0.0 if nearer is None else (ours - nearer) / nearer


def _ratio(a, b):
    return None if a is None or b is None else a / b


def rows(records):
    """{"bandwidth": [...], "shares": [...], "latency": [...]}: T1's rows, each a dict with the paper's value,
    ours and the deviation."""
    m = measured(records)
    bandwidth = [{"configuration": name, "label": label,
                  "stream_paper": stream, "stream": m[label]["stream"],
                  "stream_deviation": deviation(m[label]["stream"], stream),
                  "pbb_paper": pbb, "pbb": m[label]["pbb"], "pbb_deviation": deviation(m[label]["pbb"], pbb),
                  "pbb_point": m[label]["pbb_point"]}
                 for label, (name, stream, pbb) in PAPER_T1_BANDWIDTH_GBPS.items()]
    shares = []
    for memory, (remote, local, stream, pbb) in PAPER_T1_SB.items():
        ours_stream = _ratio(m[remote]["stream"], m[local]["stream"])
        ours_pbb = _ratio(m[remote]["pbb"], m[local]["pbb"])
        shares.append({"configuration": f"SB % {memory}", "stream_paper": stream, "stream": ours_stream,
                       "stream_deviation": deviation(ours_stream, stream), "pbb_paper": pbb, "pbb": ours_pbb,
                       "pbb_deviation": deviation(ours_pbb, pbb), "pbb_point": "remote / local"})
    latency = []
    for memory, (remote, local, ns, overhead) in PAPER_T1_WRITE.items():
        ours_ns, ours_overhead = m[remote]["write_ns"], _ratio(m[remote]["write_ns"], m[local]["write_ns"])
        latency += [{"figure": f"remote {memory} write latency (ns)", "paper": ns, "ours": ours_ns,
                     "deviation": deviation(ours_ns, ns)},
                    {"figure": f"remote {memory} write overhead over local (x)", "paper": overhead,
                     "ours": ours_overhead, "deviation": deviation(ours_overhead, overhead)}]
    return {"bandwidth": bandwidth, "shares": shares, "latency": latency}


def _dev(d):
    return "-" if d is None else f"{100 * d:+.1f} %"


def _paper(v, digits):
    if isinstance(v, tuple):
        return fmt(v[0], digits) if v[0] == v[1] else f"{fmt(v[0], digits)}-{fmt(v[1], digits)}"
    return fmt(v, digits)


def sections(table):
    """The report's two T1 sections (bandwidth and shares; write latency and overheads), each only where the
    campaign measured one of its figures."""
    share = lambda v: "-" if v is None else f"{100 * v:.1f} %"     # noqa: E731  (a column's format)
    bw_rows = [[r["configuration"], fmt(r["stream_paper"], 2), fmt(r["stream"], 3), _dev(r["stream_deviation"]),
                fmt(r["pbb_paper"], 2), fmt(r["pbb"], 2), _dev(r["pbb_deviation"]), r["pbb_point"] or "-"]
               for r in table["bandwidth"]]
    bw_rows += [[r["configuration"], share(r["stream_paper"]), share(r["stream"]), _dev(r["stream_deviation"]),
                 share(r["pbb_paper"]), share(r["pbb"]), _dev(r["pbb_deviation"]), r["pbb_point"]]
                for r in table["shares"]]
    lat_rows = [[r["figure"], _paper(r["paper"], 1 if "ns" in r["figure"] else 2),
                 fmt(r["ours"], 1 if "ns" in r["figure"] else 2), _dev(r["deviation"])] for r in table["latency"]]
    bandwidth = [
        ("The paper's Table 1 rebuilt (8 m): STREAM / baseline",
         ["configuration", "STREAM paper (GB/s)", "STREAM ours", "deviation", "PBB paper (GB/s)", "PBB ours",
          "deviation", "our best PBB point"], bw_rows, None,
         "Ours: our link at 8 m round trip, 8 x 15 Gb/s, HMC lanes at 15 Gb/s (FW full width, 16 lanes; HW half, "
         "8; remote HMC terminated on the memory card). STREAM is the soft CPU's best Triad on node 1 (VexRiscv, "
         "rv32im, one core: far below the paper's four A53 cores, so compare its SB % rather than its GB/s); "
         "PBB is the benchmark block's best bandwidth over the campaign's accesses (a mixed point counts both "
         "directions). SB % is remote over local of the same memory.")]
    latency = [
        ("The paper's Table 1 rebuilt (8 m): write latency and overheads",
         ["figure", "paper", "ours", "deviation"], lat_rows, None,
         "Mean latency of one 64 B line write at a time from the benchmark block (outstanding 1) at 8 m; the "
         "overhead is remote over the same memory's local write latency. The paper's DDR4 overhead is a range "
         "(526.6 ns over a local write of 17.4 to 65.8 ns): inside it the deviation is 0. Its HMC overhead, 1.6, "
         "is as stated though 387.2 / 332.8 ns is 1.16.")]
    measured_bandwidth = any(r["stream"] is not None or r["pbb"] is not None for r in table["bandwidth"])
    measured_latency = any(r["ours"] is not None for r in table["latency"])
    return (bandwidth if measured_bandwidth else []) + (latency if measured_latency else [])
