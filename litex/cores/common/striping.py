#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Where a beat's blocks travel over 1, 2, 4 or 8 bonded lanes, as statements: the link's striper and deskew
and the sim channel's fault injector and serializer deal and gather blocks with these."""

from functools import reduce
from operator import or_

from migen import *

from monet.cores.common.layouts import *


def lanes_cases(lanes_log2, body):
    """Case on the run-time lane count; body(n) gives the statements for n lanes."""
    return Case(lanes_log2, {log2: body(1 << log2) for log2 in range(4)})


def block_places(n):
    """Where each block of a beat travels over n lanes, as (block, lane, slot): lane i carries blocks i, i+n, ..."""
    return [(blk, blk % n, blk // n) for blk in range(BEAT_BLOCKS)]


def stripe(lanes_log2, beat, bundle):
    """The statements that deal the blocks of `beat` (data, ctrl, count) over the lanes of `bundle`."""
    def body(n):
        stmts = []
        for blk, lane, slot in block_places(n):
            stmts += [
                getattr(bundle, f"lane{lane}_data")[BLOCK_BITS*slot:BLOCK_BITS*(slot+1)].eq(
                    beat.data[BLOCK_BITS*blk:BLOCK_BITS*(blk+1)]),
                getattr(bundle, f"lane{lane}_ctrl")[slot].eq(beat.ctrl[blk]),
                getattr(bundle, f"lane{lane}_used")[slot].eq(beat.count > blk),
            ]
        return stmts
    return lanes_cases(lanes_log2, body)


def thermometer_ends(used):
    """For `used` a thermometer (the first k set), one flag each: whether its ones end there (the last used)."""
    return [used[i] & ~(used[i + 1] if i + 1 < len(used) else 0) for i in range(len(used))]


def thermometer_count(used):
    """How many of `used` are set, when they are a thermometer (the first k): where its ones end, decoded
    without an adder's carry chain (the striper marks the first `count` blocks of a beat used)."""
    return reduce(or_, [Mux(end, i + 1, 0) for i, end in enumerate(thermometer_ends(used))])
