"""Bandwidth and data integrity under an injected bit error rate, against the replay model (paper Fig 11)."""

import math

from monet.benchmarks import Benchmark, Param, Verdict, bandwidth, register
from monet.link import model as link_model
from monet.link import reliability
from monet.report.paper import BER_TARGETS, PAPER_BER_EFFICIENCY, SR_BER_TARGETS
from monet.report.tables import axis, figure, fmt, group, op_style, print_table
from monet.sim.link_setup import configure_link, configure_retry, grew, link_record, settled
from monet.soc.facts import REMOTE_TAGS, block_threshold

REPLAY_NAMES = {"gbn": "go-back-N", "sr": "selective repeat", "sr-repair": "selective repeat with repair"}
SERIES = ("profile", "replay", "op", "lanes", "rate_gbps", "distance_m", "burst")


def set_errors(target, ber=0.0, burst=1, seed=None):
    """Programs the channel's bit error rate (every lane), burst length and, if given, the generators' seed."""
    return target.fw.errinj(ber=block_threshold(ber), burst=burst, seed=seed)


def _reliability_counters(target):
    errinj = target.fw.errinj()
    retry = target.fw.retry()
    return errinj, retry


RETRY_KEYS = ("replays", "timeouts", "nak_replays", "reinit_replays", "replayed_txns", "replayed_bytes",
              "window_stalls", "credit_stalls", "naks", "duplicates", "out_of_order", "reinits", "down_cycles",
              "crc_errors", "frames", "deframer_overflow", "commit_overflow", "resends", "held", "repairable",
              "repair_missed", "repaired")
MAX_RUN_CYCLES = 5_000_000
# Go-back-N against its model where selective repeat has targets (36 and 100 m, SR_BER_TARGETS' rates): the
# measured efficiency within this many points of the model's, as a check that the gateware replays as modelled.
GBN_MODEL_TOLERANCE = 0.02


def ber_run_size(ber, profile, distance_m, lanes, rate_gbps, bits, bandwidth_GBps, replay="gbn"):
    """(replay model, accesses per run, predicted efficiency) of a BER point on a link whose error-free
    bandwidth is `bandwidth_GBps`: about `bits` line bits, fewer when the link would crawl."""
    model = reliability.replay_model(ber, profile, distance_m, lanes, rate_gbps, bandwidth_GBps, replay)
    lines_per_cycle = link_model.lines_per_cycle(bandwidth_GBps)
    efficiency = max(model["predicted_efficiency"], 0.001)
    count = math.ceil(bits / 2 / (reliability.blocks_per_line(profile) * 66))
    if efficiency < 0.5:   # a crawling link: bound the run's time rather than its bits
        count = max(2000, min(count, int(MAX_RUN_CYCLES * lines_per_cycle * efficiency)))
    return model, count, efficiency


def measure(target, ber, link, bits=1e10, burst=1, seed=1, op="read", outstanding=REMOTE_TAGS, reference_count=50000,
            log=None, replay="gbn"):
    """Sustained bandwidth under a bit error rate over LinkSettings `link`, with every byte checked, the link
    replaying go-back-N or by selective repeat (`replay`).

    Writes a seeded pattern over the span, then reads it back with checking, both under `ber` on every lane
    and both directions, for about `bits` line bits in all (fewer when the replay model predicts the run
    would exceed MAX_RUN_CYCLES while running at less than half speed). The error-free reference is the same
    benchmark at BER 0.
    """
    facts = target.build.constants
    configured = configure_link(target, link)
    timeout, nak = configure_retry(target, link.profile, configured["delay"], replay)
    set_errors(target, 0.0, seed=seed)
    reference = bandwidth.measure(target, op, outstanding, link, count=reference_count)
    model, count, efficiency = ber_run_size(ber, link.profile, link.distance_m, link.lanes, link.rate_gbps, bits,
                                            reference["bandwidth_GBps"], replay)
    cycles_per_line = 64 / efficiency
    set_errors(target, ber, burst=burst, seed=seed)
    errinj0, retry0 = _reliability_counters(target)
    runs = {}
    for run_op, check in (("write", False), ("read", True)):
        if log:
            log(f"BER {ber:g}: {run_op} {count} accesses{' with checking' if check else ''}")
        runs[run_op] = bandwidth.measure(target, run_op, outstanding, link, count=count, check=check,
                                         cycles_per_line=cycles_per_line)
    set_errors(target, 0.0)   # then the link settles: the run's last replays are counted, the counters agree
    errinj1, retry1 = settled(lambda: _reliability_counters(target))
    ends = {end: grew(retry1[end], retry0[end], RETRY_KEYS) for end in ("compute", "memory")}
    blocks = (errinj1["blocks_a2b"] - errinj0["blocks_a2b"]) + (errinj1["blocks_b2a"] - errinj0["blocks_b2a"])
    hits = (errinj1["hits_a2b"] - errinj0["hits_a2b"]) + (errinj1["hits_b2a"] - errinj0["hits_b2a"])
    measured = runs[op]
    line_bits = blocks * 66
    result = {
        "ber": ber, "burst": burst, "seed": seed, "op": op, "outstanding": outstanding,
        "distance_m": link.distance_m, "lanes": link.lanes, "rate_gbps": link.rate_gbps, "profile": link.profile,
        "memory": link.memory,
        "bandwidth_GBps": measured["bandwidth_GBps"],
        "error_free_bandwidth_GBps": reference["bandwidth_GBps"],
        "efficiency_vs_error_free": measured["bandwidth_GBps"] / reference["bandwidth_GBps"],
        "predicted": model,
        "replays": ends["compute"]["replays"] + ends["memory"]["replays"],
        "resends": ends["compute"]["resends"] + ends["memory"]["resends"],
        "held": ends["compute"]["held"] + ends["memory"]["held"],
        "replayed_bytes": ends["compute"]["replayed_bytes"] + ends["memory"]["replayed_bytes"],
        "crc_errors": ends["compute"]["crc_errors"] + ends["memory"]["crc_errors"],
        "repairable": ends["compute"]["repairable"] + ends["memory"]["repairable"],
        "repaired": ends["compute"]["repaired"] + ends["memory"]["repaired"],
        "corrupted_words": runs["read"]["errors"],
        "bus_errors": runs["write"]["bus_errors"] + runs["read"]["bus_errors"],
        "accesses": {k: r["transactions"] for k, r in runs.items()},
        "bits": line_bits,
        "bits_target": bits,
        "error_events": hits,
        "injected_bit_errors": hits * burst,
        "realised_ber": hits * burst / line_bits if line_bits else None,
        "ends": ends,
        "replay": replay,
        "retry": {"timeout_cycles": timeout, "nak": nak, **reliability.retry_window(
            link.profile, link.distance_m, link.lanes, link.rate_gbps, facts["remote_tags"], facts["link_retry_depth"],
            reference["bandwidth_GBps"])},
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "link": link_record(configured),
    }
    if link.profile == "monet":
        result["retry"]["note"] = reliability.PROFILE_RETRY_NOTE
    return result


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
        Param("replay", "how the link replays a damaged frame: go-back-N, or selective repeat (the good frames "
              "behind it kept, it alone resent), or selective repeat with repair (a frame whose CRC names one "
              "flipped bit put right at the receiver)", choices=reliability.REPLAYS, default="gbn",
              only_with=("profile", "ours")),
    )

    smallest = {"ber": [0.0], "bits": [1e6]}    # error-free: the same figures on every runner

    def sim_cycles(self, point):
        capacity = link_model.payload_capacity_GBps(point["lanes"], point["rate_gbps"])
        _, count, efficiency = ber_run_size(point["ber"], point["profile"], point["distance_m"], point["lanes"],
                                            point["rate_gbps"], point["bits"], capacity, axis(point, "replay"))
        return 2 * count / (link_model.lines_per_cycle(capacity) * efficiency)   # the write, then the read

    def run(self, target, point, log=None):
        result = measure(target, point["ber"], self.link(point), bits=point["bits"], burst=point["burst"],
                         seed=point["seed"], op=point["op"], log=log, replay=axis(point, "replay"))
        goal = self._goal(point)
        if goal is not None:
            result["target"] = {"efficiency_at_least": goal, "pass": result["efficiency_vs_error_free"] >= goal}
        check = self.model_check(point, result)
        if check is not None:
            result["model_check"] = check
        return result

    @classmethod
    def model_check(cls, point, result):
        """Go-back-N's measured efficiency against its model's at a point of the replay targets (None
        elsewhere): the gap and whether it is within GBN_MODEL_TOLERANCE."""
        if not cls._replay_point(point) or axis(point, "replay") != "gbn":
            return None
        gap = result["efficiency_vs_error_free"] - result["predicted"]["predicted_efficiency"]
        return {"within": GBN_MODEL_TOLERANCE, "gap": gap, "pass": abs(gap) <= GBN_MODEL_TOLERANCE}

    @staticmethod
    def _replay_point(point):
        """A point of the replay schemes' targets: our link at 36 or 100 m, a rate SR_BER_TARGETS names."""
        return point["profile"] == "ours" and point["distance_m"] in (36, 100) and point["ber"] in SR_BER_TARGETS

    @classmethod
    def _goal(cls, point):
        if point["profile"] != "ours":
            return None
        if axis(point, "replay") != "gbn":
            return SR_BER_TARGETS[point["ber"]] if cls._replay_point(point) else None
        return BER_TARGETS.get(point["ber"]) if point["distance_m"] == 36 else None

    def verdicts(self, point, result):
        intact = result["corrupted_words"] == 0 and result["bus_errors"] == 0
        lines = [Verdict("data integrity", intact, gates=True)]
        if "target" in result:
            lines.append(Verdict(f"efficiency {result['efficiency_vs_error_free']:.1%} (target >= "
                                 f"{result['target']['efficiency_at_least']:.0%} at BER {point['ber']:g}, "
                                 f"{point['distance_m']:g} m, {REPLAY_NAMES[axis(point, 'replay')]})",
                                 result["target"]["pass"], gates=True))
        if "model_check" in result:
            check = result["model_check"]
            lines.append(Verdict(f"go-back-N {result['efficiency_vs_error_free']:.1%} against its model "
                                 f"{result['predicted']['predicted_efficiency']:.1%} (within "
                                 f"{100 * check['within']:.0f} points)", check["pass"], gates=True))
        return lines

    def show(self, point, result):
        pred = result["predicted"]
        print(f"{point['op']} bandwidth under BER {point['ber']:g} (every lane, both directions, burst "
              f"{point['burst']}), {point['profile']} profile, {REPLAY_NAMES[axis(point, 'replay')]}, "
              f"{point['distance_m']:g} m, {point['lanes']} x {point['rate_gbps']:g} Gb/s")
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
            ["frames dropped (CRC) / of them one flipped bit (repairable) / repaired",
             f"{result['crc_errors']} / {result['repairable']} / {result['repaired']}"],
            ["replays / replayed bytes", f"{result['replays']} / {result['replayed_bytes']}"],
            ["frames resent alone / kept behind a lost one", f"{result['resends']} / {result['held']}"],
            ["cycles waiting for the retry window / for credits (both ends)",
             " / ".join(str(sum(result["ends"][end][k] for end in result["ends"])) for k in ("window_stalls",
                                                                                           "credit_stalls"))],
            ["corrupted words delivered", result["corrupted_words"]],
            ["bus errors", result["bus_errors"]],
            ["retry window needed / depth", f"{result['retry']['needed']} / {result['retry']['depth']}"],
        ], ["figure", "value"])

    def sections(self, records, out):
        ber = [r for r in records if r["point"]["benchmark"] == self.name]
        if not ber:
            return []
        ber = sorted(ber, key=lambda r: tuple(axis(r["point"], k) for k in SERIES) + (r["point"]["ber"],))
        with figure(out / "ber.png", "Bandwidth under bit errors (paper Fig 11)", "bit error rate (every lane)",
                    "bandwidth / error-free bandwidth") as ax:
            draw_ber(ax, records)
        return [(
            "Bandwidth under bit errors (paper Fig 11)",
            ["profile", "replay", "op", "distance (m)", "lanes", "rate", "BER", "GB/s", "vs error-free", "model",
             "line bits", "bit errors", "frames dropped", "replays", "corrupted", "bus err."],
            [[r["point"]["profile"], axis(r["point"], "replay"), r["point"]["op"], fmt(r["point"]["distance_m"], 0),
              r["point"]["lanes"],
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
        profile, replay, op, lanes, rate, distance, burst = key
        xs = [r["point"]["ber"] for r in rs]
        line, = ax.plot(xs, [r["result"]["efficiency_vs_error_free"] for r in rs], op_style(op),
                        label=f"{profile} {replay} {op} {lanes}x{rate:g}G {distance:g} m"
                              + (f", {burst}-bit bursts" if burst != 1 else ""))
        ax.plot(xs, [r["result"]["predicted"]["predicted_efficiency"] for r in rs], ":", color=line.get_color(),
                label="replay model")
    for rate, eff in PAPER_BER_EFFICIENCY.items():
        ax.plot([1e-12], [eff], "x", label=f"paper: 8x{rate:g}G at 1e-12")
    ax.set_ylim(0, 1.05)
