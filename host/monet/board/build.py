"""`monet board build`: the command line, the manifest and monet-ctl around the SoC side's generation
(monet.soc.board.generate_card).

manifest.json holds the settings, the git revision, the tool versions and the Verilog's hash (after `--build`,
the bitstream's); the compute card's folder also gets monet-ctl for its PS (firmware/ctl against the card's
user headers, in ctl/) when the aarch64 cross compiler is here.
"""

import json
import shutil
import time

from monet.repo import git_revision
from monet.sim import tool_versions
from monet.sim.ctl import CtlError, build as build_ctl
from monet.soc.board import BOARDS, ROLES, generate_card, load_bitstream, sha256_of
from monet.soc.errors import BoardError
from monet.soc.facts import BOARD_LANES, BOARD_RATES_GBPS

PS_COMPILER = "aarch64-linux-gnu-gcc"   # the compute card's PS runs aarch64 Linux (tools/setup.sh installs it)


def _listed(values):
    return ", ".join(f"{v:g}" for v in values)


def add_build_arguments(parser):
    """The options of `monet board build`."""
    parser.add_argument("--board", default="zcu102", help=f"the board (accepted: {', '.join(BOARDS)}; "
                        "default zcu102)")
    parser.add_argument("--role", required=True, help=f"the card (accepted: {', '.join(ROLES)})")
    parser.add_argument("--lanes", type=int, default=4, help=f"bonded lanes (accepted: {_listed(BOARD_LANES)}; "
                        "default 4)")
    parser.add_argument("--rate", type=float, default=15.0, help=f"lane rate, Gb/s (accepted: "
                        f"{_listed(BOARD_RATES_GBPS)}; default 15)")
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


def build_monet_ctl(out, log):
    """monet-ctl (firmware/ctl) for the compute card's PS against the card's user headers, in `out`/ctl; its
    manifest entry, or None (said) without the cross compiler."""
    if shutil.which(PS_COMPILER) is None:
        log(f"board: no {PS_COMPILER} on PATH: monet-ctl for the PS not built (tools/setup.sh installs it)")
        return None
    try:
        binary = build_ctl(out / "include", out / "ctl", cc=PS_COMPILER)
    except CtlError as e:
        raise BoardError(str(e)) from None
    return {"path": str(binary.relative_to(out)), "compiler": PS_COMPILER, "sha256": sha256_of(binary)}


def build_card(board, role, lanes=4, rate=15.0, cage=None, ps_preset=None, out=None, compile_gateware=False,
               load=False, delay_line=False, log=print):
    """Generates (and with compile_gateware builds, with load loads) a card; returns its manifest."""
    started = time.time()
    soc, out, manifest = generate_card(board, role, lanes, rate, cage, ps_preset, out, compile_gateware, load,
                                       delay_line, log)
    monet_ctl = build_monet_ctl(out, log) if role == "compute" else None
    manifest.update(monet_ctl=monet_ctl, git_revision=git_revision(), versions=tool_versions(),
                    generated_s=round(time.time() - started, 1))
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    if load:
        load_bitstream(soc, out, board, role)
    overlay = "monet-compute.dtso/.dtbo, " if role == "compute" else ""
    overlay += "ctl/monet-ctl (aarch64), " if monet_ctl else ""
    log(f"board: {soc.cage} lanes; wrote {', '.join(manifest['files'])}, csr.json, csr.csv, include/generated/, "
        f"software/include/generated/, {overlay}manifest.json in {manifest['generated_s']} s")
    return manifest
