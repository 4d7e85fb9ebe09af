"""Link reliability on the host side: what a bit error rate costs a go-back-N link (the replay model), the
retry window a configuration needs, BER confidence bounds, and the optical power budget.

Replay model. Go-back-N: each bit error in a frame makes the receiver drop that frame and everything behind
it until the replay arrives: the sender loses the time from sending the damaged frame to resuming it, one
link round trip plus the frame's own time plus the detection and nak logic (`REPLAY_LOGIC_CYCLES`). Without
naks (timeouts only) it loses the timeout instead of the round trip. Selective repeat (`replay="sr"`): the
receiver keeps the good frames behind the damaged one and the sender resends that frame alone, so it loses
the frame's own time, as long as the retry window covers the round trip (`retry_window`). With repair
(`replay="sr-repair"`), a frame whose one flipped bit the CRC names is repaired at the receiver and costs
nothing: only an error in a frame that holds another one costs the frame's time. An error in
either direction costs the same (a lost request delays its response as much as a lost response). Errors
per second are the line bits per second of both directions, while data flows, times the BER; bytes
replayed per error are the bandwidth times the time lost. With r = errors/s x bytes replayed per error /
(bytes/s), the fraction of time lost, the predicted efficiency is 1 / (1 + r): no errors happen while the
link waits.
"""

import math

from monet.link import model as link_model
from monet.link.profiles import PROFILES

# Frame detection and nak handling, cycles: deframer (6), sequence check and nak into the next trailer
# (2), the peer's deframer (6), rewind and framer (5).
REPLAY_LOGIC_CYCLES = 19
# Blocks of a full frame under load: 8 units of a line each, plus the trailer.
FRAME_BLOCKS = 8 * 9 + 1


# The longest a receiver's repairs hold its ack (`replay="sr-repair"`): frames kept in its four slots repaired
# one after the other, each 13 to 28 cycles from its arrival to its delivery (measured on test_link's link; up
# to about 55 with two slots and a scan of a transaction a cycle, when 128 was chosen), with room to spare. A
# timer shorter than a round trip plus this fires while a repair is under way and resends a frame the
# receiver is about to deliver.
REPAIR_HOLD_CYCLES = 128


def timeout_cycles(delay_cycles, replay="gbn"):
    """Retry timer for a link of this one-way delay: two round trips and 64 cycles of logic, and with repair
    (`replay="sr-repair"`) the longest hold of the receiver's repairs, at most the 16-bit timer's 65535."""
    hold = REPAIR_HOLD_CYCLES if replay == "sr-repair" else 0
    return min(65535, 4 * delay_cycles + 64 + hold)


def replay_settings(profile, delay_cycles, replay="gbn"):
    """(timeout, nak) for a profile replaying by `replay` (one of REPLAYS). `ours` replays on the peer's nak;
    the MONet-compatible profile models a slow, timer-driven retransmission (the paper gives no mechanism; see
    PROFILE_RETRY_NOTE)."""
    if profile == "monet":
        return 65535, 0
    return timeout_cycles(delay_cycles, replay), 1


PROFILE_RETRY_NOTE = ("monet profile: retransmission on a 65535-cycle (262 us) timer without naks, an "
                      "assumption: the paper states only that retransmission is enabled and slow")


# Go-back-N, selective repeat (the link's `retry selective=`), selective repeat with frames of one flipped bit
# repaired (`retry selective=1 repair=1`).
REPLAYS = ("gbn", "sr", "sr-repair")


def time_lost_ns(profile, distance_m, lanes, rate_gbps, replay="gbn"):
    """Time the sender loses to one damaged frame, ns."""
    prof = PROFILES[profile]
    delay = prof.delay_cycles(distance_m, rate_gbps)
    timeout, nak = replay_settings(profile, delay, replay)
    frame = link_model.serialization_cycles(FRAME_BLOCKS if prof.max_units > 1 else 10, lanes, rate_gbps)
    if replay in ("sr", "sr-repair"):
        return link_model.cycles_to_ns(frame)
    if nak:
        return link_model.cycles_to_ns(2 * delay + frame + REPLAY_LOGIC_CYCLES)
    return link_model.cycles_to_ns(timeout + frame)


def blocks_per_line(profile):
    """66-bit blocks on the wire per 64 B line moved, both directions: the data direction's units (a pair of
    lines shares a header) and trailers, and the other direction's one-block requests or acks, each with a
    trailer of its own (a unit without a line closes its frame: litex/cores/link/packing.py)."""
    prof = PROFILES[profile]
    lines_per_unit = 2 if prof.pairing else 1
    data = (8 * lines_per_unit + 1) / lines_per_unit + 1 / (prof.max_units * lines_per_unit)
    return data + 2


def replay_model(ber, profile, distance_m, lanes, rate_gbps, bandwidth_GBps, replay="gbn"):
    """Predicted efficiency of a link at `ber` whose error-free bandwidth is `bandwidth_GBps`, replaying
    go-back-N (`replay="gbn"`), by selective repeat ("sr"), or by selective repeat with repair ("sr-repair": an
    error costs only if its frame of FRAME_BLOCKS holds another)."""
    line_bits_per_s = bandwidth_GBps * 1e9 / link_model.LINE_BYTES * blocks_per_line(profile) * 66
    errors_per_s = line_bits_per_s * ber
    lost_ns = time_lost_ns(profile, distance_m, lanes, rate_gbps, replay)
    if replay == "sr-repair":
        lost_ns *= -math.expm1(-ber * FRAME_BLOCKS * 66)
    replayed_bytes = bandwidth_GBps * lost_ns   # GB/s x ns = bytes
    lost_fraction = errors_per_s * replayed_bytes / (bandwidth_GBps * 1e9) if bandwidth_GBps else 0.0
    return {
        "errors_per_s": errors_per_s,
        "time_lost_per_error_ns": lost_ns,
        "bytes_replayed_per_error": replayed_bytes,
        "time_lost_per_time_sending": lost_fraction,
        "predicted_efficiency": 1.0 / (1.0 + lost_fraction),
    }


def retry_window(profile, distance_m, lanes, rate_gbps, tags, depth, bandwidth_GBps=None):
    """Transactions that must be unacknowledged at once to keep the link busy: bandwidth x (ack round trip)
    / 64 B. It fits when the fewer of the ReMAT's `tags` (what can be in flight) and the retry buffer's
    `depth` (the build's remote_tags and link_retry_depth) covers it; beyond, the link's bandwidth is
    bounded by that count over the round trip."""
    prof = PROFILES[profile]
    delay = prof.delay_cycles(distance_m, rate_gbps)
    bw = bandwidth_GBps or link_model.payload_capacity_GBps(lanes, rate_gbps)
    frame = link_model.serialization_cycles(FRAME_BLOCKS, lanes, rate_gbps)
    loop_ns = link_model.cycles_to_ns(2 * delay + 2 * frame + REPLAY_LOGIC_CYCLES)
    needed = math.ceil(bw * loop_ns / link_model.LINE_BYTES)
    return {"needed": needed, "depth": depth, "tags": tags, "fits": needed <= min(tags, depth),
            "ack_loop_ns": loop_ns}


def _poisson_cdf(k, lam):
    """P(X <= k) for X ~ Poisson(lam), summed in log space."""
    if lam == 0:
        return 1.0
    total, log_term = 0.0, -lam
    for i in range(k + 1):
        if i:
            log_term += math.log(lam) - math.log(i)
        total += math.exp(log_term)
    return min(1.0, total)


def _bisect(f, lo, hi):
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid):
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def ber_bounds(bits, errors, confidence=0.95):
    """Two-sided confidence interval of a BER measured as `errors` in `bits` (exact Poisson below 1000
    errors, normal above)."""
    if bits <= 0:
        raise ValueError("no bits measured")
    alpha = 1 - confidence
    if errors > 1000:
        z = 1.959963984540054 if confidence == 0.95 else _bisect(
            lambda x: 0.5 * math.erfc(x / math.sqrt(2)) < alpha / 2, 0, 10)
        half = z * math.sqrt(errors)
        return max(0.0, (errors - half) / bits), (errors + half) / bits
    upper = _bisect(lambda lam: _poisson_cdf(errors, lam) < alpha / 2, 0, 10 * errors + 50)
    lower = 0.0 if errors == 0 else _bisect(
        lambda lam: 1 - _poisson_cdf(errors - 1, lam) > alpha / 2, 0, errors)
    return lower / bits, upper / bits


# Optical power budget -------------------------------------------------------------------------------------
# The MONet paper's s.5.C figures: SiP transmitter -3 dBm, 1 dB per switch hop, receiver sensitivity for
# BER 1e-12 of -13.9 dBm at 10 Gb/s and -6.5 dBm at 12.5 and 15 Gb/s. Fiber loss <= 0.2 dB/km (paper s.3).
TX_DBM           = -3.0
HOP_LOSS_DB      = 1.0
FIBER_DB_PER_KM  = 0.2
SENSITIVITY_DBM  = {10.0: -13.9, 12.5: -6.5, 15.0: -6.5}
PAPER_HOPS       = {10.0: 7, 12.5: 3, 15.0: 3}


def power_budget(rate_gbps, tx_dbm=TX_DBM, hop_loss_db=HOP_LOSS_DB, fiber_km=0.0, fiber_db_per_km=FIBER_DB_PER_KM,
                 extra_loss_db=0.0, margin_db=0.0, sensitivity_dbm=None):
    """Largest switch-hop count a lane rate allows. A path in the paper's tiered topology crosses 2t - 1
    switches for t tiers, so `tiered_hops` is the largest odd count within the budget."""
    sens = SENSITIVITY_DBM[rate_gbps] if sensitivity_dbm is None else sensitivity_dbm
    budget = tx_dbm - sens
    left = budget - fiber_km * fiber_db_per_km - extra_loss_db - margin_db
    hops = max(0, math.floor(left / hop_loss_db + 1e-9)) if left >= 0 else None
    tiers = None if hops is None else (hops + 1) // 2
    return {"rate_gbps": rate_gbps, "tx_dbm": tx_dbm, "sensitivity_dbm": sens, "budget_db": budget,
            "fiber_loss_db": fiber_km * fiber_db_per_km, "extra_loss_db": extra_loss_db, "margin_db": margin_db,
            "left_for_hops_db": left, "max_hops": hops, "tiers": tiers,
            "tiered_hops": None if not tiers else 2 * tiers - 1, "paper_hops": PAPER_HOPS.get(rate_gbps)}
