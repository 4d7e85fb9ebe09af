"""Campaigns on many workers (monet.campaign.workers): a worker killed in the middle of a point loses nothing
and repeats nothing; bad worker settings are refused by name; the costliest points go first. (Every runner
giving the same figures, point for point: test_runner_matrix.py.)"""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from monet.campaign.plan import Campaign, ResultsStore, point_cost, point_id, point_key
from monet.campaign.workers import connect, run_campaign
from monet.repo import REPO
from process_tree import running, sims_below

SMALL = ("name: small\naxes: {distance_m: [0, 36], lanes: [8], rate_gbps: [15]}\n"
         "benchmarks:\n  - latency: {op: [read], samples: [20]}\n"
         "  - bandwidth: {op: [read], pattern: [random], outstanding: [64], count: [1000]}\n")


@pytest.fixture
def cluster():
    with connect(workers=2) as client:     # the LocalCluster `--workers 2` makes
        yield client


@pytest.mark.slow
def test_a_worker_killed_mid_point_loses_and_repeats_nothing(sim_build, tmp_path, cluster):
    f = tmp_path / "kill.yaml"
    f.write_text("name: kill\naxes: {distance_m: [0, 8, 18, 26, 36, 50], lanes: [8], rate_gbps: [15]}\n"
                 "benchmarks:\n  - latency: {op: [read], samples: [40]}\n")
    campaign = Campaign(f)
    results = tmp_path / "results"
    outcome = {}
    runner = threading.Thread(target=lambda: outcome.update(
        done=run_campaign(campaign, results, cluster, log=lambda m: None)))
    runner.start()
    # Wait until a worker is in the middle of a point, then kill its process (the nanny starts a new one).
    # Its pid is asked first and the point it runs read just before the kill: a point (seconds) must not
    # finish between the look and the kill, or nothing is lost.
    victim, deadline = None, time.time() + 300
    while victim is None and time.time() < deadline and runner.is_alive():
        busy = [w for w, keys in cluster.processing().items() if keys]
        if busy and (results / "results.jsonl").exists():
            victim = busy[0]
            pid = cluster.run(os.getpid, workers=[victim])[victim]
            sims = sims_below(pid)
            in_point = cluster.processing().get(victim)
            if in_point and sims:
                lost = in_point[0]
                os.kill(pid, signal.SIGKILL)
            else:
                victim = None
        time.sleep(0.05)
    assert victim is not None, "no worker was busy after a point finished"
    assert not running(sims, within=10), "the killed worker left its sim running"
    runner.join(timeout=600)
    assert outcome["done"] == (len(campaign.points()), 0)
    records = ResultsStore(results).records()
    keys = [point_key(r["point"]) for r in records]
    lines = (results / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(keys) == len(set(keys)) == len(campaign.points())
    rerun = {point_id(r["point"]): r["result"]["ran_on"]["pid"] for r in records}
    lost_point = next(p for p in rerun if lost.endswith("-" + p))
    assert rerun[lost_point] != pid, "the lost point must have run again on a live worker"


@pytest.mark.parametrize("args,message", [
    (["--workers", "0"], "workers '0' is not accepted; accepted: an integer from 1 to 64"),
    (["--workers", "two"], "workers 'two' is not accepted; accepted: an integer from 1 to 64"),
    (["--scheduler", "tcp://127.0.0.1:9"], "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"),
    (["--scheduler", "nowhere"], "cannot reach the Dask scheduler at 'nowhere'"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:9"], "exclude each other"),
])
def test_bad_worker_settings_are_refused_by_name(tmp_path, args, message):
    f = tmp_path / "c.yaml"
    f.write_text(SMALL)
    r = subprocess.run([sys.executable, "-m", "monet.cli", "campaign", "run", str(f), "--results",
                        str(tmp_path / "r")] + args, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_workers_take_the_costliest_points_first():
    # ber.yaml's three crawling monet points take ~80 s each on the sim, its 1e-12 points ~30 s.
    points = {(p["profile"], p["rate_gbps"], p["ber"]): p for p in Campaign(REPO / "campaigns" / "ber.yaml").points()}
    order = sorted(points.values(), key=point_cost, reverse=True)
    assert {(p["profile"], p["ber"]) for p in order[:3]} == {("monet", 1e-7), ("monet", 1e-6), ("monet", 1e-5)}
    assert point_cost(points[("ours", 10, 1e-12)]) > point_cost(points[("ours", 15, 1e-12)])
