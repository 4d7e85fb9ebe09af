"""Board-in-a-box: Debian's arm64 kernel and packages with our overlay in QEMU (virt, 4 x A53, a CPU-less
NUMA node 1), STREAM and YCSB/memcached in the guest, and the harness's failure paths; the same image on QEMU's
xlnx-zcu102 machine with the board's own device tree, the ZCU102 stand-in."""

import json
import re
import subprocess

import pytest

from monet import qemu
from monet.cli import main
from monet.loopback import free_port
from monet.workloads import stream, ycsb


def test_guest_has_a_cpu_less_remote_node_and_the_overlay_onlines_it(qemu_guest):
    assert qemu_guest.require_remote_node(1) == [0, 1]
    _, out = qemu_guest.run("monet-online-remote 1")
    fields = dict(f.split("=") for f in out.split() if "=" in f)
    assert fields["node"] == "1" and int(fields["online_blocks"]) > 0
    assert int(fields["mem_mib"]) > 0.8 * qemu.MEMORY_MB[1]
    _, hw = qemu_guest.run("numactl -H")
    assert re.search(r"node 1 cpus: *\n", hw) and re.search(rf"0: +10 +{qemu.NODE_DISTANCE}", hw)
    status, out = qemu_guest.run("monet-online-remote 3", check=False)
    assert status == 1 and "NUMA node 3 does not exist" in out


@pytest.mark.parametrize("node", [0, 1])
def test_stream_runs_bound_to_each_node_and_validates(qemu_guest, node):
    r = stream.run_qemu(qemu_guest, node, n=300_000, repetitions=3, perf=True)
    assert r["validates"] and r["threads"] == qemu.CPUS and r["n"] == 300_000
    assert all(v["best_MBps"] > 0 for v in r["kernels"].values())
    # Emulated counters: never an IPC, always the reason.
    assert r["ipc"] is None and "emulation" in r["ipc_note"]


def test_stream_validation_catches_a_corrupted_array_in_the_guest(qemu_guest):
    status, out = qemu_guest.run("stream -n 100000 -r 2 --corrupt", check=False)
    assert status == 1 and not stream.parse_output(out)["validates"]


@pytest.mark.slow
def test_ycsb_from_the_host_against_memcached_on_node_1(qemu_guest):
    r = ycsb.run_qemu(qemu_guest, "a", node=1, operations=1000)
    assert r["failed"] == 0 and r["operations"] == 1000 and r["ops_per_s"] > 0
    assert r["node"] == 1 and r["ipc"] is None and r["ipc_note"]


@pytest.mark.parametrize("how", ["kernel command line numa=off", "device tree without the NUMA fragment"])
def test_no_node_1_fails_with_a_clear_message(qemu_image, how):
    if how.startswith("kernel"):
        guest = qemu.QemuTarget(qemu_image, extra_append="numa=off")
    else:
        guest = qemu.QemuTarget(qemu_image, dtb=qemu.device_tree(qemu_image.dir, with_remote_node=False))
    with guest:
        with pytest.raises(qemu.QemuError, match=r"no NUMA node 1 .*numa-node-id = <1>.*numa=off"):
            stream.run_qemu(guest, 1, n=10_000, repetitions=2)


@pytest.mark.slow
def test_a_hung_guest_times_out_cleanly(qemu_image):
    with pytest.raises(qemu.QemuError, match=r"timed out after 10 s waiting for the guest's init .*QEMU was stopped"):
        qemu.QemuTarget(qemu_image, boot_timeout=10, extra_append="monet.hang")
    left = subprocess.run(["pgrep", "-f", "monet.hang"], capture_output=True, text=True).stdout
    assert left == ""


def test_the_zcu102_stand_in_boots_the_boards_tree_and_runs_stream_and_ycsb_on_the_remote_node(qemu_image):
    with qemu.QemuTarget(qemu_image, machine="zcu102", forward_port=free_port()) as guest:
        _, model = guest.run("cat /proc/device-tree/model")
        assert "ZCU102" in model
        assert guest.remote_memory and guest.remote_memory["mib"] > 0.8 * qemu.MEMORY_MB[1]
        assert guest.require_remote_node(1) == [0, 1]
        _, hw = guest.run("numactl -H")
        assert re.search(r"node 1 cpus: *\n", hw) and re.search(rf"0: +10 +{qemu.NODE_DISTANCE}", hw)
        # The board's Ethernet (GEM3, QEMU's fourth NIC) carries YCSB from the host to memcached on node 1.
        _, dmesg = guest.run("dmesg | grep ff0e0000.ethernet")
        assert "Link is Up" in dmesg
        r = stream.run_qemu(guest, 1, n=100_000, repetitions=2)
        assert r["validates"] and r["threads"] == qemu.CPUS
        r = ycsb.run_qemu(guest, "c", node=1, operations=500)
        assert r["failed"] == 0 and r["operations"] == 500 and r["node"] == 1


def test_an_unknown_qemu_machine_is_refused_by_name(qemu_image):
    with pytest.raises(qemu.QemuError, match="machine 'sabre': accepted are virt, zcu102"):
        qemu.qemu_command(qemu_image, machine="sabre")


@pytest.mark.qemu      # its campaign boots the stand-in
def test_a_board_campaign_runs_the_linux_workloads_on_the_stand_in_and_says_there_is_no_fabric(tmp_path):
    (tmp_path / "board.yaml").write_text("name: board-smoke\naxes:\n  target: [board]\nbenchmarks:\n"
                                         "  - stream: {node: [1], n: [200000], reps: [2]}\n"
                                         "  - ycsb: {workload: [c], node: [1], operations: [300], threads: [2]}\n")
    assert main(["campaign", "run", str(tmp_path / "board.yaml"), "--results", str(tmp_path / "out")]) == 0
    records = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["point"]["benchmark"] for r in records) == ["stream", "ycsb"]
    for r in records:
        assert r["result"]["target"] == "board" and "stand-in" in r["result"]["board"]
        assert r["result"]["fpga"]["loaded"] is False and "no FPGA fabric" in r["result"]["fpga"]["note"]
        assert r["result"]["link_bring_up"]["fabric"] is False and "monet-csr" in r["result"]["link_bring_up"]["note"]
        assert r["result"]["remote_memory"]["mib"] > 0.8 * qemu.MEMORY_MB[1]
    results = {r["point"]["benchmark"]: r["result"] for r in records}
    assert results["stream"]["validates"] and results["ycsb"]["failed"] == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["board"]["machine"] == "xlnx-zcu102" and manifest["board"]["bitstream_sha256"] is None
    assert "qemu" not in manifest      # no virt guest ran
