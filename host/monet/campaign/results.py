"""A campaign's results folder as read back: its stored points (`results.jsonl`, one JSON object a line, as
`monet campaign run` appends them) and its manifest (`manifest.json`). The report, the models and the
campaign's own store (to resume) read it through here."""

import json
from pathlib import Path


def load(results_dir):
    """(the stored points, the manifest) of a results folder; a line a crash left half written is skipped."""
    d = Path(results_dir)
    path = d / "results.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; run `monet campaign run FILE --results {d}` first")
    return list(stored_lines(path)), read_manifest(d)


def stored_lines(path):
    """The JSON values of a results.jsonl's lines, a line a crash left half written skipped."""
    for line in path.read_text().splitlines():
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue


def read_manifest(results_dir):
    """A results folder's manifest.json (a campaign's or the models'), {} where there is none yet."""
    path = Path(results_dir) / "manifest.json"
    return json.loads(path.read_text()) if path.exists() else {}
