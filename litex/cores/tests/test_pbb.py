"""PBB (litex/cores/pbb/core.py) on ReMAT's second port, against the link responder, and in direct mode on a
128 B block port, against a block memory."""

import pytest
from migen import *

from litex.soc.interconnect import stream

from monet.cores.common.layouts import T_ERR, T_RD_REQ, T_RD_RSP, T_WR_ACK, T_WR_REQ
from monet.cores.hmc.host import block_txn_layout
from monet.cores.pbb.codes import *
from monet.cores.pbb.core import *
from monet.cores.remat.core import ReMAT
from monet.cores.tests.verilog_sim import run_simulation

from .csr_bank import ControlBank, csr_read, csr_write
from .link_responder import link_responder, program_bfct


class Bench(Module):
    def __init__(self, max_outstanding):
        self.submodules.remat = ReMAT(n_ports=2, n_sections=8, section_bits=16, tags=32)
        self.block_sink, self.block_source = stream.Endpoint(block_txn_layout), stream.Endpoint(block_txn_layout)
        self.submodules.pbb = PBB(self.remat.ports[1], max_outstanding=max_outstanding, buckets=16,
                                  block_port=(self.block_sink, self.block_source))


def start(pbb, settings):
    """Generator: applies `settings` to the PBB and starts it (its start strobe drops a cycle later)."""
    for name, value in settings.items():
        yield getattr(pbb, name).eq(value)
    yield pbb.start.eq(1)
    yield
    yield pbb.start.eq(0)


def start_and_wait(pbb, settings):
    """Generator: applies `settings` to the PBB, starts it and returns once it is idle again."""
    yield from start(pbb, settings)
    yield
    while (yield pbb.busy):
        yield


def block_memory(dut, cycles, delay, requests, limit=1 << 14, flip=0):
    """Generator: answers the block port's requests (a pair's second, a read, after its first) after `delay`
    cycles, in order, from a 128 B block memory of `limit` bytes (a block beyond it is answered T_ERR), a
    data-less answer beside the one before it when both are due, as the HMC controller passes a pair;
    appends (type, tag, laddr, paired) per request. `flip`: bits every read answer has flipped."""
    memory, pending = {}, []

    def answer(typ, laddr):
        if laddr * 64 >= limit:
            return T_ERR, 0
        if typ == T_WR_REQ:
            memory[laddr] = yield dut.block_sink.data
            return T_WR_ACK, 0
        return T_RD_RSP, memory.get(laddr, 0) ^ flip

    yield dut.block_sink.ready.eq(1)
    for cycle in range(cycles):
        if (yield dut.block_sink.valid):
            paired = (yield dut.block_sink.second)
            for typ, tag, laddr in [((yield dut.block_sink.type), (yield dut.block_sink.tag),
                                     (yield dut.block_sink.laddr))] + \
                    ([(T_RD_REQ, (yield dut.block_sink.second_tag), (yield dut.block_sink.second_laddr))]
                     if paired else []):
                requests.append((typ, tag, laddr, paired))
                pending.append((cycle + delay, tag, *(yield from answer(typ, laddr))))
        if pending and pending[0][0] <= cycle:
            _, tag, typ, data = pending.pop(0)
            yield dut.block_source.valid.eq(1)
            yield dut.block_source.tag.eq(tag)
            yield dut.block_source.type.eq(typ)
            yield dut.block_source.data.eq(data)
            beside = bool(pending) and pending[0][0] <= cycle and pending[0][2] != T_RD_RSP
            yield dut.block_source.second.eq(int(beside))
            if beside:
                _, tag2, typ2, _ = pending.pop(0)
                yield dut.block_source.second_tag.eq(tag2)
                yield dut.block_source.second_type.eq(typ2)
        else:
            yield dut.block_source.valid.eq(0)
        yield


def run_pbb(settings, runs=1, delay=20, cycles=1500, max_outstanding=32, blocks=None, flip=0):
    """Programs the BFCT (all sections rw, identity), then runs the PBB `runs` times with `settings`; the
    block port's requests are appended to `blocks` if given, its read answers have the bits `flip` flipped."""
    dut = Bench(max_outstanding)
    results, on_link, peak = [], [], [0]

    def control():
        yield from program_bfct(dut.remat.bfct, {i: 0b111 | (i << 8) for i in range(8)})
        for run in range(runs):
            yield from start_and_wait(dut.pbb, settings[run])
            p = dut.pbb
            r = {}
            for k in ("cycles", "completed", "errors", "bus_errors", "lat_min", "lat_max", "lat_sum"):
                r[k] = yield getattr(p, k)
            r["hist"] = []
            for h in p.hist:
                r["hist"].append((yield h))
            results.append(r)

    run_simulation(dut, [control(), link_responder(dut.remat, cycles, delay, on_link, peak),
                         block_memory(dut, cycles, delay, [] if blocks is None else blocks, flip=flip)])
    return results, on_link, peak[0]


BASE = dict(base=0, span=1 << 14, stride=256, count=40, outstanding=8, seed=7, check=1, shift=2)


@pytest.mark.parametrize("pattern", [PATTERN_SEQ, PATTERN_STRIDE, PATTERN_RANDOM])
def test_written_data_read_back_without_errors(pattern):
    write = dict(BASE, mode=MODE_WRITE, pattern=pattern)
    read = dict(BASE, mode=MODE_READ, pattern=pattern)
    (w, r), on_link, _ = run_pbb([write, read], runs=2)
    assert w["completed"] == r["completed"] == 40
    assert r["errors"] == 0 and r["bus_errors"] == 0
    addrs = [laddr * 64 for typ, _, laddr in on_link]
    assert all(a < BASE["span"] for a in addrs)
    if pattern == PATTERN_SEQ:
        assert addrs[:3] == [0, 64, 128]
    if pattern == PATTERN_STRIDE:
        assert addrs[:3] == [0, 256, 512]
    if pattern == PATTERN_RANDOM:
        assert len(set(addrs[:40])) > 20


def test_answers_out_of_order_are_checked_against_their_own_request():
    # Each line answered after its own delay (as DDR4 banks do): answers overtake each other, and an id must
    # not be given to a new request while an older one still waits.
    # As many in flight as there are ids, so that any reuse of a waiting one shows.
    write = dict(BASE, mode=MODE_WRITE, pattern=PATTERN_RANDOM, count=120, outstanding=32)
    read = dict(BASE, mode=MODE_READ, pattern=PATTERN_RANDOM, count=120, outstanding=32)
    (w, r), _, _ = run_pbb([write, read], runs=2, delay=lambda laddr: 10 + (laddr * 37) % 29, cycles=2000)
    assert w["completed"] == r["completed"] == 120
    assert r["errors"] == 0 and r["bus_errors"] == 0
    assert r["lat_max"] - r["lat_min"] >= 20


@pytest.mark.parametrize("size_log2,pattern", [(3, PATTERN_SEQ), (5, PATTERN_RANDOM), (7, PATTERN_RANDOM)])
def test_access_sizes(size_log2, pattern):
    """8-32 B accesses are masked line transactions, 128 B two consecutive lines; written data read back."""
    write = dict(BASE, mode=MODE_WRITE, pattern=pattern, size_log2=size_log2)
    read = dict(BASE, mode=MODE_READ, pattern=pattern, size_log2=size_log2)
    (w, r), on_link, _ = run_pbb([write, read], runs=2)
    assert w["completed"] == r["completed"] == 40
    assert r["errors"] == 0 and r["bus_errors"] == 0
    laddrs = [laddr for typ, _, laddr in on_link[:40]]
    if size_log2 == 3:
        assert laddrs[:9] == [0] * 8 + [1]                      # eight 8 B accesses share a line
    if size_log2 == 7:
        assert all(laddrs[i + 1] == laddrs[i] + 1 and laddrs[i] % 2 == 0 for i in range(0, 40, 2))


def test_small_accesses_check_only_their_bytes():
    # 8 B strided writes fill one word of each line: read back clean at 8 B, not as whole lines.
    small_w = dict(BASE, mode=MODE_WRITE, pattern=PATTERN_STRIDE, size_log2=3)
    small_r = dict(small_w, mode=MODE_READ)
    line_r = dict(small_r, size_log2=6)
    (_, small, line), _, _ = run_pbb([small_w, small_r, line_r], runs=3, cycles=2200)
    assert small["errors"] == 0 and line["errors"] == 40


def test_unwritten_data_fail_the_check():
    (r,), _, _ = run_pbb([dict(BASE, mode=MODE_READ, pattern=PATTERN_SEQ, base=1 << 15)])
    assert r["errors"] == 40


def test_outstanding_limit_and_latency_histogram():
    reads = dict(BASE, mode=MODE_READ, pattern=PATTERN_SEQ, outstanding=16, check=0)
    (r, narrow), _, peak = run_pbb([reads, dict(reads, shift=0)], runs=2)
    assert 12 <= peak <= 16
    assert sum(r["hist"]) == r["completed"] == 40
    assert r["lat_min"] <= r["lat_sum"] / 40 <= r["lat_max"]
    # Each latency lands in bucket latency >> shift (the last bucket takes the rest).
    assert r["hist"][min(r["lat_min"] >> 2, 15)] > 0
    # Buckets of one cycle: every latency (20 cycles or more) is above the 16 buckets, in the last one.
    assert narrow["lat_min"] >= 16 and narrow["hist"] == [0] * 15 + [40]


@pytest.mark.parametrize("outstanding,first_count,restart_after", [(32, 200, 60), (8, 4, 10)])
def test_a_restart_with_ids_in_flight_keeps_them_apart_and_keeps_the_outstanding_limit(outstanding, first_count,
                                                                                        restart_after):
    """A second start while the first run has ids out (every one of the 32; or 4, under a limit of 8): the new
    run uses an id only once its answer is back, and has room only for what the limit leaves, so no more than
    `outstanding` are ever out."""
    dut = Bench(32)
    settings = dict(BASE, mode=MODE_READ, pattern=PATTERN_SEQ, outstanding=outstanding, check=0)
    clashes, out, most, issued = [], set(), [0], [0]

    def control():
        yield from program_bfct(dut.remat.bfct, {i: 0b111 | (i << 8) for i in range(8)})
        for count, wait in ((first_count, restart_after), (200, 0)):
            yield from start(dut.pbb, dict(settings, count=count))
            for _ in range(wait):
                yield
        while (yield dut.pbb.busy):
            yield

    def monitor():
        req, rsp = dut.remat.ports[1].req, dut.remat.ports[1].rsp
        for _ in range(2200):
            if (yield rsp.valid):
                out.discard((yield rsp.id))
            if (yield req.valid) and (yield req.ready):
                i = yield req.id
                if i in out:
                    clashes.append(i)
                out.add(i)
                issued[0] += 1
            most[0] = max(most[0], len(out))
            yield

    run_simulation(dut, [control(), monitor(), link_responder(dut.remat, 2200, 60)])
    assert issued[0] > 40 and clashes == [] and most[0] == outstanding


def test_a_count_above_2_to_the_31_is_not_cut_short():
    dut = Bench(32)
    seen = {}

    def control():
        yield from program_bfct(dut.remat.bfct, {i: 0b111 | (i << 8) for i in range(8)})
        yield from start(dut.pbb, dict(BASE, mode=MODE_READ, count=2**31 + 3, check=0))
        for _ in range(300):
            yield
        seen["busy"], seen["completed"] = (yield dut.pbb.busy), (yield dut.pbb.completed)

    run_simulation(dut, [control(), link_responder(dut.remat, 320, 20)])
    assert seen["busy"] == 1 and seen["completed"] > 3


def test_latencies_hold_across_the_wrap_of_the_cycle_count():
    """The PBB's cycle count wraps from 2**32 - 1 to 0 in the middle of a run of pairs (direct mode, a read
    beside each write): every latency figure is what it is away from the wrap."""
    run = dict(BASE, direct=1, count=40, outstanding=32, shift=0, mode=MODE_MIXED, read_ratio=128, mix_even=1,
               check=0)
    (away,), _, _ = run_pbb([run], delay=8, cycles=600)
    (across,), _, _ = run_pbb([dict(run, now=2**32 - away["cycles"] // 2)], delay=8, cycles=600)
    assert across == away and away["completed"] == 40 and away["lat_max"] < 100


def test_a_latency_of_2_to_the_31_cycles_or_more_is_kept_whole():
    """An answer 2**31 cycles late (8.6 s at 250 MHz): the cycle count jumps by 2**31 while the run's one read
    is out, and its latency is the same figure plus 2**31 in both extremes."""
    def one_read(jump):
        dut, seen = Bench(32), {}

        def control():
            yield from program_bfct(dut.remat.bfct, {i: 0b111 | (i << 8) for i in range(8)})
            yield from start(dut.pbb, dict(BASE, mode=MODE_READ, count=1, outstanding=1, check=0))
            for _ in range(10):
                yield
            yield dut.pbb.now.eq((yield dut.pbb.now) + jump)
            yield
            while (yield dut.pbb.busy):
                yield
            seen["min"], seen["max"] = (yield dut.pbb.lat_min), (yield dut.pbb.lat_max)

        run_simulation(dut, [control(), link_responder(dut.remat, 200, 40)])
        return seen

    near, late = one_read(0), one_read(2**31)
    assert near["min"] == near["max"] > 10
    assert late == {"min": near["min"] + 2**31, "max": near["max"] + 2**31}


def test_mixed_ratio():
    (r,), on_link, _ = run_pbb([dict(BASE, mode=MODE_MIXED, read_ratio=192, pattern=PATTERN_RANDOM, count=80,
                                     check=0)], cycles=2500)
    reads = sum(1 for typ, _, _ in on_link if typ == 1)
    assert r["completed"] == 80 and 45 <= reads <= 75


@pytest.mark.parametrize("read_ratio,size_log2,period", [(128, 6, "wr"), (192, 6, "wrrr"), (136, 7, None)])
def test_an_even_mix_spreads_the_reads(read_ratio, size_log2, period):
    """mix_even: a read whenever the ratio's running sum passes 256, so reads and writes alternate at 50 %
    and 3 of every 4 are reads at 75 % (a 128 B access keeps its choice for both lines)."""
    (r,), on_link, _ = run_pbb([dict(BASE, mode=MODE_MIXED, read_ratio=read_ratio, mix_even=1, size_log2=size_log2,
                                     count=64, check=0)], cycles=2500)
    kinds = "".join("r" if typ == 1 else "w" for typ, _, _ in on_link)
    assert r["completed"] == 64
    if period:
        assert kinds == period * (64 // len(period))
    else:
        accesses = kinds[::2]
        assert kinds[1::2] == accesses and accesses.count("r") == 32 * 136 // 256   # 17 of 32
        # 17 reads in 32 with no two writes together: 136/256 is above a half.
        assert "ww" not in accesses


def test_pattern_model_matches_hardware():
    laddr, seed = 0x12345, 0xDEADBEEF

    class P(Module):
        def __init__(self):
            self.out = Signal(512)
            set_h, value = line_pattern(Constant(laddr, 26), Constant(seed, 32))
            self.comb += [set_h, self.out.eq(value)]
    dut, got = P(), []

    def gen():
        yield
        got.append((yield dut.out))
    run_simulation(dut, gen())
    assert got[0] == line_pattern_reference(laddr, seed)


def test_latency_figures_are_the_cycles_counted_outside_and_percentiles_within_one_bucket():
    from monet.report.stats import histogram_percentile, percentile
    dut = Bench(32)
    samples, issue_times, hist, figures = [], {}, [], {}
    shift = 1

    def control():
        yield from program_bfct(dut.remat.bfct, {i: 0b111 | (i << 8) for i in range(8)})
        yield from start_and_wait(dut.pbb, dict(BASE, mode=MODE_READ, pattern=PATTERN_RANDOM, count=60,
                                                outstanding=12, check=0, shift=shift))
        for h in dut.pbb.hist:
            hist.append((yield h))
        for name in ("lat_min", "lat_max", "lat_sum", "completed"):
            figures[name] = yield getattr(dut.pbb, name)

    def observe():
        # The same samples measured outside the PBB: port accept to response, per id.
        req, rsp = dut.remat.ports[1].req, dut.remat.ports[1].rsp
        for cycle in range(1200):
            if (yield req.valid) and (yield req.ready):
                issue_times[(yield req.id)] = cycle
            if (yield rsp.valid):
                samples.append(cycle - issue_times[(yield rsp.id)])
            yield

    # A responder whose delay varies from line to line (5 to 21 cycles; answers pass each other) and the
    # queueing of 12 in flight make a spread of latencies.
    run_simulation(dut, [control(), observe(), link_responder(dut.remat, 1200, delay=lambda laddr: 5 + laddr * 7 % 17)])
    assert len(samples) == 60 == sum(hist) == figures["completed"] and len(set(samples)) > 10
    # The block's figures are the cycles counted here, to the cycle, and each bucket holds its samples.
    assert (figures["lat_min"], figures["lat_max"], figures["lat_sum"]) == (min(samples), max(samples), sum(samples))
    assert hist == [sum(1 for x in samples if min(x >> shift, len(hist) - 1) == b) for b in range(len(hist))]
    ordered = sorted(samples)
    for p in (50, 90, 99, 99.9):
        hw = histogram_percentile(hist, shift, p)
        sw = percentile(ordered, p)
        assert sw <= hw < sw + (1 << shift), (p, hw, sw)


def xorshift32(x):
    """Marsaglia's xorshift32 with shifts (13, 17, 5), written from its definition (J. Stat. Softw. 8(14),
    2003): from 1 it gives 270369, then 67634689."""
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    return x ^ ((x << 5) & 0xFFFFFFFF)


def link_writes(settings, cycles=1500):
    """(line address, byte mask) of every write the PBB sends for `settings` (BFCT identity)."""
    dut = Bench(32)
    seen = []

    def control():
        yield from program_bfct(dut.remat.bfct, {i: 0b111 | (i << 8) for i in range(8)})
        yield from start_and_wait(dut.pbb, settings)

    def watch():
        src = dut.remat.source
        for _ in range(cycles):
            if (yield src.valid) and (yield src.ready):
                seen.append(((yield src.laddr), (yield src.mask)))
            yield

    run_simulation(dut, [control(), watch(), link_responder(dut.remat, cycles, 20)])
    return seen


@pytest.mark.parametrize("size_log2,seed", [(3, 0x1234), (4, 0x1234), (5, 0x1234), (6, 0xF000_0000), (7, 0x1234),
                                             (6, GOLDEN)])
def test_random_addresses_follow_xorshift32_and_sizes_set_the_masks(size_log2, seed):
    assert [xorshift32(1), xorshift32(270369)] == [270369, 67634689]
    span, count = 1 << 14, 12
    seen = link_writes(dict(BASE, mode=MODE_WRITE, pattern=PATTERN_RANDOM, seed=seed, count=count, outstanding=4,
                            check=0, size_log2=size_log2))
    # The generator starts at seed ^ 0x9E3779B1; an access takes the state's bits below the span, aligned to
    # its size (a 128 B access: two lines, bit 6 clear then set), and moves the generator on. The seed
    # 0x9E3779B1 itself starts it at 1 instead: xorshift32 never leaves 0.
    x, want = seed ^ 0x9E3779B1 or 1, []
    while len(want) < count:
        if size_log2 == 7:
            addr = x & (span - 1) & ~127
            want += [(addr >> 6, 2**64 - 1), ((addr >> 6) + 1, 2**64 - 1)]
        else:
            addr = x & (span - 1) & ~(2**min(size_log2, 6) - 1)
            size = 2**size_log2
            want.append((addr >> 6, (2**size - 1) << (addr & 63) if size < 64 else 2**64 - 1))
        x = xorshift32(x)
    assert seen == want


@pytest.mark.parametrize("stride", [768, (1 << 12) + 768, 3072])
def test_a_strided_run_wraps_inside_its_span(stride):
    # A stride of a span or more steps by what is left of it modulo the span (below twice the span); two
    # steps of 3072 pass the span of 4096 (the step two transactions on is 2048).
    base, span = 0x2000, 1 << 12
    seen = link_writes(dict(BASE, mode=MODE_WRITE, pattern=PATTERN_STRIDE, base=base, span=span, stride=stride,
                            count=12, outstanding=4, check=0))
    assert [laddr for laddr, _ in seen] == [(base + i * stride % span) >> 6 for i in range(12)]


def test_the_line_pattern_is_keyed_by_knuths_multiplicative_hash():
    # Word 0 of a line: (line address x 2654435761 mod 2**32) XOR seed XOR 2654435761, where 2654435761 is
    # the prime Knuth gives for multiplicative hashing (TAOCP vol. 3, 6.4), close to 2**32 / golden ratio.
    laddr, seed = 0x12345, 0xDEADBEEF
    assert line_pattern_reference(laddr, seed) & 0xFFFFFFFF == (laddr * 2654435761 % 2**32) ^ seed ^ 2654435761


# The control block's registers as the firmware's csr.h lays them out (one 32-bit word each; cycles and
# lat_sum two, most significant first).
START, MODE, READ_RATIO, PATTERN, BASE_REG, SPAN, STRIDE, COUNT, OUTSTANDING, SEED, CHECK, SHIFT, SIZE_LOG2, \
    MIX_EVEN, DIRECT = range(15)
BUSY, CYCLES_HI, CYCLES_LO, COMPLETED, ERRORS, BUS_ERRORS, LAT_MIN, LAT_MAX = range(15, 23)


def test_the_cpu_runs_the_pbb_through_its_registers():
    # Reads into a disabled section: every access ends with a bus error, counted across bit 31.
    dut = Bench(32)
    top = ControlBank(dut.pbb)
    top.submodules.remat = dut.remat
    regs = {}

    def cpu():
        yield from program_bfct(dut.remat.bfct, {0: 0b111})
        for name, word in (("outstanding", OUTSTANDING), ("size_log2", SIZE_LOG2)):
            regs[name + "_reset"] = yield from csr_read(top, word)
        for word, value in ((MODE, MODE_READ), (PATTERN, PATTERN_SEQ), (BASE_REG, 3 << 16), (SPAN, 1 << 12),
                            (COUNT, 10), (OUTSTANDING, 4), (CHECK, 1)):
            yield from csr_write(top, word, value)
        yield from csr_write(top, START, 1)
        for _ in range(START_CYCLES):               # the run starts (and clears its counters)
            yield
        yield dut.pbb.bus_errors.eq(2**31 - 1)
        yield dut.pbb.lat_max.eq(2**31 + 7)         # as if one access had waited that long: every bit read
        yield
        while (yield from csr_read(top, BUSY)):
            pass
        for name, word in (("completed", COMPLETED), ("errors", ERRORS), ("bus_errors", BUS_ERRORS),
                           ("cycles_hi", CYCLES_HI), ("cycles_lo", CYCLES_LO), ("lat_max", LAT_MAX)):
            regs[name] = yield from csr_read(top, word)
        yield from csr_write(top, COUNT, 0)                  # a run of nothing: no latency seen yet
        yield from csr_write(top, START, 1)
        for _ in range(START_CYCLES):
            yield
        regs["lat_min_empty"] = yield from csr_read(top, LAT_MIN)
        yield dut.pbb.completed.eq(2**31 + 5)      # idle: nothing changes it; every bit read
        yield
        regs["completed_high"] = yield from csr_read(top, COMPLETED)

    run_simulation(top, [cpu(), link_responder(dut.remat, 600, 20)])
    assert (regs["outstanding_reset"], regs["size_log2_reset"]) == (1, 6)     # one in flight, 64 B
    assert (regs["completed"], regs["errors"], regs["bus_errors"]) == (10, 0, 2**31 - 1 + 10)
    assert regs["cycles_hi"] == 0 and 10 <= regs["cycles_lo"] < 100
    assert regs["lat_min_empty"] == 2**32 - 1 and regs["lat_max"] == 2**31 + 7
    assert regs["completed_high"] == 2**31 + 5


@pytest.mark.parametrize("pattern", [PATTERN_SEQ, PATTERN_RANDOM])
def test_direct_mode_moves_checked_128_byte_blocks(pattern):
    """Direct mode: each transaction one 128 B block on the block port (an even first line, the two pattern
    lines as its data), none on ReMAT's port; written blocks read back clean, a block outside the memory
    is a bus error, and read data from another seed fail the check."""
    direct = dict(BASE, direct=1, pattern=pattern, count=30)
    write, read = dict(direct, mode=MODE_WRITE), dict(direct, mode=MODE_READ)
    blocks = []
    (w, r, other, outside), on_link, _ = run_pbb(
        [write, read, dict(read, seed=8), dict(read, pattern=PATTERN_SEQ, base=1 << 14, count=4)],
        runs=4, cycles=2500, blocks=blocks)
    assert on_link == []
    assert w["completed"] == r["completed"] == 30 and r["errors"] == r["bus_errors"] == 0
    assert other["errors"] == 30 and outside["bus_errors"] == 4
    writes = [laddr for typ, _, laddr, _ in blocks if typ == T_WR_REQ]
    assert len(writes) == 30 and all(laddr % 2 == 0 for laddr in writes)
    if pattern == PATTERN_SEQ:
        assert writes[:3] == [0, 2, 4]


def test_direct_mode_checks_every_bit_of_a_block():
    """A read answer with only the block's last bit flipped fails the check (direct mode compares all 1024
    bits; a line transaction compares the bytes of its size)."""
    direct = dict(BASE, direct=1, count=6)
    (_, clean), _, _ = run_pbb([dict(direct, mode=MODE_WRITE), dict(direct, mode=MODE_READ)], runs=2, cycles=800)
    (_, flipped), _, _ = run_pbb([dict(direct, mode=MODE_WRITE), dict(direct, mode=MODE_READ)], runs=2,
                                 cycles=800, flip=1 << 1023)
    assert clean["errors"] == 0 and flipped["errors"] == 6


def test_direct_mode_sends_a_read_beside_the_transaction_before_it():
    """Direct mode: a read leaves in the same cycle as the block request before it (the block port's pair),
    in the transactions' order; answers that come in pairs are counted, timed and checked like the rest
    (buckets of one cycle: the two answers of a pair, issued a cycle apart, fall in different buckets)."""
    direct = dict(BASE, direct=1, count=40, outstanding=32, shift=0)
    blocks = []
    (w, mixed, reads), _, _ = run_pbb(
        [dict(direct, mode=MODE_WRITE), dict(direct, mode=MODE_MIXED, read_ratio=128, mix_even=1),
         dict(direct, mode=MODE_READ)], runs=3, delay=8, cycles=3000, blocks=blocks)
    for r in (w, mixed, reads):
        assert r["completed"] == 40 and r["errors"] == r["bus_errors"] == 0 and sum(r["hist"]) == 40
        # The latency sum adds a pair's two answers (both are counted).
        assert r["lat_min"] * 40 <= r["lat_sum"] <= r["lat_max"] * 40
    mixed_blocks = blocks[40:80]
    assert [laddr for _, _, laddr, _ in mixed_blocks] == [2 * i for i in range(40)]
    assert "".join("w" if typ == T_WR_REQ else "r" for typ, _, _, _ in mixed_blocks) == "wr" * 20
    assert sum(paired for _, _, _, paired in mixed_blocks) == 2 * 20, "every read should go beside its write"
    assert sum(paired for _, _, _, paired in blocks[80:]) >= 2 * 15


@pytest.mark.parametrize("outstanding", [2, 3])
def test_direct_mode_pairs_reads_with_room_for_two(outstanding):
    """Direct mode under a limit of 2 or 3: the run's first two reads leave as a pair (room for both); the
    answers then come back one at a time (read answers never come beside), each making room for one."""
    blocks = []
    (r,), _, _ = run_pbb([dict(BASE, direct=1, mode=MODE_READ, count=12, outstanding=outstanding, check=0)],
                         delay=8, cycles=1200, blocks=blocks)
    assert r["completed"] == 12 and len(blocks) == 12
    assert [paired for _, _, _, paired in blocks] == [1, 1] + [0] * 10


@pytest.mark.parametrize("read_ratio,mix_even", [(85, 1), (170, 1), (240, 1), (100, 0)])
def test_direct_mode_chooses_reads_and_writes_as_the_line_port_does(read_ratio, mix_even):
    """The reads and writes of a mixed run come in the same order in direct mode, where a read beside the
    block before it moves the choice on by two, as one at a time on ReMAT's port: the even mix's running sum
    and the random draw are kept a transaction ahead for the pairing. With room for every transaction, each
    read goes beside the one before it unless that one went beside its own: a read sent as a write's
    successor must be one, and none may be missed."""
    mixed = dict(BASE, mode=MODE_MIXED, read_ratio=read_ratio, mix_even=mix_even, count=48, outstanding=64,
                 check=0)
    blocks = []
    (line_run,), on_link, _ = run_pbb([mixed], cycles=2500, max_outstanding=64)
    (block_run,), _, _ = run_pbb([dict(mixed, direct=1)], cycles=2500, max_outstanding=64, blocks=blocks)
    assert line_run["completed"] == block_run["completed"] == 48
    kinds = "".join("r" if typ == 1 else "w" for typ, _, _ in on_link)
    assert "".join("w" if typ == T_WR_REQ else "r" for typ, _, _, _ in blocks) == kinds
    seconds, i = [], 0
    while i < len(kinds):
        paired = i + 1 < len(kinds) and kinds[i + 1] == "r"
        seconds += [paired, paired] if paired else [False]
        i += 2 if paired else 1
    assert [bool(paired) for _, _, _, paired in blocks] == seconds


def test_an_answer_two_cycles_after_its_request_finds_its_record():
    """ReMAT answers an access outside its window through its answer stage, 2 cycles after the request: the
    fastest answer there is. Its record (written a cycle after the request) is read already, so every such
    latency is the same 2 cycles, however the ids are reused."""
    (r,), on_link, _ = run_pbb([dict(BASE, base=8 << 16, mode=MODE_READ, count=40, outstanding=4, check=0)])
    assert r["completed"] == r["bus_errors"] == 40 and not on_link
    assert r["lat_min"] == r["lat_max"] == 2 and r["lat_sum"] == 80


def test_the_random_mix_draws_a_write_when_the_draw_reaches_the_ratio():
    """Mixed at random: a transaction is a write when the top byte of its xorshift32 state is at least the
    read ratio. The ratio is set to one state's top byte, so the draw meets it exactly once in the run."""
    seed, count = 7, 48
    state, states = seed ^ GOLDEN, []
    for _ in range(count):
        states.append(state)
        state = xorshift32(state)
    ratio = states[20] >> 24
    (r,), on_link, _ = run_pbb([dict(BASE, mode=MODE_MIXED, read_ratio=ratio, seed=seed, count=count, check=0,
                                     pattern=PATTERN_RANDOM)], cycles=2500)
    kinds = "".join("r" if typ == T_RD_REQ else "w" for typ, _, _ in on_link)
    assert r["completed"] == count
    assert kinds == "".join("w" if s >> 24 >= ratio else "r" for s in states)


def test_each_setting_register_is_as_wide_as_what_it_drives():
    pbb = Bench(32).pbb
    pbb.add_control()
    for name in ("count", "base", "span", "stride", "seed", "outstanding", "read_ratio"):
        assert len(getattr(pbb, f"_{name}").storage) == len(getattr(pbb, name)), name
