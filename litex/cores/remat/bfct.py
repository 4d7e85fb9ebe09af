#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Bridge Function Control Table: CPU window sections -> target and remote base, with permissions."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import *

from monet.cores.common.fields import FieldTable
from monet.cores.remat.codes import FAULT_UNMAPPED, FAULT_NO_READ, FAULT_NO_WRITE, FAULT_TARGET

# A section's entry, as the table stores it and as the `entry` and `readback` CSRs carry it.
ENTRY = FieldTable("BFCT entry", 32, [
    ("enable",   1,  "the section is mapped"),
    ("read",     1,  "reads allowed"),
    ("write",    1,  "writes allowed"),
    ("target",   2,  "0: remote port 0, 1: local memory, 2: remote port 1 (a target the build lacks faults with "
                     "kind 4)"),
    ("reserved", 3,  "ignored"),
    ("base",     24, "remote base, in sections"),
])


def entry_fields():
    """ENTRY as CSR fields (the generated csr.h gives the firmware their offsets and sizes)."""
    return [CSRField(f.name, size=f.width, offset=f.offset, description=f.description)
            for f in ENTRY.fields.values() if f.name != "reserved"]


class BFCT(LiteXModule):
    """A table of `n_sections` sections of 2**`section_bits` bytes each (combinational lookup, 0 cycles).

    Entry (ENTRY): enable, read, write, target, remote base (in sections). Programmed at run time over
    CSRs: write `index`, then `entry`, then `commit`. Targets 0 to `n_targets` - 1 exist; `target` gives
    the access's.
    """
    def __init__(self, n_sections, section_bits, base_bits=ENTRY["base"].width, n_targets=1):
        self.n_sections   = n_sections
        self.section_bits = section_bits
        # Lookup (combinational).
        self.addr     = Signal(32)          # byte address inside the window.
        self.we       = Signal()
        self.fault    = Signal(3)           # FAULT_* for this access.
        self.raddr    = Signal(section_bits + base_bits)  # remote byte address.
        self.target   = Signal(ENTRY["target"].width)
        # Programming.
        self.wr_index = Signal(max=n_sections)
        self.wr_entry = Signal(ENTRY.width)
        self.wr_stb   = Signal()

        # # #

        entries = Array(Signal(ENTRY.width, name=f"bfct{i}") for i in range(n_sections))
        self.entries = entries
        self.sync += If(self.wr_stb, entries[self.wr_index].eq(self.wr_entry))

        index_bits = log2_int(n_sections)
        section    = Signal(index_bits)
        outside    = Signal()
        entry      = Signal(ENTRY.width)
        self.comb += [
            section.eq(self.addr[section_bits:section_bits + index_bits]),
            # A window of the whole 32-bit space (16 x 256 MB on a board) has no address outside it.
            outside.eq(self.addr[section_bits + index_bits:] != 0 if section_bits + index_bits < 32 else 0),
            entry.eq(entries[section]),
            self.raddr.eq(Cat(self.addr[:section_bits], ENTRY.get(entry, "base")[:base_bits])),
            self.target.eq(ENTRY.get(entry, "target")),
            If(outside | ~ENTRY.get(entry, "enable"),
                self.fault.eq(FAULT_UNMAPPED)
            ).Elif(~self.we & ~ENTRY.get(entry, "read"),
                self.fault.eq(FAULT_NO_READ)
            ).Elif(self.we & ~ENTRY.get(entry, "write"),
                self.fault.eq(FAULT_NO_WRITE)
            ).Elif(self.target >= n_targets,
                self.fault.eq(FAULT_TARGET)
            ),
        ]

    def add_control(self):
        self._index    = CSRStorage(8,  description="Section to program or read back.")
        self._entry    = CSRStorage(fields=entry_fields(), description="Entry to store at `index` on `commit`.")
        self._commit   = CSR()  # write: store `entry` at `index`.
        self._readback = CSRStatus(fields=entry_fields(), description="Entry at `index`.")
        self.comb += [
            self.wr_index.eq(self._index.storage),
            self.wr_entry.eq(self._entry.storage),
            self.wr_stb.eq(self._commit.re),
        ]
        shown = Signal(ENTRY.width)
        self.comb += shown.eq(self.entries[self._index.storage[:log2_int(self.n_sections)]])
        self.comb += [getattr(self._readback.fields, f.name).eq(ENTRY.get(shown, f.name)) for f in entry_fields()]
