"""The repository documents itself: doc/wire-format.md and doc/registers.md are what monet.docgen writes from
the field tables and the build's csr.json, the field tables put every field where the wire format says, and
nothing points to design notes outside the repository."""

import subprocess
from pathlib import Path

from monet import docgen
from monet.cores.link.wire import HEADER, MASK, TRAILER

REPO = Path(__file__).resolve().parents[2]


def test_the_wire_format_document_is_generated_from_the_field_tables():
    assert (REPO / "doc" / "wire-format.md").read_text() == docgen.wire_format(), \
        "doc/wire-format.md is stale: run `.venv/bin/python -m monet.docgen`"


def test_the_register_document_is_generated_from_the_build(sim_build):
    assert (REPO / "doc" / "registers.md").read_text() == docgen.registers(sim_build.dir), \
        "doc/registers.md is stale: run `.venv/bin/python -m monet.docgen`"


def test_the_field_tables_put_each_field_at_its_bits():
    # Written out bit by bit, independently of the tables: a header of a masked write and a trailer.
    assert HEADER.word(type=2, tag=0xA5, laddr=0x9_8765_4321, has_mask=1, pair=0, tag2=0) == \
        2 | 0xA5 << 4 | 0x9_8765_4321 << 12 | 1 << 48
    assert HEADER.word(pair=1, tag2=0xFF) == 1 << 49 | 0xFF << 50
    assert TRAILER.word(type=0xF, seq=0x3FF, ack=0x155, nak=1, credits=0x7F, crc=0xDEADBEEF) == \
        0xF | 0x3FF << 4 | 0x155 << 14 | 1 << 24 | 0x7F << 25 | 0xDEADBEEF << 32
    assert TRAILER["crc"].offset == 32 and MASK["enables"].width == 64
    assert [HEADER.value(HEADER.word(laddr=5, tag=9), k) for k in ("laddr", "tag", "type")] == [5, 9, 0]


def test_nothing_points_outside_the_repository():
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    outside = []
    for name in files:
        path = REPO / name
        if path.suffix not in (".py", ".md", ".c", ".h", ".yaml", ".toml", "") or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for needle in ("../shared", "shared/reference", "DESIGN.md", "shared/seeds"):
            if needle in text and name != "host/tests/test_docs.py":
                outside.append(f"{name}: {needle}")
    assert not outside, outside
