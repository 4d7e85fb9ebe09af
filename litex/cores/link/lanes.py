#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Striping of beats over 1, 2, 4 or 8 bonded lanes, and the receive-side deskew."""

from functools import reduce
from operator import and_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.layouts import *
from monet.cores.common.striping import block_places, lanes_cases, stripe, thermometer_count


class LaneStriper(LiteXModule):
    """Deals the blocks of a beat round-robin over N lanes: lane i gets blocks i, i+N, ... (0 cycles).

    With N lanes, a beat of k blocks occupies ceil(k/N) block times on every lane; lanes that have fewer
    blocks send idles, as bonded lanes do.
    """
    def __init__(self, lanes_log2):
        self.sink   = sink   = stream.Endpoint(beat_layout)
        self.source = source = stream.Endpoint(bundle_layout())

        # # #

        self.comb += [source.valid.eq(sink.valid), sink.ready.eq(source.ready)]

        self.comb += stripe(lanes_log2, sink, source)


class LaneDeskew(LiteXModule):
    """Realigns N lanes that arrive with different delays and rebuilds beats (0 cycles once aligned).

    Each lane's words queue in the lane's own buffer (the channel's delay line stands for it); a beat is
    rebuilt only when every active lane has its word, so a skewed lane delays the beat, never corrupts it.
    """
    def __init__(self, lanes_log2):
        self.sinks  = sinks  = [stream.Endpoint(lane_layout(lane)) for lane in range(MAX_LANES)]
        self.source = source = stream.Endpoint(beat_layout)

        # # #

        def merge(n):
            all_valid = reduce(and_, [sinks[lane].valid for lane in range(n)])
            stmts = [source.valid.eq(all_valid)]
            stmts += [sinks[lane].ready.eq(all_valid & source.ready) for lane in range(n)]
            # Lanes beyond N are not in use: drain anything left in them.
            stmts += [sinks[lane].ready.eq(1) for lane in range(n, MAX_LANES)]
            for blk, lane, slot in block_places(n):
                stmts += [
                    source.data[BLOCK_BITS*blk:BLOCK_BITS*(blk+1)].eq(
                        sinks[lane].data[BLOCK_BITS*slot:BLOCK_BITS*(slot+1)]),
                    source.ctrl[blk].eq(sinks[lane].ctrl[slot]),
                ]
            used = [sinks[lane].used[slot] for _, lane, slot in block_places(n)]
            stmts.append(source.count.eq(thermometer_count(used)))
            return stmts
        self.comb += lanes_cases(lanes_log2, merge)

