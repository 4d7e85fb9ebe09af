#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""HMC host controller: line transactions (as ReMAT and the memory card carry them) over an HMC link.

A read of a 64 B line is an RD64; a write of a whole line a WR64 (non-posted: its WR_RS is the write's
acknowledgement). Lines never cross the device's 128 B blocks. The transaction's tag is the HMC tag (HMC
1.1's 9 bits: 512 tags, as many as ReMAT's), so responses come back in the device's order: out of order
across vaults, in order within one.

HMC writes whole 16 B FLITs. A write with a partial byte mask is a read-modify-write: RD64 of the line,
the written bytes merged into it, WR64; requests behind it wait until its WR64 has left, and since one
link's requests to one vault and bank run in order, every access before it is in the line it reads and
every access after it sees its write. (HMC's bit write, BWR, would save the read; its payload layout is
not in our references.) A masked write so costs one read round trip more than a full one. The read goes
under the write's own tag: nothing else holds that tag until the write is answered, so its response is the
one that comes with it while the read is out.

ERROR responses become T_ERR answers. Responses go up as the link delivers them; back-pressure on `source`
holds the link's input buffer and so the device's tokens.

sink: requests (`txn_layout`: T_RD_REQ, T_WR_REQ; anything else is answered T_ERR at once). source:
T_RD_RSP with the line, T_WR_ACK, or T_ERR, each with its request's tag and line address.

with_block_port: a second port for whole 128 B blocks (`block_txn_layout`), as the paper's benchmark block
drives its local HMC (burst length 1, 128 B): a T_RD_REQ is an RD128, a T_WR_REQ a WR128 of `data`, both
answered on `block_source` (T_RD_RSP with the block, T_WR_ACK, T_ERR) with their tag (BLOCK_TAGS of them,
as many as the benchmark block's ids). The two ports take the HMC's tag space in turn: a port issues only
while the other has no packet out (`block_turn`, a register, says whose turn it is, and every answer is that
port's). The line port goes first: it takes the turn back once the block port's packets are answered, and
the block port takes it when the line port has no request waiting, no packet out, no read-modify-write under
way and no error answer waiting. Nothing in the system drives both at once (the benchmark block's direct
mode runs while the CPU waits for it).

Latency: 1 cycle on the request path (a register between the requests formed here and the link layer's
choice of what leaves, and a skid register before it that holds a request only while the link refuses
one), 1 on the response path (a register after the pair splitter: a pair of responses, the device's WR_RS
beside another response, goes up one after the other, the second a cycle later); the link layer adds 1
cycle out and 3 in (link.py, with its CRC stage): 6 in all, 3 more than before the cuts for a board at
250 MHz.
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.arith import count_strobes
from monet.cores.common.layouts import *
from monet.cores.hmc.link import HMCLinkLayer, PairSplitter, packet_layout
from monet.cores.hmc import packet as hmc
from monet.cores.hmc.packet import REQUEST_HEADER, RESPONSE_HEADER, RD_RS, WR_RS, read_cmd, write_cmd

HOST_TOKENS = 255     # openHMC's RX input buffer default (LOG_MAX_RX_TOKENS = 8)
BLOCK_BYTES = hmc.MAX_DATA_BYTES      # 128 B, the largest HMC access
BLOCK_TAG_BITS = TAG_BITS
BLOCK_TAGS  = 2**BLOCK_TAG_BITS
assert TAG_BITS <= hmc.TAG_BITS, "the transactions' tags are HMC tags"

# A 128 B block transaction: T_RD_REQ / T_WR_REQ in, T_RD_RSP / T_WR_ACK / T_ERR out; laddr is its first line.
# `second`: a request may carry a block read after it (`second_tag`, `second_laddr`), which leaves in the
# same cycle (the link layer's pair); an answer may carry a second, data-less answer (`second_type`
# T_WR_ACK or T_ERR, `second_tag`) that came in the same cycle.
block_txn_layout = [
    ("type",  4),
    ("tag",   BLOCK_TAG_BITS),
    ("laddr", LADDR_BITS),          # requests (and error answers): the block's first line, even
    ("data",  8 * BLOCK_BYTES),
    ("second",       1),
    ("second_type",  4),
    ("second_tag",   BLOCK_TAG_BITS),
    ("second_laddr", LADDR_BITS),
]


def answer_type(cmd):
    """The answer type (T_RD_RSP, T_WR_ACK, T_ERR) of a response command, on either port."""
    return Mux(cmd == RD_RS, T_RD_RSP, Mux(cmd == WR_RS, T_WR_ACK, T_ERR))


def read_request_header(n_bytes, tag, adrs):
    """The header of an RD of `n_bytes` (1 FLIT: LNG = DLN = 1)."""
    return REQUEST_HEADER.pack(cmd=read_cmd(n_bytes), lng=1, dln=1, tag=tag, adrs=adrs)


def send_request(request, write, n_bytes, tag, adrs):
    """The header and LNG of an RD or WR of `n_bytes` on the link layer's `request` (a WR carries its data:
    LNG = DLN = its FLITs + 1). `write` is a bool or a Migen expression choosing between the two."""
    flits = n_bytes // hmc.FLIT_BYTES + 1
    read_header = read_request_header(n_bytes, tag, adrs)
    write_header = REQUEST_HEADER.pack(cmd=write_cmd(n_bytes), lng=flits, dln=flits, tag=tag, adrs=adrs)
    if isinstance(write, bool):
        return [request.header.eq(write_header if write else read_header), request.lng.eq(flits if write else 1)]
    return [request.header.eq(Mux(write, write_header, read_header)), request.lng.eq(Mux(write, flits, 1))]


class HMCHostController(LiteXModule):
    def __init__(self, rx_tokens=HOST_TOKENS, retry_packets=128, with_block_port=False):
        self.sink   = sink   = stream.Endpoint(txn_layout)
        self.source = source = stream.Endpoint(txn_layout)
        self.link   = link   = HMCLinkLayer(rx_tokens=rx_tokens, retry_flits=256, retry_packets=retry_packets,
                                               with_crc_stage=True)
        self.tx, self.rx = link.tx, link.rx
        self.reads      = Signal(32)
        self.writes     = Signal(32)
        self.rmw_writes = Signal(32)   # writes of part of a line (read-modify-write)
        self.errors     = Signal(32)   # ERROR responses and requests that are not requests

        # # #

        adrs      = Signal(hmc.ADDR_BITS)
        full_line = Signal()
        self.comb += [
            adrs.eq(Cat(Constant(0, log2_int(LINE_BYTES)), sink.laddr)),
            full_line.eq(sink.mask == 2**LINE_BYTES - 1),
        ]

        # The line address of each outstanding tag, for the answer.
        self.specials.laddrs = laddrs = Memory(LADDR_BITS, 2**TAG_BITS)
        self.specials.laddr_w = laddr_w = laddrs.get_port(write_capable=True)
        self.specials.laddr_r = laddr_r = laddrs.get_port(async_read=True)

        # Read-modify-write: the write waits here while its line is read.
        rmw = Record([("tag", TAG_BITS), ("laddr", LADDR_BITS), ("mask", LINE_BYTES), ("data", LINE_BITS)])
        rmw_state = Signal(2)     # 0 idle, 1 read to send, 2 read sent: waiting for its data, 3 write to send
        rmw_data  = Signal(LINE_BITS)
        rmw_error = Signal()

        # Whose turn it is on the HMC's tags: the line port's, or (with_block_port) the block port's.
        self.block_turn = block_turn = Signal()

        # Immediate errors (not a request) wait in a one-entry answer register.
        bad_pending = Signal()
        bad = Record([("tag", TAG_BITS), ("laddr", LADDR_BITS)])

        # The requests formed here (a line's, the read-modify-write's, the block port's) reach the link layer
        # through a register, so that its choice of what leaves starts from one; a skid register before it
        # (empty unless the link refused) makes the readiness seen here a register too.
        self.request_skid     = request_skid     = stream.PipeReady(packet_layout)
        self.request_register = request_register = stream.PipeValid(packet_layout)
        self.comb += [request_skid.source.connect(request_register.sink), request_register.source.connect(link.sink)]
        request = request_skid.sink
        is_read, is_write = Signal(), Signal()
        take = Signal()
        self.comb += [
            is_read.eq(sink.type == T_RD_REQ),
            is_write.eq(sink.type == T_WR_REQ),
        ]
        merged = Signal(LINE_BITS)
        self.comb += merged.eq(Cat(*[Mux(rmw.mask[i], rmw.data[8 * i:8 * i + 8], rmw_data[8 * i:8 * i + 8])
                                     for i in range(LINE_BYTES)]))
        self.comb += [
            laddr_w.adr.eq(sink.tag),
            laddr_w.dat_w.eq(sink.laddr),
            If(rmw_state == 1,
                # The line's read, under the write's tag.
                request.valid.eq(1),
                *send_request(request, False, LINE_BYTES, rmw.tag, Cat(Constant(0, log2_int(LINE_BYTES)), rmw.laddr)),
            ).Elif(rmw_state == 3,
                request.valid.eq(1),
                *send_request(request, True, LINE_BYTES, rmw.tag, Cat(Constant(0, log2_int(LINE_BYTES)), rmw.laddr)),
                request.data.eq(merged),
            ).Elif(rmw_state == 0,
                request.valid.eq(sink.valid & (is_read | is_write & full_line) & ~rmw_error & ~bad_pending &
                                 ~block_turn),
                *send_request(request, ~is_read, LINE_BYTES, sink.tag, adrs),
                request.data.eq(sink.data),
                # Anything is taken when the request register, the read-modify-write's error answer and the
                # error answer register are all free: registers only, whatever the type and the mask (a
                # partial write's mask is a 64-input AND, too deep to choose among them in this cycle).
                sink.ready.eq(request.ready & ~rmw_error & ~bad_pending & ~block_turn),
            ),
            take.eq(sink.valid & sink.ready),
            laddr_w.we.eq(take & (is_read | is_write)),
        ]
        if with_block_port:
            self.block_requests(request, block_turn & ~sink.valid)
        self.sync += [
            If(take,
                If(is_read, self.reads.eq(self.reads + 1)),
                If(is_write, self.writes.eq(self.writes + 1)),
            ),
            If(take & is_write & ~full_line,
                rmw_state.eq(1),
                rmw.tag.eq(sink.tag), rmw.laddr.eq(sink.laddr), rmw.mask.eq(sink.mask), rmw.data.eq(sink.data),
                self.rmw_writes.eq(self.rmw_writes + 1),
            ),
            If((rmw_state == 1) & request.ready, rmw_state.eq(2)),
            If((rmw_state == 3) & request.ready, rmw_state.eq(0)),
            If(take & ~is_read & ~is_write,
                bad_pending.eq(1), bad.tag.eq(sink.tag), bad.laddr.eq(sink.laddr),
            ),
        ]

        # Responses, a pair's two one after the other, through a register: the answers are decoded from it, not
        # from the input buffer's LUT-RAM read through the splitter.
        self.splitter = splitter = PairSplitter()
        self.response_register = response_register = stream.PipeValid(packet_layout)
        self.comb += [link.source.connect(splitter.sink), splitter.source.connect(response_register.sink)]
        self.comb += splitter.keep.eq(block_turn)    # a pair of block answers goes up whole
        response = response_register.source
        r_cmd, r_tag = Signal(6), Signal(hmc.TAG_BITS)
        own, block, block_ready = Signal(), Signal(), Signal()   # block: an answer to the block port
        self.comb += [
            r_cmd.eq(RESPONSE_HEADER.get(response.header, "cmd")),
            r_tag.eq(RESPONSE_HEADER.get(response.header, "tag")),
            own.eq((rmw_state == 2) & (r_tag == rmw.tag)),   # the read-modify-write's read
            block.eq(block_turn),
            laddr_r.adr.eq(r_tag),
        ]
        # The read-modify-write's read comes back: merge and send the write (or answer the write's error).
        self.sync += If(response.valid & own,
            rmw_data.eq(response.data[:LINE_BITS]),
            If(r_cmd == RD_RS,
                rmw_state.eq(3),
            ).Else(
                rmw_state.eq(0),
                rmw_error.eq(1),
            ),
        )
        self.comb += [
            If(response.valid & own,
                response.ready.eq(1),
            ).Elif(response.valid & block,
                response.ready.eq(block_ready),
            ).Elif(rmw_error,
                source.valid.eq(1),
                source.type.eq(T_ERR),
                source.tag.eq(rmw.tag),
                source.laddr.eq(rmw.laddr),
            ).Elif(bad_pending,
                source.valid.eq(1),
                source.type.eq(T_ERR),
                source.tag.eq(bad.tag),
                source.laddr.eq(bad.laddr),
            ).Else(
                source.valid.eq(response.valid),
                source.type.eq(answer_type(r_cmd)),
                source.tag.eq(r_tag),
                source.laddr.eq(laddr_r.dat_r),
                source.data.eq(response.data[:LINE_BITS]),
                source.mask.eq(2**LINE_BYTES - 1),
                response.ready.eq(source.ready),
            ),
        ]
        # An error answer is gone when the line port took it: not in a cycle that the read-modify-write's own
        # read had instead (the block port's answers never come beside one: the line port keeps the turn
        # until its error answers are taken).
        errors_shown = Signal()
        self.comb += errors_shown.eq(~(response.valid & own))
        self.sync += [
            If(rmw_error & source.ready & errors_shown, rmw_error.eq(0)),
            If(bad_pending & ~rmw_error & source.ready & errors_shown, bad_pending.eq(0)),
        ]
        # Error answers of both ports, summed into one update (a line's and a block's can come in one cycle),
        # counted a cycle later: the answers' decoding and readiness stay off the counter's carry chain.
        errors_now = [source.valid & source.ready & (source.type == T_ERR)]
        if with_block_port:
            self.comb += block_ready.eq(self.block_source.ready)
            errors_now += self.block_responses(response, response.valid & block, r_cmd, r_tag)
            self.take_turns(request, response, line_waiting=sink.valid,
                            line_idle=(rmw_state == 0) & ~rmw_error & ~bad_pending)
        errors_last = Signal(len(errors_now))
        self.sync += [errors_last.eq(Cat(*errors_now)),
                      self.errors.eq(self.errors + sum(errors_last[i] for i in range(len(errors_now))))]

    def block_requests(self, request, free):
        """The block port's requests, RD128 / WR128 (and a second RD128 in the same cycle), in the cycles
        `free` leaves to it; a block request of another type is answered T_ERR on `block_source` at once (its
        second with it)."""
        self.block_sink   = block_sink   = stream.Endpoint(block_txn_layout)
        self.block_source = stream.Endpoint(block_txn_layout)
        self.block_reads  = Signal(32)
        self.block_writes = Signal(32)
        is_read, is_write = Signal(), Signal()
        self.bad_block = bad_block = Signal()   # a block request that is not a request, answered now

        def adrs(laddr):
            return Cat(Constant(0, log2_int(BLOCK_BYTES)), laddr[1:])
        self.comb += [
            is_read.eq(block_sink.type == T_RD_REQ),
            is_write.eq(block_sink.type == T_WR_REQ),
            bad_block.eq(block_sink.valid & ~is_read & ~is_write),
            If(free & block_sink.valid & (is_read | is_write),
                request.valid.eq(1),
                *send_request(request, ~is_read, BLOCK_BYTES, block_sink.tag, adrs(block_sink.laddr)),
                request.data.eq(block_sink.data),
                request.second.eq(block_sink.second),
                request.second_header.eq(read_request_header(BLOCK_BYTES, block_sink.second_tag,
                                                             adrs(block_sink.second_laddr))),
                block_sink.ready.eq(request.ready),
            ),
        ]
        self.sync += If(block_sink.valid & block_sink.ready & ~bad_block,
            self.block_reads.eq(self.block_reads + is_read + block_sink.second),
            self.block_writes.eq(self.block_writes + is_write),
        )

    def block_responses(self, response, from_link, r_cmd, r_tag):
        """The block port's answers: the link's responses to its tags, else an error for a bad request.
        Returns the conditions that count an error answer this cycle."""
        block_sink, block_source = self.block_sink, self.block_source
        self.comb += If(from_link,
            block_source.valid.eq(1),
            block_source.type.eq(answer_type(r_cmd)),
            block_source.tag.eq(r_tag),
            block_source.data.eq(response.data),
            block_source.second.eq(response.second),
            block_source.second_type.eq(answer_type(RESPONSE_HEADER.get(response.second_header, "cmd"))),
            block_source.second_tag.eq(RESPONSE_HEADER.get(response.second_header, "tag")),
        ).Elif(self.bad_block,
            block_source.valid.eq(1),
            block_source.type.eq(T_ERR),
            block_source.tag.eq(block_sink.tag),
            block_source.laddr.eq(block_sink.laddr),
            block_source.second.eq(block_sink.second),
            block_source.second_type.eq(T_ERR),
            block_source.second_tag.eq(block_sink.second_tag),
            block_sink.ready.eq(block_source.ready),
        )
        answered = block_source.valid & block_source.ready
        return [answered & (block_source.type == T_ERR),
                answered & block_source.second & (block_source.second_type == T_ERR)]

    def take_turns(self, request, response, line_waiting, line_idle):
        """The ports' turns on the HMC's tags: the packets out (sent, less answered; a pair counts two), and
        `block_turn`, which may change only with none out and the line port `line_idle` (no read-modify-write
        under way, no error answer waiting). The line port takes the turn whenever it has a request waiting;
        the block port when it has one and the line port has not."""
        packets_out = Signal(max=BLOCK_TAGS + 1)   # either port's tags bound it
        sent = request.valid & request.ready
        answered = response.valid & response.ready
        count_strobes(self, packets_out, [sent, sent & request.second], [answered, answered & response.second])
        self.sync += If((packets_out == 0) & line_idle,
            self.block_turn.eq(~line_waiting & (self.block_turn | self.block_sink.valid)))
