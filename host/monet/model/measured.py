"""What the models take from a campaign's results store (`monet model ... --from RESULTS`): our link's figures,
each the same whichever model asks. A figure the store cannot give is refused with the input key that asked
for it, so the user sees which campaign to run."""

from monet.model import ModelInputError
from monet.report.tables import axis


def _remote_ours(records):
    return [r for r in records if axis(r["point"], "placement") == "remote" and axis(r["point"], "profile") == "ours"]


def _refuse(key, what):
    raise ModelInputError(f"{key}: 'measured' found no {what} of our link profile in the results store; run a "
                          "campaign with one (campaigns/default.yaml) or give a number")


def _require(records, key):
    if records is None:
        raise ModelInputError(f"{key}: 'measured' needs a results store; run `monet model MODEL FILE --from "
                              "RESULTS` or give a number")


def best_bandwidth_point(records, key):
    """The remote bandwidth point with the most GB/s."""
    _require(records, key)
    points = [r for r in _remote_ours(records) if r["point"].get("benchmark") == "bandwidth"
              and r["result"].get("bandwidth_GBps")]
    if not points:
        _refuse(key, "remote bandwidth point")
    return max(points, key=lambda r: r["result"]["bandwidth_GBps"])


def pooled_memory_GBps(records, key):
    """The most a pooled memory card served several requesters together: the highest aggregate bandwidth of the
    pool points (monet bench pool, campaigns/pooling.yaml)."""
    _require(records, key)
    points = [r for r in _remote_ours(records) if r["point"].get("benchmark") == "pool"
              and r["result"].get("together")]
    if not points:
        raise ModelInputError(f"{key}: 'measured' found no pooled memory card's aggregate (a pool point) in the "
                              "results store; run campaigns/pooling.yaml or give a number")
    return max(r["result"]["together"]["aggregate_GBps"] for r in points)


def read_latency_ns(records, key, distance_m=8):
    """The mean remote read latency at the stored distance nearest `distance_m`."""
    _require(records, key)
    reads = [r for r in _remote_ours(records) if r["point"].get("benchmark") == "latency"
             and r["point"].get("op") == "read"]
    if not reads:
        _refuse(key, "remote read latency point")
    nearest = min({r["point"]["distance_m"] for r in reads}, key=lambda d: abs(d - distance_m))
    values = [r["result"]["latency_ns"]["mean"] for r in reads if r["point"]["distance_m"] == nearest]
    return sum(values) / len(values)


def ns_per_m(records, key):
    """The latency a round-trip metre of fibre adds: the mean slope of Eq. 1's fits of our remote series."""
    from monet.benchmarks.latency import distance_fits
    _require(records, key)
    slopes = [f["L_m_ns_per_m"] for f in distance_fits(records) if f["profile"] == "ours"]
    if not slopes:
        _refuse(key, "latency series over two or more distances")
    return sum(slopes) / len(slopes)
