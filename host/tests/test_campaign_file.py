"""Campaign files: broken ones are refused with the key, value and what is accepted; axes, benchmarks and
sweeps expand to their points; every shipped campaign loads; the results store survives a torn line."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from monet.campaign.plan import (Campaign, CampaignError, Progress, ResultsStore, point_id, point_key,
                                 write_manifest)
from monet.repo import git_revision

CAMPAIGNS = Path(__file__).resolve().parents[2] / "campaigns"

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
    ("benchmarks: [{bandwidth: {outstanding: [600]}}]", "outstanding: 600 is not accepted; accepted: an integer from 1 to 512"),
    ("benchmarks: [{latency: {depth: [3]}}]", "unknown parameter 'depth'; accepted: op, samples"),
    ("axes: {lanes: [8]}", "benchmarks: expected a list"),
    ("repetitions: 0\nbenchmarks: [latency]", "repetitions: 0 is not accepted"),
    ("repetitions: 1001\nbenchmarks: [latency]", "repetitions: 1001 is not accepted; accepted: an integer from 1 to 1000"),
    ("repetitions: 2.5\nbenchmarks: [latency]", "repetitions: 2.5 is not accepted"),
    ("sweep: 1\nbenchmarks: [latency]", "unknown key 'sweep'"),
    ("axes: [1, 2", "not valid YAML"),
    ("benchmarks: [{perf: {n: [999]}}]",
     "benchmarks[0].perf.n: 999 is not accepted; accepted: an integer from 1000 to 1e+09"),
    ("benchmarks: [{perf: {n: [1000000001]}}]", "perf.n: 1000000001 is not accepted"),
    ("benchmarks: [{perf: {n: [2000.5]}}]", "perf.n: 2000.5 is not accepted"),
    ("benchmarks: [{stream: {reps: [1]}}]", "stream.reps: 1 is not accepted; accepted: an integer from 2 to 1000"),
    ("benchmarks: [{bandwidth: {count: [0]}}]", "bandwidth.count: 0 is not accepted; accepted: an integer from 1"),
    ("axes: {target: [qemu]}\nbenchmarks: [{ycsb: {operations: [100000001]}}]",
     "ycsb.operations: 100000001 is not accepted; accepted: an integer from 1 to 1e+08"),
    ("benchmarks: [{latency: {}, bandwidth: {}}]", "benchmarks[0]: expected one benchmark name with its parameters"),
    ("benchmarks: [[latency]]", "benchmarks[0]: expected one benchmark name with its parameters"),
    ("benchmarks: [{}]", "benchmarks[0]: expected one benchmark name with its parameters"),
    ("axes: {memory: [hmc]}\nbenchmarks: [{bandwidth: {pbb_port: [hmc], size: [128]}}]",    # refused before a build
     "placement=remote-hmc_native=0-target=sim-op=read-pattern=seq-size=128-outstanding=512-count=20000-pbb_port=hmc-"
     "r0: pbb_port hmc with placement remote is not accepted"),
])
def test_broken_campaign_files_name_key_value_and_accepted(tmp_path, text, message):
    f = tmp_path / "c.yaml"
    f.write_text(text)
    with pytest.raises(CampaignError) as e:
        Campaign(f)
    assert message in str(e.value)
    assert str(f) in str(e.value)


def test_a_campaign_file_that_cannot_be_read_is_named(tmp_path):
    for path, reason in ((tmp_path / "none.yaml", "No such file or directory"), (tmp_path, "Is a directory")):
        with pytest.raises(CampaignError) as e:
            Campaign(path)
        assert str(e.value) == f"{path}: cannot read the campaign file ({reason})"


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


# Points each shipped campaign expands to, counted from its file by hand (axes product x benchmark
# parameter product x repetitions, shared points of sweeps once).
SHIPPED = {"baseline.yaml": 432, "ber.yaml": 28, "board.yaml": 5, "default.yaml": 75, "faults.yaml": 40,
           "hmc-native.yaml": 36, "linux.yaml": 8, "pooling.yaml": 12, "quick.yaml": 16, "stream.yaml": 16,
           "t1.yaml": 53, "table2.yaml": 12}


def test_every_shipped_campaign_loads_and_expands_to_its_points():
    assert sorted(p.name for p in CAMPAIGNS.glob("*.yaml")) == sorted(SHIPPED)
    for name, count in SHIPPED.items():
        points = Campaign(CAMPAIGNS / name).points()
        assert len(points) == count, name
        assert len({point_key(p) for p in points}) == count, name


def test_range_ends_are_accepted_and_defaults_fill_the_rest(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("axes: {target: [qemu]}\nbenchmarks: [{perf: {n: [1000, 1000000000]}}, stream]")
    points = Campaign(f).points()
    perf = sorted(p["n"] for p in points if p["benchmark"] == "perf")
    assert perf == [1000, 1000, 10**9, 10**9]                   # each on nodes 0 and 1
    stream = [p for p in points if p["benchmark"] == "stream"]
    assert sorted(p["node"] for p in stream) == [0, 1] and {(p["n"], p["reps"]) for p in stream} == {(4096, 3)}
    f.write_text("axes: {target: [qemu]}\nbenchmarks: [{ycsb: {operations: [1, 100000000], workload: [a]}}, ycsb]")
    ycsb = Campaign(f).points()
    # The README's defaults: workloads A, B, C, F on node 1, 10 000 operations, 4 threads.
    assert sorted((p["workload"], p["operations"]) for p in ycsb) == [
        ("a", 1), ("a", 10000), ("a", 100000000), ("b", 10000), ("c", 10000), ("f", 10000)]
    assert {(p["node"], p["threads"]) for p in ycsb} == {(1, 4)}
    f.write_text("benchmarks: [{bandwidth: {count: [1, 2147483648]}}]")
    assert sorted(p["count"] for p in Campaign(f).points()) == [1, 2**31]


def test_point_ids_read_as_the_point():
    point = {"benchmark": "latency", "distance_m": 8.0, "lanes": 8, "rate_gbps": 12.5, "profile": "ours",
             "op": "read", "rep": 1}
    assert point_id(point) == "latency-distance_m=8-lanes=8-rate_gbps=12.5-profile=ours-op=read-r1"


def test_progress_line_counts_points_and_time_left(tmp_path, capfd):
    store = ResultsStore(tmp_path)
    store.total = 4
    store.add({"a": 1}, {"x": 1})
    progress = Progress(store, width=20)
    progress.start -= 60.5                        # one point in 60.5 s so far: 3 more take 181.5 s
    progress.point_done({"benchmark": "latency", "distance_m": 0, "rep": 0}, where="gw1")
    line = capfd.readouterr().err
    assert line.startswith("\r[#####...............] 1/4 points, 1.0/min, 182 s left  latency-distance_m=0-r0 (gw1)")


def test_progress_bar_fills_with_the_share_done_and_the_rate_is_per_minute(tmp_path, capfd):
    store = ResultsStore(tmp_path)
    store.total = 4
    store.add({"a": 1}, {"x": 1})
    store.add({"a": 2}, {"x": 1})
    progress = Progress(store, width=20)
    progress.start -= 6.05                        # one point of this run in 6.05 s: 9.9 a minute
    progress.point_done({"benchmark": "latency", "distance_m": 0, "rep": 0})
    assert capfd.readouterr().err.startswith("\r[##########..........] 2/4 points, 9.9/min, 12 s left  ")


def test_a_progress_line_in_the_same_instant_says_no_rate_and_no_time_left(tmp_path, capfd, monkeypatch):
    import monet.campaign.plan
    store = ResultsStore(tmp_path)
    store.total = 2
    monkeypatch.setattr(monet.campaign.plan.time, "time", lambda: 1000.0)   # no time passes: no rate yet
    Progress(store, width=10).point_done({"benchmark": "latency", "distance_m": 0, "rep": 0})
    assert capfd.readouterr().err.startswith("\r[..........] 0/2 points, 0.0/min, 0 s left  ")


def test_a_failed_point_is_one_line_and_its_whole_message_is_kept(tmp_path):
    store = ResultsStore(tmp_path)
    point = {"benchmark": "latency", "distance_m": 8, "rep": 0}
    line = store.failed(point, "SimError", "sim: Vsim ended\nits last output:\n...")
    assert line == (f"point latency-distance_m=8-r0 (latency) failed: SimError: sim: Vsim ended (whole message in "
                    f"{tmp_path / 'failures.log'})")
    assert store.failed(point, "KeyError", "'samples'") == "point latency-distance_m=8-r0 (latency) failed: KeyError: " \
        "'samples'"
    log = (tmp_path / "failures.log").read_text().splitlines()
    assert log[0].endswith("point latency-distance_m=8-r0: SimError: sim: Vsim ended") and log[1:3] == [
        "its last output:", "..."] and log[3].endswith("KeyError: 'samples'")
    assert not store.has(point) and not (tmp_path / "results.jsonl").exists()


def test_a_thousand_repetitions_are_accepted(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(GOOD + "repetitions: 1000\n")
    assert len(Campaign(f).points()) == 2 * 1000


def test_a_point_is_the_same_point_whatever_order_its_keys_come_in(tmp_path):
    ResultsStore(tmp_path).add({"benchmark": "latency", "distance_m": 8, "rep": 0}, {"x": 1})
    assert ResultsStore(tmp_path).has({"rep": 0, "distance_m": 8, "benchmark": "latency"})


def test_git_revision_of_the_checkout_and_of_no_repository(tmp_path):
    rev = git_revision(CAMPAIGNS.parent)
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", rev)
    assert git_revision(tmp_path) is None


def test_a_checkout_git_cannot_read_has_no_revision(tmp_path):
    """A corrupt index: `git rev-parse` still names HEAD but `git status` fails, so whether the tree is dirty is
    unknown; the revision is not recorded as clean."""
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "f").write_text("a")
    subprocess.run(git + ["add", "f"], cwd=tmp_path, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "f"], cwd=tmp_path, check=True)
    assert re.fullmatch(r"[0-9a-f]{40}", git_revision(tmp_path))
    (tmp_path / ".git" / "index").write_bytes(b"not an index" * 10)
    assert git_revision(tmp_path) is None


def test_a_changed_tracked_file_marks_the_revision_dirty(tmp_path):
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "f").write_text("a")
    subprocess.run(git + ["add", "f"], cwd=tmp_path, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "f"], cwd=tmp_path, check=True)
    clean = git_revision(tmp_path)
    (tmp_path / "untracked").write_text("u")
    assert git_revision(tmp_path) == clean
    (tmp_path / "f").write_text("b")
    assert git_revision(tmp_path) == clean + "-dirty"


def test_a_repository_without_a_commit_has_no_revision(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    assert git_revision(tmp_path) is None


def test_a_manifest_without_a_build_records_the_campaign_and_no_gateware(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(GOOD)
    store = ResultsStore(tmp_path / "r")
    manifest = write_manifest(store, Campaign(f))
    assert manifest["campaign"] == "t" and manifest["points"] == 2 and "sim_models" not in manifest
    # The campaign's SHA-256 as `sha256sum` prints it, cut to 16 hex digits.
    full = subprocess.run(["sha256sum", str(f)], capture_output=True, text=True, check=True).stdout.split()[0]
    assert manifest["campaign_sha256"] == full[:16]
    assert json.loads((tmp_path / "r" / "manifest.json").read_text()) == manifest


def test_a_manifest_with_builds_records_each_models_hashes_and_the_largest_ones_hardware(tmp_path):
    """Builds as the sim's SimBuild gives them to the manifest, by model: each one's hashes and memories,
    csr.json's constants of the largest one-requester model (the config_ ones left out; not the pooled one's),
    the on-card memory in MiB in the topology line; and the model each stored point ran on."""
    from types import SimpleNamespace
    f = tmp_path / "c.yaml"
    f.write_text(GOOD)
    builds = {"sram": SimpleNamespace(hash="65bd", firmware_hash="f1e2", constants={"memcard_size": 4 << 20}),
              "ddr4": SimpleNamespace(hash="77aa", firmware_hash="f3e4", constants={
                  "memcard_size": 2 << 20, "remote_tags": 64, "config_cpu_type": "vexriscv"}),
              "pooled": SimpleNamespace(hash="99bb", firmware_hash="f5e6", constants={"memcard_size": 8 << 20})}
    store = ResultsStore(tmp_path / "r")
    point = Campaign(f).points()[0]
    store.add(point, {"model": "ddr4"})
    manifest = write_manifest(store, Campaign(f), builds=builds)
    assert manifest["sim_models"] == {
        "sram": {"gateware_hash": "65bd", "firmware_hash": "f1e2", "with_ddr4": False, "with_hmc": False},
        "ddr4": {"gateware_hash": "77aa", "firmware_hash": "f3e4", "with_ddr4": True, "with_hmc": False},
        "pooled": {"gateware_hash": "99bb", "firmware_hash": "f5e6", "with_ddr4": True, "with_hmc": False,
                   "requesters": 4}}
    assert manifest["hardware"] == {"memcard_size": 2 << 20, "remote_tags": 64}
    assert manifest["topology"].endswith("memory card (2 MiB on-card memory)")
    assert manifest["served_by"] == {point_id(point): "ddr4"}


def test_a_read_mix_belongs_to_mixed_points_only(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(GOOD + "  - bandwidth: {op: [read, mixed], read_percent: [30, 53]}\n")
    points = [p for p in Campaign(f).points() if p["benchmark"] == "bandwidth"]
    # At each distance the read's point once, without a mix; the mixed one at each mix.
    assert [(p["op"], p.get("read_percent")) for p in points] == [("read", None), ("mixed", 30), ("mixed", 53)] * 2
