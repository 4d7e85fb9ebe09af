"""The pooled model's host side (monet.benchmarks.pool; the model itself runs in the long tier): Jain's index,
each share against its weight, the weights' parameter, what a pool point refuses, and that a campaign puts the
pool benchmark's points on the pooled model and nobody else's."""

import pytest

from monet.benchmarks import REGISTRY
from monet.benchmarks.pool import jain_index, latency_shift, parse_weights, weight_errors
from monet.campaign.plan import plan_models, point_key
from monet.sim import POOLED_MODELS


def test_jain_s_index_is_one_for_equals_and_one_over_n_for_one_taking_all():
    assert jain_index([5, 5, 5, 5]) == 1
    assert jain_index([8, 0, 0, 0]) == 0.25
    assert jain_index([3, 1]) == pytest.approx(16 / 20)
    assert jain_index([0, 0]) is None


def test_a_share_is_held_against_its_weight_s_share():
    assert weight_errors([400, 200, 100, 100], [4, 2, 1, 1]) == [0, 0, 0, 0]
    errors = weight_errors([420, 180, 100, 100], [4, 2, 1, 1])
    assert errors[0] == pytest.approx(0.05) and errors[1] == pytest.approx(-0.1) and errors[2] == 0


@pytest.mark.parametrize("text, weights", [("1:1", [1, 1]), ("4:2:1:1", [4, 2, 1, 1]), ("15:1:1", [15, 1, 1])])
def test_weights_are_one_a_requester_of_1_to_15(text, weights):
    assert parse_weights(text) == weights
    assert REGISTRY["pool"].param["weights"].check(text)


@pytest.mark.parametrize("text", ["4", "1:1:1:1:1", "0:1", "16:1", "a:b", "1.5:1"])
def test_other_weights_are_refused(text):
    param = REGISTRY["pool"].param["weights"]
    assert not param.check(text)
    with pytest.raises(Exception, match="accepted: weights a:b:.. of 1..15, one a requester"):
        param.parse(text)


def test_a_pool_point_needs_one_weight_a_requester_and_a_remote_memory():
    pool = REGISTRY["pool"]
    point = pool.full_point({"memory": "ddr4", "placement": "remote", "requesters": 3, "weights": "1:1:1"})
    assert pool.refuse_point(point) is None
    assert "name 2 requesters, not 3" in pool.refuse_point({**point, "weights": "1:1"})
    assert "memory sram or ddr4, placement remote" in pool.refuse_point({**point, "memory": "hmc"})
    assert "memory sram or ddr4, placement remote" in pool.refuse_point({**point, "placement": "local"})


def test_the_latency_histogram_covers_the_worst_expected():
    assert latency_shift(63) == 0 and latency_shift(64) == 1 and latency_shift(8 * 96) == 4


def test_a_campaign_puts_pool_points_on_the_pooled_model_only():
    """Whatever the campaign would choose for the others, or a --model given for them."""
    pool = {"benchmark": "pool", "target": "sim", "memory": "ddr4", "requesters": 4, "rep": 0}
    latency = {"benchmark": "latency", "target": "sim", "memory": "ddr4", "rep": 0}
    for model in (None, "full", "ddr4"):
        plan = plan_models([pool, latency], model, log=lambda _: None)
        assert plan[point_key(pool)] == "pooled" and plan[point_key(latency)] in ("ddr4", "full")
    assert list(POOLED_MODELS) == ["pooled"] and REGISTRY["pool"].sim_model == "pooled"
