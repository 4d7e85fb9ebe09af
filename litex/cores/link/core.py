#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""One end of a MONet-open link: framer + striper out, deskew + deframer in."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.link.common import *
from monet.cores.link.packing import PackedFramer, PackedDeframer
from monet.cores.link.lanes import LaneStriper, LaneDeskew, MAX_LANES


class LinkEndpoint(LiteXModule):
    """Transactions in and out; lane words to and from the PHY (or the sim channel).

    TX latency: 2 cycles (framer). RX latency: 2 cycles after the beat with the frame's trailer (deframer).
    Under load, up to `max_units` transactions share a frame and its CRC trailer, and beats are full.
    """
    def __init__(self, lanes_log2, max_units=8):
        self.sink   = stream.Endpoint(txn_layout)   # transactions to send.
        self.source = stream.Endpoint(txn_layout)   # transactions received (always accept).

        # # #

        self.framer   = framer   = PackedFramer(max_units=max_units)
        self.striper  = striper  = LaneStriper(lanes_log2)
        self.deskew   = deskew   = LaneDeskew(lanes_log2)
        self.deframer = deframer = PackedDeframer()
        self.comb += [
            self.sink.connect(framer.sink),
            framer.source.connect(striper.sink),
            deskew.source.connect(deframer.sink),
            deframer.source.connect(self.source),
        ]
        self.tx_lanes = striper.source  # bundle of lane words, to the PHY.
        self.rx_lanes = deskew.sinks    # one endpoint per lane, from the PHY.

    def connect_phy(self, tx, rx_sources):
        """Wires this endpoint's lanes to a channel direction (tx) and the opposite one (rx)."""
        return [self.tx_lanes.connect(tx)] + [src.connect(snk) for src, snk in zip(rx_sources, self.rx_lanes)]

    def add_control(self):
        self._framing    = CSRStorage(fields=[
            CSRField("max_units", size=4, reset=8, description="Units per frame at most (1..8)."),
            CSRField("pairing",   size=1, reset=1, description="Two consecutive lines may share a header."),
        ])
        self._frames     = CSRStatus(32, description="Frames received (trailers seen), good or not.")
        self._crc_errors = CSRStatus(32, description="Frames dropped for a bad CRC.")
        self._pairs      = CSRStatus(32, description="Pairs of lines sent under one header.")
        self.comb += [
            self.framer.max_units.eq(self._framing.fields.max_units),
            self.framer.pairing.eq(self._framing.fields.pairing),
            self._frames.status.eq(self.deframer.frames),
            self._crc_errors.status.eq(self.deframer.crc_errors),
            self._pairs.status.eq(self.framer.pairs),
        ]
