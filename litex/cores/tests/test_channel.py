"""SimChannel (litex/cores/phy/channel.py): serializer and delay lines against the host's link model, and a lane
or link fault started by the frame the injector finds."""

import pytest
from migen import *

from monet.cores.common.layouts import T_RD_REQ
from monet.cores.link.lanes import LaneStriper
from monet.cores.phy.channel import SimChannel, SimChannelDirection
from monet.cores.phy.codes import FAULT_KINDS, LOOPBACKS
from monet.cores.phy.figures import THRESHOLD_BITS
from monet.cores.tests.verilog_sim import run_simulation
from monet.link import model as link_model

from .test_packing import header


class Direction(Module):
    """Striper and one channel direction; lanes, lane rate and delay are run-time settings (one model)."""
    def __init__(self):
        self.lanes_log2 = Signal(2)
        self.block_ps = Signal(16)
        self.delay = Signal(16)
        self.skews = skews = [Signal(8) for _ in range(8)]
        self.submodules.striper = LaneStriper(self.lanes_log2)
        self.submodules.dir = self.make(self.lanes_log2, self.block_ps, link_model.CLK_PS, self.delay, skews,
                                        depth=64)
        self.comb += self.striper.source.connect(self.dir.sink)
        self.sink = self.striper.sink
        self.out = self.dir.sources[0]
        for s in self.dir.sources:
            self.comb += s.ready.eq(1)

    def make(self, *args, **kwargs):
        return SimChannelDirection(*args, **kwargs)


def run(lanes, rate, delay, counts, busy=None, dut=None, gaps=0, skews=()):
    """(cycles each beat was taken, cycles each arrived); `busy` (a list) gets the serializer's busy cycles; `gaps`
    idle cycles after each beat; `skews` the lanes' from lane 0 on."""
    dut = Direction() if dut is None else dut
    sent, arrived = [], []
    busy = [] if busy is None else busy

    def settings():
        yield dut.lanes_log2.eq(lanes.bit_length() - 1)
        yield dut.block_ps.eq(link_model.block_ps(rate))
        yield dut.delay.eq(delay)
        for signal, skew in zip(dut.skews, skews):
            yield signal.eq(skew)
        yield

    def watch():
        yield from settings()
        # Until everything has arrived, with a bound: 2 cycles per block at the slowest setting, plus slack.
        for cycle in range(100 + 2 * 8 * sum(counts)):
            if len(arrived) == len(counts):
                break
            if (yield dut.sink.valid) and (yield dut.sink.ready):
                sent.append(cycle)
            if (yield dut.out.valid):
                arrived.append(cycle)
            yield
        busy.append((yield dut.dir.serializer.busy_cycles))

    def drive():
        yield from settings()
        for count in counts:
            yield dut.sink.valid.eq(1)
            yield dut.sink.count.eq(count)
            yield
            while not (yield dut.sink.ready):
                yield
            if gaps:
                yield dut.sink.valid.eq(0)
                for _ in range(gaps):
                    yield
        yield dut.sink.valid.eq(0)

    run_simulation(dut, [drive(), watch()])
    return sent, arrived


@pytest.mark.parametrize("lanes", [1, 2, 4, 8])
@pytest.mark.parametrize("rate", [10.0, 15.0, 25.0])
def test_lone_frame_latency_is_serialization_plus_delay(lanes, rate):
    delay = 7
    for blocks in (2, 8):
        sent, arrived = run(lanes, rate, delay, [blocks])
        expected = link_model.serialization_cycles(blocks, lanes, rate) + delay
        assert arrived[0] - sent[0] == expected, (blocks, sent, arrived)


def test_a_beat_arrives_with_its_latest_lane():
    """Lane 3 three cycles late (delay 10 + skew 3, a sum: as bits, 10 | 3 would be 11): the beat is rebuilt
    when its last lane's word comes."""
    sent, arrived = run(8, 15.0, 10, [8], skews=[0, 1, 0, 3])
    assert arrived[0] - sent[0] == link_model.serialization_cycles(8, 8, 15.0) + 10 + 3


@pytest.mark.parametrize("lanes,rate", [(1, 10.0), (4, 12.5), (8, 15.0), (8, 25.0)])
def test_back_to_back_throughput_matches_lane_rate(lanes, rate):
    n = 40
    busy = []
    sent, arrived = run(lanes, rate, 3, [8] * n, busy)
    assert len(arrived) == n
    assert busy[0] >= n   # the wire is busy at least a cycle a beat (link occupancy)
    cycles = arrived[-1] - arrived[0]
    expected = (n - 1) * -(-8 // lanes) * link_model.block_ps(rate) / link_model.CLK_PS
    # A beat never leaves in less than a cycle; otherwise the carried remainder keeps the average exact.
    assert abs(cycles - max(expected, n - 1)) <= 1


class Channel(Module):
    """Both directions, a beat striped into the compute-to-memory one; every lane word taken at the far end."""
    def __init__(self):
        self.submodules.channel = SimChannel(depth=16)
        self.submodules.striper = LaneStriper(self.channel.lanes_log2)
        self.sink = self.striper.sink
        self.comb += self.striper.source.connect(self.channel.a_sink)
        for s in self.channel.a_sources + self.channel.b_sources:
            self.comb += s.ready.eq(1)


CHANNEL = Channel()
FAULT_START = 2   # cycles from the beat of the frame a lane or link fault starts with to the fault
FAULTED_ARRIVAL = 15   # a 2-block frame faulted, 8 x 15 Gb/s: 12 unfaulted (a block time, delay 10), 3 the injector


def arm(channel, kind, lane, cycles):
    """Generator: arms `kind` toward the memory card on `lane` for `cycles`."""
    yield channel.inject_kind.eq(FAULT_KINDS[kind])
    yield channel.inject_lane.eq(lane)
    yield channel.inject_cycles.eq(cycles)
    yield channel.inject_arm.eq(1)
    yield
    yield channel.inject_arm.eq(0)


@pytest.mark.parametrize("kind", ["lane", "down"])
def test_a_lane_or_link_fault_starts_with_the_frame_the_injector_finds_and_lasts_its_cycles(kind):
    """Armed toward the memory card, the fault waits for a frame with a transaction; from it lane 3's blocks are
    all hit (its threshold at the maximum, the other lanes' untouched), or the link is down, for 20 cycles."""
    dut, seen = CHANNEL, []
    frame = [header(T_RD_REQ, 1, 0x10)[0], 0xF | 1 << 63]   # a request and a trailer: a frame with a transaction

    def bench():
        ch = dut.channel
        yield from arm(ch, kind, lane=3, cycles=20)
        for _ in range(10):   # nothing on the wire: nothing starts
            yield
        seen.append(((yield ch.injected), (yield ch.inject_pending), (yield ch.down_total)))
        yield dut.sink.valid.eq(1)
        yield dut.sink.count.eq(2)
        yield dut.sink.data.eq(frame[0] | frame[1] << 64)
        yield dut.sink.ctrl.eq(0b11)
        yield
        yield dut.sink.valid.eq(0)
        hit = []
        for _ in range(40):
            hit.append(((yield ch.a2b.errors.thresholds[3]), (yield ch.a2b.errors.thresholds[2]),
                        (yield ch.b2a.errors.thresholds[3]), (yield ch.a2b.down), (yield ch.inject_pending)))
            yield
        seen.append(((yield ch.injected), (yield ch.inject_pending), (yield ch.down_total)))
        seen.append(hit)

    run_simulation(dut, bench())
    before, after, hit = seen
    assert before == (0, 1, 0)
    top = 2**THRESHOLD_BITS - 1
    faulted = [h[0] == top if kind == "lane" else h[3] == 1 for h in hit]
    assert faulted.index(True) == FAULT_START      # both start the same cycle after the frame's beat
    if kind == "lane":
        assert faulted.count(True) == 20 and after[:2] == (1, 0)
        assert {h[1:4] for h in hit} == {(0, 0, 0)}                 # one lane, one direction, the link up
    else:
        assert faulted.count(True) == 20 and after == (1, 0, 20)
        assert {h[:3] for h in hit} == {(0, 0, 0)}
    assert all(h[4] for h in hit if h[0] == top or h[3])           # pending while the fault lasts


def test_the_link_goes_down_when_asked_for_its_cycles_after_its_delay():
    dut, downs = CHANNEL, []

    def bench():
        ch = dut.channel
        yield ch.down_for.eq(15)
        yield ch.down_after.eq(5)
        yield ch.go_down.eq(1)
        yield
        yield ch.go_down.eq(0)
        for _ in range(40):
            downs.append((yield ch.a2b.down) & (yield ch.b2a.down) & ~(yield ch.a_up) & 1)
            yield
        downs.append((yield ch.down_total))

    run_simulation(dut, bench())
    total = downs.pop()
    assert downs.count(1) == total == 15 and downs.index(1) == 7   # down_after cycles, the write's and the window's own


def test_the_channels_registers_are_the_documented_ones():
    # doc/registers.md lists them (as the sim SoC builds them): width and reset of each.
    channel = SimChannel()
    channel.add_control()
    regs = {c.name: (c.size, getattr(c, "reset", None) if hasattr(c, "storage") else None)
            for c in channel.get_csrs()}
    assert {name: size for name, (size, _) in regs.items()} == {
        "lanes_log2": 2, "block_ps": 16, "delay": 16, "skew": 64, "loopback": 2, "busy_a2b": 32, "busy_b2a": 32,
        **{f"ber_lane{lane}": THRESHOLD_BITS for lane in range(8)}, "ber_burst": 6, "ber_seed": 32,
        "down_after": 32, "down": 32, "down_total": 32, "blocks_a2b": 48, "blocks_b2a": 48, "hits_a2b": 32,
        "hits_b2a": 32, "lane_losses_a2b": 64, "lane_losses_b2a": 64, "inject_at": 32, "inject_copies": 16,
        "inject_cycles": 32, "inject": 8, "injected": 32,
        "injector": 1 + 6 + 11}
    resets = {c.name: c.storage.reset.value for c in channel.get_csrs() if hasattr(c, "storage")}
    assert {k: resets[k] for k in ("lanes_log2", "block_ps", "delay", "ber_burst", "inject_copies")} == {
        "lanes_log2": 3, "block_ps": 4400, "delay": 10, "ber_burst": 1, "inject_copies": 64}


class MarkedDirection(Direction):
    """Direction with a marker every MARKER_PERIOD cycles (the default is 1024: no test here would meet one)."""
    MARKER_PERIOD = 16

    def make(self, *args, **kwargs):
        return SimChannelDirection(*args, **kwargs, marker_period=self.MARKER_PERIOD, window=6)


def test_markers_in_idle_cycles_cost_no_beat_and_an_overdue_one_a_cycle():
    """Lone beats with idle cycles between them take exactly their serialization and delay with markers every
    16 cycles; back to back at 8 x 25 Gb/s (a beat every cycle, no idle one) a marker takes a beat's cycle
    every 32 (its period, then one more)."""
    sent, arrived = run(8, 15.0, 5, [2, 8, 1, 8, 8, 2, 8] * 6, dut=MarkedDirection(), gaps=3)
    assert [b - a for a, b in zip(sent, arrived)] == [link_model.serialization_cycles(1, 8, 15.0) + 5] * 42
    sent, arrived = run(8, 25.0, 3, [8] * 100, dut=MarkedDirection())
    assert arrived[-1] - arrived[0] == 99 + 3   # 3 markers forced, at 31, 63 and 95 cycles


class AlignedChannel(Module):
    """Both directions with markers every 32 cycles; beat n carries n in every block, so a row is in step when
    its lanes agree."""
    def __init__(self):
        self.submodules.channel = SimChannel(depth=64, marker_period=32, window=12)
        self.submodules.striper = LaneStriper(self.channel.lanes_log2)
        self.sink = self.striper.sink
        self.comb += self.striper.source.connect(self.channel.a_sink)
        for s in self.channel.a_sources + self.channel.b_sources:
            self.comb += s.ready.eq(1)


@pytest.mark.parametrize("kind", ["slip", "lane_down"])
def test_a_lane_that_slips_or_goes_down_is_found_by_lane_and_realigned(kind):
    """Beats every 3 cycles; from the first frame after the arm lane 3 (toward the memory card) loses a word, or
    its words for 40 cycles: the memory card's end loses alignment, counts lane 3, and its rows are in step again
    from the next marker on, every beat sent after it delivered."""
    dut, rows, state = AlignedChannel(), [], {}
    frame, trailer = header(T_RD_REQ, 1, 0x10)[0], 0xF | 1 << 63

    def send():
        yield from arm(dut.channel, kind, lane=3, cycles=40)
        for n in range(1, 120):
            yield dut.sink.valid.eq(1)
            # Beat 19 ends with a trailer, so beat 20 (a request and its trailer) starts a frame: the one found.
            blocks = {19: {7: trailer}, 20: {0: frame, 1: trailer}}.get(n, {})
            yield dut.sink.count.eq(2 if n == 20 else 8)
            yield dut.sink.ctrl.eq(sum(1 << b for b in blocks))
            yield dut.sink.data.eq(sum(blocks.get(b, n) << (64 * b) for b in range(8)))
            yield
            yield dut.sink.valid.eq(0)
            yield
            yield

    def watch():
        ch = dut.channel
        ups = []
        for cycle in range(420):
            if (yield ch.a2b.sources[0].valid):
                rows.append(list((yield [s.data[:64] for s in ch.a2b.sources])))
            ups.append((yield ch.b_up))
            yield
        state["ups"] = ups
        state["losses"] = (yield ch.a2b.aligner.losses), (yield ch.b2a.aligner.losses)

    run_simulation(dut, [send(), watch()])
    assert state["losses"] == (1 << 8 * 3, 0)
    ups = state["ups"]
    assert ups.count(0) > 0 and ups[-1] == 1 and ups.index(0) + ups[ups.index(0):].index(1) < 300
    in_step = [row[0] for row in rows if len(set(row)) == 1]
    assert all(len(set(row)) == 1 for row in rows[len(rows) - 60:])   # in step from the marker on
    assert in_step[-60:] == list(range(60, 120))                      # and every beat from it delivered
    assert in_step[:15] == list(range(1, 16))   # before the fault every beat (a lane down loses those in flight)


class LoopedChannel(Module):
    """The channel's end ports, beats striped into each end's sink; both ends' lane words taken."""
    def __init__(self, marker_period=1024):
        self.submodules.channel = SimChannel(depth=64, marker_period=marker_period, window=1)
        self.submodules.striper_a = LaneStriper(self.channel.lanes_log2)
        self.submodules.striper_b = LaneStriper(self.channel.lanes_log2)
        self.comb += [self.striper_a.source.connect(self.channel.a_sink),
                      self.striper_b.source.connect(self.channel.b_sink)]
        for s in self.channel.a_sources + self.channel.b_sources:
            self.comb += s.ready.eq(1)


@pytest.mark.parametrize("loopback", ["none", "near", "far"])
def test_a_loopback_brings_the_compute_cards_beat_back_near_at_once_far_after_both_ways(loopback):
    """Both ends send a beat of 8 blocks (8 lanes at 15 Gb/s: a block time, 2 cycles out of the serializer;
    delay 10). None: each end gets the other's, 12 cycles on. Near: the compute card gets its own as it leaves
    its serializer (2 cycles), the memory card gets it too, its own is dropped. Far: the compute card gets its
    own back after both directions (24), the memory card gets nothing and its beat waits."""
    dut, got = LoopedChannel(), {"a": [], "b": []}

    def bench():
        ch = dut.channel
        yield ch.loopback.eq(LOOPBACKS[loopback])
        for _ in range(40):   # the channel's first markers, in idle cycles, pass
            yield
        for end, data in (("a", 0xA), ("b", 0xB)):
            striper = getattr(dut, f"striper_{end}")
            yield striper.sink.valid.eq(1)
            yield striper.sink.count.eq(8)
            yield striper.sink.data.eq(sum(data << (64 * b) for b in range(8)))
        yield
        sent = 41
        yield dut.striper_a.sink.valid.eq(0)
        b_taken = (yield dut.striper_b.sink.ready)
        yield dut.striper_b.sink.valid.eq(0)
        for cycle in range(sent, sent + 40):
            for end in ("a", "b"):
                sources = getattr(ch, f"{end}_sources")
                if (yield sources[0].valid):
                    got[end].append((cycle - sent, list((yield [s.data[:64] for s in sources]))))
            yield
        got["b_taken"] = b_taken

    run_simulation(dut, bench())
    a, b = [0xA] * 8, [0xB] * 8
    assert {"none": ([(12, b)], [(12, a)], 1), "near": ([(2, a)], [(12, a)], 1),
            "far": ([(24, a)], [], 0)}[loopback] == (got["a"], got["b"], got["b_taken"])


def test_a_near_loopback_drops_what_the_memory_card_sent_and_leaves_its_direction_as_it_was():
    """A beat of the memory card's on the fiber when near loopback starts is dropped, not delivered when it
    ends; the direction's markers meanwhile (one every 4 cycles: 100, more than the 64-deep delay lines hold)
    leave no backlog: back to none, the memory card's next beat takes its usual 12 cycles."""
    dut, arrived = LoopedChannel(marker_period=4), []

    def send_b(data):
        yield dut.striper_b.sink.valid.eq(1)
        yield dut.striper_b.sink.count.eq(8)
        yield dut.striper_b.sink.data.eq(sum(data << (64 * b) for b in range(8)))
        yield
        yield dut.striper_b.sink.valid.eq(0)

    def bench():
        ch = dut.channel
        yield from send_b(0xB)
        yield ch.loopback.eq(LOOPBACKS["near"])
        for cycle in range(420):
            yield ch.loopback.eq(LOOPBACKS["near"] if cycle < 400 else LOOPBACKS["none"])
            if (yield ch.a_sources[0].valid):
                arrived.append(("near", (yield ch.a_sources[0].data[:64])))
            yield
        yield from send_b(0xC)
        for cycle in range(40):
            if (yield ch.a_sources[0].valid):
                arrived.append((cycle, (yield ch.a_sources[0].data[:64])))
            yield

    run_simulation(dut, bench())
    assert arrived == [(12, 0xC)]   # as with no loopback before it


def test_every_lane_carries_a_marker_every_1024_cycles_of_an_idle_channel():
    dut, markers = CHANNEL, []

    def bench():
        line = dut.channel.a2b.lane0.sink
        for cycle in range(2100):
            if (yield line.valid) and (yield line.marker):
                markers.append(cycle)
            yield

    run_simulation(dut, bench())
    assert [b - a for a, b in zip(markers, markers[1:])] == [1024] * (len(markers) - 1) and len(markers) == 2


def test_a_frame_faulted_each_way_takes_its_time_on_the_lanes_and_both_are_counted():
    """A `crc` fault toward the memory card, then one toward the compute card, each on a frame of 2 blocks (a
    request and its trailer) over 8 lanes: the injector's copy takes one block time on the lanes, as the frame
    would (it arrives FAULTED_ARRIVAL cycles after its beat), and `injected` counts both."""
    dut, arrivals, counts = LoopedChannel(), [], []
    frame = header(T_RD_REQ, 1, 0x10)[0] | (0xF | 1 << 63) << 64

    def bench():
        ch = dut.channel
        for toward, end, striper in ((0, "b", dut.striper_a), (1, "a", dut.striper_b)):
            yield ch.inject_toward.eq(toward)
            yield from arm(ch, "crc", lane=0, cycles=0)
            yield striper.sink.valid.eq(1)
            yield striper.sink.count.eq(2)
            yield striper.sink.ctrl.eq(0b11)
            yield striper.sink.data.eq(frame)
            yield
            yield striper.sink.valid.eq(0)
            for cycle in range(60):
                if (yield getattr(ch, f"{end}_sources")[0].valid):
                    arrivals.append(cycle)
                yield
            counts.append((yield ch.injected))

    run_simulation(dut, bench())
    assert arrivals == [FAULTED_ARRIVAL] * 2 and counts == [1, 2]
