"""The syndrome locator (litex/cores/link/repair.py): a syndrome of one flipped bit inside the frame names that
bit, at the documented latency, for every step width; one outside the frame, of two flipped bits, or of none
names nothing; syndromes that come while it scans wait in its queue, and those that find the queue full are
counted."""

import random

import pytest
from migen import Module

from monet.cores.common.crc import crc_reference
from monet.cores.link.repair import SyndromeLocator, over_x, syndrome_of_bit, x_power
from monet.cores.tests.verilog_sim import run_simulation

WIDTHS = (1, 2, 4, 8)


class Locators(Module):
    """One locator of each step width in one model (one Verilator build for every test)."""
    def __init__(self):
        self.locators = {n: SyndromeLocator(blocks_per_cycle=n) for n in WIDTHS}
        for n, locator in self.locators.items():
            setattr(self.submodules, f"locator{n}", locator)


LOCATORS = Locators()


def locate(blocks_per_cycle, syndromes, cycles=400):
    """Offers each (syndrome, blocks, idle cycles after it) in turn; returns the (cycle offered, found, block,
    bit) of each result, the cycle each result came, and the missed count."""
    dut = LOCATORS.locators[blocks_per_cycle]
    offered, results = [], []

    def offer():
        cycle = 0
        for syndrome, blocks, idle in syndromes:
            yield dut.sink.valid.eq(1)
            yield dut.sink.syndrome.eq(syndrome)
            yield dut.sink.blocks.eq(blocks)
            offered.append(cycle + 1)   # a generator's write shows in the next cycle
            yield
            cycle += 1
            yield dut.sink.valid.eq(0)
            for _ in range(idle):
                yield
                cycle += 1

    def watch():
        for cycle in range(cycles):
            if (yield dut.source.valid):
                results.append((cycle, (yield dut.source.found), (yield dut.source.block), (yield dut.source.bit)))
            yield
        results.append((yield dut.missed))

    run_simulation(dut, [offer(), watch()])
    missed = results.pop()
    return offered, results, missed


def test_the_syndrome_of_a_flipped_bit_is_the_crcs_difference():
    """x^k mod G is what one flipped bit changes a CRC-32 by (the register fed from the message's top bit):
    the model the locator's constants come from, checked against the CRC itself."""
    rng = random.Random(3)
    for _ in range(20):
        width, message = 64 * rng.randrange(1, 30) + 32, rng.getrandbits(64 * 29 + 32)
        d = rng.randrange(width)
        message &= 2**width - 1
        assert crc_reference(message, width) ^ crc_reference(message ^ 1 << d, width) == x_power(32 + d)
    assert all(over_x(crc_reference(0, 1, init=r)) == r for r in (1, 0x80000000, 0x04C11DB7, rng.getrandbits(32)))
    # A flipped bit of the trailer's CRC field (its upper half) changes the CRC by the bit itself.
    assert syndrome_of_bit(0, 32 + 5) == 1 << 5 and syndrome_of_bit(0, 3) == x_power(35)


@pytest.mark.parametrize("blocks_per_cycle", WIDTHS)
def test_a_flipped_bit_is_found_where_it_is_at_the_documented_latency(blocks_per_cycle):
    """Bits at the frame's two ends, in the trailer's two halves, at a step's edges and at random, in frames
    of 1 to 137 blocks, offered 300 cycles apart: each found at its block and bit, s + 3 cycles after it is
    offered (s its step)."""
    rng = random.Random(blocks_per_cycle)
    cases = [(0, 0, 1), (0, 63, 1), (0, 31, 2), (1, 0, 2), (136, 63, 137), (136, 0, 137),
             (blocks_per_cycle, 17, 40), (blocks_per_cycle - 1, 62, 40)]
    cases += [(block, rng.randrange(64), blocks) for blocks in (9, 73, 137) for block in [rng.randrange(blocks)]]
    offered, results, missed = locate(blocks_per_cycle, [(syndrome_of_bit(b, bit), n, 299) for b, bit, n in cases],
                                      cycles=300 * len(cases))
    assert missed == 0
    assert [(found, block, bit) for _, found, block, bit in results] == [(1, b, bit) for b, bit, _ in cases]
    assert [cycle - at for (cycle, *_), at in zip(results, offered)] == [b // blocks_per_cycle + 3 for b, _, _ in cases]


@pytest.mark.parametrize("blocks_per_cycle", WIDTHS)
def test_nothing_is_found_outside_the_frame_for_two_flipped_bits_or_for_none(blocks_per_cycle):
    """A bit one or two blocks past the frame's length (the second inside the last step of 4 blocks, which
    passes the frame's end), two flipped bits (the code's distance is 4: never the syndrome of one), and a zero
    syndrome: nothing found, after every step of the frame (ceil(blocks / width) + 2)."""
    two = syndrome_of_bit(5, 9) ^ syndrome_of_bit(30, 40)
    cases = [(syndrome_of_bit(12, 3), 12), (syndrome_of_bit(11, 3), 10), (two, 73), (0, 20),
             (syndrome_of_bit(3, 1) ^ syndrome_of_bit(0, 40), 9)]
    offered, results, missed = locate(blocks_per_cycle, [(s, n, 199) for s, n in cases], cycles=200 * len(cases))
    assert missed == 0 and [found for _, found, _, _ in results] == [0] * len(cases)
    assert [cycle - at for (cycle, *_), at in zip(results, offered)] == \
           [-(-n // blocks_per_cycle) + 2 for _, n in cases]


def test_syndromes_wait_in_the_queue_and_one_that_finds_it_full_is_counted():
    """Six syndromes back to back into a queue of 4 behind a scan of 137 blocks: the first is scanned, four
    wait and are found in turn, the sixth finds the queue full and is counted missed."""
    bits = [(136, 5), (7, 1), (20, 2), (3, 3), (0, 4), (1, 5)]
    offered, results, missed = locate(1, [(syndrome_of_bit(b, bit), 137, 0) for b, bit in bits], cycles=600)
    assert missed == 1
    assert [(block, bit) for _, _, block, bit in results] == bits[:5]
