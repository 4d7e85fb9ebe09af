"""ErrorInjector (litex/cores/phy/errors.py): blocks are hit at the programmed rate, a hit flips the
programmed run of bits, unused slots are never hit, and a seed repeats a run exactly."""

import pytest

from monet.cores.common.layouts import MAX_LANES
from monet.cores.common.layouts import lane_slots
from monet.cores.phy.errors import ErrorInjector
from monet.cores.phy.figures import THRESHOLD_BITS, block_threshold
from monet.cores.tests.verilog_sim import run_simulation


def run(p_block, burst=1, lanes=8, cycles=1500, seed=None):
    """Full beats of zero words over `lanes` lanes; returns (hits counted, flipped bit positions per hit).
    `p_block`: every lane's hit probability, or a list of one per lane."""
    dut = ErrorInjector(salt=3)
    flips = []

    def bench():
        for lane in range(MAX_LANES):
            p = p_block[lane] if isinstance(p_block, list) else p_block
            yield dut.thresholds[lane].eq(round(p * 2**THRESHOLD_BITS))
        yield dut.burst.eq(burst)
        if seed is not None:
            yield dut.seed.eq(seed)
            yield dut.seed_load.eq(1)
            yield
            yield dut.seed_load.eq(0)
        per_lane = 8 // lanes
        for lane in range(lanes):
            yield getattr(dut.sink, f"lane{lane}_used").eq(2**per_lane - 1)
        yield dut.sink.valid.eq(1)
        yield dut.source.ready.eq(1)
        for _ in range(cycles):
            yield
            for lane in range(MAX_LANES):
                data = yield getattr(dut.source, f"lane{lane}_data")
                ctrl = yield getattr(dut.source, f"lane{lane}_ctrl")
                for slot in range(lane_slots(lane)):
                    word = (data >> (64 * slot)) & (2**64 - 1) | ((ctrl >> slot) & 1) << 64
                    if word:
                        flips.append((lane, slot, word))
        yield dut.sink.valid.eq(0)
        yield
        flips.append(("blocks", (yield dut.blocks), (yield dut.hits)))

    run_simulation(dut, bench())
    blocks, hits = flips.pop()[1:]
    return blocks, hits, flips


@pytest.mark.parametrize("lanes", [1, 8])
def test_hit_rate_matches_threshold_and_idle_slots_stay_clean(lanes):
    blocks, hits, flips = run(0.02, lanes=lanes)
    assert blocks == 8 * 1500
    expected = 0.02 * blocks
    assert abs(hits - expected) < 4 * expected**0.5          # binomial, 4 sigma
    assert len(flips) == hits
    assert all(lane < lanes for lane, _, _ in flips)          # lanes not in use carry nothing, get nothing
    assert all(bin(word).count("1") == 1 for _, _, word in flips)


def test_each_lane_has_its_own_rate():
    # Lane 5 at 5 %, lane 2 at 1 %, the others clean: 1500 beats give lane 5 1500 blocks (one slot) and
    # lane 2 3000 (two slots).
    rates = [0, 0, 0.01, 0, 0, 0.05, 0, 0]
    _, hits, flips = run(rates)
    per_lane = {lane: sum(1 for l, _, _ in flips if l == lane) for lane in range(MAX_LANES)}
    assert {lane for lane, n in per_lane.items() if n} == {2, 5}
    for lane, blocks in ((5, 1500), (2, 3000)):
        expected = rates[lane] * blocks
        assert abs(per_lane[lane] - expected) < 4 * expected**0.5    # binomial, 4 sigma
    assert hits == per_lane[2] + per_lane[5]


def test_bursts_flip_a_run_of_bits():
    _, hits, flips = run(0.02, burst=5)
    assert hits > 0
    for _, _, word in flips:
        bits = [i for i in range(65) if word >> i & 1]
        assert bits == list(range(bits[0], bits[0] + len(bits))) and 1 <= len(bits) <= 5


def test_seed_repeats_a_run_and_another_seed_does_not():
    a = run(0.05, cycles=300, seed=11)[2]
    b = run(0.05, cycles=300, seed=11)[2]
    c = run(0.05, cycles=300, seed=12)[2]
    assert a == b and a != c


def test_threshold_from_ber():
    assert block_threshold(0) == 0
    assert block_threshold(1e-12) == round((1 - (1 - 1e-12)**66) * 2**40)
    assert abs(block_threshold(1e-5) / 2**40 - 66e-5) < 1e-6


def reference_flips(p_block, burst, seed, cycles, salt=3, lanes=8):
    """The injector's flips on zero words, from an independent model of its generators: each slot's xorshift64
    starts from the seeded state and steps once a cycle; a draw below the threshold flips min(burst, 33) bits
    from the drawn position of the 66-bit block (bits 64 and 65, the sync header, flip the ctrl flag)."""
    mask64 = 2**64 - 1
    threshold = round(p_block * 2**THRESHOLD_BITS)
    run_bits = min(burst, 33)
    states = {}
    for lane in range(lanes):
        for slot in range(8 // lanes):   # the slots run() marks as used
            slot_salt = salt * 64 + lane * 8 + slot + 1
            states[lane, slot] = ((0x6A09E667 ^ slot_salt) << 32) | (seed ^ ((slot_salt * 0x9E3779B9) & 0xFFFFFFFF))

    def step(s):
        s ^= (s << 13) & mask64
        s ^= s >> 7
        return s ^ ((s << 17) & mask64)

    flips = []
    for _ in range(cycles):
        for (lane, slot), s in states.items():
            if s & (2**THRESHOLD_BITS - 1) < threshold:
                pos = (s >> THRESHOLD_BITS) & 0x7F
                pos = pos if pos < 66 else pos - 66
                run = ((2**run_bits - 1) << pos)
                word = (run & mask64) | (1 << 64 if run >> 64 else 0)
                if word:
                    flips.append((lane, slot, word))
        states = {key: step(s) for key, s in states.items()}
    return flips


@pytest.mark.parametrize("burst", [0, 1, 5, 33, 40])
def test_flips_match_an_independent_model_of_the_generators(burst):
    """Every flipped bit, slot and cycle, including runs that reach the sync header and bursts beyond the
    33 bits a run can hold, against reference_flips()."""
    got = run(0.05, burst=burst, cycles=200, seed=11)[2]
    want = reference_flips(0.05, burst, seed=11, cycles=200)
    assert got == want
    assert burst == 0 or any(word >> 64 for _, _, word in got)   # some runs reach the ctrl flag
