"""LaneAligner (litex/cores/phy/align.py): skewed lanes back into rows; a lane that slips or loses lock found by
lane, realigned at a marker while the others wait, never a period off; inactive lanes ignored."""

import pytest
from migen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRField, CSRStatus
from monet.cores.phy.align import LOSS_BITS, LaneAligner, loss_fields
from monet.cores.tests.verilog_sim import run_simulation

PERIOD = 32    # rows between markers
WINDOW = 12    # cycles a marker waits for the others'
ROWS = 400
LAYOUT = [("data", 16)]


class Lanes(Module):
    """`lanes` lanes, each a FIFO the testbench fills (`push`, `data`, `marker`) in front of the aligner."""
    def __init__(self, lanes, start_aligned, window=WINDOW):
        self.submodules.aligner = aligner = LaneAligner([LAYOUT] * lanes, window=window, start_aligned=start_aligned)
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


def schedule(lanes, skews, drop=lambda lane, row: False, period=PERIOD, rows=ROWS):
    """{cycle: {lane: (data, marker)}}: row r leaves at cycle 2r (a marker in place of every period-th; a lane
    gives a block every other cycle at most, as the board's do), lane i's item arrives skews[i] cycles later;
    `drop(lane, row)` loses an item on the way."""
    arrivals = {}
    for r in range(rows):
        for lane in range(lanes):
            if not drop(lane, r):
                arrivals.setdefault(2*r + skews[lane], {})[lane] = (r, int(r % period == period - 1))
    return arrivals


def run(dut, lanes, arrivals, active=None, unlocked=lambda cycle: 0, rows=ROWS):
    """Drives the arrivals; returns the rows out (each lane's data, lane by lane) with their cycle, the losses by
    lane and the realigns."""
    out, result = [], {}

    def bench():
        if active is not None:
            yield dut.aligner.active.eq(active)
        for cycle in range(2*rows + 100):
            items = arrivals.get(cycle, {})
            yield dut.push.eq(sum(1 << lane for lane in items))
            yield dut.marker.eq(sum(marker << lane for lane, (_, marker) in items.items()))
            for lane, (data, _) in items.items():
                yield dut.data[lane].eq(data)
            yield dut.aligner.locked.eq(~unlocked(cycle) & (2**lanes - 1))
            if (yield dut.aligner.sources[0].valid):
                out.append((cycle, list((yield [dut.aligner.sources[lane].data for lane in range(lanes)]))))
            yield
        losses = yield dut.aligner.losses
        result["losses"] = [(losses >> (LOSS_BITS*lane)) & (2**LOSS_BITS - 1) for lane in range(lanes)]
        result["realigns"] = yield dut.aligner.realigns

    run_simulation(dut, bench(), max_cycles=2*rows + 200)
    return out, result


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
    """Not aligned from reset, lane 2 of 4 in use starting 70 rows late, lane 3 not in use and 5 rows behind the
    others: the lanes align at the first marker lane 2 has (row 95), never on the earlier markers the others waited
    at, and lane 3's items are drained, its markers never waited for."""
    lanes = 4
    rows, result = run(Lanes(lanes, start_aligned=False), lanes,
                       schedule(lanes, [0, 1, 2, 10], drop=lambda lane, r: lane == 2 and r < 70),
                       active=0b0111)
    assert [data[:3] for _, data in rows] == [[r] * 3 for r in data_rows(first=96)]
    # Each row as soon as lane 2's item is at its FIFO's head (sent at 2r; the write's edge, 2 cycles of skew, the
    # FIFO's 1): lane 3's items, at their heads in the other cycles, hold nothing back.
    assert [cycle - 2 * data[0] for cycle, data in rows] == [4] * len(rows)
    assert result == {"losses": [0] * lanes, "realigns": 0}


def test_a_lanes_count_goes_up_by_one_a_loss_and_holds_at_its_top():
    """Markers every 4 rows; lane 1 slips in every other period, 270 times: lane 0's count stays 0, lane 1's
    holds at 255, and every loss is a realign."""
    period, rows = 4, 2160
    slipped = [r for r in range(rows) if r % (2*period) == 1]
    _, result = run(Lanes(2, start_aligned=True, window=3), 2,
                    schedule(2, [0, 0], drop=lambda lane, r: lane == 1 and r in slipped, period=period, rows=rows),
                    rows=rows)
    assert len(slipped) == 270 and result == {"losses": [0, 2**LOSS_BITS - 1], "realigns": 270}


def test_loss_fields_show_each_lanes_count_in_its_field():
    losses = Signal(LOSS_BITS * 8)
    csr = CSRStatus(name="lane_losses", fields=[CSRField(f"lane{lane}", size=LOSS_BITS) for lane in range(8)])
    statements = loss_fields(csr, losses)
    assert [(s.l, s.r.start, s.r.stop) for s in statements] == [
        (getattr(csr.fields, f"lane{lane}"), LOSS_BITS * lane, LOSS_BITS * (lane + 1)) for lane in range(8)]
