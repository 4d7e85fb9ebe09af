"""LaneAligner (litex/cores/phy/align.py): skewed lanes back into rows; a lane that slips or loses lock found by
lane, realigned at a marker while the others wait, never a period off; inactive lanes ignored."""

import pytest
from migen import *

from litex.soc.interconnect import stream
from monet.cores.phy.align import LOSS_BITS, LaneAligner
from monet.cores.tests.verilog_sim import run_simulation

PERIOD = 32    # rows between markers
WINDOW = 12    # cycles a marker waits for the others'
ROWS = 400
LAYOUT = [("data", 16)]


class Lanes(Module):
    """`lanes` lanes, each a FIFO the testbench fills (`push`, `data`, `marker`) in front of the aligner."""
    def __init__(self, lanes, start_aligned):
        self.submodules.aligner = aligner = LaneAligner([LAYOUT] * lanes, window=WINDOW, start_aligned=start_aligned)
        self.push   = Signal(lanes)
        self.marker = Signal(lanes)
        self.data   = [Signal(16, name=f"data{lane}") for lane in range(lanes)]
        for lane in range(lanes):
            fifo = stream.SyncFIFO(LAYOUT + [("marker", 1)], 64)
            self.submodules += fifo
            self.comb += [
                fifo.sink.valid.eq(self.push[lane]),
                fifo.sink.data.eq(self.data[lane]),
                fifo.sink.marker.eq(self.marker[lane]),
                fifo.source.connect(aligner.sinks[lane]),
                aligner.sources[lane].ready.eq(1),
            ]


def schedule(lanes, skews, drop=lambda lane, row: False):
    """{cycle: {lane: (data, marker)}}: row r leaves at cycle 2r (a marker in place of every PERIOD-th; a lane
    gives a block every other cycle at most, as the board's do), lane i's item arrives skews[i] cycles later;
    `drop(lane, row)` loses an item on the way."""
    arrivals = {}
    for r in range(ROWS):
        for lane in range(lanes):
            if not drop(lane, r):
                arrivals.setdefault(2*r + skews[lane], {})[lane] = (r, int(r % PERIOD == PERIOD - 1))
    return arrivals


def run(dut, lanes, arrivals, active=None, unlocked=lambda cycle: 0):
    """Drives the arrivals; returns the rows out (each lane's data, lane by lane) with their cycle, the losses by
    lane and the realigns."""
    rows, result = [], {}

    def bench():
        if active is not None:
            yield dut.aligner.active.eq(active)
        for cycle in range(2*ROWS + 100):
            items = arrivals.get(cycle, {})
            yield dut.push.eq(sum(1 << lane for lane in items))
            yield dut.marker.eq(sum(marker << lane for lane, (_, marker) in items.items()))
            for lane, (data, _) in items.items():
                yield dut.data[lane].eq(data)
            yield dut.aligner.locked.eq(~unlocked(cycle) & (2**lanes - 1))
            if (yield dut.aligner.sources[0].valid):
                rows.append((cycle, list((yield [dut.aligner.sources[lane].data for lane in range(lanes)]))))
            yield
        losses = yield dut.aligner.losses
        result["losses"] = [(losses >> (LOSS_BITS*lane)) & (2**LOSS_BITS - 1) for lane in range(lanes)]
        result["realigns"] = yield dut.aligner.realigns

    run_simulation(dut, bench())
    return rows, result


def data_rows(first=0):
    return [r for r in range(first, ROWS) if r % PERIOD != PERIOD - 1]


@pytest.mark.parametrize("lanes", [2, 8])
def test_skewed_lanes_give_every_row_once_in_order_and_no_marker(lanes):
    skews = [(3 * lane) % 7 for lane in range(lanes)]
    rows, result = run(Lanes(lanes, start_aligned=True), lanes, schedule(lanes, skews))
    assert [data for _, data in rows] == [[r] * lanes for r in data_rows()]
    assert result == {"losses": [0] * lanes, "realigns": 0}


@pytest.mark.parametrize("lanes", [2, 8])
def test_a_slipped_lane_is_counted_and_realigned_at_the_next_marker(lanes):
    """Lane 1 loses row 100's item: its later items pair with the others' earlier ones until the marker at
    row 127, where its marker shows first; there the others drop one item and every lane is in step again."""
    skews = [lane % 3 for lane in range(lanes)]
    rows, result = run(Lanes(lanes, start_aligned=True), lanes,
                       schedule(lanes, skews, drop=lambda lane, r: lane == 1 and r == 100))
    assert result == {"losses": [1 if lane == 1 else 0 for lane in range(lanes)], "realigns": 1}
    good = [data for _, data in rows if len(set(data)) == 1]
    assert good == [[r] * lanes for r in data_rows() if r < 100 or r > PERIOD * 4 - 1]
    # Found at the marker: only rows before it are out of step.
    assert all(100 <= data[0] < PERIOD * 4 - 1 for _, data in rows if len(set(data)) != 1)


@pytest.mark.parametrize("lanes", [2, 8])
def test_a_lane_that_loses_lock_is_realigned_alone_at_its_first_marker_back(lanes):
    """Lane 1's receiver loses lock while rows 100-189 pass (its items lost): alignment is lost at once, and the
    lanes are in step again at the first marker after lane 1 is back (row 191); never a period off."""
    rows, result = run(Lanes(lanes, start_aligned=True), lanes,
                       schedule(lanes, [0] * lanes, drop=lambda lane, r: lane == 1 and 100 <= r < 190),
                       unlocked=lambda cycle: 0b10 if 200 <= cycle < 380 else 0)
    assert result == {"losses": [1 if lane == 1 else 0 for lane in range(lanes)], "realigns": 1}
    assert [data for _, data in rows] == [[r] * lanes for r in data_rows() if r < 100 or r > 191]
    # Lost in the cycle lock fell (its writes take effect at the edge, the FIFO's head a cycle after the item).
    assert max(cycle for cycle, data in rows if data[0] < 100) == 200


def test_lanes_not_aligned_at_reset_wait_for_a_late_lane_and_inactive_lanes_do_not_count():
    """Not aligned from reset, lane 2 of 4 in use starting 70 rows late, lane 3 not in use and silent: the
    lanes align at the first marker lane 2 has (row 95), never on the earlier markers the others waited at."""
    lanes = 4
    rows, result = run(Lanes(lanes, start_aligned=False), lanes,
                       schedule(lanes, [0, 1, 2, 0], drop=lambda lane, r: lane == 3 or (lane == 2 and r < 70)),
                       active=0b0111)
    assert [data[:3] for _, data in rows] == [[r] * 3 for r in data_rows(first=96)]
    assert result == {"losses": [0] * lanes, "realigns": 0}
