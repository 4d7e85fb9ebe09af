"""monet.sim.firmware_console: one method per firmware console command writes its line; at boot the sim checks the
firmware's own command table against the methods and names every command or key on one side only."""

import pytest

from monet.sim import target as sim_target
from monet.sim import SimError, SimTarget
from monet.sim.firmware_console import ConsoleMismatch, FirmwareConsole, command


class Drifted(FirmwareConsole):
    """A client that has drifted from the firmware: a command the firmware lacks, a key dropped from `link`."""

    @command
    def frobnicate(self, depth=None):
        """Not a firmware command."""

    @command
    def link(self, lanes=None, block_ps=None, delay=None, skew=None, memlat=None, max_units=None, pairing=None):
        """`link` without issue_rate."""


def test_lines_are_name_then_the_given_keys_lists_comma_separated():
    sent = []
    fw = FirmwareConsole(lambda line, timeout: sent.append((line, timeout)) or {"idx": 3})
    fw.link(lanes=8, skew=[0, 3, 7], pairing=True)
    fw.bfct(3, en=0)
    fw.pbb(op="read", count=16, check=False, wait=90)
    fw.info()
    assert sent == [("link lanes=8 skew=0,3,7 pairing=1", None), ("bfct idx=3 en=0", None),
                    ("pbb op=read count=16 check=0", 90), ("info", None)]
    with pytest.raises(TypeError):
        fw.rd(0, colour=1)                    # a key the command does not take is a Python error, not a line


def test_the_shipped_client_matches_the_firmware(sim):
    sim.fw.verify()
    table = sim.fw.help()["commands"]
    assert set(table) == set(FirmwareConsole.commands())


def test_a_drifted_client_is_named_in_full(sim):
    with pytest.raises(ConsoleMismatch) as drift:
        Drifted(sim.command).verify()
    message = str(drift.value)
    assert "the client has `frobnicate`, the firmware no such command" in message
    assert "`link` takes issue_rate= in the firmware, not in the client" in message


def test_a_sim_whose_firmware_and_client_differ_does_not_boot(sim_build, monkeypatch):
    monkeypatch.setattr(sim_target, "FirmwareConsole", Drifted)
    with pytest.raises(SimError, match="sim: the firmware console and monet.sim.firmware_console differ: .*frobnicate"):
        SimTarget(sim_build)


def test_a_second_boot_of_the_same_firmware_asks_neither_its_table_nor_its_facts(sim_build):
    with SimTarget(sim_build) as first:
        facts = first.fw.facts()
    with SimTarget(sim_build) as again:
        # Each was a console exchange at every point's boot (0.6 s of the sim's console in all).
        assert not again.commands_sent
        assert again.fw.facts() == facts and not again.commands_sent
        # pexpect's 50 ms pause before each line sent, two thirds of a short command's time, is off.
        assert again.child.delaybeforesend is None


def test_a_long_line_arrives_whole_and_an_overlong_one_is_refused(sim):
    # A line fills the UART's FIFO faster than a cycle a character: it must arrive whole, however long (the
    # firmware once read through a 128-byte ring and never answered lines of 127 characters or more).
    for length in (126, 127, 200, 255):
        assert sim.command("info pad=" + "x" * (length - 9))["tags"] > 0, length
    with pytest.raises(SimError, match="line longer than 255 characters"):
        sim.command("info pad=" + "x" * 247)
    with pytest.raises(SimError, match="more than 16 key=value arguments"):
        sim.command("info " + " ".join(f"k{i}=1" for i in range(17)))
    assert sim.fw.info()["tags"] > 0, "the console answers after a refusal"


def test_a_bfct_section_that_already_holds_the_mapping_is_not_sent_again(sim):
    idx = 5
    entry = sim.fw.bfct(idx, en=1, r=1, w=1, target=0, base=idx)
    sim.commands_sent.clear()
    assert sim.fw.set_bfct(idx, en=1, r=1, w=1, target=0, base=idx) == entry
    assert not sim.commands_sent, "a section that holds the mapping costs no console line"
    # Every bfct answer is remembered, whoever sent it: after a plain `bfct` write, set_bfct writes again.
    sim.fw.bfct(idx, en=0)
    sim.commands_sent.clear()
    assert sim.fw.set_bfct(idx, en=1)["en"] == 1
    assert sim.commands_sent == {"bfct"}
    assert sim.command(f"bfct idx={idx}") == sim.fw.bfct_entries[0, idx] == entry
