"""Memory card (litex/cores/memcard/core.py): reads, full and byte-masked writes, error answers, the
programmed latency and back-pressure from the link, on the generated Verilog."""

import random

import pytest

from monet.cores.common.layouts import T_ERR as ERR, T_RD_REQ as RD_REQ, T_RD_RSP as RD_RSP, \
    T_WR_ACK as WR_ACK, T_WR_REQ as WR_REQ
from monet.cores.memcard.core import MemoryCard
from monet.cores.tests.verilog_sim import run_simulation

from .csr_bank import ControlBank, csr_read, csr_write
from .link_responder import byte_mask_bits, send_transactions

FULL = (1 << 64) - 1
LINES = 64          # a 4 KiB card


def line(seed):
    return random.Random(seed).getrandbits(512)


def exchange(requests, latency=0, stall_every=0):
    """Sends (type, tag, laddr, mask, data) requests one a cycle; returns the responses (type, tag, laddr,
    data, cycle), the cycle the card took each request and its counters (reads, writes, errors).
    `stall_every`: the link refuses a response every that many cycles."""
    dut = MemoryCard(size=LINES * 64, max_outstanding=8)
    responses, taken, counters = [], [], []
    freed = [0]

    def send():
        yield dut.latency.eq(latency)
        yield
        yield from send_transactions(dut.sink, requests)

    def receive():
        for cycle in range(400):
            if (yield dut.sink.valid) and (yield dut.sink.ready):
                taken.append(cycle)
            freed[0] += (yield dut.taken)
            if (yield dut.source.ready) and (yield dut.source.valid):
                responses.append(((yield dut.source.type), (yield dut.source.tag), (yield dut.source.laddr),
                                  (yield dut.source.data), cycle))
            yield dut.source.ready.eq(int(not (stall_every and cycle % stall_every == 0)))
            yield
        counters.extend([(yield dut.reads), (yield dut.writes), (yield dut.errors), freed[0]])

    run_simulation(dut, [send(), receive()])
    return responses, taken, counters


REQUESTS = [
    (WR_REQ, 1, 3, FULL, line(3)),
    (WR_REQ, 2, 4, FULL, line(4)),
    (WR_REQ, 3, 4, 0x0F0F, line(40)),            # bytes 0-3 and 8-11 only
    (RD_REQ, 4, 3, 0, 0),
    (RD_REQ, 5, 4, 0, 0),
    (RD_REQ, 6, 7, 0, 0),                         # never written
    (RD_REQ, 7, LINES, 0, 0),                     # just beyond the card
    (WR_REQ, 8, LINES + 5, FULL, line(9)),        # beyond the card: nothing written
    (RD_RSP, 9, 3, FULL, line(99)),               # not a request: nothing written
    (0, 12, 3, FULL, line(98)),                   # type 0: not a request either
    (RD_REQ, 10, LINES - 1, 0, 0),                # the last line
    (RD_REQ, 11, 5, 0, 0),                        # line 5 = LINES + 5 wrapped: must still be zero
    (RD_REQ, 13, 3, 0, 0),                        # line 3 as first written
]


@pytest.mark.parametrize("latency,stall_every", [(0, 0), (5, 0), (0, 3), (7, 2)])
def test_requests_are_answered_in_order_with_the_right_data(latency, stall_every):
    responses, taken, counters = exchange(REQUESTS, latency, stall_every)
    merged = (line(4) & ~byte_mask_bits(0x0F0F)) | (line(40) & byte_mask_bits(0x0F0F))
    want = [(WR_ACK, 1, 3, 0), (WR_ACK, 2, 4, 0), (WR_ACK, 3, 4, 0), (RD_RSP, 4, 3, line(3)),
            (RD_RSP, 5, 4, merged), (RD_RSP, 6, 7, 0), (ERR, 7, LINES, 0), (ERR, 8, LINES + 5, 0),
            (ERR, 9, 3, 0), (ERR, 12, 3, 0), (RD_RSP, 10, LINES - 1, 0), (RD_RSP, 11, 5, 0),
            (RD_RSP, 13, 3, line(3))]
    assert [r[:4] for r in responses] == want
    # reads, writes, errors, and a credit (`taken`) for every request
    assert counters == [6, 3, 4, len(REQUESTS)]
    assert len(taken) == len(REQUESTS)


@pytest.mark.parametrize("latency,cycles", [(0, 4), (1, 4), (6, 9)])
def test_a_read_is_answered_after_the_documented_latency(latency, cycles):
    # Request FIFO 2, memory read 1, the delay line max(latency, 1).
    responses, taken, _ = exchange([(RD_REQ, 1, 2, 0, 0), (RD_REQ, 2, 9, 0, 0)], latency)
    assert [r[4] - t for r, t in zip(responses, taken)] == [cycles] * 2


def test_the_default_card_holds_4_mib():
    assert MemoryCard().mem.depth * 64 == 4 << 20
    with pytest.raises(AssertionError):
        MemoryCard(size=4096 + 32)              # not whole lines


# The control block's registers as the firmware's csr.h lays them out (memcard_latency, _reads, _writes,
# _errors: one 32-bit word each, in this order).
LATENCY, READS, WRITES, ERRORS = 0, 1, 2, 3


def test_the_cpu_programs_the_latency_and_reads_32_bit_counters():
    card = MemoryCard(size=LINES * 64, max_outstanding=8)
    top = ControlBank(card)
    seen, cycles = {}, []

    def cpu():
        yield from csr_write(top, LATENCY, 0xFFFF_8006)         # a 16-bit register keeps 0x8006
        seen["latency"] = yield from csr_read(top, LATENCY)
        yield from csr_write(top, LATENCY, 6)
        # Each counter one short of bit 31: one more event sets bit 31, which a 31-bit counter or register
        # would drop.
        for counter in (card.reads, card.writes, card.errors):
            yield counter.eq(2**31 - 1)
        yield card.source.ready.eq(1)
        yield from send_transactions(card.sink, [(RD_REQ, 1, 2, 0, 0), (WR_REQ, 2, 3, FULL, line(1)),
                                                 (RD_REQ, 3, LINES, 0, 0)])
        for cycle in range(30):
            if (yield card.source.valid):
                cycles.append(cycle)
            yield
        for name, word in (("reads", READS), ("writes", WRITES), ("errors", ERRORS)):
            seen[name] = yield from csr_read(top, word)

    run_simulation(top, cpu())
    assert seen == {"latency": 0x8006, "reads": 2**31, "writes": 2**31, "errors": 2**31}
    # The three answers leave one a cycle, the first 3 + 6 cycles after the card took it (the count starts
    # as the last request is taken, two cycles after the first).
    assert cycles == [7, 8, 9]
