"""DDR4's activations by bank group (litex/cores/memcard/controller.py): the window allows a bank exactly when
tRC, tRRD_S, tRRD_L and tFAW allow it, and scattered lines read through DDR4Memory keep JESD79-4's
activate-to-activate timings on the DFI bus while they stream at the activate rate those timings allow, on
the generated Verilog."""

import random
from types import SimpleNamespace

import pytest

from monet.cores.common.layouts import (T_RD_REQ as RD_REQ, T_RD_RSP as RD_RSP, T_WR_REQ as WR_REQ,
                                        T_WR_ACK as WR_ACK)
from monet.cores.memcard.controller import ActivationWindow, activation_cycles, phase_margin_ck
from monet.cores.memcard.ddr4 import MTA8ATF51264HZ, DDR4Memory
from monet.cores.tests.verilog_sim import run_simulation

NBANKS, NGROUPS = 16, 4


def reference_allowed(acts, cycle, bank, trc, trrd_s, trrd_l, tfaw, banks_a_group=NBANKS // NGROUPS):
    """Whether JESD79-4 lets `bank` activate in `cycle`, given the earlier ACTs {cycle: bank}."""
    reach = max(trc, trrd_l, tfaw)
    before = [(c, acts[c]) for c in range(cycle - reach, cycle) if c in acts]
    return (all(cycle - c >= trc for c, b in before if b == bank) and
            all(cycle - c >= trrd_s for c, _ in before) and
            all(cycle - c >= trrd_l for c, b in before if b // banks_a_group == bank // banks_a_group) and
            sum(1 for c, _ in before if cycle - c < tfaw) <= 3)


@pytest.mark.parametrize("trc,trrd_s,trrd_l,tfaw", [(13, 1, 2, 6), (4, 2, 3, 5), (2, 1, 2, 4), (2, 1, 1, 4),
                                                 (6, 2, 2, 5), (2, 1, 2, 2)])
def test_the_window_allows_a_bank_exactly_when_the_timings_do(trc, trrd_s, trrd_l, tfaw):
    """ACTs to random allowed banks (one in most cycles, so that every window fills): in every cycle each
    bank's `allowed` is the reference's, neither later (lost activations) nor sooner (a broken timing)."""
    dut = ActivationWindow(NBANKS, NGROUPS, trc, trrd_s, trrd_l, tfaw)
    rng = random.Random(trc * 100 + tfaw)
    acts, mismatches = {}, []

    def drive():
        for cycle in range(1, 400):
            # Compare this cycle's registers with the reference, then choose next cycle's ACT among the banks
            # the reference allows then (what the multiplexer would do with the DUT's).
            allowed = yield dut.allowed
            expected = sum(1 << n for n in range(NBANKS) if reference_allowed(acts, cycle, n, trc, trrd_s, trrd_l, tfaw))
            if allowed != expected:
                mismatches.append((cycle, bin(allowed), bin(expected)))
            candidates = [n for n in range(NBANKS) if reference_allowed(acts, cycle + 1, n, trc, trrd_s, trrd_l, tfaw)]
            bank = rng.choice(candidates) if candidates and rng.random() < 0.85 else None
            if bank is not None:
                acts[cycle + 1] = bank
            yield dut.act.eq(bank is not None)
            if trrd_l > 1:      # with no tRRD_L the window has no use for the group (not in its Verilog)
                yield dut.group.eq((bank or 0) // (NBANKS // NGROUPS))
            yield dut.activated.eq(0 if bank is None else 1 << bank)
            yield

    run_simulation(dut, drive())
    assert mismatches == []
    assert len(acts) > 100      # the windows were filled, not idle


@pytest.mark.parametrize("trc,trrd_s,trrd_l,tfaw", [(13, 3, 2, 6), (13, 1, 7, 6), (13, 1, 2, 1), (1, 1, 2, 6)])
def test_timings_out_of_order_are_refused(trc, trrd_s, trrd_l, tfaw):
    """tRRD_S above tRRD_L, tRRD_L above tFAW, a tFAW or a tRC of one cycle: not a DDR4's."""
    with pytest.raises(AssertionError):
        ActivationWindow(NBANKS, NGROUPS, trc, trrd_s, trrd_l, tfaw)


def test_ddr4_2133_activation_cycles():
    """tRRD_S 3.7 ns, tRRD_L 5.3 ns and tFAW 21 ns at tCK 1 ns (four to a 4 ns cycle): 1, 2 and 6 cycles when
    every ACT lands on one phase; with LiteDRAM's margin of 3 clocks (read and write phases apart) 2, 3, 6.
    At a slower clock a count of tCK can be the larger."""
    module = MTA8ATF51264HZ(250e6, "1:4")
    same = SimpleNamespace(nphases=4, rdphase=1, wrphase=1)
    apart = SimpleNamespace(nphases=4, rdphase=2, wrphase=1)
    assert phase_margin_ck(same) == 0 and phase_margin_ck(apart) == 3
    assert activation_cycles(module, same, 250e6) == (1, 2, 6)
    assert activation_cycles(module, apart, 250e6) == (2, 3, 6)
    # At 200 MHz (tCK 1.25 ns): tRRD_S 4 tCK (2.96 by its ns), tRRD_L 4.24 tCK, tFAW 20 tCK (16.8 by its ns).
    assert activation_cycles(module, same, 200e6) == (1, 2, 5)
    assert activation_cycles(module, apart, 200e6) == (2, 2, 6)


LINES = 65536           # 4 MiB (the sim's card): 32 rows in each of the 16 banks, so 1 read in 32 hits its row
IN_FLIGHT = 64
CYCLES = 1200
TCK_PER_CYCLE = 4       # DDR4 at 4:1


def test_scattered_lines_stream_at_the_activate_rate_and_keep_ddr4s_timings():
    """Reads of random lines with up to 64 in flight, almost all row misses: on the DFI bus every two ACTs
    at least tRRD_S apart (4 tCK), two in one bank group tRRD_L (5.3 tCK: 6), five in a row tFAW (21 tCK),
    two in one bank tRC (47.06 tCK); every read answered, at 0.6 lines a cycle or more once the window is full
    (tFAW allows 0.67; LiteDRAM's one tRRD allowed a third). And in every cycle the window allows the banks
    the reference does given the ACTs on the bus (a cycle after the multiplexer takes them): it counts
    those and nothing else (not a precharge)."""
    dut = DDR4Memory(LINES * 64, 250e6, depth=IN_FLIGHT)
    controller = dut.controller
    phases = controller.dfi.phases
    rng = random.Random(7)
    acts, asked, answered, allowed = [], [], [], []

    def drive():
        in_flight, tag = 0, 0
        yield dut.source.ready.eq(1)
        for cycle in range(CYCLES):
            if (yield dut.sink.valid) and (yield dut.sink.ready):
                in_flight += 1
                asked.append((yield dut.sink.laddr))
            if (yield dut.source.valid):
                in_flight -= 1
                answered.append(((yield dut.source.type), (yield dut.source.laddr), cycle))
            for phase, p in enumerate(phases):
                if not (yield p.cs_n) and not (yield p.ras_n) and (yield p.cas_n) and (yield p.we_n):
                    acts.append((cycle * TCK_PER_CYCLE + phase, (yield p.bank)))
            allowed.append((yield controller.activations.allowed))
            more = cycle < CYCLES - 300 and in_flight + 1 < IN_FLIGHT
            tag = (tag + 1) % 256
            yield dut.sink.valid.eq(more)
            yield dut.sink.type.eq(RD_REQ)
            yield dut.sink.tag.eq(tag)
            yield dut.sink.laddr.eq(rng.randrange(LINES))
            yield

    run_simulation(dut, drive())
    assert sorted(laddr for _, laddr, _ in answered) == sorted(asked)
    assert {kind for kind, _, _ in answered} == {RD_RSP}
    group = lambda bank: bank // (NBANKS // NGROUPS)
    gaps = [(b[0] - a[0], a[1], b[1]) for a, b in zip(acts, acts[1:])]
    assert min(gap for gap, _, _ in gaps) >= 4
    assert min(gap for gap, x, y in gaps if group(x) == group(y)) >= 6
    assert min(e[0] - a[0] for a, e in zip(acts, acts[4:])) >= 21
    last = {}
    for tck, bank in acts:
        assert tck - last.get(bank, -100) >= 47.06
        last[bank] = tck
    taken = {tck // TCK_PER_CYCLE - 1: bank for tck, bank in acts}   # the cycle the multiplexer took each
    timings = (controller.settings.timing.tRC, controller.trrd_s, controller.trrd_l, controller.tfaw)
    assert timings == (13, 1, 2, 6)
    wrong = [cycle for cycle in range(20, CYCLES) if allowed[cycle] != sum(
        1 << n for n in range(NBANKS) if reference_allowed(taken, cycle, n, *timings))]
    assert wrong == []
    steady = [cycle for _, _, cycle in answered if 300 <= cycle < CYCLES - 300]
    assert len(steady) / (CYCLES - 600) >= 0.6


PROLOGUE = 120
TIMINGS_TCK = SimpleNamespace(tRCD=14.06, tRP=14.06, tRAS=33, tRTP=7.5, tWR=15, tRC=47.06, burst=4)   # at tCK 1 ns


def dfi_commands(phases):
    """The commands on the DFI bus this cycle, at most one a phase: (phase, kind, bank, address)."""
    kinds = {(0, 1, 1): "ACT", (0, 1, 0): "PRE", (1, 0, 1): "READ", (1, 0, 0): "WRITE", (0, 0, 1): "REF"}
    commands = []
    for phase, p in enumerate(phases):
        pins = ((yield p.ras_n), (yield p.cas_n), (yield p.we_n))
        if not (yield p.cs_n) and pins != (1, 1, 1):   # (a NOP)
            commands.append((phase, kinds.get(pins, "OTHER"), (yield p.bank), (yield p.address)))
    return commands


@pytest.mark.parametrize("ports", [None, 2])
def test_each_bank_keeps_its_row_timings_and_reads_what_was_written(ports):
    """Reads and writes of lines in 4 banks, 3 rows a bank, alone or back to back with up to 8 in flight (row
    hits, misses, closed rows; auto-precharges when the next request opens another row): on the DFI bus a
    READ or WRITE only to an open bank, an ACT only to a closed one, ACT to READ/WRITE >= tRCD, ACT to PRE >=
    tRAS, READ to PRE >= tRTP, WRITE to PRE >= CWL + 4 + tWR, PRE to ACT >= tRP, an auto-precharge's
    implied PRE (after tRTP or write recovery, and tRAS) to ACT >= tRP, ACT to ACT >= tRC; a PRE right
    behind a READ and one right behind a WRITE (a prologue) exactly as soon as those allow; every read
    answers the line last written before it. With a port a bank (BankPorts, the answer's fields a cycle
    ahead) and with 2 ports through LiteDRAM's crossbar (the answer in its data's cycle, behind the response
    FIFO; the bank machines' lock keeps a bank on its port)."""
    dut = DDR4Memory(LINES * 64, 250e6, depth=IN_FLIGHT, ports=ports)
    phases = dut.controller.dfi.phases
    cwl = dut.controller.settings.phy.cwl
    rng = random.Random(11)
    banks, rows, columns = (0, 5), (0, 1), (0, 3, 6)   # a line's address: row, bank (4 bits), column (7)
    # First a READ whose row's tRAS has long passed, the next request (another row) right behind it: a PRE
    # as early as tRTP allows (3 cycles: READ on phase 1, PRE on phase 0, 11 tCK). Then a WRITE (its CAS at
    # cycle 102, after the multiplexer's read-to-write turnaround) and a request to another row a few cycles
    # after it (so not behind it, which would make its WRITE auto-precharge): a PRE as early as write
    # recovery allows (write latency 3 + tWR 5 + tCCD 1 cycles, LiteDRAM's count: 35 tCK).
    prologue = {10: (0, False), 40: (3, False), 41: (1 << 11, False), 90: ((1 << 11) | 3, True), 105: (0, False)}
    t = TIMINGS_TCK
    issued, answered, commands = [], [], []

    def drive():
        in_flight, tag, memory, expected, burst, bank = 0, 0, {}, {}, 0, 0
        yield dut.source.ready.eq(1)
        for cycle in range(1400):
            if (yield dut.sink.valid) and (yield dut.sink.ready):
                in_flight += 1
                laddr, write = (yield dut.sink.laddr), (yield dut.sink.type) == WR_REQ
                if write:
                    memory[laddr] = (yield dut.sink.data)
                expected[(yield dut.sink.tag)] = (WR_ACK, 0) if write else (RD_RSP, memory.get(laddr, 0))
                issued.append(laddr)
            if (yield dut.source.valid):
                in_flight -= 1
                kind, data = (yield dut.source.type), (yield dut.source.data)
                answered.append((kind, data if kind == RD_RSP else 0) == expected.pop((yield dut.source.tag)))
            for phase, kind, bank, address in (yield from dfi_commands(phases)):
                commands.append((cycle * TCK_PER_CYCLE + phase, kind, bank, address))
            tag = (tag + 1) % 256
            if burst == 0 and rng.random() < 0.2:
                burst, bank = rng.choice((1, 2, 3)), rng.choice(banks)   # requests in a row to one bank
            offer = PROLOGUE < cycle < 1200 and in_flight < 8 and burst > 0
            burst -= offer
            laddr = (rng.choice(rows) << 11) | (bank << 7) | rng.choice(columns)
            write = rng.random() < 0.4
            if cycle in prologue:
                offer, (laddr, write) = True, prologue[cycle]
            yield dut.sink.valid.eq(offer)
            yield dut.sink.type.eq(WR_REQ if write else RD_REQ)
            yield dut.sink.tag.eq(tag)
            yield dut.sink.laddr.eq(laddr)
            yield dut.sink.data.eq(rng.getrandbits(512))
            yield dut.sink.mask.eq(2**64 - 1)
            yield

    run_simulation(dut, drive())
    assert len(answered) == len(issued) > 100 and all(answered)

    banks = {}   # bank: its open row's ACT time, its last READ / WRITE / PRE (or implied PRE) times
    seen = {"ap": 0, "pre": 0, "hit": 0}
    pre_gaps = []   # each PRE's tCK after the bank's last READ or WRITE
    for tck, kind, bank, address in commands:
        state = banks.setdefault(bank, {"act": None, "last_act": -1e9, "pre": -1e9, "read": -1e9, "write": -1e9})
        if kind == "ACT":
            assert state["act"] is None, f"ACT to open bank {bank} at {tck}"
            assert tck - state["pre"] >= t.tRP and tck - state["last_act"] >= t.tRC
            state.update(act=tck, last_act=tck, read=-1e9, write=-1e9)
        elif kind in ("READ", "WRITE"):
            assert state["act"] is not None, f"{kind} to closed bank {bank} at {tck}"
            assert tck - state["act"] >= t.tRCD
            seen["hit"] += state[kind.lower()] > state["act"] or state["write" if kind == "READ" else "read"] > state["act"]
            state[kind.lower()] = tck
            if address & (1 << 10):   # auto-precharge: the DRAM precharges once the access and tRAS allow
                recovery = t.tRTP if kind == "READ" else cwl + t.burst + t.tWR
                state.update(pre=max(tck + recovery, state["act"] + t.tRAS), act=None)
                seen["ap"] += 1
        elif kind == "PRE":
            assert not address & (1 << 10), "a precharge-all with no refresh"
            assert state["act"] is not None and tck - state["act"] >= t.tRAS
            assert tck - state["read"] >= t.tRTP and tck - state["write"] >= cwl + t.burst + t.tWR
            pre_gaps.append(tck - max(state["read"], state["write"]))
            state.update(pre=tck, act=None)
            seen["pre"] += 1
        else:
            raise AssertionError(f"{kind} at {tck}: no refresh falls due in this run")
    assert seen["ap"] > 20 and seen["hit"] > 20 and seen["pre"] > 3, seen
    assert pre_gaps[:2] == [11, 35]   # the prologue's: as soon as tRTP and write recovery allow
