"""The channel's figures (litex/cores/phy/figures.py), worked by hand: a FLIT's time on the lanes, the hit
thresholds of a bit error rate, and an HMC link's SerDes delays from the thesis's figures."""

import pytest

from monet.cores.phy.figures import (THRESHOLD_BITS, block_threshold, delay_cycles, device_serdes_ns, flit_ps,
                                     flit_threshold, host_serdes_ns)


@pytest.mark.parametrize("lanes, rate, ps", [(16, 10, 800), (16, 12.5, 640), (8, 15, 1067)])
def test_a_flit_takes_128_bits_over_the_lanes(lanes, rate, ps):
    assert flit_ps(lanes, rate) == ps          # 128 b / (lanes x rate), rounded to the picosecond


@pytest.mark.parametrize("threshold, bits", [(block_threshold, 66), (flit_threshold, 128)])
def test_a_bit_error_rate_as_a_threshold(threshold, bits):
    assert threshold(0) == 0
    assert abs(threshold(1e-5) / 2**THRESHOLD_BITS - bits * 1e-5) < bits**2 * 1e-10    # about bits x ber
    assert threshold(1) == 2**40 - 1                                                   # clamped to the 40-bit draw


def test_serdes_delays_from_the_thesis():
    assert host_serdes_ns(10) == pytest.approx(60.8)             # 19 cycles of 160 Gb/s / 512 b
    assert host_serdes_ns(15, lanes=8) == pytest.approx(81.0667, abs=1e-3)
    assert device_serdes_ns(10) == 14.5                          # 26.5 ns less 3 cycles at 250 MHz (exact)
    assert device_serdes_ns(15, clk_freq=200e6) == pytest.approx(7.3)


@pytest.mark.parametrize("settings, cycles", [
    (dict(rate_gbps=10), 10),                     # (60.8 + 14.5) / 2 = 37.65 ns: 9.4 cycles, rounded up
    (dict(rate_gbps=12.5), 8),                    # (48.64 + 13.9) / 2 = 31.27 ns
    (dict(rate_gbps=15), 7),                      # (40.53 + 10.3) / 2 = 25.42 ns
    (dict(rate_gbps=15, fiber_ns=40), 17),        # 65.42 ns
    (dict(rate_gbps=10, lanes=8), 18),            # the host's SerDes clock halves: 68.05 ns
    (dict(rate_gbps=15, clk_freq=100e6), 2),      # (40.53 - 7.7) / 2 = 16.42 ns at 10 ns a cycle
])
def test_one_directions_delay_in_whole_cycles(settings, cycles):
    assert delay_cycles(**settings) == cycles
