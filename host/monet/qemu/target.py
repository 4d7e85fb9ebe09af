"""A booted board-in-a-box guest: QEMU's command line and the shell over its serial console (QemuTarget)."""

import re
import time

import pexpect

from monet.console import ConsoleSession, spawn
from monet.tiers import refuse_in_unmarked_test
from monet.qemu.image import GUEST_PROMPT, MACHINES, QemuError, _machine_args, device_tree, zcu102_device_tree


def qemu_command(image, forward_port=None, extra_append="", dtb=None, machine="virt"):
    """QEMU's command line: `virt`, Cortex-A53s, the device tree with the NUMA fragment, user-mode network
    restricted to the forwarded loopback port (the guest reaches nothing else). `zcu102`: QEMU's xlnx-zcu102
    with the board's patched tree (zcu102_device_tree), its console on UART0 (ttyPS0), the same network on
    GEM3."""
    if machine not in MACHINES:
        raise QemuError(f"machine {machine!r}: accepted are {', '.join(MACHINES)}")
    netdev = "user,id=net0,restrict=on"
    if forward_port:
        netdev += f",hostfwd=tcp:127.0.0.1:{forward_port}-:11211"
    if machine == "zcu102":     # NICs go to GEM0..3 in order: the board's Ethernet, GEM3, is the fourth
        return _machine_args(machine=machine) + [
            "-dtb", str(dtb or zcu102_device_tree(image, image.dir)),
            "-kernel", str(image.kernel), "-initrd", str(image.initrd),
            "-append", f"console=ttyPS0,115200 rdinit=/init panic=-1 quiet {extra_append}".strip(),
            "-nographic", "-no-reboot"] + ["-nic", "user,restrict=on"] * 3 + ["-nic", netdev.replace("id=net0,", "")]
    return _machine_args() + [
        "-dtb", str(dtb or device_tree(image.dir)),
        "-kernel", str(image.kernel), "-initrd", str(image.initrd),
        "-append", f"console=ttyAMA0 rdinit=/init panic=-1 quiet {extra_append}".strip(),
        "-nographic", "-no-reboot", "-netdev", netdev,
        "-device", "virtio-net-pci,netdev=net0,romfile="]   # no option ROM: the kernel boots directly


class QemuTarget(ConsoleSession):
    """A booted guest: `run(command)` returns (exit status, output) from its shell."""

    farewell = "poweroff -f"
    farewell_timeout = 20

    def __init__(self, image, boot_timeout=180, extra_append="", forward_port=None, dtb=None, machine="virt",
                 log=print):
        refuse_in_unmarked_test("qemu", "starts a QEMU guest", QemuError)
        self.image = image
        self.log = log
        self.forward_port = forward_port
        self.machine = machine
        self.command_line = ["qemu-system-aarch64"] + qemu_command(image, forward_port, extra_append, dtb, machine)
        self.child = None
        self._seq = 0
        t0 = time.time()
        self.child = spawn(self.command_line[0], self.command_line[1:], encoding="utf-8",
                           codec_errors="replace", timeout=boot_timeout, echo=False, maxread=65536)
        self.transcript = []
        try:
            self._expect(["monet-init: ready"], boot_timeout, "the guest's init to finish (monet-init: ready)")
            self._expect([re.escape(GUEST_PROMPT)], 30, "the guest's shell prompt")
        except QemuError as e:
            self.close()
            raise QemuError(str(e).replace("; last output:", "; QEMU was stopped. Last output:", 1)) from None
        self.boot_seconds = time.time() - t0
        # The overlay's S45monet-remote-memory ran monet-online-remote at boot: what it found and onlined.
        found = re.search(r"node=1 onlined=(\d+) online_blocks=(\d+) mem_mib=(\d+)", "".join(self.transcript))
        self.remote_memory = None if not found else dict(zip(("onlined_blocks", "online_blocks", "mib"),
                                                             map(int, found.groups())))
        self.log(f"qemu: guest up in {self.boot_seconds:.1f} s; remote node 1: "
                 + (f"{self.remote_memory['mib']} MiB online" if self.remote_memory else "none"))

    def _expect(self, patterns, timeout, what):
        try:
            i = self.child.expect(patterns, timeout=timeout)
        except pexpect.TIMEOUT:
            self.responsive = False
            raise QemuError(f"qemu: timed out after {timeout} s waiting for {what}; last output:\n"
                            + _tail_text(self.child.before)) from None
        except pexpect.EOF:
            self.responsive = False
            raise QemuError(f"qemu: QEMU exited while waiting for {what}; last output:\n"
                            + _tail_text(self.child.before)) from None
        self.transcript.append(self.child.before)
        return i

    def run(self, command, timeout=600, check=True):
        """Runs one shell command line in the guest; returns (status, output). A non-zero status raises
        QemuError when `check`. The shell is the guest's init: a command must never `exit` it (use a
        subshell), or the kernel panics and QEMU ends."""
        self._seq += 1
        n = self._seq
        # The markers are printed by printf from split formats, so the echoed command line never matches.
        self.child.sendline(f"printf '@@BEGIN%s@@\\n' {n}; {command}; printf '@@RC%s@@%s@@\\n' \"$?\" {n}")
        self._expect([rf"@@BEGIN{n}@@\r*\n"], 30, f"the guest to start {command!r}")
        self._expect([rf"@@RC(\d+)@@{n}@@"], timeout, f"{command!r} to finish")
        status = int(self.child.match.group(1))
        output = self.transcript[-1].replace("\r", "")
        if check and status != 0:
            raise QemuError(f"qemu: {command!r} exited {status} in the guest:\n{output[-2000:]}")
        return status, output

    def stop_process(self, pid, grace_s=10):
        """SIGTERM, then SIGKILL after `grace_s`; returns once the process is gone (memcached, for one, takes
        a moment to leave after serving connections, and must be gone before the next one binds its port)."""
        self.run(f"(kill {pid}; i=0; while kill -0 {pid} 2>/dev/null; do i=$((i+1)); "
                 f"[ $i -gt {grace_s * 5} ] && kill -9 {pid}; sleep 0.2; done) 2>/dev/null", check=False,
                 timeout=grace_s + 30)

    def numa_nodes(self):
        _, out = self.run("ls -d /sys/devices/system/node/node* 2>/dev/null; true")
        return sorted(int(m) for m in re.findall(r"/node(\d+)", out))

    def require_remote_node(self, node=1):
        """Fails with a clear message when the guest has no NUMA node `node` (device tree or command line)."""
        nodes = self.numa_nodes()
        if node not in nodes:
            raise QemuError(f"qemu: the guest has no NUMA node {node} (nodes: {nodes or 'none'}): the device tree "
                            f"must declare a memory node with numa-node-id = <{node}>, and the kernel command line "
                            "must not turn NUMA off (numa=off); QEMU: " + " ".join(self.command_line))
        return nodes


def _tail_text(text, lines=15):
    if not isinstance(text, str):
        return ""
    return "\n".join(text.replace("\r\n", "\n").splitlines()[-lines:])
