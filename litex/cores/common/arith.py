#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Counters kept shallow for 250 MHz: no carry chain behind a late strobe, none longer than a word."""

from functools import reduce
from operator import or_

from migen import *


def count_strobes(module, counter, ups, downs):
    """`counter` moves each cycle by how many of `ups` are set less how many of `downs` are: every possible
    result is made beforehand and the strobes only pick one, so strobes that settle late drive a selection,
    not an adder. The pick is an AND-OR: Yosys folds a multiplexer of sums into one adder of multiplexed
    operands, behind the strobes. The counter wraps modulo its width (no signed arithmetic)."""
    strobes = Cat(*ups, *downs)
    chosen = {}     # change: [strobe values that make it]
    for value in range(2**len(strobes)):
        change = (sum(value >> i & 1 for i in range(len(ups))) -
                  sum(value >> i & 1 for i in range(len(ups), len(strobes))))
        chosen.setdefault(change, []).append(value)
    picks = []
    for change, values in chosen.items():
        moved, picked = Signal(len(counter)), Signal()
        module.comb += [
            moved.eq(counter + change if change >= 0 else counter - -change),
            picked.eq(reduce(or_, [strobes == value for value in values])),
        ]
        picks.append(moved & Replicate(picked, len(counter)))
    module.sync += counter.eq(reduce(or_, picks))


def add_in_two_words(module, total, addend, clear):
    """`total` += `addend` every cycle (an addend of 0 for none), `clear` zeroes it: the low half's sum in its
    cycle and its carry into the high half a cycle later, so no carry chain is longer than a half. Returns
    the carry still owed to the high half (the total is whole when it is 0)."""
    half = len(total) // 2
    carry = Signal(len(addend) - half + 1)
    low = Signal(half + len(carry))
    module.comb += low.eq(total[:half] + addend)
    module.sync += If(clear,
        total.eq(0),
        carry.eq(0),
    ).Else(
        total[:half].eq(low[:half]),
        carry.eq(low[half:]),
        total[half:].eq(total[half:] + carry),
    )
    return carry


def pick(select, if_set, if_clear):
    """`if_set` where `select` is set, else `if_clear`, as an AND-OR of the two: Yosys folds a multiplexer of two
    sums (or differences) into one adder of multiplexed operands, behind `select`, where an AND-OR picks last."""
    width = max(len(if_set), len(if_clear))
    return (if_set & Replicate(select, width)) | (if_clear & Replicate(~select, width))


def plus_one(value):
    """`value` + 1 (modulo its width) as bitwise logic: bit i flips when every bit below it is set. A few
    LUT levels, where an adder's carry chain over a line address is five."""
    return Cat(~value[0], *[value[i] ^ (value[:i] == 2**i - 1) for i in range(1, len(value))])
