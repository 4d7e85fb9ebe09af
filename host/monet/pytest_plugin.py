"""pytest plugin: fixtures for end-to-end tests on the sim SoC, one model build per run shared by every test.

Registered through the `pytest11` entry point, so any pytest in the project venv has them:
`sim_build` (the built model and firmware) and `sim` (a running sim with the remote windows mapped).
"""

import pytest

from monet.sim import SimBuild, SimTarget


@pytest.fixture(scope="session")
def sim_build():
    return SimBuild(log=print).ensure()


@pytest.fixture(scope="session")
def sim(sim_build):
    """A running sim with the remote windows mapped; tests leave the link at 8 x 15 Gb/s, 8 m."""
    from monet import bench
    target = SimTarget(sim_build)
    bench.configure_link(target, 8, 8, 15.0)
    bench.map_remote_windows(target)
    yield target
    target.close()
