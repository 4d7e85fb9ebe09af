"""host/monet/reliability.py: BER confidence bounds, the replay model and the retry window."""

import pytest

from monet import reliability


def test_poisson_bounds_match_the_tables():
    low, high = reliability.ber_bounds(1e6, 0)
    assert low == 0 and high * 1e6 == pytest.approx(3.689, abs=1e-3)    # -ln(0.025)
    low, high = reliability.ber_bounds(1e6, 10)
    assert low * 1e6 == pytest.approx(4.795, abs=1e-3) and high * 1e6 == pytest.approx(18.39, abs=1e-2)
    low, high = reliability.ber_bounds(1e9, 4000)                         # normal approximation
    assert low < 4e-6 < high and (high - low) / 4e-6 == pytest.approx(2 * 1.96 / 4000**0.5, rel=1e-3)


def test_replay_model_loses_more_with_more_errors_and_a_slow_retransmission():
    effs = [reliability.replay_model(ber, "ours", 36, 8, 15.0, 13.5)["predicted_efficiency"]
            for ber in (1e-12, 1e-9, 1e-6, 1e-5)]
    assert effs == sorted(effs, reverse=True)
    assert effs[1] > 0.9999 and 0.8 < effs[2] < 1
    monet = reliability.replay_model(1e-6, "monet", 36, 8, 15.0, 7.9)["predicted_efficiency"]
    assert monet < effs[2]


def test_retry_window_grows_with_distance_and_fits_the_buffer():
    near = reliability.retry_window("ours", 8, 8, 15.0)
    far = reliability.retry_window("ours", 100, 8, 15.0)
    assert near["needed"] < far["needed"] and far["fits"]
