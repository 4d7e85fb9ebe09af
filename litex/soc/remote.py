#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The remote memory path: ReMAT on the compute card, the link over the sim channel, a memory card; in the pooled
model, traffic cards on the memory card's other ports."""

from migen import *

from litex.gen import LiteXModule

from monet.cores.common.stages import StageTimer
from monet.cores.remat.core import ReMAT
from monet.cores.link.core import LinkEndpoint
from monet.cores.phy.channel import SimChannel
from monet.cores.memcard.core import MemoryCard
from monet.cores.memcard.ports import MemoryPorts
from monet.cores.pbb.core import PBB
from monet.cores.remat.codes import TARGET_LOCAL, TARGET_REMOTE0
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


class RequesterPath(LiteXModule):
    """A requesting card's half of a remote path: its ReMAT, its link end, the sim channel and the memory card's
    link end facing it (`link_m`: `link_m.source` the requests at the memory card, `link_m.sink` the answers
    back, `link_m.credit_freed` as the card takes a request). The compute card's path and each traffic card
    build theirs here, so that their registers have the same names under their own prefix.
    """
    def add_requester(self, *, clk_ps, n_sections, section_bits, tags, channel_depth, max_delay, retry_depth, credits,
                      n_ports, n_targets):
        # The one-way delay software may set: the delay lines hold `channel_depth` blocks a lane.
        assert max_delay < channel_depth
        self.max_delay, self.retry_depth = max_delay, retry_depth
        self.remat   = remat   = ReMAT(n_ports=n_ports, n_sections=n_sections, section_bits=section_bits, tags=tags,
                                       n_targets=n_targets)
        self.channel = channel = SimChannel(clk_ps=clk_ps, depth=channel_depth)
        # Requests in flight toward the memory card's input FIFO (as deep as the tags) are bounded by credits
        # as well as by ReMAT's tags: the credit loop is a round trip, so the limit must cover bandwidth x
        # round trip like the tags do (LINK_CREDITS, the most the trailer's credits count).
        self.link_c  = link_c  = LinkEndpoint(channel.lanes_log2, retry_depth=retry_depth, credit_limit=credits)
        self.link_m  = link_m  = LinkEndpoint(channel.lanes_log2, retry_depth=retry_depth)
        self.comb += [
            remat.sources[TARGET_REMOTE0].connect(link_c.sink),
            link_c.source.connect(remat.sinks[TARGET_REMOTE0]),
            link_c.rx_up.eq(channel.a_up),
            link_m.rx_up.eq(channel.b_up),
            link_c.connect_phy(channel.a_sink, channel.a_sources),
            link_m.connect_phy(channel.b_sink, channel.b_sources),
        ]

    def connect_port(self, ports, i):
        """Statements joining this path's memory-card link end to port `i` of MemoryPorts `ports`."""
        return [
            self.link_m.source.connect(ports.sinks[i]),
            ports.sources[i].connect(self.link_m.sink),
            self.link_m.credit_freed.eq(ports.taken[i]),
        ]

    def add_requester_control(self):
        self.remat.add_control()
        self.channel.add_control()
        self.link_c.add_control()
        self.link_m.add_control()


class TrafficCard(RequesterPath):
    """A traffic card of the pooled model: a benchmark block on a one-port ReMAT, its link over its own sim
    channel (lanes, distance and errors set like the compute card's), no CPU. Its memory-card end
    (`link_m`) is wired to one of the memory card's ports (`connect_port`). Latency: the compute card's path's,
    ReMAT to ReMAT, and the memory card's ports' 2 cycles (1 each way)."""
    def __init__(self, clk_ps=4000, n_sections=16, section_bits=20, tags=128, buckets=8, channel_depth=1024,
                 max_delay=CHANNEL_MAX_DELAY, retry_depth=LINK_RETRY_DEPTH, credits=LINK_CREDITS):
        self.add_requester(clk_ps=clk_ps, n_sections=n_sections, section_bits=section_bits, tags=tags,
                           channel_depth=channel_depth, max_delay=max_delay, retry_depth=retry_depth, credits=credits,
                           n_ports=1, n_targets=1)
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
    this path's link on port 0; ports 1 to requesters - 1 are for TrafficCards (`connect_port`).

    `remat.ports` are the `n_ports` master ports; CSR blocks come with add_control().
    """
    def __init__(self, clk_ps=4000, n_sections=16, section_bits=20, tags=128,
                 memcard_size=4*1024*1024, channel_depth=1024, max_delay=CHANNEL_MAX_DELAY,
                 retry_depth=LINK_RETRY_DEPTH, credits=LINK_CREDITS, with_ddr4=False, with_hmc=False, with_local=False,
                 n_ports=2, requesters=1):
        self.add_requester(clk_ps=clk_ps, n_sections=n_sections, section_bits=section_bits, tags=tags,
                           channel_depth=channel_depth, max_delay=max_delay, retry_depth=retry_depth, credits=credits,
                           n_ports=n_ports, n_targets=2 if with_local else 1)
        remat, link_c, link_m = self.remat, self.link_c, self.link_m
        hmc = HMCMemoryPath(storage_bytes=memcard_size, clk_freq=1e12 / clk_ps, domain="hmc") if with_hmc else None
        self.memcard = memcard = MemoryCard(size=memcard_size, max_outstanding=tags, with_ddr4=with_ddr4,
                                            hmc=hmc, clk_freq=1e12 / clk_ps, with_local_port=with_local)
        if requesters > 1:
            self.ports = ports = MemoryPorts(n_ports=requesters, max_outstanding=tags, tags=tags)
            self.comb += self.connect_port(ports, 0)
            self.comb += [
                ports.source.connect(memcard.sink),
                memcard.source.connect(ports.sink),
            ]
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
