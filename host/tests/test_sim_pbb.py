"""The benchmark block end to end on the sim: data integrity under load, bandwidth against the link."""

import json
import subprocess
import sys

import pytest
from monet.benchmarks import bandwidth as bandwidth_bench
from monet.benchmarks import latency as latency_bench
from monet.benchmarks import memtest as memtest_bench
from monet.link.settings import LinkSettings



@pytest.mark.parametrize("pattern", ["seq", "random"])
def test_write_then_checked_read_under_load(sim, pattern):
    # Sequential lines travel in pairs under one header, random ones alone: both must arrive intact.
    w = bandwidth_bench.measure(sim, "write", 128, LinkSettings(8, 8, 15.0), pattern=pattern, count=3000, seed=21)
    r = bandwidth_bench.measure(sim, "read", 128, LinkSettings(8, 8, 15.0), pattern=pattern, count=3000, seed=21,
                                check=True)
    assert w["transactions"] == r["transactions"] == 3000
    assert r["errors"] == 0 and r["bus_errors"] == 0
    # Another seed's data must not pass the check.
    wrong = bandwidth_bench.measure(sim, "read", 128, LinkSettings(8, 8, 15.0), pattern=pattern, count=500, seed=22,
                                    check=True)
    assert wrong["errors"] > 0


@pytest.mark.parametrize("read_percent,mix", [(20, "random"), (80, "even")])
def test_a_mix_reads_and_writes_in_its_proportion_and_keeps_every_byte(sim, read_percent, mix):
    # The mix's writes are the checked pattern itself, so checked reads find it wherever they land.
    bandwidth_bench.measure(sim, "write", 128, LinkSettings(8, 8, 15.0), count=4000, seed=5)
    before = sim.fw.memcard()
    r = bandwidth_bench.measure(sim, "mixed", 128, LinkSettings(8, 8, 15.0), count=4000, seed=5, check=True,
                                read_percent=read_percent, mix=mix)
    after = sim.fw.memcard()
    reads, writes = after["reads"] - before["reads"], after["writes"] - before["writes"]
    assert reads + writes == r["transactions"] == 4000 and r["errors"] == 0 and r["bus_errors"] == 0
    if mix == "even":       # one read each time the ratio's running sum passes 256: exactly
        assert reads == 4000 * bandwidth_bench.pbb_read_ratio(read_percent) // 256
    else:
        assert reads / 4000 == pytest.approx(read_percent / 100, abs=0.03)
    assert r["read_percent"] == read_percent and r["mix"] == mix
    # Both directions carry data: the mix's efficiency counts the line bits of both.
    assert 0 < r["link_efficiency"] <= 64 / 66 + 1e-9


@pytest.mark.parametrize("op", ["read", "write"])
def test_bandwidth_scales_with_lanes_and_stays_under_capacity(sim, op):
    one = bandwidth_bench.measure(sim, op, 128, LinkSettings(8, 1, 10.0), count=2000)
    eight = bandwidth_bench.measure(sim, op, 128, LinkSettings(8, 8, 15.0), count=8000)
    for r in (one, eight):
        assert 0 < r["bandwidth_GBps"] <= r["payload_capacity_GBps"]
        assert 0 < r["link_efficiency"] <= 64 / 66 + 1e-9
        assert r["link_utilisation"] == pytest.approx(r["bandwidth_GBps"] / (2 * r["lanes"] * r["rate_gbps"] / 8))
    assert eight["bandwidth_GBps"] > 5 * one["bandwidth_GBps"]
    # One lane is link-bound: most of its payload capacity is used.
    assert one["payload_utilisation"] > 0.6


def test_outstanding_requests_rule_remote_bandwidth(sim):
    few = bandwidth_bench.measure(sim, "read", 4, LinkSettings(100, 8, 15.0), count=1000)
    many = bandwidth_bench.measure(sim, "read", 128, LinkSettings(100, 8, 15.0), count=4000)
    assert many["bandwidth_GBps"] > 4 * few["bandwidth_GBps"]
    # Histogram percentiles are bucket upper edges, never beyond the largest sample measured.
    for r in (few, many):
        ns = r["latency_ns"]
        assert ns["min"] <= ns["p50"] <= ns["p90"] <= ns["p99"] <= ns["p99_9"] <= ns["max"]


def test_bandwidth_json_contract(sim_build):
    r = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "bandwidth", "--op", "write", "--outstanding",
                        "64", "--distance", "8", "--lanes", "4", "--rate", "12.5", "--count", "2000", "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    for key in ("bandwidth_GBps", "payload_capacity_GBps", "link_utilisation", "link_efficiency", "op", "lanes",
                "rate_gbps", "distance_m", "outstanding", "size", "pattern"):
        assert key in result
    assert result["payload_capacity_GBps"] == pytest.approx(4 * 12.5 * 64 / 66 / 8)


def test_monet_profile_paces_the_streamer_and_frames_each_transaction(sim):
    from monet.link.profiles import PROFILES, STREAMER_GBPS
    ours = bandwidth_bench.measure(sim, "write", 128, LinkSettings(8, 8, 15.0), count=3000)
    monet = bandwidth_bench.measure(sim, "write", 128, LinkSettings(8, 8, 15.0, profile="monet"), count=3000)
    assert monet["link"]["max_units"] == 1 and monet["link"]["pairing"] == 0
    assert monet["link"]["issue_rate"] == PROFILES["monet"].issue_rate > 0
    # The streamer, not the link, bounds the MONet path; one frame a transaction costs line bits. (Within
    # 4 %: the start of the run and the last round trip; a pacing that dropped its fraction gave 7 % less.)
    assert 0.96 * STREAMER_GBPS <= monet["bandwidth_GBps"] <= STREAMER_GBPS * 1.01
    assert monet["link_efficiency"] < 0.81 < ours["link_efficiency"]
    # Back to our link: the settings are run-time, nothing sticks.
    again = bandwidth_bench.measure(sim, "write", 128, LinkSettings(8, 8, 15.0), count=3000)
    assert again["link"]["max_units"] == 8 and again["bandwidth_GBps"] == pytest.approx(ours["bandwidth_GBps"], rel=0.02)


@pytest.mark.parametrize("size", [8, 128])
def test_access_sizes_end_to_end(sim, size):
    w = bandwidth_bench.measure(sim, "write", 64, LinkSettings(8, 8, 15.0), pattern="random", count=1000, seed=5,
                                size=size)
    r = bandwidth_bench.measure(sim, "read", 64, LinkSettings(8, 8, 15.0), pattern="random", count=1000, seed=5,
                                check=True, size=size)
    assert w["transactions"] == r["transactions"] == 1000
    assert r["line_transactions"] == 1000 * (2 if size == 128 else 1)
    assert r["errors"] == 0 and r["bus_errors"] == 0


@pytest.mark.parametrize("pattern", ["seq", "random"])
def test_ddr4_keeps_every_byte_through_refreshes(sim, pattern):
    """The benchmark block writes and reads back with checking on DDR4 (LiteDRAM): refreshes land inside the
    runs, nothing is corrupted, and the DRAM's peak bounds the bandwidth it reports."""
    w = bandwidth_bench.measure(sim, "write", 128, LinkSettings(8, 8, 15.0, memory="ddr4"), pattern=pattern, count=3000,
                                seed=31)
    r = bandwidth_bench.measure(sim, "read", 128, LinkSettings(8, 8, 15.0, memory="ddr4"), pattern=pattern, count=3000,
                                seed=31, check=True)
    assert w["transactions"] == r["transactions"] == 3000
    assert r["errors"] == 0 and r["bus_errors"] == 0
    assert w["refreshes"] > 0 and r["refreshes"] > 0
    for run in (w, r):
        assert run["memory_peak_GBps"] == 16.0
        assert 0 < run["memory_utilisation"] == pytest.approx(run["bandwidth_GBps"] / 16.0)
        assert run["memory_service_cycles"] > 5         # the SRAM's is 1
    wrong = bandwidth_bench.measure(sim, "read", 128, LinkSettings(8, 8, 15.0, memory="ddr4"), pattern=pattern,
                                    count=500, seed=32, check=True)
    assert wrong["errors"] > 0


def test_cpu_memtest_through_the_cacheable_window_on_ddr4(sim):
    before = sim.fw.combiner()
    result = memtest_bench.measure(sim, 16 * 1024, 13, LinkSettings(memory="ddr4"), "cached")
    after = sim.fw.combiner()
    assert result["errors"] == 0 and result["faults"] == 0 and result["window"] == "cached"
    # The words were written as whole lines and read back (through the cacheable window) a fetch a line.
    words = result["bytes"] // 4
    assert after["write_words"] - before["write_words"] == words
    assert after["write_lines"] - before["write_lines"] == result["bytes"] // 64
    assert 0 < after["fetches"] - before["fetches"] <= result["bytes"] // 64 + 2 * len(result["windows"])


def test_cpu_memtest_on_ddr4(sim):
    result = memtest_bench.measure(sim, 8 * 1024, 11,
                                   LinkSettings(memory="ddr4"))   # CPU words, one line transaction each
    assert result["errors"] == 0 and result["faults"] == 0 and result["memory"] == "ddr4"
    sram = latency_bench.measure(sim, "read", LinkSettings(8, 8, 15.0), 20)
    ddr4 = latency_bench.measure(sim, "read", LinkSettings(8, 8, 15.0, memory="ddr4"), 20)
    assert sram["memory_service_cycles"] == 1
    assert ddr4["memory_service_cycles"] >= 11                  # at least a row hit's read
    assert ddr4["latency_cycles"]["p50"] >= sram["latency_cycles"]["p50"] + 10
