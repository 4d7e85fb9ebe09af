"""Which sim model a campaign's points run on (monet.campaign.plan.plan_models): the smallest that holds a point's
memory where the points together repay a build, else one the campaign uses anyway or the full model; `--model`
puts them all on one, and is refused where it lacks a point's memory, before anything is built."""

import subprocess
import sys

import pytest

from monet.campaign import plan as campaign_module
from monet.campaign.plan import Campaign, CampaignError, plan_models, point_cost, point_key


def points_of(tmp_path, memories, target="sim", long=()):
    """A latency read point on each memory; a write point too on those in `long` (their group costs more)."""
    f = tmp_path / "c.yaml"
    sweeps = "".join(f"  - axes: {{memory: [{m}], rate_gbps: [15], target: [{target}]}}\n"
                     f"    benchmarks: [{{latency: {{op: [read{', write' if m in long else ''}]}}}}]\n"
                     for m in memories)
    f.write_text(f"name: t\nsweeps:\n{sweeps}")
    return Campaign(f).points()


def served(plan, points):
    """{memory: the models its points run on}."""
    out = {}
    for p in points:
        out.setdefault(p["memory"], set()).add(plan[point_key(p)])
    return out


def test_a_short_campaign_runs_on_the_full_model(tmp_path):
    points = points_of(tmp_path, ["sram", "ddr4"])
    assert set(plan_models(points).values()) == {"full"}


def test_long_groups_get_their_smallest_model(tmp_path, monkeypatch):
    monkeypatch.setattr(campaign_module, "SPLIT_CYCLES", 1)
    points = points_of(tmp_path, ["sram", "ddr4", "hmc"])
    assert served(plan_models(points), points) == {"sram": {"sram"}, "ddr4": {"ddr4"}, "hmc": {"hmc"}}


@pytest.mark.parametrize("short, long, home", [
    ("sram", "ddr4", "ddr4"),       # the short group joins the long one's model, which holds its memory
    ("sram", "hmc", "hmc"),
    ("ddr4", "hmc", "full"),        # no model of the plan holds DDR4 but the full one
])
def test_a_short_group_joins_a_model_of_the_plan_that_holds_its_memory(tmp_path, monkeypatch, short, long, home):
    points = points_of(tmp_path, [short, long], long=[long])
    cost = {m: sum(point_cost(p) for p in points if p["memory"] == m) for m in (short, long)}
    # The long group's cost is at the limit, the short one's below it.
    monkeypatch.setattr(campaign_module, "SPLIT_CYCLES", cost[long])
    assert cost[short] < cost[long]
    assert served(plan_models(points), points) == {short: {home}, long: {long}}


def test_only_sim_points_get_a_model(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("name: t\naxes: {target: [sim, qemu]}\nbenchmarks: [{stream: {node: [1]}}]\n")
    points = Campaign(f).points()
    assert {p["target"] for p in points} == {"sim", "qemu"}
    assert plan_models(points) == {point_key(p): "full" for p in points if p["target"] == "sim"}


def test_a_chosen_model_serves_every_point_or_is_refused_naming_those_that_would(tmp_path):
    points = points_of(tmp_path, ["sram", "hmc"])
    assert set(plan_models(points, model="hmc").values()) == {"hmc"}
    with pytest.raises(CampaignError, match=r"model 'ddr4' holds no hmc memory, which point latency-.*memory=hmc"
                                            r".* uses; accepted: hmc, full \(or no model: the campaign picks\)"):
        plan_models(points, model="ddr4")


def test_the_cli_refuses_a_model_without_a_points_memory_before_building(tmp_path):
    points_of(tmp_path, ["hmc"])
    r = subprocess.run([sys.executable, "-m", "monet.cli", "campaign", "run", str(tmp_path / "c.yaml"), "--model",
                        "sram", "--results", str(tmp_path / "r")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "monet: " in r.stderr and "model 'sram' holds no hmc memory" in r.stderr
    assert not (tmp_path / "r").exists()
