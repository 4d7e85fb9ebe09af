"""host/monet/report/stats.py: nearest-rank percentiles, the summary the CLI prints, least-squares fits and
percentiles from the PBB's histogram, each against answers worked out from the definitions."""

import pytest

from monet.report.stats import histogram_percentile, linear_fit, percentile, summary


@pytest.mark.parametrize("p,expected", [(0, 15), (5, 15), (30, 20), (40, 20), (50, 35), (99, 50), (100, 50)])
def test_nearest_rank_percentiles(p, expected):
    # The nearest-rank method's worked example: rank = ceil(p/100 x n), and at least 1.
    assert percentile([15, 20, 35, 40, 50], p) == expected


def test_percentiles_of_a_hundred_ranks_are_the_ranks():
    values = list(range(1, 101))
    assert [percentile(values, p) for p in (1, 50, 99, 100)] == [1, 50, 99, 100]
    with pytest.raises(ValueError, match="no samples"):
        percentile([], 50)


def test_summary_sorts_and_reports_every_figure():
    assert summary([4, 1, 3, 2, 10]) == {"min": 1, "mean": 4.0, "p50": 3, "p99": 10, "max": 10}
    assert summary(list(range(200, 0, -1))) == {"min": 1, "mean": 100.5, "p50": 100, "p99": 198, "max": 200}


def test_fit_of_anscombes_first_set():
    # Anscombe (1973), data set I: y = 3.00 + 0.500 x with r = 0.816.
    xs = [10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5]
    ys = [8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68]
    a, b, r2 = linear_fit(xs, ys)
    assert a == pytest.approx(3.0001, abs=1e-4) and b == pytest.approx(0.5001, abs=1e-4)
    assert r2 == pytest.approx(0.816 ** 2, abs=1e-3)


def test_fit_of_an_exact_line_and_of_a_flat_one():
    assert linear_fit([1, 2, 4], [5, 7, 11]) == pytest.approx((3.0, 2.0, 1.0))
    assert linear_fit([1, 2, 4], [6, 6, 6]) == (6.0, 0.0, 1.0)


@pytest.mark.parametrize("p,expected", [(0, 31), (25, 31), (50, 31), (51, 47), (75, 47), (76, None), (100, None)])
def test_histogram_percentile_is_the_upper_edge_of_its_bucket(p, expected):
    # Buckets of 16 cycles: [16, 32) holds 2 samples, [32, 48) one, the open last bucket one.
    assert histogram_percentile([0, 2, 1, 1], 4, p) == expected


@pytest.mark.parametrize("highest, expected", [(40, 40), (47, 47), (100, 47), (32, 32)])
def test_histogram_percentile_never_exceeds_the_measured_maximum(highest, expected):
    # The 99th percentile falls in [32, 48): its upper edge, 47, unless no sample went that far.
    assert histogram_percentile([0, 2, 1, 0], 4, 99, highest=highest) == expected
    assert histogram_percentile([0, 2, 1, 1], 4, 99, highest=highest) is None    # the open bucket stays open


def test_histogram_percentile_of_an_empty_histogram_is_refused():
    with pytest.raises(ValueError, match="empty histogram"):
        histogram_percentile([0, 0, 0], 2, 50)
    assert histogram_percentile([3], 0, 50) is None     # one bucket is the open last one


def test_histogram_percentile_takes_the_nearest_rank():
    # 100 samples, 99 in bucket 0 and one in bucket 1: the 99.5th percentile is rank ceil(99.5) = 100.
    assert histogram_percentile([99, 1, 0], 0, 99.5) == 1
    assert histogram_percentile([99, 1, 0], 0, 99) == 0
