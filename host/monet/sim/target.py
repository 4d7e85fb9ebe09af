"""A running sim: Vsim launched from a build, its firmware console driven over the simulated UART (a pty)."""

import json
import os
import signal
import time

import pexpect

from monet.console import ConsoleSession, spawn
from monet.sim.build import SimError
from monet.sim.firmware_console import ConsoleMismatch, FirmwareConsole, command_name
from monet.soc.facts import BRIDGE_PORT_ENV
from monet.tiers import refuse_in_unmarked_test

BRIDGE_LINE = r"monet_bridge: listening on 127\.0\.0\.1:(\d+)"
# What this process learnt of each model and firmware image it booted ((client class, gateware hash, firmware
# hash) -> the `info` answer), once their command table was checked against the client (monet.sim.firmware_console):
# the check and the facts are the same at every boot of the same image, and a campaign boots one for every point
# (the table and the facts are 1,500 characters, 0.6 s of the sim's console).
_KNOWN_FIRMWARE = {}


class SimTarget(ConsoleSession):
    """A running sim. `fw` (monet.sim.firmware_console) has a method per firmware console command, checked
    against the firmware's own table at boot; `command()` is its transport. `bridge_port`: the loopback port
    of its CSR bridge (UARTBone's bytes, for litex_server: monet.sim.ctl)."""

    def __init__(self, build, boot_timeout=120, command_timeout=300):
        self.build = build
        self.command_timeout = command_timeout
        self.child = None
        self.responsive = True  # False once an answer did not come: then close() does not ask, it ends Vsim.
        self.commands_sent = set()   # names of the console commands sent (what a fixture must put back)
        self.paused = False
        self._boot(boot_timeout)

    def pause(self):
        """Stops Vsim until the next command (or resume()). An idle sim still runs its clock, a full core's
        worth of CPU: a sim kept for later, like a test session's between its tests, is stopped meanwhile.
        Its cycles stop with it, so nothing it measures changes."""
        if not self.paused and self.child is not None and self.child.isalive():
            os.kill(self.child.pid, signal.SIGSTOP)
            self.paused = True

    def resume(self):
        if self.paused:
            self.paused = False
            if self.child is not None and self.child.isalive():
                os.kill(self.child.pid, signal.SIGCONT)

    def close(self):
        self.resume()
        super().close()

    def _boot(self, timeout):
        refuse_in_unmarked_test("sim", "starts a Vsim", SimError)
        self.started = time.time()
        # The CSR bridge (litex_server, monet-ctl: monet.sim.ctl) listens on a free loopback port, named on the
        # model's first lines.
        env = dict(os.environ, **{BRIDGE_PORT_ENV: "0"})
        self.child = spawn(str(self.build.model), cwd=str(self.build.gateware), encoding="utf-8",
                           codec_errors="replace", timeout=timeout, echo=False, env=env)
        # pexpect waits 50 ms before each line it sends (for programs that drop what comes before they read):
        # the sim's console buffers what it is sent, and the pause was two thirds of a short command's time.
        self.child.delaybeforesend = None
        try:
            self.child.expect(BRIDGE_LINE, timeout=timeout)
        except (pexpect.TIMEOUT, pexpect.EOF):
            self.responsive = False
            raise SimError(f"sim: Vsim did not open its CSR bridge; its output:\n{self.child.before}") from None
        self.bridge_port = int(self.child.match.group(1))
        self.ready = self._read_json("the firmware's ready line", timeout)
        self.boot_seconds = time.time() - self.started
        image = (FirmwareConsole, self.build.hash, getattr(self.build, "firmware_hash", None))
        self.fw = FirmwareConsole(self.command, facts=_KNOWN_FIRMWARE.get(image))
        if image not in _KNOWN_FIRMWARE:
            try:
                self.fw.verify()
            except ConsoleMismatch as e:
                self.close()
                raise SimError(f"sim: {e}") from None
            if None not in image:
                _KNOWN_FIRMWARE[image] = self.fw.facts()

    def _read_json(self, what, timeout):
        deadline = time.time() + timeout
        seen = []
        while True:
            left = deadline - time.time()
            try:
                if left <= 0:
                    raise pexpect.TIMEOUT("deadline")
                self.child.expect(r"[^\r\n]*\r?\n", timeout=left)
            except pexpect.TIMEOUT:
                self.responsive = False
                raise SimError(f"sim: timed out after {timeout} s waiting for {what}; last output:\n"
                               + "\n".join(seen[-10:])) from None
            except pexpect.EOF:
                self.responsive = False
                raise SimError(f"sim: Vsim exited while waiting for {what}; last output:\n"
                               + "\n".join(seen[-10:] + [self.child.before or ""])) from None
            line = self.child.after.strip()
            seen.append(line)
            start = line.find("{")
            if start >= 0:
                try:
                    return json.loads(line[start:])
                except json.JSONDecodeError:
                    continue

    def command(self, line, timeout=None):
        """Sends one console line (monet.sim.firmware_console writes them); returns its JSON answer. A firmware
        error raises SimError."""
        self.commands_sent.add(command_name(line))
        self.resume()
        self.child.sendline(line)
        answer = self._read_json(f"the answer to {line!r}", timeout or self.command_timeout)
        if "error" in answer:
            raise SimError(f"firmware refused {line!r}: {answer['error']}")
        return answer
