"""The `board` target: Linux on the compute card, its FPGA loaded first, then the same workloads as every
other target (STREAM, memcached/YCSB, perf). Between the two, the link is brought up and the BFCT programmed
by the image's monet-link-up (monet-ctl on the card's CSRs through UIO).

Until a board is wired to this machine (serial console, SSH and power through labgrid, the bitstream from
`monet board build --build`), the board is its stand-in: QEMU's xlnx-zcu102 booting the board-in-a-box image
with the board's own device tree (monet.qemu.zcu102_device_tree). The FPGA load step finds no fabric there,
says so in every result, monet-link-up finds no CSRs to program and says so too, and the rest proceeds.
"""

import json

from monet.qemu import QemuError, QemuTarget

STAND_IN = "QEMU xlnx-zcu102 stand-in (the board's device tree, no FPGA fabric)"
BITSTREAM = "zcu102_compute.bit.bin"     # what the FPGA manager loads from /lib/firmware (bootgen's .bin)


def fpga_load(guest, bitstream=BITSTREAM):
    """Loads `bitstream` through the kernel's FPGA manager; on a guest without one, reports that no fabric
    exists and loads nothing."""
    _, out = guest.run("ls /sys/class/fpga_manager 2>/dev/null; true")
    managers = out.split()
    if not managers:
        return {"loaded": False, "note": "no FPGA fabric: this Linux has no FPGA manager (the stand-in); "
                                         "the load step was skipped"}
    manager = f"/sys/class/fpga_manager/{managers[0]}"
    status, out = guest.run(f"echo {bitstream} > {manager}/firmware && cat {manager}/state", check=False)
    return {"loaded": status == 0 and "operating" in out, "manager": managers[0], "bitstream": bitstream,
            "state": out.strip()}


def link_up(guest):
    """Link bring-up and BFCT programming (the image's monet-link-up: monet-ctl's info, link, prbs and bfct on
    the card's UIO CSRs); its JSON answer, `fabric` false where no card's CSRs exist."""
    status, out = guest.run("/usr/sbin/monet-link-up", timeout=120, check=False)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if status != 0 or not lines:
        raise QemuError(f"board: monet-link-up failed (exit {status}):\n{out[-2000:]}")
    return json.loads(lines[-1])


def open_board(image, forward_port=None, log=print):
    """The board (today its stand-in) booted, its FPGA load step done (`guest.fpga`), then its link brought up
    and the BFCT programmed (`guest.link`)."""
    guest = QemuTarget(image, machine="zcu102", forward_port=forward_port, log=log)
    guest.fpga = fpga_load(guest)
    guest.link = link_up(guest)
    log(f"board: {STAND_IN}; FPGA: " + ("loaded" if guest.fpga["loaded"] else guest.fpga["note"])
        + "; link: " + ("up, " + f"{guest.link['bfct_sections_mapped']} sections mapped" if guest.link["fabric"]
                        else guest.link["note"]))
    return guest
