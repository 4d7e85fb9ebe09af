"""Remote HMC end to end on the sim: the memory card's HMC (our controller, an HMC link, the device model)
behind our link, reached by the benchmark block and the CPU, with and without bit errors on the HMC link."""

import json
import subprocess
import sys

import pytest

from monet.benchmarks import bandwidth as bandwidth_bench
from monet.benchmarks import latency as latency_bench
from monet.benchmarks import memtest as memtest_bench
from monet.cores.hmc.vaults import unloaded_cycles
from monet.cores.phy.figures import delay_cycles, flit_ps, flit_threshold
from monet.link.settings import LinkSettings
from monet.sim import link_setup
from monet.soc.hmc import unloaded_read_cycles


@pytest.mark.parametrize("width,lanes", [("full", 16), ("half", 8)])
def test_hmc_keeps_every_byte_and_reports_its_link(sim, width, lanes):
    w = bandwidth_bench.measure(sim, "write", 128, LinkSettings(8, 8, 15.0, memory="hmc", hmc_width=width),
                                pattern="random", count=1000, seed=41)
    r = bandwidth_bench.measure(sim, "read", 128, LinkSettings(8, 8, 15.0, memory="hmc", hmc_width=width),
                                pattern="random", count=1000, seed=41, check=True)
    assert w["transactions"] == r["transactions"] == 1000
    assert r["errors"] == 0 and r["bus_errors"] == 0
    assert r["link"]["hmc"] == {"width": width, "lanes": lanes, "rate_gbps": 15.0, "flit_ps": flit_ps(lanes, 15),
                                "delay": delay_cycles(15, lanes=lanes), "fiber_ns": 0.0}
    for run in (w, r):
        assert run["memory_peak_GBps"] == 40.0
        assert run["memory_service_cycles"] > unloaded_cycles(64, 250e6)
    wrong = bandwidth_bench.measure(sim, "read", 128, LinkSettings(8, 8, 15.0, memory="hmc", hmc_width=width),
                                    pattern="random", count=200, seed=42, check=True)
    assert wrong["errors"] > 0


def test_hmc_link_errors_are_retried_and_nothing_corrupt_is_delivered(sim):
    link_setup.configure_link(sim, LinkSettings(8, 8, 15.0, memory="hmc", hmc_width="half"))
    before = sim.fw.hmc(ber=flit_threshold(1e-4), seed=7)     # the sim fixture sets it back after the test
    # 8 B writes: each a read-modify-write of its line in the host controller.
    w = bandwidth_bench.measure(sim, "write", 64, LinkSettings(8, 8, 15.0, memory="hmc", hmc_width="half"),
                                pattern="random", count=600, seed=43, size=8)
    r = bandwidth_bench.measure(sim, "read", 64, LinkSettings(8, 8, 15.0, memory="hmc", hmc_width="half"),
                                pattern="random", count=600, seed=43, check=True, size=8)
    after = sim.fw.hmc()
    assert w["transactions"] == r["transactions"] == 600
    assert r["errors"] == 0 and r["bus_errors"] == 0
    hits = after["hits_down"] + after["hits_up"] - before["hits_down"] - before["hits_up"]
    retries = after["host_replays"] + after["device_replays"] - before["host_replays"] - before["device_replays"]
    assert hits > 0 and retries > 0
    assert after["rmw_writes"] - before["rmw_writes"] == 600


def test_cpu_memtest_and_latency_on_hmc(sim):
    result = memtest_bench.measure(sim, 4 * 1024, 17, LinkSettings(memory="hmc"))
    assert result["errors"] == 0 and result["faults"] == 0 and result["memory"] == "hmc"
    lat = latency_bench.measure(sim, "read", LinkSettings(8, 8, 15.0, memory="hmc"), 20)
    # One read at a time: the HMC path's unloaded time, every sample (the card's service time of each): the
    # controller's request register and link out, the channel, the device, the channel back, the controller's
    # link in with its CRC stage and its response register.
    hmc = unloaded_read_cycles(15)
    assert hmc == 34
    assert lat["memory_service_cycles"] == hmc
    assert lat["breakdown_ns"]["memory"] == pytest.approx(hmc * 4, abs=4)


def test_hmc_at_a_rate_it_does_not_take_is_refused():
    r = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "latency", "--op", "read", "--memory", "hmc", "--rate", "25",
                        "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "rate 25 Gb/s is not accepted" in r.stderr and "10, 12.5, 15" in r.stderr
    assert "Traceback" not in r.stderr
