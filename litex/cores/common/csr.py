#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Small helpers shared by the cores: named status CSRs, codes in words, memories with an asynchronous read port."""

from migen import *

from litex.soc.interconnect.csr import CSRStatus


def add_status(module, name, signal, description):
    """A CSRStatus `name` (attribute `_name`) that shows `signal`."""
    csr = CSRStatus(len(signal), name=name, description=description)
    setattr(module, f"_{name}", csr)
    module.comb += csr.status.eq(signal)
    return csr


def codes_text(table):
    """A CSR's codes in words, for its description: "0 read, 1 write, 2 mixed" of {name: code}."""
    return ", ".join(f"{code} {name}" for name, code in table.items())


def async_memory(module, width, depth):
    """A memory with a write port and an asynchronous read port (read data in the same cycle)."""
    mem = Memory(width, depth)
    wr = mem.get_port(write_capable=True)
    rd = mem.get_port(async_read=True)
    module.specials += mem, wr, rd
    return wr, rd
