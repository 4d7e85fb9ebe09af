"""The commands the README and doc/ show, as a user types them: from the repository root, with the venv's
tools on PATH (`source .venv/bin/activate`, as the README says), with default output folders.

Every command found in the documents is one of: a usage line (its subcommand and every option it names
exist; the usage block lists every option each subcommand has), a command checked here without running
(it parses, and what it names exists: campaign files, cores, cages, make targets, console commands), or a
command run as written (the cheap ones here; the sim's `monet ctl` session, `monet demo`, `monet sim build`
and `monet sim speed` on the sim). A documented command this file does not know fails the first test, so a
new one in the docs is checked from the day it is written.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from monet.benchmarks import REGISTRY
from monet.campaign.plan import Campaign
from monet.cli import bench_point, make_parser, main
from monet.repo import REPO
from process_tree import below, running

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "doc").glob("*.md"))]
PROGRAMS = ("monet", "make", "python", "pytest", "litex_cli", "monet-ctl", "dask")
PLACEHOLDER = re.compile(r"[\[\]|<>]|\.\.\.|\b[A-Z][A-Z_]+\b")
VENV_BIN = Path(sys.executable).parent


def _command(text):
    """A snippet as a command (prompt, `.venv/bin/` and a trailing comment taken off), or None."""
    text = re.sub(r"^\s*\w+\$\s+", "", text)                 # "head$   .venv/bin/dask scheduler ..."
    text = re.sub(r"\s+#\s.*$", "", text).strip()
    text = re.sub(r"^(cd \S+ && )", "", text)
    text = re.sub(r"^\.venv/bin/", "", text)
    return text if text.split(" ", 1)[0] in PROGRAMS else None


def documented_commands():
    """[(where, command)] of every fenced shell line and inline `command` in the documents; a usage line's
    continuation lines are joined to it."""
    found = []
    for doc in DOCUMENTS:
        fence = None
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            where = f"{doc.name}:{number}"
            if line.lstrip().startswith("```"):
                fence = None if fence is not None else line.strip()[3:]
                continue
            if fence is not None:
                if fence in ("", "sh", "shell") and line.startswith(" " * 8) and found and \
                        found[-1][1].startswith("monet ") and line.strip().startswith("["):
                    found[-1] = (found[-1][0], f"{found[-1][1]} {line.strip()}")
                elif fence in ("", "sh", "shell") and _command(line):
                    found.append((where, _command(line)))
                continue
            for span in re.findall(r"`([^`]+)`", line):
                if _command(span) and " " in span.strip():
                    found.append((where, _command(span)))
    return found


def _subparser(words):
    """The argparse parser of a `monet` command's subcommand and the words after it."""
    parser = make_parser()
    while True:
        sub = next((a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"), None)
        if sub is None or not words or words[0] not in sub.choices:
            return parser, words
        parser, words = sub.choices[words[0]], words[1:]


def _options(parser):
    return {o for a in parser._actions for o in a.option_strings}


# Commands checked without running them, and why; the check is in _check_without_running.
NOT_RUN_HERE = {
    "monet board build": "generates a card (about 30 s each): litex/soc/tests/test_board.py runs it from the "
                         "repository root, into the default folder and into a relative --out",
    "monet board estimate": "Yosys takes minutes a core: litex/soc/tests/test_estimate.py synthesises small cores",
    "monet campaign run": "litex/host tests run campaigns through every runner (test_runner_matrix.py)",
    "monet bench": "a benchmark point: test_runner_matrix.py runs every benchmark; the sim and QEMU tests each",
    "monet sim serve": "runs until Ctrl-C: test_the_documented_monet_ctl_session_runs runs it",
    "monet model": "models: host/tests/test_model_*.py run each",
    "monet report": "host/tests/test_report.py",
    "monet sim speed": "16 s of fixed workloads: host/tests/test_sim_speed.py runs them at small sizes",
    "python -m monet.docgen": "writes doc/ from a sim build: host/tests/test_docs.py compares it",
    "pytest": "host/tests/test_pytest_plugin.py collects the tiers; campaign points run through monet campaign",
    "make": "each target exists (make -n); `make test` is CI itself",
    "monet-ctl": "on a board's PS (uio:): each command is one of the console's",
    "litex_cli": "LiteX's own tool, in the venv",
    "dask": "Dask's own scheduler and worker, in the venv; a cluster of machines is not here",
}
RUN_HERE = ("monet --help", "monet link budget", "monet ctl", "monet demo", "monet sim build")
# The long ones at their smallest sizes (what each adds to the documented command).
SMALLEST = {"monet demo": ["--samples", "5"]}


def _kind(command):
    for prefix in (*RUN_HERE, *NOT_RUN_HERE):
        if command == prefix or command.startswith(prefix + " "):
            return prefix
    return None


def test_every_documented_command_is_known_and_checked():
    commands = documented_commands()
    assert len(commands) > 40, "the extraction found too few commands"
    unknown = [f"{where}: {c}" for where, c in commands if _kind(c) is None]
    assert unknown == [], "documented commands this test does not know: add them to RUN_HERE or NOT_RUN_HERE"
    for where, command in commands:
        _check_without_running(where, command)


def _console_commands():
    return set(re.findall(r"define_command\((\w+),", "".join(p.read_text() for p in
                                                               (REPO / "firmware" / "console").glob("*.c"))))


def _check_without_running(where, command):
    words = shlex.split(command.split("<")[0])
    usage = bool(PLACEHOLDER.search(command))
    if words == ["monet", "--help"]:
        return                                          # run: test_the_documented_help_runs
    if words[0] == "monet":
        parser, rest = _subparser(words[1:])
        assert parser.prog != "monet", f"{where}: {command}: no such subcommand"
        if parser.prog == "monet ctl":
            return
        accepted = _options(parser)
        for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", command):
            assert flag in accepted, f"{where}: {command}: {parser.prog} has no option {flag}"
        if usage or not rest:       # a usage line, or the command named in prose (`monet campaign run`)
            return
        args = make_parser().parse_args(words[1:])        # a concrete command parses as written
        if parser.prog == "monet board estimate":
            from monet.soc.estimate import card_cores, make_core
            makers = card_cores(args.card)
            for name in (args.cores or "").split(","):
                if name:
                    assert name.split(".")[0] in makers, f"{where}: {command}: the {args.card} card has no {name}"
                    make_core(name, makers)
        elif parser.prog == "monet board build":
            from monet.soc.board import board_module
            from monet.soc.cards import resolve_cage
            resolve_cage(args.lanes, args.rate, args.cage, board_module(args.board).CAGES)
        elif parser.prog == "monet campaign run":
            Campaign(REPO / args.file)
        elif parser.prog.startswith("monet bench "):
            point, refusal = bench_point(args)
            assert refusal is None, f"{where}: {command}: {refusal}"
    elif words[0] == "make":
        targets = [w for w in words[1:] if "=" not in w and not w.startswith("-")]
        if "-C" in words:
            folder = REPO / words[words.index("-C") + 1]
            assert (folder / "Makefile").exists(), f"{where}: {command}"
        elif any(w.startswith("BR2_EXTERNAL=") for w in words):
            assert (REPO / "linux" / "configs" / f"{targets[-1]}").exists(), f"{where}: {command}"
        else:
            for target in targets:
                r = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True)
                assert r.returncode == 0, f"{where}: {command}: {r.stderr}"
    elif words[0] == "python":
        import importlib.util
        assert words[1] == "-m" and importlib.util.find_spec(words[2]), f"{where}: {command}"
    elif words[0] == "monet-ctl":
        verb = next((w for w in words[1:] if not w.startswith("-") and "=" not in w and ":" not in w), None)
        assert verb is None or verb in _console_commands(), f"{where}: {command}: no console command {verb}"
    elif words[0] in ("litex_cli", "dask", "pytest"):
        assert (VENV_BIN / words[0]).exists(), f"{where}: {command}: not in the venv"


def test_the_usage_block_lists_every_option_of_every_command():
    """doc/cli.md's usage block: one entry per subcommand (each benchmark too), each with all its options."""
    readme = (REPO / "doc" / "cli.md").read_text()
    block = readme[readme.index("# The `monet` command"):]
    block = block[block.index("```") + 3:]
    block = block[:block.index("```")]
    lines = {}
    for where, command in documented_commands():
        if where.startswith("cli.md:") and command.startswith("monet ") and command in block.replace("\n", " ") \
                or (where.startswith("cli.md:") and command.split(" [")[0] in block and PLACEHOLDER.search(command)):
            parser, _ = _subparser(shlex.split(re.sub(r"[\[\]]", " ", command))[1:])
            lines.setdefault(parser.prog, []).append(command)
    parser = make_parser()
    expected = set()
    for action in parser._actions:
        if action.__class__.__name__ == "_SubParsersAction":
            for name, sub in action.choices.items():
                nested = [a for a in sub._actions if a.__class__.__name__ == "_SubParsersAction"]
                expected |= {f"monet {name} {n}" for n in nested[0].choices} if nested else {f"monet {name}"}
    expected -= {"monet model"} if "monet model" in lines else set()
    # The benchmarks' usage is doc/benchmarks.md, generated from the registry (test_docs.py checks it).
    reference = (REPO / "doc" / "benchmarks.md").read_text()
    expected -= {f"monet bench {name}" for name in REGISTRY if f"\n## {name}\n" in reference}
    assert sorted(expected - set(lines)) == [], "subcommands missing from the usage block"
    for prog, shown in lines.items():
        sub, _ = _subparser(prog.split()[1:])
        text = " ".join(shown)
        missing = sorted(o for o in _options(sub) if o.startswith("--") and o != "--help" and o not in text)
        assert missing == [], f"the usage of {prog} lacks {missing}"


def test_every_yaml_block_is_a_campaign_that_loads(tmp_path):
    """A campaign shown in the documents is accepted as written; one named like a shipped file is that file."""
    for doc in DOCUMENTS:
        for i, text in enumerate(re.findall(r"```yaml\n(.*?)```", doc.read_text(), re.S)):
            f = tmp_path / f"{doc.stem}-{i}.yaml"
            f.write_text(text)
            campaign = Campaign(f)
            shipped = REPO / "campaigns" / f"{campaign.name}.yaml"
            if shipped.exists():
                assert campaign.points() == Campaign(shipped).points(), f"{doc.name}: the block named " \
                    f"{campaign.name!r} is not campaigns/{shipped.name}"


@pytest.mark.parametrize("command", sorted({c for _, c in documented_commands() if c.startswith("monet link budget")
                                             and not PLACEHOLDER.search(c)} | {"monet link budget"}))
def test_the_documented_link_budgets_run(command, capsys):
    words = shlex.split(command)
    assert main(words[1:]) == 0
    assert "budget dB" in capsys.readouterr().out or "--json" in words


def test_the_documented_help_runs(capsys):
    assert _documented("monet --help")
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    help_text = capsys.readouterr().out
    assert done.value.code == 0 and all(f"\n    {name} " in help_text for name in ("bench", "campaign", "ctl"))


def _activated_env(**extra):
    """The environment `source .venv/bin/activate` makes: the venv's tools first on PATH."""
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(VENV_BIN.parent),
            **extra}


def _documented(prefix):
    return [c for _, c in documented_commands() if c == prefix or c.startswith(prefix + " ")]


@pytest.mark.sim
def test_the_documented_monet_ctl_session_runs(sim_build, tmp_path):
    """doc/console.md's monet-ctl block as written: `monet sim serve`, then each `monet ctl` line beside it (the
    served port is a free one, named through MONET_CTL_CSR and in place of the one a line names)."""
    from monet.loopback import free_port
    port = free_port()
    serve = subprocess.Popen(["monet", "sim", "serve", "--port", str(port)], cwd=REPO, env=_activated_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in serve.stdout:
            if "Ctrl-C ends the sim" in line:
                break
        else:
            pytest.fail(f"monet sim serve ended: {serve.wait()}")
        (tmp_path / "lines.txt").write_text("info\nretry\n")
        ran = 0
        for command in _documented("monet ctl"):
            if PLACEHOLDER.search(command.split("<")[0]) or command == "monet ctl":    # usage, or named in prose
                continue
            command = re.sub(r"tcp:127\.0\.0\.1:\d+", f"tcp:127.0.0.1:{port}", command)
            words, stdin = shlex.split(command.split("<")[0]), None
            if "<" in command:
                stdin = open(tmp_path / command.split("<")[1].strip())
            r = subprocess.run(words, cwd=REPO, env=_activated_env(MONET_CTL_CSR=f"tcp:127.0.0.1:{port}"),
                               stdin=stdin, capture_output=True, text=True, timeout=120)
            assert r.returncode == 0 and r.stdout.startswith("{") and '"error"' not in r.stdout, \
                f"{command}: {r.stdout}{r.stderr}"
            ran += 1
        assert ran >= 5
        started = below(serve.pid)
        assert started, "monet sim serve runs the sim and litex_server"
    finally:
        serve.terminate()
        serve.wait(timeout=60)
    assert not running(started, within=10), "monet sim serve, ended, left its sim or litex_server running"


@pytest.mark.sim
@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["monet sim build", "monet demo"])
def test_the_documented_sim_commands_run_as_written(sim_build, prefix):
    """Into their default folders (`build/demo`), from the repository root, the long ones at their smallest."""
    commands = [c for c in _documented(prefix) if not PLACEHOLDER.search(c)] or [prefix]
    for command in commands:
        r = subprocess.run(shlex.split(command) + SMALLEST.get(prefix, []), cwd=REPO, env=_activated_env(),
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"{command}: {r.stdout}{r.stderr}"
        assert "Traceback" not in r.stderr
    if prefix == "monet demo":
        assert "latency" in (REPO / "build" / "demo" / "latency.md").read_text()
