"""One compute card over two memory cards, the host side (monet.benchmarks.spread; the model itself runs in the
long tier), against a model of the pooled model's console (FakeTwoCards): what it programs (both links, the
compute card's second section on one memory card then the other, its port's range), that it puts them back,
the ratio, and the goal applying only where the memory is the limit."""

import pytest

from monet.benchmarks import AXES, REGISTRY
from monet.benchmarks.spread import SpreadError, path_limit_GBps
from monet.link import model as link_model
from monet.soc.facts import LINE_BYTES, TARGET_REMOTE0, TARGET_REMOTE1

SECTION = 1 << 20
SECOND_LINK = 4


class FakeTwoCards:
    """The compute card's BFCT, its port's range on the first memory card, the links it configured (by card),
    and its benchmark block: each memory card serves `rate` lines a cycle, the run's accesses split between the
    cards its two sections reach (random addresses: half each), so a run lasts as long as the busier card's
    share."""

    def __init__(self, rate=0.1, second_link=SECOND_LINK):
        self.rate, self.second_link = rate, second_link
        self.bfct = {1: (TARGET_REMOTE0, 1)}
        self.range = (0, 2**36 - 1)
        self.linked, self.runs = [], []
        self.fw = self

    def facts(self):
        return {"traffic_cards": 3, "second_link": self.second_link, "section_bytes": SECTION}

    def link(self, card=None, **settings):
        self.linked.append(card)
        return dict(settings)

    def set_bfct(self, idx, card=None, en=None, r=None, w=None, target=None, base=None):
        assert card is None and (en, r, w) == (1, 1, 1)
        self.bfct[idx] = (target, base)

    def ports(self, port=None, first=None, last=None, **others):
        if port is not None:
            assert port == 0 and isinstance(last, int)
            self.range = (first, last)
        return {"ports": [{"first": self.range[0], "last": self.range[1]}]}

    def pbb(self, op=None, pattern=None, addr=None, span=None, count=None, outstanding=None, seed=None, timeout=None,
            wait=None):
        assert addr == 0 and span == 2 * SECTION and self.range == (0, span // LINE_BYTES - 1)
        cards = {self.bfct[0][0], self.bfct[1][0]}
        assert timeout == 2_000_000 + 64 * count and wait == max(300, count // 50)
        self.runs.append((self.bfct[1], op, count, outstanding))
        return {"timed_out": False, "completed": count, "bus_errors": 0, "cycles": round(count / len(cards) / self.rate)}


def _point(**changes):
    spread = REGISTRY["spread"]
    return spread.full_point({"benchmark": "spread", **{a.name: a.default for a in AXES}, "memory": "ddr4",
                              **{p.name: p.default for p in spread.params}, **changes})


def test_two_memory_cards_take_the_second_section_and_everything_is_put_back(capsys):
    spread, cards = REGISTRY["spread"], FakeTwoCards(rate=0.1)
    point = _point(count=2000)
    result = spread.run(cards, point)
    assert cards.linked == [0, SECOND_LINK]
    assert [run[0] for run in cards.runs] == [(TARGET_REMOTE0, 1), (TARGET_REMOTE1, 0)]
    assert all(run[1:] == ("mixed", 2000, 256) for run in cards.runs)
    assert cards.bfct == {0: (TARGET_REMOTE0, 0), 1: (TARGET_REMOTE0, 1)} and cards.range == (0, 2**36 - 1)
    one = 0.1 * LINE_BYTES / (link_model.CLK_PS * 1e-12) / 1e9       # 1.6 GB/s
    assert result["one"]["bandwidth_GBps"] == pytest.approx(one) and result["ratio"] == pytest.approx(2)
    verdicts = spread.verdicts(point, result)
    assert len(verdicts) == 1 and verdicts[0].passed and "not such a point" not in verdicts[0].text
    spread.show(point, result)
    assert "2.00x" in capsys.readouterr().out


def test_the_goal_applies_only_where_the_memory_is_the_limit():
    spread = REGISTRY["spread"]
    point = _point(op="read", count=2000)
    # The path over two links: ReMAT's line a cycle (16 GB/s), below two links' reads.
    limit = path_limit_GBps("read", 8, 15.0)
    assert limit == pytest.approx(min(16.0, 2 * link_model.payload_capacity_GBps(8, 15.0)))
    assert path_limit_GBps("mixed", 8, 15.0) == pytest.approx(16.0)
    slow = spread.run(FakeTwoCards(rate=0.1), point)                  # 1.6 GB/s a card: the memory the limit
    slow["ratio"] = 1.5
    assert not spread.verdicts(point, slow)[0].passed
    fast = spread.run(FakeTwoCards(rate=0.6), point)                  # 9.6 GB/s a card: 1.8x is past the path
    fast["ratio"] = 1.5
    verdict, = spread.verdicts(point, fast)
    assert verdict.passed and "not such a point" in verdict.text


def test_a_soc_without_a_second_link_is_refused_and_so_is_hmc():
    with pytest.raises(SpreadError, match="second link"):
        REGISTRY["spread"].run(FakeTwoCards(second_link=0), _point())
    assert "SRAM and DDR4" in REGISTRY["spread"].refuse_point(_point(memory="hmc"))


def test_one_memory_card_alone_is_the_baseline_and_the_report_shows_both_kinds_of_point(capsys, tmp_path):
    spread = REGISTRY["spread"]
    one_point, two_point = _point(count=2000, memory_cards=1), _point(count=2000)
    cards = FakeTwoCards(rate=0.1)
    alone = spread.run(cards, one_point)
    assert [run[0] for run in cards.runs] == [(TARGET_REMOTE0, 1)]
    assert alone["two"] is None and alone["ratio"] is None and spread.verdicts(one_point, alone) == []
    spread.show(one_point, alone)
    assert "x; the compute card's path" not in capsys.readouterr().out
    both = spread.run(FakeTwoCards(rate=0.1), two_point)
    (title, header, rows, *_), = spread.sections([{"point": one_point, "result": alone},
                                                  {"point": two_point, "result": both}], tmp_path)
    assert header[2] == "memory cards"
    assert rows == [["mixed", "random", 1, "1.60", "-", "-", "-"], ["mixed", "random", 2, "1.60", "3.20", "2.00", "yes"]]


def test_the_memory_cards_axis_takes_1_and_2_and_a_point_costs_a_run_a_card():
    spread = REGISTRY["spread"]
    assert spread.param["memory_cards"].check(1) and spread.param["memory_cards"].check(2)
    assert not spread.param["memory_cards"].check(3) and spread.param["count"].check(2**24)
    assert spread.sim_cycles(_point(count=2000, memory_cards=1)) == 8 * 2000 + 40_000
    assert spread.sim_cycles(_point(count=2000)) == 2 * 8 * 2000 + 40_000
