"""A traffic card's memory moved from one memory card to another while the card reads it, on the pooled model's
circuit switch (litex/cores/phy/switch.py): the compute card's CPU copies the card's lines over its two links,
the card is held at its ReMAT until what it has in flight is answered, its BFCT points at the new memory card,
its circuit moves (dark for the switch's set-up time, both link ends restarted), and the hold ends. Every read
the card made before, during and after is checked; the move's time is printed as simulated and with the real
switch's set-up time."""

from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.benchmarks.pool import own_sections, pooled_memory_refusal, port_ranges, put_ranges
from monet.link import model as link_model
from monet.report.tables import fmt, print_table
from monet.sim.link_setup import configure_link, link_record
from monet.soc.facts import LINE_BYTES, OCS_SETUP_S, REMOTE_TAGS, SWITCH_COMPRESSION, TARGET_REMOTE0, TARGET_REMOTE1

MOVED = 1          # the traffic card whose memory moves
HOME, NEW = 1, 0   # its section on the first memory card, and the one it moves to on the second
SRC, DST = 2, 3    # the compute card's window sections onto them, for the copy
SEED = 21


class MoveError(RuntimeError):
    """A move that cannot run on this SoC (the message names what it needs)."""


def free_port(switch):
    """The memory-card port no circuit holds (the second memory card's spare), from the `switch` answer."""
    held = {c["port"] for c in switch["circuits"]}
    free = [p for p in range(switch["ports"]) if p not in held]
    if not free:
        raise MoveError("every memory-card port of the switch holds a circuit: no port to move a card to")
    return free[-1]


def set_up(target, link, span):
    """The links as `link` (the compute card's and the moved card's; the compute card's second link keeps the
    channel's defaults); the moved card's window section 0 on the first memory card's section HOME, written with
    its pattern; the compute card's window section SRC on it and DST on the second memory card's section NEW.
    Returns the links' records and the two memory-card ports' ranges as they were, for put_back."""
    fw = target.fw
    info = fw.facts()
    if info.get("traffic_cards", 0) < MOVED:
        raise MoveError("a move needs the pooled model's traffic cards and circuit switch; this SoC has none "
                        "(monet sim build --model pooled)")
    section = info["section_bytes"]
    if span > section:
        raise MoveError(f"span {span} is more than a section ({section} bytes): a card moves one section")
    links = [link_record(configure_link(target, link, card=card)) for card in (0, MOVED)]
    ranges = port_ranges(target, (0, MOVED))
    own_sections(target, MOVED, section, [HOME])
    # The compute card reads the card's section (the copy's source).
    fw.ports(port=0, first=0, last=(HOME + 1) * section // LINE_BYTES - 1)
    fw.set_bfct(SRC, en=1, r=1, w=1, target=TARGET_REMOTE0, base=HOME)
    fw.set_bfct(DST, en=1, r=1, w=1, target=TARGET_REMOTE1, base=NEW)
    written = fw.pbb(card=MOVED, op="write", pattern="seq", addr=0, span=span, count=span // LINE_BYTES,
                     outstanding=32, seed=SEED)
    if written["completed"] != span // LINE_BYTES or written["bus_errors"]:
        raise RuntimeError(f"move: card {MOVED} could not write its {span} bytes ({written['completed']} lines)")
    return links, ranges


def put_back(target, home_port, ranges):
    """The moved card back on its own port and section, the ports' ranges as `ranges`, the compute card's copy
    sections off: the next point starts from the model's power-up circuits and ranges."""
    fw = target.fw
    fw.switch(link=MOVED, port=home_port)
    put_ranges(target, ranges)
    fw.set_bfct(0, card=MOVED, en=1, r=1, w=1, target=TARGET_REMOTE0, base=HOME)
    for idx in (SRC, DST):
        fw.set_bfct(idx, en=0, r=0, w=0, target=TARGET_REMOTE0, base=0)


def measure(target, link, span, count, outstanding, compression):
    """Moves card MOVED's `span` bytes while it reads them at random (`count` checked reads, `outstanding` in
    flight), the switch's set-up time compressed `compression` times; then reads them all back once more."""
    links, ranges = set_up(target, link, span)
    fw = target.fw
    setup = max(1, round(OCS_SETUP_S / (link_model.CLK_PS * 1e-12) / compression))
    switch = fw.switch(setup=setup)
    home, port = switch["circuits"][MOVED]["port"], free_port(switch)
    section = fw.facts()["section_bytes"]
    answer = fw.move(card=MOVED, port=port, section=0, base=NEW, src=SRC * section, dst=DST * section, bytes=span,
                     op="read", pattern="random", span=span, count=count, outstanding=outstanding, seed=SEED, check=1,
                     timeout=200_000_000, wait=max(600, count // 20))
    after = fw.pbb(card=MOVED, op="read", pattern="seq", addr=0, span=span, count=span // LINE_BYTES, outstanding=32,
                   seed=SEED, check=1)
    on = fw.switch()["circuits"][MOVED]
    put_back(target, home, ranges)
    cycles = answer["copy_cycles"] + answer["held_cycles"]
    return {
        "span": span, "count": count, "outstanding": outstanding, "compression": compression,
        "setup_cycles": answer["setup"], "stuck": answer["stuck"], "port": port, "home_port": home,
        "copy_cycles": answer["copy_cycles"], "drain_cycles": answer["drain_cycles"],
        "switch_cycles": answer["switch_cycles"], "held_cycles": answer["held_cycles"],
        "copy_GBps": span / (answer["copy_cycles"] * link_model.CLK_PS * 1e-12) / 1e9,
        "move_us": link_model.cycles_to_ns(cycles) / 1e3,
        # On the real switch the set-up takes OCS_SETUP_S instead of the compressed cycles.
        "move_real_ms": (link_model.cycles_to_ns(cycles - answer["setup"]) * 1e-9 + OCS_SETUP_S) * 1e3,
        "run": answer["run"], "run_lasted": answer["run"]["cycles"] > cycles,
        "after": {"completed": after["completed"], "errors": after["errors"], "bus_errors": after["bus_errors"]},
        "on_new_port": on["port"] == port and on["lit"],
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "links": links,
    }


def every_read_right(result):
    run, after, lines = result["run"], result["after"], result["span"] // LINE_BYTES
    return (result["stuck"] is None and run["completed"] == result["count"] and not run["errors"]
            and not run["bus_errors"] and after["completed"] == lines and not after["errors"]
            and not after["bus_errors"])


@register
class Move(Benchmark):
    """A traffic card's memory moved to another memory card mid-traffic through the circuit switch."""

    order = 26
    sim_model = "pooled"
    axis_defaults = {"memory": "ddr4"}
    params = (
        Param("span", "the card's bytes moved (its reads' span)", low=LINE_BYTES, high=1 << 20, integer=True,
              default=64 << 10, unit="bytes"),
        Param("count", "the card's checked random reads, through the move", low=100, high=2**24, integer=True,
              default=40000),
        Param("outstanding", "the card's reads in flight", low=1, high=REMOTE_TAGS, integer=True, default=8),
        Param("compression", "the switch's set-up time (25 ms, a Polatis-class OCS) divided by this in the sim",
              low=1, high=10**6, integer=True, default=SWITCH_COMPRESSION),
    )
    errors = (MoveError,)
    smallest = {"span": [4096], "count": [2000]}

    def refuse_point(self, point):
        if point["span"] % LINE_BYTES:
            return f"span {point['span']} is not whole lines: give a multiple of {LINE_BYTES} bytes"
        return pooled_memory_refusal(point)

    def sim_cycles(self, point):
        setup = OCS_SETUP_S / (link_model.CLK_PS * 1e-12) / point["compression"]
        return 200 * point["span"] // LINE_BYTES + 40 * point["count"] // point["outstanding"] + setup

    def run(self, target, point, log=None):
        return measure(target, self.link(point), point["span"], point["count"], point["outstanding"],
                       point["compression"])

    def verdicts(self, point, result):
        run = result["run"]
        return [
            Verdict(f"every read right: {run['completed']} of {result['count']} during the move ({run['errors']} "
                    f"wrong, {run['bus_errors']} bus errors), {result['after']['completed']} after "
                    f"({result['after']['errors']} wrong)" + (f"; stuck in its {result['stuck']}" if result["stuck"]
                                                               else ""), every_read_right(result), gates=True),
            Verdict("the card's reads went on through the whole move", result["run_lasted"]),
            Verdict(f"the card's circuit on the new port {result['port']}, lit", result["on_new_port"]),
        ]

    def show(self, point, result):
        print(f"memory move ({point['memory']}): card {MOVED}'s {result['span']} bytes to the second memory card "
              f"(port {result['port']}), {result['count']} checked random reads at {result['outstanding']} in "
              f"flight, {point['distance_m']:g} m, {point['lanes']} x {point['rate_gbps']:g} Gb/s")
        us = lambda cycles: fmt(link_model.cycles_to_ns(cycles) / 1e3, 2)
        print_table([["copy (CPU, cacheable window)", result["copy_cycles"], us(result["copy_cycles"]),
                      f"{result['copy_GBps']:.2f} GB/s"],
                     ["drain (card held)", result["drain_cycles"], us(result["drain_cycles"]), ""],
                     ["circuit set-up", result["switch_cycles"], us(result["switch_cycles"]),
                      f"{OCS_SETUP_S * 1e3:g} ms real / {result['compression']}"],
                     ["held in all", result["held_cycles"], us(result["held_cycles"]), ""]],
                    ["phase", "cycles", "us", ""])
        run = result["run"]
        print(f"move {result['move_us']:.1f} us simulated, {result['move_real_ms']:.2f} ms with the real switch's "
              f"set-up; the card's reads waited {us(result['held_cycles'])} us at its ReMAT, and once taken took "
              f"{fmt(link_model.cycles_to_ns(run['lat_max']) / 1e3, 2)} us at most")

    def sections(self, records, out):
        rs = [r for r in records if r["point"]["benchmark"] == self.name]
        if not rs:
            return []
        rows = []
        for r in rs:
            p, res = r["point"], r["result"]
            rows.append([p["span"], fmt(p["distance_m"], 0), res["count"], fmt(res["copy_GBps"], 3),
                         fmt(res["move_us"], 1), fmt(res["move_real_ms"], 2),
                         fmt(link_model.cycles_to_ns(res["held_cycles"]) / 1e3, 1),
                         "yes" if every_read_right(res) else "NO"])
        return [("Memory move through the circuit switch",
                 ["bytes", "distance (m)", "reads", "copy GB/s", "move us (sim)", "move ms (real switch)",
                  "card held us (sim)", "every read right"], rows, None,
                 "A traffic card's memory copied by the compute card's CPU to the second memory card, the card held "
                 "until its reads in flight are answered, its BFCT remapped and its circuit moved (doc/pooling.md); "
                 f"the switch's {OCS_SETUP_S * 1e3:g} ms set-up is compressed in the sim, the real figure adds it "
                 "back.")]
