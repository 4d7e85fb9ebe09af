"""Campaigns: broken files are refused with the key, value and what is accepted; a killed run resumes
without repeating or losing points; the report is written from the results."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from monet.campaign import Campaign, CampaignError, ResultsStore, point_key
from monet.report import make_report

GOOD = """
name: t
axes: {distance_m: [0, 8], lanes: [8], rate_gbps: [15]}
benchmarks:
  - latency: {op: [read], samples: [20]}
"""


@pytest.mark.parametrize("text,message", [
    ("axes: {lanes: [3]}\nbenchmarks: [latency]", "axes.lanes: 3 is not accepted; accepted: 1, 2, 4, 8"),
    ("axes: {rate_gbps: [11]}\nbenchmarks: [latency]", "axes.rate_gbps: 11 is not accepted; accepted: 10, 12.5"),
    ("axes: {distance_m: [-5]}\nbenchmarks: [latency]", "axes.distance_m: -5 is not accepted; accepted: a number"),
    ("axes: {colour: [red]}\nbenchmarks: [latency]", "unknown axis 'colour'; accepted: distance_m, lanes"),
    ("axes: {lanes: []}\nbenchmarks: [latency]", "axes.lanes: the list is empty"),
    ("axes: {profile: [aurora]}\nbenchmarks: [latency]", "axes.profile: 'aurora' is not accepted; accepted: ours, monet"),
    ("axes: {memory: [hbm]}\nbenchmarks: [latency]", "axes.memory: 'hbm' is not accepted; accepted: sram, ddr4"),
    ("benchmarks: [{bandwidth: {size: [48]}}]", "benchmarks[0].bandwidth.size: 48 is not accepted; accepted: 8, 16"),
    ("sweeps: [{axes: {lanes: [5]}, benchmarks: [latency]}]", "sweeps[0].axes.lanes: 5 is not accepted"),
    ("sweeps: [{benchmarks: [latency], colour: 1}]", "sweeps[0]: unknown key 'colour'; accepted: axes, benchmarks"),
    ("sweeps: []", "sweeps: expected a list of mappings"),
    ("sweeps: [{benchmarks: [latency]}]\nbenchmarks: [latency]", "either sweeps or axes + benchmarks"),
    ("benchmarks: [streamz]", "unknown benchmark 'streamz'; accepted: latency, bandwidth"),
    ("benchmarks: [{latency: {op: [fetch]}}]", "benchmarks[0].latency.op: 'fetch' is not accepted; accepted: read, write"),
    ("benchmarks: [{bandwidth: {outstanding: [500]}}]", "outstanding: 500 is not accepted; accepted: an integer from 1 to 128"),
    ("benchmarks: [{latency: {depth: [3]}}]", "unknown parameter 'depth'; accepted: op, samples"),
    ("axes: {lanes: [8]}", "benchmarks: expected a list"),
    ("repetitions: 0\nbenchmarks: [latency]", "repetitions: 0 is not accepted"),
    ("sweep: 1\nbenchmarks: [latency]", "unknown key 'sweep'"),
    ("axes: [1, 2", "not valid YAML"),
])
def test_broken_campaign_files_name_key_value_and_accepted(tmp_path, text, message):
    f = tmp_path / "c.yaml"
    f.write_text(text)
    with pytest.raises(CampaignError) as e:
        Campaign(f)
    assert message in str(e.value)
    assert str(f) in str(e.value)


def test_cli_refuses_a_broken_campaign_before_building(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("axes: {lanes: [3]}\nbenchmarks: [latency]")
    r = subprocess.run([sys.executable, "-m", "monet.cli", "campaign", "run", str(f)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "accepted: 1, 2, 4, 8" in r.stderr and "Traceback" not in r.stderr


def test_sweeps_add_up_and_shared_points_run_once(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("sweeps:\n"
                 "  - {axes: {distance_m: [0, 8], profile: [ours, monet]}, benchmarks: [latency]}\n"
                 "  - {axes: {lanes: [1, 8]}, benchmarks: [latency]}\n")
    points = Campaign(f).points()
    # 2 x 2 + 2, less the 8 m / 8 lanes / ours point both sweeps hold.
    assert len(points) == 5 and len({point_key(p) for p in points}) == 5


def test_points_expand_axes_and_benchmarks(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(GOOD + "  - bandwidth: {op: [read, write], pattern: [seq, random]}\nrepetitions: 2\n")
    points = Campaign(f).points()
    assert len(points) == 2 * (1 + 4) * 2
    assert len({point_key(p) for p in points}) == len(points)


def test_store_ignores_a_line_torn_by_a_crash(tmp_path):
    store = ResultsStore(tmp_path)
    store.add({"a": 1}, {"x": 1})
    with open(store.path, "a") as f:
        f.write('{"point": {"a": 2}, "resu')      # killed mid-write
    again = ResultsStore(tmp_path)
    assert again.has({"a": 1}) and not again.has({"a": 2})
    again.add({"a": 2}, {"x": 2})
    assert ResultsStore(tmp_path).has({"a": 2})


def _lines(path):
    return [l for l in path.read_text().splitlines() if l.strip()] if path.exists() else []


def test_a_killed_campaign_resumes_without_repeating_or_losing_points(sim_build, tmp_path):
    f = tmp_path / "resume.yaml"
    f.write_text("name: resume\naxes: {distance_m: [0, 4, 8, 12, 16, 20, 24, 28], lanes: [8], rate_gbps: [15]}\n"
                 "benchmarks:\n  - latency: {op: [read], samples: [400]}\n")
    total = len(Campaign(f).points())
    results = tmp_path / "results"
    cmd = [sys.executable, "-m", "monet.cli", "campaign", "run", str(f), "--results", str(results)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 300
    while len(_lines(results / "results.jsonl")) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = len(_lines(results / "results.jsonl"))
    assert 2 <= finished < total, "the kill must land mid-run"

    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"{finished} skipped" in rerun.stdout
    records = [json.loads(l) for l in _lines(results / "results.jsonl")]
    keys = [point_key(r["point"]) for r in records]
    assert len(keys) == len(set(keys)) == total
    manifest = json.loads((results / "manifest.json").read_text())
    assert manifest["gateware_hash"] == sim_build.hash and manifest["points"] == total

    md, html_path = make_report(results)
    text = md.read_text()
    assert "Eq. 1" in text and "Beside the paper" in text and "526.60" in text
    # Every measured point is a row of the latency table, with the figures the results store holds.
    for r in records:
        lat = r["result"]["latency_ns"]
        row = (f"| ours | sram | read | {r['point']['distance_m']} | 8 | 15 | {lat['mean']:.1f} | {lat['p50']:.1f} "
               f"| {lat['p99']:.1f} | {r['result']['breakdown']['remat_link_logic_cycles']} |")
        assert row in text, row
    assert (results / "latency_distance.png").stat().st_size > 10_000
    assert "<img src='latency_distance.png'" in html_path.read_text()
