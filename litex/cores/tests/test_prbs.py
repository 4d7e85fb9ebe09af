"""LanePRBS (litex/cores/phy/prbs.py): the generator follows PRBS31, a looped-back checker counts exactly
the bits flipped on the way (ctrl flag included), on the active lanes only, and locks again after a
wrong lock."""

import pytest
from migen import *

from monet.cores.common.layouts import MAX_LANES
from monet.cores.link.prbs import CHECK_CYCLES, LanePRBS, PRBS_BITS, prbs31_reference
from monet.cores.tests.verilog_sim import run_simulation


def test_reference_follows_the_recurrence():
    state = 0x2545F491 & (2**PRBS_BITS - 1)
    words, _ = prbs31_reference(state, 40)
    bits = [(state >> j) & 1 for j in range(PRBS_BITS)] + [(w >> i) & 1 for w in words for i in range(64)]
    assert all(bits[n] == bits[n - 31] ^ bits[n - 28] for n in range(31, len(bits)))
    # PRBS31 is balanced: about half ones over a few thousand bits.
    assert abs(sum(bits) / len(bits) - 0.5) < 0.05


def loop(lanes_log2, flips, cycles=60):
    """Generator looped into the checkers; `flips` maps (cycle, lane) to an XOR mask of 65 bits (bit 64: the
    ctrl flag). Returns (sent words per lane, words, errors per lane, relocks, and the counters once `clear`
    was pulsed at the end)."""
    dut = LanePRBS(Signal(2, reset=lanes_log2))
    sent = {lane: [] for lane in range(MAX_LANES)}
    out = {}

    def bench():
        yield dut.source.ready.eq(1)
        yield dut.rx_enable.eq(1)
        yield dut.tx_enable.eq(1)
        for cycle in range(cycles):
            yield
            for lane in range(MAX_LANES):
                tap = dut.rx_taps[lane]
                data = yield getattr(dut.source, f"lane{lane}_data")
                used = yield getattr(dut.source, f"lane{lane}_used")
                mask = flips.get((cycle, lane), 0)
                sent[lane].append(data & (2**64 - 1))
                yield tap.valid.eq((yield dut.source.valid))
                yield tap.data.eq(data ^ (mask & (2**64 - 1)))
                yield tap.ctrl.eq(mask >> 64)
                yield tap.used.eq(used)
        yield   # the last word reaches the checkers
        yield dut.tx_enable.eq(0)
        for lane in range(MAX_LANES):
            yield dut.rx_taps[lane].valid.eq(0)
        for _ in range(1 + CHECK_CYCLES):   # the checkers' stages
            yield
        out["words"] = yield dut.words
        out["errors"] = []
        for e in dut.errors:
            out["errors"].append((yield e))
        out["relocks"] = yield dut.relocks
        yield dut.clear.eq(1)
        yield
        yield dut.clear.eq(0)
        yield
        out["cleared"] = [(yield dut.words), (yield dut.relocks)]
        for e in dut.errors:
            out["cleared"].append((yield e))

    run_simulation(dut, bench())
    return sent, out


@pytest.mark.parametrize("lanes_log2", [0, 3])
def test_looped_checker_counts_every_flipped_bit(lanes_log2):
    lanes = 1 << lanes_log2
    flips = {(10, 0): 1 << 5, (11, lanes - 1): (1 << 64) | 0b111, (30, 0): 1 << 63, (31, 7): 1 << 1}
    sent, out = loop(lanes_log2, flips)
    # Each lane's words continue one PRBS31 sequence.
    for lane in range(lanes):
        words = sent[lane]
        start = sum(((words[0] >> (64 - PRBS_BITS + j)) & 1) << j for j in range(PRBS_BITS))
        assert prbs31_reference(start, len(words) - 1)[0] == words[1:]
    # Each lane's generator starts from a seed of its own, so no two lanes send the same words: two lanes
    # crossed on the way fail their checkers.
    assert len({tuple(sent[lane]) for lane in range(lanes)}) == lanes
    expected = [0] * MAX_LANES
    for (cycle, lane), mask in flips.items():
        if lane < lanes:
            expected[lane] += bin(mask).count("1")
    assert out["errors"] == expected                  # lanes not in use count nothing
    assert out["words"] == 60 - 2 and out["relocks"] == 0   # one word to lock, one to verify the lock


def test_a_wrong_lock_is_dropped_and_locked_again():
    # The very first word is damaged: the lock fails its verification on the next word and is taken again;
    # nothing is counted before a verified lock.
    sent, out = loop(3, {(0, 0): 2**40 - 1, (20, 0): 1 << 3})
    assert out["relocks"] == 0 and out["errors"][0] == 1
    # A verified lock that is lost (a long run of garbage) counts once and is taken again.
    sent, out = loop(3, {(30, 0): 2**64 - 1, (40, 0): 1 << 9})
    assert out["relocks"] == 1 and out["errors"][0] == 1
    assert out["cleared"] == [0] * (2 + MAX_LANES)     # `clear` zeroes every counter
    # `relocks` is lane 0's: a lock lost on another lane is not counted there.
    _, other = loop(3, {(30, 5): 2**64 - 1})
    assert other["relocks"] == 0 and other["errors"][5] == 0
    # Not counted: the first lock and its verification, the lost word, the words in the checker's stages when
    # the verdict came (compared with the lost lock's sequence), and the new lock and its verification.
    assert out["words"] == 60 - 2 - 1 - CHECK_CYCLES - 2
