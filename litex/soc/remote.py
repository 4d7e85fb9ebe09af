#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The remote memory path: ReMAT on the compute card, the link over the sim channel, a memory card; in the pooled
model, traffic cards on the memory card's other ports."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.layouts import txn_layout
from monet.cores.common.stages import StageTimer
from monet.cores.remat.core import ReMAT
from monet.cores.link.core import LinkEndpoint
from monet.cores.phy.channel import SimChannel
from monet.cores.memcard.core import MemoryCard
from monet.cores.memcard.ports import MemoryPorts
from monet.cores.pbb.core import PBB
from monet.cores.remat.codes import TARGET_LOCAL, TARGET_REMOTE0, TARGET_REMOTE1
from monet.soc.facts import CHANNEL_MAX_DELAY, COMPUTE_POINTS, LINK_CREDITS, LINK_RETRY_DEPTH, MEMORY_POINTS
from monet.soc.hmc import HMCMemoryPath


def compute_stages(remat, link):
    """The compute card's StageTimer over COMPUTE_POINTS: ReMAT `remat` and its link end `link`."""
    timer = StageTimer(COMPUTE_POINTS)
    timer.watch("request", remat.taken)
    timer.watch("answer", remat.delivered)
    link.watch_stages(timer, sent="link_tx", framed="lanes_tx", deframed="lanes_rx", delivered="link_rx")
    return timer


def memory_stages(link):
    """The memory card's StageTimer over MEMORY_POINTS, at its link end `link`."""
    timer = StageTimer(MEMORY_POINTS)
    link.watch_stages(timer, deframed="lanes_rx", delivered="link_rx", sent="link_tx", framed="lanes_tx")
    return timer


def join_port(link_m, ports, i):
    """Statements joining a memory-card link end `link_m` to port `i` of MemoryPorts `ports`."""
    return [
        link_m.source.connect(ports.sinks[i]),
        ports.sources[i].connect(link_m.sink),
        link_m.credit_freed.eq(ports.taken[i]),
    ]


class RequesterPath(LiteXModule):
    """A requesting card's half of a remote path: its ReMAT, its link end, the sim channel and the memory card's
    link end facing it (`link_m`: `link_m.source` the requests at the memory card, `link_m.sink` the answers
    back, `link_m.credit_freed` as the card takes a request). The compute card's path and each traffic card
    build theirs here, so that their registers have the same names under their own prefix.
    """
    def add_requester(self, *, clk_ps, n_sections, section_bits, tags, channel_depth, max_delay, retry_depth, credits,
                      n_ports, n_targets, switched=False):
        # The one-way delay software may set: the delay lines hold `channel_depth` blocks a lane.
        assert max_delay < channel_depth
        self.max_delay, self.retry_depth = max_delay, retry_depth
        # A switched card's requests can be held at its ReMAT while its circuit moves (ReMAT's with_hold).
        self.remat   = remat   = ReMAT(n_ports=n_ports, n_sections=n_sections, section_bits=section_bits, tags=tags,
                                       n_targets=n_targets, with_hold=switched)
        self.link_settings = dict(clk_ps=clk_ps, channel_depth=channel_depth, retry_depth=retry_depth, credits=credits,
                                  switched=switched)
        self.channel, self.link_c, self.link_m = self.add_link(**self.link_settings)
        self.comb += [
            remat.sources[TARGET_REMOTE0].connect(self.link_c.sink),
            self.link_c.source.connect(remat.sinks[TARGET_REMOTE0]),
        ]

    def add_link(self, *, clk_ps, channel_depth, retry_depth, credits, switched):
        """A link of this card: its sim channel, its end (`link_c`, on the channel's near end) and the memory-card
        end it faces at power-up (`link_m`). Unswitched, the channel's far end is link_m's; switched, a
        CircuitSwitch joins them (phy/switch.py: connect_card, connect_port) and gives link_m the lanes of the
        card it faces (`link_m.lanes_log2`). Returns (channel, link_c, link_m) for the caller to name."""
        channel = SimChannel(clk_ps=clk_ps, depth=channel_depth)
        # Requests in flight toward the memory card's input FIFO (as deep as the tags) are bounded by credits
        # as well as by ReMAT's tags: the credit loop is a round trip, so the limit must cover bandwidth x
        # round trip like the tags do (LINK_CREDITS, the most the trailer's credits count).
        link_c = LinkEndpoint(channel.lanes_log2, retry_depth=retry_depth, credit_limit=credits)
        # The memory card's end, on a lane count of its own, built here and not in a helper: Migen names a module
        # by the frames that build it, and a helper's frame doubled every name of the end (the pooled model's
        # Verilog 15 MB larger, same logic).
        lanes  = Signal(2, reset=3)
        link_m = LinkEndpoint(lanes, retry_depth=retry_depth)
        link_m.lanes_log2 = lanes
        self.comb += [link_c.rx_up.eq(channel.a_up), *link_c.connect_phy(channel.a_sink, channel.a_sources)]
        if not switched:
            self.comb += [
                lanes.eq(channel.lanes_log2),
                link_m.rx_up.eq(channel.b_up),
                *link_m.connect_phy(channel.b_sink, channel.b_sources),
            ]
        return channel, link_c, link_m

    def connect_port(self, ports, i):
        """Statements joining this path's memory-card link end to port `i` of MemoryPorts `ports`."""
        return join_port(self.link_m, ports, i)

    def add_requester_control(self):
        self.remat.add_control()
        self.channel.add_control()
        self.link_c.add_control()
        self.link_m.add_control()


class TrafficCard(RequesterPath):
    """A traffic card of the pooled model: a benchmark block on a one-port ReMAT, its link over its own sim
    channel (lanes, distance and errors set like the compute card's), no CPU. Its memory-card end
    (`link_m`) is wired to one of the memory card's ports (`connect_port`); `switched`, its channel reaches
    link_m through the circuit switch and its ReMAT can hold its requests. Latency: the compute card's path's,
    ReMAT to ReMAT, and the memory card's ports' 2 cycles (1 each way)."""
    def __init__(self, clk_ps=4000, n_sections=16, section_bits=20, tags=128, buckets=8, channel_depth=1024,
                 max_delay=CHANNEL_MAX_DELAY, retry_depth=LINK_RETRY_DEPTH, credits=LINK_CREDITS, switched=False):
        self.add_requester(clk_ps=clk_ps, n_sections=n_sections, section_bits=section_bits, tags=tags,
                           channel_depth=channel_depth, max_delay=max_delay, retry_depth=retry_depth, credits=credits,
                           n_ports=1, n_targets=1, switched=switched)
        self.pbb = PBB(self.remat.ports[0], max_outstanding=tags, buckets=buckets)

    def add_control(self):
        self.add_requester_control()
        self.pbb.add_control()


class RemoteMemoryPath(RequesterPath):
    """ReMAT -> link (compute end) -> SimChannel -> link (memory end) -> MemoryCard (SRAM, DDR4 through
    LiteDRAM with_ddr4, an HMC terminated on the card with_hmc), and back.

    with_local: ReMAT's target 1 (TARGET_LOCAL) reaches the memory card's memories without the link, as
    the compute card's local memory: the sim holds one model of each memory, which serves either placement
    (a board has a controller of its own on each card).

    requesters > 1 (the pooled model): the memory card's MemoryPorts (`ports`, 2 cycles more: 1 each way) take
    this path's link on port 0; ports 1 to requesters - 1 are for TrafficCards (`connect_port`). The links are
    switched (the SoC's CircuitSwitch joins each channel to a memory-card port), and a second memory card
    (`memcard1`, SRAM and DDR4 like the first, no HMC) has MemoryPorts of its own (`ports1`): port 0 faces
    this card's second link (`channel1`, `link1_c`, `link1_m`: ReMAT's target 2, TARGET_REMOTE1, whose
    answers wait in a FIFO while the first link's go first, 1 cycle more), port 1 (`spare_m`) no card at
    power-up: a circuit moved there (`monet bench move`) reaches it.

    `remat.ports` are the `n_ports` master ports; CSR blocks come with add_control().
    """
    def __init__(self, clk_ps=4000, n_sections=16, section_bits=20, tags=128,
                 memcard_size=4*1024*1024, channel_depth=1024, max_delay=CHANNEL_MAX_DELAY,
                 retry_depth=LINK_RETRY_DEPTH, credits=LINK_CREDITS, with_ddr4=False, with_hmc=False, with_local=False,
                 n_ports=2, requesters=1):
        pooled = requesters > 1
        assert with_local or not pooled, "the second link is ReMAT's target 2: target 1, the local memory, comes first"
        self.add_requester(clk_ps=clk_ps, n_sections=n_sections, section_bits=section_bits, tags=tags,
                           channel_depth=channel_depth, max_delay=max_delay, retry_depth=retry_depth, credits=credits,
                           n_ports=n_ports, n_targets=3 if pooled else 2 if with_local else 1, switched=pooled)
        remat, link_c, link_m = self.remat, self.link_c, self.link_m
        hmc = HMCMemoryPath(storage_bytes=memcard_size, clk_freq=1e12 / clk_ps, domain="hmc") if with_hmc else None
        self.memcard = memcard = MemoryCard(size=memcard_size, max_outstanding=tags, with_ddr4=with_ddr4,
                                            hmc=hmc, clk_freq=1e12 / clk_ps, with_local_port=with_local)
        if pooled:
            self.ports = ports = MemoryPorts(n_ports=requesters, max_outstanding=tags, tags=tags)
            self.comb += self.connect_port(ports, 0)
            self.comb += [
                ports.source.connect(memcard.sink),
                memcard.source.connect(ports.sink),
            ]
            self.add_second_memory_card(memcard_size=memcard_size, tags=tags, with_ddr4=with_ddr4)
        else:
            self.comb += [
                link_m.source.connect(memcard.sink),
                memcard.source.connect(link_m.sink),
                link_m.credit_freed.eq(memcard.taken),
            ]
        if with_local:
            self.comb += [
                remat.sources[TARGET_LOCAL].connect(memcard.local_sink),
                memcard.local_source.connect(remat.sinks[TARGET_LOCAL]),
            ]
        self.stages_c = compute_stages(remat, link_c)
        self.stages_m = memory_stages(link_m)

    def add_second_memory_card(self, *, memcard_size, tags, with_ddr4):
        """The pooled model's second memory card (SRAM, and DDR4 `with_ddr4`) and this card's second link to it
        (see the class)."""
        clk_ps = self.link_settings["clk_ps"]
        self.channel1, self.link1_c, self.link1_m = self.add_link(**self.link_settings)
        spare_lanes = Signal(2, reset=3)   # a memory card's end, built as add_link builds its link_m (see there)
        self.spare_m = LinkEndpoint(spare_lanes, retry_depth=self.retry_depth)
        self.spare_m.lanes_log2 = spare_lanes
        self.answers1 = answers1 = stream.SyncFIFO(txn_layout, tags)   # never full: tags bound the answers
        self.memcard1 = memcard1 = MemoryCard(size=memcard_size, max_outstanding=tags, with_ddr4=with_ddr4,
                                              clk_freq=1e12 / clk_ps)
        self.ports1 = ports1 = MemoryPorts(n_ports=2, max_outstanding=tags, tags=tags)
        self.comb += [
            self.remat.sources[TARGET_REMOTE1].connect(self.link1_c.sink),
            self.link1_c.source.connect(answers1.sink),
            answers1.source.connect(self.remat.sinks[TARGET_REMOTE1]),
            *join_port(self.link1_m, ports1, 0),
            *join_port(self.spare_m, ports1, 1),
            ports1.source.connect(memcard1.sink),
            memcard1.source.connect(ports1.sink),
        ]

    def add_control(self):
        self.remat.add_control()
        self.channel.add_control()
        self.memcard.add_control()
        if hasattr(self.memcard, "hmc"):
            self.memcard.hmc.add_control()
        self.link_c.add_control()
        self.link_m.add_control()
        self.stages_c.add_control()
        self.stages_m.add_control()
        if hasattr(self, "ports"):
            self.ports.add_control()
        if hasattr(self, "memcard1"):
            for module in (self.channel1, self.link1_c, self.link1_m, self.spare_m, self.memcard1, self.ports1):
                module.add_control()
