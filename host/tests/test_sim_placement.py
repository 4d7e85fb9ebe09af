"""Placement on the sim: the compute card's local memory (ReMAT's target 1, no link) and native HMC (the HMC
link itself over the fiber) beside the memory behind our link, for every memory."""

import subprocess
import sys

import pytest

from monet.benchmarks import REGISTRY
from monet.benchmarks import bandwidth as bandwidth_bench
from monet.benchmarks import latency as latency_bench
from monet.benchmarks import memtest as memtest_bench
from monet.link import model as link_model
from monet.link.settings import LinkSettings


@pytest.mark.parametrize("memory", ["sram", "ddr4", "hmc"])
def test_local_memory_skips_the_link_and_keeps_every_byte(sim, memory):
    result = memtest_bench.measure(sim, 4 * 1024, 23, LinkSettings(memory=memory, placement="local"))
    assert result["errors"] == 0 and result["faults"] == 0
    before = sim.fw.link()
    local = latency_bench.measure(sim, "read", LinkSettings(8, 8, 15.0, memory=memory, placement="local"), 20)
    after = sim.fw.link()
    remote = latency_bench.measure(sim, "read", LinkSettings(8, 8, 15.0, memory=memory), 20)
    assert after["frames_c"] == before["frames_c"], "a local access crossed the link"
    assert local["link"]["bfct_target"] == 1 and remote["link"]["bfct_target"] == 0
    assert local["breakdown_ns"]["phy"] == local["breakdown_ns"]["fiber"] == 0
    # The link, its PHYs and 8 m of fiber are what the remote read pays beyond the local one.
    beyond = remote["latency_ns"]["p50"] - local["latency_ns"]["p50"]
    assert beyond > 2 * link_model.fiber_ns(8) + 2 * link_model.phy_ns(15.0)


@pytest.mark.parametrize("memory,placement,hmc_width,hmc_native,distance", [
    ("ddr4", "local", "full", 0, 8), ("hmc", "local", "full", 0, 8), ("hmc", "local", "half", 0, 8),
    ("hmc", "remote", "half", 1, 36),
])
def test_the_benchmark_block_reads_back_what_it_wrote_in_every_placement(sim, memory, placement, hmc_width,
                                                                        hmc_native, distance):
    where = dict(memory=memory, placement=placement, hmc_width=hmc_width, hmc_native=hmc_native)
    w = bandwidth_bench.measure(sim, "write", 128, LinkSettings(distance, 8, 15.0, **where), pattern="random",
                                count=1500, seed=61)
    r = bandwidth_bench.measure(sim, "read", 128, LinkSettings(distance, 8, 15.0, **where), pattern="random",
                                count=1500, seed=61, check=True)
    assert w["transactions"] == r["transactions"] == 1500
    assert r["errors"] == 0 and r["bus_errors"] == 0
    assert r["link"]["bfct_target"] == 1 and r["link"]["placement"] == placement


def test_the_benchmark_block_on_the_hmc_block_port_moves_checked_128_byte_blocks(sim):
    """The block port's 128 B blocks are the two pattern lines ReMAT's port reads at the same address, and
    one RD128 a cycle goes past the line port's 16 GB/s; the link's figures are left out (no link crossed)."""
    local_hmc = LinkSettings(memory="hmc", placement="local")
    w = bandwidth_bench.measure(sim, "write", 128, local_hmc, count=1000, seed=67, size=128, pbb_port="hmc")
    direct = bandwidth_bench.measure(sim, "read", 128, local_hmc, count=1000, seed=67, check=True, size=128,
                                     pbb_port="hmc")
    lines = bandwidth_bench.measure(sim, "read", 128, local_hmc, count=1000, seed=67, check=True, size=128)
    assert w["transactions"] == direct["transactions"] == lines["transactions"] == 1000
    assert direct["line_transactions"] == lines["line_transactions"] == 2000 and direct["pbb_port"] == "hmc"
    assert direct["errors"] == lines["errors"] == 0 and direct["bus_errors"] == lines["bus_errors"] == 0
    counters = sim.fw.hmc()
    assert counters["block_reads"] >= 1000 and counters["block_writes"] >= 1000
    assert direct["bandwidth_GBps"] > 1.3 * link_model.LINE_BYTES * link_model.NOMINAL_CLK_HZ / 1e9
    assert direct["payload_capacity_GBps"] is direct["link_utilisation"] is direct["link_efficiency"] is None


def test_native_hmc_carries_the_fiber_in_its_own_link(sim):
    near = latency_bench.measure(sim, "read", LinkSettings(0, 8, 15.0, memory="hmc", hmc_width="half", hmc_native=1),
                                 10)
    far = latency_bench.measure(sim, "read", LinkSettings(36, 8, 15.0, memory="hmc", hmc_width="half", hmc_native=1),
                                10)
    assert far["link"]["hmc"]["fiber_ns"] == pytest.approx(link_model.fiber_ns(36))
    grown = far["latency_ns"]["p50"] - near["latency_ns"]["p50"]
    assert grown == pytest.approx(2 * link_model.fiber_ns(36), abs=8)   # whole cycles each way
    assert far["breakdown_ns"]["fiber"] == pytest.approx(2 * link_model.fiber_ns(36))


@pytest.mark.parametrize("args,message", [
    (["--memory", "ddr4", "--hmc-native", "1"], "native HMC needs memory hmc"),
    (["--memory", "hmc", "--hmc-native", "1", "--placement", "local"], "native HMC over fiber is remote"),
    (["--memory", "hmc", "--hmc-native", "1", "--hmc-width", "full"], "hmc_width half with lanes 8"),
    (["--memory", "hmc", "--hmc-native", "1", "--hmc-width", "half", "--lanes", "4"], "hmc_width half with lanes 8"),
])
def test_bad_memory_combinations_are_refused_with_what_is_accepted(args, message):
    r = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "latency", "--op", "read", *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_the_block_port_is_refused_where_it_does_not_reach():
    r = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "bandwidth", "--op", "read", "--memory", "hmc",
                        "--pbb-port", "hmc", "--size", "128"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "placement remote is not accepted" in r.stderr and "Traceback" not in r.stderr
    local = dict(memory="hmc", placement="local", hmc_native=0, size=128)
    assert bandwidth_bench.pbb_port_refusal("hmc", **local) is None
    assert bandwidth_bench.pbb_port_refusal("remat", **local) is None
    for key, value in (("memory", "ddr4"), ("hmc_native", 1), ("size", 64)):
        assert f"with {key} {value} is not accepted" in bandwidth_bench.pbb_port_refusal("hmc", **{**local, key: value})
    bandwidth = REGISTRY["bandwidth"]
    assert bandwidth.refuse({"size": [128, 64], "pbb_port": ["hmc"]}, ["sim"])[0] == "pbb_port"
    assert bandwidth.refuse({"size": [64], "pbb_port": ["remat"]}, ["sim"]) is None
