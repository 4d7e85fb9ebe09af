#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Resources and logic depth of the board cores without Vivado (`monet board estimate`).

Each core is converted alone by Migen, with its interface (the endpoints, records and signals it keeps as
attributes) as the ports of its top, so that nothing it drives is optimised away and nothing it takes is a
constant. Yosys (Debian's, `synth_xilinx -family xcup -flatten -noiopad -nowidelut`) maps it to UltraScale+
cells, and the netlist is read back: LUTs, flip-flops, block RAM in RAMB36 equivalents, LUT RAM, DSPs, and the deepest
path between registers in logic levels, counted as Vivado counts them: each LUT, MUXF7/8/9 and LUT-RAM read
a level, each CARRY8 a level. Yosys 0.23 maps carries to CARRY4 even for UltraScale+; two CARRY4 stand for
one CARRY8, so a CARRY4 counts half a level and a path's count is rounded up.

This is an estimate: Vivado's own synthesis packs and retimes differently, and routing is not modelled. The
goal (DESIGN s.8, issue 14) is no core deeper than GOAL_LEVELS at 250 MHz on a ZynqMP -2 part.
"""

import json
import math
import re
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field

from migen import Signal
from migen.fhdl import verilog
from migen.fhdl.module import Module
from migen.fhdl.specials import _MemoryPort

GOAL_LEVELS = 8
FAMILY = "xcup"
# The ZCU102's xczu9eg (DS891): what a card's cores must fit in.
XCZU9EG = {"luts": 274_080, "ffs": 548_160, "bram36": 912, "dsps": 2_520}
# -nowidelut: ABC's default library makes a LUT6 with MUXF7/MUXF8 behind it one 7- or 8-input LUT of unit delay,
# so it maps for a depth that counts those as one level while they are two or three here (and in Vivado's
# count); without wide LUTs it minimises the depth that is reported.
SYNTHESIS = f"synth_xilinx -family {FAMILY} -top top -flatten -noiopad -nowidelut"
YOSYS_SCRIPT = f"read_verilog top.v; {SYNTHESIS}; write_json net.json"

# Cells that end a path (their outputs start one): registers, block RAM, shift registers, DSPs.
SEQUENTIAL_PREFIXES = ("FD", "RAMB", "SRL", "DSP48", "BUFG")
LEVEL_WEIGHT = {"CARRY4": 0.5, "CARRY8": 1.0, "MUXF7": 1.0, "MUXF8": 1.0, "MUXF9": 1.0}
LUT_RAM_PREFIXES = ("RAM32", "RAM64", "RAM128", "RAM256")
# A LUT RAM's read address (ADDRx, DPRAx, or Ax of a single-port one) reaches its data output through the
# LUT; its write inputs end at the RAM.
LUT_RAM_READ_PORTS = ("ADDR", "DPRA")


class EstimateError(RuntimeError):
    """Yosys is missing or failed, or a core could not be converted."""


@dataclass
class CoreEstimate:
    name: str
    luts: int = 0
    ffs: int = 0
    bram36: float = 0.0
    lutram_cells: int = 0
    dsps: int = 0
    carry_cells: int = 0
    levels: int = 0
    deepest_end: str = ""         # the register (or port) the deepest path ends at
    deepest_path: list = field(default_factory=list)   # its cells from the start, with a net each drives
    over_goal: dict = field(default_factory=dict)      # every path end deeper than the goal: its levels
    seconds: float = 0.0
    cells: dict = field(default_factory=dict)

    @property
    def meets_goal(self):
        return self.levels <= GOAL_LEVELS


def interface_signals(module):
    """The signals of a core's interface: every Signal, Record (stream endpoints included) or object with
    `flatten()` (a DFI interface) the core keeps as an attribute, in a list of them, a memory port's signals
    or a plain object of ours that holds endpoints (a ReMAT port); not its submodules'."""
    signals = set()

    def add(value):
        if isinstance(value, Signal):
            signals.add(value)
        elif isinstance(value, Module):
            return
        elif isinstance(value, (list, tuple)):
            for item in value:
                add(item)
        elif isinstance(value, _MemoryPort):
            add([s for s in (value.adr, value.dat_r, value.we, value.dat_w, value.re) if s is not None])
        elif callable(getattr(value, "flatten", None)):        # a Record, a stream endpoint, a DFI interface
            signals.update(s for s in value.flatten() if isinstance(s, Signal))
        elif type(value).__module__.startswith("monet.") and hasattr(value, "__dict__"):
            for item in vars(value).values():
                add(item)

    for name, value in vars(module).items():
        if not name.startswith("_"):
            add(value)
    return signals


def _yosys():
    path = shutil.which("yosys")
    if path is None:
        raise EstimateError("yosys is not installed: `make setup` installs Debian's (apt package yosys)")
    return path


def synthesize(name, module, workdir=None):
    """Converts `module` with its interface as ports, synthesises it with Yosys and returns its CoreEstimate."""
    started = time.time()
    conv = verilog.convert(module, ios=interface_signals(module), name="top")
    folder = tempfile.mkdtemp(prefix=f"monet-estimate-{name}-", dir=workdir)
    try:
        with open(os.path.join(folder, "top.v"), "w") as f:
            f.write(conv.main_source)
        for data_name, content in conv.data_files.items():
            with open(os.path.join(folder, data_name), "w") as f:
                f.write(content)
        run = subprocess.run([_yosys(), "-q", "-l", "yosys.log", "-p", YOSYS_SCRIPT],
                             cwd=folder, capture_output=True, text=True)
        if run.returncode != 0:
            raise EstimateError(f"yosys failed on core {name!r} (in {folder}):\n{run.stderr[-2000:]}")
        with open(os.path.join(folder, "net.json")) as f:
            netlist = json.load(f)
    except (OSError, ValueError) as e:
        raise EstimateError(f"core {name!r}: could not read Yosys's netlist in {folder} ({e})") from None
    shutil.rmtree(folder, ignore_errors=True)
    estimate = read_netlist(name, netlist["modules"]["top"])
    estimate.seconds = round(time.time() - started, 1)
    return estimate


def _level(cell_type):
    """The logic levels a cell adds to a path through it, or None for a cell that ends paths."""
    if cell_type.startswith(SEQUENTIAL_PREFIXES):
        return None
    if cell_type.startswith("LUT") or cell_type.startswith(LUT_RAM_PREFIXES):
        return 1.0
    return LEVEL_WEIGHT.get(cell_type, 0.0)      # INV, GND, VCC... fold into the LUTs around them


def _through(cell_type, port):
    """Whether an input port of a cell is on a combinational path to its outputs."""
    if cell_type.startswith(LUT_RAM_PREFIXES):
        return port.startswith(LUT_RAM_READ_PORTS) or port[0] == "A" and port[1:].isdigit()
    return True


def read_netlist(name, top):
    """Counts the cells of a synthesised netlist (Yosys JSON, one flattened module) and its deepest path."""
    cells = top["cells"]
    counts = {}
    for cell in cells.values():
        counts[cell["type"]] = counts.get(cell["type"], 0) + 1
    estimate = CoreEstimate(name, cells=dict(sorted(counts.items())))
    for cell_type, n in counts.items():
        if cell_type.startswith("LUT"):
            estimate.luts += n
        elif cell_type.startswith("FD"):
            estimate.ffs += n
        elif cell_type.startswith("RAMB36"):
            estimate.bram36 += n
        elif cell_type.startswith("RAMB18"):
            estimate.bram36 += n / 2
        elif cell_type.startswith(LUT_RAM_PREFIXES):
            estimate.lutram_cells += n
        elif cell_type.startswith("DSP48"):
            estimate.dsps += n
        elif cell_type.startswith("CARRY"):
            estimate.carry_cells += n
    estimate.levels, estimate.deepest_end, estimate.deepest_path, estimate.over_goal = _deepest_path(cells, top)
    return estimate


def _deepest_path(cells, top):
    """(levels, the name of its end, its cells) of the deepest path from a register or port to a register or
    port, and {end name: levels} of every end deeper than GOAL_LEVELS, deepest first (an array's registers under
    one name ending in *): what is left to cut."""
    driver = {}                     # net bit -> the combinational cell driving it
    for cname, cell in cells.items():
        if _level(cell["type"]) is None:
            continue
        for port, direction in cell["port_directions"].items():
            if direction == "output":
                for bit in cell["connections"][port]:
                    driver[bit] = cname
    depth, visiting, came_from = {}, set(), {}

    def arrival(cname):
        """Levels from a path's start to this cell's outputs (iterative: paths are thousands of cells deep; a
        combinational loop, which synthesis should not leave, is cut where it closes)."""
        stack = [cname]
        while stack:
            current = stack[-1]
            if current in depth:
                stack.pop()
                continue
            cell = cells[current]
            pending, best, best_src = [], 0.0, None
            for port, direction in cell["port_directions"].items():
                if direction != "input" or not _through(cell["type"], port):
                    continue
                for bit in cell["connections"][port]:
                    src = driver.get(bit)
                    if src is None or src in visiting and src not in depth:
                        continue
                    if src in depth:
                        if depth[src] > best:
                            best, best_src = depth[src], src
                    else:
                        pending.append(src)
            if pending and current not in visiting:
                visiting.add(current)
                stack.extend(pending)
                continue
            depth[current] = best + _level(cell["type"])
            came_from[current] = best_src
            stack.pop()
        return depth[cname]

    names = {bit: net for net, info in top["netnames"].items() if not info.get("hide_name")
             for bit in info["bits"] if isinstance(bit, int)}
    deepest, end, last = 0.0, "", None
    # Path ends: the inputs of cells that end paths (a LUT RAM's write inputs too) and the output ports.
    ends = []
    for cname, cell in cells.items():
        if _level(cell["type"]) is None or cell["type"].startswith(LUT_RAM_PREFIXES):
            ends += [(bit, cname) for port, direction in cell["port_directions"].items() if direction == "input"
                     for bit in cell["connections"][port]]
    ends += [(bit, pname) for pname, port in top["ports"].items() if port["direction"] == "output"
             for bit in port["bits"]]

    def named(cname, direction):
        """A public net on the cell's outputs or inputs, for the report."""
        cell = cells[cname]
        return next((names[bit] for port, d in cell["port_directions"].items() if d == direction
                     for bit in cell["connections"][port] if bit in names), "")

    over_goal = {}
    for bit, where in ends:
        src = driver.get(bit)
        levels = arrival(src) if src is not None else 0.0
        if levels <= GOAL_LEVELS and levels <= deepest:
            continue
        name = names.get(bit) or (named(where, "output") if where in cells else where) or where
        if levels > GOAL_LEVELS:
            group = re.sub(r"\d+$", "*", name)     # an array's registers (tag_addr0 .. tag_addr127) as one
            over_goal[group] = max(over_goal.get(group, 0), math.ceil(levels))
        if levels > deepest:
            deepest, last, end = levels, src, name
    path = []
    while last is not None:
        first, net = last, named(last, "output")
        path.append(cells[last]["type"] + (f" {net}" if net else ""))
        last = came_from.get(last)
    if path:
        path.append(f"from {named(first, 'input') or '?'}")
    return math.ceil(deepest), end, path[::-1], dict(sorted(over_goal.items(), key=lambda kv: (-kv[1], kv[0])))


def as_json(estimates):
    return [dict(asdict(e), meets_goal=e.meets_goal) for e in estimates]


def _with_ports(core, **ports):
    """`core` holding `ports` (endpoints it was given rather than made) as attributes, so that they are part
    of its interface."""
    for name, value in ports.items():
        setattr(core, name, value)
    return core


def _pbb():
    from monet.cores.hmc.host import block_txn_layout
    from monet.cores.pbb.core import PBB
    from monet.cores.remat.port import RematPort
    from litex.soc.interconnect import stream
    port, block = RematPort(), (stream.Endpoint(block_txn_layout), stream.Endpoint(block_txn_layout))
    from monet.soc.cards import PBB_BUCKETS, REMOTE_TAGS
    return _with_ports(PBB(port, max_outstanding=REMOTE_TAGS, buckets=PBB_BUCKETS, block_port=block), port=port,
                       block_port=block)


def _board_lanes(lanes=8):
    """The transceiver lanes' codec (phy/gt_lanes.py) for 8 lanes, its clock crossings in one clock; the
    transceivers' stream endpoints are its ports."""
    from litex.soc.interconnect import stream
    from monet.cores.phy.gt_lanes import TransceiverLanes, word_layout
    ends = [(stream.Endpoint(word_layout), stream.Endpoint(word_layout)) for _ in range(lanes)]
    serdes = [type("Transceiver", (), {"sink": sink, "source": source})() for sink, source in ends]
    core = TransceiverLanes(serdes, "sys", ["sys"] * lanes)
    return _with_ports(core, transceivers=[endpoint for pair in ends for endpoint in pair])


def _stages(card):
    """A card's stage timer as litex/soc/remote.py wires it, what it watches (ReMAT's take and delivery, the
    link's transaction ends and its beats to and from the lanes) as its ports."""
    from types import SimpleNamespace
    from litex.soc.interconnect import stream
    from monet.cores.common.layouts import beat_layout, txn_layout
    from monet.cores.link.core import LinkEndpoint
    from monet.soc.remote import compute_stages, memory_stages

    class LinkEnds:
        # What watch_stages reads of a link endpoint; it fails here, not silently, if it comes to read more.
        watch_stages = LinkEndpoint.watch_stages

        def __init__(self):
            self.sink, self.source = stream.Endpoint(txn_layout), stream.Endpoint(txn_layout)
            self.framer = SimpleNamespace(source=stream.Endpoint(beat_layout))
            self.deskew = SimpleNamespace(source=stream.Endpoint(beat_layout))
    link = LinkEnds()
    ends = {"link_sink": link.sink, "link_source": link.source, "tx_beat": link.framer.source,
            "rx_beat": link.deskew.source}
    if card == "compute":
        remat = SimpleNamespace(taken=Signal(name="taken"), delivered=Signal(name="delivered"))
        timer = compute_stages(remat, link)
        ends.update(taken=remat.taken, delivered=remat.delivered)
    else:
        timer = memory_stages(link)
    return _with_ports(timer, **ends)


def _compute_card():
    from monet.cores.hmc.host import HMCHostController
    from monet.cores.link.core import LinkEndpoint
    from monet.cores.remat.core import ReMAT
    from monet.soc.cards import LINK_CREDITS, LINK_RETRY_DEPTH, REMOTE_SECTION_BITS, REMOTE_SECTIONS, REMOTE_TAGS
    return {
        # Two AXI HP ports of the PS and the benchmark block; 16 sections of 256 MB; the link and the card's
        # own memory as targets.
        "remat": lambda: ReMAT(n_sections=REMOTE_SECTIONS, section_bits=REMOTE_SECTION_BITS, tags=REMOTE_TAGS,
                               n_ports=3, n_targets=2),
        "link": lambda: LinkEndpoint(Signal(2, name="lanes_log2"), retry_depth=LINK_RETRY_DEPTH,
                                     credit_limit=LINK_CREDITS),
        "pbb": _pbb,
        "hmc_host": lambda: HMCHostController(with_block_port=True),
        "lanes": _board_lanes,
        "stages": lambda: _stages("compute"),
    }


def _memcard():
    """The memory card core as the board has it (512 MB of DDR4, as many requests as ReMAT has tags), its DDR4
    front (estimated alone as `ddr4`) left out: its request and answer endpoints are ports. The SRAM is 16 KB,
    not the board's 256 KB: Yosys 0.23 maps a 4096-line SRAM written by bytes to LUT RAM and fails; the logic
    around it is the same but for the width of its address."""
    from litex.gen import LiteXModule
    from litex.soc.interconnect import stream
    from monet.cores.memcard.core import MemoryCard
    from monet.cores.memcard.ddr4 import request_layout
    from monet.soc.cards import REMOTE_TAGS
    ddr4 = LiteXModule()
    ddr4.sink, ddr4.source = stream.Endpoint(request_layout()), stream.Endpoint(request_layout())
    card = MemoryCard(size=512 * 1024 * 1024, sram_size=16 * 1024, max_outstanding=REMOTE_TAGS, ddr4=ddr4,
                      gate_clocks=False)
    return _with_ports(card, ddr4_sink=ddr4.sink, ddr4_source=ddr4.source)


def _memory_card():
    from monet.cores.link.core import LinkEndpoint
    from monet.cores.memcard.ddr4 import DDR4_DEPTH, DDR4Memory, MTA8ATF51264HZ
    from monet.soc.cards import LINK_RETRY_DEPTH
    return {
        "link": lambda: LinkEndpoint(Signal(2, name="lanes_log2"), retry_depth=LINK_RETRY_DEPTH),
        "lanes": _board_lanes,
        "memcard": _memcard,
        "stages": lambda: _stages("memory"),
        # The whole 512 MB module, without the sim's PHY model: a board's USPDDRPHY takes its DFI.
        "ddr4": lambda: DDR4Memory(MTA8ATF51264HZ.nbanks * MTA8ATF51264HZ.ncols * MTA8ATF51264HZ.nrows * 8,
                                   250e6, depth=DDR4_DEPTH, with_phy_model=False),
    }


def _pooled_memcard():
    """The pooled memory card's core: the board's memory card core (`_memcard`) behind POOLED_PORTS link ports
    (MemoryPorts: as many requests a port as a requester has tags, as many at the card as ReMAT has), the ports'
    settings, counters and link ends as its ports. `memcard.ports` is the ports alone."""
    from monet.cores.memcard.ports import MemoryPorts
    from monet.soc.facts import POOLED_PORTS, REMOTE_TAGS
    card = _memcard()
    card.ports = ports = MemoryPorts(n_ports=POOLED_PORTS, max_outstanding=REMOTE_TAGS, tags=REMOTE_TAGS)
    card.comb += [ports.source.connect(card.sink), card.source.connect(ports.sink)]
    return _with_ports(card, pooled=list(interface_signals(ports)))


def _pooled_memory_card():
    # Its links, lanes and DDR4 front are the memory card's, one link and lanes a port. Beside it, the ReMAT of
    # a card of the pooled model: the compute card's (its three ports, and three targets: the link, its local
    # memory, its second link) with the hold a move needs.
    from monet.cores.remat.core import ReMAT
    from monet.soc.cards import REMOTE_SECTION_BITS, REMOTE_SECTIONS, REMOTE_TAGS
    return {"memcard": _pooled_memcard,
            "remat": lambda: ReMAT(n_sections=REMOTE_SECTIONS, section_bits=REMOTE_SECTION_BITS, tags=REMOTE_TAGS,
                                   n_ports=3, n_targets=3, with_hold=True)}


CARDS = {"compute": _compute_card, "memory": _memory_card, "pooled": _pooled_memory_card}


def card_cores(card):
    """{core name: a function that makes the core with the card's parameters}."""
    if card not in CARDS:
        raise EstimateError(f"unknown card {card!r}: accepted are {', '.join(CARDS)}")
    return CARDS[card]()


def yosys_version():
    run = subprocess.run([_yosys(), "-V"], capture_output=True, text=True)
    return run.stdout.strip()


def parts(module):
    """{attribute name: submodule} of a core: the parts `core.part` names (the link's framer, deframer...)."""
    return {name: value for name, value in vars(module).items() if isinstance(value, Module) and not name.startswith("_")}


def make_core(name, makers):
    """The core `name` of the card, or with `core.part[.part...]` one part of it alone, its attributes (the
    signals its parent drives or reads) as its ports: to find which part of a deep core to cut."""
    core_name, *path = name.split(".")
    module = makers[core_name]()
    for i, part in enumerate(path):
        accepted = parts(module)
        if part not in accepted:
            where = ".".join([core_name] + path[:i])
            raise EstimateError(f"{where} has no part {part!r}: accepted are {', '.join(accepted) or 'none'}")
        module = accepted[part]
    return module


def estimate_card(card, cores=None, log=print):
    """Synthesises the card's cores (all, or those named; `core.part` for a part of one) one after the other,
    logging each as it ends; returns the result: each core's figures, the card's totals against the xczu9eg, the
    goal and Yosys's version."""
    makers = card_cores(card)
    cores = list(makers) if not cores else cores
    unknown = [name for name in cores if name.split(".")[0] not in makers]
    if unknown:
        raise EstimateError(f"card {card!r} has no core {', '.join(map(repr, unknown))}: accepted are "
                            f"{', '.join(makers)} (and their parts as core.part)")
    # Every core and part is made (and a bad part name refused) before the first synthesis, which takes minutes.
    modules = [make_core(name, makers) for name in cores]
    from monet.soc.conversion import use_fast_conversion
    use_fast_conversion()
    version = yosys_version()
    estimates = []
    for i, (name, module) in enumerate(zip(cores, modules), 1):
        log(f"estimate: {card} card, {name} ({i}/{len(cores)}): Yosys synth_xilinx -family {FAMILY}")
        e = synthesize(name, module)
        estimates.append(e)
        log(f"estimate: {name}: {e.luts} LUTs, {e.ffs} FFs, {e.levels} levels ({e.seconds} s)")
    totals = {key: sum(getattr(e, key) for e in estimates) for key in ("luts", "ffs", "bram36", "dsps")}
    return {
        "card": card, "family": FAMILY, "part": "xczu9eg", "yosys": version, "synthesis": SYNTHESIS,
        "goal_levels": GOAL_LEVELS,
        "cores": as_json(estimates), "totals": totals,
        "utilisation": {key: totals[key] / XCZU9EG[key] for key in totals},
        "pass": all(e.meets_goal for e in estimates),
    }


def table_rows(result):
    rows = [[c["name"], c["luts"], c["ffs"], f"{c['bram36']:g}", c["lutram_cells"], c["dsps"], c["levels"],
             "PASS" if c["meets_goal"] else "FAIL", c["deepest_end"]] for c in result["cores"]]
    t, u = result["totals"], result["utilisation"]
    rows.append(["total", f"{t['luts']} ({u['luts']:.1%})", f"{t['ffs']} ({u['ffs']:.1%})",
                 f"{t['bram36']:g} ({u['bram36']:.1%})", "", f"{t['dsps']}", "", "", ""])
    return rows


TABLE_HEADERS = ["core", "LUTs", "FFs", "BRAM36", "LUT RAM", "DSPs", "levels", f"<= {GOAL_LEVELS}", "deepest path ends at"]
