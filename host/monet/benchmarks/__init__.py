"""The benchmark registry: one module in this package per benchmark, each a `Benchmark` subclass.

A benchmark declares its parameters (`Param`: campaign key, CLI option, accepted values, default, help), the
targets it runs on, `run()` (its module's `measure` does the work, over the point's `LinkSettings`:
`Benchmark.link`), its cost in sim cycles, its verdicts against the paper and our targets, its report sections,
and the smallest campaign point that still exercises it (`smallest`, for the runner matrix test). `monet bench
NAME` (monet.cli), a campaign's validation and points (monet.campaign.plan, monet.campaign.points, the Dask
workers of monet.campaign.workers) and the report (monet.report.document) are built from REGISTRY, so adding a
benchmark is adding one file here, and its test. A benchmark of one's own can stay outside the package:
MONET_BENCHMARKS names its files (separated as PATH is), and every part finds it the same way.
"""

import argparse
import importlib
import importlib.util
import os
import pkgutil
import sys
from collections import namedtuple
from pathlib import Path

from monet.link import model as link_model
from monet.link.profiles import HMC_WIDTHS, PLACEMENTS, PROFILES
from monet.link.settings import AXES as LINK_AXES, LinkSettings
from monet.report.paper import PAPER_TOLERANCE
from monet.soc.facts import MEMORIES


def value_text(value):
    """A value as a person writes it: 15, 12.5, 1024, 1e+09 (a power of ten from a million up)."""
    if isinstance(value, (int, float)) and float(value).is_integer():
        whole = int(value)
        return f"{value:g}" if whole >= 10**6 and f"{whole:d}".rstrip("0") == "1" else str(whole)
    return f"{value:g}" if isinstance(value, float) else str(value)


class Param:
    """One parameter of a benchmark, or one sweep axis.

    `name` is its key in campaign files and points, `flag` its CLI option (default `--name`). The values
    accepted are `choices`, or numbers from `low` to `high` (whole numbers if `integer`); `described` says
    them in words where the list alone would not. `default` is the CLI's value when the option is not given
    (None: the benchmark chooses by target) unless the option is `required`; `sweep` is what a campaign
    sweeps when the key is omitted (default: [default]); `campaign=False` makes a CLI-only option.
    `only_with=(key, value)`: the parameter means something only in points where `key` has `value`; other
    points go without it (so its sweep does not repeat them).
    """

    def __init__(self, name, help, *, choices=None, low=None, high=None, integer=False, described=None, unit=None,
                 convert=None, default=None, sweep=None, required=False, flag=None, campaign=True, only_with=None):
        self.name, self.help = name, help
        self.choices, self.low, self.high, self.integer = choices, low, high, integer
        self.described, self.unit, self.convert = described, unit, convert
        self.default, self.required, self.campaign = default, required, campaign
        self.only_with = only_with
        self.sweep = list(sweep) if sweep is not None else [default]
        self.flag = flag or f"--{name}"

    @property
    def accepted(self):
        """What is accepted, in words (every error message ends with it)."""
        if self.described:
            return self.described
        if self.choices is not None:
            return ", ".join(value_text(c) for c in self.choices)
        kind = "an integer" if self.integer else "a number"
        return f"{kind} from {value_text(self.low)} to {value_text(self.high)}" + (f" ({self.unit})" if self.unit else "")

    def applies(self, point):
        """Whether the parameter belongs in `point`."""
        return self.only_with is None or point.get(self.only_with[0]) == self.only_with[1]

    def check(self, value):
        """Whether a value (from a campaign file, or parsed from the CLI) is accepted."""
        if isinstance(value, bool):
            return False
        if self.choices is not None:
            return value in self.choices
        ok = isinstance(value, (int, float)) and self.low <= value <= self.high
        return ok and (not self.integer or float(value).is_integer())

    def parse(self, text):
        """The CLI option's text as a value; argparse.ArgumentTypeError names it and what is accepted."""
        try:
            if self.convert:
                value = self.convert(text)
            elif self.choices is not None:
                value = type(self.choices[0])(text)
            else:
                value = int(text, 0) if self.integer else float(text)
        except ValueError:
            value = None
        if value is None or not self.check(value):
            raise argparse.ArgumentTypeError(f"{self.flag.lstrip('-')} {text!r} is not accepted; accepted: "
                                             f"{self.accepted}")
        return value


# The sweep axes: the link and memory of a point and the target it runs on. `distance_m` is round trip, as
# in the MONet paper. Campaigns run on the sim and on QEMU; `host` (this machine) is for the CLI only.
AXES = (
    Param("distance_m", "round-trip fiber length, metres", low=0,
          high=round(link_model.max_distance_m(min(link_model.RATES_GBPS))), unit="round-trip metres",
          default=8.0, sweep=[8], flag="--distance"),
    Param("lanes", "bonded lanes", choices=link_model.LANES, default=8),
    Param("rate_gbps", "lane rate, Gb/s", choices=link_model.RATES_GBPS, default=15.0, flag="--rate"),
    Param("profile", "ours (MONet-open link) or monet (the paper's streamer + Aurora)", choices=tuple(PROFILES),
          default="ours"),
    Param("memory", "the memory card's memory: sram, ddr4 (LiteDRAM) or hmc (our HMC controller and device "
          "model)", choices=tuple(MEMORIES), default="sram"),
    Param("hmc_width", "the HMC link's width with memory hmc: full (16 lanes) or half (8)", choices=tuple(HMC_WIDTHS),
          default="full", flag="--hmc-width"),
    Param("placement", "where the memory is: remote (behind our link) or local (the compute card's own)",
          choices=PLACEMENTS, default="remote"),
    Param("hmc_native", "1: the HMC link itself runs over the fiber instead of ours (memory hmc, remote, "
          "half width over 8 lanes)", choices=(0, 1), default=0, flag="--hmc-native"),
    Param("target", "sim (the soft CPU and the link), qemu (Linux on the board-in-a-box) or board (Linux on the "
          "compute card, today its QEMU xlnx-zcu102 stand-in)", choices=("sim", "qemu", "board"), default="sim"),
)
AXIS = {a.name: a for a in AXES}
LINUX_TARGETS = ("qemu", "board")    # Linux guests: the same image and workloads
WHERE = {"qemu": "board-in-a-box", "board": "the board's QEMU xlnx-zcu102 stand-in", "host": "this machine"}


def where_ran(records):
    """Where a report section's points ran, in words (for its title)."""
    targets = {r["point"]["target"] for r in records}
    return " and ".join(WHERE[t] for t in (*LINUX_TARGETS, "host") if t in targets)
MEMORY_AXES = ("memory", "rate_gbps", "lanes", "placement", "hmc_width", "hmc_native")   # memory_refusal's
NODE_DESCRIBED = "0 (local memory), 1 (remote memory)"

# A campaign point's cost, in sim cycles, where its benchmark gives no estimate of its own (a point of about a
# second on the sim), and on a Linux guest (tens of seconds under QEMU, like a long sim point). Only the order in
# which workers take points uses it.
DEFAULT_SIM_CYCLES = 10**6
GUEST_CYCLES = 10**7

# A line of a benchmark's verdict: `passed` None for a note without one; `gates` makes a failure the
# command's exit status (data integrity does, a performance target does not unless the benchmark says so).
Verdict = namedtuple("Verdict", "text passed gates", defaults=(None, False))


def paper_check(what, ours, paper, comparable, conditions, tolerance=PAPER_TOLERANCE):
    """A measured figure against the paper's: within `tolerance` where the point is the paper's
    (`conditions` says what the paper measured), else a note."""
    if not comparable:
        return Verdict(f"{what}: {ours:.2f}; the paper's figure ({paper}) is for {conditions}")
    deviation = (ours - paper) / paper
    return Verdict(f"{what}: {ours:.2f} against the paper's {paper} ({deviation:+.1%}, within {tolerance:.0%})",
                   abs(deviation) <= tolerance)


class Benchmark:
    """A benchmark: subclass it in a module of this package and decorate the class with @register. Its name
    is the class's in lower case and its help the first line of the class's docstring."""

    name = None
    help = ""
    order = 100              # place in `monet bench --help`, campaign messages and the report
    targets = ("sim",)       # where it runs; the first is the CLI's default
    axes = LINK_AXES         # axes the CLI offers as options (a point always has every axis)
    axis_defaults = {}       # the CLI's defaults where they differ from the axes'
    params = ()              # Param, in the order of a point's keys
    errors = ()              # exceptions whose message is the whole story (the CLI prints it, exit 2)
    forward_port = False     # qemu: forward a loopback port to the guest's memcached
    sim_model = None         # the sim model its points need (monet.sim.BUILDS; None: any that holds the memory)
    smallest = {}            # campaign parameters of its smallest meaningful point (the runner matrix's)

    def refuse(self, values, targets):
        """(key, message) when a combination the parameters accept on their own cannot run on `targets`;
        `values` maps each parameter to the list of its values. None when everything can run."""
        return None

    def refuse_point(self, point):
        """Why one whole point (axes and parameters together) cannot run, or None: checked before anything is
        built or booted, by `monet bench` and for every point of a campaign."""
        return None

    def run(self, target, point, log=None):
        """Runs one point on an open target (None for `host`); returns the result as a JSON-able dict."""
        raise NotImplementedError

    def link(self, point):
        """The point's LinkSettings: the link axes this benchmark offers, the others at their defaults."""
        return LinkSettings.of({name: point[name] for name in self.axes if name in point})

    def cost(self, point):
        """A rough cost of one campaign point in sim cycles: workers take the costliest points first (longest
        processing time first), so that no worker is left alone with a long point at the end; only that order
        uses it. A Linux guest's point costs GUEST_CYCLES; a sim point what `sim_cycles` estimates."""
        return GUEST_CYCLES if point["target"] in LINUX_TARGETS else self.sim_cycles(point)

    def sim_cycles(self, point):
        """The sim cycles one point of this benchmark runs, console included; DEFAULT_SIM_CYCLES unless the
        benchmark knows better."""
        return DEFAULT_SIM_CYCLES

    def verdicts(self, point, result):
        """Verdicts of a result against data integrity and targets, as Verdict lines."""
        return []

    def show(self, point, result):
        """Prints a result as the CLI's tables (verdicts follow)."""

    def sections(self, records, out):
        """The report's sections of this benchmark's records: (title, header, rows, image or None, note)."""
        return []

    def paper_figures(self, records, profile):
        """{figure of monet.report.paper.PAPER: value} as `profile`'s points of this benchmark measured them
        (None where none did): the report's summary sets them beside the paper."""
        return {}

    @property
    def campaign_params(self):
        return [p for p in self.params if p.campaign]

    @property
    def param(self):
        """{name: Param} of the benchmark's parameters."""
        return {p.name: p for p in self.params}

    def full_point(self, point):
        """A campaign point with the CLI-only parameters at their defaults, as `run()` takes it."""
        return {**{p.name: p.default for p in self.params if not p.campaign}, **point}


REGISTRY = {}


def register(cls):
    cls.name = cls.__dict__.get("name") or cls.__name__.lower()
    cls.help = cls.__dict__.get("help") or cls.__doc__.strip().splitlines()[0].rstrip(".")
    REGISTRY[cls.name] = cls()
    return cls


PLUGINS_ENV = "MONET_BENCHMARKS"   # more benchmark files, separated as PATH is (os.pathsep)


def _load_file(path):
    """Registers the benchmarks of a file outside the package (named in PLUGINS_ENV)."""
    if not path.is_file() or path.suffix != ".py":
        sys.exit(f"monet: {PLUGINS_ENV}: {path} is not a Python file; accepted: paths of .py files defining "
                 f"benchmarks, separated by '{os.pathsep}'")
    spec = importlib.util.spec_from_file_location(f"monet_benchmark_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


def _load():
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    for path in filter(None, os.environ.get(PLUGINS_ENV, "").split(os.pathsep)):
        _load_file(Path(path))
    ordered = sorted(REGISTRY.values(), key=lambda b: (b.order, b.name))
    REGISTRY.clear()
    REGISTRY.update((b.name, b) for b in ordered)


_load()
