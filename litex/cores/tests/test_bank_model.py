#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""WordBankModel against LiteDRAM's BankModel: the same commands, the same read data in every cycle."""

import random

import pytest
from litedram.phy.model import BankModel
from migen import Module, Signal

from monet.cores.memcard.bank_model import WordBankModel
from monet.cores.tests.verilog_sim import run_simulation

# A small bank: 64-bit words (8 bytes), 8 rows of 16 columns, bursts of 4 on 2 phases (16 words). Products
# and powers of the geometry differ (4 x 2 against 4 ** 2), as 8 bytes a word and 64 // 7 do.
GEOMETRY = dict(data_width=64, nrows=8, ncols=16, burst_length=4, nphases=2, init=None)
MASK_ALL = 2**(GEOMETRY["data_width"] // 8) - 1
GRANULARITIES = (8, 0)
INPUTS = ("activate", "activate_row", "precharge", "write", "write_col", "write_data", "write_mask", "read",
          "read_col")


class Banks(Module):
    """For each write granularity, LiteDRAM's bank and ours on the same inputs (one Verilator build)."""
    def __init__(self):
        self.pairs = {}
        for granularity in GRANULARITIES:
            theirs = BankModel(we_granularity=granularity, **GEOMETRY)
            ours = WordBankModel(we_granularity=granularity, **GEOMETRY)
            setattr(self.submodules, f"theirs{granularity}", theirs)
            setattr(self.submodules, f"ours{granularity}", ours)
            inputs = {name: Signal.like(getattr(ours, name), name=f"{name}{granularity}") for name in INPUTS}
            for name, signal in inputs.items():
                self.comb += [getattr(theirs, name).eq(signal), getattr(ours, name).eq(signal)]
            self.pairs[granularity] = (inputs, theirs, ours)


DUTS = Banks()


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_the_ports_are_litedrams(granularity):
    _, theirs, ours = DUTS.pairs[granularity]
    for name in INPUTS + ("read_data",):
        assert len(getattr(ours, name)) == len(getattr(theirs, name)), name


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_every_read_returns_what_litedrams_bank_returns(granularity):
    """Random activations, precharges, masked writes and reads: both banks' read data agree in every cycle,
    and the run reads back written data through partial masks (not only zeros)."""
    inputs, theirs, ours = DUTS.pairs[granularity]
    rng = random.Random(granularity)
    seen = {"cycles": 0, "differ": [], "data": 0, "partial": 0}

    def run():
        for cycle in range(600):
            activate = rng.random() < 0.15
            mask = rng.choice([0, MASK_ALL, rng.getrandbits(len(inputs["write_mask"]))])
            settings = {
                "activate": activate, "activate_row": rng.randrange(GEOMETRY["nrows"]),
                "precharge": not activate and rng.random() < 0.05,
                "write": rng.random() < 0.5, "write_col": rng.randrange(GEOMETRY["ncols"]),
                "write_data": rng.getrandbits(GEOMETRY["data_width"]), "write_mask": mask,
                "read": rng.random() < 0.6, "read_col": rng.randrange(GEOMETRY["ncols"]),
            }
            for name, value in settings.items():
                yield inputs[name].eq(int(value))
            seen["partial"] += settings["write"] and mask not in (0, MASK_ALL)
            yield
            a, b = (yield theirs.read_data), (yield ours.read_data)
            seen["cycles"] += 1
            seen["data"] += a != 0
            if a != b:
                seen["differ"].append((cycle, hex(a), hex(b)))

    run_simulation(DUTS, run())
    assert seen["cycles"] == 600
    assert not seen["differ"], f"read data differs (cycle, LiteDRAM's, ours): {seen['differ'][:5]}"
    assert seen["data"] > 100 and seen["partial"] > 50
