"""The circuit switch (litex/cores/phy/switch.py) on the generated Verilog. Alone, against a model of it cycle by
cycle (random words, readies and statuses both ways): each lit circuit carries its card's lanes to its port and
its port's words back, with its card's status and lane count; what has no lit circuit is dropped; a moved
circuit is dark for its set-up time (at least a cycle) and restarts both ends in its last dark cycle; a port
another card holds, a card or port that does not exist are refused and counted; a circuit taken down goes at
once. A card's link between two memory-card ports' links (one card, so that the model builds in half the time
of two; the switch alone covers several cards): its transactions reach only the port it is on and are answered
from it; a moved circuit is dark for its set-up time, then both ends restart and the card's next transactions
reach the new port once, in order; moved back, the port it left serves it again as a new peer after its own
restart; the links' counters outlive the restart."""

import random

import pytest
from migen import *

from monet.cores.common.layouts import MAX_LANES, T_RD_REQ as RD_REQ, T_RD_RSP as RD_RSP
from monet.cores.link.core import LinkEndpoint
from monet.cores.phy.channel import SimChannel
from monet.cores.phy.codes import NO_CIRCUIT
from monet.cores.phy.switch import CircuitSwitch
from monet.cores.tests.verilog_sim import run_simulation

from .link_responder import send_transactions

FULL = (1 << 64) - 1
CIRCUITS = [0]      # the card on port 0, port 1 free
SETUP = 60


class Top(Module):
    def __init__(self):
        self.submodules.switch = switch = CircuitSwitch(n_cards=1, n_ports=2, circuits=CIRCUITS)
        self.channels, self.cards, self.ports = [], [], []
        for i in range(1):
            channel = SimChannel(depth=64)
            card = LinkEndpoint(channel.lanes_log2)
            self.submodules += channel, card
            self.comb += [card.rx_up.eq(channel.a_up), *card.connect_phy(channel.a_sink, channel.a_sources),
                          *switch.connect_card(i, channel, card)]
            self.channels.append(channel)
            self.cards.append(card)
        for j in range(2):
            port = LinkEndpoint(switch.port_lanes_log2[j])
            self.submodules += port
            self.comb += switch.connect_port(j, port)
            self.ports.append(port)


TOP = Top()


def reads(n, first):
    return [(RD_REQ, t % 64, first + t, FULL, 0) for t in range(n)]


def card_sender(card, batches):
    """Generator: offers each batch (start cycle, transactions) from its start cycle on."""
    cycle = 0
    yield card.sink.valid.eq(0)
    for start, txns in batches:
        while cycle < start:
            yield
            cycle += 1
        yield from send_transactions(card.sink, txns)
        cycle += len(txns)


def port_answerer(j, port, got, cycles):
    """Generator: port j's memory: records each request (laddr, cycle) and answers a read with its line
    address and the port's number."""
    queue = []
    yield port.source.ready.eq(1)
    for cycle in range(cycles):
        if (yield port.source.valid):
            laddr, tag = (yield port.source.laddr), (yield port.source.tag)
            got.append((laddr, cycle))
            queue.append((tag, laddr))
        if (yield port.sink.valid) and (yield port.sink.ready):
            queue.pop(0)
        if queue:
            tag, laddr = queue[0]
            for name, value in (("valid", 1), ("type", RD_RSP), ("tag", tag), ("laddr", laddr), ("mask", FULL),
                                ("data", j << 32 | laddr)):
                yield getattr(port.sink, name).eq(value)
        else:
            yield port.sink.valid.eq(0)
        yield


def values(signals):
    """Generator: the values of `signals`."""
    out = []
    for signal in signals:
        out.append((yield signal))
    return out


def run(commands, batches, cycles=1400):
    """Runs the cards' `batches` ({card: [(start, txns, wait_lit)]}) with the switch's `commands` ({cycle:
    (card, port)}); returns each port's requests, each card's answers (port, laddr, cycle) and the counters."""
    sw = TOP.switch
    at_ports = [[] for _ in TOP.ports]
    at_cards = [[] for _ in TOP.cards]
    seen = {}

    def watch():
        yield sw.setup.eq(SETUP)
        for card in TOP.cards:
            yield card.source.ready.eq(1)
        for cycle in range(cycles):
            yield sw.command.eq(cycle in commands)
            if cycle in commands:
                card, port = commands[cycle]
                yield sw.command_card.eq(card)
                yield sw.command_port.eq(port)
                seen[f"frames_before_{cycle}"] = yield from values(c.deframer.frames for c in TOP.cards)
            for i, card in enumerate(TOP.cards):
                if (yield card.source.valid):
                    data = yield card.source.data
                    at_cards[i].append((data >> 32, data & 0xFFFFFFFF, cycle))
            seen.setdefault("port1_up", []).append((yield sw.port_up) >> 1 & 1)
            seen.setdefault("card0_up", []).append((yield TOP.cards[0].rx_up))
            yield
        seen.update({
            "circuits": (yield from values(sw.circuits)), "lit": (yield sw.lit), "switches": (yield sw.switches),
            "refused": (yield sw.refused), "frames": (yield from values(c.deframer.frames for c in TOP.cards)),
            "reinits": (yield from values(c.reinits for c in TOP.cards)),
        })

    generators = [watch()] + [port_answerer(j, p, at_ports[j], cycles) for j, p in enumerate(TOP.ports)]
    generators += [card_sender(TOP.cards[i], b) for i, b in batches.items()]
    run_simulation(TOP, generators)
    return at_ports, at_cards, seen


def test_a_moved_circuit_lights_after_its_setup_and_the_port_it_left_serves_the_card_again():
    move, back = 100, 220
    first, second, third = reads(12, 0x100), reads(12, 0x200), reads(12, 0x300)
    # The card sends once its new circuit is lit (what a card sends while dark is lost with the restart: the
    # pooled model holds it at its ReMAT).
    batches = {0: [(5, first), (move + SETUP + 2, second), (back + SETUP + 2, third)]}
    commands = {move: (0, 1),             # the card from port 0 to port 1
                back: (0, 0),             # ... and back to port 0, a new peer for it
                back + 2: (1, 1)}         # a card that does not exist: refused
    at_ports, at_cards, seen = run(commands, batches, cycles=520)
    # Each port saw the card's requests while it was on it, once and in order ...
    assert [laddr for laddr, _ in at_ports[0]] == [t[2] for t in first + third]
    assert [laddr for laddr, _ in at_ports[1]] == [t[2] for t in second]
    # ... and the card's answers came from the port it was on.
    assert [(port, laddr) for port, laddr, _ in at_cards[0]] == \
        [(0, t[2]) for t in first] + [(1, t[2]) for t in second] + [(0, t[2]) for t in third]
    # The new circuits were dark for their set-up time: nothing reached their ports before they lit.
    assert at_ports[1][0][1] > move + SETUP and at_ports[0][len(first)][1] > back + SETUP
    assert seen["port1_up"][move + SETUP - 1] == 0 and seen["card0_up"][move + SETUP // 2] == 0
    assert seen["circuits"] == [0] and seen["lit"] == 0b1
    assert seen["switches"] == 2 and seen["refused"] == 1
    # The restarts kept the counters: frames received before the first move are still counted.
    assert seen["frames"][0] > seen[f"frames_before_{back}"][0] > seen[f"frames_before_{move}"][0] > 0
    assert seen["reinits"] == [2]


def test_a_card_without_a_circuit_is_dark_and_a_card_or_port_that_does_not_exist_is_refused():
    commands = {10: (0, NO_CIRCUIT), 12: (1, 1), 14: (0, 2)}
    at_ports, at_cards, seen = run(commands, {}, cycles=100)
    assert seen["circuits"] == [NO_CIRCUIT] and seen["lit"] == 0
    assert seen["card0_up"][-1] == 0
    assert seen["refused"] == 2 and seen["switches"] == 0


class SwitchAlone(Module):
    def __init__(self, n_cards, n_ports, circuits):
        self.submodules.switch = CircuitSwitch(n_cards=n_cards, n_ports=n_ports, circuits=circuits)


ALONE = {}


def switch_alone(n_cards, n_ports, circuits):
    key = (n_cards, n_ports, tuple(circuits))
    if key not in ALONE:
        ALONE[key] = SwitchAlone(n_cards, n_ports, circuits)
    return ALONE[key].switch


class SwitchModel:
    """The switch's state as its docstring tells it: circuits, dark cycles left, lit, counters."""
    def __init__(self, n_cards, n_ports, circuits):
        self.n_cards, self.n_ports = n_cards, n_ports
        self.circuits = list(circuits)
        self.left = [0] * n_cards
        self.lit = [c != NO_CIRCUIT for c in circuits]
        self.switches = self.refused = 0

    def owner(self, port):
        return next((i for i, c in enumerate(self.circuits) if c == port and self.lit[i]), None)

    def step(self, command, setup):
        """The state after an edge with `command` ((card, port) or None)."""
        refused = False
        if command is not None:
            card, port = command
            refused = card >= self.n_cards or port != NO_CIRCUIT and (
                port >= self.n_ports or any(k != card and c == port for k, c in enumerate(self.circuits)))
            self.refused += refused
        for i in range(self.n_cards):
            if self.left[i] == 1:
                self.lit[i] = True
                self.switches += 1
            self.left[i] = max(self.left[i] - 1, 0)
            if command is not None and command[0] == i and command[1] != self.circuits[i] and not refused:
                self.circuits[i], self.lit[i] = command[1], False
                self.left[i] = 0 if command[1] == NO_CIRCUIT else max(setup, 1)


LANES_CHECKED = (0, MAX_LANES - 1)


@pytest.mark.parametrize("n_cards,n_ports,circuits,setup,commands", [
    # Card 0 moves to the free port 1; card 1 then takes port 0 and is refused card 0's; cards and ports
    # that do not exist; card 0 taken down, then moved again while dark.
    (2, 2, [0, NO_CIRCUIT], 5, {3: (0, 1), 12: (1, 0), 14: (1, 1), 20: (2, 0), 22: (1, 2), 30: (0, NO_CIRCUIT),
                                40: (0, 0), 42: (0, 1), 44: (1, NO_CIRCUIT), 45: (0, 0)}),
    # Three cards on four ports with no set-up time (a cycle dark all the same); a card moved onto its own port;
    # a card that does not exist onto a free port.
    (3, 4, [2, 0, NO_CIRCUIT], 0, {1: (5, 3), 2: (2, 2), 4: (2, 3), 6: (0, 0), 8: (0, 1), 9: (1, 1), 11: (1, 2),
                                   13: (2, 2), 20: (1, 1), 25: (0, 0)}),
])
def test_the_switch_carries_each_lit_circuit_and_nothing_else_cycle_by_cycle(n_cards, n_ports, circuits, setup,
                                                                             commands):
    sw = switch_alone(n_cards, n_ports, circuits)
    model = SwitchModel(n_cards, n_ports, circuits)
    rng = random.Random(n_cards)
    cycles = max(commands) + setup + 8
    checked = []

    def bench():
        yield sw.setup.eq(setup)
        for cycle in range(cycles):
            command = commands.get(cycle)
            yield sw.command.eq(command is not None)
            if command is not None:
                yield sw.command_card.eq(command[0])
                yield sw.command_port.eq(command[1])
            card_up, lanes_log2 = rng.getrandbits(n_cards), [rng.getrandbits(2) for _ in range(n_cards)]
            yield sw.card_up.eq(card_up)
            for i in range(n_cards):
                yield sw.card_lanes_log2[i].eq(lanes_log2[i])
                yield sw.card_words[i].ready.eq(rng.getrandbits(1))
                for lane in LANES_CHECKED:
                    yield sw.card_lanes[i][lane].valid.eq(1)
                    yield sw.card_lanes[i][lane].data.eq(rng.getrandbits(64))
            for j in range(n_ports):
                yield sw.port_words[j].valid.eq(1)
                yield sw.port_words[j].lane0_data.eq(rng.getrandbits(64))
                for lane in LANES_CHECKED:
                    yield sw.port_lanes[j][lane].ready.eq(rng.getrandbits(1))
            yield   # the inputs take effect with this edge: the outputs below settle on them
            for i in range(n_cards):
                lit, port = model.lit[i], model.circuits[i]
                words = sw.card_words[i]
                assert (yield sw.dark) >> i & 1 == (not lit), f"cycle {cycle}: card {i}'s dark"
                assert (yield sw.card_restart) >> i & 1 == (model.left[i] == 1), f"cycle {cycle}: card {i}'s restart"
                assert (yield words.valid) == lit, f"cycle {cycle}: card {i}'s words"
                if lit:
                    assert (yield words.lane0_data) == (yield sw.port_words[port].lane0_data)
                for lane in LANES_CHECKED:
                    want = (yield sw.port_lanes[port][lane].ready) if lit else 1
                    assert (yield sw.card_lanes[i][lane].ready) == want, f"cycle {cycle}: card {i}'s lane {lane}"
            for j in range(n_ports):
                owner = model.owner(j)
                restarting = any(c == j and model.left[i] == 1 for i, c in enumerate(model.circuits))
                assert (yield sw.port_restart) >> j & 1 == restarting, f"cycle {cycle}: port {j}'s restart"
                assert (yield sw.port_up) >> j & 1 == (owner is not None and card_up >> owner & 1)
                assert (yield sw.port_lanes_log2[j]) == (3 if owner is None else lanes_log2[owner])
                assert (yield sw.port_words[j].ready) == (1 if owner is None else (yield sw.card_words[owner].ready))
                for lane in LANES_CHECKED:
                    got = sw.port_lanes[j][lane]
                    assert (yield got.valid) == (owner is not None), f"cycle {cycle}: port {j}'s lane {lane}"
                    if owner is not None:
                        assert (yield got.data) == (yield sw.card_lanes[owner][lane].data)
            checked.append(cycle)
            model.step(command, setup)
        for i, c in enumerate(sw.circuits):
            assert (yield c) == model.circuits[i]
        assert (yield sw.switches) == model.switches and (yield sw.refused) == model.refused
        assert (yield sw.lit) == sum(lit << i for i, lit in enumerate(model.lit))

    run_simulation(sw, [bench()])
    assert len(checked) == cycles and model.switches > 0 and model.refused > 0
