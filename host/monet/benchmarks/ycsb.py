"""YCSB workloads A, B, C, F against memcached: ops/s, latency and IPC (paper Figs 15-18)."""

from monet.benchmarks import Benchmark, Param, Verdict, register, where_ran
from monet.benchmarks.stream import refuse_remote_node
from monet.report.paper import PAPER_YCSB
from monet.report.tables import figure, ipc_text, print_table
from monet.workloads import ycsb


def _us(v):
    return "-" if v is None else f"{v:.1f}"


@register
class Ycsb(Benchmark):
    """YCSB workload A, B, C or F against memcached: ops/s, latency, IPC."""

    order = 60
    targets = ("qemu", "board", "host")
    axes = ()
    errors = (ycsb.YcsbError,)
    forward_port = True
    params = (
        Param("workload", "YCSB core workload", choices=ycsb.WORKLOADS, convert=str.lower, required=True,
              sweep=list(ycsb.WORKLOADS)),
        Param("node", "NUMA node of memcached's memory (numactl --membind; qemu default 1, the remote stand-in)",
              choices=tuple(range(8)), sweep=[1]),
        Param("operations", "operations in the run phase", low=1, high=10**8, integer=True, default=10_000),
        Param("threads", "YCSB client threads", low=1, high=64, integer=True, default=4),
    )

    smallest = {"workload": ["c"], "operations": [100], "threads": [1]}

    def refuse(self, values, targets):
        return refuse_remote_node(values, targets)

    def run(self, target, point, log=None):
        if point["target"] == "host":
            return ycsb.run_host(point["workload"], node=point["node"], threads=point["threads"],
                                 operations=point["operations"], log=log or print)
        return ycsb.run_qemu(target, point["workload"], node=1 if point["node"] is None else point["node"],
                             threads=point["threads"], operations=point["operations"], log=log or print)

    def verdicts(self, point, result):
        return [Verdict(f"{result['failed']} failed operations", result["failed"] == 0, gates=True)]

    def show(self, point, result):
        print(f"YCSB workload {point['workload'].upper()} on memcached ({point['target']}"
              + (f", node {point['node']}" if point["node"] is not None else "") + f"), {result['threads']} threads, "
              f"{result['operations']} operations")
        print_table([[name, v["operations"], _us(v["avg_us"]), _us(v["p95_us"]), _us(v["p99_us"]), v["failed"]]
                     for name, v in sorted(result["per_operation"].items())],
                    ["operation", "count", "avg (us)", "p95 (us)", "p99 (us)", "failed"])
        print(f"throughput {result['ops_per_s']:.1f} ops/s, average latency {_us(result['avg_latency_us'])} us, "
              f"p99 {_us(result['p99_latency_us'])} us")
        print("IPC " + (f"{result['ipc']:.3f}" if result["ipc"] is not None
                        else f"not available: {result['ipc_note']}"))

    def sections(self, records, out):
        yc = sorted((r for r in records if r["point"]["benchmark"] == self.name),
                    key=lambda r: (r["point"]["workload"], r["point"]["node"]))
        if not yc:
            return []
        rows = [[r["point"]["workload"].upper(), r["point"]["node"], r["point"]["threads"], r["result"]["operations"],
                 f"{r['result']['ops_per_s']:.0f}", f"{r['result']['avg_latency_us'] / 1000:.2f}",
                 f"{r['result']['p99_latency_us'] / 1000:.2f}", r["result"]["failed"], ipc_text(r["result"])]
                for r in yc]
        with figure(out / "ycsb.png", "YCSB on memcached, QEMU (paper Figs 15-18)", "workload", "ops/s") as ax:
            labels = [f"{r['point']['workload'].upper()} n{r['point']['node']}" for r in yc]
            ax.bar(labels, [r["result"]["ops_per_s"] for r in yc], label="ops/s")
            ax.axhline(PAPER_YCSB["ops_per_s"], color="k", ls=":", label="paper: local DDR4 on the A53 (about 1400)")
        return [(f"YCSB on memcached, {where_ran(yc)} (paper Figs 15-18)",
                 ["workload", "node", "threads", "operations", "ops/s", "avg (ms)", "p99 (ms)", "failed",
                  "IPC (memcached)"], rows, "ycsb.png",
                 "The real YCSB core (0.17.0) and our spymemcached binding on the host, memcached in the guest bound "
                 "to the node by the overlay's monet-memcached, through a forwarded loopback port. Average: each "
                 "top-level operation type weighted by its count; p99: the largest per-type p99. IPC: perf stat on "
                 "memcached during the run; under emulation it is not meaningful and is not printed. The paper: "
                 f"about {PAPER_YCSB['ops_per_s']} ops/s, {PAPER_YCSB['avg_latency_ms']} ms, IPC {PAPER_YCSB['ipc']} "
                 "(local DDR4, A53).")]
