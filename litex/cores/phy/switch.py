#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Circuit switch in the sim channel: the optical circuit switch between the cards' fibers and the memory cards'
ports (the channel model, not the shipped link gateware).

Each card port (the far end of a card's SimChannel) is joined to at most one memory-card port (a link endpoint)
and each memory-card port to at most one card: circuits, not packets. `connect` (card, port) moves a card's
circuit: the card's old circuit goes at once, the new one is dark for `setup` cycles (a circuit switch turns
its mirrors; the card's channel is held down, both ends' receivers are down), then lights; in its last dark
cycle both ends' link endpoints restart (`card_restart`, `port_restart`: link/core.py's restart, a new peer),
and their receivers come up and re-initialize; what the card sent while dark is lost with the restart (the
pooled model holds a card at its ReMAT while its circuit moves). A port another card holds, or a card or port
that does not exist, is refused (`refused` counts it, no circuit moves); NO_CIRCUIT (codes.py) takes a card's
circuit down at once. Latency on a lit circuit: 0 cycles (the switch's own fiber is in the channel's delay).
"""

from functools import reduce
from operator import or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.csr import add_status
from monet.cores.common.layouts import MAX_LANES, bundle_layout, lane_layout
from monet.cores.phy.codes import NO_CIRCUIT, OCS_SETUP_S, SWITCH_COMPRESSION

PORT_BITS = 4


class CircuitSwitch(LiteXModule):
    """`n_cards` card ports and `n_ports` memory-card ports; `circuits`: each card's port at power-up (lit, no
    restart: both ends start fresh), NO_CIRCUIT for none. `setup` is cycles (run time; the default is the OCS's
    set-up time at `clk_ps`, compressed by SWITCH_COMPRESSION).

    Card side i (`connect_card`): the lanes that leave the card's channel toward the memory (`card_lanes[i]`),
    the words sent back into it (`card_words[i]`), its far receiver's status (`card_up[i]`), its lane count,
    the channel's `dark[i]`, and its link's `card_restart[i]`. Memory side j (`connect_port`): the port's link
    endpoint's words (`port_words[j]`), its lanes (`port_lanes[j]`), `port_up[j]`, `port_restart[j]`, and
    `port_lanes_log2[j]`, its card's lane count, for the lanes the port's link endpoint stripes over.
    """
    def __init__(self, n_cards, n_ports, circuits, clk_ps=4000):
        assert n_cards <= 8 and n_ports < NO_CIRCUIT and len(circuits) == n_cards
        used = [c for c in circuits if c != NO_CIRCUIT]
        assert len(used) == len(set(used)) and all(c < n_ports for c in used), "circuits share a port"
        self.n_cards, self.n_ports = n_cards, n_ports
        self.card_lanes   = [[stream.Endpoint(lane_layout(lane)) for lane in range(MAX_LANES)] for _ in range(n_cards)]
        self.card_words   = [stream.Endpoint(bundle_layout()) for _ in range(n_cards)]
        self.card_up      = Signal(n_cards)
        self.card_lanes_log2 = [Signal(2, name=f"card{i}_lanes_log2") for i in range(n_cards)]
        self.dark         = Signal(n_cards)
        self.card_restart = Signal(n_cards)
        self.port_words   = [stream.Endpoint(bundle_layout()) for _ in range(n_ports)]
        self.port_lanes   = [[stream.Endpoint(lane_layout(lane)) for lane in range(MAX_LANES)] for _ in range(n_ports)]
        self.port_up      = Signal(n_ports)
        # The lanes a port's link stripes over: its card's (both ends agree on them as the link trains).
        self.port_lanes_log2 = [Signal(2, reset=3, name=f"port{j}_lanes_log2") for j in range(n_ports)]
        self.port_restart = Signal(n_ports)
        self.command      = Signal()               # a strobe: move `command_card`'s circuit to `command_port`
        self.command_card = Signal(3)
        self.command_port = Signal(PORT_BITS)
        self.setup        = Signal(32, reset=round(OCS_SETUP_S * 1e12 / clk_ps / SWITCH_COMPRESSION))
        self.circuits     = [Signal(PORT_BITS, reset=c, name=f"circuit{i}") for i, c in enumerate(circuits)]
        self.lit          = Signal(n_cards, reset=sum(1 << i for i, c in enumerate(circuits) if c != NO_CIRCUIT))
        self.switches     = Signal(32)             # circuits set up
        self.refused      = Signal(32)             # commands refused: the port was another card's

        # # #

        none    = self.command_port == NO_CIRCUIT
        refused = Signal()   # another card holds the port, or there is no such card or port
        self.comb += refused.eq((self.command_card >= n_cards) | ~none & (self.command_port >= n_ports)
                                | ~none & reduce(or_, [(self.command_card != i) & (c == self.command_port)
                                                       for i, c in enumerate(self.circuits)]))
        for i, circuit in enumerate(self.circuits):
            left    = Signal(32, name=f"dark_left{i}")   # dark cycles left on the circuit being set up
            mine    = Signal(name=f"command_mine{i}")
            changes = Signal(name=f"command_changes{i}")
            self.comb += [
                mine.eq(self.command & (self.command_card == i)),
                changes.eq(mine & (self.command_port != circuit) & ~refused),
                self.dark[i].eq(~self.lit[i]),
                self.card_restart[i].eq(left == 1),
            ]
            self.sync += [
                If(left != 0, left.eq(left - 1)),
                If(left == 1, self.lit[i].eq(1), self.switches.eq(self.switches + 1)),
                If(changes,
                    circuit.eq(self.command_port),
                    self.lit[i].eq(0),
                    left.eq(Mux(none, 0, Mux(self.setup == 0, 1, self.setup))),
                ),
            ]
        self.sync += If(self.command & refused, self.refused.eq(self.refused + 1))
        self.add_crossbar()

    def add_crossbar(self):
        """Each lit circuit's lanes to its port, its port's words back into its card's channel; what has no lit
        circuit is dropped. Each side picks by an index (card i's lit port, port j's card; one past the last:
        none): every output is a multiplexer of its own."""
        n_cards, n_ports = self.n_cards, self.n_ports
        reach = [Signal(max=n_ports + 1, name=f"card{i}_reach") for i in range(n_cards)]
        owner = [Signal(max=n_cards + 1, name=f"port{j}_owner") for j in range(n_ports)]
        self.comb += [r.eq(Mux(self.lit[i], self.circuits[i], n_ports)) for i, r in enumerate(reach)]
        lanes = [[self.card_lanes[i][lane] for i in range(n_cards)] for lane in range(MAX_LANES)]
        for j, o in enumerate(owner):
            self.comb += [o.eq(n_cards), *[If(self.lit[i] & (c == j), o.eq(i)) for i, c in enumerate(self.circuits)]]
            for lane, snk in enumerate(self.port_lanes[j]):
                self.comb += [
                    snk.valid.eq(Array([s.valid for s in lanes[lane]] + [0])[o]),
                    snk.payload.raw_bits().eq(Array([s.payload.raw_bits() for s in lanes[lane]])[o]),
                ]
            self.comb += [
                self.port_words[j].ready.eq(Array([w.ready for w in self.card_words] + [1])[o]),
                self.port_up[j].eq(Array([self.card_up[i] for i in range(n_cards)] + [0])[o]),
                self.port_lanes_log2[j].eq(Array(self.card_lanes_log2 + [3])[o]),
                # A circuit lighting is not yet lit: its port restarts with its card.
                self.port_restart[j].eq(reduce(or_, [(c == j) & self.card_restart[i]
                                                     for i, c in enumerate(self.circuits)])),
            ]
        for i, r in enumerate(reach):
            words = self.card_words[i]
            self.comb += [
                words.valid.eq(Array([w.valid for w in self.port_words] + [0])[r]),
                words.payload.raw_bits().eq(Array([w.payload.raw_bits() for w in self.port_words])[r]),
                *[lane.ready.eq(Array([self.port_lanes[j][k].ready for j in range(n_ports)] + [1])[r])
                  for k, lane in enumerate(self.card_lanes[i])],
            ]

    def connect_card(self, i, channel, link):
        """Statements joining card port `i` to the far end of the card's SimChannel `channel`; `link` is the card's
        link endpoint (restarted with a new circuit)."""
        return [
            *[src.connect(snk) for src, snk in zip(channel.b_sources, self.card_lanes[i])],
            self.card_words[i].connect(channel.b_sink),
            self.card_up[i].eq(channel.b_up),
            self.card_lanes_log2[i].eq(channel.lanes_log2),
            channel.dark.eq(self.dark[i]),
            link.restart.eq(self.card_restart[i]),
        ]

    def connect_port(self, j, link, lanes_log2=None):
        """Statements joining memory-card port `j` to its link endpoint `link`, and the signal `link` was built on
        for its lanes (`lanes_log2`) to its card's lane count; without it, `link` is built on
        `port_lanes_log2[j]`."""
        return [
            *([] if lanes_log2 is None else [lanes_log2.eq(self.port_lanes_log2[j])]),
            link.tx_lanes.connect(self.port_words[j]),
            *[src.connect(snk) for src, snk in zip(self.port_lanes[j], link.rx_lanes)],
            link.rx_up.eq(self.port_up[j]),
            link.restart.eq(self.port_restart[j]),
        ]

    def add_control(self):
        self._connect = CSRStorage(fields=[
            CSRField("card", size=3, description="The card whose circuit moves."),
            CSRField("port", size=PORT_BITS, description=f"The memory-card port it moves to ({NO_CIRCUIT}: none); "
                                                         f"written: the circuit moves (refused if another card "
                                                         f"holds the port)."),
        ])
        self._setup = CSRStorage(32, reset=self.setup.reset.value,
                                 description=f"Cycles a new circuit stays dark (default: the OCS's "
                                             f"{OCS_SETUP_S * 1e3:g} ms compressed {SWITCH_COMPRESSION} times).")
        self._circuits = CSRStatus(fields=[CSRField(f"card{i}", size=PORT_BITS, description=f"Card {i}'s port "
                                                    f"({NO_CIRCUIT}: none).") for i in range(self.n_cards)])
        add_status(self, "lit", self.lit, "The cards whose circuits are lit (bit per card).")
        add_status(self, "switches", self.switches, "Circuits set up.")
        add_status(self, "refused", self.refused, "Moves refused: the port was another card's.")
        self.comb += [
            self.command.eq(self._connect.re),
            self.command_card.eq(self._connect.fields.card),
            self.command_port.eq(self._connect.fields.port),
            self.setup.eq(self._setup.storage),
            *[getattr(self._circuits.fields, f"card{i}").eq(c) for i, c in enumerate(self.circuits)],
        ]
