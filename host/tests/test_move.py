"""The memory move's host side (monet.benchmarks.move; the model itself runs in the long tier), against a model
of the pooled model's console (FakeSwitchedPool): what it programs (the moved card's section and pattern, the
compute card's copy sections onto both memory cards, the switch's set-up time), the port it moves the card to,
its figures and verdicts, that it puts the card back, and the verdict failing when the copy or the remap is
broken on purpose."""

import pytest

from monet.benchmarks import AXES, REGISTRY
from monet.benchmarks.move import DST, HOME, MOVED, NEW, SRC, MoveError, every_read_right, free_port
from monet.soc.facts import OCS_SETUP_S, SWITCH_COMPRESSION, TARGET_REMOTE0, TARGET_REMOTE1

SECTION = 1 << 20


class FakeSwitchedPool:
    """Two memory cards (lines: {line: seed}), each card's BFCT (window section -> (target, base)), the switch
    (cards 0..3 on ports 0..3, the compute card's second link, card 4, on port 4, port 5 free), and `move` as the
    firmware does it: the copy through the compute card's BFCT (target 0 the first memory card, 2 the second),
    the moved card's BFCT remapped and its circuit moved; its reads go to the memory card its circuit reaches.
    `copy` or `remap` off: that step broken on purpose."""

    def __init__(self, traffic_cards=3, copy=True, remap=True):
        self.traffic_cards, self.copy, self.remap = traffic_cards, copy, remap
        self.memory = [{}, {}]
        self.bfct = [{} for _ in range(traffic_cards + 1)]
        self.circuits, self.setup, self.moves = [0, 1, 2, 3, 4], 6250, []
        self.ranges = [(0, 2**36 - 1)] * 6
        self.calls = []   # (command, its settings), in order
        self.fw = self

    def facts(self):
        return {"traffic_cards": self.traffic_cards, "section_bytes": SECTION}

    def link(self, card=None, **settings):
        self.calls.append(("link", card))
        return dict(settings)

    def set_bfct(self, idx, card=None, en=None, r=None, w=None, target=None, base=None):
        self.calls.append(("bfct", card or 0, idx, en, r, w))
        self.bfct[card or 0][idx] = (target, base) if en else None

    def ports(self, port=None, first=None, last=None, **others):
        if port is not None:
            self.calls.append(("ports", port, first, last))
            self.ranges[port] = (first, last)
        return {"ports": [{"first": first, "last": last} for first, last in self.ranges]}

    def _memory(self, card, target):
        """The memory card a card's target reaches: the compute card's by target, a traffic card's by its circuit."""
        if card == 0:
            return 0 if target == TARGET_REMOTE0 else 1
        return 0 if self.circuits[card] < 4 else 1

    def _line(self, card, addr):
        target, base = self.bfct[card][addr // SECTION]
        return self._memory(card, target), (base * SECTION + addr % SECTION) // 64

    def pbb(self, card=None, op=None, pattern=None, addr=None, span=None, count=None, outstanding=None, seed=None,
            check=None):
        self.calls.append(("pbb", card, op, pattern, addr, span, count, check))
        errors = 0
        for k in range(count):
            memory, line = self._line(card, addr + (k * 64) % span)
            if op == "write":
                self.memory[memory][line] = seed
            elif check and self.memory[memory].get(line) != seed:
                errors += 1
        return {"completed": count, "errors": errors, "bus_errors": 0}

    def switch(self, link=None, port=None, setup=None):
        self.setup = setup if setup is not None else self.setup
        if link is not None:
            self.circuits[link] = port
        return {"setup": self.setup, "ports": 6, "switches": 0, "refused": 0,
                "circuits": [{"port": p, "lit": True} for p in self.circuits]}

    def move(self, card, port, section, base, src, dst, bytes, op, pattern, span, count, outstanding, seed, check,
             timeout, wait, addr=0):
        assert timeout == 200_000_000 and wait == max(600, count // 20)
        self.moves.append({"card": card, "port": port, "section": section, "base": base, "src": src, "dst": dst,
                           "bytes": bytes, "count": count, "outstanding": outstanding, "check": check})
        for offset in range(0, bytes, 64) if self.copy else ():
            memory, line = self._line(0, src + offset)
            to_memory, to_line = self._line(0, dst + offset)
            self.memory[to_memory][to_line] = self.memory[memory].get(line)
        before = self.pbb(card=card, op="read", addr=addr, span=span, count=count // 2, seed=seed, check=check)
        if self.remap:
            self.bfct[card][section] = (self.bfct[card][section][0], base)
        self.circuits[card] = port
        after = self.pbb(card=card, op="read", addr=addr, span=span, count=count - count // 2, seed=seed, check=check)
        return {"stuck": None, "copy_cycles": 120 * bytes // 64, "drain_cycles": 300, "switch_cycles": self.setup + 1,
                "held_cycles": self.setup + 400, "setup": self.setup,
                "run": {"completed": count, "cycles": 10**7, "errors": before["errors"] + after["errors"],
                        "bus_errors": 0, "lat_min": 60, "lat_max": self.setup + 500, "lat_sum": 60 * count}}


def _point(**changes):
    move = REGISTRY["move"]
    return move.full_point({"benchmark": "move", **{a.name: a.default for a in AXES}, "memory": "ddr4",
                            **{p.name: p.default for p in move.params}, **changes})


def test_a_move_copies_remaps_and_switches_and_every_read_is_right(capsys):
    move, pool = REGISTRY["move"], FakeSwitchedPool()
    point = _point(span=4096, count=2000)
    result = move.run(pool, point)
    # The moved card's section on the first memory card, the compute card's copy sections onto both.
    assert pool.bfct[MOVED][0] == (TARGET_REMOTE0, HOME)
    assert pool.moves == [{"card": MOVED, "port": 5, "section": 0, "base": NEW, "src": SRC * SECTION,
                           "dst": DST * SECTION, "bytes": 4096, "count": 2000, "outstanding": 8, "check": 1}]
    assert pool.bfct[0][SRC] is None and pool.bfct[0][DST] is None      # put back: the copy sections off ...
    assert pool.circuits[MOVED] == MOVED                                  # ... the card on its own port ...
    assert pool.ranges == [(0, 2**36 - 1)] * 6                            # ... and every port's range as it was
    assert pool.memory[1] == {NEW * SECTION // 64 + k: 21 for k in range(64)}
    # The set-up time: the OCS's 25 ms compressed 1000 times, in 4 ns cycles.
    assert pool.setup == round(OCS_SETUP_S / 4e-9 / SWITCH_COMPRESSION) == 6250
    assert result["move_us"] == pytest.approx((120 * 64 + 6250 + 400) * 4e-3)
    assert result["move_real_ms"] == pytest.approx((120 * 64 + 400) * 4e-6 + 25)
    assert result["copy_GBps"] == pytest.approx(64 / (120 * 4e-9) / 1e9)
    verdicts = move.verdicts(point, result)
    assert all(v.passed for v in verdicts) and len(verdicts) == 3 and every_read_right(result)
    move.show(point, result)
    out = capsys.readouterr().out
    assert "with the real switch's set-up" in out and "25 ms real / 1000" in out
    assert "once taken took 27.00 us at most" in out                      # lat_max: 6,750 cycles


@pytest.mark.parametrize("broken", ["copy", "remap"])
def test_a_move_without_its_copy_or_its_remap_fails_the_reads_verdict(broken):
    move = REGISTRY["move"]
    point = _point(span=4096, count=2000)
    result = move.run(FakeSwitchedPool(**{broken: False}), point)
    failed = [v for v in move.verdicts(point, result) if not v.passed]
    assert [v.gates for v in failed] == [True] and failed[0].text.startswith("every read right")
    assert result["run"]["errors"] > 0


def test_the_card_moves_to_the_port_no_circuit_holds_and_a_soc_without_the_switch_is_refused():
    assert free_port({"ports": 6, "circuits": [{"port": p} for p in (0, 1, 2, 3, 4)]}) == 5
    with pytest.raises(MoveError, match="no port to move a card to"):
        free_port({"ports": 2, "circuits": [{"port": 0}, {"port": 1}]})
    with pytest.raises(MoveError, match="needs the pooled model's traffic cards and circuit switch"):
        REGISTRY["move"].run(FakeSwitchedPool(traffic_cards=0), _point())
    with pytest.raises(MoveError, match="is more than a section"):
        REGISTRY["move"].run(FakeSwitchedPool(), _point(span=2 << 20))
    move = REGISTRY["move"]
    assert "not whole lines" in move.refuse_point(_point(span=100))
    assert "memory sram or ddr4" in move.refuse_point(_point(memory="hmc"))


def test_what_a_move_programs_the_cards_it_links_and_the_reads_after_it():
    pool = FakeSwitchedPool()
    REGISTRY["move"].run(pool, _point(span=4096, count=2000))
    assert [c[1] for c in pool.calls if c[0] == "link"] == [0, MOVED]
    # The compute card's port reaches the moved card's section (the copy's source), set before the copy ...
    assert ("ports", 0, 0, (HOME + 1) * SECTION // 64 - 1) in pool.calls
    # ... its copy sections read and written, on both memory cards; put back off afterwards.
    copy_sections = [c[3:] for c in pool.calls if c[:2] == ("bfct", 0) and c[2] in (SRC, DST)]
    assert copy_sections == [(1, 1, 1)] * 2 + [(0, 0, 0)] * 2
    # The moved card's lines written in order, then all read back once after the move.
    pbbs = [c[1:] for c in pool.calls if c[0] == "pbb"]
    assert pbbs[0] == (MOVED, "write", "seq", 0, 4096, 64, None) and pbbs[-1] == (MOVED, "read", "seq", 0, 4096, 64, 1)


def test_the_port_a_card_moves_to_is_the_last_free_one_and_the_cost_counts_copy_reads_and_set_up():
    assert free_port({"ports": 6, "circuits": [{"port": p} for p in (0, 1, 2, 3)]}) == 5
    move = REGISTRY["move"]
    point = _point(span=4096, count=2000, outstanding=8, compression=1000)
    assert move.sim_cycles(point) == pytest.approx(200 * 64 + 40 * 2000 // 8 + 6250)
    assert move.param["span"].default == 64 << 10 and not move.param["count"].check(99)
    assert not move.param["count"].check(100.5) and move.param["compression"].check(10**6)
    assert not move.param["compression"].check(10**6 + 1) and move.param["span"].check(1 << 20)
    assert move.param["outstanding"].check(1) and not move.param["outstanding"].check(0)


def test_reads_that_end_with_the_move_did_not_go_on_through_it():
    class EndsWithTheMove(FakeSwitchedPool):
        def move(self, **kw):
            answer = super().move(**kw)
            answer["run"]["cycles"] = answer["copy_cycles"] + answer["held_cycles"]
            return answer
    move = REGISTRY["move"]
    point = _point(span=4096, count=2000)
    result = move.run(EndsWithTheMove(), point)
    assert not result["run_lasted"] and not move.verdicts(point, result)[1].passed


def test_the_report_has_a_row_a_move_and_nothing_without_one(tmp_path):
    move = REGISTRY["move"]
    point = _point(span=4096, count=2000)
    result = move.run(FakeSwitchedPool(), point)
    assert move.sections([{"point": {"benchmark": "pool"}, "result": {}}], tmp_path) == []
    (title, header, rows, *_), = move.sections([{"point": point, "result": result}], tmp_path)
    assert rows == [[4096, "8", 2000, "0.133", "57.3", "25.03", "26.6", "yes"]]
