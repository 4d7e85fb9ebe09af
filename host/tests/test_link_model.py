"""host/monet/link/model.py against figures worked out from their definitions: 64b/66b block times, the
10GBASE-R payload, light in fiber, PG056's PHY latency, and the serialization of beats over lanes."""

import pytest

from monet.link import model as lm
from monet.link.profiles import PROFILES
from monet.soc.facts import STAGE_SEGMENTS

C_M_PER_NS = 0.299792458


@pytest.mark.parametrize("rate,ps", [(10.0, 6600), (12.5, 5280), (15.0, 4400), (25.0, 2640)])
def test_a_block_is_66_line_bits(rate, ps):
    assert lm.block_ps(rate) == ps


def test_10gbase_r_carries_10_gbps_of_payload():
    # IEEE 802.3 clause 49: 10.3125 Gb/s on the line is exactly 10 Gb/s after 64b/66b.
    assert lm.payload_capacity_GBps(1, 10.3125) == pytest.approx(1.25, rel=1e-12)
    assert lm.payload_capacity_GBps(8, 10.3125) == pytest.approx(10.0, rel=1e-12)


def test_fiber_delay_is_light_in_glass_over_half_the_round_trip():
    assert lm.FIBER_NS_PER_M == pytest.approx(1.468 / C_M_PER_NS, abs=0.01)
    assert lm.fiber_ns(8) == pytest.approx(19.6) and lm.fiber_ns(0) == 0


@pytest.mark.parametrize("rate,ns", [(10.0, 30.95), (15.0, 20.9666667), (1.0, 301.5)])
def test_phy_latency_is_pg056s_unit_intervals(rate, ns):
    # TX 176 UI + RX 125.5 UI + 1 UI per Gb/s above 2 Gb/s, at 1/rate ns a UI.
    assert lm.phy_ns(rate) == pytest.approx(ns)


def test_one_way_delay_in_cycles():
    assert lm.CLK_PS == 4000
    # Rounded up: the channel never delays less than the PHYs' data sheet and the fiber.
    assert lm.delay_cycles(0, 15.0) == 6           # 20.97 ns
    assert lm.delay_cycles(8, 15.0) == 11          # 40.57 ns
    assert lm.delay_cycles(100, 10.0) == 69        # 30.95 + 245 ns
    assert lm.delay_cycles(8, 15.0, link_ns=20.4) == 10    # exactly 40 ns: 10 cycles, not 11


@pytest.mark.parametrize("rate", [10.0, 12.5, 15.0])
@pytest.mark.parametrize("distance", [0, 8, 36, 100])
def test_the_modelled_phy_is_never_faster_than_pg056(rate, distance):
    """No latency gain may come from an optimistic PHY: the channel's one-way delay, less the fiber, is at
    least the GTHE4's fixed latency in AMD PG056 (64-bit datapath: TX 176 UI, RX 125.5 UI, plus 1 UI per Gb/s
    of line rate above 2 Gb/s), written out here from the data sheet, not from the model's constants."""
    pg056_ns = (176 + 125.5 + (rate - 2)) / rate
    for delay in (lm.delay_cycles(distance, rate), PROFILES["ours"].delay_cycles(distance, rate)):
        assert delay * 4.0 - 4.9 * distance / 2 >= pg056_ns - 1e-9
    assert lm.read_breakdown(100, distance, 8, rate)["channel_rounding_ns"] >= -1e-9


def test_the_longest_distance_fills_the_delay_lines():
    for rate in (10.0, 15.0):
        d = lm.max_distance_m(rate)
        assert lm.delay_cycles(d, rate) == lm.MAX_DELAY and lm.delay_cycles(d + 2, rate) > lm.MAX_DELAY
    assert lm.max_distance_m(15.0) == pytest.approx(1624.1, abs=0.1)


@pytest.mark.parametrize("blocks,lanes,rate,cycles", [
    (10, 8, 15.0, 3),     # a beat of 8 blocks and one of 2: one block time each, 8.8 ns
    (10, 1, 15.0, 11),    # 10 block times, 44 ns
    (10, 4, 10.0, 5),     # 2 + 1 block times of 6.6 ns, 19.8 ns
    (2, 8, 15.0, 2),      # 4.4 ns
    (73, 8, 15.0, 11),    # 10 beats, 44 ns
    (0, 8, 15.0, 1),
])
def test_serialization_counts_beats_of_eight_blocks_over_the_lanes(blocks, lanes, rate, cycles):
    assert lm.serialization_cycles(blocks, lanes, rate) == cycles


def test_lines_a_cycle_and_cycles_in_ns():
    assert lm.lines_per_cycle(16.0) == 1.0          # 64 B every 4 ns
    assert lm.lines_per_cycle(4.0) == 0.25
    assert lm.cycles_to_ns(5) == 20.0


def test_read_breakdown_parts_add_up_to_the_measurement():
    b = lm.read_breakdown(41, 8, 8, 15.0, memory_cycles=3)
    assert b["total_ns"] == 164.0
    assert b["fiber_ns"] == pytest.approx(39.2) and b["phy_ns"] == pytest.approx(41.9333333)
    assert b["channel_rounding_ns"] == pytest.approx(88 - 39.2 - 41.9333333)
    assert b["serialization_ns"] == 20.0 and b["memory_ns"] == 12.0
    # 41 cycles less 2 x 11 of channel, 5 of serialization and 3 of memory.
    assert b["remat_link_logic_cycles"] == 11 and b["remat_link_logic_ns"] == 44.0
    parts = sum(v for k, v in b.items() if k.endswith("_ns") and k not in ("total_ns", "remat_link_logic_ns"))
    assert parts + b["remat_link_logic_ns"] == pytest.approx(b["total_ns"])
    layers = lm.breakdown_by_layer(b)
    assert layers == {"memory": 12.0, "link": 64.0, "phy": pytest.approx(88 - 39.2), "fiber": pytest.approx(39.2)}
    assert sum(layers.values()) == pytest.approx(b["total_ns"])
    other = lm.read_breakdown(40, 8, 8, 15.0, link_ns=100.0)
    assert other["phy_ns"] == 200.0 and other["remat_link_logic_cycles"] == 40 - 2 * 30 - 5 - 1


def test_on_one_lane_the_request_and_response_serialise_block_by_block():
    # 2 blocks of request (2 x 4.4 ns: 3 cycles) and 10 of response (44 ns: 11 cycles) at 15 Gb/s.
    assert lm.read_breakdown(100, 8, 1, 15.0, memory_cycles=3)["serialization_ns"] == 4.0 * (3 + 11)


def test_an_access_off_the_link_is_logic_and_memory_with_its_own_fiber_inside_the_memory():
    b = lm.linkless_breakdown(30, 20, fiber_ns=8.0)
    assert (b["total_ns"], b["fiber_ns"], b["memory_ns"]) == (120.0, 8.0, 72.0)
    assert (b["remat_link_logic_cycles"], b["remat_link_logic_ns"]) == (10, 40.0)
    assert lm.linkless_breakdown(30, 20)["memory_ns"] == 80.0


def test_lines_a_cycle_of_a_bandwidth_that_is_not_whole_lines_a_second():
    assert lm.lines_per_cycle(1e-6) == pytest.approx(1000 / 64 / 250e6)        # 1 kB/s: 15.6 lines a second


def test_the_channel_delay_rounds_to_whole_cycles():
    # A 6 ns one-way path is 1.5 cycles of 4 ns: rounded half to even, 2 cycles a way, 16 ns for the round
    # trip, 4 ns more than the 12 ns of the path.
    b = lm.read_breakdown(100, 0, 8, 15.0, link_ns=6.0)
    assert (b["phy_ns"], b["channel_rounding_ns"]) == (12.0, 4.0)


def test_measured_stages_are_each_cards_means_and_the_wire_is_what_the_memory_card_does_not_hold():
    # The firmware's answer: each card's sums in the order of its points' segments (STAGE_SEGMENTS).
    assert STAGE_SEGMENTS == {"compute": ["request_to_link_tx", "link_tx_to_lanes_tx", "lanes_tx_to_lanes_rx",
                                          "lanes_rx_to_link_rx", "link_rx_to_answer"],
                              "memory": ["lanes_rx_to_link_rx", "link_rx_to_link_tx", "link_tx_to_lanes_tx"]}
    timers = {"compute": {"count": 4, "spoiled": 1, "sums": [4, 8, 4 * 45, 12, 6]},
              "memory": {"count": 2, "spoiled": 0, "sums": [4, 2 * 16, 4]}}
    stages = lm.measured_stages(timers, latency_mean_cycles=56.0, memory_cycles=13)
    assert list(stages["cycles"]) == ["remat_out", "compute_link_tx", "wire_both_ways", "memory_link_rx",
                                      "memory_card_front", "memory", "memory_link_tx", "compute_link_rx",
                                      "remat_back"]
    assert stages["cycles"] == {"remat_out": 1, "compute_link_tx": 2, "wire_both_ways": 45 - 2 - 16 - 2,
                                "memory_link_rx": 2, "memory_card_front": 3, "memory": 13, "memory_link_tx": 2,
                                "compute_link_rx": 3, "remat_back": 1.5}
    assert stages["total_cycles"] == 1 + 2 + 45 + 3 + 1.5 and stages["unaccounted_cycles"] == 56 - 52.5
    assert stages["ns"]["memory"] == 52.0 and (stages["timed"], stages["spoiled"], stages["memory_timed"]) == (4, 1, 2)
    # A board's compute card alone: what lies beyond its lanes is one stage.
    alone = lm.measured_stages({"compute": timers["compute"]}, 52.5, 13)
    assert alone["cycles"]["beyond_the_card"] == 45 and "memory" not in alone["cycles"]
    assert alone["unaccounted_cycles"] == 0 and alone["memory_timed"] is None
    assert lm.measured_stages({"compute": {**timers["compute"], "count": 0}}, 50, 13) is None
    assert lm.measured_stages({}, 50, 13) is None
