"""monet-ctl on the sim: the firmware console's CSR commands as a Linux program, through the sim's CSR bridge
(UARTBone, the model's monet_bridge module, litex_server), on the register map a board gets."""

import subprocess

import pytest

from monet.benchmarks import bandwidth as bandwidth_bench
from monet.link.settings import LinkSettings
from monet.loopback import free_port
from monet.sim import ctl
from monet.sim.firmware_console import ConsoleMismatch, FirmwareConsole


@pytest.fixture(scope="module")
def ctl_binary(sim_build):
    return ctl.sim_binary(sim_build)


@pytest.fixture
def via_ctl(sim):
    """The session's sim driven through monet-ctl (its firmware console stays usable beside it)."""
    with ctl.CtlTarget(sim) as target:
        yield target


@pytest.mark.parametrize("op", ["read", "write"])
def test_bandwidth_through_monet_ctl_equals_the_firmware_console(sim, via_ctl, op):
    # The same benchmark, once from the soft CPU's console and once from monet-ctl over the bridge: the same
    # settings reach the same registers, so every figure is the same (SRAM: no refresh to fall anywhere).
    # The first run after a link change may take a cycle more (the channel's block timer has a phase): a
    # run first, then the two compared.
    bandwidth_bench.measure(sim, op, 32, LinkSettings(8, 8, 15.0), count=3000)
    firmware = bandwidth_bench.measure(sim, op, 32, LinkSettings(8, 8, 15.0), count=3000)
    through_ctl = bandwidth_bench.measure(via_ctl, op, 32, LinkSettings(8, 8, 15.0), count=3000)
    assert through_ctl == firmware
    assert firmware["transactions"] == 3000 and firmware["bandwidth_GBps"] > 1


def test_monet_ctl_has_the_firmwares_csr_commands_with_their_keys(sim, via_ctl):
    theirs = sim.fw.help()["commands"]
    mine = via_ctl.fw.help()["commands"]
    assert set(mine) == {"help", "info", "link", "retry", "errinj", "inject", "prbs", "hmc", "bfct", "faults",
                         "combiner", "memcard", "stages", "pbb", "ports", "pool", "switch"}
    assert {name: theirs[name] for name in mine} == mine
    # What the CPU alone can do stays in the firmware.
    assert {"rd", "wr", "fill", "check", "lat", "chase", "stream", "counters", "exit"} <= set(theirs) - set(mine)


def test_a_bfct_entry_written_by_monet_ctl_is_what_the_firmware_reads(sim, via_ctl):
    before = sim.fw.bfct(15)
    try:
        via_ctl.fw.bfct(15, en=1, r=1, w=0, target=1, base=3)
        assert sim.fw.bfct(15) == {"idx": 15, "en": 1, "r": 1, "w": 0, "target": 1, "base": 3}
    finally:
        sim.fw.bfct(**before)


def test_what_monet_ctl_changes_is_put_back_after_the_test_like_what_the_console_changes(sim, via_ctl):
    # The sim fixture restores the settings of the commands a test sent; monet-ctl's writes bypass the
    # console, so they are named to the sim, and a BFCT write makes the console's last answers stale.
    sim.fw.bfct(15)
    sim.commands_sent.clear()
    via_ctl.fw.retry(timeout=1000)
    via_ctl.fw.bfct(15, en=1, r=1, w=0, target=1, base=3)
    assert {"retry", "bfct"} <= sim.commands_sent and sim.fw.bfct_entries == {}


def test_monet_ctl_refusals_are_the_firmwares(sim, via_ctl):
    with pytest.raises(ctl.CtlError, match="lanes must be 1, 2, 4 or 8"):
        via_ctl.fw.link(lanes=3)
    with pytest.raises(ctl.CtlError, match="unknown command nosuch, try help"):
        via_ctl.session.command("nosuch")


def run(binary, *args, **env):
    return subprocess.run([str(binary), *args], capture_output=True, text=True, env=env or None)


def test_one_command_from_the_command_line_answers_and_sets_the_exit_status(sim, ctl_binary):
    with ctl.LitexServer(sim.bridge_port) as server:
        info = run(ctl_binary, "--csr", server.spec, "info")
        assert info.returncode == 0 and '"sections": 16' in info.stdout
        refused = run(ctl_binary, "bfct", "idx=99", MONET_CTL_CSR=server.spec)
        assert refused.returncode == 1 and "idx must be below the number of sections" in refused.stdout


@pytest.mark.parametrize("args,message", [
    ((), "no CSR access given: pass --csr SPEC or set MONET_CTL_CSR"),
    (("--csr", "serial:/dev/ttyUSB0", "info"), "--csr serial:/dev/ttyUSB0: not a CSR access; expected one of"),
    (("--csr", "tcp:127.0.0.1", "info"), "expected tcp:HOST:PORT"),
    (("--csr", "mem:0x123", "info"), "page aligned (this SoC's: 0xf0000000)"),
    (("--csr", "uio:/dev/uio9", "info"), "/dev/uio9 is not a UIO device with a map"),
    (("--verbose", "info"), "unknown option --verbose"),
])
def test_bad_invocations_name_the_input_and_what_is_accepted(ctl_binary, args, message):
    r = run(ctl_binary, *args, PATH="/usr/bin")
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_no_server_at_the_port_is_named(ctl_binary):
    port = free_port()
    r = run(ctl_binary, "--csr", f"tcp:127.0.0.1:{port}", "info")
    assert r.returncode == 2 and f"nothing listens at 127.0.0.1:{port} (is litex_server running there?)" in r.stderr


def test_the_console_client_checks_a_partial_table():
    # monet-ctl lacks the CPU's commands (allowed) but must not differ in the keys of those it has.
    keys = FirmwareConsole.commands()
    table = {name: " ".join(f"{key}=" for key in keys[name]) for name in ("help", "bfct", "pbb")}
    FirmwareConsole(lambda line, wait: {"commands": table}).verify(partial=True)
    with pytest.raises(ConsoleMismatch, match="the client has `rd`, the firmware no such command"):
        FirmwareConsole(lambda line, wait: {"commands": table}).verify()
    table["bfct"] = "idx= en= r= w= target="
    with pytest.raises(ConsoleMismatch, match="`bfct` takes base= in the client, not in the firmware"):
        FirmwareConsole(lambda line, wait: {"commands": table}).verify(partial=True)


def listening_addresses(port):
    """The local addresses of the sockets listening on TCP `port` (IPv4 and IPv6), from /proc."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:   # 0A: LISTEN
                    found.append(address)
    return found


def test_the_bridge_listens_on_the_loopback_address_only(sim):
    assert listening_addresses(sim.bridge_port) == ["0100007F"]   # 127.0.0.1, little-endian


def test_sim_serve_refuses_a_port_in_use_by_name(capsys):
    import socket
    from monet.cli import main
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["sim", "serve", "--port", str(port)]) == 2
    assert f"127.0.0.1:{port} is in use: pick another port for litex_server (--port)" in capsys.readouterr().err


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_sim_serve_refuses_a_port_out_of_range(port, capsys):
    from monet.cli import main
    with pytest.raises(SystemExit):
        main(["sim", "serve", "--port", port])
    assert f"argument --port: '{port}' is not a TCP port (1 to 65535)" in capsys.readouterr().err
