"""Memory card (litex/cores/memcard/core.py, ddr4.py): reads, full and byte-masked writes, error answers, the
programmed latency and back-pressure from the link, on the SRAM, on DDR4 through LiteDRAM and on the HMC (its
host controller, channels and device, answering out of order), on the generated Verilog; service times across
the wrap of the card's cycle count; requests through the local port answered there; DDR4 also through
refreshes and row misses."""

import random

import pytest

from monet.cores.common.layouts import T_ERR as ERR, T_RD_REQ as RD_REQ, T_RD_RSP as RD_RSP, \
    T_WR_ACK as WR_ACK, T_WR_REQ as WR_REQ
from monet.cores.memcard.codes import MEMORY_DDR4, MEMORY_HMC
from monet.cores.memcard.core import MemoryCard
from monet.cores.memcard.ddr4 import REFRESH_IDLE_CYCLES, DDR4Memory
from monet.cores.phy.figures import delay_cycles, flit_ps
from monet.cores.tests.verilog_sim import run_simulation
from monet.soc.facts import peak_GBps
from monet.soc.hmc import HMCMemoryPath

from .csr_bank import ControlBank, csr_read, csr_write
from .link_responder import byte_mask_bits, send_transactions

FULL = (1 << 64) - 1
LINES = 8192        # a 512 KiB card: four DDR4 rows across the 16 banks (8 KiB each)
ROW_LINES = 128     # lines in one DDR4 row; the next 128 lines are in the next bank
MEMORIES = ("sram", "ddr4", "hmc")
SELECT = {"ddr4": MEMORY_DDR4, "hmc": MEMORY_HMC}
HMC_SETTLE = 150    # cycles for the HMC's links to come up (16 lanes at 10 Gb/s, as the sim's default)
CARDS = {}          # one card per memory: its Verilog is converted once (each run starts a fresh model)


def card(memory):
    """The HMC's card has the local port too (as the sim's): one model serves both tests."""
    if memory not in CARDS:
        hmc = HMCMemoryPath(storage_bytes=LINES * 64, domain="hmc") if memory == "hmc" else None
        CARDS[memory] = MemoryCard(size=LINES * 64, max_outstanding=8, with_ddr4=memory == "ddr4", hmc=hmc,
                                   with_local_port=memory == "hmc")
    return CARDS[memory]


def select(dut, memory):
    """Selects `memory` and, for the HMC, brings its links up."""
    if memory in SELECT:
        yield dut.memory.eq(SELECT[memory])
    if memory == "hmc":
        for channel in (dut.hmc.down, dut.hmc.up):
            yield channel.flit_ps.eq(flit_ps(16, 10))
            yield channel.delay.eq(delay_cycles(10, lanes=16))
        for _ in range(HMC_SETTLE):
            yield


def line(seed):
    return random.Random(seed).getrandbits(512)


def exchange(requests, latency=0, stall_every=0, memory="sram", cycles=400, now=None, poison=None):
    """Sends (type, tag, laddr, mask, data) requests one a cycle (a number among them: that many idle
    cycles); returns the responses (type, tag, laddr, data, cycle), the cycle the card took each request and
    its counters (reads, writes, errors, credits, service sum, service count, refreshes, refresh waits, for
    the HMC the reads and writes its host controller sent, and last the poisoned reads). `stall_every`: the
    link refuses a response every that many cycles; `now`: the card's cycle count as the first request goes;
    `poison`: the line whose reads are answered with an error."""
    dut = card(memory)
    responses, taken, counters = [], [], []
    freed = [0]
    start = {}
    cycles += HMC_SETTLE if memory == "hmc" else 0

    def send():
        yield dut.latency.eq(latency)
        yield from select(dut, memory)
        yield
        if now is not None:
            yield dut.now.eq(now)
        yield dut.poison.eq(poison is not None)
        yield dut.poison_line.eq(poison or 0)
        for name in ("reads", "writes", "errors", "service_sum", "service_count"):
            start[name] = yield getattr(dut, name)
        for name in ("refreshes", "refresh_waits"):
            start[name] = (yield getattr(dut.ddr4, name)) if memory == "ddr4" else 0
        group = []
        for item in requests + [0]:
            if isinstance(item, int):
                yield from send_transactions(dut.sink, group)
                group = []
                for _ in range(item):
                    yield
            else:
                group.append(item)

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
                         (yield dut.service_count) - start["service_count"]])
        for name in ("refreshes", "refresh_waits"):
            counters.append(((yield getattr(dut.ddr4, name)) if memory == "ddr4" else 0) - start[name])
        if memory == "hmc":
            counters.append(((yield dut.hmc.host.reads), (yield dut.hmc.host.writes)))
        counters.append((yield dut.poisoned))

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
        # Lines in different banks or vaults (and errors, answered at once) may pass each other; one line's
        # answers keep their order.
        assert sorted(got, key=lambda r: r[1]) == sorted(want, key=lambda r: r[1])
        for laddr in {r[2] for r in want}:
            assert [r for r in got if r[2] == laddr and r[0] != ERR] == \
                [r for r in want if r[2] == laddr and r[0] != ERR]
    # reads, writes, errors, and a credit (`taken`) for every request
    assert counters[:4] == [6, 3, 4, len(REQUESTS)]
    assert counters[5] == len(REQUESTS)
    assert len(taken) == len(REQUESTS)
    if memory == "hmc":
        # The HMC served the accesses (the SRAM beside it holds the same lines and would answer the same).
        assert counters[8] == (6, 3)


@pytest.mark.parametrize("memory", MEMORIES)
def test_service_times_hold_across_the_wrap_of_the_cycle_count(memory):
    """The card's cycle count wraps from 2**32 - 1 to 0 while a read is served, at each cycle of its service:
    its service time is what it is away from the wrap (a stamp narrower than the count would make it about
    2**31)."""
    read = [(RD_REQ, 1, ROW_LINES, 0, 0)]
    away = exchange(read, memory=memory, cycles=100)[2]
    assert away[5] == 1 and away[4] < 200
    for before in range(1, 12):
        assert exchange(read, memory=memory, cycles=100, now=2**32 - before)[2][4:6] == away[4:6], before


@pytest.mark.parametrize("memory", MEMORIES)
def test_reads_of_the_poisoned_line_are_answered_with_an_error_and_the_rest_as_ever(memory):
    poisoned = 3
    requests = [(WR_REQ, 1, poisoned, FULL, line(3)), (WR_REQ, 2, poisoned + 1, FULL, line(4)), 20,
                (RD_REQ, 3, poisoned, 0, 0), (RD_REQ, 4, poisoned + 1, 0, 0), (WR_REQ, 5, poisoned, FULL, line(5)),
                20, (RD_REQ, 6, poisoned, 0, 0)]
    responses, _, counters = exchange(requests, memory=memory, poison=poisoned, cycles=600)
    answers = {tag: (typ, data) for typ, tag, _, data, _ in responses}
    assert answers[3] == (ERR, 0) and answers[6] == (ERR, 0)         # a read of it: an error, no data
    assert answers[4] == (RD_RSP, line(4))                            # the next line as written
    assert answers[5][0] == WR_ACK and answers[1][0] == WR_ACK        # writes to it land as ever
    assert counters[:3] == [1, 3, 2] and counters[-1] == 2            # 1 read, 3 writes, 2 errors, both poisoned


def test_a_request_through_the_local_port_is_answered_there_and_takes_no_credit():
    """The local port beside the link (ReMAT's local target in the sim): its requests share the input FIFO and
    the memories, each answer goes back the way its request came, and only the link's requests give credits."""
    dut = card("hmc")
    local, link, credits = [], [], [0]

    def send():
        yield from send_transactions(dut.local_sink, [(WR_REQ, 1, 3, FULL, line(3)), (RD_REQ, 2, 3, 0, 0)])
        yield from send_transactions(dut.sink, [(RD_REQ, 3, 3, 0, 0), (RD_REQ, 4, LINES, 0, 0)])
        yield from send_transactions(dut.local_sink, [(RD_REQ, 5, 4, 0, 0)])

    def receive():
        yield dut.local_source.ready.eq(1)
        yield dut.source.ready.eq(1)
        for _ in range(40):
            credits[0] += yield dut.taken
            for source, got in ((dut.local_source, local), (dut.source, link)):
                if (yield source.valid):
                    got.append(((yield source.type), (yield source.tag), (yield source.data)))
            yield

    run_simulation(dut, [send(), receive()])
    assert local == [(WR_ACK, 1, 0), (RD_RSP, 2, line(3)), (RD_RSP, 5, 0)]
    assert link == [(RD_RSP, 3, line(3)), (ERR, 4, 0)]
    assert credits[0] == 2


@pytest.mark.parametrize("latency,cycles", [(0, 2), (1, 3), (6, 8)])
def test_a_read_is_answered_after_the_documented_latency(latency, cycles):
    # The input FIFO's register 1, the memory read 1, the delay line `latency`: the request skips the empty
    # FIFO into its register, its answer goes around the empty delay line.
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
    assert latencies == [20, 6, 15, 13, 23, 25, 22]
    # The service time counts from the cycle the DRAM's port takes the command; the latency also has the
    # cycle the request is offered in and the input FIFO's register (the answer goes around the empty delay
    # line). (Through LiteDRAM's crossbar the last waited one cycle more, its bank's arbiter turning to its
    # port: BankPorts wires each port to its bank.)
    assert services == [18, 4, 13, 11, 21, 23, 20]


def test_ddr4_keeps_every_line_through_a_refresh():
    """Lines scattered over every bank written, then read one at a time 40 cycles apart (never idle long):
    the refresh that falls due at 1,950 cycles goes behind one of these reads, the next read arrives while
    it holds the DRAM and waits for it, the reopening read of the last line goes with them; then the
    others back to back. Every line reads back as written."""
    order = list(dict.fromkeys((i * 37) % (LINES - 1) for i in range(250)))
    requests = [(WR_REQ, i % 8, a, FULL, line(a + 1000)) for i, a in enumerate(order)]
    for i, a in enumerate(order[:40]):
        requests += [(RD_REQ, i % 8, a, 0, 0), 40]
    requests += [(RD_REQ, i % 8, a, 0, 0) for i, a in enumerate(order[40:])]
    responses, taken, counters = exchange(requests, memory="ddr4", cycles=4200)
    reads = [(r[2], r[3]) for r in responses if r[0] == RD_RSP]
    assert sorted(reads) == sorted((a, line(a + 1000)) for a in order)
    assert counters[6] >= 1, "no refresh inside the run"
    assert counters[7] > 0, "no read arrived while a refresh held the DRAM"


def reads_around_a_refresh(arrive_after, reads=1):
    """On a fresh DDR4 card, line 5 read every 100 cycles (never idle long) until a refresh comes, then line
    5 read `reads` times more, back to back, `arrive_after` cycles after the answer the refresh followed.
    Returns the cycles from that answer to the refresh's REF, the first of those reads' latency (offered to
    answered) and the refresh waits."""
    dut = card("ddr4")
    seen = {}

    def run():
        yield dut.memory.eq(MEMORY_DDR4)
        yield dut.source.ready.eq(1)
        before = yield dut.ddr4.refreshes
        while "ref" not in seen:
            yield from send_transactions(dut.sink, [(RD_REQ, 1, 5, 0, 0)])
            while not (yield dut.source.valid):
                yield
            for cycle in range(100):
                if (yield dut.ddr4.refreshes) != before:
                    seen["ref"] = cycle
                    break
                yield
        for _ in range(arrive_after - seen["ref"]):
            yield
        latency = 1
        yield from send_transactions(dut.sink, [(RD_REQ, 3 + i, 5, 0, 0) for i in range(reads)])
        latency += reads - 1
        while not (yield dut.source.valid):
            latency += 1
            yield
        seen["latency"] = latency
        seen["waits"] = yield dut.ddr4.refresh_waits

    run_simulation(dut, run())
    return seen


def test_a_refresh_waits_for_an_access_to_complete_and_then_its_row_is_reopened():
    """The refresh due at 1,950 cycles is owed while a read is out and goes once its answer has left (its REF
    12 cycles after the answer: the refresher hears of it a cycle later, then the bank machines' precharge
    of the open row, LiteDRAM's precharge-all and tRP). Once it has run, the line last asked for is read
    again: an access to it 200 cycles after the answer is a row hit (13 cycles, as
    test_ddr4_latencies_are_the_documented_ones has it), not a closed row (22), and waited for nothing."""
    seen = reads_around_a_refresh(arrive_after=200)
    assert seen["ref"] == 12
    assert seen["latency"] == 13
    assert seen["waits"] == 0


def test_an_access_that_arrives_during_a_refresh_waits_for_it_and_is_counted():
    """Two accesses 20 cycles after the answer that let the refresh go wait for tRP + tRFC (70 cycles), are
    counted in `refresh_waits`, and then find their row reopened by the read queued before them."""
    seen = reads_around_a_refresh(arrive_after=20, reads=2)
    assert seen["waits"] == 2
    assert 60 < seen["latency"] < 100


def refreshes_at(checkpoints, every=None):
    """The DDR4 card's refresh count at each checkpoint (cycles from the start), with a read of line 5
    offered every `every` cycles (None: nothing asked)."""
    dut = card("ddr4")
    counts = []

    def timed():
        yield dut.memory.eq(MEMORY_DDR4)
        yield dut.source.ready.eq(1)
        cycle = 0
        for until in checkpoints:
            while cycle < until:
                asking = every is not None and cycle % every == 0
                yield dut.sink.valid.eq(int(asking))
                if asking:
                    yield dut.sink.type.eq(RD_REQ)
                    yield dut.sink.laddr.eq(5)
                yield
                cycle += 1
            counts.append((yield dut.ddr4.refreshes))

    run_simulation(dut, timed())
    return counts


def test_an_idle_memory_is_refreshed_as_each_refresh_falls_due():
    """With nothing asked (idle for REFRESH_IDLE_CYCLES), a refresh goes as it falls due, every 1,950 cycles:
    none is owed when traffic comes."""
    assert refreshes_at([1940, 1990, 3890, 3940]) == [0, 1, 1, 2]


def test_a_refresh_owed_by_a_memory_gone_idle_goes_after_the_idle_cycles():
    """Reads every 8 cycles (never quiet) until cycle 1800, then nothing: the refresh falls due at 1,950 cycles
    with the memory quiet long before, so it goes once the memory has been idle REFRESH_IDLE_CYCLES (256),
    counted from the cycle after its last answer left; its REF follows that by the 12 cycles it follows a
    quiet answer (test_a_refresh_waits_for_an_access_to_complete_and_then_its_row_is_reopened)."""
    dut = card("ddr4")
    seen = {}

    def run():
        yield dut.memory.eq(MEMORY_DDR4)
        yield dut.source.ready.eq(1)
        for cycle in range(2400):
            asking = cycle < 1800 and cycle % 8 == 0
            yield dut.sink.valid.eq(int(asking))
            yield dut.sink.type.eq(RD_REQ)
            yield dut.sink.laddr.eq(5)
            if (yield dut.source.valid):
                seen["answer"] = cycle
            if (yield dut.ddr4.refreshes) and "ref" not in seen:
                seen["ref"] = cycle
            yield

    run_simulation(dut, run())
    assert seen["ref"] - seen["answer"] == REFRESH_IDLE_CYCLES + 12


def test_under_unbroken_traffic_the_eighth_owed_refresh_is_issued():
    """A read every 8 cycles (each answered in 13: one always in flight, never quiet nor idle): JESD79-4
    allows 8 refreshes postponed, so none is issued before 8 are owed (8 x 1,950 cycles), then one at once."""
    assert refreshes_at([8 * 1950 - 50, 8 * 1950 + 150], every=8) == [0, 1]


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
    # The three answers leave one a cycle, the first 2 + 6 cycles after the card took it (the count starts
    # as the last request is taken, two cycles after the first).
    assert cycles == [6, 7, 8]


def test_the_dram_peak_is_a_burst_a_cycle():
    assert peak_GBps(250e6) == 16.0
    assert peak_GBps(200e6) == 12.8


def test_ports_that_do_not_divide_the_banks_are_refused():
    with pytest.raises(AssertionError):
        DDR4Memory(LINES * 64, 250e6, ports=3)
