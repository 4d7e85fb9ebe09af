"""PRBS31 on every lane, both directions: bits, bit errors and the BER's confidence interval."""

from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.benchmarks.ber import set_errors
from monet.link import reliability
from monet.report.tables import print_table
from monet.sim import link_setup

DIRECTIONS = ("a2b", "b2a")


def measure(target, cycles=1_000_000, confidence=0.95):
    """PRBS31 on every active lane, both directions, for `cycles`: bits, bit errors, the BER and its
    confidence interval per direction (a2b checked at the memory card, b2a at the compute card)."""
    run = target.fw.prbs(cycles=cycles, wait=max(300, cycles // 20000))
    lanes = run["lanes"]
    result = {"cycles": cycles, "lanes": lanes, "confidence": confidence}
    for direction in ("a2b", "b2a"):
        d = run[direction]
        bits = d["words"] * lanes * 66
        errors = sum(d["errors"][:lanes])
        low, high = reliability.ber_bounds(bits, errors, confidence) if bits else (None, None)
        result[direction] = {"bits": bits, "errors": errors, "errors_per_lane": d["errors"][:lanes],
                             "relocks": d["relocks"], "ber": errors / bits if bits else None,
                             "ber_low": low, "ber_high": high}
    return result


@register
class Prbs(Benchmark):
    """PRBS31 bit error rate measurement on every lane, both directions."""

    order = 40
    axes = ("distance_m", "lanes", "rate_gbps")
    params = (
        Param("ber", "bit error rate injected on every lane", low=0.0, high=1e-3, default=0.0),
        Param("cycles", "cycles of PRBS (4 ns each; about 480 bits a cycle a direction at 8 x 15 Gb/s)", low=1,
              high=2**32 - 1, integer=True, default=1_000_000),
        Param("seed", "error generators' seed", low=0, high=2**32 - 1, integer=True, default=1),
    )

    smallest = {"cycles": [10_000]}

    def sim_cycles(self, point):
        return point["cycles"]

    def run(self, target, point, log=None):
        link = link_setup.configure_link(target, self.link(point))
        set_errors(target, point["ber"], burst=1, seed=point["seed"])
        result = measure(target, cycles=point["cycles"])
        set_errors(target, 0.0)
        result.update(injected_ber=point["ber"], distance_m=point["distance_m"], rate_gbps=point["rate_gbps"],
                      seed=point["seed"], link=link_setup.link_record(link))
        result["injected_within_bounds"] = all(result[d]["ber_low"] <= point["ber"] <= result[d]["ber_high"]
                                               for d in DIRECTIONS)
        return result

    def verdicts(self, point, result):
        return [Verdict("injected BER inside the interval in both directions", result["injected_within_bounds"],
                        gates=True)]

    def show(self, point, result):
        print(f"PRBS31 on {point['lanes']} lanes x {point['rate_gbps']:g} Gb/s, {point['distance_m']:g} m, "
              f"injected BER {point['ber']:g}, {point['cycles']} cycles")
        print_table([[d, f"{result[d]['bits']:.4g}", result[d]["errors"],
                      "-" if result[d]["ber"] is None else f"{result[d]['ber']:.3g}",
                      f"{result[d]['ber_low']:.3g} .. {result[d]['ber_high']:.3g}", result[d]["relocks"]]
                     for d in DIRECTIONS], ["direction", "bits", "bit errors", "BER", "95 % interval", "relocks"])
