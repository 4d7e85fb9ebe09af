"""The pooled model's host side (monet.benchmarks.pool; the model itself runs in the long tier): Jain's index,
each share against its weight, the weights' parameter, what a pool point refuses, that a campaign puts the
pool benchmark's points on the pooled model and nobody else's, and the benchmark's run against a model of the
pooled card's console (FakePooledCard): what it programs, what it measures, its verdicts, and isolation's
verdict failing when the ports' range check is broken."""

import re

import pytest

from monet.benchmarks import AXES, REGISTRY
from monet.benchmarks.pool import (PoolError, bandwidth_GBps, isolation, jain_index, latency_shift, measure,
                                   own_sections, parse_weights, pool_run, set_up, weight_errors)
from monet.link.settings import LinkSettings
from monet.soc.facts import TARGET_REMOTE0
from monet.campaign.plan import plan_models, point_key
from monet.sim import POOLED_MODELS


def test_jain_s_index_is_one_for_equals_and_one_over_n_for_one_taking_all():
    assert jain_index([5, 5, 5, 5]) == 1
    assert jain_index([8, 0, 0, 0]) == 0.25
    assert jain_index([3, 1]) == pytest.approx(16 / 20)
    assert jain_index([0, 0]) is None


def test_a_share_is_held_against_its_weight_s_share():
    assert weight_errors([400, 200, 100, 100], [4, 2, 1, 1]) == [0, 0, 0, 0]
    errors = weight_errors([420, 180, 100, 100], [4, 2, 1, 1])
    assert errors[0] == pytest.approx(0.05) and errors[1] == pytest.approx(-0.1) and errors[2] == 0


@pytest.mark.parametrize("text, weights", [("1:1", [1, 1]), ("4:2:1:1", [4, 2, 1, 1]), ("15:1:1", [15, 1, 1])])
def test_weights_are_one_a_requester_of_1_to_15(text, weights):
    assert parse_weights(text) == weights
    assert REGISTRY["pool"].param["weights"].check(text)


def test_equal_weights_are_one_each_for_as_many_requesters():
    assert parse_weights("equal", 3) == [1, 1, 1] and REGISTRY["pool"].param["weights"].check("equal")
    pool = REGISTRY["pool"]
    assert pool.refuse_point(pool.full_point({"memory": "ddr4", "placement": "remote", "requesters": 2,
                                              "weights": "equal"})) is None


@pytest.mark.parametrize("text", ["4", "1:1:1:1:1", "0:1", "16:1", "a:b", "1.5:1"])
def test_other_weights_are_refused(text):
    param = REGISTRY["pool"].param["weights"]
    assert not param.check(text)
    with pytest.raises(Exception, match="accepted: equal, or weights a:b:.. of 1..15, one a requester"):
        param.parse(text)


def test_a_pool_point_needs_one_weight_a_requester_and_a_remote_memory():
    pool = REGISTRY["pool"]
    point = pool.full_point({"memory": "ddr4", "placement": "remote", "requesters": 3, "weights": "1:1:1"})
    assert pool.refuse_point(point) is None
    assert "name 2 requesters, not 3" in pool.refuse_point({**point, "weights": "1:1"})
    assert "memory sram or ddr4, placement remote" in pool.refuse_point({**point, "memory": "hmc"})
    assert "memory sram or ddr4, placement remote" in pool.refuse_point({**point, "placement": "local"})


def test_the_latency_histogram_covers_the_worst_expected():
    assert latency_shift(63) == 0 and latency_shift(64) == 1 and latency_shift(8 * 96) == 4
    assert latency_shift(20) == latency_shift(1) == latency_shift(0) == 0


def test_bandwidth_is_lines_of_64_bytes_over_4_ns_cycles():
    assert bandwidth_GBps(250, 1000) == pytest.approx(4.0, rel=1e-12)


def test_a_card_over_several_sections_reaches_their_lines_alone():
    card = FakePooledCard()
    own_sections(card, 2, card.SECTION, [1, 2, 3])
    lines = card.SECTION // 64
    assert [card.bfct[2][i] for i in range(3)] == [1, 2, 3] and (card.first[2], card.last[2]) == (lines, 4 * lines - 1)
    assert card.entries[2][0] == {"en": 1, "r": 1, "w": 1, "target": TARGET_REMOTE0, "base": 1}


def test_the_cost_grows_with_the_lines_every_card_moves():
    pool = REGISTRY["pool"]
    cost = {(n, r): pool.sim_cycles(_point(count=n, requesters=r)) for n in (4000, 8000) for r in (2, 4)}
    # At most a line a cycle: the alone run's lines and every card's lines together, at least.
    assert cost[8000, 4] - cost[4000, 4] >= 2 * 4000 * 4 and cost[8000, 4] - cost[8000, 2] >= 2 * 8000 * 2
    assert cost[4000, 2] >= 200 * 60 and pool.sim_cycles(_point(count=400, requesters=2)) > 200 * 8 * 60
    assert all(c < 100 * n * r + 10**6 for (n, r), c in cost.items())   # not a hundred cycles a line


def test_a_campaign_puts_pool_points_on_the_pooled_model_only():
    """Whatever the campaign would choose for the others, or a --model given for them."""
    pool = {"benchmark": "pool", "target": "sim", "memory": "ddr4", "requesters": 4, "rep": 0}
    latency = {"benchmark": "latency", "target": "sim", "memory": "ddr4", "rep": 0}
    for model in (None, "full", "ddr4"):
        plan = plan_models([pool, latency], model, log=lambda _: None)
        assert plan[point_key(pool)] == "pooled" and plan[point_key(latency)] in ("ddr4", "full")
    assert list(POOLED_MODELS) == ["pooled"] and REGISTRY["pool"].sim_model == "pooled"


class FakePooledCard:
    """The pooled model as `monet bench pool` drives it through the console, modelled: each card's BFCT (window
    section -> memory card section), each port's share and range, a memory card that serves `rate` lines a cycle
    (`alone_rate` to one requester) split between busy cards by their shares, lone reads that wait behind the
    in-flight limit under load, and the memory card's lines (which seed wrote them) with the ports' range
    check, unless `check_ranges` is off (the check broken on purpose)."""

    SECTION = 1 << 20

    def __init__(self, traffic_cards=3, rate=0.6, alone_rate=0.62, check_ranges=True):
        self.traffic_cards, self.rate, self.alone_rate, self.check_ranges = traffic_cards, rate, alone_rate, check_ranges
        ports = traffic_cards + 1
        self.bfct = [{} for _ in range(ports)]
        self.share, self.first, self.last = [1] * ports, [0] * ports, [2**36 - 1] * ports
        self.refused, self.in_flight, self.lines, self.links = [0] * ports, 512, {}, {}
        self.pools, self.entries, self.runs = [], [{} for _ in range(ports)], []
        self.fw = self

    def facts(self):
        return {"traffic_cards": self.traffic_cards, "section_bytes": self.SECTION}

    def link(self, card=None, **settings):
        self.links[card or 0] = settings
        return dict(settings)

    def set_bfct(self, idx, card=None, en=None, r=None, w=None, target=None, base=None):
        self.bfct[card or 0][idx] = base if en else None
        self.entries[card or 0][idx] = {"en": en, "r": r, "w": w, "target": target, "base": base}

    def ports(self, port=None, share=None, first=None, last=None, hist_shift=None, in_flight=None):
        if port is not None:
            self.share[port] = share if share is not None else self.share[port]
            self.first[port] = first if first is not None else self.first[port]
            self.last[port] = last if last is not None else self.last[port]
        self.in_flight = in_flight or self.in_flight
        return {"in_flight": self.in_flight, "ports": [{"share": s, "refused": n} for s, n in zip(self.share, self.refused)]}

    def _line(self, card, addr):
        """The memory card's line a card's window address reaches, or None (unmapped or refused)."""
        base = self.bfct[card].get(addr // self.SECTION)
        if base is None:
            return None
        line = (base * self.SECTION + addr % self.SECTION) // 64
        if self.check_ranges and not self.first[card] <= line <= self.last[card]:
            self.refused[card] += 1
            return None
        return line

    def pbb(self, card=None, op=None, pattern=None, addr=None, span=None, count=None, outstanding=None, seed=None,
            check=None):
        card, errors, bus_errors = card or 0, 0, 0
        self.runs.append({"card": card, "op": op, "span": span, "count": count, "outstanding": outstanding})
        assert addr % 64 == 0 and span % 64 == 0, "the firmware takes line-aligned runs only"
        for k in range(count):
            line = self._line(card, addr + (k * 64) % span)
            if line is None:
                bus_errors += 1
            elif op == "write":
                self.lines[line] = seed
            elif check and self.lines.get(line) != seed:
                errors += 1
        return {"timed_out": False, "completed": count, "errors": errors, "bus_errors": bus_errors}

    def pool(self, cards, op, pattern, addr, span, count, outstanding, seed, shift, timeout, wait):
        counts = count if isinstance(count, list) else [count] * len(cards)
        outs = outstanding if isinstance(outstanding, list) else [outstanding] * len(cards)
        self.pools.append({"cards": cards, "span": span, "counts": counts, "outstanding": outs, "addr": addr,
                           "timeout": timeout, "seed": seed, "wait": wait})
        busy = [c for c, o in zip(cards, outs) if o > 1]
        rates = {c: (self.alone_rate if len(busy) == 1 else self.rate) * self.share[c] / sum(self.share[b] for b in busy)
                 for c in busy}
        lone = 60 + (4 * self.in_flight if len(busy) > 0 and len(cards) > 1 else 0)
        times = {c: n / rates[c] if c in rates else n * lone for c, n in zip(cards, counts)}
        window = min(times.values())
        window_lines = [0] * (self.traffic_cards + 1)
        for c in cards:
            window_lines[c] = round(rates[c] * window) if c in rates else round(window / lone)
        runs = []
        for c, n, o in zip(cards, counts, outs):
            lat = lone if o == 1 else 300
            hist = [0] * 64
            hist[min(lat >> shift, 63)] = n
            runs.append({"card": c, "count": n, "completed": n, "cycles": round(times[c]), "errors": 0,
                         "bus_errors": 0, "lat_min": lat, "lat_max": lat, "lat_sum": lat * n, "hist": hist})
        return {"timed_out": False, "window_cycles": round(window), "window_lines": window_lines, "runs": runs}


def _point(**changes):
    pool = REGISTRY["pool"]
    return pool.full_point({"benchmark": "pool", **{a.name: a.default for a in AXES}, "memory": "ddr4",
                            **{p.name: p.default for p in pool.params}, **changes})


def test_equal_shares_share_the_card_evenly_and_every_verdict_holds(capsys):
    pool, card = REGISTRY["pool"], FakePooledCard()
    point = _point(count=4000)
    result = pool.run(card, point)
    together = result["together"]
    assert together["counts"] == [4000] * 4 and result["jain_index"] == pytest.approx(1)
    assert result["aggregate_share"] == pytest.approx(0.6 / 0.62, rel=1e-3)
    assert together["aggregate_GBps"] == pytest.approx(0.6 * 64 * 250e6 / 1e9, rel=1e-3)
    assert result["alone"]["sections"] == 4 and card.pools[0]["span"] == 4 * card.SECTION
    assert card.pools[0]["cards"] == [0] and card.pools[1]["cards"] == [0, 1, 2, 3]
    # Card 0 back on its own section after the one-requester run over four.
    assert card.bfct[0][0] == 0 and (card.first[0], card.last[0]) == (0, card.SECTION // 64 - 1)
    assert [card.bfct[c][0] for c in range(4)] == [0, 1, 2, 3] and card.in_flight == 64
    latency = result["latency_ns"]
    assert latency["unloaded"]["p50"] == 60 * 4 and latency["loaded"]["p50"] == (60 + 4 * 64) * 4
    assert result["alone"]["lines"] == 4000 and all(run["addr"] == 0 for run in card.pools)
    # Each run's timeout covers 64 cycles a line of every card beyond the console's 2 million.
    assert all(run["timeout"] == 2_000_000 + 64 * max(run["counts"]) * len(run["cards"]) for run in card.pools)
    # ... and the host waits for its answer at least 300 s, or a second for 50 lines.
    assert all(run["wait"] == max(300, max(run["counts"]) * len(run["cards"]) // 50) for run in card.pools)
    assert max(run["wait"] for run in card.pools) > 300
    # The traffic behind the probes: 200 probes at 8 times their unloaded worst, each card at its weight's share
    # of one requester's rate alone.
    rate = result["alone"]["lines"] / result["alone"]["cycles"]
    assert rate == pytest.approx(0.62, rel=1e-3)
    assert result["probe_traffic_counts"] == [2 * round(200 * 8 * 60 * rate / 3 / 2)] * 3
    verdicts = pool.verdicts(point, result)
    assert all(v.passed for v in verdicts) and len(verdicts) == 5
    pool.show(point, result)
    out = capsys.readouterr().out
    assert "Jain's index 1.000" in out and re.search(r"^all\s+4\s+\d+\s+100%\s+9\.60\s*$", out, re.M)
    assert re.search(r"^0\s+compute\s", out, re.M) and len(re.findall(r"^[123]\s+traffic\s", out, re.M)) == 3
    assert latency["unloaded"]["mean"] == 60 * 4 and all(run["seed"] == 1 for run in card.pools)
    # Isolation's runs: 64 lines of 64 B, eight in flight.
    assert [(r["card"], r["op"], r["span"], r["count"]) for r in card.runs] == [
        (0, "write", 64 * 64, 64), (1, "write", 64 * 64, 64), (0, "read", 64 * 64, 64)]


def test_weights_4_2_1_1_give_counts_and_shares_in_proportion():
    pool, card = REGISTRY["pool"], FakePooledCard()
    result = pool.run(card, _point(count=4000, weights="4:2:1:1"))
    assert result["together"]["counts"] == [4000, 2000, 1000, 1000] and card.share == [4, 2, 1, 1]
    assert max(abs(e) for e in result["weight_errors"]) < 0.01
    assert not any("Jain" in v.text for v in pool.verdicts(_point(weights="4:2:1:1"), result))


def test_a_card_s_writes_into_another_s_section_are_refused_and_change_nothing():
    card = FakePooledCard()
    result = REGISTRY["pool"].run(card, _point(count=400))
    assert result["isolation"] == {"lines": 64, "intruder_bus_errors": 64, "refused": 64, "owner_errors": 0}
    assert card.bfct[1][1] is None        # the intruder's extra section unmapped again


def test_with_the_range_check_broken_the_isolation_verdict_fails():
    pool, card = REGISTRY["pool"], FakePooledCard(check_ranges=False)
    point = _point(count=400)
    result = pool.run(card, point)
    assert result["isolation"]["owner_errors"] == 64 and result["isolation"]["refused"] == 0
    failed = [v for v in pool.verdicts(point, result) if not v.passed]
    assert [v.gates for v in failed] == [True] and failed[0].text.startswith("isolation")


def test_a_card_below_the_goals_fails_them_and_a_soc_without_traffic_cards_is_refused():
    pool = REGISTRY["pool"]
    result = pool.run(FakePooledCard(rate=0.5), _point(count=400))
    failed = [v.text for v in pool.verdicts(_point(), result) if not v.passed]
    assert len(failed) == 1 and failed[0].startswith("aggregate") and "80.6%" in failed[0]
    with pytest.raises(PoolError, match="requesters 4 needs the pooled model's 3 traffic cards; this SoC has 0"):
        pool.run(FakePooledCard(traffic_cards=0), _point())
    with pytest.raises(PoolError, match="this SoC has 2"):
        pool.run(FakePooledCard(traffic_cards=2), _point())


def test_a_run_that_timed_out_or_failed_names_its_cards():
    card = FakePooledCard()
    answer = {"timed_out": True, "runs": []}
    card.pool = lambda **kwargs: answer
    with pytest.raises(RuntimeError, match=r"pool run of cards \[0, 1\]: timed out"):
        pool_run(card, [0, 1], "read", "random", 1 << 20, 100, 8, shift=2)
    answer.update(timed_out=False, runs=[{"card": 1, "count": 100, "completed": 99, "errors": 0, "bus_errors": 0}])
    with pytest.raises(RuntimeError, match=r"cards \[1\] did not complete"):
        pool_run(card, [0, 1], "read", "random", 1 << 20, 100, 8, shift=2)


def test_the_report_section_has_a_row_a_point():
    pool, card = REGISTRY["pool"], FakePooledCard()
    records = [{"point": _point(count=400, weights=w), "result": pool.run(card, _point(count=400, weights=w))}
               for w in ("1:1:1:1", "4:2:1:1")]
    records.append({"point": {"benchmark": "latency"}, "result": {}})
    ((title, header, rows, image, note),) = pool.sections(records, None)
    assert len(rows) == 2 and len(header) == len(rows[0]) and image is None
    assert [row[1:3] for row in rows] == [["round robin", "1:1:1:1"], ["weighted", "4:2:1:1"]]
    assert rows[0][-1] == rows[1][-1] == "yes"
    assert rows[0][9] == "1.000" and rows[0][12] == "1264 / 1264"
    assert rows[0][6] == "9.60" and rows[0][7] == "9.92" and rows[0][8] == "96.7%"
    assert pool.sections(records[2:], None) == []


def test_an_owner_read_back_with_bus_errors_counts_them_as_its_errors():
    card = FakePooledCard()
    set_up(card, LinkSettings.of({"memory": "ddr4"}), 2, [1, 1], 64)
    plain = card.pbb
    card.pbb = lambda **kw: {**plain(**kw), "errors": 2, "bus_errors": 3} if kw["op"] == "read" else plain(**kw)
    assert isolation(card, card.SECTION)["owner_errors"] == 5


def test_without_weights_the_requesters_share_equally():
    card = FakePooledCard()
    result = measure(card, LinkSettings.of({"memory": "ddr4"}), requesters=2, count=400)
    assert result["weights"] == [1, 1] and card.share[:2] == [1, 1]


def test_an_isolation_run_that_stops_short_is_an_error_even_without_a_timeout():
    card = FakePooledCard()
    set_up(card, LinkSettings.of({"memory": "ddr4"}), 2, [1, 1], 64)
    plain = card.pbb
    card.pbb = lambda **kw: {**plain(**kw), "timed_out": False, "completed": kw["count"] - 1}
    with pytest.raises(RuntimeError, match="did not complete"):
        isolation(card, card.SECTION)
