"""End to end on the sim SoC: the CPU's firmware reaches remote memory through ReMAT, the link and the
channel model, for every lane count, at run-time distances, with BFCT faults that never hang it."""

import pytest

from monet.benchmarks import latency as latency_bench
from monet.link import model as link_model
from monet.link.settings import LinkSettings
from monet.report.stats import linear_fit
from monet.sim import link_setup

ALL_ONES = 0xFFFFFFFF


@pytest.mark.parametrize("lanes", [1, 2, 4, 8])
def test_seeded_data_round_trip_every_lane_count(sim, lanes):
    before = link_setup.configure_link(sim, LinkSettings(8, lanes, 10.0 if lanes < 8 else 15.0))
    windows = link_setup.map_remote_windows(sim)
    for i, offset in enumerate(windows):
        seed = 100 * lanes + i
        sim.fw.fill(offset + 4096 * lanes, 1024, seed)
        check = sim.fw.check(offset + 4096 * lanes, 1024, seed)
        assert check["errors"] == 0 and not check["fault"], check
    # A different seed must not pass: the check really compares.
    wrong = sim.fw.check(windows[0] + 4096 * lanes, 1024, 100 * lanes + 7)
    assert wrong["errors"] > 0
    link = sim.fw.link()
    # The counters are cumulative over the session (the reliability tests inject errors): none new here.
    assert (link["crc_errors_c"], link["crc_errors_m"]) == (before["crc_errors_c"], before["crc_errors_m"])


def test_skewed_lanes_deliver_intact_data(sim):
    delay = link_model.delay_cycles(8, 15.0)
    sim.fw.link(lanes=8, block_ps=link_model.block_ps(15.0), delay=delay, skew=[0, 3, 7, 1, 12, 5, 0, 9])
    sim.fw.fill(addr=0x10000, bytes=2048, seed=77)
    assert sim.fw.check(addr=0x10000, bytes=2048, seed=77)["errors"] == 0
    skewed = sim.fw.lat(op="read", addr=0x10000, n=4)["hw_cycles"][-1]
    sim.fw.link(skew=0)
    aligned = sim.fw.lat(op="read", addr=0x10000, n=4)["hw_cycles"][-1]
    # Deskew waits for the slowest lane, once each way.
    assert skewed - aligned == 2 * 12


def test_bfct_faults_return_an_error_and_the_firmware_keeps_running(sim):
    section = sim.fw.info()["section_bytes"]
    sim.fw.bfct(idx=6, en=1, r=1, w=0, base=1)    # read only
    sim.fw.bfct(idx=7, en=0, r=1, w=1, base=2)    # disabled
    before = sim.fw.faults()["faults"]

    denied = sim.fw.wr(6 * section, 5)
    assert denied["fault"] and denied["fault_kind"] == 3 and denied["fault_addr"] == 6 * section

    unmapped = sim.fw.rd(7 * section + 64)
    assert unmapped["fault"] and unmapped["fault_kind"] == 1 and unmapped["val"] == ALL_ONES

    allowed = sim.fw.rd(6 * section)
    assert not allowed["fault"]
    assert sim.fw.faults()["faults"] == before + 2
    # The firmware and the good windows still work.
    sim.fw.wr(addr=0x100, val=0xc0ffee)
    assert sim.fw.rd(addr=0x100)["val"] == 0xC0FFEE


def test_each_fault_kind_latches_its_address_and_the_link_goes_on(sim):
    section = sim.fw.info()["section_bytes"]
    sim.fw.bfct(idx=5, en=1, r=0, w=1, base=1)    # write only
    sim.fw.bfct(idx=6, en=1, r=1, w=1, target=2, base=1)    # a target this build does not have
    before = sim.fw.faults()["faults"]
    cases = [((sim.fw.rd, 5 * section + 0x80), 2),
             ((sim.fw.rd, 6 * section + 0x44), 4),
             ((sim.fw.wr, 6 * section + 0x48, 1), 4),
             ((sim.fw.rd, 15 * section + 0xFFFC), 1)]      # never mapped
    for (access, addr, *val), kind in cases:
        answer = access(addr, *val)
        assert (answer["fault"], answer["fault_kind"], answer["fault_addr"]) == (True, kind, addr), hex(addr)
    assert sim.fw.wr(5 * section + 0x80, 0x600d)["fault"] is False     # writes are allowed
    assert sim.fw.faults()["faults"] == before + len(cases)
    sim.fw.fill(addr=0x3000, bytes=512, seed=4)
    assert sim.fw.check(addr=0x3000, bytes=512, seed=4)["errors"] == 0


def test_benchmark_traffic_into_a_read_only_section_ends_in_bus_errors(sim):
    section = sim.fw.info()["section_bytes"]
    sim.fw.bfct(idx=8, en=1, r=1, w=0, base=2)
    denied = sim.fw.pbb(op="write", pattern="seq", addr=8 * section, span=4096, count=200)
    assert denied["bus_errors"] == 200 and denied["completed"] == 200, denied
    reads = sim.fw.pbb(op="read", pattern="seq", addr=8 * section, span=4096, count=200)
    assert reads["bus_errors"] == 0 and reads["completed"] == 200
    good = sim.fw.pbb(op="write", pattern="seq", addr=0x8000, span=4096, count=200, check=1)
    assert good["bus_errors"] == 0 and good["errors"] == 0


@pytest.mark.parametrize("memory", ["sram", "ddr4", "hmc"])
def test_a_poisoned_line_reaches_the_cpu_as_a_bus_error_with_its_address(sim, memory):
    link_setup.configure_link(sim, LinkSettings(8, 8, 15.0, memory=memory))
    line = 0x2040
    sim.fw.wr(addr=line, val=0x5EED1234)
    sim.fw.wr(addr=line + 64, val=0x600D)
    before = sim.fw.memcard(poison=1, line=line // 64)
    answer = sim.fw.rd(addr=line + 4)
    assert (answer["fault"], answer["fault_kind"], answer["fault_addr"], answer["val"]) == \
        (True, 5, line + 4, ALL_ONES)                          # a remote error, at the address read
    assert sim.fw.rd(addr=line + 64)["val"] == 0x600D          # the next line is not poisoned
    # The benchmark block counts it as a bus error: four lines read, one poisoned; nothing hangs.
    run = sim.fw.pbb(op="read", pattern="seq", addr=line - 64, span=256, stride=64, count=4)
    assert run["completed"] == 4 and run["bus_errors"] == 1, run
    after = sim.fw.memcard(poison=0)
    assert after["poisoned"] - before["poisoned"] == 2 and after["poison"] == 0
    assert sim.fw.rd(addr=line)["val"] == 0x5EED1234           # the data was never touched


def test_the_hmcs_error_answer_for_a_poisoned_line_reaches_the_cpu_as_a_bus_error_with_its_address(sim):
    # The HMC itself answers: its vault reads the line and sends an ERROR response, which the memory card's
    # HMC controller passes on as an error answer (the memory card's own poisoned line stays off).
    link_setup.configure_link(sim, LinkSettings(8, 8, 15.0, memory="hmc"))
    line = 0x2080
    sim.fw.wr(addr=line, val=0x5EED4321)
    sim.fw.wr(addr=line + 64, val=0x600D)
    before, memcard_before = sim.fw.hmc(poison=1, line=line // 64), sim.fw.memcard()
    answer = sim.fw.rd(addr=line + 8)
    assert (answer["fault"], answer["fault_kind"], answer["fault_addr"], answer["val"]) == \
        (True, 5, line + 8, ALL_ONES)
    assert sim.fw.rd(addr=line + 64)["val"] == 0x600D
    run = sim.fw.pbb(op="read", pattern="seq", addr=line - 64, span=256, stride=64, count=4)
    assert run["completed"] == 4 and run["bus_errors"] == 1, run
    after, memcard_after = sim.fw.hmc(poison=0), sim.fw.memcard()
    assert after["poisoned"] - before["poisoned"] == after["errors"] - before["errors"] == 2
    assert after["poison"] == 0 and memcard_after["poisoned"] == memcard_before["poisoned"]
    assert sim.fw.rd(addr=line)["val"] == 0x5EED4321


def test_translation_uses_the_remote_base(sim):
    section = sim.fw.info()["section_bytes"]
    sim.fw.bfct(idx=9, en=1, r=1, w=1, base=3)   # CPU section 9 -> memory-card section 3
    sim.fw.wr(9 * section + 0x40, 0xabcd1234)
    assert sim.fw.rd(3 * section + 0x40)["val"] == 0xABCD1234


def test_out_of_range_remote_base_is_a_remote_error(sim):
    sim.fw.bfct(idx=10, en=1, r=1, w=1, base=100)  # beyond the memory card
    answer = sim.fw.rd(10 * sim.fw.info()["section_bytes"])
    assert answer["fault"] and answer["fault_kind"] == 5 and answer["val"] == ALL_ONES


def test_two_distances_in_one_run_without_rebuild(sim, sim_build):
    near = latency_bench.measure(sim, "read", LinkSettings(8, 8, 15.0), 20)
    far = latency_bench.measure(sim, "read", LinkSettings(100, 8, 15.0), 20)
    assert sim.child.isalive() and sim_build.model.exists()
    extra = far["latency_ns"]["p50"] - near["latency_ns"]["p50"]
    assert abs(extra - link_model.FIBER_NS_PER_M * 92) <= 2 * link_model.CLK_PS / 1000


@pytest.mark.parametrize("op", ["read", "write"])
def test_latency_is_linear_in_distance(sim, op):
    distances = [0, 8, 18, 36, 100]
    means = [latency_bench.measure(sim, op, LinkSettings(d, 8, 15.0), 10)["latency_ns"]["mean"] for d in distances]
    _, slope, r2 = linear_fit(distances, means)
    assert abs(slope - link_model.FIBER_NS_PER_M) / link_model.FIBER_NS_PER_M < 0.02, slope
    assert r2 > 0.999


def test_remat_and_link_logic_within_budget(sim):
    result = latency_bench.measure(sim, "read", LinkSettings(8, 8, 15.0), 20)
    logic = result["breakdown"]["remat_link_logic_cycles"]
    # The sim is cycle-exact: what ReMAT, both link ends and the memory card's front add to a read is 11 cycles
    # (the benchmark's target is 12; through the framers' and deframers' packing stages and rings it was 25:
    # the cut-throughs take 2 and 4 cycles off each end; the memory card's input FIFO and delay line took 3,
    # now 1: a request that finds the FIFO empty enters its register, the answer goes around the empty
    # line), and a pipeline stage added anywhere on the path (or one lost) shows here.
    assert logic == 11, result["breakdown"]
    # The stage timers time every sample (one access at a time) and their stages add up to ReMAT's own mean to
    # the cycle; each logic stage is the number of cycles its docstring gives (the cut-throughs' 2 cycles, a
    # line's second beat a cycle behind its first at 8 lanes), the SRAM's service 1 cycle.
    stages = result["stages"]
    assert (stages["timed"], stages["spoiled"], stages["unaccounted_cycles"]) == (20, 0, 0), stages
    cycles = stages["cycles"]
    assert {k: v for k, v in cycles.items() if k != "wire_both_ways"} == {
        "remat_out": 1, "compute_link_tx": 2, "memory_link_rx": 2, "memory_card_front": 1, "memory": 1,
        "memory_link_tx": 2, "compute_link_rx": 3, "remat_back": 1}, cycles
    # The wire: each way's channel delay and its first beat (a lone request's 2 blocks, a line's first 8, at a
    # block time of 4.4 ns on 8 lanes: a cycle or two).
    delay = link_model.delay_cycles(8, 15.0)
    assert 2 * delay + 2 <= cycles["wire_both_ways"] <= 2 * delay + 4, cycles


def test_lane_rate_changes_serialization(sim):
    slow = latency_bench.measure(sim, "read", LinkSettings(8, 1, 10.0), 10)["latency_cycles"]["p50"]
    fast = latency_bench.measure(sim, "read", LinkSettings(8, 8, 15.0), 10)["latency_cycles"]["p50"]
    model = lambda lanes, rate: (link_model.serialization_cycles(2, lanes, rate)
                                 + link_model.serialization_cycles(10, lanes, rate)
                                 + 2 * link_model.delay_cycles(8, rate))
    assert slow - fast == model(1, 10.0) - model(8, 15.0)
