"""Remote read or write latency at the ReMAT port and its breakdown (paper Figs 5, 6 and Eq. 1)."""

from collections import defaultdict

from monet.benchmarks import Benchmark, Param, Verdict, paper_check, register
from monet.link import model as link_model
from monet.link.profiles import PROFILES
from monet.report.paper import LOGIC_CYCLES_TARGET, OPENHMC_READ_NS, PAPER_LATENCY_100M_NS, PAPER_LATENCY_NS
from monet.report.stats import linear_fit, summary
from monet.report.tables import (MEMORY_SERIES, OP_LINES, figure, fmt, group, memory_label, op_style, paper_memory,
                                 print_table)
from monet.sim.link_setup import configure_link, link_record, map_remote_windows, memory_service
from monet.soc.facts import CONSOLE_MAX_SAMPLES, TARGET_REMOTE0

OPS = ("read", "write")


def measure(target, op, link, samples=200):
    """Remote read or write latency over LinkSettings `link`: `samples` single 32-bit accesses, each a 64 B line
    transaction."""
    configured = configure_link(target, link)
    windows = map_remote_windows(target, bfct_target=configured["bfct_target"])
    # Warm-up access so the first sample does not pay for the I-cache.
    target.fw.lat(op=op, addr=windows[0], n=4)
    # The stage timers time only what takes the link (a local or native HMC access leaves it at ReMAT).
    over_link = configured["bfct_target"] == TARGET_REMOTE0
    if over_link:
        target.fw.stages(clear=1)
    answer, memory_figures = memory_service(
        target, lambda: target.fw.lat(op=op, addr=windows[0], n=samples, stride=link_model.LINE_BYTES))
    timers = target.fw.stages() if over_link else {}
    if answer["fault"]:
        raise RuntimeError(f"remote {op} faulted: kind {answer['fault_kind']} at {answer['fault_addr']:#x}")
    hw = answer["hw_cycles"]
    cpu = answer["cpu_cycles"]
    hw_summary = summary(hw)
    cpu_summary = summary(cpu)
    result = {
        "op": op,
        "distance_m": link.distance_m,
        "lanes": link.lanes,
        "rate_gbps": link.rate_gbps,
        "samples": samples,
        "latency_cycles": hw_summary,
        "latency_ns": {k: link_model.cycles_to_ns(v) for k, v in hw_summary.items()},
        "cpu_latency_cycles": cpu_summary,  # beyond the same access to local SRAM
        "cpu_latency_ns": {k: link_model.cycles_to_ns(v) for k, v in cpu_summary.items()},
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "profile": link.profile,
        "memory": link.memory,
        "placement": link.placement,
        "link": link_record(configured),
        **memory_figures,
        "measured_at": "latency_*: ReMAT port, request accepted to response delivered; cpu_latency_*: what the "
                       "CPU waits beyond the same access to local SRAM; memory_service_cycles: the memory "
                       "card's mean time in its memory",
    }
    # On the means: the memory's share is a mean (a DRAM's varies with rows, refreshes and turnarounds).
    memory_cycles = memory_figures["memory_service_cycles"] + configured["memlat"]
    if over_link:
        result["breakdown"] = link_model.read_breakdown(hw_summary["mean"], link.distance_m, link.lanes,
                                                        link.rate_gbps, memory_cycles=memory_cycles,
                                                        link_ns=PROFILES[link.profile].link_ns(link.rate_gbps))
    else:   # no link of ours: ReMAT and the card's front end, the memory (native HMC: its fiber apart)
        fiber = 2 * configured["hmc"]["fiber_ns"] if configured["hmc_native"] else 0.0
        result["breakdown"] = link_model.linkless_breakdown(hw_summary["mean"], memory_cycles, fiber)
    result["breakdown_ns"] = link_model.breakdown_by_layer(result["breakdown"])
    result["stages"] = link_model.measured_stages(timers, hw_summary["mean"], memory_cycles)
    if op == "write":
        result["breakdown"]["note"] = "breakdown modelled for a 64 B read; a write moves the line the other way"
    return result


@register
class Latency(Benchmark):
    """Remote read/write latency and its breakdown."""

    order = 10
    params = (
        Param("op", "read or write", choices=OPS, default="read", required=True),
        Param("samples", "accesses", low=1, high=CONSOLE_MAX_SAMPLES, integer=True, default=200, sweep=[100]),
    )

    smallest = {"op": ["read"], "samples": [5]}

    def sim_cycles(self, point):
        return point["samples"] * 1000      # one round trip and the console's answer per sample

    def run(self, target, point, log=None):
        return measure(target, point["op"], self.link(point), point["samples"])

    def verdicts(self, point, result):
        if (point["memory"], point["placement"], point["hmc_width"], point["op"]) == ("hmc", "local", "full", "read") \
                and point["rate_gbps"] in OPENHMC_READ_NS:
            ours, theirs = result["latency_ns"]["p50"], OPENHMC_READ_NS[point["rate_gbps"]]
            return [Verdict(f"unloaded HMC read, ReMAT port to port: {ours:.1f} ns against openHMC's {theirs:g} ns "
                            f"(its user application to the HMC and back)", ours <= theirs)]
        if point["profile"] == "ours":
            cycles = result["breakdown"]["remat_link_logic_cycles"]
            return [Verdict(f"ReMAT + link logic: {cycles:.1f} cycles (target <= {LOGIC_CYCLES_TARGET})",
                            cycles <= LOGIC_CYCLES_TARGET)]
        if point["op"] in PAPER_LATENCY_NS:
            comparable = (point["distance_m"] == 8 and point["rate_gbps"] == 15.0 and point["lanes"] == 8
                          and point["memory"] == "ddr4")
            return [paper_check(f"remote {point['op']} latency p50 (ns)", result["latency_ns"]["p50"],
                                PAPER_LATENCY_NS[point["op"]], comparable, "8 lanes at 8 m with DDR4")]
        return []

    def show(self, point, result):
        ns, cy = result["latency_ns"], result["latency_cycles"]
        print(f"remote {point['op']} latency, {point['profile']} profile, {point['memory']} memory, "
              f"{point['distance_m']:g} m round trip, {point['lanes']} x {point['rate_gbps']:g} Gb/s "
              f"({result['samples']} samples, ns at {link_model.NOMINAL_CLK_HZ / 1e6:.0f} MHz)")
        print_table([[k, f"{ns[k]:.1f}", f"{cy[k]:.1f}"] for k in ("min", "mean", "p50", "p99", "max")],
                    ["stat", "ns", "cycles"])
        cpu = result["cpu_latency_ns"]
        print(f"CPU waits p50 {cpu['p50']:.1f} ns (max {cpu['max']:.1f} ns) beyond the same access to local SRAM")
        print("\nbreakdown of one 64 B remote read (mean, modelled: the parts the model knows, logic the rest):")
        print_table([[k, f"{v:.1f}" if isinstance(v, float) else v] for k, v in result["breakdown"].items()],
                    ["part", "value"])
        stages = result.get("stages")
        if stages:
            print(f"\nmeasured stages (the cards' stage timers: {stages['timed']} accesses timed alone, "
                  f"{stages['spoiled']} samples spoiled):")
            print_table([[k, f"{stages['cycles'][k]:.2f}", f"{stages['ns'][k]:.1f}"] for k in stages["cycles"]]
                        + [["total", f"{stages['total_cycles']:.2f}",
                            f"{link_model.cycles_to_ns(stages['total_cycles']):.1f}"]],
                        ["stage", "cycles", "ns"])
            print(f"the latency's mean less the stages: {stages['unaccounted_cycles']:.2f} cycles")

    def paper_figures(self, records, profile):
        """The paper's latency figures: the remote DDR4 write at 8 m (8 x 15 Gb/s), Eq. 1's 100 m write and read
        and its latency per round-trip metre, from this profile's fits (DDR4 where it ran, else the SRAM)."""
        w8 = paper_memory([r for r in records if r["point"]["benchmark"] == "latency" and r["point"]["op"] == "write"
                           and r["point"]["distance_m"] == 8 and r["point"]["lanes"] == 8
                           and r["point"]["rate_gbps"] == 15.0 and r["point"]["profile"] == profile])
        fits = [f for f in distance_fits(records) if f["lanes"] == 8 and f["rate_gbps"] == 15.0
                and f["profile"] == profile]

        def fit_of(op):
            mine = [f for f in fits if f["op"] == op]
            return next((f for f in mine if f["memory"] == "ddr4"), None) or \
                next((f for f in mine if f["memory"] == "sram"), None)

        write, read = fit_of("write"), fit_of("read")
        slope = write or read     # the write's fit where there is one, as the paper's Eq. 1
        return {"remote DDR4 write latency, 8 m": w8[0]["result"]["latency_ns"]["mean"] if w8 else None,
                "remote DDR4 write latency, 100 m (Eq. 1)": write and write["at_100m_ns"],
                "remote DDR4 read latency, 100 m (Eq. 1)": read and read["at_100m_ns"],
                "latency per round-trip metre, DDR4": slope and slope["L_m_ns_per_m"]}

    def sections(self, records, out):
        rows = [[r["point"]["profile"], memory_label(r["point"]), r["point"]["op"], fmt(r["point"]["distance_m"], 0),
                 r["point"]["lanes"], fmt(r["point"]["rate_gbps"], 1), fmt(r["result"]["latency_ns"]["mean"]),
                 fmt(r["result"]["latency_ns"]["p50"]), fmt(r["result"]["latency_ns"]["p99"]),
                 fmt(r["result"]["breakdown"]["remat_link_logic_cycles"], 0)]
                for r in records if r["point"]["benchmark"] == self.name]
        sections = []
        if rows:
            sections.append((
                "Latency (paper Fig 5)", ["profile", "memory", "op", "distance (m)", "lanes", "rate (Gb/s)",
                                                 "mean (ns)", "p50 (ns)", "p99 (ns)", "logic (cycles)"], rows, None,
                "Latency at the ReMAT port, one 64 B line transaction per access. Profiles: ours (MONet-open "
                "link) and monet (the paper's streamer + Aurora 64B/66B, host/monet/link/profiles.py). Logic "
                "cycles: what is left after fiber, PHY or Aurora, serialization and memory."))
        fits = distance_fits(records)
        if fits:
            with figure(out / "latency_distance.png", "Latency vs distance with Eq. 1 fit (paper Fig 6)",
                        "round-trip distance (m)", "remote latency (ns)") as ax:
                draw_distance(ax, fits)
            sections.append((
                "Latency vs distance, Eq. 1 fit (paper Fig 6)",
                ["profile", "memory", "op", "lanes", "rate", "L_m (ns/m)", "intercept (ns)", "R^2", "at 100 m (ns)"],
                [[f["profile"], f["label"], f["op"], f["lanes"], fmt(f["rate_gbps"]), fmt(f["L_m_ns_per_m"], 3),
                  fmt(f["intercept_ns"]), fmt(f["r2"], 5), fmt(f["at_100m_ns"])] for f in fits],
                "latency_distance.png",
                "Eq. 1: R(d) = L_latency + L_m d + M_overhead; the intercept is L_latency + M_overhead "
                "(the paper: M_overhead 16.2 ns write, 37.4 ns read). Fiber model: "
                f"{link_model.FIBER_NS_PER_M} ns per round-trip metre."))
        return sections


FIT_SERIES = ("op", "lanes", "rate_gbps", "profile", *MEMORY_SERIES)


def distance_fits(records):
    """Eq. 1 per remote series (FIT_SERIES): latency = intercept + L_m x distance; 100 m extrapolation. Local
    memory is not behind the fiber: its points make no fit."""
    fits = []
    for key, rs in sorted(group(records, "latency", FIT_SERIES).items()):
        series = dict(zip(FIT_SERIES, key))
        if series["placement"] == "local":
            continue
        by_d = defaultdict(list)
        for r in rs:
            by_d[r["point"]["distance_m"]].append(r["result"]["latency_ns"]["mean"])
        if len(by_d) < 2:
            continue
        xs = sorted(by_d)
        ys = [sum(by_d[x]) / len(by_d[x]) for x in xs]
        a, b, r2 = linear_fit(xs, ys)
        fits.append({**series, "label": memory_label(series), "distances": xs, "latency_ns": ys, "intercept_ns": a,
                     "L_m_ns_per_m": b, "r2": r2, "at_100m_ns": a + 100 * b})
    return fits


def draw_distance(ax, fits):
    for f in fits:
        label = (f"{f['profile']} {f['label']} {f['op']} {f['lanes']}x{f['rate_gbps']:g}G "
                 f"({f['L_m_ns_per_m']:.2f} ns/m)")
        line, = ax.plot(f["distances"], f["latency_ns"], op_style(f["op"], line=None), label=label)
        xs = [0, max(100, max(f["distances"]))]
        ax.plot(xs, [f["intercept_ns"] + f["L_m_ns_per_m"] * x for x in xs], OP_LINES.get(f["op"], "-"),
                color=line.get_color())
    ax.plot([8], [PAPER_LATENCY_NS["write"]], "kx", label="paper: remote DDR4 write, 8 m")
    ax.plot([100, 100], [PAPER_LATENCY_100M_NS["write"], PAPER_LATENCY_100M_NS["read"]], "k+",
            label="paper: Eq. 1 at 100 m (DDR4 write, read)")
