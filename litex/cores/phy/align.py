#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Lane alignment on markers: bonded lanes' items back into rows, a lane that slips or loses lock found by lane
and realigned at a marker while the others wait.

Every lane sends a marker in the same row every marker period (the board's 8b/10b lanes, gt_lanes.py; the sim
channel, channel.py). The aligner sees the head of each lane's buffer:

- aligned: a row leaves when every active lane has an item and none is a marker; when every one is a marker
  they are popped together;
- a slip: every active lane has an item, some of them markers and some not. The lanes that show their marker
  first lost items (a word dropped or corrupted on the way); they are counted, by lane, and alignment is lost;
- a lane that loses lock (`locked` low on an active lane) loses alignment at once, counted by lane; until it
  is locked again every lane's items are dropped (no row can be made, and no lane falls behind);
- hunting (alignment lost): every active lane drops items up to its next marker and waits there; when every
  one has its marker they are popped together and rows flow again. So a slipped lane is realigned at the very
  marker it was found on, and a lane that was down at the first marker after it is back; the other lanes keep
  their place. A marker that waited `window` cycles without the others' (they are later than any skew: a lane
  that is down) is dropped, and the hunt goes on to the next.

`window` must exceed the largest skew between the lanes and stay below half the marker period, so that a
lane's marker is never taken for the next one of another lane. A row lost while a lane slips, and the rows
between the slip and its marker (wrong at the lane that slipped), cost the link a replay; the link's
watchdog replays at once when `aligned` returns.

Detection: a lane that slips, at its next marker (within a marker period plus the skew); a lane that loses
lock, in the cycle `locked` falls. Latency: 0 cycles (combinational, on the heads of the lanes' buffers).
`losses` has each lane's count in 8 bits, lane i's at bits [8i, 8i+8), held at 255; `realigns` counts the
times alignment was lost.
"""

from functools import reduce
from operator import and_, or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

LOSS_BITS = 8   # each lane's loss count, held at its top


def loss_fields(csr, losses):
    """The statements that show `losses` in a CSRStatus whose fields are `lane0`, `lane1`... (LOSS_BITS each)."""
    return [getattr(csr.fields, f"lane{lane}").eq(losses[LOSS_BITS*lane:LOSS_BITS*(lane + 1)])
            for lane in range(len(losses) // LOSS_BITS)]


def _all(bits):
    return reduce(and_, bits)


def _any(bits):
    return reduce(or_, bits)


class LaneAligner(LiteXModule):
    """`lanes` lanes' items (`sinks`, with a `marker` field beside `layouts[i]`) to rows (`sources`, `layouts[i]`),
    realigned on markers (the module's docstring). `active`: the lanes in use (the others are drained);
    `locked`: each lane's receiver is locked. `aligned` is high while rows flow; with `start_aligned` from
    reset (lanes that start in step, as the sim channel's empty delay lines do), else from the first markers."""
    def __init__(self, layouts, window=512, start_aligned=True):
        lanes = len(layouts)
        self.sinks    = sinks   = [stream.Endpoint(layout + [("marker", 1)]) for layout in layouts]
        self.sources  = sources = [stream.Endpoint(layout) for layout in layouts]
        self.active   = Signal(lanes, reset=2**lanes - 1)
        self.locked   = Signal(lanes, reset=2**lanes - 1)
        self.aligned  = Signal(reset=int(start_aligned))
        self.losses   = Signal(LOSS_BITS*lanes)
        self.realigns = Signal(32)

        # # #

        # An inactive lane counts as valid and as a marker, so that it never holds the others back.
        valid   = [sink.valid | ~self.active[i] for i, sink in enumerate(sinks)]
        marker  = [(sink.valid & sink.marker) | ~self.active[i] for i, sink in enumerate(sinks)]
        present = [sink.valid & sink.marker & self.active[i] for i, sink in enumerate(sinks)]
        all_valid  = Signal()
        all_marker = Signal()
        any_marker = Signal()
        row        = Signal()
        slipped    = Signal()
        unlocked   = Signal(lanes)
        lost       = Signal(lanes)    # the lanes counted this cycle
        waited     = Signal(max=window + 1)
        expired    = Signal()
        self.comb += [
            all_valid.eq(_all(valid)),
            all_marker.eq(_all(marker)),
            any_marker.eq(_any(present)),
            unlocked.eq(self.active & ~self.locked),
            row.eq(self.aligned & all_valid & ~any_marker),
            slipped.eq(self.aligned & all_valid & any_marker & ~all_marker),
            lost.eq(Mux(self.aligned, Mux(unlocked != 0, unlocked, Mux(slipped, Cat(*present), 0)), 0)),
            expired.eq(waited == window),
        ]
        for i, (sink, source) in enumerate(zip(sinks, sources)):
            self.comb += [
                sink.connect(source, omit={"valid", "ready", "marker"}),
                source.valid.eq(row & self.active[i]),
                sink.ready.eq(~self.active[i] | (unlocked != 0)     # no row while a lane is down: kept in time
                    | (all_valid & all_marker)                   # markers popped together
                    | (row & sources[0].ready)
                    | (~self.aligned & ~sink.marker)             # hunting: items dropped up to the marker
                    | (~self.aligned & expired)),                # a marker that waited in vain
            ]
        self.sync += [
            If(lost != 0,
                self.aligned.eq(0),
                self.realigns.eq(self.realigns + 1),
            ).Elif(~self.aligned & all_valid & all_marker & (unlocked == 0),
                self.aligned.eq(1),
            ),
            If(self.aligned | ~any_marker | expired, waited.eq(0)).Else(waited.eq(waited + 1)),
        ]
        for i in range(lanes):
            count = self.losses[LOSS_BITS*i:LOSS_BITS*(i + 1)]
            self.sync += If(lost[i] & (count != 2**LOSS_BITS - 1), count.eq(count + 1))
