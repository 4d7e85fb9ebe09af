"""ReMAT (litex/cores/remat/core.py) against a responder standing in for the link and memory card."""

import random

import pytest
from migen import *

from monet.cores.link.common import *
from monet.cores.remat.core import ReMAT
from monet.cores.tests.verilog_sim import run_simulation

from .link_responder import link_responder, program_bfct

FULL = 2**LINE_BYTES - 1


def run(dut, requests, responder_delay=6, cycles=400):
    """requests: {port: [(addr, we, data)]}; returns per-port responses, link requests and peak outstanding."""
    responses = {p: [] for p in requests}
    on_link = []
    peak = [0]

    def issue(port, reqs):
        ep = dut.ports[port].req
        for _ in range(8):  # after the BFCT is programmed
            yield
        for i, (addr, we, data) in enumerate(reqs):
            yield ep.valid.eq(1)
            yield ep.addr.eq(addr)
            yield ep.we.eq(we)
            yield ep.data.eq(data)
            yield ep.mask.eq(FULL)
            yield ep.id.eq(i)
            yield
            while not (yield ep.ready):
                yield
        yield ep.valid.eq(0)

    def collect(port):
        ep = dut.ports[port].rsp
        for _ in range(cycles):
            if (yield ep.valid):
                responses[port].append(((yield ep.id), (yield ep.err), (yield ep.data)))
            yield

    entries = {idx: 0b111 | ((idx + 8) << 8) for idx in range(4)}
    gens = [program_bfct(dut.bfct, entries), link_responder(dut, cycles, responder_delay, on_link, peak)]
    gens += [issue(p, r) for p, r in requests.items()] + [collect(p) for p in requests]
    run_simulation(dut, gens)
    return responses, on_link, peak[0]


@pytest.mark.parametrize("tags", [16, 32])
def test_two_ports_round_robin_and_many_outstanding(tags):
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=tags)
    rng = random.Random(tags)
    size = 1 << 12
    # Port p uses section p only, so the link address tells which port a request came from.
    reqs = {p: [(p * size + 64 * rng.randrange(64), 0, 0) for _ in range(20)] for p in (0, 1)}
    responses, on_link, peak = run(dut, reqs, responder_delay=40)
    for p in (0, 1):
        assert [r[0] for r in sorted(responses[p])] == list(range(20))
        assert not any(err for _, err, _ in responses[p])
        # A read of a never-written line returns its remote line address: BFCT moved section s to s + 8.
        for (addr, _, _), (_, _, data) in zip(reqs[p], sorted(responses[p])):
            assert data == ((addr // size + 8) * size + addr % size) // 64
    assert peak >= 16
    # Round robin: while both ports wait, grants alternate.
    ports = [(laddr * 64) // size - 8 for _, _, laddr in on_link]
    assert len(on_link) == 40
    assert all(a != b for a, b in zip(ports[:16], ports[1:16]))


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
    responses, on_link, _ = run(dut, reqs, responder_delay=150, cycles=600)
    assert sorted(i for i, _, _ in responses[0]) == list(range(6))   # each once
    assert all(err == 1 for _, err, _ in responses[0])
    assert [laddr for _, _, laddr in on_link] == list(range(512, 518))   # each went out once


def test_late_answers_free_the_tags():
    dut = ReMAT(n_ports=2, n_sections=8, section_bits=12, tags=4, timeout=40)
    # More accesses than tags: the later ones can only go out once late answers freed the zombie tags.
    reqs = {0: [(64 * i, 0, 0) for i in range(8)]}
    responses, on_link, _ = run(dut, reqs, responder_delay=100, cycles=1500)
    assert sorted(i for i, _, _ in responses[0]) == list(range(8))
    # Accesses 0-3 take the 4 tags and expire at 40 cycles; 4 and 5 expire waiting for a tag; the late
    # answers (about 100 cycles) free the tags in time for 6 and 7 (section 0 is remote section 8: line
    # 512 + i). A ReMAT that never frees a late answer's tag sends only the first 4.
    assert [laddr for _, _, laddr in on_link] == [512, 513, 514, 515, 518, 519]
