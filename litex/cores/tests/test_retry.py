"""Go-back-N replay (litex/cores/link/retry.py): a RetryBuffer sends to a SequenceChecker over a modelled
wire that groups transactions into frames, delays them, damages or loses some, and carries the checker's
acks and naks back. Every transaction must come out once, in order, whatever the wire does. Credits
(CreditGate, CreditReturn) bound the requests in flight toward a slow consumer."""

import random
from collections import deque

import pytest
from migen import *

from monet.cores.link.common import *
from monet.cores.link.retry import RetryBuffer, SequenceChecker, CreditGate, CreditReturn
from monet.cores.tests.verilog_sim import run_simulation


class Pair(Module):
    def __init__(self, depth):
        self.submodules.tx = RetryBuffer(depth=depth)
        self.submodules.rx = SequenceChecker()


def run(n, depth=32, delay=12, frame_max=4, damage=0.0, lose_ctrl=0.0, dead=None, timeout=120, seed=1,
        ready=1.0, cycles=None):
    """Sends n transactions; returns (delivered tags, counters). `dead` = (start, length): every frame and
    control message sent in that interval is lost (a link-down interval)."""
    rng = random.Random(seed)
    dut = Pair(depth)
    delivered, stats = [], {}
    cycles = cycles or 60 * n + 40 * timeout

    def wire():
        yield dut.tx.timeout.eq(timeout)
        yield dut.rx.timeout.eq(timeout)
        frames, ctrl = deque(), deque()   # (arrival cycle, ...)
        open_frame, presented, next_i, ctrl_gap = [], None, 0, 0
        for cycle in range(cycles):
            down = dead is not None and dead[0] <= cycle < dead[0] + dead[1]
            # This cycle's outputs.
            if presented is not None and presented[1]:
                if (yield dut.rx.seq_ok):
                    delivered.extend(presented[2])
            if (yield dut.tx.sink.valid) and (yield dut.tx.sink.ready):
                next_i += 1
            took = (yield dut.tx.source.valid) and (yield dut.tx.source.ready)
            if took:
                seq, tag = (yield dut.tx.source.seq), (yield dut.tx.source.tag)
                if open_frame and seq != (open_frame[-1][0] + 1) % 2**SEQ_BITS:
                    frames.append((cycle + delay, rng.random() >= damage and not down, open_frame))
                    open_frame = []
                open_frame.append((seq, tag))
            if open_frame and (len(open_frame) >= frame_max or not took):
                frames.append((cycle + delay, rng.random() >= damage and not down, open_frame))
                open_frame = []
            send_ctrl = (yield dut.rx.ctrl_request) and ctrl_gap <= 0
            if send_ctrl:
                ack, nak = (yield dut.rx.ack), (yield dut.rx.nak)
                if rng.random() >= lose_ctrl and not down:
                    ctrl.append((cycle + delay, ack, nak))
                ctrl_gap = 3
            ctrl_gap -= 1
            # Next cycle's inputs.
            yield dut.tx.sink.valid.eq(next_i < n)
            yield dut.tx.sink.tag.eq(next_i % 256)
            yield dut.tx.sink.type.eq(T_WR_REQ)
            yield dut.tx.source.ready.eq(rng.random() < ready)
            yield dut.rx.ctrl_sent.eq(send_ctrl)
            presented = None
            if frames and frames[0][0] <= cycle + 1:
                _, ok, txns = frames.popleft()
                presented = (txns[0][0], ok, [tag for _, tag in txns])
                yield dut.rx.frame_seq.eq(txns[0][0])
                yield dut.rx.frame_txns.eq(len(txns))
            yield dut.rx.frame_end.eq(presented is not None)
            yield dut.rx.frame_ok.eq(presented is not None and presented[1])
            arrived = ctrl and ctrl[0][0] <= cycle + 1
            if arrived:
                _, ack, nak = ctrl.popleft()
                yield dut.tx.ack.eq(ack)
                yield dut.tx.nak.eq(nak)
            yield dut.tx.ack_valid.eq(bool(arrived))
            yield
            if len(delivered) >= n and not frames and not open_frame and cycle > 2 * delay + 50:
                break
        for name in ("replays", "timeouts", "replayed_txns", "window_stalls"):
            stats[name] = yield getattr(dut.tx, name)
        for name in ("naks", "duplicates", "out_of_order"):
            stats[name] = yield getattr(dut.rx, name)

    run_simulation(dut, wire())
    return delivered, stats


def in_order(n, delivered):
    return delivered == [i % 256 for i in range(n)]


def test_clean_wire_never_replays():
    delivered, stats = run(60)
    assert in_order(60, delivered)
    assert stats["replays"] == 0 and stats["naks"] == 0 and stats["duplicates"] == 0


@pytest.mark.parametrize("damage,frame_max,ready", [(0.1, 4, 1.0), (0.25, 1, 0.7), (0.15, 8, 0.5)])
def test_damaged_frames_are_replayed_once_in_order(damage, frame_max, ready):
    delivered, stats = run(150, damage=damage, frame_max=frame_max, ready=ready, seed=int(damage * 100) + frame_max)
    assert stats["naks"] > 0 and stats["replays"] > 0 and stats["replayed_txns"] > 0
    assert stats["out_of_order"] > 0          # frames behind a damaged one were dropped too
    assert in_order(150, delivered)


def test_lost_naks_and_acks_are_covered_by_timers():
    delivered, stats = run(120, damage=0.1, lose_ctrl=0.4, seed=7)
    assert stats["timeouts"] > 0 or stats["naks"] > stats["replays"] - stats["timeouts"]
    assert in_order(120, delivered)


def test_a_dead_interval_is_recovered_by_the_timeout():
    delivered, stats = run(100, dead=(40, 300), seed=3)
    assert stats["timeouts"] >= 1
    assert in_order(100, delivered)


def test_a_full_window_stalls_the_sender_instead_of_dropping():
    delivered, stats = run(100, depth=8, delay=30, seed=5)
    assert stats["window_stalls"] > 0
    assert in_order(100, delivered)


class Credits(Module):
    def __init__(self, limit):
        self.submodules.gate = CreditGate(limit=limit)
        self.submodules.back = CreditReturn()


@pytest.mark.parametrize("limit,lose", [(4, 0.0), (6, 0.5)])
def test_credits_bound_requests_in_flight_and_survive_lost_trailers(limit, lose):
    """Requests pass the gate into a slow consumer; each one it takes returns a credit as a cumulative count
    in 'trailers', some of which are lost. No more than `limit` requests are ever past the gate."""
    rng = random.Random(limit)
    dut = Credits(limit)
    n, peak, passed = 60, [0], []

    def bench():
        queue, next_i = [], 0
        yield dut.gate.source.ready.eq(1)
        for cycle in range(2000):
            if (yield dut.gate.sink.valid) and (yield dut.gate.sink.ready):
                passed.append(next_i)
                queue.append(next_i)
                next_i += 1
            peak[0] = max(peak[0], len(queue))
            taken = bool(queue) and cycle % 5 == 0      # the consumer takes one every 5 cycles
            if taken:
                queue.pop(0)
            yield dut.back.freed.eq(taken)
            trailer = cycle % 3 == 0 and rng.random() >= lose
            yield dut.gate.returned_valid.eq(trailer)
            yield dut.gate.returned.eq((yield dut.back.count))
            yield dut.gate.sink.valid.eq(next_i < n)
            yield dut.gate.sink.type.eq(T_RD_REQ)
            yield
        assert (yield dut.gate.stalls) > 0

    run_simulation(dut, bench())
    assert passed == list(range(n))
    assert peak[0] <= limit
