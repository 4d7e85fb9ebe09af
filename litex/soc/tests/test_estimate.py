"""`monet board estimate` (litex/soc/estimate.py): a core's interface becomes its ports, so its logic survives
synthesis; registers, LUT RAM and block RAM are counted; the depth between registers is counted in logic
levels and names where the deepest path ends; a priority chain as long as ReMAT's tag search is found too
deep while the same search registered in 16-bit slices is not, and the ends above the goal are listed; bad
card or core names are refused; ReMAT meets the goal."""

import json
import subprocess
import sys

import pytest
from migen import Cat, If, Memory, Module, Signal

from monet.soc import estimate

pytestmark = pytest.mark.skipif(not estimate.shutil.which("yosys"), reason="yosys is installed by make setup")


class Counter(Module):
    """A 16-bit counter with an enable: 16 flip-flops and a carry chain, two CARRY8s (four CARRY4s)."""
    def __init__(self):
        self.enable = Signal()
        self.count = Signal(16)
        self.sync += If(self.enable, self.count.eq(self.count + 1))


class FirstFree(Module):
    """The lowest set bit of a `width`-bit mask, as ReMAT picks a free tag: a chain of `width` priorities.
    With `slices`, each 16-bit slice's answer is registered first and the slices are chosen a cycle later."""
    def __init__(self, width, slices=False):
        self.mask = Signal(width)
        self.first = Signal(max=width)
        mask = Signal(width)
        self.sync += mask.eq(self.mask)
        if not slices:
            found = Signal(max=width)
            self.comb += [If(mask[t], found.eq(t)) for t in reversed(range(width))]
            self.sync += self.first.eq(found)
            return
        n = width // 16
        found = [Signal(4, name=f"found{s}") for s in range(n)]
        some = Signal(n)
        for s in range(n):
            part = mask[16 * s:16 * (s + 1)]
            self.sync += [If(part[t], found[s].eq(t)) for t in reversed(range(16))]
            self.sync += some[s].eq(part != 0)
        chosen = Signal(max=width)
        self.comb += [If(some[s], chosen.eq(Cat(found[s], s))) for s in reversed(range(n))]
        self.sync += self.first.eq(chosen)


class SmallTable(Module):
    """A 64 x 32 table read asynchronously (LUT RAM) at the sum of two registers, into a register."""
    def __init__(self):
        self.a, self.b = Signal(6), Signal(6)
        a, b = Signal(6), Signal(6)
        self.sync += a.eq(self.a), b.eq(self.b)
        self.specials.table = table = Memory(32, 64)
        self.write, read = table.get_port(write_capable=True), table.get_port(async_read=True)
        self.specials += self.write, read
        self.data = Signal(32)
        self.comb += read.adr.eq(a + b)
        self.sync += self.data.eq(read.dat_r)


class LargeTable(Module):
    """A 1024 x 36 table read through a register: block RAM."""
    def __init__(self):
        self.specials.table = table = Memory(36, 1024)
        self.write, self.read = table.get_port(write_capable=True), table.get_port()
        self.specials += self.write, self.read


def test_the_interface_of_a_core_is_its_ports_and_its_logic_survives():
    e = estimate.synthesize("counter", Counter())
    assert e.ffs == 16 and e.carry_cells > 0
    assert e.levels == 2
    assert e.deepest_end == "count"
    # The table the CLI prints: the core's row, then the totals against the part.
    totals = {"luts": e.luts, "ffs": e.ffs, "bram36": 0, "dsps": 0}
    rows = estimate.table_rows({"cores": estimate.as_json([e]), "totals": totals,
                                "utilisation": {k: v / estimate.XCZU9EG[k] for k, v in totals.items()}})
    assert rows[0] == ["counter", e.luts, 16, "0", 0, 0, 2, "PASS", "count"]
    assert rows[1][0] == "total" and rows[1][2] == "16 (0.0%)"
    assert len(rows[0]) == len(estimate.TABLE_HEADERS)


def test_a_priority_chain_as_long_as_the_tag_search_is_too_deep_and_its_sliced_form_is_not():
    chain = estimate.synthesize("first_free", FirstFree(128))
    sliced = estimate.synthesize("first_free_sliced", FirstFree(128, slices=True))
    assert chain.levels > estimate.GOAL_LEVELS and not chain.meets_goal
    assert chain.deepest_end == "first"
    assert chain.deepest_path[0].startswith("from ")
    assert chain.over_goal == {"first": chain.levels}      # what is left to cut
    assert sliced.levels <= estimate.GOAL_LEVELS and sliced.meets_goal and sliced.over_goal == {}
    assert sliced.ffs > chain.ffs          # the slices' registers


def test_lut_ram_and_block_ram_are_counted_apart_and_a_lut_ram_read_is_a_level():
    small = estimate.synthesize("small_table", SmallTable())
    assert small.lutram_cells > 0 and small.bram36 == 0
    # The sum's logic, then the LUT RAM's read: the read address is on the path to `data`.
    assert small.levels >= 2 and small.deepest_end == "data"
    large = estimate.synthesize("large_table", LargeTable())
    assert large.bram36 == 1 and large.lutram_cells == 0


def _monet(*args):
    return subprocess.run([sys.executable, "-m", "monet.cli", "board", "estimate", *args], capture_output=True,
                          text=True, timeout=600)


def test_an_unknown_core_or_card_is_refused_with_the_accepted_names():
    run = _monet("--card", "memory", "--cores", "ddr4,hmc_device")
    assert run.returncode == 2
    assert "card 'memory' has no core 'hmc_device': accepted are link, lanes, memcard, stages, ddr4 (and their parts" in run.stderr
    assert "Traceback" not in run.stderr
    run = _monet("--card", "storage")
    assert run.returncode == 2 and "invalid choice: 'storage' (choose from 'compute', 'memory', 'pooled')" in run.stderr


def test_the_cli_prints_a_core_s_figures_and_its_verdict_in_json():
    # ReMAT hands out tags from a free list and pipelines its answer and timeout paths: within the goal
    # (a priority search over its 128 tags was 72 levels, issue 14).
    run = _monet("--card", "compute", "--cores", "remat", "--json")
    result = json.loads(run.stdout)
    core, = result["cores"]
    assert core["name"] == "remat" and core["luts"] > 1000 and core["ffs"] > 1000
    assert result["yosys"].startswith("Yosys ") and result["part"] == "xczu9eg"
    assert result["synthesis"].startswith("synth_xilinx -family xcup") and "-nowidelut" in result["synthesis"]
    assert result["pass"] == core["meets_goal"] == (core["levels"] <= 8) is True and core["over_goal"] == {}
    assert run.returncode == 0
    assert "estimate: compute card, remat (1/1)" in run.stderr


def test_a_core_given_its_ports_keeps_them_in_its_interface():
    # The benchmark block is given ReMAT's port and the HMC block port; without them as ports, synthesis
    # would keep 6 LUTs of it.
    pbb = estimate.card_cores("compute")["pbb"]()
    signals = estimate.interface_signals(pbb)
    assert {pbb.port.req.valid, pbb.port.rsp.ready, pbb.block_port[0].valid, pbb.start} <= signals


def test_the_ends_left_above_the_goal_are_listed_per_failing_core_deepest_first():
    from monet.cli import OVER_GOAL_SHOWN, over_goal_lines
    deep = {f"reg{i}*": 30 - i for i in range(OVER_GOAL_SHOWN + 2)}
    result = {"goal_levels": 8, "cores": [{"name": "remat", "over_goal": {}},
                                          {"name": "link", "over_goal": {"framer_txbuf*": 24, "retry_timer": 21}},
                                          {"name": "pbb", "over_goal": deep}]}
    lines = over_goal_lines(result)
    assert lines[0] == "link: 2 path ends above 8 levels: framer_txbuf* 24, retry_timer 21"
    assert lines[1].startswith(f"pbb: {OVER_GOAL_SHOWN + 2} path ends above 8 levels: reg0* 30, reg1* 29")
    assert lines[1].endswith(" and 2 more") and len(lines) == 2


def test_a_part_of_a_core_is_estimated_alone_and_an_unknown_part_is_refused_with_the_parts():
    # The link's retry buffer alone: its sequence numbers, timer and window are its own registers (the
    # link's other parts are not in it); `link.nothing` names the parts there are.
    run = _monet("--card", "memory", "--cores", "link.retry", "--json")
    core, = json.loads(run.stdout)["cores"]
    assert core["name"] == "link.retry" and 0 < core["luts"] < 5000 and 100 < core["ffs"] < 1000
    run = _monet("--card", "memory", "--cores", "link.nothing")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "link has no part 'nothing': accepted are " in run.stderr
    assert {"framer", "deframer", "retry", "prbs"} <= set(run.stderr.split("accepted are ")[1].strip().split(", "))
