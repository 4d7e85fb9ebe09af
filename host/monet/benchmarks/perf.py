"""perf stat (cycles, instructions) around STREAM under Linux on the board-in-a-box (paper Fig 19)."""

from monet.benchmarks import NODE_DESCRIBED, Benchmark, Param, register, where_ran
from monet.report.tables import fmt, ipc_text, print_table
from monet.workloads import stream


@register
class Perf(Benchmark):
    """perf stat cycles and instructions around STREAM under Linux (board-in-a-box)."""

    order = 80
    targets = ("qemu", "board")
    axes = ()
    errors = (stream.StreamError,)
    params = (
        Param("node", "NUMA node of the arrays (numactl --membind)", choices=(0, 1), described=NODE_DESCRIBED,
              default=0, sweep=[0, 1]),
        Param("n", "array elements", low=1000, high=10**9, integer=True, default=stream.QEMU_ELEMENTS,
              flag="--elements"),
        Param("reps", "repetitions, the first untimed", low=2, high=1000, integer=True,
              default=stream.QEMU_REPETITIONS),
    )

    smallest = {"node": [1], "n": [1000], "reps": [2]}

    def run(self, target, point, log=None):
        return stream.run_qemu(target, point["node"], n=point["n"], repetitions=point["reps"], perf=True)

    def show(self, point, result):
        print(f"perf stat over STREAM on {point['target']}, node {point['node']}, {point['n']} elements")
        print_table([["cycles", fmt(result.get("cycles"), 0)], ["instructions", fmt(result.get("instructions"), 0)],
                     ["IPC", ipc_text(result)], ["Triad MB/s", f"{result['kernels']['triad']['best_MBps']:.0f}"]],
                    ["figure", "value"])

    def sections(self, records, out):
        pf = sorted((r for r in records if r["point"]["benchmark"] == self.name), key=lambda r: r["point"]["node"])
        if not pf:
            return []
        rows = [[r["point"]["node"], r["point"]["n"], fmt(r["result"].get("cycles"), 0),
                 fmt(r["result"].get("instructions"), 0), ipc_text(r["result"]),
                 f"{r['result']['kernels']['triad']['best_MBps']:.0f}"] for r in pf]
        return [(f"perf stat over STREAM, {where_ran(pf)} (paper Fig 19)",
                 ["node", "elements", "cycles", "instructions", "IPC", "Triad MB/s"], rows, None,
                 "perf stat -e cycles,instructions around STREAM. QEMU counts a virtual clock for cycles and has no "
                 "instructions event (with -icount IPC is 1.00 by construction), so IPC is reported as not "
                 "available; on the board the same command gives the A53's counts.")]
