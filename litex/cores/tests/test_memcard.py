"""Memory card (litex/cores/memcard/core.py, ddr4.py): reads, full and byte-masked writes, error answers, the
programmed latency and back-pressure from the link, on the SRAM and on DDR4 through LiteDRAM, on the generated
Verilog; DDR4 also through refreshes and row misses."""

import random

import pytest

from monet.cores.common.layouts import T_ERR as ERR, T_RD_REQ as RD_REQ, T_RD_RSP as RD_RSP, \
    T_WR_ACK as WR_ACK, T_WR_REQ as WR_REQ
from monet.cores.memcard.core import MEMORY_DDR4, MemoryCard
from monet.cores.tests.verilog_sim import run_simulation

from .csr_bank import ControlBank, csr_read, csr_write
from .link_responder import byte_mask_bits, send_transactions

FULL = (1 << 64) - 1
LINES = 8192        # a 512 KiB card: four DDR4 rows across the 16 banks (8 KiB each)
ROW_LINES = 128     # lines in one DDR4 row; the next 128 lines are in the next bank
MEMORIES = ("sram", "ddr4")
CARDS = {}          # one card per memory: its Verilog is converted once (each run starts a fresh model)


def card(memory):
    if memory not in CARDS:
        CARDS[memory] = MemoryCard(size=LINES * 64, max_outstanding=8, with_ddr4=memory == "ddr4")
    return CARDS[memory]


def line(seed):
    return random.Random(seed).getrandbits(512)


def exchange(requests, latency=0, stall_every=0, memory="sram", cycles=400):
    """Sends (type, tag, laddr, mask, data) requests one a cycle; returns the responses (type, tag, laddr,
    data, cycle), the cycle the card took each request and its counters (reads, writes, errors, credits,
    service sum, service count, refreshes). `stall_every`: the link refuses a response every that many
    cycles."""
    dut = card(memory)
    responses, taken, counters = [], [], []
    freed = [0]
    start = {}

    def send():
        yield dut.latency.eq(latency)
        if memory == "ddr4":
            yield dut.memory.eq(MEMORY_DDR4)
        yield
        for name in ("reads", "writes", "errors", "service_sum", "service_count"):
            start[name] = yield getattr(dut, name)
        start["refreshes"] = (yield dut.ddr4.refreshes) if memory == "ddr4" else 0
        yield from send_transactions(dut.sink, requests)

    def receive():
        for cycle in range(cycles):
            if (yield dut.sink.valid) and (yield dut.sink.ready):
                taken.append(cycle)
            freed[0] += (yield dut.taken)
            if (yield dut.source.ready) and (yield dut.source.valid):
                responses.append(((yield dut.source.type), (yield dut.source.tag), (yield dut.source.laddr),
                                  (yield dut.source.data), cycle))
            yield dut.source.ready.eq(int(not (stall_every and cycle % stall_every == 0)))
            yield
        counters.extend([(yield dut.reads) - start["reads"], (yield dut.writes) - start["writes"],
                         (yield dut.errors) - start["errors"], freed[0],
                         (yield dut.service_sum) - start["service_sum"],
                         (yield dut.service_count) - start["service_count"],
                         ((yield dut.ddr4.refreshes) if memory == "ddr4" else 0) - start["refreshes"]])

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


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("latency,stall_every", [(0, 0), (5, 0), (0, 3), (7, 2)])
def test_requests_are_answered_in_order_with_the_right_data(memory, latency, stall_every):
    responses, taken, counters = exchange(REQUESTS, latency, stall_every, memory)
    merged = (line(4) & ~byte_mask_bits(0x0F0F)) | (line(40) & byte_mask_bits(0x0F0F))
    want = [(WR_ACK, 1, 3, 0), (WR_ACK, 2, 4, 0), (WR_ACK, 3, 4, 0), (RD_RSP, 4, 3, line(3)),
            (RD_RSP, 5, 4, merged), (RD_RSP, 6, 7, 0), (ERR, 7, LINES, 0), (ERR, 8, LINES + 5, 0),
            (ERR, 9, 3, 0), (ERR, 12, 3, 0), (RD_RSP, 10, LINES - 1, 0), (RD_RSP, 11, 5, 0),
            (RD_RSP, 13, 3, line(3))]
    got = [r[:4] for r in responses]
    if memory == "sram":
        assert got == want
    else:
        # Lines in different banks (and errors, answered at once) may pass each other; one line's answers
        # keep their order.
        assert sorted(got, key=lambda r: r[1]) == sorted(want, key=lambda r: r[1])
        for laddr in {r[2] for r in want}:
            assert [r for r in got if r[2] == laddr and r[0] != ERR] == \
                [r for r in want if r[2] == laddr and r[0] != ERR]
    # reads, writes, errors, and a credit (`taken`) for every request
    assert counters[:4] == [6, 3, 4, len(REQUESTS)]
    assert counters[5] == len(REQUESTS)
    assert len(taken) == len(REQUESTS)


@pytest.mark.parametrize("latency,cycles", [(0, 4), (1, 4), (6, 9)])
def test_a_read_is_answered_after_the_documented_latency(latency, cycles):
    # Request FIFO 2, memory read 1, the delay line max(latency, 1).
    responses, taken, counters = exchange([(RD_REQ, 1, 2, 0, 0), (RD_REQ, 2, 9, 0, 0)], latency)
    assert [r[4] - t for r, t in zip(responses, taken)] == [cycles] * 2
    assert counters[4:6] == [2, 2]          # the SRAM's share: one cycle each


def one_at_a_time(requests):
    """Sends each request to the DDR4 card once it has answered the one before (plus 20 idle cycles);
    returns the responses, each latency (the cycle the request is offered to the cycle its response is, both
    counted) and each service time the card reported."""
    dut = card("ddr4")
    responses, latencies, services = [], [], []

    def run():
        yield dut.memory.eq(MEMORY_DDR4)
        yield dut.source.ready.eq(1)
        for _ in range(100):
            yield
        for request in requests:
            before = yield dut.service_sum
            yield from send_transactions(dut.sink, [request])
            cycles = 1
            while not (yield dut.source.valid):
                cycles += 1
                yield
            responses.append(((yield dut.source.type), (yield dut.source.tag), (yield dut.source.laddr),
                              (yield dut.source.data)))
            latencies.append(cycles)
            for _ in range(20):
                yield
            services.append((yield dut.service_sum) - before)

    run_simulation(dut, run())
    return responses, latencies, services


def test_ddr4_latencies_are_the_documented_ones():
    """Row hits, row misses and a closed row on DDR4, one request at a time: the latencies DDR4Memory's
    docstring gives, and the service times the card reports for them."""
    far = 3 * ROW_LINES * 16 + 5            # same bank as line 5, another row
    requests = [(WR_REQ, 1, 5, FULL, line(5)),              # closed row (first access of the bank)
                (WR_REQ, 2, 6, FULL, line(6)),              # row hit
                (RD_REQ, 3, 5, 0, 0),                       # row hit, first read after writes
                (RD_REQ, 4, 6, 0, 0),                       # row hit
                (RD_REQ, 5, far, 0, 0),                     # row miss
                (WR_REQ, 6, 7, FULL, line(7)),              # row miss, first write after reads
                (RD_REQ, 7, ROW_LINES + 5, 0, 0)]           # another bank, closed row
    responses, latencies, services = one_at_a_time(requests)
    assert responses == [(WR_ACK, 1, 5, 0), (WR_ACK, 2, 6, 0), (RD_RSP, 3, 5, line(5)), (RD_RSP, 4, 6, line(6)),
                         (RD_RSP, 5, far, 0), (WR_ACK, 6, 7, 0), (RD_RSP, 7, ROW_LINES + 5, 0)]
    assert latencies == [25, 10, 19, 17, 28, 30, 27]
    # The service time counts from the cycle the DRAM's port takes the command: the input FIFO (2 cycles), the
    # delay line (1) and the cycle the request is offered in. (Through LiteDRAM's crossbar the last waited one
    # cycle more, its bank's arbiter turning to its port: BankPorts wires each port to its bank.)
    assert services == [21, 6, 15, 13, 24, 26, 23]


def test_ddr4_keeps_every_line_through_a_refresh():
    """Writes then reads of lines scattered over every bank, about 2,000 cycles from the card's reset: the
    first refresh (tREFI is 1,950 cycles) falls inside the run, and every line reads back as written."""
    order = list(dict.fromkeys((i * 37) % (LINES - 1) for i in range(250)))
    requests = [(WR_REQ, i % 8, a, FULL, line(a + 1000)) for i, a in enumerate(order)]
    requests += [(RD_REQ, i % 8, a, 0, 0) for i, a in enumerate(order)]
    responses, taken, counters = exchange(requests, memory="ddr4", cycles=2400)
    reads = [(r[2], r[3]) for r in responses if r[0] == RD_RSP]
    assert sorted(reads) == sorted((a, line(a + 1000)) for a in order)
    assert counters[6] >= 1, "no refresh landed inside the run"


def test_the_default_card_holds_4_mib():
    assert MemoryCard().mem.depth * 64 == 4 << 20
    with pytest.raises(AssertionError):
        MemoryCard(size=4096 + 32)              # not whole lines
    with pytest.raises(AssertionError, match="rows across the banks"):
        MemoryCard(size=64 * 1024, with_ddr4=True)   # less than one DDR4 row in every bank


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
