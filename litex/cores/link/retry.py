#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Link-level reliability: go-back-N or selective-repeat replay with sequence numbers, acks and naks; credit flow
control.

Each end numbers the transactions it sends (SEQ_BITS, modulo) and keeps them in a retry buffer until the
peer acknowledges them. Every trailer carries the sender's cumulative ack (the next sequence number it
expects) and a nak bit (replay from the ack). The receiver delivers a frame only if its CRC holds and its
first sequence number is the one expected; a damaged or out-of-order frame is dropped and answered with a
nak, duplicates (replayed frames already delivered) are dropped silently. A lost nak or a lost last frame
is covered by timers: the receiver asks again, the sender replays from the oldest unacknowledged
transaction. Nothing is delivered twice and nothing out of order, so the memory card and ReMAT never see
a damaged or repeated transaction.

Selective repeat (a run-time choice, both ends alike) keeps the good frames behind a lost one: the sequence
checker keeps them, a ReorderStore behind the deframer holds their transactions until the lost frame comes,
and the sender resends that frame alone (a nak then means "resend the frame that starts at the ack").
"""


from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.arith import pick
from monet.cores.common.csr import async_memory
from monet.cores.common.fifo import LevelFIFO
from monet.cores.common.layouts import *

UNIT_BYTES_LINE  = 72   # a unit with a line on the wire: header + 8 data blocks.
# Cycles a pure ack or credit return waits for a frame to ride on before it goes alone: an immediate
# control frame would take the wire just before the response it acknowledges the request of (a block
# time, 1-2 cycles on one slow lane). Naks never wait.
CONTROL_DELAY    = 16
UNIT_BYTES_EMPTY = 8    # a unit without data: the header block.
FRAME_TXNS_MAX   = 16   # transactions in a frame at most: 8 units, each a pair of lines.
# How far the ReorderStore's delivery can run ahead of the checker's ack: kept transactions leave it one a cycle
# while the ack's jump over them is two cycles from being found (a lead of 17 at most, measured at 100 m, BER
# 1e-5). A larger distance is a backlog, far from any the store can hold.
DELIVERED_LEAD_MAX = 64


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
    A nak at the end of what was sent (the peer lost a frame that carried nothing new: a trailer alone, a
    replayed copy) has nothing to replay: `ctrl_request` then asks the framer for a trailer alone, whose
    sequence number (the next to send) tells the peer's SequenceChecker that nothing is missing; it stays up
    until `ctrl_sent`.

    Selective repeat (`selective`, run time; both ends alike): a nak or a timeout resends one frame, the one
    that starts at the ack (or at the oldest unacknowledged), as the framer last sent it, then sending goes
    on where it was. The framer reports each frame it closes (`closed`, `closed_first`, `closed_last`); the
    last sequence number of the frame that starts at each one is kept in a LUT RAM beside the transactions.
    `resends` counts the frames resent so.
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
        self.ctrl_request = Signal()
        self.ctrl_sent    = Signal()
        self.replays        = Signal(32)   # rewinds (naks, timeouts, restarts)
        self.timeouts       = Signal(32)   # of which on a timeout
        self.nak_replays    = Signal(32)   # of which on a nak alone (neither a timeout nor a restart)
        self.reinit_replays = Signal(32)   # of which on a restart (the link re-initialized) that no timeout met
        self.replayed_txns  = Signal(32)
        self.replayed_bytes = Signal(32)   # units sent again, as wire bytes (without trailers)
        self.window_stalls  = Signal(32)
        self.selective    = Signal()
        self.closed       = Signal()
        self.closed_first = Signal(SEQ_BITS)
        self.closed_last  = Signal(SEQ_BITS)
        self.resends      = Signal(32)

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
        nak_rewind = Signal()   # the peer's nak, taken
        rewind  = Signal()
        target  = Signal(SEQ_BITS)
        self.comb += [
            expired.eq((hi != ap) & (timer >= self.timeout)),
            nak_rewind.eq(ack_ok & self.nak & self.with_nak),
            rewind.eq(nak_rewind | expired | self.restart),
            target.eq(Mux(ack_ok, self.ack, ap)),
        ]
        # Selective repeat: where the frame being resent ends, read as the rewind's target is chosen.
        frame_end_w, frame_end_r = async_memory(self, SEQ_BITS, depth)
        resending  = Signal()
        resend_one = Signal()          # a rewind resends one frame (a restart replays everything)
        stop       = Signal(SEQ_BITS)  # the last sequence number of the frame being resent
        self.comb += [
            resend_one.eq(self.selective & ~self.restart),
            frame_end_w.adr.eq(self.closed_first[:index]), frame_end_w.dat_w.eq(self.closed_last),
            frame_end_w.we.eq(self.closed),
            frame_end_r.adr.eq(target[:index]),
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
                If(~expired & self.restart, self.reinit_replays.eq(self.reinit_replays + 1)),
            ).Elif(sent,
                If(resending & replay & (rp == stop), rp.eq(hi)).Else(rp.eq(rp + 1)),
            ).Elif(ack_ok & (d_ack > d_rp),
                rp.eq(self.ack),
            ),
            If(rewind,
                resending.eq(resend_one), stop.eq(frame_end_r.dat_r),
                If(resend_one, self.resends.eq(self.resends + 1)),
            ).Elif(sent & (~replay | (rp == stop)),
                resending.eq(0),
            ),
            If(sent & ~replay, hi.eq(rp + 1)),
            If(replay, self.replayed_txns.eq(self.replayed_txns + 1)),
            # A cycle later, off the replayed transaction's path: its type comes out of the buffer's LUT RAM.
            replayed_unit.eq(Mux(replay, Mux(carries_line(source.type), UNIT_BYTES_LINE, UNIT_BYTES_EMPTY), 0)),
            self.replayed_bytes.eq(self.replayed_bytes + replayed_unit),
            If(ack_ok, ap.eq(self.ack), window_end.eq(self.ack + depth)),
            # A nak that acks everything sent (nak_rewind with ack == hi, which the ack's window check then
            # passes): no replay, so a trailer answers it. Without the window check: no carry chain before it.
            If(self.ack_valid & self.nak & self.with_nak & (self.ack == hi),
                self.ctrl_request.eq(1),
            ).Elif(self.ctrl_sent,
                self.ctrl_request.eq(0),
            ),
            If(progress | (hi == ap) | rewind, timer.eq(0)).Else(timer.eq(timer + 1)),
        ]


class SequenceChecker(LiteXModule):
    """Go-back-N receiver: passes frames in sequence, drops the rest, asks for a replay when one is lost.

    Inputs from the deframer at a frame's end: `frame_end`, `frame_ok` (CRC and structure), `frame_seq`,
    `frame_txns`. `seq_ok` (0 cycles) tells the deframer to deliver the frame. A frame with transactions is
    in sequence if it starts at `ack`, the next number expected; a damaged or early one (a loss before it)
    raises `nak` once, and again after `timeout` cycles if the replay has not arrived, until a frame with
    transactions at `ack` comes, or a good trailer alone whose sequence number is `ack` (the peer's next:
    nothing is missing, or the replay starts there; RetryBuffer sends one for a nak it has nothing to replay
    for). `ctrl_request` asks the framer for a trailer alone when a nak waits, or a new ack has waited
    CONTROL_DELAY cycles for a frame to ride on; `ctrl_sent` says a trailer went out.

    Selective repeat (`selective`, run time; built with `store_depth` > 0): an early frame that is good is
    kept rather than dropped, if the ReorderStore behind the deframer (`store_depth` transactions from the
    next one it delivers, `delivered`) has room for it. Its transactions are committed and the ReorderStore
    holds them until the frames before them come; a bit a sequence number says which are here. The ack is
    the next sequence number not received: when the missing frame comes, the ack jumps over the kept
    transactions behind it, up to FRAME_TXNS_MAX every third cycle; if a gap remains behind them, a nak asks
    for the frame that starts there. The peer then resends that frame alone (RetryBuffer). `held` counts the
    frames kept (a frame kept twice, a resend of one the store holds, counts twice: the store takes the same
    transactions again).

    Repair (link/repair.py's FrameRepair): while a failed frame is kept for a repair (`repair_hold`) no nak is
    asked, neither for it nor for the frames behind it. Repaired, it is offered (`repair_offer`, `repair_seq`,
    `repair_txns`) and answered unless the ack moves that cycle, for a frame taken in sequence or a jump
    (`repair_ready`): taken like a kept frame (`repair_take`), beside one kept in the same cycle if need be,
    unless it is a duplicate (dropped) or finds no room (asked for, as is a frame the repair could not put right,
    `repair_fallback`). Neither the offer nor a jump waits for a cycle without a frame's end: frames of one
    request each can end nearly every cycle, and a repair or a jump that waited for a gap between them would
    hold the requests behind it for as long (a hundred cycles a repair, measured, at 100 m and BER 1e-5).
    """
    def __init__(self, store_depth=0):
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
        self.has_txns     = Signal()     # the frame at `frame_end` carries transactions
        self.in_seq       = Signal()     # ... and starts at `ack`
        self.selective    = Signal()
        self.reordering   = Signal()           # from the ReorderStore: committed frames now go through it
        self.delivered    = Signal(SEQ_BITS)   # from the ReorderStore: the next sequence number it delivers
        self.held_any     = Signal()           # frames are kept behind a gap
        self.held         = Signal(32)
        # A failed frame kept for a repair from its CRC (link/repair.py's FrameRepair).
        self.repair_hold     = Signal()   # it is kept: ask for no lost frame meanwhile
        self.repair_fallback = Signal()   # it was not repaired: ask for it now
        self.repair_offer    = Signal()   # it is repaired: its first sequence number and transactions
        self.repair_seq      = Signal(SEQ_BITS)
        self.repair_txns     = Signal(6)
        self.repair_ready    = Signal()   # the offer is answered this cycle ...
        self.repair_take     = Signal()   # ... and taken: its transactions are received

        # # #

        expected = self.ack
        waiting  = Signal()
        timer    = Signal(16)
        acked    = Signal(SEQ_BITS)   # the ack in the last trailer sent
        waited   = Signal(max=CONTROL_DELAY + 1)
        # In sequence is an equality, beside the distance whose sign tells early from duplicate.
        diff     = seq_distance(self, self.frame_seq, expected, "seq_diff")
        in_seq   = self.in_seq
        has_txns = self.has_txns
        early    = Signal()
        ask      = Signal()
        takes    = Signal()   # an in-sequence frame is taken: the ack moves on by its transactions
        keep     = Signal()   # an early frame is kept (selective repeat)
        gap      = Signal()   # kept frames wait behind a gap that no nak asks for yet
        in_seq_ok = Signal()  # an in-sequence frame finds room (in the ReorderStore, while it reorders)
        refused  = Signal()   # a kept frame was not repaired, or repaired but found no room: ask for it
        self.comb += [
            in_seq.eq(self.frame_seq == expected),
            has_txns.eq(self.frame_txns != 0),
            self.seq_ok.eq(~has_txns | in_seq_ok | keep),
            early.eq(has_txns & ~in_seq & ~diff[SEQ_BITS - 1]),
            takes.eq(self.frame_end & self.frame_ok & has_txns & in_seq_ok),
            # Under selective repeat an early frame behind kept ones asks nothing: the ack may be on its way over
            # them, and a gap left behind them is asked for once it stops (`gap`).
            ask.eq(((self.frame_end & ~waiting & (~self.frame_ok | early & ~(self.selective & self.held_any)) | gap) &
                    ~self.repair_hold) |
                   (waiting & (timer >= self.timeout)) | (refused & ~waiting)),
            self.ctrl_request.eq(self.nak | (waited == CONTROL_DELAY)),
        ]
        if store_depth:
            self._received(store_depth, expected, waiting, early, keep, gap, in_seq_ok, takes, refused)
        else:
            self.comb += in_seq_ok.eq(in_seq), self.repair_ready.eq(1), refused.eq(self.repair_fallback)
        self.sync += If(self.ctrl_sent | (acked == expected), waited.eq(0)).Elif(waited != CONTROL_DELAY,
                                                                                 waited.eq(waited + 1))
        self.sync += [
            If(takes,
                expected.eq(expected + self.frame_txns),
            ),
            If(takes | (self.frame_end & self.frame_ok & ~has_txns & in_seq),
                waiting.eq(0),
            ),
            If(self.frame_end & self.frame_ok & has_txns & ~in_seq_ok & ~keep,
                If(early | in_seq, self.out_of_order.eq(self.out_of_order + 1)
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


    def _received(self, window, expected, waiting, early, keep, gap, in_seq_ok, takes, refused):
        """Selective repeat's received transactions ahead of the ack: a bit each, by sequence number modulo
        `window` (the ReorderStore's depth). What depends on the bits is registered before it is used (a board's
        8 levels): the bits change a cycle after a frame is kept or the ack moves, a jump of the ack is applied a
        cycle after it is found (if the ack did not move meanwhile), and a gap is asked for a cycle after it is
        seen still."""
        index = log2_int(window)
        got = Signal(window)

        groups = window // FRAME_TXNS_MAX

        def ring_mask(name, start, length, active):
            """`length` (up to FRAME_TXNS_MAX) bits from `start`, modulo the window; worked out only if `active`.
            The bits shifted within two groups of FRAME_TXNS_MAX, then each group takes its part: a few levels,
            where a shifter over the window would be many."""
            group_bits = log2_int(FRAME_TXNS_MAX)
            ones    = Signal(FRAME_TXNS_MAX, name=f"{name}_ones")
            shifted = Signal(2*FRAME_TXNS_MAX, name=f"{name}_shifted")
            mask    = Signal(window, name=f"{name}_mask")
            first   = start[group_bits:index]
            self.comb += If(active,
                ones.eq(Cat(*[length > k for k in range(FRAME_TXNS_MAX)])),
                shifted.eq(ones << start[:group_bits]),
                mask.eq(Cat(*[Replicate(first == j, FRAME_TXNS_MAX) & shifted[:FRAME_TXNS_MAX] |
                              Replicate(first == (j - 1) % groups, FRAME_TXNS_MAX) & shifted[FRAME_TXNS_MAX:]
                              for j in range(groups)])),
            )
            return mask

        # Room in the ReorderStore's window from the next transaction it delivers: for a frame at the ack, the ack
        # no more than window - 2 frames past that (a register a cycle old, when the ack moves a frame at most);
        # for an early frame, its start no more than window - a frame past it. The store can deliver a few
        # transactions past the ack, kept ones whose jump the ack has yet to make (a jump is found two cycles
        # after their bits show): a backlog below 0, by DELIVERED_LEAD_MAX at most, is room.
        backlog = seq_distance(self, expected, self.delivered, "held_backlog")
        ahead_of_delivered = seq_distance(self, self.frame_seq, self.delivered, "held_ahead")
        room = Signal()
        self.sync += room.eq((backlog >= 2**SEQ_BITS - DELIVERED_LEAD_MAX) | (backlog <= window - 2*FRAME_TXNS_MAX))
        self.comb += [
            keep.eq(self.selective & self.frame_end & self.frame_ok & early &
                    (ahead_of_delivered < window - FRAME_TXNS_MAX)),
            in_seq_ok.eq(self.in_seq & (~self.reordering | room)),
        ]
        # A repaired frame is received like a kept one, in a cycle when the ack does not move (no frame taken in
        # sequence, no jump): unless it is behind the ack (a duplicate) or finds no room, when it is asked for.
        repair_behind = seq_distance(self, self.repair_seq, expected, "repair_behind")
        repair_ahead  = seq_distance(self, self.repair_seq, self.delivered, "repair_ahead")
        repair_new    = Signal()
        self.comb += [
            repair_new.eq(self.repair_offer & self.repair_ready & ~repair_behind[SEQ_BITS - 1]),
            self.repair_take.eq(repair_new & (repair_ahead < window - FRAME_TXNS_MAX)),
            refused.eq(self.repair_fallback | repair_new & ~self.repair_take & (self.repair_txns != 0)),
        ]
        # The ack jumps over the received transactions ahead of it, up to FRAME_TXNS_MAX at a time, in three
        # steps of registers: the bits at the ack are read out; how many are set in a row and where the ack goes
        # then; the jump, if the ack has not moved since the bits were read.
        ahead  = Signal(FRAME_TXNS_MAX)   # the bits from the ack on, as they were a cycle before
        read   = Signal()                 # ... read with the ack that still holds
        run    = Signal(max=FRAME_TXNS_MAX + 1)
        self.comb += run.eq(FRAME_TXNS_MAX)
        for k in reversed(range(FRAME_TXNS_MAX)):
            self.comb += If(~ahead[k], run.eq(k))
        found    = Signal()                          # a jump found last cycle, with the ack as it still is ...
        jump     = Signal(max=FRAME_TXNS_MAX + 1)    # ... of this many
        jump_to  = Signal(SEQ_BITS)                  # ... to here (the sum registered: no adder behind `takes`)
        jumping  = Signal()
        moves    = Signal()                          # the ack moves this cycle
        self.comb += [
            jumping.eq(found & ~takes),   # a frame taken in sequence moves the ack: the jump waits
            moves.eq(takes | jumping),
            self.repair_ready.eq(~takes & ~jumping),
        ]
        # Bits set and cleared a cycle late, from registers: a kept frame's and a repaired frame's (both in one
        # cycle, if need be), and those the ack passed.
        set_valid, set_at, set_len = Signal(), Signal(SEQ_BITS), Signal(6)
        clr_valid, clr_at, clr_len = Signal(), Signal(SEQ_BITS), Signal(6)
        rep_valid, rep_at, rep_len = Signal(), Signal(SEQ_BITS), Signal(6)
        kept   = Signal(window)
        self.comb += kept.eq(ring_mask("got_set", set_at, set_len, set_valid) |
                             ring_mask("got_repaired", rep_at, rep_len, rep_valid))
        passed = ring_mask("got_clear", clr_at, clr_len, clr_valid)
        seen_gap = Signal()
        cleared  = Signal()   # bits were cleared a cycle ago: `held_any`, a register of them, is a cycle behind
        self.sync += [
            # The map's wide operations only when they can matter (a simulator then skips them: go-back-N, or
            # nothing kept or passed).
            If(self.selective, ahead.eq((Cat(got, got[:FRAME_TXNS_MAX]) >> expected[:index])[:FRAME_TXNS_MAX])),
            read.eq(self.selective & ~moves & ~found),
            found.eq(read & (run != 0) & ~moves), jump.eq(run), jump_to.eq(expected + run),
            If(jumping, expected.eq(jump_to)),
            set_valid.eq(keep), set_at.eq(self.frame_seq), set_len.eq(self.frame_txns),
            rep_valid.eq(self.repair_take), rep_at.eq(self.repair_seq), rep_len.eq(self.repair_txns),
            clr_valid.eq(moves), clr_at.eq(expected), clr_len.eq(Mux(takes, self.frame_txns, jump)),
            If(set_valid | rep_valid | clr_valid, got.eq((got | kept) & ~passed)),
            If(self.selective, self.held_any.eq(got != 0)),
            # A gap: kept transactions, none at the ack, and nothing moving that would change it.
            cleared.eq(clr_valid),
            seen_gap.eq(read & self.held_any & ~ahead[0] & ~moves & ~found & ~set_valid & ~rep_valid & ~clr_valid &
                        ~cleared),
            If(keep, self.held.eq(self.held + 1)),
        ]
        self.comb += gap.eq(seen_gap & ~waiting & ~self.frame_end)


class ReorderStore(LiteXModule):
    """Selective repeat's receiving side, behind the deframer: delivers in sequence the transactions of frames
    that the SequenceChecker kept out of order, and passes the rest straight through.

    Latency: 0 cycles while frames come in sequence (a transaction from `sink` goes out as it comes). Once a
    frame is kept (`commit` of a frame not `commit_in_seq`), it reorders: the transactions already committed
    before that frame still go straight out; every frame committed after it goes into a store of `depth`
    transactions indexed by sequence number and out of it in sequence, at the soonest 3 cycles after the
    commit FIFO gave it (written the next cycle, read out the cycle after, the read registered). It stops
    when everything the checker received has gone out. `stored` counts the transactions that went through
    the store.

    Inputs: the commits of frames with transactions (`commit`, `commit_seq`, `commit_txns`, `commit_in_seq`),
    the commit FIFO's committed transactions still in it (`committed`, and `fifo_valid`: one leaves it now),
    and the checker's ack (`expected`) and kept frames (`held_any`). `direct`: a frame committed now may go
    around the commit FIFO.

    A frame repaired from its CRC (link/repair.py) comes from `inject`, its transactions with their sequence
    numbers, once the checker took it (`repair_begin`, a cycle before the first, starts reordering); each goes
    into the store the next cycle, and the commit FIFO's transaction, if one is there to be stored, waits
    (`sink.ready`). Reordering does not stop while `repair_busy`.
    """
    def __init__(self, depth=512, queue_depth=64):
        assert depth & (depth - 1) == 0 and depth <= 2**(SEQ_BITS - 1)
        self.sink   = sink   = stream.Endpoint(txn_layout)
        self.source = source = stream.Endpoint(txn_layout)
        self.commit        = Signal()
        self.commit_seq    = Signal(SEQ_BITS)
        self.commit_txns   = Signal(6)
        self.commit_in_seq = Signal()
        self.committed     = Signal(8)
        self.fifo_valid    = Signal()   # `sink`'s transaction comes out of the commit FIFO (not around it)
        self.expected      = Signal(SEQ_BITS)
        self.held_any      = Signal()
        self.delivered     = Signal(SEQ_BITS)   # the next sequence number to go out
        self.reordering    = Signal()
        self.direct        = Signal()
        self.stored        = Signal(32)
        self.inject        = inject = stream.Endpoint(seq_txn_layout)   # a repaired frame's transactions
        self.repair_begin  = Signal()   # a repaired frame is taken: reorder from now
        self.repair_busy   = Signal()   # a repair is under way: go on reordering

        # # #

        index = log2_int(depth)
        passing = Signal(reset=1)   # transactions from `sink` go straight out
        run     = Signal(8)         # while reordering, those still to pass (committed before it began)
        begin   = Signal()
        self.comb += [
            # A repaired frame's transactions go into the store before the commit FIFO's, which then wait.
            inject.ready.eq(1),
            sink.ready.eq(passing | ~inject.valid),
            self.direct.eq(~self.reordering & self.commit_in_seq),
            begin.eq((self.commit & ~self.commit_in_seq | self.repair_begin) & ~self.reordering),
        ]
        # Frames committed while reordering, in commit order: their transactions leave the commit FIFO in it.
        self.queue = queue = LevelFIFO([("base", SEQ_BITS), ("count", 6)], queue_depth)
        self.comb += [
            queue.sink.valid.eq(self.commit & (self.reordering | ~self.commit_in_seq)),
            queue.sink.base.eq(self.commit_seq), queue.sink.count.eq(self.commit_txns),
        ]
        to_store = Signal()
        offset   = Signal(6)        # of the transaction in the queue's head frame
        seq      = Signal(SEQ_BITS)
        self.comb += [
            to_store.eq(sink.valid & ~passing & ~inject.valid),
            seq.eq(queue.source.base + offset),
            queue.source.ready.eq(to_store & (offset + 1 == queue.source.count)),
        ]
        self.sync += If(queue.source.ready, offset.eq(0)).Elif(to_store, offset.eq(offset + 1))

        # The store: written a cycle after the transaction leaves the FIFO, if it is not behind the delivery point
        # (a duplicate); a bit a position says it holds the transaction its sequence number names.
        mem = Memory(len(sink.payload.raw_bits()), depth)
        wr  = mem.get_port(write_capable=True)
        rd  = mem.get_port()   # registered read
        self.specials += mem, wr, rd
        w_valid = Signal()
        w_at    = Signal(index)
        w_data  = Signal(len(sink.payload.raw_bits()))
        ahead   = seq_distance(self, seq, self.delivered, "reorder_ahead")
        inject_ahead = seq_distance(self, inject.seq, self.delivered, "reorder_inject_ahead")
        self.sync += [
            w_valid.eq(to_store & (ahead < depth) | inject.valid & (inject_ahead < depth)),
            w_at.eq(Mux(inject.valid, inject.seq, seq)[:index]),
            If(to_store | inject.valid,
                w_data.eq(Mux(inject.valid, Cat(*[getattr(inject, name) for name, _ in txn_layout]),
                              sink.payload.raw_bits())),
                self.stored.eq(self.stored + 1),
            ),
        ]
        held  = Signal(depth)
        here  = Signal()   # the store holds the next transaction to deliver
        issue = Signal()   # it is read out
        out_valid = Signal()
        out = Record(txn_layout)
        self.comb += [
            wr.adr.eq(w_at), wr.dat_w.eq(w_data), wr.we.eq(w_valid),
            If(self.reordering, here.eq((held >> self.delivered[:index])[0])),
            issue.eq(here & ~passing),
            rd.adr.eq(self.delivered[:index]),
            out.raw_bits().eq(rd.dat_r),
            source.valid.eq(sink.valid & passing | out_valid),
            source.payload.raw_bits().eq(Mux(out_valid, out.raw_bits(), sink.payload.raw_bits())),
        ]
        # The map's wide operations only while they can matter (a simulator then skips them in sequence).
        written = Signal(depth)
        drained = Signal(depth)
        self.comb += [If(w_valid, written.eq(Constant(1, depth) << w_at)),
                      If(issue, drained.eq(Constant(1, depth) << self.delivered[:index]))]
        # What still passes after this cycle: counted down from what the FIFO held when reordering began. Both
        # counts are made from registers beside `begin`, which picks one last (a frame's commit is deep), and
        # each count, less one or not, and whether it is 0, beside `fifo_valid`, which picks last too (a
        # transaction leaves the commit FIFO late in the cycle: a repaired frame's injection holds it back).
        # While they pass, nothing goes around the FIFO.
        left_committed, left_run = Signal(8), Signal(8)
        committed_left, run_left = Signal(), Signal()   # ... and is not 0
        for left, more, count in ((left_committed, committed_left, self.committed), (left_run, run_left, run)):
            less1 = Signal(8)
            self.comb += [
                less1.eq(count - 1),
                left.eq(pick(self.fifo_valid, less1, count)),
                more.eq(pick(self.fifo_valid, less1 != 0, count != 0)),
            ]
        done = Signal()   # everything received went out: stop reordering
        self.comb += done.eq(self.reordering & ~passing & ~queue.source.valid & ~w_valid & ~issue & ~sink.valid &
                             ~self.commit & (self.delivered == self.expected) & ~self.held_any &
                             ~self.repair_busy & ~inject.valid)
        self.sync += [
            If(w_valid | issue, held.eq((held | written) & ~drained)),
            out_valid.eq(issue),
            If(sink.valid & passing | issue, self.delivered.eq(self.delivered + 1)),
            If(begin, self.reordering.eq(1)).Elif(done, self.reordering.eq(0)),
            If(begin,
                run.eq(left_committed), passing.eq(committed_left),
            ).Elif(self.reordering & passing,
                run.eq(left_run), passing.eq(run_left),
            ).Elif(done,
                passing.eq(1),
            ),
        ]


class CreditGate(LiteXModule):
    """Credit flow control toward the peer's receive buffer: a request (read or write) goes out only while
    fewer than `limit` requests are between this gate and the peer's consumer (0: no flow control).

    The peer returns a credit for each REQUESTS_PER_CREDIT requests its consumer takes, as a cumulative count
    modulo 2**CREDIT_BITS in every trailer it sends (`returned`, valid with `returned_valid`): a lost trailer
    loses no credit, the next one carries the total. A request whose partner is not yet taken stays counted,
    so `limit` is at most MAX_CREDIT_LIMIT and, unless 0, at least REQUESTS_PER_CREDIT (one request alone
    would never be credited back). While the limit is 0 nothing is counted; credits for requests sent then
    stop at an empty count, so a limit set again later starts from the requests counted before. 0 cycles
    for a request; a trailer's credits count 2 cycles after it (its count registered, then the requests it
    returns: two carry chains, one a cycle). A request taken chooses between the counts with and without it,
    both from registers, so nothing after the next stage's ready is a carry chain.

    `flush` (a link's restart: a new peer, whose count starts from 0): every request is credited back, through
    the credits' own register (`in_use` is 0 the cycle after), and the peer's count is taken from 0 again; a
    trailer of the old peer's still being counted is dropped. Not a restart of `in_use` itself: its path is the
    link's deepest, and a reset beside the one it has took it to 9 levels.
    """
    def __init__(self, limit=0):
        assert limit == 0 or REQUESTS_PER_CREDIT <= limit <= MAX_CREDIT_LIMIT
        self.sink   = sink   = stream.Endpoint(txn_layout)
        self.source = source = stream.Endpoint(txn_layout)
        self.limit          = Signal(max=MAX_CREDIT_LIMIT + 1, reset=limit)
        self.returned_valid = Signal()
        self.returned       = Signal(CREDIT_BITS)
        self.in_use         = Signal(max=MAX_CREDIT_LIMIT + 1)
        self.stalls         = Signal(32)   # cycles a request waited for a credit
        self.flush          = Signal()

        # # #

        returned_valid, returned = Signal(), Signal(CREDIT_BITS)
        self.sync += [returned_valid.eq(self.returned_valid & ~self.flush), returned.eq(self.returned)]
        last  = Signal(CREDIT_BITS)
        delta = seq_distance_bits(self, returned, last, CREDIT_BITS, "credit_delta")
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
        back = Signal(len(self.in_use))   # requests credited back, counted this cycle
        self.comb += take.eq(sink.valid & sink.ready & needs & (self.limit != 0))
        # The credits first, stopped at 0, and both counts the request may leave, all from registers:
        # `take` (behind the limit's comparison and the next stage's ready) chooses between them, no carry
        # chain after it.
        credited, credited_and_taken = Signal(len(self.in_use)), Signal(len(self.in_use))
        self.comb += [
            credited.eq(Mux(self.in_use < back, 0, self.in_use - back)),
            credited_and_taken.eq(credited + 1),
        ]
        self.sync += [
            back.eq(Mux(self.flush, 2**len(back) - 1, Mux(returned_valid, delta * REQUESTS_PER_CREDIT, 0))),
            self.in_use.eq(Mux(take, credited_and_taken, credited)),
            If(returned_valid, last.eq(returned)),
            If(self.flush, last.eq(0)),
            If(sink.valid & needs & ~allowed, self.stalls.eq(self.stalls + 1)),
        ]


class CreditReturn(LiteXModule):
    """The receiving side of credit flow control: counts requests its consumer took (`freed`), and gives a
    credit for each REQUESTS_PER_CREDIT of them, modulo 2**CREDIT_BITS, to every trailer (`count`); asks for
    a control frame when a credit has waited CONTROL_DELAY cycles for a frame to ride on."""
    def __init__(self):
        self.freed        = Signal()
        self.count        = Signal(CREDIT_BITS)
        self.ctrl_request = Signal()
        self.ctrl_sent    = Signal()

        # # #

        taken  = Signal(CREDIT_BITS + log2_int(REQUESTS_PER_CREDIT))
        sent   = Signal(CREDIT_BITS)
        waited = Signal(max=CONTROL_DELAY + 1)
        self.comb += [
            self.count.eq(taken[log2_int(REQUESTS_PER_CREDIT):]),
            self.ctrl_request.eq(waited == CONTROL_DELAY),
        ]
        self.sync += [
            If(self.freed, taken.eq(taken + 1)),
            If(self.ctrl_sent, sent.eq(self.count)),
            If(self.ctrl_sent | (sent == self.count), waited.eq(0)).Elif(waited != CONTROL_DELAY,
                                                                         waited.eq(waited + 1)),
        ]
