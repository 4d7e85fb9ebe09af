"""A core's control block on a CSR bus, mapped the way a SoC maps it, for tests that program a core as its
firmware does: one `CSRBank` on a 32-bit CSR bus, registers at consecutive word addresses in the order the
core declares them, a register wider than 32 bits taking several words (most significant first). A read
returns the register one cycle after the bank sees its address (the bank's registered read)."""

from migen import Module
from litex.soc.interconnect import csr_bus


class ControlBank(Module):
    """`core` with its control block (`core.<add_control>()` called here) behind one CSR bank on `bus`."""
    def __init__(self, core, add_control="add_control"):
        getattr(core, add_control)()
        self.submodules.core = core
        self.bus = csr_bus.Interface(data_width=32, address_width=14)
        self.submodules.bank = csr_bus.CSRBank(core.get_csrs(), bus=self.bus)


def word_addresses(core):
    """{CSR name: its first word address} of a core behind a ControlBank, in the order the bank maps them."""
    found, word = {}, 0
    for csr in core.get_csrs():
        found[csr.name] = word
        word += (csr.size + 31) // 32
    return found


def csr_write(bank, word, value):
    """Generator: writes `value` at word address `word`, as the CPU's store does (one cycle)."""
    yield bank.bus.adr.eq(word)
    yield bank.bus.dat_w.eq(value)
    yield bank.bus.we.eq(1)
    yield
    yield bank.bus.we.eq(0)


def csr_read(bank, word):
    """Generator: the value read at word address `word` (two cycles: the address reaches the bank with the
    first edge, the bank registers the data with the second)."""
    yield bank.bus.adr.eq(word)
    yield bank.bus.re.eq(1)
    yield
    yield bank.bus.re.eq(0)
    yield
    return (yield bank.bus.dat_r)
