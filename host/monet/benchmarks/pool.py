"""Memory pooling on the pooled model: several requesters (the compute card and traffic cards, each a benchmark
block on a link of its own) saturating one memory card through its ports (litex/cores/memcard/ports.py):
aggregate and per-requester bandwidth against the card's one-requester limit, fairness (Jain's index) and each
requester's share against its weight, and the compute card's read latency under that load beside its unloaded
figure."""

import math

from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.link import model as link_model
from monet.report.stats import histogram_percentile
from monet.report.tables import fmt, print_table
from monet.sim.link_setup import configure_link, link_record
from monet.soc.facts import LINE_BYTES, PBB_BUCKETS, POOLED_PORTS, REMOTE_TAGS, TARGET_REMOTE0

SHARE_MAX = 15   # MemoryPorts' share registers: 4 bits (0 counts as 1)
# Acceptance (issue 48): the requesters together reach this share of the card's one-requester limit; with equal
# weights Jain's index reaches FAIRNESS_GOAL; each requester's share of the lines lies within SHARE_TOLERANCE of its
# weight's share.
AGGREGATE_GOAL = 0.9
FAIRNESS_GOAL = 0.95
SHARE_TOLERANCE = 0.05
LATENCY_PROBES = 200   # the compute card's lone reads timed, unloaded and under load
UNLOADED_SHIFT = 2     # their histogram unloaded: 4-cycle buckets (a lone read takes some 60 cycles)
PORT_HIST_SHIFT = 6    # the ports' own latency histograms: 64-cycle buckets
ISOLATION_LINES = 64   # the lines another card tries to overwrite
OWNER_SEED, INTRUDER_SEED = 11, 12
# The memory card's requests in flight at most: enough for the DDR4's throughput (one requester reaches the same
# bandwidth with 64 as with 512), few enough that requests wait at the ports, where the shares decide, and that a
# new one waits behind at most that many at the card.
DEFAULT_IN_FLIGHT = 64


EQUAL = "equal"   # the weights' default: one each, as many as the requesters


def parse_weights(text, requesters=POOLED_PORTS):
    """'4:2:1:1' as [4, 2, 1, 1]: one weight a requester, 1..SHARE_MAX each; 'equal': 1 for each of
    `requesters`."""
    if text == EQUAL:
        return [1] * requesters
    weights = [int(w) for w in str(text).split(":")]
    if not 2 <= len(weights) <= POOLED_PORTS or not all(1 <= w <= SHARE_MAX for w in weights):
        raise ValueError(text)
    return weights


class WeightsParam(Param):
    """The arbiter's weights, one a requester ('4:2:1:1'), or 'equal'."""

    def check(self, value):
        try:
            parse_weights(value)
        except ValueError:
            return False
        return isinstance(value, str)


def arbiter(weights):
    """How MemoryPorts' arbiter runs with `weights`: equal shares are round robin, others weighted turns."""
    return "round robin" if len(set(weights)) == 1 else "weighted"


def jain_index(values):
    """Jain's fairness index of `values`: 1 when all are equal, 1/n when one has everything."""
    total = sum(values)
    squares = sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares else None


def weight_errors(lines, weights):
    """Each requester's share of the lines against its weight's share: share / weight share - 1."""
    total, weight = sum(lines), sum(weights)
    return [(n / total) / (w / weight) - 1 for n, w in zip(lines, weights)]


def latency_shift(cycles):
    """The benchmark block's histogram bucket width (2**shift) whose buckets below the last cover `cycles`."""
    return max(0, math.ceil(math.log2(max(cycles, 1) / (PBB_BUCKETS - 1))))


def probe_figures(run, shift):
    """A latency probe's run (the `pool` answer's) as ns: min, p50, p99, max (None: beyond the histogram)."""
    figures = {"min": link_model.cycles_to_ns(run["lat_min"]), "max": link_model.cycles_to_ns(run["lat_max"]),
               "mean": link_model.cycles_to_ns(run["lat_sum"] / max(run["completed"], 1))}
    for p in (50, 99):
        cycles = histogram_percentile(run["hist"], shift, p, highest=run["lat_max"])
        figures[f"p{p}"] = None if cycles is None else link_model.cycles_to_ns(cycles)
    return figures


def bandwidth_GBps(lines, cycles):
    return lines * LINE_BYTES / (cycles * link_model.CLK_PS * 1e-12) / 1e9


def set_up(target, link, requesters, weights, in_flight):
    """Each card's link as `link`; card c's window section 0 on the memory card's section c, its port's range
    that section alone (so that a card reaches only its own) and its share its weight; the memory card's
    requests in flight at most `in_flight`. Returns the bytes of a card's section and the links' records."""
    info = target.fw.facts()
    if info.get("traffic_cards", 0) + 1 < requesters:
        raise PoolError(f"requesters {requesters} needs the pooled model's {requesters - 1} traffic cards; this SoC "
                        f"has {info.get('traffic_cards', 0)} (monet sim build --model pooled)")
    section = info["section_bytes"]
    links = []
    for card in range(requesters):
        links.append(link_record(configure_link(target, link, card=card)))
        own_sections(target, card, section, [card])
        target.fw.ports(port=card, share=weights[card])
    target.fw.ports(hist_shift=PORT_HIST_SHIFT, in_flight=in_flight)
    return section, links


def own_sections(target, card, section, sections):
    """Card `card`'s window sections 0.. on the memory card's `sections` (in order) and its port's range those
    lines alone (consecutive sections)."""
    for idx, base in enumerate(sections):
        target.fw.set_bfct(idx, card=card, en=1, r=1, w=1, target=TARGET_REMOTE0, base=base)
    lines = section // LINE_BYTES
    target.fw.ports(port=card, first=sections[0] * lines, last=(sections[-1] + 1) * lines - 1)


def port_ranges(target, ports):
    """{port: (first, last)}: the ranges of the first memory card's `ports` as they are, for put_ranges."""
    answer = target.fw.ports()["ports"]
    return {port: (answer[port]["first"], answer[port]["last"]) for port in ports}


def put_ranges(target, ranges):
    """The ports' ranges as port_ranges gave them."""
    for port, (first, last) in ranges.items():
        target.fw.ports(port=port, first=first, last=last)


def pooled_memory_refusal(point):
    """Why the pooled model cannot run a point's memory (None: it can): its memory cards are reached over the
    cards' links and hold SRAM and DDR4."""
    if point["memory"] == "hmc" or point["placement"] != "remote":
        return "the pooled model's memory cards hold SRAM and DDR4, reached over each card's link: memory sram or " \
               "ddr4, placement remote"
    return None


class PoolError(RuntimeError):
    """A pool point that cannot run on this SoC (the message names what it needs)."""


def run_budget(lines):
    """A run of `lines` lines in all over the pooled memory card: the console's timeout (2 million cycles and 64 a
    line) and the host's wait for its answer (300 s at least, a second for 50 lines)."""
    return {"timeout": 2_000_000 + 64 * lines, "wait": max(300, lines // 50)}


def pool_run(target, cards, op, pattern, span, count, outstanding, shift, seed=1):
    """The `pool` command's run of `cards` together (count and outstanding: one a card); RuntimeError naming the
    cards when it times out or a card's accesses failed."""
    lines = max(count) if isinstance(count, list) else count
    answer = target.fw.pool(cards=cards, op=op, pattern=pattern, addr=0, span=span, count=count,
                            outstanding=outstanding, seed=seed, shift=shift, **run_budget(lines * len(cards)))
    failed = [r["card"] for r in answer["runs"] if r["completed"] != r["count"] or r["errors"] or r["bus_errors"]]
    if answer["timed_out"] or failed:
        raise RuntimeError(f"pool run of cards {cards}: " + ("timed out" if answer["timed_out"] else
                           f"cards {failed} did not complete every access cleanly"))
    return answer


def isolation(target, section, lines=ISOLATION_LINES):
    """Card 0 writes `lines` lines of its section; card 1, its window's second section mapped onto card 0's,
    writes over them with other data: each of its writes is refused at the memory card (its port's `refused`
    moves by `lines`) and comes back to it as a bus error; card 0 reads its lines back as it wrote them."""
    fw = target.fw
    span = lines * LINE_BYTES

    def run(card, op, addr, seed, check=0):
        answer = fw.pbb(card=card, op=op, pattern="seq", addr=addr, span=span, count=lines, outstanding=8,
                        seed=seed, check=check)
        if answer["timed_out"] or answer["completed"] != lines:
            raise RuntimeError(f"isolation: card {card}'s {op}s did not complete ({answer['completed']} of {lines})")
        return answer

    run(0, "write", 0, OWNER_SEED)
    refused = fw.ports()["ports"][1]["refused"]
    fw.set_bfct(1, card=1, en=1, r=1, w=1, target=TARGET_REMOTE0, base=0)
    intruder = run(1, "write", section, INTRUDER_SEED)
    fw.set_bfct(1, card=1, en=0, r=0, w=0, target=TARGET_REMOTE0, base=0)
    moved = (fw.ports()["ports"][1]["refused"] - refused) % 2**32
    owner = run(0, "read", 0, OWNER_SEED, check=1)
    return {"lines": lines, "intruder_bus_errors": intruder["bus_errors"], "refused": moved,
            "owner_errors": owner["errors"] + owner["bus_errors"]}


def isolated(figures):
    """Whether `isolation`'s figures show every intruding write refused and the owner's lines unchanged."""
    return figures["refused"] == figures["intruder_bus_errors"] == figures["lines"] and not figures["owner_errors"]


def measure(target, link, requesters=POOLED_PORTS, weights=None, op="read", pattern="random", count=4000,
            outstanding=128, in_flight=DEFAULT_IN_FLIGHT, probes=LATENCY_PROBES):
    """The memory card's one-requester limit: card 0 alone over the sections the requesters use together (a
    power of two of them: the benchmark block's span), `outstanding` accesses in flight. Then `requesters`
    cards together, each over its own section with `outstanding` in flight and a count in proportion to its
    weight (so that they end together), and the lines each port moved while all were busy: aggregate and
    per-requester bandwidth, Jain's index, each share against its weight. Then the compute card's lone random
    reads (`probes`), unloaded and with the traffic cards saturating the memory card: p50 and p99. First of
    all, `isolation`: a card's writes into another's section are refused."""
    weights = weights or [1] * requesters
    section, links = set_up(target, link, requesters, weights, in_flight)
    isolated = isolation(target, section)
    cards = list(range(requesters))
    footprint = 1 << (requesters.bit_length() - 1)   # sections
    own_sections(target, 0, section, list(range(footprint)))
    alone = pool_run(target, [0], op, pattern, footprint * section, count, outstanding, shift=8)
    own_sections(target, 0, section, [0])
    alone_GBps = bandwidth_GBps(alone["window_lines"][0], alone["window_cycles"])
    counts = [2 * max(1, round(count * w / max(weights) / 2)) for w in weights]
    together = pool_run(target, cards, op, pattern, section, counts, outstanding, shift=8)
    lines = together["window_lines"][:requesters]
    per_card = [bandwidth_GBps(n, together["window_cycles"]) for n in lines]
    # The compute card's lone reads: unloaded, then behind the others' traffic, which lasts long enough to cover
    # them (the probes at up to 8 times their unloaded worst).
    unloaded = pool_run(target, [0], "read", "random", section, probes, 1, shift=UNLOADED_SHIFT)["runs"][0]
    shift = latency_shift(8 * unloaded["lat_max"])
    probe_cycles = probes * 8 * unloaded["lat_max"]
    # The traffic cards read at random whatever the point's pattern, each at most its weight's share of what one
    # requester moved alone (its pattern's, sequential lines the fastest): counts that outlast the probes.
    alone_rate = alone["window_lines"][0] / alone["window_cycles"]
    traffic = [max(2, 2 * round(probe_cycles * alone_rate * w / sum(weights[1:]) / 2)) for w in weights[1:]]
    # The probe starts last, behind the traffic cards' starts.
    loaded = pool_run(target, [*cards[1:], 0], "read", "random", section, [*traffic, probes],
                      [*[outstanding] * len(traffic), 1], shift=shift)
    probe = next(r for r in loaded["runs"] if r["card"] == 0)
    return {
        "requesters": requesters, "weights": weights, "op": op, "pattern": pattern, "outstanding": outstanding,
        "in_flight": in_flight, "section_bytes": section,
        "alone": {"sections": footprint, "lines": alone["window_lines"][0], "cycles": alone["window_cycles"],
                  "bandwidth_GBps": alone_GBps},
        "together": {"counts": counts, "lines": lines, "cycles": together["window_cycles"],
                     "bandwidth_GBps": per_card, "aggregate_GBps": sum(per_card)},
        "aggregate_share": sum(per_card) / alone_GBps,
        "jain_index": jain_index(lines),
        "weight_errors": weight_errors(lines, weights),
        "latency_ns": {"unloaded": probe_figures(unloaded, UNLOADED_SHIFT), "loaded": probe_figures(probe, shift)},
        "probe_under_load": all(r["cycles"] >= probe["cycles"] for r in loaded["runs"] if r["card"] != 0),
        "probe_traffic_counts": traffic,
        "isolation": isolated,
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "links": links,
    }


@register
class Pool(Benchmark):
    """Several requesters on one memory card (pooled model): bandwidth, fairness, latency under load."""

    order = 25
    sim_model = "pooled"
    axis_defaults = {"memory": "ddr4"}
    params = (
        Param("requesters", "the compute card and traffic cards on the memory card", low=2, high=POOLED_PORTS,
              integer=True, default=POOLED_PORTS),
        WeightsParam("weights", "the arbiter's shares, one a requester (equal: round robin)",
                     described=f"{EQUAL}, or weights a:b:.. of 1..{SHARE_MAX}, one a requester", convert=str,
                     default=EQUAL),
        Param("op", "read or write", choices=("read", "write"), default="read"),
        Param("pattern", "random or seq addresses in each card's section", choices=("random", "seq"),
              default="random"),
        Param("outstanding", "each saturating card's accesses in flight", low=1, high=REMOTE_TAGS, integer=True,
              default=128),
        Param("count", "the heaviest card's line accesses (the others' in proportion to their weights; from 400, so "
              "that every card is busy well after the last one starts)", low=400, high=2**24, integer=True,
              default=4000),
        Param("in_flight", "the memory card's requests in flight at most (fewer: the shares decide sooner, a new "
              "request waits behind fewer)", low=1, high=REMOTE_TAGS, integer=True, default=DEFAULT_IN_FLIGHT,
              flag="--in-flight"),
    )
    errors = (PoolError,)
    smallest = {"count": [400]}

    def refuse_point(self, point):
        refusal = pooled_memory_refusal(point)
        if refusal:
            return refusal
        if len(parse_weights(point["weights"], point["requesters"])) != point["requesters"]:
            return f"weights {point['weights']} name {len(parse_weights(point['weights']))} requesters, not " \
                   f"{point['requesters']}: give one weight a requester"
        return None

    def sim_cycles(self, point):
        return 6 * point["count"] * point["requesters"] + LATENCY_PROBES * 4000

    def run(self, target, point, log=None):
        return measure(target, self.link(point), point["requesters"],
                       parse_weights(point["weights"], point["requesters"]), point["op"],
                       point["pattern"], point["count"], point["outstanding"], point["in_flight"])

    def verdicts(self, point, result):
        out = [Verdict(f"aggregate {result['together']['aggregate_GBps']:.2f} GB/s, "
                       f"{result['aggregate_share']:.1%} of one requester's {result['alone']['bandwidth_GBps']:.2f} "
                       f"GB/s over {result['alone']['sections']} sections (target >= {AGGREGATE_GOAL:.0%})",
                       result["aggregate_share"] >= AGGREGATE_GOAL)]
        weights = result["weights"]
        if len(set(weights)) == 1:
            out.append(Verdict(f"Jain's index {result['jain_index']:.3f} with equal shares (target >= "
                               f"{FAIRNESS_GOAL})", result["jain_index"] >= FAIRNESS_GOAL))
        worst = max(abs(e) for e in result["weight_errors"])
        out.append(Verdict(f"each requester's share within {worst:.1%} of its weight's ({':'.join(map(str, weights))};"
                           f" target {SHARE_TOLERANCE:.0%})", worst <= SHARE_TOLERANCE))
        out.append(Verdict("the compute card's latency probe ran wholly under the others' load",
                           result["probe_under_load"]))
        iso = result["isolation"]
        out.append(Verdict(f"isolation: card 1's {iso['lines']} writes into card 0's section refused at the memory "
                           f"card ({iso['refused']} counted, {iso['intruder_bus_errors']} bus errors back) and card "
                           f"0's lines unchanged ({iso['owner_errors']} errors)",
                           isolated(iso), gates=True))
        return out

    def show(self, point, result):
        print(f"pooled memory card ({point['memory']}): {result['requesters']} requesters, "
              f"{arbiter(result['weights'])} {':'.join(map(str, result['weights']))}, {result['op']}s, "
              f"{result['pattern']}, {result['outstanding']} in flight each, at most {result['in_flight']} at the "
              f"memory card, {point['distance_m']:g} m, {point['lanes']} x {point['rate_gbps']:g} Gb/s")
        together = result["together"]
        total = sum(together["lines"])
        rows = [[card, "compute" if card == 0 else "traffic", weight, lines, f"{lines / total:.1%}",
                 fmt(bw, 2)] for card, (weight, lines, bw) in
                enumerate(zip(result["weights"], together["lines"], together["bandwidth_GBps"]))]
        rows.append(["all", "", sum(result["weights"]), total, "100%", fmt(together["aggregate_GBps"], 2)])
        rows.append([f"0 alone ({result['alone']['sections']} sections)", "compute", "", result["alone"]["lines"], "",
                     fmt(result["alone"]["bandwidth_GBps"], 2)])
        print_table(rows, ["card", "kind", "weight", "lines", "share", "GB/s"])
        print(f"Jain's index {result['jain_index']:.3f}")
        lat = result["latency_ns"]
        print_table([[name, fmt(lat[name]["min"]), fmt(lat[name]["p50"]), fmt(lat[name]["p99"]), fmt(lat[name]["max"])]
                     for name in ("unloaded", "loaded")],
                    ["compute card's lone reads", "min ns", "p50 ns", "p99 ns", "max ns"])

    def sections(self, records, out):
        rs = [r for r in records if r["point"]["benchmark"] == self.name]
        if not rs:
            return []
        rows = []
        for r in rs:
            p, res = r["point"], r["result"]
            lat, iso = res["latency_ns"], res["isolation"]
            rows.append([p["requesters"], arbiter(res["weights"]), p["weights"], p["in_flight"], p["pattern"],
                         fmt(p["distance_m"], 0),
                         fmt(res["together"]["aggregate_GBps"], 2), fmt(res["alone"]["bandwidth_GBps"], 2),
                         f"{res['aggregate_share']:.1%}", fmt(res["jain_index"], 3),
                         f"{max(abs(e) for e in res['weight_errors']):.1%}",
                         f"{fmt(lat['unloaded']['p50'], 0)} / {fmt(lat['unloaded']['p99'], 0)}",
                         f"{fmt(lat['loaded']['p50'], 0)} / {fmt(lat['loaded']['p99'], 0)}",
                         "yes" if isolated(iso) else "NO"])
        return [("Memory pooling: several requesters on one memory card",
                 ["requesters", "arbiter", "weights", "in flight", "pattern", "distance (m)", "aggregate GB/s",
                  "one requester GB/s", "of it", "Jain", "worst share error", "lone read p50 / p99 ns, unloaded",
                  "under load", "isolated"], rows, None,
                 "The compute card and traffic cards saturate one memory card through its ports (doc/pooling.md): "
                 "the aggregate against one requester over the same sections, Jain's index over the lines each "
                 "moved while all were busy, the worst share against its weight, and the compute card's lone "
                 "random reads unloaded and while the others saturate the card. Isolated: another card's writes "
                 "into its section were refused and its lines read back unchanged.")]
