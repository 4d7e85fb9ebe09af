"""The `board` target: Linux on the compute card, its FPGA loaded first, then the same workloads as every
other target (STREAM, memcached/YCSB, perf).

Until a board is wired to this machine (serial console, SSH and power through labgrid, the bitstream from
`monet board build --build`), the board is its stand-in: QEMU's xlnx-zcu102 booting the board-in-a-box image
with the board's own device tree (monet.qemu.zcu102_device_tree). The FPGA load step finds no fabric there,
says so in every result, and the rest proceeds.
"""

from monet.qemu import QemuTarget

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


def open_board(image, forward_port=None, log=print):
    """The board (today its stand-in) booted, its FPGA load step done (`guest.fpga`)."""
    guest = QemuTarget(image, machine="zcu102", forward_port=forward_port, log=log)
    guest.fpga = fpga_load(guest)
    log(f"board: {STAND_IN}; FPGA: " + ("loaded" if guest.fpga["loaded"] else guest.fpga["note"]))
    return guest
