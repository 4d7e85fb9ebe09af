#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Sim channel for one direction of an HMC link: its lanes' FLIT rate, bit errors, SerDes and fiber delay.

HMC lanes scramble instead of coding (no 64b/66b overhead): a FLIT takes 128 / (lanes x rate) ns, so a
16-lane link at 10 Gb/s moves a FLIT in 0.8 ns, five a 4 ns cycle. Whole packets go by (records of
`hmc_packet_layout`); each is held for its FLITs' time (channel.py's WireTime), so throughput is exact
and a packet arrives once its last FLIT has (the receiver checks the CRC of the whole packet). A record a
cycle at most, which may hold a second 1-FLIT packet (the link layer's pairs): its FLIT counts too.

Bit errors: a record of n FLITs is hit with probability n x `flit_threshold` / 2**40 (the FLIT's probability
from `flit_threshold(ber)` in figures.py; exact while it is small), and a hit flips one uniformly drawn bit of its FLITs
(a pair's second packet comes after the first's). The draws are seeded (`seed`, loaded on `seed_load`) and
repeatable.

Delay: `delay` cycles after serialization (TX and RX SerDes plus fiber, set at run time), in order.

Latency: ceil(FLITs' time) cycles (at least 1) + max(`delay`, 1). All settings are run-time signals.
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.delay import DelayLine
from monet.cores.common.layouts import HMC_FLIT_BITS as FLIT_BITS, HMC_PAYLOAD_BITS as PAYLOAD_BITS
from monet.cores.common.layouts import hmc_packet_layout as packet_layout
from monet.cores.phy.channel import WireTime
from monet.cores.phy.errors import xorshift64, seed_state
from monet.cores.phy.figures import THRESHOLD_BITS, flit_ps


class HMCChannel(LiteXModule):
    def __init__(self, clk_ps=4000, depth=256, salt=0):
        self.sink   = sink   = stream.Endpoint(packet_layout)
        self.source = source = stream.Endpoint(packet_layout)
        self.flit_ps        = Signal(16, reset=flit_ps(16, 10))
        self.delay          = Signal(16, reset=1)
        self.flit_threshold = Signal(THRESHOLD_BITS)
        self.seed           = Signal(32)
        self.seed_load      = Signal()
        self.flits          = Signal(48)   # FLITs carried
        self.hits           = Signal(32)   # packets hit by a bit error

        # # #

        # Serializer: hold each packet for its FLITs' time.
        self.wire = wire = WireTime(clk_ps)
        self.busy_cycles = wire.busy_cycles
        packet     = Record(packet_layout)
        serialized = stream.Endpoint(packet_layout)
        sink_flits = Signal(4)
        self.comb += [
            sink_flits.eq(sink.lng + sink.second),
            wire.cost.eq(sink_flits * self.flit_ps),
            wire.offered.eq(sink.valid),
            sink.ready.eq(wire.accept),
            serialized.valid.eq(wire.done),
            wire.drained.eq(serialized.ready),
            serialized.payload.eq(packet),
        ]
        self.sync += If(wire.take,
            packet.eq(sink.payload),
            self.flits.eq(self.flits + sink_flits),
        )

        # Bit errors: one draw a packet, on its way out of the serializer.
        state = Signal(64, reset=(0x6A09E667 ^ (salt + 1)) << 32 | (((salt + 1) * 0x9E3779B9) & 0xFFFFFFFF))
        step  = xorshift64(self, state, "hmc_rng")
        self.sync += If(self.seed_load, state.eq(seed_state(self.seed, salt + 1))
                     ).Elif(serialized.valid & serialized.ready, state.eq(step))
        threshold = Signal(THRESHOLD_BITS + 4)
        hit       = Signal()
        packet_flits = Signal(4)
        packet_bits = Signal(11)   # the first packet's
        record_bits = Signal(11)   # with the second's
        position  = Signal(11)     # the bit hit, 0 .. record_bits - 1 (packet bit order, the second after)
        draw      = Signal(16)
        scaled    = Signal(27)
        tail_at   = Signal(11)
        payload_at = Signal(11)
        second_at = Signal(11)
        hit_packet = Record(packet_layout)
        self.comb += [
            packet_flits.eq(packet.lng + packet.second),
            threshold.eq(packet_flits * self.flit_threshold),
            hit.eq(state[:THRESHOLD_BITS] < threshold),
            draw.eq(state[THRESHOLD_BITS:THRESHOLD_BITS + 16]),
            packet_bits.eq(packet.lng * FLIT_BITS),
            record_bits.eq(packet_flits * FLIT_BITS),
            scaled.eq(draw * record_bits),
            position.eq(scaled[16:]),
            tail_at.eq(packet_bits - 64),
            payload_at.eq(position - 64),
            second_at.eq(position - packet_bits),
            hit_packet.eq(packet),
            If(hit,
                If(position >= packet_bits,
                    If(second_at < 64,
                        hit_packet.second_header.eq(packet.second_header ^ (Constant(1, 64) << second_at[:6]))
                    ).Else(
                        hit_packet.second_tail.eq(packet.second_tail ^ (Constant(1, 64) << second_at[:6]))
                    )
                ).Elif(position < 64,
                    hit_packet.header.eq(packet.header ^ (Constant(1, 64) << position[:6]))
                ).Elif(position >= tail_at,
                    hit_packet.tail.eq(packet.tail ^ (Constant(1, 64) << (position - tail_at)[:6]))
                ).Else(
                    hit_packet.data.eq(packet.data ^ (Constant(1, PAYLOAD_BITS) << payload_at[:10]))
                )
            ),
        ]
        self.sync += If(serialized.valid & serialized.ready & hit, self.hits.eq(self.hits + 1))

        # SerDes and fiber.
        self.line = line = DelayLine(packet_layout, depth)
        self.comb += [
            line.delay.eq(self.delay),
            line.sink.valid.eq(serialized.valid),
            line.sink.payload.eq(hit_packet),
            serialized.ready.eq(line.sink.ready),
            line.source.connect(source),
        ]
