"""Seeded data written through every remote window and read back: errors and faults."""

from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.report.tables import print_table
from monet.sim.link_setup import WINDOWS, configure_link, map_remote_windows
from monet.soc.facts import MEMCARD_SIZE


def measure(target, nbytes, seed, link, window="uncached"):
    """Writes seeded pseudo-random words over every remote window, reads them back, counts errors, over
    LinkSettings `link`. Through the cacheable window (the data cache and ReMAT's combiner) the words are read
    back twice: through the uncached window (they reached remote memory) and through the cacheable one (from a
    flushed data cache)."""
    if window not in WINDOWS:
        raise ValueError(f"memtest window {window!r} is not known; accepted: {', '.join(WINDOWS)}")
    configured = configure_link(target, link)
    windows = map_remote_windows(target, bfct_target=configured["bfct_target"])
    per_window = (nbytes // len(windows)) & ~3
    cached = window == "cached"
    used, errors, faults = [], 0, 0
    for offset in windows:
        fill = target.fw.fill(offset, per_window, seed, cached=cached)
        checks = [target.fw.check(offset, per_window, seed, cached=c)
                  for c in ((False, True) if cached else (False,))]
        window_errors = sum(c["errors"] for c in checks)
        errors += window_errors
        faults += int(fill["fault"]) + sum(int(c["fault"]) for c in checks)
        used.append({"offset": offset, "bytes": per_window, "errors": window_errors})
    return {"bytes": per_window * len(windows), "seed": seed, "errors": errors, "faults": faults,
            "windows": used, "lanes": link.lanes, "rate_gbps": link.rate_gbps, "distance_m": link.distance_m,
            "memory": link.memory, "window": window}


@register
class Memtest(Benchmark):
    """Seeded data through every remote window."""

    order = 90
    axes = ("distance_m", "lanes", "rate_gbps", "memory", "hmc_width", "placement", "hmc_native")
    params = (
        Param("bytes", "bytes written and read back, spread over the windows", low=1, high=MEMCARD_SIZE,
              integer=True, default=64 * 1024),
        Param("seed", "the data's seed", low=0, high=2**32 - 1, integer=True, default=1),
        Param("window", "the CPU's remote window: uncached, or cached (the data cache and ReMAT's combiner; "
              "read back through both windows)", choices=WINDOWS, default="uncached"),
    )

    smallest = {"bytes": [1024]}

    def sim_cycles(self, point):
        return point["bytes"] // 4 * 2 * 100   # each word written, then read, a round trip each

    def run(self, target, point, log=None):
        return measure(target, point["bytes"], point["seed"], self.link(point), point["window"])

    def verdicts(self, point, result):
        return [Verdict(f"total {result['bytes']} bytes, {result['errors']} errors, {result['faults']} faults, "
                        f"seed {result['seed']}", result["errors"] == 0 and result["faults"] == 0, gates=True)]

    def show(self, point, result):
        print_table([[f"{w['offset']:#x}", w["bytes"], w["errors"]] for w in result["windows"]],
                    ["window offset", "bytes", "errors"])
