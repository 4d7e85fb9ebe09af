"""The firmware's printf (firmware/app/uart_console.c) knows %u, %d, %s, %llu and %%: the console's sources use
no other conversion, and its answers carry numbers of every width whole."""

import re
from pathlib import Path

import pytest

from monet.sim import link_setup

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"
SOURCES = sorted(p for folder in ("app", "console", "lib") for p in (FIRMWARE / folder).glob("*.c"))
KNOWN = {"%u", "%d", "%s", "%llu", "%%"}
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
CONVERSION = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[a-zA-Z%]")


def conversions(text):
    return [c for literal in STRING.findall(text) for c in CONVERSION.findall(literal)]


def test_the_console_sources_use_only_the_conversions_its_printf_knows():
    assert len(SOURCES) > 10
    used = {(path.name, c) for path in SOURCES for c in conversions(path.read_text())}
    assert {c for _, c in used} >= {"%u", "%s", "%llu", "%d"}
    assert sorted(u for u in used if u[1] not in KNOWN) == []


def test_the_check_catches_a_conversion_the_printf_does_not_know():
    assert conversions('printf("%u of %lu at %5d, %x");') == ["%u", "%lu", "%5d", "%x"]


@pytest.mark.parametrize("ber", [0, 7, 4294967295, 4294967296, 1000000000007, 2**40 - 1])
def test_a_64_bit_number_is_printed_whole(sim, ber):
    """The HMC's error threshold is echoed with %llu: below and above 2**32, with zeros inside its last nine
    digits (printed nine at a time)."""
    assert sim.fw.hmc(ber=ber)["ber"] == ber


def test_a_negative_number_is_printed_with_its_sign(sim):
    """`check` answers `first_bad` -1 (%d) when every word is right."""
    link_setup.map_remote_windows(sim)
    sim.fw.fill(0x2000, 64, 5)
    assert sim.fw.check(0x2000, 64, 5)["first_bad"] == -1
