"""`monet bench chase` (monet/benchmarks/chase.py): the firmware's pointer chase ends where the host's model
of its chain says, each load waits a whole round trip, and the benchmark reports it through the registry
(CLI, campaign, report) like every other."""

import json
import subprocess
import sys

from monet.benchmarks import REGISTRY
from monet.benchmarks.chase import chain_end
from monet.campaign.plan import Campaign
from monet.link import model as link_model
from monet.soc import sim as sim_soc


def test_the_chain_ends_where_the_model_says_and_each_load_waits_a_round_trip(sim):
    answer = sim.fw.chase(addr=0x20000, lines=64, n=200, seed=9)
    assert answer["hw_count"] == 200
    # Each load depends on the one before: the CPU waits at least the full remote latency per load.
    assert answer["cycles_per_load"] >= answer["hw_max"]
    assert answer["instret"] > 200
    assert answer["end"] == chain_end(sim_soc.REMOTE_BASE, 0x20000, lines=64, loads=200, seed=9)
    # Another seed is another cycle: the model is not right by accident.
    assert chain_end(sim_soc.REMOTE_BASE, 0x20000, lines=64, loads=200, seed=10) != answer["end"]


def test_loads_around_the_whole_cycle_come_back_to_the_start():
    start = chain_end(0x8000_0000, 0, lines=16, loads=0, seed=3)
    assert chain_end(0x8000_0000, 0, lines=16, loads=16, seed=3) == start
    assert len({chain_end(0x8000_0000, 0, lines=16, loads=k, seed=3) for k in range(16)}) == 16


def test_cli_chase_json_and_table(sim_build):
    r = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "chase", "--distance", "36", "--lines", "32",
                        "--loads", "300", "--seed", "4", "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert (result["lines"], result["loads"], result["distance_m"], result["remat_samples"]) == (32, 300, 36, 300)
    assert result["end"] == result["expected_end"] and result["gateware_hash"] == sim_build.hash
    hw = result["remat_latency_cycles"]
    assert hw["min"] <= hw["mean"] <= hw["max"] <= result["load_cycles"]
    # 36 m of fiber round trip is in every load.
    assert result["load_ns"] > link_model.fiber_ns(36)
    table = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "chase", "--lines", "8", "--loads", "50"],
                           capture_output=True, text=True, timeout=600)
    assert table.returncode == 0, table.stderr
    assert "per load, as the CPU sees it" in table.stdout and "chain followed: 50 remote loads" in table.stdout
    assert table.stdout.rstrip().endswith("PASS")


def test_chase_in_a_campaign_and_its_refusals(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("axes: {distance_m: [0, 36]}\nbenchmarks: [{chase: {lines: [2, 1024]}}]")
    points = Campaign(f).points()
    assert sorted((p["distance_m"], p["lines"], p["loads"], p["seed"]) for p in points) == [
        (0, 2, 1000, 1), (0, 1024, 1000, 1), (36, 2, 1000, 1), (36, 1024, 1000, 1)]
    r = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "chase", "--lines", "1025"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "lines '1025' is not accepted; accepted: an integer from 2 to 1024" in r.stderr
    assert "chase" in REGISTRY and REGISTRY["chase"].targets == ("sim",)
