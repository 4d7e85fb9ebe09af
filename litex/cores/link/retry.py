#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Link-level reliability: go-back-N replay with sequence numbers, acks and naks; credit flow control.

Each end numbers the transactions it sends (SEQ_BITS, modulo) and keeps them in a retry buffer until the
peer acknowledges them. Every trailer carries the sender's cumulative ack (the next sequence number it
expects) and a nak bit (replay from the ack). The receiver delivers a frame only if its CRC holds and its
first sequence number is the one expected; a damaged or out-of-order frame is dropped and answered with a
nak, duplicates (replayed frames already delivered) are dropped silently. A lost nak or a lost last frame
is covered by timers: the receiver asks again, the sender replays from the oldest unacknowledged
transaction. Nothing is delivered twice and nothing out of order, so the memory card and ReMAT never see
a damaged or repeated transaction.
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.csr import async_memory
from monet.cores.common.layouts import *

UNIT_BYTES_LINE  = 72   # a unit with a line on the wire: header + 8 data blocks.
# Cycles a pure ack or credit return waits for a frame to ride on before it goes alone: an immediate
# control frame would take the wire just before the response it acknowledges the request of (a block
# time, 1-2 cycles on one slow lane). Naks never wait.
CONTROL_DELAY    = 16
UNIT_BYTES_EMPTY = 8    # a unit without data: the header block.


def seq_distance_bits(module, a, b, bits, name):
    """(a - b) modulo 2**bits, in a signal of its own (a wrapping subtraction must be truncated before it is
    compared or added, in Verilog as in Migen)."""
    d = Signal(bits, name=name)
    module.comb += d.eq(a - b)
    return d


def seq_distance(module, a, b, name):
    return seq_distance_bits(module, a, b, SEQ_BITS, name)


class RetryBuffer(LiteXModule):
    """Go-back-N sender: numbers transactions, keeps them until acknowledged, replays on a nak or a timeout.

    Latency: 0 cycles (a transaction passes straight through when none waits before it); `replayed_bytes`
    follows a replay by a cycle. 8 logic levels (`monet board estimate`).
    `depth` transactions are kept (a power of two below 2**(SEQ_BITS-1)); size it for the bandwidth x round
    trip of the longest link (host/monet/link/model.py reports what each configuration needs). When it is
    full the sink stalls (`window_stalls` counts those cycles).

    Inputs from the peer's good trailers: `ack_valid`, `ack`, `nak`. `restart` replays everything
    unacknowledged at once (the link came back up). `timeout` is in cycles without ack progress.
    """
    def __init__(self, depth=256):
        assert depth & (depth - 1) == 0 and depth < 2**(SEQ_BITS - 1)
        self.sink      = sink   = stream.Endpoint(txn_layout)
        self.source    = source = stream.Endpoint(seq_txn_layout)
        self.ack_valid = Signal()
        self.ack       = Signal(SEQ_BITS)
        self.nak       = Signal()
        self.with_nak  = Signal(reset=1)
        self.restart   = Signal()
        self.timeout   = Signal(16, reset=4096)
        self.replays        = Signal(32)   # rewinds (naks, timeouts, restarts)
        self.timeouts       = Signal(32)   # of which on a timeout
        self.nak_replays    = Signal(32)   # of which on a nak alone (neither a timeout nor a restart)
        self.replayed_txns  = Signal(32)
        self.replayed_bytes = Signal(32)   # units sent again, as wire bytes (without trailers)
        self.window_stalls  = Signal(32)

        # # #

        wr, rd = async_memory(self, len(sink.payload.raw_bits()), depth)
        index = log2_int(depth)

        wp = Signal(SEQ_BITS)   # next sequence number to give.
        rp = Signal(SEQ_BITS)   # next to send.
        ap = Signal(SEQ_BITS)   # oldest unacknowledged.
        hi = Signal(SEQ_BITS)   # one past the highest ever sent: rp < hi while replaying.
        # The window ends `depth` past the oldest unacknowledged: a register beside `ap`, so that `full` is a
        # compare of registers rather than a difference compared.
        window_end = Signal(SEQ_BITS, reset=depth)
        full = Signal()
        direct = Signal()
        self.comb += [
            full.eq(wp == window_end),
            sink.ready.eq(~full),
            direct.eq(rp == wp),
            wr.adr.eq(wp[:index]), wr.dat_w.eq(sink.payload.raw_bits()), wr.we.eq(sink.valid & ~full),
            rd.adr.eq(rp[:index]),
            source.valid.eq(~direct | (sink.valid & ~full)),
            source.seq.eq(rp),
        ]
        kept = Record(txn_layout)
        self.comb += kept.raw_bits().eq(rd.dat_r)
        self.comb += [getattr(source, name).eq(Mux(direct, getattr(sink, name), getattr(kept, name)))
                      for name, _ in txn_layout]

        # Acks: cumulative, valid up to what was sent; an ack past rp (after a timeout rewind) moves rp on.
        d_ack = seq_distance(self, self.ack, ap, "retry_d_ack")
        d_hi  = seq_distance(self, hi, ap, "retry_d_hi")
        d_rp  = seq_distance(self, rp, ap, "retry_d_rp")
        ack_ok   = Signal()
        progress = Signal()
        self.comb += [
            ack_ok.eq(self.ack_valid & (d_ack <= d_hi)),
            progress.eq(ack_ok & (d_ack != 0)),
        ]
        timer   = Signal(16)
        expired = Signal()
        rewind  = Signal()
        target  = Signal(SEQ_BITS)
        self.comb += [
            expired.eq((hi != ap) & (timer >= self.timeout)),
            rewind.eq((ack_ok & self.nak & self.with_nak) | expired | self.restart),
            target.eq(Mux(ack_ok, self.ack, ap)),
        ]
        sent   = Signal()
        replay = Signal()
        replayed_unit = Signal(max=UNIT_BYTES_LINE + 1)   # wire bytes of the unit replayed a cycle before
        self.comb += [
            sent.eq(source.valid & source.ready),
            replay.eq(sent & (rp != hi)),
        ]
        self.sync += [
            If(sink.valid & ~full, wp.eq(wp + 1)),
            If(sink.valid & full, self.window_stalls.eq(self.window_stalls + 1)),
            If(rewind,
                rp.eq(target),
                self.replays.eq(self.replays + 1),
                If(expired, self.timeouts.eq(self.timeouts + 1)),
                If(~expired & ~self.restart, self.nak_replays.eq(self.nak_replays + 1)),
            ).Elif(sent,
                rp.eq(rp + 1),
            ).Elif(ack_ok & (d_ack > d_rp),
                rp.eq(self.ack),
            ),
            If(sent & ~replay, hi.eq(rp + 1)),
            If(replay, self.replayed_txns.eq(self.replayed_txns + 1)),
            # A cycle later, off the replayed transaction's path: its type comes out of the buffer's LUT RAM.
            replayed_unit.eq(Mux(replay, Mux(carries_line(source.type), UNIT_BYTES_LINE, UNIT_BYTES_EMPTY), 0)),
            self.replayed_bytes.eq(self.replayed_bytes + replayed_unit),
            If(ack_ok, ap.eq(self.ack), window_end.eq(self.ack + depth)),
            If(progress | (hi == ap) | rewind, timer.eq(0)).Else(timer.eq(timer + 1)),
        ]


class SequenceChecker(LiteXModule):
    """Go-back-N receiver: passes frames in sequence, drops the rest, asks for a replay when one is lost.

    Inputs from the deframer at a frame's end: `frame_end`, `frame_ok` (CRC and structure), `frame_seq`,
    `frame_txns`. `seq_ok` (0 cycles) tells the deframer to deliver the frame. A frame with transactions is
    in sequence if it starts at `ack`, the next number expected; a damaged or early one (a loss before it)
    raises `nak` once, and again after `timeout` cycles if the replay has not arrived. `ctrl_request` asks
    the framer for a trailer alone when a nak waits, or a new ack has waited CONTROL_DELAY cycles for a
    frame to ride on; `ctrl_sent` says a trailer went out.
    """
    def __init__(self):
        self.frame_end    = Signal()
        self.frame_ok     = Signal()
        self.frame_seq    = Signal(SEQ_BITS)
        self.frame_txns   = Signal(6)
        self.seq_ok       = Signal()
        self.ack          = Signal(SEQ_BITS)
        self.nak          = Signal()
        self.ctrl_request = Signal()
        self.ctrl_sent    = Signal()
        self.reset_wait   = Signal()   # forget a replay being waited for (link re-init: the peer replays)
        self.timeout      = Signal(16, reset=4096)
        self.naks         = Signal(32)
        self.duplicates   = Signal(32)   # frames dropped as already delivered
        self.out_of_order = Signal(32)   # good frames dropped because one before them was lost

        # # #

        expected = self.ack
        waiting  = Signal()
        timer    = Signal(16)
        acked    = Signal(SEQ_BITS)   # the ack in the last trailer sent
        waited   = Signal(max=CONTROL_DELAY + 1)
        # In sequence is an equality, beside the distance whose sign tells early from duplicate.
        diff     = seq_distance(self, self.frame_seq, expected, "seq_diff")
        in_seq   = Signal()
        has_txns = Signal()
        early    = Signal()
        ask      = Signal()
        self.comb += [
            in_seq.eq(self.frame_seq == expected),
            has_txns.eq(self.frame_txns != 0),
            self.seq_ok.eq(~has_txns | in_seq),
            early.eq(has_txns & ~in_seq & ~diff[SEQ_BITS - 1]),
            ask.eq((self.frame_end & ~waiting & (~self.frame_ok | early)) |
                   (waiting & (timer >= self.timeout))),
            self.ctrl_request.eq(self.nak | (waited == CONTROL_DELAY)),
        ]
        self.sync += If(self.ctrl_sent | (acked == expected), waited.eq(0)).Elif(waited != CONTROL_DELAY,
                                                                                 waited.eq(waited + 1))
        self.sync += [
            If(self.frame_end & self.frame_ok & has_txns & in_seq,
                expected.eq(expected + self.frame_txns),
                waiting.eq(0),
            ),
            If(self.frame_end & self.frame_ok & has_txns & ~in_seq,
                If(early, self.out_of_order.eq(self.out_of_order + 1)
                ).Else(self.duplicates.eq(self.duplicates + 1))
            ),
            If(self.ctrl_sent, acked.eq(expected), self.nak.eq(0)),
            If(ask,
                self.nak.eq(1), waiting.eq(1), timer.eq(0), self.naks.eq(self.naks + 1),
            ).Elif(self.reset_wait,
                waiting.eq(0), timer.eq(0),
            ).Elif(waiting,
                timer.eq(timer + 1),
            ),
        ]


class CreditGate(LiteXModule):
    """Credit flow control toward the peer's receive buffer: a request (read or write) goes out only while
    fewer than `limit` requests are between this gate and the peer's consumer (0: no flow control).

    The peer returns a credit each time its consumer takes a request, as a cumulative count modulo
    2**CREDIT_BITS in every trailer it sends (`returned`, valid with `returned_valid`): a lost trailer
    loses no credit, the next one carries the total. `limit` must stay below 2**CREDIT_BITS. 0 cycles.
    """
    def __init__(self, limit=0):
        assert limit < 2**CREDIT_BITS
        self.sink   = sink   = stream.Endpoint(txn_layout)
        self.source = source = stream.Endpoint(txn_layout)
        self.limit          = Signal(CREDIT_BITS, reset=limit)
        self.returned_valid = Signal()
        self.returned       = Signal(CREDIT_BITS)
        self.in_use         = Signal(CREDIT_BITS + 1)
        self.stalls         = Signal(32)   # cycles a request waited for a credit

        # # #

        last  = Signal(CREDIT_BITS)
        delta = seq_distance_bits(self, self.returned, last, CREDIT_BITS, "credit_delta")
        needs   = Signal()
        allowed = Signal()
        self.comb += [
            needs.eq((sink.type == T_RD_REQ) | (sink.type == T_WR_REQ)),
            allowed.eq((self.limit == 0) | ~needs | (self.in_use < self.limit)),
            sink.connect(source, omit={"valid", "ready"}),
            source.valid.eq(sink.valid & allowed),
            sink.ready.eq(source.ready & allowed),
        ]
        take = Signal()
        self.comb += take.eq(sink.valid & sink.ready & needs & (self.limit != 0))
        self.sync += [
            self.in_use.eq(self.in_use + take - Mux(self.returned_valid, delta, 0)),
            If(self.returned_valid, last.eq(self.returned)),
            If(sink.valid & needs & ~allowed, self.stalls.eq(self.stalls + 1)),
        ]


class CreditReturn(LiteXModule):
    """The receiving side of credit flow control: counts requests its consumer took (`freed`), modulo
    2**CREDIT_BITS, for every trailer, and asks for a control frame when a count has waited CONTROL_DELAY
    cycles for a frame to ride on."""
    def __init__(self):
        self.freed        = Signal()
        self.count        = Signal(CREDIT_BITS)
        self.ctrl_request = Signal()
        self.ctrl_sent    = Signal()

        # # #

        sent   = Signal(CREDIT_BITS)
        waited = Signal(max=CONTROL_DELAY + 1)
        self.comb += self.ctrl_request.eq(waited == CONTROL_DELAY)
        self.sync += [
            If(self.freed, self.count.eq(self.count + 1)),
            If(self.ctrl_sent, sent.eq(self.count)),
            If(self.ctrl_sent | (sent == self.count), waited.eq(0)).Elif(waited != CONTROL_DELAY,
                                                                         waited.eq(waited + 1)),
        ]
