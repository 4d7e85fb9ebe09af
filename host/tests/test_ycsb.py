"""YCSB (real core from Maven Central + our memcached binding) against a real memcached on loopback, the
parser of YCSB's report, and perf's counters -> IPC."""

import json
import subprocess
import sys

import pytest

from monet.workloads import perf, ycsb


@pytest.fixture(scope="module")
def memcached():
    with ycsb.Memcached() as server:
        yield server


@pytest.mark.parametrize("workload", ["a", "c", "f"])
def test_real_ycsb_runs_each_workload_and_the_parser_reads_it(memcached, workload):
    r = ycsb.run(workload, memcached.hosts, operations=2000)
    assert r["failed"] == 0 and r["operations"] == 2000
    assert r["ops_per_s"] > 0 and r["runtime_ms"] > 0
    assert 0 < r["avg_latency_us"] <= r["p99_latency_us"]
    ops = r["per_operation"]
    assert all(v["ok"] == v["operations"] for name, v in ops.items() if name != "READ-MODIFY-WRITE")
    if workload == "a":
        assert ops["READ"]["operations"] + ops["UPDATE"]["operations"] == 2000
        assert 700 < ops["READ"]["operations"] < 1300
    elif workload == "c":
        assert set(ops) == {"READ"}
    else:
        # Each read-modify-write is a read and an update, recorded under all three names.
        assert ops["READ-MODIFY-WRITE"]["operations"] == ops["UPDATE"]["operations"]
        assert ops["READ"]["operations"] == 2000


def test_binding_stores_and_merges_fields(memcached):
    # Workload C reads every field of every record the load phase inserted: a lost or damaged record would
    # come back NOT_FOUND or fail to decode. F's updates merge one field into the stored record.
    for workload in ("f", "c"):
        r = ycsb.run(workload, memcached.hosts, operations=1000)
        assert r["failed"] == 0


def test_parser_refuses_output_without_throughput():
    with pytest.raises(ycsb.YcsbError, match=r"no \[OVERALL\] throughput"):
        ycsb.parse_output("[READ], Operations, 10\n")


def test_unknown_workload_names_the_accepted_ones():
    with pytest.raises(ycsb.YcsbError, match="accepted: a, b, c, f"):
        ycsb.workload_file("e")


def test_perf_ipc_is_a_number_only_where_counters_count():
    r = subprocess.run(["perf", "stat", "-x,", "-e", "cycles,instructions", "true"], capture_output=True, text=True)
    counts = perf.parse_stat(r.stderr)
    assert set(perf.EVENTS) <= set(counts)
    ipc = perf.ipc_of(counts)
    if counts["cycles"] and counts["instructions"]:
        assert ipc["ipc"] > 0 and ipc["ipc_note"] is None
    else:
        assert ipc["ipc"] is None and "not supported" in ipc["ipc_note"]
    # Emulated counters never give an IPC, whatever they count.
    emulated = perf.ipc_of({"cycles": 1e6, "instructions": 1e6}, emulated=True)
    assert emulated["ipc"] is None and "not meaningful" in emulated["ipc_note"]


def test_cli_ycsb_json_has_the_figures():
    r = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "ycsb", "--target", "host", "--workload", "b",
                        "--operations", "1000", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    for key in ("ops_per_s", "avg_latency_us", "p99_latency_us", "ipc", "ipc_note"):
        assert key in result
    assert result["ops_per_s"] > 0 and result["workload"] == "b"
