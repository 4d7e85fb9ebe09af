#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Bridge Function Control Table: CPU window sections -> target and remote base, with permissions."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import *

# Fault kinds latched with the faulting address.
FAULT_NONE      = 0
FAULT_UNMAPPED  = 1  # outside the table, or the section is disabled.
FAULT_NO_READ   = 2
FAULT_NO_WRITE  = 3
FAULT_TARGET    = 4  # the section names a target this build does not have.
FAULT_REMOTE    = 5  # the memory card answered with an error.
FAULT_TIMEOUT   = 6  # no answer within ReMAT's request timeout (the link is down): the outcome is unknown.

TARGET_REMOTE0 = 0


class BFCT(LiteXModule):
    """A table of `n_sections` sections of 2**`section_bits` bytes each (combinational lookup, 0 cycles).

    Entry: enable, read, write, target (2 bits), remote base (in sections). Programmed at run time over
    CSRs: write `index`, then `entry`, then `commit`. `entry` layout: [0] enable [1] read [2] write
    [4:3] target [31:8] remote base section.
    """
    def __init__(self, n_sections, section_bits, base_bits=24):
        self.n_sections   = n_sections
        self.section_bits = section_bits
        # Lookup (combinational).
        self.addr     = Signal(32)          # byte address inside the window.
        self.we       = Signal()
        self.fault    = Signal(3)           # FAULT_* for this access.
        self.raddr    = Signal(section_bits + base_bits)  # remote byte address.
        # Programming.
        self.wr_index = Signal(max=n_sections)
        self.wr_entry = Signal(32)
        self.wr_stb   = Signal()

        # # #

        entries = Array(Signal(32, name=f"bfct{i}") for i in range(n_sections))
        self.entries = entries
        self.sync += If(self.wr_stb, entries[self.wr_index].eq(self.wr_entry))

        index_bits = log2_int(n_sections)
        section    = Signal(index_bits)
        outside    = Signal()
        entry      = Signal(32)
        self.comb += [
            section.eq(self.addr[section_bits:section_bits + index_bits]),
            outside.eq(self.addr[section_bits + index_bits:] != 0),
            entry.eq(entries[section]),
            self.raddr.eq(Cat(self.addr[:section_bits], entry[8:8 + base_bits])),
            If(outside | ~entry[0],
                self.fault.eq(FAULT_UNMAPPED)
            ).Elif(~self.we & ~entry[1],
                self.fault.eq(FAULT_NO_READ)
            ).Elif(self.we & ~entry[2],
                self.fault.eq(FAULT_NO_WRITE)
            ).Elif(entry[3:5] != TARGET_REMOTE0,
                self.fault.eq(FAULT_TARGET)
            ),
        ]

    def add_control(self):
        self._index    = CSRStorage(8,  description="Section to program or read back.")
        self._entry    = CSRStorage(32, description="[0] enable [1] read [2] write [4:3] target [31:8] remote base section.")
        self._commit   = CSR()  # write: store `entry` at `index`.
        self._readback = CSRStatus(32, description="Entry at `index`.")
        self.comb += [
            self.wr_index.eq(self._index.storage),
            self.wr_entry.eq(self._entry.storage),
            self.wr_stb.eq(self._commit.re),
            self._readback.status.eq(self.entries[self._index.storage[:log2_int(self.n_sections)]]),
        ]
