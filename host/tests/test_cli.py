"""The `monet` CLI: bad values are refused before anything is built; good runs print the contract's JSON."""

import json
import subprocess
import sys
import time

import pytest

from monet.benchmarks import REGISTRY
from monet.cli import main
from monet.sim import SimError, SimTarget


def monet(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "monet.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("args,accepted", [
    (["--op", "read", "--distance", "-1"], "0 to"),
    (["--op", "read", "--distance", "far"], "metres"),
    (["--op", "read", "--lanes", "3"], "1, 2, 4, 8"),
    (["--op", "read", "--rate", "11"], "10, 12.5, 15, 25"),
    (["--op", "fetch"], "read, write"),
    (["--op", "read", "--samples", "0"], "1 to 1024"),
])
def test_bad_values_are_refused_with_the_accepted_ones(args, accepted):
    t0 = time.time()
    r = monet("bench", "latency", *args)
    assert r.returncode == 2
    assert accepted in r.stderr
    assert "Traceback" not in r.stderr
    assert time.time() - t0 < 30   # refused before any build or sim


@pytest.mark.parametrize("args,accepted", [
    (["bench", "ber", "--ber", "0.5"], "from 0 to 0.001"),
    (["bench", "ber", "--ber", "1e-6", "--burst", "40"], "1 to 32"),
    (["bench", "ber", "--ber", "1e-6", "--bits", "10"], "from 1e+06 to 1e+13"),
    (["bench", "prbs", "--ber", "x"], "from 0 to 0.001"),
    (["link", "budget", "--rate", "25"], "10, 12.5, 15"),
    (["link", "budget", "--hop-loss-db", "0"], "from 0.01 to 20"),
    (["bench", "bandwidth", "--op", "read", "--read-percent", "30"], "--read-percent applies only with --op mixed"),
    (["bench", "bandwidth", "--op", "mixed", "--read-percent", "100"], "an integer from 1 to 99"),
])
def test_reliability_commands_refuse_bad_values(args, accepted):
    r = monet(*args)
    assert r.returncode == 2 and accepted in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_benchmark_prints_its_help(name, capsys):
    """Help texts go through argparse's %-formatting: a "%" in one ("53 %") once made --help a traceback."""
    with pytest.raises(SystemExit) as end:
        main(["bench", name, "--help"])
    assert end.value.code == 0 and "accepted:" in capsys.readouterr().out


def test_link_budget_gives_the_paper_hops_at_12_5_and_15_gbps():
    rows = {row["rate_gbps"]: row for row in json.loads(monet("link", "budget", "--json").stdout)}
    assert rows[12.5]["max_hops"] == rows[15.0]["max_hops"] == 3 and rows[15.0]["tiered_hops"] == 3
    assert rows[10.0]["budget_db"] == pytest.approx(10.9) and rows[10.0]["max_hops"] == 10
    # The paper's 7 hops at 10 Gb/s need about 3 dB of losses it does not list.
    extra = json.loads(monet("link", "budget", "--rate", "10", "--extra-loss-db", "3", "--json").stdout)[0]
    assert extra["max_hops"] == 7 and extra["tiered_hops"] == 7


def test_memtest_refuses_a_negative_seed():
    r = monet("bench", "memtest", "--seed", "-4", "--json")
    assert r.returncode == 2 and "seed '-4' is not accepted; accepted: an integer from 0 to 4294967295" in r.stderr


def test_latency_json_contract(sim_build):
    r = monet("bench", "latency", "--op", "read", "--distance", "18", "--lanes", "4", "--rate", "12.5",
              "--samples", "50", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert (result["op"], result["distance_m"], result["lanes"], result["rate_gbps"], result["samples"]) == \
        ("read", 18, 4, 12.5, 50)
    for key in ("latency_ns", "latency_cycles"):
        assert set(result[key]) >= {"min", "mean", "p50", "p99", "max"}
        assert result[key]["min"] <= result[key]["p50"] <= result[key]["p99"] <= result[key]["max"]
    assert result["gateware_hash"] == sim_build.hash
    assert {"fiber_ns", "phy_ns", "serialization_ns", "memory_ns", "remat_link_logic_ns"} <= set(result["breakdown"])
    assert set(result["breakdown_ns"]) == {"memory", "link", "phy", "fiber"}
    assert sum(result["breakdown_ns"].values()) == pytest.approx(result["breakdown"]["total_ns"])


def test_latency_table_without_json(sim_build):
    r = monet("bench", "latency", "--op", "write", "--distance", "0", "--samples", "20")
    assert r.returncode == 0, r.stderr
    assert "p99" in r.stdout and "ReMAT + link logic" in r.stdout


def test_memtest_json_reports_zero_errors(sim_build):
    r = monet("bench", "memtest", "--bytes", "4096", "--seed", "5", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["bytes"] == 4096 and result["errors"] == 0 and len(result["windows"]) >= 2


def test_a_command_that_outlasts_its_timeout_fails_clearly(sim_build):
    target = SimTarget(sim_build)
    try:
        with pytest.raises(SimError, match="timed out after 1 s waiting for the answer to 'fill"):
            target.fw.fill(0, 4194304, 1, wait=1)
    finally:
        target.close()
    assert target.child is None
