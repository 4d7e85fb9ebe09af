"""STREAM (bench/stream) on every target, one result shape for all.

- host: the Linux program built for this machine, optionally under `numactl --membind=NODE`;
- sim: the soft CPU's console runs the kernels (`stream` command) on local RAM (node 0) or on remote memory
  through ReMAT and the link (node 1), at a programmed distance; MB/s come from mcycle at the nominal clock,
  IPC from minstret / mcycle;
- qemu: the aarch64 build inside the board-in-a-box image (monet.qemu), bound to a NUMA node (0 holds the
  CPUs, 1 stands for the remote memory).

Every result holds `kernels` {copy, scale, add, triad: {best_MBps, avg_s, min_s, max_s}}, `validates`, the
array size and repetitions, and how it was run.
"""

import re
import shutil
import subprocess
from pathlib import Path

from monet.link import model as link_model
from monet.link.settings import LinkSettings
from monet.locks import exclusive
from monet.repo import REPO
from monet.sim import link_setup

SOURCE = REPO / "bench" / "stream"
KERNELS = ("copy", "scale", "add", "triad")
# Soft CPU: 3 arrays of 4096 words (16 KiB each, 4 x the 4 KiB data cache, STREAM's sizing rule) and 3
# repetitions (the best of 2 timed): a remote point costs a few million cycles, minutes of simulation.
SIM_ELEMENTS, SIM_REPETITIONS = 4096, 3
# QEMU: 3 x 2M doubles (46 MiB, well above the emulated caches) and 5 repetitions, about a minute under TCG.
QEMU_ELEMENTS, QEMU_REPETITIONS = 2_000_000, 5
ARCHES = {"host": {}, "aarch64": {"CROSS": "aarch64-linux-gnu-", "STATIC": "1"}}


class StreamError(RuntimeError):
    """STREAM could not be built, run or read; the message says what and shows the output."""


def build(arch="host", build_root=REPO / "build" / "stream"):
    """Builds bench/stream for `arch` (host or aarch64, a static binary for the Linux image); returns its path."""
    if arch not in ARCHES:
        raise StreamError(f"STREAM arch {arch!r} is not known; accepted: {', '.join(ARCHES)}")
    out = Path(build_root).resolve() / arch     # absolute: make runs in bench/stream
    cmd = ["make", "-s", "-C", str(SOURCE), f"O={out}"] + [f"{k}={v}" for k, v in ARCHES[arch].items()]
    with exclusive(out.parent / f"{arch}.lock"):
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise StreamError(f"building STREAM for {arch} failed ({' '.join(cmd)}):\n{r.stdout}{r.stderr}")
    return out / "stream"


_ROW = re.compile(r"^(Copy|Scale|Add|Triad):\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)


def parse_output(text):
    """Reads STREAM's report: the four kernel rows, array size, repetitions, threads and the verdict."""
    rows = {m.group(1).lower(): m for m in _ROW.finditer(text)}
    if set(rows) != set(KERNELS):
        raise StreamError("STREAM output has no complete kernel table (Copy, Scale, Add, Triad); got:\n"
                          + text[-2000:])
    result = {"kernels": {k: {"best_MBps": float(m.group(2)), "avg_s": float(m.group(3)),
                              "min_s": float(m.group(4)), "max_s": float(m.group(5))} for k, m in rows.items()}}
    for key, pattern in (("n", r"Array size = (\d+)"), ("repetitions", r"executed (\d+) times"),
                         ("threads", r"Number of Threads counted = (\d+)"),
                         ("element_bytes", r"uses (\d+) bytes per array element")):
        m = re.search(pattern, text)
        result[key] = int(m.group(1)) if m else None
    result["validates"] = "Solution Validates" in text
    result["bad_elements"] = sum(int(n) for n in re.findall(r"(\d+) errors were found", text))
    return result


def host_command(binary, n, repetitions, threads=None, node=None, corrupt=False):
    """The command line that runs STREAM on Linux, bound to NUMA node `node` when given."""
    cmd = [str(binary), "-n", str(n), "-r", str(repetitions)]
    if threads:
        cmd += ["-t", str(threads)]
    if corrupt:
        cmd.append("--corrupt")
    if node is not None:
        cmd = ["numactl", f"--membind={node}"] + cmd
    return cmd


def run_host(n=10_000_000, repetitions=10, threads=None, node=None, corrupt=False, timeout=600):
    """STREAM on this machine; a failed validation is a result (validates false), not an error."""
    if node is not None and shutil.which("numactl") is None:
        raise StreamError("--node needs numactl on this machine (Debian package numactl)")
    cmd = host_command(build("host"), n, repetitions, threads, node, corrupt)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise StreamError(f"STREAM did not finish in {timeout} s: {' '.join(cmd)}") from None
    if r.returncode not in (0, 1):
        raise StreamError(f"STREAM failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    result = parse_output(r.stdout)
    result.update(target="host", node=node, command=" ".join(cmd))
    return result


def run_sim(target, node, link=LinkSettings(), n=SIM_ELEMENTS, repetitions=SIM_REPETITIONS, corrupt=False,
            window="uncached"):
    """STREAM on the soft CPU over LinkSettings `link`: node 0 is the compute card's local RAM, node 1 the
    memory behind ReMAT (the memory card's, or with the link's placement local the compute card's local
    memory), through the uncached window (one round trip a word) or the cacheable one (the data cache and
    ReMAT's combiner)."""
    if node not in (0, 1):
        raise StreamError(f"sim node {node!r} is not known; accepted: 0 (local RAM), 1 (remote memory)")
    configured = link_setup.configure_link(target, link)
    if node == 1:
        link_setup.map_remote_windows(target, bfct_target=configured["bfct_target"])
    if window not in link_setup.WINDOWS:
        raise StreamError(f"sim window {window!r} is not known; accepted: {', '.join(link_setup.WINDOWS)}")
    mem = ("cached" if window == "cached" else "remote") if node else "local"
    answer = target.fw.stream(mem=mem, n=n, reps=repetitions, corrupt=corrupt, wait=3600)
    clk = link_model.NOMINAL_CLK_HZ
    timed = repetitions - 1
    kernels = {}
    for name in KERNELS:
        k = answer["kernels"][name]
        kernels[name] = {"best_MBps": k["bytes"] / (k["min_cycles"] / clk) / 1e6, "avg_s": k["sum_cycles"] / timed / clk,
                         "min_s": k["min_cycles"] / clk, "max_s": k["max_cycles"] / clk,
                         "min_cycles": k["min_cycles"]}
    return {"target": "sim", "node": node, "kernels": kernels, "validates": answer["validates"],
            "bad_elements": sum(answer["bad"]), "n": n, "repetitions": repetitions, "threads": 1,
            "element_bytes": answer["word_bytes"], "cycles": answer["cycles"], "instret": answer["instret"],
            "ipc": answer["instret"] / answer["cycles"], "bus_fault": answer["fault"],
            "distance_m": link.distance_m, "lanes": link.lanes, "rate_gbps": link.rate_gbps,
            "link": link_setup.link_record(configured),
            "window": window if node else None}


def run_qemu(guest, node, n=QEMU_ELEMENTS, repetitions=QEMU_REPETITIONS, threads=4, perf=False, timeout=1800):
    """STREAM in the board-in-a-box guest (monet.qemu), arrays bound to NUMA `node` with numactl; with
    `perf`, under `perf stat` (cycles, instructions: emulated, so IPC is reported as not meaningful)."""
    from monet.workloads import perf as perf_stat
    guest.require_remote_node(node)
    command = " ".join(host_command("stream", n, repetitions, threads, node))
    if perf:
        command = " ".join(perf_stat.stat_command(output="/tmp/stream-perf.csv")) + " -- " + command
    status, output = guest.run(command, timeout=timeout, check=False)
    if status not in (0, 1):
        raise StreamError(f"STREAM failed in the guest (exit {status}): {command}\n{output[-2000:]}")
    result = parse_output(output)
    result.update(target="qemu", node=node, command=command)
    if perf:
        _, csv = guest.run("cat /tmp/stream-perf.csv")
        result.update(perf_stat.ipc_of(perf_stat.parse_stat(csv), emulated=True))
    return result
