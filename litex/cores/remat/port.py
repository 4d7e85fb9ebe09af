#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""ReMAT master ports: the native 512-bit port and the CPU's 32-bit Wishbone adapter."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream, wishbone

from monet.cores.common.layouts import LINE_BYTES, LINE_BITS, TAG_BITS

port_req_layout = [
    ("addr", 32),          # byte address inside the ReMAT window.
    ("we",   1),
    ("mask", LINE_BYTES),  # byte enables of the line (writes).
    ("data", LINE_BITS),
    ("id",   TAG_BITS),    # echoed in the response: responses may come back out of order.
]
port_rsp_layout = [
    ("data", LINE_BITS),
    ("err",  1),           # BFCT fault or remote error: data is all ones.
    ("id",   TAG_BITS),
]


class RematPort:
    """A master's view of ReMAT: requests in, responses out (the master must always accept them)."""
    def __init__(self):
        self.req = stream.Endpoint(port_req_layout)
        self.rsp = stream.Endpoint(port_rsp_layout)


class WishboneRematPort(LiteXModule):
    """Converts single 32-bit Wishbone accesses into line transactions on a ReMAT port.

    Reads fetch the line and return the addressed word; writes send the word with its byte enables.
    Latency: 1 cycle in, 1 cycle out. On an error the access ends with `err` and `ack` together (VexRiscv's
    data bus waits for `ack` and ignores `err`, so the CPU sees all ones; software checks the fault counter).
    """
    def __init__(self, port, window_size):
        self.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")

        # # #

        word   = Signal(4)   # 32-bit word inside the 64 B line.
        issued = Signal()
        self.comb += word.eq(bus.adr[0:4])
        # Not in the ack cycle either: the master still holds cyc/stb then, and a second request would
        # later ack some other slave's access (the shared bus ORs the slaves' acks).
        self.comb += [
            port.req.valid.eq(bus.cyc & bus.stb & ~issued & ~bus.ack),
            port.req.addr.eq(Cat(Constant(0, 2), bus.adr)[:log2_int(window_size)]),
            port.req.we.eq(bus.we),
            port.req.data.eq(Replicate(bus.dat_w, LINE_BITS // 32)),
            Case(word, {w: port.req.mask[4*w:4*(w+1)].eq(bus.sel) for w in range(LINE_BITS // 32)}),
            port.req.id.eq(0),
            port.rsp.ready.eq(1),
        ]
        words = Array(port.rsp.data[32*i:32*(i+1)] for i in range(LINE_BITS // 32))
        self.sync += [
            bus.ack.eq(0),
            bus.err.eq(0),
            If(port.req.valid & port.req.ready, issued.eq(1)),
            If(port.rsp.valid & issued,
                issued.eq(0),
                bus.ack.eq(1),
                bus.err.eq(port.rsp.err),
                bus.dat_r.eq(words[word]),
            ),
        ]
