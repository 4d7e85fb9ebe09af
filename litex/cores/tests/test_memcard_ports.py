"""Memory card ports (litex/cores/memcard/ports.py, MemoryPorts) in front of a memory card's SRAM, on the
generated Verilog: requesters that use the same tag numbers each get their own answers; the arbiter's
turns follow the shares (round robin when equal, 4:2:1:1); a request outside its port's range is answered
with an error and leaves the owner's line as it was; the latency each answer is counted with, through the
control block as the firmware reads it."""

import random

import pytest
from migen import *

from monet.cores.common.layouts import TAG_BITS, T_ERR as ERR, T_RD_REQ as RD_REQ, T_RD_RSP as RD_RSP, \
    T_WR_ACK as WR_ACK, T_WR_REQ as WR_REQ
from monet.cores.memcard.core import MemoryCard
from monet.cores.memcard.ports import MemoryPorts
from monet.cores.tests.verilog_sim import run_simulation

from .csr_bank import ControlBank, csr_read, csr_write, word_addresses

FULL = (1 << 64) - 1
LINES = 64
TAGS = 4            # the card's tags (its max_outstanding): fewer than one requester keeps in flight
PORT_TAGS = 8       # each requester's: every port uses tags 0-7
ROUND_TRIP = 4      # a lone read, offered at a port to answered there: 1 in, the card's 2, 1 out


class Top(Module):
    """The ports on a card's SRAM; `with_control`: behind their control block, as the firmware sees them.
    `hold` keeps the card from taking a request (a busy card)."""
    def __init__(self, n_ports, with_control=False):
        self.ports = ports = MemoryPorts(n_ports=n_ports, max_outstanding=PORT_TAGS, tags=TAGS)
        self.submodules.card = card = MemoryCard(size=LINES * 64, max_outstanding=TAGS)
        if with_control:
            self.submodules.bank = ControlBank(ports)
        else:
            self.submodules += ports
        self.hold = Signal()
        self.comb += [
            ports.source.connect(card.sink, omit={"valid", "ready"}),
            card.sink.valid.eq(ports.source.valid & ~self.hold),
            ports.source.ready.eq(card.sink.ready & ~self.hold),
            card.source.connect(ports.sink),
        ]


DUTS = {}   # one model a variant: its Verilog is converted once


def dut(n_ports, with_control=False):
    key = (n_ports, with_control)
    if key not in DUTS:
        DUTS[key] = Top(n_ports, with_control)
    return DUTS[key]


def line(seed):
    return random.Random(seed).getrandbits(512)


def requester(top, i, script, answers, taken, cycles, gap=0):
    """Generator: port i's requester. Sends the (type, laddr, data) requests of `script` with its own tags
    (0 to PORT_TAGS - 1) one a cycle while a tag is free, `gap` idle cycles after each (a number in
    `script`: that many idle cycles); appends each answer as (port, cycle, request, answer type, laddr, data,
    cycles from the request offered to its answer) to `answers` and the cycles port i's requests went to
    the card to `taken`."""
    sink, source = top.ports.sinks[i], top.ports.sources[i]
    free, in_flight, queue, wait = list(range(PORT_TAGS)), {}, list(script), 0
    yield source.ready.eq(1)
    for cycle in range(cycles):
        if (yield source.valid):
            tag = yield source.tag
            assert tag in in_flight, f"port {i} answered tag {tag}, not in flight"
            request, offered = in_flight.pop(tag)
            answers.append((i, cycle, request, (yield source.type), (yield source.laddr), (yield source.data),
                            cycle - offered))
            free.append(tag)
        if (yield top.ports.taken) >> i & 1:
            taken.append(cycle)
        if (yield sink.valid):
            assert (yield sink.ready), "a port's sink stalled"
        if queue and isinstance(queue[0], int):
            wait += queue.pop(0)
        if queue and free and not wait:
            request, tag = queue.pop(0), free.pop(0)
            in_flight[tag] = (request, cycle + 1)      # offered from the next cycle
            typ, laddr, data = request
            for name, value in (("valid", 1), ("type", typ), ("tag", tag), ("laddr", laddr), ("mask", FULL),
                                ("data", data)):
                yield getattr(sink, name).eq(value)
            wait = gap
        else:
            yield sink.valid.eq(0)
            wait = max(wait - 1, 0)
        yield
    assert not queue and not in_flight, f"port {i}: {len(queue)} not sent, {len(in_flight)} not answered"


def run(top, scripts, cycles=300, gap=0, before=None, after=None):
    """Runs each port's requests (`scripts[i]`) at once, with `before` (a generator of settings, which the
    scripts wait for with a number of idle cycles first) and `after` (a generator reading counters at the
    end) beside them. Returns the answers in order and each port's taken cycles."""
    answers, taken = [], [[] for _ in scripts]
    generators = [requester(top, i, script, answers, taken[i], cycles, gap) for i, script in enumerate(scripts)]
    run_simulation(top, generators + [g for g in (before, after) if g is not None])
    return answers, taken


def settings(statements):
    """Generator: the statements in one cycle."""
    for statement in statements:
        yield statement
    yield


@pytest.mark.parametrize("n_ports", [2, 4])
def test_ports_with_the_same_tags_get_their_own_answers(n_ports):
    """Every port writes six lines of its own and reads them back with tags 0-7: each answer reaches its own
    port, with its own tag and its own line's data; each request went to the card once."""
    top = dut(n_ports)
    scripts = []
    for i in range(n_ports):
        mine = [8 * i + k for k in range(6)]
        scripts.append([(WR_REQ, laddr, line(laddr)) for laddr in mine] + [(RD_REQ, laddr, 0) for laddr in mine])
    answers, taken = run(top, scripts)
    for i in range(n_ports):
        got = [(request, typ, laddr, data) for port, _, request, typ, laddr, data, _ in answers if port == i]
        expected = [((WR_REQ, laddr, line(laddr)), WR_ACK, laddr, 0) for laddr in range(8 * i, 8 * i + 6)] + \
                   [((RD_REQ, laddr, 0), RD_RSP, laddr, line(laddr)) for laddr in range(8 * i, 8 * i + 6)]
        assert sorted(got) == sorted(expected)
        assert len(taken[i]) == 12


@pytest.mark.parametrize("shares", [(1, 1, 1, 1), (4, 2, 1, 1), (0, 3, 1, 1)])
def test_turns_follow_the_shares(shares):
    """Four saturating ports (each keeps more in flight than the card has tags): in eight rounds of turns
    each port's count of requests to the card is eight times its share (a share of 0 counts as 1), one
    request a cycle at most; every port waited and counted stalls."""
    top = dut(4)
    scripts = [[4] + [(RD_REQ, 8 * i + k % 8, 0) for k in range(60)] for i in range(4)]
    stalls = []

    def count_stalls():
        for _ in range(330):
            yield
        for counter in top.ports.stalls:
            stalls.append((yield counter))

    answers, taken = run(top, scripts, cycles=320, before=settings(
        [top.ports.share[i].eq(share) for i, share in enumerate(shares)]), after=count_stalls())
    assert len(answers) == 240
    order = sorted((cycle, i) for i, cycles in enumerate(taken) for cycle in cycles)
    assert len({cycle for cycle, _ in order}) == len(order)
    rounds = [max(share, 1) for share in shares]
    window = [i for _, i in order[16:16 + 8 * sum(rounds)]]     # from when every port has requests waiting
    assert [window.count(i) for i in range(4)] == [8 * r for r in rounds]
    assert all(s > 0 for s in stalls)


def test_a_request_outside_its_range_is_refused():
    """Port 0 owns lines 0-15, port 1 lines 16-31 (programmed through the control block): port 1's write
    and read of port 0's line 3 and its write beyond its range are answered with errors, counted as
    refused; port 0 reads its line as it wrote it; each port's own lines work."""
    top = dut(2, with_control=True)
    at = word_addresses(top.ports)
    bank = top.bank

    resets = []

    def program():
        for word in (at["last0"], at["last0"] + 1, at["share0"], at["in_flight_limit"]):
            resets.append((yield from csr_read(bank, word)))
        for name, value in (("first0", 0), ("last0", 15), ("first1", 16), ("last1", 31)):
            yield from csr_write(bank, at[name] + 1, value)     # the low word (36 bits: two words)
            yield from csr_write(bank, at[name], 0)
        yield from csr_write(bank, at["hist_shift"], 0x21)     # 5 bits: 1
        resets.append((yield from csr_read(bank, at["hist_shift"])))
    counters = {}

    def read_counters():
        for _ in range(260):
            yield
        for name in ("refused0", "refused1", "reads0", "reads1", "writes0", "writes1"):
            counters[name] = yield from csr_read(bank, at[name])
        counters["errors"] = yield top.card.errors

    scripts = [[30, (WR_REQ, 3, line(3)), (RD_REQ, 3, 0), (WR_REQ, 15, line(15))],
               [30, (WR_REQ, 20, line(20)), (WR_REQ, 3, line(99)), (RD_REQ, 3, 0), (RD_REQ, 16, 0),
                (WR_REQ, 32, 1)]]
    answers, _ = run(top, scripts, cycles=250, gap=20, before=program(), after=read_counters())
    by_port = {i: [(request, typ, data) for port, _, request, typ, _, data, _ in answers if port == i]
               for i in (0, 1)}
    assert by_port[0] == [((WR_REQ, 3, line(3)), WR_ACK, 0), ((RD_REQ, 3, 0), RD_RSP, line(3)),
                          ((WR_REQ, 15, line(15)), WR_ACK, 0)]
    assert [(request, typ) for request, typ, _ in by_port[1]] == [
        ((WR_REQ, 20, line(20)), WR_ACK), ((WR_REQ, 3, line(99)), ERR), ((RD_REQ, 3, 0), ERR),
        ((RD_REQ, 16, 0), RD_RSP), ((WR_REQ, 32, 1), ERR)]
    assert counters == {"refused0": 0, "refused1": 3, "reads0": 1, "reads1": 1, "writes0": 2, "writes1": 1,
                        "errors": 3}
    assert resets == [0xF, 0xFFFF_FFFF, 1, TAGS, 1]   # every line (36-bit addresses), one request a turn, all
                                                      # tags; hist_shift keeps 5 bits


def test_the_defaults_are_a_requester_s_tags_a_port():
    """Built with its defaults: four ports, each FIFO and the card's tags as many as a requester's tags."""
    ports = MemoryPorts()
    assert len(ports.sinks) == len(ports.sources) == 4
    assert ports.fifo0.fifo.depth == 2**TAG_BITS and ports.tags.head.nbits == TAG_BITS


def test_a_port_whose_first_line_is_above_its_last_reaches_nothing():
    """Lines 20..10 are no lines: a read of line 15, inside neither bound's side, is refused like any other."""
    top = dut(2)
    answers, _ = run(top, [[4, (RD_REQ, 15, 0), (RD_REQ, 25, 0)], [4, (RD_REQ, 15, 0)]], cycles=60,
                     before=settings([top.ports.first_line[0].eq(20), top.ports.last_line[0].eq(10)]))
    assert sorted((port, request[1], typ) for port, _, request, typ, *_ in answers) == [
        (0, 15, ERR), (0, 25, ERR), (1, 15, RD_RSP)]


def test_latency_is_counted_per_port():
    """A lone read is answered ROUND_TRIP cycles after its port offered it, counted in its port's sum, count
    and histogram bucket (1-cycle buckets); reads of two ports offered in the same cycles wait for each
    other's: each port's sum and histogram are its own answers' latencies as the requester saw them."""
    top = dut(4)
    seen = {}

    def read_latency():
        for _ in range(120):
            yield
        for i in (1, 2, 3):
            hist = []
            for bucket in top.ports.hist[i]:
                hist.append((yield bucket))
            seen[i] = ((yield top.ports.latency_sum[i]), (yield top.ports.latency_count[i]), hist)

    answers, _ = run(top, [[], [4, (RD_REQ, 5, 0)], [40] + [(RD_REQ, 6, 0)] * 6, [40] + [(RD_REQ, 7, 0)] * 6],
                     cycles=100,
                     before=settings([top.ports.hist_shift.eq(0)]), after=read_latency())
    assert [a[-1] for a in answers if a[0] == 1] == [ROUND_TRIP]
    assert seen[1] == (ROUND_TRIP, 1, [0] * ROUND_TRIP + [1] + [0] * (top.ports.buckets - ROUND_TRIP - 1))
    for i in (2, 3):
        mine = [a[-1] for a in answers if a[0] == i]
        hist = [sum(min(latency, top.ports.buckets - 1) == b for latency in mine) for b in range(top.ports.buckets)]
        assert seen[i] == (sum(mine), 6, hist)
    assert sum(a[-1] for a in answers if a[0] in (2, 3)) > 12 * ROUND_TRIP


@pytest.mark.parametrize("limit", [0, 1, 3, 4, 7])
def test_the_card_has_at_most_its_limit_in_flight(limit):
    """Two saturating ports: the card's tags out (handed to a request, not yet back from its answer) never exceed
    the in-flight limit and reach it (0 counts as 1; above the card's tags, all of them); every request is
    answered."""
    top = dut(2)
    most, out = [], [0]

    def watch():
        for _ in range(400):
            out[0] += (yield top.ports.tags.pop) - (yield top.ports.tags.push)
            most.append(out[0])
            yield

    scripts = [[4] + [(RD_REQ, 8 * i + k % 8, 0) for k in range(24)] for i in range(2)]
    answers, _ = run(top, scripts, cycles=400, before=settings([top.ports.in_flight_limit.eq(limit)]), after=watch())
    assert len(answers) == 48
    assert max(most) == min(max(limit, 1), TAGS)


def test_a_busy_card_loses_no_request_and_a_request_of_no_type_is_neither_read_nor_write():
    """Two ports saturating a card that takes requests only some cycles (held at random): every request is
    answered with its own line, none twice; a request with no type, in range, is answered with an error and
    counted neither as a read nor as a write."""
    top = dut(2)
    rng = random.Random(5)
    counts = {}

    def busy_card():
        for _ in range(400):
            yield top.hold.eq(int(rng.random() < 0.5))
            yield
        yield top.hold.eq(0)
        for _ in range(40):
            yield
        for name in ("reads", "writes"):
            counts[name] = []
            for counter in getattr(top.ports, name):
                counts[name].append((yield counter))

    scripts = [[4] + [(WR_REQ, 8 * i + k, line(8 * i + k)) for k in range(8)] +
               [(RD_REQ, 8 * i + k % 8, 0) for k in range(16)] for i in range(2)]
    scripts[1].append((0, 12, 0))
    answers, _ = run(top, scripts, cycles=440, after=busy_card())
    for i in range(2):
        reads = [(request[1], typ, data) for port, _, request, typ, _, data, _ in answers
                 if port == i and request[0] == RD_REQ]
        assert sorted(reads) == sorted((8 * i + k % 8, RD_RSP, line(8 * i + k % 8)) for k in range(16))
    assert [typ for port, _, request, typ, *_ in answers if request[0] == 0] == [ERR]
    assert counts == {"reads": [16, 16], "writes": [8, 8]}
