"""Flexible Memory Units (FMU): MPI messages buffered in an optically switched, disaggregated memory pool
instead of crossing an InfiniBand network (Palma et al. 2024, "Inter-Node Message Passing Through Optical
Reconfigurable Memory Channel", seeds/004). The sender writes a message into an FMU and leaves; the receiver
reads it out later, so the message crosses a memory channel twice. This module holds the paper's analytic cost
model, its FMU mapping policies, and a trace-driven MPI simulation that compares InfiniBand, FMU and the hybrid
(IB below the pivot size, FMU at and above it), fed with link latency and bandwidth that can be our measured ones.

Sources (section and equation numbers are the paper's):
- s.IV.A, Eq 1-2: T_access = 4 T_ocm + T_map + T_queue + T_switch + S/BW, with T_acquire = 2 T_ocm + T_map +
  T_switch and T_copy = S/BW. Eq 2 drops T_ocm and T_map (ns against us); both are parameters here, 0 by default.
- s.IV.B, Eq 3-5: the sender is done when its write ends (Eq 3); the receiver's read cannot start before the
  write ends (Eq 4); without contention a transfer costs 2 (T_switch + S/BW) (Eq 5).
- s.IV.C, Eq 6-7: a packet-switched network costs T_L + S/BW_net (Eq 6); the pivot size S^ solves
  T_L + S^/BW_net = 2 T_switch + 2 S^/BW_mem (Eq 7).
- s.III.C: the OCS holds one FIFO queue per FMU; an FMU is connected to one node's CFMU at a time and a CFMU
  to one FMU. FMU_acquire maps a send to an FMU in two stages, TRY IDLE (NONE, RANDOM, SIMPLE, LEAST_S,
  LEAST_SR, over FMUs with an empty queue and no CFMU attached) then AMONG ALL (RANDOM, LEAST_S, LEAST_SR,
  STATIC = rx rank mod M, INCREMENTAL = gi mod M); the receiver's acquire returns the sender's FMU.
- s.III.D: accesses of one node to one FMU are coalesced (several messages in one acquire/release window).
- s.V: the simulator replays SimGrid time-independent traces, models IB as an ideal RDMA transfer with
  packet-switch contention and the FMU as circuit switched; s.VI, Table 3: the parameters (the defaults here);
  s.VI.B and Table 4: the Ring_Bcast, Ring_Reduce, Ring_Allreduce synthetic benchmarks; s.VII.A, Fig 13: their
  speedups (16 MB, 64 FMUs: Bcast 5.18x, Reduce and Allreduce 3.02x on average; 32 KB slower than IB).
- SimGrid's time-independent trace actions and their arguments (src/smpi/internals/smpi_replay.cpp); the
  16 B that SimGrid adds to every message; the MPICH binomial-tree broadcast and reduce.

Assumptions (ours, where the paper is silent or loose):
- Ranks: one rank per node, so one NIC and one CFMU per rank (Table 3). Computation runs at compute.gflops.
- A collective is replayed as the blocking point-to-point messages of its algorithm, one after another in the
  rank's order: Bcast and Reduce are MPICH binomial trees; Allreduce is a Reduce to rank 0 then a Bcast from
  rank 0 (s.VI.B); Barrier is linear (everyone to rank 0, then rank 0 to everyone), 0-byte messages. A
  reduce's computation (its trace's comp_size flops) runs after its messages, as in SimGrid.
- Every message carries 16 B more than its payload (SimGrid's MPI overhead) in both IB and FMU transfers; the
  analytic Eq 5-7 figures do not (they are the paper's formulas).
- InfiniBand (Eq 6): a transfer waits T_L, then moves its bytes. Messages up to ib.eager_threshold_bytes are
  eager: the transfer starts when the send is posted and the sender goes on at once; larger ones rendezvous:
  the transfer starts when both sides have posted and both are done when it ends. Contention: each NIC splits
  its bandwidth evenly among the transfers on it and a transfer moves at the smaller of its two ends' shares,
  re-shared whenever a transfer starts or ends (fluid model). full_duplex counts a NIC's sending and receiving
  transfers apart; half_duplex (SimpleComm's KAHUNA counting) counts them together; none gives every transfer
  the whole bandwidth (an ideal network). An eager message shares the NICs from its send on, also while its
  receive is not yet posted: that is what the data does on a wire.
- FMU: the write is issued when the send is posted, mapped at that moment; the read is issued when the receive
  is posted but never before the write was issued (the receiver learns the FMU from the sender, s.III.A). Each
  FMU serves its queue strictly first come first served (a head whose CFMU is busy holds the FMU). An access
  costs 4 T_ocm + T_map + T_switch + (S + 16)/BW; a queued access of the node that holds the FMU when the
  previous access ends skips the acquire (2 T_ocm + T_map + T_switch) if fmu.coalesce is on; only non-blocking
  traffic can queue like that. The tag notification over the network is not on the critical path (Eq 5 omits
  it). INCREMENTAL's global counter starts at 0 and counts every send request; LEAST_S counts bytes at the
  send's acquire; LEAST_SR also subtracts them at the receive's acquire; RANDOM draws from fmu.seed.
- Hybrid: a message whose payload is below the pivot goes over IB, others through an FMU; a rank's NIC and its
  CFMU are separate resources.
- "Average wait before the first FMU access" is the mean time a write's acquire waits in its FMU's queue.

What it reproduces (Table 3 parameters, 64 ranks, 100 iterations): the pivot (37,066 B) and 2.99x at 10 MB
from the formulas; Ring_Bcast 16 MiB with 64 FMUs 5.18x and Ring_Reduce / Ring_Allreduce 3.02x. The Bcast's
figure above the bandwidth ratio has a closed form: each root's last child (relative rank 1) is the next root,
so the ring's critical path is, per call, six rendezvous transfers over IB (the root is held by each) but six
writes and one read through FMUs (Eq 3 frees the root after each write): 6 Eq 6 / (7 Eq 1) = 12/7 x 3.02.
Reduce's critical path is the tree's depth on both sides, hence the plain ratio. At 32 KiB Bcast is slower
than IB as the paper says, Reduce and Allreduce are not unless ib.nic_sharing is none (see SMALL_MESSAGE_NOTE).

Traces: a directory of SimGrid time-independent trace files (one file per rank, any names ending .txt) or one
file holding every rank; each line is `<rank> <action> <args>`. Supported actions: init [datatype], finalize,
comm_size <n> (ignored), compute <flops>, sleep <seconds>, send|recv|isend|irecv <partner> <tag> <count>
[datatype] (or the two-argument `<partner> <bytes>` form, tag 0), wait <src> <dst> <tag>, waitall, barrier,
bcast <count> [root] [datatype], reduce <count> <comp_flops> [root] [datatype], allreduce <count> <comp_flops>
[datatype]. Counts are in datatype units: MPI_BYTE unless `init` has an argument (then MPI_DOUBLE, SimGrid's
rule) or the line names a SimGrid datatype id. Anything else is refused with its file, line and action.

Input (YAML, every key optional; the defaults are the paper's Table 3 and Fig 13):

    ib:
      latency_us: 8                  # T_L of Eq 6 (OSU_latency, ConnectX-5)
      bandwidth_GBps: 12.5           # BW_net (100 Gb/s)
      eager_threshold_bytes: 65536
      nic_sharing: full_duplex       # or half_duplex, none
    fmu:
      switch_latency_us: 5           # T_switch
      bandwidth_GBps: 76.8           # BW_mem, two DDR5-4800 DIMMs in lock-step; or "measured" (with --from)
      ocm_latency_ns: 0              # T_ocm of Eq 1 (paper: as low as 3.2); or "measured" (with --from)
      map_latency_ns: 0              # T_map of Eq 1
      count: [1, 4, 8, 16, 32, 64]   # FMUs in the pool: one number or a list to sweep
      try_idle: NONE                 # NONE RANDOM SIMPLE LEAST_S LEAST_SR, or a list
      among_all: INCREMENTAL         # RANDOM LEAST_S LEAST_SR STATIC INCREMENTAL, or a list
      seed: 1                        # for RANDOM
      coalesce: true
    hybrid:
      pivot_bytes: auto              # auto = Eq 7 from the parameters above, or a size
    compute:
      gflops: 12
    analytic:
      message_sizes: [1KiB, 4KiB, 16KiB, 32KiB, 64KiB, 256KiB, 1MiB, 2MiB, 10MB, 16MiB]
    workload:
      benchmarks: [Ring_Bcast, Ring_Reduce, Ring_Allreduce]   # and PingPong (ranks 0 and 1)
      message_sizes: [32KiB, 256KiB, 2MiB, 16MiB]              # bytes, or with B, KB, KiB, MB, MiB, GB, GiB
      ranks: 64
      iterations: 100
      traces: []                     # trace directories or files, simulated as they are

"measured" takes our link from the results store given with `--from`: the best remote bandwidth of our
link profile, and the mean remote read latency at the distance nearest 8 m as T_ocm (one request and its
answer, which is what one CFMU interaction costs).
"""

import functools
import heapq
import itertools
import math
import random
import re
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path

from monet.model import ModelInputError, check_lines, measured, paper_check

# ---------------------------------------------------------------------------------------------------------
# The paper's figures

MPI_OVERHEAD_BYTES = 16          # SimGrid adds 16 B to every message; SimpleComm does too (s.V)
TABLE3 = {"ib_latency_us": 8.0, "ib_bandwidth_GBps": 12.5, "eager_threshold_bytes": 65536,
          "switch_latency_us": 5.0, "fmu_bandwidth_GBps": 76.8, "gflops": 12.0}
PAPER_PIVOT_BYTES = 37_000       # "37 KB" (s.VI.C)
PAPER_SPEEDUP_10MB = 2.99        # ping-pong without contention at 10 MB (s.VI.C)
PAPER_RING_16MB_64FMU = {"Ring_Bcast": 5.18, "Reduce and Allreduce (mean)": 3.02}   # s.VII.A
RING_TOLERANCE = 0.15            # the band the reproduction is held to
SMALL_MESSAGE_NOTE = ("Eager IB messages (up to ib.eager_threshold_bytes) share their NICs from the moment "
                      "they are sent: ranks that run ahead in Reduce and Allreduce post messages for later "
                      "collectives that slow the ones the receivers need now. With ib.nic_sharing: none every "
                      "ring benchmark is slower than IB at 32 KiB, as the paper says; SimpleComm, as we read it, "
                      "lets a transfer contend only once its receive is posted.")

TRY_IDLE = ("NONE", "RANDOM", "SIMPLE", "LEAST_S", "LEAST_SR")
AMONG_ALL = ("RANDOM", "LEAST_S", "LEAST_SR", "STATIC", "INCREMENTAL")
RING_BENCHMARKS = ("Ring_Bcast", "Ring_Reduce", "Ring_Allreduce")
BENCHMARKS = RING_BENCHMARKS + ("PingPong",)
NIC_SHARING = ("full_duplex", "half_duplex", "none")
TRANSPORTS = ("ib", "fmu", "hybrid")

KiB, MiB = 1024, 1024 * 1024
DEFAULT_ANALYTIC_SIZES = (KiB, 4 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 256 * KiB, MiB, 2 * MiB, 10_000_000,
                          16 * MiB)
DEFAULT_RING_SIZES = (32 * KiB, 256 * KiB, 2 * MiB, 16 * MiB)      # Table 4
DEFAULT_FMU_COUNTS = (1, 4, 8, 16, 32, 64)                       # Fig 13
SIZE_UNITS = {"B": 1, "KB": 1000, "KIB": KiB, "MB": 1000 ** 2, "MIB": MiB, "GB": 1000 ** 3, "GIB": 1024 ** 3}

# SimGrid's datatype ids (smpi_datatype.cpp) and their sizes in bytes.
SIMGRID_DATATYPE_BYTES = {0: 8, 1: 4, 2: 1, 3: 2, 4: 8, 5: 4, 6: 1, 7: 8, 8: 1, 9: 1, 10: 2, 11: 4, 12: 8, 13: 8,
                          14: 16, 15: 4, 16: 1, 17: 1, 18: 2, 19: 4, 20: 8, 21: 1, 22: 2, 23: 4}
MPI_BYTE, MPI_DOUBLE = 6, 0

# Tags of the messages a collective is replayed as: below any tag a trace can use, one per algorithm so that a
# collective's messages never match another's (ranks call collectives in the same order, so FIFO matching on
# (source, destination, tag) pairs them correctly).
BCAST_TAG, REDUCE_TAG, BARRIER_TAG = -1, -2, -3


# ---------------------------------------------------------------------------------------------------------
# Parameters and the analytic model (s.IV)

@dataclass(frozen=True)
class Parameters:
    """Link, memory-channel and node figures in SI units; the defaults are Table 3."""
    ib_latency_s: float = TABLE3["ib_latency_us"] * 1e-6
    ib_bandwidth_Bps: float = TABLE3["ib_bandwidth_GBps"] * 1e9
    eager_threshold_bytes: int = TABLE3["eager_threshold_bytes"]
    nic_sharing: str = "full_duplex"
    switch_latency_s: float = TABLE3["switch_latency_us"] * 1e-6
    fmu_bandwidth_Bps: float = TABLE3["fmu_bandwidth_GBps"] * 1e9
    ocm_latency_s: float = 0.0
    map_latency_s: float = 0.0
    coalesce: bool = True
    seed: int = 1
    flops_per_s: float = TABLE3["gflops"] * 1e9
    pivot_override_bytes: float = None

    @property
    def acquire_s(self):
        """T_acquire (s.IV.A step 1): acquire request and answer, mapping, switching."""
        return 2 * self.ocm_latency_s + self.map_latency_s + self.switch_latency_s

    @property
    def access_fixed_s(self):
        """The size-independent part of Eq 1 without T_queue: the acquire plus the copy's and the release's
        interactions (s.IV.A steps 2 and 3)."""
        return self.acquire_s + 2 * self.ocm_latency_s

    @property
    def pivot_bytes(self):
        """The size at and above which the hybrid sends through an FMU: the given one, else Eq 7's."""
        return self.pivot_override_bytes if self.pivot_override_bytes is not None else eq7_pivot_bytes(self)

    def is_table3(self):
        """Whether the link, memory and node figures are Table 3's (the paper's figures compare as such)."""
        return self == Parameters(nic_sharing=self.nic_sharing, coalesce=self.coalesce, seed=self.seed,
                                  pivot_override_bytes=self.pivot_override_bytes)


def fmu_access_s(size, p):
    """Eq 1 without T_queue (the wait the simulation adds): acquire, copy of `size` bytes, release."""
    return p.access_fixed_s + size / p.fmu_bandwidth_Bps


def fmu_transfer_s(size, p):
    """Eq 5 (with Eq 1's T_ocm and T_map when given): a write then a read, no contention."""
    return 2 * fmu_access_s(size, p)


def ib_transfer_s(size, p):
    """Eq 6: a packet-switched transfer."""
    return p.ib_latency_s + size / p.ib_bandwidth_Bps


def eq7_pivot_bytes(p):
    """Eq 7 solved for S^: the size where Eq 5 and Eq 6 are equal. 0 when the FMU is never slower; infinity when
    it never catches up (memory bandwidth at most twice the network's, s.IV.C)."""
    fixed_gap = 2 * p.access_fixed_s - p.ib_latency_s
    per_byte_gain = 1 / p.ib_bandwidth_Bps - 2 / p.fmu_bandwidth_Bps
    if fixed_gap <= 0:
        return 0.0
    if per_byte_gain <= 0:
        return math.inf
    return fixed_gap / per_byte_gain


def analytic(p, sizes):
    """Ping-pong without contention (s.VI.C, Figs 11-12): Eq 1, 5 and 6 per size, the pivot and the
    asymptote BW_mem / (2 BW_net)."""
    rows = []
    for s in sizes:
        ib, fmu = ib_transfer_s(s, p), fmu_transfer_s(s, p)
        rows.append({"message_bytes": s, "ib_s": ib, "fmu_acquire_s": p.acquire_s,
                     "fmu_copy_s": s / p.fmu_bandwidth_Bps, "fmu_access_s": fmu_access_s(s, p), "fmu_s": fmu,
                     "speedup": ib / fmu, "faster": "FMU" if fmu < ib else "IB"})
    pivot = eq7_pivot_bytes(p)
    return {"rows": rows, "pivot_bytes": None if math.isinf(pivot) else pivot,
            "asymptotic_speedup": p.fmu_bandwidth_Bps / (2 * p.ib_bandwidth_Bps),
            "speedup_at_10MB": ib_transfer_s(10_000_000, p) / fmu_transfer_s(10_000_000, p)}


# ---------------------------------------------------------------------------------------------------------
# Traces

@dataclass
class Trace:
    """Per rank, its actions in order: ('init',), ('finalize',), ('compute', flops), ('sleep', s),
    ('send'|'recv'|'isend'|'irecv', partner, tag, bytes), ('wait', src, dst, tag), ('waitall',), ('barrier',),
    ('bcast', bytes, root), ('reduce', bytes, flops, root), ('allreduce', bytes, flops). `files` and `lines`
    say where each rank's actions were read (None for generated traces)."""
    name: str
    actions: list
    files: list = None
    lines: list = None

    @property
    def ranks(self):
        return len(self.actions)

    def where(self, rank, index):
        """An action's origin for messages: file and line, or the rank and action number."""
        if self.files is None:
            return f"{self.name}, rank {rank}, action {index + 1}"
        return f"{self.files[rank]}:{self.lines[rank][index]}"


def synthetic_trace(benchmark, ranks, iterations, message_bytes):
    """The paper's synthetic benchmarks (s.VI.B): each iteration calls the collective once per rank, the root
    rotating over the ranks (Allreduce has none); PingPong is osu_latency's exchange between ranks 0 and 1."""
    if benchmark == "PingPong":
        if ranks < 2:
            raise ModelInputError(f"workload.ranks: {ranks} cannot run PingPong; give 2 ranks or more")
        ping = [("send", 1, 0, message_bytes), ("recv", 1, 0, message_bytes)] * iterations
        pong = [("recv", 0, 0, message_bytes), ("send", 0, 0, message_bytes)] * iterations
        bodies = [ping, pong] + [[] for _ in range(ranks - 2)]
    else:
        if benchmark == "Ring_Bcast":
            calls = [("bcast", message_bytes, root) for root in range(ranks)]
        elif benchmark == "Ring_Reduce":
            calls = [("reduce", message_bytes, 0.0, root) for root in range(ranks)]
        elif benchmark == "Ring_Allreduce":
            calls = [("allreduce", message_bytes, 0.0)] * ranks
        else:
            raise ModelInputError(f"workload.benchmarks: {benchmark!r} is not a benchmark; give one of "
                                  f"{', '.join(BENCHMARKS)}")
        bodies = [calls * iterations for _ in range(ranks)]
    return Trace(f"{benchmark} {ranks} ranks x {iterations} iterations, {size_label(message_bytes)}",
                 [[("init",)] + body + [("finalize",)] for body in bodies])


def write_trace(trace, directory):
    """The trace as SimGrid time-independent files, rank-<r>.txt in `directory` (counts in bytes: MPI_BYTE)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for rank, actions in enumerate(trace.actions):
        lines = [f"{rank} {' '.join(_format_arg(a) for a in action)}" for action in actions]
        (out / f"rank-{rank}.txt").write_text("\n".join(lines) + "\n")
    return out


def _format_arg(value):
    return repr(value) if isinstance(value, float) else str(value)


def read_trace(path):
    """A SimGrid time-independent trace: a directory of per-rank .txt files, or one file with every rank."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix == ".txt")
        if not files:
            raise ModelInputError(f"workload.traces: {path} holds no .txt trace files; give a directory of "
                                  "SimGrid time-independent traces (one <rank> <action> ... file per rank)")
    elif p.is_file():
        files = [p]
    else:
        raise ModelInputError(f"workload.traces: {path} does not exist; give a trace directory or file")
    parsed = {}
    for f in files:
        for rank, (actions, lines) in _parse_trace_file(f).items():
            if rank in parsed:
                raise ModelInputError(f"{f}: rank {rank} also has actions in {parsed[rank][0]}; give each rank's "
                                      "actions in one file")
            parsed[rank] = (f, actions, lines)
    ranks = sorted(parsed)
    if ranks != list(range(len(ranks))):
        missing = sorted(set(range(max(ranks) + 1)) - set(ranks))
        raise ModelInputError(f"workload.traces: {path} has no actions of rank {missing[0]}; give ranks "
                              f"0 to {max(ranks)}, each in its file")
    trace = Trace(p.name, [parsed[r][1] for r in ranks], [str(parsed[r][0]) for r in ranks],
                  [parsed[r][2] for r in ranks])
    _check_partners(trace)
    return trace


def _parse_trace_file(path):
    """{rank: (actions, line numbers)} of one trace file."""
    by_rank = {}
    default_datatype = {}
    with open(path) as f:
        for number, text in enumerate(f, 1):
            words = text.split()
            if not words:
                continue
            where = f"{path}:{number}"
            if len(words) < 2:
                raise ModelInputError(f"{where}: {text.strip()!r} has no action; give '<rank> <action> [args]'")
            rank = _int(words[0], where, "the rank")
            name, args = words[1], words[2:]
            if name == "init":
                default_datatype[rank] = MPI_DOUBLE if args else MPI_BYTE
            action = _parse_action(name, args, where, default_datatype.get(rank, MPI_BYTE))
            if action is not None:
                actions, lines = by_rank.setdefault(rank, ([], []))
                actions.append(action)
                lines.append(number)
    return by_rank


def _parse_action(name, args, where, datatype):
    """One trace action as a tuple (None for those the replay ignores)."""
    def arity(low, high):
        if not low <= len(args) <= high:
            wanted = f"{low}" if low == high else f"{low} to {high}"
            raise ModelInputError(f"{where}: {name} takes {wanted} arguments, not {len(args)} ({' '.join(args)!r})")

    def nbytes(count_word, datatype_index):
        dtype = datatype if len(args) <= datatype_index else _datatype(args[datatype_index], where)
        count = _number(count_word, where, f"the {name} count")
        return int(round(count * SIMGRID_DATATYPE_BYTES[dtype]))

    if name in ("init", "finalize"):
        arity(0, 1)
        return (name,)
    if name == "comm_size":
        return None
    if name in ("compute", "sleep"):
        arity(1, 1)
        return (name, _number(args[0], where, f"the {name} amount"))
    if name in ("send", "recv", "isend", "irecv"):
        arity(2, 4)
        if len(args) == 2:
            return (name, _int(args[0], where, "the partner"), 0, nbytes(args[1], 99))
        return (name, _int(args[0], where, "the partner"), _int(args[1], where, "the tag"), nbytes(args[2], 3))
    if name == "wait":
        arity(3, 3)
        return (name, *(_int(a, where, "the wait's source, destination and tag") for a in args))
    if name in ("waitall", "barrier"):
        return (name,)
    if name == "bcast":
        arity(1, 3)
        return (name, nbytes(args[0], 2), _int(args[1], where, "the root") if len(args) > 1 else 0)
    if name == "reduce":
        arity(2, 4)
        return (name, nbytes(args[0], 3), _number(args[1], where, "the reduce's flops"),
                _int(args[2], where, "the root") if len(args) > 2 else 0)
    if name == "allreduce":
        arity(2, 3)
        return (name, nbytes(args[0], 2), _number(args[1], where, "the allreduce's flops"))
    raise ModelInputError(f"{where}: action {name!r} is not supported; give one of init, finalize, comm_size, "
                          "compute, sleep, send, recv, isend, irecv, wait, waitall, barrier, bcast, reduce, "
                          "allreduce")


def _int(word, where, what):
    try:
        return int(word)
    except ValueError:
        raise ModelInputError(f"{where}: {word!r} is not an integer; give {what} as one") from None


def _number(word, where, what):
    try:
        value = float(word)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ModelInputError(f"{where}: {word!r} is not a number >= 0; give {what} as one (e.g. 1e6)")
    return value


def _datatype(word, where):
    dtype = _int(word, where, "the datatype (a SimGrid datatype id)")
    if dtype not in SIMGRID_DATATYPE_BYTES:
        raise ModelInputError(f"{where}: datatype {dtype} is not a SimGrid datatype id; give one of "
                              f"0 to {max(SIMGRID_DATATYPE_BYTES)}")
    return dtype


def _check_partners(trace):
    n = trace.ranks
    for rank, actions in enumerate(trace.actions):
        for i, a in enumerate(actions):
            peers = {"send": a[1:2], "recv": a[1:2], "isend": a[1:2], "irecv": a[1:2], "wait": a[1:3],
                     "bcast": a[2:3], "reduce": a[3:4]}.get(a[0], ())
            for peer in peers:
                if not 0 <= peer < n:
                    raise ModelInputError(f"{trace.where(rank, i)}: rank {peer} in {a[0]} does not exist; give a "
                                          f"rank from 0 to {n - 1}")


# ---------------------------------------------------------------------------------------------------------
# Collectives as point-to-point messages

def bcast_peers(ranks, rank, root):
    """MPICH binomial-tree broadcast: (the parent this rank receives from or None, the children it sends to in
    order)."""
    relative = (rank - root) % ranks
    mask, parent = 1, None
    while mask < ranks:
        if relative & mask:
            parent = (rank - mask) % ranks
            break
        mask <<= 1
    children = []
    mask >>= 1
    while mask:
        if relative + mask < ranks:
            children.append((rank + mask) % ranks)
        mask >>= 1
    return parent, children


def reduce_peers(ranks, rank, root):
    """MPICH binomial-tree reduce (commutative): (the children this rank receives from in order, the parent it
    sends to or None)."""
    relative = (rank - root) % ranks
    mask, children = 1, []
    while mask < ranks:
        if relative & mask:
            return children, ((relative - mask) + root) % ranks
        if relative | mask < ranks:
            children.append(((relative | mask) + root) % ranks)
        mask <<= 1
    return children, None


@functools.lru_cache(maxsize=1 << 16)
def expand(action, rank, ranks):
    """A collective action as the blocking steps this rank replays: ('send'|'recv', peer, tag, bytes) and, for
    a reduction's flops, ('compute', flops)."""
    kind = action[0]
    steps = []
    if kind in ("bcast", "allreduce"):
        size = action[1]
        if kind == "allreduce":
            steps += _reduce_steps(ranks, rank, 0, size)
        parent, children = bcast_peers(ranks, rank, 0 if kind == "allreduce" else action[2])
        if parent is not None:
            steps.append(("recv", parent, BCAST_TAG, size))
        steps += [("send", c, BCAST_TAG, size) for c in children]
        if kind == "allreduce" and action[2] > 0:
            steps.append(("compute", action[2]))
    elif kind == "reduce":
        steps += _reduce_steps(ranks, rank, action[3], action[1])
        if action[2] > 0:
            steps.append(("compute", action[2]))
    elif kind == "barrier":
        others = range(1, ranks)
        if rank == 0:
            steps += [("recv", r, BARRIER_TAG, 0) for r in others] + [("send", r, BARRIER_TAG, 0) for r in others]
        else:
            steps += [("send", 0, BARRIER_TAG, 0), ("recv", 0, BARRIER_TAG, 0)]
    return tuple(steps)


def _reduce_steps(ranks, rank, root, size):
    children, parent = reduce_peers(ranks, rank, root)
    return [("recv", c, REDUCE_TAG, size) for c in children] + \
        ([("send", parent, REDUCE_TAG, size)] if parent is not None else [])


COLLECTIVES = ("bcast", "reduce", "allreduce", "barrier")


def traffic(trace):
    """Messages a trace sends: (count, bytes, smallest, largest), collectives expanded."""
    count = total = 0
    smallest, largest = math.inf, 0
    for rank, actions in enumerate(trace.actions):
        for a in actions:
            if a[0] in COLLECTIVES:
                sizes = [s[3] for s in expand(a, rank, trace.ranks) if s[0] == "send"]
            elif a[0] in ("send", "isend"):
                sizes = (a[3],)
            else:
                continue
            for s in sizes:
                count += 1
                total += s
                smallest, largest = min(smallest, s), max(largest, s)
    return count, total, (smallest if count else 0), largest


# ---------------------------------------------------------------------------------------------------------
# The simulation (s.V)

class _Request:
    """One side of a message: done when the rank may go on; `awaited` when its rank is blocked on it."""
    __slots__ = ("rank", "done", "awaited")

    def __init__(self, rank):
        self.rank, self.done, self.awaited = rank, False, False


class _Message:
    """A message from its send to its receive, over IB or through an FMU."""
    __slots__ = ("src", "dst", "tag", "size", "send_req", "recv_req", "via_fmu", "eager", "arrived", "fmu",
                 "where")

    def __init__(self, src, dst, tag, size, send_req, via_fmu, eager, where):
        self.src, self.dst, self.tag, self.size, self.send_req = src, dst, tag, size, send_req
        self.via_fmu, self.eager, self.where = via_fmu, eager, where
        self.recv_req, self.arrived, self.fmu = None, False, None


class _Access:
    """A write or a read acquire waiting in (or holding) an FMU."""
    __slots__ = ("node", "msg", "is_write", "issued")

    def __init__(self, node, msg, is_write, issued):
        self.node, self.msg, self.is_write, self.issued = node, msg, is_write, issued


class _Flow:
    """An InfiniBand transfer moving its bytes at its current share of the NICs' bandwidth."""
    __slots__ = ("msg", "src", "dst", "remaining", "rate", "since", "version")

    def __init__(self, msg, size):
        self.msg, self.src, self.dst, self.remaining = msg, msg.src, msg.dst, size
        self.rate, self.since, self.version = 0.0, 0.0, 0


@dataclass
class Outcome:
    """What one simulation found."""
    transport: str
    time_s: float
    messages: int
    bytes: int
    fmu_messages: int
    idleness: float
    mean_first_fmu_wait_s: float
    mean_read_wait_s: float
    max_fmu_resident_bytes: int
    max_fmu_resident_messages: int
    fmu_use: list = field(default_factory=list)


_RESUME, _FMU_DONE, _IB_ACTIVATE, _IB_DONE = range(4)


class _Simulation:
    """Every rank replays its actions; sends and receives match FIFO per (source, destination, tag); IB
    transfers and FMU accesses advance in a time-ordered event queue."""

    def __init__(self, trace, p, transport, fmus, try_idle, among_all):
        n = trace.ranks
        self.trace, self.p, self.n = trace, p, n
        self.transport, self.fmus, self.try_idle, self.among_all = transport, fmus, try_idle, among_all
        self.events, self.seq = [], itertools.count()
        self.pc, self.steps = [0] * n, [deque() for _ in range(n)]
        self.awaiting, self.finished_at, self.compute_s = [0] * n, [None] * n, [0.0] * n
        self.outstanding = [{} for _ in range(n)]          # non-blocking requests by (src, dst, tag)
        self.unmatched_sends, self.unmatched_recvs = {}, {}
        self.messages = self.bytes = self.fmu_messages = 0
        # FMU pool and OCS
        self.fmu_queue = [deque() for _ in range(fmus)]
        self.fmu_holder = [None] * fmus
        self.fmu_load = [0] * fmus                          # queued + held accesses: 0 is idle (s.III.C)
        self.fmu_written = [0] * fmus                       # LEAST_S counters
        self.fmu_balance = [0] * fmus                       # LEAST_SR counters
        self.fmu_resident_bytes, self.fmu_resident_msgs = [0] * fmus, [0] * fmus
        self.max_resident_bytes = self.max_resident_msgs = 0
        self.fmu_sends = [0] * fmus
        self.cfmu_holds = [None] * n
        self.cfmu_waiters = [[] for _ in range(n)]          # FMUs whose queue head waits for this node's CFMU
        self.send_counter = 0
        self.rng = random.Random(p.seed)
        self.write_wait = [0.0, 0]
        self.read_wait = [0.0, 0]
        # IB NICs
        self.tx_flows = [set() for _ in range(n)]
        self.rx_flows = self.tx_flows if p.nic_sharing == "half_duplex" else [set() for _ in range(n)]
        self.pivot = p.pivot_bytes

    # -- the event loop
    def run(self):
        for rank in range(self.n):
            self._advance(rank, 0.0)
        events = self.events
        pop = heapq.heappop
        while events:
            now, _, kind, obj, version = pop(events)
            if kind == _FMU_DONE:
                self._fmu_done(obj, now)
            elif kind == _RESUME:
                self._advance(obj, now)
            elif kind == _IB_DONE:
                if version == obj.version:
                    self._ib_done(obj, now)
            else:
                self._ib_activate(obj, now)
        self._check_finished()
        end = max(self.finished_at)
        idle = [1 - c / t if t > 0 else 0.0 for c, t in zip(self.compute_s, self.finished_at)]
        return Outcome(self.transport, end, self.messages, self.bytes, self.fmu_messages, sum(idle) / self.n,
                       self.write_wait[0] / self.write_wait[1] if self.write_wait[1] else 0.0,
                       self.read_wait[0] / self.read_wait[1] if self.read_wait[1] else 0.0,
                       self.max_resident_bytes, self.max_resident_msgs, self.fmu_sends)

    def _schedule(self, at, kind, obj, version=0):
        heapq.heappush(self.events, (at, next(self.seq), kind, obj, version))

    # -- ranks
    def _advance(self, rank, now):
        """Run `rank` from `now` until it blocks, computes or ends."""
        steps, actions = self.steps[rank], self.trace.actions[rank]
        while True:
            if steps:
                action = steps.popleft()
            else:
                pc = self.pc[rank]
                if pc == len(actions):
                    self.finished_at[rank] = now
                    return
                action = actions[pc]
                self.pc[rank] = pc + 1
            kind = action[0]
            if kind == "send" or kind == "recv":
                req = _Request(rank)
                self._post(kind, rank, action, now, req)
                if not req.done:
                    req.awaited = True
                    self.awaiting[rank] = 1
                    return
            elif kind in COLLECTIVES:
                steps.extend(expand(action, rank, self.n))
            elif kind == "compute" or kind == "sleep":
                seconds = action[1] / self.p.flops_per_s if kind == "compute" else action[1]
                if seconds > 0:
                    self.compute_s[rank] += seconds
                    self._schedule(now + seconds, _RESUME, rank)
                    return
            elif kind == "isend" or kind == "irecv":
                req = _Request(rank)
                key = (rank, action[1], action[2]) if kind == "isend" else (action[1], rank, action[2])
                self.outstanding[rank].setdefault(key, deque()).append(req)
                self._post(kind[1:], rank, action, now, req)
            elif kind == "wait":
                pending = self.outstanding[rank].get(tuple(action[1:]))
                if not pending:
                    raise ModelInputError(f"{self._where(rank)}: wait {' '.join(map(str, action[1:]))} has no "
                                          "isend or irecv of that source, destination and tag before it")
                req = pending.popleft()
                if not req.done:
                    req.awaited = True
                    self.awaiting[rank] = 1
                    return
            elif kind == "waitall":
                waiting = [r for q in self.outstanding[rank].values() for r in q if not r.done]
                self.outstanding[rank] = {}
                if waiting:
                    for r in waiting:
                        r.awaited = True
                    self.awaiting[rank] = len(waiting)
                    return
            # init and finalize: nothing to replay

    def _where(self, rank):
        return self.trace.where(rank, max(self.pc[rank] - 1, 0))

    def _complete(self, req, now):
        req.done = True
        if req.awaited:
            rank = req.rank
            self.awaiting[rank] -= 1
            if not self.awaiting[rank]:
                self._advance(rank, now)

    # -- matching
    def _post(self, kind, rank, action, now, req):
        partner, tag, size = action[1], action[2], action[3]
        if kind == "send":
            via_fmu = self.transport == "fmu" or (self.transport == "hybrid" and size >= self.pivot)
            msg = _Message(rank, partner, tag, size, req, via_fmu,
                           not via_fmu and size <= self.p.eager_threshold_bytes, self.pc[rank] - 1)
            self.messages += 1
            self.bytes += size
            waiting = self.unmatched_recvs.get((rank, partner, tag))
            if waiting:
                msg.recv_req = waiting.popleft()
            else:
                self.unmatched_sends.setdefault((rank, partner, tag), deque()).append(msg)
            if via_fmu:
                self.fmu_messages += 1
                self._fmu_write(msg, now)
                if msg.recv_req is not None:
                    self._fmu_read(msg, now)
            elif msg.eager or msg.recv_req is not None:
                self._ib_start(msg, now)
            if msg.eager:
                self._complete(req, now)
        else:
            queued = self.unmatched_sends.get((partner, rank, tag))
            if not queued:
                self.unmatched_recvs.setdefault((partner, rank, tag), deque()).append(req)
                return
            msg = queued.popleft()
            msg.recv_req = req
            if msg.via_fmu:
                self._fmu_read(msg, now)
            elif not msg.eager:
                self._ib_start(msg, now)
            elif msg.arrived:
                self._complete(req, now)

    # -- the FMU pool (s.III.C, Eq 1-5)
    def _map_fmu(self, msg):
        """FMU_acquire's mapping for a send: TRY IDLE over idle FMUs, then AMONG ALL."""
        chosen = None
        if self.try_idle != "NONE":
            load = self.fmu_load
            if self.try_idle == "SIMPLE":
                chosen = load.index(0) if 0 in load else None
            else:
                idle = [f for f in range(self.fmus) if not load[f]]
                if idle:
                    if self.try_idle == "RANDOM":
                        chosen = self.rng.choice(idle)
                    else:
                        counter = self.fmu_written if self.try_idle == "LEAST_S" else self.fmu_balance
                        chosen = min(idle, key=counter.__getitem__)
        global_index = self.send_counter
        self.send_counter += 1
        if chosen is None:
            policy = self.among_all
            if policy == "INCREMENTAL":
                chosen = global_index % self.fmus
            elif policy == "STATIC":
                chosen = msg.dst % self.fmus
            elif policy == "RANDOM":
                chosen = self.rng.randrange(self.fmus)
            else:
                counter = self.fmu_written if policy == "LEAST_S" else self.fmu_balance
                chosen = min(range(self.fmus), key=counter.__getitem__)
        self.fmu_written[chosen] += msg.size
        self.fmu_balance[chosen] += msg.size
        self.fmu_sends[chosen] += 1
        return chosen

    def _fmu_write(self, msg, now):
        msg.fmu = self._map_fmu(msg)
        self._fmu_enqueue(_Access(msg.src, msg, True, now), now)

    def _fmu_read(self, msg, now):
        self.fmu_balance[msg.fmu] -= msg.size
        self._fmu_enqueue(_Access(msg.dst, msg, False, now), now)

    def _fmu_enqueue(self, access, now):
        f = access.msg.fmu
        self.fmu_queue[f].append(access)
        self.fmu_load[f] += 1
        if self.fmu_holder[f] is None:
            self._fmu_try_start(f, now)

    def _fmu_try_start(self, f, now):
        queue = self.fmu_queue[f]
        if not queue:
            return
        head = queue[0]
        if self.cfmu_holds[head.node] is not None:
            self.cfmu_waiters[head.node].append(f)
            return
        queue.popleft()
        self._fmu_start(f, head, now, self.p.access_fixed_s)

    def _fmu_start(self, f, access, now, fixed_s):
        self.fmu_holder[f] = access
        self.cfmu_holds[access.node] = f
        wait = self.write_wait if access.is_write else self.read_wait
        wait[0] += now - access.issued
        wait[1] += 1
        copy_s = (access.msg.size + MPI_OVERHEAD_BYTES) / self.p.fmu_bandwidth_Bps
        self._schedule(now + fixed_s + copy_s, _FMU_DONE, f)

    def _fmu_done(self, f, now):
        access = self.fmu_holder[f]
        node, msg = access.node, access.msg
        self.fmu_holder[f] = None
        self.fmu_load[f] -= 1
        self.cfmu_holds[node] = None
        queue = self.fmu_queue[f]
        if self.p.coalesce and queue and queue[0].node == node:
            # The circuit is still up for the same node: no new acquire, only the copy and the release.
            self._fmu_start(f, queue.popleft(), now, 2 * self.p.ocm_latency_s)
        else:
            self._fmu_try_start(f, now)
            self._serve_cfmu_waiter(node, now)
        if access.is_write:
            self.fmu_resident_bytes[f] += msg.size
            self.fmu_resident_msgs[f] += 1
            self.max_resident_bytes = max(self.max_resident_bytes, self.fmu_resident_bytes[f])
            self.max_resident_msgs = max(self.max_resident_msgs, self.fmu_resident_msgs[f])
            self._complete(msg.send_req, now)
        else:
            self.fmu_resident_bytes[f] -= msg.size
            self.fmu_resident_msgs[f] -= 1
            self._complete(msg.recv_req, now)

    def _serve_cfmu_waiter(self, node, now):
        """A freed CFMU takes the earliest-issued queue head that waited for it."""
        if self.cfmu_holds[node] is not None or not self.cfmu_waiters[node]:
            return
        ready = [g for g in set(self.cfmu_waiters[node])
                 if self.fmu_holder[g] is None and self.fmu_queue[g] and self.fmu_queue[g][0].node == node]
        if ready:
            g = min(ready, key=lambda g: self.fmu_queue[g][0].issued)
            ready.remove(g)
            self._fmu_start(g, self.fmu_queue[g].popleft(), now, self.p.access_fixed_s)
        self.cfmu_waiters[node] = ready

    # -- InfiniBand (Eq 6, packet-switch contention)
    def _ib_start(self, msg, now):
        flow = _Flow(msg, msg.size + MPI_OVERHEAD_BYTES)
        if self.p.ib_latency_s > 0:
            self._schedule(now + self.p.ib_latency_s, _IB_ACTIVATE, flow)
        else:
            self._ib_activate(flow, now)

    def _ib_activate(self, flow, now):
        self.tx_flows[flow.src].add(flow)
        self.rx_flows[flow.dst].add(flow)
        self._ib_reshare(self.tx_flows[flow.src] | self.rx_flows[flow.dst], now)

    def _ib_done(self, flow, now):
        self.tx_flows[flow.src].discard(flow)
        self.rx_flows[flow.dst].discard(flow)
        self._ib_reshare(self.tx_flows[flow.src] | self.rx_flows[flow.dst], now)
        msg = flow.msg
        if msg.eager:
            msg.arrived = True
            if msg.recv_req is not None:
                self._complete(msg.recv_req, now)
        else:
            self._complete(msg.send_req, now)
            self._complete(msg.recv_req, now)

    def _ib_reshare(self, flows, now):
        """Each flow moves at the smaller of its NICs' even shares; those whose share changed are rescheduled."""
        bandwidth, tx, rx = self.p.ib_bandwidth_Bps, self.tx_flows, self.rx_flows
        shared = self.p.nic_sharing != "none"
        for flow in flows:
            rate = bandwidth / max(len(tx[flow.src]), len(rx[flow.dst])) if shared else bandwidth
            if rate == flow.rate:
                continue
            flow.remaining -= flow.rate * (now - flow.since)
            flow.since, flow.rate = now, rate
            flow.version += 1
            self._schedule(now + max(flow.remaining, 0.0) / rate, _IB_DONE, flow, flow.version)

    # -- the end
    def _check_finished(self):
        for key, waiting in self.unmatched_recvs.items():
            if waiting:
                src, dst, tag = key
                rank = waiting[0].rank
                raise ModelInputError(f"{self.trace.name}: the recv of rank {dst} from rank {src} (tag {tag}) at "
                                      f"{self._where(rank)} has no matching send at the end of the trace")
        for key, queued in self.unmatched_sends.items():
            if queued:
                msg = queued[0]
                raise ModelInputError(f"{self.trace.name}: the send of rank {msg.src} to rank {msg.dst} (tag "
                                      f"{msg.tag}, {msg.size} B) at {self.trace.where(msg.src, msg.where)} has no "
                                      "matching recv at the end of the trace")
        for rank, end in enumerate(self.finished_at):
            if end is None:
                raise ModelInputError(f"{self.trace.name}: rank {rank} never finishes: it waits at "
                                      f"{self._where(rank)} for requests that never complete")


def simulate(trace, p=Parameters(), transport="fmu", fmus=64, try_idle="NONE", among_all="INCREMENTAL"):
    """One replay of `trace` over `transport` (ib, fmu or hybrid) with `fmus` FMUs and a mapping policy."""
    if transport not in TRANSPORTS:
        raise ModelInputError(f"transport: {transport!r} is not a transport; give one of {', '.join(TRANSPORTS)}")
    _check_policy("fmu.try_idle", try_idle, TRY_IDLE)
    _check_policy("fmu.among_all", among_all, AMONG_ALL)
    if not isinstance(fmus, int) or isinstance(fmus, bool) or fmus < 1:
        raise ModelInputError(f"fmu.count: {fmus!r} is not an FMU count; give an integer >= 1 (Table 3: up to 64)")
    return _Simulation(trace, p, transport, fmus, try_idle, among_all).run()


def _check_policy(key, value, allowed):
    if value not in allowed:
        raise ModelInputError(f"{key}: {value!r} is not a mapping policy; give one of {', '.join(allowed)}")


# ---------------------------------------------------------------------------------------------------------
# Input

def parse_size(value, key):
    """Bytes from an integer or a string such as '32KiB', '16 MiB', '10MB'."""
    number = None if isinstance(value, bool) else value
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMG]i?B|B)?\s*", value, re.IGNORECASE)
        number = float(m.group(1)) * SIZE_UNITS[(m.group(2) or "B").upper()] if m else None
    if isinstance(number, (int, float)) and number > 0 and float(number).is_integer():
        return int(number)
    raise ModelInputError(f"{key}: {value!r} is not a size; give bytes > 0 (e.g. 32768 or '32KiB')")


def size_label(n):
    for unit, scale in (("MiB", MiB), ("KiB", KiB), ("MB", 10 ** 6), ("KB", 10 ** 3)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _section(config, key, allowed):
    value = config.get(key) or {}
    if not isinstance(value, dict):
        raise ModelInputError(f"{key}: {value!r} is not a mapping; give keys among {', '.join(allowed)}")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise ModelInputError(f"{key}.{unknown[0]}: not an input of the FMU model; give {', '.join(allowed)}")
    return value


def _positive(section, name, key, default, allow_zero=False):
    value = section.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and \
        (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise ModelInputError(f"{name}.{key}: {value!r} is not a number {'>= 0' if allow_zero else '> 0'}; give "
                              f"e.g. {default}")
    return float(value)


def _one_or_list(section, name, key, default):
    value = section.get(key, default)
    values = value if isinstance(value, list) else [value]
    if not values:
        raise ModelInputError(f"{name}.{key}: [] is empty; give one value or a list such as {default!r}")
    return values


def _measured(records, name, key):
    """Our link from a results store: the best remote bandwidth (GB/s) or the remote read latency (ns)."""
    where = f"{name}.{key}"
    if key == "bandwidth_GBps":
        return measured.best_bandwidth_point(records, where)["result"]["bandwidth_GBps"]
    return measured.read_latency_ns(records, where)


def parameters_from(config, records=None):
    """Parameters, the FMU counts, the mapping policies, the analytic sizes and the workload of an input."""
    config = dict(config or {})
    unknown = sorted(set(config) - {"ib", "fmu", "hybrid", "compute", "analytic", "workload"})
    if unknown:
        raise ModelInputError(f"{unknown[0]}: not an input of the FMU model; give ib, fmu, hybrid, compute, "
                              "analytic, workload")
    ib = _section(config, "ib", ("latency_us", "bandwidth_GBps", "eager_threshold_bytes", "nic_sharing"))
    fmu = _section(config, "fmu", ("switch_latency_us", "bandwidth_GBps", "ocm_latency_ns", "map_latency_ns",
                                   "count", "try_idle", "among_all", "seed", "coalesce"))
    hybrid = _section(config, "hybrid", ("pivot_bytes",))
    compute = _section(config, "compute", ("gflops",))
    analytic_in = _section(config, "analytic", ("message_sizes",))
    workload = _section(config, "workload", ("benchmarks", "message_sizes", "ranks", "iterations", "traces"))
    measured = {}
    for key in ("bandwidth_GBps", "ocm_latency_ns"):
        if fmu.get(key) == "measured":
            measured[key] = _measured(records, "fmu", key)
    fmu_view = {**fmu, **measured}
    sharing = ib.get("nic_sharing", "full_duplex")
    if sharing not in NIC_SHARING:
        raise ModelInputError(f"ib.nic_sharing: {sharing!r} is not a sharing model; give one of "
                              f"{', '.join(NIC_SHARING)}")
    seed = fmu.get("seed", 1)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ModelInputError(f"fmu.seed: {seed!r} is not an integer; give e.g. 1")
    coalesce = fmu.get("coalesce", True)
    if not isinstance(coalesce, bool):
        raise ModelInputError(f"fmu.coalesce: {coalesce!r} is not true or false")
    pivot = hybrid.get("pivot_bytes", "auto")
    p = Parameters(
        ib_latency_s=_positive(ib, "ib", "latency_us", TABLE3["ib_latency_us"], allow_zero=True) * 1e-6,
        ib_bandwidth_Bps=_positive(ib, "ib", "bandwidth_GBps", TABLE3["ib_bandwidth_GBps"]) * 1e9,
        eager_threshold_bytes=int(_positive(ib, "ib", "eager_threshold_bytes", TABLE3["eager_threshold_bytes"],
                                            allow_zero=True)),
        nic_sharing=sharing,
        switch_latency_s=_positive(fmu, "fmu", "switch_latency_us", TABLE3["switch_latency_us"],
                                   allow_zero=True) * 1e-6,
        fmu_bandwidth_Bps=_positive(fmu_view, "fmu", "bandwidth_GBps", TABLE3["fmu_bandwidth_GBps"]) * 1e9,
        ocm_latency_s=_positive(fmu_view, "fmu", "ocm_latency_ns", 0.0, allow_zero=True) * 1e-9,
        map_latency_s=_positive(fmu, "fmu", "map_latency_ns", 0.0, allow_zero=True) * 1e-9,
        coalesce=coalesce, seed=seed,
        flops_per_s=_positive(compute, "compute", "gflops", TABLE3["gflops"]) * 1e9,
        pivot_override_bytes=None if pivot == "auto" else parse_size(pivot, "hybrid.pivot_bytes"))
    counts = _one_or_list(fmu, "fmu", "count", list(DEFAULT_FMU_COUNTS))
    for c in counts:
        if not isinstance(c, int) or isinstance(c, bool) or c < 1:
            raise ModelInputError(f"fmu.count: {c!r} is not an FMU count; give an integer >= 1 (Table 3: up to 64)")
    policies = [(t, a) for t in _one_or_list(fmu, "fmu", "try_idle", "NONE")
                for a in _one_or_list(fmu, "fmu", "among_all", "INCREMENTAL")]
    for t, a in policies:
        _check_policy("fmu.try_idle", t, TRY_IDLE)
        _check_policy("fmu.among_all", a, AMONG_ALL)
    sizes = [parse_size(s, "analytic.message_sizes")
             for s in _one_or_list(analytic_in, "analytic", "message_sizes", list(DEFAULT_ANALYTIC_SIZES))]
    benchmarks = workload.get("benchmarks", list(RING_BENCHMARKS))
    if not isinstance(benchmarks, list):
        benchmarks = [benchmarks]
    for b in benchmarks:
        if b not in BENCHMARKS:
            raise ModelInputError(f"workload.benchmarks: {b!r} is not a benchmark; give any of {', '.join(BENCHMARKS)}")
    ring_sizes = [parse_size(s, "workload.message_sizes")
                  for s in _one_or_list(workload, "workload", "message_sizes", list(DEFAULT_RING_SIZES))]
    ranks = workload.get("ranks", 64)
    iterations = workload.get("iterations", 100)
    for key, value, low in (("ranks", ranks, 2), ("iterations", iterations, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ModelInputError(f"workload.{key}: {value!r} is not a count; give an integer >= {low}")
    traces = workload.get("traces", [])
    traces = traces if isinstance(traces, list) else [traces]
    return {"parameters": p, "fmu_counts": counts, "policies": policies, "analytic_sizes": sorted(set(sizes)),
            "benchmarks": benchmarks, "message_sizes": ring_sizes, "ranks": ranks, "iterations": iterations,
            "traces": [str(t) for t in traces], "measured": measured}


# ---------------------------------------------------------------------------------------------------------
# The model's run

@dataclass
class _Workload:
    """A synthetic benchmark at one message size, or a trace read from `path`."""
    benchmark: str = None
    message_bytes: int = None
    path: str = None

    def trace(self, ranks, iterations):
        if self.path:
            return read_trace(self.path)
        return synthetic_trace(self.benchmark, ranks, iterations, self.message_bytes)


def run(config, progress=None, records=None):
    """The analytic model, then every workload over IB, FMU and hybrid for each FMU count and mapping policy."""
    inputs = parameters_from(config, records)
    p = inputs["parameters"]
    workloads = [_Workload(b, s) for b in inputs["benchmarks"] for s in inputs["message_sizes"]]
    workloads += [_Workload(path=path) for path in inputs["traces"]]
    grid = [(c, t, a) for c in inputs["fmu_counts"] for t, a in inputs["policies"]]
    total = len(workloads) * (1 + 2 * len(grid))
    done = 0
    cases = []
    for w in workloads:
        trace = w.trace(inputs["ranks"], inputs["iterations"])
        count, nbytes, smallest, largest = traffic(trace)
        if count == 0:
            raise ModelInputError(f"workload.traces: {trace.name} sends no message; give a trace that communicates")
        ib, ib_wall = _timed(simulate, trace, p, "ib")
        done += 1
        _report(progress, done, total, f"{trace.name}: IB")
        for fmus, try_idle, among_all in grid:
            fmu, fmu_wall = _timed(simulate, trace, p, "fmu", fmus, try_idle, among_all)
            done += 1
            _report(progress, done, total, f"{trace.name}: {fmus} FMUs {try_idle}/{among_all}")
            # The hybrid is the FMU run when no message is below the pivot, the IB run when none reaches it.
            if smallest >= p.pivot_bytes:
                hybrid, hybrid_wall = replace(fmu, transport="hybrid"), 0.0
            elif largest < p.pivot_bytes:
                hybrid, hybrid_wall = replace(ib, transport="hybrid", fmu_use=[0] * fmus), 0.0
            else:
                hybrid, hybrid_wall = _timed(simulate, trace, p, "hybrid", fmus, try_idle, among_all)
            done += 1
            _report(progress, done, total, f"{trace.name}: hybrid")
            cases.append(_case(w, trace, count, nbytes, fmus, try_idle, among_all, ib, fmu, hybrid,
                               {"ib (one run for the workload)": ib_wall, "fmu": fmu_wall, "hybrid": hybrid_wall}))
    result = {"model": "fmu", "inputs": config or {}, "parameters": _parameters_dict(p, inputs),
              "analytic": analytic(p, inputs["analytic_sizes"]), "cases": cases}
    result["speedup_vs_size"] = _speedup_vs_size(result)
    result["checks"] = _checks(result, p)
    result["source"] = ("Palma et al. 2024 (seeds/004): Eq 1-7, s.III.C mapping, s.V simulator, Table 3 parameters, "
                        "Table 4 / Fig 13 synthetic benchmarks")
    return result


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def _report(progress, done, total, what):
    if progress:
        progress(done, total, what)


def _parameters_dict(p, inputs):
    return {"ib_latency_us": p.ib_latency_s * 1e6, "ib_bandwidth_GBps": p.ib_bandwidth_Bps / 1e9,
            "eager_threshold_bytes": p.eager_threshold_bytes, "nic_sharing": p.nic_sharing,
            "fmu_switch_latency_us": p.switch_latency_s * 1e6, "fmu_bandwidth_GBps": p.fmu_bandwidth_Bps / 1e9,
            "ocm_latency_ns": p.ocm_latency_s * 1e9, "map_latency_ns": p.map_latency_s * 1e9,
            "fmu_coalesce": p.coalesce, "seed": p.seed, "gflops": p.flops_per_s / 1e9,
            "mpi_overhead_bytes": MPI_OVERHEAD_BYTES,
            "hybrid_pivot_bytes": None if math.isinf(p.pivot_bytes) else p.pivot_bytes,
            "hybrid_pivot_source": "input" if p.pivot_override_bytes is not None else "Eq 7",
            "fmu_counts": inputs["fmu_counts"], "mapping_policies": [f"{t}/{a}" for t, a in inputs["policies"]],
            "ranks": inputs["ranks"], "iterations": inputs["iterations"],
            "measured_from_results": inputs["measured"], "table3": p.is_table3()}


def _case(w, trace, count, nbytes, fmus, try_idle, among_all, ib, fmu, hybrid, walls):
    return {"benchmark": w.benchmark or trace.name, "message_bytes": w.message_bytes or nbytes / count,
            "ranks": trace.ranks, "fmus": fmus, "mapping": f"{try_idle}/{among_all}",
            "time_ib_s": ib.time_s, "time_fmu_s": fmu.time_s, "time_hybrid_s": hybrid.time_s,
            "speedup_fmu": ib.time_s / fmu.time_s, "speedup_hybrid": ib.time_s / hybrid.time_s,
            "messages": count, "average_message_bytes": nbytes / count,
            "hybrid_fmu_message_share": hybrid.fmu_messages / hybrid.messages,
            "mean_first_fmu_wait_s": fmu.mean_first_fmu_wait_s, "mean_read_wait_s": fmu.mean_read_wait_s,
            "idleness_ib": ib.idleness, "idleness_fmu": fmu.idleness,
            "max_fmu_resident_bytes": fmu.max_fmu_resident_bytes,
            "max_fmu_resident_messages": fmu.max_fmu_resident_messages,
            "messages_per_fmu_min_max": [min(fmu.fmu_use), max(fmu.fmu_use)], "simulation_wall_s": walls}


def _speedup_vs_size(result):
    """Message sizes and, per series, the FMU speedup over IB at each (None where the series has no point):
    the analytic ping-pong and each simulated benchmark, FMU count and mapping."""
    sizes = sorted({r["message_bytes"] for r in result["analytic"]["rows"]} |
                   {c["message_bytes"] for c in result["cases"]})
    analytic_at = {r["message_bytes"]: r["speedup"] for r in result["analytic"]["rows"]}
    series = [{"label": "ping-pong, Eq 6 / Eq 5", "kind": "analytic", "speedup": [analytic_at.get(s) for s in sizes]}]
    groups = {}
    for c in result["cases"]:
        groups.setdefault((c["benchmark"], c["fmus"], c["mapping"]), {})[c["message_bytes"]] = c["speedup_fmu"]
    for (benchmark, fmus, mapping), by_size in groups.items():
        series.append({"label": f"{benchmark}, {fmus} FMUs, {mapping}", "kind": "simulated", "benchmark": benchmark,
                       "fmus": fmus, "mapping": mapping, "speedup": [by_size.get(s) for s in sizes]})
    return {"message_bytes": sizes, "series": series}


def _checks(result, p):
    """The paper's headline figures beside ours (pass/fail means something with Table 3's parameters)."""
    a = result["analytic"]
    checks = [paper_check("pivot (bytes), s.VI.C", PAPER_PIVOT_BYTES, a["pivot_bytes"], 0.02),
              paper_check("ping-pong speedup at 10 MB, s.VI.C", PAPER_SPEEDUP_10MB, a["speedup_at_10MB"], 0.01)]
    at16 = {c["benchmark"]: c["speedup_fmu"] for c in result["cases"]
            if c["message_bytes"] == 16 * MiB and c["fmus"] == 64 and c["mapping"] == "NONE/INCREMENTAL"}
    if "Ring_Bcast" in at16:
        checks.append(paper_check("Ring_Bcast 16 MiB, 64 FMUs, speedup (Fig 13)", PAPER_RING_16MB_64FMU["Ring_Bcast"],
                             at16["Ring_Bcast"], RING_TOLERANCE))
    if "Ring_Reduce" in at16 and "Ring_Allreduce" in at16:
        checks.append(paper_check("Ring_Reduce and Ring_Allreduce 16 MiB, 64 FMUs, mean speedup (Fig 13)",
                             PAPER_RING_16MB_64FMU["Reduce and Allreduce (mean)"],
                             (at16["Ring_Reduce"] + at16["Ring_Allreduce"]) / 2, RING_TOLERANCE))
    small = {c["benchmark"]: c["speedup_fmu"] for c in result["cases"] if c["message_bytes"] == 32 * KiB
             and c["fmus"] == 64 and c["mapping"] == "NONE/INCREMENTAL" and c["benchmark"] in RING_BENCHMARKS}
    if small:
        slowest = max(small.values())
        checks.append({"figure": "ring benchmarks at 32 KiB, 64 FMUs: slower than IB (Fig 13)", "paper": "< 1",
                       "model": slowest, "deviation": None, "tolerance": None, "pass": slowest < 1,
                       "detail": small, "note": SMALL_MESSAGE_NOTE if slowest >= 1 and p.nic_sharing != "none"
                       else None})
    for c in checks:
        c["table3_parameters"] = p.is_table3()
        c["caveat"] = None if c["table3_parameters"] else "not Table 3's parameters"
    return checks


# ---------------------------------------------------------------------------------------------------------
# Report

def summary(result):
    """The pivot, the paper's checks and the simulated cases as the terminal shows them."""
    from monet.report.tables import fmt, table_lines
    a = result["analytic"]
    pivot = a["pivot_bytes"]
    lines = [f"pivot (Eq 7): {fmt(pivot, 0)} B; asymptote BW_mem / 2 BW_net = {a['asymptotic_speedup']:.2f}x; "
             f"ping-pong at 10 MB {a['speedup_at_10MB']:.3f}x"]
    if result["cases"]:
        lines += table_lines([[c["benchmark"], size_label(c["message_bytes"]) if isinstance(c["message_bytes"], int)
                               else fmt(c["message_bytes"], 0), c["fmus"], c["mapping"], fmt(c["time_ib_s"], 4),
                               fmt(c["time_fmu_s"], 4), fmt(c["speedup_fmu"], 2), fmt(c["speedup_hybrid"], 2),
                               c["messages"]] for c in result["cases"]],
                             ["benchmark", "size", "FMUs", "mapping", "IB s", "FMU s", "FMU x", "hybrid x",
                              "messages"])
    return lines + check_lines(result["checks"])


def sections(result, out):
    """Report sections: the ping-pong cost model, the simulated speedups (vs size and vs FMU count), the checks."""
    from monet.report.tables import fmt, figure
    out = Path(out)
    a, curve = result["analytic"], result["speedup_vs_size"]
    most = max((s["fmus"] for s in curve["series"] if s["kind"] == "simulated"), default=None)
    with figure(out / "fmu_speedup_vs_size.png", f"FMU speedup over InfiniBand (simulated: {most} FMUs)",
                "message size (bytes)", "speedup (IB time / FMU time)") as ax:
        for s in curve["series"]:
            if s["kind"] == "simulated" and s["fmus"] != most:
                continue
            points = [(x, y) for x, y in zip(curve["message_bytes"], s["speedup"]) if y is not None]
            ax.plot(*zip(*points), "-" if s["kind"] == "analytic" else "o--", label=s["label"])
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log")
    pingpong = [[size_label(r["message_bytes"]), fmt(r["ib_s"] * 1e6, 2), fmt(r["fmu_access_s"] * 1e6, 2),
                 fmt(r["fmu_s"] * 1e6, 2), fmt(r["speedup"], 3), r["faster"]] for r in a["rows"]]
    sects = [("FMU cost model: ping-pong without contention (Eq 5, 6, 7)",
              ["size", "IB us (Eq 6)", "FMU access us (Eq 1)", "FMU us (Eq 5)", "speedup", "faster"], pingpong,
              "fmu_speedup_vs_size.png",
              f"Pivot (Eq 7) {fmt(a['pivot_bytes'], 0)} B (paper: 37 KB); asymptote {a['asymptotic_speedup']:.3f}x. "
              "The plot also shows the simulated benchmarks' speedups (16 B MPI overhead per message, contention).")]
    if result["cases"]:
        by_count = {}
        for c in result["cases"]:
            by_count.setdefault((c["benchmark"], c["message_bytes"], c["mapping"]), []).append(c)
        with figure(out / "fmu_speedup_vs_fmus.png", "FMU speedup vs FMU count", "FMUs", "speedup") as ax:
            for (benchmark, size, mapping), cs in by_count.items():
                if len(cs) > 1:
                    ax.plot([c["fmus"] for c in cs], [c["speedup_fmu"] for c in cs], "o-",
                            label=f"{benchmark} {size_label(size) if isinstance(size, int) else fmt(size, 0)}")
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.set_xscale("log", base=2)
        rows = [[c["benchmark"], size_label(c["message_bytes"]) if isinstance(c["message_bytes"], int)
                 else fmt(c["message_bytes"], 0), c["ranks"], c["fmus"], c["mapping"], fmt(c["time_ib_s"], 4),
                 fmt(c["time_fmu_s"], 4), fmt(c["time_hybrid_s"], 4), fmt(c["speedup_fmu"], 2),
                 fmt(c["speedup_hybrid"], 2), c["messages"], fmt(c["mean_first_fmu_wait_s"] * 1e9, 1)]
                for c in result["cases"]]
        sects.append(("FMU simulation: synthetic benchmarks and traces (s.V, Fig 13)",
                      ["benchmark", "size", "ranks", "FMUs", "mapping", "IB s", "FMU s", "hybrid s", "FMU x",
                       "hybrid x", "messages", "first-access wait ns"], rows, "fmu_speedup_vs_fmus.png",
                      "Simulated time of the slowest rank over InfiniBand (Eq 6, rendezvous above the eager "
                      "threshold, NIC sharing), through the FMU pool (Eq 1-5, FIFO per FMU, one circuit per CFMU) "
                      "and hybrid (IB below the pivot)."))
    sects.append(("FMU model against the paper", ["figure", "paper", "model", "deviation", "verdict"],
                  [[c["figure"], c["paper"], fmt(c["model"], 3),
                    "-" if c["deviation"] is None else f"{100 * c['deviation']:+.1f} %",
                    ("PASS" if c["pass"] else "FAIL") + ("" if c["table3_parameters"] else " (other parameters)")]
                   for c in result["checks"]], None,
                  " ".join(["Tolerances: pivot 2 %, 10 MB speedup 1 %, ring speedups 15 %."] +
                           [c["note"] for c in result["checks"] if c.get("note")])))
    return sects
