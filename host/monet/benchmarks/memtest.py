"""Seeded data written through every remote window and read back: errors and faults."""

from monet import bench
from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.report.tables import print_table
from monet.sim import link_setup
from monet.soc.facts import MEMCARD_SIZE


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
              "read back through both windows)", choices=link_setup.WINDOWS, default="uncached"),
    )

    smallest = {"bytes": [1024]}

    def sim_cycles(self, point):
        return point["bytes"] // 4 * 2 * 100   # each word written, then read, a round trip each

    def run(self, target, point, log=None):
        return bench.memtest(target, point["bytes"], point["seed"], lanes=point["lanes"],
                             rate_gbps=point["rate_gbps"], distance_m=point["distance_m"], memory=point["memory"],
                             hmc_width=point["hmc_width"],
                             placement=point["placement"], hmc_native=point["hmc_native"],
                             window=point["window"])

    def verdicts(self, point, result):
        return [Verdict(f"total {result['bytes']} bytes, {result['errors']} errors, {result['faults']} faults, "
                        f"seed {result['seed']}", result["errors"] == 0 and result["faults"] == 0, gates=True)]

    def show(self, point, result):
        print_table([[f"{w['offset']:#x}", w["bytes"], w["errors"]] for w in result["windows"]],
                    ["window offset", "bytes", "errors"])
