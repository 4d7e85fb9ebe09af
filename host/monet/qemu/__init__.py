"""Board-in-a-box: the card's Linux on QEMU (aarch64, `virt` machine, 4 x Cortex-A53), with a CPU-less
NUMA node 1 standing in for the remote memory.

`GuestImage` assembles a kernel and an initramfs from Debian's arm64 packages, fetched with apt through a
private configuration under build/qemu (the host's own apt and dpkg are not touched): the kernel, BusyBox,
the packages of linux/packages.txt and their dependencies, our overlay (linux/overlay, the same scripts
the board runs), linux/qemu/init and STREAM cross-built for aarch64. Nothing built is committed; an image
is cached by a hash of everything that shapes it.

`QemuTarget` boots it, drives a shell over the serial console (every wait bounded: a hung guest ends in a
QemuError and QEMU is killed) and forwards one loopback port to the guest's memcached. Emulation makes no
latency claim and its IPC is not meaningful (monet.workloads.perf says so).

The ZCU102 stand-in (`machine="zcu102"`): QEMU's xlnx-zcu102 machine booting the same image with Debian's
device tree for the board, patched for what QEMU lacks (zcu102_device_tree), and the same NUMA fragment; its
network is GEM3, the board's Ethernet, QEMU's fourth NIC.

`image` builds (GuestImage, device_tree, zcu102_device_tree), `target` boots and drives (QemuTarget).
"""

from monet.qemu.image import (CPUS, LINUX, MACHINES, MEMORY_MB, NODE_DISTANCE, GuestImage, QemuError, device_tree,
                              qemu_version, read_packages, zcu102_device_tree)
from monet.qemu.target import QemuTarget, qemu_command

__all__ = ["CPUS", "LINUX", "MACHINES", "MEMORY_MB", "NODE_DISTANCE", "GuestImage", "QemuError", "QemuTarget",
           "device_tree", "qemu_command", "qemu_version", "read_packages", "zcu102_device_tree"]
