#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""`monet board build`: a card's design for a board, litex-boards style (`--no-compile`, `--build`, `--load`).

`--no-compile` (the default) generates everything Vivado needs and the software interface, here, without
Vivado: gateware/ (Verilog, the Vivado TCL project script, XDC constraints), csr.json and csr.csv (the CSR
map), software/include/generated/ (LiteX's headers for code on the card's own CPU), include/generated/
(csr.h and soc.h without LiteX's access functions: what firmware/lib builds against for Linux user space),
the compute card's device-tree overlay (monet-compute.dtso and .dtbo: the bitstream for the FPGA manager,
the CSRs as UIO) and
manifest.json (the settings, the git revision, tool versions and the Verilog's hash; after `--build`, the
bitstream's hash). `--build` runs Vivado on them (and compiles the memory card's BIOS); `--load` loads the
bitstream over JTAG with Vivado's hardware manager. Both need Vivado on PATH and say so when it is missing.
"""

import contextlib
import hashlib
import importlib
import json
import logging
import shutil
import subprocess
import time
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


def add_build_arguments(parser, with_board=True):
    """The options of `monet board build` and (without --board) of a target module run as a script."""
    if with_board:
        parser.add_argument("--board", default="zcu102", help=f"the board (accepted: {', '.join(BOARDS)}; "
                            "default zcu102)")
    parser.add_argument("--role", required=True, help=f"the card (accepted: {', '.join(ROLES)})")
    parser.add_argument("--lanes", type=int, default=4, help="bonded lanes (accepted: 1, 2, 4, 8; default 4)")
    parser.add_argument("--rate", type=float, default=15.0, help="lane rate, Gb/s (accepted: 10, 12.5, 15; default 15)")
    parser.add_argument("--cage", default=None, help="where the lanes go (accepted: sfp for up to 4 lanes, fmc for "
                        "up to 8; default sfp up to 4 lanes, fmc for 8)")
    parser.add_argument("--ps-preset", default=None, metavar="TCL",
                        help="compute card: the PS configuration exported from Vivado for the board (DDR, MIO, "
                             "clocks); without it the PS keeps Vivado's defaults and only our settings")
    parser.add_argument("--delay-line", action="store_true", help="emulated fiber: a run-time delay of the "
                        "received rows (CSR lanes_emulated_delay, up to 511 cycles, about 400 m), for distance "
                        "sweeps without spools")
    parser.add_argument("--out", default=None, help="output folder (default build/boards/BOARD-ROLE-LANESxRATE)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--no-compile", action="store_true", help="generate the sources only (the default)")
    mode.add_argument("--build", action="store_true", help="also run Vivado: needs Vivado on PATH")
    parser.add_argument("--load", action="store_true", help="load the bitstream over JTAG (Vivado's hardware "
                        "manager; needs a --build first)")


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


PS_COMPILER = "aarch64-linux-gnu-gcc"   # the compute card's PS runs aarch64 Linux (tools/setup.sh installs it)


def build_monet_ctl(out, log):
    """monet-ctl (firmware/ctl) for the compute card's PS against the card's user headers, in `out`/ctl; its
    manifest entry, or None (said) without the cross compiler."""
    from monet.ctl import CtlError, build
    if shutil.which(PS_COMPILER) is None:
        log(f"board: no {PS_COMPILER} on PATH: monet-ctl for the PS not built (tools/setup.sh installs it)")
        return None
    try:
        binary = build(out / "include", out / "ctl", cc=PS_COMPILER)
    except CtlError as e:
        raise BoardError(str(e)) from None
    return {"path": str(binary.relative_to(out)), "compiler": PS_COMPILER, "sha256": _sha256(binary)}


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


def build_card(board, role, lanes=4, rate=15.0, cage=None, ps_preset=None, out=None, compile_gateware=False,
               load=False, delay_line=False, log=print):
    """Generates (and with compile_gateware builds, with load loads) a card; returns its manifest."""
    from litex.soc.integration.builder import Builder
    from monet.repo import git_revision
    from monet.sim import tool_versions

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
    started = time.time()
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
    monet_ctl = None
    if role == "compute":
        write_overlay(soc, board, out, log)
        monet_ctl = build_monet_ctl(out, log)
    gateware = out / "gateware"
    verilog = gateware / f"{board}_{role}.v"
    manifest = {
        "board": board, "role": role, "part": soc.platform.device, "lanes": lanes, "rate_gbps": rate,
        "cage": soc.cage, "sys_clk_hz": int(soc.sys_clk_freq), "line_code": "8b/10b, 16 data words in 17",
        "emulated_fiber": delay_line, "monet_ctl": monet_ctl,
        "git_revision": git_revision(), "versions": tool_versions(),
        "verilog_sha256": _sha256(verilog), "generated_s": round(time.time() - started, 1),
        "files": sorted(str(p.relative_to(out)) for p in gateware.iterdir() if p.suffix in (".v", ".tcl", ".xdc")),
    }
    bitstream = gateware / f"{board}_{role}.bit"
    if bitstream.exists():
        manifest["bitstream_sha256"] = _sha256(bitstream)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    if load:
        if not bitstream.exists():
            raise BoardError(f"--load: no bitstream at {bitstream}; run with --build first")
        soc.platform.create_programmer().load_bitstream(str(bitstream))
    overlay = "monet-compute.dtso/.dtbo, " if role == "compute" else ""
    overlay += "ctl/monet-ctl (aarch64), " if monet_ctl else ""
    log(f"board: {soc.cage} lanes; wrote {', '.join(manifest['files'])}, csr.json, csr.csv, include/generated/, "
        f"software/include/generated/, {overlay}manifest.json in {manifest['generated_s']} s")
    return manifest


def main_for(board):
    """A target module's `__main__`: the same options as `monet board build`, this board fixed."""
    import argparse
    import sys
    parser = argparse.ArgumentParser(description=f"MONet-open on the {board}")
    add_build_arguments(parser, with_board=False)
    args = parser.parse_args()
    try:
        build_card(board, args.role, args.lanes, args.rate, args.cage, args.ps_preset, args.out,
                   compile_gateware=args.build, load=args.load, delay_line=args.delay_line)
    except BoardError as e:
        print(f"{parser.prog}: {e}", file=sys.stderr)
        return 2
    return 0
