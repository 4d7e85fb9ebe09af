"""The HMC host controller (litex/cores/hmc/host.py) with the device model over two HMC channels (as the SoC
joins them, litex/soc/hmc.py), on the
generated Verilog: line reads, whole-line writes and byte-masked writes (read-modify-write) read back what a
plain memory holds, with accesses to the same lines back to back; errors are answered; the unloaded read
latency is the sum of the parts and within the thesis's 224 ns at 16 x 10 Gb/s, with the host's share."""

import random

import pytest

from monet.cores.common.layouts import T_ERR, T_RD_REQ, T_RD_RSP, T_WR_ACK, T_WR_REQ
from monet.cores.hmc.vaults import unloaded_cycles
from monet.cores.phy.hmc_channel import delay_cycles, flit_ps, host_serdes_ns
from monet.cores.tests.verilog_sim import run_simulation
from monet.soc.hmc import HMCMemoryPath

from .link_responder import byte_mask_bits, send_transactions

STORAGE = 16 * 1024
FULL = (1 << 64) - 1
CLK = 250e6

DUT = HMCMemoryPath(storage_bytes=STORAGE)   # host controller, two HMC channels, device


def run(txns, rate=10, settle=150, cycles=3000):
    """Sends (type, tag, laddr, mask, data) transactions after the link is up; returns the answers (cycle,
    type, tag, laddr, data), the cycle each request was taken and the host's counters."""
    answers, taken, counters = [], [], []
    cycle = [0]

    def send():
        for channel in (DUT.down, DUT.up):
            yield channel.flit_ps.eq(flit_ps(16, rate))
            yield channel.delay.eq(delay_cycles(rate))
        for _ in range(settle):
            yield
        yield from send_transactions(DUT.host.sink, txns)

    def receive():
        yield DUT.host.source.ready.eq(1)
        for c in range(cycles):
            cycle[0] = c
            if (yield DUT.host.sink.valid) and (yield DUT.host.sink.ready):
                taken.append(c)
            if (yield DUT.host.source.valid):
                answers.append((c, (yield DUT.host.source.type), (yield DUT.host.source.tag),
                                (yield DUT.host.source.laddr), (yield DUT.host.source.data)))
            yield
        for name in ("reads", "writes", "rmw_writes", "errors"):
            counters.append((yield getattr(DUT.host, name)))

    run_simulation(DUT, [send(), receive()], max_cycles=cycles + 10)
    return answers, taken, counters


def line(seed):
    return random.Random(seed).getrandbits(512)


def test_lines_read_back_what_was_written():
    """Reads, whole and masked writes on 24 lines, many to one line back to back, against a plain memory."""
    rng = random.Random(5)
    memory, txns, expected = {}, [], {}
    lines = [rng.randrange(STORAGE // 64) for _ in range(24)]
    for tag in range(200):
        laddr = rng.choice(lines)
        kind = rng.random()
        if kind < 0.4:
            txns.append((T_RD_REQ, tag, laddr, 0, 0))
            expected[tag] = (T_RD_RSP, laddr, memory.get(laddr, 0))
        else:
            mask = FULL if kind < 0.7 else rng.getrandbits(64)
            data = line(tag)
            txns.append((T_WR_REQ, tag, laddr, mask, data))
            bits = byte_mask_bits(mask)
            memory[laddr] = memory.get(laddr, 0) & ~bits | data & bits
            expected[tag] = (T_WR_ACK, laddr, None)
    answers, _, counters = run(txns, cycles=6000)
    got = {a[2]: a for a in answers}
    assert len(answers) == len(txns) and sorted(got) == sorted(expected)
    for tag, (kind, laddr, data) in expected.items():
        _, a_kind, _, a_laddr, a_data = got[tag]
        assert (a_kind, a_laddr) == (kind, laddr), tag
        if data is not None:
            assert a_data == data, f"tag {tag}: line {laddr} read wrong"
    reads = sum(t[0] == T_RD_REQ for t in txns)
    masked = sum(t[0] == T_WR_REQ and t[3] != FULL for t in txns)
    assert counters == [reads, len(txns) - reads, masked, 0]


def test_what_is_not_a_request_is_answered_an_error():
    answers, _, counters = run([(T_RD_RSP, 7, 3, 0, 0), (T_RD_REQ, 8, 3, 0, 0)])
    assert [(a[1], a[2]) for a in answers] == [(T_ERR, 7), (T_RD_RSP, 8)]
    assert counters[3] == 1


@pytest.mark.parametrize("rate", [10, 12.5])
def test_unloaded_read_latency(rate):
    """Host link out (1) and channel (serialization + delay), device link in (2), the vaults, device link
    out (1), channel back, host link in (2): within the thesis's 224 ns (10G) and 192 ns (12.5G)."""
    answers, taken, _ = run([(T_RD_REQ, 1, 40, 0, 0)], rate=rate, cycles=400)
    cycles = answers[0][0] - taken[0]
    serialize_up = -(-5 * flit_ps(16, rate) // 4000)      # RD64's response: 5 FLITs
    assert cycles == 1 + 1 + delay_cycles(rate) + 2 + unloaded_cycles(64, CLK) + 1 + serialize_up + \
        delay_cycles(rate) + 2
    assert cycles * 4 <= {10: 224, 12.5: 192}[rate]
    host_share_ns = 3 * 4 + host_serdes_ns(rate)
    assert host_share_ns < {10: 160, 12.5: 128}[rate]     # openHMC + SerDes + application (the thesis)
