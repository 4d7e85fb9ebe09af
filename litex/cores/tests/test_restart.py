"""RestartInserter (litex/cores/common/restart.py) on the generated Verilog: a restart returns a module's and
its submodule's registers to their reset values in its cycle, keeps the counters named and the registers
without a reset, and leaves memories' contents alone."""

from migen import *

from monet.cores.common.restart import RestartInserter
from monet.cores.tests.verilog_sim import run_simulation


class Inner(Module):
    def __init__(self):
        self.state = Signal(8, reset=5)
        self.sync += self.state.eq(self.state + 1)


class Counting(Module):
    def __init__(self):
        self.submodules.inner = Inner()
        self.count = Signal(8)
        self.plain = Signal(8, reset_less=True)
        self.stored = Signal(8)
        memory = Memory(8, 4)
        self.specials += memory
        write, read = memory.get_port(write_capable=True), memory.get_port(async_read=True)
        self.specials += write, read
        self.sync += [self.count.eq(self.count + 1), self.plain.eq(self.plain + 1)]
        self.comb += [write.adr.eq(1), write.dat_w.eq(0x5A), write.we.eq(self.count == 2), read.adr.eq(1),
                      self.stored.eq(read.dat_r)]


class Top(Module):
    def __init__(self):
        self.restart = Signal()
        self.submodules.dut = RestartInserter(self.restart, kept=lambda: [self.dut.count])(Counting())


def test_a_restart_resets_registers_but_not_the_counters_kept_nor_memories():
    top = Top()
    seen = []

    def bench():
        for cycle in range(10):
            yield top.restart.eq(cycle == 6)
            yield
            seen.append(((yield top.dut.inner.state), (yield top.dut.count), (yield top.dut.plain),
                         (yield top.dut.stored)))

    run_simulation(top, [bench()])
    before, at, after = seen[6], seen[7], seen[8]
    # The restart is sampled with the edge after it is written: the state is back at its reset value then.
    assert before[0] == 5 + 7 and at[0] == 5 and after[0] == 6
    # The counter kept and the register without a reset count on; the memory keeps its word.
    assert [s[1] for s in seen] == list(range(1, 11)) and [s[2] for s in seen] == list(range(1, 11))
    assert at[3] == 0x5A and after[3] == 0x5A
