"""monet-ctl from the host: built against a SoC's user headers, run through litex_server on the sim's CSR bridge.

monet-ctl (firmware/ctl) is the firmware console's CSR commands as a Linux program: the same lines, the same
JSON answers, on the same register map. Against the sim it reaches the SoC's bus through LiteX's UARTBone (a
second bus master), whose bytes the model's monet_bridge module puts on a loopback port; litex_server turns
that into LiteX's Etherbone-over-TCP, which monet-ctl (and litex_cli, RemoteClient) speak.

`CtlTarget(sim)` gives a running sim's `fw` over monet-ctl instead of the firmware: the benchmarks' runs
that only program CSRs (bandwidth's: link, BFCT, the benchmark block) then run unchanged through it.
"""

import json
import os
import selectors
import subprocess
import sys
from pathlib import Path

from monet.locks import exclusive
from monet.loopback import Server, ServerError, free_port, port_free, stop
from monet.repo import REPO
from monet.sim.build import _tail
from monet.sim.firmware_console import FirmwareConsole, command_name
from monet.soc.facts import USER_INCLUDE

CTL_SOURCES = REPO / "firmware" / "ctl"
SERVER_START_TIMEOUT = 30     # seconds for litex_server to listen
ANSWER_TIMEOUT = 300          # seconds for one answer (a long benchmark-block run in the sim)


class CtlError(RuntimeError):
    """monet-ctl or litex_server failed, or a command was refused (with the answer or the output seen)."""


def build(include_dir, out_dir, cc="gcc"):
    """Builds monet-ctl against the user headers in `include_dir` (a folder holding generated/) into
    `out_dir` with the compiler `cc` (aarch64-linux-gnu-gcc for a board's PS); returns the binary's path.
    make rebuilds only what changed; a lock keeps parallel builders of one folder apart. Both folders are
    handed to make absolute: it runs in firmware/ctl, where a relative one would resolve (and be written)."""
    include_dir, out_dir = Path(include_dir).resolve(), Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / "build.log"
    with exclusive(out_dir / "build.lock"), open(log, "w") as out:
        # make does not see a change of compiler: objects of another one are removed first.
        stamp = out_dir / "compiler"
        if stamp.exists() and stamp.read_text() != cc:
            for old in [*out_dir.glob("*.o"), out_dir / "monet-ctl"]:
                old.unlink(missing_ok=True)
        stamp.write_text(cc)
        r = subprocess.run(["make", "-s", "-C", str(CTL_SOURCES), f"INCLUDE={include_dir}", f"OUT={out_dir}",
                            f"CC={cc}"], stdout=out, stderr=subprocess.STDOUT)
    binary = out_dir / "monet-ctl"
    if r.returncode != 0 or not binary.exists():
        raise CtlError(f"monet-ctl build failed; see {log}:\n" + _tail(log))
    return binary


def sim_binary(sim_build):
    """monet-ctl for a sim build's register map (in the build's ctl/ folder)."""
    return build(sim_build.dir / USER_INCLUDE, sim_build.dir / "ctl")


SERVED_CSR = "tcp:127.0.0.1:1234"   # `monet sim serve`'s litex_server at its default port


def run_on_served_sim(args):
    """`monet ctl ARGS`: monet-ctl for this revision's sim model (built on first use, beside the model), run
    with ARGS and this terminal's input; without --csr (or MONET_CTL_CSR) it speaks to `monet sim serve` at its
    default port. Returns monet-ctl's exit status."""
    from monet.sim import SimBuild
    build = SimBuild(log=lambda message: None)
    if not build.stamp.exists():
        raise CtlError(f"no sim model {build.hash} for this revision in {build.dir.parent}: start the sim with "
                       "`monet sim serve` (it builds the model), then run monet ctl beside it")
    binary = sim_binary(build)
    return subprocess.call([str(binary), *args], env={"MONET_CTL_CSR": SERVED_CSR, **os.environ})


class LitexServer(Server):
    """LiteX's litex_server on a sim's CSR bridge (`bridge_port`), serving Etherbone on 127.0.0.1:`port`
    (a free one when None). A context manager; close() ends it."""

    def __init__(self, bridge_port, port=None):
        if port is not None and not port_free(port):
            raise CtlError(f"127.0.0.1:{port} is in use: pick another port for litex_server")
        port = port or free_port()
        # litex_server serves its clients in turn; the probe that finds it listening leaves at once.
        try:
            Server.__init__(self, [sys.executable, "-m", "litex.tools.litex_server", "--uart", "--uart-port",
                                   f"socket://127.0.0.1:{bridge_port}", "--bind-ip", "127.0.0.1",
                                   "--bind-port", str(port)],
                            port, f"litex_server on the sim's bridge (127.0.0.1:{bridge_port})", SERVER_START_TIMEOUT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except ServerError as e:
            raise CtlError(f"{e}: {self.proc.stdout.read().strip()}") from None

    @property
    def spec(self):
        """monet-ctl's --csr for this server."""
        return f"tcp:127.0.0.1:{self.port}"


class CtlSession:
    """One monet-ctl reading command lines on stdin (`--csr spec`); command(line) returns its JSON answer and
    raises CtlError on a refusal, as SimTarget.command does for the firmware."""

    def __init__(self, binary, spec):
        self.proc = subprocess.Popen([str(binary), "--csr", spec], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)

    def command(self, line, timeout=None):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        if not self.selector.select(timeout or ANSWER_TIMEOUT):
            raise CtlError(f"monet-ctl did not answer {line!r} within {timeout or ANSWER_TIMEOUT} s")
        answer = self.proc.stdout.readline()
        if not answer:
            self.proc.wait()
            raise CtlError(f"monet-ctl ended (status {self.proc.returncode}) on {line!r}: "
                           f"{self.proc.stderr.read().strip()}")
        try:
            answer = json.loads(answer)
        except json.JSONDecodeError:
            raise CtlError(f"monet-ctl answered {line!r} with {answer.strip()!r}, not a JSON line") from None
        if "error" in answer:
            raise CtlError(f"monet-ctl refused {line!r}: {answer['error']}")
        return answer

    def close(self):
        self.proc.stdin.close()   # monet-ctl ends at the end of its input
        stop(self.proc)
        self.selector.close()


class CtlTarget:
    """A running sim driven through monet-ctl over its CSR bridge: `fw` is monet.sim.firmware_console's client on
    monet-ctl (checked against monet-ctl's `help`: its commands are the firmware's CSR commands), `build` the
    sim's build. The sim itself stays the caller's, and hears of what monet-ctl changed: each command's name
    joins the sim's `commands_sent` (the test fixture puts those settings back), and a BFCT write drops the
    sections its console last reported (they may no longer be what the table holds)."""

    def __init__(self, sim):
        self.build = sim.build
        self.binary = sim_binary(sim.build)
        self.server = LitexServer(sim.bridge_port)

        def command(line, timeout=None):
            name = command_name(line)
            sim.commands_sent.add(name)
            if name == "bfct":
                sim.fw.bfct_entries.clear()
            return self.session.command(line, timeout)

        try:
            self.session = CtlSession(self.binary, self.server.spec)
            self.fw = FirmwareConsole(command)
            self.fw.verify(partial=True)
        except BaseException:
            self.server.close()
            raise

    def close(self):
        self.session.close()
        self.server.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

