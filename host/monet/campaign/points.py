"""Campaign points as pytest items: each runs one benchmark on its target (sim or qemu) and is stored at once.

Collected only when named explicitly (`monet campaign run` does so), never by `make test`. `run_point` and
`finish_result` also serve the campaign's Dask workers (monet.campaign.workers), with targets of their own.
"""

import os
import socket
import sys
import time

import pytest

from monet.benchmarks import LINUX_TARGETS, REGISTRY
from monet.campaign.plan import Progress, point_key
from monet.sim import SimTarget, link_setup


class FixtureTargets:
    """What points run on, from this pytest session's fixtures (each made once, when first needed)."""

    def __init__(self, request):
        self.request = request

    def sim_build(self, model):
        return self.request.getfixturevalue("sim_models")(model)

    def __getattr__(self, name):
        if name not in ("qemu_guest", "qemu_image", "board_guest"):
            raise AttributeError(name)
        return lambda: self.request.getfixturevalue(name)


def linux_guest(targets, target):
    """The guest a Linux target's points run on: the board-in-a-box (qemu) or the board (its stand-in)."""
    return targets.qemu_guest() if target == "qemu" else targets.board_guest()


def run_point(point, targets, model=None):
    """Runs one point, a sim point on sim model `model`; `targets` gives sim_build(model), qemu_guest(),
    board_guest() and qemu_image().

    A sim point runs on a sim booted for it alone (a fraction of a second): what earlier points left in the
    link (sequence numbers, tags, memory contents) moves a run's cycle count by one now and then, and a
    point's figures must not depend on which points ran before it, nor on which worker ran it. The QEMU
    guest is booted once (its figures make no cycle-exact claim). A sim point's result carries the link's
    counters at its end (`link_setup.link_counters`): its own, since nothing ran on its sim before it."""
    benchmark = REGISTRY[point["benchmark"]]
    point = benchmark.full_point(point)
    if point["target"] in LINUX_TARGETS:
        return benchmark.run(linux_guest(targets, point["target"]), point)
    with SimTarget(targets.sim_build(model)) as sim:
        result = benchmark.run(sim, point)
        result["link_counters"] = link_setup.link_counters(sim)   # the sim was booted for this point alone
        return result


def finish_result(point, result, targets, seconds, model=None, worker="local"):
    """Adds what every stored result carries: the image, or the sim model and its gateware, it ran on, its time,
    and where it ran."""
    if point["target"] in LINUX_TARGETS:
        image, guest = targets.qemu_image(), linux_guest(targets, point["target"])
        result.update(image_hash=image.hash, kernel=image.info["kernel_package"], remote_memory=guest.remote_memory,
                      boot_seconds=round(guest.boot_seconds, 1), target=point["target"])
        if point["target"] == "board":
            from monet.board.target import STAND_IN
            result.update(board=STAND_IN, fpga=guest.fpga, link_bring_up=guest.link)
    else:
        build = targets.sim_build(model)
        result.update(model=model, gateware_hash=build.hash, firmware_hash=build.firmware_hash)
    result["seconds"] = round(seconds, 2)
    result["ran_on"] = {"host": socket.gethostname(), "worker": worker, "pid": os.getpid()}
    return result


_progress = None


def test_point(campaign_point, campaign_store, request):
    global _progress
    if campaign_store.has(campaign_point):
        pytest.skip("finished in an earlier run")
    _progress = _progress or Progress(campaign_store)
    targets = FixtureTargets(request)
    model = campaign_store.plan.get(point_key(campaign_point))
    t0 = time.time()
    try:
        result = run_point(campaign_point, targets, model)
    except Exception as e:     # one line naming the point, no traceback; a rerun runs it
        line = campaign_store.failed(campaign_point, type(e).__name__, str(e))
        with _uncaptured(request):
            print(f"\n{line}", file=sys.stderr, flush=True)
        pytest.fail(line, pytrace=False)
    campaign_store.add(campaign_point, finish_result(campaign_point, result, targets, time.time() - t0, model))
    with _uncaptured(request):
        _progress.point_done(campaign_point)


def _uncaptured(request):
    """The terminal itself, past pytest's capture of the test's output: for the progress line and failures."""
    return request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled()
