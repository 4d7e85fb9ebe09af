"""The CPU's Wishbone adapter (litex/cores/remat/port.py, WishboneRematPort) on ReMAT, against the
responder standing in for the link and memory card, on the generated Verilog: a 32-bit access becomes one
line transaction with the word's byte enables, reads return the addressed word, faults end with err and
ack together and all ones, addresses wrap at the window."""

from migen import *

from monet.cores.common.layouts import *
from monet.cores.remat.core import ReMAT
from monet.cores.remat.port import WishboneRematPort
from monet.cores.tests.verilog_sim import run_simulation

from .link_responder import link_responder, program_bfct, wishbone

SECTION_BITS = 12
WINDOW = 8 << SECTION_BITS      # 8 sections of 4 KiB: 32 KiB


class Top(Module):
    def __init__(self):
        self.submodules.remat = ReMAT(n_ports=2, n_sections=8, section_bits=SECTION_BITS, tags=16)
        self.submodules.adapter = WishboneRematPort(self.remat.ports[0], window_size=WINDOW)


def run(accesses, delay=6):
    """(results of `wishbone`, link requests as (type, line, mask), their data by index, what else was seen:
    cycles with err but no ack, and ReMAT's fault_addr at the end)."""
    dut = Top()
    results, on_link, data, seen = [], [], {}, {"err_without_ack": 0}

    def watch():
        src, bus = dut.remat.source, dut.adapter.bus
        for _ in range(60 * len(accesses) + 100):
            if (yield src.valid) and (yield src.ready):
                on_link.append(((yield src.type), (yield src.laddr), (yield src.mask)))
                data[len(on_link) - 1] = yield src.data
            # Wishbone: a slave raises err only to end an access, in the cycle it acks it.
            seen["err_without_ack"] += (yield bus.err) and not (yield bus.ack)
            yield
        seen["fault_addr"] = yield dut.remat.fault_addr

    # Section s is remote section s + 8; section 5 is disabled.
    entries = {s: 0b111 | (s + 8) << 8 for s in (0, 1, 2)}
    run_simulation(dut, [program_bfct(dut.remat.bfct, entries), link_responder(dut.remat, 60 * len(accesses) + 100,
                                                                               delay), watch(),
                         wishbone(dut.adapter.bus, accesses, results)])
    return results, on_link, data, seen


def line_of(addr):
    """The remote line address of a window byte address (section s -> s + 8)."""
    return ((addr >> SECTION_BITS) + 8 << SECTION_BITS | addr & (1 << SECTION_BITS) - 1) >> 6


def test_words_are_written_with_their_byte_enables_and_read_back():
    line = 2 * 64 + (1 << SECTION_BITS)        # line 2 of section 1
    accesses = [(line + 4 * 5, 1, 0x11223344, 0b1111),      # word 5, every byte
                (line + 4 * 15, 1, 0xAABBCCDD, 0b0101),     # word 15, bytes 0 and 2
                (line + 4 * 5, 0, 0, 0b1111),
                (line + 4 * 15, 0, 0, 0b1111),
                (line, 0, 0, 0b1111),                       # word 0, never written: the responder's
                (line + WINDOW + 4 * 5, 0, 0, 0b1111)]      # default; above the window: wraps into it
    results, on_link, data, _ = run(accesses)
    assert [(t, laddr) for t, laddr, _ in on_link] == [(T_WR_REQ, line_of(line))] * 2 + [(T_RD_REQ, line_of(line))] * 4
    # One line transaction an access, with the word's 4 byte enables at its place in the line.
    assert [mask for _, _, mask in on_link[:2]] == [0b1111 << 20, 0b0101 << 60]
    assert data[0] >> (32 * 5) & 0xFFFFFFFF == 0x11223344 and data[1] >> (32 * 15) & 0xFFFFFFFF == 0xAABBCCDD
    # The responder's line starts as its own line address, in word 0; word 15 keeps zeros where not written.
    assert [(d, err) for d, err, _ in results] == [(0, 0), (0, 0), (0x11223344, 0), (0x00BB00DD, 0),
                                                   (line_of(line), 0), (0x11223344, 0)]


def test_a_fault_ends_with_err_and_ack_together_and_all_ones():
    accesses = [(5 << SECTION_BITS, 0, 0, 0b1111), (5 << SECTION_BITS | 0x124, 1, 0x1234, 0b1111),
                (64, 0, 0, 0b1111)]
    results, on_link, _, seen = run(accesses)
    assert [(d, err) for d, err, _ in results] == [(0xFFFFFFFF, 1), (0xFFFFFFFF, 1), (line_of(64), 0)]
    assert seen == {"err_without_ack": 0, "fault_addr": 5 << SECTION_BITS | 0x124}   # the word's byte address
    assert [(t, laddr) for t, laddr, _ in on_link] == [(T_RD_REQ, line_of(64))]    # faults never reach the link


def test_an_access_takes_a_fixed_number_of_cycles_around_the_link():
    # stb to ack, exact (the sim is deterministic): a fault, answered by ReMAT itself through its registered
    # answer stage, 4 cycles; a remote access 5 cycles plus the responder's delay, whatever that delay is.
    accesses = [(64, 0, 0, 0b1111), (5 << SECTION_BITS, 0, 0, 0b1111)]
    for delay in (6, 20):
        results, _, _, _ = run(accesses, delay=delay)
        assert [cycles for _, _, cycles in results] == [5 + delay, 4]
