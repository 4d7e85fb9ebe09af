"""ReMAT's combiner (litex/cores/remat/combiner.py, CombiningWishbonePort): the CPU's cacheable window on
ReMAT, against the responder standing in for the link and memory card, on the generated Verilog.

Random word reads, refill bursts and byte-masked writes always read what a plain memory would hold (the
combiner's own writes included), with single and double-line fetches and answers in and out of order;
words written to one line leave as one masked line transaction; a burst costs one fetch; a lone write
leaves by itself after the idle time; a fence sends what is buffered and drops the read lines; faults."""

import random

import pytest
from migen import *

from monet.cores.common.layouts import *
from monet.cores.remat.combiner import CombiningWishbonePort
from monet.cores.remat.core import ReMAT
from monet.cores.tests.verilog_sim import run_simulation

from .link_responder import byte_mask_bits, link_responder, program_bfct, wishbone

SECTION_BITS = 12
WINDOW = 8 << SECTION_BITS      # 8 sections of 4 KiB: 32 KiB
FLUSH_IDLE = 64     # the combiner's default, which the SoC builds with
# Section s is remote section s + 8; sections 0-2 enabled, 5 disabled.
BFCT = {s: 0b111 | (s + 8) << 8 for s in (0, 1, 2)}


class Top(Module):
    def __init__(self):
        self.submodules.remat = ReMAT(n_ports=2, n_sections=8, section_bits=SECTION_BITS, tags=16)
        self.submodules.combiner = CombiningWishbonePort(self.remat.ports[0], window_size=WINDOW, read_lines=4)


DUT = Top()   # converted to Verilog once per test process


def remote_line(addr):
    """The remote line address of a window byte address (section s -> s + 8)."""
    return ((addr >> SECTION_BITS) + 8 << SECTION_BITS | addr & (1 << SECTION_BITS) - 1) >> 6


def run(phases, fetch_lines=2, delay=6, cycles=None):
    """Runs `phases` one after the other: lists of wishbone accesses, "fence" (pulse the fence and wait
    for idle) or a number of idle cycles. Returns (per phase the wishbone results, link requests as (cycle, type, remote line, mask,
    data), the combiner's and ReMAT's counters at the end)."""
    dut = DUT
    results = [[] for _ in phases]
    on_link, counters = [], {"idle_at": [], "write_acks": []}
    cycles = cycles or 40 * sum(len(p) for p in phases if isinstance(p, list)) + 600
    cycle = [0]

    def cpu():
        yield dut.combiner.fetch_lines.eq(fetch_lines)
        settle = 8
        for i, phase in enumerate(phases):
            if isinstance(phase, int):
                for _ in range(phase):
                    yield
            elif phase == "fence":
                yield dut.combiner.fence.eq(1)
                yield
                yield dut.combiner.fence.eq(0)
                yield
                while not (yield dut.combiner.idle):
                    yield
            else:
                yield from wishbone(dut.combiner.bus, phase, results[i], settle=settle)
            settle = 0

    def watch():
        src = dut.remat.source
        for c in range(cycles):
            cycle[0] = c
            if (yield src.valid) and (yield src.ready):
                on_link.append((c, (yield src.type), (yield src.laddr), (yield src.mask), (yield src.data)))
            counters["idle_at"].append((yield dut.combiner.idle))
            if (yield dut.combiner.bus.ack) and (yield dut.combiner.bus.we):
                counters["write_acks"].append(c)
            yield
        for name in ("read_hits", "fetches", "write_lines", "write_words", "write_errors", "idle"):
            counters[name] = yield getattr(dut.combiner, name)
        counters["faults"] = yield dut.remat.faults

    run_simulation(dut, [program_bfct(dut.remat.bfct, BFCT), link_responder(dut.remat, cycles, delay), watch(),
                         cpu()], max_cycles=cycles + 100)
    return results, on_link, counters


def word_of(memory, addr):
    line = memory.get(remote_line(addr), remote_line(addr))   # the responder's line starts as its address
    return line >> (32 * (addr >> 2 & 15)) & 0xFFFFFFFF


def write_word(memory, addr, data, sel):
    laddr = remote_line(addr)
    shift = 4 * (addr >> 2 & 15)
    bits = byte_mask_bits(sel << shift)
    memory[laddr] = (memory.get(laddr, laddr) & ~bits) | (data << (32 * (addr >> 2 & 15)) & bits)


def random_accesses(rng, count):
    """Word reads, 8-word refill bursts and byte-masked word writes over six lines of two sections, so
    that reads hit, miss, find a line's pair partner, evict, and meet lines just written."""
    lines = [0, 1, 2, 3, (1 << SECTION_BITS) // 64, (1 << SECTION_BITS) // 64 + 5]
    out = []
    while len(out) < count:
        base = 64 * rng.choice(lines)
        kind = rng.random()
        if kind < 0.3:
            half = base + 32 * rng.randrange(2)
            out += [(half + 4 * w, 0, 0, 0b1111, w < 7) for w in range(8)]
        elif kind < 0.55:
            out.append((base + 4 * rng.randrange(16), 0, 0, 0b1111))
        else:
            out.append((base + 4 * rng.randrange(16), 1, rng.getrandbits(32), rng.randrange(1, 16)))
    return out


@pytest.mark.parametrize("fetch_lines", [1, 2])
@pytest.mark.parametrize("order", ["in_order", "out_of_order"])
def test_reads_always_see_a_plain_memory_including_their_own_writes(fetch_lines, order):
    rng = random.Random(fetch_lines * 10 + len(order))
    accesses = random_accesses(rng, 160)
    touched = sorted({a[0] & ~63 for a in accesses})
    # Then, after a fence, every touched word read afresh from the responder: the writes all landed.
    check = [(line + 4 * w, 0, 0, 0b1111) for line in touched for w in range(16)]
    delay = 6 if order == "in_order" else (lambda laddr: 6 + 9 * (laddr % 3))
    results, on_link, counters = run([accesses, "fence", check], fetch_lines=fetch_lines, delay=delay)
    memory, expected = {}, []
    for addr, we, data, sel, *_ in accesses:
        if we:
            write_word(memory, addr, data, sel)
            expected.append(0)
        else:
            expected.append(word_of(memory, addr))
    got = [d if not a[1] else 0 for (d, _, _), a in zip(results[0], accesses)]
    assert got == expected
    assert [d for d, _, _ in results[2]] == [word_of(memory, a[0]) for a in check]
    assert not any(err for phase in results for _, err, _ in phase)
    assert counters["write_words"] == sum(a[1] for a in accesses) and counters["idle"] == 1
    assert counters["write_lines"] == sum(t == T_WR_REQ for _, t, _, _, _ in on_link)
    assert counters["fetches"] == sum(t == T_RD_REQ for _, t, _, _, _ in on_link)
    # Far fewer line transactions than word accesses: the point of the combiner.
    assert len(on_link) < len(accesses) / 2


def test_words_written_to_one_line_leave_as_one_masked_line_transaction():
    line_a, line_b = 3 * 64, 9 * 64
    writes = [(line_a + 4 * w, 1, 0x1000 + w, 0b1111) for w in range(16)]
    writes += [(line_b + 4 * 6, 1, 0xABCD, 0b0011)]                     # another line: line A leaves
    reads = [(line_a + 4 * 3, 0, 0, 0b1111)]                           # a miss: line B leaves first
    results, on_link, counters = run([writes + reads], fetch_lines=1)
    kinds = [(t, laddr, mask) for _, t, laddr, mask, _ in on_link]
    assert kinds == [(T_WR_REQ, remote_line(line_a), 2**64 - 1), (T_WR_REQ, remote_line(line_b), 0b0011 << 24),
                     (T_RD_REQ, remote_line(line_a), 2**64 - 1)]
    assert on_link[0][4] == sum((0x1000 + w) << (32 * w) for w in range(16))
    assert results[0][-1][0] == 0x1003
    # Posted: a write is acknowledged in 2 cycles, as a local SRAM acknowledges it; 4 when it first hands
    # the buffered line to ReMAT.
    assert [c for _, _, c in results[0][:-1]] == [2] * 16 + [4]
    assert counters["write_lines"] == 2 and counters["write_words"] == 17


@pytest.mark.parametrize("fetch_lines", [1, 2])
def test_refill_bursts_cost_one_fetch_a_line_or_a_pair(fetch_lines):
    bursts = [(64 * line + 32 * half + 4 * w, 0, 0, 0b1111, w < 7)
              for line in (4, 5) for half in (0, 1) for w in range(8)]
    results, on_link, counters = run([bursts], fetch_lines=fetch_lines, delay=20)
    assert [laddr for _, t, laddr, _, _ in on_link if t == T_RD_REQ] == [remote_line(64 * 4), remote_line(64 * 5)]
    assert counters["fetches"] == 2 and counters["read_hits"] == 32 - (2 if fetch_lines == 1 else 1)
    # A word served from the read buffer takes 2 cycles, as from a local SRAM; a miss the round trip.
    cycles = [c for _, _, c in results[0]]
    misses = [i for i, c in enumerate(cycles) if c > 2]
    assert misses == ([0, 16] if fetch_lines == 1 else [0])
    assert all(cycles[i] >= 20 for i in misses)


def test_a_lone_write_leaves_after_the_idle_time_and_a_fence_drops_the_read_lines():
    results, on_link, counters = run([[(64, 0, 0, 0b1111), (128, 1, 7, 0b1111), (64, 0, 0, 0b1111)],
                                      2 * FLUSH_IDLE, "fence", [(64, 0, 0, 0b1111)]], fetch_lines=1, cycles=400)
    writes = [(c, laddr) for c, t, laddr, _, _ in on_link if t == T_WR_REQ]
    reads = [(c, laddr) for c, t, laddr, _, _ in on_link if t == T_RD_REQ]
    assert [laddr for _, laddr in writes] == [remote_line(128)]
    # The line leaves FLUSH_IDLE cycles after the write (ack, count to the limit, the request, ReMAT's stage).
    (acked,) = counters["write_acks"]
    assert writes[0][0] - acked == FLUSH_IDLE + 2
    # Not idle from the write until its answer is back (the responder's 6 cycles after the request).
    idle = counters["idle_at"]
    assert not any(idle[acked:writes[0][0] + 6]) and all(idle[writes[0][0] + 10:writes[0][0] + 40])
    # Line 1 was read once before the fence (the second read hit) and once after it.
    assert [laddr for _, laddr in reads] == [remote_line(64)] * 2 and reads[1][0] > writes[0][0]
    assert [d for phase in results for d, _, _ in phase] == [remote_line(64), 0, remote_line(64), remote_line(64)]
    assert counters["read_hits"] == 1


def test_faults_end_reads_with_err_and_count_posted_writes():
    disabled = 5 << SECTION_BITS
    results, on_link, counters = run([[(disabled, 0, 0, 0b1111), (disabled + 8, 1, 1, 0b1111)], "fence",
                                      [(64, 0, 0, 0b1111)]], fetch_lines=1)
    assert [(d, err) for d, err, _ in results[0]] == [(0xFFFFFFFF, 1), (0, 0)]   # the write was posted
    assert counters["write_errors"] == 1 and counters["faults"] == 2
    assert results[2] == [(remote_line(64), 0, results[2][0][2])]
    assert [t for _, t, _, _, _ in on_link] == [T_RD_REQ]   # faults never reach the link


def test_a_write_to_a_line_still_being_fetched_is_not_lost_to_the_late_answer():
    # Line 8's pair partner, line 9, answers 40 cycles after line 8: the write to line 9 comes between.
    late = lambda laddr: 6 if laddr % 2 == 0 else 46
    accesses = [(8 * 64, 0, 0, 0b1111), (9 * 64 + 4, 1, 0x5A5A5A5A, 0b1111), 60, (9 * 64 + 4, 0, 0, 0b1111)]
    results, on_link, _ = run([accesses[:2], accesses[2], accesses[3:]], fetch_lines=2, delay=late)
    assert [(t, laddr) for _, t, laddr, _, _ in on_link][:2] == [(T_RD_REQ, remote_line(8 * 64)),
                                                                  (T_RD_REQ, remote_line(9 * 64))]
    assert results[0][0][0] == remote_line(8 * 64) and results[2][0][0] == 0x5A5A5A5A


@pytest.mark.parametrize("fetch_lines", [1, 2])
def test_the_read_buffer_holds_its_four_lines(fetch_lines):
    # Four lines (two pairs, or four single fetches) read, then the first again: still in the buffer.
    lines = [16, 17, 40, 41]
    accesses = [(64 * line, 0, 0, 0b1111) for line in lines] + [(64 * lines[0] + 8, 0, 0, 0b1111)]
    results, on_link, counters = run([accesses], fetch_lines=fetch_lines)
    assert [laddr for _, _, laddr, _, _ in on_link] == [remote_line(64 * line) for line in lines]
    assert [d for d, _, _ in results[0]] == [remote_line(64 * line) for line in lines] + [0]
    assert counters["read_hits"] == (3 if fetch_lines == 2 else 1)
