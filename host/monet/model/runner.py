"""`monet model topology|power|fmu`: read a model's YAML input, take measured figures from a campaign's results
store when asked (`--from RESULTS`), run the model with a progress line, store its result as a campaign
stores points (one JSON file written whole, and a manifest), and write its report."""

import hashlib
import importlib
import json
import os
import sys
import time
from pathlib import Path

import yaml

from monet.campaign.results import load, read_manifest
from monet.model import ModelInputError
from monet.repo import git_revision

MODELS = ("topology", "power", "fmu")


def load_input(path):
    """A model input file's mapping and text; an absent file means every default."""
    if path is None:
        return {}, ""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ModelInputError(f"{path}: cannot be read ({e.strerror}); give a model input YAML file") from None
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ModelInputError(f"{path}: not YAML ({str(e).splitlines()[0]})") from None
    if config is None:
        return {}, text
    if not isinstance(config, dict):
        raise ModelInputError(f"{path}: holds a {type(config).__name__}; give a mapping of the model's inputs")
    return config, text


def load_records(results_dir):
    """A campaign's stored points, for `--from RESULTS`."""
    try:
        return load(results_dir)[0]
    except FileNotFoundError:
        raise ModelInputError(f"--from {results_dir}: no results.jsonl there; give a folder that "
                              "`monet campaign run FILE --results DIR` wrote") from None


class ProgressLine:
    """done/total, the work item and the time so far, on one terminal line (stderr)."""

    def __init__(self, model):
        self.model, self.start, self.last = model, time.time(), 0.0

    def __call__(self, done, total, what):
        now = time.time()
        if done < total and now - self.last < 0.5:
            return
        self.last = now
        print(f"\r{self.model}: {done}/{total} {what}  {now - self.start:.1f} s", end="" if done < total else "\n",
              file=sys.stderr, flush=True)


def run(name, config, records=None, progress=None):
    """Run model `name` on `config`, with measured figures from `records` where the model takes them."""
    if name not in MODELS:
        raise ModelInputError(f"model {name!r} does not exist; give one of {', '.join(MODELS)}")
    module = importlib.import_module(f"monet.model.{name}")
    t0 = time.time()
    result = module.run(config, progress=progress, records=records)
    result["wall_s"] = time.time() - t0
    return result


def store(results_dir, name, result, input_path=None, input_text="", from_dir=None):
    """model-NAME.json (written whole: a crash leaves the previous file or none) and manifest.json."""
    from monet.sim import tool_versions
    out = Path(results_dir)
    out.mkdir(parents=True, exist_ok=True)
    _write_whole(out / f"model-{name}.json", json.dumps(result, indent=1))
    manifest = read_manifest(out)
    manifest.setdefault("models", {})[name] = {
        "input_file": str(input_path) if input_path else None, "input_text": input_text,
        "input_sha256": hashlib.sha256(input_text.encode()).hexdigest(),
        "measured_from": str(from_dir) if from_dir else None, "wall_s": result["wall_s"],
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    manifest.update({"git_revision": git_revision(), "versions": tool_versions()})
    _write_whole(out / "manifest.json", json.dumps(manifest, indent=1))
    return out / f"model-{name}.json"


def _write_whole(path, text):
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def stored_results(results_dir):
    """The model results stored in a folder: {name: result}."""
    d = Path(results_dir)
    return {name: json.loads((d / f"model-{name}.json").read_text())
            for name in MODELS if (d / f"model-{name}.json").exists()}


def report_sections(results, out):
    """Each stored model's report sections, in MODELS order."""
    sections = []
    for name, result in results.items():
        sections += importlib.import_module(f"monet.model.{name}").sections(result, Path(out))
    return sections


def print_summary(name, result):
    """The model's headline figures (and its pass/fail against the paper where it has one) on stdout."""
    for line in importlib.import_module(f"monet.model.{name}").summary(result):
        print(line)
