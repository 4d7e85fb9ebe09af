"""Processes from /proc, for tests that kill a run and check what it leaves behind."""

import os
import time
from pathlib import Path


def _stat_fields(stat):
    """The fields of a /proc/PID/stat after the command name (which may hold spaces and parentheses)."""
    return stat.read_text().rsplit(")", 1)[1].split()


def processes():
    """{pid: (parent pid, state)} of every process, from /proc."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = _stat_fields(stat)
        except OSError:
            continue
        out[int(stat.parent.name)] = (int(fields[1]), fields[0])
    return out


def cpu_seconds(pid):
    """User and system CPU time process `pid` has used, in seconds."""
    fields = _stat_fields(Path(f"/proc/{pid}/stat"))
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sims_below(pid):
    """The running Vsim processes started (at any depth) by process `pid`."""
    return [p for p in below(pid) if _name(p) == "Vsim"]


def below(pid):
    """Every process started (at any depth) by process `pid`."""
    table, below, todo = processes(), [], [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, _) in table.items():
            if ppid == parent:
                below.append(child)
                todo.append(child)
    return below


def _name(pid):
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:   # it ended
        return None


def running(pids, within=0):
    """Those of `pids` still running (not ended, not a zombie) after waiting up to `within` seconds for them
    to end."""
    deadline = time.time() + within
    while True:
        table = processes()
        alive = [p for p in pids if p in table and table[p][1] != "Z"]
        if not alive or time.time() >= deadline:
            return alive
        time.sleep(0.1)
