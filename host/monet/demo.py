"""`make demo`: remote read and write latency over round-trip distance at 8 x 15 Gb/s, on the sim."""

import json
import platform
import sys
import time
from pathlib import Path

from monet.benchmarks import latency as latency_bench
from monet.link import model as link_model
from monet.link.settings import LinkSettings
from monet.report.stats import linear_fit
from monet.sim import SimBuild, SimTarget, tool_versions

DISTANCES_M = (0, 8, 18, 36, 100)
LANES, RATE = 8, 15.0


def run_demo(out_dir, samples=200):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    build = SimBuild(log=log).ensure()
    rows = []
    with SimTarget(build) as target:
        c0 = target.fw.counters()
        t0 = time.time()
        for i, d in enumerate(DISTANCES_M):
            for op in ("read", "write"):
                log(f"demo: [{len(rows) + 1}/{2 * len(DISTANCES_M)}] {op} at {d} m")
                rows.append(latency_bench.measure(target, op, LinkSettings(d, LANES, RATE), samples))
        wall = time.time() - t0
        c1 = target.fw.counters()
    speed = (c1["mcycle"] - c0["mcycle"]) / wall

    fits = {}
    for op in ("read", "write"):
        pts = [(r["distance_m"], r["latency_ns"]["mean"]) for r in rows if r["op"] == op]
        a, b, r2 = linear_fit([p[0] for p in pts], [p[1] for p in pts])
        fits[op] = {"intercept_ns": a, "ns_per_m": b, "r2": r2}

    manifest = {
        "gateware_hash": build.hash, "firmware_hash": build.firmware_hash, "versions": tool_versions(),
        "host": platform.platform(), "nominal_clock_hz": link_model.NOMINAL_CLK_HZ, "lanes": LANES,
        "rate_gbps": RATE, "fiber_ns_per_m": link_model.FIBER_NS_PER_M, "samples": samples,
        "sim_cycles_per_s": round(speed), "wall_seconds": round(wall, 1),
    }
    (out / "latency.json").write_text(json.dumps({"manifest": manifest, "results": rows, "fit": fits}, indent=1))

    lines = [
        f"# Remote latency over distance, {LANES} x {RATE:g} Gb/s (board-free sim)",
        "",
        f"Nominal clock {link_model.NOMINAL_CLK_HZ / 1e6:.0f} MHz; latency at the ReMAT port (request accepted to "
        "response delivered), one 64 B line transaction per access; gateware "
        f"`{build.hash}`, firmware `{build.firmware_hash}`.",
        "",
        "| round trip (m) | op | mean (ns) | p50 (ns) | p99 (ns) | min (ns) | max (ns) | CPU extra over local SRAM (ns) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ns = r["latency_ns"]
        lines.append(f"| {r['distance_m']} | {r['op']} | {ns['mean']:.1f} | {ns['p50']:.1f} | {ns['p99']:.1f} | "
                     f"{ns['min']:.1f} | {ns['max']:.1f} | {r['cpu_latency_ns']['p50']:.1f} |")
    lines += ["", "Linear fit, latency = a + b x distance:", ""]
    for op, f in fits.items():
        lines.append(f"- {op}: a = {f['intercept_ns']:.1f} ns, b = {f['ns_per_m']:.3f} ns/m "
                     f"(model {link_model.FIBER_NS_PER_M} ns/m), R^2 = {f['r2']:.5f}")
    read_8m = next(r for r in rows if r["op"] == "read" and r["distance_m"] == 8)
    lines += ["", "Breakdown of one 64 B remote read at 8 m (ns), modelled:", ""]
    lines += [f"- {k}: {v:.1f}" if isinstance(v, float) else f"- {k}: {v}" for k, v in read_8m["breakdown"].items()]
    stages = read_8m["stages"]
    if stages:
        lines += ["", f"The same read's stages as the cards' stage timers measured them ({stages['timed']} reads "
                      f"timed alone, ns):", ""]
        lines += [f"- {k}: {v:.1f}" for k, v in stages["ns"].items()]
        lines += [f"- the mean less the stages: {link_model.cycles_to_ns(stages['unaccounted_cycles']):.1f}"]
    lines += ["", f"Sim speed: {speed:,.0f} cycles/s over {wall:.1f} s."]
    table = "\n".join(lines) + "\n"
    (out / "latency.md").write_text(table)
    print(table)
    print(f"written: {out / 'latency.md'} and {out / 'latency.json'}")
    return 0
