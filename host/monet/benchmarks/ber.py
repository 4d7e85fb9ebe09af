"""Bandwidth and data integrity under an injected bit error rate, against the replay model (paper Fig 11)."""

from monet import bench
from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.link import model as link_model
from monet.report.paper import BER_TARGETS, PAPER_BER_EFFICIENCY
from monet.report.tables import figure, fmt, group, op_style, print_table

SERIES = ("profile", "op", "lanes", "rate_gbps", "distance_m", "burst")


@register
class Ber(Benchmark):
    """Bandwidth and data integrity under an injected bit error rate."""

    order = 30
    axes = ("distance_m", "lanes", "rate_gbps", "profile", "memory", "hmc_width")   # errors on our link: remote
    axis_defaults = {"distance_m": 36.0}
    params = (
        Param("ber", "bit error rate on every lane", low=0.0, high=1e-3, default=0.0, required=True),
        Param("bits", "line bits to push through the errors, both runs", low=1e6, high=1e13, default=1e10,
              sweep=[1e9]),
        Param("burst", "bits flipped per error event; --ber then sets the rate of events", low=1, high=32,
              integer=True, default=1),
        Param("op", "the run whose bandwidth is reported (both run, the read checks every byte)",
              choices=("read", "write"), default="read"),
        Param("seed", "error generators' seed", low=0, high=2**32 - 1, integer=True, default=1, campaign=False),
    )

    smallest = {"ber": [0.0], "bits": [1e6]}    # error-free: the same figures on every runner

    def sim_cycles(self, point):
        capacity = link_model.payload_capacity_GBps(point["lanes"], point["rate_gbps"])
        _, count, efficiency = bench.ber_run_size(point["ber"], point["profile"], point["distance_m"], point["lanes"],
                                                  point["rate_gbps"], point["bits"], capacity)
        return 2 * count / (link_model.lines_per_cycle(capacity) * efficiency)   # the write, then the read

    def run(self, target, point, log=None):
        result = bench.ber_point(target, point["ber"], point["distance_m"], point["lanes"], point["rate_gbps"],
                                 profile=point["profile"], memory=point["memory"],
                                 hmc_width=point["hmc_width"], bits=point["bits"],
                                 burst=point["burst"], seed=point["seed"], op=point["op"], log=log)
        goal = self._goal(point)
        if goal is not None:
            result["target"] = {"efficiency_at_least": goal, "pass": result["efficiency_vs_error_free"] >= goal}
        return result

    @staticmethod
    def _goal(point):
        return BER_TARGETS.get(point["ber"]) if point["profile"] == "ours" and point["distance_m"] == 36 else None

    def verdicts(self, point, result):
        intact = result["corrupted_words"] == 0 and result["bus_errors"] == 0
        lines = [Verdict("data integrity", intact, gates=True)]
        if "target" in result:
            lines.append(Verdict(f"efficiency {result['efficiency_vs_error_free']:.1%} (target >= "
                                 f"{result['target']['efficiency_at_least']:.0%} at BER {point['ber']:g}, 36 m)",
                                 result["target"]["pass"], gates=True))
        return lines

    def show(self, point, result):
        pred = result["predicted"]
        print(f"{point['op']} bandwidth under BER {point['ber']:g} (every lane, both directions, burst "
              f"{point['burst']}), {point['profile']} profile, {point['distance_m']:g} m, {point['lanes']} x "
              f"{point['rate_gbps']:g} Gb/s")
        print_table([
            ["bandwidth (GB/s)", f"{result['bandwidth_GBps']:.3f}"],
            ["error-free bandwidth (GB/s)", f"{result['error_free_bandwidth_GBps']:.3f}"],
            ["efficiency vs error-free", f"{result['efficiency_vs_error_free']:.2%}"],
            ["replay model: efficiency", f"{pred['predicted_efficiency']:.2%}"],
            ["replay model: errors/s x bytes/error",
             f"{pred['errors_per_s']:.3g} x {pred['bytes_replayed_per_error']:.0f} B"],
            ["line bits (both directions)", f"{result['bits']:.3g} (asked {point['bits']:.3g})"],
            ["injected bit errors / realised BER",
             f"{result['injected_bit_errors']} / {result['realised_ber'] or 0:.3g}"],
            ["frames dropped (CRC)", result["crc_errors"]],
            ["replays / replayed bytes", f"{result['replays']} / {result['replayed_bytes']}"],
            ["corrupted words delivered", result["corrupted_words"]],
            ["bus errors", result["bus_errors"]],
            ["retry window needed / depth", f"{result['retry']['needed']} / {result['retry']['depth']}"],
        ], ["figure", "value"])

    def sections(self, records, out):
        ber = [r for r in records if r["point"]["benchmark"] == self.name]
        if not ber:
            return []
        ber = sorted(ber, key=lambda r: tuple(r["point"].get(k) for k in SERIES) + (r["point"]["ber"],))
        with figure(out / "ber.png", "Bandwidth under bit errors (paper Fig 11)", "bit error rate (every lane)",
                    "bandwidth / error-free bandwidth") as ax:
            draw_ber(ax, records)
        return [(
            "Bandwidth under bit errors (paper Fig 11)",
            ["profile", "op", "distance (m)", "lanes", "rate", "BER", "GB/s", "vs error-free", "model", "line bits",
             "bit errors", "frames dropped", "replays", "corrupted", "bus err."],
            [[r["point"]["profile"], r["point"]["op"], fmt(r["point"]["distance_m"], 0), r["point"]["lanes"],
              fmt(r["point"]["rate_gbps"]), f"{r['point']['ber']:g}", fmt(r["result"]["bandwidth_GBps"], 2),
              fmt(r["result"]["efficiency_vs_error_free"], 4),
              fmt(r["result"]["predicted"]["predicted_efficiency"], 4), f"{r['result']['bits']:.3g}",
              r["result"]["injected_bit_errors"], r["result"]["crc_errors"], r["result"]["replays"],
              r["result"]["corrupted_words"], r["result"]["bus_errors"]] for r in ber],
            "ber.png",
            "Errors on every lane, both directions; a write pass then a checked read pass. 'corrupted' counts "
            "accesses whose data did not match (any word). Model: 1 / (1 + errors/s x bytes replayed per error / "
            "bandwidth) (host/monet/link/reliability.py), for single-bit errors. The paper's 1e-12 figures "
            f"({' / '.join(f'{100 * v:.1f}' for v in PAPER_BER_EFFICIENCY.values())} % at "
            f"{' / '.join(f'{r:g}' for r in PAPER_BER_EFFICIENCY)} Gb/s) cannot come from replay cost alone: at "
            "1e-12, 8 x 15 Gb/s sees 0.12 errors a second.")]


def draw_ber(ax, records):
    ax.set_xscale("log")
    for key, rs in sorted(group(records, "ber", SERIES).items()):
        rs = sorted((r for r in rs if r["point"]["ber"] > 0), key=lambda r: r["point"]["ber"])
        if not rs:
            continue
        profile, op, lanes, rate, distance, burst = key
        xs = [r["point"]["ber"] for r in rs]
        line, = ax.plot(xs, [r["result"]["efficiency_vs_error_free"] for r in rs], op_style(op),
                        label=f"{profile} {op} {lanes}x{rate:g}G {distance:g} m"
                              + (f", {burst}-bit bursts" if burst != 1 else ""))
        ax.plot(xs, [r["result"]["predicted"]["predicted_efficiency"] for r in rs], ":", color=line.get_color(),
                label="replay model")
    for rate, eff in PAPER_BER_EFFICIENCY.items():
        ax.plot([1e-12], [eff], "x", label=f"paper: 8x{rate:g}G at 1e-12")
    ax.set_ylim(0, 1.05)
