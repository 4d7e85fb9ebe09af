"""Every refusal of the firmware console, sent once on the sim: the message names what is accepted, and a
refused command changes nothing (link, channel and retry settings as before; the console goes on). The
lines are written here, not by monet.sim.firmware_console: this tests the console's own parser, malformed
lines and unknown commands included."""

import pytest

from monet.pytest_plugin import BFCT_FIELDS, SETTINGS
from monet.sim import SimError

WINDOW = 16 << 20           # 16 sections of 1 MiB

REFUSALS = [
    ("link block_ps=0", "block_ps must be 1..65535"),
    ("link block_ps=65536", "block_ps must be 1..65535"),
    ("link delay=1001", "delay must be 0..1000 cycles"),
    ("link issue_rate=65536", "issue_rate must be 0..65535 (requests a cycle in 1/65536, 0 unlimited)"),
    ("link lanes=3", "lanes must be 1, 2, 4 or 8"),
    ("link max_units=9", "max_units must be 1..8"),
    ("link max_units=0 memlat=7", "max_units must be 1..8"),
    ("link memory=3 memlat=7", "memory must be 0 (SRAM), 1 (DDR4) or 2 (HMC), one the card was built with"),
    ("link memlat=32768", "memlat must be 0..32767 cycles"),
    ("memcard poison=2 line=5", "poison must be 0 or 1"),
    ("hmc poison=2 line=5", "poison must be 0 or 1"),
    ("hmc poison=1 line=0x10000000", "line must be below 2**28 (the HMC's 34-bit byte address / 64)"),
    ("hmc flit_ps=0", "flit_ps must be 1..65535"),
    ("hmc delay=0", "delay must be 1..255 cycles"),
    ("hmc delay=256 ber=1", "delay must be 1..255 cycles"),
    (f"hmc ber={1 << 40}", "ber must be below 2**40"),
    (f"errinj ber={1 << 40}", "ber thresholds must be below 2**40"),
    (f"errinj ber=0,0,0,0,0,0,0,{1 << 40}", "ber thresholds must be below 2**40"),
    ("errinj burst=0", "burst must be 1..32 bits"),
    ("errinj burst=33", "burst must be 1..32 bits"),
    ("inject kind=bitrot", "kind must be none, crc, type, truncated, duplicate, skip, flood, lane, down, slip or "
                           "lane_down"),
    ("inject kind=crc toward=both", "toward must be a2b or b2a"),
    ("prbs loopback=side", "loopback must be none, near or far"),
    ("inject kind=flood copies=0", "copies must be 1..65535"),
    ("inject kind=flood copies=65536", "copies must be 1..65535"),
    ("inject kind=lane lane=8", "lane must be 0..7"),
    ("inject kind=down cycles=0", "cycles must be at least 1"),
    ("retry timeout=15", "timeout must be 16..65535 cycles"),
    ("retry timeout=65536", "timeout must be 16..65535 cycles"),
    ("retry nak=2", "nak must be 0 or 1"),
    ("retry selective=2", "selective must be 0 (go-back-N) or 1 (selective repeat)"),
    ("retry credits=512", "credits must be 0 (no credit flow control) or 16..511 requests (a credit returns 16)"),
    ("retry credits=15", "credits must be 0 (no credit flow control) or 16..511 requests (a credit returns 16)"),
    ("prbs cycles=999", "cycles must be at least 1000"),
    ("bfct", "idx must be below the number of sections"),
    ("bfct idx=16 en=1", "idx must be below the number of sections"),
    (f"rd addr={WINDOW}", "addr must be a 4-aligned offset inside the remote window"),
    ("rd addr=2", "addr must be a 4-aligned offset inside the remote window"),
    ("wr addr=6 val=1", "addr must be a 4-aligned offset inside the remote window"),
    (f"fill addr=0 bytes={WINDOW + 4}", "addr/bytes must lie inside the remote window, 4-aligned"),
    ("check addr=2 bytes=64", "addr/bytes must lie inside the remote window, 4-aligned"),
    ("fill addr=0 bytes=64 cached=2", "cached must be 0 or 1"),
    ("lat op=fetch", "op must be read or write"),
    ("lat n=0", "n must be 1..1024"),
    ("lat n=1025", "n must be 1..1024"),
    (f"lat addr={WINDOW - 64} n=2 stride=64", "accesses must lie inside the remote window"),
    ("lat n=2 stride=2", "accesses must lie inside the remote window"),
    ("chase lines=1", "lines must be 2..1024"),
    ("chase lines=1025", "lines must be 2..1024"),
    (f"chase addr={WINDOW - 4096} lines=65", "the chain must lie inside the remote window"),
    ("pbb op=fetch", "op must be read, write or mixed"),
    ("pbb pattern=zigzag", "pattern must be seq, stride or random"),
    ("pbb size=48", "size must be 8, 16, 32, 64 or 128 bytes"),
    ("pbb size=256", "size must be 8, 16, 32, 64 or 128 bytes"),
    ("pbb span=32", "span must be a power of two >= 64"),
    ("pbb span=96", "span must be a power of two >= 64"),
    ("pbb addr=32", "addr/span must lie in the window, line aligned"),
    (f"pbb addr={WINDOW - 4096} span=8192", "addr/span must lie in the window, line aligned"),
    ("pbb outstanding=0", "outstanding must be 1..512 (ReMAT's tags)"),
    ("pbb outstanding=513", "outstanding must be 1..512 (ReMAT's tags)"),
    ("pbb stride=100", "stride must be a line multiple below span"),
    ("pbb span=4096 stride=4096", "stride must be a line multiple below span"),
    ("pbb size=128 count=3", "count must be even for 128 B accesses (two line transactions each)"),
    ("pbb mix=burst", "mix must be random or even"),
    ("pbb direct=2", "direct must be 0 or 1"),
    ("pbb direct=1", "direct=1 moves 128 B blocks: size must be 128"),
    ("pbb direct=1 size=128 addr=64", "direct=1: addr and stride must be 128 B multiples"),
    ("stream mem=disk", "mem must be local, remote or cached"),
    ("stream n=15", "n must be >= 16 and reps 2..1000"),
    ("stream reps=1", "n must be >= 16 and reps 2..1000"),
    ("stream reps=1001", "n must be >= 16 and reps 2..1000"),
    ("stream n=1000000", "3 arrays of n words must fit in local RAM"),
    ("stream mem=remote addr=32", "addr must be 64-aligned and 3 arrays of n words must fit in the remote window"),
    ("stream mem=cached addr=32", "addr must be 64-aligned and 3 arrays of n words must fit in the remote window"),
    ("combiner fetch_lines=0", "fetch_lines must be 1 or 2"),
    ("combiner fetch_lines=3 fence=1", "fetch_lines must be 1 or 2"),
    ("frobnicate", "unknown command frobnicate, try help"),
    ("rd addr", "expected: command key=value ..."),
]

# What each settings command reads back (the fields the sim fixture puts back), to check that a refused
# command changed none of it.
READBACK = {**{name: ({}, fields) for name, fields in SETTINGS.items()}, "bfct": ({"idx": 15}, BFCT_FIELDS)}


def settings(sim, line):
    name = line.split()[0]
    if name not in READBACK:
        return {}
    keys, fields = READBACK[name]
    answer = getattr(sim.fw, name)(**keys)
    return {k: answer[k] for k in fields}


@pytest.mark.parametrize("line,message", REFUSALS, ids=[line for line, _ in REFUSALS])
def test_each_refusal_names_what_is_accepted_and_changes_nothing(sim, line, message):
    before = settings(sim, line)
    with pytest.raises(SimError) as refused:
        sim.command(line)
    assert str(refused.value) == f"firmware refused {line!r}: {message}"
    assert settings(sim, line) == before
    assert sim.fw.inject()["pending"] == 0      # nothing armed
    assert sim.fw.rd(0)["fault"] is False       # the console and the link go on
