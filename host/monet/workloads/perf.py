"""perf stat on Linux (host or guest): cycles and instructions -> IPC, and honest about when there is none.

`perf stat -x, -e cycles,instructions` writes one CSV line an event: value, unit, event name, ... A value
of "<not supported>" or "<not counted>" means no counter: IPC is then None with the reason, never 0.
Under emulation (QEMU TCG) `cycles` counts a virtual clock and `instructions` is not supported, or with
-icount both count but IPC is 1.00 by construction: such IPC is flagged as not meaningful.
"""

import shutil
import signal
import subprocess
import time

EVENTS = ("cycles", "instructions")


def stat_command(pid=None, events=EVENTS, output=None):
    """perf stat attached to `pid` (or, with pid None, to the command appended by the caller)."""
    cmd = ["perf", "stat", "-x,", "-e", ",".join(events)]
    if output:
        cmd += ["-o", str(output)]
    if pid is not None:
        cmd += ["-p", str(pid)]
    return cmd


def parse_stat(text):
    """CSV lines of `perf stat -x,` -> {event: count or None}."""
    counts = {}
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) < 3 or line.startswith("#"):
            continue
        value, event = fields[0].strip(), fields[2].strip()
        event = event.split(":")[0].replace("cpu_core/", "").rstrip("/")
        if not event:
            continue
        try:
            counts[event] = float(value)
        except ValueError:
            counts[event] = None  # <not supported> / <not counted>
    return counts


def ipc_of(counts, emulated=False):
    """{"ipc", "ipc_note", "cycles", "instructions"}: IPC only where both counters counted on real hardware."""
    cycles, instructions = counts.get("cycles"), counts.get("instructions")
    out = {"cycles": cycles, "instructions": instructions, "ipc": None, "ipc_note": None}
    if cycles is None or instructions is None or not cycles:
        missing = [e for e in EVENTS if counts.get(e) is None]
        out["ipc_note"] = ("no hardware counters here: " + ", ".join(missing or ["cycles"]) + " not supported"
                           + (" (emulation)" if emulated else ""))
    elif emulated:
        out["ipc_note"] = "emulation: cycles and instructions are not a real core's, IPC is not meaningful"
    else:
        out["ipc"] = instructions / cycles
    return out


class AttachedStat:
    """perf stat attached to a running process on this machine, from start() to stop()."""

    def __init__(self, pid, output):
        self.output = output
        self.proc = None
        self.available = shutil.which("perf") is not None
        self.pid = pid

    def start(self):
        if self.available:
            self.proc = subprocess.Popen(stat_command(self.pid, output=self.output), stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            time.sleep(0.2)   # perf attaches before the measured work starts
        return self

    def stop(self):
        """Ends the measurement; returns ipc_of() of what perf counted (or why there is nothing)."""
        if not self.available:
            return {"cycles": None, "instructions": None, "ipc": None, "ipc_note": "perf is not installed"}
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        try:
            text = open(self.output).read()
        except OSError:
            text = ""
        return ipc_of(parse_stat(text))


class GuestStat:
    """perf stat attached to a process in the QEMU guest (monet.qemu), from start() to stop()."""

    def __init__(self, guest, pid, output="/tmp/monet-perf.csv"):
        self.guest, self.pid, self.output = guest, pid, output

    def start(self):
        cmd = " ".join(stat_command(self.pid, output=self.output))
        self.guest.run(f"{cmd} >/dev/null 2>&1 & echo $! > /tmp/monet-perf.pid; sleep 1")
        return self

    def stop(self):
        self.guest.run("kill -INT $(cat /tmp/monet-perf.pid); sleep 1", check=False)
        _, text = self.guest.run(f"cat {self.output}", check=False)
        return ipc_of(parse_stat(text), emulated=True)
