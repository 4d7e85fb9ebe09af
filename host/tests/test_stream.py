"""STREAM (bench/stream) on the host and on the soft CPU in the sim: kernels, validation, the report parser."""

import json
import subprocess
import sys

import pytest

from monet.link.settings import LinkSettings
from monet.workloads import stream


@pytest.fixture(scope="module")
def host_binary():
    return stream.build("host")


def _run(binary, *args):
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("threads", [1, 2])
def test_host_stream_validates_and_reports_every_kernel(host_binary, threads):
    r = _run(host_binary, "-n", "200000", "-r", "4", "-t", str(threads))
    assert r.returncode == 0, r.stdout + r.stderr
    result = stream.parse_output(r.stdout)
    assert result["validates"] and result["bad_elements"] == 0
    assert (result["n"], result["repetitions"], result["threads"], result["element_bytes"]) == (200000, 4, threads, 8)
    for k in stream.KERNELS:
        v = result["kernels"][k]
        assert v["best_MBps"] > 0 and v["min_s"] <= v["avg_s"] <= v["max_s"]
        # Best rate is the kernel's bytes over its best time (2 arrays for Copy/Scale, 3 for Add/Triad).
        arrays = 2 if k in ("copy", "scale") else 3
        # (times are printed to 1 us)
        mb = arrays * 8 * 200000 / 1e6
        assert mb / (v["min_s"] + 5e-7) - 0.1 <= v["best_MBps"] <= mb / max(v["min_s"] - 5e-7, 1e-9) + 0.1


def test_validation_catches_a_corrupted_array(host_binary):
    r = _run(host_binary, "-n", "50000", "-r", "3", "--corrupt")
    assert r.returncode == 1
    result = stream.parse_output(r.stdout)
    assert not result["validates"] and result["bad_elements"] == 1
    assert "Failed Validation on array a[]" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["-n", "10"], "-n 10 is not accepted; accepted: 1000 to"),
    (["-r", "1"], "-r 1 is not accepted; accepted: 2 to 1024"),
    (["--bogus"], "unknown option --bogus"),
])
def test_bad_arguments_name_the_input_and_what_is_accepted(host_binary, args, message):
    r = _run(host_binary, *args)
    assert r.returncode == 2 and message in r.stderr and "usage:" in r.stderr


def test_parser_refuses_output_without_a_kernel_table():
    with pytest.raises(stream.StreamError, match="no complete kernel table"):
        stream.parse_output("Array size = 1000 (elements)\nCopy:  1.0  0.1 0.1 0.1\n")


def test_cli_host_json():
    r = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "stream", "--target", "host", "--elements",
                        "100000", "--reps", "3", "--threads", "1", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["validates"] and set(result["kernels"]) == set(stream.KERNELS)
    assert all(v["best_MBps"] > 0 for v in result["kernels"].values())


# The soft CPU in the sim: local RAM (node 0) and remote memory (node 1) through the link.

@pytest.mark.slow
def test_sim_stream_local_and_remote_validate_and_remote_falls_with_distance(sim):
    local = stream.run_sim(sim, 0, n=256, repetitions=2)
    near = stream.run_sim(sim, 1, LinkSettings(8), n=256, repetitions=2)
    far = stream.run_sim(sim, 1, LinkSettings(100), n=256, repetitions=2)
    for r in (local, near, far):
        assert r["validates"] and r["bad_elements"] == 0 and not r["bus_fault"]
        assert 0 < r["ipc"] <= 1
    for k in stream.KERNELS:
        # Every remote word is a round trip: further is slower, and remote is slower than local RAM.
        assert local["kernels"][k]["best_MBps"] > near["kernels"][k]["best_MBps"] > far["kernels"][k]["best_MBps"]
    assert far["ipc"] < near["ipc"] < local["ipc"]


def test_sim_stream_validation_catches_a_corrupted_array(sim):
    r = stream.run_sim(sim, 0, n=256, repetitions=2, corrupt=True)
    assert not r["validates"] and r["bad_elements"] == 1


def test_sim_stream_takes_the_longest_arrays_the_host_accepts_and_refuses_one_word_more(sim):
    from monet.benchmarks.stream import SIM_MAX_WORDS
    from monet.sim import SimError
    assert sim.fw.stream(mem="local", n=SIM_MAX_WORDS, reps=2)["validates"]
    with pytest.raises(SimError, match="must fit in local RAM"):
        sim.fw.stream(mem="local", n=SIM_MAX_WORDS + 1, reps=2)


@pytest.mark.parametrize("fetch_lines", [1, 2])
def test_sim_stream_through_the_cacheable_window_validates_and_combines_words_into_lines(sim, fetch_lines):
    sim.fw.combiner(fetch_lines=fetch_lines)
    before = sim.fw.combiner()
    cached = stream.run_sim(sim, 1, LinkSettings(8), n=1024, repetitions=2, window="cached")
    after = sim.fw.combiner()
    assert cached["validates"] and not cached["bus_fault"] and cached["window"] == "cached"
    moved = {k: after[k] - before[k] for k in ("read_hits", "fetches", "write_lines", "write_words", "write_errors")}
    # Words written: 3 arrays initialised, then 2 repetitions of 4 kernels writing one array each.
    assert moved["write_words"] == 3 * 1024 + 2 * 4 * 1024 and moved["write_errors"] == 0
    # The kernels' writes leave as whole lines (the initialisation interleaves 3 arrays: a line a word).
    assert moved["write_lines"] == 3 * 1024 + 2 * 4 * 1024 // 16
    # Reads: each kernel reads 1 or 2 arrays of 64 lines, and validation 3, a fetch a line; every other word
    # the data cache asks for is served from the read buffer.
    lines_read = 2 * (1 + 1 + 2 + 2) * 64 + 3 * 64
    assert lines_read <= moved["fetches"] <= lines_read + 2 * 16
    assert moved["read_hits"] + moved["fetches"] >= 16 * moved["fetches"] - 16 * 16


def test_sim_stream_corruption_through_the_cacheable_window_is_caught(sim):
    r = stream.run_sim(sim, 1, n=256, repetitions=2, window="cached", corrupt=True)
    assert not r["validates"] and r["bad_elements"] == 1


def test_cacheable_window_writes_reach_remote_memory_and_uncached_writes_are_not_hidden(sim):
    # The same STREAM through each window leaves the same a[0] in remote memory, read through the uncached
    # window; the cacheable run starts with a fence, so the marker written before it is not what it reads.
    finals = []
    for window in ("cached", "uncached"):
        sim.fw.wr(addr=0, val=12345)
        assert stream.run_sim(sim, 1, n=64, repetitions=2, window=window)["validates"]
        finals.append(sim.fw.rd(addr=0)["val"])
    assert finals[0] == finals[1] != 12345
