#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The sim's DDR4 banks: LiteDRAM's PHY model with banks that write a whole word at once.

LiteDRAM's `BankModel` writes its memory through byte enables: a bank of the memory card's DDR4 (a 512-bit
word a cycle) is 64 byte-wide writes, each under its own enable, and the 16 banks are 1,024 conditional
writes that a Verilator model works through in every cycle (the DDR4 model ran half the cycles a second of
the SRAM one under traffic). `WordBankModel` has the same ports and behaviour with one write enable: the
bytes a write masks are taken from the word it replaces (a second asynchronous read of the same memory),
so a cycle without a write costs one test. Latency: the same as LiteDRAM's (none of its own: a read's
data is the memory's asynchronous read, a write lands at the clock edge).

`sdram_phy_model(...)` builds LiteDRAM's `SDRAMPHYModel` with these banks; LiteDRAM makes its banks inside
the model's constructor, from its module's `BankModel`, which is swapped for the construction alone.
"""

from contextlib import contextmanager

from migen import *

from litedram.phy import model as litedram_model


class WordBankModel(Module):
    """One bank: LiteDRAM's `BankModel` (its signals and arguments) with a word-wide write."""
    def __init__(self, data_width, nrows, ncols, burst_length, nphases, we_granularity, init):
        self.activate     = Signal()
        self.activate_row = Signal(max=nrows)
        self.precharge    = Signal()

        self.write        = Signal()
        self.write_col    = Signal(max=ncols)
        self.write_data   = Signal(data_width)
        self.write_mask   = Signal(data_width//8)   # a set bit keeps its byte (as DFI's wrdata_mask)

        self.read         = Signal()
        self.read_col     = Signal(max=ncols)
        self.read_data    = Signal(data_width)

        # # #

        active = Signal()
        row    = Signal(max=nrows)
        self.sync += If(self.precharge, active.eq(0)).Elif(self.activate, active.eq(1), row.eq(self.activate_row))

        words = nrows*ncols//(burst_length*nphases)
        mem = Memory(data_width, words, init=init)
        write_port = mem.get_port(write_capable=True)
        kept_port  = mem.get_port(async_read=True)   # the word a write replaces, for the bytes it masks
        read_port  = mem.get_port(async_read=True)
        self.specials += mem, write_port, kept_port, read_port

        burst_bits = log2_int(burst_length*nphases)
        written = Cat(*[Replicate(~self.write_mask[i], 8) for i in range(data_width//8)]) if we_granularity else \
            Replicate(1, data_width)
        self.comb += [
            write_port.adr.eq((row*ncols | self.write_col)[burst_bits:]),
            kept_port.adr.eq(write_port.adr),
            write_port.dat_w.eq(self.write_data & written | kept_port.dat_r & ~written),
            write_port.we.eq(active & self.write),
            read_port.adr.eq((row*ncols | self.read_col)[burst_bits:]),
            If(active & self.read, self.read_data.eq(read_port.dat_r)),
        ]


@contextmanager
def _word_banks():
    library_banks = litedram_model.BankModel
    litedram_model.BankModel = WordBankModel
    try:
        yield
    finally:
        litedram_model.BankModel = library_banks


def sdram_phy_model(*args, **kwargs):
    """LiteDRAM's `SDRAMPHYModel(*args, **kwargs)` with `WordBankModel` banks."""
    with _word_banks():
        return litedram_model.SDRAMPHYModel(*args, **kwargs)
