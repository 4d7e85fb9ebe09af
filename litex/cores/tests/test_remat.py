"""ReMAT (litex/cores/remat/core.py) against a responder standing in for the link and memory card."""

import random

import pytest
from migen import *

from monet.cores.common.layouts import *
from monet.cores.remat.codes import FAULT_REMOTE, FAULT_TARGET, FAULT_TIMEOUT, FAULT_UNMAPPED, TARGET_LOCAL
from monet.cores.remat.core import ReMAT
from monet.cores.tests.verilog_sim import run_simulation

from .csr_bank import ControlBank, csr_read, csr_write
from .link_responder import link_responder, offer, program_bfct

FULL = 2**LINE_BYTES - 1


def run(dut, requests, responder_delay=6, cycles=400, refuse=(), also=(), first_id=0, on_link=None):
    """requests: {port: [(addr, we, data)]}, sent with ids from `first_id` on; returns per-port responses, link
    requests (appended to `on_link` as they come, if given) and peak outstanding. The link refuses (answers
    T_ERR to) the lines in `refuse`; `also`: more generators to run alongside."""
    responses = {p: [] for p in requests}
    on_link = [] if on_link is None else on_link
    peak = [0]

    def issue(port, reqs):
        for _ in range(8):  # after the BFCT is programmed
            yield
        yield from offer(dut.ports[port].req, [dict(addr=addr, we=we, data=data, mask=FULL, id=first_id + i)
                                               for i, (addr, we, data) in enumerate(reqs)])

    def collect(port):
        ep = dut.ports[port].rsp
        for _ in range(cycles):
            if (yield ep.valid):
                responses[port].append(((yield ep.id), (yield ep.err), (yield ep.data)))
            yield

    entries = {idx: 0b111 | ((idx + 8) << 8) for idx in range(4)}
    gens = [program_bfct(dut.bfct, entries), link_responder(dut, cycles, responder_delay, on_link, peak, refuse)]
    gens += [issue(p, r) for p, r in requests.items()] + [collect(p) for p in requests] + list(also)
    run_simulation(dut, gens)
    return responses, on_link, peak[0]


@pytest.mark.parametrize("tags,n_ports", [(16, 2), (32, 2), (16, 3)])
def test_ports_round_robin_and_many_outstanding(tags, n_ports):
    dut = ReMAT(n_ports=n_ports, n_sections=8, section_bits=12, tags=tags)
    rng = random.Random(tags)
    size = 1 << 12
    # Port p uses section p only, so the link address tells which port a request came from.
    reqs = {p: [(p * size + 64 * rng.randrange(64), 0, 0) for _ in range(20)] for p in range(n_ports)}
    # The ports' ids are the highest a port has (the top bit of TAG_BITS set): each comes back whole.
    first_id = 2**TAG_BITS - 20
    responses, on_link, peak = run(dut, reqs, responder_delay=40, first_id=first_id)
    for p in range(n_ports):
        assert [r[0] for r in sorted(responses[p])] == list(range(first_id, 2**TAG_BITS))
        assert not any(err for _, err, _ in responses[p])
        # A read of a never-written line returns its remote line address: BFCT moved section s to s + 8.
        for (addr, _, _), (_, _, data) in zip(reqs[p], sorted(responses[p])):
            assert data == ((addr // size + 8) * size + addr % size) // 64
    assert peak >= 16
    # Round robin: while the ports wait, grants go round.
    ports = [(laddr * 64) // size - 8 for _, _, laddr in on_link]
    assert len(on_link) == 20 * n_ports
    assert ports[:15] == [p % n_ports for p in range(ports[0], ports[0] + 15)]


def test_a_hold_keeps_requests_at_the_ports_untranslated_until_it_ends():
    """Held, no port's request is taken: the link sees none, `drained` rises once those taken before are
    answered, and a section remapped meanwhile translates every request taken after the hold."""
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16, with_hold=True)
    size = 1 << 12
    reqs = {p: [(p * size + 64 * i, 0, 0) for i in range(8)] for p in (0, 1)}
    seen = {}

    def hold():
        for cycle in range(150):
            if cycle == 11:
                yield dut.hold.eq(1)
            if cycle == 13:
                seen["sent_at_hold"], seen["drained_at_hold"] = len(on_link), (yield dut.drained)
            if cycle == 60:
                seen["sent_held"], seen["drained_held"] = len(on_link), (yield dut.drained)
                seen["port_ready_held"] = (yield dut.ports[0].req.ready) | (yield dut.ports[1].req.ready)
                yield from program_bfct(dut.bfct, {0: 0b111 | (12 << 8)})    # section 0 now at base 12
            if cycle == 70:
                yield dut.hold.eq(0)
            yield

    on_link = []
    responses, _, _ = run(dut, reqs, also=[hold()], cycles=150, on_link=on_link)
    # Some requests were taken before the hold, none while it held, the rest after it.
    assert 0 < seen["sent_at_hold"] < 16 and seen["drained_at_hold"] == 0
    assert seen["sent_held"] == seen["sent_at_hold"] and seen["drained_held"] == 1 and seen["port_ready_held"] == 0
    bases = [laddr * 64 // size for _, _, laddr in on_link]
    first = seen["sent_at_hold"]
    assert set(bases[first:]) == {12, 9} and 12 not in bases[:first]
    for p in (0, 1):
        assert len(responses[p]) == 8 and not any(err for _, err, _ in responses[p])


def test_faults_answer_at_once_and_never_reach_the_link():
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16)
    size = 1 << 12
    reqs = {0: [(6 * size, 0, 0), (0x40, 1, 0x1234), (0x40, 0, 0)], 1: [(9 * size, 1, 0)]}
    responses, on_link, _ = run(dut, reqs)
    errs0 = {i: err for i, err, _ in responses[0]}
    assert errs0 == {0: 1, 1: 0, 2: 0}
    assert [err for _, err, _ in responses[1]] == [1]
    assert [d for i, _, d in responses[0] if i == 2] == [0x1234]
    assert all(err == 0 or data == 2**LINE_BITS - 1 for _, err, data in responses[0])
    assert len(on_link) == 2   # only the good write and read


def test_a_refused_access_ends_with_err_and_is_latched_as_a_remote_fault():
    # The memory card refuses line 514 (window 0x80: section 0 is remote section 8) and serves line 513.
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16)
    latched = {}

    def at_the_end():
        for _ in range(399):
            yield
        for name in ("faults", "fault_kind", "fault_addr", "lat_count", "timeouts"):
            latched[name] = yield getattr(dut, name)

    responses, on_link, _ = run(dut, {0: [(0x80, 0, 0), (0x40, 0, 0)]}, refuse={514}, also=[at_the_end()])
    assert sorted(responses[0]) == [(0, 1, 2**LINE_BITS - 1), (1, 0, 513)]
    assert [laddr for _, _, laddr in on_link] == [514, 513]
    # Counted as a fault of its own kind at the access's window address; only the good answer is timed.
    assert latched == {"faults": 1, "fault_kind": FAULT_REMOTE, "fault_addr": 0x80, "lat_count": 1, "timeouts": 0}


def test_each_section_reaches_its_target_and_a_target_the_build_lacks_faults():
    """With two targets, sections mapped to target 1 (the local memory) go to its port and come back from
    it; the link sees none of them; target 2 does not exist and faults."""
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16, n_targets=2)
    size = 1 << 12
    local, on_link, latched = [], [], {}
    entries = {0: 0b111 | TARGET_LOCAL << 3 | 8 << 8, 1: 0b111 | TARGET_LOCAL << 3 | 9 << 8, 2: 0b111 | 2 << 3}
    responses = []

    def issue():
        for _ in range(8):
            yield
        yield from offer(dut.ports[0].req, [dict(addr=addr, we=we, data=data, mask=FULL, id=i) for i, (addr, we, data)
                                            in enumerate([(0x40, 1, 0x1234), (size + 0x80, 0, 0), (0x40, 0, 0),
                                                          (2 * size, 0, 0)])])

    def collect():
        for _ in range(199):
            if (yield dut.ports[0].rsp.valid):
                responses.append(((yield dut.ports[0].rsp.id), (yield dut.ports[0].rsp.err),
                                  (yield dut.ports[0].rsp.data)))
            yield
        latched["kind"] = yield dut.fault_kind

    run_simulation(dut, [program_bfct(dut.bfct, entries), issue(), collect(),
                         link_responder(dut, 200, 9, local, target=TARGET_LOCAL),
                         link_responder(dut, 200, 6, on_link)])
    assert on_link == []
    assert [laddr for _, _, laddr in local] == [(8 * size + 0x40) >> 6, (9 * size + 0x80) >> 6, (8 * size + 0x40) >> 6]
    assert sorted(responses) == [(0, 0, 0), (1, 0, (9 * size + 0x80) >> 6), (2, 0, 0x1234),
                                 (3, 1, 2**LINE_BITS - 1)]
    assert latched["kind"] == FAULT_TARGET


def test_an_idle_port_never_sends_a_phantom_request():
    # Only port 1 requests: the grant must move to it without taking port 0's idle payload.
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16)
    reqs = {1: [(64 * i, 1, i) for i in range(5)]}
    responses, on_link, _ = run(dut, reqs)
    assert [typ for typ, _, _ in on_link] == [T_WR_REQ] * 5
    assert len(responses[1]) == 5


def test_unanswered_requests_end_with_a_timeout_error_and_late_answers_are_dropped():
    # The link answers after 150 cycles, the timeout is 60: every access ends with an error at about 60
    # cycles, and the late answers free their tags without reaching the port a second time.
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16, timeout=60)
    reqs = {0: [(64 * i, i % 2, i) for i in range(6)]}
    latched = {}

    def at_the_end():
        for _ in range(599):
            yield
        latched["kind"], latched["timeouts"] = (yield dut.fault_kind), (yield dut.timeouts)

    responses, on_link, _ = run(dut, reqs, responder_delay=150, cycles=600, also=[at_the_end()])
    assert sorted(i for i, _, _ in responses[0]) == list(range(6))   # each once
    assert all(err == 1 for _, err, _ in responses[0])
    assert latched == {"kind": FAULT_TIMEOUT, "timeouts": 6}
    assert [laddr for _, _, laddr in on_link] == list(range(512, 518))   # each went out once


def test_the_timeout_scan_covers_every_group_of_tags():
    # 32 tags are scanned in two groups of 16: twenty unanswered reads hold tags of both, and every one ends
    # with a timeout error before its answer comes (a scan of the first group only would let four through).
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=32, timeout=60)
    responses, _, _ = run(dut, {0: [(64 * i, 0, 0) for i in range(20)]}, responder_delay=300, cycles=700)
    assert sorted(i for i, _, _ in responses[0]) == list(range(20))
    assert all(err == 1 for _, err, _ in responses[0])


def test_the_defaults_are_two_ports_and_the_link_first():
    dut = ReMAT(n_sections=8, section_bits=12, tags=16, n_targets=2)
    assert len(dut.ports) == 2 and dut.source is dut.sources[0] and dut.sink is dut.sinks[0]
    assert dut.window_size == 8 * 4096     # the SoC's remote region: n_sections of 2**section_bits bytes


def test_a_timeout_of_0_lets_every_access_wait_for_its_answer():
    # More accesses than tags, answered after 100 cycles: with no timeout none ends in an error, in flight or
    # waiting for a tag, and each goes out once.
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=4, timeout=0)
    responses, on_link, _ = run(dut, {0: [(64 * i, 0, 0) for i in range(8)]}, responder_delay=100, cycles=500)
    assert sorted(responses[0]) == [(i, 0, 512 + i) for i in range(8)]
    assert [laddr for _, _, laddr in on_link] == list(range(512, 520))


def test_an_access_waiting_in_stage_a_times_out_two_cycles_after_its_timeout():
    # The link takes nothing: the access waits in stage A and is answered with a timeout error `timeout` + 2
    # cycles after the cycle it was taken (its wait compared a cycle late, the answer stage's register).
    timeout, cycles = 30, {}
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16, timeout=timeout)

    def stalled_link():
        yield dut.source.ready.eq(0)
        for cycle in range(100):
            if (yield dut.taken):
                cycles["taken"] = cycle
            if (yield dut.ports[0].rsp.valid):
                cycles["answered"] = cycle
                cycles["kind"] = yield dut.fault_kind
            yield

    def issue():
        for _ in range(8):
            yield
        yield from offer(dut.ports[0].req, [dict(addr=0x40, we=0, data=0, mask=FULL, id=0)])

    run_simulation(dut, [program_bfct(dut.bfct, {0: 0b111 | (8 << 8)}), stalled_link(), issue()])
    assert cycles["answered"] - cycles["taken"] == timeout + 2


def test_a_faulting_access_kept_past_its_timeout_by_answers_still_never_reaches_the_link():
    # 32 reads time out (timeout 20, answers at 100); their late answers hold the answer stage for 32 cycles in
    # a row. A read of an unmapped section taken as they begin waits behind them past its timeout: it is
    # answered with its fault, and never sent (a timeout must not clear a fault).
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=32, timeout=20)
    latched = {}

    def unmapped_read_as_late_answers_come():
        while not (yield dut.sink.valid):
            yield
        yield from offer(dut.ports[1].req, [dict(addr=6 << 12, we=0, data=0, mask=FULL, id=7)])
        for _ in range(60):
            yield
        latched["kind"] = yield dut.fault_kind

    responses, on_link, _ = run(dut, {0: [(64 * i, 0, 0) for i in range(32)], 1: []}, responder_delay=100,
                                cycles=300, also=[unmapped_read_as_late_answers_come()])
    assert len(on_link) == 32 and [(i, err) for i, err, _ in responses[1]] == [(7, 1)]
    assert latched["kind"] == FAULT_UNMAPPED


def test_late_answers_free_the_tags():
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=4, timeout=40)
    # More accesses than tags: the later ones can only go out once late answers freed the zombie tags.
    reqs = {0: [(64 * i, 0, 0) for i in range(8)]}
    kinds = []

    def watch_faults():
        faults = 0
        for _ in range(1500):
            if (yield dut.faults) != faults:
                faults = yield dut.faults
                kinds.append((yield dut.fault_kind))
            yield

    responses, on_link, _ = run(dut, reqs, responder_delay=100, cycles=1500, also=[watch_faults()])
    assert sorted(i for i, _, _ in responses[0]) == list(range(8))
    # Every access times out (the answers come at 100 cycles): the six sent and the two that waited for a tag.
    assert kinds == [FAULT_TIMEOUT] * 8
    # Accesses 0-3 take the 4 tags and expire at 40 cycles; 4 and 5 expire waiting for a tag; the late
    # answers (about 100 cycles) free the tags in time for 6 and 7 (section 0 is remote section 8: line
    # 512 + i). A ReMAT that never frees a late answer's tag sends only the first 4.
    assert [laddr for _, _, laddr in on_link] == [512, 513, 514, 515, 518, 519]


@pytest.mark.parametrize("delay", range(58, 68))
def test_an_answer_that_comes_as_its_tag_times_out_is_delivered_once(delay):
    # The timeout scan looks at a tag over three stages: an answer arriving while the tag is in them must take
    # it out of the scan, or the port would get the answer and then a timeout error for the same access (and
    # the tag would be kept as a zombie for an answer that already came).
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=4, timeout=60)
    reqs = {0: [(64 * i, 0, 0) for i in range(8)]}
    responses, on_link, _ = run(dut, reqs, responder_delay=delay, cycles=700)
    assert sorted(i for i, _, _ in responses[0]) == list(range(8))     # each access answered exactly once
    assert len(on_link) >= 4    # (an access that waits for a tag past its timeout is not sent)


@pytest.mark.parametrize("phase", [0, 1])
def test_a_lost_access_times_out_while_answers_keep_coming(phase):
    # Requests every other cycle, answered 20 cycles later: answers take the answer stage every other cycle,
    # always on the same parity. The lost access's tag comes up in the scan once a lap (16 cycles, even): a
    # scan that let it go whenever its cycle was taken would never expire it while the traffic lasts.
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16, timeout=100)
    n, lost, answered = 150, 3, []

    def port():
        req = dut.ports[0].req
        for _ in range(8 + phase):
            yield
        for i in range(n):
            yield req.valid.eq(1)
            yield req.addr.eq(64 * i)
            yield req.id.eq(i)
            yield
            while not (yield req.ready):
                yield
            yield req.valid.eq(0)
            yield

    def collect():
        for cycle in range(700):
            if (yield dut.ports[0].rsp.valid):
                answered.append((cycle, (yield dut.ports[0].rsp.id), (yield dut.ports[0].rsp.err)))
            yield

    entries = {idx: 0b111 | ((idx + 8) << 8) for idx in range(4)}
    run_simulation(dut, [program_bfct(dut.bfct, entries), port(), collect(),
                         link_responder(dut, 700, 20, lose={512 + lost})])
    errors = [(cycle, i) for cycle, i, err in answered if err]
    assert [i for _, i in errors] == [lost] and len(answered) == n
    last_good = max(cycle for cycle, i, err in answered if not err)
    assert errors[0][0] < last_good - 100, "the lost access waited for the traffic to end"


# The control block's registers as the firmware's csr.h lays them out: the BFCT's index, entry, commit and
# readback, then ReMAT's, one 32-bit word each (lat_sum two, most significant first).
BFCT_INDEX, BFCT_ENTRY, BFCT_COMMIT = 0, 1, 2
FAULTS, FAULT_ADDR, FAULT_KIND, REQUESTS, OUTSTANDING, LAT_LAST, LAT_MIN, LAT_MAX = range(4, 12)
LAT_SUM_HI, LAT_SUM_LO, LAT_COUNT, LAT_CLEAR, ISSUE_RATE, TIMEOUT, TIMEOUTS = range(12, 19)


def test_the_cpu_paces_requests_and_reads_the_counters_and_latency_statistics():
    # Firmware's view: it programs the BFCT and a pacing of 3 requests in 8 cycles (0x6000 / 65536),
    # 8 reads go out through port 0 and a ninth hits a disabled section; the counters run across bit 31 and
    # the cycle counter that timestamps requests wraps.
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16)
    top = ControlBank(dut)
    state = {"go": False, "done": False}
    accepted, answered, on_link, regs = [], [], [], {}

    def cpu():
        regs["lat_min_reset"] = yield from csr_read(top, LAT_MIN)
        yield from csr_write(top, BFCT_INDEX, 0)
        yield from csr_write(top, BFCT_ENTRY, 0b111 | 8 << 8)
        yield from csr_write(top, BFCT_COMMIT, 1)
        yield from csr_write(top, ISSUE_RATE, 0xFFFF_6000)    # a 16-bit register keeps 0x6000
        regs["issue_rate"] = yield from csr_read(top, ISSUE_RATE)
        yield dut.faults.eq(2**31 - 1)
        yield dut.lat_count.eq(2**31 - 1)
        yield dut.requests.eq(2**31 - 1)
        yield dut.now.eq(2**32 - 20)          # the cycle counter wraps during the run
        state["go"] = True
        while not state["done"]:
            yield
        for name, word in (("faults", FAULTS), ("fault_addr", FAULT_ADDR), ("fault_kind", FAULT_KIND),
                           ("requests", REQUESTS), ("outstanding", OUTSTANDING), ("lat_last", LAT_LAST),
                           ("lat_min", LAT_MIN), ("lat_max", LAT_MAX), ("lat_sum_hi", LAT_SUM_HI),
                           ("lat_sum_lo", LAT_SUM_LO), ("lat_count", LAT_COUNT), ("timeout", TIMEOUT),
                           ("timeouts", TIMEOUTS)):
            regs[name] = yield from csr_read(top, word)
        yield from csr_write(top, TIMEOUT, 2**32 - 1)       # the whole word: about 17 s at 250 MHz
        regs["timeout_max"] = yield from csr_read(top, TIMEOUT)
        yield dut.fault_kind.eq(FAULT_TIMEOUT)             # the highest kind: the register shows all its bits
        regs["fault_kind_timeout"] = yield from csr_read(top, FAULT_KIND)
        yield from csr_write(top, LAT_CLEAR, 1)
        regs["cleared"] = []
        for word in (LAT_MIN, LAT_MAX, LAT_SUM_LO, LAT_COUNT):
            regs["cleared"].append((yield from csr_read(top, word)))

    def port():
        req = dut.ports[0].req
        while not state["go"]:
            yield
        addrs = [64 * i for i in range(8)] + [3 << 12]
        cycle = 0
        for i, addr in enumerate(addrs):
            yield req.valid.eq(1)
            yield req.addr.eq(addr)
            yield req.we.eq(0)
            yield req.id.eq(i)
            yield
            cycle += 1
            while not (yield req.ready):
                yield
                cycle += 1
            accepted.append(cycle)
        yield req.valid.eq(0)

    def watch():
        cycle = -1
        while not state["go"]:
            yield
        for _ in range(200):
            cycle += 1
            if (yield dut.source.valid) and (yield dut.source.ready):
                on_link.append(cycle)
            if (yield dut.ports[0].rsp.valid):
                answered.append(((yield dut.ports[0].rsp.id), cycle, (yield dut.ports[0].rsp.err)))
            yield
        state["done"] = True

    run_simulation(top, [cpu(), port(), watch(), link_responder(dut, 400, delay=6)])
    # Paced at 3/8 a cycle: the fraction a token leaves over carries, so 7 gaps take 7 x 8/3 = 18.7 cycles,
    # 18 or 19 with the phase of the first request (a bucket that dropped it would take 21, one in 3).
    gaps = [b - a for a, b in zip(on_link, on_link[1:])]
    assert set(gaps) == {2, 3} and sum(gaps) in (18, 19)
    good = [(i, c) for i, c, err in answered if not err]
    assert [i for i, _ in good] == list(range(8)) and [i for i, _, err in answered if err] == [8]
    # Latency, port request accepted to response delivered, as this testbench saw it: the statistics hold
    # the same figures (the responder answers 6 cycles after a request leaves).
    latencies = [c - accepted[i] for i, c in good]
    assert (regs["lat_last"], regs["lat_min"], regs["lat_max"]) == (latencies[-1], min(latencies), max(latencies))
    assert (regs["lat_sum_hi"] << 32 | regs["lat_sum_lo"]) == sum(latencies) and min(latencies) > 6
    assert regs["requests"] == 2**31 - 1 + 8 and regs["outstanding"] == 0
    assert (regs["issue_rate"], regs["timeout_max"]) == (0x6000, 2**32 - 1)
    assert (regs["faults"], regs["fault_addr"], regs["fault_kind"]) == (2**31, 3 << 12, 1)
    assert regs["lat_count"] == 2**31 - 1 + 8
    assert (regs["timeout"], regs["timeouts"]) == (4_000_000, 0)
    assert regs["cleared"] == [2**32 - 1, 0, 0, 0]
    assert (regs["lat_min_reset"], regs["fault_kind_timeout"]) == (2**32 - 1, FAULT_TIMEOUT)


def bucket_sends(rate, n):
    """The cycles, from the first, at which n requests that always wait leave a token bucket filled by `rate`
    / 65536 a cycle: one goes in the cycle its fill completes a token and the fraction left over stays; an
    idle bucket holds one token, so the first goes at once."""
    tokens, cycle, sends = 2**16, 0, []
    while len(sends) < n:
        tokens += rate
        if tokens >= 2**16:
            sends.append(cycle)
            tokens -= 2**16
        cycle += 1
    return sends


@pytest.mark.parametrize("rate", [0x6000, 0x5000, 0x2000, 0xFFFF])
def test_paced_requests_leave_exactly_as_the_token_bucket_fills(rate):
    dut = ReMAT(n_ports=1, n_sections=8, section_bits=12, tags=64)
    sent = []

    def pace():
        yield dut.issue_rate.eq(rate)
        for cycle in range(300):
            if (yield dut.sources[0].valid) and (yield dut.sources[0].ready):
                sent.append(cycle)
            yield

    run(dut, {0: [(64 * i, 0, 0) for i in range(24)]}, cycles=300, also=[pace()])
    assert len(sent) == 24
    assert [c - sent[0] for c in sent] == bucket_sends(rate, 24)


def test_more_tags_than_the_tag_field_holds_are_refused():
    with pytest.raises(AssertionError, match="the link's tag field"):
        ReMAT(n_sections=8, section_bits=12, tags=2**(TAG_BITS + 1))    # a power of two, as tags must be
    ReMAT(n_sections=8, section_bits=12, tags=2**TAG_BITS)


def test_latency_statistics_are_the_cycles_counted_outside_with_a_responder_that_varies():
    """Two ports issue reads as fast as ReMAT takes them; the responder's delay varies from line to line (4
    to 30 cycles), so answers pass each other. ReMAT's last, min, max, sum and count are the latencies
    counted here, port request taken to response delivered, to the cycle."""
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=16)
    taken, latencies, stats = {}, [], {}

    def port(i, n):
        req = dut.ports[i].req
        for k in range(n):
            yield req.valid.eq(1)
            yield req.addr.eq(64 * (2 * k + i))
            yield req.we.eq(0)
            yield req.id.eq(k)
            yield
            while not (yield req.ready):
                yield
        yield req.valid.eq(0)

    def watch():
        yield from program_bfct(dut.bfct, {0: 0b111})
        for cycle in range(700):
            for i, p in enumerate(dut.ports):
                if (yield p.req.valid) and (yield p.req.ready):
                    taken[(i, (yield p.req.id))] = cycle
                if (yield p.rsp.valid):
                    latencies.append(cycle - taken[(i, (yield p.rsp.id))])
            yield
        for name in ("lat_last", "lat_min", "lat_max", "lat_sum", "lat_count"):
            stats[name] = yield getattr(dut, name)

    def delayed(gen, cycles):
        for _ in range(cycles):
            yield
        yield from gen

    run_simulation(dut, [delayed(port(0, 20), 4), delayed(port(1, 20), 4), watch(),
                         link_responder(dut, 700, delay=lambda laddr: 4 + laddr * 11 % 27)])
    assert len(latencies) == 40 and len(set(latencies)) > 10
    assert stats == {"lat_last": latencies[-1], "lat_min": min(latencies), "lat_max": max(latencies),
                     "lat_sum": sum(latencies), "lat_count": 40}
