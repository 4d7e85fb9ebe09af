"""The board-in-a-box image: a kernel and an initramfs assembled from Debian's arm64 packages (GuestImage,
cached by a hash of everything that shapes it), and the guest's device tree with the remote NUMA node."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from monet.locks import exclusive
from monet.repo import REPO

LINUX = REPO / "linux"
BUILD = REPO / "build" / "qemu"
SUITE = "bookworm"
MIRRORS = [("http://deb.debian.org/debian", SUITE), ("http://deb.debian.org/debian-security", f"{SUITE}-security")]
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
# BusyBox applets the init, the overlay scripts and the harness use (busybox-static ships only the binary).
APPLETS = ("sh ash awk cat chmod cttyhack cut dmesg echo free grep head ip kill ln ls mkdir modprobe insmod "
           "mount pidof poweroff printf ps rm sed seq setsid sleep stty sync tail tr umount uname wc env "
           "true false test [ date hostname").split()
# Dropped from the image: documentation and locales (a smaller initramfs boots faster).
PRUNE = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/lintian",
         "usr/share/zoneinfo", "usr/lib/python3.11/test", "usr/lib/python3.11/ensurepip")
GUEST_PROMPT = "monet-guest# "
MEMORY_MB = (512, 512)      # node 0 (local, with the CPUs) and node 1 (remote stand-in, no CPU)
NODE_DISTANCE = 20          # SLIT-style: local 10; the remote node is twice as far
CPUS = 4


class QemuError(RuntimeError):
    """The image could not be built, or the guest did not boot, answer or behave; says what and shows output."""


def read_packages(with_perf=True):
    """Debian package names of linux/packages.txt (optional ones only with perf)."""
    names = []
    for line in (LINUX / "packages.txt").read_text().splitlines():
        fields = line.split("#")[0].split()
        if fields and (with_perf or "optional" not in fields[2:]):
            names.append(fields[0])
    return names


def _tree_digest(paths):
    h = hashlib.sha256()
    for base in paths:
        for p in sorted(Path(base).rglob("*")) if Path(base).is_dir() else [Path(base)]:
            if p.is_file():
                h.update(str(p.relative_to(REPO)).encode())
                h.update(p.read_bytes())
                h.update(str(os.stat(p).st_mode & 0o111).encode())
    return h.hexdigest()


class Apt:
    """apt-get for arm64 with its own sources, state and cache under `root` (no change to the host)."""

    def __init__(self, root):
        self.root = Path(root)
        for d in ("state/lists/partial", "cache/archives/partial", "etc/preferences.d"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        (self.root / "state/status").touch()
        (self.root / "etc/sources.list").write_text("".join(
            f"deb [arch=arm64 signed-by={KEYRING}] {url} {suite} main\n" for url, suite in MIRRORS))
        self.options = []
        for key, value in (("Dir::Etc::SourceList", "etc/sources.list"), ("Dir::Etc::SourceParts", "etc/none"),
                           ("Dir::Etc::Preferences", "etc/preferences"),
                           ("Dir::Etc::PreferencesParts", "etc/preferences.d"), ("Dir::State", "state"),
                           ("Dir::State::status", "state/status"), ("Dir::Cache", "cache")):
            self.options += ["-o", f"{key}={self.root / value}"]
        self.options += ["-o", "APT::Architecture=arm64", "-o", "APT::Architectures::=arm64",
                         "-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root"]

    def _run(self, tool, args, what):
        r = subprocess.run([tool] + self.options + args, capture_output=True, text=True)
        if r.returncode != 0:
            raise QemuError(f"apt: {what} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return r.stdout

    def update(self):
        if not any((self.root / "state/lists").glob("*Packages*")):
            self._run("apt-get", ["update", "-qq"], "fetching the arm64 package lists")

    def resolve(self, package):
        """The package a virtual or meta package (linux-image-arm64) stands for."""
        out = self._run("apt-cache", ["depends", package], f"resolving {package}")
        deps = re.findall(r"Depends: (\S+)", out)
        return deps[0] if deps else package

    def download_closure(self, packages):
        """Downloads `packages` and everything they depend on (no recommends); returns the .deb paths."""
        self._run("apt-get", ["install", "--download-only", "-y", "-qq", "--no-install-recommends"] + packages,
                  f"downloading {' '.join(packages)} and their dependencies")
        return sorted((self.root / "cache/archives").glob("*.deb"))

    def download_one(self, package, into):
        Path(into).mkdir(parents=True, exist_ok=True)
        existing = sorted(Path(into).glob(f"{package}_*.deb"))
        if existing:
            return existing[-1]
        r = subprocess.run(["apt-get"] + self.options + ["download", "-qq", package], cwd=into, capture_output=True,
                           text=True)
        found = sorted(Path(into).glob(f"{package}_*.deb"))
        if r.returncode != 0 or not found:
            raise QemuError(f"apt: downloading {package} failed:\n{r.stderr[-2000:]}")
        return found[-1]


class GuestImage:
    """vmlinuz + initrd.img in build/qemu/<hash>/, built once per configuration."""

    def __init__(self, with_perf=True, build_root=BUILD, log=print):
        self.with_perf = with_perf
        self.packages = read_packages(with_perf)
        self.root = Path(build_root)
        self.log = log
        digest = hashlib.sha256(json.dumps({"packages": self.packages, "suite": SUITE}).encode())
        digest.update(_tree_digest([LINUX, REPO / "bench" / "stream"]).encode())
        self.hash = digest.hexdigest()[:16]
        self.dir = self.root / self.hash
        self.kernel = self.dir / "vmlinuz"
        self.initrd = self.dir / "initrd.img"

    def ensure(self):
        with exclusive(self.root / f"{self.hash}.lock"):
            return self._ensure()

    def _ensure(self):
        stamp = self.dir / "image.ok"
        if stamp.exists():
            self.info = json.loads(stamp.read_text())
            self.log(f"qemu: reusing image {self.hash}")
            return self
        t0 = time.time()
        self.log(f"qemu: building image {self.hash} from Debian arm64 packages ({SUITE})")
        for tool in ("apt-get", "dpkg-deb", "depmod", "cpio", "aarch64-linux-gnu-gcc", "qemu-system-aarch64", "dtc",
                     "cpp"):
            if shutil.which(tool) is None and not Path("/sbin", tool).exists():
                raise QemuError(f"{tool} is missing; `make setup` installs it")
        apt = Apt(self.root / "apt")
        apt.update()
        kernel_pkg = apt.resolve("linux-image-arm64")
        self.log(f"qemu: fetching {kernel_pkg} and {', '.join(self.packages)} (+ dependencies)")
        kernel_deb = apt.download_one(kernel_pkg, self.root / "kernels")
        debs = apt.download_closure(["busybox-static"] + self.packages)
        wanted = self._closure_names(apt, ["busybox-static"] + self.packages)
        debs = [d for d in debs if d.name.split("_")[0] in wanted]
        if self.dir.exists():
            shutil.rmtree(self.dir)
        rootfs = self.dir / "rootfs"
        rootfs.mkdir(parents=True)
        self.log(f"qemu: unpacking {len(debs)} packages")
        for deb in debs:
            _run(["dpkg-deb", "-x", str(deb), str(rootfs)], f"unpacking {deb.name}")
        kernel_tree = self.dir / "kernel"
        _run(["dpkg-deb", "-x", str(kernel_deb), str(kernel_tree)], f"unpacking {kernel_deb.name}")
        version = kernel_pkg.replace("linux-image-", "")
        self._install_modules(kernel_tree, rootfs, version)
        self._install_busybox(rootfs)
        self._install_ours(rootfs)
        for rel in PRUNE:
            shutil.rmtree(rootfs / rel, ignore_errors=True)
        shutil.copy(kernel_tree / "boot" / f"vmlinuz-{version}", self.kernel)
        self.log("qemu: packing the initramfs")
        with open(self.initrd, "wb") as out:
            files = subprocess.run("find . -print0 | LC_ALL=C sort -z", shell=True, cwd=rootfs, capture_output=True,
                                   check=True).stdout
            cpio = subprocess.run(["cpio", "--null", "-o", "-H", "newc", "--quiet", "-R", "0:0"], cwd=rootfs,
                                  input=files, capture_output=True)
            if cpio.returncode != 0:
                raise QemuError(f"cpio failed: {cpio.stderr.decode()[-1000:]}")
            out.write(subprocess.run(["gzip", "-1"], input=cpio.stdout, capture_output=True, check=True).stdout)
        shutil.rmtree(kernel_tree)
        self.info = {"kernel_package": kernel_pkg, "kernel_version": version, "packages": self.packages,
                     "debs": [d.name for d in debs] + [kernel_deb.name], "suite": SUITE,
                     "initrd_bytes": self.initrd.stat().st_size, "build_seconds": round(time.time() - t0, 1)}
        stamp.write_text(json.dumps(self.info, indent=1))
        self.log(f"qemu: image built in {time.time() - t0:.0f} s ({self.initrd.stat().st_size / 2**20:.0f} MiB initramfs)")
        return self

    @staticmethod
    def _closure_names(apt, packages):
        """Names of `packages` and their recursive Depends/PreDepends (the cache may hold other images' debs)."""
        out = apt._run("apt-cache", ["depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                                     "--no-breaks", "--no-replaces", "--no-enhances"] + packages, "listing dependencies")
        return {line.strip() for line in out.splitlines() if line and not line.startswith(" ")}

    @staticmethod
    def _install_modules(kernel_tree, rootfs, version):
        wanted = [line.split("#")[0].strip() for line in (LINUX / "qemu" / "modules").read_text().splitlines()]
        wanted = [m for m in wanted if m]
        src = kernel_tree / "lib" / "modules" / version
        dst = rootfs / "lib" / "modules" / version
        dst.mkdir(parents=True, exist_ok=True)
        for name in ("modules.builtin", "modules.builtin.modinfo", "modules.order"):
            if (src / name).exists():
                shutil.copy(src / name, dst / name)
        found = {p.name.split(".ko")[0]: p for p in src.rglob("*.ko*")}
        for module in wanted:
            if module not in found:
                raise QemuError(f"kernel {version} has no module {module} (linux/qemu/modules)")
            target = dst / found[module].relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(found[module], target)
        depmod = shutil.which("depmod") or "/sbin/depmod"
        _run([depmod, "-b", str(rootfs), version], "depmod")

    @staticmethod
    def _install_busybox(rootfs):
        for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "run", "etc/monet", "root"):
            (rootfs / d).mkdir(parents=True, exist_ok=True)
        for applet in APPLETS:
            link = rootfs / "bin" / applet
            if not any((rootfs / d / applet).exists() or (rootfs / d / applet).is_symlink()
                       for d in ("bin", "sbin", "usr/bin", "usr/sbin")):
                link.symlink_to("busybox")
        (rootfs / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")
        (rootfs / "etc/group").write_text("root:x:0:\nnogroup:x:65534:\n")

    def _install_ours(self, rootfs):
        shutil.copytree(LINUX / "overlay", rootfs, dirs_exist_ok=True, symlinks=True)
        shutil.copy(LINUX / "qemu" / "init", rootfs / "init")
        shutil.copy(LINUX / "qemu" / "modules", rootfs / "etc/monet/modules")
        from monet.workloads import stream
        shutil.copy(stream.build("aarch64"), rootfs / "usr/bin/stream")


def qemu_version():
    try:
        return subprocess.run(["qemu-system-aarch64", "--version"], capture_output=True, text=True,
                              check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return None


def _run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise QemuError(f"{what} failed ({' '.join(cmd)}):\n{r.stdout[-1500:]}{r.stderr[-1500:]}")
    return r.stdout


MACHINES = ("virt", "zcu102")
# The ZCU102 stand-in: QEMU's xlnx-zcu102 machine (4 A53s) with Debian's tree for the board, patched (below).
ZCU102_DTB = "zynqmp-zcu102-rev1.0.dtb"
ZCU102_FIXED_CLK_HZ = 100_000_000    # the clock the UART's and GEM3's drivers are given (QEMU ignores rates)
QEMU_GEM_PHY = 23                     # the MDIO address of the PHY QEMU's GEM model answers at


def _machine_args(memory_mb=MEMORY_MB, cpus=CPUS, machine="virt"):
    if machine == "zcu102":       # four A53s, as the board has
        return ["-M", "xlnx-zcu102", "-m", f"{sum(memory_mb)}M"]
    return ["-M", "virt", "-cpu", "cortex-a53", "-smp", str(cpus), "-m", f"{sum(memory_mb)}M"]


def _with_numa_fragment(source, out, base, memory_mb, distance):
    """`source` with linux/dts/monet-remote-numa.dtsi: node 0 the first `memory_mb[0]` from `base`, node 1
    (no CPU) the next `memory_mb[1]`."""
    local, remote = memory_mb[0] << 20, memory_mb[1] << 20
    args = [f"-DMONET_LOCAL_REG=0x0 {base:#x} 0x0 {local:#x}", f"-DMONET_LOCAL_UNIT={base:x}",
            f"-DMONET_REMOTE_REG=0x0 {base + local:#x} 0x0 {remote:#x}", f"-DMONET_REMOTE_UNIT={base + local:x}",
            f"-DMONET_REMOTE_DISTANCE={distance}"]
    (out / "source.dts").write_text(source + '\n#include "monet-remote-numa.dtsi"\n')
    return _run(["cpp", "-nostdinc", "-undef", "-x", "assembler-with-cpp", "-P", "-I", str(LINUX / "dts")]
                + args + [str(out / "source.dts")], "preprocessing the device tree")


def device_tree(out_dir, with_remote_node=True, memory_mb=MEMORY_MB, distance=NODE_DISTANCE):
    """The guest's device tree: QEMU's own for the `virt` machine plus linux/dts/monet-remote-numa.dtsi (the
    fragment the board's tree includes), which splits the RAM into node 0 and a CPU-less node 1. Without the
    fragment, the guest has one node (what a board tree that forgot it would give)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = "monet-virt" if with_remote_node else "plain-virt"
    dtb = out / f"{name}.dtb"
    if dtb.exists():
        return dtb
    base = out / "virt.dtb"
    _run(["qemu-system-aarch64"] + _machine_args(memory_mb) + ["-machine", f"dumpdtb={base}", "-display", "none", "-nic", "none"],
         "dumping QEMU's virt device tree")
    source = _run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(base)], "decompiling QEMU's device tree")
    if with_remote_node:
        source = _with_numa_fragment(source, out, 0x4000_0000, memory_mb, distance)   # virt's RAM base
    (out / f"{name}.dts").write_text(source)
    _run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb), str(out / f"{name}.dts")], "compiling the device tree")
    return dtb


def _patched_zcu102(source):
    """Debian's ZCU102 tree as QEMU's xlnx-zcu102 can boot it: no platform firmware answers there (no PMU
    firmware), so the firmware node is disabled and UART0, the console, and GEM3, the Ethernet, get a fixed
    clock instead of the firmware's clock controller, power domain, resets and pin control (GEM3 its PHY at
    QEMU's address); the board's memory node goes (QEMU replaces memory@ nodes; the NUMA fragment's are
    named otherwise)."""
    phandles = [int(v, 16) for v in re.findall(r"phandle = <(0x[0-9a-f]+)>;", source)]
    clock = max(phandles) + 1
    source = source.replace('compatible = "xlnx,zynqmp-firmware";',
                            'compatible = "xlnx,zynqmp-firmware";\n\t\t\tstatus = "disabled";', 1)

    def on_fixed_clock(source, node, clocks, firmware_properties, more=lambda text: text):
        """`node` (a child of /axi) without the firmware's `firmware_properties`, its `clocks` clock inputs
        all the fixed clock, then `more` applied to it."""
        start = source.index(f"{node} {{")
        end = source.index("\n\t\t};", start)      # the node's own closing brace, two tabs in
        text = re.sub(rf"\n\t+({'|'.join(firmware_properties)}) = [^;]*;", "", source[start:end])
        text = re.sub(r"\tclocks = <[^>]*>;", "\tclocks = <" + " ".join([f"{clock:#x}"] * clocks) + ">;", text)
        return source[:start] + more(text) + source[end:]

    source = on_fixed_clock(source, "serial@ff000000", 2, ("power-domains", "pinctrl-names", "pinctrl-0"))
    # GEM3, the board's Ethernet: its PHY where QEMU's GEM answers (MDIO address 23; the board's is at 12).
    source = on_fixed_clock(source, "ethernet@ff0e0000", 5,
                            ("iommus", "power-domains", "resets", "reset-names", "pinctrl-names", "pinctrl-0"),
                            lambda text: re.sub(r"ethernet-phy@[0-9a-f]+ \{\n(\t+)reg = <[^>]*>;",
                                                lambda m: f"ethernet-phy@{QEMU_GEM_PHY:x} {{\n{m.group(1)}reg = "
                                                          f"<{QEMU_GEM_PHY:#x}>;", text))
    source = re.sub(r"\n\tmemory@0 \{[^}]*\};\n", "\n", source)
    fixed = (f"\n\tmonet-fixed-clock {{\n\t\tcompatible = \"fixed-clock\";\n\t\t#clock-cells = <0x00>;\n"
             f"\t\tclock-frequency = <{ZCU102_FIXED_CLK_HZ}>;\n\t\tphandle = <{clock:#x}>;\n\t}};\n")
    return source.replace("\n\tchosen {", fixed + "\n\tchosen {", 1)


def zcu102_device_tree(image, out_dir, with_remote_node=True, memory_mb=MEMORY_MB, distance=NODE_DISTANCE):
    """The guest's device tree on QEMU's xlnx-zcu102: Debian's ZCU102 tree (from the image's kernel package)
    patched for QEMU (_patched_zcu102), with the NUMA fragment as on the board: node 0 from 0, node 1 after."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = "monet-zcu102" if with_remote_node else "plain-zcu102"
    dtb = out / f"{name}.dtb"       # made anew each time (well under a second): the patches live in this file
    deb = image.root / "kernels" / next(d for d in image.info["debs"] if d.startswith("linux-image-"))
    member = f"./usr/lib/linux-image-{image.info['kernel_version']}/xilinx/{ZCU102_DTB}"
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True)
    board = subprocess.run(["tar", "-xO", member], input=tar.stdout, capture_output=True)
    if tar.returncode != 0 or board.returncode != 0 or not board.stdout:
        raise QemuError(f"{ZCU102_DTB} is not in {deb.name}: {(tar.stderr + board.stderr).decode()[-500:]}")
    (out / ZCU102_DTB).write_bytes(board.stdout)
    source = _patched_zcu102(_run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(out / ZCU102_DTB)],
                                  "decompiling the ZCU102 device tree"))
    if with_remote_node:
        source = _with_numa_fragment(source, out, 0x0, memory_mb, distance)
    (out / f"{name}.dts").write_text(source)
    _run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb), str(out / f"{name}.dts")], "compiling the device tree")
    return dtb
