"""The sim models (monet.sim.MODELS): which memories each holds, what serves what, and that each smaller one's SoC
is made with only its memories (the full one is what every sim test runs on)."""

import pytest

from monet.sim import DEFAULT_MODEL, MODELS, covers, serves, smallest_model


def test_each_model_holds_the_sram_and_its_own_memories_and_covers_the_smaller():
    assert [name for name in MODELS if serves(name, "ddr4")] == ["ddr4", "full"]
    assert [name for name in MODELS if serves(name, "hmc")] == ["hmc", "full"]
    assert all(serves(name, "sram") for name in MODELS)
    assert [smallest_model(m) for m in ("sram", "ddr4", "hmc")] == ["sram", "ddr4", "hmc"]
    assert covers("full", "ddr4") and covers("ddr4", "sram") and covers("hmc", "hmc")
    assert not covers("hmc", "ddr4") and not covers("ddr4", "hmc") and not covers("sram", "ddr4")


@pytest.mark.parametrize("name", [name for name in MODELS if name != DEFAULT_MODEL])
def test_a_smaller_models_soc_has_only_its_memories(name):
    from monet.soc.sim import MonetSimSoC
    soc = MonetSimSoC(**MODELS[name])
    memcard, memories = soc.remote.memcard, MODELS[name]
    assert (hasattr(memcard, "ddr4"), hasattr(memcard, "hmc")) == (memories["with_ddr4"], memories["with_hmc"])
    # The benchmark block's direct port and the HMC's facts come with the HMC only.
    assert soc.pbb.with_block_port == ("HMC_MAX_DELAY" in soc.constants) == memories["with_hmc"]


def test_a_build_s_files_lie_in_its_folder_named_by_its_hash(tmp_path):
    """Where SimBuild looks: the model, the stamp and csr.json under build_root/<hash>/; the build time from the
    stamp (None before it is written); a model that is not ours is refused with the names of those that are."""
    import json
    from monet.sim import BUILDS, SimBuild, SimError
    build = SimBuild("pooled", build_root=tmp_path)
    assert build.dir == tmp_path.resolve() / build.hash and build.config == BUILDS["pooled"]
    assert build.model == build.dir / "gateware" / "obj_dir" / "Vsim" and build.stamp == build.dir / "model.ok"
    assert build.build_seconds is None
    build.dir.mkdir()
    build.stamp.write_text(json.dumps({"build_s": 303.2}))
    (build.dir / "csr.json").write_text(json.dumps({"constants": {"pool_requesters": 4}}))
    assert build.build_seconds == 303.2 and build.constants == {"pool_requesters": 4}
    assert SimBuild("ddr4", build_root=tmp_path).hash != build.hash
    with pytest.raises(SimError, match="sim model 'big' is not one of ours; accepted: sram, ddr4, hmc, full, pooled"):
        SimBuild("big", build_root=tmp_path)


def test_build_steps_run_side_by_side_and_say_they_are_still_going(tmp_path):
    """The build's steps (`_run_steps`): all started at once, the first non-zero exit status returned (0 when
    all succeed), a heartbeat line with the seconds since the build began while any still runs."""
    import os
    import time
    from monet.sim import SimBuild
    said = []
    build = SimBuild("sram", build_root=tmp_path, log=said.append)
    env = dict(os.environ)
    with open(tmp_path / "out.log", "w") as out:
        t0 = time.time() - 100
        assert build._run_steps("testing", [(["true"], env), (["sh", "-c", "sleep 0.3"], env)], tmp_path, out, t0,
                                heartbeat=0.1) == 0
        assert build._run_steps("testing", [(["true"], env), (["sh", "-c", "exit 3"], env)], tmp_path, out, t0) == 3
    assert said and all(line.startswith("sim: testing... 10") and line.endswith(" s") for line in said)


def _fake_build(tmp_path, monkeypatch, make_output, returncode=0):
    """A SimBuild whose firmware `make` is replaced: it writes `make_output` as the console's binary (None:
    none) and exits with `returncode`."""
    import json
    import subprocess
    from monet.sim import SimBuild
    from monet.sim import build as sim_build
    build = SimBuild("sram", build_root=tmp_path)
    build.gateware.mkdir(parents=True)
    (build.dir / "csr.json").write_text(json.dumps({"memories": {"rom": {"size": 8}}}))

    def make(cmd, stdout, stderr, env):
        stdout.write("made\n")
        if make_output is not None:
            (build.firmware / "monet-console.bin").write_bytes(make_output)
        return subprocess.CompletedProcess(cmd, returncode)
    monkeypatch.setattr(sim_build.subprocess, "run", make)
    return build


def test_the_console_fills_the_rom_s_init_file_word_by_word(tmp_path, monkeypatch):
    """The binary as little-endian 32-bit words, one a line, its tail padded with zero bytes; its hash kept."""
    import hashlib
    build = _fake_build(tmp_path, monkeypatch, bytes([1, 2, 3, 4, 5]))
    build._build_firmware()
    assert (build.gateware / "sim_rom.init").read_text() == "04030201\n00000005\n"
    assert build.firmware_hash == hashlib.sha256(bytes([1, 2, 3, 4, 5, 0, 0, 0])).hexdigest()[:16]
    assert not list(build.gateware.glob("sim_rom.init.*"))


@pytest.mark.parametrize("output, returncode, said", [(None, 0, "firmware build failed; see "),
                                                      (b"x", 2, "firmware build failed; see "),
                                                      (bytes(9), 0, "is 9 bytes, the sim's ROM holds 8")])
def test_a_firmware_build_that_fails_or_outgrows_the_rom_is_said(tmp_path, monkeypatch, output, returncode, said):
    from monet.sim import SimError
    build = _fake_build(tmp_path, monkeypatch, output, returncode)
    with pytest.raises(SimError, match=said) as failed:
        build._build_firmware()
    assert "firmware/build.log" in str(failed.value) or "ROM" in str(failed.value)
    if "build failed" in said:
        assert str(failed.value).endswith("made")


@pytest.mark.parametrize("codes, model, fails", [([0, 0], True, False), ([0, 2], True, True), ([1], True, True),
                                                 ([0, 0], False, True)])
def test_a_model_build_succeeds_only_when_every_step_does_and_the_model_is_there(tmp_path, monkeypatch, codes,
                                                                                 model, fails):
    """The SoC's generation first, then the model and the libraries; a failed step or a missing model is an
    error naming the build's log, after which nothing else runs; success returns the seconds it took."""
    from monet.sim import SimBuild, SimError
    from monet.sim import build as sim_build
    monkeypatch.setattr(sim_build, "refuse_in_unmarked_test", lambda *args: None)
    build = SimBuild("sram", build_root=tmp_path, log=lambda line: None)
    steps = list(codes)

    def run_steps(what, commands, cwd, out, t0, heartbeat=30):
        out.write(f"{what}\n")
        if what.startswith("verilating") and model:
            build.model.parent.mkdir(parents=True)
            build.model.write_text("")
        return steps.pop(0)
    monkeypatch.setattr(build, "_run_steps", run_steps)
    if fails:
        with pytest.raises(SimError, match=f"sim model build failed; see {build.dir / 'build.log'}"):
            build._build_model()
    else:
        assert 0 <= build._build_model() < 5
    assert steps == [] and (build.dir / "build.log").read_text().startswith("generating the SoC\n")


def test_a_log_s_tail_is_its_last_lines_and_nothing_when_it_is_missing(tmp_path):
    from monet.sim.build import _tail
    log = tmp_path / "build.log"
    log.write_text("".join(f"line {i}\n" for i in range(30)))
    assert _tail(log, lines=2) == "line 28\nline 29" and _tail(tmp_path / "missing.log") == ""
