"""Every registered benchmark through every campaign runner.

The matrix is made from the registry (monet.benchmarks.REGISTRY): each benchmark at its smallest point
(`Benchmark.smallest`) at two distances on its first campaign target, so a benchmark added to the registry
is in it without editing this file. The runners are the ones a user types, from the repository root:
`monet campaign run FILE` (one worker, pytest), `--workers 2` (a Dask LocalCluster of its own) and
`--scheduler ADDRESS` (an existing Dask cluster, here a LocalCluster on loopback). Sim points give the same
figures, point for point, on every runner (each boots a sim of its own). A Linux guest's figures are wall
times: its benchmarks run through the same runners, and what is compared is that every point is stored, on
the image, with its verdicts passing.
"""

import json
import math
import subprocess
import sys

import pytest
import yaml

from monet.benchmarks import DEFAULT_SIM_CYCLES, GUEST_CYCLES, LINUX_TARGETS, REGISTRY, Benchmark
from monet.campaign.plan import Campaign, point_cost, point_key, runs_on
from monet.campaign.workers import connect
from monet.repo import REPO

DISTANCES = [0, 8]
WHERE = ("seconds", "ran_on")              # where and how long a point ran: differs by runner


def matrix_text(benchmarks=REGISTRY, distances=DISTANCES):
    """The campaign file: a sweep per campaign target, each of its benchmarks at its smallest point."""
    sweeps = {}
    for name, bench in benchmarks.items():
        target = runs_on(name)[0]
        axes = {"distance_m": distances, "target": [target]} if target == "sim" else {"target": [target]}
        sweeps.setdefault(target, {"axes": axes, "benchmarks": []})["benchmarks"].append({name: bench.smallest})
    return yaml.safe_dump({"name": "matrix", "sweeps": list(sweeps.values())}, sort_keys=False)


def test_every_benchmark_has_a_smallest_point_and_a_cost(tmp_path):
    """The registry's side of the matrix: a smallest point that the campaign accepts, and a cost estimate of
    its own that is a positive number of cycles (a guest's point the stated GUEST_CYCLES)."""
    f = tmp_path / "matrix.yaml"
    f.write_text(matrix_text())
    points = Campaign(f).points()
    assert {p["benchmark"] for p in points} == set(REGISTRY)
    said = []
    for p in points:
        cycles = point_cost(p, log=said.append)
        assert isinstance(cycles, (int, float)) and 0 < cycles < math.inf, p
        if p["target"] in LINUX_TARGETS:
            assert cycles == GUEST_CYCLES == 10**7        # the stated default (README)
    assert said == [], said
    # A sim point's cost grows with its size: the estimate is the benchmark's, not the default.
    sim = [p for p in points if p["target"] == "sim"]
    assert len({round(point_cost(p)) for p in sim}) > 2
    for p in sim:
        assert REGISTRY[p["benchmark"]].cost(p) == point_cost(p)


def test_a_benchmark_without_an_estimate_costs_the_stated_default():
    class Plain(Benchmark):
        """A benchmark that gives no estimate."""
    assert Plain().cost({"target": "sim"}) == DEFAULT_SIM_CYCLES == 10**6     # the stated default (README)


@pytest.mark.parametrize("cycles", [-5, 0, math.inf, True, "many"])
def test_a_cost_estimate_that_is_no_positive_number_is_one_line_and_the_default(monkeypatch, cycles):
    monkeypatch.setattr(REGISTRY["memtest"], "sim_cycles", lambda point: cycles)
    said = []
    point = {"benchmark": "memtest", "target": "sim", "distance_m": 8, "bytes": 1024, "rep": 0}
    assert point_cost(point, log=said.append) == 10**6
    assert len(said) == 1 and "is not a positive number of cycles" in said[0], said


def test_a_failing_cost_estimate_is_one_line_and_the_default(monkeypatch):
    def broken(point):
        raise KeyError("samples")
    monkeypatch.setattr(REGISTRY["memtest"], "sim_cycles", broken)
    said = []
    point = {"benchmark": "memtest", "target": "sim", "distance_m": 8, "bytes": 1024, "rep": 0}
    assert point_cost(point, log=said.append) == 10**6
    assert len(said) == 1 and "memtest" in said[0] and "KeyError" in said[0], said


def _run(args, results, campaign="matrix.yaml", timeout=900):
    r = subprocess.run([sys.executable, "-m", "monet.cli", "campaign", "run", str(results.parent / campaign),
                        "--results", str(results), *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "cost estimate failed" not in r.stderr, r.stderr
    return _figures(results)


def _figures(results):
    """{point: result without where and how long it ran}."""
    out = {}
    for line in (results / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        out[point_key(record["point"])] = {k: v for k, v in record["result"].items() if k not in WHERE}
    return out


def _sim_benchmarks():
    """The benchmarks that run on the sim's ordinary models: one with a model of its own (the pooled model's
    `pool`, `move` and `spread`, ten minutes to build) runs in the long tier (test_documented_commands)."""
    return {n: b for n, b in REGISTRY.items() if runs_on(n)[0] == "sim" and not b.sim_model}


@pytest.mark.slow
@pytest.mark.sim
def test_every_benchmark_gives_the_same_figures_on_every_runner(sim_build, tmp_path):
    """One worker and `--workers 2` at both distances; an existing cluster (`--scheduler`) at one of them."""
    (tmp_path / "matrix.yaml").write_text(matrix_text(_sim_benchmarks()))
    (tmp_path / "one-distance.yaml").write_text(matrix_text(_sim_benchmarks(), DISTANCES[-1:]))
    points = Campaign(tmp_path / "matrix.yaml").points()
    assert {p["benchmark"] for p in points} == set(_sim_benchmarks())
    assert {p["distance_m"] for p in points} == set(DISTANCES)
    one = _run([], tmp_path / "one")
    assert len(one) == len(points)
    two = _run(["--workers", "2"], tmp_path / "two")
    with connect(workers=2) as client:            # the LocalCluster `--workers 2` makes, here an existing one
        existing = _run(["--scheduler", client.scheduler.address], tmp_path / "existing", "one-distance.yaml")
    assert two.keys() == one.keys()
    assert existing.keys() == {point_key(p) for p in Campaign(tmp_path / "one-distance.yaml").points()} < one.keys()
    for name, other in (("--workers 2", two), ("--scheduler", existing)):
        for key in other:
            assert other[key] == one[key], f"{name}: {key}"
    workers = {json.loads(line)["result"]["ran_on"]["worker"]
               for line in (tmp_path / "two" / "results.jsonl").read_text().splitlines()}
    assert len(workers) == 2, "both workers should have taken points"


@pytest.mark.slow
@pytest.mark.qemu
def test_every_guest_benchmark_runs_on_every_runner(qemu_image, tmp_path):
    """The Linux guest's benchmarks at their smallest: on one worker, on `--workers 2` and on an existing
    cluster of one worker (its guest booted once for every point); every point stored with the image it ran
    on and its verdicts (validation) passing. Their figures are wall times: not compared."""
    guest = {n: b for n, b in REGISTRY.items() if runs_on(n)[0] != "sim"}
    assert guest, "no benchmark runs on a Linux guest first"
    (tmp_path / "matrix.yaml").write_text(matrix_text(guest))
    points = Campaign(tmp_path / "matrix.yaml").points()
    runs = {"one": _run([], tmp_path / "one"), "two": _run(["--workers", "2"], tmp_path / "two")}
    with connect(workers=1) as client:
        runs["existing"] = _run(["--scheduler", client.scheduler.address], tmp_path / "existing")
    for name, results in runs.items():
        assert results.keys() == {point_key(p) for p in points}, name
        for p in points:
            result = results[point_key(p)]
            assert result["image_hash"] == qemu_image.hash, name
            assert all(v.passed is not False for v in REGISTRY[p["benchmark"]].verdicts(p, result)), (name, p)
        assert {k: sorted(v) for k, v in results.items()} == {k: sorted(v) for k, v in runs["one"].items()}, name
