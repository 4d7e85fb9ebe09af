"""The project's pytest plugin loads in every pytest process, the cocotb run of each core test too (cocotb 2
starts pytest's assertion rewriting, which loads the entry points): it must import nothing heavy."""

import os
import re
import subprocess
import sys

import pytest

from monet.repo import REPO


def test_loading_the_plugin_imports_neither_the_sim_nor_litex():
    probe = ("import sys, monet.pytest_plugin\n"
             "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('litex', 'migen', 'numpy')\n"
             "                      or m.startswith('monet.sim'))))")
    heavy = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert heavy == [], f"the pytest plugin imports {heavy[:5]}: a second a pytest process (one a core test)"


def _collected(*marks):
    """Test ids that pytest selects with `marks`, over the folders whose tests use the sim and QEMU (the cores'
    tests run their own Verilator models: minutes of imports to collect, and none uses the SoC's sim). Options
    the caller's pytest was given (PYTEST_ADDOPTS, addopts) are not passed on: `-v` would change the listing."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=",
                        "--collect-only", "-q", *marks, "host/tests", "litex/soc"], cwd=REPO, capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return {line for line in r.stdout.splitlines() if "::" in line}


def test_the_tiers_select_what_they_say():
    """`make test-fast`'s selection holds no test that uses the sim or QEMU (by fixture, by a mark of its own,
    or a campaign point's by its target), and `-m sim` selects the sim tests: the marks are set before `-m`
    selects. (A test that starts a sim without the mark fails: the next test.)"""
    fast, sim = _collected("-m", "not sim and not qemu"), _collected("-m", "sim")
    assert len(fast) > 100 and len(sim) > 100 and not fast & sim
    assert any(t.startswith("host/tests/test_sim_pbb.py::") for t in sim)                  # by fixture
    assert any(t.startswith("host/tests/test_runner_matrix.py::test_every_benchmark_gives_the_same") for t in sim)
    assert not any("test_a_board_campaign_runs_the_linux_workloads" in t for t in fast)   # by its own mark
    assert not any(t.startswith("host/tests/test_qemu.py::test_guest_has_a_cpu_less") for t in fast)
    assert "host/tests/test_pytest_plugin.py::test_the_tiers_select_what_they_say" in fast


def test_a_test_without_the_sim_mark_cannot_start_a_sim(request, monkeypatch):
    """This test is not marked sim: the plugin names it while it runs, and a sim it starts (or a model build,
    or a QEMU guest) is refused with its name, before anything is started."""
    from monet.qemu import QemuError, QemuTarget
    from monet.sim import SimBuild, SimError, SimTarget
    from monet.tiers import env_name
    assert os.environ[env_name("sim")] == os.environ[env_name("qemu")] == request.node.nodeid
    with pytest.raises(SimError, match=re.escape(f"{request.node.nodeid} starts a Vsim but is not marked sim")):
        SimTarget(build=None)
    with pytest.raises(SimError, match="builds the sim model but is not marked sim"):
        SimBuild(build_root="/nonexistent")._build_model()
    with pytest.raises(QemuError, match="starts a QEMU guest but is not marked qemu"):
        QemuTarget(image=None)
    monkeypatch.delenv(env_name("sim"))
    from monet.tiers import refuse_in_unmarked_test
    refuse_in_unmarked_test("sim", "starts a Vsim", SimError)          # outside an unmarked test: nothing
    with pytest.raises(QemuError):
        refuse_in_unmarked_test("qemu", "starts a QEMU guest", QemuError)


def test_a_long_test_is_skipped_with_its_reason_unless_long_is_given(tmp_path):
    (tmp_path / "test_sizes.py").write_text("import pytest\n\n\n@pytest.mark.long\ndef test_full_size():\n"
                                            "    pass\n\n\ndef test_smallest():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    outcomes = []
    for extra in ([], ["--long"]):
        r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-o",
                            "addopts=", "-q", "-rs", *extra, "test_sizes.py"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120, env=env)
        outcomes.append(r.stdout.strip().splitlines()[-1].split(" in ")[0])
        if not extra:
            assert "`make test-long` runs it" in r.stdout
    assert outcomes == ["1 passed, 1 skipped", "2 passed"]
