"""PRBS31 on every lane, both directions or around a loopback: bits, bit errors and the BER's confidence
interval."""

from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.benchmarks.ber import set_errors
from monet.link import reliability
from monet.report.tables import print_table
from monet.sim import link_setup
from monet.soc.facts import LOOPBACKS

DIRECTIONS = ("a2b", "b2a")
# What each loopback's words cross, in directions of the link: its bit errors are their sum (near: none, the
# loop is inside the compute card's PHY; far: out and back).
LOOP_CROSSINGS = {"near": 0, "far": 2}


def paths(loopback):
    """The checkers read: both directions, or the loop."""
    return DIRECTIONS if loopback == "none" else ("loop",)


def measure(target, cycles=1_000_000, confidence=0.95, loopback="none"):
    """PRBS31 on every active lane for `cycles`: bits, bit errors, the BER and its confidence interval per
    direction (a2b checked at the memory card, b2a at the compute card), or with a `loopback` (near, far) of
    the compute card's words come back to it (`loop`)."""
    run = target.fw.prbs(cycles=cycles, loopback=loopback, wait=max(300, cycles // 20000))
    lanes = run["lanes"]
    result = {"cycles": cycles, "lanes": lanes, "confidence": confidence, "loopback": loopback}
    for direction in paths(loopback):
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
        Param("loopback", "none (both directions), or only the compute card sends and checks its words coming "
              "back: near (from inside its PHY: no fiber, no errors) or far (sent back by the memory card's PHY: "
              "both directions' errors)", choices=tuple(LOOPBACKS), default="none"),
    )

    smallest = {"cycles": [10_000]}

    def sim_cycles(self, point):
        return point["cycles"]

    def run(self, target, point, log=None):
        link = link_setup.configure_link(target, self.link(point))
        set_errors(target, point["ber"], burst=1, seed=point["seed"])
        result = measure(target, cycles=point["cycles"], loopback=point["loopback"])
        set_errors(target, 0.0)
        expected = point["ber"] * LOOP_CROSSINGS.get(point["loopback"], 1)
        result.update(injected_ber=point["ber"], expected_ber=expected, distance_m=point["distance_m"],
                      rate_gbps=point["rate_gbps"], seed=point["seed"], link=link_setup.link_record(link))
        result["injected_within_bounds"] = all(result[d]["ber_low"] <= expected <= result[d]["ber_high"]
                                               for d in paths(point["loopback"]))
        return result

    def verdicts(self, point, result):
        where = "in both directions" if result["loopback"] == "none" else f"around the {result['loopback']} loop"
        return [Verdict(f"expected BER {result['expected_ber']:g} inside the interval {where}",
                        result["injected_within_bounds"], gates=True)]

    def show(self, point, result):
        print(f"PRBS31 on {point['lanes']} lanes x {point['rate_gbps']:g} Gb/s, {point['distance_m']:g} m, "
              f"injected BER {point['ber']:g}, {point['cycles']} cycles, loopback {point['loopback']}")
        print_table([[d, f"{result[d]['bits']:.4g}", result[d]["errors"],
                      "-" if result[d]["ber"] is None else f"{result[d]['ber']:.3g}",
                      f"{result[d]['ber_low']:.3g} .. {result[d]['ber_high']:.3g}", result[d]["relocks"]]
                     for d in paths(point["loopback"])],
                    ["direction", "bits", "bit errors", "BER", "95 % interval", "relocks"])
