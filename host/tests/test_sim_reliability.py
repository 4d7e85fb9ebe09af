"""Link reliability end to end on the sim: bit errors, a link-down interval, chosen faults and PRBS, with our
firmware."""

import json
import subprocess
import sys

import pytest

from monet.benchmarks import bandwidth as bandwidth_bench
from monet.benchmarks import ber as ber_bench
from monet.benchmarks import fault as fault_bench
from monet.benchmarks import memtest as memtest_bench
from monet.benchmarks import prbs as prbs_bench
from monet.link.settings import LinkSettings
from monet.sim import link_setup


def test_counters_are_read_once_two_answers_in_a_row_agree():
    # A nak that lands between the firmware's reads of `replays` and `nak_replays` made them disagree once.
    answers = iter([{"replays": 622, "nak_replays": 623}, {"replays": 623, "nak_replays": 624},
                    {"replays": 624, "nak_replays": 624}, {"replays": 624, "nak_replays": 624}])
    assert link_setup.settled(lambda: next(answers)) == {"replays": 624, "nak_replays": 624}
    moving = iter(range(10))
    with pytest.raises(RuntimeError, match="still moved after 3 reads"):
        link_setup.settled(lambda: next(moving), reads=3)


@pytest.mark.parametrize("lanes,burst", [(8, 1), (2, 8)])
def test_benchmark_block_gets_every_byte_right_at_ber_1e_5(sim, lanes, burst):
    r = ber_bench.measure(sim, 1e-5, LinkSettings(36, lanes, 15.0), bits=2e7, burst=burst, seed=lanes + burst,
                          reference_count=3000)
    assert r["error_events"] > 20 and r["crc_errors"] > 0 and r["replays"] > 0   # errors did hit frames
    assert r["corrupted_words"] == 0 and r["bus_errors"] == 0                    # none got through
    assert r["accesses"]["read"] == r["accesses"]["write"] >= 2000
    assert 0 < r["efficiency_vs_error_free"] < 1
    for end in r["ends"].values():   # replays by cause; no beat or transaction lost to an overflow
        assert end["replays"] == end["nak_replays"] + end["timeouts"] > 0 and end["reinits"] == 0
        assert end["deframer_overflow"] == end["commit_overflow"] == 0 and end["repair_missed"] == 0
    # One flipped bit an error: most dropped frames name their bit (the rest broke: a header's or trailer's
    # type, a length, a ctrl flag); eight flipped bits in a row never look like one.
    if burst == 1:
        assert r["repairable"] >= 0.8 * r["crc_errors"]
    else:
        assert r["repairable"] == 0


def test_selective_repeat_keeps_every_byte_and_resends_a_fraction_of_go_back_n(sim):
    runs = {replay: ber_bench.measure(sim, 1e-5, LinkSettings(36, 8, 15.0), bits=2e7, seed=3, reference_count=3000,
                                      replay=replay) for replay in ("gbn", "sr", "sr-repair")}
    gbn, sr, repair = runs["gbn"], runs["sr"], runs["sr-repair"]
    for r in runs.values():
        assert r["crc_errors"] > 20 and r["corrupted_words"] == 0 and r["bus_errors"] == 0
    assert gbn["held"] == gbn["resends"] == 0 and sr["resends"] > 0 and sr["held"] > 0
    # Only the damaged frames went again: far fewer bytes than go-back-N's windows.
    assert sr["replayed_bytes"] < gbn["replayed_bytes"] / 2
    # Repaired from their CRC, most damaged frames were not resent at all; without repair, none is repaired.
    assert gbn["repaired"] == sr["repaired"] == 0 and repair["repaired"] >= 0.5 * repair["crc_errors"]
    assert repair["resends"] < sr["resends"] / 2
    assert sim.fw.retry()["repair"] == 1 and repair["replay"] == "sr-repair"   # the fixture puts them back


@pytest.mark.parametrize("window, nbytes", [("uncached", 32 * 1024), ("cached", 16 * 1024)])
def test_cpu_memtest_passes_under_errors(sim, window, nbytes):
    ber_bench.set_errors(sim, 1e-5, seed=5)
    before = sim.fw.retry()
    result = memtest_bench.measure(sim, nbytes, 9, LinkSettings(), window)
    after = sim.fw.retry()
    assert result["errors"] == 0 and result["faults"] == 0
    assert after["compute"]["crc_errors"] + after["memory"]["crc_errors"] > \
        before["compute"]["crc_errors"] + before["memory"]["crc_errors"]


def test_link_down_for_10_us_in_the_middle_of_traffic(sim):
    link = link_setup.configure_link(sim, LinkSettings(36, 8, 15.0))
    link_setup.configure_retry(sim, "ours", link["delay"])
    bandwidth_bench.measure(sim, "write", 128, LinkSettings(36, 8, 15.0), count=20000, seed=3)
    before = sim.fw.retry()
    sim.fw.errinj(down=2500, down_after=8000)      # 10 us at 250 MHz, 32 us into the read run
    r = bandwidth_bench.measure(sim, "read", 128, LinkSettings(36, 8, 15.0), count=20000, seed=3, check=True)
    after = sim.fw.retry()
    assert r["transactions"] == 20000 and r["errors"] == 0 and r["bus_errors"] == 0
    for end in ("compute", "memory"):
        assert after[end]["reinits"] == before[end]["reinits"] + 1
        assert after[end]["down_cycles"] - before[end]["down_cycles"] == 2500
    assert after["compute"]["replays"] + after["memory"]["replays"] > \
        before["compute"]["replays"] + before["memory"]["replays"]
    assert sim.fw.info()["ident"]                    # the firmware still answers


FAULTS = ([(kind, "a2b", "gbn") for kind in fault_bench.KINDS]
          + [(kind, "b2a", "gbn") for kind in ("truncated", "duplicate", "skip", "flood")]
          + [("skip", "a2b", "sr"), ("type", "b2a", "sr"), ("slip", "b2a", "sr")])


@pytest.mark.parametrize("kind,toward,replay", FAULTS, ids=["-".join(f) for f in FAULTS])
def test_a_chosen_fault_is_caught_where_it_should_be_and_nothing_wrong_is_delivered(sim, kind, toward, replay):
    # Lane 5 for the lanes' alignment (a request's 2 blocks travel on lanes 0 and 1, so garbling lane 5 would hit
    # nothing; a slip or a lane down loses its words all the same).
    lane = 5 if kind in fault_bench.ALIGNMENT_FAULTS else 0
    r = fault_bench.measure(sim, kind, LinkSettings(36, 8, 15.0), toward=toward, replay=replay, nbytes=1024, lane=lane)
    assert r["applied"]
    # A lane that slips or loses lock is found by lane, at the end that receives it, and nowhere else.
    found = [1 if kind in fault_bench.ALIGNMENT_FAULTS and d == toward and i == 5 else 0 for d in ("a2b", "b2a")
             for i in range(8)]
    assert r["lane_losses"]["a2b"] + r["lane_losses"]["b2a"] == found
    moved = r["detector"]["moved"]
    assert set(moved) == ({"compute", "memory"} if kind == "down" else {fault_bench.RECEIVER[toward]})
    assert all(n > 0 for n in moved.values()), r["ends"]
    # Every access came back right, once: no wrong word, no bus error, the memory card served what the same
    # runs made without the fault (a duplicate request served twice, an unknown one answered with an error,
    # would show here).
    assert r["corrupted_words"] == r["bus_errors"] == 0
    assert r["memory"] == r["memory_expected"]
    assert r["runs"]["during"]["transactions"] == r["runs"]["after"]["transactions"] == 1024 // 64
    if kind in ("type", "truncated", "crc"):
        assert r["frame"]["blocks"] == (2 if toward == "a2b" else 10)   # a request, or a read's answer
    assert sim.fw.inject()["pending"] == 0


@pytest.mark.parametrize("lanes,ber", [(8, 1e-4), (4, 3e-5)])
def test_prbs_measures_the_injected_ber(sim, lanes, ber):
    link_setup.configure_link(sim, LinkSettings(8, lanes, 15.0))
    ber_bench.set_errors(sim, ber, seed=lanes)
    # A 95 % interval misses the true rate 1 time in 20 by design, and the error pattern a seed gives shifts
    # with the cycles between the seed's load and the run (firmware timing): a fresh-clone run saw 333 errors
    # where 290 were expected (+2.5 sigma). 99.9 % intervals keep the check's power without that flakiness;
    # over 24 seeds the measured rate averaged 1.006 x the injected one.
    r = prbs_bench.measure(sim, cycles=40000, confidence=0.999)
    for direction in ("a2b", "b2a"):
        d = r[direction]
        assert d["bits"] > 5e6 and d["relocks"] == 0
        assert d["ber_low"] <= ber <= d["ber_high"], d
    # The link carries traffic again afterwards.
    ber_bench.set_errors(sim, 0.0)
    assert bandwidth_bench.measure(sim, "read", 64, LinkSettings(8, lanes, 15.0), count=500)["transactions"] == 500


def test_a_loopback_brings_the_compute_cards_words_back_with_no_errors_near_and_both_ways_errors_far(sim):
    """Near: from inside the compute card's PHY, so the wire's errors never meet them; far: sent back by the
    memory card's PHY, so they cross both directions' errors (twice the rate). Only the compute card sends."""
    link_setup.configure_link(sim, LinkSettings(8, 8, 15.0))
    ber_bench.set_errors(sim, 1e-4, seed=3)
    near = prbs_bench.measure(sim, cycles=40000, confidence=0.999, loopback="near")
    far = prbs_bench.measure(sim, cycles=40000, confidence=0.999, loopback="far")
    ber_bench.set_errors(sim, 0.0)
    assert near["loop"]["bits"] > 5e6 and near["loop"]["errors"] == 0
    assert far["loop"]["bits"] > 5e6 and far["loop"]["ber_low"] <= 2e-4 <= far["loop"]["ber_high"], far["loop"]
    assert far["loop"]["relocks"] == near["loop"]["relocks"] == 0
    # The loop is undone: the link carries traffic again.
    assert bandwidth_bench.measure(sim, "read", 64, LinkSettings(8, 8, 15.0), count=200)["transactions"] == 200


def test_ber_cli_prints_the_figures_asked_for(sim_build):
    # At 8 m no target and no model check gate the exit status: 1e7 bits are too few for their margins (at 36 m
    # go-back-N's check against its model, within 2 points, failed once on a fresh clone).
    out = subprocess.run([sys.executable, "-m", "monet.cli", "bench", "ber", "--ber", "1e-6", "--distance", "8",
                          "--lanes", "8", "--rate", "15", "--bits", "1e7", "--json"],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    for key in ("bandwidth_GBps", "efficiency_vs_error_free", "replays", "corrupted_words", "bits", "predicted",
                "link", "ber", "distance_m", "lanes", "rate_gbps", "profile", "link_counters"):
        assert key in r
    # The counters at the run's end, both runs and the error-free reference: at least the runs' own.
    for end in ("compute", "memory"):
        assert r["link_counters"][end]["replays"] >= r["ends"][end]["replays"]
        assert r["link_counters"][end]["commit_overflow"] == 0
    assert r["link_counters"]["compute"]["replays"] + r["link_counters"]["memory"]["replays"] > 0
    # Bit errors leave the lanes aligned: no loss at either end.
    assert [r["link_counters"][end]["lane_losses"] for end in ("compute", "memory")] == [[0] * 8] * 2
    assert r["corrupted_words"] == 0 and r["ber"] == 1e-6 and r["profile"] == "ours"


def test_a_dead_link_ends_accesses_with_a_bus_error_and_the_cpu_goes_on(sim):
    sim.fw.wr(addr=0x1040, val=0x5a5a1234)
    sim.fw.retry(request_timeout=20000)
    sim.fw.errinj(down=300000)                   # 1.2 ms: far longer than the request timeout
    dead = sim.fw.rd(addr=0x1040)
    assert dead["fault"] and dead["fault_kind"] == 6 and dead["val"] == 0xFFFFFFFF
    assert sim.fw.retry()["request_timeouts"] >= 1
    # Once the link is back, the same address reads right (the late answer to the first read was dropped).
    for _ in range(100):
        answer = sim.fw.rd(addr=0x1040)
        if not answer["fault"]:
            break
    assert not answer["fault"] and answer["val"] == 0x5A5A1234
    assert sim.fw.retry()["compute"]["reinits"] >= 1


def test_credits_bound_the_requests_toward_the_memory_card(sim):
    free = bandwidth_bench.measure(sim, "read", 128, LinkSettings(36, 8, 15.0), count=4000)
    sim.fw.retry(credits=16)     # the smallest limit: one credit's requests
    before = sim.fw.retry()["compute"]["credit_stalls"]
    bandwidth_bench.measure(sim, "write", 128, LinkSettings(36, 8, 15.0), count=2000, seed=4)
    held = bandwidth_bench.measure(sim, "read", 128, LinkSettings(36, 8, 15.0), count=2000, seed=4, check=True)
    stalls = sim.fw.retry()["compute"]["credit_stalls"] - before
    assert held["errors"] == 0 and held["transactions"] == 2000 and stalls > 0
    # Sixteen requests per credit round trip instead of the whole tag pool.
    assert held["bandwidth_GBps"] < free["bandwidth_GBps"] / 4
