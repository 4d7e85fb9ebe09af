"""`monet report RESULTS`: tables and plots of a campaign's results beside the MONet paper's figures."""

import html
import json
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

from monet import link_model
from monet.stats import linear_fit

# The MONet paper's figures (Mishra, Benjamin and Zervas, "MONet"): value, unit, whether the paper states it
# ("stated") or it was derived from stated numbers ("derived"), and where: T1 its Table 1 (8 m), T2 its latency
# results (Figs 5, 6 and Eq. 1), T3 its DDR4 bandwidth (Fig 7).
PAPER = {
    "remote DDR4 write latency, 8 m": (526.6, "ns", "stated", "T1"),
    "remote HMC write latency, 8 m": (387.2, "ns", "stated", "T1"),
    "remote DDR4 write latency, 100 m (Eq. 1)": (1030.0, "ns", "stated", "T2"),
    "remote DDR4 read latency, 100 m (Eq. 1)": (1230.0, "ns", "stated", "T2"),
    "latency per round-trip metre, DDR4": (5.45, "ns/m", "derived", "T2 (5.42-5.47 fitted)"),
    "remote DDR4 bandwidth, 8 x 10 Gb/s": (6.8, "GB/s", "stated", "T3"),
    "remote DDR4 bandwidth, 8 x 12.5 Gb/s": (7.6, "GB/s", "stated", "T3"),
    "remote DDR4 bandwidth, 8 x 15 Gb/s": (8.1, "GB/s", "stated", "T1/T3"),
    "link utilisation, 8 x 15 Gb/s": (0.27, "", "derived", "T3 (8.1 / 30 GB/s)"),
}


# Axes that results from older campaigns may lack.
POINT_DEFAULTS = {"memory": "sram", "size": 64, "profile": "ours", "target": "sim"}


def load(results_dir):
    d = Path(results_dir)
    path = d / "results.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; run `monet campaign run FILE --results {d}` first")
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    manifest = json.loads((d / "manifest.json").read_text()) if (d / "manifest.json").exists() else {}
    return records, manifest


def _group(records, bench, keys):
    groups = defaultdict(list)
    for r in records:
        if r["point"]["benchmark"] == bench:
            groups[tuple(r["point"].get(k, POINT_DEFAULTS.get(k)) for k in keys)].append(r)
    return groups


def distance_fits(records):
    """Eq. 1 per (op, lanes, rate, profile, memory): latency = intercept + L_m x distance; 100 m extrapolation."""
    fits = []
    for (op, lanes, rate, profile, memory), rs in sorted(_group(records, "latency", ("op", "lanes", "rate_gbps",
                                                                                     "profile", "memory")).items()):
        by_d = defaultdict(list)
        for r in rs:
            by_d[r["point"]["distance_m"]].append(r["result"]["latency_ns"]["mean"])
        if len(by_d) < 2:
            continue
        xs = sorted(by_d)
        ys = [sum(by_d[x]) / len(by_d[x]) for x in xs]
        a, b, r2 = linear_fit(xs, ys)
        fits.append({"op": op, "lanes": lanes, "rate_gbps": rate, "profile": profile, "memory": memory,
                     "distances": xs,
                     "latency_ns": ys, "intercept_ns": a, "L_m_ns_per_m": b, "r2": r2,
                     "at_100m_ns": a + 100 * b})
    return fits


def _profile_figures(records, fits, profile):
    """The paper's figures as measured on one profile: DDR4 memory where the campaign ran it, else any."""
    def pick(rs):
        ddr4 = [r for r in rs if r["point"].get("memory", "sram") == "ddr4"]
        return ddr4 or rs

    def fit_of(op):
        return next((f for f in fits if f["op"] == op and f["lanes"] == 8 and f["rate_gbps"] == 15.0
                     and f["profile"] == profile and f["memory"] == "ddr4"), None) or \
            next((f for f in fits if f["op"] == op and f["lanes"] == 8 and f["rate_gbps"] == 15.0
                  and f["profile"] == profile), None)

    def bandwidth_at(rate):
        return pick([r for r in records if r["point"]["benchmark"] == "bandwidth" and r["point"]["lanes"] == 8
                     and r["point"]["rate_gbps"] == rate and r["point"]["distance_m"] == 8
                     and r["point"]["profile"] == profile and r["point"].get("size", 64) == 64])

    figures = {}
    w8 = pick([r for r in records if r["point"]["benchmark"] == "latency" and r["point"]["op"] == "write"
               and r["point"]["distance_m"] == 8 and r["point"]["lanes"] == 8 and r["point"]["rate_gbps"] == 15.0
               and r["point"]["profile"] == profile])
    figures["remote DDR4 write latency, 8 m"] = w8[0]["result"]["latency_ns"]["mean"] if w8 else None
    figures["remote HMC write latency, 8 m"] = None   # no HMC model yet
    for op, label in (("write", "remote DDR4 write latency, 100 m (Eq. 1)"),
                      ("read", "remote DDR4 read latency, 100 m (Eq. 1)")):
        f = fit_of(op)
        figures[label] = f and f["at_100m_ns"]
    f = fit_of("write") or fit_of("read")
    figures["latency per round-trip metre, DDR4"] = f and f["L_m_ns_per_m"]
    for rate in (10.0, 12.5, 15.0):
        bw = [r["result"]["bandwidth_GBps"] for r in bandwidth_at(rate)]
        figures[f"remote DDR4 bandwidth, 8 x {rate:g} Gb/s"] = max(bw) if bw else None
    figures["link utilisation, 8 x 15 Gb/s"] = max((r["result"]["link_utilisation"] for r in bandwidth_at(15.0)),
                                                  default=None)
    return figures


def paper_comparison(records, fits):
    """Rows: figure, paper value, the MONet-compatible profile and its deviation, our link and its deviation."""
    monet = _profile_figures(records, fits, "monet")
    ours = _profile_figures(records, fits, "ours")
    rows = []
    for label, (value, unit, kind, source) in PAPER.items():
        row = {"figure": label, "paper": value, "unit": unit, "kind": kind, "source": source}
        for name, figures in (("monet", monet), ("ours", ours)):
            mine = figures.get(label)
            row[name] = mine
            row[f"{name}_deviation"] = None if mine is None else (mine - value) / value
        rows.append(row)
    return rows


@contextmanager
def _figure(path, title, xlabel, ylabel):
    """A matplotlib axes (headless) saved to `path` with its title, labels, grid and legend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        yield ax
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)


def _plot_distance(fits, path):
    with _figure(path, "Latency vs distance with Eq. 1 fit (paper Fig 6)", "round-trip distance (m)",
                 "remote latency (ns)") as ax:
        _draw_distance(ax, fits)


def _draw_distance(ax, fits):
    for f in fits:
        label = (f"{f['profile']} {f['memory']} {f['op']} {f['lanes']}x{f['rate_gbps']:g}G "
                 f"({f['L_m_ns_per_m']:.2f} ns/m)")
        line, = ax.plot(f["distances"], f["latency_ns"], "o", label=label)
        xs = [0, max(100, max(f["distances"]))]
        ax.plot(xs, [f["intercept_ns"] + f["L_m_ns_per_m"] * x for x in xs], "--", color=line.get_color())
    ax.plot([8], [526.6], "kx", label="paper: remote DDR4 write, 8 m")
    ax.plot([100, 100], [1030, 1230], "k+", label="paper: Eq. 1 at 100 m (DDR4 write, read)")


def _plot_bandwidth(records, path):
    with _figure(path, "Sustained bandwidth vs link capacity (paper Fig 7)", "lanes x lane rate (Gb/s)",
                 "bandwidth (GB/s)") as ax:
        _draw_bandwidth(ax, records)


def _draw_bandwidth(ax, records):
    groups = _group(records, "bandwidth", ("profile", "op", "pattern", "size", "distance_m"))
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
    ax.plot([80, 100, 120], [6.8, 7.6, 8.1], "kx", label="paper: remote DDR4, 8 lanes")


# The paper's Fig 11 (T6): sustained bandwidth at BER 1e-12, against error-free, per lane rate (8 lanes).
PAPER_BER_EFFICIENCY = {10.0: 0.857, 12.5: 0.812, 15.0: 0.636}
BER_SERIES = ("profile", "op", "lanes", "rate_gbps", "distance_m", "burst")


def _plot_ber(records, path):
    with _figure(path, "Bandwidth under bit errors (paper Fig 11)", "bit error rate (every lane)",
                 "bandwidth / error-free bandwidth") as ax:
        ax.set_xscale("log")
        for key, rs in sorted(_group(records, "ber", BER_SERIES).items()):
            rs = sorted((r for r in rs if r["point"]["ber"] > 0), key=lambda r: r["point"]["ber"])
            if not rs:
                continue
            profile, op, lanes, rate, distance, burst = key
            xs = [r["point"]["ber"] for r in rs]
            line, = ax.plot(xs, [r["result"]["efficiency_vs_error_free"] for r in rs], "o-",
                            label=f"{profile} {op} {lanes}x{rate:g}G {distance:g} m"
                                  + (f", {burst}-bit bursts" if burst != 1 else ""))
            ax.plot(xs, [r["result"]["predicted"]["predicted_efficiency"] for r in rs], "--",
                    color=line.get_color(), label="replay model")
        for rate, eff in PAPER_BER_EFFICIENCY.items():
            ax.plot([1e-12], [eff], "x", label=f"paper: 8x{rate:g}G at 1e-12")
        ax.set_ylim(0, 1.05)


# A bandwidth-vs-distance series: everything but the distance is the same (runs of other lengths or depths
# at one distance belong to other sweeps).
DISTANCE_SERIES = ("profile", "op", "pattern", "size", "lanes", "rate_gbps", "outstanding", "count")


def _plot_bandwidth_distance(records, path):
    with _figure(path, "Sustained bandwidth vs distance, 8 x 15 Gb/s (paper Fig 14 baseline)",
                 "round-trip distance (m)", "bandwidth (GB/s)") as ax:
        groups = _group(records, "bandwidth", DISTANCE_SERIES)
        for (profile, op, pattern, size, lanes, rate, _, _), rs in sorted(groups.items()):
            best = {}
            for r in rs:
                d = r["point"]["distance_m"]
                best[d] = max(best.get(d, 0.0), r["result"]["bandwidth_GBps"])
            if len(best) < 2:
                continue
            xs = sorted(best)
            ax.plot(xs, [best[x] for x in xs], "o-", label=f"{profile} {op} {pattern} {size} B {lanes}x{rate:g}G")
        ax.plot([8], [8.1], "kx", label="paper: remote DDR4, 8 x 15 Gb/s, 8 m")


def _has_distance_sweep(records):
    groups = _group(records, "bandwidth", DISTANCE_SERIES)
    return any(len({r["point"]["distance_m"] for r in rs}) > 1 for rs in groups.values())


# The paper's STREAM at 36 m (T7, Fig 14): sustained % of local per memory and lane rate, and IPC (T9).
PAPER_STREAM_36M = {("HMC", 15.0): 0.911, ("DDR4", 15.0): 0.622, ("HMC", 10.0): 0.89, ("DDR4", 10.0): 0.516}
PAPER_IPC_SLOPE_PER_M = -0.0053
STREAM_KERNELS = ("copy", "scale", "add", "triad")
STREAM_SERIES = ("profile", "memory", "lanes", "rate_gbps", "n", "reps")


def stream_series(records):
    """Per series (STREAM_SERIES): local MB/s per kernel and IPC (node 0), and per distance the remote MB/s,
    % of local, IPC and IPC % of local (node 1), with %/m slopes of Triad and IPC fitted over distance."""
    out = []
    for key, rs in sorted(_group(records, "stream", STREAM_SERIES).items()):
        local = [r["result"] for r in rs if r["point"]["node"] == 0]
        remote = sorted((r for r in rs if r["point"]["node"] == 1), key=lambda r: r["point"]["distance_m"])
        if not local or not remote:
            continue
        ref = {k: sum(l["kernels"][k]["best_MBps"] for l in local) / len(local) for k in STREAM_KERNELS}
        ref_ipc = sum(l["ipc"] for l in local) / len(local)
        points = [{"distance_m": r["point"]["distance_m"], "ipc": r["result"]["ipc"],
                   "ipc_of_local": r["result"]["ipc"] / ref_ipc, "validates": r["result"]["validates"],
                   "MBps": {k: r["result"]["kernels"][k]["best_MBps"] for k in STREAM_KERNELS},
                   "of_local": {k: r["result"]["kernels"][k]["best_MBps"] / ref[k] for k in STREAM_KERNELS}}
                  for r in remote]
        series = dict(zip(STREAM_SERIES, key), local_MBps=ref, local_ipc=ref_ipc, points=points,
                      triad_slope_per_m=None, ipc_slope_per_m=None)
        ds = [p["distance_m"] for p in points]
        if len(set(ds)) > 1:
            series["triad_slope_per_m"] = linear_fit(ds, [p["of_local"]["triad"] for p in points])[1]
            series["ipc_slope_per_m"] = linear_fit(ds, [p["ipc_of_local"] for p in points])[1]
        out.append(series)
    return out


def _stream_sections(records, out):
    series = stream_series([r for r in records if r["point"]["target"] == "sim"])
    if not series:
        return []
    rows = []
    for sr in series:
        for p in sr["points"]:
            rows.append([sr["profile"], f"{sr['lanes']}x{sr['rate_gbps']:g}G", _fmt(p["distance_m"], 0)]
                        + [f"{p['MBps'][k]:.1f} ({100 * p['of_local'][k]:.1f} %)" for k in STREAM_KERNELS]
                        + [f"{p['ipc']:.3f} ({100 * p['ipc_of_local']:.1f} %)", "yes" if p["validates"] else "NO"])
        rows.append([sr["profile"], f"{sr['lanes']}x{sr['rate_gbps']:g}G", "local RAM"]
                    + [f"{sr['local_MBps'][k]:.1f}" for k in STREAM_KERNELS] + [f"{sr['local_ipc']:.3f}", ""])
    slopes = [[sr["profile"], f"{sr['lanes']}x{sr['rate_gbps']:g}G", sr["n"], sr["reps"],
               "-" if sr["triad_slope_per_m"] is None else f"{100 * sr['triad_slope_per_m']:+.3f}",
               "-" if sr["ipc_slope_per_m"] is None else f"{100 * sr['ipc_slope_per_m']:+.3f}"] for sr in series]
    with _figure(out / "stream_distance.png", "STREAM on remote memory vs distance (paper Fig 14)",
                 "round-trip distance (m)", "best rate / local RAM") as ax:
        _draw_stream_distance(ax, series)
    paper_15g = ", ".join(f"{mem} {100 * v:.1f} %" for (mem, rate), v in PAPER_STREAM_36M.items() if rate == 15.0)
    return [
        ("STREAM on the soft CPU, local RAM and remote memory (paper Figs 12-14)",
         ["profile", "link", "distance (m)"] + [f"{k} MB/s (of local)" for k in STREAM_KERNELS]
         + ["IPC (of local)", "validates"], rows, "stream_distance.png",
         "The soft CPU (VexRiscv, rv32im, 250 MHz nominal) runs STREAM's kernels on 32-bit words; the remote "
         "window is uncached and the CPU has one access in flight, so every remote word costs a round trip and "
         "bandwidth falls with distance far more steeply than the paper's A53 cores with caches and prefetch "
         f"({paper_15g} of local at 36 m, 15 Gb/s). MB/s from mcycle at the nominal clock (best of "
         "the timed repetitions); IPC from minstret / mcycle over all repetitions."),
        ("STREAM and IPC slopes over distance (paper Figs 14, 19)",
         ["profile", "link", "elements", "repetitions", "Triad %/m", "IPC %/m"], slopes, None,
         f"Least-squares slopes of % of local against round-trip metres. The paper's IPC slope on the A53: "
         f"{100 * PAPER_IPC_SLOPE_PER_M:+.2f} %/m (70-83 % of local at 36 m)."),
    ]


def _draw_stream_distance(ax, series):
    for sr in series:
        ds = [p["distance_m"] for p in sr["points"]]
        for k in STREAM_KERNELS:
            ax.plot(ds, [p["of_local"][k] for p in sr["points"]], "o-",
                    label=f"{sr['profile']} {k} {sr['lanes']}x{sr['rate_gbps']:g}G")
    for (mem, rate), v in PAPER_STREAM_36M.items():
        ax.plot([36], [v], "x", label=f"paper: {mem} {rate:g}G at 36 m (4 A53 cores, caches)")
    ax.set_ylim(0, 1.05)


# The paper's YCSB and IPC on the A53 (T8, T9): local DDR4 / HW HMC summary.
PAPER_YCSB = {"ops_per_s": 1400, "avg_latency_ms": 2.5, "ipc": 0.36}


def _ipc_text(result):
    return f"{result['ipc']:.3f}" if result.get("ipc") is not None else f"n/a: {result.get('ipc_note') or 'not measured'}"


def _draw_stream_per_node(ax, best):
    """Bars of each kernel's best rate, one bar per node side by side, the kernel's name under its group."""
    width = 0.8 / max(len(best), 1)
    for i, (node, v) in enumerate(best.items()):
        ax.bar([j + i * width for j in range(4)], [v[k] for k in STREAM_KERNELS], width, label=f"node {node}")
    ax.set_xticks([j + width * (len(best) - 1) / 2 for j in range(4)], [k.capitalize() for k in STREAM_KERNELS])


def _linux_sections(records, out):
    """Linux on the board-in-a-box (target qemu): STREAM per node, YCSB per workload, perf counters."""
    qemu = [r for r in records if r["point"]["target"] == "qemu"]
    sections = []
    onlined = [r["result"]["remote_memory"] for r in qemu if r["result"].get("remote_memory")]
    if qemu:
        rows = [["node 1 (CPU-less, remote stand-in)", onlined[0]["mib"], onlined[0]["online_blocks"],
                 onlined[0]["onlined_blocks"]]] if onlined else [["node 1", "-", "-", "-"]]
        sections.append(("Remote memory online in the guest", ["NUMA node", "MiB online", "memory blocks online",
                                                               "blocks onlined by the overlay"], rows, None,
                         "At boot the overlay's S45monet-remote-memory runs monet-online-remote (the board's script): "
                         "it onlines every offline block of node 1 as movable memory and reports the node's size. "
                         "On QEMU the device tree's node 1 memory is online from the start, so it onlines none."))
    st = [r for r in qemu if r["point"]["benchmark"] == "stream"]
    if st:
        by_node = defaultdict(list)
        for r in st:
            by_node[r["point"]["node"]].append(r["result"])
        best = {node: {k: max(x["kernels"][k]["best_MBps"] for x in rs) for k in STREAM_KERNELS}
                for node, rs in sorted(by_node.items())}
        rows = [[f"node {node}", *(f"{v[k]:.0f}" for k in STREAM_KERNELS),
                 "yes" if all(x["validates"] for x in by_node[node]) else "NO"] for node, v in best.items()]
        if 0 in best and 1 in best:
            rows.append(["node 1 / node 0", *(f"{100 * best[1][k] / best[0][k]:.1f} %" for k in STREAM_KERNELS), ""])
        with _figure(out / "stream_qemu.png", "STREAM per kernel and NUMA node, QEMU (paper Figs 12-13)",
                     "kernel", "best rate (MB/s)") as ax:
            _draw_stream_per_node(ax, best)
        sections.append(("STREAM under Linux, board-in-a-box (paper Figs 12-13)",
                         ["memory", *(f"{k} MB/s" for k in STREAM_KERNELS), "validates"], rows, "stream_qemu.png",
                         "numactl --membind to node 0 (with the CPUs) or node 1 (CPU-less, the remote memory's "
                         "stand-in), 4 threads, 8-byte elements. QEMU's TCG emulates both nodes with the same host "
                         "RAM: this shows the flow works end to end; it makes no bandwidth claim."))
    yc = sorted((r for r in qemu if r["point"]["benchmark"] == "ycsb"),
                key=lambda r: (r["point"]["workload"], r["point"]["node"]))
    if yc:
        rows = [[r["point"]["workload"].upper(), r["point"]["node"], r["point"]["threads"], r["result"]["operations"],
                 f"{r['result']['ops_per_s']:.0f}", f"{r['result']['avg_latency_us'] / 1000:.2f}",
                 f"{r['result']['p99_latency_us'] / 1000:.2f}", r["result"]["failed"], _ipc_text(r["result"])]
                for r in yc]
        with _figure(out / "ycsb.png", "YCSB on memcached, QEMU (paper Figs 15-18)", "workload", "ops/s") as ax:
            labels = [f"{r['point']['workload'].upper()} n{r['point']['node']}" for r in yc]
            ax.bar(labels, [r["result"]["ops_per_s"] for r in yc], label="ops/s")
            ax.axhline(PAPER_YCSB["ops_per_s"], color="k", ls=":", label="paper: local DDR4 on the A53 (about 1400)")
        sections.append(("YCSB on memcached, board-in-a-box (paper Figs 15-18)",
                         ["workload", "node", "threads", "operations", "ops/s", "avg (ms)", "p99 (ms)", "failed",
                          "IPC (memcached)"], rows, "ycsb.png",
                         "The real YCSB core (0.17.0) and our spymemcached binding on the host, memcached in the "
                         "guest bound to the node by the overlay's monet-memcached, through a forwarded loopback "
                         "port. Average: each top-level operation type weighted by its count; p99: the largest "
                         "per-type p99. IPC: perf stat on memcached during the run; under emulation it is not "
                         f"meaningful and is not printed. The paper: about {PAPER_YCSB['ops_per_s']} ops/s, "
                         f"{PAPER_YCSB['avg_latency_ms']} ms, IPC {PAPER_YCSB['ipc']} (local DDR4, A53)."))
    pf = sorted((r for r in qemu if r["point"]["benchmark"] == "perf"), key=lambda r: r["point"]["node"])
    if pf:
        rows = [[r["point"]["node"], r["point"]["n"], _fmt(r["result"].get("cycles"), 0),
                 _fmt(r["result"].get("instructions"), 0), _ipc_text(r["result"]),
                 f"{r['result']['kernels']['triad']['best_MBps']:.0f}"] for r in pf]
        sections.append(("perf stat over STREAM, board-in-a-box (paper Fig 19)",
                         ["node", "elements", "cycles", "instructions", "IPC", "Triad MB/s"], rows, None,
                         "perf stat -e cycles,instructions around STREAM. QEMU counts a virtual clock for cycles "
                         "and has no instructions event (with -icount IPC is 1.00 by construction), so IPC is "
                         "reported as not available; on the board the same command gives the A53's counts."))
    return sections


def _fmt(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def make_report(results_dir, out_dir=None):
    records, manifest = load(results_dir)
    out = Path(out_dir or results_dir)
    out.mkdir(parents=True, exist_ok=True)
    fits = distance_fits(records)
    comparison = paper_comparison(records, fits)
    sections = []   # (title, header, rows, image or None, note)

    for r in records:
        for k, v in POINT_DEFAULTS.items():
            r["point"].setdefault(k, v)
    records = sorted(records, key=lambda r: tuple(str(r["point"].get(k)) for k in ("benchmark", "profile", "memory",
                                                                                  "op", "pattern"))
                     + tuple(r["point"].get(k) or 0 for k in ("size", "lanes", "rate_gbps", "distance_m", "rep")))
    lat_rows = [[r["point"]["profile"], r["point"]["memory"], r["point"]["op"], _fmt(r["point"]["distance_m"], 0),
                 r["point"]["lanes"],
                 _fmt(r["point"]["rate_gbps"], 1), _fmt(r["result"]["latency_ns"]["mean"]),
                 _fmt(r["result"]["latency_ns"]["p50"]), _fmt(r["result"]["latency_ns"]["p99"]),
                 _fmt(r["result"]["breakdown"]["remat_link_logic_cycles"], 0)]
                for r in records if r["point"]["benchmark"] == "latency"]
    if lat_rows:
        sections.append(("Remote latency (paper Fig 5)", ["profile", "memory", "op", "distance (m)", "lanes",
                         "rate (Gb/s)", "mean (ns)", "p50 (ns)", "p99 (ns)", "logic (cycles)"], lat_rows, None,
                         "Latency at the ReMAT port, one 64 B line transaction per access. Profiles: ours (MONet-open "
                         "link) and monet (the paper's streamer + Aurora 64B/66B, host/monet/profiles.py). Logic "
                         "cycles: what is left after fiber, PHY or Aurora, serialization and memory."))
    if fits:
        _plot_distance(fits, out / "latency_distance.png")
        sections.append(("Latency vs distance, Eq. 1 fit (paper Fig 6)",
                         ["profile", "memory", "op", "lanes", "rate", "L_m (ns/m)", "intercept (ns)", "R^2",
                          "at 100 m (ns)"],
                         [[f["profile"], f["memory"], f["op"], f["lanes"], _fmt(f["rate_gbps"]),
                           _fmt(f["L_m_ns_per_m"], 3),
                           _fmt(f["intercept_ns"]), _fmt(f["r2"], 5), _fmt(f["at_100m_ns"])] for f in fits],
                         "latency_distance.png",
                         "Eq. 1: R(d) = L_latency + L_m d + M_overhead; the intercept is L_latency + M_overhead "
                         "(the paper: M_overhead 16.2 ns write, 37.4 ns read). Fiber model: "
                         f"{link_model.FIBER_NS_PER_M} ns per round-trip metre."))
    bw = [r for r in records if r["point"]["benchmark"] == "bandwidth"]
    if bw:
        _plot_bandwidth(records, out / "bandwidth.png")
        sections.append(("Bandwidth and utilisation (paper Figs 7, 9)",
                         ["profile", "op", "pattern", "size (B)", "distance (m)", "lanes", "rate", "outstanding",
                          "GB/s", "capacity GB/s", "payload util.", "link util.", "link eff."],
                         [[r["point"]["profile"], r["point"]["op"], r["point"]["pattern"], r["point"]["size"],
                           _fmt(r["point"]["distance_m"], 0),
                                  r["point"]["lanes"], _fmt(r["point"]["rate_gbps"]), r["point"]["outstanding"],
                                  _fmt(r["result"]["bandwidth_GBps"], 2),
                                  _fmt(r["result"]["payload_capacity_GBps"], 2),
                                  _fmt(r["result"]["payload_utilisation"], 3),
                                  _fmt(r["result"]["link_utilisation"], 3),
                                  _fmt(r["result"]["link_efficiency"], 3)] for r in bw],
                         "bandwidth.png",
                         "Link utilisation is the paper's: achieved / (2 x lanes x rate / 8). Payload utilisation "
                         "is against one direction's capacity after 64b/66b; link efficiency is payload bits over "
                         "line bits while the data direction was busy."))
        if _has_distance_sweep(records):
            _plot_bandwidth_distance(records, out / "bandwidth_distance.png")
            sections.append(("Sustained bandwidth vs distance (paper Fig 14 baseline)", [], [],
                             "bandwidth_distance.png",
                             "Enough requests in flight keep the link busy at any distance; with too few, "
                             "bandwidth falls as the round trip grows (Little's law)."))
        sections.append(("Latency percentiles under load (hardware histogram)",
                         ["profile", "op", "pattern", "size (B)", "distance (m)", "lanes", "rate", "outstanding",
                          "p50", "p90", "p99", "p99.9", "max (ns)"],
                         [[r["point"]["profile"], r["point"]["op"], r["point"]["pattern"], r["point"]["size"],
                           _fmt(r["point"]["distance_m"], 0),
                           r["point"]["lanes"], _fmt(r["point"]["rate_gbps"]), r["point"]["outstanding"]]
                          + [_fmt(r["result"]["latency_ns"][k]) for k in ("p50", "p90", "p99", "p99_9", "max")]
                          for r in bw], None,
                         "Percentiles are upper edges of histogram buckets (within one bucket of the true value); "
                         "'-' where a percentile fell in the open last bucket."))
    ber = [r for r in records if r["point"]["benchmark"] == "ber"]
    if ber:
        ber = sorted(ber, key=lambda r: tuple(r["point"].get(k) for k in BER_SERIES) + (r["point"]["ber"],))
        _plot_ber(records, out / "ber.png")
        sections.append(("Bandwidth under bit errors (paper Fig 11)",
                         ["profile", "op", "distance (m)", "lanes", "rate", "BER", "GB/s", "vs error-free",
                          "model", "line bits", "bit errors", "frames dropped", "replays", "corrupted", "bus err."],
                         [[r["point"]["profile"], r["point"]["op"], _fmt(r["point"]["distance_m"], 0),
                           r["point"]["lanes"], _fmt(r["point"]["rate_gbps"]), f"{r['point']['ber']:g}",
                           _fmt(r["result"]["bandwidth_GBps"], 2), _fmt(r["result"]["efficiency_vs_error_free"], 4),
                           _fmt(r["result"]["predicted"]["predicted_efficiency"], 4), f"{r['result']['bits']:.3g}",
                           r["result"]["injected_bit_errors"], r["result"]["crc_errors"], r["result"]["replays"],
                           r["result"]["corrupted_words"], r["result"]["bus_errors"]] for r in ber],
                         "ber.png",
                         "Errors on every lane, both directions; a write pass then a checked read pass. 'corrupted' "
                         "counts accesses whose data did not match (any word). Model: 1 / (1 + errors/s x bytes "
                         "replayed per error / bandwidth) (host/monet/reliability.py), for single-bit errors. The paper's 1e-12 figures "
                         "(85.7 / 81.2 / 63.6 % at 10 / 12.5 / 15 Gb/s) cannot come from replay cost alone: at "
                         "1e-12, 8 x 15 Gb/s sees 0.12 errors a second."))

    sections += _stream_sections(records, out)
    sections += _linux_sections(records, out)

    if not any(r["point"]["target"] == "sim" for r in records):
        return _write(out, manifest, sections, {"fits": fits, "paper": comparison})

    def dev(d):
        return "-" if d is None else f"{100 * d:+.1f} %"
    sections.append(("Beside the paper", ["figure", "paper", "unit", "monet profile", "deviation", "MONet-open",
                                          "deviation", "paper value is", "source"],
                     [[c["figure"], _fmt(c["paper"], 2), c["unit"], _fmt(c["monet"], 2), dev(c["monet_deviation"]),
                       _fmt(c["ours"], 2), dev(c["ours_deviation"]), c["kind"], c["source"]]
                      for c in comparison], None,
                     "The monet profile is the paper's path modelled in the same sim (same memory model, same "
                     "distance); its constants and their sources are in host/monet/profiles.py. Memory: the ddr4 "
                     "model (a fixed 17.4 ns) where the campaign ran it, else the on-card SRAM. Bandwidth rows use "
                     "the best 8 m, 64 B point at that rate."))

    return _write(out, manifest, sections, {"fits": fits, "paper": comparison})


def _write(out, manifest, sections, data):
    (out / "report.md").write_text(_markdown(manifest, sections))
    (out / "report.html").write_text(_html(manifest, sections))
    (out / "report.json").write_text(json.dumps(data, indent=1))
    return out / "report.md", out / "report.html"


def _manifest_lines(manifest):
    keys = ("campaign", "git_revision", "gateware_hash", "firmware_hash", "nominal_clock_hz", "topology")
    lines = [f"{k}: {manifest[k]}" for k in keys if k in manifest]
    if "qemu" in manifest:
        q = manifest["qemu"]
        lines.append(f"qemu: image {q['image_hash']}, {q['kernel_package']} ({q['suite']}), {q['machine']} "
                     f"{q['cpus']} x {q['cpu']}, node memory {q['node_memory_mb']} MiB, distance {q['node_distance']}, "
                     f"{q['qemu']}")
    versions = manifest.get("versions", {})
    if versions:
        lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    return lines


def _markdown(manifest, sections):
    out = ["# MONet-open campaign report", ""] + [f"- {l}" for l in _manifest_lines(manifest)]
    for title, header, rows, image, note in sections:
        out += ["", f"## {title}", "", note]
        if header:
            out += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        if image:
            out += ["", f"![{title}]({image})"]
    return "\n".join(out) + "\n"


def _html(manifest, sections):
    e = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>MONet-open campaign report</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse;"
             "margin:1em 0}td,th{border:1px solid #bbb;padding:3px 8px;font-size:13px}th{background:#eee}</style>",
             "</head><body><h1>MONet-open campaign report</h1><ul>"]
    parts += [f"<li>{e(l)}</li>" for l in _manifest_lines(manifest)]
    parts.append("</ul>")
    for title, header, rows, image, note in sections:
        parts.append(f"<h2>{e(title)}</h2><p>{e(note)}</p>")
        if header:
            parts.append("<table><tr>" + "".join(f"<th>{e(str(h))}</th>" for h in header) + "</tr>")
            for row in rows:
                parts.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>")
            parts.append("</table>")
        if image:
            parts.append(f"<img src='{e(image)}' alt='{e(title)}'>")
    parts.append("</body></html>")
    return "\n".join(parts)
