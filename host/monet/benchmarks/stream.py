"""STREAM Copy/Scale/Add/Triad on the soft CPU (local RAM or remote memory), under Linux on QEMU, or on this
machine (paper Figs 12-14, 19)."""

from collections import defaultdict

from monet.benchmarks import LINUX_TARGETS, NODE_DESCRIBED, WHERE, Benchmark, Param, Verdict, register
from monet.report.paper import PAPER_IPC_SLOPE_PER_M, PAPER_STREAM_36M, PAPER_STREAM_8M, STREAM_CACHED_TARGET
from monet.report.stats import linear_fit
from monet.report.tables import MEMORY_SERIES, figure, fmt, group, memory_label, print_table
from monet.sim import link_setup
from monet.soc.facts import LOCAL_RAM_SIZE
from monet.workloads import stream

KERNELS = stream.KERNELS
# The longest arrays the console's STREAM lays out in the sim's local RAM: three arrays of n 4-byte words, each
# rounded up to a 64-byte line and followed by a 128-byte stagger (stream_footprint in
# firmware/app/stream_run.c; test_stream checks that the firmware takes this n and refuses one more).
SIM_MAX_WORDS = (LOCAL_RAM_SIZE // 3 - 128) // 64 * 64 // 4
SERIES = ("profile", *MEMORY_SERIES, "window", "lanes", "rate_gbps", "n", "reps")
# What each target runs when the CLI is not told: (elements, repetitions, threads).
CLI_DEFAULTS = {"host": (10_000_000, 10, None), "qemu": (stream.QEMU_ELEMENTS, stream.QEMU_REPETITIONS, 4),
                "board": (stream.QEMU_ELEMENTS, stream.QEMU_REPETITIONS, 4),
                "sim": (stream.SIM_ELEMENTS, stream.SIM_REPETITIONS, None)}


@register
class Stream(Benchmark):
    """STREAM Copy/Scale/Add/Triad: best MB/s per kernel and validation."""

    order = 50
    targets = ("sim", "qemu", "board", "host")
    axes = ("distance_m", "lanes", "rate_gbps", "profile", "memory", "hmc_width", "placement", "hmc_native")
    errors = (stream.StreamError,)
    params = (
        Param("node", "NUMA node of the arrays (sim: 0 local RAM, 1 remote memory; host, qemu: numactl "
              "--membind)", choices=tuple(range(8)), sweep=[0, 1]),
        Param("window", "sim, node 1: the CPU's remote window, uncached (a round trip a word) or cached (the data "
              "cache and ReMAT's combiner: line transactions)", choices=link_setup.WINDOWS, default="uncached"),
        Param("n", "array elements (default: 10M on host, 2M on qemu, 4096 words on the sim)", low=16,
              high=10**9, integer=True, sweep=[4096], flag="--elements"),
        Param("reps", "repetitions, the first untimed (default: 10 on host, 5 on qemu, 3 on the sim)", low=2,
              high=1000, integer=True, sweep=[3]),
        Param("threads", "host, qemu: threads (default: all CPUs on host; 4 on qemu)", low=1, high=256,
              integer=True, campaign=False),
    )

    def refuse(self, values, targets):
        refusal = refuse_remote_node(values, targets)
        n = max((v for v in values["n"] if v is not None), default=0)
        if refusal is None and "sim" in targets and n > SIM_MAX_WORDS:
            return "n", f"{n} does not fit the sim's local RAM; accepted on the sim: 16 to {SIM_MAX_WORDS}"
        return refusal

    smallest = {"node": [1], "n": [16], "reps": [2]}

    def sim_cycles(self, point):
        n, reps, _ = CLI_DEFAULTS["sim"]
        return (point["n"] or n) * (point["reps"] or reps) * 100   # four kernels, a round trip a word remote

    def run(self, target, point, log=None):
        n, reps, threads = CLI_DEFAULTS[point["target"]]
        n, reps = point["n"] or n, point["reps"] or reps
        threads = point["threads"] or threads
        if point["target"] == "host":
            return stream.run_host(n, reps, threads, point["node"])
        node = point["node"] or 0
        if point["target"] in LINUX_TARGETS:
            return stream.run_qemu(target, node, n=n, repetitions=reps, threads=threads, perf=True)
        return stream.run_sim(target, node, self.link(point), n=n, repetitions=reps, window=point["window"])

    def verdicts(self, point, result):
        return [Verdict(f"validation ({result['bad_elements']} bad elements)", result["validates"], gates=True)]

    def show(self, point, result):
        where = f"node {result['node']}" if result["node"] is not None else "default placement"
        print(f"STREAM on {point['target']} ({where}), {result['n']} elements of {result['element_bytes']} B, "
              f"{result['repetitions']} repetitions, {result['threads']} thread(s)"
              + (f", {point['distance_m']:g} m, {point['lanes']} x {point['rate_gbps']:g} Gb/s"
                 if point["target"] == "sim" else ""))
        print_table([[k.capitalize(), f"{v['best_MBps']:.1f}", f"{v['avg_s']:.6f}", f"{v['min_s']:.6f}",
                      f"{v['max_s']:.6f}"] for k, v in result["kernels"].items()],
                    ["Function", "Best Rate MB/s", "Avg time", "Min time", "Max time"])
        if result.get("ipc") is not None:
            print(f"IPC {result['ipc']:.3f} ({result['instructions' if 'instructions' in result else 'instret']:.0f} "
                  f"instructions in {result['cycles']:.0f} cycles)")
        elif "ipc_note" in result:
            print(f"IPC not available: {result['ipc_note']}")

    def sections(self, records, out):
        return self._sim_sections(records, out) + self._qemu_sections(records, out)

    def _sim_sections(self, records, out):
        series = stream_series([r for r in records if r["point"]["target"] == "sim"])
        if not series:
            return []
        rows = []
        for sr in series:
            for p in sr["points"]:
                rows.append(series_columns(sr) + [fmt(p["distance_m"], 0)]
                            + [f"{p['MBps'][k]:.1f} ({100 * p['of_local'][k]:.1f} %)" for k in KERNELS]
                            + [f"{p['ipc']:.3f} ({100 * p['ipc_of_local']:.1f} %)", "yes" if p["validates"] else "NO"])
            rows.append(series_columns(sr) + ["local RAM"]
                        + [f"{sr['local_MBps'][k]:.1f}" for k in KERNELS] + [f"{sr['local_ipc']:.3f}", ""])
        slopes = [series_columns(sr) + [sr["n"], sr["reps"],
                   "-" if sr["triad_slope_per_m"] is None else f"{100 * sr['triad_slope_per_m']:+.3f}",
                   "-" if sr["ipc_slope_per_m"] is None else f"{100 * sr['ipc_slope_per_m']:+.3f}"] for sr in series]
        with figure(out / "stream_distance.png", "STREAM on remote memory vs distance (paper Fig 14)",
                    "round-trip distance (m)", "best rate / local RAM") as ax:
            draw_stream_distance(ax, series)
        paper_15g = ", ".join(f"{mem} {100 * v:.1f} %" for (mem, rate), v in PAPER_STREAM_36M.items() if rate == 15.0)
        head = ["profile", "memory", "window", "link"]
        return [
            ("STREAM on the soft CPU, local RAM and remote memory (paper Figs 12-14)",
             head + ["distance (m)"] + [f"{k} MB/s (of local)" for k in KERNELS]
             + ["IPC (of local)", "validates"], rows, "stream_distance.png",
             "The soft CPU (VexRiscv, rv32im, 250 MHz nominal, a 4 KiB data cache of 32 B lines) runs STREAM's "
             "kernels on 32-bit words. Through the uncached window every remote word is a round trip, so "
             "bandwidth falls with distance far more steeply than on the paper's A53 cores with caches and "
             "prefetch; through the cacheable window the data cache's refills and write-through words become line "
             "transactions in ReMAT's combiner (a read buffer fetching 128 B pairs, posted writes combined into "
             f"64 B lines). The paper's A53 cores keep more ({paper_15g} of local at 36 m, 15 Gb/s). MB/s from "
             "mcycle at the nominal clock (best of the timed repetitions); IPC from minstret / mcycle over all repetitions."),
            ("STREAM and IPC slopes over distance (paper Figs 14, 19)",
             head + ["elements", "repetitions", "Triad %/m", "IPC %/m"], slopes, None,
             f"Least-squares slopes of % of local against round-trip metres. The paper's IPC slope on the A53: "
             f"{100 * PAPER_IPC_SLOPE_PER_M:+.2f} %/m (70-83 % of local at 36 m)."),
            ("STREAM / baseline at 8 m (the paper's SB %, Table 1)",
             head + ["Triad of local", "paper", "deviation", f"target >= {100 * STREAM_CACHED_TARGET:.0f} %"],
             sb_rows(series), None,
             "Triad at 8 m round trip against the same series' local-RAM Triad. The paper's SB is its A53's STREAM "
             "over remote memory against its local STREAM (DDR4 70 %, HMC 94 %); our baseline is the compute card's "
             "local on-chip RAM, faster than a local DDR4. The target applies to remote DDR4 through the cacheable "
             "window with our link."),
        ]

    def _qemu_sections(self, records, out):
        st = [r for r in records if r["point"]["target"] in LINUX_TARGETS and r["point"]["benchmark"] == self.name]
        if not st:
            return []
        if len({r["point"]["target"] for r in st}) > 1:     # one table a Linux target
            return [section for target in LINUX_TARGETS for section in
                    self._qemu_sections([r for r in st if r["point"]["target"] == target], out)]
        by_node = defaultdict(list)
        for r in st:
            by_node[r["point"]["node"]].append(r["result"])
        target = st[0]["point"]["target"]
        best = {node: {k: max(x["kernels"][k]["best_MBps"] for x in rs) for k in KERNELS}
                for node, rs in sorted(by_node.items())}
        rows = [[f"node {node}", *(f"{v[k]:.0f}" for k in KERNELS),
                 "yes" if all(x["validates"] for x in by_node[node]) else "NO"] for node, v in best.items()]
        if 0 in best and 1 in best:
            rows.append(["node 1 / node 0", *(f"{100 * best[1][k] / best[0][k]:.1f} %" for k in KERNELS), ""])
        where = WHERE[target]
        plot = f"stream_{target}.png"
        with figure(out / plot, f"STREAM per kernel and NUMA node, {where} (paper Figs 12-13)",
                    "kernel", "best rate (MB/s)") as ax:
            draw_stream_per_node(ax, best)
        return [(f"STREAM under Linux, {where} (paper Figs 12-13)",
                 ["memory", *(f"{k} MB/s" for k in KERNELS), "validates"], rows, plot,
                 "numactl --membind to node 0 (with the CPUs) or node 1 (CPU-less, the remote memory's stand-in), "
                 "4 threads, 8-byte elements. QEMU's TCG emulates both nodes with the same host RAM: this shows "
                 "the flow works end to end; it makes no bandwidth claim.")]


def refuse_remote_node(values, targets):
    """The sim and the board-in-a-box have two memory nodes, local and remote."""
    node = max((v for v in values["node"] if v is not None), default=0)
    if node > 1 and any(t in ("sim", *LINUX_TARGETS) for t in targets):
        return "node", f"{node} is not accepted on {' or '.join(t for t in targets if t != 'host')}; accepted: " \
                       f"{NODE_DESCRIBED}"
    return None


def stream_series(records):
    """Per series (SERIES): local MB/s per kernel and IPC (node 0), and per distance the remote MB/s, % of
    local, IPC and IPC % of local (node 1), with %/m slopes of Triad and IPC fitted over distance."""
    out = []
    for key, rs in sorted(group(records, "stream", SERIES).items()):
        local = [r["result"] for r in rs if r["point"]["node"] == 0]
        remote = sorted((r for r in rs if r["point"]["node"] == 1), key=lambda r: r["point"]["distance_m"])
        if not local or not remote:
            continue
        ref = {k: sum(l["kernels"][k]["best_MBps"] for l in local) / len(local) for k in KERNELS}
        ref_ipc = sum(l["ipc"] for l in local) / len(local)
        points = [{"distance_m": r["point"]["distance_m"], "ipc": r["result"]["ipc"],
                   "ipc_of_local": r["result"]["ipc"] / ref_ipc, "validates": r["result"]["validates"],
                   "MBps": {k: r["result"]["kernels"][k]["best_MBps"] for k in KERNELS},
                   "of_local": {k: r["result"]["kernels"][k]["best_MBps"] / ref[k] for k in KERNELS}}
                  for r in remote]
        series = dict(zip(SERIES, key), local_MBps=ref, local_ipc=ref_ipc, points=points,
                      triad_slope_per_m=None, ipc_slope_per_m=None)
        ds = [p["distance_m"] for p in points]
        if len(set(ds)) > 1:
            series["triad_slope_per_m"] = linear_fit(ds, [p["of_local"]["triad"] for p in points])[1]
            series["ipc_slope_per_m"] = linear_fit(ds, [p["ipc_of_local"] for p in points])[1]
        out.append(series)
    return out


def series_columns(sr):
    """A sim series' profile, remote memory, window and link, as the report's first columns."""
    return [sr["profile"], memory_label(sr), sr["window"], f"{sr['lanes']}x{sr['rate_gbps']:g}G"]


def sb_rows(series):
    """Per series with an 8 m point: Triad of local beside the paper's SB % for its memory, and the verdict
    against STREAM_CACHED_TARGET where it applies (ours, remote DDR4, cacheable window)."""
    rows = []
    for sr in series:
        for p in sr["points"]:
            if p["distance_m"] != 8:
                continue
            ours = p["of_local"]["triad"]
            remote = sr["placement"] == "remote"
            paper_sb = PAPER_STREAM_8M.get(sr["memory"].upper()) if remote else None
            applies = remote and (sr["profile"], sr["memory"], sr["window"]) == ("ours", "ddr4", "cached")
            rows.append(series_columns(sr) + [
                f"{100 * ours:.1f} %",
                "-" if paper_sb is None else f"{100 * paper_sb:.0f} %",
                "-" if paper_sb is None else f"{100 * (ours - paper_sb) / paper_sb:+.1f} %",
                ("PASS" if ours >= STREAM_CACHED_TARGET else "FAIL") if applies else "-"])
    return rows


def draw_stream_distance(ax, series):
    for sr in series:
        ds = [p["distance_m"] for p in sr["points"]]
        for k in KERNELS:
            ax.plot(ds, [p["of_local"][k] for p in sr["points"]], "o-",
                    label=f"{sr['profile']} {memory_label(sr)} {sr['window']} {k} {sr['lanes']}x{sr['rate_gbps']:g}G")
    for (mem, rate), v in PAPER_STREAM_36M.items():
        ax.plot([36], [v], "x", label=f"paper: {mem} {rate:g}G at 36 m (4 A53 cores, caches)")
    ax.set_ylim(0, 1.05)


def draw_stream_per_node(ax, best):
    """Bars of each kernel's best rate, one bar per node side by side, the kernel's name under its group."""
    width = 0.8 / max(len(best), 1)
    for i, (node, v) in enumerate(best.items()):
        ax.bar([j + i * width for j in range(4)], [v[k] for k in KERNELS], width, label=f"node {node}")
    ax.set_xticks([j + width * (len(best) - 1) / 2 for j in range(4)], [k.capitalize() for k in KERNELS])
