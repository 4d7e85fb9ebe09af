#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The HMC device model: one link's link layer in front of the vaults (link.py, vaults.py).

Requests arriving on the link become vault requests (command, length, tag, address, payload); vault
responses become response packets (RD_RS with their data, WR_RS, ERROR with ERRSTAT) with the request's
source link ID. Pairs go through whole: a pair's second request (a read) enters the vaults' second port
with or after its first, and a second 1-FLIT response leaves as the pair's second packet. `tx` and `rx`
face the host through an HMC channel (phy/hmc_channel.py).

Tokens and retry buffer default to the thesis's measured device (s.3.1.6): 219 tokens for host-to-HMC
traffic, a 192-FLIT retry buffer at 10 Gb/s and 256 FLITs at 12.5 and 15 Gb/s (`retry_flits`, a build
parameter here).

Latency: the link layer's 2 cycles in and 1 out, the vaults' time (vaults.py), nothing for the conversions.
"""

from migen import *

from litex.gen import LiteXModule

from monet.cores.hmc.link import HMCLinkLayer, header_fields
from monet.cores.hmc.packet import REQUEST_HEADER, REQUEST_TAIL, RESPONSE_HEADER, RESPONSE_TAIL
from monet.cores.hmc.vaults import HMCVaults

DEVICE_TOKENS = 219


def device_retry_flits(rate_gbps):
    """The thesis's Table 3.1: the device halves its datapath at 10 Gb/s."""
    return 192 if rate_gbps <= 10 else 256


class HMCDevice(LiteXModule):
    def __init__(self, clk_freq=250e6, storage_bytes=64 * 1024, rx_tokens=DEVICE_TOKENS, retry_flits=256,
                 retry_packets=64, queue_depth=4):
        self.link   = link   = HMCLinkLayer(rx_tokens=rx_tokens, retry_flits=retry_flits, retry_packets=retry_packets)
        self.vaults = vaults = HMCVaults(clk_freq=clk_freq, storage_bytes=storage_bytes, queue_depth=queue_depth)
        self.tx, self.rx = link.tx, link.rx

        # # #

        # A request pair's second packet (a read) goes to the vaults' second port, in the cycle its first is
        # taken or later; the pair leaves the input buffer once both are taken.
        request, response = link.source, vaults.source
        first_taken = Signal()      # the pair's first request went in an earlier cycle
        take_first, take_second = Signal(), Signal()
        self.comb += [
            vaults.sink.valid.eq(request.valid & ~first_taken),
            take_first.eq(vaults.sink.valid & vaults.sink.ready),
            vaults.sink2.valid.eq(request.valid & request.second & (first_taken | vaults.sink.ready)),
            take_second.eq(vaults.sink2.valid & vaults.sink2.ready),
            request.ready.eq((first_taken | take_first) & (~request.second | take_second)),
        ]
        self.sync += first_taken.eq(request.valid & ~request.ready & (first_taken | take_first))
        for port, header, tail in ((vaults.sink, request.header, request.tail),
                                   (vaults.sink2, request.second_header, request.second_tail)):
            self.comb += [
                port.cmd.eq(REQUEST_HEADER.get(header, "cmd")),
                port.lng.eq(REQUEST_HEADER.get(header, "lng")),
                port.tag.eq(REQUEST_HEADER.get(header, "tag")),
                port.adrs.eq(REQUEST_HEADER.get(header, "adrs")),
                port.slid.eq(REQUEST_TAIL.get(tail, "slid")),
            ]
        self.comb += [
            vaults.sink.data.eq(request.data),

            link.sink.valid.eq(response.valid),
            response.ready.eq(link.sink.ready),
            link.sink.header.eq(RESPONSE_HEADER.pack(cmd=response.cmd, lng=response.lng, dln=response.lng,
                                                     tag=response.tag, slid=response.slid)),
            link.sink.data.eq(response.data),
            link.sink.tail.eq(RESPONSE_TAIL.pack(errstat=response.errstat)),
            link.sink.lng.eq(response.lng),
            link.sink.second.eq(response.second),
            link.sink.second_header.eq(RESPONSE_HEADER.pack(cmd=response.second_cmd, lng=1, dln=1,
                                                            tag=response.second_tag, slid=response.second_slid)),
            link.sink.second_tail.eq(RESPONSE_TAIL.pack(errstat=response.second_errstat)),
        ]
