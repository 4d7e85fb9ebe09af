"""pytest plugin: fixtures for end-to-end tests on the sim SoC, one model build per run shared by every test.

Registered through the `pytest11` entry point, so any pytest in the project venv has them:
`sim_build` (the built model and firmware), `sim` (a running sim with the remote windows mapped, its
settings put back after each test), `qemu_image` and `qemu_guest` (the board-in-a-box image and a booted
guest), `plotted` (the axes of the figures a test's reports save).
"""

import os

import pytest

# Nothing heavier than pytest at import: every pytest process loads this plugin, the cores' cocotb runs too
# (cocotb 2 starts pytest's assertion rewriting, which loads the entry points); `monet.sim` takes a second.


@pytest.fixture(scope="session")
def sim_build():
    from monet.sim import SimBuild
    return SimBuild(log=print).ensure()


@pytest.fixture(scope="session")
def sim_models(request):
    """The session's sim builds by model name (monet.sim.MODELS), each built or reused when first asked for;
    the full model is `sim_build`."""
    from monet.sim import DEFAULT_MODEL, SimBuild
    builds = {}

    def build(model):
        if model == DEFAULT_MODEL:
            return request.getfixturevalue("sim_build")
        if model not in builds:
            builds[model] = SimBuild(model, log=print).ensure()
        return builds[model]
    return build


@pytest.fixture(scope="session")
def sim_session(sim_build):
    """The session's running sim (link at 8 x 15 Gb/s, 8 m, remote windows mapped) and the console commands
    that put its settings back as they were then."""
    from monet.link.settings import LinkSettings
    from monet.sim import SimTarget, link_setup
    target = SimTarget(sim_build)
    link_setup.configure_link(target, LinkSettings(8, 8, 15.0))
    link_setup.map_remote_windows(target)
    restore = settings_commands(target)
    target.pause()
    yield target, restore
    target.close()


@pytest.fixture
def sim(sim_session):
    """The session's sim for one test. Whatever the test changes (link, channel errors, retry, BFCT, a chosen
    fault armed) and however it ends, the next test finds the session's settings. Between tests the sim is paused: idle, it would
    take a core from the worker's other tests for the rest of the run."""
    target, restore = sim_session
    target.commands_sent.clear()
    target.resume()
    yield target
    if target.child.isalive():
        for name, fields in restore:
            if name == "bfct":
                target.fw.set_bfct(**fields)      # only the sections the test changed
            elif name in target.commands_sent:
                getattr(target.fw, name)(**fields)
        if "inject" in target.commands_sent:
            target.fw.inject(kind="none")         # a chosen fault armed and not yet started
        target.pause()                            # until the worker's next sim test


# The console's settings commands and the fields of their answers that set them back; BFCT entries too.
SETTINGS = {
    "link": ("lanes", "block_ps", "delay", "skew", "max_units", "pairing", "issue_rate", "memory", "memlat"),
    "retry": ("timeout", "nak", "selective", "repair", "credits", "request_timeout"),
    "errinj": ("ber", "burst", "seed"),
    "combiner": ("fetch_lines",),
    "hmc": ("flit_ps", "delay", "ber", "seed", "poison", "line"),
    "memcard": ("poison", "line"),
}
BFCT_FIELDS = ("en", "r", "w", "target", "base")


def settings_commands(target):
    """(console command, its keys) that set the link, channel, retry and every BFCT entry as they are now (a
    fixture sends again only those of the commands a test sent)."""
    restore = []
    for name, fields in SETTINGS.items():
        answer = getattr(target.fw, name)()
        restore.append((name, {k: answer[k] for k in fields}))
    for idx in range(target.fw.facts()["sections"]):
        answer = target.fw.bfct(idx)
        restore.append(("bfct", {"idx": idx, **{k: answer[k] for k in BFCT_FIELDS}}))
    return restore


# Tiers: a test that needs the sim model is marked `sim`, one that needs the QEMU image `qemu`, from the
# fixtures it uses, so `pytest -m "not sim and not qemu"` runs the fast tier alone. The marks are set as each
# test is collected, before `-m` selects (pytest selects in pytest_collection_modifyitems).
SIM_FIXTURES = {"sim", "sim_session", "sim_build", "sim_models"}
QEMU_FIXTURES = {"qemu_image", "qemu_guest", "board_guest"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A test not marked `sim` (`qemu`) is named in the environment while it runs: a sim (guest) it starts is
    refused (monet.tiers). A name set by an outer test (this pytest runs inside its command) stays."""
    from monet.tiers import TIERS, env_name
    unmarked = [env_name(t) for t in TIERS if item.get_closest_marker(t) is None and env_name(t) not in os.environ]
    os.environ.update(dict.fromkeys(unmarked, item.nodeid))
    try:
        yield
    finally:
        for name in unmarked:
            del os.environ[name]


def pytest_itemcollected(item):
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & SIM_FIXTURES:
        item.add_marker(pytest.mark.sim)
    if fixtures & QEMU_FIXTURES:
        item.add_marker(pytest.mark.qemu)


def pytest_configure(config):
    config.addinivalue_line("markers", "sim: needs the sim model (built once per run)")
    config.addinivalue_line("markers", "qemu: needs the board-in-a-box QEMU image")
    config.addinivalue_line("markers", "slow: takes a minute or so; collected first (see below)")
    config.addinivalue_line("markers", "long: runs a documented command at its full size (minutes each); skipped "
                                       "unless --long is given (`make test-long`)")


# After any shuffling (pytest-randomly), tests marked `slow` move to the front, in their shuffled order: on
# pytest-xdist's workers they then start at once instead of ending a parallel run alone, minutes after the
# rest has finished.
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if not config.getoption("long"):
        skip = pytest.mark.skip(reason="a documented command at its full size: `make test-long` runs it")
        for item in items:
            if item.get_closest_marker("long"):
                item.add_marker(skip)


# Campaigns: `pytest monet/campaign/points.py --campaign FILE --results DIR` (what `monet campaign run` does).

def pytest_addoption(parser):
    group = parser.getgroup("monet", "MONet-open campaigns and test tiers")
    group.addoption("--campaign", default=None, help="campaign YAML file whose points to run")
    group.addoption("--results", default=None, help="results folder (results.jsonl, manifest.json)")
    group.addoption("--long", action="store_true", help="also run the tests marked `long` (each documented command "
                    "at its full size: whole-card estimates, every sim model's speed, the Linux campaign)")
    group.addoption("--sim-model", default=None, help="the sim model every sim point runs on (default: each "
                    "point's, monet.campaign.plan.plan_models)")


def pytest_generate_tests(metafunc):
    if "campaign_point" not in metafunc.fixturenames:
        return
    from monet.campaign.plan import Campaign, CampaignError, point_id
    path = metafunc.config.getoption("campaign")
    if not path:
        raise pytest.UsageError("campaign points need --campaign FILE")
    try:
        points = Campaign(path).points()
    except CampaignError as e:
        raise pytest.UsageError(str(e)) from None
    # Marked by target, so that a point is in its tier (a sim point starts a Vsim: monet.tiers).
    metafunc.parametrize("campaign_point", [pytest.param(p, marks=getattr(pytest.mark, tier(p["target"])))
                                            for p in points], ids=[point_id(p) for p in points])


def tier(target):
    """The test tier of a point's target: the board target is the QEMU stand-in today."""
    return "sim" if target == "sim" else "qemu"


@pytest.fixture
def plotted(monkeypatch):
    """The axes of every figure saved during the test (monet.report.tables.figure), by file name: what a report's
    plot shows, read back from matplotlib's own objects."""
    from pathlib import Path
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    saved, savefig = {}, Figure.savefig

    def keep(fig, path, *args, **kwargs):
        saved[Path(path).name] = fig.axes[0]
        return savefig(fig, path, *args, **kwargs)
    monkeypatch.setattr(Figure, "savefig", keep)
    return saved


@pytest.fixture(scope="session")
def qemu_image():
    from monet.qemu import GuestImage
    return GuestImage(log=print).ensure()


@pytest.fixture(scope="session")
def qemu_guest(qemu_image):
    """A booted board-in-a-box guest with a loopback port forwarded to its memcached port."""
    from monet.loopback import free_port
    from monet.qemu import QemuTarget
    guest = QemuTarget(qemu_image, forward_port=free_port())
    yield guest
    guest.close()


@pytest.fixture(scope="session")
def board_guest(qemu_image):
    """The board target's guest: today the QEMU xlnx-zcu102 stand-in, its FPGA load step done."""
    from monet.board.target import open_board
    from monet.loopback import free_port
    guest = open_board(qemu_image, forward_port=free_port())
    yield guest
    guest.close()


@pytest.fixture(scope="session")
def campaign_store(request):
    """The results folder of the campaign, with `plan`, the sim model of each of its sim points
    (monet.campaign.plan.plan_models: the whole campaign's, the same on a resumed run); its manifest names the sim
    models and the QEMU image the points use (each built only when a point needs it)."""
    from monet.campaign.plan import Campaign, CampaignError, ResultsStore, build_models, plan_models, write_manifest
    campaign = Campaign(request.config.getoption("campaign"))
    results = request.config.getoption("results") or f"build/campaigns/{campaign.name}"
    store = ResultsStore(results)
    try:
        store.plan = plan_models(campaign.points(), request.config.getoption("sim_model"))
    except CampaignError as e:
        raise pytest.UsageError(str(e)) from None
    targets = {p["target"] for p in campaign.points()}
    built = (build_models(store.plan, request.getfixturevalue("sim_models")),
             request.getfixturevalue("qemu_image") if targets & {"qemu", "board"} else None)
    write_manifest(store, campaign, *built)
    store.total = len(campaign.points())
    yield store
    write_manifest(store, campaign, *built)    # now with where this run's points ran
