"""Pointer chase: the soft CPU's dependent loads around a random cycle of lines in remote memory.

Each load's address is the value the previous load returned, so nothing overlaps: the time per load is the
whole remote round trip as a program sees it (CPU bus, ReMAT, link, fiber, memory card), the figure a
latency-bound workload pays. The firmware builds the chain (`chase` console command) and reports where it
stopped; the end is checked against the chain this module computes from the same seed.
"""

from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.link import model as link_model
from monet.report.tables import fmt, print_table
from monet.sim import link_setup
from monet.soc.facts import CONSOLE_MAX_SAMPLES

LINE_BYTES = link_model.LINE_BYTES


def chain_end(window_base, offset, lines, loads, seed):
    """Where `chase` stops: xorshift32 (13, 17, 5) seeded with seed ^ 0x9e3779b9 shuffles the lines into one
    cycle (Sattolo's algorithm), each line holding the CPU address of the next; `loads` loads from the
    cycle's first line end at line order[loads % lines]."""
    state = (seed ^ 0x9E3779B9) or 1
    order = list(range(lines))
    for i in range(lines - 1, 0, -1):
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        j = state % i
        order[i], order[j] = order[j], order[i]
    return window_base + offset + order[loads % lines] * LINE_BYTES


@register
class Chase(Benchmark):
    """Pointer chase: dependent remote loads, the round trip a program sees."""

    order = 45
    params = (
        Param("lines", f"lines in the chain ({LINE_BYTES} B apart, visited in a seeded random cycle)", low=2,
              high=CONSOLE_MAX_SAMPLES, integer=True, default=256),
        Param("loads", "dependent loads timed", low=1, high=2**20, integer=True, default=1000),
        Param("seed", "the chain's seed", low=0, high=2**32 - 1, integer=True, default=1),
    )

    smallest = {"lines": [16], "loads": [50]}

    def sim_cycles(self, point):
        return (point["lines"] + point["loads"]) * 150   # the chain written, then one round trip a load

    def run(self, target, point, log=None):
        link = link_setup.configure_link(target, self.link(point))
        info = target.fw.facts()
        link_setup.map_remote_windows(target, info, link["bfct_target"])
        answer = target.fw.chase(addr=0, lines=point["lines"], n=point["loads"], seed=point["seed"],
                                 wait=max(300, point["loads"] // 200))
        ns = link_model.cycles_to_ns
        per_load = answer["cycles"] / answer["n"]
        hw_mean = answer["hw_sum"] / max(answer["hw_count"], 1)
        return {
            "lines": answer["lines"], "loads": answer["n"], "seed": point["seed"],
            "distance_m": point["distance_m"], "lanes": point["lanes"], "rate_gbps": point["rate_gbps"],
            "profile": point["profile"], "memory": point["memory"],
            "cycles": answer["cycles"], "instret": answer["instret"], "ipc": answer["instret"] / answer["cycles"],
            "load_cycles": per_load, "load_ns": ns(per_load),
            "remat_latency_cycles": {"min": answer["hw_min"], "mean": hw_mean, "max": answer["hw_max"]},
            "remat_latency_ns": {"min": ns(answer["hw_min"]), "mean": ns(hw_mean), "max": ns(answer["hw_max"])},
            "remat_samples": answer["hw_count"],
            "end": answer["end"],
            "expected_end": chain_end(info["window_base"], 0, point["lines"], point["loads"], point["seed"]),
            "clock_hz": link_model.NOMINAL_CLK_HZ, "link": link_setup.link_record(link),
            "measured_at": "load_*: the CPU's time per dependent load (mcycle); remat_latency_*: ReMAT port, "
                           "request accepted to response delivered",
        }

    def verdicts(self, point, result):
        followed = result["end"] == result["expected_end"] and result["remat_samples"] == result["loads"]
        return [Verdict(f"chain followed: {result['remat_samples']} remote loads, ended at {result['end']:#x} "
                        f"(expected {result['expected_end']:#x})", followed, gates=True)]

    def show(self, point, result):
        print(f"pointer chase over {result['lines']} lines, {result['loads']} dependent loads, {point['profile']} "
              f"profile, {point['memory']} memory, {point['distance_m']:g} m round trip, {point['lanes']} x "
              f"{point['rate_gbps']:g} Gb/s (ns at {link_model.NOMINAL_CLK_HZ / 1e6:.0f} MHz)")
        hw = result["remat_latency_ns"]
        print_table([["per load, as the CPU sees it", f"{result['load_ns']:.1f}", f"{result['load_cycles']:.1f}"],
                     ["ReMAT port, min", f"{hw['min']:.1f}", result["remat_latency_cycles"]["min"]],
                     ["ReMAT port, mean", f"{hw['mean']:.1f}", f"{result['remat_latency_cycles']['mean']:.1f}"],
                     ["ReMAT port, max", f"{hw['max']:.1f}", result["remat_latency_cycles"]["max"]]],
                    ["latency", "ns", "cycles"])
        print(f"IPC {result['ipc']:.3f} ({result['instret']} instructions in {result['cycles']} cycles)")

    def sections(self, records, out):
        rs = [r for r in records if r["point"]["benchmark"] == self.name]
        if not rs:
            return []
        rows = [[r["point"]["profile"], r["point"]["memory"], fmt(r["point"]["distance_m"], 0), r["point"]["lanes"],
                 fmt(r["point"]["rate_gbps"]), r["result"]["lines"], r["result"]["loads"], fmt(r["result"]["load_ns"]),
                 fmt(r["result"]["remat_latency_ns"]["mean"]), fmt(r["result"]["ipc"], 3),
                 "yes" if r["result"]["end"] == r["result"]["expected_end"] else "NO"] for r in rs]
        return [("Pointer chase: dependent remote loads",
                 ["profile", "memory", "distance (m)", "lanes", "rate", "lines", "loads", "ns per load",
                  "ReMAT mean (ns)", "IPC", "chain followed"], rows, None,
                 f"The soft CPU loads around a seeded random cycle of {LINE_BYTES} B lines in remote memory, each address the "
                 "value the load before returned: ns per load is the whole round trip a latency-bound program "
                 "pays (the CPU's bus path on top of the ReMAT port's figure).")]
