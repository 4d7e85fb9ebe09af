"""One compute card over two memory cards (the pooled model): the compute card's benchmark block over two window
sections, first both on the first memory card (its first link), then the second one on the second memory card
(its second link, BFCT target 2): the bandwidth with two memory cards against one. Two memory cards can double
it only where the memory, not the compute card's path, is the limit: ReMAT answers one line a cycle, and each
link carries its payload capacity; the point says whether it is such a point."""

from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.benchmarks.pool import bandwidth_GBps, pooled_memory_refusal, port_ranges, put_ranges, run_budget
from monet.link import model as link_model
from monet.report.tables import fmt, print_table
from monet.sim.link_setup import configure_link, link_record
from monet.soc.facts import LINE_BYTES, REMOTE_TAGS, TARGET_REMOTE0, TARGET_REMOTE1

# Acceptance (issue 48): two memory cards give at least this many times one's bandwidth where the memory is the
# limit.
SPREAD_GOAL = 1.8
SECTIONS = 2          # the compute card's window sections the run spans: 0 on the first card, 1 on one or the other
SEED = 31


class SpreadError(RuntimeError):
    """A point that cannot run on this SoC (the message names what it needs)."""


def path_limit_GBps(op, lanes, rate_gbps, links=2):
    """What the compute card's path carries at most over `links` links: ReMAT answers one line a cycle, and each
    link carries its payload capacity a direction (a mix's data go both ways)."""
    directions = 2 if op == "mixed" else 1
    remat = LINE_BYTES / (link_model.CLK_PS * 1e-12) / 1e9
    return min(remat, links * directions * link_model.payload_capacity_GBps(lanes, rate_gbps))


def set_up(target, link):
    """Both of the compute card's links as `link` (its second one, and the memory card behind it, through card
    `second_link`), its memory-card port's range over both sections. Returns the links' records, the port's
    range as it was and the bytes of a section."""
    fw = target.fw
    info = fw.facts()
    second = info.get("second_link", 0)
    if not second:
        raise SpreadError("two memory cards need the pooled model's second link and memory card; this SoC has none "
                          "(monet sim build --model pooled)")
    links = [link_record(configure_link(target, link, card=card)) for card in (0, second)]
    ranges = port_ranges(target, (0,))
    section = info["section_bytes"]
    fw.ports(port=0, first=0, last=SECTIONS * section // LINE_BYTES - 1)
    return links, ranges, section


def run_over(target, memory_cards, op, pattern, span, count, outstanding):
    """The compute card's section 1 on the first memory card (1) or the second (2), then its benchmark block's
    run over both sections: the run's answer."""
    second = memory_cards == 2
    target.fw.set_bfct(1, en=1, r=1, w=1, target=TARGET_REMOTE1 if second else TARGET_REMOTE0, base=0 if second else 1)
    run = target.fw.pbb(op=op, pattern=pattern, addr=0, span=span, count=count, outstanding=outstanding, seed=SEED,
                        **run_budget(count))
    if run["timed_out"] or run["completed"] != count or run["bus_errors"]:
        raise RuntimeError(f"spread: the compute card's run over {memory_cards} memory card(s) did not complete "
                           f"cleanly ({run['completed']} of {count}, {run['bus_errors']} bus errors)")
    return run


def measure(target, link, op="mixed", pattern="random", count=20000, outstanding=256, memory_cards=2):
    """The compute card's `count` accesses (`op`, `pattern`, `outstanding` in flight) over two sections, on one
    memory card, then (memory_cards 2) on two: each one's bandwidth, the ratio (None with one card), and the
    path's limit over two links."""
    links, ranges, section = set_up(target, link)
    fw = target.fw
    fw.set_bfct(0, en=1, r=1, w=1, target=TARGET_REMOTE0, base=0)
    try:
        runs = {cards: run_over(target, cards, op, pattern, SECTIONS * section, count, outstanding)
                for cards in range(1, memory_cards + 1)}
    finally:
        fw.set_bfct(1, en=1, r=1, w=1, target=TARGET_REMOTE0, base=1)
        put_ranges(target, ranges)
    figures = {cards: {"cycles": run["cycles"], "bandwidth_GBps": bandwidth_GBps(run["completed"], run["cycles"])}
               for cards, run in runs.items()}
    return {
        "op": op, "pattern": pattern, "count": count, "outstanding": outstanding, "section_bytes": section,
        "memory_cards": memory_cards, "one": figures[1], "two": figures.get(2),
        "ratio": figures[2]["bandwidth_GBps"] / figures[1]["bandwidth_GBps"] if 2 in figures else None,
        "path_limit_GBps": path_limit_GBps(op, link.lanes, link.rate_gbps),
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "links": links,
    }


def memory_limited(result):
    """Whether the point lets two memory cards reach the goal: one card's bandwidth times SPREAD_GOAL within what
    the compute card's path carries over two links."""
    return result["one"]["bandwidth_GBps"] * SPREAD_GOAL <= result["path_limit_GBps"]


@register
class Spread(Benchmark):
    """One compute card over two memory cards (pooled model): bandwidth with two against one."""

    order = 27
    sim_model = "pooled"
    axis_defaults = {"memory": "ddr4"}
    params = (
        Param("op", "read, write, or mixed (half each)", choices=("read", "write", "mixed"), default="mixed"),
        Param("pattern", "random or seq addresses over the two sections", choices=("random", "seq"),
              default="random"),
        Param("count", "the compute card's line accesses a run", low=400, high=2**24, integer=True, default=20000),
        Param("outstanding", "its accesses in flight", low=1, high=REMOTE_TAGS, integer=True, default=256),
        Param("memory_cards", "the memory cards its two sections are on: 1 (both on the first) or 2 (one on each, "
              "measured beside 1 for the ratio)", choices=(1, 2), default=2, flag="--memory-cards"),
    )
    errors = (SpreadError,)
    smallest = {"count": [400]}

    def refuse_point(self, point):
        return pooled_memory_refusal(point)

    def sim_cycles(self, point):
        return point["memory_cards"] * 8 * point["count"] + 40_000

    def run(self, target, point, log=None):
        return measure(target, self.link(point), point["op"], point["pattern"], point["count"], point["outstanding"],
                       point["memory_cards"])

    def verdicts(self, point, result):
        if result["two"] is None:
            return []   # one memory card alone: the baseline, no goal
        one, two = result["one"]["bandwidth_GBps"], result["two"]["bandwidth_GBps"]
        limited = memory_limited(result)
        text = (f"two memory cards {two:.2f} GB/s, {result['ratio']:.2f}x one's {one:.2f} GB/s (target >= "
                f"{SPREAD_GOAL}x where the memory is the limit)")
        if not limited:
            text += (f": not such a point, {SPREAD_GOAL}x one card is above the {result['path_limit_GBps']:.1f} "
                     f"GB/s the compute card's path carries")
        return [Verdict(text, result["ratio"] >= SPREAD_GOAL or not limited)]

    def show(self, point, result):
        accesses = {"read": "reads", "write": "writes", "mixed": "reads and writes"}[result["op"]]
        print(f"one compute card's two sections on {result['memory_cards']} memory card(s) ({point['memory']}): "
              f"{accesses}, {result['pattern']}, {result['count']} accesses, {result['outstanding']} in flight, "
              f"{point['distance_m']:g} m, {point['lanes']} x {point['rate_gbps']:g} Gb/s")
        print_table([[cards, result[key]["cycles"], fmt(result[key]["bandwidth_GBps"], 2)]
                     for cards, key in ((1, "one"), (2, "two")) if result[key]], ["memory cards", "cycles", "GB/s"])
        if result["ratio"] is not None:
            print(f"{result['ratio']:.2f}x; the compute card's path carries {result['path_limit_GBps']:.1f} GB/s over "
                  f"two links (ReMAT one line a cycle, each link its payload capacity)")

    def sections(self, records, out):
        rs = [r for r in records if r["point"]["benchmark"] == self.name]
        if not rs:
            return []
        rows = []
        for r in rs:
            res, two = r["result"], r["result"]["two"]
            # Results stored before the memory_cards axis measured both.
            rows.append([r["point"]["op"], r["point"]["pattern"], res.get("memory_cards", 2),
                         fmt(res["one"]["bandwidth_GBps"], 2), fmt(two["bandwidth_GBps"], 2) if two else "-",
                         fmt(res["ratio"], 2) if two else "-",
                         ("yes" if memory_limited(res) else "no") if two else "-"])
        return [("One compute card over two memory cards",
                 ["op", "pattern", "memory cards", "one card GB/s", "two cards GB/s", "ratio", "memory the limit"],
                 rows, None,
                 "The compute card's accesses over two window sections, both on one memory card, then one on each "
                 f"(its second link); the goal of {SPREAD_GOAL}x applies where the memory, not the compute card's "
                 "path (ReMAT's one line a cycle, the links' capacity), is the limit (doc/pooling.md).")]
