"""Campaigns: a YAML file of sweep axes and benchmarks, expanded into points, each stored as it finishes.

    name: example
    repetitions: 1
    axes:                     # every combination is swept
      distance_m: [0, 8, 36]
      lanes: [8]
      rate_gbps: [15]
      profile: [ours, monet]  # our link, or the MONet paper's streamer + Aurora (monet/link/profiles.py)
      memory: [sram]          # or ddr4
      target: [sim]           # sim (the soft CPU and the link) or qemu (Linux on the board-in-a-box)
    benchmarks:
      - latency:   {op: [read, write], samples: [50]}
      - bandwidth: {op: [read], pattern: [seq, random], size: [64, 128], outstanding: [128], count: [20000]}
      - ber:       {ber: [0, 1.0e-9, 1.0e-6], bits: [1.0e+9], burst: [1], op: [read]}
      - stream:    {node: [0, 1], n: [4096], reps: [3]}   # node 0 local memory, 1 remote memory (sim, qemu)
      - ycsb:      {workload: [a, b, c, f], node: [1], operations: [10000], threads: [4]}   # qemu
      - perf:      {node: [0, 1], n: [2000000], reps: [5]}  # perf stat over STREAM (qemu)

Benchmarks, their parameters, defaults and the targets they run on are declared in monet.benchmarks (one
module each: chase, memtest and prbs run in campaigns too); a combination of axes a benchmark does not run
on is left out.

Instead of `axes` and `benchmarks`, `sweeps:` may list several {axes, benchmarks} pairs, each a product of
its own (a distance sweep at one lane setting, a lane x rate sweep at one distance, ...).

Results go to RESULTS/results.jsonl, one JSON object a line, flushed and synced as each point ends, so a
killed run loses nothing that finished; a rerun skips the points already there. RESULTS/manifest.json
records the campaign, versions, git revision, the sim models' gateware and firmware hashes, clock and topology,
and the model each point ran on.

Sim points run on the smallest sim model that holds their memory (monet.sim.MODELS) where their run is long
enough to repay its build, else on one the campaign uses anyway or the full one (plan_models); `--model NAME`
puts them all on one.
"""

import hashlib
import itertools
import json
import math
import os
import sys
import time
from pathlib import Path

import yaml

from monet.benchmarks import AXES, AXIS, DEFAULT_SIM_CYCLES, MEMORY_AXES, REGISTRY, Param
from monet.campaign.results import stored_lines
from monet.link.model import FIBER_NS_PER_M, NOMINAL_CLK_HZ, PHY_RX_UI, PHY_TX_UI
from monet.link.profiles import memory_refusal
from monet.repo import git_revision

REPETITIONS = Param("repetitions", "runs of every point", low=1, high=1000, integer=True, default=1)


class CampaignError(ValueError):
    """A campaign file that cannot be run; the message names the file, key, value and what is accepted."""


def _values(path, where, raw, param):
    values = raw if isinstance(raw, list) else [raw]
    if not values:
        raise CampaignError(f"{path}: {where}: the list is empty; give at least one value")
    for v in values:
        if not param.check(v):
            raise CampaignError(f"{path}: {where}: {v!r} is not accepted; accepted: {param.accepted}")
    return values


def runs_on(benchmark):
    """The campaign targets a benchmark runs on."""
    return tuple(t for t in REGISTRY[benchmark].targets if t in AXIS["target"].choices)


class Campaign:
    def __init__(self, path):
        self.path = Path(path)
        try:
            self.text = self.path.read_text()
        except OSError as e:
            raise CampaignError(f"{path}: cannot read the campaign file ({e.strerror})") from None
        try:
            doc = yaml.safe_load(self.text)
        except yaml.YAMLError as e:
            raise CampaignError(f"{path}: not valid YAML: {e}") from None
        if not isinstance(doc, dict):
            raise CampaignError(f"{path}: expected a mapping with keys name, axes, benchmarks")
        unknown = set(doc) - {"name", "repetitions", "axes", "benchmarks", "sweeps"}
        if unknown:
            raise CampaignError(f"{path}: unknown key {sorted(unknown)[0]!r}; accepted: name, repetitions, axes, "
                                "benchmarks, sweeps")
        self.name = str(doc.get("name", self.path.stem))
        reps = doc.get("repetitions", 1)
        if not REPETITIONS.check(reps):
            raise CampaignError(f"{path}: repetitions: {reps!r} is not accepted; accepted: {REPETITIONS.accepted}")
        self.repetitions = int(reps)

        if "sweeps" in doc:
            if "axes" in doc or "benchmarks" in doc:
                raise CampaignError(f"{path}: give either sweeps or axes + benchmarks, not both")
            sweeps = doc["sweeps"]
            if not isinstance(sweeps, list) or not sweeps or not all(isinstance(w, dict) for w in sweeps):
                raise CampaignError(f"{path}: sweeps: expected a list of mappings with keys axes, benchmarks")
            for i, sweep in enumerate(sweeps):
                extra = set(sweep) - {"axes", "benchmarks"}
                if extra:
                    raise CampaignError(f"{path}: sweeps[{i}]: unknown key {sorted(extra)[0]!r}; accepted: axes, "
                                        "benchmarks")
            self.sweeps = [self._sweep(path, f"sweeps[{i}].", w) for i, w in enumerate(sweeps)]
        else:
            self.sweeps = [self._sweep(path, "", doc)]
        for point in self.points():
            benchmark = REGISTRY[point["benchmark"]]
            refusal = benchmark.refuse_point(benchmark.full_point(point))
            if refusal:
                raise CampaignError(f"{path}: point {point_id(point)}: {refusal}")

    @staticmethod
    def _sweep(path, where, doc):
        """(axes, benchmarks) of one sweep: every combination of its axes runs each of its benchmarks."""
        axes = doc.get("axes", {}) or {}
        if not isinstance(axes, dict):
            raise CampaignError(f"{path}: {where}axes: expected a mapping of axis name to a list of values")
        for key in axes:
            if key not in AXIS:
                raise CampaignError(f"{path}: {where}axes: unknown axis {key!r}; accepted: {', '.join(AXIS)}")
        axes = {a.name: _values(path, f"{where}axes.{a.name}", axes.get(a.name, a.sweep), a) for a in AXES}
        for values in itertools.product(*(axes[k] for k in MEMORY_AXES)):
            refusal = memory_refusal(*values)
            if refusal:
                raise CampaignError(f"{path}: {where}axes: {refusal}; sweep it in a sweep of its own")

        benches = doc.get("benchmarks")
        if not isinstance(benches, list) or not benches:
            raise CampaignError(f"{path}: {where}benchmarks: expected a list such as [latency: {{op: [read]}}]; "
                                f"accepted benchmarks: {', '.join(REGISTRY)}")
        benchmarks = []
        for i, entry in enumerate(benches):
            here = f"{where}benchmarks[{i}]"
            if isinstance(entry, str):
                entry = {entry: {}}
            if not isinstance(entry, dict) or len(entry) != 1:
                raise CampaignError(f"{path}: {here}: expected one benchmark name with its parameters")
            (name, params), = entry.items()
            if name not in REGISTRY:
                raise CampaignError(f"{path}: {here}: unknown benchmark {name!r}; accepted: {', '.join(REGISTRY)}")
            bench = REGISTRY[name]
            params = params or {}
            if not isinstance(params, dict):
                raise CampaignError(f"{path}: {here}.{name}: expected a mapping of parameter to a list of values")
            accepted = {p.name: p for p in bench.campaign_params}
            for key in params:
                if key not in accepted:
                    raise CampaignError(f"{path}: {here}.{name}: unknown parameter {key!r}; accepted: "
                                        f"{', '.join(accepted)}")
            values = {k: _values(path, f"{here}.{name}.{k}", params.get(k, p.sweep), p) for k, p in accepted.items()}
            if not runs_on(name):
                raise CampaignError(f"{path}: {here}: {name} runs on {' or '.join(bench.targets)} only, not on a "
                                    f"campaign target ({', '.join(AXIS['target'].choices)})")
            targets = [t for t in axes["target"] if t in runs_on(name)]
            if not targets:
                raise CampaignError(f"{path}: {here}: {name} runs on {' or '.join(runs_on(name))} only; add it to "
                                    f"{where}axes.target")
            refusal = bench.refuse(values, targets)
            if refusal:
                raise CampaignError(f"{path}: {here}.{name}.{refusal[0]}: {refusal[1]}")
            benchmarks.append((name, values))
        return axes, benchmarks

    def points(self):
        """Every point of every sweep, in a stable order (axes outermost so the link is set least often); a
        point that two sweeps share runs once."""
        out, seen = [], set()
        for axes, benchmarks in self.sweeps:
            axis_names = list(axes)
            for combo in itertools.product(*(axes[k] for k in axis_names)):
                base = dict(zip(axis_names, combo))
                for name, params in benchmarks:
                    if base["target"] not in runs_on(name):
                        continue
                    names = list(params)
                    for values in itertools.product(*(params[k] for k in names)):
                        for rep in range(self.repetitions):
                            point = {"benchmark": name, **base, **dict(zip(names, values)), "rep": rep}
                            point = {k: v for k, v in point.items()
                                     if k not in REGISTRY[name].param or REGISTRY[name].param[k].applies(point)}
                            if point_key(point) not in seen:
                                seen.add(point_key(point))
                                out.append(point)
        return out

    @property
    def digest(self):
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


def point_cost(point, log=print):
    """A point's cost in sim cycles, as its benchmark estimates it (Benchmark.cost): workers get the costliest
    points first. Only the order uses it, so an estimate that fails is said in one line naming the point and
    the point takes DEFAULT_SIM_CYCLES: it never stops the campaign."""
    benchmark = REGISTRY[point["benchmark"]]
    try:
        cycles = benchmark.cost(benchmark.full_point(point))
        if isinstance(cycles, bool) or not isinstance(cycles, (int, float)) or not 0 < cycles < math.inf:
            raise ValueError(f"{cycles!r} is not a positive number of cycles")
    except Exception as e:      # a bug in an estimate: the order is all it may cost
        log(f"point {point_id(point)}: {point['benchmark']}'s cost estimate failed ({type(e).__name__}: {e}); "
            f"ordered as {DEFAULT_SIM_CYCLES} cycles")
        return DEFAULT_SIM_CYCLES
    return cycles


# A sim model of its own for some of a campaign's points (a smaller one: monet.sim.MODELS) repays its build,
# about 110 s on 2 cores, only over a long run: without the HMC a cycle costs some 5 % less, without the DDR4 too
# some 15 %, so the points must run about 35 minutes, 5e8 cycles at 250k cycles/s. Shorter runs share a model
# the campaign uses anyway, or the full one, which every other command uses and so is most likely built already.
SPLIT_CYCLES = 5 * 10**8


def plan_models(points, model=None, log=print):
    """The sim model each sim point runs on, {point_key: model name}: the smallest that holds the point's
    memory, where its points together repay a build (SPLIT_CYCLES of estimated cost); a shorter group runs on
    the smallest other model of the plan that holds its memory, else on the full model. `model` puts every
    point on that one model (CampaignError where it lacks a point's memory). A benchmark with a model of its own
    (`sim_model`: the pooled model) always runs on that one."""
    from monet.sim.build import DEFAULT_MODEL, MODELS, covers, serves, smallest_model
    sim = [p for p in points if p["target"] == "sim"]
    own = {point_key(p): REGISTRY[p["benchmark"]].sim_model for p in sim if REGISTRY[p["benchmark"]].sim_model}
    sim = [p for p in sim if point_key(p) not in own]
    if model is not None:
        for p in sim:
            if not serves(model, p["memory"]):
                holding = [name for name in MODELS if serves(name, p["memory"])]
                raise CampaignError(f"model {model!r} holds no {p['memory']} memory, which point {point_id(p)} "
                                    f"uses; accepted: {', '.join(holding)} (or no model: the campaign picks)")
        return {**own, **{point_key(p): model for p in sim}}
    groups = {}
    for p in sim:
        groups.setdefault(smallest_model(p["memory"]), []).append(p)
    cost = {name: sum(point_cost(p, log) for p in group) for name, group in groups.items()}
    for name in sorted(groups, key=cost.get):      # the shortest first: a group may take another one in
        if cost[name] >= SPLIT_CYCLES or name == DEFAULT_MODEL:
            continue
        home = next((other for other in MODELS if other != name and other in groups and covers(other, name)),
                    DEFAULT_MODEL)
        groups.setdefault(home, []).extend(groups.pop(name))
        cost[home] = cost.get(home, 0) + cost.pop(name)
    return {**own, **{point_key(p): name for name, group in groups.items() for p in group}}


def build_models(plan, build=None, log=print):
    """Builds (or reuses) each sim model of a plan, smallest first, with `build` (a model name's SimBuild,
    ensured; by default a new one); returns {model name: SimBuild}."""
    from monet.sim import BUILDS, SimBuild
    build = build or (lambda name: SimBuild(name, log=log).ensure())
    return {name: build(name) for name in BUILDS if name in set(plan.values())}


def point_key(point):
    return json.dumps(point, sort_keys=True)


def point_id(point):
    """Short readable name of a point, for pytest ids and progress lines."""
    skip = {"benchmark", "rep"}
    parts = [point["benchmark"]] + [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                    for k, v in point.items() if k not in skip]
    return "-".join(parts) + f"-r{point['rep']}"


class ResultsStore:
    """results.jsonl: one finished point a line, appended and synced at once. A line cut short by a crash is
    ignored (and its point run again)."""

    def __init__(self, directory):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "results.jsonl"
        self.done = {}
        if self.path.exists():
            for record in stored_lines(self.path):
                try:
                    self.done[point_key(record["point"])] = record
                except (KeyError, TypeError):
                    continue

    def has(self, point):
        return point_key(point) in self.done

    def add(self, point, result):
        record = {"point": point, "result": result}
        line = json.dumps(record) + "\n"
        # A torn last line (crash mid-write) would glue onto this one: start on a fresh line.
        if self.path.exists() and self.path.stat().st_size and not self.path.read_bytes().endswith(b"\n"):
            line = "\n" + line
        with open(self.path, "a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        self.done[point_key(point)] = record

    def records(self):
        return list(self.done.values())

    def failed(self, point, error, message):
        """A point that raised `error` (its type's name) with `message`: the whole message appended to
        RESULTS/failures.log, and the one line the user is shown (the point, its benchmark, the message's first
        line). The point stays unstored: a rerun runs it."""
        text = message.strip() or "(no message)"
        with open(self.dir / "failures.log", "a") as f:
            f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} point {point_id(point)}: {error}: {text}\n")
        first, more = text.splitlines()[0], "\n" in text
        return (f"point {point_id(point)} ({point['benchmark']}) failed: {error}: {first}"
                + (f" (whole message in {self.dir / 'failures.log'})" if more else ""))


class Progress:
    """The campaign's progress line on the terminal: points done of the total (earlier runs included), the
    rate of this run and the time left at that rate."""

    def __init__(self, store, width=30):
        self.store, self.width = store, width
        self.start, self.ran = time.time(), 0

    def point_done(self, point, where=""):
        self.ran += 1
        done, total = len(self.store.done), self.store.total
        elapsed = time.time() - self.start
        rate = self.ran / elapsed if elapsed else 0.0
        left = (total - done) / rate if rate else 0.0
        bar = "#" * (self.width * done // total) + "." * (self.width - self.width * done // total)
        print(f"\r[{bar}] {done}/{total} points, {rate * 60:.1f}/min, {left:.0f} s left  {point_id(point)}"
              + (f" ({where})" if where else ""), file=sys.stderr, flush=True)


def write_manifest(store, campaign, builds=None, image=None):
    """manifest.json: the campaign, versions, git revision, and per target what was run: the sim models' gateware
    and firmware hashes (`builds`, {model name: SimBuild}), clock and topology; the QEMU image's hash, kernel,
    packages and machine; and where each stored point ran (host, worker, process) and on which sim model.
    Written when a run starts and again when it ends."""
    from monet.sim import BUILDS, MODELS, tool_versions
    manifest = {
        "campaign": campaign.name, "campaign_file": str(campaign.path), "campaign_sha256": campaign.digest,
        "campaign_text": campaign.text, "points": len(campaign.points()),
        "git_revision": git_revision(), "versions": tool_versions(),
    }
    if builds:
        # The SoC's facts from the largest model's csr.json (a smaller one lacks only its missing memories').
        # (The pooled model is the ddr4 model's cards and more: a one-requester model speaks for the SoC's facts.)
        ordinary = [name for name in builds if name in MODELS] or list(builds)
        largest = builds[max(ordinary, key=list(BUILDS).index)]
        hardware = {k: v for k, v in largest.constants.items() if not k.startswith("config_")}
        manifest.update({
            "sim_models": {name: {"gateware_hash": b.hash, "firmware_hash": b.firmware_hash, **BUILDS[name]}
                           for name, b in builds.items()},
            "nominal_clock_hz": NOMINAL_CLK_HZ,
            "topology": "sim: compute card -- SimChannel (N lanes, fiber, PHY) -- memory card "
                        f"({hardware['memcard_size'] >> 20} MiB on-card memory)",
            "hardware": hardware,
            "phy_model": {"tx_ui": PHY_TX_UI, "rx_ui": PHY_RX_UI, "fiber_ns_per_m": FIBER_NS_PER_M,
                          "source": "PG056 GTHE4 64-bit; n = 1.468"},
        })
    targets = {p["target"] for p in campaign.points()}
    if image is not None and "board" in targets:
        from monet import qemu
        from monet.board.target import BITSTREAM, STAND_IN
        # What a board run records (bitstream, board serials, cabling): on the stand-in there are none.
        manifest["board"] = {"board": STAND_IN, "machine": "xlnx-zcu102", "image_hash": image.hash,
                             "kernel_package": image.info["kernel_package"], "qemu": qemu.qemu_version(),
                             "node_memory_mb": list(qemu.MEMORY_MB), "bitstream": BITSTREAM,
                             "bitstream_sha256": None, "board_serials": None, "cabling": None,
                             "fpga": "no fabric: the load step reports it and is skipped"}
    if image is not None and "qemu" in targets:
        from monet import qemu
        manifest["qemu"] = {"image_hash": image.hash, **image.info, "machine": "virt", "cpu": "cortex-a53",
                            "cpus": qemu.CPUS, "node_memory_mb": list(qemu.MEMORY_MB),
                            "node_distance": qemu.NODE_DISTANCE, "qemu": qemu.qemu_version()}
    manifest["ran_on"] = {point_id(r["point"]): r["result"].get("ran_on") for r in store.records()}
    manifest["served_by"] = {point_id(r["point"]): r["result"]["model"] for r in store.records()
                             if "model" in r["result"]}
    (store.dir / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest
