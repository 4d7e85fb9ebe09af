"""DDR4's activations by bank group (litex/cores/memcard/controller.py): the window allows a bank exactly when
tRC, tRRD_S, tRRD_L and tFAW allow it, and scattered lines read through DDR4Memory keep JESD79-4's
activate-to-activate timings on the DFI bus while they stream at the activate rate those timings allow, on
the generated Verilog."""

import random
from types import SimpleNamespace

import pytest

from monet.cores.common.layouts import T_RD_REQ as RD_REQ, T_RD_RSP as RD_RSP
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
