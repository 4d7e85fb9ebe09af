"""The HMC host controller (litex/cores/hmc/host.py) with the device model over two HMC channels (as the SoC
joins them, litex/soc/hmc.py), on the
generated Verilog: line reads, whole-line writes and byte-masked writes (read-modify-write) read back what a
plain memory holds, with accesses to the same lines back to back; errors are answered; the unloaded read
latency is the sum of the parts and within the thesis's 224 ns at 16 x 10 Gb/s, with the host's share; the
block port's 128 B reads and writes read back what was written and fill the link."""

import random

import pytest

from monet.cores.common.layouts import T_ERR, T_RD_REQ, T_RD_RSP, T_WR_ACK, T_WR_REQ
from monet.cores.hmc.packet import REQUEST_HEADER, read_cmd, write_cmd
from monet.cores.phy.figures import delay_cycles, flit_ps, host_serdes_ns
from monet.cores.tests.verilog_sim import run_simulation
from monet.soc.hmc import HMCMemoryPath, unloaded_read_cycles

from .link_responder import byte_mask_bits, offer, send_transactions

STORAGE = 16 * 1024
FULL = (1 << 64) - 1
CLK = 250e6

DUT = HMCMemoryPath(storage_bytes=STORAGE)   # host controller, two HMC channels, device


def link_up(rate, lanes, settle, poison_line=None):
    """Generator: both HMC channels at `lanes` x `rate` Gb/s, the device answering reads of `poison_line`
    ERROR if given; then `settle` cycles for the link to come up."""
    yield DUT.device.vaults.poison.eq(poison_line is not None)
    yield DUT.device.vaults.poison_line.eq(poison_line or 0)
    for channel in (DUT.down, DUT.up):
        yield channel.flit_ps.eq(flit_ps(lanes, rate))
        yield channel.delay.eq(delay_cycles(rate, lanes=lanes))
    for _ in range(settle):
        yield


def run(txns, rate=10, settle=150, cycles=3000, block=False, lanes=16, poison_line=None, ready_every=1):
    """Sends (type, tag, laddr, mask, data) transactions after the link is up (with `block`, (type, tag,
    laddr, data) on the block port, or (type, tag, laddr, data, second_tag, second_laddr) with a block read
    beside it), the device answering reads of `poison_line` ERROR if given, and answers taken in one cycle
    of every `ready_every`; returns the answers taken (cycle, type, tag, laddr, data; a second answer after
    the first of its cycle), the cycle each request was taken, the host's counters and the headers of the
    requests it sent (a pair's second after its first)."""
    answers, taken, counters, headers = [], [], [], []
    cycle = [0]
    sink, source = (DUT.block_sink, DUT.block_source) if block else (DUT.sink, DUT.source)

    def send():
        yield from link_up(rate, lanes, settle, poison_line)
        if block:
            fields = ("type", "tag", "laddr", "data", "second_tag", "second_laddr")
            yield from offer(sink, [dict(zip(fields, txn), second=int(len(txn) > 4)) for txn in txns])
        else:
            yield from send_transactions(sink, txns)

    def receive():
        yield source.ready.eq(1)
        for c in range(cycles):
            cycle[0] = c
            if (yield sink.valid) and (yield sink.ready):
                taken.append(c)
            if (yield source.valid) and (yield source.ready):
                answers.append((c, (yield source.type), (yield source.tag), (yield source.laddr),
                                (yield source.data)))
                if block and (yield source.second):
                    answers.append((c, (yield source.second_type), (yield source.second_tag), 0, 0))
            if (yield DUT.host.tx.valid) and (yield DUT.host.tx.ready):
                headers.append((yield DUT.host.tx.header))
                if (yield DUT.host.tx.second):
                    headers.append((yield DUT.host.tx.second_header))
            yield source.ready.eq((c + 1) % ready_every == 0)
            yield
        for name in ("reads", "writes", "rmw_writes", "errors", "block_reads", "block_writes"):
            counters.append((yield getattr(DUT.host, name)))

    run_simulation(DUT, [send(), receive()], max_cycles=cycles + 10)
    return answers, taken, counters, headers


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
    answers, _, counters, _ = run(txns, cycles=6000)
    got = {a[2]: a for a in answers}
    assert len(answers) == len(txns) and sorted(got) == sorted(expected)
    for tag, (kind, laddr, data) in expected.items():
        _, a_kind, _, a_laddr, a_data = got[tag]
        assert (a_kind, a_laddr) == (kind, laddr), tag
        if data is not None:
            assert a_data == data, f"tag {tag}: line {laddr} read wrong"
    reads = sum(t[0] == T_RD_REQ for t in txns)
    masked = sum(t[0] == T_WR_REQ and t[3] != FULL for t in txns)
    assert counters == [reads, len(txns) - reads, masked, 0, 0, 0]


def test_what_is_not_a_request_is_answered_an_error():
    answers, _, counters, _ = run([(T_RD_RSP, 7, 3, 0, 0), (T_RD_REQ, 8, 3, 0, 0)])
    assert [(a[1], a[2]) for a in answers] == [(T_ERR, 7), (T_RD_RSP, 8)]
    assert counters[3] == 1


def test_error_answers_of_both_ports_in_one_cycle_count_twice():
    """A line request that is not one (answered from a register a cycle after it is taken) and a block
    request that is not one, offered a cycle later (answered at once), both answer T_ERR in one cycle."""
    seen = []

    def line():
        yield from offer(DUT.sink, [dict(type=T_RD_RSP, tag=5, laddr=0, mask=0, data=0)])

    def block():
        yield
        yield from offer(DUT.block_sink, [dict(type=T_WR_ACK, tag=6, laddr=0, data=0, second=0)])

    def watch():
        yield DUT.source.ready.eq(1)
        yield DUT.block_source.ready.eq(1)
        for cycle in range(8):
            for name, source in (("line", DUT.source), ("block", DUT.block_source)):
                if (yield source.valid) and (yield source.type) == T_ERR:
                    seen.append((cycle, name))
            yield
        seen.append((yield DUT.host.errors))

    run_simulation(DUT, [line(), block(), watch()])
    assert seen[:-1] == [(2, "line"), (2, "block")] and seen[-1] == 2


def test_an_idle_line_sink_writes_no_line_address():
    """What an idle line sink holds (valid low) is not a request, even when it looks like one: a read's
    fields left there with another line address while the read is in flight leave its answer's address
    as it was sent."""
    seen = []

    def send():
        yield from link_up(10, 16, 150)
        yield from send_transactions(DUT.sink, [(T_RD_REQ, 9, 40, 0, 0)])
        yield DUT.sink.laddr.eq(77)     # the read's type and tag, valid low

    def watch():
        yield DUT.source.ready.eq(1)
        for _ in range(260):
            if (yield DUT.source.valid):
                seen.append(((yield DUT.source.type), (yield DUT.source.tag), (yield DUT.source.laddr)))
            yield

    run_simulation(DUT, [send(), watch()])
    assert seen == [(T_RD_RSP, 9, 40)]


@pytest.mark.parametrize("rate", [10, 12.5])
def test_unloaded_read_latency(rate):
    """The host's request register (1), host link out (1) and channel (serialization + delay), device link
    in (2), the vaults, device link out (1), channel back, host link in with its CRC stage (3), the host's
    response register (1): within the thesis's 224 ns (10G) and 192 ns (12.5G)."""
    answers, taken, _, _ = run([(T_RD_REQ, 1, 40, 0, 0)], rate=rate, cycles=400)
    cycles = answers[0][0] - taken[0]
    assert cycles == unloaded_read_cycles(rate, clk_freq=CLK) == {10: 40, 12.5: 36}[rate]
    assert cycles * 4 <= {10: 224, 12.5: 192}[rate]
    host_share_ns = 6 * 4 + host_serdes_ns(rate)
    assert host_share_ns < {10: 160, 12.5: 128}[rate]     # openHMC + SerDes + application (the thesis)


def test_blocks_read_back_what_was_written():
    """128 B blocks on the block port: writes then reads of the same blocks return what was written, as
    WR128 and RD128 of the block's byte address under the block's own tags; a request that is not one is
    answered an error."""
    blocks = random.Random(3).sample(range(STORAGE // 128), 40)
    data = {b: random.Random(b).getrandbits(1024) for b in blocks}
    txns = [(T_WR_REQ, i, 2 * b, data[b]) for i, b in enumerate(blocks)]
    txns += [(T_RD_REQ, i, 2 * b, 0) for i, b in enumerate(blocks)] + [(T_WR_ACK, 99, 0, 0)]
    answers, _, counters, headers = run(txns, block=True, cycles=1500)
    acks = [a for a in answers if a[1] == T_WR_ACK]
    reads = {a[2]: a[4] for a in answers if a[1] == T_RD_RSP}
    assert len(acks) == 40 and reads == {i: data[b] for i, b in enumerate(blocks)}
    assert [a[1:3] for a in answers if a[1] == T_ERR] == [(T_ERR, 99)]
    assert counters[4:] == [40, 40] and counters[:3] == [0, 0, 0]
    requests = [(REQUEST_HEADER.value(h, "cmd"), REQUEST_HEADER.value(h, "tag"), REQUEST_HEADER.value(h, "adrs"))
                for h in headers if REQUEST_HEADER.value(h, "cmd") in (read_cmd(128), write_cmd(128))]
    assert requests == [(write_cmd(128), i, 128 * b) for i, b in enumerate(blocks)] + \
        [(read_cmd(128), i, 128 * b) for i, b in enumerate(blocks)]


def test_both_ports_use_the_same_tags_in_turn():
    """The line port and the block port, offered at once, write and read back 40 lines and 40 blocks under the
    same tag numbers (256 to 335, above what a byte would hold): each answer reaches its own port with its own
    data, once."""
    rng = random.Random(11)
    lines = {256 + i: rng.getrandbits(512) for i in range(40)}        # tag: the line written, line i
    blocks = {256 + i: rng.getrandbits(1024) for i in range(40)}      # tag: the block written, block 40 + i
    line_txns = ([(T_WR_REQ, tag, tag - 256, FULL, data) for tag, data in lines.items()] +
                 [(T_RD_REQ, tag + 40, tag - 256, 0, 0) for tag in lines])
    block_txns = ([dict(type=T_WR_REQ, tag=tag, laddr=2 * (tag - 256 + 40), data=data, second=0)
                   for tag, data in blocks.items()] +
                  [dict(type=T_RD_REQ, tag=tag + 40, laddr=2 * (tag - 256 + 40), data=0, second=0) for tag in blocks])
    answers = {"line": [], "block": []}

    def line():
        yield from link_up(10, 16, 150)
        yield from send_transactions(DUT.sink, line_txns)

    def block():
        for _ in range(150):
            yield
        yield from offer(DUT.block_sink, block_txns)

    def watch():
        yield DUT.source.ready.eq(1)
        yield DUT.block_source.ready.eq(1)
        for _ in range(2500):
            yield
            for name, source in (("line", DUT.source), ("block", DUT.block_source)):
                if (yield source.valid):
                    answers[name].append(((yield source.type), (yield source.tag), (yield source.data)))

    run_simulation(DUT, [line(), block(), watch()], max_cycles=2510)
    for name, written in (("line", lines), ("block", blocks)):
        got = answers[name]
        assert sorted((t, tag) for t, tag, _ in got if t == T_WR_ACK) == [(T_WR_ACK, tag) for tag in written], name
        assert {tag - 40: data for t, tag, data in got if t == T_RD_RSP} == written, name
        assert len(got) == 80, name


@pytest.mark.parametrize("lanes,rate,op", [(16, 15, T_RD_REQ), (8, 15, T_WR_REQ)])
def test_blocks_fill_the_link(lanes, rate, op):
    """128 B reads or writes one after the other on the block port move 8/9 of the link's FLITs as data
    (9 FLITs carry 128 B): 26.7 GB/s at 16 x 15 Gb/s, where 64 B lines stop at one a cycle (16 GB/s)."""
    txns = [(op, i % 128, 2 * (i % (STORAGE // 128)), i) for i in range(400)]
    answers, taken, _, _ = run(txns, rate=rate, block=True, cycles=2500, lanes=lanes)
    assert len(answers) == 400
    middle = [a[0] for a in answers][100:300]
    gbps = (len(middle) - 1) * 128 / ((middle[-1] - middle[0]) / CLK) / 1e9
    assert gbps == pytest.approx(lanes * rate / 8 * 8 / 9, rel=0.03)


def test_a_block_read_goes_beside_a_block_request_and_answers_come_in_pairs():
    """A block request with a second block read leaves as one pair (an RD128 header after the WR128's, in
    one cycle): every read returns the block as written before it, a write's WR_RS comes back beside a
    read's data, and the counters count both."""
    rng = random.Random(6)
    data = {b: rng.getrandbits(1024) for b in range(80)}
    txns = [(T_WR_REQ, i, 2 * b, data[b]) for i, b in enumerate(range(40))]
    txns += [(T_WR_REQ, b % 128, 2 * b, data[b], 64 + b - 40, 2 * (b - 40)) for b in range(40, 80)]
    answers, taken, counters, headers = run(txns, rate=15, block=True, cycles=1500)
    acks = [a for a in answers if a[1] == T_WR_ACK]
    reads = {a[2]: a[4] for a in answers if a[1] == T_RD_RSP}
    assert len(acks) == 80 and reads == {64 + b: data[b] for b in range(40)}
    assert counters[4:] == [40, 80] and counters[3] == 0
    pairs = [(REQUEST_HEADER.value(h1, "cmd"), REQUEST_HEADER.value(h2, "cmd"), REQUEST_HEADER.value(h2, "tag"))
             for h1, h2 in zip(headers, headers[1:])
             if REQUEST_HEADER.value(h1, "cmd") == write_cmd(128) and REQUEST_HEADER.value(h2, "cmd") == read_cmd(128)]
    assert pairs == [(write_cmd(128), read_cmd(128), 64 + i) for i in range(40)]
    cycles = [a[0] for a in answers]
    assert len(cycles) - len(set(cycles)) >= 10, "a WR_RS should come back beside a read's data"


@pytest.mark.parametrize("ready_every", [1, 3])
def test_a_masked_write_whose_read_fails_is_answered_an_error(ready_every):
    """A byte-masked write to a line the device answers ERROR: its read-modify-write's read fails, so the
    write is answered T_ERR under its tag and address, once, and never sent; the requests behind it are
    served (in the vaults' order), a read of the same line answered T_ERR too, whether the answers are taken
    at once or a cycle in three."""
    bad, good = 9, 10
    txns = [(T_WR_REQ, 3, bad, 0xff, line(1)), (T_RD_REQ, 4, good, 0, 0), (T_WR_REQ, 5, good, FULL, line(2)),
            (T_RD_REQ, 6, bad, 0, 0), (T_RD_REQ, 7, good, 0, 0)]
    answers, _, counters, headers = run(txns, poison_line=bad, ready_every=ready_every, cycles=800)
    assert sorted(a[1:4] for a in answers) == sorted([(T_ERR, 3, bad), (T_RD_RSP, 4, good), (T_WR_ACK, 5, good),
                                                      (T_ERR, 6, bad), (T_RD_RSP, 7, good)])
    assert [a[4] for a in answers if a[2] == 7] == [line(2)]
    assert counters == [3, 2, 1, 2, 0, 0]
    writes = [REQUEST_HEADER.value(h, "tag") for h in headers if REQUEST_HEADER.value(h, "cmd") == write_cmd(64)]
    assert writes == [5]


def test_the_line_port_keeps_the_tags_until_its_error_answers_are_taken():
    """The ports take the HMC's tags in turn. The line port's last requests end in error answers (a byte-masked
    write whose read fails, then a request that is not one) with no packet out, and the line port takes its
    answers only at cycles 300 and 400: the block port's reads, waiting since cycle 160, leave only after the
    second error answer is taken, each answered once under its own tags."""
    bad = 9
    reads = [dict(type=T_RD_REQ, tag=i, laddr=2 * (20 + i), data=0, second=0) for i in range(80)]
    lines = [dict(type=T_WR_REQ, tag=3, laddr=bad, mask=0xff, data=1), dict(type=T_RD_RSP, tag=4, laddr=5)]
    line_answers, block_answers, block_sent = [], [], []

    def block():
        yield from link_up(10, 16, 160, poison_line=bad)
        yield from offer(DUT.block_sink, reads)

    def line():
        for _ in range(150):
            yield
        yield from offer(DUT.sink, lines)

    def watch():
        yield DUT.block_source.ready.eq(1)
        for cycle in range(700):
            yield DUT.source.ready.eq(cycle in (300, 400))
            yield
            if (yield DUT.source.valid) and (yield DUT.source.ready):
                line_answers.append((cycle, (yield DUT.source.type), (yield DUT.source.tag)))
            if (yield DUT.block_source.valid):
                block_answers.append((yield DUT.block_source.tag))
            if (yield DUT.host.tx.valid) and (yield DUT.host.tx.ready) and \
                    REQUEST_HEADER.value((yield DUT.host.tx.header), "cmd") == read_cmd(128):
                block_sent.append(cycle)

    run_simulation(DUT, [block(), line(), watch()], max_cycles=710)
    assert [a[1:] for a in line_answers] == [(T_ERR, 3), (T_ERR, 4)]
    assert sorted(block_answers) == list(range(80))
    assert line_answers[-1][0] == 400 < block_sent[0]
