"""`make mutants`: mutation testing of the cores and the host's campaign, statistics and model modules.

Cosmic Ray (a field mutation tool) enumerates the mutants of every file in `tools/mutants.toml`, applies
each one and runs the tests that cover its file; this driver adds what our layout needs around it:
- a seeded uniform sample of `sample` mutants per file (all of them when a file has fewer), with the score's
  95 % Wilson interval for a sampled file;
- two worker trees (copies of the checkout under build/mutants/), one test run in each at a time, so that a
  mutant written into one tree is never seen by the other's tests. Each tree imports `monet` from itself
  through a symlinked package tree on PYTHONPATH (the venv's editable install points at the checkout) and
  shares the checkout's Verilator models (build/cores, keyed by Verilog text): after `make test` the
  unmutated models are built, and the mutants' models are removed when the run ends;
- a Cosmic Ray session per file (build/mutants/sessions/<file>.sqlite) keeps every result as it comes: a
  killed run resumes where it stopped, a changed file or test list restarts only that file's session, and
  `cr-report build/mutants/sessions/<file>.sqlite` shows any mutant's diff and output;
- survivors listed in doc/equivalent-mutants.md (file, line, operator) count as equivalent, not as missed.

Operators: every Cosmic Ray core operator (binary, comparison, unary and boolean operator replacement,
numbers, True/False, break/continue, exception replacement, decorator removal, zero-iteration loops).
Cosmic Ray does not mutate strings, so signal names and CSR descriptions are never mutated.
"""

import argparse
import hashlib
import math
import os
import queue
import random
import shutil
import subprocess
import sys
import threading
import time
import traceback
import tomllib
from contextlib import ExitStack
from pathlib import Path

from cosmic_ray.commands.init import init as cosmic_ray_init
from cosmic_ray.mutating import use_mutation
from cosmic_ray.plugins import get_operator
from cosmic_ray.testing import run_tests
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "tools" / "mutants.toml"
EQUIVALENTS = ROOT / "doc" / "equivalent-mutants.md"
OUT = ROOT / "build" / "mutants"
TARGET = 0.85
Z95 = 1.959963984540054


class MutantsError(Exception):
    """A configuration or checkout problem, reported without a traceback."""


def wilson_interval(killed, total, z=Z95):
    """95 % Wilson score interval of a kill rate measured on a sample."""
    if total == 0:
        return 0.0, 1.0
    p = killed / total
    centre = p + z * z / (2 * total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    return (centre - half) / (1 + z * z / total), (centre + half) / (1 + z * z / total)


def load_config(path=CONFIG):
    cfg = tomllib.loads(path.read_text())
    return cfg.get("settings", {}), cfg.get("files", {})


def check_files(files, path=CONFIG):
    for name, tests in files.items():
        if not (ROOT / name).is_file():
            raise MutantsError(f"{path.name}: file {name!r} does not exist")
        for t in tests:
            if not (ROOT / t.split("::")[0]).is_file():
                raise MutantsError(f"{path.name}: test {t!r} of {name!r} does not exist")


def load_equivalents(path=EQUIVALENTS):
    """{(file, line, operator)} from the rows of the equivalent-mutants table: | file | line | operator | why |."""
    found = set()
    if not path.exists():
        return found
    for row in path.read_text().splitlines():
        cells = [c.strip().strip("`") for c in row.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[1].isdigit():
            found.add((cells[0], int(cells[1]), cells[2]))
    return found


def session_paths(name):
    """The session database and its stamp for one listed file (build/mutants/sessions/<file>.sqlite)."""
    slug = name.replace("/", "__")
    return OUT / "sessions" / f"{slug}.sqlite", OUT / "sessions" / f"{slug}.stamp"


def session_stamp(name, tests, sample, seed):
    """What a file's session was made from: the file's text, its test selection, the sample and the seed."""
    h = hashlib.sha256(name.encode() + (ROOT / name).read_bytes())
    h.update(" ".join(tests).encode())
    return f"{h.hexdigest()} sample={sample} seed={seed}"


def _spec(item):
    return item.mutations[0]


def _key(spec):
    return (str(spec.module_path), spec.operator_name, spec.occurrence)


def open_session(name, tests, sample, seed, fresh):
    """A file's Cosmic Ray session: created (all mutants enumerated, the unsampled ones marked skipped)
    unless one made from the same text, tests, sample and seed exists. Each file samples with its own
    generator (seeded by the seed and the file's name), so a file draws the same mutants whether it runs
    alone (`--files`) or with the others."""
    db_path, stamp_path = session_paths(name)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    stamp = session_stamp(name, tests, sample, seed)
    if not fresh and db_path.exists() and stamp_path.exists() and stamp_path.read_text() == stamp:
        return db_path, False
    db_path.unlink(missing_ok=True)
    cwd = os.getcwd()
    os.chdir(ROOT)      # Cosmic Ray records module paths as given: keep them relative to the root
    try:
        with use_db(str(db_path), WorkDB.Mode.create) as db:
            cosmic_ray_init([Path(name)], db, {})
            items = sorted(db.work_items, key=lambda i: _key(_spec(i)))
            if len(items) > sample:
                keep = set(id(i) for i in random.Random(f"{seed}:{name}").sample(items, sample))
                db.set_multiple_results([i.job_id for i in items if id(i) not in keep],
                                        WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
    finally:
        os.chdir(cwd)
    stamp_path.write_text(stamp)
    return db_path, True


def make_tree(index):
    """A worker tree: the checkout's files (tracked and new, not ignored; none it no longer has) and a `monet`
    package of symlinks into it, so `PYTHONPATH=<tree>/build/imports` imports the tree's code. Every module and
    subpackage of host/monet is linked: one left out would be imported from the checkout by the venv's editable
    install, which would then test the unmutated code."""
    tree = OUT / f"tree-{index}"
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src, dst = ROOT / name, tree / name
        if not src.is_file():
            continue
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    # A file the checkout no longer has (moved or deleted since the tree was made) goes too: a stale module
    # would still be linked into the package below and imported.
    kept = set(filter(None, names))
    for top in tree.iterdir():
        if top.name == "build":      # the tree's own: the package of links below, the mutants' models
            continue
        for path in [top] if top.is_file() else top.rglob("*"):
            if path.is_file() and str(path.relative_to(tree)) not in kept:
                path.unlink()
    pkg = tree / "build" / "imports" / "monet"
    if pkg.exists():
        shutil.rmtree(pkg)
    pkg.mkdir(parents=True)
    for f in (tree / "host" / "monet").iterdir():
        if f.suffix == ".py" or (f / "__init__.py").is_file():
            (pkg / f.name).symlink_to(f)
    (pkg / "cores").symlink_to(tree / "litex" / "cores")
    (pkg / "soc").symlink_to(tree / "litex" / "soc")
    return tree


MODELS = ROOT / "build" / "cores"


def test_command(tree, tests):
    """pytest on `tests` in a worker tree. Every tree shares the checkout's Verilator models and ccache
    (models are keyed by their Verilog text): an unmutated model `make test` built is reused, not rebuilt."""
    return (f"env PYTHONPATH={tree / 'build' / 'imports'} MONET_CORE_MODELS={MODELS} "
            f"CCACHE_DIR={ROOT / 'build' / 'ccache'} {sys.executable} -m pytest -x -q -p no:cacheprovider "
            f"-p no:randomly --rootdir={tree} " + " ".join(str(tree / t) for t in tests))


def baseline(trees, files):
    """Run every distinct test selection once, unmutated, the trees taking them in turn: it must pass
    (else the scores mean nothing), it builds any unmutated core model not yet built, and its time sets
    the mutants' timeout."""
    selections = queue.Queue()
    for tests in sorted({tuple(t) for t in files.values()}):
        selections.put(tests)
    times, failures = {}, []

    def one(tree):
        while not failures:
            try:
                tests = selections.get_nowait()
            except queue.Empty:
                return
            start = time.monotonic()
            outcome, output = run_tests(test_command(tree, tests), 3600)
            if outcome != TestOutcome.SURVIVED:
                failures.append(f"the unmutated tests fail in {tree}: {' '.join(tests)}\n{output[-3000:]}")
                return
            times[tests] = time.monotonic() - start
            print(f"baseline {times[tests]:6.1f} s  {' '.join(tests)}", flush=True)

    threads = [threading.Thread(target=one, args=(tree,)) for tree in trees]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise MutantsError(failures[0])
    return times


def prune_models(keep):
    """Remove the core models built since `keep` was listed: the mutants' (a mutant's model is never
    built again unless it is run again)."""
    for folder in MODELS.iterdir():
        if folder.name not in keep:
            shutil.rmtree(folder, ignore_errors=True) if folder.is_dir() else folder.unlink(missing_ok=True)


def run(args):
    settings, files = load_config()
    if args.files:
        unknown = [f for f in args.files if f not in files]
        if unknown:
            raise MutantsError(f"--files: {', '.join(unknown)} not in tools/mutants.toml; accepted: "
                               + ", ".join(files))
        files = {f: files[f] for f in args.files}
    check_files(files)
    sample = args.sample or int(settings.get("sample", 40))
    seed = args.seed if args.seed is not None else int(settings.get("seed", 1))
    factor = float(settings.get("timeout_factor", 4))
    equivalents = load_equivalents()
    start = time.monotonic()
    with ExitStack() as stack:
        dbs, pending = {}, []
        for name, tests in files.items():
            db_path, created = open_session(name, tests, sample, seed, args.fresh)
            dbs[name] = db = stack.enter_context(use_db(str(db_path), WorkDB.Mode.open))
            mine = list(db.pending_work_items)
            if args.survivors:      # not those written up as equivalent: no test can kill them
                mine += [i for i, r in db.completed_work_items
                         if r.test_outcome == TestOutcome.SURVIVED and _equiv_key(i) not in equivalents]
            pending += [(name, i) for i in mine]
            print(f"session {db_path.relative_to(ROOT)} ({'new' if created else 'resumed'}): {len(mine)} to run",
                  flush=True)
        print(f"sample {sample} a file, seed {seed}", flush=True)
        pending.sort(key=lambda p: _key(_spec(p[1])))
        if pending:
            trees = [make_tree(i) for i in range(args.workers)]
            MODELS.mkdir(parents=True, exist_ok=True)
            times = baseline(trees, {name: files[name] for name, _ in pending})
            stack.callback(prune_models, {f.name for f in MODELS.iterdir()})
            jobs, results = queue.Queue(), queue.Queue()
            for job in pending:
                jobs.put(job)

            def worker(tree):
                while True:
                    try:
                        name, item = jobs.get_nowait()
                    except queue.Empty:
                        return
                    spec = _spec(item)
                    tests = files[name]
                    operator = get_operator(spec.operator_name)(**spec.operator_args)
                    t0 = time.monotonic()
                    try:
                        with use_mutation(tree / spec.module_path, operator, spec.occurrence) as (_, mutated):
                            if mutated is None:
                                result = WorkResult(worker_outcome=WorkerOutcome.NO_TEST)
                            else:
                                outcome, output = run_tests(test_command(tree, tests),
                                                            factor * times[tuple(tests)] + 30)
                                result = WorkResult(worker_outcome=WorkerOutcome.NORMAL, test_outcome=outcome,
                                                    output=output[-20000:], diff=_diff(tree, spec))
                    except Exception:   # Cosmic Ray cannot make this mutant (its ExceptionReplacer on a dotted
                        # name raises): recorded as such, not run; a dead worker would leave the run waiting
                        result = WorkResult(worker_outcome=WorkerOutcome.EXCEPTION, output=traceback.format_exc())
                    results.put((name, item, result, time.monotonic() - t0))

            threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in trees]
            for t in threads:
                t.start()
            for n in range(1, len(pending) + 1):
                name, item, result, took = results.get()
                dbs[name].set_result(item.job_id, result)
                spec = _spec(item)
                elapsed = time.monotonic() - start
                eta = elapsed / n * (len(pending) - n)
                print(f"[{n}/{len(pending)}] {spec.module_path}:{spec.start_pos[0]} {spec.operator_name} "
                      f"{(result.test_outcome or result.worker_outcome).value} {took:.0f} s  (ETA {eta / 60:.0f} min)",
                      flush=True)
            for t in threads:
                t.join()
        return report(dbs, time.monotonic() - start)


def _diff(tree, spec):
    """The mutated line as it reads in the tree, for the survivors' list."""
    lines = (tree / spec.module_path).read_text().splitlines()
    row = spec.start_pos[0]
    return lines[row - 1].strip() if 0 < row <= len(lines) else ""


def report(dbs, seconds):
    """Per-file scores from each file's session, the survivors, and PASS/FAIL; returns the exit status."""
    equivalents = load_equivalents()
    rows, survivors, ok = [], [], True
    for name, db in dbs.items():
        mine = list(db.completed_work_items)
        population = len(mine)
        ran = [(i, r) for i, r in mine if r.worker_outcome == WorkerOutcome.NORMAL]
        missed_all = [(i, r) for i, r in ran if not r.is_killed]
        equiv = [(i, r) for i, r in missed_all if _equiv_key(i) in equivalents]
        missed = [(i, r) for i, r in missed_all if _equiv_key(i) not in equivalents]
        counted = [(i, r) for i, r in ran if r.is_killed] + missed
        killed = len(counted) - len(missed)
        survivors += missed
        score = killed / len(counted) if counted else float("nan")
        sampled = any(r.worker_outcome == WorkerOutcome.SKIPPED for _, r in mine)
        low, high = wilson_interval(killed, len(counted)) if sampled else (score, score)
        passed = bool(counted) and low >= TARGET
        ok &= passed
        rows.append((name, population, len(ran), len(equiv), killed, len(counted), score, low, high, sampled, passed))
    print(f"\n{'file':34} {'mutants':>7} {'run':>4} {'equiv':>5} {'killed':>9} {'score':>6}  {'95 % interval':>13}")
    for name, population, ran, equiv, killed, counted, score, low, high, sampled, passed in rows:
        interval = f"{low:.0%}-{high:.0%}" if sampled else "(all run)"
        print(f"{name:34} {population:7} {ran:4} {equiv:5} {killed:4}/{counted:<4} {score:6.0%}  {interval:>13}  "
              f"{'PASS' if passed else 'FAIL'}")
    if survivors:
        print("\nSurviving mutants (add a test that kills each, or an entry in doc/equivalent-mutants.md):")
        for item, result in sorted(survivors, key=lambda s: _key(_spec(s[0]))):
            spec = _spec(item)
            print(f"  {spec.module_path}:{spec.start_pos[0]}  {spec.operator_name.split('/')[-1]}  "
                  f"occurrence {spec.occurrence}: {result.diff}")
    print(f"\n{seconds / 60:.1f} min; target: at least {TARGET:.0%} killed in every file (a sampled file's "
          f"interval's lower end): {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def _equiv_key(item):
    spec = _spec(item)
    return (str(spec.module_path), spec.start_pos[0], spec.operator_name.split("/")[-1])


def main(argv=None):
    p = argparse.ArgumentParser(prog="make mutants", description=__doc__.splitlines()[0])
    p.add_argument("--files", nargs="+", help="only these files of tools/mutants.toml")
    p.add_argument("--sample", type=int, help="mutants run per file (default: tools/mutants.toml)")
    p.add_argument("--seed", type=int, help="sampling seed (default: tools/mutants.toml)")
    p.add_argument("--workers", type=int, default=2, choices=[1, 2, 3, 4], help="worker trees (default 2)")
    p.add_argument("--fresh", action="store_true", help="start a new session even if one matches")
    p.add_argument("--survivors", action="store_true",
                   help="run the session's surviving mutants again, less those written up as equivalent "
                        "(after adding tests that should kill them)")
    args = p.parse_args(argv)
    if args.sample is not None and args.sample < 1:
        p.error(f"--sample: {args.sample} is not accepted; accepted: a positive integer")
    try:
        return run(args)
    except MutantsError as e:
        print(f"mutants: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
