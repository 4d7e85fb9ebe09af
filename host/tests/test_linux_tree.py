"""The Buildroot external tree (linux/) and what it shares with the QEMU image: the package list, the
overlay, the kernel fragment and the device tree fragments (compiled here with dtc, as the board's
kernel build would)."""

import re
import subprocess
from pathlib import Path

import pytest

from monet import qemu

LINUX = qemu.LINUX
DEFCONFIG = LINUX / "configs" / "monet_zcu102_defconfig"


def _defconfig():
    return dict(line.split("=", 1) for line in DEFCONFIG.read_text().splitlines() if line and not line.startswith("#"))


def test_every_shared_package_is_built_by_buildroot_too():
    config = _defconfig()
    for line in (LINUX / "packages.txt").read_text().splitlines():
        fields = line.split("#")[0].split()
        if fields:
            assert config.get(fields[1]) == "y", f"{fields[0]}: {fields[1]} is not set in {DEFCONFIG.name}"
    assert set(qemu.read_packages(with_perf=False)) < set(qemu.read_packages(with_perf=True))


def test_defconfig_paths_exist_and_name_the_overlay_and_fragments():
    config = _defconfig()
    paths = re.findall(r"\$\(BR2_EXTERNAL_MONET_PATH\)/(\S+?)(?=[\s\"])", DEFCONFIG.read_text())
    assert paths
    for rel in paths:
        assert (LINUX / rel).exists(), rel
    assert "overlay" in config["BR2_ROOTFS_OVERLAY"]
    assert config["BR2_PACKAGE_MONET_STREAM"] == "y"
    assert "../bench/stream" in (LINUX / "package/monet-stream/monet-stream.mk").read_text()


def test_kernel_fragment_enables_numa_hotplug_and_perf():
    options = dict(line.split("=") for line in (LINUX / "kernel/monet.fragment").read_text().splitlines()
                   if line.startswith("CONFIG_"))
    for option in ("CONFIG_NUMA", "CONFIG_OF_NUMA", "CONFIG_MEMORY_HOTPLUG", "CONFIG_PERF_EVENTS", "CONFIG_HW_PERF_EVENTS"):
        assert options.get(option) == "y", option


def _board_defines():
    text = (LINUX / "dts/zynqmp-zcu102-monet.dts").read_text()
    return [f"-D{name}={value.strip()}" for name, value in re.findall(r"#define (MONET_\w+)\s+(.+)", text)]


@pytest.mark.parametrize("fragment", ["monet-remote-numa.dtsi", "monet-remote-reserved.dtsi"])
def test_board_device_tree_fragments_compile_with_the_boards_addresses(tmp_path, fragment):
    # The board's tree includes Xilinx's zcu102 tree (in the kernel sources, not here): a root with the same
    # cell sizes stands in for it.
    (tmp_path / "board.dts").write_text("/dts-v1/;\n/ {\n\t#address-cells = <2>;\n\t#size-cells = <2>;\n};\n"
                                        f'#include "{fragment}"\n')
    pre = subprocess.run(["cpp", "-nostdinc", "-undef", "-x", "assembler-with-cpp", "-P", "-I", str(LINUX / "dts")]
                         + _board_defines() + [str(tmp_path / "board.dts")], capture_output=True, text=True, check=True)
    (tmp_path / "pre.dts").write_text(pre.stdout)
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(tmp_path / "b.dtb"), str(tmp_path / "pre.dts")],
                   check=True)
    out = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(tmp_path / "b.dtb")], capture_output=True,
                         text=True, check=True).stdout
    if fragment == "monet-remote-numa.dtsi":
        assert re.search(r"monet-memory@500000000 \{[^}]*reg = <0x05 0x00 0x00 0x20000000>;[^}]*numa-node-id = <0x01>",
                         out, re.S)
        # Node 0 must hold every PS DDR range (low and high), or the kernel's NUMA setup is rejected.
        assert re.search(r"monet-memory@0 \{[^}]*reg = <0x00 0x00 0x00 0x7ff00000 0x08 0x00 0x00 0x80000000>;"
                         r"[^}]*numa-node-id = <0x00>", out, re.S)
        assert "distance-matrix = <0x00 0x00 0x0a 0x00 0x01 0x14 0x01 0x00 0x14 0x01 0x01 0x0a>" in out
    else:
        assert re.search(r"monet-remote@500000000 \{[^}]*no-map", out, re.S)


def test_qemu_device_tree_uses_the_same_fragment(tmp_path):
    source = (Path(qemu.device_tree(tmp_path)).with_suffix(".dts")).read_text()
    assert "numa-node-id = <1>" in source.replace("0x01", "1") and "numa-distance-map-v1" in source
    plain = Path(qemu.device_tree(tmp_path, with_remote_node=False)).with_suffix(".dts").read_text()
    assert "numa-node-id" not in plain


def test_monet_ctl_package_builds_against_the_default_compute_card_build():
    """Buildroot's monet-ctl takes the user headers of `monet board build --role compute` at its defaults
    unless told otherwise: the package's default is that build's include/ folder."""
    from monet.soc.board import default_output
    config = (LINUX / "package" / "monet-ctl" / "Config.in").read_text()
    default = re.search(r'config BR2_PACKAGE_MONET_CTL_INCLUDE.*?default "([^"]+)"', config, re.S).group(1)
    assert default == f"$(BR2_EXTERNAL_MONET_PATH)/../{default_output('zcu102', 'compute', 4, 15.0)}/include"
    assert _defconfig().get("BR2_PACKAGE_MONET_CTL") == "y"
    assert 'package/monet-ctl/Config.in' in (LINUX / "Config.in").read_text()
