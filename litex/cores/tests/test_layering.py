"""The cores import one way: each core folder imports only `common/` and itself, and `common/` imports no
core, so ReMAT, link, PHY, memory card and PBB can be read, tested and replaced one at a time."""

import ast
from pathlib import Path

CORES = Path(__file__).resolve().parents[1]
FOLDERS = ("common", "remat", "link", "phy", "memcard", "pbb", "hmc")


def imported_cores(path):
    """The core folders a module imports from (`monet.cores.<folder>...`)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        out |= {n.split(".")[2] for n in names if n.startswith("monet.cores.") and n.count(".") >= 2}
    return out


def test_each_core_imports_only_common_and_itself():
    crossings = []
    for folder in FOLDERS:
        allowed = {"common"} | {folder}
        for path in sorted((CORES / folder).glob("*.py")):
            crossings += [f"{path.relative_to(CORES)} imports {other}/" for other in imported_cores(path) - allowed]
    assert not crossings, crossings


def test_the_checker_sees_a_crossing(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from monet.cores.link.lanes import MAX_LANES\nimport monet.cores.phy.channel\n")
    assert imported_cores(module) == {"link", "phy"}
