#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Link framer (TX) and deframer (RX): transactions <-> CRC-protected frames of 64-bit blocks."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.crc import ParallelCRC
from monet.cores.link.common import *


def _canonical(crc, header, mask, data):
    return crc.data.eq(Cat(data, mask, header))


class LinkFramer(LiteXModule):
    """Turns transactions into frames and frames into beats of up to 8 blocks.

    Latency: 1 cycle from a transaction to its first beat (the frame image is registered).
    A read request or an acknowledge is one beat; a line-carrying frame is two (8 + 2 or 8 + 3 blocks).
    """
    def __init__(self):
        self.sink   = sink   = stream.Endpoint(txn_layout)
        self.source = source = stream.Endpoint(beat_layout)

        # # #

        self.crc = crc = ParallelCRC(CANON_BITS)

        header  = Signal(64)
        partial = Signal()
        carries = Signal()
        self.comb += [
            partial.eq((sink.type == T_WR_REQ) & (sink.mask != (2**LINE_BYTES - 1))),
            carries.eq((sink.type == T_WR_REQ) | (sink.type == T_RD_RSP)),
            header.eq(Cat(sink.type, sink.tag, sink.laddr, partial)),
            crc.data.eq(Cat(Mux(carries, sink.data, 0), Mux(partial, sink.mask, 0), header)),
        ]

        # Frame image: up to 11 blocks (data, ctrl), built in one cycle, then sent as beats.
        # 16 entries so that offset + i (offset is 0 or 8) never indexes past the array.
        blocks = Array(Signal(64, name=f"blk{i}") for i in range(16))
        ctrls  = Signal(16)
        ctrl_bits = Array(ctrls[i] for i in range(16))
        length = Signal(4)
        offset = Signal(4)  # first block of the current beat.
        loaded = Signal()

        data_words = [sink.data[64*i:64*(i+1)] for i in range(8)]
        trailer    = Cat(crc.crc, Constant(0, 32))

        def load_image():
            stmts = [blocks[0].eq(header), offset.eq(0), loaded.eq(1)]
            # Full frame with mask: h m d0..d7 t ; without mask: h d0..d7 t ; no data: h t.
            with_mask    = [sink.mask] + data_words + [trailer]
            without_mask = data_words + [trailer, 0]
            no_data      = [trailer] + [0]*9
            for i in range(1, FRAME_MAX_BLOCKS):
                stmts.append(blocks[i].eq(
                    Mux(partial, with_mask[i-1], Mux(carries, without_mask[i-1], no_data[i-1]))))
            stmts += [
                length.eq(Mux(partial, 11, Mux(carries, 10, 2))),
                ctrls.eq(Mux(partial, 0b10000000001, Mux(carries, 0b01000000001, 0b11))),
            ]
            return stmts

        remaining = Signal(4)
        self.comb += [
            remaining.eq(length - offset),
            source.valid.eq(loaded),
            source.count.eq(Mux(remaining > 8, 8, remaining)),
            source.data.eq(Cat(*[blocks[offset + i] for i in range(8)])),
            source.ctrl.eq(Cat(*[ctrl_bits[offset + i] for i in range(8)])),
            sink.ready.eq(~loaded | (source.ready & (remaining <= 8))),
        ]
        self.sync += [
            If(source.valid & source.ready,
                If(remaining > 8,
                    offset.eq(offset + 8)
                ).Else(
                    loaded.eq(0)
                )
            ),
            If(sink.valid & sink.ready, *load_image())
        ]


class LinkDeframer(LiteXModule):
    """Gathers beats into frames, checks the CRC and emits transactions.

    Latency: 1 cycle after the beat that ends the frame. A frame that fails its CRC or makes no sense is
    dropped and counted (replay comes with the reliability layer). The deframer never stalls: the channel
    cannot be paused, so its source must always be ready (a FIFO sized by the tag limit sits behind it).
    """
    def __init__(self):
        self.sink   = sink   = stream.Endpoint(beat_layout)
        self.source = source = stream.Endpoint(txn_layout)
        self.crc_errors = Signal(32)
        self.frames     = Signal(32)

        # # #

        self.crc = crc = ParallelCRC(CANON_BITS)

        first   = Signal(8*64)  # first beat of a two-beat frame.
        pending = Signal()      # first beat held, waiting for the second.
        length  = Signal(4)

        beat_hdr   = sink.data[:64]
        hdr_type   = beat_hdr[0:4]
        hdr_masked = beat_hdr[48]
        beat_len   = Signal(4)
        self.comb += beat_len.eq(
            Mux((hdr_type == T_WR_REQ) | (hdr_type == T_RD_RSP), Mux(hdr_masked, 11, 10), 2))

        # The whole frame as blocks, once the last beat is in.
        image = Array(Signal(64, name=f"img{i}") for i in range(16))
        words = Signal(16*64)
        self.comb += [
            words.eq(Mux(pending, Cat(first, sink.data), Cat(sink.data, Constant(0, 8*64)))),
        ]
        for i in range(16):
            self.comb += image[i].eq(words[64*i:64*(i+1)])

        length_r = Signal(4)
        header   = image[0]
        h_type  = header[0:4]
        masked  = header[48]
        carries = Signal()
        mask    = Signal(64)
        data    = Signal(512)
        trailer = Signal(64)
        self.comb += [
            carries.eq((h_type == T_WR_REQ) | (h_type == T_RD_RSP)),
            mask.eq(Mux(masked, image[1], 2**64 - 1)),
            data.eq(Mux(masked, Cat(*[image[2+i] for i in range(8)]), Cat(*[image[1+i] for i in range(8)]))),
            trailer.eq(image[length - 1]),
            length.eq(Mux(pending, length_r, beat_len)),
            crc.data.eq(Cat(Mux(carries, data, 0), Mux(masked, image[1], 0), header)),
        ]

        complete = Signal()
        self.comb += complete.eq(sink.valid & (pending | (beat_len <= 8)))
        self.comb += sink.ready.eq(1)
        self.sync += [
            source.valid.eq(0),
            If(sink.valid,
                If(~pending & (beat_len > 8),
                    pending.eq(1),
                    first.eq(sink.data),
                    length_r.eq(beat_len),
                ).Else(
                    pending.eq(0),
                )
            ),
            If(complete,
                self.frames.eq(self.frames + 1),
                If(trailer[:32] == crc.crc,
                    source.valid.eq(1),
                    source.type.eq(h_type),
                    source.tag.eq(header[4:12]),
                    source.laddr.eq(header[12:48]),
                    source.mask.eq(mask),
                    source.data.eq(data),
                ).Else(
                    self.crc_errors.eq(self.crc_errors + 1),
                )
            )
        ]
