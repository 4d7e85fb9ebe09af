"""Go-back-N replay (litex/cores/link/retry.py): a RetryBuffer sends to a SequenceChecker over a modelled
wire that groups transactions into frames, delays them, damages or loses some, and carries the checker's
acks and naks back. Every transaction must come out once, in order, whatever the wire does. Credits
(CreditGate, CreditReturn) bound the requests in flight toward a slow consumer."""

import random
from collections import deque

import pytest
from migen import *

from monet.cores.common.layouts import *
from monet.cores.link.retry import (CONTROL_DELAY, DELIVERED_LEAD_MAX, FRAME_TXNS_MAX, UNIT_BYTES_LINE, CreditGate,
                                     CreditReturn, ReorderStore, RetryBuffer, SequenceChecker)
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
        for name in ("replays", "timeouts", "nak_replays", "reinit_replays", "replayed_txns", "replayed_bytes",
                     "window_stalls"):
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
    assert stats["replayed_bytes"] == UNIT_BYTES_LINE * stats["replayed_txns"]   # writes: a line each
    assert stats["out_of_order"] > 0          # frames behind a damaged one were dropped too
    assert stats["replays"] == stats["nak_replays"] + stats["timeouts"]   # by cause: no restart here
    assert stats["reinit_replays"] == 0
    assert in_order(150, delivered)


def test_lost_naks_and_acks_are_covered_by_timers():
    delivered, stats = run(120, damage=0.1, lose_ctrl=0.4, seed=7)
    assert stats["timeouts"] > 0 or stats["naks"] > stats["replays"] - stats["timeouts"]
    assert stats["replays"] == stats["nak_replays"] + stats["timeouts"] and stats["nak_replays"] > 0
    assert in_order(120, delivered)


def test_a_dead_interval_is_recovered_by_the_timeout():
    delivered, stats = run(100, dead=(40, 300), seed=3)
    assert stats["timeouts"] >= 1 and stats["replays"] == stats["nak_replays"] + stats["timeouts"]
    assert in_order(100, delivered)


def test_a_full_window_stalls_the_sender_instead_of_dropping():
    delivered, stats = run(100, depth=8, delay=30, seed=5)
    assert stats["window_stalls"] > 0
    assert in_order(100, delivered)


class Credits(Module):
    def __init__(self, limit):
        self.submodules.gate = CreditGate(limit=limit)
        self.submodules.back = CreditReturn()


@pytest.mark.parametrize("limit,lose,n", [(REQUESTS_PER_CREDIT, 0.0, 60), (REQUESTS_PER_CREDIT + 2, 0.5, 60),
                                          (MAX_CREDIT_LIMIT, 0.5, 1200)])
def test_credits_bound_requests_in_flight_and_survive_lost_trailers(limit, lose, n):
    """Requests pass the gate into a slow consumer; each REQUESTS_PER_CREDIT it takes return a credit as a
    cumulative count in 'trailers', some of which are lost. No more than `limit` requests are ever past the
    gate, and at the largest limit the count (CREDIT_BITS) wraps twice."""
    rng = random.Random(limit)
    dut = Credits(limit)
    peak, passed, waited = [0], [], [0]

    def bench():
        queue, next_i = [], 0
        yield dut.gate.source.ready.eq(1)
        for cycle in range(5 * n + 200):
            waited[0] += (yield dut.gate.sink.valid) and not (yield dut.gate.sink.ready)
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
        assert (yield dut.gate.stalls) == waited[0] > 0     # every cycle a request waited, and no other

    run_simulation(dut, bench())
    assert passed == list(range(n))
    # Up to the limit, not beyond; below it by at most a credit's requests still on their way back.
    assert limit - REQUESTS_PER_CREDIT <= peak[0] <= limit


def test_a_flush_credits_every_request_back_and_counts_the_peer_from_0():
    """A link's restart: requests in use with one credit back (the consumer stopped), then a flush: the next
    cycle none is in use, a stale trailer of the old peer's is dropped, and the new peer's count from 0
    returns credits again (counted against the old peer's count, its first credit would have looked like none,
    or, after the stale trailer, like 30)."""
    limit = 2 * REQUESTS_PER_CREDIT
    dut = Credits(limit)
    seen = {}

    def bench():
        yield dut.gate.source.ready.eq(1)
        yield dut.gate.sink.type.eq(T_RD_REQ)
        yield dut.gate.sink.valid.eq(1)
        for _ in range(limit + 4):
            yield
        yield dut.gate.sink.valid.eq(0)
        yield dut.gate.returned_valid.eq(1)      # the old peer's first credit
        yield dut.gate.returned.eq(1)
        yield
        yield dut.gate.returned_valid.eq(0)
        for _ in range(3):
            yield
        yield dut.gate.returned_valid.eq(1)      # its count, 3 credits: in flight as the flush comes
        yield dut.gate.returned.eq(3)
        yield dut.gate.flush.eq(1)
        yield
        seen["in_use_at_flush"] = yield dut.gate.in_use
        yield dut.gate.flush.eq(0)
        yield dut.gate.returned_valid.eq(0)
        for _ in range(3):
            yield
        seen["in_use_after"] = yield dut.gate.in_use
        yield dut.gate.sink.valid.eq(1)           # the new peer: a limit's worth of requests pass again
        passed = 0
        for _ in range(limit + 4):
            passed += (yield dut.gate.sink.valid) and (yield dut.gate.sink.ready)
            yield
        yield dut.gate.sink.valid.eq(0)
        seen["passed"] = passed
        yield dut.gate.returned_valid.eq(1)       # its first credit, counted from 0
        yield dut.gate.returned.eq(1)
        yield
        yield dut.gate.returned_valid.eq(0)
        for _ in range(3):
            yield
        seen["in_use_credited"] = yield dut.gate.in_use

    run_simulation(dut, bench())
    assert seen["in_use_at_flush"] == limit - REQUESTS_PER_CREDIT and seen["in_use_after"] == 0
    assert seen["passed"] == limit and seen["in_use_credited"] == REQUESTS_PER_CREDIT


def test_credits_for_requests_sent_without_a_limit_do_not_block_a_limit_set_later():
    """With the limit at 0 the gate counts nothing, yet the consumer returns credits for what it takes: those
    stop at an empty count, so a limit set afterwards admits requests again (a wrapped count would hold them
    forever)."""
    dut = Credits(0)
    passed = []
    first = 2 * REQUESTS_PER_CREDIT     # requests sent before the limit is set (whole credits' worth)

    def bench():
        queue, sent = [], 0
        yield dut.gate.source.ready.eq(1)
        yield dut.gate.sink.type.eq(T_RD_REQ)
        for cycle in range(400):
            if cycle == 200:
                yield dut.gate.limit.eq(REQUESTS_PER_CREDIT)    # every request sent before is taken by now
            if (yield dut.gate.sink.valid) and (yield dut.gate.sink.ready):
                passed.append(cycle)
                queue.append(cycle)
                sent += 1
            taken = bool(queue) and cycle % 5 == 0
            if taken:
                queue.pop(0)
            yield dut.back.freed.eq(taken)
            yield dut.gate.returned_valid.eq(cycle % 3 == 0)
            yield dut.gate.returned.eq((yield dut.back.count))
            yield dut.gate.sink.valid.eq((sent < first) | (cycle >= 200) & (sent < 2 * first))
            yield
        assert (yield dut.gate.in_use) <= REQUESTS_PER_CREDIT

    run_simulation(dut, bench())
    assert len(passed) == 2 * first and passed[first - 1] < 200 <= passed[first]


def trace(dut, script, cycles, watch):
    """Drives `dut` from `script` ({cycle: {signal: value}}, values held until changed) for `cycles` cycles
    and returns, per cycle, the values of the `watch` signals ({name: signal}) before that cycle's edge."""
    rows = []

    def bench():
        for cycle in range(cycles):
            for signal, value in script.get(cycle, {}).items():
                yield signal.eq(value)
            yield
            row = {}
            for name, signal in watch.items():
                row[name] = yield signal
            rows.append(row)
    run_simulation(dut, bench())
    return rows


def cycles_where(rows, name, value=1):
    return [c for c, row in enumerate(rows) if row[name] == value]


def test_the_retry_buffer_counts_stalls_ignores_acks_not_valid_and_times_out_exactly():
    tx = RetryBuffer(depth=4)
    t = 100
    # Six transactions into a 4-deep window, no ack for a while; then an ack and a nak that are not valid
    # (the deframer shows stale trailer fields between frames); then a valid ack of 4; then, the window
    # empty for 3 timeouts, one more transaction acked 10 cycles after it leaves.
    script = {0: {tx.timeout: t, tx.source.ready: 1, tx.sink.valid: 1, tx.sink.type: T_RD_REQ},
              30: {tx.ack: 2, tx.nak: 1},
              50: {tx.ack: 4, tx.nak: 0, tx.ack_valid: 1}, 51: {tx.ack_valid: 0},
              53: {tx.sink.valid: 0},
              60: {tx.ack: 6, tx.ack_valid: 1}, 61: {tx.ack_valid: 0},
              400: {tx.sink.valid: 1}, 401: {tx.sink.valid: 0},
              411: {tx.ack: 7, tx.ack_valid: 1}, 412: {tx.ack_valid: 0}}
    rows = trace(tx, script, 450, {"sent": tx.source.valid, "seq": tx.source.seq, "in": tx.sink.valid,
                                   "ready": tx.sink.ready, "stalls": tx.window_stalls, "replays": tx.replays,
                                   "timeouts": tx.timeouts})
    sent = [(c, rows[c]["seq"]) for c in cycles_where(rows, "sent")]
    assert [seq for _, seq in sent] == [0, 1, 2, 3, 4, 5, 6]      # never a replay
    assert [seq for c, seq in sent if c < 50] == [0, 1, 2, 3]     # the window holds 4 until the ack
    waited = sum(1 for row in rows if row["in"] and not row["ready"])
    assert rows[-1]["stalls"] == waited > 0
    assert (rows[-1]["replays"], rows[-1]["timeouts"]) == (0, 0)


def test_the_window_is_depth_transactions_past_the_oldest_unacknowledged():
    # A sender that always has a transaction: 4 go before any ack, and an ack of 2 lets exactly 2 more go.
    tx = RetryBuffer(depth=4)
    script = {0: {tx.timeout: 1000, tx.source.ready: 1, tx.sink.valid: 1, tx.sink.type: T_RD_REQ},
              20: {tx.ack: 2, tx.ack_valid: 1}, 21: {tx.ack_valid: 0}}
    rows = trace(tx, script, 40, {"sent": tx.source.valid, "seq": tx.source.seq})
    sent = [(c, rows[c]["seq"]) for c in cycles_where(rows, "sent")]
    assert [seq for c, seq in sent if c <= 20] == [0, 1, 2, 3]
    assert [seq for c, seq in sent if c > 20] == [4, 5]


def test_the_retry_timer_fires_after_the_timeout_without_ack_progress():
    tx = RetryBuffer(depth=4)
    t = 40
    script = {0: {tx.timeout: t, tx.source.ready: 1, tx.sink.valid: 1, tx.sink.type: T_RD_REQ},
              1: {tx.sink.valid: 0}}
    rows = trace(tx, script, 2 * t + 20, {"sent": tx.source.valid, "seq": tx.source.seq,
                                          "timeouts": tx.timeouts})
    sent = cycles_where(rows, "sent")
    # Sequence 0 leaves, then again each time the timer reaches the timeout: t cycles counted from the
    # cycle after the send, plus the rewind's cycle (and, the first time, the cycle the timer leaves 0:
    # it is held there while nothing is outstanding, the send's cycle included).
    assert sent[0] == 0 and [rows[c]["seq"] for c in sent] == [0, 0, 0]
    assert [b - a for a, b in zip(sent, sent[1:])] == [t + 2, t + 1]
    assert rows[-1]["timeouts"] == 2


def test_the_sequence_checker_acks_once_and_naks_exactly():
    rx = SequenceChecker()
    t = 30
    frame = {rx.frame_end: 1, rx.frame_ok: 1}
    idle = {rx.frame_end: 0, rx.frame_ok: 0}
    script = {0: {rx.timeout: t},
              # Nothing received for 40 cycles: nothing to say.
              40: {**frame, rx.frame_seq: 0, rx.frame_txns: 3}, 41: idle,
              # A trailer alone (no transactions) whose sequence number is not the next: it passes, drops
              # and asks nothing.
              100: {**frame, rx.frame_seq: 77, rx.frame_txns: 0}, 101: idle,
              # An early frame (5, expected 3): a nak; the replay of 3 arrives before the timer.
              120: {**frame, rx.frame_seq: 5, rx.frame_txns: 1}, 121: idle,
              122: {rx.ctrl_sent: 1}, 123: {rx.ctrl_sent: 0},
              140: {**frame, rx.frame_seq: 3, rx.frame_txns: 2}, 141: idle,
              # Another early frame and no replay: a nak, and another after the timeout ...
              250: {**frame, rx.frame_seq: 9, rx.frame_txns: 1}, 251: idle,
              252: {rx.ctrl_sent: 1}, 253: {rx.ctrl_sent: 0},
              # ... a trailer alone that is not at the ack does not end the wait; one at the ack (the peer's
              # next sequence number is the one expected) does.
              300: {**frame, rx.frame_seq: 9, rx.frame_txns: 0}, 301: idle,
              350: {**frame, rx.frame_seq: 5, rx.frame_txns: 0}, 351: idle}
    rows = trace(rx, script, 420, {"request": rx.ctrl_request, "ack": rx.ack, "nak": rx.nak, "ok": rx.seq_ok,
                                   "naks": rx.naks, "dup": rx.duplicates, "ooo": rx.out_of_order})
    requests = cycles_where(rows, "request")
    # The ack of 3 waits CONTROL_DELAY cycles for a frame to ride on, then asks for a trailer alone, and
    # keeps asking (no trailer is sent) until the nak's trailer carries it.
    assert requests[0] == 41 + CONTROL_DELAY
    assert not any(c < 41 + CONTROL_DELAY for c in requests)
    assert rows[100]["ok"] == 1 and rows[101]["dup"] == rows[101]["ooo"] == 0
    assert rows[121]["nak"] == 1 and rows[121]["naks"] == 1 and rows[121]["ooo"] == 1
    assert rows[141]["ack"] == 5 and rows[249]["naks"] == 1          # no second nak for that loss
    # and the next loss is asked again each time the timer reaches t, counted from the cycle after the nak.
    changes = [c for c in range(1, len(rows)) if rows[c]["naks"] != rows[c - 1]["naks"]]
    assert changes == [121, 251, 251 + t + 1, 251 + 2 * (t + 1), 251 + 3 * (t + 1)]
    assert 251 + 4 * (t + 1) < len(rows) and rows[-1]["ack"] == 5


@pytest.mark.parametrize("seq,txns", [(5, 1), (0, 2), (77, 0)])
def test_a_damaged_frame_asks_a_nak_whatever_its_fields_say(seq, txns):
    """A frame that fails its CRC is asked for again whether its sequence number (unreliable) looks early, in
    sequence or like a trailer alone's."""
    rx = SequenceChecker()
    script = {0: {rx.timeout: 1000}, 20: {rx.frame_end: 1, rx.frame_ok: 0, rx.frame_seq: seq, rx.frame_txns: txns},
              21: {rx.frame_end: 0}}
    rows = trace(rx, script, 24, {"nak": rx.nak, "naks": rx.naks})
    assert rows[20]["naks"] == 0 and rows[21]["nak"] == 1 and rows[-1]["naks"] == 1


def test_a_nak_with_nothing_to_replay_asks_for_a_trailer_alone():
    # Two transactions sent; a nak at 1 replays 1; all acked; then a nak at 2, the end of what was sent (the
    # peer lost a trailer alone): nothing to replay, so a trailer alone is asked for until one is sent.
    tx = RetryBuffer(depth=4)
    script = {0: {tx.timeout: 1000, tx.source.ready: 1, tx.sink.valid: 1, tx.sink.type: T_RD_REQ},
              2: {tx.sink.valid: 0},
              10: {tx.ack: 1, tx.nak: 1, tx.ack_valid: 1}, 11: {tx.ack_valid: 0, tx.nak: 0},
              20: {tx.ack: 2, tx.ack_valid: 1}, 21: {tx.ack_valid: 0},
              30: {tx.ack: 2, tx.nak: 1, tx.ack_valid: 1}, 31: {tx.ack_valid: 0, tx.nak: 0},
              40: {tx.ctrl_sent: 1}, 41: {tx.ctrl_sent: 0}}
    rows = trace(tx, script, 60, {"sent": tx.source.valid, "seq": tx.source.seq, "request": tx.ctrl_request,
                                  "nak_replays": tx.nak_replays})
    assert [rows[c]["seq"] for c in cycles_where(rows, "sent")] == [0, 1, 1]
    assert cycles_where(rows, "request") == list(range(31, 41))     # a register: from the cycle after the nak
    assert rows[-1]["nak_replays"] == 2


def test_an_idle_checker_and_credit_return_send_nothing():
    class Both(Module):
        def __init__(self):
            self.submodules.rx = SequenceChecker()
            self.submodules.back = CreditReturn()
    dut = Both()
    rx = dut.rx
    # A credit's requests, taken one a cycle up to cycle 20: those before the last make no credit, the last
    # (cycle 20) makes one.
    assert REQUESTS_PER_CREDIT <= 16
    script = {21 - REQUESTS_PER_CREDIT: {dut.back.freed: 1}, 21: {dut.back.freed: 0},
              60: {dut.back.ctrl_sent: 1}, 61: {dut.back.ctrl_sent: 0},
              # A trailer leaves with nothing new to ack as a frame arrives: the frame's ack still waits
              # its full CONTROL_DELAY.
              150: {rx.ctrl_sent: 1, rx.frame_end: 1, rx.frame_ok: 1, rx.frame_seq: 0, rx.frame_txns: 1},
              151: {rx.ctrl_sent: 0, rx.frame_end: 0, rx.frame_ok: 0}, 190: {rx.ctrl_sent: 1},
              191: {rx.ctrl_sent: 0}}
    rows = trace(dut, script, 260, {"rx": rx.ctrl_request, "back": dut.back.ctrl_request})
    assert cycles_where(rows, "rx") == list(range(151 + CONTROL_DELAY, 191))
    # The credit of cycle 20 waits CONTROL_DELAY cycles, asks until a trailer carries it, then never again.
    assert cycles_where(rows, "back") == list(range(21 + CONTROL_DELAY, 61))


def test_windows_and_limits_the_sequence_numbers_cannot_cover_are_refused():
    with pytest.raises(AssertionError):
        RetryBuffer(depth=2**(SEQ_BITS - 1))     # half the sequence space: an old and a new frame alias
    with pytest.raises(AssertionError):
        RetryBuffer(depth=96)                     # not a power of two
    with pytest.raises(AssertionError):
        CreditGate(limit=2**CREDIT_BITS * REQUESTS_PER_CREDIT)   # the count of credits in use would alias
    with pytest.raises(AssertionError):
        CreditGate(limit=REQUESTS_PER_CREDIT - 1)                 # a request alone is never credited back
    with pytest.raises(AssertionError):
        ReorderStore(depth=2**SEQ_BITS)           # more than half the sequence space: ahead and behind alias
    with pytest.raises(AssertionError):
        ReorderStore(depth=96)                    # not a power of two
    RetryBuffer(depth=2**(SEQ_BITS - 2))
    ReorderStore(depth=2**(SEQ_BITS - 1))
    CreditGate(limit=2**CREDIT_BITS * REQUESTS_PER_CREDIT - 1)   # the most the count of credits covers
    CreditGate(limit=REQUESTS_PER_CREDIT)


@pytest.mark.parametrize("selective", [0, 1])
def test_a_nak_resends_one_frame_under_selective_repeat_and_the_whole_window_under_go_back_n(selective):
    tx = RetryBuffer(depth=16)
    # Twelve transactions leave as frames of four (the framer reports each frame it closes); the peer then
    # naks at 4 (the second frame was lost) while four more wait to be sent.
    closes = {c: {tx.closed: 1, tx.closed_first: f, tx.closed_last: f + 3} for c, f in ((6, 0), (10, 4), (14, 8))}
    script = {0: {tx.timeout: 1000, tx.selective: selective, tx.source.ready: 1, tx.sink.valid: 1,
                  tx.sink.type: T_WR_REQ},
              12: {tx.sink.valid: 0}, 16: {tx.sink.valid: 1}, 20: {tx.sink.valid: 0},
              30: {tx.ack: 4, tx.nak: 1, tx.ack_valid: 1}, 31: {tx.ack_valid: 0, tx.nak: 0}}
    for c, values in closes.items():
        script[c] = {**script.get(c, {}), **values}
        script[c + 1] = {**script.get(c + 1, {}), tx.closed: 0}
    rows = trace(tx, script, 60, {"sent": tx.source.valid, "seq": tx.source.seq, "resends": tx.resends,
                                  "replayed": tx.replayed_txns})
    after_nak = [rows[c]["seq"] for c in cycles_where(rows, "sent") if c > 30]
    if selective:
        assert after_nak == [4, 5, 6, 7]                       # the lost frame alone
        assert rows[-1]["resends"] == 1 and rows[-1]["replayed"] == 4
    else:
        assert after_nak == list(range(4, 16))                 # everything from the nak on
        assert rows[-1]["resends"] == 0 and rows[-1]["replayed"] == 12


@pytest.mark.parametrize("late", [0, 1])
def test_the_reorder_store_passes_frames_in_sequence_and_holds_one_behind_a_gap(late):
    store = ReorderStore(depth=16, queue_depth=4)
    # Frame A (0, 1) in sequence; frame C (4, 5) early, behind a lost B; B (2, 3) resent. Each frame's
    # transactions leave the commit FIFO (sink) after its commit; the checker's ack follows. `late`: A's
    # leave after C's commit (the FIFO still held them then): they must still go straight out.
    commit = lambda seq, in_seq: {store.commit: 1, store.commit_seq: seq, store.commit_txns: 2,
                                  store.commit_in_seq: in_seq}
    txn = lambda tag: {store.sink.valid: 1, store.fifo_valid: 1, store.sink.tag: tag, store.sink.type: T_WR_REQ}
    idle = {store.commit: 0, store.sink.valid: 0, store.fifo_valid: 0}
    a_out = {6: {**idle, **txn(0)}, 7: txn(1)} if late else {1: {**idle, **txn(0)}, 2: txn(1), 3: idle}
    c_out = 8 if late else 6
    script = {0: commit(0, 1), **a_out,
              5: {**commit(4, 0), store.held_any: 1, store.committed: 2 * late, store.expected: 2},
              c_out: {**idle, **txn(4)}, c_out + 1: txn(5), c_out + 2: idle,
              12: commit(2, 1), 13: {**idle, **txn(2), store.expected: 6, store.held_any: 0}, 14: txn(3), 15: idle}
    if not late:
        script[5] = {**script[5], store.sink.valid: 0, store.fifo_valid: 0}
    rows = trace(store, script, 32, {"valid": store.source.valid, "tag": store.source.tag, "in": store.sink.valid,
                                     "in_tag": store.sink.tag, "reordering": store.reordering, "direct": store.direct,
                                     "stored": store.stored, "delivered": store.delivered})
    out = [(c, rows[c]["tag"]) for c in cycles_where(rows, "valid")]
    assert [tag for _, tag in out] == [0, 1, 2, 3, 4, 5]          # in sequence, each once
    assert out[:2] == [(c, rows[c]["in_tag"]) for c in cycles_where(rows, "in")[:2]]   # 0 cycles in sequence
    assert [c for c, _ in out[2:]] == list(range(out[2][0], out[2][0] + 4))        # then drained a cycle each
    assert rows[-1]["stored"] == 4 and rows[-1]["delivered"] == 6
    assert rows[c_out]["reordering"] == 1 and rows[-1]["reordering"] == 0          # back to passing through
    # A frame in sequence may go around the commit FIFO only while nothing is reordered.
    assert rows[0]["direct"] == 1 and rows[12]["direct"] == 0 and rows[5]["direct"] == 0


def test_the_sequence_checker_keeps_early_frames_jumps_over_them_and_asks_for_each_gap():
    rx = SequenceChecker(store_depth=64)
    t = 1000
    frame = lambda seq, txns=2: {rx.frame_end: 1, rx.frame_ok: 1, rx.frame_seq: seq, rx.frame_txns: txns}
    idle = {rx.frame_end: 0, rx.frame_ok: 0}
    sent = {rx.ctrl_sent: 1}
    script = {0: {rx.timeout: t, rx.selective: 1},
              10: frame(0, 12), 11: idle,
              # 12-13 lost: 14-17 (across a group of 16 bits) is kept and asks for 12; the resend of 12-13 comes,
              # the ack jumps over 14-17.
              20: frame(14, 4), 21: idle, 22: sent, 23: {rx.ctrl_sent: 0},
              40: frame(12), 41: idle,
              # 18-19 and 20-21 lost: 22-23 is kept and asks for 18; the resend of 18-19 leaves a gap at 20,
              # asked for.
              60: frame(22), 61: idle, 62: sent, 63: {rx.ctrl_sent: 0},
              80: frame(18), 81: idle,
              100: frame(20), 101: idle, 102: sent, 103: {rx.ctrl_sent: 0},
              # A frame the ack has passed is a duplicate, dropped.
              120: frame(14), 121: idle,
              # 24-25 lost, 26-41 (16, a frame of pairs) kept: the ack jumps over all 16 at once.
              140: frame(26, 16), 141: idle, 142: sent, 143: {rx.ctrl_sent: 0},
              160: frame(24), 161: idle}
    rows = trace(rx, script, 180, {"ack": rx.ack, "nak": rx.nak, "ok": rx.seq_ok, "naks": rx.naks, "held": rx.held,
                                   "dup": rx.duplicates, "ooo": rx.out_of_order, "any": rx.held_any})
    assert rows[20]["ok"] == 1 and rows[21]["held"] == 1 and rows[21]["naks"] == 1 and rows[21]["ack"] == 12
    assert rows[40]["ok"] == 1 and rows[59]["ack"] == 18 and rows[59]["any"] == 0     # over the kept frame
    assert rows[61]["naks"] == 2 and rows[79]["naks"] == 2                              # one nak a gap
    assert rows[99]["ack"] == 20 and rows[99]["naks"] == 3 and rows[99]["nak"] == 1     # the gap at 20, asked
    assert rows[119]["ack"] == 24 and rows[119]["naks"] == 3 and rows[119]["held"] == 2
    assert rows[120]["ok"] == 0 and rows[121]["dup"] == 1 and rows[-1]["ooo"] == 0
    assert rows[161]["ack"] == 26 and rows[179]["ack"] == 42 and rows[179]["any"] == 0


@pytest.mark.parametrize("delivered,room", [(0, 0), (20, 1), (44, 1), (40 + DELIVERED_LEAD_MAX, 1),
                                           (41 + DELIVERED_LEAD_MAX, 0)])
def test_a_frame_in_sequence_is_dropped_and_counted_only_without_room_in_the_reorder_store(delivered, room):
    rx = SequenceChecker(store_depth=64)
    frame = lambda seq, txns: {rx.frame_end: 1, rx.frame_ok: 1, rx.frame_seq: seq, rx.frame_txns: txns}
    idle = {rx.frame_end: 0, rx.frame_ok: 0}
    # 40 taken while nothing is reordered (they go straight out, the store needs no room); then the store
    # reorders and has delivered `delivered` of them. None: 40 past its next is more than 64 less two frames,
    # the next frame in sequence is dropped. 20: a backlog of 20 leaves room, it is taken. 44: the store has
    # delivered past the ack (kept transactions the ack has yet to jump over): no backlog, room; as far past it
    # as DELIVERED_LEAD_MAX at most, beyond which the distance is a backlog (the whole sequence space less it).
    script = {0: {rx.timeout: 1000, rx.selective: 1}, 5: frame(0, 16), 6: frame(16, 16), 7: frame(32, 8),
              8: idle, 10: {rx.reordering: 1, rx.delivered: delivered}, 20: frame(40, 2), 21: idle}
    rows = trace(rx, script, 30, {"ack": rx.ack, "ok": rx.seq_ok, "dup": rx.duplicates, "ooo": rx.out_of_order})
    assert rows[19]["ack"] == 40 and rows[20]["ok"] == room and rows[-1]["ack"] == 40 + 2 * room
    assert (rows[-1]["ooo"], rows[-1]["dup"]) == (int(not room), 0)      # dropped for room, not as a duplicate


@pytest.mark.parametrize("seq,kept", [(64 - FRAME_TXNS_MAX - 1, 1), (64 - FRAME_TXNS_MAX, 0)])
def test_an_early_frame_is_kept_only_while_its_start_leaves_a_frame_of_room_in_the_reorder_store(seq, kept):
    """The store (64 deep) has delivered nothing and the ack is at 0: an early frame is kept if it starts less
    than 64 less a frame past the store's next; one that starts a transaction later is dropped, counted out of
    order, and asks for the gap all the same."""
    rx = SequenceChecker(store_depth=64)
    script = {0: {rx.timeout: 1000, rx.selective: 1},
              10: {rx.frame_end: 1, rx.frame_ok: 1, rx.frame_seq: seq, rx.frame_txns: 2},
              11: {rx.frame_end: 0, rx.frame_ok: 0}}
    rows = trace(rx, script, 20, {"ok": rx.seq_ok, "held": rx.held, "any": rx.held_any, "ooo": rx.out_of_order,
                                  "naks": rx.naks, "ack": rx.ack})
    assert rows[10]["ok"] == kept and rows[-1]["held"] == kept and rows[-1]["any"] == kept
    assert rows[-1]["ooo"] == 1 - kept and rows[-1]["naks"] == 1 and rows[-1]["ack"] == 0


def test_the_default_timeouts_are_the_registers_and_a_lowered_one_fires_at_once():
    """Both ends left at their reset timeout (the `retry` CSR's default, 4096 cycles): the checker asks again
    and the sender replays exactly a timeout after; a timeout lowered while the timer has passed it fires in
    the next cycle."""
    dut = Pair(depth=4)
    tx, rx = dut.tx, dut.rx
    script = {0: {tx.source.ready: 1, tx.sink.valid: 1, tx.sink.type: T_WR_REQ}, 1: {tx.sink.valid: 0},
              5: {rx.frame_end: 1, rx.frame_ok: 0}, 6: {rx.frame_end: 0},
              9000: {tx.timeout: 8000}, 9100: {tx.timeout: 100}}
    rows = trace(dut, script, 9110, {"naks": rx.naks, "timeouts": tx.timeouts})
    naks = [c for c in range(1, len(rows)) if rows[c]["naks"] != rows[c - 1]["naks"]]
    timeouts = [c for c in range(1, len(rows)) if rows[c]["timeouts"] != rows[c - 1]["timeouts"]]
    assert naks[1] - naks[0] == 4096 + 1                   # counted from the cycle after the nak
    assert timeouts[0] == 4096 + 2                         # the timer leaves 0 the cycle after the send
    assert timeouts[1] - timeouts[0] == 4096 + 1
    # 8000 from cycle 9000: not reached; 100 from cycle 9100, when the timer is past 900: at once.
    assert timeouts[2:] == [9101]


def test_a_restart_in_the_cycle_of_a_timeout_is_counted_as_the_timeout():
    """A replay by cause is counted once: a restart (the link back up) that meets an expired timer is one
    rewind, a timeout's; a restart a little before it is a re-init's (and sets the timer back)."""
    tx = RetryBuffer(depth=4)
    script = {0: {tx.timeout: 20, tx.source.ready: 1, tx.sink.valid: 1, tx.sink.type: T_WR_REQ}, 1: {tx.sink.valid: 0}}
    watch = {"replays": tx.replays, "timeouts": tx.timeouts, "reinit_replays": tx.reinit_replays,
             "nak_replays": tx.nak_replays}
    expiry = cycles_where(trace(tx, script, 40, watch), "timeouts")[0]
    for restart, counts in ((expiry - 1, (1, 1, 0)), (expiry - 3, (1, 0, 1))):
        rows = trace(tx, {**script, restart: {tx.restart: 1}, restart + 1: {tx.restart: 0}}, expiry + 1, watch)
        assert (rows[-1]["replays"], rows[-1]["timeouts"], rows[-1]["reinit_replays"]) == counts, restart
        assert rows[-1]["nak_replays"] == 0


def test_acks_that_move_on_hold_the_timer_off_and_a_restart_replays_at_once():
    tx = RetryBuffer(depth=16)
    t = 40
    # 100 transactions, one a cycle while the window lets them; an ack every 10 cycles, 5 behind what was sent:
    # something is always unacknowledged, yet the acks move on, so the timer never reaches t.
    script = {0: {tx.timeout: t, tx.source.ready: 1, tx.sink.valid: 1, tx.sink.type: T_WR_REQ}}
    for c in range(10, 130, 10):
        script[c] = {tx.ack: c - 5, tx.ack_valid: 1}
        script[c + 1] = {tx.ack_valid: 0}
    script[130] = {tx.sink.valid: 0}
    # Then the link comes back up (a restart): everything unacknowledged goes again at once, before any timer.
    script[140] = {tx.restart: 1}
    script[141] = {tx.restart: 0}
    rows = trace(tx, script, 160, {"timeouts": tx.timeouts, "replays": tx.replays, "sent": tx.source.valid,
                                   "seq": tx.source.seq, "nak_replays": tx.nak_replays,
                                   "reinit_replays": tx.reinit_replays})
    assert rows[139]["timeouts"] == 0 and rows[139]["replays"] == 0
    assert rows[141]["replays"] == 1 and rows[-1]["timeouts"] == 0
    assert rows[141]["reinit_replays"] == 1 and rows[-1]["reinit_replays"] == 1 and rows[-1]["nak_replays"] == 0
    assert [rows[c]["seq"] for c in cycles_where(rows, "sent") if c > 140][:3] == [115, 116, 117]   # the last ack


def test_a_repaired_frame_is_received_like_a_kept_one_and_asked_for_only_if_not_repaired():
    """A frame kept for a repair asks no nak, nor do the frames kept behind it; repaired, it is offered and
    taken at once beside a kept frame's end, and the ack jumps over it and them. A duplicate offer is not taken
    and asks nothing; one without room in the ReorderStore asks for the frame; a repair that failed asks for it.
    An offer beside a frame taken in sequence (the ack moves) is taken the cycle after."""
    rx = SequenceChecker(store_depth=64)
    frame = lambda seq, txns=2, ok=1: {rx.frame_end: 1, rx.frame_ok: ok, rx.frame_seq: seq, rx.frame_txns: txns}
    idle = {rx.frame_end: 0, rx.frame_ok: 0}
    offer = lambda seq: {rx.repair_offer: 1, rx.repair_seq: seq, rx.repair_txns: 2}
    script = {0: {rx.timeout: 1000, rx.selective: 1},
              10: frame(0, 12), 11: idle,
              20: {**frame(12, ok=0), rx.repair_hold: 1}, 21: idle,   # 12-13 failed, kept for a repair
              30: frame(14, 4), 31: idle,                             # 14-17 kept behind it
              40: {**frame(18), **offer(12)}, 41: {**idle, rx.repair_offer: 0}, 50: {rx.repair_hold: 0},
              60: offer(12), 61: {rx.repair_offer: 0},                # 12 again: a duplicate
              65: offer(100), 66: {rx.repair_offer: 0, rx.ctrl_sent: 1}, 67: {rx.ctrl_sent: 0},   # no room
              70: frame(20), 71: idle,
              75: {**frame(22, ok=0), rx.repair_hold: 1}, 76: idle,   # 22-23 failed, kept ...
              85: {rx.repair_fallback: 1}, 86: {rx.repair_fallback: 0, rx.repair_hold: 0},   # ... not repaired
              90: {**frame(22), **offer(24)}, 91: idle, 92: {rx.repair_offer: 0}}  # 22-23 resent, 24-25 repaired
    rows = trace(rx, script, 110, {"ack": rx.ack, "naks": rx.naks, "held": rx.held, "ready": rx.repair_ready,
                                   "take": rx.repair_take, "dup": rx.duplicates})
    assert cycles_where(rows, "take") == [40, 91] and rows[40]["ready"] == 1 and rows[90]["ready"] == 0
    assert rows[39]["ack"] == 12 and rows[50]["ack"] == 20 and rows[41]["held"] == 2   # over 12-19
    assert rows[64]["naks"] == 0 and rows[66]["naks"] == 1                             # only the one without room
    assert rows[71]["ack"] == 22 and rows[85]["naks"] == 1 and rows[86]["naks"] == 2 and rows[-1]["dup"] == 0
    assert rows[91]["ack"] == 24 and rows[-1]["ack"] == 26 and rows[-1]["naks"] == 2


def test_a_frame_kept_across_the_stores_end_and_a_repair_beside_its_own_resend_are_received_whole():
    """A kept frame whose sequence numbers run past the ReorderStore's last position (62-65 in 64): the ack
    jumps over all four once the gap before it is filled. A repaired frame offered in the cycle a good copy of it
    ends (kept too): its transactions are received once, and the ack jumps over them."""
    rx = SequenceChecker(store_depth=64)
    frame = lambda seq, txns=2, ok=1: {rx.frame_end: 1, rx.frame_ok: ok, rx.frame_seq: seq, rx.frame_txns: txns}
    idle = {rx.frame_end: 0, rx.frame_ok: 0}
    offer = lambda seq: {rx.repair_offer: 1, rx.repair_seq: seq, rx.repair_txns: 2}
    script = {0: {rx.timeout: 1000, rx.selective: 1, rx.delivered: 40},
              2: frame(0, 16), 3: frame(16, 16), 4: frame(32, 16), 5: frame(48, 12), 6: idle,  # the ack at 60
              # 60-61 lost
              10: frame(62, 4), 11: {**idle, rx.ctrl_sent: 1}, 12: {rx.ctrl_sent: 0},
              20: frame(60), 21: idle,                              # the ack jumps to 66
              30: {rx.delivered: 60},
              # 66-67 lost; 68-69 failed, kept for a repair; its repaired copy and a resend of it end together
              40: {**frame(68, ok=0), rx.repair_hold: 1}, 41: idle,
              50: {**frame(68), **offer(68)}, 51: {**idle, rx.repair_offer: 0, rx.repair_hold: 0},
              60: frame(66), 61: idle}
    rows = trace(rx, script, 75, {"ack": rx.ack, "naks": rx.naks, "take": rx.repair_take, "any": rx.held_any})
    assert rows[19]["ack"] == 60 and rows[29]["ack"] == 66 and rows[29]["any"] == 0
    assert cycles_where(rows, "take") == [50] and rows[-1]["ack"] == 70 and rows[-1]["any"] == 0
    assert rows[-1]["naks"] == rows[59]["naks"]           # nothing asked once 66-67 came


def test_the_ack_jumps_over_kept_frames_while_frames_end_every_cycle():
    """Frames of one transaction ending every cycle (a stream of requests) behind a resent frame: the ack jumps
    over the kept ones as they come, rather than once the stream stops."""
    rx = SequenceChecker(store_depth=64)
    frame = lambda seq, txns=1: {rx.frame_end: 1, rx.frame_ok: 1, rx.frame_seq: seq, rx.frame_txns: txns}
    script = {0: {rx.timeout: 1000, rx.selective: 1},
              10: frame(0, 4), 11: {rx.frame_end: 0},
              20: frame(6, 2), 21: {rx.frame_end: 0, rx.ctrl_sent: 1}, 22: {rx.ctrl_sent: 0},   # 4-5 lost
              40: frame(4, 2), **{40 + k: frame(7 + k) for k in range(1, 20)}, 60: {rx.frame_end: 0}}
    rows = trace(rx, script, 80, {"ack": rx.ack, "any": rx.held_any, "ok": rx.seq_ok})
    assert all(rows[c]["ok"] for c in range(40, 60))
    assert rows[50]["ack"] >= 12 and rows[59]["ack"] >= 20                        # with the stream, not after it
    assert rows[-1]["ack"] == 27 and rows[-1]["any"] == 0


def test_the_reorder_store_takes_a_repaired_frame_first_and_delivers_it_in_sequence():
    """Frame A (0, 1) passes; B (2, 3) is being repaired, C (4, 5) comes early and starts reordering; B's
    transactions come from `inject` while C's first waits in the commit FIFO (`sink` not ready), then C's go
    into the store: all delivered in sequence, once; reordering goes on while the repair is busy."""
    store = ReorderStore(depth=16, queue_depth=4)
    commit = lambda seq, in_seq: {store.commit: 1, store.commit_seq: seq, store.commit_txns: 2,
                                  store.commit_in_seq: in_seq}
    txn = lambda tag, taken=1: {store.sink.valid: 1, store.fifo_valid: taken, store.sink.tag: tag,
                                store.sink.type: T_WR_REQ}
    injected = lambda tag: {store.inject.valid: 1, store.inject.seq: tag, store.inject.tag: tag,
                            store.inject.type: T_WR_REQ}
    idle = {store.commit: 0, store.sink.valid: 0, store.fifo_valid: 0}
    script = {0: commit(0, 1), 1: {**idle, **txn(0)}, 2: txn(1), 3: idle,
              5: {**commit(4, 0), store.held_any: 1, store.expected: 2, store.repair_busy: 1}, 6: idle,
              8: {store.repair_begin: 1},
              9: {store.repair_begin: 0, **injected(2), **txn(4, taken=0)}, 10: injected(3),
              11: {store.inject.valid: 0, **txn(4)}, 12: txn(5), 13: {**idle, store.expected: 6, store.held_any: 0},
              20: {store.repair_busy: 0}}
    rows = trace(store, script, 30, {"valid": store.source.valid, "tag": store.source.tag, "ready": store.sink.ready,
                                     "reordering": store.reordering, "stored": store.stored,
                                     "delivered": store.delivered})
    assert [rows[c]["tag"] for c in cycles_where(rows, "valid")] == [0, 1, 2, 3, 4, 5]
    assert cycles_where(rows, "ready", 0) == [9, 10]
    assert rows[-1]["stored"] == 4 and rows[-1]["delivered"] == 6
    assert rows[19]["reordering"] == 1 and rows[-1]["reordering"] == 0


def test_a_replay_leaves_a_transaction_every_cycle_while_new_ones_come_in():
    """Go-back-N's replay after a nak reads the kept transactions out one a cycle even while new ones are
    taken into the buffer behind them: none waits for the sink to go quiet."""
    tx = RetryBuffer(depth=16)
    script = {0: {tx.timeout: 1000, tx.source.ready: 1, tx.sink.valid: 1, tx.sink.type: T_WR_REQ},
              6: {tx.sink.valid: 0}, 20: {tx.ack: 2, tx.nak: 1, tx.ack_valid: 1, tx.sink.valid: 1},
              21: {tx.ack_valid: 0, tx.nak: 0}, 30: {tx.sink.valid: 0}}
    rows = trace(tx, script, 40, {"sent": tx.source.valid, "seq": tx.source.seq})
    after_nak = [c for c in cycles_where(rows, "sent") if c > 20]
    assert [rows[c]["seq"] for c in after_nak] == list(range(2, 2 + len(after_nak)))
    assert after_nak == list(range(after_nak[0], after_nak[0] + len(after_nak))) and len(after_nak) >= 14


def test_a_response_passes_the_credit_gate_when_requests_have_used_every_credit():
    """Credits count requests only: with credits left, or with the limit reached and a request held back, a read
    response or a write ack goes."""
    limit = REQUESTS_PER_CREDIT
    gate = CreditGate(limit=limit)
    script = {0: {gate.source.ready: 1, gate.sink.valid: 1, gate.sink.type: T_RD_RSP},
              1: {gate.sink.type: T_RD_REQ}, limit + 3: {gate.sink.type: T_RD_RSP},
              limit + 5: {gate.sink.type: T_WR_ACK}, limit + 7: {gate.sink.valid: 0}}
    rows = trace(gate, script, limit + 9, {"out": gate.source.valid, "in_use": gate.in_use})
    assert cycles_where(rows, "out") == list(range(limit + 1)) + [limit + 3, limit + 4, limit + 5, limit + 6]
    assert rows[limit + 1]["in_use"] == limit
