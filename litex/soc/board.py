#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A card's design for a board, litex-boards style: the SoC side of `monet board build` (the command line, the
manifest and monet-ctl are the host's, monet.board.build).

`generate_card` checks the settings and generates everything Vivado needs and the software interface, here,
without Vivado: gateware/ (Verilog, the Vivado TCL project script, XDC constraints), csr.json and csr.csv (the
CSR map), software/include/generated/ (LiteX's headers for code on the card's own CPU), include/generated/
(csr.h and soc.h without LiteX's access functions: what firmware/lib builds against for Linux user space),
the compute card's device-tree overlay (monet-compute.dtso and .dtbo: the bitstream for the FPGA manager,
the CSRs as UIO); it returns what the manifest says of them (settings, part, hashes). With `--build` it runs
Vivado on them (and compiles the memory card's BIOS); `load_bitstream` loads the bitstream over JTAG with
Vivado's hardware manager. Both need Vivado on PATH and say so when it is missing.
"""

import contextlib
import hashlib
import importlib
import logging
import shutil
import subprocess
from pathlib import Path

from monet.soc.errors import BoardError
from monet.soc.user_headers import write_user_headers

BOARDS = {"zcu102": "monet.soc.zcu102", "zcu111": "monet.soc.zcu111"}
ROLES  = ("compute", "memory")


def board_module(board):
    if board not in BOARDS:
        raise BoardError(f"--board {board}: accepted are {', '.join(BOARDS)}")
    return importlib.import_module(BOARDS[board])


def default_output(board, role, lanes, rate_gbps):
    return Path("build") / "boards" / f"{board}-{role}-{lanes}x{rate_gbps:g}"


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _require_vivado(what):
    if shutil.which("vivado") is None:
        raise BoardError(f"{what} needs Vivado on PATH (source Vivado's settings64.sh first); without it, "
                         "--no-compile writes the sources only")


@contextlib.contextmanager
def _output_to(path):
    """LiteX's printout (its module tree, its INFO log) into `path` instead of the terminal."""
    root = logging.getLogger()
    saved = root.handlers[:]
    with open(path, "w") as log, contextlib.redirect_stdout(log):
        root.handlers = [logging.StreamHandler(log)]
        try:
            yield
        finally:
            root.handlers = saved


OVERLAY = """/dts-v1/;
/plugin/;

/*
 * MONet-open {board} compute card, written by `monet board build` from its CSR map:
 * - the bitstream for the FPGA manager (fpga-region; bootgen makes the .bin of {bitstream});
 * - the CSRs as a UIO device (kernel command line: uio_pdrv_genirq.of_id=generic-uio).
 * The remote memory is a NUMA node of the board's device tree (linux/dts/zynqmp-zcu102-monet.dts):
 * memory cannot come with an overlay.
 */
&fpga_full {{
	firmware-name = "{bitstream}.bin";
}};

&amba {{
	monet_csr: monet-csr@{base:x} {{
		compatible = "generic-uio";
		reg = <0x{base_hi:x} 0x{base_lo:x} 0x{size_hi:x} 0x{size_lo:x}>;
	}};
}};
"""


def write_overlay(soc, board, out, log):
    """The compute card's device-tree overlay (monet-compute.dtso), compiled to .dtbo when dtc is here."""
    csr = soc.mem_regions["csr"]
    source = out / "monet-compute.dtso"
    source.write_text(OVERLAY.format(board=board, bitstream=f"{board}_compute.bit", base=csr.origin,
                                     base_hi=csr.origin >> 32, base_lo=csr.origin & 0xFFFF_FFFF,
                                     size_hi=csr.size >> 32, size_lo=csr.size & 0xFFFF_FFFF))
    dtc = shutil.which("dtc")
    if dtc is None:
        log("board: dtc is not installed (apt package device-tree-compiler): monet-compute.dtso left uncompiled")
        return
    subprocess.run([dtc, "-@", "-q", "-I", "dts", "-O", "dtb", "-o", str(source.with_suffix(".dtbo")), str(source)],
                   check=True)


def generate_card(board, role, lanes=4, rate=15.0, cage=None, ps_preset=None, out=None, compile_gateware=False,
                  load=False, delay_line=False, log=print):
    """Checks the settings, then generates (with compile_gateware, builds) a card in `out` (default
    build/boards/BOARD-ROLE-LANESxRATE): its SoC, its folder (absolute) and what its manifest says of the
    gateware. `load` is only checked here (Vivado on PATH); `load_bitstream` loads."""
    from litex.soc.integration.builder import Builder

    from monet.soc.cards import resolve_cage

    target = board_module(board)
    if role not in ROLES:
        raise BoardError(f"--role {role}: accepted are {', '.join(ROLES)}")
    if role not in target.ROLES:
        raise BoardError(f"--role {role} on --board {board}: accepted is {', '.join(target.ROLES)} "
                         f"(pair it with a card of another board)")
    if ps_preset is not None and not Path(ps_preset).is_file():
        raise BoardError(f"--ps-preset {ps_preset}: no such file (a TCL preset exported from Vivado)")
    if ps_preset is not None and role != "compute":
        raise BoardError("--ps-preset applies to --role compute only (the memory card has no PS)")
    if compile_gateware:
        _require_vivado("--build")
    if load:
        _require_vivado("--load")
    cage = resolve_cage(lanes, rate, cage, target.CAGES)
    # Absolute from here on: the folder is handed to tools that run elsewhere (make -C firmware/ctl).
    out = (Path(out) if out else default_output(board, role, lanes, rate)).resolve()
    out.mkdir(parents=True, exist_ok=True)
    log(f"board: {board} {role} card, {lanes} x {rate:g} Gb/s: generating under {out} (LiteX's log: "
        f"{out / 'generate.log'})" + ("; then Vivado" if compile_gateware else ""))
    with _output_to(out / "generate.log"):
        soc = target.make_card(role, lanes=lanes, rate_gbps=rate, cage=cage, ps_preset=ps_preset,
                               with_delay_line=delay_line)
        builder = Builder(soc, output_dir=str(out), compile_gateware=compile_gateware,
                          compile_software=compile_gateware and soc.cpu_type != "zynqmp",
                          csr_json=str(out / "csr.json"), csr_csv=str(out / "csr.csv"))
        builder.build(build_name=f"{board}_{role}", run=compile_gateware)
    write_user_headers(soc, out / "include" / "generated")
    if role == "compute":
        write_overlay(soc, board, out, log)
    gateware = out / "gateware"
    verilog = gateware / f"{board}_{role}.v"
    facts = {
        "board": board, "role": role, "part": soc.platform.device, "lanes": lanes, "rate_gbps": rate,
        "cage": soc.cage, "sys_clk_hz": int(soc.sys_clk_freq), "line_code": "8b/10b, 16 data words in 17",
        "emulated_fiber": delay_line, "verilog_sha256": sha256_of(verilog),
        "files": sorted(str(p.relative_to(out)) for p in gateware.iterdir() if p.suffix in (".v", ".tcl", ".xdc")),
    }
    bitstream = gateware / f"{board}_{role}.bit"
    if bitstream.exists():
        facts["bitstream_sha256"] = sha256_of(bitstream)
    return soc, out, facts


def load_bitstream(soc, out, board, role):
    """Loads the card's bitstream over JTAG (Vivado's hardware manager)."""
    bitstream = out / "gateware" / f"{board}_{role}.bit"
    if not bitstream.exists():
        raise BoardError(f"--load: no bitstream at {bitstream}; run with --build first")
    soc.platform.create_programmer().load_bitstream(str(bitstream))
