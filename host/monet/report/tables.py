"""Tables and plots shared by the CLI's output and the report's sections."""

from collections import defaultdict
from contextlib import contextmanager

# Axes and parameters that results from older campaigns may lack.
POINT_DEFAULTS = {"memory": "sram", "size": 64, "profile": "ours", "target": "sim", "window": "uncached",
                  "placement": "remote", "hmc_width": "full", "hmc_native": 0, "pbb_port": "remat", "replay": "gbn"}


# The axes that say which memory a point reached and how (memory_label names them).
MEMORY_SERIES = ("memory", "placement", "hmc_width", "hmc_native", "pbb_port")


def axis(point, key):
    """A point's value of an axis, its default where an older campaign's point lacks it."""
    return point.get(key, POINT_DEFAULTS.get(key))


def memory_label(point):
    """A point's memory as the report names it: the memory, an HMC's width and native link, local placement,
    and "block port" where the benchmark block drove the HMC controller's block port."""
    words = [axis(point, "memory")]
    if words[0] == "hmc":
        words.append(axis(point, "hmc_width"))
        if axis(point, "hmc_native"):
            words.append("native")
    if axis(point, "placement") == "local":
        words.append("local")
    if axis(point, "pbb_port") == "hmc":
        words.append("block port")
    return " ".join(words)


def fmt(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def ipc_text(result):
    return f"{result['ipc']:.3f}" if result.get("ipc") is not None else \
        f"n/a: {result.get('ipc_note') or 'not measured'}"


def markdown_table(header, rows):
    """A Markdown table's lines."""
    return ["| " + " | ".join(str(h) for h in header) + " |", "|" + "---|" * len(header)] + \
        ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def table_lines(rows, headers):
    """A plain-text table's lines, columns padded to their widest cell."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    return ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in [headers, *rows]]


def print_table(rows, headers):
    for line in table_lines(rows, headers):
        print(line)


def group(records, benchmark, keys):
    """A benchmark's records grouped by the values of `keys` in their points."""
    groups = defaultdict(list)
    for r in records:
        if r["point"]["benchmark"] == benchmark:
            groups[tuple(axis(r["point"], k) for k in keys)].append(r)
    return groups


# Read and write (and a mix) told apart in every plot by marker and line, not by colour alone.
OP_MARKERS = {"read": "o", "write": "s", "mixed": "^"}
OP_LINES = {"read": "-", "write": "--", "mixed": "-."}


def op_style(op, line="op"):
    """A matplotlib format for an `op`'s series: its marker, and its line (`line`="op"), the given one, or none."""
    return OP_MARKERS.get(op, "o") + (OP_LINES.get(op, "-") if line == "op" else line or "")


def paper_memory(records):
    """The remote records of the paper's memory: DDR4 where the campaign ran it, else the on-card SRAM (the
    report sets these beside the paper's DDR4 figures)."""
    remote = [r for r in records if axis(r["point"], "placement") == "remote"]
    return [r for r in remote if axis(r["point"], "memory") == "ddr4"] or \
        [r for r in remote if axis(r["point"], "memory") == "sram"]


@contextmanager
def figure(path, title, xlabel, ylabel):
    """A matplotlib axes (headless) saved to `path` with its title, labels, grid and legend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        yield ax
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:      # a plot of one unnamed series has no legend
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)
