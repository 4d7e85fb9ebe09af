"""The remote memory path (litex/soc/remote.py): ReMAT, the link's two ends over the sim channel and the
memory card, on the generated Verilog, driven from ReMAT's two master ports. What one port writes the other
reads back, over 1 and 8 lanes; bit errors are replayed and a short link-down is re-initialized without a
wrong or lost answer; a link down for longer than ReMAT's request timeout ends the accesses in flight with
a timeout fault and the path serves again once the link is back; a lone read's round trip grows by twice a
change of the one-way delay. One small configuration, so one Verilator model serves every test here."""

import random

import pytest

from monet.cores.remat.bfct import ENTRY, FAULT_TIMEOUT
from monet.cores.tests.link_responder import byte_mask_bits, offer
from monet.cores.tests.verilog_sim import run_simulation
from monet.soc.remote import RemoteMemoryPath

SECTION_BITS = 12                     # 4 KiB sections
SECTIONS = 4                          # the whole 16 KiB memory card, section i at remote section i
LINE = 64
FULL = (1 << LINE) - 1
AFTER_SETUP = 10                      # cycles: the BFCT is programmed by then
READS_START = 400                     # cycles: every write is through by then, even over one lane


# One path for every test (each run starts a fresh model, so nothing carries over between runs).
DUT = RemoteMemoryPath(n_sections=SECTIONS, section_bits=SECTION_BITS, tags=16,
                       memcard_size=SECTIONS << SECTION_BITS, channel_depth=64, max_delay=60, retry_depth=64,
                       credits=16)


def run(accesses, lanes_log2=3, delay=10, block_ps=4400, threshold=0, down=None, request_timeout=None,
        cycles=2000):
    """accesses: {port: [(start_cycle, addr, we, mask, data)]}, each port's in order (one is offered once the
    one before was taken and not before its start cycle). Runs until every access is answered (at most
    `cycles`); returns {port: [(id, err, data, cycle)]} and the path's counters. `down`: (cycle, length) of a
    link-down interval; `request_timeout`: ReMAT's, cycles."""
    dut = DUT
    got = {port: [] for port in accesses}
    counters = {}

    def setup():
        ch = dut.channel
        yield ch.lanes_log2.eq(lanes_log2)
        yield ch.delay.eq(delay)
        yield ch.block_ps.eq(block_ps)
        for t in ch.thresholds:
            yield t.eq(threshold)
        if request_timeout is not None:
            yield dut.remat.timeout.eq(request_timeout)
        for end in (dut.link_c, dut.link_m):   # go-back-N timers well inside a run (the default, 4096, is not)
            yield end.retry.timeout.eq(256)
            yield end.checker.timeout.eq(256)
        bfct = dut.remat.bfct
        for section in range(SECTIONS):
            yield bfct.wr_index.eq(section)
            yield bfct.wr_entry.eq(ENTRY.word(enable=1, read=1, write=1, base=section))
            yield bfct.wr_stb.eq(1)
            yield
        yield bfct.wr_stb.eq(0)
        yield
        if down is not None:
            yield ch.down_after.eq(down[0] - (yield dut.remat.now))
            yield ch.down_for.eq(down[1])
            yield ch.go_down.eq(1)
            yield
            yield ch.go_down.eq(0)

    def issue(port, reqs):
        req = dut.remat.ports[port].req
        for i, (start, addr, we, mask, data) in enumerate(reqs):
            while (yield dut.remat.now) < start:
                yield
            yield from offer(req, [dict(addr=addr, we=we, mask=mask, data=data, id=i)])
        yield req.valid.eq(0)

    def watch():
        for cycle in range(cycles):
            for port in accesses:
                rsp = dut.remat.ports[port].rsp
                if (yield rsp.valid):
                    got[port].append(((yield rsp.id), (yield rsp.err), (yield rsp.data), cycle))
            yield
            if all(len(got[port]) == len(reqs) for port, reqs in accesses.items()):
                break
        for _ in range(4):   # the memory card's and the link's counters settle
            yield
        for name, signal in (("faults", dut.remat.faults), ("fault_kind", dut.remat.fault_kind),
                             ("timeouts", dut.remat.timeouts), ("lat_last", dut.remat.lat_last),
                             ("replays", dut.link_c.retry.replays), ("replays_m", dut.link_m.retry.replays),
                             ("reinits", dut.link_c.reinits), ("reinits_m", dut.link_m.reinits),
                             ("reads", dut.memcard.reads), ("writes", dut.memcard.writes)):
            counters[name] = yield signal
        counters["hits"] = (yield dut.channel.a2b.errors.hits) + (yield dut.channel.b2a.errors.hits)

    run_simulation(dut, [setup(), watch()] + [issue(port, reqs) for port, reqs in accesses.items()])
    return got, counters


def writes_then_reads(seed, n=6):
    """Port 0 writes n lines (some with a partial byte mask) at random line addresses of the window's lower
    half, port 1 of the upper half; then each port reads back the lines the other wrote, and one line never
    written. Returns the accesses and, per port, the data each read must return (by access id)."""
    rng = random.Random(seed)
    half = (SECTIONS << SECTION_BITS) // 2
    lines = {port: rng.sample(range(port * half // LINE, (port + 1) * half // LINE - 1), n) for port in (0, 1)}
    memory, accesses, want = {}, {0: [], 1: []}, {0: {}, 1: {}}
    for port in (0, 1):
        for line in lines[port]:
            mask = FULL if rng.random() < 0.7 else rng.getrandbits(LINE)
            data = rng.getrandbits(8 * LINE)
            accesses[port].append((AFTER_SETUP, line * LINE, 1, mask, data))
            bits = byte_mask_bits(mask)
            memory[line] = (memory.get(line, 0) & ~bits) | (data & bits)
    for port in (0, 1):
        other = lines[1 - port] + [(1 - port + 1) * half // LINE - 1]   # and the other half's last line
        for line in other:
            want[port][len(accesses[port])] = memory.get(line, 0)
            # The reads start once every write is through (the two ports are not ordered with each other).
            accesses[port].append((READS_START, line * LINE, 0, FULL, 0))
    return accesses, want


def check_answers(got, accesses, want):
    for port, reqs in accesses.items():
        answers = sorted(got[port])
        assert [a[0] for a in answers] == list(range(len(reqs))), f"port {port}: each access answered once"
        assert not [a for a in answers if a[1]], f"port {port}: no access ends with an error"
        wrong = [i for i, _, data, _ in answers if i in want[port] and data != want[port][i]]
        assert not wrong, f"port {port}: reads {wrong} return other data than was written"


@pytest.mark.parametrize("lanes_log2", [0, 3])
def test_what_one_port_writes_the_other_reads_back(lanes_log2):
    accesses, want = writes_then_reads(seed=lanes_log2)
    got, counters = run(accesses, lanes_log2=lanes_log2)
    check_answers(got, accesses, want)
    assert counters["writes"] == 12 and counters["reads"] == 14
    assert counters["faults"] == counters["replays"] == counters["reinits"] == 0


def test_bit_errors_are_replayed_and_every_answer_is_right():
    accesses, want = writes_then_reads(seed=7)
    # A block is hit with probability 1/64 on every lane, both ways.
    got, counters = run(accesses, threshold=1 << 34)
    check_answers(got, accesses, want)
    assert counters["hits"] > 5 and counters["replays"] > 0 and counters["replays_m"] > 0
    assert counters["faults"] == 0


def test_a_short_link_down_is_reinitialized_and_every_answer_is_right():
    accesses, want = writes_then_reads(seed=8)
    # Down for 300 cycles while the writes are in flight; ReMAT waits (its timeout is far longer).
    got, counters = run(accesses, down=(40, 300))
    check_answers(got, accesses, want)
    assert counters["reinits"] > 0 and counters["reinits_m"] > 0
    assert counters["timeouts"] == counters["faults"] == 0


def test_a_link_down_past_the_request_timeout_ends_accesses_with_a_timeout_fault():
    # Reads go out while the link is down for 400 cycles; ReMAT gives up on each after 150 cycles. Once the
    # link is back, a read is answered again.
    accesses = {0: [(60, i * LINE, 0, FULL, 0) for i in range(4)] + [(600, 5 * LINE, 0, FULL, 0)]}
    got, counters = run(accesses, down=(50, 400), request_timeout=150)
    answers = sorted(got[0])
    assert [(i, err) for i, err, _, _ in answers] == [(0, 1), (1, 1), (2, 1), (3, 1), (4, 0)]
    assert all(cycle < 50 + 400 for _, err, _, cycle in answers if err)
    assert counters["timeouts"] == 4 and counters["fault_kind"] == FAULT_TIMEOUT


def test_a_lone_reads_round_trip_grows_by_twice_the_one_way_delay():
    lone = {0: [(40, 3 * LINE, 0, FULL, 0)]}
    latency = {}
    for delay in (10, 30):
        got, counters = run(lone, delay=delay)
        assert [(i, err) for i, err, _, _ in got[0]] == [(0, 0)]
        latency[delay] = counters["lat_last"]
    assert latency[30] - latency[10] == 2 * 20, latency
