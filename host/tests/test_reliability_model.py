"""host/monet/link/reliability.py: BER confidence bounds, the replay model and the retry window."""

import pytest

from monet.link import reliability


def test_poisson_bounds_match_the_tables():
    low, high = reliability.ber_bounds(1e6, 0)
    assert low == 0 and high * 1e6 == pytest.approx(3.689, abs=1e-3)    # -ln(0.025)
    low, high = reliability.ber_bounds(1e6, 10)
    assert low * 1e6 == pytest.approx(4.795, abs=1e-3) and high * 1e6 == pytest.approx(18.39, abs=1e-2)
    low, high = reliability.ber_bounds(1e9, 4000)                         # normal approximation
    assert low < 4e-6 < high and (high - low) / 4e-6 == pytest.approx(2 * 1.96 / 4000**0.5, rel=1e-3)
    low, high = reliability.ber_bounds(1e9, 4000, confidence=0.99)        # z = 2.5758 for 99 %
    assert (high - low) / 2 * 1e9 == pytest.approx(2.5758 * 4000**0.5, rel=1e-4)
    low, high = reliability.ber_bounds(1e12, 2000, confidence=0.5)        # z = 0.6745 for 50 %, below 1
    assert (high - low) * 1e12 / 2 == pytest.approx(0.6744898 * 2000**0.5, rel=1e-5)
    low, high = reliability.ber_bounds(1e9, 1000)                         # the last exact Poisson interval
    assert 938.5 < low * 1e9 < 939.5 and 1063.0 < high * 1e9 < 1064.0


# Exact (Garwood) 95 % intervals of a Poisson count, as the published tables give them (k = 1..9).
GARWOOD_95 = {1: (0.0253, 5.5716), 2: (0.2422, 7.2247), 3: (0.6187, 8.7673), 4: (1.0899, 10.2416),
              5: (1.6235, 11.6683), 6: (2.2019, 13.0595), 7: (2.8144, 14.4227), 8: (3.4538, 15.7632),
              9: (4.1154, 17.0848)}


@pytest.mark.parametrize("errors", sorted(GARWOOD_95))
def test_few_errors_give_the_garwood_interval(errors):
    low, high = reliability.ber_bounds(1e8, errors)
    assert (low * 1e8, high * 1e8) == pytest.approx(GARWOOD_95[errors], abs=1e-4)


def test_replay_model_loses_more_with_more_errors_and_a_slow_retransmission():
    effs = [reliability.replay_model(ber, "ours", 36, 8, 15.0, 13.5)["predicted_efficiency"]
            for ber in (1e-12, 1e-9, 1e-6, 1e-5)]
    assert effs == sorted(effs, reverse=True)
    assert effs[1] > 0.9999 and 0.8 < effs[2] < 1
    monet = reliability.replay_model(1e-6, "monet", 36, 8, 15.0, 7.9)["predicted_efficiency"]
    assert monet < effs[2]


def test_replay_model_figures_worked_by_hand():
    # ours: two lines share a 17-block unit and eight units a trailer (8.5 + 1/16 blocks a line); the other
    # way, a request block a line, each with its own trailer (2): 10.5625 blocks of 66 bits a line.
    assert reliability.blocks_per_line("ours") == 10.5625
    # 36 m at 15 Gb/s: 28 cycles each way (109.17 ns, rounded up); a damaged 73-block frame costs the round
    # trip, its 11 cycles and 19 of logic: 86 cycles, 344 ns.
    m = reliability.replay_model(1e-6, "ours", 36, 8, 15.0, 13.5)
    assert m["time_lost_per_error_ns"] == 344.0
    # 13.5 GB/s is 210.94 M lines/s, 697.125 line bits a line: 147050 errors/s at 1e-6, each losing 344 ns.
    assert m["errors_per_s"] == pytest.approx(147049.8046875, rel=1e-9)
    assert m["bytes_replayed_per_error"] == pytest.approx(13.5 * 344)
    assert m["time_lost_per_time_sending"] == pytest.approx(0.0505851328125, rel=1e-12)    # 147049.80 x 344 ns
    assert m["predicted_efficiency"] == pytest.approx(1 / 1.0505851328125, rel=1e-12)
    # monet: a line a unit (9 blocks) and a trailer each, a request and a trailer back: 12 blocks a line;
    # no nak, so an error costs the 65535-cycle timer and the 3-cycle frame: 262152 ns.
    assert reliability.blocks_per_line("monet") == 12.0
    slow = reliability.replay_model(1e-6, "monet", 36, 8, 15.0, 7.9)
    assert slow["time_lost_per_error_ns"] == 262152.0 and slow["errors_per_s"] == pytest.approx(97762.5)
    assert slow["predicted_efficiency"] == pytest.approx(1 / (1 + 97762.5 * 262152e-9), rel=1e-9)
    assert reliability.replay_model(1e-6, "ours", 36, 8, 15.0, 0.0)["predicted_efficiency"] == 1.0


def test_selective_repeat_loses_one_frame_an_error():
    # The damaged 73-block frame's 11 cycles (44 ns), not the 344 ns of go-back-N's round trip.
    sr = reliability.replay_model(1e-6, "ours", 36, 8, 15.0, 13.5, replay="sr")
    assert sr["time_lost_per_error_ns"] == 44.0
    assert sr["errors_per_s"] == reliability.replay_model(1e-6, "ours", 36, 8, 15.0, 13.5)["errors_per_s"]
    assert sr["predicted_efficiency"] == pytest.approx(1 / (1 + 147049.8046875 * 44e-9), rel=1e-12)
    # The distance drops out: 100 m loses what 36 m does.
    assert reliability.replay_model(1e-5, "ours", 100, 8, 15.0, 13.5, replay="sr")["predicted_efficiency"] == \
        reliability.replay_model(1e-5, "ours", 36, 8, 15.0, 13.5, replay="sr")["predicted_efficiency"]


def test_retry_window_is_the_bandwidth_over_the_ack_loop():
    # The sim SoC's ReMAT tags and retry depth (its csr.json's remote_tags and link_retry_depth).
    held = dict(tags=256, depth=256)
    # 8 m at 15 Gb/s: 11 cycles each way, a 73-block frame in 11 cycles each way, 19 of logic: 63 cycles,
    # 252 ns; 14.545 GB/s (8 lanes after 64b/66b) x 252 ns = 57.3 lines.
    near = reliability.retry_window("ours", 8, 8, 15.0, **held)
    assert near["ack_loop_ns"] == 252.0 and near["needed"] == 58 and near["fits"]
    # 100 m: 67 cycles each way, 175 cycles, 700 ns: 159.1 lines, within 256 tags, more than 128.
    far = reliability.retry_window("ours", 100, 8, 15.0, **held)
    assert far["ack_loop_ns"] == 700.0 and far["needed"] == 160 and far["fits"]
    assert not reliability.retry_window("ours", 100, 8, 15.0, tags=128, depth=256)["fits"]
    slow = reliability.retry_window("ours", 100, 8, 15.0, bandwidth_GBps=4.0, **held)
    assert slow["needed"] == 44 and slow["fits"]                        # 4 GB/s x 700 ns = 43.75 lines
    edge = reliability.retry_window("ours", 100, 8, 15.0, bandwidth_GBps=256 * 64 / 700, **held)
    assert edge["needed"] == 256 and edge["fits"]
    # The fewer of tags and depth bounds it: a shallower retry buffer does not hold the 8 m window.
    assert not reliability.retry_window("ours", 8, 8, 15.0, tags=128, depth=32)["fits"]


def test_retry_timer_and_profiles():
    assert [reliability.timeout_cycles(d) for d in (0, 27, 16367, 16368, 20000)] == [64, 172, 65532, 65535, 65535]
    assert reliability.replay_settings("ours", 27) == (172, 1)
    assert reliability.replay_settings("monet", 27) == (65535, 0)
    # With repair the timer waits out the longest hold of the receiver's repairs on top; the other replays do not.
    assert [reliability.timeout_cycles(27, replay) for replay in reliability.REPLAYS] == [172, 172, 300]
    assert [reliability.timeout_cycles(d, "sr-repair") for d in (16335, 16336)] == [65532, 65535]
    assert reliability.replay_settings("ours", 27, "sr-repair") == (300, 1)
    assert reliability.replay_settings("monet", 27, "sr-repair") == (65535, 0)


@pytest.mark.parametrize("rate,kw,hops,tiers,tiered", [
    (15.0, {}, 3, 2, 3),                         # -3 - (-6.5) = 3.5 dB: 3 hops of 1 dB
    (10.0, {}, 10, 5, 9),                        # 10.9 dB
    (10.0, {"fiber_km": 5.0}, 9, 5, 9),          # 10.9 - 1.0 dB of fiber
    (12.5, {"margin_db": 3.5}, 0, 0, None),      # nothing left for a switch
    (12.5, {"extra_loss_db": 4.0}, None, None, None),   # short of the receiver's sensitivity
    (15.0, {"sensitivity_dbm": -20.0, "hop_loss_db": 2.0}, 8, 4, 7),
    (15.0, {"extra_loss_db": 0.5}, 3, 2, 3),     # exactly 3 dB left: 3 hops, not 2
])
def test_power_budget_in_hops(rate, kw, hops, tiers, tiered):
    b = reliability.power_budget(rate, **kw)
    assert (b["max_hops"], b["tiers"], b["tiered_hops"]) == (hops, tiers, tiered)
    assert b["paper_hops"] == {10.0: 7, 12.5: 3, 15.0: 3}[rate]    # the paper's s.5.C hop counts
    assert b["fiber_loss_db"] == pytest.approx(0.2 * kw.get("fiber_km", 0.0))      # 0.2 dB/km
    assert b["budget_db"] == pytest.approx(b["tx_dbm"] - b["sensitivity_dbm"])


def test_selective_repeat_with_repair_loses_a_frame_only_for_an_error_beside_another():
    # P(another error in the 73-block frame) at 1e-5: 1 - exp(-1e-5 x 73 x 66) = 4.70 % of selective repeat's 44 ns.
    repair = reliability.replay_model(1e-5, "ours", 36, 8, 15.0, 13.5, replay="sr-repair")
    assert repair["time_lost_per_error_ns"] == pytest.approx(44.0 * 0.0470378, rel=1e-6)
    assert repair["predicted_efficiency"] > reliability.replay_model(1e-5, "ours", 36, 8, 15.0, 13.5,
                                                                      replay="sr")["predicted_efficiency"]
