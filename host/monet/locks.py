"""One builder at a time: a lock file held with flock around a build that parallel processes may share
(pytest-xdist workers, campaign workers, two shells). The lock ends with its process, so a crashed builder
never blocks the next one; each build decides from its own stamp whether anything is left to do."""

import fcntl
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(path):
    """Holds an exclusive lock on the file `path` (created, with its folder, when missing)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
