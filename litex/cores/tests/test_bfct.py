"""BFCT (litex/cores/remat/bfct.py): translation, permissions and faults."""

import pytest
from migen import *

from monet.cores.remat.bfct import *
from monet.cores.remat.codes import *
from monet.cores.tests.verilog_sim import run_simulation

from .csr_bank import ControlBank, csr_read, csr_write
from .link_responder import program_bfct


def lookup(dut, entries, accesses):
    results = []

    def gen():
        yield from program_bfct(dut, entries)
        yield
        for addr, we in accesses:
            yield dut.addr.eq(addr)
            yield dut.we.eq(we)
            yield
            results.append(((yield dut.fault), (yield dut.raddr)))
    run_simulation(dut, gen())
    return results


@pytest.mark.parametrize("n_sections,section_bits", [(8, 12), (16, 20)])
def test_translation_and_faults(n_sections, section_bits):
    dut = BFCT(n_sections=n_sections, section_bits=section_bits)
    size = 1 << section_bits
    entries = {
        0: 0b111 | (5 << 8),            # rw, remote base section 5
        1: 0b011,                       # read only
        2: 0b101,                       # write only
        3: 0b111 | (1 << 3),            # a target this build does not have
        5: 0b111 | (2 << 3),
        6: 0b111 | (0b111 << 5) | (6 << 8),     # reserved bits [7:5] set: ignored
    }
    accesses = [
        (0x10, 0), (size - 4, 1),       # section 0: translated to section 5
        (size + 8, 0), (size + 8, 1),   # read ok, write denied
        (2 * size, 0), (2 * size, 1),   # read denied, write ok
        (3 * size, 0),                  # bad target
        (4 * size, 0),                  # disabled
        (n_sections * size, 0),         # outside the table
        (n_sections * size + 4 * size, 0),  # outside the table, on a disabled section's index
        (n_sections * size + 4 * size, 1),
        (1 << 31 | 0x40, 0),            # bit 31: far outside, though its low bits hit section 0
        (5 * size, 0),                  # target 2 (bit 4 of the field): this build has only target 0
        (6 * size + 0x20, 1),           # reserved bits set: mapped as if clear
    ]
    got = lookup(dut, entries, accesses)
    faults = [f for f, _ in got]
    # The codes firmware and the CLI report as fault_kind: 0 none, 1 unmapped, 2 no read, 3 no write,
    # 4 unknown target (README, "The gateware in one page").
    assert faults == [0, 0, 0, 3, 2, 0, 4, 1, 1, 1, 1, 1, 4, 0]
    assert got[0][1] == 5 * size + 0x10
    assert got[1][1] == 5 * size + size - 4
    assert got[-1][1] == 6 * size + 0x20


# The control block's registers as the firmware's csr.h lays them out (bfct_index, _entry, _commit,
# _readback: one 32-bit word each, in this order).
INDEX, ENTRY, COMMIT, READBACK = 0, 1, 2, 3


def test_the_cpu_programs_the_largest_table_through_its_registers():
    # 256 sections: the largest table an 8-bit index reaches. Section 200 needs the index's bit 7, and a
    # remote base with bit 31 set needs the entry's full 32 bits.
    dut = BFCT(n_sections=256, section_bits=12)
    top = ControlBank(dut)
    entry = (0xFF_FFFF << 8) | 0b111
    seen = {}

    def cpu():
        yield from csr_write(top, INDEX, 200)
        yield from csr_write(top, ENTRY, entry)
        yield from csr_write(top, COMMIT, 1)
        seen["readback"] = yield from csr_read(top, READBACK)
        yield dut.addr.eq((200 << 12) | 0x123)
        yield
        seen["lookup"] = ((yield dut.fault), (yield dut.raddr))
        yield from csr_write(top, INDEX, 72)                    # 200 without bit 7: never programmed
        seen["other"] = yield from csr_read(top, READBACK)

    run_simulation(top, cpu())
    assert seen == {"readback": entry, "lookup": (FAULT_NONE, (0xFF_FFFF << 12) | 0x123), "other": 0}


def test_fault_codes_are_the_documented_ones():
    # README ("The gateware in one page") and the CLI's fault_kind: 1 unmapped or disabled, 2 no read,
    # 3 no write, 4 unknown target, 5 remote error, 6 timeout.
    assert [FAULT_UNMAPPED, FAULT_NO_READ, FAULT_NO_WRITE, FAULT_TARGET, FAULT_REMOTE, FAULT_TIMEOUT] == [1, 2, 3, 4, 5, 6]


def test_target_codes_are_the_documented_ones():
    # ENTRY's target field and firmware/lib/remat.h: 0 the remote port through the link, 1 local memory.
    assert (TARGET_REMOTE0, TARGET_LOCAL) == (0, 1)
