"""The repository the host code runs from: its root (`REPO`, where the sources, `build/` and `doc/` are) and
its git revision. At the bottom of the host's import order: it imports nothing of the project."""

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def git_revision(repo=REPO):
    """The commit checked out at `repo`, with `-dirty` when a tracked file differs from it; None outside git."""
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None
