"""YCSB against memcached: the real YCSB core (Maven Central site.ycsb:core 0.17.0) with our binding
(bench/ycsb, spymemcached), workloads A, B, C and F, and a parser of YCSB's report.

- `build()` runs Maven once (again only when bench/ycsb changes) and returns the class path.
- `Memcached` starts a real memcached on a free loopback port (under `numactl --membind` for a NUMA node).
- `run()` loads the records and runs one workload, `parse_output()` reads YCSB's "[SECTION], metric, value"
  lines into ops/s, average and p99 latency per operation type and for the mix.
"""

import hashlib
import re
import shutil
import socket
import subprocess

from monet.locks import exclusive
from monet.loopback import Server, ServerError, free_port
from monet.repo import REPO

SOURCE = REPO / "bench" / "ycsb"
BUILD = REPO / "build" / "ycsb"
WORKLOADS = ("a", "b", "c", "f")
BINDING = "org.monetopen.ycsb.MemcachedBinding"
# The paper's setting (T8): 4 client threads, 10K operations, zipfian.
THREADS, OPERATIONS = 4, 10_000
# Operation types that YCSB records inside a read-modify-write as well as on their own.
TOP_LEVEL = ("READ", "UPDATE", "INSERT", "SCAN", "DELETE", "READ-MODIFY-WRITE")


class YcsbError(RuntimeError):
    """YCSB, Maven or memcached failed; the message says which and shows their output."""


def _source_digest():
    h = hashlib.sha256()
    for p in sorted(SOURCE.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(SOURCE)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build(log=print):
    """Builds the binding with Maven (downloads YCSB core and spymemcached the first time); returns the
    class path. Skipped when the sources have not changed since the last build."""
    stamp = BUILD / "build.ok"
    digest = _source_digest()
    jar, lib = BUILD / "monet-ycsb.jar", BUILD / "lib"
    with exclusive(BUILD.parent / "ycsb.lock"):
        if not (stamp.exists() and stamp.read_text() == digest and jar.exists()):
            if shutil.which("mvn") is None:
                raise YcsbError("Maven (mvn) is not installed; `make setup` installs it (Debian package maven)")
            log("ycsb: building the memcached binding with Maven (YCSB core from Maven Central)")
            r = subprocess.run(["mvn", "-q", "-B", "-f", str(SOURCE / "pom.xml"), "package"], capture_output=True,
                               text=True)
            if r.returncode != 0 or not jar.exists():
                raise YcsbError(f"Maven build of bench/ycsb failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
            stamp.write_text(digest)
    return ":".join([str(jar)] + sorted(str(p) for p in lib.glob("*.jar")))


def probe_memcached(host, port, timeout=10):
    """Asks memcached for its version: proves the path (a forwarded port too) carries requests."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(b"version\r\n")
            answer = s.recv(100)
    except OSError as e:
        answer = str(e).encode()
    if not answer.startswith(b"VERSION"):
        raise YcsbError(f"memcached at {host}:{port} does not answer ({answer[:60]!r})")
    return answer.split()[1].decode()


class Memcached(Server):
    """A memcached on 127.0.0.1 (never another interface), stopped on exit."""

    stop_grace = 5

    def __init__(self, node=None, memory_mb=64, threads=4):
        if shutil.which("memcached") is None:
            raise YcsbError("memcached is not installed; `make setup` installs it (Debian package memcached)")
        if node is not None and shutil.which("numactl") is None:
            raise YcsbError("a NUMA node needs numactl (Debian package numactl)")
        port = free_port()
        cmd = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", str(memory_mb),
               "-t", str(threads), "-u", "nobody"]
        self.command = (["numactl", f"--membind={node}"] if node is not None else []) + cmd
        try:
            Server.__init__(self, self.command, port, "memcached", 10, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
        except ServerError as e:
            raise YcsbError(f"{e}: {' '.join(self.command)}") from None

    @property
    def hosts(self):
        return f"127.0.0.1:{self.port}"


def client_command(classpath, phase, workload_file, hosts, threads=THREADS, operations=OPERATIONS,
                   java="java"):
    """The YCSB client's command line for `phase` (load or run)."""
    flag = {"load": "-load", "run": "-t"}[phase]
    return [java, "-cp", classpath, "site.ycsb.Client", flag, "-db", BINDING, "-P", str(workload_file),
            "-threads", str(threads), "-p", f"operationcount={operations}", "-p", f"memcached.hosts={hosts}"]


def workload_file(workload):
    if workload not in WORKLOADS:
        raise YcsbError(f"YCSB workload {workload!r} is not shipped; accepted: {', '.join(WORKLOADS)}")
    return SOURCE / "workloads" / f"workload{workload}"


def run(workload, hosts, threads=THREADS, operations=OPERATIONS, timeout=900, measure=None, log=print):
    """Loads the records, runs `workload` against memcached at `hosts`; returns the run phase's figures.
    `measure` (start() / stop() -> dict, e.g. perf.AttachedStat on the server) covers the run phase only."""
    classpath = build(log)
    wl = workload_file(workload)
    out = {}
    for phase in ("load", "run"):
        cmd = client_command(classpath, phase, wl, hosts, threads, operations)
        if phase == "run" and measure:
            measure.start()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise YcsbError(f"YCSB {phase} of workload {workload} did not finish in {timeout} s") from None
        finally:
            counters = measure.stop() if phase == "run" and measure else {}
        if r.returncode != 0:
            raise YcsbError(f"YCSB {phase} of workload {workload} failed (exit {r.returncode}):\n"
                            f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
        out[phase] = parse_output(r.stdout)
    result = out["run"]
    result.update(workload=workload, threads=threads, load_ops_per_s=out["load"]["ops_per_s"], **counters)
    return result


def run_host(workload, node=None, threads=THREADS, operations=OPERATIONS, log=print):
    """A workload against a memcached on this machine (bound to NUMA `node` when given), with perf stat on
    the server during the run phase where perf exists."""
    import tempfile
    from monet.workloads import perf
    with Memcached(node=node) as server, tempfile.TemporaryDirectory() as tmp:
        result = run(workload, server.hosts, threads, operations, log=log,
                     measure=perf.AttachedStat(server.proc.pid, f"{tmp}/perf.csv"))
    result.update(target="host", node=node, server=" ".join(server.command))
    return result


_LINE = re.compile(r"^\[([A-Z0-9_-]+)\],\s*([^,]+?),\s*([-+0-9.eE]+|NaN)\s*$")


def parse_output(text):
    """YCSB's report -> {ops_per_s, runtime_ms, operations, avg_latency_us, p99_latency_us, per_operation,
    failed}. The mix's average weighs each top-level operation type by its count (reads inside a
    read-modify-write are counted once, under it); its p99 is the largest per-type p99."""
    sections = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            sections.setdefault(m.group(1), {})[m.group(2).strip()] = float(m.group(3))
    overall = sections.get("OVERALL", {})
    if "Throughput(ops/sec)" not in overall:
        raise YcsbError("YCSB output has no [OVERALL] throughput line; got:\n" + text[-2000:])
    per_op, failed = {}, 0
    for name, m in sections.items():
        if name not in TOP_LEVEL or "Operations" not in m:
            continue
        # YCSB counts return codes for reads and updates, not for the read-modify-write around them.
        ok = m.get("Return=OK") if any(k.startswith("Return=") for k in m) else None
        bad = sum(v for k, v in m.items() if k.startswith("Return=") and k != "Return=OK")
        per_op[name] = {"operations": int(m["Operations"]), "avg_us": m.get("AverageLatency(us)"),
                        "min_us": m.get("MinLatency(us)"), "max_us": m.get("MaxLatency(us)"),
                        "p95_us": m.get("95thPercentileLatency(us)"), "p99_us": m.get("99thPercentileLatency(us)"),
                        "ok": None if ok is None else int(ok), "failed": int(bad)}
        failed += int(bad)
    counts = {k: v["operations"] for k, v in per_op.items()}
    if "READ-MODIFY-WRITE" in counts:
        for inner in ("READ", "UPDATE"):
            if inner in counts:
                counts[inner] = max(counts[inner] - counts["READ-MODIFY-WRITE"], 0)
    total = sum(counts.values())
    avg = sum(counts[k] * per_op[k]["avg_us"] for k in counts if counts[k]) / total if total else None
    p99s = [per_op[k]["p99_us"] for k in counts if counts[k] and per_op[k]["p99_us"] is not None]
    return {"ops_per_s": overall["Throughput(ops/sec)"], "runtime_ms": overall.get("RunTime(ms)"),
            "operations": total, "avg_latency_us": avg, "p99_latency_us": max(p99s) if p99s else None,
            "per_operation": per_op, "failed": failed}


def run_qemu(guest, workload, node=1, threads=THREADS, operations=OPERATIONS, log=print):
    """A workload against memcached in the board-in-a-box guest, its memory bound to NUMA `node` by the
    overlay's monet-memcached, reached through the guest's forwarded loopback port; perf stat on the server
    during the run phase (emulated counters: IPC reported as not meaningful)."""
    from monet.workloads import perf
    if not guest.forward_port:
        raise YcsbError("the guest was booted without a forwarded port for memcached")
    guest.require_remote_node(node)
    _, out = guest.run(f"monet-memcached {node} 11211 64 4", timeout=60)   # returns once it listens
    pid = int(out.split()[-1])
    try:
        version = probe_memcached("127.0.0.1", guest.forward_port)
        result = run(workload, f"127.0.0.1:{guest.forward_port}", threads, operations, log=log,
                     measure=perf.GuestStat(guest, pid))
    finally:
        guest.stop_process(pid)
    result.update(target="qemu", node=node, memcached_version=version,
                  server=f"monet-memcached {node} (numactl --membind={node} memcached)")
    return result
