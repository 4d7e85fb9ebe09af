#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The remote memory path: ReMAT on the compute card, the link over the sim channel, a memory card."""

from migen import *

from litex.gen import LiteXModule

from monet.cores.remat.core import ReMAT
from monet.cores.link.core import LinkEndpoint
from monet.cores.phy.channel import SimChannel
from monet.cores.memcard.core import MemoryCard


class RemoteMemoryPath(LiteXModule):
    """ReMAT -> link (compute end) -> SimChannel -> link (memory end) -> MemoryCard, and back.

    `remat.ports` are the master ports; CSR blocks come with add_control().
    """
    def __init__(self, clk_ps=4000, n_sections=16, section_bits=20, tags=128,
                 memcard_size=4*1024*1024, channel_depth=1024, credits=127):
        self.remat   = remat   = ReMAT(n_ports=2, n_sections=n_sections, section_bits=section_bits, tags=tags)
        self.channel = channel = SimChannel(clk_ps=clk_ps, depth=channel_depth)
        # Requests in flight toward the memory card's input FIFO (as deep as the tags) are bounded by credits
        # as well as by ReMAT's tags: the credit loop is a round trip, so the limit must cover bandwidth x
        # round trip like the tags do (127, the most a 7-bit cumulative count allows).
        self.link_c  = link_c  = LinkEndpoint(channel.lanes_log2, credit_limit=credits)
        self.link_m  = link_m  = LinkEndpoint(channel.lanes_log2)
        self.memcard = memcard = MemoryCard(size=memcard_size, max_outstanding=tags)
        self.comb += [
            remat.source.connect(link_c.sink),
            link_c.source.connect(remat.sink),
            link_m.source.connect(memcard.sink),
            memcard.source.connect(link_m.sink),
            link_m.credit_freed.eq(memcard.taken),
        ]
        self.comb += [link_c.rx_up.eq(channel.a_up), link_m.rx_up.eq(channel.b_up)]
        self.comb += link_c.connect_phy(channel.a2b.sink, channel.b2a.sources)
        self.comb += link_m.connect_phy(channel.b2a.sink, channel.a2b.sources)

    def add_control(self):
        self.remat.add_control()
        self.channel.add_control()
        self.memcard.add_control()
        self.link_c.add_control()
        self.link_m.add_control()
