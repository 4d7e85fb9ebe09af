"""A chosen fault on the sim's wire, end to end: what each end of the link saw, and whether the accesses around
it (the benchmark block's, then the CPU's) came back right, once (the channel's injector,
litex/cores/phy/injector.py)."""

from monet.benchmarks import Benchmark, Param, Verdict, bandwidth, register
from monet.benchmarks.ber import REPLAY_NAMES, RETRY_KEYS
from monet.link import model as link_model
from monet.link import reliability
from monet.report.tables import fmt, print_table
from monet.sim.link_setup import configure_link, configure_retry, grew, link_record, map_remote_windows
from monet.soc.facts import FAULT_KINDS, FRAME_FAULTS

KINDS = tuple(kind for kind in FAULT_KINDS if kind != "none")
DIRECTIONS = {"a2b": "compute card to memory card", "b2a": "memory card to compute card"}
RECEIVER = {"a2b": "memory", "b2a": "compute"}   # the end whose deframer and checker see a direction's frames
ENDS = ("compute", "memory")
OUTSTANDING = 2   # the benchmark block's accesses in flight during the fault
MEMORY_COUNTS = ("reads", "writes", "errors")   # the memory card's: what it served, and the error answers it gave
POLLS = 20   # console round trips waited for an armed fault that has not yet found its frame


def detector(kind, replay):
    """The counter that must move at the receiving end (both ends for `down`) when `kind` is caught: frames
    dropped whole for their CRC or their parse (the deframer counts both as crc_errors), replayed frames
    already delivered, a frame behind a lost one (dropped under go-back-N, kept under selective repeat), beats
    the deframer found no room for, the link's re-initialisations (the link down, or a lane realigned)."""
    return {"duplicate": "duplicates", "skip": "out_of_order" if replay == "gbn" else "held",
            "flood": "deframer_overflow", "down": "reinits", "slip": "reinits",
            "lane_down": "reinits"}.get(kind, "crc_errors")


LANE_FAULTS = ("lane", "slip", "lane_down")   # the kinds on one lane, `lane`
ALIGNMENT_FAULTS = ("slip", "lane_down")      # the kinds the lanes' alignment finds, by lane


def measure(target, kind, link, toward="a2b", replay="gbn", at=0, copies=64, lane=0, cycles=500, nbytes=16384,
            seed=1):
    """Puts fault `kind` on the wire of LinkSettings `link` in direction `toward` during a run of the benchmark
    block over `nbytes` (OUTSTANDING accesses in flight, so that a frame has others behind it, most of them
    travelling alone), then reads everything back: the block's lines, checked, and seeded words through the
    CPU's uncached window. Each end's link counters and the memory card's reads and writes are compared with
    fault-free runs of the same accesses.

    The run is reads, checked, except for a flood toward the compute card: writes (of new data, which the
    reads after it check), whose acks are that direction's short frames. The fault takes the first frame with
    a transaction that travels alone from `at` cycles after the arm on; `lane`, `down` and `lane_down` start with
    that frame (it passes unchanged) and last `cycles`; `slip` loses the word of lane `lane` that follows it.
    Each lane's losses of alignment at each direction's receiving end are counted by the channel's aligners
    (`retry`'s `lane_losses` at that end).
    """
    if kind not in KINDS:
        raise ValueError(f"fault kind {kind!r} is not known; accepted: {', '.join(KINDS)}")
    op = "write" if kind == "flood" and toward == "b2a" else "read"
    lines = max(1, nbytes // link_model.LINE_BYTES)
    configured = configure_link(target, link)
    timeout, nak = configure_retry(target, link.profile, configured["delay"], replay)
    cpu_offset = map_remote_windows(target, bfct_target=configured["bfct_target"])[-1]

    def block(run_op, run_seed):
        check = run_op == "read"
        return bandwidth.measure(target, run_op, OUTSTANDING, link, count=lines, seed=run_seed, check=check)

    def memory_counts(run):
        before = target.fw.memcard()
        result = run()
        return result, grew(target.fw.memcard(), before, MEMORY_COUNTS)

    _, wrote = memory_counts(lambda: block("write", seed))
    target.fw.fill(cpu_offset, nbytes, seed)
    _, read = memory_counts(lambda: block("read", seed))
    reference, cpu_read = memory_counts(lambda: target.fw.check(cpu_offset, nbytes, seed))
    expected = {"reads": (2 if op == "read" else 1) * read["reads"] + cpu_read["reads"],
                "writes": wrote["writes"] if op == "write" else 0, "errors": 0}
    last_seed = seed + 1 if op == "write" else seed

    retry0, errinj0, memcard0 = target.fw.retry(), target.fw.errinj(), target.fw.memcard()
    state0 = target.fw.inject()
    target.fw.inject(kind=kind, toward=toward, at=at, copies=copies, lane=lane, cycles=cycles)
    during = block(op, last_seed)
    state = target.fw.inject()
    for _ in range(POLLS):
        if not state["pending"]:
            break
        state = target.fw.inject()
    if state["pending"]:
        target.fw.inject(kind="none")   # no frame travelled alone: disarm rather than hit a later run
    after = block("read", last_seed)
    cpu = target.fw.check(cpu_offset, nbytes, seed)
    retry1, errinj1, memcard1 = target.fw.retry(), target.fw.errinj(), target.fw.memcard()

    ends = {end: grew(retry1[end], retry0[end], RETRY_KEYS) for end in ENDS}
    counter = detector(kind, replay)
    watched = ENDS if kind == "down" else (RECEIVER[toward],)
    channel = grew(errinj1, errinj0, ("down_total", *(f"hits_{d}" for d in DIRECTIONS)))
    lane_losses = {d: [after - before for after, before in zip(retry1[RECEIVER[d]]["lane_losses"],
                                                               retry0[RECEIVER[d]]["lane_losses"])][:link.lanes]
                   for d in DIRECTIONS}
    down_cycles = channel["down_total"]
    applied = down_cycles == cycles if kind == "down" else grew(state, state0, ("injected",))["injected"] == 1
    runs = {"during": during, "after": after}
    return {
        "kind": kind, "toward": toward, "replay": replay, "op": op, "outstanding": OUTSTANDING, "at_cycles": at,
        "copies": copies, "lane": lane, "fault_cycles": cycles, "bytes": nbytes, "seed": seed,
        "distance_m": link.distance_m, "lanes": link.lanes, "rate_gbps": link.rate_gbps, "memory": link.memory,
        "applied": applied,
        "frame": {"blocks": state["frame_blocks"], "seq": state["frame_seq"]} if kind in FRAME_FAULTS else None,
        "detector": {"counter": counter, "ends": list(watched),
                     "moved": {end: ends[end][counter] for end in watched}},
        "ends": ends,
        "down_cycles": down_cycles,
        "hits": {d: channel[f"hits_{d}"] for d in DIRECTIONS},
        "lane_losses": lane_losses,
        "runs": {name: {k: r[k] for k in ("op", "transactions", "errors", "bus_errors", "cycles")}
                 for name, r in runs.items()},
        "cpu": {k: cpu[k] for k in ("errors", "fault", "cycles")},
        "cpu_reference": {k: reference[k] for k in ("errors", "fault", "cycles")},
        "corrupted_words": during["errors"] + after["errors"] + cpu["errors"],
        "bus_errors": during["bus_errors"] + after["bus_errors"] + int(cpu["fault"]),
        "memory": grew(memcard1, memcard0, MEMORY_COUNTS),
        "memory_expected": expected,
        "retry": {"timeout_cycles": timeout, "nak": nak},
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "link": link_record(configured),
    }


def memory_text(counts):
    return f"{counts['reads']} reads, {counts['writes']} writes, {counts['errors']} error answers"


@register
class Fault(Benchmark):
    """A chosen fault on the wire: detected where it should be, nothing wrong delivered."""

    order = 35
    axes = ("distance_m", "lanes", "rate_gbps", "memory")
    params = (
        Param("kind", "the fault: crc (a frame's CRC), type (a header of an unknown type, its CRC mended), "
              "truncated (half a frame), duplicate (a frame twice), skip (a frame lost), flood (a frame many "
              "times: the deframer overflows), lane (one lane garbled), down (every lane down), slip (a word of one "
              "lane lost: the lanes realign), lane_down (one lane loses lock)",
              choices=KINDS, required=True, sweep=KINDS),
        Param("toward", "the direction: a2b (compute card to memory card: requests) or b2a (answers)",
              choices=tuple(DIRECTIONS), default="a2b"),
        Param("replay", "how the link replays: go-back-N, selective repeat, or selective repeat with repair",
              choices=reliability.REPLAYS, default="gbn"),
        Param("copies", "flood: copies of the frame sent back to back", low=1, high=65535, integer=True, default=64),
        Param("lane", "lane, slip, lane_down: the lane", low=0, high=7, integer=True, default=0),
        Param("cycles", "lane, down, lane_down: how long, cycles", low=1, high=10**6, integer=True, default=500),
        Param("at", "cycles from the arm before the injector looks for its frame (the first with a transaction "
              "that travels alone)", low=0, high=10**7, integer=True, default=0),
        Param("bytes", "bytes the benchmark block reads (or writes) during the fault and reads after it, and the "
              "CPU reads after it, one word a read",
              low=64, high=1 << 20, integer=True, default=16384),
        Param("seed", "the data's seed", low=0, high=2**32 - 1, integer=True, default=1, campaign=False),
    )

    smallest = {"kind": ["crc"], "bytes": [1024]}

    def refuse_point(self, point):
        if point["kind"] in LANE_FAULTS and point["lane"] >= point["lanes"]:
            return (f"lane {point['lane']} is not among the point's {point['lanes']} lanes; accepted: 0 to "
                    f"{point['lanes'] - 1}")
        return None

    def sim_cycles(self, point):
        # Four runs of the block and two of the CPU's reads over the bytes, each access a round trip.
        return (4 * point["bytes"] // 64 + 2 * point["bytes"] // 4) * 150 + point["at"]

    def run(self, target, point, log=None):
        return measure(target, point["kind"], self.link(point), toward=point["toward"], replay=point["replay"],
                       at=point["at"], copies=point["copies"], lane=point["lane"], cycles=point["cycles"],
                       nbytes=point["bytes"], seed=point["seed"])

    def verdicts(self, point, result):
        moved = result["detector"]["moved"]
        intact = (result["corrupted_words"] == 0 and result["bus_errors"] == 0
                  and result["memory"] == result["memory_expected"])
        verdicts = [
            Verdict(f"{result['kind']} put on the wire ({DIRECTIONS[result['toward']]})", result["applied"], gates=True),
            Verdict(f"detected: {result['detector']['counter']} "
                    + ", ".join(f"+{n} at the {end} end" for end, n in moved.items()),
                    all(n > 0 for n in moved.values()), gates=True),
            Verdict(f"delivered: {result['corrupted_words']} corrupted words, {result['bus_errors']} bus errors; at "
                    f"the memory card {memory_text(result['memory'])} (without the fault "
                    f"{memory_text(result['memory_expected'])})", intact, gates=True),
        ]
        if result["kind"] in ALIGNMENT_FAULTS:
            losses = result["lane_losses"][result["toward"]]
            verdicts.append(Verdict(
                f"found by lane: losses of alignment at the {RECEIVER[result['toward']]} end {losses} (lane "
                f"{result['lane']} alone)",
                [n > 0 for n in losses] == [lane == result["lane"] for lane in range(len(losses))], gates=True))
        return verdicts

    def show(self, point, result):
        frame = result["frame"]
        print(f"fault {result['kind']}, {DIRECTIONS[result['toward']]}, {REPLAY_NAMES[result['replay']]}, "
              f"{point['distance_m']:g} m, {point['lanes']} x {point['rate_gbps']:g} Gb/s"
              + (f"; the frame hit: sequence {frame['seq']}, {frame['blocks']} blocks" if frame else ""))
        moved = [k for k in RETRY_KEYS if any(result["ends"][end][k] for end in ENDS)]
        print_table([[k, result["ends"]["compute"][k], result["ends"]["memory"][k]] for k in moved],
                    ["counter (what moved)", "compute end", "memory end"])
        rows = [[f"benchmark block, {name} ({r['op']}s)", r["transactions"], r["errors"], r["bus_errors"], r["cycles"]]
                for name, r in result["runs"].items()]
        rows.append(["CPU, after (uncached word reads)", result["bytes"] // 4, result["cpu"]["errors"],
                     int(result["cpu"]["fault"]), result["cpu"]["cycles"]])
        print_table(rows, ["accesses", "count", "wrong", "bus errors", "cycles"])

    def sections(self, records, out):
        rows = [r for r in records if r["point"]["benchmark"] == self.name]
        if not rows:
            return []
        rows.sort(key=lambda r: (KINDS.index(r["point"]["kind"]), r["point"]["toward"], r["point"]["replay"],
                                 r["point"]["distance_m"]))
        return [(
            "Chosen faults on the wire",
            ["fault", "toward", "replay", "distance (m)", "counter", "moved", "corrupted", "bus err.",
             "at the memory card (expected)"],
            [[r["point"]["kind"], r["point"]["toward"], r["point"]["replay"], fmt(r["point"]["distance_m"], 0),
              r["result"]["detector"]["counter"],
              " / ".join(str(n) for n in r["result"]["detector"]["moved"].values()),
              r["result"]["corrupted_words"], r["result"]["bus_errors"],
              f"{memory_text(r['result']['memory'])} ({memory_text(r['result']['memory_expected'])})"] for r in rows],
            None,
            "Each fault once, on the sim channel (litex/cores/phy/injector.py), during a run of the benchmark "
            f"block with {OUTSTANDING} accesses in flight, then everything read back, by the block and the CPU; "
            "'moved' is the counter at the end that receives the direction (both ends for "
            "down). The deframer counts a frame dropped for its parse (an unknown type, a truncated unit) as a "
            "CRC error.")]
