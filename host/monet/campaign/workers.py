"""Campaign points on many workers, through Dask distributed.

`monet campaign run FILE --workers N` starts a Dask LocalCluster of N worker processes on loopback, one
point at a time each, so N sims (or QEMU guests) run at once; `--scheduler ADDRESS` sends the points to an
existing Dask cluster instead (`dask scheduler` + `dask worker` on the user's machines, an SSH cluster,
Slurm through dask-jobqueue), whose workers have this project installed at the same revision.

Each worker process builds the sim model a point runs on (monet.campaign.plan.plan_models) or reuses it by its hash
(builders on one machine share `build/sim/<hash>` behind a lock) and boots a sim from it for every point; a
worker whose model hash differs from the campaign's refuses the point, naming both. This process is the one writer: it
appends each finished point to the results store as its future completes, so resume skips finished points
as before, and records where every point ran. A worker lost in the middle of a point loses nothing: Dask
runs that point again on another worker, and only a completed point is ever stored.
"""

import logging
import os
import socket
import sys
import time
from contextlib import contextmanager
from typing import NamedTuple

from distributed import Client, LocalCluster, WorkerPlugin, as_completed, get_worker

from monet.campaign.plan import (Progress, ResultsStore, build_models, plan_models, point_cost, point_id,
                                 point_key, write_manifest)
from monet.campaign.points import finish_result, run_point
from monet.loopback import free_port

CONNECT_TIMEOUT_S = 15


class WorkerError(RuntimeError):
    """The cluster could not be reached or started, or a worker cannot run the campaign's points."""


class WorkerTargets:
    """A worker process's sim builds (one a model) and QEMU guest, made once and kept for every point it runs
    (a sim point boots its own sim from its model's build: monet.campaign.points.run_point)."""

    _current = None

    def __init__(self):
        self._sim_builds = {}
        self._qemu_image = self._qemu_guest = self._board_guest = None

    @classmethod
    def current(cls):
        if cls._current is None:
            cls._current = cls()
        return cls._current

    def sim_build(self, model):
        from monet.sim import SimBuild
        if model not in self._sim_builds:
            self._sim_builds[model] = SimBuild(model, log=_log).ensure()
        return self._sim_builds[model]

    def qemu_image(self):
        from monet.qemu import GuestImage
        if self._qemu_image is None:
            self._qemu_image = GuestImage(log=_log).ensure()
        return self._qemu_image

    def qemu_guest(self):
        from monet.qemu import QemuTarget
        if self._qemu_guest is None:
            self._qemu_guest = QemuTarget(self.qemu_image(), forward_port=free_port())
        return self._qemu_guest

    def board_guest(self):
        from monet.board.target import open_board
        if self._board_guest is None:
            self._board_guest = open_board(self.qemu_image(), forward_port=free_port(), log=_log)
        return self._board_guest

    def close(self):
        for guest in (self._qemu_guest, self._board_guest):
            if guest is not None:
                guest.close()
        self._qemu_guest = self._board_guest = None

    def drop_broken(self):
        """Forgets a guest that stopped answering, so the next point boots a fresh one."""
        if any(g is not None and not g.responsive for g in (self._qemu_guest, self._board_guest)):
            self.close()


def _log(message):
    print(f"[worker {os.getpid()}] {message}", file=sys.stderr, flush=True)


class PointFailed(NamedTuple):
    """What a worker returns for a point that raised: the error's type name and message. Returned, not raised,
    so that Dask logs no traceback of its own; the campaign says it in one line (ResultsStore.failed)."""
    error: str
    message: str


def run_on_worker(point, model, gateware_hash):
    """The task a worker runs for one point (on sim model `model`, whose hash the campaign's machine built as
    `gateware_hash`; None for a Linux target's point); returns the result as the store keeps it, or PointFailed."""
    targets = WorkerTargets.current()
    t0 = time.time()
    try:
        if model is not None and targets.sim_build(model).hash != gateware_hash:
            raise WorkerError(f"worker {socket.gethostname()}: its sim model {model} hash is "
                              f"{targets.sim_build(model).hash}, the campaign's is {gateware_hash}: check out the "
                              "same revision with the same pinned tools")
        result = run_point(point, targets, model)
    except Exception as e:      # the point's failure, told to the writer; the worker goes on with the next
        return PointFailed(type(e).__name__, str(e))
    finally:
        targets.drop_broken()
    return finish_result(point, result, targets, time.time() - t0, model, worker=get_worker().address)


class _CloseTargets(WorkerPlugin):
    """Dask worker plugin: ends the worker's QEMU guest when the worker shuts down (each sim point closes its
    own sim)."""
    name = "monet-close-targets"

    def setup(self, worker):
        pass

    def teardown(self, worker):
        WorkerTargets.current().close()


def _refuse_a_closed_port(scheduler):
    """Raises ConnectionRefusedError at once where nothing listens on a tcp:// scheduler's port: Dask's client
    would retry for its whole timeout before saying the same."""
    host, sep, port = scheduler.removeprefix("tcp://").rpartition(":")
    if scheduler.startswith("tcp://") and sep and port.isdigit():
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()


@contextmanager
def connect(workers=None, scheduler=None):
    """A Dask client: to a LocalCluster of `workers` processes on loopback (closed again on leaving), or to
    the scheduler at `scheduler`."""
    if scheduler:
        try:
            _refuse_a_closed_port(scheduler)
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as e:
            raise WorkerError(f"cannot reach the Dask scheduler at {scheduler!r} ({e}); accepted: the address a "
                              "running `dask scheduler` prints, such as tcp://127.0.0.1:8786") from None
        with client:
            yield client
        return
    # Dask's own log is kept to CRITICAL: a point's failure is said in one line here, and at shutdown a worker's
    # heartbeat can race the closing scheduler and log a traceback (ERROR) although nothing failed.
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        yield client


def run_campaign(campaign, results, client, model=None, log=print):
    """Runs every point of `campaign` not yet in `results` on the client's workers, each sim point on its model
    (plan_models; `model` puts them all on one); returns (stored, failed)."""
    points = campaign.points()
    store = ResultsStore(results)
    store.total = len(points)
    todo = [p for p in points if not store.has(p)]
    targets = {p["target"] for p in points}
    # This machine builds each model of the campaign's plan, one after the other (a build takes both cores):
    # its builds name the models and firmware in the manifest, and local workers reuse them. The plan is the
    # whole campaign's, so a resumed run puts its points on the models the first run chose.
    plan = plan_models(points, model, log)
    builds = build_models(plan, log=log)
    image = None
    if targets & {"qemu", "board"}:
        from monet.qemu import GuestImage
        image = GuestImage(log=log).ensure()
    write_manifest(store, campaign, builds, image)
    log(f"campaign {campaign.name}: {len(points) - len(todo)} finished earlier, {len(todo)} to run on "
        f"{len(client.scheduler_info()['workers'])} workers")
    client.register_plugin(_CloseTargets())
    by_key = {}
    futures = []
    for order, point in enumerate(sorted(todo, key=lambda p: point_cost(p, log), reverse=True)):
        key = f"monet-point-{campaign.digest}-{point_id(point)}"
        model = plan.get(point_key(point))
        future = client.submit(run_on_worker, point, model, builds[model].hash if model else None, key=key,
                               pure=False, priority=-order)
        by_key[future.key] = point
        futures.append(future)
    progress = Progress(store)
    failed = 0
    for future in as_completed(futures):
        point = by_key[future.key]
        try:
            result = future.result()
        except Exception as e:     # the cluster lost the task (workers died): the point is left for a rerun
            result = PointFailed(type(e).__name__, str(e))
        if isinstance(result, PointFailed):
            failed += 1
            log(f"campaign {campaign.name}: {store.failed(point, result.error, result.message)}")
            continue
        store.add(point, result)
        progress.point_done(point, result["ran_on"]["worker"])
    write_manifest(store, campaign, builds, image)
    return len(futures) - failed, failed
