"""Latency statistics as the CLI reports them."""

import math


def percentile(sorted_values, p):
    """Nearest-rank percentile (p in 0..100) of an already sorted list."""
    if not sorted_values:
        raise ValueError("no samples")
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def summary(values):
    v = sorted(values)
    return {
        "min": v[0],
        "mean": sum(v) / len(v),
        "p50": percentile(v, 50),
        "p99": percentile(v, 99),
        "max": v[-1],
    }


def linear_fit(xs, ys):
    """Least-squares line y = a + b x; returns (a, b, r2)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    return a, b, (1 - ss_res / ss_tot) if ss_tot else 1.0


def histogram_percentile(hist, shift, p, highest=None):
    """Percentile (0..100) from a latency histogram whose bucket i holds [i << shift, (i+1) << shift)
    (the last bucket: everything above). Returns the upper edge of the bucket holding it, in cycles, within
    one bucket of the true value and never below it; None when it falls in the open last bucket. With
    `highest`, the largest sample measured, never above that either: a bucket's upper edge can lie beyond every
    sample in it, and a percentile beyond the maximum is no percentile."""
    total = sum(hist)
    if total == 0:
        raise ValueError("empty histogram")
    need = max(1, math.ceil(p / 100.0 * total))
    seen = 0
    for i, n in enumerate(hist):
        seen += n
        if seen >= need:
            if i == len(hist) - 1:
                return None
            edge = ((i + 1) << shift) - 1
            return edge if highest is None else min(edge, highest)
    raise AssertionError("unreachable")
