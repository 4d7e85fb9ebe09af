"""`monet board build` (litex/soc/board.py, cards.py, zcu102.py, zcu111.py): each card generates here without
Vivado, with one transceiver channel a lane and a quad PLL a quad, the compute card's PS with its two master
ports into ReMAT, the memory card's LiteDRAM on the PL DDR4 and its CPU; the CSR map, the C headers and
firmware/lib's drivers agree; the ZCU111 compute card has its GTY lanes on the SFP28 cages; bad settings are
refused by name."""

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from monet.board.build import BoardError, build_card
from monet.cli import main
from monet.locks import exclusive
from monet.repo import REPO
from monet.sim import ctl
from monet.soc import zcu111
from monet.soc.board import default_output
from monet.soc.facts import code_constants
from monet.soc.zcu102 import _sfp_pins

CARDS = {"compute": dict(lanes=8, rate=15.0, delay_line=True), "memory": dict(lanes=2, rate=10.0)}
# The drivers of firmware/lib each card's CSRs must serve.
DRIVERS = {"compute": ("remat.c", "pbb.c", "stages.c"), "memory": ("memcard.c", "stages.c")}


# As a user types it, from the repository root: the compute card into its default folder (no --out), the
# memory card into a relative --out. Both are handed to make in firmware/ctl absolute (nothing lands there).
RELATIVE_OUT = Path("build") / "boards" / "test-relative-out"
# pytest-xdist's workers of one run share a card: the first generates it, the others read it (and what it
# left in the source tree) from the stamp it writes.
RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID")


def _generate(role):
    settings = CARDS[role]
    args = ["board", "build", "--board", "zcu102", "--role", role, "--lanes", str(settings["lanes"]), "--rate",
            f"{settings['rate']:g}", "--no-compile"] + (["--delay-line"] if settings.get("delay_line") else [])
    if role == "compute":
        out = REPO / default_output("zcu102", role, settings["lanes"], settings["rate"])
    else:
        out = REPO / RELATIVE_OUT
        args += ["--out", str(RELATIVE_OUT)]
    stamp = out / "generated-by-test-run.json"
    with exclusive(out.parent / f"{out.name}.lock"):
        if not (RUN and stamp.exists() and json.loads(stamp.read_text())["run"] == RUN):
            before = _untracked()
            r = subprocess.run([sys.executable, "-m", "monet.cli", *args], cwd=REPO, capture_output=True, text=True,
                               timeout=600)
            assert r.returncode == 0, r.stdout + r.stderr
            stamp.write_text(json.dumps({"run": RUN, "left_in_sources": sorted(_untracked() - before)}))
        LEFT_IN_SOURCES[role] = json.loads(stamp.read_text())["left_in_sources"]
        manifest = json.loads((out / "manifest.json").read_text())
        verilog = (out / "gateware" / f"zcu102_{role}.v").read_text()
    return role, out, manifest, verilog


@pytest.fixture(scope="module")
def compute():
    return _generate("compute")


@pytest.fixture(scope="module")
def memory():
    return _generate("memory")


LEFT_IN_SOURCES = {}


def _untracked():
    """Files below the source folders that git does not track (ignored ones included), bytecode aside."""
    status = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "--", "firmware",
                             "litex", "host", "bench", "linux"], cwd=REPO, capture_output=True, text=True, check=True)
    return {line[3:] for line in status.stdout.splitlines() if line[:2] in ("??", "!!") and "__pycache__" not in line}


def test_the_documented_builds_leave_nothing_in_the_source_tree(compute, memory):
    assert (compute[1] / "ctl" / "monet-ctl").exists()
    assert LEFT_IN_SOURCES == {"compute": [], "memory": []}


@pytest.fixture(params=sorted(CARDS))
def card(request):
    return request.getfixturevalue(request.param)


def test_a_transceiver_channel_per_lane_and_a_quad_pll_per_four_lanes(card):
    role, out, manifest, verilog = card
    lanes = CARDS[role]["lanes"]
    assert len(re.findall(r"^GTHE4_CHANNEL\b", verilog, re.M)) == lanes
    assert len(re.findall(r"^GTHE4_COMMON\b", verilog, re.M)) == math.ceil(lanes / 4)
    xdc = (out / "gateware" / f"zcu102_{role}.xdc").read_text()
    cage = manifest["cage"]
    assert cage == ("fmc" if lanes > 4 else "sfp")
    for lane in range(lanes):
        for direction in ("tx", "rx"):
            assert re.search(rf"set_property LOC \w+ \[get_ports {{{cage}_{direction}{lane}_p}}\]", xdc)
    if cage == "sfp":    # the cages' own pins (bank 230)
        assert f"set_property LOC {_sfp_pins[0][0]} [get_ports {{sfp_tx0_p}}]" in xdc


def test_the_compute_card_has_the_ps_and_its_two_master_ports(compute):
    _, out, _, verilog = compute
    assert re.search(r"^ps ps\(", verilog, re.M)
    for port in (".maxigp1_araddr", ".maxigp2_awaddr", ".maxihpm1_fpd_aclk", ".maxihpm0_lpd_aclk"):
        assert port in verilog
    tcl = (out / "gateware" / "zcu102_compute.tcl").read_text()
    assert "create_ip -vendor xilinx.com -name zynq_ultra_ps_e" in tcl
    for setting in ("PSU__USE__M_AXI_GP1 {1}", "PSU__USE__M_AXI_GP2 {1}", "PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ {250}"):
        assert setting in tcl


def test_the_memory_card_has_litedram_on_the_pl_ddr4_and_a_management_cpu(memory):
    _, out, _, verilog = memory
    assert "VexRiscv" in verilog and not re.search(r"^ps ps\(", verilog, re.M)
    assert re.search(r"^OSERDESE3\b", verilog, re.M) and re.search(r"^ISERDESE3\b", verilog, re.M)
    registers = json.loads((out / "csr.json").read_text())["csr_registers"]
    assert "sdram_dfii_control" in registers and "remote_memcard_memory" in registers
    xdc = (out / "gateware" / "zcu102_memory.xdc").read_text()
    assert "[get_ports {ddram_dq[0]}]" in xdc


def test_the_csr_map_the_headers_and_the_drivers_agree(card):
    role, out, _, _ = card
    doc = json.loads((out / "csr.json").read_text())
    header = (out / "include" / "generated" / "csr.h").read_text()
    base = int(re.search(r"#define CSR_BASE (0x[0-9a-f]+)L", header).group(1), 16)
    addresses = {name.lower(): base + int(offset, 16)
                 for name, offset in re.findall(r"#define CSR_(\w+)_ADDR \(CSR_BASE \+ (0x[0-9a-f]+)L\)", header)}
    registers = {name: reg["addr"] for name, reg in doc["csr_registers"].items()}
    assert addresses == registers
    soc_h = (out / "include" / "generated" / "soc.h").read_text()
    for name, value in doc["constants"].items():
        if isinstance(value, int):
            assert re.search(rf"#define {name.upper()} {value}\b", soc_h), name
    # The cores' codes, declared once in their codes.py, reach the card's headers (the drivers use them).
    assert code_constants().items() <= {name.upper(): value for name, value in doc["constants"].items()}.items()
    # The user-space headers carry no bare-metal access functions, and the drivers build against them.
    assert "hw/common.h" not in header
    compiler = shutil.which("gcc") or shutil.which("cc")
    for driver in DRIVERS[role]:
        subprocess.run([compiler, "-fsyntax-only", "-Wall", "-Werror", "-DMONET_HAL_LINUX",
                        f"-I{out / 'include'}", str(REPO / "firmware" / "lib" / driver)], check=True)


def test_monet_ctl_builds_for_the_ps_with_the_commands_the_compute_cards_map_has(compute, tmp_path):
    _, out, manifest, _ = compute
    binary = out / manifest["monet_ctl"]["path"]
    assert manifest["monet_ctl"]["sha256"] == hashlib.sha256(binary.read_bytes()).hexdigest()
    elf = binary.read_bytes()
    assert elf[:4] == b"\x7fELF" and int.from_bytes(elf[18:20], "little") == 183   # EM_AARCH64
    # The same sources for this machine, to read the command table: the card's end, its lanes, ReMAT, the
    # PBB; not the sim's channel, the memory card's end, its memory or HMC, nor the sim's combiner.
    host = ctl.build(out / "include", tmp_path, cc="gcc")
    symbols = subprocess.run(["nm", str(host)], capture_output=True, text=True, check=True).stdout
    assert set(re.findall(r" command_(\w+)$", symbols, re.M)) == {"help", "info", "link", "retry", "prbs", "bfct",
                                                                  "faults", "stages", "pbb"}
    # The lanes' count and the delay line's depth are the gateware's (8 lanes, 512 rows).
    assert b"this card's lanes are 8 (its gateware's) and its delay 0..511 cycles (emulated fiber)" in elf


def test_the_overlay_and_the_board_device_tree_agree_with_the_cards(compute, memory):
    _, out, _, _ = compute
    doc = json.loads((out / "csr.json").read_text())
    csr = doc["memories"]["csr"]
    overlay = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(out / "monet-compute.dtbo")],
                             capture_output=True, text=True, check=True).stdout
    node = re.search(r"monet-csr@([0-9a-f]+) \{[^}]*compatible = \"generic-uio\";[^}]*reg = <([^>]*)>",
                     overlay, re.S)
    cells = [int(cell, 16) for cell in node.group(2).split()]
    assert int(node.group(1), 16) == csr["base"] == cells[0] << 32 | cells[1]
    assert cells[2] << 32 | cells[3] == csr["size"]
    assert 'firmware-name = "zcu102_compute.bit.bin"' in overlay
    assert "fpga_full" in overlay and "amba" in overlay     # resolved against the board's tree at load time
    # The board's device tree puts NUMA node 1 where ReMAT's port 0 answers, as large as the memory card.
    dts = (REPO / "linux" / "dts" / "zynqmp-zcu102-monet.dts").read_text()
    hi, lo, size_hi, size_lo = (int(cell, 16) for cell in
                                re.search(r"#define MONET_REMOTE_REG\s+(.+)", dts).group(1).split())
    memory_doc = json.loads((memory[1] / "csr.json").read_text())
    assert hi << 32 | lo == doc["constants"]["remote_window0_base"]
    assert size_hi << 32 | size_lo == memory_doc["constants"]["memcard_size"]
    window = doc["constants"]["remote_sections"] << doc["constants"]["remote_section_bits"]
    assert memory_doc["constants"]["memcard_size"] <= window


def test_the_manifest_records_the_settings_and_the_verilog(card):
    role, out, manifest, _ = card
    assert json.loads((out / "manifest.json").read_text()) == manifest
    assert manifest["lanes"] == CARDS[role]["lanes"] and manifest["rate_gbps"] == CARDS[role]["rate"]
    verilog = (out / "gateware" / f"zcu102_{role}.v").read_bytes()
    assert manifest["verilog_sha256"] == hashlib.sha256(verilog).hexdigest()
    assert manifest["part"].startswith("xczu9eg") and "litex" in json.dumps(manifest["versions"]).lower()
    # The fiber emulation is there when asked for, and the manifest says so.
    registers = json.loads((out / "csr.json").read_text())["csr_registers"]
    assert manifest["emulated_fiber"] == CARDS[role].get("delay_line", False) == ("lanes_emulated_delay" in registers)


def test_the_zcu111_compute_card_has_gty_lanes_on_its_sfp28_cages(tmp_path):
    manifest = build_card("zcu111", "compute", lanes=4, rate=12.5, out=tmp_path, log=lambda message: None)
    verilog = (tmp_path / "gateware" / "zcu111_compute.v").read_text()
    assert manifest["part"] == "xczu28dr-ffvg1517-2-e" and manifest["cage"] == "sfp"
    assert len(re.findall(r"^GTYE4_CHANNEL\b", verilog, re.M)) == 4
    assert len(re.findall(r"^GTYE4_COMMON\b", verilog, re.M)) == 1
    assert not re.search(r"^GTHE4_CHANNEL\b", verilog, re.M) and re.search(r"^ps ps\(", verilog, re.M)
    xdc = (tmp_path / "gateware" / "zcu111_compute.xdc").read_text()
    for lane, (tx_p, _, rx_p, _) in enumerate(zcu111._sfp_pins):
        assert f"set_property LOC {tx_p} [get_ports {{sfp_tx{lane}_p}}]" in xdc
        assert f"set_property LOC {rx_p} [get_ports {{sfp_rx{lane}_p}}]" in xdc
    # Every cage's transmitter is enabled (TX_DISABLE_B high).
    assert re.search(r"assign sfp_tx_disable_b = 4'd15;", verilog)


@pytest.mark.parametrize("settings, named", [
    (dict(role="compute", lanes=3), "--lanes 3"),
    (dict(role="compute", rate=11.0), "--rate 11"),
    (dict(role="memory", lanes=8, cage="sfp"), "--cage sfp"),
    (dict(role="memory", cage="qsfp"), "--cage qsfp"),
    (dict(role="gpu"), "--role gpu"),
    (dict(role="compute", board="zcu104"), "--board zcu104"),
    (dict(role="memory", board="zcu111"), "--role memory on --board zcu111"),
    (dict(role="compute", board="zcu111", lanes=8), "--lanes 8 with --cage sfp"),
    (dict(role="compute", ps_preset="/nonexistent/preset.tcl"), "--ps-preset"),
    (dict(role="memory", ps_preset=__file__), "--ps-preset"),
])
def test_bad_settings_are_refused_by_name(settings, named, tmp_path):
    settings = dict(settings)
    board = settings.pop("board", "zcu102")
    with pytest.raises(BoardError, match=re.escape(named)):
        build_card(board, out=tmp_path, log=lambda message: None, **settings)
    assert not (tmp_path / "gateware").exists()


@pytest.mark.skipif(shutil.which("vivado") is not None, reason="Vivado is here")
def test_build_without_vivado_says_so(capsys, tmp_path):
    assert main(["board", "build", "--role", "compute", "--build", "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "--build needs Vivado on PATH" in error and "--no-compile" in error and "Traceback" not in error
