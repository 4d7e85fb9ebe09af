"""A whole link (litex/cores/link/core.py): two LinkEndpoints over the sim channel, on the generated Verilog.
Transactions cross both ways once, in order and intact, over 1 to 8 lanes, through bit errors (replayed)
and a link-down interval (re-initialized); credits hold requests back; an idle link delivers a lone
transaction after an exact number of cycles; a stage timer on the link's points times lone transactions
to the cycle, and a trailer alone (an ack) is not a unit."""

import random

import pytest
from migen import *

from monet.cores.common.layouts import T_ERR as ERR, T_RD_REQ as RD_REQ, T_RD_RSP as RD_RSP, \
    REQUESTS_PER_CREDIT, T_WR_ACK as WR_ACK, T_WR_REQ as WR_REQ
from monet.cores.common.stages import StageTimer
from monet.cores.link.core import LinkEndpoint
from monet.cores.phy.channel import SimChannel
from monet.cores.tests.verilog_sim import run_simulation

from .link_responder import send_transactions

FULL = (1 << 64) - 1


class Link(Module):
    """Compute end (a) and memory end (b) over both directions of the channel. Every setting a test sweeps
    is a signal (the credit limit included), so one Verilator model serves every test here."""
    def __init__(self):
        self.submodules.channel = channel = SimChannel(depth=64)
        self.submodules.a = a = LinkEndpoint(channel.lanes_log2)
        self.submodules.b = b = LinkEndpoint(channel.lanes_log2)
        self.comb += [a.rx_up.eq(channel.a_up), b.rx_up.eq(channel.b_up)]
        self.comb += a.connect_phy(channel.a_sink, channel.a_sources)
        self.comb += b.connect_phy(channel.b_sink, channel.b_sources)
        # a's transactions timed as a card's stage timer times them (points on both ends: one clock here).
        self.submodules.stages = stages = StageTimer(("sent", "framed", "deframed", "delivered"))
        a.watch_stages(stages, sent="sent", framed="framed")
        b.watch_stages(stages, deframed="deframed", delivered="delivered")


# One link for every test (each run starts a fresh model, so nothing carries over between runs).
LINK = Link()


def transactions(n, seed, types):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        typ = rng.choice(types)
        data = rng.getrandbits(512) if typ in (WR_REQ, RD_RSP) else 0
        mask = FULL if typ != WR_REQ or rng.random() < 0.7 else rng.getrandbits(64)
        out.append((typ, i % 128, rng.getrandbits(20), mask if typ == WR_REQ else FULL, data))
    return out


def exchange(a2b, b2a, lanes_log2=3, delay=10, block_ps=4400, threshold=0, burst=1, down=None,
             credit_limit=0, hold_credits_until=0, timeout=256, cycles=3000, selective=0, repair=0, errors_until=None):
    """Sends `a2b` from a and `b2a` from b (tuples of type, tag, laddr, mask, data); returns what each end
    received (with the cycle), and both ends' counters. `selective`: selective repeat, and `repair`, frames of
    one flipped bit repaired. `down`: (after, length) of a link-down interval.
    `errors_until`: the cycle the bit errors stop; each end's naks then are in its counters (`naks_then`)."""
    dut = LINK
    got = {"a": [], "b": []}
    stats = {}

    def sender(end, txns):
        yield "passive"     # the run ends with `watch`, even if a sender still waits for credits
        yield end.sink.valid.eq(0)
        for _ in range(5):
            yield
        yield from send_transactions(end.sink, txns)

    def watch():
        ch = dut.channel
        yield ch.lanes_log2.eq(lanes_log2)
        yield ch.delay.eq(delay)
        yield ch.block_ps.eq(block_ps)
        yield ch.burst.eq(burst)
        for t in ch.thresholds:
            yield t.eq(threshold)
        yield dut.a.credits.limit.eq(credit_limit)
        for end in (dut.a, dut.b):
            yield end.source.ready.eq(1)
            yield end.retry.timeout.eq(timeout)
            yield end.checker.timeout.eq(timeout)
            yield end.retry.selective.eq(selective)
            yield end.checker.selective.eq(selective)
            yield end.deframer.repair.enable.eq(repair)
        queued, freeing = 0, 0
        for cycle in range(cycles):
            if down is not None and cycle == 1:
                yield ch.down_after.eq(down[0])
                yield ch.down_for.eq(down[1])
                yield ch.go_down.eq(1)
            elif down is not None and cycle == 2:
                yield ch.go_down.eq(0)
            if cycle == errors_until:
                for t in ch.thresholds:
                    yield t.eq(0)
                for name, end in (("a", dut.a), ("b", dut.b)):
                    stats[f"{name}_naks_then"] = (yield end.checker.naks)
            for name, end in (("a", dut.a), ("b", dut.b)):
                if (yield end.source.valid):
                    got[name].append(((yield end.source.type), (yield end.source.tag), (yield end.source.laddr),
                                      (yield end.source.mask), (yield end.source.data), cycle))
            # b's consumer queues what arrives and, from `hold_credits_until` on, takes one a cycle, freeing
            # a credit for each.
            queued += (yield dut.b.source.valid)
            free = queued > 0 and cycle >= hold_credits_until
            queued -= free
            if free != freeing:
                freeing = free
                yield dut.b.credit_freed.eq(int(free))
            yield
        for name, end in (("a", dut.a), ("b", dut.b)):
            stats[name] = {"reinits": (yield end.reinits), "down_cycles": (yield end.down_cycles),
                           "replays": (yield end.retry.replays), "timeouts": (yield end.retry.timeouts),
                           "nak_replays": (yield end.retry.nak_replays), "resends": (yield end.retry.resends),
                           "reinit_replays": (yield end.retry.reinit_replays),
                           "replayed_txns": (yield end.retry.replayed_txns), "held": (yield end.checker.held),
                           "out_of_order": (yield end.checker.out_of_order), "stored": (yield end.reorder.stored),
                           "crc_errors": (yield end.deframer.crc_errors), "naks": (yield end.checker.naks),
                           "repaired": (yield end.deframer.repair.repaired),
                           "credit_stalls": (yield end.credits.stalls)}
        stats["hits"] = (yield ch.a2b.errors.hits) + (yield ch.b2a.errors.hits)

    run_simulation(dut, [sender(dut.a, a2b), sender(dut.b, b2a), watch()])
    return got, stats


def delivered(got):
    return [g[:5] for g in got]


@pytest.mark.parametrize("lanes_log2", [0, 3])
def test_transactions_cross_both_ways_once_in_order_and_intact(lanes_log2):
    a2b = transactions(30, seed=lanes_log2, types=[RD_REQ, WR_REQ])
    b2a = transactions(30, seed=10 + lanes_log2, types=[RD_RSP, WR_ACK])
    got, stats = exchange(a2b, b2a, lanes_log2=lanes_log2, cycles=800 if lanes_log2 else 2600)
    assert delivered(got["b"]) == a2b and delivered(got["a"]) == b2a
    for end in "ab":
        assert stats[end]["replays"] == 0 and stats[end]["crc_errors"] == 0 and stats[end]["reinits"] == 0


def test_mixed_reads_and_writes_of_consecutive_lines_need_no_replay():
    # Consecutive lines pair under one header; a mix puts single-block units (read requests, write
    # acknowledgements) between the pairs, at 8 lanes faster than one a cycle: the deframer must keep up.
    def consecutive(seed, types):
        rng = random.Random(seed)
        return [(typ, i % 128, i, FULL, rng.getrandbits(512) if typ in (WR_REQ, RD_RSP) else 0)
                for i, typ in enumerate(rng.choice(types) for _ in range(200))]
    a2b, b2a = consecutive(1, [RD_REQ, WR_REQ]), consecutive(2, [RD_RSP, WR_ACK])
    got, stats = exchange(a2b, b2a, cycles=2500)
    assert delivered(got["b"]) == a2b and delivered(got["a"]) == b2a
    for end in "ab":
        assert stats[end]["crc_errors"] == 0 and stats[end]["replays"] == 0


def test_bit_errors_are_replayed_and_nothing_is_lost_or_repeated():
    a2b = transactions(50, seed=5, types=[WR_REQ])
    b2a = transactions(50, seed=6, types=[RD_RSP])
    # A 66-bit block is hit with probability 1/128 on every lane, both ways: nearly half of full frames.
    got, stats = exchange(a2b, b2a, threshold=1 << 33, cycles=4000)
    assert delivered(got["b"]) == a2b and delivered(got["a"]) == b2a
    assert stats["hits"] > 20
    assert stats["a"]["crc_errors"] + stats["b"]["crc_errors"] > 0
    assert stats["a"]["replays"] > 0 and stats["b"]["replays"] > 0


@pytest.mark.parametrize("selective", [0, 1])
def test_an_idle_link_stops_asking_for_replays_once_the_errors_stop(selective):
    # Only a sends: b's trailers alone (its acks, its naks) are all that crosses b2a, and errors that hit
    # them leave a waiting for a replay of nothing. b answers a nak it has nothing to replay for with a
    # trailer alone carrying its next sequence number, which ends a's wait: no nak storm on an idle link.
    a2b = transactions(5, seed=1, types=[RD_REQ, WR_REQ])
    got, stats = exchange(a2b, [], threshold=1 << 37, cycles=3000, errors_until=1000, timeout=200,
                          selective=selective)
    assert delivered(got["b"]) == a2b and not got["a"]
    assert stats["a"]["crc_errors"] > 0 and stats["b"]["crc_errors"] > 0
    for end in "ab":
        assert stats[end]["naks"] - stats[f"{end}_naks_then"] <= 1, stats


@pytest.mark.parametrize("seed", [5, 11])
def test_selective_repeat_resends_only_the_lost_frames_and_delivers_in_order(seed):
    """Go-back-N, selective repeat, and selective repeat with repair, through single-bit errors: each delivers
    everything in order and intact."""
    a2b = transactions(120, seed=seed, types=[WR_REQ])
    b2a = transactions(120, seed=seed + 1, types=[RD_RSP])
    runs = {}
    for selective, repair in ((0, 0), (1, 0), (1, 1)):
        got, stats = exchange(a2b, b2a, threshold=1 << 32, cycles=6000, selective=selective, repair=repair)
        assert delivered(got["b"]) == a2b and delivered(got["a"]) == b2a
        runs[selective + repair] = stats
    gbn, sr, repaired = runs[0], runs[1], runs[2]
    for end in "ab":
        assert gbn[end]["held"] == gbn[end]["resends"] == gbn[end]["stored"] == 0
        assert gbn[end]["repaired"] == sr[end]["repaired"] == 0
    # Good frames behind a lost one were kept and went through the store; only lost frames went again.
    assert sr["a"]["held"] + sr["b"]["held"] > 0 and sr["a"]["stored"] + sr["b"]["stored"] > 0
    assert sr["a"]["resends"] + sr["b"]["resends"] > 0
    assert sr["a"]["out_of_order"] + sr["b"]["out_of_order"] < gbn["a"]["out_of_order"] + gbn["b"]["out_of_order"]
    assert sr["a"]["replayed_txns"] + sr["b"]["replayed_txns"] < gbn["a"]["replayed_txns"] + gbn["b"]["replayed_txns"]
    # With repair, frames of one flipped bit were put right at the receiver instead of resent.
    assert repaired["a"]["repaired"] + repaired["b"]["repaired"] > 0
    assert repaired["a"]["resends"] + repaired["b"]["resends"] < sr["a"]["resends"] + sr["b"]["resends"]


def test_a_link_down_interval_reinitializes_both_ends_and_loses_nothing():
    a2b = transactions(100, seed=7, types=[WR_REQ, RD_REQ])
    b2a = transactions(100, seed=8, types=[RD_RSP, WR_ACK])
    # The retry timer (2000 cycles) outlasts the run's recovery: what is lost is replayed when the link
    # comes back up, not when a timer expires.
    got, stats = exchange(a2b, b2a, down=(40, 300), timeout=2000, cycles=1500)
    assert delivered(got["b"]) == a2b and delivered(got["a"]) == b2a
    for end in "ab":
        assert stats[end]["reinits"] == 1 and stats[end]["down_cycles"] == 300
        assert stats[end]["replays"] >= 1 and stats[end]["timeouts"] == 0
        # The re-init's rewind is counted as one, not as a nak's: a replay by cause is counted once.
        assert stats[end]["reinit_replays"] == stats[end]["reinits"]
        assert stats[end]["replays"] == stats[end]["nak_replays"] + stats[end]["reinit_replays"]


def test_credits_hold_requests_until_the_peer_frees_them():
    limit = REQUESTS_PER_CREDIT     # the smallest limit: one credit's requests
    a2b = transactions(limit + 8, seed=9, types=[RD_REQ])
    got, stats = exchange(a2b, [], credit_limit=limit, hold_credits_until=600, cycles=1200)
    assert delivered(got["b"]) == a2b
    # A limit's requests cross at once; the rest wait for credits that come back only from cycle 600 on.
    assert [g[5] for g in got["b"]][limit] > 600 > [g[5] for g in got["b"]][limit - 1]
    assert stats["a"]["credit_stalls"] > 500


# A lone request is 2 blocks: over 8 lanes one block time (4.4 ns at 15 Gb/s: 2 cycles), over one lane two
# (13.2 ns at 10 Gb/s: 4 cycles).
@pytest.mark.parametrize("lanes_log2,delay,block_ps,serialization", [(3, 10, 4400, 2), (0, 40, 6600, 4)])
def test_a_lone_request_crosses_an_idle_link_in_exact_cycles(lanes_log2, delay, block_ps, serialization):
    got, _ = exchange([(RD_REQ, 3, 0x1234, FULL, 0)], [], lanes_log2=lanes_log2, delay=delay, block_ps=block_ps,
                      cycles=100)
    # Offered at cycle 5 and taken at once; then serialization, the channel's delay and 5 cycles of logic
    # (the endpoint's TX 2 and RX 2, through the framer's and the deframer's cut-throughs, and one more on
    # the way through the channel model; through the packing stages and the ring, TX 4 and RX 6: 11).
    assert [g[5] - 5 for g in got["b"]] == [serialization + delay + 5]


def starts_unit(valid, ready, ctrl, count, data):
    """A beat taken that carries a unit's header: decoded here from its bits, apart from the gateware's."""
    return valid and ready and any((ctrl >> k) & 1 and 1 <= (data >> (64 * k)) & 0xF <= 5 for k in range(count))


@pytest.mark.parametrize("lanes_log2, delay", [(0, 3), (3, 10)])
def test_the_stage_timer_times_lone_transactions_to_the_cycle(lanes_log2, delay):
    """a sends lone transactions of every kind, 60 to 90 cycles apart, and b sends its own between them (a's
    acks for them are trailers alone on a's lanes). Each point's cycles are taken from the signals here: a's
    sink, a's framer's beats and b's deskewed beats with a unit's header, b's source."""
    rng = random.Random(lanes_log2)
    a2b = transactions(12, seed=20 + lanes_log2, types=[RD_REQ, WR_REQ, RD_RSP, WR_ACK, ERR])
    b2a = transactions(12, seed=30 + lanes_log2, types=[RD_RSP, WR_ACK])
    dut, points, result = LINK, {name: [] for name in ("sent", "framed", "deframed", "delivered")}, {}
    trailers = []   # cycles a's framer sent a beat without a unit's header (a trailer alone: an ack)

    def spaced(end, txns, offset):
        yield end.sink.valid.eq(0)
        for _ in range(offset):
            yield
        for txn in txns:
            yield from send_transactions(end.sink, [txn])
            for _ in range(rng.randrange(60, 90)):
                yield

    def watch():
        ch = dut.channel
        yield ch.lanes_log2.eq(lanes_log2)
        yield ch.delay.eq(delay)
        yield ch.block_ps.eq(4400)
        for end in (dut.a, dut.b):
            yield end.source.ready.eq(1)
        yield dut.stages.clear.eq(1)
        yield
        yield dut.stages.clear.eq(0)
        for cycle in range(1300):
            a, b = dut.a, dut.b
            seen = {"sent": (yield a.sink.valid) and (yield a.sink.ready), "delivered": (yield b.source.valid)}
            for name, beat in (("framed", a.framer.source), ("deframed", b.deskew.source)):
                values = []
                for signal in (beat.valid, beat.ready, beat.ctrl, beat.count, beat.data):
                    values.append((yield signal))
                seen[name] = starts_unit(*values)
                if name == "framed" and values[0] and values[1] and not seen[name]:
                    trailers.append(cycle)
            for name, fired in seen.items():
                if fired:
                    points[name].append(cycle)
            yield
        result["sums"] = []
        for total in dut.stages.sums:
            result["sums"].append((yield total))
        result["count"] = yield dut.stages.count
        result["spoiled"] = yield dut.stages.spoiled

    run_simulation(dut, [spaced(dut.a, a2b, 5), spaced(dut.b, b2a, 40), watch()])
    assert all(len(cycles) == len(a2b) for cycles in points.values()), points
    names = ["sent", "framed", "deframed", "delivered"]
    sums = [sum(t - s for s, t in zip(points[p], points[q])) for p, q in zip(names, names[1:])]
    assert result == {"sums": sums, "count": len(a2b), "spoiled": 0}
    # a's acks left while its own transactions were on their way, and were not taken for units.
    assert any(s < t < d for t in trailers for s, d in zip(points["sent"], points["delivered"])), trailers
