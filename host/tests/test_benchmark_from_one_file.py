"""A benchmark added from one file outside the package (MONET_BENCHMARKS) is found by every part: the CLI (its
options, its run, its verdict), a campaign's validation, its points in pytest and on Dask workers, and the
report."""

import json
import os
import subprocess
import sys

import pytest

ECHO = '''
from monet.benchmarks import Benchmark, Param, Verdict, register
from monet.sim import link_setup


@register
class Echo(Benchmark):
    """Echoes a number through the sim: a benchmark from one file."""

    order = 1000
    axes = ("lanes",)
    params = (Param("value", "a number to echo", low=0, high=9, integer=True, default=3),)
    smallest = {"value": [1]}

    def run(self, target, point, log=None):
        configured = link_setup.configure_link(target, self.link(point))
        return {"value": point["value"], "lanes": configured["lanes"]}

    def verdicts(self, point, result):
        return [Verdict("echoed", result["value"] == point["value"], gates=True)]

    def show(self, point, result):
        print(f"echo {result['value']} over {result['lanes']} lanes")

    def sections(self, records, out):
        rows = [[r["point"]["value"], r["result"]["lanes"]] for r in records if r["point"]["benchmark"] == "echo"]
        return [("Echo from one file", ["value", "lanes"], sorted(rows, key=lambda row: row[1]), None,
                 "A benchmark outside the package.")] if rows else []
'''


@pytest.fixture
def echo(tmp_path):
    path = tmp_path / "echo.py"
    path.write_text(ECHO)
    return {**os.environ, "MONET_BENCHMARKS": str(path)}


def monet(env, *words, timeout=600):
    return subprocess.run([sys.executable, "-m", "monet.cli", *words], capture_output=True, text=True, env=env,
                          timeout=timeout)


def campaign(tmp_path, name, values, lanes):
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"name: {name}\naxes: {{lanes: {lanes}}}\nbenchmarks:\n  - echo: {{value: {values}}}\n")
    return path


def test_the_command_line_and_a_campaign_file_know_it(echo, tmp_path):
    assert "echo" in monet(echo, "bench", "--help").stdout
    assert "--value" in monet(echo, "bench", "echo", "--help").stdout
    refused = monet(echo, "bench", "echo", "--value", "12")
    assert refused.returncode == 2 and "value '12' is not accepted; accepted: an integer from 0 to 9" in refused.stderr
    bad = monet(echo, "campaign", "run", str(campaign(tmp_path, "bad", [12], [8])), "--results", str(tmp_path / "r"))
    assert bad.returncode == 2 and "echo.value: 12 is not accepted; accepted: an integer from 0 to 9" in bad.stderr
    assert "echo" not in monet(os.environ, "bench", "--help").stdout      # only where it is named
    missing = monet({**echo, "MONET_BENCHMARKS": str(tmp_path / "none.py")}, "--help")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert f"MONET_BENCHMARKS: {tmp_path / 'none.py'} is not a Python file; accepted: paths of .py files" \
        in missing.stderr


@pytest.mark.sim
def test_it_runs_from_the_command_line_in_pytest_on_workers_and_reaches_the_report(echo, sim_build, tmp_path):
    run = monet(echo, "bench", "echo", "--value", "7", "--lanes", "4")
    assert run.returncode == 0, run.stderr
    assert "echo 7 over 4 lanes" in run.stdout and "echoed" in run.stdout
    for workers, lanes in (("1", [2]), ("2", [4, 8])):     # in pytest, then on two Dask workers
        results = tmp_path / f"results-{workers}"
        done = monet(echo, "campaign", "run", str(campaign(tmp_path, f"echo{workers}", [5], lanes)), "--results",
                     str(results), "--workers", workers, "--report")
        assert done.returncode == 0, done.stdout + done.stderr
        records = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
        assert sorted((r["point"]["lanes"], r["result"]["value"]) for r in records) == [(n, 5) for n in lanes]
        report = (results / "report.md").read_text()
        assert "## Echo from one file" in report
        assert all(f"| 5 | {n} |" in report for n in lanes)
