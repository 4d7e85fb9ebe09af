"""The repository documents itself: doc/wire-format.md, doc/registers.md and doc/benchmarks.md are what
monet.docgen writes from the field tables, the build's csr.json and the benchmark registry, the field tables
put every field where the wire format says, the layout table (doc/layout.md) matches the tree, and nothing
points to files outside the repository."""

import re
import subprocess
from pathlib import Path

from monet import docgen
from monet.cores.common.wire import HEADER, MASK, TRAILER

REPO = Path(__file__).resolve().parents[2]


def test_the_wire_format_document_is_generated_from_the_field_tables():
    assert (REPO / "doc" / "wire-format.md").read_text() == docgen.wire_format(), \
        "doc/wire-format.md is stale: run `.venv/bin/python -m monet.docgen`"


def test_the_register_document_is_generated_from_the_build(sim_build):
    assert (REPO / "doc" / "registers.md").read_text() == docgen.registers(sim_build.dir), \
        "doc/registers.md is stale: run `.venv/bin/python -m monet.docgen`"


def test_the_command_line_reference_is_generated_from_the_registry():
    reference = docgen.benchmark_reference()
    assert (REPO / "doc" / "benchmarks.md").read_text() == reference, \
        "doc/benchmarks.md is stale: run `.venv/bin/python -m monet.docgen`"
    from monet.benchmarks import REGISTRY
    for bench in REGISTRY.values():                 # every benchmark and each of its options is there
        section = reference.split(f"\n## {bench.name}\n")[1].split("\n## ")[0]
        assert all(f"| {p.name} | {p.flag} |" in section for p in bench.params), bench.name


def test_the_field_tables_put_each_field_at_its_bits():
    # Written out bit by bit, independently of the tables: a header of a masked write and a trailer.
    assert HEADER.word(type=2, tag=0x1A5, laddr=0x9_8765_4321, has_mask=1, pair=0, tag2=0) == \
        2 | 0x1A5 << 4 | 0x9_8765_4321 << 13 | 1 << 49
    assert HEADER.word(pair=1, tag2=0x1FF) == 1 << 50 | 0x1FF << 51
    assert TRAILER.word(type=0xF, seq=0x7FF, ack=0x555, nak=1, credits=0x1F, crc=0xDEADBEEF) == \
        0xF | 0x7FF << 4 | 0x555 << 15 | 1 << 26 | 0x1F << 27 | 0xDEADBEEF << 32
    assert TRAILER["crc"].offset == 32 and MASK["enables"].width == 64
    assert [HEADER.value(HEADER.word(laddr=5, tag=9), k) for k in ("laddr", "tag", "type")] == [5, 9, 0]


BUILT = ("csr.h", "soc.h")   # files a build writes, which the layout names too


def test_the_readme_layout_table_matches_the_tree():
    readme = (REPO / "doc" / "layout.md").read_text()
    table = readme[readme.index("| folder |"):]
    table = table[:(table + "\n\n").index("\n\n")]
    named = [folder for row in table.splitlines()[2:] for folder in re.findall(r"`([^`]+/)`", row.split("|")[1])]
    missing = [folder for folder in named if not (REPO / folder).is_dir()]
    assert not missing, f"the layout table names folders the tree lacks: {missing}"
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    # Every top-level folder, and every core's folder, has a row (a row may cover the folders below it).
    folders = {path.split("/")[0] + "/" for path in tracked if "/" in path}
    folders |= {"/".join(path.split("/")[:3]) + "/" for path in tracked if path.startswith("litex/cores/")
                and path.count("/") >= 3}
    unnamed = sorted(f for f in folders if not any(n.startswith(f) or f.startswith(n) for n in named))
    # ... and every folder of the host's package, split by concern, a row of its own.
    unnamed += sorted({"/".join(path.split("/")[:3]) + "/" for path in tracked if path.startswith("host/monet/")
                       and path.count("/") >= 3} - set(named))
    assert not unnamed, f"folders without a row in doc/layout.md's table: {unnamed}"
    # A file a row names is in one of the row's folders (or the folder above, for `sim/build.py`), or at the root.
    gone = []
    for row in table.splitlines()[2:]:
        first, holds = row.split("|")[1:3]
        bases = [REPO] + [base for folder in re.findall(r"`([^`]+/)`", first)
                          for base in (REPO / folder, (REPO / folder).parent)]
        gone += [name for name in re.findall(r"`([\w./-]+\.(?:py|c|h|md|toml|sh))`", holds)
                 if name not in BUILT and not any((base / name).is_file() for base in bases)]
    assert not gone, f"doc/layout.md names files the tree lacks: {gone}"


# A relative path that climbs out of its file's folder, and a document named the way README.md is.
CLIMBING_PATH = re.compile(r"(?<![.\w])(?:\.\./)+[\w.-][\w./-]*")
DOCUMENT_NAME = re.compile(r"\b[A-Z][A-Z_-]+\.md\b")


def references_outside(name, text, tracked):
    """What a tracked file refers to that a clone of the repository does not have: a relative path that
    leaves the repository from the file's folder, or a document that is not in it."""
    folder = (REPO / name).parent
    outside = [m for m in CLIMBING_PATH.findall(text) if REPO not in (folder / m).resolve().parents]
    documents = {Path(t).name for t in tracked}
    return outside + [d for d in DOCUMENT_NAME.findall(text) if d not in documents]


def test_nothing_points_outside_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    found = {}
    for name in tracked:
        path = REPO / name
        if name == "host/tests/test_docs.py":     # this file's examples of what the checker refuses
            continue
        if path.suffix in (".py", ".md", ".c", ".h", ".yaml", ".toml", ".mk", "") and path.is_file():
            refs = references_outside(name, path.read_text(errors="replace"), tracked)
            if refs:
                found[name] = refs
    assert not found, found


def test_the_checker_sees_a_path_that_leaves_and_a_missing_document():
    tracked = ["README.md", "doc/architecture.md"]
    text = "see ../notes/plan.md, doc/architecture.md, NOTES.md and README.md; ../lib from firmware/app is inside"
    assert references_outside("README.md", text, tracked) == ["../notes/plan.md", "../lib", "NOTES.md"]
    assert references_outside("firmware/app/Makefile", "$(SRC_DIR)/../lib", tracked) == []
    assert references_outside("README.md", "make BR2_EXTERNAL=.../linux", tracked) == []   # an ellipsis
