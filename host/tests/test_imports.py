"""The import graph of the host (host/monet) and the gateware (litex/cores, litex/soc): no circle, and no
gateware module that imports host code (issue 46). Every import counts, at the top of a module or inside a
function. Tests are left out. And the host's command line and report take the hardware's facts from
monet.soc.facts without loading Migen."""

import ast
import json
import subprocess
import sys

from monet.repo import REPO

PACKAGES = {"monet": REPO / "host" / "monet", "monet.cores": REPO / "litex" / "cores",
            "monet.soc": REPO / "litex" / "soc"}
GATEWARE = ("monet.cores", "monet.soc")


def modules():
    """{dotted module name: its file} for every module of the three packages, tests aside."""
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            if "tests" in path.relative_to(folder).parts:
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1]) if parts[-1] == "__init__" else (package, *parts))
            found.setdefault(name, path)     # monet.cores is its own folder, not monet/cores
    return found


def imports_of(name, path, known):
    """The project modules that module `name` imports, anywhere in its text."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:     # `from package import module` imports the module
                targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {t for t in targets if t in known and t != name}


def graph():
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def circles(edges):
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read():
    edges = graph()
    assert {"monet.sim.link_setup", "monet.report.stats"} <= edges["monet.benchmarks.bandwidth"]
    assert "monet.cores.common.layouts" in edges["monet.cores.link.packing"]
    assert "monet.campaign.results" in edges["monet.model.runner"]


def test_every_package_is_in_the_distribution():
    """pyproject.toml names every package of the three folders (a wheel would leave out one it does not)."""
    import tomllib
    named = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {name for name, path in modules().items() if path.name == "__init__.py"}
    assert folders == named


def test_no_module_imports_itself_back():
    assert circles(graph()) == []


def test_circles_are_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_gateware_imports_no_host_code():
    wrong = {(source, target) for source, targets in graph().items() if source.startswith(GATEWARE)
             for target in targets if not target.startswith(GATEWARE)}
    assert wrong == set(), f"gateware importing host code: {sorted(wrong)}"


# Every subcommand's --help is built (the parser is the whole command line), then the report's module.
NO_MIGEN = """
import contextlib, io, json, sys
from monet import cli
from monet.report import document as report
for words in (["--help"], ["board", "build", "--help"], ["campaign", "run", "--help"], ["bench", "latency", "--help"]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        cli.main(words)
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in ("migen", "litex", "litedram"))))
"""


def test_the_command_line_and_the_report_load_no_migen():
    run = subprocess.run([sys.executable, "-c", NO_MIGEN], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(run.stdout.splitlines()[-1]) == []
