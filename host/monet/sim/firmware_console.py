"""The firmware console's commands as methods: the one place that writes a console command line.

Each method sends one command of `firmware/app` (`name key=value ...`; a list is sent comma-separated, a
key left at None is not sent, so the firmware's default holds) and returns its JSON answer; a refusal
raises the target's error with the firmware's message. A method's keyword parameters are the command's
keys (`card`, a card command's: in the pooled model, traffic card `card`'s registers instead of the compute
card's); `wait=` (seconds) bounds the wait for a long command's answer. When the sim boots, `verify()` checks
the firmware's `help` table against these methods, names and keys, and names every mismatch.
"""

import functools
import inspect
import re


def command_name(line):
    """The console command a line sends (its first word; "" for an empty line)."""
    return line.split(maxsplit=1)[0] if line.strip() else ""


def command(method):
    """Makes a method a console command: its name is the command's, its parameters the command's keys."""
    signature = inspect.signature(method)
    keys = tuple(name for name in signature.parameters if name != "self")

    @functools.wraps(method)
    def send(self, *args, wait=None, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        fields = {k: v for k, v in bound.arguments.items() if k != "self" and v is not None}
        answer = self.send(" ".join([method.__name__] + [f"{k}={_text(v)}" for k, v in fields.items()]), wait)
        if method.__name__ == "bfct":
            self.bfct_entries[fields.get("card", 0), answer["idx"]] = answer
        return answer

    send.keys = keys
    return send


def _text(value):
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    return str(int(value)) if isinstance(value, bool) else str(value)


class ConsoleMismatch(RuntimeError):
    """The firmware's commands and this client's methods differ."""


class FirmwareConsole:
    """`send(line, timeout)` is the target's transport: it returns the answer as a dict and raises on a
    refusal (monet.sim.SimTarget.command). `bfct_entries` holds each BFCT section as the firmware last answered
    this client: only the `bfct` command writes the BFCT, so that is what the section holds while no line
    writes it past this client."""

    def __init__(self, send, facts=None):
        self.send = send
        self.bfct_entries = {}
        self._facts = facts   # the `info` answer when the caller knows it already (the same SoC and firmware)

    def facts(self):
        """The `info` answer, asked once: the SoC's facts do not change while it runs."""
        if self._facts is None:
            self._facts = self.info()
        return self._facts

    def set_bfct(self, idx, card=None, **fields):
        """Programs BFCT section `idx` (of traffic card `card` in the pooled model) unless its last answer
        already shows `fields`, and returns the entry. A sweep or a test's clean-up that maps the same sections
        again then costs no console round trip (a line each way, 0.14 s in the sim; 2.3 s for 16 sections)."""
        known = self.bfct_entries.get((card or 0, idx))
        if known is not None and all(known[key] == value for key, value in fields.items()):
            return known
        return self.bfct(idx, card=card, **fields)

    @classmethod
    def commands(cls):
        """{command name: its keys} of every method that is a console command."""
        return {name: fn.keys for name, fn in inspect.getmembers(cls) if hasattr(fn, "keys") and callable(fn)}

    def verify(self, partial=False):
        """Checks the firmware's `help` table (command: a usage line with `key=` for each key) against the
        methods; raises ConsoleMismatch naming every command or key on one side only. `partial`: the other
        side may lack commands (monet-ctl has the CSR commands only), not keys of those it has."""
        table = self.help()["commands"]
        mine = self.commands()
        problems = [f"the firmware has `{n}`, the client no method for it" for n in sorted(set(table) - set(mine))]
        if not partial:
            problems += [f"the client has `{n}`, the firmware no such command"
                         for n in sorted(set(mine) - set(table))]
        for name in sorted(set(table) & set(mine)):
            theirs = set(re.findall(r"\b([a-z_]+)=", table[name]))
            for key in sorted(theirs - set(mine[name])):
                problems.append(f"`{name}` takes {key}= in the firmware, not in the client")
            for key in sorted(set(mine[name]) - theirs):
                problems.append(f"`{name}` takes {key}= in the client, not in the firmware")
        if problems:
            raise ConsoleMismatch("the firmware console and monet.sim.firmware_console differ: " + "; ".join(problems))

    @command
    def help(self):
        """Every command with its usage line."""

    @command
    def info(self):
        """SoC facts: clock, remote window base, BFCT sections and their size, tags, memory card size."""

    @command
    def link(self, lanes=None, block_ps=None, delay=None, skew=None, memory=None, memlat=None, max_units=None,
             pairing=None, issue_rate=None, card=None):
        """Sets what is given of the link and channel (lanes, block time, one-way delay in cycles, per-lane
        skew, the memory card's memory and extra latency, frame units, pairing, issue rate) and answers all of
        it with the counters."""

    @command
    def hmc(self, flit_ps=None, delay=None, ber=None, seed=None, poison=None, line=None):
        """The memory card's HMC link: what is given of its FLIT time (width and lane rate, ps), one-way delay
        (SerDes and fiber, cycles), FLIT error threshold (over 2**40) and error seed, and the HMC's poisoned
        line (`poison` 1: reads of `line`, byte address / 64, answered ERROR); answered with its counters."""

    @command
    def errinj(self, ber=None, burst=None, seed=None, down=None, down_after=None, card=None):
        """The channel's bit errors (`ber`: block hit thresholds over 2**40, one or one per lane), burst
        length, seed, and link-down windows; answers the settings and the hit counters."""

    @command
    def inject(self, kind=None, toward=None, at=None, copies=None, lane=None, cycles=None, card=None):
        """A chosen fault on the wire (`kind`, one of litex/cores/phy/codes.py's) toward the memory card (`a2b`) or
        the compute card (`b2a`), `at` cycles from now: on the next frame that travels alone, `copies` of it for
        a flood, lane `lane` garbled, that lane down or every lane down for `cycles`, or a word of that lane lost
        (a slip); answers the injector's state."""

    @command
    def retry(self, timeout=None, nak=None, selective=None, repair=None, request_timeout=None, credits=None,
              card=None):
        """Replay timer, nak policy, selective repeat (1) or go-back-N (0), the repair of frames with one flipped
        bit under selective repeat (1), request timeout and credits; answers them with both ends' counters."""

    @command
    def prbs(self, cycles=None, loopback=None, card=None):
        """PRBS31 on every lane both ways for `cycles`: words, bit errors per lane and relocks; with `loopback`
        (near, far) the compute card's words come back to it (`loop`)."""

    @command
    def bfct(self, idx, en=None, r=None, w=None, target=None, base=None, card=None):
        """Reads or writes one BFCT section: enable, read/write permission, target, remote base."""

    @command
    def rd(self, addr):
        """One 32-bit read at an offset of the remote window, with its fault state."""

    @command
    def wr(self, addr, val):
        """One 32-bit write at an offset of the remote window."""

    @command
    def fill(self, addr, bytes, seed, cached=None):
        """Seeded words over a span of the remote window (`cached=1`: through the cacheable window, fenced)."""

    @command
    def check(self, addr, bytes, seed, cached=None):
        """Reads a span back against the seed (`cached=1`: through the cacheable window, from a flushed data
        cache): errors and faults."""

    @command
    def lat(self, op=None, addr=None, n=None, stride=None):
        """`n` timed single accesses: CPU cycles and the ReMAT port's cycles, each."""

    @command
    def chase(self, addr=None, lines=None, n=None, seed=None):
        """Dependent loads around a seeded random cycle of lines: cycles, instret, ReMAT latency, the end."""

    @command
    def pbb(self, op=None, ratio=None, mix=None, pattern=None, addr=None, span=None, stride=None, count=None,
            outstanding=None, seed=None, check=None, shift=None, size=None, direct=None, timeout=None, card=None):
        """One run of the benchmark block, waited out (`timeout` in cycles): counters, histogram, link
        occupancy. `direct=1`: 128 B blocks on the HMC controller's block port (`count` counts blocks)."""

    @command
    def stream(self, mem=None, n=None, reps=None, addr=None, corrupt=None):
        """STREAM's kernels on local RAM or remote memory (`mem=remote` uncached, `mem=cached` through the data
        cache and ReMAT's combiner): cycles per kernel, validation, instret."""

    @command
    def combiner(self, fetch_lines=None, fence=None):
        """The cacheable window's combiner: lines a read miss fetches (1 or 2), a fence, its counters."""

    @command
    def memcard(self, poison=None, line=None):
        """The memory card's poisoned line (`poison` 1: reads of `line`, a line address, answered with an error)
        and its counters: reads, writes, errors, poisoned reads, its memory's summed service time, refreshes
        and the requests that waited for one."""

    @command
    def stages(self, clear=None):
        """The stage timers of each card in the register map: where remote accesses that travelled alone spent
        their cycles (summed per segment), how many were timed and how many spoiled; clear=1 first starts
        over."""

    @command
    def counters(self):
        """mcycle and minstret."""

    @command
    def faults(self, card=None):
        """ReMAT's fault counter and latch."""

    @command
    def ports(self, port=None, share=None, first=None, last=None, hist_shift=None, in_flight=None):
        """The pooled model's memory card ports: what is given of port `port` (its share of turns, its range of
        lines `first`..`last`), the histograms' bucket width and the card's requests in flight at most; answers
        every port's settings and counters."""

    @command
    def pool(self, cards=None, op=None, ratio=None, mix=None, pattern=None, addr=None, span=None, stride=None,
             count=None, outstanding=None, seed=None, check=None, shift=None, size=None, timeout=None):
        """The pooled model's cards' benchmark blocks started together (`count`, `outstanding`: one a card, or
        one for all): each card's run, and the lines each memory card port moved while every card was busy."""

    @command
    def switch(self, link=None, port=None, setup=None):
        """The pooled model's circuit switch: link `link`'s circuit (0 the compute card's first, 1.. the traffic
        cards', the last the compute card's second) moved to memory-card port `port` ("none": taken down), the
        set-up time in cycles; answers each link's port and whether it is lit, and the counters."""

    @command
    def move(self, card=None, port=None, section=None, base=None, src=None, dst=None, bytes=None, op=None,
             pattern=None, addr=None, span=None, count=None, outstanding=None, seed=None, check=None, shift=None,
             timeout=None):
        """A traffic card's memory moved to another memory card while its benchmark block runs (the CPU copies
        `bytes` from window offset `src` to `dst`, card `card`'s BFCT section `section` then points at `base`
        and its circuit moves to port `port`): the copy, the hold's drain and the circuit's set-up in cycles,
        and the run."""

    @command
    def exit(self):
        """Ends the simulation."""
