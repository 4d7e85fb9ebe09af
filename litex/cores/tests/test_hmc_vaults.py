"""The HMC device model's vaults (litex/cores/hmc/vaults.py, HMCVaults) on the generated Verilog: random
reads and writes of 16-128 B read back what a plain memory holds, answered out of order across vaults and in
order within one, under back-pressure; the unloaded latency is the timing table's sum; one vault moves
10 GB/s, a bank conflict costs the bank's cycle, sixteen vaults keep up with a request a cycle; errors."""

import random

import pytest

from monet.cores.hmc import packet as hmc
from monet.cores.hmc.vaults import HMCVaults, TCK_NS, VAULTS, timings_tck, ticks_per_cycle, unloaded_cycles
from monet.cores.tests.verilog_sim import run_simulation

from .link_responder import offer

CLK = 250e6
STORAGE = 64 * 1024
DUT = HMCVaults(clk_freq=CLK, storage_bytes=STORAGE, queue_depth=4)
TPC = ticks_per_cycle(CLK)


def adrs(vault=0, bank=0, row=0, flit=0):
    """An address by the model's map: offset [6:0], vault [10:7], bank [13:11], the rest above."""
    return flit << 4 | vault << 7 | bank << 11 | row << 14


def read(tag, address, n_bytes):
    return dict(cmd=hmc.read_cmd(n_bytes), lng=1, tag=tag, adrs=address)


def write(tag, address, payload, posted=False):
    cmd = hmc.write_cmd(len(payload), posted)
    return dict(cmd=cmd, lng=hmc.request_flits(cmd), tag=tag, adrs=address, data=int.from_bytes(payload, "little"))


def run(requests, stall_every=0, gap=0, cycles=None, second=(), taken2=None, poison_line=None):
    """Offers `requests` (one a cycle as taken, or `gap` idle cycles between them), and `second` on the second
    port (the cycles they are taken go into `taken2`), with the line `poison_line` (byte address / 64)
    poisoned if given; returns the cycle each request was taken, the responses (cycle, cmd, lng, tag,
    errstat, data, slid; a second response after the first of its cycle) and the counters (reads, writes, errors,
    poisoned)."""
    taken, responses, counters = [], [], []
    cycles = cycles or 40 * len(requests) + 200

    def send():
        yield DUT.poison.eq(poison_line is not None)
        yield DUT.poison_line.eq(poison_line or 0)
        if gap:
            for r in requests:
                yield from offer(DUT.sink, [r])
                for _ in range(gap):
                    yield
        else:
            yield from offer(DUT.sink, requests)

    def receive():
        for cycle in range(cycles):
            if (yield DUT.sink.valid) and (yield DUT.sink.ready):
                taken.append(cycle)
            if (yield DUT.sink2.valid) and (yield DUT.sink2.ready):
                taken2.append(cycle)
            if (yield DUT.source.valid) and (yield DUT.source.ready):
                responses.append((cycle, (yield DUT.source.cmd), (yield DUT.source.lng), (yield DUT.source.tag),
                                  (yield DUT.source.errstat), (yield DUT.source.data), (yield DUT.source.slid)))
                if (yield DUT.source.second):
                    responses.append((cycle, (yield DUT.source.second_cmd), 1, (yield DUT.source.second_tag),
                                      (yield DUT.source.second_errstat), 0, (yield DUT.source.second_slid)))
            yield DUT.source.ready.eq(int(not (stall_every and cycle % stall_every == 0)))
            yield
        counters.extend([(yield DUT.reads), (yield DUT.writes), (yield DUT.errors), (yield DUT.poisoned)])

    run_simulation(DUT, [send(), offer(DUT.sink2, second), receive()])
    assert len(taken) == len(requests), "not every request was taken"
    return taken, responses, counters


def by_tag(responses):
    return {r[3]: r for r in responses}


@pytest.mark.parametrize("stall_every", [0, 3])
def test_random_traffic_reads_what_was_written(stall_every):
    rng = random.Random(stall_every)
    memory = bytearray(STORAGE)
    requests, expected = [], {}
    for tag in range(300):
        n_flits = rng.randint(1, 8)
        address = adrs(vault=rng.randrange(VAULTS), bank=rng.randrange(8), row=rng.randrange(8),
                       flit=rng.randint(0, 8 - n_flits))
        if rng.random() < 0.05:
            address += STORAGE    # aliases onto the same data
        n_bytes, at = 16 * n_flits, address % STORAGE
        if rng.random() < 0.5:
            requests.append(read(tag, address, n_bytes))
            expected[tag] = (hmc.RD_RS, n_flits + 1, bytes(memory[at:at + n_bytes]), address)
        else:
            payload = bytes(rng.getrandbits(8) for _ in range(n_bytes))
            posted = rng.random() < 0.3
            requests.append(write(tag, address, payload, posted))
            memory[at:at + n_bytes] = payload
            if not posted:
                expected[tag] = (hmc.WR_RS, 1, b"", address)
    _, responses, counters = run(requests, stall_every)
    got = by_tag(responses)
    assert len(responses) == len(expected) and set(got) == set(expected)
    for tag, (cmd, lng, data, _) in expected.items():
        _, r_cmd, r_lng, _, errstat, r_data, _ = got[tag]
        assert (r_cmd, r_lng, errstat) == (cmd, lng, 0), tag
        assert r_data.to_bytes(128, "little")[:len(data)] == data, f"tag {tag}: wrong data"
    # One vault's answers keep their requests' order; across vaults they pass each other.
    order = [r[3] for r in responses]
    for v in range(VAULTS):
        tags = [t for t in order if (expected[t][3] >> 7) % VAULTS == v]
        assert tags == sorted(tags), f"vault {v} answered out of order"
    assert order != sorted(order)
    assert counters[0] + counters[1] == len(requests) and counters[2] == 0


@pytest.mark.parametrize("cmd_bytes,is_write", [(16, False), (48, False), (64, False), (128, False), (64, True)])
def test_unloaded_latency_is_the_timing_table_sum(cmd_bytes, is_write):
    address = adrs(vault=5, bank=2, row=1)
    request = write(1, address, bytes(cmd_bytes)) if is_write else read(1, address, cmd_bytes)
    taken, responses, _ = run([request])
    t = timings_tck()
    tck = t["frontend"] + t["tRCD"] + t["tCL"] + -(-cmd_bytes // 32) * t["tBURST"] + t["backend"]
    assert responses[0][0] - taken[0] == unloaded_cycles(cmd_bytes, CLK) == -(-tck // TPC)
    if cmd_bytes == 64 and not is_write:
        assert (responses[0][0] - taken[0]) * 1e9 / CLK == 36.0    # 44 tCK = 35.2 ns, rounded up to 9 cycles


def bandwidth_GBps(responses, n_bytes):
    """Bytes a second between the first and the last response (the first's data not counted)."""
    cycles = responses[-1][0] - responses[0][0]
    return (len(responses) - 1) * n_bytes / (cycles / CLK) / 1e9


def test_one_vault_moves_10_GBps():
    """128 B reads to one vault, the banks in turn: the vault's data bus (32 B per 3.2 ns) is the limit."""
    requests = [read(i, adrs(vault=3, bank=i % 8, row=i // 8), 128) for i in range(64)]
    _, responses, _ = run(requests)
    assert bandwidth_GBps(responses, 128) == pytest.approx(32 / (timings_tck()["tBURST"] * TCK_NS), rel=0.02)
    writes = [write(i, adrs(vault=3, bank=i % 8, row=i // 8), bytes(128)) for i in range(64)]
    _, responses, _ = run(writes)
    assert bandwidth_GBps(responses, 128) == pytest.approx(10.0, rel=0.02)


def bank_cycle_tck(is_write):
    """One bank's closed-page cycle for 128 B: activate, tRCD, bursts, then tRTP (a read's last column
    command) or tWR (after a write's last burst) or tRAS, then tRP."""
    t = timings_tck()
    if is_write:
        return max(t["tRAS"], t["tRCD"] + t["tCL"] + 4 * t["tBURST"] + t["tWR"]) + t["tRP"]
    return max(t["tRAS"], t["tRCD"] + 3 * t["tBURST"] + t["tRTP"]) + t["tRP"]


@pytest.mark.parametrize("is_write", [False, True])
def test_a_bank_conflict_costs_the_bank_cycle(is_write):
    """Accesses to one bank wait for its closed-page cycle (bank_cycle_tck)."""
    access = (lambda i, a: write(i, a, bytes(128))) if is_write else (lambda i, a: read(i, a, 128))
    _, responses, _ = run([access(i, adrs(vault=1, bank=4, row=i)) for i in range(16)])
    gaps = [b[0] - a[0] for a, b in zip(responses, responses[1:])]
    assert sum(gaps) / len(gaps) == pytest.approx(bank_cycle_tck(is_write) / TPC, abs=0.1)


def test_random_banks_of_one_vault_fall_between_one_bank_and_the_banks_in_turn():
    # The thesis: 7.58 vs 9.35 GB/s.
    rng = random.Random(2)
    requests = [read(i, adrs(vault=1, bank=rng.randrange(8), row=i), 128) for i in range(64)]
    _, responses, _ = run(requests)
    assert 128 / (bank_cycle_tck(False) * TCK_NS) < bandwidth_GBps(responses, 128) < 9.9


def test_sixteen_vaults_keep_up_with_a_request_a_cycle():
    requests = [read(i, adrs(vault=i % 16, bank=(i // 16) % 8, row=i // 128), 128) for i in range(256)]
    taken, responses, _ = run(requests)
    assert taken[-1] - taken[0] <= 1.02 * (len(taken) - 1)
    assert responses[-1][0] - responses[0][0] <= 1.05 * (len(responses) - 1)


def test_errors():
    """A command the device does not execute, an LNG that is not the command's and an access across a
    128 B block are answered ERROR (a bad posted write is dropped); nothing bad is written."""
    address = adrs(vault=2, bank=1, flit=5)       # 48 B to the block's end
    bad_lng = write(3, address, bytes(range(16)))
    bad_lng["lng"] = 3
    requests = [
        write(1, address, bytes(range(48))),
        read(2, address, 64),                                 # crosses the block
        bad_lng,
        dict(cmd=hmc.MD_RD, lng=1, tag=4, adrs=0, data=0),    # mode reads: not modelled
        write(5, address, bytes(64), posted=True),            # crosses: dropped, no answer
        write(6, address - 16, bytes(range(100, 180))),       # crosses
        read(7, address, 48),
    ]
    _, responses, counters = run(requests)
    got = by_tag(responses)
    assert sorted(got) == [1, 2, 3, 4, 6, 7]
    assert [(got[t][1], got[t][2], got[t][4]) for t in (2, 3, 4, 6)] == [
        (hmc.ERROR, 1, hmc.ERRSTAT_CROSSES_BLOCK), (hmc.ERROR, 1, hmc.ERRSTAT_INVALID_LNG),
        (hmc.ERROR, 1, hmc.ERRSTAT_INVALID_CMD), (hmc.ERROR, 1, hmc.ERRSTAT_CROSSES_BLOCK)]
    assert got[7][5].to_bytes(128, "little")[:48] == bytes(range(48))
    assert counters == [1, 1, 5, 0]


@pytest.mark.parametrize("half", [0, 1])
def test_reads_of_the_poisoned_line_are_answered_error_in_a_reads_time(half):
    """Any read that touches the poisoned 64 B line (a half of its 128 B block) is answered ERROR with
    ERRSTAT_UNCORRECTABLE and no data, as late as a read, after the bank served it; the other half, the
    next block and writes are served as ever; a refused request keeps its own ERRSTAT and is answered at
    once."""
    block = adrs(vault=3, bank=2, row=1)
    line, other = block + 64 * half, block + 64 * (1 - half)
    requests = [
        write(1, line, bytes(range(64))),
        read(2, line, 64),
        read(3, block, 128),                           # the whole block: both lines
        read(4, line + 48, 16),                        # the line's last FLIT
        read(5, other, 64),                            # the block's other line
        read(6, line + 128, 64),                       # the same half of the next block
        read(7, line + 32, 64 + 64 * (1 - half)),      # runs past the block's end: refused first
    ]
    taken, responses, counters = run(requests, gap=30, poison_line=line // 64)
    got = by_tag(responses)
    unloaded = {n: unloaded_cycles(n, CLK) for n in (16, 64, 128)}
    poisoned = {2: 64, 3: 128, 4: 16}
    for tag, n_bytes in poisoned.items():
        assert got[tag][1:3] + got[tag][4:6] == (hmc.ERROR, 1, hmc.ERRSTAT_UNCORRECTABLE, 0)
        assert got[tag][0] - taken[tag - 1] == unloaded[n_bytes]
    assert got[5][1:3] == got[6][1:3] == (hmc.RD_RS, 5) and got[1][1] == hmc.WR_RS
    assert got[7][1:3] + got[7][4:5] == (hmc.ERROR, 1, hmc.ERRSTAT_CROSSES_BLOCK)
    assert got[7][0] - taken[6] < unloaded[16]
    assert counters == [2, 1, 4, 3]


def test_responses_carry_their_requests_source_link_id():
    # The source link ID (3 bits) comes back in every kind of response: data, write, error, and the second
    # response of a cycle (a WR_RS beside a RD_RS from another vault).
    requests = [dict(read(1, adrs(vault=2), 64), slid=5), dict(write(2, adrs(vault=3), bytes(32)), slid=6),
                dict(cmd=hmc.MD_RD, lng=1, tag=3, adrs=0, data=0, slid=7)]
    writes = [dict(write(10 + i, adrs(vault=i), bytes(16)), slid=4) for i in range(8)]
    reads = [dict(read(20 + i, adrs(vault=8 + i), 16), slid=3) for i in range(8)]
    _, responses, _ = run(requests + writes, second=reads, taken2=[])
    slids = {r[3]: r[6] for r in responses}
    assert {t: slids[t] for t in (1, 2, 3)} == {1: 5, 2: 6, 3: 7}
    assert {slids[10 + i] for i in range(8)} == {4} and {slids[20 + i] for i in range(8)} == {3}
    cycles = [r[0] for r in responses]
    assert len(cycles) > len(set(cycles)), "a second response should leave beside a first"


def test_the_second_port_takes_a_read_beside_a_write_and_answers_in_pairs():
    """Writes on the first port and reads on the second (of blocks four vaults behind): both are taken in one
    cycle where their vaults differ, up to the link's 40 GB/s; each read returns the block as it was when
    the read was taken, and WR_RS responses leave beside RD_RS ones. Offered together for one vault, the
    read waits a cycle."""
    rng = random.Random(8)
    data = [bytes(rng.getrandbits(8) for _ in range(128)) for _ in range(64)]
    writes = [write(i, adrs(vault=i % 16, row=i // 16), data[i]) for i in range(64)]
    reads = [read(100 + i, adrs(vault=(i - 4) % 16, row=(i - 4) // 16 % 4), 128) for i in range(64)]
    taken2 = []
    taken, responses, counters = run(writes, second=reads, taken2=taken2)
    assert counters == [64, 64, 0, 0] and len(taken2) == 64
    written_at = {(i % 16, i // 16): taken[i] for i in range(64)}
    got = by_tag(responses)
    for i in range(64):
        block = ((i - 4) % 16, (i - 4) // 16 % 4)
        fresh = written_at[block] < taken2[i]
        expect = data[block[1] * 16 + block[0]] if fresh else bytes(128)
        assert got[100 + i][5].to_bytes(128, "little") == expect, i
    # Both ports together move the link's 40 GB/s of data (1.25 blocks a cycle), not the vaults' 160.
    assert len(set(taken) & set(taken2)) >= 16, "a write and a read should be taken in one cycle"
    first, last = min(taken + taken2), max(taken + taken2)
    assert 34 <= 128 * 128 / ((last - first) / CLK) / 1e9 <= 40.5
    cycles = [r[0] for r in responses]
    assert len(cycles) - len(set(cycles)) >= 10, "WR_RS should leave beside RD_RS"

    same_vault = [write(0, adrs(vault=3), data[0])], [read(1, adrs(vault=3, row=1), 128)]
    taken2 = []
    taken, _, _ = run(same_vault[0], second=same_vault[1], taken2=taken2)
    assert taken2[0] == taken[0] + 1
