"""Campaigns on the sim: a killed run resumes without repeating or losing points; the report is written from
the results. (Campaign files themselves: test_campaign_file.py.)"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from monet.campaign.plan import Campaign, point_key
from monet.report.document import make_report
from monet.tiers import env_name
from process_tree import running, sims_below


def _lines(path):
    return [l for l in path.read_text().splitlines() if l.strip()] if path.exists() else []


@pytest.mark.slow
def test_a_killed_campaign_resumes_without_repeating_or_losing_points(sim_build, tmp_path):
    f = tmp_path / "resume.yaml"
    f.write_text("name: resume\naxes: {distance_m: [0, 8, 16, 24, 28], lanes: [8], rate_gbps: [15]}\n"
                 "benchmarks:\n  - latency: {op: [read], samples: [20]}\n")
    total = len(Campaign(f).points())
    results = tmp_path / "results"
    cmd = [sys.executable, "-m", "monet.cli", "campaign", "run", str(f), "--results", str(results)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    # Kill once two points are stored and a later one is running: each point boots a sim of its own, so
    # between two points (just after one is stored) no sim runs.
    sims, deadline = [], time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if len(_lines(results / "results.jsonl")) >= 2:
            sims = sims_below(proc.pid)
            if sims:
                break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = len(_lines(results / "results.jsonl"))
    assert 2 <= finished < total, "the kill must land mid-run"
    # The sim runs in a session of its own (its console is a pty), out of reach of the kill: it must end
    # with the process that started it rather than run on at full speed.
    assert sims, "a sim was running"
    assert not running(sims, within=10), "the killed campaign left its sim running"

    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"{finished} skipped" in rerun.stdout
    records = [json.loads(l) for l in _lines(results / "results.jsonl")]
    keys = [point_key(r["point"]) for r in records]
    assert len(keys) == len(set(keys)) == total
    manifest = json.loads((results / "manifest.json").read_text())
    # A short campaign of SRAM points runs on the full model (a smaller one would not repay its build).
    assert manifest["sim_models"]["full"]["gateware_hash"] == sim_build.hash and manifest["points"] == total
    assert set(manifest["sim_models"]) == {"full"} and set(manifest["served_by"].values()) == {"full"}
    assert len(manifest["served_by"]) == total
    mib = sim_build.constants["memcard_size"] // 2**20
    assert manifest["topology"].endswith(f"memory card ({mib} MiB on-card memory)") and mib >= 1

    md, html_path = make_report(results)
    text = md.read_text()
    assert "Eq. 1" in text and text.split("\n## ")[1].startswith("Summary: beside the paper") and "526.60" in text
    # Every measured point is a row of the latency table, with the figures the results store holds.
    for r in records:
        lat = r["result"]["latency_ns"]
        row = (f"| ours | sram | read | {r['point']['distance_m']} | 8 | 15 | {lat['mean']:.1f} | {lat['p50']:.1f} "
               f"| {lat['p99']:.1f} | {r['result']['breakdown']['remat_link_logic_cycles']:.0f} |")
        assert row in text, row
    assert (results / "latency_distance.png").stat().st_size > 10_000
    assert "<img src='latency_distance.png'" in html_path.read_text()


@pytest.mark.parametrize("runner", [[], ["--workers", "2"]], ids=["one-worker", "workers-2"])
def test_a_failing_point_is_one_line_the_finished_ones_stay_and_a_rerun_completes(sim_build, tmp_path, runner):
    f = tmp_path / "fail.yaml"
    campaign = "name: fail\naxes: {{distance_m: {}}}\nbenchmarks:\n  - latency: {{op: [read], samples: [5]}}\n"
    f.write_text(campaign.format([0]))
    results = tmp_path / "results"
    cmd = [sys.executable, "-m", "monet.cli", "campaign", "run", str(f), "--results", str(results), *runner]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    # One more point, and every sim the run starts refused, as the tiers refuse one (a SimError in the point).
    f.write_text(campaign.format([0, 8]))
    failed = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                            env={**os.environ, env_name("sim"): "the failure test"})
    said = failed.stdout + failed.stderr
    assert failed.returncode == 1 and "Traceback" not in said, said
    lines = [line for line in said.splitlines() if "failed: SimError" in line]
    assert len(set(lines)) == 1, said
    assert "point latency-distance_m=8-" in lines[0] and "(latency) failed: SimError: the failure test starts a " \
        "Vsim" in lines[0], lines[0]
    assert [json.loads(l)["point"]["distance_m"] for l in _lines(results / "results.jsonl")] == [0]
    assert "point latency-distance_m=8-" in (results / "failures.log").read_text()
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert sorted(json.loads(l)["point"]["distance_m"] for l in _lines(results / "results.jsonl")) == [0, 8]
