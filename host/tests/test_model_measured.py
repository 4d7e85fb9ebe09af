"""What the models take from a results store (host/monet/model/measured.py) and how the topology and FMU
models use it: a store laid out by hand, so each figure is known."""

import json
import subprocess
import sys

import pytest

from monet.model import ModelInputError, fmu, measured, topology


def latency(distance, mean, op="read", profile="ours", placement="remote", rep=0):
    return {"point": {"benchmark": "latency", "op": op, "distance_m": distance, "lanes": 8, "rate_gbps": 15.0,
                      "profile": profile, "memory": "ddr4", "placement": placement, "target": "sim", "rep": rep},
            "result": {"latency_ns": {"mean": mean}}}


def bandwidth(gbps, lanes=8, profile="ours", placement="remote"):
    return {"point": {"benchmark": "bandwidth", "op": "read", "distance_m": 8, "lanes": lanes, "rate_gbps": 15.0,
                      "profile": profile, "memory": "ddr4", "placement": placement, "target": "sim", "rep": 0},
            "result": {"bandwidth_GBps": gbps}}


def pool(aggregate, profile="ours"):
    return {"point": {"benchmark": "pool", "requesters": 4, "distance_m": 8, "lanes": 8, "rate_gbps": 15.0,
                      "profile": profile, "memory": "ddr4", "placement": "remote", "target": "sim", "rep": 0},
            "result": {"together": {"aggregate_GBps": aggregate}}}


def other(benchmark, result):
    """Another benchmark's point whose result has figures of the same names."""
    return {"point": {"benchmark": benchmark, "distance_m": 8, "lanes": 8, "rate_gbps": 15.0, "profile": "ours",
                      "memory": "ddr4", "placement": "remote", "target": "sim", "rep": 0}, "result": result}


# Reads on 300 + 5 d ns, writes on 400 + 7 d; the monet profile and local memory are not our link.
STORE = [latency(0, 300.0), latency(8, 340.0), latency(36, 480.0), latency(8, 900.0, profile="monet"),
         latency(0, 400.0, op="write"), latency(36, 652.0, op="write"),
         latency(36, 1500.0, profile="monet"), latency(8, 100.0, placement="local"), bandwidth(3.4, lanes=2),
         bandwidth(12.0), bandwidth(20.0, profile="monet"), bandwidth(30.0, placement="local"), pool(9.5),
         pool(10.25), pool(40.0, profile="monet"),
         other("stream", {"bandwidth_GBps": 50.0, "together": {"aggregate_GBps": 50.0}})]


def test_our_link_figures():
    assert measured.ns_per_m(STORE, "k") == pytest.approx(6.0)
    assert measured.read_latency_ns(STORE, "k") == 340.0
    assert measured.read_latency_ns(STORE, "k", distance_m=30) == 480.0
    assert measured.best_bandwidth_point(STORE, "k")["result"]["bandwidth_GBps"] == 12.0
    assert measured.pooled_memory_GBps(STORE, "k") == 10.25


def test_a_stored_store_averages_the_repetitions_at_the_nearest_distance():
    """Read back from JSON as `monet campaign` stores it (no string or float is the model's own object), with
    two repetitions at a fractional distance: their mean, not one of them."""
    store = json.loads(json.dumps(STORE + [latency(2.5, 311.0), latency(2.5, 312.0, rep=1)]))
    assert measured.read_latency_ns(store, "k", distance_m=3) == 311.5
    assert measured.read_latency_ns(store, "k") == 340.0
    assert measured.best_bandwidth_point(store, "k")["result"]["bandwidth_GBps"] == 12.0


def test_the_topology_takes_a_channel_and_a_metre_from_the_store():
    config, taken = topology.with_measured({"physics": {"fibre_ns_per_m": "measured", "link_GBps": "measured"}},
                                           STORE)
    assert taken == {"fibre_ns_per_m": pytest.approx(6.0), "link_GBps": 1.5}
    assert config["physics"] == taken


def test_the_topology_takes_a_pooled_memory_cards_aggregate_and_serves_circuits_on_that_many_channels():
    taken = {"memory_card_GBps": 10.25}
    config = {"physics": {"memory_card_GBps": "measured"}}
    assert topology.with_measured(config, STORE)[1] == taken == {"memory_card_GBps": 10.25}
    result = topology.run({**config, "topology": {"cards_per_tray": 8, "trays": 2}, "power_vs_cards": [],
                           "workload": {"requests": 40, "repeats": 1}}, records=STORE)
    assert result["measured_from_results"] == taken and result["memory_card_channels"] == 5   # 10.25 / 1.875
    assert "a memory card serves 10.25 GB/s: circuits on 5 of its 8 channels at most" in topology.summary(result)


def test_the_fmu_takes_bandwidth_and_a_read():
    p = fmu.parameters_from({"fmu": {"bandwidth_GBps": "measured", "ocm_latency_ns": "measured"}}, STORE)["parameters"]
    assert p.fmu_bandwidth_Bps == pytest.approx(12e9) and p.ocm_latency_s == pytest.approx(340e-9)


@pytest.mark.parametrize("call,named", [
    (lambda: measured.ns_per_m(None, "physics.fibre_ns_per_m"), "physics.fibre_ns_per_m: 'measured' needs a results"),
    (lambda: measured.ns_per_m([latency(8, 340.0)], "physics.fibre_ns_per_m"), "latency series over two"),
    (lambda: measured.read_latency_ns([bandwidth(1.0)], "fmu.ocm_latency_ns"), "no remote read latency point"),
    (lambda: measured.best_bandwidth_point([latency(8, 1.0)], "physics.link_GBps"), "no remote bandwidth point"),
    (lambda: measured.pooled_memory_GBps([bandwidth(1.0), pool(9.0, profile="monet")], "physics.memory_card_GBps"),
     "physics.memory_card_GBps: 'measured' found no pooled memory card's aggregate .* campaigns/pooling.yaml"),
])
def test_a_store_without_the_figure_is_named(call, named):
    with pytest.raises(ModelInputError, match=named):
        call()


SMALL = "topology: {cards_per_tray: 8, trays: 2}\nworkload: {requests: 40, repeats: 1}\npower_vs_cards: []\n"


@pytest.mark.parametrize("physics, taken", [("physics: {memory_card_GBps: measured}\n", {"memory_card_GBps": 10.25}),
                                            ("", {})])
def test_the_command_takes_what_the_input_asks_from_the_store_and_says_when_it_asks_nothing(tmp_path, physics, taken):
    results = tmp_path / "campaign"
    results.mkdir()
    (results / "results.jsonl").write_text("\n".join(json.dumps(r) for r in STORE) + "\n")
    (tmp_path / "in.yaml").write_text(SMALL + physics)
    r = subprocess.run([sys.executable, "-m", "monet.cli", "model", "topology", str(tmp_path / "in.yaml"), "--from",
                        str(results), "--results", str(tmp_path / "model")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "model" / "model-topology.json").read_text())["measured_from_results"] == taken
    assert ("set no key to 'measured', so nothing was taken" in r.stderr) == (not taken)
    assert ("a memory card serves 10.25 GB/s" in r.stdout) == bool(taken)
