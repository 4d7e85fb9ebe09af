"""Campaign points as pytest items: each runs one benchmark on its target (sim or qemu) and is stored at once.

Collected only when named explicitly (`monet campaign run` does so), never by `make test`.
"""

import sys
import time

import pytest

from monet import bench, stream, ycsb
from monet.campaign import point_id

_progress = {"start": None, "ran": 0}


def run_point(point, request):
    """Runs one point on its target (a fixture: the sim, or the QEMU guest); returns its result."""
    if point["target"] == "qemu":
        guest = request.getfixturevalue("qemu_guest")
        if point["benchmark"] == "ycsb":
            return ycsb.run_qemu(guest, point["workload"], node=point["node"], threads=point["threads"],
                                 operations=point["operations"])
        return stream.run_qemu(guest, point["node"], n=point["n"], repetitions=point["reps"],
                               perf=point["benchmark"] == "perf")
    sim = request.getfixturevalue("sim")
    path = {"profile": point["profile"], "memory": point["memory"]}
    if point["benchmark"] == "latency":
        return bench.latency(sim, point["op"], point["distance_m"], point["lanes"], point["rate_gbps"],
                             point["samples"], **path)
    if point["benchmark"] == "ber":
        return bench.ber_point(sim, point["ber"], point["distance_m"], point["lanes"], point["rate_gbps"],
                               bits=point["bits"], burst=point["burst"], op=point["op"], **path)
    if point["benchmark"] == "stream":
        return stream.run_sim(sim, point["node"], point["distance_m"], point["lanes"], point["rate_gbps"],
                              n=point["n"], repetitions=point["reps"], **path)
    return bench.bandwidth(sim, point["op"], point["outstanding"], point["distance_m"], point["lanes"],
                           point["rate_gbps"], pattern=point["pattern"], count=point["count"], size=point["size"],
                           **path)


def test_point(campaign_point, campaign_store, request):
    if campaign_store.has(campaign_point):
        pytest.skip("finished in an earlier run")
    if _progress["start"] is None:
        _progress["start"] = time.time()
    t0 = time.time()
    result = run_point(campaign_point, request)
    if campaign_point["target"] == "qemu":
        image = request.getfixturevalue("qemu_image")
        guest = request.getfixturevalue("qemu_guest")
        result.update(image_hash=image.hash, kernel=image.info["kernel_package"], remote_memory=guest.remote_memory,
                      boot_seconds=round(guest.boot_seconds, 1))
    else:
        build = request.getfixturevalue("sim_build")
        result.update(gateware_hash=build.hash, firmware_hash=build.firmware_hash)
    result["seconds"] = round(time.time() - t0, 2)
    campaign_store.add(campaign_point, result)

    _progress["ran"] += 1
    done, total = len(campaign_store.done), campaign_store.total
    elapsed = time.time() - _progress["start"]
    rate = _progress["ran"] / elapsed if elapsed else 0.0
    left = (total - done) / rate if rate else 0.0
    width = 30
    bar = "#" * (width * done // total) + "." * (width - width * done // total)
    print(f"\r[{bar}] {done}/{total} points, {rate * 60:.1f}/min, {left:.0f} s left  {point_id(campaign_point)}",
          file=sys.__stderr__, flush=True)
