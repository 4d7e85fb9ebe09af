#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Stage timestamps: where a lone unit spends its cycles between points of a path, measured in the gateware."""

from functools import reduce
from operator import and_, or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import *

from monet.cores.common.csr import add_status
from monet.cores.common.layouts import segment_names


class StageTimer(LiteXModule):
    """Times a unit that travels alone through `points` (names, in the order a unit passes them): for each
    segment between two consecutive points, the summed cycles of every timed unit, and how many were timed.

    A sample opens when point 0 fires with none open and is counted when each following point has fired
    once, in turn. Any other event while it is open (another unit setting off at point 0, a point out of
    turn) spoils it and counts a spoiled sample; only point 0 in the cycle the last point fires does not (the
    next unit sets off as this one arrives, and opens a sample of its own). So only units that travel alone
    are timed, and the sums are of the unloaded latency, the one a breakdown is of. A unit that leaves the
    path before its end (at ReMAT: a local or faulting access) spoils its own sample; the units that spoil
    another are not counted themselves. Events while no sample is open are ignored. `clear` drops the sums,
    the counts and an open sample, also one that ends in its cycle.

    Each point is watched through `watch()`: the signals that make its event (valid, ready, ...) are
    registered as they are, so the timer adds no logic to a path it watches, only loads. Every event is
    seen 2 cycles after it happens (its signals registered, then its event), the same for every point, so
    the differences are the cycles between the events. 0 cycles of latency on any path; a sample's sums and
    count are current 4 cycles after its last point's event.
    """
    def __init__(self, points, width=32):
        assert len(points) >= 2 and len(set(points)) == len(points)
        self.segments = segment_names(points)
        self.clear    = Signal()
        self.sums     = [Signal(width, name=f"sum_{name}") for name in self.segments]
        self.count    = Signal(32)   # samples timed
        self.spoiled  = Signal(32)   # samples spoiled (another unit on the path, or a point out of turn)
        self.events   = {name: Signal(name=f"event_{name}") for name in points}   # each point's event, 2 cycles late
        self.watched  = set()

        # # #

        n    = len(points)
        now  = Signal(width)
        waiting_for = Signal(max=n)  # the point the open sample waits for; 0: no sample open
        last = Signal(width)         # when the open sample passed its previous point
        segment_cycles = [Signal(width, name=f"cycles_{name}") for name in self.segments]   # the open sample's segments
        done = Signal()
        fired = [self.events[name] for name in points]
        self.sync += now.eq(now + 1)

        def waiting(k):
            """The open sample waits for point k. Any other point spoils it, but point 0 in the last point's
            cycle: the next unit sets off as this one arrives, and opens a sample of its own."""
            stray = reduce(or_, [fired[j] for j in range(1, n) if j != k], Constant(0))
            stray = stray | (fired[0] & ~fired[k] if k == n - 1 else fired[0])
            then  = [waiting_for.eq(fired[0]), done.eq(1)] if k == n - 1 else [waiting_for.eq(k + 1)]
            return If(stray,
                        waiting_for.eq(0), self.spoiled.eq(self.spoiled + 1),
                    ).Elif(fired[k],
                        segment_cycles[k - 1].eq(now - last), last.eq(now), *then,
                    )

        self.sync += [
            done.eq(0),
            If(self.clear,
                waiting_for.eq(0),
                self.count.eq(0),
                self.spoiled.eq(0),
            ).Else(
                Case(waiting_for, {
                    0: If(fired[0], waiting_for.eq(1), last.eq(now)),
                    **{k: waiting(k) for k in range(1, n)},
                }),
            ),
            If(done & ~self.clear, self.count.eq(self.count + 1)),
        ]
        # A sample's segments join the sums the cycle after it ends.
        self.sync += [If(self.clear, s.eq(0)).Elif(done, s.eq(s + t)) for s, t in zip(self.sums, segment_cycles)]

    def watch(self, point, *signals, decode=None):
        """Point `point` fires when every one of `signals` (1 bit each) was set, or when `decode(*held)` is
        true of them: they are registered first, so that the watched path gains only loads. Each point is
        watched once; a point left unwatched would never let a sample end (checked when the timer is
        finalized)."""
        assert point in self.events and point not in self.watched, f"point {point!r} unknown or watched twice"
        assert decode or all(len(s) == 1 for s in signals), "signals wider than a bit need a decode"
        self.watched.add(point)
        held = [Signal(len(s), name=f"held_{point}{i}") for i, s in enumerate(signals)]
        self.sync += [h.eq(s) for h, s in zip(held, signals)]
        self.sync += self.events[point].eq(decode(*held) if decode else reduce(and_, held))

    def do_finalize(self):
        unwatched = set(self.events) - self.watched
        assert not unwatched, f"points never watched: {sorted(unwatched)}"

    def add_control(self):
        for name, total in zip(self.segments, self.sums):
            add_status(self, name, total, f"Cycles from {name.replace('_to_', ' to ')}, summed over the timed units.")
        add_status(self, "count", self.count, "Units timed: each went through every point alone.")
        add_status(self, "spoiled", self.spoiled, "Samples spoiled: another unit set off or a point fired out of "
                                                  "turn while one travelled.")
        self._clear = CSR()   # write: clear the sums and counts.
        self.comb += self.clear.eq(self._clear.re)
